"""The runner's view jobs: freed memory goes back to the system before a job starts and once it ends; a job stops
for a cancel however early it comes, and holds its lane's slot until its thread returns."""

import contextvars
import threading

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
