"""The explorer's figures: escaped and unique labels, the right matrices, one shared colour scale, the model's PE."""

import json

import numpy as np
import pytest
import torch

from transformer import sinusoidal_table
from transformer.explorer.drawing import attention_maps, figures
from transformer.explorer.views import positional_encoding

TOKENS = ["the", "film", "the", "<b>", "end"]


def random_attention(*shape: int, seed: int = 0) -> np.ndarray:
    """Row-stochastic weights of the given shape (..., N, N)."""
    weights = np.random.default_rng(seed).random(shape).astype(np.float32)
    return weights / weights.sum(axis=-1, keepdims=True)


def test_token_labels_are_unique_when_tokens_repeat():
    labels = figures.token_labels(TOKENS)
    assert len(set(labels)) == len(TOKENS)
    assert labels[0] != labels[2] and "the" in labels[0] and "the" in labels[2]


@pytest.mark.parametrize(
    "token",
    ["<b>", "</b>", "<script>alert(1)</script>", '<a href="https://example.com">', "<br>", "&lt;", "<i>x", "<sup>2"],
)
def test_token_labels_escape_markup_plotly_would_interpret(token):
    (label,) = figures.token_labels([token])
    assert "<" not in label and ">" not in label  # no tag survives for plotly to render
    assert "&quot;" not in label  # plotly does not decode &quot;, so quotes must stay as they are
    assert label.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&") == f"0 {token}"


def test_token_labels_show_control_characters_and_isolate_right_to_left_text():
    tab, hebrew, blank = figures.token_labels(["a\tb\x00", "שלום", " "])
    assert tab == "0 a␉b␀"
    assert hebrew == "1 \u2068שלום\u2069"  # the position number stays on the left of the word
    assert blank == "2 ␣"


def test_attention_heatmap_puts_queries_on_rows_and_keys_on_columns():
    weights = random_attention(5, 5)
    figure = attention_maps.attention_heatmap(TOKENS, weights, "Layer 1, head 2")
    (trace,) = figure.data
    np.testing.assert_allclose(figures.shown_values(trace), weights, atol=1e-4)
    assert list(trace.x) == list(trace.y) == figures.token_labels(TOKENS)
    assert figure.layout.yaxis.autorange == "reversed"  # the first query at the top, like a matrix
    assert figure.layout.xaxis.type == figure.layout.yaxis.type == "category"
    for field in ("query %{y}", "key %{x}", "weight 0.%{z:04d}"):  # weights sent in 10^-4, read as 0.dddd
        assert field in trace.hovertemplate
    assert trace.zmin == 0


def test_attention_heatmap_escapes_its_title_and_carries_no_typed_markup():
    figure = attention_maps.attention_heatmap(["<script>", "x"], random_attention(2, 2), "<i>title</i>")
    assert figure.layout.title.text == "&lt;i&gt;title&lt;/i&gt;"
    payload = figure.to_json()
    assert "<script>" not in payload and "<i>" not in payload


def test_attention_grid_has_every_head_on_one_colour_scale():
    attentions = random_attention(3, 4, 5, 5)
    figure = attention_maps.attention_grid(TOKENS, attentions)
    assert len(figure.data) == 12
    assert {trace.coloraxis for trace in figure.data} == {"coloraxis"}
    assert figure.layout.coloraxis.cmin == 0
    assert figure.layout.coloraxis.cmax == pytest.approx(1e4 * float(attentions.max()))  # in 10^-4
    np.testing.assert_allclose(
        figures.shown_values(figure.data[6]), attentions[1, 2], atol=1e-4
    )  # row-major: layer 2, head 3
    titles = [annotation.text for annotation in figure.layout.annotations]
    assert titles[6] == "layer 2 · head 3"
    assert figure.data[6].xaxis == "x7" and figure.data[6].yaxis == "y7"


def test_attention_grid_reuses_its_skeleton_without_leaking_traces():
    first = attention_maps.attention_grid(TOKENS, random_attention(2, 2, 5, 5))
    second = attention_maps.attention_grid(TOKENS[:3], random_attention(2, 2, 3, 3, seed=1))
    assert len(first.data) == len(second.data) == 4
    assert list(second.data[0].x) == figures.token_labels(TOKENS[:3])


def test_attention_grid_labels_only_the_outer_axes_and_none_for_long_inputs():
    short = attention_maps.attention_grid(TOKENS, random_attention(2, 2, 5, 5)).layout
    assert short.xaxis.showticklabels is False and short.xaxis3.showticklabels is not False  # bottom row only
    assert short.yaxis2.showticklabels is False and short.yaxis.showticklabels is not False  # first column only
    n = figures.MAX_TICK_LABELS + 1
    long = attention_maps.attention_grid([f"t{i}" for i in range(n)], random_attention(2, 2, n, n)).layout
    assert long.xaxis3.showticklabels is False and long.yaxis.showticklabels is False


@pytest.mark.parametrize("scale", ["global", "row"])
def test_attention_figures_send_each_matrix_once_in_two_bytes_a_weight(scale):
    n = 64
    grid = attention_maps.attention_grid([f"t{i}" for i in range(n)], random_attention(3, 4, n, n), scale=scale)
    payload = json.loads(grid.to_json())
    shown = payload["data"][0]["customdata" if scale == "row" else "z"]
    assert shown["dtype"] == "u2"  # base64 uint16 in 10^-4, not a list of decimal strings
    colour_bytes = 1 if scale == "row" else 0  # a row's colours: one more byte a cell
    matrices = 3 * 4 * n * n * (2 + colour_bytes) * 4 / 3  # base64's third
    assert len(json.dumps(payload)) < matrices + 32_000  # plus the labels and 12 subplots' axes


def test_weights_outside_zero_to_one_are_sent_as_they_are():
    differences = random_attention(4, 4) - random_attention(4, 4, seed=1)
    trace = attention_maps.attention_heatmap(["a", "b", "c", "d"], differences, "B minus A").data[0]
    assert trace.z.dtype == np.float32 and trace.zmin == -trace.zmax
    np.testing.assert_array_equal(figures.shown_values(trace), differences)


def test_positional_curves_draw_the_chosen_dimensions_and_mark_the_tokens():
    table = sinusoidal_table(50, 16).numpy()
    figure = positional_encoding.positional_curves(table, [0, 5], TOKENS)
    lines = [trace for trace in figure.data if trace.mode == "lines"]
    markers = [trace for trace in figure.data if trace.mode == "markers"]
    assert [trace.name for trace in lines] == ["dim 0 (sin)", "dim 5 (cos)"]
    np.testing.assert_allclose(lines[1].y, table[:, 5])
    assert len(markers) == 2 and list(markers[1].x) == list(range(5))
    np.testing.assert_allclose(markers[1].y, table[:5, 5])
    assert list(markers[0].text) == figures.token_labels(TOKENS)
    (band,) = figure.layout.shapes
    assert (band.x0, band.x1) == (-0.5, 4.5)


def test_positional_curves_without_a_sentence_have_no_markers():
    figure = positional_encoding.positional_curves(sinusoidal_table(50, 16).numpy(), [1])
    assert [trace.mode for trace in figure.data] == ["lines"]
    assert not figure.layout.shapes


def test_positional_heatmap_shows_the_whole_table():
    table = sinusoidal_table(40, 8).numpy()
    (trace,) = positional_encoding.positional_heatmap(table).data
    np.testing.assert_array_equal(trace.z, table)
    assert (trace.zmin, trace.zmax) == (-1, 1)


def test_positional_similarity_depends_only_on_the_distance():
    (trace,) = positional_encoding.positional_similarity(sinusoidal_table(40, 16).numpy()).data
    similarity = np.asarray(trace.z)
    assert similarity.shape == (40, 40)
    np.testing.assert_allclose(np.diag(similarity), 1.0, atol=1e-5)
    np.testing.assert_allclose(similarity, similarity.T, atol=1e-5)
    for distance in (1, 3, 7):
        band = np.diag(similarity, k=distance)
        np.testing.assert_allclose(band, band[0], atol=1e-4)  # Toeplitz: the same for every pair this far apart


def test_heatmaps_let_a_swipe_scroll_the_page_and_a_tap_show_the_hover():
    tokens = ["a", "b", "c"]
    drawn = [
        attention_maps.attention_heatmap(tokens, random_attention(3, 3), "t"),
        attention_maps.attention_grid(tokens, random_attention(2, 2, 3, 3)),
        figures.heatmap(torch.ones(2, 2), ["x", "y"], ["u", "v"], title="t", axis_titles=("a", "b"), signed=False),
    ]
    for figure in drawn:
        assert figure.layout.dragmode is False and figure.layout.hovermode == "closest"


def test_a_layer_s_subplot_titles_clear_the_layer_above():
    """The gap between a layer's cells and the next one's is at least the title's room, in pixels."""
    figure = attention_maps.attention_grid(["a", "b", "c"], random_attention(2, 2, 3, 3))
    plot_px = figure.layout.height - figure.layout.margin.t - figure.layout.margin.b
    upper, lower = figure.layout.yaxis.domain, figure.layout.yaxis3.domain  # layer 1 and layer 2, head 1
    assert (upper[0] - lower[1]) * plot_px >= attention_maps.GRID_TITLE_GAP_PX - 1


# --- maps wider than the screen's pixels, and every head of a real-size model ---


def test_pooled_keeps_each_block_s_largest_magnitude_with_its_sign():
    maps = np.array([[1, -5, 2], [0, 3, -1], [4, 0, 0]], dtype=np.float32)  # (3, 3) in blocks of 2: 2 × 2 cells
    np.testing.assert_array_equal(attention_maps.pooled(maps, 2), [[-5, 2], [4, 0]])
    weights = random_attention(2, 3, 9, 9)
    drawn = attention_maps.pooled(weights, 4)  # (2, 3, 3, 3)
    assert drawn.shape == (2, 3, 3, 3) and drawn.dtype == weights.dtype
    assert drawn[1, 2, 0, 1] == weights[1, 2, :4, 4:8].max() and drawn[0, 0, 2, 2] == weights[0, 0, 8, 8]
    assert attention_maps.pooled(weights, 1) is weights


@pytest.mark.parametrize("scale", ["global", "row"])
def test_a_map_wider_than_the_screen_is_drawn_in_blocks_with_its_peaks(scale):
    n = 512
    weights = random_attention(n, n)
    weights[300, 7] = 0.9  # one peak: still shown, and still the top of the colour range
    tokens = ["<b>x</b>"] + [f"t{i}" for i in range(1, n)]
    figure = attention_maps.attention_heatmap(tokens, weights, "one head", scale=scale)
    (trace,) = figure.data
    side = n // 2  # blocks of 2 × 2
    assert (
        np.asarray(trace.z).shape == (side, side)
        and len(trace.x) == len(trace.y) == side <= attention_maps.MAX_DRAWN_CELLS
    )
    assert figures.shown_values(trace)[150, 3] == pytest.approx(0.9, abs=1e-4)
    assert trace.x[0] == "0–1 &lt;b&gt;x&lt;/b&gt;…" and trace.y[150] == "300–301 t300…"  # escaped token, its span
    assert "2 × 2 block" in figure.layout.title.text
    # what Gradio sends (to_json): at most 3 bytes a drawn cell (uint16, uint8 colours) in base64, whose "/" plotly
    # escapes as 6 bytes; decimal lists would be 7 bytes a cell
    assert len(figure.to_json()) < side * side * 3 * 2 + 60_000
    small = attention_maps.attention_heatmap(TOKENS, random_attention(5, 5), "t", scale=scale).data[0]
    assert list(small.x) == figures.token_labels(TOKENS) and "block" not in figure.layout.title.text.split("(")[0]


@pytest.mark.parametrize("scale", ["global", "row"])
def test_every_head_of_a_real_size_model_is_one_light_heatmap(scale):
    layers, heads, n = 6, 12, 256
    attentions = random_attention(layers, heads, n, n)
    attentions[4, 9, 100, 200] = 0.95
    figure = attention_maps.attention_grid([f"<i>{i}" for i in range(n)], attentions, scale=scale)
    (trace,) = figure.data  # one trace on one pair of axes, where subplots would be 72 traces and 144 axes
    tile = attention_maps.block_size(n, attention_maps.GRID_PX // heads)  # 4: 64 cells a map a side
    side = n // tile
    assert np.asarray(trace.z).shape == (layers * side, heads * side)
    assert figures.shown_values(trace)[4 * side + 100 // tile, 9 * side + 200 // tile] == pytest.approx(0.95, abs=1e-4)
    assert trace.y[4 * side + 25] == "L5 · 100–103 &lt;i&gt;100…" and trace.x[9 * side] == "H10 · 0–3 &lt;i&gt;0…"
    assert list(figure.layout.xaxis.ticktext) == [f"head {h}" for h in range(1, heads + 1)]
    assert list(figure.layout.yaxis.ticktext) == [f"layer {layer}" for layer in range(1, layers + 1)]
    assert len(figure.layout.shapes) == layers - 1 + heads - 1  # a line between two maps
    assert len(figure.to_json()) < layers * heads * side * side * 3 * 2 + 100_000  # as for one map, above
    small = attention_maps.attention_grid(TOKENS, random_attention(2, 2, 5, 5), scale=scale)
    assert len(small.data) == 4 and small.data[0].x == tuple(figures.token_labels(TOKENS))  # small multiples


def test_one_colour_range_over_every_head_leaves_out_the_chosen_positions():
    attentions = random_attention(2, 3, 6, 6)
    attentions[1, 2, 0, 3] = attentions[0, 1, 4, 0] = 0.99  # row 0 and column 0: left out below
    top = attention_maps.attention_grid([f"t{i}" for i in range(6)], attentions, exclude=[0]).layout.coloraxis.cmax
    expected = attentions[:, :, 1:, 1:].max()
    assert top == pytest.approx(expected * figures._SHOWN_UNIT, abs=0.5)
    attentions[0, 0] = 0.0  # a head of zeros sets no range (it once set the top to 1)
    top = attention_maps.attention_grid([f"t{i}" for i in range(6)], attentions).layout.coloraxis.cmax
    assert top == pytest.approx(attentions.max() * figures._SHOWN_UNIT, abs=0.5) and attentions.max() < 1


def test_a_signed_map_on_row_colours_keeps_each_differences_sign():
    difference = np.array([[0.5, -0.25, 0.0], [-0.1, 0.2, -0.4], [0.0, 0.0, 0.3]], dtype=np.float32)
    trace = attention_maps.attention_heatmap(["a", "b", "c"], difference, "B − A", scale="row", signed=True).data[0]
    z = np.asarray(trace.z, dtype=float)
    assert (np.sign(z) == np.sign(difference)).all()  # a negative difference is not drawn as a strong positive
    assert trace.zmin == -trace.zmax and z[1, 2] == -trace.zmax  # each row's largest magnitude reaches the range
    assert list(trace.colorbar.tickvals) == [trace.zmin, 0, trace.zmax]
