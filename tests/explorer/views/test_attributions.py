"""The Attributions tab (transformer.explorer.views.attributions): ``/attributions`` against the explanation functions;
the agreement's attention and rollout read as the model pools ([CLS] or the mean); faithfulness in the tab and at
``/faithfulness``: the answer's numbers, the sentence, the figure."""

import gradio as gr
import numpy as np
import pytest
import torch
from app_fixtures import SENTENCE, close, ids_of
from tiny import tiny_model

from transformer import explain
from transformer.explain.agreement import METHODS
from transformer.explain.faithfulness import PERCENTS, RANDOM_SEEDS, faithfulness_by_mode, most_faithful
from transformer.explorer import analysis, views
from transformer.explorer.analysis import analyze
from transformer.explorer.drawing import erasure as erasure_figures
from transformer.explorer.inputs import PREDICTED
from transformer.explorer.page import restore
from transformer.explorer.registry import Registry
from transformer.explorer.views import VIEWS
from transformer.explorer.views.attributions import attribution_view

REGISTRY = Registry(VIEWS)  # the page's views, as app.py registers them


attributions = views.attributions


def expected(loaded, result, target: str, removal: str):
    """The maths called directly on the four methods' scores: signed gradients, attention and rollout as read."""
    view = attributions.attribution_view(loaded.model, loaded.tokenizer, result, target)
    scores = torch.stack(
        [*view.agreement.scores[:2], view.gradient_x_input, view.integrated_gradients.attributions]
    )  # (K, N)
    ids = analysis.sentence_ids(loaded.model, result)
    return faithfulness_by_mode(loaded.model, ids, view.target, scores, METHODS, (removal,))[removal]


@pytest.mark.parametrize("removal", ["pad", "delete"])
def test_the_endpoint_answers_each_method_s_curves_as_the_maths_does(app, loaded, result, removal):
    answer = attributions.faithfulness(SENTENCE, target="positive", mode=removal)
    found = expected(loaded, result, "positive", removal)
    assert (answer["mode"], answer["target"], answer["target_label"]) == (removal, 1, "positive")
    assert answer["percents"] == list(PERCENTS) and answer["seeds"] == list(RANDOM_SEEDS)
    assert answer["counts"] == [-(-p * len(result.tokens) // 100) for p in PERCENTS]
    assert list(answer["methods"]) == list(METHODS)
    for k, name in enumerate(METHODS):
        curves = answer["methods"][name]
        assert curves["comprehensiveness"] == pytest.approx(found.comprehensiveness[k].tolist(), abs=2e-6)
        assert curves["sufficiency"] == pytest.approx(found.sufficiency[k].tolist(), abs=2e-6)
        assert curves["comprehensiveness_aopc"] == pytest.approx(sum(curves["comprehensiveness"]) / 5, abs=1e-5)
    floor = answer["random"]
    assert floor["comprehensiveness"] == pytest.approx(found.random_comprehensiveness.tolist(), abs=2e-6)
    assert floor["sufficiency_aopc"] == pytest.approx(found.random_sufficiency_aopc, abs=2e-6)
    best = answer["most_faithful"]
    aopcs = {name: curves["comprehensiveness_aopc"] for name, curves in answer["methods"].items()}
    assert best["method"] == most_faithful(found).method and aopcs[best["method"]] == max(aopcs.values())
    assert best["margin"] == pytest.approx(max(aopcs.values()) - aopcs[best["runner_up"]], abs=1e-5)


def test_the_endpoint_refuses_a_removal_it_does_not_offer(app):
    with pytest.raises(gr.Error, match="The removal is one of pad, delete; got"):
        attributions.faithfulness(SENTENCE, mode="mask")


def test_the_tab_names_the_most_faithful_method_and_its_margin_and_says_how_tokens_were_removed(
    app, loaded, result, forward_calls
):
    drawn = attributions.show_attributions(result, "predicted", 32, "pad", None, "delete")
    sentence, figure, kept = drawn[-3:]
    found = expected(loaded, result, "predicted", "delete")
    verdict = most_faithful(found)
    assert f"Most faithful for this input: <b>{verdict.method}</b>" in sentence
    assert f"{verdict.margin:.4f} ahead of <b>{verdict.runner_up}</b>" in sentence
    assert "removed tokens deleted" in sentence and "removed tokens deleted" in figure.layout.title.text
    assert len(figure.data) == 2 * (len(METHODS) + 1)  # each method and the floor, in both panels
    curve = next(trace for trace in figure.data if trace.name == verdict.method)
    assert list(curve.y) == pytest.approx(found.comprehensiveness[METHODS.index(verdict.method)].tolist())
    forward_calls.clear()
    again = attributions.show_attributions(result, "predicted", 32, "pad", kept, "pad")  # another mode
    assert len(forward_calls) == 1 and set(again[-1][1].faithfulness) == {"pad", "delete"}  # its pass, no IG
    assert again[-1][1].attributions is kept[1].attributions
    assert "replaced by [PAD]" in again[-3] and "replaced by [PAD]" in again[-2].layout.title.text
    forward_calls.clear()
    back = attributions.show_attributions(result, "predicted", 32, "pad", again[-1], "delete")  # drawn before
    assert not forward_calls and back[-1] is again[-1] and back[-3] == sentence


def test_the_tab_s_other_outputs_are_drawn_as_before(app, loaded, result):
    drawn = attributions.show_attributions(result, "negative", 8, "zero", None)
    view = attributions.attribution_view(loaded.model, loaded.tokenizer, result, "negative", 8, "zero")
    assert len(drawn) == 8 and drawn[:3] == attributions.attribution_panel(view)[:3]
    assert drawn[3].layout.title.text == attributions.attribution_panel(view)[3].layout.title.text
    empty = attributions.show_attributions(None, None, None, None, None)
    assert empty == ("", "", "", None, None, "", None, None)
    with pytest.raises(gr.Error, match="The removal is one of pad, delete"):
        attributions.show_attributions(result, "negative", 8, "zero", drawn[-1], "remove")


def test_the_sentence_and_the_figure_escape_the_class_name_and_word_ties_and_chance(app, loaded, result):
    tab = attributions.attribution_tab(loaded.model, loaded.tokenizer, result, steps=4)
    found = tab.faithfulness["pad"]
    verdict = most_faithful(found)
    html = erasure_figures.faithfulness_html(found, verdict, "<b>x</b>")
    assert "&lt;b&gt;x&lt;/b&gt;" in html and "<b>x</b>" not in html
    figure = erasure_figures.faithfulness_figure(found, "<b>x</b>")
    assert "&lt;b&gt;x&lt;/b&gt;" in figure.layout.title.text and "<b>x" not in figure.layout.yaxis.title.text
    tied = type(verdict)(verdict.method, verdict.aopc, "rollout", 0.0, -0.01)
    html = erasure_figures.faithfulness_html(found, tied, "positive")
    assert "tied with <b>rollout</b>" in html and "no better than the random floor" in html


def test_the_address_keeps_the_removal_mode(app, result):
    query = {"view": "attributions", "removal": "delete"}
    assert restore.restore_controls(REGISTRY, result, gr.Request(query_params=query)) == query
    assert restore.restore_controls(REGISTRY, result, gr.Request(query_params={"removal": "mask"})) == {}


def test_each_method_keeps_its_colour_in_both_panels(app, loaded, result):
    found = attributions.attribution_tab(loaded.model, loaded.tokenizer, result, steps=4).faithfulness["pad"]
    figure = erasure_figures.faithfulness_figure(found, "positive")
    colours = {}
    for trace in figure.data:
        colours.setdefault(trace.name, set()).add(trace.line.color)
    assert set(colours) == {*found.methods, "random (floor)"}
    assert all(len(seen) == 1 for seen in colours.values())  # the same in both panels: the one legend holds
    assert len({next(iter(seen)) for seen in colours.values()}) == len(colours)  # and no two alike


def test_the_legend_sits_at_the_figure_s_foot_below_the_axis_titles(app, loaded, result):
    """Placed in the container, plotly reserves the legend's rows under the axis titles' margin; at a paper y below
    the axes its rows grew up into them on a phone (``test_phone_browser`` draws it at 390 px)."""
    found = attributions.attribution_tab(loaded.model, loaded.tokenizer, result, steps=4).faithfulness["pad"]
    layout = erasure_figures.faithfulness_figure(found, "positive").layout
    legend = layout.legend
    assert (legend.orientation, legend.yref, legend.y, legend.yanchor) == ("h", "container", 0, "bottom")
    assert layout.xaxis.title.text and layout.xaxis2.title.text  # the titles it stays clear of


def test_attributions_endpoint_is_complete_and_matches_the_functions(app, loaded, result):
    answer = views.attributions.attributions(SENTENCE, target="positive", steps=32, baseline="pad")
    ig = answer["integrated_gradients"]
    assert answer["target"] == 1 and answer["target_label"] == "positive" and ig["steps"] == 32
    difference = ig["target_logit"] - ig["baseline_logit"]
    tolerance = explain.COMPLETENESS_RTOL * abs(difference) + explain.COMPLETENESS_ATOL
    assert abs(sum(ig["attributions"]) - difference) <= tolerance and ig["complete"]
    expected = explain.integrated_gradients(loaded.model, ids_of(result), 1, "pad", 32)
    close(ig["attributions"], expected.attributions)
    close(answer["gradient_x_input"], explain.gradient_x_input(loaded.model, ids_of(result), 1))
    correlation = np.array(answer["agreement"]["correlation"], dtype=float)
    assert answer["agreement"]["methods"] == list(explain.METHODS)
    close(np.diag(correlation), np.ones(4))


def test_attributions_for_the_predicted_class_follow_the_prediction(app, result):
    answer = views.attributions.attributions(SENTENCE)
    assert answer["target"] == int(np.argmax(result.probabilities))
    assert answer["integrated_gradients"]["baseline"] == "pad"


def test_the_ig_slider_stops_where_the_api_does(app):
    slider = next(block for block in app.demo.blocks.values() if block.elem_id == "ig-steps")
    assert slider.maximum == views.attributions.MAX_IG_STEPS == 128
    assert f"(1-{views.attributions.MAX_IG_STEPS})" in views.attributions.attributions.__doc__


@pytest.mark.parametrize("pooling", ["first", "mean"])
def test_the_agreement_reads_attention_and_rollout_as_the_model_pools(tiny_tokenizer, pooling):
    model = tiny_model(vocab_size=tiny_tokenizer.get_vocab_size(), max_len=64)
    model.pooling = pooling  # a Hub classifier's "first"; the maths below reads only this attribute
    result = analyze(model, tiny_tokenizer, "a wonderful film , the acting was dull")
    view = attribution_view(model, tiny_tokenizer, result, PREDICTED, steps=4)
    last = result.attentions[-1].mean(axis=0)  # (N, N): the last layer's head-averaged weights
    rollout = np.eye(len(result.tokens))
    for layer in result.attentions:  # Abnar & Zuidema: 0.5 A + 0.5 I, rows renormalised, multiplied up
        mixed = 0.5 * layer.mean(axis=0) + 0.5 * np.eye(len(result.tokens))
        rollout = (mixed / mixed.sum(axis=-1, keepdims=True)) @ rollout
    read = (lambda m: m[0]) if pooling == "first" else (lambda m: m.mean(axis=0))
    assert np.allclose(view.agreement.scores[0].numpy(), read(last), atol=1e-6)
    assert np.allclose(view.agreement.scores[1].numpy(), read(rollout), atol=1e-5)
    assert not np.allclose(last[0], last.mean(axis=0), atol=1e-3)  # the two readings differ on this sentence
