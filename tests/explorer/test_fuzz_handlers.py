"""Hostile input straight into the handlers (no server): every text either reads or fails with a clear message.

Hypothesis draws any Unicode, markup, control characters and texts near and over the size cap (see
``fuzz_helpers``); the properties are checked on ``analysis.check_text`` and ``analysis.analyze`` and on the
app's own handlers, on the tiny test model. Examples are derandomized and bounded, so a run is repeatable.
"""

import os

os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
os.environ["HF_HUB_OFFLINE"] = "1"

import json

import gradio as gr
import numpy as np
import pytest
from app_fixtures import shown_bars
from fuzz_helpers import CAP, NORMAL_TEXT, any_json, hostile_int, hostile_text, is_clear_sentence, leaks
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transformer.explorer import analysis, payloads, runner, views
from transformer.explorer.drawing import token_spans
from transformer.explorer.drawing.figures import shown_values
from transformer.explorer.inputs import MEAN_HEAD
from transformer.explorer.page import api, page, restore
from transformer.explorer.page.page import show_main_view
from transformer.explorer.registry import PageValues, Registry
from transformer.explorer.views import VIEWS

REGISTRY = Registry(VIEWS)  # the page's views, as app.py registers them


pytestmark = pytest.mark.slow  # many seconds: left out of make test-fast

FUZZ = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)
FIGURES = settings(FUZZ, max_examples=40)  # each example draws plotly figures: tens of milliseconds apiece
WRONG_TYPES = [5, 3.5, True, ["a", "list"], {"text": "a dict"}]


@pytest.fixture(scope="module")
def result(app):
    return runner.run_model(NORMAL_TEXT)


def assert_clear(message: str, sent: object) -> None:
    """A message for the person who sent ``sent``: a sentence, no trace, no path, no class, no echoed markup."""
    assert is_clear_sentence(message), message
    assert not leaks(message, sent), (leaks(message, sent), message)
    assert "<" not in message or "<" not in str(sent), f"the message repeats the caller's markup: {message}"


def expanded_by_normaliser(result: analysis.Analysis) -> bool:
    """True when tokens share characters: NFKD made several tokens of one character ("…" -> ". . .", "¼")."""
    ends = [end for _, end in result.offsets]
    return any(start < max(ends[:i], default=0) for i, (start, _) in enumerate(result.offsets))


def figure_labels(figure) -> list[str]:
    """Every piece of text plotly reads as HTML in a figure: axis labels, hover text, titles, annotations."""
    labels = []
    for trace in figure.data:
        for name in ("x", "y", "text", "name"):
            value = getattr(trace, name, None)
            if isinstance(value, str):
                labels.append(value)
            elif value is not None and not isinstance(value, np.ndarray):
                labels.extend(item for item in value if isinstance(item, str))
    if figure.layout.title.text:
        labels.append(figure.layout.title.text)
    labels.extend(annotation.text for annotation in figure.layout.annotations or () if annotation.text)
    return labels


@FUZZ
@given(text=hostile_text())
def test_check_text_accepts_exactly_the_non_blank_texts_up_to_the_cap(text):
    if len(text) > CAP:
        with pytest.raises(analysis.InputTooLongError) as raised:
            analysis.check_text(text)
    elif not text.strip():
        with pytest.raises(analysis.EmptyInputError) as raised:
            analysis.check_text(text)
    else:
        assert analysis.check_text(text) is text
        return
    assert_clear(str(raised.value), text)


@FUZZ
@given(text=hostile_text())
def test_analyze_reads_any_text_whole_or_truncated_or_says_why(loaded, text):
    model, tokenizer = loaded.model, loaded.tokenizer
    try:
        result = analysis.analyze(model, tokenizer, text)
    except analysis.InputError as error:
        assert_clear(str(error), text)
        assert len(text) > CAP or not text.strip() or not tokenizer.encode(text).ids
        return
    n = len(result.tokens)
    assert 1 <= n <= model.max_len and result.total_tokens >= n
    assert result.truncated == (result.total_tokens > n)
    assert (result.notice is not None) == (result.truncated or "[UNK]" in result.tokens)
    assert result.attentions.shape == (model.num_layers, model.num_heads, n, n)
    assert np.isfinite(result.attentions).all()
    np.testing.assert_allclose(result.attentions.sum(axis=-1), 1.0, atol=1e-4)
    assert sum(result.probabilities) == pytest.approx(1.0, abs=1e-5)
    assert all(0 <= start <= end <= len(text) for start, end in result.offsets)
    shown = token_spans.token_spans(result)  # every character read shown once, then one marker for the rest
    read = result.offsets[-1][1] if result.truncated else len(text)
    marker = [token_spans.unread_marker(text[read:])] if result.truncated else []
    assert "".join(piece for piece, _ in shown[: len(shown) - len(marker)]) == text[:read]
    assert [piece for piece, _ in shown[len(shown) - len(marker) :]] == marker
    json.dumps(payloads.attention_payload(result), allow_nan=False)  # what /attention sends is valid JSON
    json.dumps(payloads.label_payload(result), allow_nan=False)


@FIGURES
@given(text=hostile_text(), layer=hostile_int(), head=hostile_int(), dims=st.lists(hostile_int(), max_size=10))
def test_show_text_draws_every_view_or_raises_a_clear_gr_error(app, loaded, text, layer, head, dims):
    model = loaded.model
    layer = 1 + layer % model.num_layers  # the Radio lets through only its choices: 1..L,
    head = MEAN_HEAD if head % (model.num_heads + 1) == 0 else str(head % (model.num_heads + 1))  # "1".."H", mean
    try:
        outputs = page.show_text(REGISTRY, text, layer, head, dims)
    except gr.Error as error:
        assert error.print_exception is False  # a user's mistake leaves no stack trace in the server log
        assert_clear(error.message, text)
        assert len(text) > CAP
        return
    result, prediction, spans, notice, heatmap, grid, curves = outputs
    if result is None:  # blank: a prompt in the notice, no error
        assert not text.strip() or not loaded.tokenizer.encode(text).ids
        assert is_clear_sentence(notice)
        return
    assert set(shown_bars(prediction)) == set(model.label_names)
    assert spans == token_spans.token_spans(result)  # whose pieces the test above checks, truncated texts too
    assert (notice != "") == (result.notice is not None)
    assert grid is curves is None  # drawn when their tabs open
    heatmap, grid, curves = (
        show_main_view(REGISTRY, result, view, PageValues(layer, head, dims, "global", []))[i]
        for i, view in enumerate(REGISTRY.main_views)
    )
    for figure in (heatmap, grid, curves):
        for label in figure_labels(figure):  # typed markup is escaped: plotly never sees a tag from the text
            assert "<" not in label and ">" not in label, label
    kept = {dim for dim in dims if 0 <= dim < model.d_model}
    assert sum(trace.mode == "lines" for trace in curves.data) == len(kept)


@pytest.mark.parametrize("text", ["wait… what", "¼ of it", "a ﬁne film"])
def test_token_view_shows_an_expanded_character_once(loaded, text):
    result = analysis.analyze(loaded.model, loaded.tokenizer, text)
    assert expanded_by_normaliser(result)  # the case this test is about
    assert "".join(piece for piece, _ in token_spans.token_spans(result)) == text


@FIGURES
@given(text=hostile_text())
def test_api_handlers_answer_any_text_or_raise_a_clear_gr_error(app, loaded, text):
    for handler in (api.predict, views.attention.attention):
        try:
            payload = handler(text)
        except gr.Error as error:
            assert error.print_exception is False
            assert_clear(error.message, text)
            assert len(text) > CAP or not text.strip() or not loaded.tokenizer.encode(text).ids
            continue
        json.dumps(payload, allow_nan=False)
        assert payload["label"] in loaded.model.label_names if handler is api.predict else payload["tokens"]


POSITIVE = st.integers(1, 12) | st.sampled_from([2**31, 2**63, 10**30])


@FIGURES
@given(layer=POSITIVE, head=POSITIVE | st.sampled_from(["mean", "", "1.5", "<b>", "nan", " 1", "1e3"]))
def test_show_head_draws_the_head_it_names_or_refuses(app, loaded, result, layer, head):
    """Any layer and head from 1 up: the figure shows exactly the weights it names, or none is drawn.

    Zero and negative indices are the test below.
    """
    head = str(head)
    try:
        figure = views.attention.show_head(result, layer, head)
    except (gr.Error, IndexError, ValueError):
        return
    model = loaded.model
    assert 1 <= layer <= model.num_layers, f"layer {layer} does not exist but was drawn"
    if head != MEAN_HEAD:
        assert 1 <= int(head) <= model.num_heads, f"head {head} does not exist but was drawn"
    expected = analysis.attention_matrix(result, layer - 1, None if head == MEAN_HEAD else int(head) - 1)
    np.testing.assert_allclose(shown_values(figure.data[0]), expected, atol=1e-4)


@pytest.mark.parametrize(("layer", "head"), [(0, "1"), (-1, "1"), (1, "0"), (1, "-1")])
def test_show_head_refuses_layers_and_heads_that_do_not_exist(app, result, layer, head):
    with pytest.raises((gr.Error, IndexError, ValueError)):
        views.attention.show_head(result, layer, head)


@FIGURES
@given(dims=st.lists(hostile_int(), max_size=12) | st.none())
def test_show_positions_keeps_only_dimensions_that_exist(app, loaded, result, dims):
    figure = views.positional_encoding.show_positions(result, dims)
    kept = {dim for dim in dims or [] if 0 <= dim < loaded.model.d_model}
    assert sorted(int(trace.name.split()[1]) for trace in figure.data if trace.mode == "lines") == sorted(kept)


@FIGURES
@given(
    query=st.fixed_dictionaries(
        {},
        optional={"text": hostile_text(), "layer": st.text(max_size=6) | hostile_int().map(str), "head": any_json()},
    ),
    current_layer=st.sampled_from([1, 2]),
    current_head=st.sampled_from(["1", "2", "mean"]),
)
def test_restore_view_takes_only_valid_values_from_the_address(app, query, current_layer, current_head):
    query = {key: str(value) for key, value in query.items()}
    request = gr.Request(query_params=query)
    try:
        text, layer, head, *_ = restore.restore_view(
            REGISTRY, NORMAL_TEXT, current_layer, current_head, [0], request=request
        )
    except gr.Error as error:
        assert_clear(error.message, query)
        assert len(query.get("text", "")) > CAP
        return
    assert text == query.get("text", NORMAL_TEXT)
    assert layer == (int(query["layer"]) if query.get("layer") in {"1", "2"} else current_layer)
    assert head == (query["head"] if query.get("head") in {"1", "2", "mean"} else current_head)


@pytest.mark.parametrize("value", WRONG_TYPES, ids=lambda value: type(value).__name__)
def test_a_text_of_the_wrong_type_is_a_clear_input_error(app, value):
    with pytest.raises(analysis.InputError) as raised:
        analysis.check_text(value)
    assert_clear(str(raised.value), value)
    for handler in (api.predict, views.attention.attention):
        with pytest.raises(gr.Error) as raised:
            handler(value)
        assert_clear(raised.value.message, value)
