"""The runner's view jobs: the memory a job freed goes back to the system once it ends."""

import pytest

from transformer.explain import heap
from transformer.explorer import runner
from transformer.explorer.inputs import InputError


def test_a_view_job_hands_back_what_it_freed_once_it_ends_and_when_it_fails(monkeypatch):
    trims = []
    monkeypatch.setattr(heap, "MALLOC_TRIM", trims.append)  # glibc's call, recorded instead

    def build(model, tokenizer, result, size):
        assert not trims  # not before or while its passes run
        return [0.0] * size

    assert runner.run_view(build, None, size=3) == [0.0] * 3
    assert trims == [0]  # once, after the job: 0 bytes kept at the top of the heap

    def refused(model, tokenizer, result):
        raise InputError("no")

    with pytest.raises(InputError):
        runner.run_view(refused, None)
    assert trims == [0, 0]  # a job stopped early (past its deadline, cancelled) freed its passes too
