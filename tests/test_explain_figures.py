"""Figures: user text is escaped everywhere plotly reads HTML, and repeated tokens get unique labels."""

import json
import re

import plotly.graph_objects as go
import pytest
import torch
from tiny import tiny_model

from transformer.explain import (
    attention_rollout,
    compare_sentences,
    head_importance,
    head_scores,
    method_agreement,
    predict,
    word_order_experiment,
)
from transformer.explorer import analysis
from transformer.explorer.figures import attention_heatmap, shown_values, token_labels
from transformer.explorer.inputs import page_numbers
from transformer.explorer.views.attributions import agreement_figure, attribution_figure, attribution_html
from transformer.explorer.views.compare import difference_figure
from transformer.explorer.views.inside_head import head_figure
from transformer.explorer.views.knockout import head_importance_figure
from transformer.explorer.views.rollout import rollout_figure
from transformer.explorer.views.word_order import word_order_figure

MARKUP = "<b>x</b>"
ESCAPED = "&lt;b&gt;x&lt;/b&gt;"
TOKENS = ["the", MARKUP, "the", "1995", MARKUP, '"hi"']
SENTENCE = torch.tensor([[5, 9, 5, 7, 9, 12]])


def strings(value):
    """Every string anywhere in a figure's JSON-ready dict."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from strings(item)


@pytest.fixture(scope="module")
def figures():
    model = tiny_model()
    attentions = predict(model, SENTENCE).attentions
    agreement = method_agreement(model, SENTENCE, 1)
    comparison = page_numbers(compare_sentences(model, SENTENCE[:, 1:], SENTENCE, TOKENS[1:], TOKENS, layer=1, head=0))
    return {
        "attention": attention_heatmap(TOKENS, attentions[0][0, 0], f"head for {MARKUP}", scale="row", exclude=[0]),
        "rollout": rollout_figure(attention_rollout(attentions), TOKENS),
        "attribution": attribution_figure(agreement.scores, agreement.methods, TOKENS),
        "agreement": agreement_figure(agreement),
        "head": head_figure(page_numbers(head_scores(model, SENTENCE, 1, 1)), TOKENS, query=1),
        "importance": head_importance_figure(head_importance(model, SENTENCE, target=0), [MARKUP, "positive"]),
        "word order": word_order_figure(word_order_experiment(model, SENTENCE, SENTENCE.flip(1)), [MARKUP, "positive"]),
        "difference": difference_figure(comparison, TOKENS),
    }


@pytest.mark.parametrize(
    "name", ["attention", "rollout", "attribution", "agreement", "head", "importance", "word order", "difference"]
)
def test_no_figure_lets_markup_through(figures, name):
    figure = figures[name]
    assert isinstance(figure, go.Figure)
    texts = list(strings(figure.to_plotly_json()))
    assert not any(MARKUP in text for text in texts)
    if name != "agreement":  # the only figure without user text (tokens or class names)
        assert any(ESCAPED in text for text in texts)
    json.loads(figure.to_json())  # serialisable, NaN included


def test_heatmap_axes_are_categories_with_unique_labels(figures):
    figure = figures["attention"]
    heatmap = figure.data[0]
    assert list(heatmap.x) == list(heatmap.y) == token_labels(TOKENS)
    assert len(set(heatmap.x)) == len(TOKENS)  # "the" and the markup token both repeat
    assert figure.layout.xaxis.type == figure.layout.yaxis.type == "category"  # "1995" stays a token
    assert figure.layout.title.text == f"head for {ESCAPED}"


def test_head_figure_title_and_panels(figures):
    figure = figures["head"]
    assert f"query {token_labels(TOKENS)[1]}:" in figure.layout.title.text
    assert len(figure.data) == 6  # raw, scaled, softmax with and without, entropy with and without
    assert figure.data[0].y == pytest.approx(head_scores(tiny_model(), SENTENCE, 1, 1).raw[1].tolist())


def test_attribution_html_highlights_the_typed_text_escaped_and_scaled():
    text = "<script> Good &  "
    pieces = analysis.text_pieces(text, [(0, 8), (9, 13), (14, 15)])
    html_text = attribution_html(pieces, ["<script>", "good", "&"], torch.tensor([-0.5, 1.0, 0.0]))
    assert "<script>" not in html_text
    assert "&lt;script&gt;</span>" in html_text and ">Good</span>" in html_text and ">&amp;</span>" in html_text
    assert html_text.count("<span") == 3
    assert 'title="1 good: +1.0000"' in html_text and 'title="0 &lt;script&gt;: -0.5000"' in html_text
    assert html_text.endswith("</span>  </div>")  # the text between and after tokens is kept, unhighlighted
    opacities = [float(x) for x in re.findall(r"rgba\([^)]*, ([0-9.]+)\)", html_text)]
    assert opacities == [0.5, 1.0, 0.0]


def test_difference_labels_carry_positions_in_b(figures):
    heatmap = figures["difference"].data[0]
    assert list(heatmap.x) == token_labels(TOKENS)[1:]  # B is A with "the" in front
    assert heatmap.colorscale[0][1] != heatmap.colorscale[-1][1] and heatmap.zmin == -heatmap.zmax  # diverging


def test_difference_of_identical_sentences_is_zero_on_a_diverging_scale():
    model = tiny_model()
    comparison = page_numbers(compare_sentences(model, SENTENCE, SENTENCE, TOKENS, TOKENS, layer=0, head=1))
    heatmap = difference_figure(comparison, TOKENS).data[0]
    assert not heatmap.z.any() and heatmap.zmin == -heatmap.zmax


def test_row_scale_colours_each_row_on_its_own_range_and_hovers_the_weights():
    weights = torch.tensor([[0.9, 0.1], [0.5, 0.5]])
    heatmap = attention_heatmap(["[UNK]", "good"], weights, "t", scale="row", exclude=[0]).data[0]
    assert (heatmap.z == 255).all()  # each row ÷ its own weight on "good", one byte a colour
    torch.testing.assert_close(torch.tensor(shown_values(heatmap)), weights)
    assert "0.%{customdata:04d}" in heatmap.hovertemplate and (heatmap.zmin, heatmap.zmax) == (0, 255)


def test_global_scale_keeps_the_weights_and_caps_the_range_without_excluded_tokens():
    weights = torch.tensor([[0.9, 0.1], [0.7, 0.3]])
    heatmap = attention_heatmap(["[UNK]", "good"], weights, "t", exclude=[0]).data[0]
    torch.testing.assert_close(torch.tensor(shown_values(heatmap)), weights)  # hover shows z itself, in 10^-4
    assert heatmap.zmax == pytest.approx(3000)  # "good" as a key, queries other than [UNK]: 0.3; 0.9 is clipped
    assert attention_heatmap(["a", "b"], weights, "t").data[0].zmax == pytest.approx(9000)
