"""Issue 54, a light page: the address is written after a view's draw by one listener of that view, on a hidden stamp
that each of its draws' answers renews, not by a js-only step after each of the views' events; a long job's own answer
hides its Cancel button, with no step after it; a quick view is drawn by one event, whichever of its tab, its redraw
button and its controls triggered it."""

import functools
import inspect

import gradio as gr
import plotly.graph_objects as go
import pytest
from fuzz_helpers import QueueCaller

from transformer.explorer.page import address, events, scripts
from transformer.explorer.registry import GLOBAL_PARAMS

ADDRESS_WRITERS = ("writeAddress", "writeDrawnAddress")  # page.js's functions that write the address after a draw


def app_parts(app) -> events.PageParts:
    """The served page's ``events.PageParts``."""
    return next(inspect.unwrap(fn.fn).__self__ for fn in app.demo.fns.values() if fn.name == "restore_page")


def drawn_view(fn) -> str | None:
    """The view an event draws (``PageParts.draw_event``, ``long_job`` or ``open_or_draw``), else None."""
    handler = inspect.unwrap(fn.fn) if fn.fn is not None else None
    if isinstance(handler, functools.partial) and handler.func.__name__ in ("draw_event", "long_job", "open_or_draw"):
        return handler.args[0]
    return None


def test_a_listener_per_view_writes_the_address_after_its_draws(app):
    """Each view's stamp has one step that writes the address after its draws, reading only that view's parameters
    (every parameter made each draw slower); the analysis's, the page's own (it changes no view's controls). The
    only other writer is the colour controls' (no draw of their own). Each view's events name its own stamp, the
    analysis its own, nothing else any."""
    parts, fns = app_parts(app), list(app.demo.fns.values())
    writers = [fn for fn in fns if fn.fn is None and fn.js and any(f"explorer.{w}(" in fn.js for w in ADDRESS_WRITERS)]
    assert len(writers) == len(parts.drawings) + 2, [fn.js for fn in writers]
    registry = parts.registry
    for drawn, stamp in parts.address_stamps.items():
        (listener,) = [fn for fn in writers if fn.targets == [(stamp._id, "change")]]
        names = GLOBAL_PARAMS + ([] if drawn == events.ANALYZED else registry.view_params.get(drawn, []))
        assert listener.inputs == [stamp, *(parts.url_controls[name] for name in names)] and not listener.outputs
        # page.js reads the names from its configuration (``paramsOf``), in this order
        config = address.script_config(registry)
        own = config["globalParams"] + ([] if drawn == events.ANALYZED else config["viewParams"].get(drawn, []))
        assert own == names
        assert listener.js == scripts.call("writeDrawnAddress", None if drawn == events.ANALYZED else drawn)
        naming = {drawn_view(fn) or fn.name for fn in fns if stamp in fn.outputs}
        assert naming == ({"show_text"} if drawn == events.ANALYZED else {drawn}), drawn


def test_a_draw_stamps_the_address_anew_and_a_refused_one_not_at_all(app, result):
    """Each answer renews its view's stamp with a new token (the box must change to write the address again); a
    ``gr.Error`` ends a quick event with no answer, so no stamp."""
    parts = app_parts(app)
    stamp = parts.address_stamps["attention"]
    # its one drawing event: its tab, redraw button and controls (the layer, head, weighting)
    (event,) = [fn for fn in app.demo.fns.values() if drawn_view(fn) == "attention" and fn.name == "open_or_draw"]
    values = {block: block.value for block in event.inputs} | {parts.page.result: result, parts.load_mark: "loaded"}
    by_control = gr.EventData(app.demo.blocks[event.targets[-1][0]], None)
    first, again = event.fn(values, by_control)[stamp], event.fn(values, by_control)[stamp]
    assert first and again and first != again

    def refused(values):
        raise gr.Error("Cannot use these inputs")

    with pytest.raises(gr.Error):
        parts.draw_event("attention", refused, values)


def test_a_quick_views_event_sent_before_the_page_loads_answer_draws_nothing(app, result):
    """Gradio selects the first tab as the page mounts, with the controls' defaults, and the session may already
    hold the load's analysis when that select is processed: sent with an empty load mark, it leaves every output as
    it is; the same event sent after the load's answer draws the view."""
    parts = app_parts(app)
    (event,) = [fn for fn in app.demo.fns.values() if drawn_view(fn) == "attention" and fn.name == "open_or_draw"]
    values = {block: block.value for block in event.inputs} | {parts.page.result: result}
    by_tab = gr.EventData(parts.tabs["attention"][0], None)
    early = event.fn(values | {parts.load_mark: ""}, by_tab)
    assert all(value == gr.skip() for value in early.values()), early
    loaded = event.fn(values | {parts.load_mark: "loaded"}, by_tab)
    assert isinstance(loaded[parts.drawings["attention"].outputs[0]], go.Figure)


def test_a_long_job_that_fails_hides_its_cancel_button_and_writes_no_address(app):
    """Gradio's page runs no step after a failed event, so the job answers its ``gr.Error`` itself: said in a warning
    with its title, the Cancel button hidden and the job over (``running``), no stamp. A job with no Cancel button
    (the Export tab's) raises it as before."""
    parts = app_parts(app)
    drawing, running = parts.drawings["knockout"], parts.running["knockout"]

    def refused(values):
        raise gr.Error("No heads to rank here", title="Cannot draw this view")

    with pytest.warns(UserWarning, match="No heads to rank here"):
        answer = parts.long_job("knockout", refused, {})
    assert answer == {drawing.cancel: gr.update(visible=False), running: False}
    drawn = parts.long_job("knockout", lambda values: {}, {})
    assert drawn[drawing.cancel] == gr.update(visible=False) and drawn[running] is False
    assert drawn[parts.address_stamps["knockout"]]
    with pytest.raises(gr.Error):
        parts.long_job("export", refused, {})


def test_each_quick_view_has_one_drawing_event_and_each_long_view_two(app):
    """A quick view's tab, hidden redraw button and controls trigger one event; a long view's tab has its own (it
    shows the Cancel button its own way), and its redraw button and controls share the other."""
    parts, fns = app_parts(app), list(app.demo.fns.values())
    for view, (tab, drawing) in parts.tabs.items():
        redraw = next(block for block in app.demo.blocks.values() if block.elem_id == scripts.REDRAW_ID + view)
        triggers = [
            (tab._id, "select"),
            (redraw._id, "click"),
            *((t.__self__._id, t.event_name) for t in drawing.triggers),
        ]
        wired = [fn for fn in fns if set(fn.targets) & set(triggers)]
        assert sorted(len(fn.targets) for fn in wired) == ([len(triggers)] if drawing.starts is None
                                                            else [1, len(triggers) - 1]), view  # fmt: skip


@pytest.mark.served
@pytest.mark.parametrize("view", ["token-embeddings", "attention"])  # on the queue, and a main view off it
def test_the_one_event_opens_the_view_for_its_tab_and_draws_it_for_its_redraw_button(app, url, view):
    """Over HTTP, as the page sends it: Gradio hands ``open_or_draw`` the trigger that fired. The tab selected makes
    the view current (``open_view``); the redraw button draws the view and leaves the current view as it is
    (``draw_view``)."""
    parts = app_parts(app)
    (index,) = [i for i, fn in app.demo.fns.items() if drawn_view(fn) == view and fn.name == "open_or_draw"]
    fn, tab = app.demo.fns[index], parts.tabs[view][0]
    redraw = next(block for block in app.demo.blocks.values() if block.elem_id == scripts.REDRAW_ID + view)
    other = "export" if view != "export" else "attention"
    sent = {parts.current_view: other, parts.load_mark: "loaded"}  # the page load's answer came
    data = [sent.get(block, getattr(block, "value", None)) for block in fn.inputs]
    data = [None if isinstance(block, gr.State) else value for block, value in zip(fn.inputs, data, strict=True)]
    caller = QueueCaller(url)
    try:
        by_tab = caller.call(index, data, trigger_id=tab._id, queued=fn.queue)
        by_button = caller.call(index, data, trigger_id=redraw._id, queued=fn.queue)
    finally:
        caller.close()
    assert by_tab.success and by_button.success, (by_tab, by_button)
    at = fn.outputs.index(parts.current_view)
    assert by_tab.data[at] == view
    assert by_button.data[at] in (None, {"__type__": "update"}), by_button.data[at]  # left as it is
