"""Cancelling a long computation (issue 37), over HTTP as the page does it: Gradio's ``/cancel`` for a running Head
atlas computation stops its thread at its next model pass (``launch.stop_on_cancel``, ``runner.stoppable``), frees its
worker and the atlas's lock, keeps nothing, and the same computation then runs again to its end. The computation is
``conftest.slow_atlas``'s, made long: ``SLOW_PASSES`` counted model passes, ``SLOW_WAIT`` s apart."""

import threading
import time

import gradio as gr
import httpx
import pytest
from conftest import SLOW_PASSES, SLOW_WAIT, atlas_fn_index
from fuzz_helpers import QueueCaller, _sse_lines
from gradio.context import LocalContext

from transformer.explorer import analysis, runner
from transformer.explorer.corpus import on_demand as model_artifacts
from transformer.explorer.page import launch as server
from transformer.explorer.views import head_atlas

STOPPED_WITHIN = 3.0  # seconds from /cancel to its answer, on a loaded machine


def join(caller: QueueCaller, fn_index: int) -> str:
    """Queue the event ``fn_index`` with no inputs; its event id."""
    body = {"data": [], "fn_index": fn_index, "session_hash": caller.session_hash, "event_data": None}
    joined = caller.http.post(f"{caller.url}/gradio_api/queue/join", json=body)
    joined.raise_for_status()
    return joined.json()["event_id"]


def read_messages(caller: QueueCaller, messages: list) -> threading.Thread:
    """Read the session's message stream into ``messages`` on a thread, as the page does, until it closes."""

    def read():
        with httpx.Client(timeout=60, trust_env=False) as http:
            params = {"session_hash": caller.session_hash}
            with http.stream("GET", f"{caller.url}/gradio_api/queue/data", params=params) as stream:
                messages.extend(line for line in _sse_lines(stream) if line.startswith("data:"))

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


def wait_for(condition, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def model_jobs_running(app) -> int:
    return app.demo._queue.event_queue_per_concurrency_id[server.MODEL_WORK].current_concurrency


@pytest.mark.served
def test_cancel_stops_the_computation_frees_its_worker_and_it_runs_again(app, slow_atlas):
    url, passes = slow_atlas
    caller = QueueCaller(url, timeout=60)
    messages: list[str] = []
    index = atlas_fn_index(app)
    event_id = join(caller, index)
    reader = read_messages(caller, messages)
    wait_for(lambda: len(passes) >= 5)
    body = {"session_hash": caller.session_hash, "fn_index": index, "event_id": event_id}
    start = time.monotonic()
    caller.http.post(f"{caller.url}/gradio_api/cancel", json=body).raise_for_status()
    assert time.monotonic() - start < STOPPED_WITHIN
    at_cancel = len(passes)
    time.sleep(10 * SLOW_WAIT)
    assert len(passes) <= at_cancel + 1 < SLOW_PASSES / 2  # the pass under way when it came, then none
    # Gradio frees the queue's slot either way; the lock is free only once the job's thread has ended
    assert model_jobs_running(app) == 0 and not head_atlas.ATLAS._computing.locked()
    assert head_atlas.ATLAS.current() is None and not runner._stops  # nothing kept
    reader.join(timeout=10)
    assert any(event_id in line and "process_completed" in line for line in messages)  # the page's bar ends

    passes.clear()
    again = caller.call(index, [])  # the same computation, admitted and run to its end
    assert again.success and "Role rule" in again.data[0], again
    assert len(passes) == SLOW_PASSES and head_atlas.ATLAS.current() is not None
    caller.close()


@pytest.mark.served
def test_a_cancel_for_another_session_does_not_stop_the_job(app, slow_atlas):
    url, passes = slow_atlas
    caller = QueueCaller(url, timeout=60)
    index = atlas_fn_index(app)
    event_id = join(caller, index)
    messages: list[str] = []
    read_messages(caller, messages)
    wait_for(lambda: len(passes) >= 3)
    body = {"session_hash": "someone-else", "fn_index": index, "event_id": event_id}
    httpx.post(f"{caller.url}/gradio_api/cancel", json=body, timeout=30, trust_env=False)
    wait_for(lambda: head_atlas.ATLAS.current() is not None, seconds=60)
    assert len(passes) == SLOW_PASSES
    caller.close()


def test_a_cancelled_explanation_stops_at_its_next_model_pass(app):
    """An explanation's job for an event (``runner.run_view``: Integrated Gradients, head importance, patching...)
    stops as the corpus computations do, at its next pass, once that event is cancelled."""
    result = runner.run_model("a wonderful film")
    passes, said, started = [], [], threading.Event()

    def build(model, tokenizer, result):
        for _ in range(SLOW_PASSES):
            passes.append(1)
            started.set()
            analysis.analyze(model, tokenizer, result.text)
            time.sleep(SLOW_WAIT)

    def job():
        LocalContext.event_id.set("event-1")  # as Gradio sets it in an event's thread
        try:
            runner.run_view(build, result)
        except runner.JobCancelled as error:
            said.append(str(error))

    thread = threading.Thread(target=job)
    thread.start()
    assert started.wait(30)
    assert runner.cancel("event-1") and not runner.cancel("event-2")  # only the running event's job
    thread.join(timeout=10)
    assert not thread.is_alive() and said == [runner.CANCELLED] and len(passes) < SLOW_PASSES / 2
    assert not runner.cancel("event-1")  # nothing left to stop


def test_the_cancel_button_shows_only_for_a_computation_that_starts(app):
    """The Errors tab's computation runs on every change of its hidden box, its clearing too: only a run request
    shows the Cancel button (no flash of it at each filter change)."""
    with gr.Blocks():
        parts = app.lay_out_page(app.get_model()[0].model)
    drawing = parts.drawings["errors"]
    computed = drawing.computes[0]
    values = {control: control.value for control in computed.inputs}
    needed = computed.inputs[0]
    shown = parts.show_cancel("errors", computed, values | {needed: model_artifacts.run_request()})
    assert shown == {drawing.cancel: gr.update(visible=True)}
    assert parts.show_cancel("errors", computed, values | {needed: ""}) == {drawing.cancel: gr.skip()}
    atlas = parts.drawings["head-atlas"]
    assert parts.show_cancel("head-atlas", atlas.computes[0], {}) == {atlas.cancel: gr.update(visible=True)}
