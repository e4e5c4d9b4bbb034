"""Attention maps: one head's map (``attention_heatmap``) and every head's (``attention_grid``), as subplots up to
``MAX_SUBPLOT_HEADS`` heads or one mosaic beyond; a map over ``MAX_DRAWN_CELLS`` tokens a side is drawn in blocks,
each its largest weight (``pooled``). Built on ``figures``' template, labels and colour encoding.

Shape letters: L = layers, H = heads, N = tokens.
"""

from __future__ import annotations

import functools
import html
import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..inputs import page_number
from .figures import (
    ATTENTION_COLORS,
    AXIS_TITLE_PX,
    GRID_TICK_SIZE,
    MAX_TICK_LABELS,
    SIGNED_COLORS,
    SLANT_HEIGHT,
    TEMPLATE,
    TOUCH,
    colour_bar_layout,
    colour_range,
    label_width_px,
    token_display,
    token_labels,
)

MAX_DRAWN_CELLS = 256  # a map's side as drawn: a heatmap's plot is under ~800 px, so more cells would be < 3 px
GRID_PX = 1024  # about the All heads figure's width: its H maps share it, so a map gets GRID_PX / H cells a side
MIN_GRID_CELLS = 16  # ... but never fewer than this
# A heatmap's height: 16 px a token over 220 px of title and axes, from 360 px up to 560 px. A long text's map stays
# a panel (issue 54: the page at most 400 px taller for 10,000 characters); past about 20 tokens its rows narrow.
HEATMAP_PX = (360, 560)
MAX_SUBPLOT_HEADS = 16  # up to this many heads, one subplot each (titled, rearranged on a phone); more: one mosaic


def block_size(n: int, most: int) -> int:
    """The side of the square blocks that draw an N × N map in at most ``most`` cells a side: 1 when it fits."""
    return max(1, math.ceil(n / max(most, 1)))


def pooled(maps: np.ndarray, block: int) -> np.ndarray:
    """Each ``block`` × ``block`` square of the last two axes as its value of largest magnitude (sign kept): a map
    drawn in fewer cells than it has keeps its peaks, where a mean would wash them out.

    Shape:
        maps: (..., N, N). Returns (..., ceil(N / block), ceil(N / block)), of ``maps``' dtype.
    """
    if block == 1:
        return maps
    *lead, n, _ = maps.shape
    m = math.ceil(n / block)
    padded = np.zeros((*lead, m * block, m * block), dtype=maps.dtype)  # 0 never outweighs a value of the block
    padded[..., :n, :n] = maps
    blocks = padded.reshape(*lead, m, block, m, block).swapaxes(-3, -2).reshape(*lead, m, m, block * block)
    if np.issubdtype(maps.dtype, np.unsignedinteger) or not (maps < 0).any():
        return blocks.max(axis=-1)
    largest = np.abs(blocks).argmax(axis=-1)[..., None]  # (..., M, M, 1)
    return np.take_along_axis(blocks, largest, axis=-1)[..., 0]


def block_labels(tokens: Sequence[str], block: int, positions: Sequence[int] | None = None) -> list[str]:
    """Axis labels for a map drawn in blocks: ``token_labels`` when ``block`` is 1, else "16–19 the…" per block
    (its first and last position, its first token, escaped)."""
    if block == 1:
        return token_labels(tokens, positions)
    positions = range(len(tokens)) if positions is None else positions
    starts = range(0, len(tokens), block)
    return [f"{positions[s]}–{positions[min(s + block, len(tokens)) - 1]} {token_display(tokens[s])}…" for s in starts]


def block_note(block: int) -> str:
    """What a title adds when its map is drawn in blocks."""
    return "" if block == 1 else f" (each cell: the largest of a {block} × {block} block)"


def _pooled_colours(colours: np.ndarray, extra: dict, block: int) -> tuple[np.ndarray, dict]:
    """``colour_range``'s colours and hover values (``customdata``), each pooled in blocks (``pooled``)."""
    if "customdata" in extra:
        extra = extra | {"customdata": pooled(extra["customdata"], block)}
    return pooled(colours, block), extra


def attention_heatmap(
    tokens: Sequence[str],
    weights: np.ndarray,
    title: str,
    *,
    scale: str = "global",
    exclude: Sequence[int] = (),
    positions: Sequence[int] | None = None,
    value_name: str = "weight",
    signed: bool | None = None,
) -> go.Figure:
    """One attention map (a head, a head average, a rollout, a difference of two) as a heatmap.

    Args:
        tokens: the N tokens, on both axes.
        weights: (N, N), queries on rows, keys on columns.
        title: the figure title (escaped here).
        scale: "global", one colour range for the map, or "row", each query row on its own range
            (see ``explain_colour``); hover always shows the value itself.
        exclude: positions, as rows and columns, that set no colour range (special tokens that take
            most of the weight); their cells are drawn, clipped to the range.
        positions: the positions printed in the labels (see ``token_labels``).
        value_name: what a cell holds, in the hover and on the colour bar.
        signed: a diverging scale centred on 0, for differences; by default when a value is negative.
    """
    weights = np.asarray(weights, dtype=np.float32)
    block = block_size(len(tokens), MAX_DRAWN_CELLS)
    labels = block_labels(tokens, block, positions)
    signed = bool((weights < 0).any()) if signed is None else signed
    colours, top, extra = colour_range(weights, scale, exclude, signed)  # on every cell: then pooled
    colours, extra = _pooled_colours(colours, extra, block)
    value = extra.pop("value")
    heatmap = {
        "type": "heatmap",
        "z": colours,
        "x": labels,
        "y": labels,
        "zmin": -top if signed else 0.0,
        "zmax": top,
        "colorscale": SIGNED_COLORS if signed else ATTENTION_COLORS,
        "colorbar": colour_bar_layout({**extra, "value": value}, value_name, top, signed),
        "hovertemplate": f"query %{{y}}<br>key %{{x}}<br>{value_name} {value}<extra></extra>",
        **extra,
    }
    label_px = label_width_px(labels)
    layout = {
        "template": TEMPLATE,
        **TOUCH,
        "title": {"text": html.escape(title + block_note(block), quote=False)},
        "height": int(np.clip(220 + 16 * len(labels), *HEATMAP_PX)),
        "margin": {"l": label_px + AXIS_TITLE_PX, "r": 10, "t": 50, "b": int(SLANT_HEIGHT * label_px) + AXIS_TITLE_PX},
        "xaxis": {"title": {"text": "key (attended to)"}, "type": "category", "tickangle": -45, "automargin": False},
        "yaxis": {
            "title": {"text": "query (attending)"},
            "type": "category",
            "autorange": "reversed",
            "automargin": False,
        },
    }
    return go.Figure(data=[heatmap], layout=layout)


GRID_TITLE = "All heads (rows: layers, columns: heads; one colour scale)"
GRID_TITLE_GAP_PX = 36  # between a layer's cells and the next layer's subplot titles (which sit above their cells)


def _grid_height(num_layers: int, n: int) -> int:
    """The small multiples' height in pixels: rows of about 140 px plus 6 px a token (up to ``MAX_TICK_LABELS``)."""
    return int(np.clip(num_layers * (140 + 6 * min(n, MAX_TICK_LABELS)), 320, 1400))


def layer_domains(num_layers: int, gap: float) -> list[tuple[float, float]]:
    """Each layer's vertical share of the plot, top layer first, ``gap`` (a share of the plot) between two."""
    gap = min(gap, 0.5 / num_layers)
    size = (1 - gap * (num_layers - 1)) / num_layers
    tops = [1 - layer * (size + gap) for layer in range(num_layers)]
    return [(max(top - size, 0.0), min(top, 1.0)) for top in tops]  # max, min: no float error outside [0, 1]


def _space_layers(figure: go.Figure, num_layers: int, num_heads: int, plot_px: float) -> None:
    """Leave ``GRID_TITLE_GAP_PX`` between one layer's cells and the next layer's subplot titles, which sit above."""
    domains = layer_domains(num_layers, GRID_TITLE_GAP_PX / max(plot_px, 1.0))
    for k, title in enumerate(figure.layout.annotations[: num_layers * num_heads]):
        layer = k // num_heads
        figure.layout[f"yaxis{k + 1 if k else ''}"].domain = domains[layer]
        title.y = domains[layer][1]


@functools.lru_cache(maxsize=8)
def _grid_skeleton(num_layers: int, num_heads: int, show_ticks: bool) -> go.Figure:
    """The empty layer × head subplot grid; building it is the slow part, so it is made once per shape."""
    figure = make_subplots(
        rows=num_layers,
        cols=num_heads,
        shared_xaxes=True,
        shared_yaxes=True,
        horizontal_spacing=0.02,
        vertical_spacing=0.05,  # set per figure from its height (``_space_layers``)
        subplot_titles=[
            f"layer {page_number(layer)} · head {page_number(head)}"
            for layer in range(num_layers)
            for head in range(num_heads)
        ],
    )
    # make_subplots already keeps tick labels to the bottom row and the first column only; margins are set per
    # figure from its labels (``attention_grid``, ``label_width_px``), without automargin
    figure.update_xaxes(type="category", tickangle=-90, tickfont={"size": GRID_TICK_SIZE}, automargin=False)
    figure.update_yaxes(type="category", autorange="reversed", tickfont={"size": GRID_TICK_SIZE}, automargin=False)
    if not show_ticks:
        figure.update_xaxes(showticklabels=False)
        figure.update_yaxes(showticklabels=False)
    figure.update_layout(
        template=TEMPLATE,
        title={"text": GRID_TITLE},
        coloraxis={"colorscale": ATTENTION_COLORS, "cmin": 0.0, "colorbar": {"title": {"text": "weight"}}},
        margin={"l": 10, "r": 10, "t": 70, "b": 10},
        **TOUCH,
    )
    return figure


def attention_grid(
    tokens: Sequence[str],
    attentions: np.ndarray,
    *,
    scale: str = "global",
    exclude: Sequence[int] = (),
    title: str | None = None,
    value_name: str = "weight",
) -> go.Figure:
    """Every layer × head on one colour scale (0 to the largest weight anywhere): small multiples, one subplot a
    head, up to ``MAX_SUBPLOT_HEADS`` heads; beyond, one heatmap of every map side by side (``_mosaic``), which a
    browser draws as one image with one pair of axes. Each map is drawn in at most ``GRID_PX`` / H cells a side,
    in blocks (``pooled``) beyond.

    Args:
        tokens: the N tokens.
        attentions: (L, H, N, N), queries on rows, keys on columns.
        scale, exclude: as in ``attention_heatmap``; "global" is one range across every head.
        title: replaces the default title (escaped here).
        value_name: what a cell holds, in the hover and on the colour bar.
    """
    num_layers, num_heads, n, _ = attentions.shape
    attentions = np.asarray(attentions, dtype=np.float32)
    colours, top, extra = colour_range(attentions, scale, exclude)  # (L, H, N, N)
    block = block_size(n, max(MIN_GRID_CELLS, GRID_PX // num_heads))
    colours, extra = _pooled_colours(colours, extra, block)  # (L, H, M, M)
    labels = block_labels(tokens, block)
    colour_bar = colour_bar_layout(extra, value_name, top)
    hover = f"query %{{y}}<br>key %{{x}}<br>{value_name} {extra.pop('value')}<extra></extra>"
    if num_layers * num_heads > MAX_SUBPLOT_HEADS:
        figure = _mosaic(labels, colours, extra.get("customdata"), hover)
        figure.update_traces(zmax=top, colorbar=colour_bar)
    else:
        figure = _small_multiples(labels, colours, extra.get("customdata"), hover)
        figure.update_layout(coloraxis_cmax=top, coloraxis_colorbar=colour_bar)
    figure.update_layout(title_text=html.escape((title or GRID_TITLE) + block_note(block), quote=False))
    return figure


def _small_multiples(labels: list[str], colours: np.ndarray, hover_values: np.ndarray | None, hover: str) -> go.Figure:
    """One subplot a head (``_grid_skeleton``) sharing one colour axis.

    Shape:
        colours, hover_values: (L, H, M, M), M = len(labels); ``hover_values`` when they are not the colours.
    """
    num_layers, num_heads, m, _ = colours.shape
    show_ticks = m <= MAX_TICK_LABELS
    height = _grid_height(num_layers, m)
    figure = go.Figure(_grid_skeleton(num_layers, num_heads, show_ticks))  # a copy: the cached grid stays empty
    cells = [(layer, head) for layer in range(num_layers) for head in range(num_heads)]
    figure.add_traces(
        [
            {
                "type": "heatmap",
                "z": colours[layer, head],
                "x": labels,
                "y": labels,
                "coloraxis": "coloraxis",
                "hovertemplate": f"layer {page_number(layer)} · head {page_number(head)}<br>{hover}",
                **({"customdata": hover_values[layer, head]} if hover_values is not None else {}),
            }
            for layer, head in cells
        ],
        rows=[layer + 1 for layer, _ in cells],
        cols=[head + 1 for _, head in cells],
    )
    label_px = label_width_px(labels, GRID_TICK_SIZE) if show_ticks else 0
    figure.update_layout(height=height, margin={"l": 10 + label_px, "b": 10 + label_px})
    _space_layers(figure, num_layers, num_heads, height - figure.layout.margin.t - figure.layout.margin.b)
    return figure


def _mosaic(labels: list[str], colours: np.ndarray, hover_values: np.ndarray | None, hover: str) -> go.Figure:
    """Every head's map in one heatmap, layers down and heads across, a line between two maps: one trace and one
    pair of axes, where a subplot a head is 2 × L × H axes for the browser to lay out. A cell's hover names its
    layer and query ("L2 · 5 the") and its head and key ("H3 · 7 film").

    Shape:
        colours, hover_values: (L, H, M, M), M = len(labels); ``hover_values`` when they are not the colours.
    """
    num_layers, num_heads, m, _ = colours.shape

    def side_by_side(maps: np.ndarray) -> np.ndarray:
        return maps.transpose(0, 2, 1, 3).reshape(num_layers * m, num_heads * m)  # (L·M, H·M)

    x = [f"H{page_number(head)} · {label}" for head in range(num_heads) for label in labels]
    y = [f"L{page_number(layer)} · {label}" for layer in range(num_layers) for label in labels]
    trace = {
        "type": "heatmap",
        "z": side_by_side(colours),
        "x": x,
        "y": y,
        "zmin": 0.0,
        "colorscale": ATTENTION_COLORS,
        "hovertemplate": hover,
        **({"customdata": side_by_side(hover_values)} if hover_values is not None else {}),
    }
    middles = [k * m + m // 2 for k in range(max(num_layers, num_heads))]
    line = {"type": "line", "line": {"color": "white", "width": 2}}
    lines = [line | {"xref": "x", "yref": "paper", "x0": k * m - 0.5, "x1": k * m - 0.5, "y0": 0, "y1": 1}
             for k in range(1, num_heads)]  # fmt: skip
    lines += [line | {"xref": "paper", "yref": "y", "x0": 0, "x1": 1, "y0": k * m - 0.5, "y1": k * m - 0.5}
              for k in range(1, num_layers)]  # fmt: skip
    layout = {
        "template": TEMPLATE,
        **TOUCH,
        "height": int(np.clip(num_layers * GRID_PX / num_heads + 140, 320, 1400)),
        "margin": {"l": 70, "r": 10, "t": 90, "b": 10},
        "shapes": lines,
        "xaxis": {"type": "category", "side": "top", "tickvals": [x[k] for k in middles[:num_heads]],
                  "ticktext": [f"head {page_number(k)}" for k in range(num_heads)], "automargin": False},
        "yaxis": {"type": "category", "autorange": "reversed", "tickvals": [y[k] for k in middles[:num_layers]],
                  "ticktext": [f"layer {page_number(k)}" for k in range(num_layers)], "automargin": False},
    }  # fmt: skip
    return go.Figure(data=[trace], layout=layout)
