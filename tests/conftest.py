"""Shared fixtures: a tokenizer, model folders and a toy sentiment data set, all tiny and built in-process.

- ``tiny_tokenizer``: a WordPiece tokenizer trained on ``TINY_CORPUS`` (treebank-style SST lines).
- ``tiny_model_dir``: an untrained tiny classifier saved with that tokenizer, in a fresh temporary folder.
- ``toy_data_dir``: a learnable toy task (a sentiment word decides the label) as SST-style TSV files.
- ``trained_toy_model_dir``: a tiny model trained by ``transformer.train`` on the toy task (once per session).
- ``tokenizer``, ``model``: the app fixtures' tokenizer and untrained tiny model, one pair per test module.
- ``app``, ``url``, ``client``: the ``app`` module on a tiny model, served on a free port, and a
  ``gradio_client.Client`` for it; one server per test module (a module may define its own ``app``).
"""

import json
import random
import shutil
from pathlib import Path

import pytest
from app_fixtures import build_model, build_tokenizer, import_app, serving, write_model_dir
from gradio_client import Client
from tiny import tiny_model

from transformer.explorer import link_store
from transformer.tokenizer import train_tokenizer
from transformer.train import main as train_main

TINY_CORPUS = [
    "it 's a charming and often affecting journey . ",
    "unflinchingly bleak and desperate ",
    "the movie is n't funny , and it does n't try hard enough ",
    "a `` great '' film -lrb- sigh -rrb- that i did n't like ",
    "i ca n't believe it , they 're wonderful and we 've laughed ",
    "director 's best work ; you 'll love it ! i 'm sure ",
    "the acting , costumes , music , cinematography and sound are all astounding ",
    "it would n't be the first time , and it wo n't be the last ",
    "one of the greatest family-oriented , fantasy-adventure movies ever ",
    "a dull , simple-minded and stereotypical tale of drugs , death and mind-numbing indifference ",
]

TOY_POSITIVE = ["good", "great", "fun", "moving", "superb", "lovely"]
TOY_NEGATIVE = ["bad", "dull", "boring", "awful", "weak", "tedious"]
TOY_FILLER = ["the", "film", "movie", "plot", "was", "is", "a", "very", "really", "acting", "story", "and"]


def toy_rows(count: int, seed: int) -> list[tuple[str, int]]:
    """``count`` rows of filler words with one sentiment word; its polarity is the label (1 = positive)."""
    rng = random.Random(seed)
    rows = []
    for _ in range(count):
        label = rng.randrange(2)
        words = rng.choices(TOY_FILLER, k=rng.randint(2, 7))
        words.insert(rng.randint(0, len(words)), rng.choice(TOY_POSITIVE if label else TOY_NEGATIVE))
        rows.append((" ".join(words), label))
    return rows


def write_tsv(path: Path, rows: list[tuple[str, int]]) -> Path:
    """Write rows in the SST format: header ``sentence<TAB>label``, one row a line."""
    lines = ["sentence\tlabel", *(f"{text}\t{label}" for text, label in rows)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def tiny_tokenizer():
    """A WordPiece tokenizer (about 300 entries) trained on ``TINY_CORPUS``."""
    return train_tokenizer(TINY_CORPUS * 3, vocab_size=300)


@pytest.fixture
def tiny_model_dir(tmp_path, tiny_tokenizer) -> Path:
    """A folder ``load_model`` accepts: an untrained tiny classifier (seed 0), tokenizer.json and metrics.json."""
    model = tiny_model(
        vocab_size=tiny_tokenizer.get_vocab_size(), max_len=64, dropout=0.1, label_names=["negative", "positive"]
    )
    folder = tmp_path / "tiny-model"
    model.save_pretrained(folder)
    tiny_tokenizer.save(str(folder / "tokenizer.json"))
    (folder / "metrics.json").write_text(json.dumps({"seed": 0, "note": "untrained test model"}), encoding="utf-8")
    return folder


@pytest.fixture(scope="session")
def toy_data_dir(tmp_path_factory) -> Path:
    """A data folder with the toy task as glue_train.tsv (600 rows), glue_dev.tsv and sent_test.tsv (100 rows each)."""
    folder = tmp_path_factory.mktemp("toy-data")
    write_tsv(folder / "glue_train.tsv", toy_rows(600, seed=1))
    write_tsv(folder / "glue_dev.tsv", toy_rows(100, seed=2))
    write_tsv(folder / "sent_test.tsv", toy_rows(100, seed=3))
    return folder


TOY_TRAIN_ARGS = [  # a model small enough to train in a second or two
    "--vocab-size", "100", "--d-model", "32", "--num-heads", "2", "--num-layers", "1", "--d-ff", "64",
    "--max-len", "32", "--dropout", "0.1", "--word-dropout", "0.0", "--epochs", "4", "--batch-size", "32",
    "--lr", "3e-3", "--seed", "0", "--ema-decay", "0", "--teachers", "0",
]  # fmt: skip


@pytest.fixture
def toy_train_args() -> list[str]:
    """``transformer.train`` flags for a tiny, fast model (add --data-dir and --output-dir)."""
    return list(TOY_TRAIN_ARGS)


@pytest.fixture(scope="session")
def trained_toy_model_dir(tmp_path_factory, toy_data_dir) -> Path:
    """A tiny model trained on the toy task by ``python -m transformer.train`` (run in-process, a few seconds).

    The folder is shared by the whole session: copy it (``copy_model_dir``) before changing anything in it.
    """
    output = tmp_path_factory.mktemp("toy-run") / "model"
    train_main(["--data-dir", str(toy_data_dir), "--output-dir", str(output), *TOY_TRAIN_ARGS])
    return output


@pytest.fixture
def copy_model_dir(tmp_path):
    """Copy a model folder into this test's tmp_path, so the test may break it: ``copy_model_dir(src) -> Path``."""

    def copy(source: Path) -> Path:
        return Path(shutil.copytree(source, tmp_path / f"copy-of-{source.name}"))

    return copy


@pytest.fixture(scope="session", autouse=True)
def hermetic_links(tmp_path_factory):
    """Links the page shares (fuzzed events included) go to a temporary folder, not the machine's temp folder."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(link_store, "LINK_DIR", tmp_path_factory.mktemp("links"))
        yield


@pytest.fixture(scope="module")
def tokenizer():
    return build_tokenizer()


@pytest.fixture(scope="module")
def model(tokenizer):
    return build_model(tokenizer)


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    """The ``app`` module, importing it on a tiny untrained model if no test has yet."""
    return import_app(write_model_dir(tmp_path_factory.mktemp("app-model")))


@pytest.fixture(scope="module")
def url(app):
    """The app served in this process on a free port as ``app.main`` serves it (its limits), closed after the module."""
    with serving(app.demo, **app.launch_settings()) as served:
        yield served


@pytest.fixture(scope="module")
def client(url):
    return Client(url, verbose=False, analytics_enabled=False)
