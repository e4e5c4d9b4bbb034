"""Several heatmaps in one figure: a computation's tensors side by side (one row per token in each), or
stacked (vectors of different lengths, one under another). A pure function from tensors to ``go.Figure``.

Each panel has its own colour range, shown by its own colour bar above it (its ends signed), because the tensors
of one step differ in scale (an embedding ×√d_model is eleven times the embedding). The axes are laid out by hand
rather than with ``make_subplots``, which costs more than the rest of the figure, and their margins are set from
the labels (``figures.label_width_px``) rather than by plotly's automargin, which costs the browser a second layout
pass. A panel of more than ``MAX_TICK_LABELS`` columns labels one in every few (the hover names each). Matrices
travel as float32 arrays and the hover reads the value itself, so a 128-token step sends no per-cell text.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
import torch

from .figures import (
    ATTENTION_COLORS,
    MAX_TICK_LABELS,
    SIGNED_COLORS,
    SLANT_HEIGHT,
    TEMPLATE,
    TOUCH,
    cell_text,
    escape,
    label_width_px,
)

GAP = 0.03  # the paper fraction between two panels side by side
TITLE_PX = 54  # above a panel: its title, then its colour bar's tick labels and the bar
BAR_PX = 6  # a panel's colour bar: a thin strip just above it, its ends and 0 labelled with their signs
BAR_LABEL_PX = 14  # the colour bar's tick labels, under the strip
TICK_GAP_PX = 12  # between an axis and its tick labels
SHOWN_TICKS = 24  # about how many column labels a wide panel keeps across the figure's width
ROW_PX = 16  # the height of one token row
MIN_SHARE = 0.12  # the least width (or height) a panel gets, however few its columns (or rows)
TOP_PX = 110  # the figure's title on two lines (a phone's), and the first panels' titles
SHOW_VALUES_UP_TO = 16  # print each value in its cell when a panel has at most this many
_STOPS = {
    signed: go.Heatmap(colorscale=SIGNED_COLORS if signed else ATTENTION_COLORS).colorscale for signed in (True, False)
}


@dataclass(frozen=True)
class Panel:
    """One heatmap: ``values`` (rows, columns), the columns' labels, the rows' (token labels, already escaped),
    its title, and whether its values are signed (a diverging scale centred on 0) or not (0 up)."""

    values: torch.Tensor
    columns: list[str]
    rows: list[str]
    title: str
    signed: bool = True


def _domains(sizes: list[int], gap: float) -> list[tuple[float, float]]:
    """Consecutive paper fractions, one per panel, in proportion to ``sizes`` (each at least ``MIN_SHARE``).

    Each bound is rounded and kept within [0, 1], the last end exactly 1: summed floats can end at 1 + 2e-16, and
    a stacked layout's ``1 - end`` would then be a negative domain, which plotly refuses."""
    shares = [max(size / sum(sizes), MIN_SHARE) for size in sizes]
    room = 1.0 - gap * (len(sizes) - 1)
    spans, start = [], 0.0
    for share in shares:
        end = start + room * share / sum(shares)
        spans.append((_fraction(start), _fraction(end)))
        start = end + gap
    spans[-1] = (spans[-1][0], 1.0)
    return spans


def _fraction(value: float) -> float:
    """A paper fraction rounded to 1e-9 (far below a pixel) and clipped to [0, 1]."""
    return min(max(round(value, 9), 0.0), 1.0)


def _largest(panel: Panel) -> float:
    """The largest magnitude in a panel: its colour range's top, its colour bar's end (0 for an empty panel)."""
    return float(panel.values.abs().max()) if panel.values.numel() else 0.0


def _colour_bar(panel: Panel, x_domain: tuple[float, float], top: float, largest: float) -> dict:
    """A panel's colour legend: a thin horizontal bar over its width above it (paper ``top``), its ends labelled
    with their signs (``−2.31 · 0 · +2.31``, or ``0 · 0.84``), as the dark theme and the heatmap colour it alike."""
    limit = largest or 1.0
    ends = [-limit, 0.0, limit] if panel.signed else [0.0, limit]
    return {
        "orientation": "h",
        "x": (x_domain[0] + x_domain[1]) / 2,
        "xanchor": "center",
        "len": x_domain[1] - x_domain[0],
        "y": top,
        "yanchor": "bottom",
        "ypad": BAR_LABEL_PX,  # the tick labels go in this gap, between the bar and the panel
        "thickness": BAR_PX,
        "outlinewidth": 0,
        "tickvals": ends,
        "ticktext": [_signed(value, panel.signed) for value in ends],
        "ticks": "",
        "tickfont": {"size": 10},
    }


def _signed(value: float, signed: bool) -> str:
    """A colour bar's label: ``+2.31`` and ``−2.31`` on a diverging scale, ``0.84`` on one from 0."""
    if value == 0:
        return "0"
    text = f"{abs(value):.3g}"
    return (f"+{text}" if value > 0 else f"−{text}") if signed else text


def _trace(panel: Panel, axis: str, largest: float) -> dict:
    """One panel's heatmap on axes ``x{axis}``/``y{axis}``, coloured from its own range."""
    values = panel.values.float().numpy()
    limit = largest or 1.0
    zmin = -limit if panel.signed else 0.0
    scale = _STOPS[panel.signed]
    trace = {
        "type": "heatmap",
        "z": values,
        "x": np.asarray(panel.columns),  # arrays, not lists: plotly copies what it is given, a list item by item
        "y": np.asarray(panel.rows),
        "xaxis": f"x{axis}",
        "yaxis": f"y{axis}",
        "colorscale": scale,
        "zmin": zmin,
        "zmax": limit,
        "showscale": True,
        "hovertemplate": f"%{{y}} · %{{x}}<br>{escape(panel.title)}: %{{z:.4f}}<extra></extra>",
    }
    if values.size <= SHOW_VALUES_UP_TO:  # each value printed in black or white, whichever reads on its cell
        trace["text"] = [[cell_text(f"{v:.3f}", v, scale, zmin, limit) for v in row] for row in values.tolist()]
        trace["texttemplate"] = "%{text}"
    return trace


def _title(panel: Panel, x: float, y: float) -> dict:
    """A panel's title, above its colour bar."""
    return {
        "text": escape(panel.title),
        "x": x,
        "y": y,
        "xref": "paper",
        "yref": "paper",
        "showarrow": False,
        "yanchor": "bottom",
        "yshift": BAR_PX + 2 * BAR_LABEL_PX,  # over the bar, which sits its labels' height above the panel
        "font": {"size": 11},
    }


def _x_axis(panel: Panel, domain: tuple[float, float], anchor: str, stacked: bool) -> dict:
    """A panel's column axis: slanted labels (level for a few class names); past ``MAX_TICK_LABELS`` columns, one
    label in every few, fewer the narrower the panel."""
    axis = {"domain": list(domain), "anchor": anchor, "type": "category", "automargin": False}
    axis["tickangle"] = 0 if stacked and len(panel.columns) <= SHOW_VALUES_UP_TO else -45
    shown = max(2, int(SHOWN_TICKS * (domain[1] - domain[0])))  # in proportion to the panel's width
    if len(panel.columns) > MAX_TICK_LABELS:
        every = 2 ** math.ceil(math.log2(len(panel.columns) / shown))  # a power of two, as the widths are
        axis |= {"tickmode": "array", "tickvals": np.asarray(panel.columns[::every])}
    return axis


def _ticks_px(panel: Panel) -> int:
    """The height its column labels take below a panel."""
    return TICK_GAP_PX + int(SLANT_HEIGHT * label_width_px(panel.columns))


def panel_figure(panels: list[Panel], title: str, stacked: bool = False) -> go.Figure:
    """``panels`` side by side, sharing their rows (the tokens), or ``stacked`` one under another.

    Side by side, a panel's width follows its number of columns; stacked, its height follows its rows.
    """
    sizes = [len(p.rows) + 1 for p in panels] if stacked else [len(p.columns) for p in panels]
    ticks_px = max(_ticks_px(p) for p in panels)
    rows_px = ROW_PX * (sum(sizes) if stacked else max(len(p.rows) for p in panels))
    gap_px = ticks_px + TITLE_PX
    plot_px = max(rows_px + (gap_px * (len(panels) - 1) if stacked else 0), 120)  # the panels and their gaps
    spans = _domains(sizes, gap_px / plot_px if stacked else GAP)
    traces, annotations, axes = [], [], {}
    for i, (panel, (start, end)) in enumerate(zip(panels, spans, strict=True)):
        axis = "" if i == 0 else str(i + 1)
        largest = _largest(panel)
        x_domain, y_domain = ((0.0, 1.0), (1.0 - end, 1.0 - start)) if stacked else ((start, end), (0.0, 1.0))
        traces.append(_trace(panel, axis, largest) | {"colorbar": _colour_bar(panel, x_domain, y_domain[1], largest)})
        axes[f"xaxis{axis}"] = _x_axis(panel, x_domain, f"y{axis}", stacked)
        axes[f"yaxis{axis}"] = {
            "domain": list(y_domain),
            "anchor": f"x{axis}",
            "type": "category",
            "autorange": "reversed",
            "automargin": False,
        }
        if not stacked and i:  # side by side, the token labels are read from the first panel
            axes[f"yaxis{axis}"] |= {"showticklabels": False, "matches": "y"}
        annotations.append(_title(panel, (x_domain[0] + x_domain[1]) / 2, y_domain[1]))
    rows_label_px = label_width_px([row for p in (panels if stacked else panels[:1]) for row in p.rows])
    layout = {
        "template": TEMPLATE,
        "title": {"text": escape(title)},
        "annotations": annotations,
        "height": TOP_PX + plot_px + ticks_px + 10,
        "margin": {"t": TOP_PX, "l": TICK_GAP_PX + rows_label_px, "r": 10, "b": ticks_px + 10},
        **axes,
        **TOUCH,
    }
    # Unvalidated: plotly's checks cost more than the rest of a step's draw; tests/explorer/drawing/test_panels.py
    # validates every Walkthrough figure instead (``go.Figure(figure.to_dict())``).
    return go.Figure({"data": traces, "layout": layout}, _validate=False)
