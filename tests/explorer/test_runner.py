"""The runner's view jobs: freed memory goes back to the system before a job starts and once it ends."""

import pytest

from transformer.explain import heap
from transformer.explorer import runner
from transformer.explorer.inputs import InputError


def test_a_view_job_hands_back_what_was_freed_before_it_and_what_it_freed_when_it_ends_or_fails(monkeypatch):
    trims = []
    monkeypatch.setattr(heap, "MALLOC_TRIM", trims.append)  # glibc's call, recorded instead

    def build(model, tokenizer, result, size):
        assert trims == [0]  # once before it (0 bytes kept at the top of the heap), not while its passes run
        return [0.0] * size

    assert runner.run_view(build, None, size=3) == [0.0] * 3
    assert trims == [0, 0]  # and once after the job

    def refused(model, tokenizer, result):
        raise InputError("no")

    with pytest.raises(InputError):
        runner.run_view(refused, None)
    assert trims == [0] * 4  # a job stopped early (past its deadline, cancelled) freed its passes too


def test_the_model_is_kept_for_its_setting_so_an_earlier_call_leaves_nothing_behind(monkeypatch, tmp_path):
    """A call made before ``MODEL_ID`` changes (this module's job above ran on the bundled model) does not hand a
    later caller its model: the model is kept for the setting it was loaded from (``runner.loaded_for``)."""
    calls = []
    monkeypatch.setattr(runner, "load_model", lambda source, revision=None, device="cpu": calls.append(source))
    monkeypatch.setattr(runner, "on_device", lambda loaded: loaded)
    runner.forget_models()
    try:
        monkeypatch.delenv("MODEL_ID", raising=False)
        runner.get_model()
        runner.get_model()
        model_dir = str(tmp_path / "model")
        monkeypatch.setenv("MODEL_ID", model_dir)
        runner.get_model()
        assert calls == [str(runner.DEFAULT_MODEL_DIR), model_dir]  # each setting loaded once, the new one read
    finally:
        runner.forget_models()
