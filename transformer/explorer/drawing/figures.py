"""Plotly figures for the explorer: pure functions from arrays and tokens to ``go.Figure``; what every figure shares
(the template, token labels, the values a heatmap sends and its colour bar) and the plain heatmap. Attention maps,
one head's and every head's, are drawn in ``attention_maps``.

Plotly reads a little HTML in labels, hover text and titles (``<b>``, ``<a href>``, ``<br>``), so every
token goes through ``token_labels``, which escapes it; typed markup is then shown as literal text.
Matrices go in as float32 numpy arrays, which plotly sends to the browser as compact typed arrays.
Traces are plain dicts and the template is a small one: plotly validates every property it is given,
and the stock templates alone cost more than the model's forward pass.

Shape letters: L = layers, H = heads, N = tokens, P = positions (the model's max_len), D = d_model.
"""

from __future__ import annotations

import html
import math
import unicodedata
from collections.abc import Sequence

import numpy as np
import plotly.colors
import plotly.graph_objects as go
import torch

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
# The legend along the figure's foot: placed in the container, plotly reserves its rows (two or three on a phone)
# below the margin the axis titles push, so they never meet (a legend at a paper y below the axes grew up into them).
# On a phone ``page/phone.js`` makes the figure taller by the legend's rows, so that the plot keeps its height.
LEGEND_BELOW = {"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom", "x": 0.5, "xanchor": "center"}
# A row of panels (``make_subplots(rows=1, cols=k)``) read one under another on a phone: ``page/phone.js`` stacks the
# panels of a figure whose layout carries this. Side by side at a phone's width their titles ran into one another.
STACKED_ON_PHONE = {"meta": {"stacked_on_phone": True}}
_CONTROL_PICTURES = {code: 0x2400 + code for code in range(0x20)} | {0x7F: 0x2421}  # C0 controls -> ␀..␟, DEL -> ␡
_RIGHT_TO_LEFT = {"R", "AL"}


def token_display(token: str) -> str:
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
    return [f"{position} {token_display(token)}" for position, token in zip(positions, tokens, strict=True)]


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


def colour_range(
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


def colour_bar_layout(extra: dict, title: str, top: float, signed: bool = False) -> dict:
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
    red, green, blue = (float(channel) for channel in rgb)
    return red, green, blue


def dark_colour(rgb: Sequence[float]) -> tuple[float, float, float]:
    """The colour the dark theme shows for ``rgb``: ``theme``'s invert(1) then hue-rotate(180deg) filter."""
    inverted = 1.0 - np.asarray(rgb, dtype=float)
    red, green, blue = (float(channel) for channel in np.clip(_HUE_ROTATE_180 @ inverted, 0.0, 1.0))
    return red, green, blue


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
