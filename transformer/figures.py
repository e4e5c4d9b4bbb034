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
import unicodedata
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

ATTENTION_COLORS = "Blues"
ENCODING_COLORS = "RdBu"
MAX_TICK_LABELS = 40  # beyond this many tokens the small multiples drop their axis labels
_AXIS_STYLE = {"gridcolor": "#EBF0F8", "zeroline": False, "automargin": True}
TEMPLATE = go.layout.Template(
    layout={
        "font": {"color": "#2a3f5f"},
        "paper_bgcolor": "white",
        "plot_bgcolor": "white",
        "title": {"x": 0.02},
        "xaxis": _AXIS_STYLE,
        "yaxis": _AXIS_STYLE,
        "colorway": ["#636efa", "#EF553B", "#00cc96", "#ab63fa", "#FFA15A", "#19d3f3", "#FF6692", "#B6E880"],
    }
)
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


def token_labels(tokens: Sequence[str]) -> list[str]:
    """Axis labels for tokens: "position token", escaped for plotly and unique even when a token repeats."""
    return [f"{position} {_display(token)}" for position, token in enumerate(tokens)]


def attention_heatmap(tokens: Sequence[str], weights: np.ndarray, title: str) -> go.Figure:
    """One head's attention (or a head average) as a heatmap.

    Args:
        tokens: the N tokens.
        weights: (N, N), queries on rows, keys on columns; each row sums to 1.
        title: the figure title (escaped here).
    """
    labels = token_labels(tokens)
    heatmap = {
        "type": "heatmap",
        "z": np.asarray(weights, dtype=np.float32),
        "x": labels,
        "y": labels,
        "zmin": 0.0,
        "colorscale": ATTENTION_COLORS,
        "colorbar": {"title": {"text": "weight"}},
        "hovertemplate": "query %{y}<br>key %{x}<br>weight %{z:.3f}<extra></extra>",
    }
    layout = {
        "template": TEMPLATE,
        "title": {"text": html.escape(title, quote=False)},
        "height": int(np.clip(220 + 16 * len(labels), 360, 900)),
        "margin": {"l": 10, "r": 10, "t": 50, "b": 10},
        "xaxis": {"title": {"text": "key (attended to)"}, "type": "category", "tickangle": -45},
        "yaxis": {"title": {"text": "query (attending)"}, "type": "category", "autorange": "reversed"},
    }
    return go.Figure(data=[heatmap], layout=layout)


@functools.lru_cache(maxsize=8)
def _grid_skeleton(num_layers: int, num_heads: int, show_ticks: bool) -> go.Figure:
    """The empty layer × head subplot grid; building it is the slow part, so it is made once per shape."""
    figure = make_subplots(
        rows=num_layers,
        cols=num_heads,
        shared_xaxes=True,
        shared_yaxes=True,
        horizontal_spacing=0.02,
        vertical_spacing=0.05,
        subplot_titles=[
            f"layer {layer + 1} · head {head + 1}" for layer in range(num_layers) for head in range(num_heads)
        ],
    )
    # make_subplots already keeps tick labels to the bottom row and the first column only
    figure.update_xaxes(type="category", tickangle=-90, tickfont={"size": 9})
    figure.update_yaxes(type="category", autorange="reversed", tickfont={"size": 9})
    if not show_ticks:
        figure.update_xaxes(showticklabels=False)
        figure.update_yaxes(showticklabels=False)
    figure.update_layout(
        template=TEMPLATE,
        title={"text": "All heads (rows: layers, columns: heads; one colour scale)"},
        coloraxis={"colorscale": ATTENTION_COLORS, "cmin": 0.0, "colorbar": {"title": {"text": "weight"}}},
        margin={"l": 10, "r": 10, "t": 70, "b": 10},
    )
    return figure


def attention_grid(tokens: Sequence[str], attentions: np.ndarray) -> go.Figure:
    """Every layer × head as small multiples sharing one colour scale (0 to the largest weight anywhere).

    Args:
        tokens: the N tokens.
        attentions: (L, H, N, N), queries on rows, keys on columns.
    """
    num_layers, num_heads, n, _ = attentions.shape
    labels = token_labels(tokens)
    show_ticks = n <= MAX_TICK_LABELS
    figure = go.Figure(_grid_skeleton(num_layers, num_heads, show_ticks))  # a copy: the cached grid stays empty
    cells = [(layer, head) for layer in range(num_layers) for head in range(num_heads)]
    figure.add_traces(
        [
            {
                "type": "heatmap",
                "z": np.asarray(attentions[layer, head], dtype=np.float32),
                "x": labels,
                "y": labels,
                "coloraxis": "coloraxis",
                "hovertemplate": f"layer {layer + 1} · head {head + 1}<br>query %{{y}}<br>key %{{x}}"
                "<br>weight %{z:.3f}<extra></extra>",
            }
            for layer, head in cells
        ],
        rows=[layer + 1 for layer, _ in cells],
        cols=[head + 1 for _, head in cells],
    )
    figure.update_layout(
        coloraxis_cmax=float(attentions.max()),
        height=int(np.clip(num_layers * (140 + 6 * min(n, MAX_TICK_LABELS)), 320, 1400)),
    )
    return figure


def positional_curves(table: np.ndarray, dims: Sequence[int], tokens: Sequence[str] = ()) -> go.Figure:
    """Selected dimensions of the positional-encoding table against position, the sentence's tokens marked.

    Args:
        table: (P, D), the model's own table.
        dims: the dimensions to draw.
        tokens: the sentence's N tokens; their positions 0..N-1 get markers and a shaded band.
    """
    positions = np.arange(table.shape[0])
    n = len(tokens)
    labels = token_labels(tokens)
    traces = []
    for dim in dims:
        values = np.asarray(table[:, dim], dtype=np.float32)  # (P,)
        name = f"dim {dim} ({'sin' if dim % 2 == 0 else 'cos'})"
        traces.append(
            {
                "type": "scatter",
                "x": positions,
                "y": values,
                "mode": "lines",
                "name": name,
                "legendgroup": name,
                "hovertemplate": f"{name}<br>position %{{x}}: %{{y:.3f}}<extra></extra>",
            }
        )
        if n:
            traces.append(
                {
                    "type": "scatter",
                    "x": positions[:n],
                    "y": values[:n],
                    "mode": "markers",
                    "name": name,
                    "legendgroup": name,
                    "showlegend": False,
                    "text": labels,
                    "marker": {"size": 7, "line": {"width": 1, "color": "white"}},
                    "hovertemplate": f"token %{{text}}<br>{name}: %{{y:.3f}}<extra></extra>",
                }
            )
    layout = {
        "template": TEMPLATE,
        "title": {"text": "Positional encoding: each dimension is a sine or cosine of the position"},
        "xaxis": {"title": {"text": "position"}},
        "yaxis": {"title": {"text": "value"}, "range": [-1.15, 1.15]},
        "height": 380,
        "margin": {"l": 10, "r": 10, "t": 60, "b": 10},
        "legend": {"orientation": "h", "y": -0.2},
    }
    if n:
        layout["shapes"] = [
            {
                "type": "rect",
                "xref": "x",
                "yref": "paper",
                "x0": -0.5,
                "x1": n - 0.5,
                "y0": 0,
                "y1": 1,
                "fillcolor": "rgba(255, 200, 0, 0.15)",
                "line": {"width": 0},
                "layer": "below",
            }
        ]
        layout["annotations"] = [
            {
                "x": -0.5,
                "y": 1,
                "xref": "x",
                "yref": "paper",
                "text": f"your {n} tokens",
                "showarrow": False,
                "xanchor": "left",
                "yanchor": "bottom",
            }
        ]
    return go.Figure(data=traces, layout=layout)


def _matrix_figure(z: np.ndarray, title: str, x_title: str, y_title: str, hover: str, colorbar: str) -> go.Figure:
    """A diverging heatmap from -1 to 1 with the first row at the top."""
    heatmap = {
        "type": "heatmap",
        "z": np.asarray(z, dtype=np.float32),
        "zmin": -1.0,
        "zmax": 1.0,
        "colorscale": ENCODING_COLORS,
        "colorbar": {"title": {"text": colorbar}},
        "hovertemplate": hover,
    }
    layout = {
        "template": TEMPLATE,
        "title": {"text": title},
        "xaxis": {"title": {"text": x_title}},
        "yaxis": {"title": {"text": y_title}, "autorange": "reversed"},
        "height": 420,
        "margin": {"l": 10, "r": 10, "t": 50, "b": 10},
    }
    return go.Figure(data=[heatmap], layout=layout)


def positional_heatmap(table: np.ndarray) -> go.Figure:
    """The whole positional-encoding table, position × dimension.

    Args:
        table: (P, D), the model's own table.
    """
    return _matrix_figure(
        table,
        "Positional encoding table (position × dimension)",
        "dimension",
        "position",
        "position %{y}<br>dimension %{x}<br>value %{z:.3f}<extra></extra>",
        "value",
    )


def positional_similarity(table: np.ndarray) -> go.Figure:
    """Cosine similarity between the encodings of every two positions: PE·PEᵀ divided by the norms.

    It depends only on the distance between the two positions, which is how attention can read relative position.

    Args:
        table: (P, D), the model's own table.
    """
    table = np.asarray(table, dtype=np.float32)
    unit = table / np.maximum(np.linalg.norm(table, axis=1, keepdims=True), 1e-12)  # (P, D), rows of length 1
    return _matrix_figure(
        unit @ unit.T,  # (P, P)
        "Similarity of positions (PE·PEᵀ, normalised)",
        "position",
        "position",
        "positions %{y} and %{x}<br>similarity %{z:.3f}<extra></extra>",
        "cosine",
    )
