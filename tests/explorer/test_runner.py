"""The runner's view jobs: freed memory goes back to the system before a job starts and once it ends; a job stops
for a cancel however early it comes, and holds its lane's slot until its thread returns."""

import contextvars
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import gradio as gr
import pytest
from gradio.context import LocalContext

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


# Jobs as Gradio runs an event's function (``runner.one_job``): stopped by a cancel whenever it comes, each holding a
# slot of its lane until its thread returns


def in_event(event_id: str, fn, *args):
    """``fn(*args)`` as Gradio runs an event's function: in a context that names the event."""
    context = contextvars.copy_context()
    context.run(LocalContext.event_id.set, event_id)
    return context.run(fn, *args)


def on_thread(event_id: str, fn, *args) -> threading.Thread:
    thread = threading.Thread(target=in_event, args=(event_id, fn, *args), daemon=True)
    thread.start()
    return thread


def test_a_job_cancelled_before_it_begins_does_none_of_its_work():
    work = []
    job = runner.one_job(work.append, threading.BoundedSemaphore(1))
    assert not runner.cancel("cancelled-early")  # its thread has not begun: the cancel waits for it
    with pytest.raises(gr.Error, match=runner.CANCELLED):
        in_event("cancelled-early", job, "a wonderful film")
    assert work == [] and not runner.running("cancelled-early")


def test_a_job_cancelled_during_its_analysis_never_starts_its_view():
    built = []

    def analyse_then_explain(text):
        runner.cancel("cancelled-in-analysis")  # the cancel arrives while the job reads its text
        return runner.run_view(lambda model, tokenizer, result: built.append(result), text)

    with pytest.raises(gr.Error, match=runner.CANCELLED):
        in_event("cancelled-in-analysis", runner.one_job(analyse_then_explain, threading.BoundedSemaphore(1)), "a")
    assert built == []


def test_a_cancelled_job_is_running_until_its_thread_returns():
    entered, release = threading.Event(), threading.Event()

    def work():  # no model pass: nothing stops it before it ends
        entered.set()
        release.wait(30)

    thread = on_thread("cancelled-late", runner.one_job(work, threading.BoundedSemaphore(1)))
    assert entered.wait(30)
    assert runner.cancel("cancelled-late") and runner.running("cancelled-late")  # Gradio's event is over; not this
    release.set()
    thread.join(30)
    assert not thread.is_alive() and not runner.running("cancelled-late")


def test_no_more_jobs_run_at_once_than_their_lane_has_slots():
    slots, inside, most, release = threading.BoundedSemaphore(2), [], [0], threading.Event()
    changed = threading.Condition()

    def work():
        with changed:
            inside.append(1)
            most[0] = max(most[0], len(inside))
            changed.notify_all()
        release.wait(30)
        with changed:
            inside.pop()

    job = runner.one_job(work, slots)
    threads = [on_thread(f"slot-{i}", job) for i in range(3)]  # as if Gradio freed a cancelled job's worker
    with changed:
        assert changed.wait_for(lambda: len(inside) == 2, timeout=30)
        assert not changed.wait_for(lambda: len(inside) > 2, timeout=0.5)  # the third waits for a slot
    assert all(runner.running(f"slot-{i}") for i in range(3))  # its ticket is held while it waits
    release.set()
    for thread in threads:
        thread.join(30)
    assert most == [2] and not any(runner.running(f"slot-{i}") for i in range(3))


@pytest.mark.skipif(not Path("/proc/thread-self/comm").exists(), reason="Linux shows a thread's name there")
def test_a_jobs_thread_is_named_only_while_it_holds_a_slot():
    """What ``make attack`` counts as the jobs at once: a thread waiting for its slot keeps its own name."""
    slots, names, release = threading.BoundedSemaphore(1), {}, threading.Event()

    def work(key):
        names[key] = Path("/proc/thread-self/comm").read_text().strip()
        release.wait(30)

    job = runner.one_job(work, slots, "model job")
    first = on_thread("named-first", job, "first")
    deadline = time.monotonic() + 30
    while "first" not in names and time.monotonic() < deadline:
        time.sleep(0.01)
    waiting = on_thread("named-second", job, "second")
    time.sleep(0.2)  # it has reached the slot, held by the first
    shown = [Path(f"/proc/self/task/{t.native_id}/comm").read_text().strip() for t in (first, waiting)]
    assert names == {"first": "model job"} and shown[0] == "model job" and shown[1] != "model job"
    release.set()
    for thread in (first, waiting):
        thread.join(30)
    assert names["second"] == "model job"


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


@pytest.mark.parametrize(
    ("count", "room", "kept"),
    [(12, 11, list(range(12))), (12, 3, [0, 5, 10, 11]), (12, 1, [0, 11]), (2, 1, [0, 1]), (12, 20, list(range(12)))],
)
def test_the_checkpoints_kept_in_memory_are_the_first_the_last_and_evenly_spaced_ones(count, room, kept):
    """``room`` checkpoints fit beside the model (the last is the model itself, loaded already)."""
    found, note = runner.within_memory(list(range(count)), each=10, where="This model", budget=10 * room)
    assert found == kept
    assert (note is None) == (len(kept) == count) and (note is None or f"{len(kept)} of the {count}" in note)


def test_no_checkpoint_kept_when_not_one_fits_beside_the_model():
    found, note = runner.within_memory(list(range(12)), each=2**30, where="The model x", budget=2**29)
    assert (
        found == []
        and note
        == "The model x's training checkpoints are too large to keep in memory (1,024 MB each), so none is shown."
    )
