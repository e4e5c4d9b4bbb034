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
