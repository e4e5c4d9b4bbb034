"""Plotly figures for the explorer: pure functions from arrays and tokens to ``go.Figure``.

Plotly reads a little HTML in labels, hover text and titles (``<b>``, ``<a href>``, ``<br>``), so every
token goes through ``token_labels``, which escapes it; typed markup is then shown as literal text.
Matrices go in as float32 numpy arrays, which plotly sends to the browser as compact typed arrays.
Traces are plain dicts and the template is a small one: plotly validates every property it is given,
and the stock templates alone cost more than the model's forward pass.

Shape letters: L = layers, H = heads, N = tokens, P = positions (the model's max_len), D = d_model.
"""

from __future__ import annotations

import functools
import html
import math
import unicodedata
from collections.abc import Sequence

import numpy as np
import plotly.colors
import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from ..inputs import page_number
from .colour import colour_limit, normalise_attention

ATTENTION_COLORS = "Blues"
ENCODING_COLORS = "RdBu"
SIGNED_COLORS = "RdBu_r"  # red for more (or for evidence for a class), blue for less
# One colour per class in a chart of class probabilities: neither red nor blue, which say for and against a class
# everywhere else (a red "positive" bar beside a red "supports the negative class" attribution would disagree).
CLASS_COLOURS = ("#7570b3", "#1b9e77", "#d95f02", "#e7298a")
MAX_TICK_LABELS = 40  # beyond this many tokens the small multiples drop their axis labels
LABEL_CHAR_PX = 7  # about the width of one character of plotly's 12 px tick labels (its default size)
GRID_TICK_SIZE = 9  # the font size of the small multiples' tick labels
AXIS_TITLE_PX = 45  # an axis title and its gap to the tick labels
SLANT_HEIGHT = 0.71  # a label turned 45° (the key axis's) rises sin 45° of its length
_AXIS_STYLE = {"gridcolor": "#EBF0F8", "zeroline": False, "automargin": True}
TEMPLATE = go.layout.Template(
    layout={
        "font": {"color": "#2a3f5f"},
        "paper_bgcolor": "rgba(0,0,0,0)",  # the page's own background, light or dark (see ``theme``)
        "plot_bgcolor": "rgba(0,0,0,0)",
        "title": {"x": 0.02},
        "xaxis": _AXIS_STYLE,
        "yaxis": _AXIS_STYLE,
        "colorway": ["#636efa", "#EF553B", "#00cc96", "#ab63fa", "#FFA15A", "#19d3f3", "#FF6692", "#B6E880"],
    }
)
# On a touch screen a one-finger swipe over a heatmap scrolls the page (no drag to zoom: the toolbar still zooms),
# and a tap shows the cell's hover text, as plotly does for "closest".
TOUCH = {"dragmode": False, "hovermode": "closest"}
_CONTROL_PICTURES = {code: 0x2400 + code for code in range(0x20)} | {0x7F: 0x2421}  # C0 controls -> ␀..␟, DEL -> ␡
_RIGHT_TO_LEFT = {"R", "AL"}


def _display(token: str) -> str:
    """Make one token safe and visible in a plotly label: controls as symbols, RTL isolated, HTML escaped."""
    shown = token.translate(_CONTROL_PICTURES)
    if not shown.strip():
        shown = "␣" * max(len(shown), 1)
    if any(unicodedata.bidirectional(char) in _RIGHT_TO_LEFT for char in shown):
        shown = f"\u2068{shown}\u2069"  # first-strong isolate: keeps the position number where it belongs
    return html.escape(shown, quote=False)  # plotly decodes &lt; &gt; &amp; but not &quot;


def token_labels(tokens: Sequence[str], positions: Sequence[int] | None = None) -> list[str]:
    """Axis labels for tokens: "position token", escaped for plotly and unique even when a token repeats.

    Args:
        tokens: the tokens.
        positions: the position printed before each token, by default 0, 1, ...; e.g. each
            token's place in its own sentence when only some of its tokens are shown.
    """
    positions = range(len(tokens)) if positions is None else positions
    return [f"{position} {_display(token)}" for position, token in zip(positions, tokens, strict=True)]


SHOWN_DECIMALS = 4  # a weight in [0, 1] is sent as a whole number of 10^-4 (2 bytes); hover shows 0.dddd
_SHOWN_UNIT = 10**SHOWN_DECIMALS
_SHOWN_FORMAT = f"0.%{{{{{{field}}:0{SHOWN_DECIMALS}d}}}}"  # e.g. "0.%{z:04d}": 1230 reads "0.1230"
COLOUR_STEPS = 255  # a colour on its own range ("row") is sent as one byte


def _shown(values: np.ndarray, signed: bool = False) -> tuple[np.ndarray, bool]:
    """What a heatmap sends of ``values``: in [0, 1], rounded to ``SHOWN_DECIMALS`` as uint16; else float32.

    Returns (the values to send, whether they are the uint16 kind). A weight of exactly 1 is sent as
    0.9999 so that it reads with the same four decimals (plotly formats numbers but cannot divide them).
    """
    values = np.asarray(values, dtype=np.float32)
    if signed or (values.size and (values.min() < 0 or values.max() > 1)):
        return values, False
    scaled = values * _SHOWN_UNIT  # one copy, rounded and clipped in place
    return np.minimum(np.rint(scaled, out=scaled), _SHOWN_UNIT - 1, out=scaled).astype(np.uint16), True


def shown_values(trace) -> np.ndarray:
    """The numbers a heatmap trace made here shows on hover, as float32 (the inverse of what it sends)."""
    field = "customdata" if "%{customdata" in (trace.hovertemplate or "") else "z"
    values = np.asarray(getattr(trace, field))
    return values.astype(np.float32) / _SHOWN_UNIT if values.dtype == np.uint16 else values.astype(np.float32)


def _colour_range(
    matrices: np.ndarray, scale: str, exclude: Sequence[int], signed: bool = False
) -> tuple[np.ndarray, float, dict]:
    """What attention heatmaps send: the shown values and the top of their colour range, and extra trace fields.

    "global" colours the values themselves (sent once, ``_shown``); "row" colours each row ÷ its own top,
    sent as one byte per cell (``COLOUR_STEPS``; two for a signed map), with the values themselves as
    ``customdata`` for the hover.

    Shape:
        matrices: (..., N, N). Returns (z (..., N, N), the top of the colour range in z's units, extra fields
        with the hover's ``value`` format).
    """
    weights = torch.from_numpy(matrices)  # (..., N, N): one range over every map, or per row of each
    shown, whole = _shown(matrices, signed)
    unit = _SHOWN_UNIT if whole else 1.0
    if scale == "row":
        steps = normalise_attention(weights, "row", exclude).numpy()  # a new array: scaled in place
        steps *= COLOUR_STEPS
        steps = np.rint(steps, out=steps).astype(np.int16 if signed else np.uint8)  # a difference keeps its sign
        value = _SHOWN_FORMAT.format(field="customdata") if whole else "%{customdata:.3f}"
        return steps, float(COLOUR_STEPS), {"customdata": shown, "value": value}
    top = colour_limit(weights, "global", exclude).item() if weights.numel() else 1.0
    top = min(top * unit, unit - 1) if whole else top
    return shown, top, {"value": _SHOWN_FORMAT.format(field="z") if whole else "%{z:.3f}"}


def label_width_px(labels: Sequence[str], font_size: int = 12) -> int:
    """About how many pixels the longest of ``labels`` takes at ``font_size``: the margin that fits it.

    Heatmaps set their margins from this instead of plotly's automargin, which costs the browser a second
    layout pass, most of a heatmap's drawing time (the phone layout, ``phone.js``, turns it back on).
    """
    return LABEL_CHAR_PX * font_size // 12 * max(map(len, labels), default=1)


def _colour_bar(extra: dict, title: str, top: float, signed: bool = False) -> dict:
    """A colour bar whose ticks read in the values' own units, as short as they can be: row colours as 0 to 1 (−1 to
    1 signed), and weights sent as whole numbers of 10^-4 at a few round values up to ``top`` (in z's units), "0.6",
    not "0.6000"."""
    if "customdata" in extra:
        ticks = {"tickvals": [0, COLOUR_STEPS / 2, COLOUR_STEPS], "ticktext": ["0", "0.5", "1"]}
        if signed:
            ticks = {"tickvals": [-COLOUR_STEPS, 0, COLOUR_STEPS], "ticktext": ["−1", "0", "1"]}
        return {"title": {"text": f"{title} ÷ row max"}, **ticks}
    if not extra["value"].startswith("0."):
        return {"title": {"text": title}}
    values = round_ticks(top / _SHOWN_UNIT)
    return {
        "title": {"text": title},
        "tickvals": [v * _SHOWN_UNIT for v in values],
        "ticktext": [f"{v:g}" for v in values],
    }


def round_ticks(top: float, most: int = 5) -> list[float]:
    """At most ``most`` round values from 0 up to ``top``, a step of 1, 2, 2.5 or 5 times a power of ten apart."""
    if top <= 0:
        return [0.0]
    power = 10.0 ** math.floor(math.log10(top / (most - 1)))
    step = next(power * k for k in (1, 2, 2.5, 5, 10) if top / (power * k) <= most - 1)
    return [round(i * step, 10) for i in range(int(top / step + 1e-9) + 1)]


MAX_DRAWN_CELLS = 256  # a map's side as drawn: a heatmap's plot is under ~800 px, so more cells would be < 3 px
GRID_PX = 1024  # about the All heads figure's width: its H maps share it, so a map gets GRID_PX / H cells a side
MIN_GRID_CELLS = 16  # ... but never fewer than this
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
    return [f"{positions[s]}–{positions[min(s + block, len(tokens)) - 1]} {_display(tokens[s])}…" for s in starts]


def block_note(block: int) -> str:
    """What a title adds when its map is drawn in blocks."""
    return "" if block == 1 else f" (each cell: the largest of a {block} × {block} block)"


def _pooled_colours(colours: np.ndarray, extra: dict, block: int) -> tuple[np.ndarray, dict]:
    """``_colour_range``'s colours and hover values (``customdata``), each pooled in blocks (``pooled``)."""
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
    colours, top, extra = _colour_range(weights, scale, exclude, signed)  # on every cell: then pooled
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
        "colorbar": _colour_bar({**extra, "value": value}, value_name, top, signed),
        "hovertemplate": f"query %{{y}}<br>key %{{x}}<br>{value_name} {value}<extra></extra>",
        **extra,
    }
    label_px = label_width_px(labels)
    layout = {
        "template": TEMPLATE,
        **TOUCH,
        "title": {"text": html.escape(title + block_note(block), quote=False)},
        "height": int(np.clip(220 + 16 * len(labels), 360, 900)),
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
    colours, top, extra = _colour_range(attentions, scale, exclude)  # (L, H, N, N)
    block = block_size(n, max(MIN_GRID_CELLS, GRID_PX // num_heads))
    colours, extra = _pooled_colours(colours, extra, block)  # (L, H, M, M)
    labels = block_labels(tokens, block)
    colour_bar = _colour_bar(extra, value_name, top)
    hover = f"query %{{y}}<br>key %{{x}}<br>{value_name} {extra.pop('value')}<extra></extra>"
    if num_layers * num_heads > MAX_SUBPLOT_HEADS:
        figure = _mosaic(labels, colours, extra.get("customdata"), hover)
        figure.update_traces(zmax=top, colorbar=colour_bar)
    else:
        figure = _small_multiples(labels, colours, extra.get("customdata"), hover)
        figure.update_layout(coloraxis_cmax=top, coloraxis_colorbar=colour_bar)
    figure.update_layout(title_text=html.escape((title or GRID_TITLE) + block_note(block), quote=False))
    return figure


def _small_multiples(labels: list[str], colours: np.ndarray, shown: np.ndarray | None, hover: str) -> go.Figure:
    """One subplot a head (``_grid_skeleton``) sharing one colour axis.

    Shape:
        colours, shown: (L, H, M, M), M = len(labels); ``shown`` the hover's values, when they are not the colours.
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
                **({"customdata": shown[layer, head]} if shown is not None else {}),
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


def _mosaic(labels: list[str], colours: np.ndarray, shown: np.ndarray | None, hover: str) -> go.Figure:
    """Every head's map in one heatmap, layers down and heads across, a line between two maps: one trace and one
    pair of axes, where a subplot a head is 2 × L × H axes for the browser to lay out. A cell's hover names its
    layer and query ("L2 · 5 the") and its head and key ("H3 · 7 film").

    Shape:
        colours, shown: (L, H, M, M), M = len(labels); ``shown`` the hover's values, when they are not the colours.
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
        **({"customdata": side_by_side(shown)} if shown is not None else {}),
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


def escape(text: object) -> str:
    """Any text for a plotly label, title or hover: plotly decodes &amp;, &lt; and &gt; but not &quot;."""
    return html.escape(str(text), quote=False)


# CSS's hue-rotate(180deg) matrix (Filter Effects 1, on sRGB values), which ``theme`` applies after invert(1)
_HUE_ROTATE_180 = np.array([[-0.574, 1.43, 0.144], [0.426, 0.43, 0.144], [0.426, 1.43, -0.856]])
BLACK, WHITE = (0.0, 0.0, 0.0), (1.0, 1.0, 1.0)


def cell_colour(value: float, colourscale: Sequence, zmin: float, zmax: float) -> tuple[float, float, float]:
    """The sRGB colour (0 to 1 each) plotly paints a cell of ``value``: clipped to [zmin, zmax], interpolated."""
    share = 0.5 if zmax == zmin else min(max((value - zmin) / (zmax - zmin), 0.0), 1.0)
    rgb = plotly.colors.sample_colorscale([list(stop) for stop in colourscale], [share], colortype="tuple")[0]
    return tuple(float(channel) for channel in rgb)


def dark_colour(rgb: Sequence[float]) -> tuple[float, float, float]:
    """The colour the dark theme shows for ``rgb``: ``theme``'s invert(1) then hue-rotate(180deg) filter."""
    inverted = 1.0 - np.asarray(rgb, dtype=float)
    return tuple(float(channel) for channel in np.clip(_HUE_ROTATE_180 @ inverted, 0.0, 1.0))


def luminance(rgb: Sequence[float]) -> float:
    """WCAG 2 relative luminance of an sRGB colour (0 to 1 each)."""
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: Sequence[float], b: Sequence[float]) -> float:
    """WCAG 2 contrast ratio of two colours, 1 to 21."""
    lighter, darker = sorted((luminance(a), luminance(b)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def text_colour(background: Sequence[float]) -> tuple[float, float, float]:
    """Black or white, whichever contrasts more with ``background`` (at least 4.58:1 for any colour)."""
    return BLACK if contrast(BLACK, background) >= contrast(WHITE, background) else WHITE


def _css(rgb: Sequence[float]) -> str:
    return "#" + "".join(f"{round(channel * 255):02x}" for channel in rgb)


def cell_text(text: str, value: float, colourscale: Sequence, zmin: float, zmax: float) -> str:
    """A cell's number coloured for its cell in both themes: plotly's own ``color`` (light page) and a ``--dark``
    custom property, which ``theme`` applies on the dark page, where the cells' colours are inverted.

    Plotly's ``textfont.color`` is one colour per trace, and the dark theme's fill rule would override it; a
    ``<span style>`` colours one cell, and plotly copies the custom property into the SVG as it is.
    """
    if not text or math.isnan(value):
        return text
    light = cell_colour(value, colourscale, zmin, zmax)
    dark = text_colour(dark_colour(light))
    return f'<span style="color:{_css(text_colour(light))};--dark:{_css(dark)}">{text}</span>'


def heatmap(
    values: torch.Tensor,
    x_labels: list[str],
    y_labels: list[str],
    *,
    title: str,
    axis_titles: tuple[str, str],
    signed: bool,
    colours: torch.Tensor | None = None,
    colour_title: str = "value",
    show_values: bool = False,
    limit: float | None = None,
) -> go.Figure:
    """A heatmap whose hover shows ``values`` and whose colour shows ``colours`` (default: the values).

    Labels must already be escaped. Signed data gets a diverging scale centred on 0; NaN is blank.
    ``show_values`` prints each value in its cell, black or white for that cell (``cell_text``).
    ``limit``: the colour range's top (default: the largest magnitude).

    Shape:
        values, colours: (rows, columns).
    """
    colours = values if colours is None else colours
    if limit is None:
        limit = (colours.abs().nan_to_num().max().item() if colours.numel() else 0.0) or 1.0
    x_title, y_title = axis_titles
    scale = go.Heatmap(colorscale=SIGNED_COLORS if signed else ATTENTION_COLORS).colorscale  # the name as stops
    zmin = -limit if signed else 0.0
    text = [["" if math.isnan(value) else f"{value:.3f}" for value in row] for row in values.tolist()]
    shown = (  # coloured per cell only when printed: a 128-token map is 16,384 cells
        [
            [cell_text(cell, colour, scale, zmin, limit) for cell, colour in zip(row, colour_row, strict=True)]
            for row, colour_row in zip(text, colours.tolist(), strict=True)
        ]
        if show_values
        else text
    )
    trace = go.Heatmap(
        z=colours.tolist(),
        x=x_labels,
        y=y_labels,
        text=shown,
        customdata=text,
        colorscale=scale,
        colorbar={"title": {"text": colour_title}},
        zmin=zmin,
        zmax=limit,
        hovertemplate=f"{y_title} %{{y}}<br>{x_title} %{{x}}<br>value %{{customdata}}<extra></extra>",
        texttemplate="%{text}" if show_values else None,
    )
    figure = go.Figure(trace)
    figure.update_layout(template=TEMPLATE, title=escape(title), margin={"t": 60, "l": 10, "r": 10, "b": 10}, **TOUCH)
    figure.update_xaxes(type="category", title=x_title, tickangle=-45)
    figure.update_yaxes(type="category", title=y_title, autorange="reversed")
    return figure


def heads_heatmap(values: torch.Tensor, *, title: str, colour_title: str, limit: float | None = None) -> go.Figure:
    """Layers × heads, counted from 1: one signed value per head, printed in its cell (Head knockout, Patching).

    Shape:
        values: (L, H).
    """
    num_layers, num_heads = values.shape
    return heatmap(
        values,
        [f"head {page_number(h)}" for h in range(num_heads)],
        [f"layer {page_number(layer)}" for layer in range(num_layers)],
        title=title,
        axis_titles=("head", "layer"),
        signed=True,
        colour_title=colour_title,
        show_values=True,
        limit=limit,
    )
