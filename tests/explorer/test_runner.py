"""The runner's view jobs: freed memory goes back to the system before a job starts and once it ends."""

import os
import subprocess
import sys
from pathlib import Path

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


FIRST = "tests/explorer/test_runner.py::" + (
    "test_a_view_job_hands_back_what_was_freed_before_it_and_what_it_freed_when_it_ends_or_fails"
)
THEN = "tests/explorer/views/test_walkthrough.py::" + (
    "test_the_endpoint_refuses_a_step_layer_or_head_the_model_lacks_before_the_pass"
)


@pytest.mark.slow  # two modules' start-up in a process of its own: half a minute on a loaded machine
def test_a_job_run_before_the_app_leaves_the_app_its_own_model():
    """Issue 55's order: this module's job above loads the bundled model into the runner (it reads MODEL_ID once);
    the walkthrough's tests, run after it in one process, still see the tiny model their ``app`` fixture serves
    (``app_fixtures.import_app`` drops the earlier model on the app's first import)."""
    root = Path(__file__).resolve().parents[2]
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider", FIRST, THEN]
    env = {key: value for key, value in os.environ.items() if key not in ("MODEL_ID", "MODEL_REVISION")}
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:]
