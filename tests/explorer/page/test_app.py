"""The explorer app: its handlers called directly, then its API through gradio_client on a live server."""

import asyncio
import dataclasses
import functools
import inspect
import logging
import os
import socket
import subprocess
import sys
import time
import types
import warnings

import gradio as gr
import httpx
import huggingface_hub
import numpy as np
import plotly.graph_objects as go
import pytest
from app_fixtures import (
    MARKUP,
    ROOT,
    TINY_MAX_LEN,
    forget_the_models,
    free_port,
    import_app,
    shown_bars,
    write_model_dir,
)
from conftest import without_artifact
from gradio.components.api_component import Api
from gradio_client.exceptions import AppError

from transformer.explorer import analysis, runner, views
from transformer.explorer.controls import weighting
from transformer.explorer.corpus import data_folder as corpus
from transformer.explorer.corpus import on_demand as model_artifacts
from transformer.explorer.drawing import status
from transformer.explorer.drawing.figures import shown_values, token_labels
from transformer.explorer.inputs import MEAN_HEAD
from transformer.explorer.page import api, events, page, restore, scripts
from transformer.explorer.page.draws import GivenEvent
from transformer.explorer.registry import Registry
from transformer.explorer.views import VIEWS

REGISTRY = Registry(VIEWS)  # the page's views, as app.py registers them


SENTENCE = "a wonderful film , the acting was dull"


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return write_model_dir(tmp_path_factory.mktemp("app-model"))


@pytest.fixture(scope="module")
def app(model_dir):
    """The app on this module's tiny model: a model an earlier module left loaded is dropped, before and after."""
    app = import_app(model_dir)
    forget_the_models()
    yield app
    forget_the_models()


def heatmap_labels(figure) -> list[str]:
    return list(figure.data[0].y)


def draw(app, text: str, **controls) -> dict:
    """``show_text`` for each main view on screen: {view: its outputs}."""
    return {view: page.show_text(REGISTRY, text, 1, "1", [0], **controls, view=view) for view in REGISTRY.main_views}


def test_the_analysis_draws_a_main_view_with_its_own_weighting_so_no_redraw_follows(app):
    norms = {"weighting": weighting.NORMS, "grid_weighting": weighting.NORMS}
    result, *_, heatmap, _, _ = page.show_text(REGISTRY, SENTENCE, 2, "1", [0, 1], controls=norms)
    expected = weighting.attentions(result, weighting.NORMS)[1, 0]
    np.testing.assert_allclose(shown_values(heatmap.data[0]), expected, atol=1e-4)
    assert "weight × ‖f(x)‖" in heatmap.data[0].hovertemplate
    *_, grid, _ = page.show_text(REGISTRY, SENTENCE, 2, "1", [0, 1], view="all-heads", controls=norms)
    plain = page.show_text(REGISTRY, SENTENCE, 2, "1", [0, 1], view="all-heads")[-2]
    assert not np.allclose(shown_values(grid.data[0]), shown_values(plain.data[0]))
    # so page.js redraws no main view after an analysis: only the explanation tabs
    assert not set(REGISTRY.explanations) & set(REGISTRY.main_views)
    assert set(REGISTRY.explanations) | set(REGISTRY.main_views) == set(REGISTRY.ids)


def test_show_text_runs_the_model_once_and_draws_only_the_view_on_screen(app, forward_calls):
    result, prediction, spans, notice, heatmap, grid, curves = page.show_text(REGISTRY, SENTENCE, 2, "1", [0, 1])
    assert len(forward_calls) == 1
    assert isinstance(result, analysis.Analysis) and result.text == SENTENCE
    bars = shown_bars(prediction)
    assert set(bars) == {"negative", "positive"} and sum(bars.values()) == pytest.approx(1)
    assert "".join(piece for piece, _ in spans) == SENTENCE
    assert notice == ""
    np.testing.assert_allclose(shown_values(heatmap.data[0]), result.attentions[1, 0], atol=1e-4)
    assert "Layer 2, head 1" in heatmap.layout.title.text
    assert grid is curves is None  # drawn when their tab opens
    *_, heatmap, grid, curves = page.show_text(REGISTRY, SENTENCE, 2, "1", [0, 1], view="all-heads")
    assert heatmap is curves is None and len(grid.data) == 4  # 2 layers x 2 heads
    *_, heatmap, grid, curves = page.show_text(REGISTRY, SENTENCE, 2, "1", [0, 1], view="positional-encoding")
    assert heatmap is grid is None and sum(trace.mode == "markers" for trace in curves.data) == 2
    *_, heatmap, grid, curves = page.show_text(REGISTRY, SENTENCE, 2, "1", [0, 1], view="knockout")
    assert heatmap is grid is curves is None  # an explanation tab is drawn by its own step
    assert len(forward_calls) == 4


@pytest.mark.parametrize(("probabilities", "heading"), [([0.49, 0.51], analysis.NO_OPINION), ([0.3, 0.7], "positive")])
def test_a_prediction_near_the_middle_is_headed_no_clear_opinion(app, probabilities, heading):
    """Issue 53: "negative" in large bold at 51 % read as a verdict; the bars stay as they were."""
    result = dataclasses.replace(page.show_text(REGISTRY, SENTENCE, 1, "1", [0])[0], probabilities=probabilities)
    shown = page.prediction_box().postprocess(page.prediction_value(result))
    assert shown.label == heading
    assert {bar.label: bar.confidence for bar in shown.confidences} == dict(
        zip(result.label_names, probabilities, strict=True)
    )


def test_changing_layer_head_or_dimensions_does_not_run_the_model(app, forward_calls):
    result = page.show_text(REGISTRY, SENTENCE, 1, "1", [0])[0]
    forward_calls.clear()
    for layer in (1, 2):
        for head in ("1", "2", MEAN_HEAD):
            figure = views.attention.show_head(result, layer, head)
            head_index = None if head == MEAN_HEAD else int(head) - 1
            expected = analysis.attention_matrix(result, layer - 1, head_index)
            np.testing.assert_allclose(shown_values(figure.data[0]), expected, atol=1e-4)
    views.positional_encoding.show_positions(result, [2, 3, 4])
    assert not forward_calls


# Off the queue, drawn from numbers their tab's queued draw kept; else left as they are.
KEPT_ONLY = {"show_kept_step", "show_moved_step", "show_checkpoint", "redraw_graph"}
CANCELLING = {"show_cancel", "show_cancel_on_open", "cancelled"}  # a Cancel button: off the queue, no model


def test_only_main_views_skip_the_queue_and_their_events_run_no_model(app, forward_calls):
    """A main view's tab, redraw and control events skip the queue; nothing that runs the model does."""
    fns = list(app.demo.fns.values())
    by_view = [  # each tab's select and hidden redraw (not a view's quick redraws from what it kept)
        fn
        for fn in fns
        if isinstance(inspect.unwrap(fn.fn), functools.partial) and fn.name not in KEPT_ONLY | CANCELLING
    ]
    assert {inspect.unwrap(fn.fn).args[0] for fn in by_view} == {view.id for view in views.VIEWS}
    assert all(fn.queue == (inspect.unwrap(fn.fn).args[0] not in REGISTRY.main_views) for fn in by_view)
    assert all(fn.queue for fn in fns if fn.name in ("show_text", "restore_page"))
    result = page.show_text(REGISTRY, SENTENCE, 2, "1", [0, 1])[0]
    forward_calls.clear()
    skipping = [fn for fn in fns if fn.fn is not None and not fn.queue and fn.name != "load_example"]  # gr.Examples'
    assert {"attention", "positional-encoding"} <= {inspect.unwrap(fn.fn).args[0] for fn in skipping if by_tab(fn)}
    labels, plots, drawn_plots = token_labels(result.tokens), set(), set()
    sent = {page_parts(app).load_mark: "loaded"}  # the page load's answer came
    for fn in skipping:
        values = [result if isinstance(block, gr.State) and block.value is None else block.value for block in fn.inputs]
        values = [sent.get(block, value) for block, value in zip(fn.inputs, values, strict=True)]
        if by_tab(fn):  # drawn by its redraw button (its tab, the view already current, draws nothing)
            drawn = fn.fn(dict(zip(fn.inputs, values, strict=True)), trigger(app, fn, 1))
        elif fn.inputs_as_dict:
            drawn = fn.fn(dict(zip(fn.inputs, values, strict=True)))
        else:
            drawn = fn.fn(*values)
        if fn.name in KEPT_ONLY:  # a view's own kept numbers, none kept yet: it stays as it is
            assert all(value == gr.skip() for block, value in drawn.items() if block in drawn_by(fn)), fn.name
            continue
        if not isinstance(drawn, dict):  # a control's handler returns its outputs in order, a figure for each plot
            drawn = dict(zip(fn.outputs, drawn if isinstance(drawn, tuple) else (drawn,), strict=True))
            assert all(isinstance(drawn[block], go.Figure) for block in fn.outputs if isinstance(block, gr.Plot)), (
                fn.name
            )
        assert isinstance(drawn, dict) and set(drawn) <= set(fn.outputs), fn.name
        figures = [value for value in drawn.values() if isinstance(value, go.Figure)]
        assert all(figure.data for figure in figures), fn.name
        # Whatever an event draws includes the sentence: heatmap axes or marker labels are its tokens.
        assert not figures or any(over_tokens(figure, labels) for figure in figures), fn.name
        plots |= {block for block in fn.outputs if isinstance(block, gr.Plot)}
        drawn_plots |= {block for block, value in drawn.items() if isinstance(value, go.Figure)}
    assert drawn_plots == plots  # every plot these events update, some event draws
    assert not forward_calls


def drawn_by(fn) -> list:
    """An event's outputs that draw, without a view's failure line or the address stamp."""
    return [block for block in fn.outputs if not {"view-failure", "address-stamp"} & set(block.elem_classes or [])]


def over_tokens(figure, labels: list[str]) -> bool:
    """Whether ``figure`` is drawn over the tokens: every heatmap has them on both axes, or markers are labelled."""
    heatmaps = [trace for trace in figure.data if trace.type == "heatmap"]
    if heatmaps and all(trace.x is not None for trace in heatmaps):
        return all(list(trace.x) == list(trace.y) == labels for trace in heatmaps)
    return any(
        trace.type == "scatter" and trace.text is not None and list(trace.text) == labels for trace in figure.data
    )


def test_mean_head_view_is_titled_and_averaged(app):
    result = page.show_text(REGISTRY, SENTENCE, 1, "1", [0])[0]
    figure = views.attention.show_head(result, 2, MEAN_HEAD)
    assert "mean of all heads" in figure.layout.title.text
    np.testing.assert_allclose(shown_values(figure.data[0]), result.attentions[1].mean(axis=0), atol=1e-4)


@pytest.mark.parametrize("text", ["", "   \n  "])
def test_blank_text_gives_a_prompt_not_an_error(app, text, forward_calls):
    result, prediction, spans, notice, heatmap, grid, curves = page.show_text(REGISTRY, text, 1, "1", [0])
    assert "Type a sentence" in notice
    assert result is prediction is spans is heatmap is grid is curves is None
    *_, curves = page.show_text(REGISTRY, text, 1, "1", [0], view="positional-encoding")
    assert [trace.mode for trace in curves.data] == ["lines"]  # the encoding still shows, without tokens
    assert views.attention.show_head(None, 1, "1") is None
    assert not forward_calls


def test_long_text_is_truncated_with_a_visible_notice(app):
    text = " ".join(["wonderful"] * (TINY_MAX_LEN + 5))
    _, _, spans, notice, heatmap, *_ = page.show_text(REGISTRY, text, 1, "1", [0])
    assert f"at most {TINY_MAX_LEN} tokens: only the first {TINY_MAX_LEN} of {TINY_MAX_LEN + 5}" in notice
    assert len(heatmap_labels(heatmap)) == TINY_MAX_LEN
    assert spans[-1] == (" … 5 more words not read", None)  # the unread rest is counted, not shown


def test_colour_controls_show_only_on_the_tabs_of_views_whose_figures_use_them(app):
    """Each view's declaration (``View.colour_scale``) matches what its drawing reads, and selecting its tab
    shows or hides the controls accordingly."""
    parts, fns = page_parts(app), list(app.demo.fns.values())
    (row,) = {block for block in app.demo.blocks.values() if getattr(block, "elem_id", None) == "colour-controls"}
    declared = {view.id: view.colour_scale for view in views.VIEWS}
    for view_id, (tab, _) in parts.tabs.items():
        redraw = next(block for block in app.demo.blocks.values() if block.elem_id == scripts.REDRAW_ID + view_id)
        (redrawn,) = [fn for fn in fns if (redraw._id, "click") in fn.targets]  # its inputs are the drawing's
        assert any(getattr(block, "elem_id", None) == "colour-scale" for block in redrawn.inputs) == declared[view_id]
        # the tab selected, on the view already current: it sets the controls' visibility; a long view's draws
        # nothing (a quick view's draws: a control changed while its tab opened comes back as the tab)
        (selected,) = [fn for fn in fns if (tab._id, "select") in fn.targets]
        if not by_tab(selected):  # a long view's: its Cancel button's step, then ``open_view``
            (selected,) = [fn for fn in fns if fn.name == "open_view" and inspect.unwrap(fn.fn).args[0] == view_id]
        values = {block: view_id if block.elem_id == "current-view" else block.value for block in selected.inputs}
        values |= {parts.load_mark: "loaded"} if parts.load_mark in values else {}  # the page load's answer came
        opened = selected.fn(values, gr.EventData(tab, None)) if by_tab(selected) else selected.fn(values)
        assert opened[row]["visible"] == declared[view_id], view_id
        if not by_tab(selected):
            drawn = [
                block for block, value in opened.items() if value != gr.skip() and block in parts.view_outputs(view_id)
            ]
            assert not drawn, view_id
    assert {"attributions", "knockout", "patching"} == {
        inspect.unwrap(fn.fn).args[0] for fn in fns if fn.name == "open_view"
    }  # the long views; every other view's tab shares its one drawing event
    hidden = {view_id for view_id, shown in declared.items() if not shown}
    assert {"positional-encoding", "export", "errors", "word-order", "token-embeddings"} <= hidden
    assert not hidden & {"attention", "all-heads", "compare", "knockout", "rollout"}


def test_the_hidden_current_button_makes_the_tab_on_screen_the_current_view(app):
    """``page.js`` presses it where a tab's late answer left ``current_view`` naming another view than the tab on
    screen, whose name its ``js`` puts in as the input: that view becomes current, with its colour controls, and
    nothing is drawn."""
    parts = page_parts(app)
    (fn,) = [fn for fn in app.demo.fns.values() if fn.name == "make_current"]
    assert [block.elem_id for block in fn.inputs] == ["current-view"] and "tabOnScreenInput" in fn.js
    assert set(fn.outputs) == {parts.current_view, parts.colour_controls} and not fn.queue
    for view_id, coloured in (("export", False), ("attention", True), ("positional-encoding", False)):
        made = parts.make_current(view_id)
        assert made[parts.current_view] == view_id and made[parts.colour_controls]["visible"] is coloured


def by_tab(fn) -> bool:
    """Whether ``fn`` is a quick view's one drawing event, which its tab's selection triggers too
    (``ViewDraws.opened_or_drawn``): Gradio hands it the event."""
    return isinstance(inspect.unwrap(fn.fn), GivenEvent)


def trigger(app, fn, index: int) -> gr.EventData:
    """The event Gradio hands ``fn`` when its ``index``-th trigger fires."""
    return gr.EventData(app.demo.blocks[fn.targets[index][0]], None)


def test_unknown_pieces_are_named_in_the_notice_and_marked_in_the_token_view(app):
    result, _, spans, notice, *_ = page.show_text(REGISTRY, "a wonderful film \U0001f3ac", 1, "1", [0])
    assert "no token for `\U0001f3ac`" in notice
    assert spans[-1] == ("\U0001f3ac", f"{len(result.tokens) - 1} [UNK]")


def test_oversized_text_is_a_clear_error(app):
    with pytest.raises(gr.Error, match="at most 10,000") as raised:
        page.show_text(REGISTRY, "a" * (analysis.MAX_INPUT_CHARS + 1), 1, "1", [0])
    assert raised.value.print_exception is False  # no stack trace in the server log for a user's mistake
    with pytest.raises(gr.Error, match="at most 10,000"):
        api.predict("a" * (analysis.MAX_INPUT_CHARS + 1))


def test_markup_is_escaped_in_every_figure_label(app):
    text = "<b>bold</b> <script>window.__x=1</script> <a href=x>"
    drawn = draw(app, text)
    result, _, spans, *_ = drawn["attention"]
    assert "<" in result.tokens  # the tokenizer kept the markup characters as tokens
    for i, view in enumerate(REGISTRY.main_views):
        payload = drawn[view][4 + i].to_json()
        assert "<b>" not in payload and "<script" not in payload and "<a " not in payload
        assert "&lt;" in payload
    assert "".join(piece for piece, _ in spans) == text  # the token view shows the typed text as it is


def test_repeated_tokens_get_unique_labels(app):
    drawn = draw(app, "the film the film the")
    heatmap, grid = drawn["attention"][4], drawn["all-heads"][5]
    labels = heatmap_labels(heatmap)
    assert len(labels) == 5 and len(set(labels)) == 5
    assert list(grid.data[0].x) == labels


def test_query_string_restores_text_layer_head_and_colour_scale(app):
    query = {"text": "a charming journey", "layer": "2", "head": "mean", "scale": "row", "leave_out": "punctuation"}
    restored = restore.restore_view(REGISTRY, "default", 1, "1", [0], gr.Request(query_params=query), "global", [])
    text, layer, head, scale, leave_out, result, *_, heatmap, grid, _curves = restored
    assert (text, layer, head, scale, leave_out) == ("a charming journey", 2, "mean", "row", ["punctuation"])
    assert result.tokens == ["a", "charming", "journey"]
    assert "Layer 2, mean of all heads" in heatmap.layout.title.text and grid is None
    assert heatmap.data[0].zmax == 255  # each row on its own range, one byte a colour
    grid = restore.restore_view(
        REGISTRY, "default", 1, "1", [0], gr.Request(query_params=query | {"view": "all-heads"})
    )[-2]
    assert grid.layout.coloraxis.cmax == 255


@pytest.mark.parametrize(
    "query",
    [
        {},
        {"layer": "9", "head": "7", "scale": "wide", "leave_out": "special,<b>"},
        {"layer": "<b>", "head": "-1", "scale": ""},
        {"layer": "1.5", "head": ""},
    ],
)
def test_missing_or_bad_query_values_keep_the_current_view(app, query):
    restored = restore.restore_view(REGISTRY, SENTENCE, 2, "2", [0], gr.Request(query_params=query), "row", ["special"])
    assert restored[:5] == (SENTENCE, 2, "2", "row", ["special"])


def page_load(app, query: dict) -> dict:
    """What the page load's one step writes for an address ``query``: {elem_id or component: value}."""
    load = next(fn for fn in app.demo.fns.values() if any(event == "load" for _, event in fn.targets) and fn.fn)
    return {c.elem_id or c: value for c, value in load.fn(gr.Request(query_params=query)).items()}


def test_the_page_load_draws_the_linked_view_in_one_step(app, forward_calls):
    written = page_load(app, {"text": SENTENCE, "view": "knockout", "heads_off": "L1 H2", "layer": "2"})
    assert written["current-view"] == "knockout" and written["heads-off"] == ["L1 H2"] and written["layer"] == 2
    assert "Switched off: L1 H2" in written["knockout-summary"]
    assert written["knockout-grid"].data and written["head-importance"].data
    assert written["attention-heatmap"] is None  # the main views wait for their tabs
    assert written["restored-text"] == SENTENCE and forward_calls  # the analysis, then the knockout's runs
    assert "sentence" not in written  # never the box itself: the page keeps what the person typed meanwhile
    assert written["colour-controls"]["visible"]  # the knockout grid follows the colour scale


def test_the_page_load_hands_its_text_to_the_page_which_keeps_a_typed_one(app):
    """The load's next step, js-only, decides in the page (once the load's answer is there) what the box holds and
    writes it there itself: an output of the event would land later, over keys typed meanwhile."""
    load = next(fn for fn in app.demo.fns.values() if any(event == "load" for _, event in fn.targets) and fn.fn)
    steps = [fn for fn in app.demo.fns.values() if fn.trigger_after == load._id]
    (keep,) = [fn for fn in steps if fn.js and "keepTyped" in fn.js]
    assert keep.fn is None and [c.elem_id for c in keep.inputs] == ["restored-text"]
    assert not keep.outputs and app.EXAMPLES[0] in keep.js


def test_a_linked_text_that_cannot_be_read_still_restores_the_view_and_warns(app):
    too_long = "word " * (analysis.MAX_INPUT_CHARS // 5 + 1)
    with pytest.warns(UserWarning, match="at most"):
        written = page_load(app, {"text": too_long, "view": "knockout", "heads_off": "L1 H2"})
    assert written["current-view"] == "knockout" and written["heads-off"] == ["L1 H2"]
    assert "sentence" not in written and "restored-text" not in written  # the address's text is not echoed


def test_the_positional_tables_come_once_a_session_not_with_every_page(app):
    tables = [block for block in app.demo.blocks.values() if block.elem_id in ("pe-table", "pe-similarity")]
    assert len(tables) == 2 and all(block.value is None for block in tables)  # not in the page's config
    curves, table, similarity, drawn = views.positional_encoding.show_encodings(None, [0, 1], False)
    assert len(curves.data) == 2 and table.data[0].z is not None and similarity.data[0].z is not None and drawn
    assert views.positional_encoding.show_encodings(None, [0, 1], True)[1:] == (gr.skip(), gr.skip(), True)
    written = page_load(app, {"text": SENTENCE, "view": "positional-encoding"})  # a link to the tab draws them
    assert written["pe-curves"].data and written["pe-table"].data and written["pe-similarity"].data


def test_unreachable_hub_model_falls_back_to_the_bundled_one_and_says_so(app, model_dir, monkeypatch):
    monkeypatch.setenv("MODEL_ID", "nobody/no-such-model")
    monkeypatch.setattr(runner, "DEFAULT_MODEL_DIR", model_dir)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    app.get_model.cache_clear()
    try:
        loaded, note = app.get_model()
    finally:
        app.get_model.cache_clear()  # later callers reload the test model named by the restored MODEL_ID
    assert loaded.source == str(model_dir)
    assert "nobody/no-such-model" in note and "bundled model" in note
    assert "bundled model" in status.model_status(loaded, note)


def test_api_page_lists_one_endpoint_per_view_and_nothing_else(app):
    """The API page names ``/predict`` and each registered view's endpoints, read from the registry (a new view's
    endpoint needs no list here)."""
    endpoints = app.demo.get_api_info()["named_endpoints"]
    assert set(endpoints) == {f"/{name}" for name in api.endpoints(app.REGISTRY)}
    assert {"/predict", "/attention", "/walkthrough", "/patching"} <= set(endpoints)


@pytest.mark.served
def test_client_predict_returns_a_label_with_confidences(client):
    result = client.predict(SENTENCE, api_name="/predict")
    assert result["label"] in {"negative", "positive"}
    assert result["confidences"][0]["label"] == result["label"]
    assert sum(entry["confidence"] for entry in result["confidences"]) == pytest.approx(1, abs=1e-3)


@pytest.mark.served
def test_client_attention_returns_tokens_and_nested_weights(client):
    result = client.predict(SENTENCE, api_name="/attention")
    n = len(result["tokens"])
    assert result["tokens"][:2] == ["a", "wonderful"]
    weights = np.array(result["attentions"])
    assert weights.shape == (2, 2, n, n)  # [layer][head][query][key]
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, atol=1e-3)


@pytest.mark.served
def test_client_gets_a_clear_error_for_oversized_input_and_the_server_keeps_working(client):
    with pytest.raises(AppError, match="accepts at most 10,000") as raised:
        client.predict("x" * 20_000, api_name="/predict")
    assert "Traceback" not in str(raised.value)
    with pytest.raises(AppError, match="Type a sentence"):
        client.predict("   ", api_name="/attention")
    assert client.predict(MARKUP, api_name="/attention")["tokens"][0] == "<"


@pytest.mark.served
def test_client_sees_every_endpoint(app, client):
    endpoints = client.view_api(print_info=False, return_format="dict")["named_endpoints"]
    assert set(endpoints) == {f"/{name}" for name in api.endpoints(app.REGISTRY)}


@pytest.mark.served
def test_command_line_serves_and_explains_a_failed_share_link(model_dir):
    port = free_port()
    blackhole = "http://127.0.0.1:9"  # every outside request fails at once: hermetic, and no public tunnel
    env = dict(os.environ, MODEL_ID=str(model_dir), HTTP_PROXY=blackhole, HTTPS_PROXY=blackhole)
    env["NO_PROXY"] = "127.0.0.1,localhost"
    process = subprocess.Popen(
        [sys.executable, "app.py", "--host", "127.0.0.1", "--port", str(port), "--share"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 90
        lines = []
        while time.monotonic() < deadline:
            line = process.stderr.readline()
            if not line and process.poll() is not None:
                break
            lines.append(line)
            if "No public link" in line:
                break
        assert any("No public link" in line for line in lines), "".join(lines[-20:])
        assert process.poll() is None  # still serving
        response = httpx.get(f"http://127.0.0.1:{port}/", timeout=10, trust_env=False)
        assert response.status_code == 200 and "Transformer Attention Explorer" in response.text
    finally:
        process.terminate()
        process.wait(timeout=20)


@pytest.mark.served
@pytest.mark.parametrize("how", ["flag", "environment"])
def test_command_line_stops_with_one_line_naming_the_flag_when_its_port_is_taken(model_dir, how):
    """Gradio, given no port, would take the next free one after 7860 (or GRADIO_SERVER_PORT) without a word."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        flag = ["--port", str(port)] if how == "flag" else []
        done = subprocess.run(
            [sys.executable, "app.py", *flag],
            cwd=ROOT,
            env=dict(os.environ, MODEL_ID=str(model_dir)) | ({} if flag else {"GRADIO_SERVER_PORT": str(port)}),
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 1, done.stdout  # not serving on the next free port instead
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"Port {port} is taken") and "--port" in last, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and "Running on" not in done.stdout


def page_parts(app):
    """The page's ``PageParts``, whose ``restore_page`` is the page load's one step."""
    return next(inspect.unwrap(fn.fn).__self__ for fn in app.demo.fns.values() if fn.name == "restore_page")


def test_the_analysis_and_the_page_load_show_progress_on_the_main_figures_not_the_prediction(app):
    """Gradio refreshes the progress of every component an event shows it on, at each message of every later event:
    the prediction's made each Analyze 3-6 % slower. It keeps the last prediction until the new one comes."""
    parts = page_parts(app)
    drawing = [fn for fn in app.demo.fns.values() if fn.name in ("show_text", "restore_page")]
    assert {fn.name for fn in drawing} == {"show_text", "restore_page"}
    for fn in drawing:
        assert fn.show_progress_on == parts.main_figures and parts.prediction in fn.outputs


def test_the_analysis_shows_its_progress_as_a_timer_over_the_figure_it_keeps_not_an_overlay(app):
    """Gradio's full progress covers the figure and animates a loader, which repaints the whole page every frame of
    the job: an Analyze was 7-9 % slower at 25 tokens (benchmarks/README). A minimal one keeps the last figure in view
    under a running timer, as the prediction is kept, until the new one comes."""
    analyses = [fn for fn in app.demo.fns.values() if fn.name == "show_text"]  # Analyze and Enter; an example
    assert len(analyses) == 2 and {fn.show_progress for fn in analyses} == {"minimal"}


def cold_load(parts, **params) -> dict:
    """The page load of a fresh page at ``?<params>``: {component: the value or update it sends}."""
    return parts.restore_page(types.SimpleNamespace(query_params=params))


def test_a_view_that_fails_to_draw_says_so_in_its_tab_and_the_page_keeps_the_rest(app, monkeypatch, caplog):
    """A cold link to a view whose drawing raises (issue 35's Walkthrough at step 11): the text, the prediction,
    the tokens and the tab are restored; the view keeps its outputs and says in one line that it failed."""
    parts = page_parts(app)

    def broken(*_):
        raise ValueError("yaxis domain[0] = -2.22e-16")

    monkeypatch.setitem(parts.drawings, "rollout", dataclasses.replace(parts.drawings["rollout"], handler=broken))
    with caplog.at_level(logging.ERROR, logger=events.__name__):
        values = cold_load(parts, text=SENTENCE, view="rollout")
    assert values[parts.restored_text] == SENTENCE and values[parts.current_view] == "rollout"
    assert set(shown_bars(values[parts.prediction])) == {"negative", "positive"} and values[parts.tokens_view]
    failure = values[parts.failures["rollout"]]
    assert failure["visible"] and "could not be drawn" in failure["value"] and "\n" not in failure["value"]
    assert all(isinstance(values[output], type(gr.skip())) for output in parts.drawings["rollout"].outputs)
    (logged,) = caplog.records  # once, with its traceback
    assert logged.exc_info and "rollout" in logged.getMessage()
    shown = parts.draw_view("attention", {c: values.get(c, c.value) for c in parts.drawings["attention"].inputs})
    assert isinstance(shown[parts.drawings["attention"].outputs[0]], go.Figure)  # the other views still draw


def test_a_redraw_the_view_wires_itself_fails_in_its_tab_alone(app, monkeypatch, caplog):
    """The Walkthrough's Previous and Next, drawn from the kept pass off the queue: a failing step draw says so in
    one line in the tab, is logged once with its traceback, and leaves the step and every other output as it was."""
    parts = page_parts(app)
    walk = parts.drawings["walkthrough"]
    movers = [fn for fn in app.demo.fns.values() if fn.name == "show_moved_step"]
    result = page.show_text(REGISTRY, SENTENCE, 1, "1", [0])[0]
    kept = views.walkthrough.show_step(result, 10, 1, 1, None)[-1]
    values = dict(zip(walk.inputs, [result, 10, 1, 1, kept], strict=True))
    failure = parts.failures["walkthrough"]

    def broken(*_):
        raise ValueError("yaxis domain[0] = -2.22e-16")

    monkeypatch.setattr(views.walkthrough, "draw_step", broken)
    assert len(movers) == 2
    for mover in movers:
        assert failure in mover.outputs and set(drawn_by(mover)) <= {*walk.inputs, *walk.outputs}
        caplog.clear()
        with caplog.at_level(logging.ERROR, logger=events.__name__):
            drawn = mover.fn({block: values[block] for block in mover.inputs})
        said = drawn[failure]
        assert said["visible"] and "could not be drawn" in said["value"] and "\n" not in said["value"]
        assert all(isinstance(drawn[block], type(gr.skip())) for block in drawn_by(mover))
        (logged,) = caplog.records
        assert logged.exc_info and "walkthrough" in logged.getMessage()


@pytest.mark.parametrize(
    ("view", "event", "module", "broken_name"),
    [
        ("errors", "compute_and_show", views.errors, "compute_then_draw"),
        ("behaviour", "compute_and_show", views.behaviour, "compute_then_draw"),
        ("behaviour", "run_and_show", views.behaviour, "run_live"),
        ("head-atlas", "compute_and_show", views.head_atlas, "ATLAS"),
    ],
)
def test_a_long_computation_that_fails_says_so_in_its_tab_alone(
    app, monkeypatch, caplog, view, event, module, broken_name
):
    """The corpus computations with a progress bar (the error list, the behavioural suite and a live test, the head
    atlas): a failure says so in one line in the tab, is logged once with its traceback, and changes no other output
    (never the text, the prediction or the tab); the progress bar stays."""
    parts = page_parts(app)

    def broken(*_):
        raise ValueError("the corpus could not be read")

    broken_value = types.SimpleNamespace(compute=broken) if broken_name == "ATLAS" else broken
    monkeypatch.setattr(module, broken_name, broken_value)
    (computing,) = [
        fn for fn in app.demo.fns.values() if fn.name == event and view in getattr(inspect.unwrap(fn.fn), "args", ())
    ]
    assert computing.tracks_progress and computing.queue and computing.api_visibility == "private"
    failure = parts.failures[view]
    page_own = {parts.text_box, parts.restored_text, parts.current_view, parts.page.result, *parts.analyzed}
    assert failure in computing.outputs and not page_own & set(computing.outputs)  # never the text, tab or prediction
    suite_test = next(iter(views.behaviour.suite()))
    values = {block: getattr(block, "value", None) for block in computing.inputs}
    values |= {block: suite_test for block in computing.inputs if block.elem_id == "behaviour-name"}
    request = model_artifacts.run_request()  # what the tab's draw writes into its hidden box
    values |= {block: request for block in computing.inputs if (block.elem_id or "").endswith("-needed")}
    with caplog.at_level(logging.ERROR, logger=events.__name__):
        drawn = computing.fn(values)
    said = drawn[failure]
    assert said["visible"] and "could not be drawn" in said["value"] and "\n" not in said["value"]
    running = parts.running[view]  # the job's answer has come: a Cancel click now cancels nothing
    assert set(drawn) == set(computing.outputs) and drawn[running] is False
    assert all(isinstance(drawn[block], type(gr.skip())) for block in drawn_by(computing) if block is not running)
    (logged,) = caplog.records
    assert logged.exc_info and view in logged.getMessage() and "could not be read" in str(logged.exc_info[1])


@pytest.mark.parametrize("view", ["errors", "behaviour"])
def test_reopening_a_tab_whose_long_computation_failed_runs_it_again(app, tiny_data_dir, tmp_path, monkeypatch, view):
    """The Errors and Behaviour tabs compute on first open, when their draw changes a hidden box to a run request.
    Gradio fires a change only for a new value, so after a failure the next opening of the tab must write a value the
    box does not hold, and that change must run the computation again (it used to wait for a page reload)."""
    parts = page_parts(app)
    artifact = {"errors": views.errors.ERRORS, "behaviour": views.behaviour.REPORT}[view]
    builds = []

    def broken(sha):
        builds.append(sha)
        raise ValueError("the corpus could not be read")

    monkeypatch.setenv(corpus.DATA_DIR_VARIABLE, str(tiny_data_dir))  # the Errors tab computes only with one
    monkeypatch.setattr(artifact, "build", broken)
    (computing,) = [
        fn for fn in app.demo.fns.values() if fn.name == "compute_and_show" and view in inspect.unwrap(fn.fn).args
    ]
    (needed,) = [block for block in computing.inputs if block.elem_id == f"{view}-needed"]
    drawing, failure = parts.drawings[view], parts.failures[view]
    held = [needed.value]  # what the hidden box holds, opening after opening
    with without_artifact(artifact, app.get_model()[0].folder, tmp_path / "cache", monkeypatch):
        for attempt in (1, 2):
            values = {block: block.value for block in drawing.inputs} | {parts.current_view: "attention"}
            opened = parts.open_view(view, values)  # the tab selected again, from another tab
            assert opened[needed] != held[-1], f"opening {attempt}: the box keeps {held[-1]!r}, so nothing runs"
            held.append(opened[needed])
            drawn = computing.fn({block: opened.get(block, block.value) for block in computing.inputs})
            assert len(builds) == attempt and drawn[failure]["visible"]  # it ran, and failed in the tab
            assert isinstance(drawn[needed], type(gr.skip()))  # the box keeps the request


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"view": "nonsense", "layer": "99"}, "The tab and the page's “Layer” are not allowed here"),
        ({"link": "0" * 32}, "The shared link is unknown or has expired."),
        (  # issue 53: an address that left its text out (page.js) says so when opened
            {"cut": "text,patch_b"},
            "The sentence and the Patching tab's “Sentence B” were too long for the address and left out: a link "
            "from “Copy link to this view” keeps them.",
        ),
        (  # issue 53: said in the page's words, never the address's names (walk_layer, heads_off)
            {"view": "walkthrough", "walk_layer": "9", "heads_off": "L9 H9"},
            "The Walkthrough tab's “Layer” and the Head knockout tab's “Heads switched off” are not allowed here, "
            "so the page shows their default.",
        ),
        ({"view": "api"}, None),  # Gradio's API page, not a tab of the app's
        ({"view": "knockout", "layer": "2"}, None),
    ],
)
def test_a_cold_link_says_in_one_line_what_it_could_not_restore(app, params, named):
    parts = page_parts(app)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        values = cold_load(parts, text=SENTENCE, **params)
    lines = [
        str(w.message)
        for w in said
        if any(part in str(w.message) for part in ("allowed here", "shared link", "address"))
    ]
    assert values[parts.restored_text] == SENTENCE and set(shown_bars(values[parts.prediction])) == {
        "negative",
        "positive",
    }
    if named is None:
        assert not lines
    else:
        (line,) = lines
        assert named in line and "\n" not in line and "99" not in line  # names the parameter, never echoes its value
        assert not any(name in line for name in params if name not in ("view", "link", "cut")) and "link's" not in line


def test_no_table_caption_says_to_click_a_column_to_sort(app):
    """Gradio 6.31's tables sort from each column's menu; a caption that says to click a column misleads."""
    labels = [block.label for block in app.demo.blocks.values() if isinstance(block, gr.Dataframe)]
    sorting = [label for label in labels if "sort" in (label or "")]
    assert sorting and all("menu" in label and "click a column" not in label for label in sorting), sorting


def test_a_lone_surrogate_in_any_text_is_refused_in_one_line_before_any_handler(app):
    """JSON carries ``"\\ud800"``, which no tokenizer or answer holds: every event with a text input (the API's and
    the page's, a view's own texts included) refuses it in its inputs, with a line for the sender and no traceback
    (``launch.quiet_input_errors``), whichever input it is in."""
    texts = [
        (block_fn, position)
        for block_fn in app.demo.fns.values()
        if block_fn.fn is not None and block_fn.queue
        for position, block in enumerate(block_fn.inputs)
        if isinstance(block, gr.Textbox | Api)
    ]
    assert len({id(block_fn) for block_fn, _ in texts}) > 10  # /predict and every view's, the page's events
    for block_fn, position in texts:
        values = [block.value for block in block_fn.inputs]
        values[position] = "a wonderful \ud800 film"
        with pytest.raises(gr.Error, match=r"lone surrogate, U\+D800, at character 12") as refused:
            asyncio.run(app.demo.preprocess_data(block_fn, values, None))
        assert not refused.value.print_exception and "\n" not in refused.value.message, block_fn.name


def test_laying_out_the_page_loads_the_models_checkpoints_so_that_no_request_does(app, monkeypatch):
    """``app.build_demo`` loads the explorer's model's training checkpoints (``runner.get_checkpoints``) with the
    model: a request then finds them loaded (``test_security`` checks that no request loads a model)."""
    listed = []
    monkeypatch.setattr(runner, "_checkpoints", [None, None])  # none loaded yet
    monkeypatch.setattr(runner, "load_checkpoints", lambda loaded: listed.append(loaded) or ((), "none kept"))
    app.build_demo()
    assert listed == [runner.get_model()[0]]
