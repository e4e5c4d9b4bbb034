"""The data folder's default: ``../shared/data`` beside the repository, as the README and the Makefile say."""

from pathlib import Path

from transformer.explorer.corpus import data_folder

REPOSITORY = Path(__file__).resolve().parents[3]


def test_without_the_variable_the_data_folder_is_shared_data_beside_the_repository(monkeypatch):
    monkeypatch.delenv(data_folder.DATA_DIR_VARIABLE, raising=False)
    assert data_folder.data_dir() == REPOSITORY.parent / "shared" / "data"


def test_the_variable_names_the_data_folder(monkeypatch, tmp_path):
    monkeypatch.setenv(data_folder.DATA_DIR_VARIABLE, str(tmp_path))
    assert data_folder.data_dir() == tmp_path
