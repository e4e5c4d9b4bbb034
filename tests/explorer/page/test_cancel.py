"""Cancelling a long computation (issue 37), over HTTP as the page does it: Gradio's ``/cancel`` for a running Head
atlas computation stops its thread at its next model pass (``launch.stop_on_cancel``, ``runner.stoppable``), frees its
worker and the atlas's lock, keeps nothing, and the same computation then runs again to its end. The computation is
``conftest.slow_atlas``'s, made long: ``SLOW_PASSES`` counted model passes, ``SLOW_WAIT`` s apart. The per-sentence
jobs of many passes (Integrated Gradients and erasure, head importance, patching) get a progress bar and a Cancel
button of their own tab, shown only when a draw runs one; a cancelled one stops as the corpus computations do
(``conftest.slow_passes``)."""

import contextvars
import functools
import inspect
import threading
import time

import gradio as gr
import httpx
import pytest
from conftest import PASS_WAIT, SLOW_PASSES, SLOW_WAIT, atlas_fn_index
from fuzz_helpers import QueueCaller, _sse_lines
from gradio.context import LocalContext

from transformer.explain import batching
from transformer.explorer import analysis, runner
from transformer.explorer.corpus import on_demand as model_artifacts
from transformer.explorer.page import launch as server
from transformer.explorer.views import head_atlas

HEAVY = {"attributions": "show_attributions", "knockout": "show_knockout", "patching": "show_patching"}
PAIR = {"patch_a": "the plot was boring", "patch_b": "a plot was boring"}  # one token apart for every tokenizer here

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


def atlas_job_under_way(app, slow_atlas) -> tuple:
    """``(caller, the atlas event's index, its event id, the passes list)`` once the slow atlas job has run 3 passes."""
    url, passes = slow_atlas
    caller = QueueCaller(url, timeout=60)
    index = atlas_fn_index(app)
    event_id = join(caller, index)
    read_messages(caller, [])
    wait_for(lambda: len(passes) >= 3)
    return caller, index, event_id, passes


@pytest.mark.served
def test_a_cancel_for_another_session_does_not_stop_the_job(app, slow_atlas):
    caller, index, event_id, passes = atlas_job_under_way(app, slow_atlas)
    body = {"session_hash": "someone-else", "fn_index": index, "event_id": event_id}
    httpx.post(f"{caller.url}/gradio_api/cancel", json=body, timeout=30, trust_env=False)
    wait_for(lambda: head_atlas.ATLAS.current() is not None, seconds=60)
    assert len(passes) == SLOW_PASSES
    caller.close()


@pytest.mark.served
def test_a_cancel_from_another_client_is_refused_even_with_the_session(app, slow_atlas):
    """A ``/call`` job's session is its event id: whoever learns it must still be the job's client to cancel it."""
    caller, index, event_id, passes = atlas_job_under_way(app, slow_atlas)
    body = {"session_hash": caller.session_hash, "fn_index": index, "event_id": event_id}
    transport = httpx.HTTPTransport(local_address="127.0.0.2")  # another address on loopback
    with httpx.Client(transport=transport, timeout=30, trust_env=False) as other:
        refused = other.post(f"{caller.url}/gradio_api/cancel", json=body)
    assert refused.status_code == 403 and "sent" in refused.json()["detail"]
    wait_for(lambda: head_atlas.ATLAS.current() is not None, seconds=60)
    assert len(passes) == SLOW_PASSES
    caller.close()


def test_a_cancelled_explanation_stops_at_its_next_model_pass(app):
    """An explanation's job for an event (``runner.explain``: Integrated Gradients, head importance, patching...)
    stops as the corpus computations do, at its next pass, once that event is cancelled, and says so as
    ``JobCancelled`` (not a ``gr.Error`` for the sender, which the page would take for a failure)."""
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
            runner.explain(build, result)
        except runner.JobCancelled as error:
            said.append(str(error))

    thread = threading.Thread(target=job)
    thread.start()
    assert started.wait(30)
    assert runner.cancel("event-1") and not runner.cancel("event-2")  # only the running event's job
    thread.join(timeout=10)
    assert not thread.is_alive() and said == [runner.CANCELLED] and len(passes) < SLOW_PASSES / 2
    assert not runner.cancel("event-1")  # nothing left to stop


def test_a_long_draw_is_stoppable_from_its_start_before_its_view_job(app):
    """Kills ``long_job`` without ``runner.stoppable()``: a Cancel that comes while a long draw runs what precedes
    its view's job (the analysis at the start of Patching) stops that draw at its next model pass, and the draw
    answers nothing; the job's stop is gone once it ends."""
    parts, passes = app_parts(app), []

    def draw(values):
        assert runner.cancel("event-early")  # the event's stop is given from the draw's start
        runner.run_model("a wonderful film")  # the pass before any ``runner.run_view``
        passes.append(1)
        return {"drawn": True}

    def job():
        LocalContext.event_id.set("event-early")  # as Gradio sets it in an event's thread
        return parts.long_job("patching", draw, {})

    assert contextvars.Context().run(job) == {} and not passes
    assert not runner.cancel("event-early")


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


def app_parts(app):
    """The served page's ``events.PageParts``."""
    return next(inspect.unwrap(fn.fn).__self__ for fn in app.demo.fns.values() if fn.name == "restore_page")


def long_jobs(app, view: str) -> set[int]:
    """The indices of ``view``'s events that run a long job (``PageParts.long_job``)."""
    return {
        index
        for index, fn in app.demo.fns.items()
        if isinstance(inspect.unwrap(fn.fn), functools.partial)
        and inspect.unwrap(fn.fn).func.__name__ == "long_job"
        and inspect.unwrap(fn.fn).args[0] == view
    }


@pytest.mark.parametrize("view", HEAVY)
def test_a_heavy_tabs_draws_have_a_progress_bar_and_its_cancel_button_cancels_each(app, view):
    """Its tab's selection, and its hidden redraw button with its controls (one event), each draw it as a long job,
    on the queue with a progress bar, after its Cancel button is shown (off the queue, when the draw runs a job),
    which the job's own answer hides (no step after it: issue 54); the button's click cancels every one. The page's
    own views (Prediction, Attention) draw as before, with no long job."""
    fns, parts = app.demo.fns, app_parts(app)
    long = long_jobs(app, view)
    assert sorted(fns[i].name for i in long) == sorted(["open_view", HEAVY[view]])
    assert all(fns[i].tracks_progress and fns[i].queue for i in long)
    cancel = parts.drawings[view].cancel
    (cancelling,) = [fn for fn in fns.values() if fn.cancels and (cancel._id, "click") in fn.targets]
    assert set(cancelling.cancels) == long
    running = parts.running[view]  # whether the job's answer is still to come: the click reads it
    (said,) = [fn for fn in fns.values() if fn.name == "cancelled" and (cancel._id, "click") in fn.targets]
    assert said.inputs == [running, *parts.kept_state(view)] and running in said.outputs
    for index in long:
        shown = fns[fns[index].trigger_after]
        assert shown.name in ("show_cancel", "show_cancel_on_open") and not shown.queue
        assert shown.outputs == [cancel, running] and fns[index].outputs[-2:] == [cancel, running]
        assert not [fn for fn in fns.values() if fn.trigger_after == index]
    assert not long_jobs(app, "attention") and not long_jobs(app, "all-heads")
    assert parts.drawings["attention"].cancel is None


def drawn_again(drawing, values: dict) -> dict:
    """``values`` with what ``drawing`` keeps after one draw from them (its ``gr.State``s)."""
    drawn = drawing.draw(values)
    return values | {block: drawn[block] for block in drawing.inputs if isinstance(block, gr.State) and block in drawn}


@pytest.mark.parametrize(
    ("view", "given", "new_job", "no_job"),
    [
        ("attributions", {}, {"baseline": "zero", "removal": "delete"}, {}),  # IG and erasure; erasure alone
        ("knockout", {}, {}, {"heads_off": ["L1 H1"]}),  # a knockout from the kept ranking is one pass
        ("patching", PAIR, {"patch_direction": "a_into_b"}, {"patch_b": " "}),  # a blank sentence runs nothing
    ],
)
def test_a_heavy_tab_shows_its_cancel_button_only_when_its_draw_runs_a_job(app, result, view, given, new_job, no_job):
    """A draw that runs a job of many passes shows the Cancel button; one from what the tab keeps, without a
    sentence, or on the tab selected again (``open_view`` draws nothing) does not: no flash of it."""
    parts = app_parts(app)
    drawing = parts.drawings[view]

    running = parts.running[view]

    def shows(values: dict) -> bool:
        return parts.show_cancel(view, drawing, values) == {drawing.cancel: gr.update(visible=True), running: True}

    values = {block: block.value for block in drawing.inputs} | {parts.page.result: result}
    values |= {drawing.controls[name]: value for name, value in given.items()}
    assert shows(values)
    if parts.page.result in drawing.inputs:
        assert not shows(values | {parts.page.result: None})
    values = drawn_again(drawing, values)
    assert not shows(values)
    skipped = {drawing.cancel: gr.skip(), running: gr.skip()}
    assert parts.show_cancel_on_open(view, values | {parts.current_view: "attention"}) == skipped
    opened = {parts.current_view: "attention", **{block: block.value for block in drawing.inputs}}
    assert parts.show_cancel_on_open(view, opened | {parts.page.result: result}) == {
        drawing.cancel: gr.update(visible=True),
        running: True,
    }
    assert parts.show_cancel_on_open(view, opened | {parts.current_view: view}) == skipped
    for name, value in no_job.items():
        assert not shows(values | {drawing.controls[name]: value}), name
    for name, value in new_job.items():
        changed = values | {drawing.controls[name]: value}
        assert shows(changed), name
        values = drawn_again(drawing, changed)
        assert not shows(values), name


def test_cancelling_a_tab_says_so_and_keeps_it_on_screen(app):
    """The Cancel button's click hides it and says "Cancelled." in one line; the tab is the page's current view, with
    its colour controls as its opening would set them (a cancelled opening never said so)."""
    parts = app_parts(app)
    said = parts.cancelled("attributions", True)
    assert said[parts.drawings["attributions"].cancel] == gr.update(visible=False)
    line = said[parts.failures["attributions"]]
    assert line["visible"] and line["value"].startswith(f"**{runner.CANCELLED}**") and "\n" not in line["value"]
    assert said[parts.current_view] == "attributions" and said[parts.colour_controls] == gr.update(visible=False)


def cancelled_at(model, passes: int | None):
    """A forward pre-hook that cancels the event ``"event-1"`` as its model pass number ``passes`` starts (0: before
    the first), as a Cancel click reaching the server then would; the hook's handle."""
    seen = []

    def cancel(module, args):
        if len(seen) == passes:
            runner.cancel("event-1")
        seen.append(1)

    return model.register_forward_pre_hook(cancel)


def long_draw(parts, view: str, values: dict, cancel_at: int | None) -> dict:
    """``view``'s draw as the page runs it (``PageParts.long_job``) in Gradio's event ``"event-1"``, cancelled as
    its pass number ``cancel_at`` starts (None: never)."""
    draw = functools.partial(parts.draw_view, view)
    if cancel_at == 0:  # before the first pass: the stop is set as the job starts
        draw = functools.partial(lambda values: (runner.cancel("event-1") and None) or parts.draw_view(view, values))

    def run() -> dict:
        LocalContext.event_id.set("event-1")
        return parts.long_job(view, draw, values)

    model = runner.get_model()[0].model  # the model the job runs (a module before may have loaded it again)
    handle = cancelled_at(model, None if cancel_at in (None, 0) else cancel_at)
    try:
        return contextvars.copy_context().run(run)
    finally:
        handle.remove()


@pytest.mark.parametrize("view", HEAVY)
def test_cancel_means_one_thing_at_every_phase_of_a_heavy_tabs_job(app, result, view, monkeypatch):
    """Issue 53: after Cancel a tab shows its previous result and one line saying the new computation was cancelled;
    a job that finished before the click arrived shows its result and no such line. Before the first pass and
    mid-job the job's answer changes nothing (Patching wiped its figures); its answer clears ``running``, which the
    click reads (Head knockout said "Cancelled" above a fresh result)."""
    monkeypatch.setattr(batching, "MEMORY_BUDGET_BYTES", 1)  # one row a pass: a job of many passes (``slow_passes``)
    parts = app_parts(app)
    drawing, running, line = parts.drawings[view], parts.running[view], parts.failures[view]
    values = {block: block.value for block in drawing.inputs} | {parts.page.result: result}
    values |= {drawing.controls[name]: value for name, value in PAIR.items() if name in drawing.controls}
    assert parts.show_cancel(view, drawing, values)[running] is True  # the job's answer is still to come
    for cancel_at in (0, 1):  # before the first pass, mid-job
        assert long_draw(parts, view, values, cancel_at) == {}, cancel_at  # every output as it was
        said = parts.cancelled(view, True)
        assert said[running] is False and said[line]["visible"] and "new computation" in said[line]["value"]
    finished = long_draw(parts, view, values, None)
    assert finished[running] is False and finished[line] == gr.update(visible=False)
    assert all(finished[output] is not None for output in drawing.outputs[:2])  # a result, drawn
    said = parts.cancelled(view, finished[running])
    assert line not in said and said[drawing.cancel] == gr.update(visible=False)  # the result stays, with no line


def patching_fn_index(app) -> int:
    """The Patching tab's control event: the long job that runs its ``show_patching``."""
    return next(index for index in long_jobs(app, "patching") if app.demo.fns[index].name == "show_patching")


@pytest.mark.served
def test_cancel_stops_a_patching_job_frees_its_worker_and_it_runs_again(app, slow_passes):
    """The Patching tab's job, cancelled through Gradio's /cancel while its passes run, stops at its next pass (one
    per thread it runs on at most), frees its worker, and runs again to its end."""
    url, passes = slow_passes
    caller = QueueCaller(url, timeout=120)
    index = patching_fn_index(app)
    fn = app.demo.fns[index]
    controls = {block: name for name, block in app_parts(app).drawings["patching"].controls.items()}
    data = [PAIR.get(controls.get(block), block.value) for block in fn.inputs]
    body = {"data": data, "fn_index": index, "session_hash": caller.session_hash, "event_data": None}
    joined = caller.http.post(f"{caller.url}/gradio_api/queue/join", json=body)
    joined.raise_for_status()
    event_id = joined.json()["event_id"]
    messages: list[str] = []
    reader = read_messages(caller, messages)
    wait_for(lambda: len(passes) >= 6, seconds=60)
    cancel = {"session_hash": caller.session_hash, "fn_index": index, "event_id": event_id}
    caller.http.post(f"{caller.url}/gradio_api/cancel", json=cancel).raise_for_status()
    at_cancel = len(passes)
    time.sleep(10 * PASS_WAIT)
    assert len(passes) <= at_cancel + 2  # the passes under way (one per thread) when it came, then none
    assert model_jobs_running(app) == 0 and not runner._stops
    reader.join(timeout=10)
    assert any(event_id in line and "process_completed" in line for line in messages)

    bars = [line for line in messages if '"msg":"progress"' in line and '"desc":"patching"' in line]
    assert bars, messages  # the page's progress bar: the patching's passes counted as they end

    passes.clear()
    again = caller.call(index, data)
    assert again.success and "logit(" in again.data[0], again
    assert len(passes) > at_cancel + 2  # the whole job: more passes than ran before the cancel
    caller.close()


def test_after_cancel_the_controls_say_what_the_shown_result_was_made_with(app, result):
    """Issue 53: the steps box said 128 after a cancelled run while the result shown said 32. A click that cancels
    nothing (the answer came first) leaves the controls as they are."""
    parts = app_parts(app)
    drawing = parts.drawings["attributions"]
    (kept_state,) = parts.kept_state("attributions")
    values = {block: block.value for block in drawing.inputs} | {parts.page.result: result}
    kept = drawing.draw(values | {drawing.controls["steps"]: 4})[kept_state]  # the result on screen: 4 steps
    said = parts.cancelled("attributions", True, kept)  # a run at another number of steps, cancelled
    assert said[drawing.controls["steps"]] == 4 and said[drawing.controls["baseline"]] == "pad"
    assert drawing.controls["steps"] not in parts.cancelled("attributions", False, kept)
    assert drawing.controls["steps"] not in parts.cancelled("attributions", True, None)  # nothing shown yet
