"""Figures: user text is escaped everywhere plotly reads HTML, and repeated tokens get unique labels."""

import itertools
import json
import re

import plotly.graph_objects as go
import pytest
import torch
from tiny import tiny_model

from transformer.explain import (
    HeadImportance,
    attention_rollout,
    compare_sentences,
    head_importance,
    head_scores,
    method_agreement,
    pooled_relevance,
    predict,
    word_order_experiment,
)
from transformer.explorer.drawing import embedding_maps, theme, token_spans
from transformer.explorer.drawing import figures as figures_module
from transformer.explorer.drawing.attention_maps import attention_heatmap
from transformer.explorer.drawing.attributions import MAX_OPACITY, attribution_figure, attribution_html
from transformer.explorer.drawing.figures import (
    CLASS_COLOURS,
    round_ticks,
    shown_values,
    token_labels,
)
from transformer.explorer.inputs import page_numbers
from transformer.explorer.views.attributions import agreement_figure
from transformer.explorer.views.compare import difference_figure
from transformer.explorer.views.inside_head import head_figure
from transformer.explorer.views.knockout import head_importance_figure
from transformer.explorer.views.positional_encoding import positional_curves
from transformer.explorer.views.rollout import rollout_figure
from transformer.explorer.views.word_order import word_order_figure
from transformer.positional_encoding import sinusoidal_table

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
        "rollout": rollout_figure(pooled_relevance(attention_rollout(attentions)), TOKENS),
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
    pieces = token_spans.text_pieces(text, [(0, 8), (9, 13), (14, 15)])
    html_text = attribution_html(pieces, ["<script>", "good", "&"], torch.tensor([-0.5, 1.0, 0.0]))
    assert "<script>" not in html_text
    assert "&lt;script&gt;</span>" in html_text and ">Good</span>" in html_text and ">&amp;</span>" in html_text
    assert html_text.count("<span") == 3
    assert 'title="1 good: +1.0000"' in html_text and 'title="0 &lt;script&gt;: -0.5000"' in html_text
    assert html_text.endswith("</span>  </div>")  # the text between and after tokens is kept, unhighlighted
    opacities = [float(x) for x in re.findall(r"rgba\([^)]*, ([0-9.]+)\)", html_text)]
    assert opacities == [0.5 * MAX_OPACITY, MAX_OPACITY, 0.0]


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


CELL_COLOUR = re.compile(r'<span style="color:(#[0-9a-f]{6});--dark:(#[0-9a-f]{6})">')


def rgb(code: str) -> tuple[float, float, float]:
    return tuple(int(code[i : i + 2], 16) / 255 for i in (1, 3, 5))


@pytest.mark.parametrize("name", ["rollout", "attribution", "agreement", "importance"])
def test_cell_numbers_contrast_with_their_own_cell_in_both_themes(figures, name):
    """Each number is black or white for the colour its cell gets from the figure's own scale and range, on the light
    page and on the dark one, whose cells are the light ones through ``theme``'s filter."""
    heatmap = figures[name].data[0]
    checked = 0
    for z_row, text_row in zip(heatmap.z, heatmap.text, strict=True):
        for value, text in zip(z_row, text_row, strict=True):
            if not text:
                continue
            light, dark = map(rgb, CELL_COLOUR.match(text).groups())
            cell = figure_cell_colour(value, heatmap)
            assert figures_module.contrast(light, cell) >= 4.5, (name, value, text)
            assert figures_module.contrast(dark, figures_module.dark_colour(cell)) >= 4.5, (name, value, text)
            checked += 1
    assert checked > 0 and heatmap.texttemplate == "%{text}"


def figure_cell_colour(value: float, heatmap) -> tuple[float, ...]:
    """The cell's colour computed here from the trace's own stops (plotly interpolates them linearly in RGB)."""
    share = min(max((value - heatmap.zmin) / (heatmap.zmax - heatmap.zmin), 0.0), 1.0)
    stops = [(position, rgb_of(colour)) for position, colour in heatmap.colorscale]
    for (a, colour_a), (b, colour_b) in itertools.pairwise(stops):
        if a <= share <= b:
            t = 0.0 if b == a else (share - a) / (b - a)
            return tuple(x + t * (y - x) for x, y in zip(colour_a, colour_b, strict=True))
    raise AssertionError(share)


def rgb_of(colour: str) -> tuple[float, ...]:
    return tuple(float(part) / 255 for part in re.findall(r"[0-9.]+", colour)[:3])


def test_contrast_is_the_wcag_ratio_and_some_cells_need_black_others_white():
    assert figures_module.contrast((0, 0, 0), (1, 1, 1)) == pytest.approx(21.0)
    assert figures_module.text_colour((1, 1, 1)) == figures_module.BLACK
    assert figures_module.text_colour((0.4, 0.0, 0.12)) == figures_module.WHITE  # RdBu's darkest red
    assert figures_module.dark_colour((1, 1, 1)) == pytest.approx((0, 0, 0))  # the white end turns black


def test_agreement_colours_span_rho_and_its_diagonal_is_dark_on_pale_in_the_dark_theme(figures):
    heatmap = figures["agreement"].data[0]
    assert (heatmap.zmin, heatmap.zmax) == (-1.0, 1.0)
    light, dark = map(rgb, CELL_COLOUR.match(heatmap.text[0][0]).groups())  # ρ = 1: the strongest red
    assert light == figures_module.WHITE and dark == figures_module.BLACK


def test_attribution_texts_and_colour_bar_say_what_they_show():
    pieces = token_spans.text_pieces("good", [(0, 4)])
    html_text = attribution_html(pieces, ["good"], torch.tensor([1.0]), "Integrated Gradients <64>")
    assert html_text.startswith('<p class="attribution-caption"><strong>Integrated Gradients &lt;64&gt;</strong></p>')
    figure = attribution_figure(torch.tensor([[1.0, -2.0]]), ["m"], ["a", "b"])
    assert "largest |score|" in figure.data[0].colorbar.title.text


def test_the_head_importance_title_names_the_drop_and_gives_the_probability_with_every_head_on():
    ablated = torch.tensor([[0.70, 0.91], [0.94, 0.90]])
    importance = HeadImportance(target=0, base_prob=0.941, ablated_prob=ablated, drop=0.941 - ablated)
    title = head_importance_figure(importance, ["positive", "negative"]).layout.title.text
    assert title.startswith("Drop in P(positive) when one head alone is off")
    assert "all heads on: 0.941" in title and "= 0.941" not in title


def test_the_positional_encoding_dots_take_their_curves_colour_and_have_a_legend_entry():
    """The dots at the sentence's tokens took the next colour in the cycle, not their curve's, and had no legend."""
    figure = positional_curves(sinusoidal_table(32, 8).numpy(), [0, 1, 5], ["a", "b", "c"])
    curves, dots = figure.data[0::2], figure.data[1::2]
    assert len({curve.line.color for curve in curves}) == 3
    for curve, dot in zip(curves, dots, strict=True):
        assert dot.marker.color == curve.line.color and dot.showlegend is not False
        assert dot.legendgroup == curve.legendgroup and "your tokens" in dot.name


def test_word_order_bars_are_coloured_by_class_not_in_the_red_and_blue_of_for_and_against():
    figure = word_order_figure(
        word_order_experiment(tiny_model(), SENTENCE, SENTENCE.flip(1)), ["negative", "positive"]
    )
    colours = [bar.marker.color for bar in figure.data]
    assert colours == list(CLASS_COLOURS[:2])
    signed_ends = {
        "#b2182b",
        "#2166ac",
        "#d62728",
        "#1f77b4",
        "#636efa",
        "#ef553b",
    }  # RdBu's, the highlights', plotly's
    assert not {colour.lower() for colour in colours} & signed_ends


def test_an_attention_colour_bar_reads_short_round_values():
    """Weights travel as whole numbers of 10^-4, and the bar's ticks read "0.6000"."""
    weights = torch.tensor([[0.62, 0.38], [0.1, 0.9]]).numpy()
    bar = attention_heatmap(["a", "b"], weights, "t").data[0].colorbar
    assert list(bar.ticktext) == ["0", "0.25", "0.5", "0.75"] and bar.tickformat is None  # the range tops at 0.9
    assert [v / 10**4 for v in bar.tickvals] == pytest.approx([0, 0.25, 0.5, 0.75])
    assert round_ticks(1.0) == [0, 0.25, 0.5, 0.75, 1.0] and round_ticks(0.037) == [0, 0.01, 0.02, 0.03]


def test_the_attention_plot_is_not_called_one_head_since_it_shows_the_mean_too(app):
    (plot,) = [block for block in app.demo.blocks.values() if getattr(block, "elem_id", None) == "attention-heatmap"]
    assert "one head" not in plot.label.lower().replace("one head or", "") and "mean" in plot.label


def test_in_the_dark_theme_only_a_heatmaps_colour_bar_is_inverted_with_its_cells():
    """A scatter's colour bar (Token embeddings) was inverted while its points were not: pink-green against purple."""
    rules = [line for line in theme.PAGE_CSS.splitlines() if ".cbfill" in line]
    assert rules and all(":has(.heatmaplayer image) .colorbar .cbfill" in rule for rule in rules)


def test_a_long_sentences_attribution_heatmap_prints_no_numbers_and_a_short_ones_does():
    scores = torch.linspace(-1, 1, 2 * 30).view(2, 30)
    tokens = [f"t{i}" for i in range(30)]
    assert attribution_figure(scores, ["a", "b"], tokens).data[0].texttemplate is None
    assert attribution_figure(scores[:, :8], ["a", "b"], tokens[:8]).data[0].texttemplate


def test_the_highlighted_text_joins_word_pieces_and_greys_the_unread_tail():
    text = "it mattered a lot more than that"
    pieces = [("it", 0), (" ", None), ("matter", 1), ("ed", 2), (" a lot more than that", None)]
    shown = attribution_html(pieces, ["it", "matter", "##ed"], torch.tensor([0.5, -0.2, 0.3]))
    assert re.search(r">matter</span><span[^>]*>ed</span>", shown)  # nothing between the two pieces
    assert "padding" not in shown and "border-radius" not in shown  # and no gap drawn around them
    tail = re.search(r'<span class="attribution-unread"[^>]*>(.*?)</span>', shown)
    assert tail and "[not read]" in tail.group(1) and "a lot more than that" in tail.group(1)
    assert text.startswith("it mattered")
    between = attribution_html([("a", 0), (" ", None), ("b", 1)], ["a", "b"], torch.tensor([1.0, 1.0]))
    assert "not read" not in between  # the spaces between tokens are read text


def test_token_embeddings_label_only_points_far_enough_apart_and_hover_names_every_one():
    points = torch.tensor([[0.0, 0.0], [0.01, 0.01], [0.02, 0.0], [1.0, 1.0], [1.0, 0.98], [0.5, 0.5]] * 2)
    labels = [f"t{i}" for i in range(len(points))]
    shown = embedding_maps.spaced_labels(points, labels)
    assert shown[0] == "t0" and shown[3] == "t3" and shown[5] == "t5" and shown[1] == shown[2] == shown[4] == ""
    kept = [i for i, label in enumerate(shown) if label]
    extent = points.max(dim=0).values - points.min(dim=0).values
    for i, j in itertools.combinations(kept, 2):  # no two printed labels overlap
        gap = ((points[i] - points[j]) / extent).abs()
        assert gap[0] >= embedding_maps.LABEL_GAP[0] or gap[1] >= embedding_maps.LABEL_GAP[1]
