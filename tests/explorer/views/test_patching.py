"""The Patching tab and its endpoints (``/patching``, ``/layer_readout``), and the attention weighting of the Attention
and All heads tabs (``/attention_norms``): in-process, on the tiny tutorial model and on a tiny BERT, DistilBERT and
RoBERTa put in the runner's place."""

import html

import gradio as gr
import numpy as np
import plotly.graph_objects as go
import pytest
import torch
from app_fixtures import MARKUP

from transformer.explorer import analysis, runner
from transformer.explorer.controls import weighting
from transformer.explorer.drawing.figures import shown_values
from transformer.explorer.drawing.patching import pair_labels, restored_figure
from transformer.explorer.page import api
from transformer.explorer.registry import Registry
from transformer.explorer.views import VIEWS, all_heads, attention, patching
from transformer.loading import DEFAULT_MODEL_DIR, load_model

REGISTRY = Registry(VIEWS)  # the page's views, as app.py registers them


# B differs from A in one word, which every tokenizer here reads as one token.
A, B = "the plot was boring", "a plot was boring"


@pytest.fixture(params=["tutorial", "bert", "distilbert", "roberta"])
def served(request, app, hub_model_dirs, monkeypatch):
    """The model the endpoints run: the app's tiny tutorial model, or a tiny Hub checkpoint in the runner's place."""
    if request.param != "tutorial":
        loaded = load_model(hub_model_dirs[request.param], device="cpu")
        monkeypatch.setattr(runner, "get_model", lambda: (loaded, None))
    return runner.loaded_model()


def test_the_new_endpoints_are_served_and_the_tab_follows_compare():
    served = api.endpoints(REGISTRY)
    assert {"patching", "layer_readout", "attention_norms"} <= set(served)
    ids = [view.id for view in VIEWS]
    assert ids.index("patching") == ids.index("compare") + 1


@pytest.mark.parametrize("direction", ["b_into_a", "a_into_b"])
def test_patching_answers_with_the_embedding_stage_exactly_on_the_edited_token(served, direction):
    answer = patching.patching(A, B, direction)
    model, n = served.model, len(served.tokenizer.encode(A).ids)
    restored, heads = np.array(answer["restored"]), np.array(answer["heads"])
    assert restored.shape == (model.num_layers + 1, n) and heads.shape == (model.num_layers, model.num_heads)
    edited = [i for i, (a, b) in enumerate(zip(answer["tokens"], answer["source_tokens"], strict=True)) if a != b]
    assert len(edited) == 1 and answer["direction"] == direction
    expected = np.zeros(n)
    expected[edited[0]] = 1.0
    np.testing.assert_allclose(restored[0], expected, atol=1e-4)
    assert answer["ld_a"] != answer["ld_b"] and answer["target"] in model.label_names
    first = answer["tokens"][edited[0]]
    assert first == (served.tokenizer.encode(A if direction == "b_into_a" else B).tokens[edited[0]])


def test_the_readout_ends_at_the_prediction(served):
    readout = patching.layer_readout(A)
    probabilities = np.array(readout["probabilities"])
    assert probabilities.shape == (served.model.num_layers + 1, len(served.model.label_names))
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, atol=1e-5)
    predicted = {c["label"]: c["confidence"] for c in api.predict(A)["confidences"]}
    np.testing.assert_allclose(probabilities[-1], [predicted[name] for name in readout["label_names"]], atol=1e-4)


def test_attention_norms_are_the_weights_times_each_keys_norm(served):
    answer = weighting.attention_norms(A)
    weights = runner.read_for_api(A).attentions  # (L, H, N, N), exact: /attention's are rounded
    norms, value_norms = np.array(answer["norms"]), np.array(answer["value_norms"])
    assert (
        norms.shape == weights.shape == (served.model.num_layers, served.model.num_heads, *(2 * [len(weights[0, 0])]))
    )
    np.testing.assert_allclose(norms, weights * value_norms[:, :, None, :], rtol=1e-4, atol=2e-6)
    assert (value_norms > 0).all() and value_norms.std(axis=-1).min() > 0


def escaped(token: str) -> str:
    return html.escape(repr(token), quote=False)


def test_different_lengths_are_said_in_one_line_with_an_edit(app):
    with pytest.raises(gr.Error) as error:
        patching.patching("the film was good .", "the film was not good .")
    said = error.value.message
    tokens_b = runner.loaded_model().tokenizer.encode("the film was not good .").tokens
    counts = f"A has 5 tokens and B has {len(tokens_b)}"
    added = " ".join(tokens_b[3:-2])  # "not", in as many pieces as the tokenizer makes of it
    assert (
        "\n" not in said
        and counts in said
        and f"B adds {escaped(added)} before {escaped(tokens_b[-2])} (A's position 3)" in said
    )
    summary, *figures, _ = patching.show_patching("the film was good .", "the film was not good .", "b_into_a", None)
    assert counts in summary and figures == [gr.update(value=None, visible=False)] * 3  # no empty boxes
    with pytest.raises(gr.Error, match="direction is one of b_into_a, a_into_b"):
        patching.patching(A, B, "<b>up</b>")


def test_two_lengths_are_told_apart_where_their_tokens_line_up():
    """Issue 53: "B has 'not' at position 3 where A has nothing", where A has "good"; every place they part."""
    said = patching.length_message("the film was good .".split(), "the film was not good at all .".split())
    assert "B adds 'not' before 'good' (A's position 3); B adds 'at all' before '.' (A's position 4)." in said
    said = patching.length_message("the film was really very good".split(), "a film was good".split())
    assert "B has 'a' where A has 'the' (A's position 0); B lacks A's 'really very' at A's position 3." in said
    assert "B adds '!' at the end" in patching.length_message(["good"], ["good", "!"])


def test_the_tab_draws_and_keeps_its_numbers(app, forward_calls):
    summary, *shown, kept = patching.show_patching(A, B, "b_into_a", None)
    assert all(plot["visible"] for plot in shown)
    stages, heads, readout = (plot["value"] for plot in shown)
    assert "logit(" in summary and stages.data[0].z is not None and len(readout.data) == 2
    assert heads.layout.title.text.startswith("Share restored by one head")
    calls = len(forward_calls)
    again = patching.show_patching(A, B, "b_into_a", kept)
    assert len(forward_calls) == calls + 1 and again[-1] is kept  # A is read again; the patching is kept
    _, _, _, _, other = patching.show_patching(A, B, "a_into_b", kept)
    assert other is not kept and other[1].tokens == kept[1].source_tokens


@pytest.mark.parametrize("direction", ["b_into_a", "a_into_b"])
def test_the_tab_draws_pairs_from_one_word_to_past_the_models_length(served, direction):
    # The sweep (explorer/test_sweep_views.py) draws each tab on the page's sentence at every length; this tab reads its
    # own two, so here they go from one word to max_len tokens and past it, on every model, as the sweep's do.
    model, words = served.model, A.split()  # B swaps A's first word for another of as many tokens
    for count in (1, model.max_len // 2, 2 * model.max_len):  # words: the last pair is read to max_len tokens
        text_a = " ".join(words[i % len(words)] for i in range(count))
        text_b = " ".join(["a", *text_a.split()[1:]])
        summary, *figures, kept = patching.show_patching(text_a, text_b, direction, None)
        assert "logit(" in summary, (count, summary)
        read = min(len(served.tokenizer.encode(text_a).ids), model.max_len)
        assert kept[1].restored.shape == (model.num_layers + 1, read) and len(kept[1].tokens) == read
        for figure in figures:
            go.Figure(figure["value"].to_dict())  # plotly's whole validation


def test_the_examples_are_pairs_of_one_length_that_the_bundled_model_reads_apart():
    bundled = load_model(DEFAULT_MODEL_DIR, device="cpu")
    for name, (a, b) in patching.EXAMPLES.items():
        result_a, result_b = (analysis.analyze(bundled.model, bundled.tokenizer, text) for text in (a, b))
        assert len(result_a.tokens) == len(result_b.tokens), name
        assert np.argmax(result_a.probabilities) != np.argmax(result_b.probabilities), name


def test_the_figures_escape_tokens():
    labels = pair_labels(["<b>", "x"], ["<i>", "x"])
    assert labels == ["0 &lt;b&gt; / &lt;i&gt;", "1 x"]
    figure = restored_figure(torch.tensor([[0.0, 1.0], [0.5, 0.2]]), [MARKUP[:5], "x"], ["y", "x"], "A")
    assert "<b>" not in " ".join(figure.data[0].x) and figure.layout.yaxis.title.text == "stage"


def test_switching_the_weighting_redraws_from_the_analysis_without_the_model(app, forward_calls):
    result = runner.run_model(A)
    calls = len(forward_calls)
    weights = attention.show_head(result, 1, "1")
    norms = attention.show_head(result, 1, "1", measure=weighting.NORMS)
    grid = all_heads.show_grid(result, measure=weighting.NORMS)
    assert len(forward_calls) == calls
    expected = result.attentions[0, 0] * result.value_norms[0, 0][None, :]
    np.testing.assert_allclose(shown_values(norms.data[0]), expected, atol=1e-4)  # sent to 4 decimals
    assert not np.allclose(shown_values(weights.data[0]), expected, atol=1e-3)
    assert "weight × ‖f(x)‖" in grid.data[0].hovertemplate and "weight × ‖f(x)‖" in norms.data[0].hovertemplate


def test_the_analysis_keeps_each_keys_norm(model, tokenizer):
    result = analysis.analyze(model, tokenizer, A)
    assert result.value_norms.shape == result.attentions.shape[:3]


@pytest.mark.served
@pytest.mark.browser
def test_a_deep_link_draws_the_patching_tab_and_the_weighting_in_chromium(browser, url):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.set_default_timeout(60_000)
        page.goto(f"{url}?text={A}&view=patching&patch_a={A}&patch_b={B}&patch_direction=a_into_b")
        page.wait_for_function(
            """() => {
                const plot = document.querySelector('#patching-stages');
                return plot?.querySelector('.heatmaplayer') && plot.textContent.includes('after layer 2')
                    && plot.textContent.includes('into B');
            }"""
        )
        assert "logit(" in page.locator("#patching-summary").text_content()
        assert page.locator("#patching-b textarea").input_value() == B
        page.goto(f"{url}?text={A}&view=attention&weighting=norms")  # restored from the address...
        norms_of = """word => {
            const map = document.querySelector('#attention-heatmap');
            return map?.textContent.includes('weight × ‖f(x)‖') && map.textContent.includes(word);
        }"""
        page.wait_for_function(norms_of, arg="plot")
        assert "weighting=norms" in page.evaluate("() => window.location.href")
        page.locator("#sentence textarea").fill("a wonderful film")  # ...and kept by the next analysis
        page.locator("#analyze").click()
        page.wait_for_function(norms_of, arg="wonderful")
    finally:
        context.close()


def test_b_is_read_without_its_attentions_which_would_sit_under_the_grid(served):
    result_a = analysis.analyze(served.model, served.tokenizer, A)
    asked = []  # output_attentions of every forward the view runs
    handle = served.model.register_forward_pre_hook(
        lambda module, args, kwargs: asked.append(kwargs.get("output_attentions", False)), with_kwargs=True
    )
    try:
        view = patching.patching_view(served.model, served.tokenizer, result_a, text_b=B)
    finally:
        handle.remove()
    assert asked and not any(asked)  # the grid's and the readouts' runs, none returning weights
    assert view.source_tokens == served.tokenizer.encode(B).tokens and view.tokens == result_a.tokens
