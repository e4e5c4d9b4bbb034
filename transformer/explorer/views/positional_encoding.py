"""Positional-encoding tab: the model's own sinusoidal table, its curves against position with the
sentence's tokens marked, and how similar the encodings of two positions are.

Drawn by the page with every analysis (``main``); choosing other dimensions redraws the curves only. The
two tables depend on the model alone: they are sent once a session, when the tab is first drawn, rather
than with every page (about 240 KB).

Shape letters: P = positions (the model's max_len), D = d_model, N = tokens.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import gradio as gr
import numpy as np
import plotly.graph_objects as go

from ...interface import SINUSOIDAL_POSITIONS
from .. import analysis, runner
from ..analysis import Analysis
from ..drawing.figures import ENCODING_COLORS, LEGEND_BELOW, TEMPLATE, token_labels
from ..registry import Drawing, Page, PageValues, View


def show_positions(result: Analysis | None, dims: list[int] | None) -> go.Figure:
    """Redraw the curves for the chosen dimensions, marking the kept analysis's tokens."""
    table = analysis.positional_table(runner.get_model()[0].model)  # (P, D)
    dims = [dims] if isinstance(dims, int) else dims or []  # a single dimension, sent by an API caller
    dims = sorted({dim for dim in map(int, dims) if 0 <= dim < table.shape[1]})
    return positional_curves(table, dims, result.tokens if result is not None else ())


def show_encodings(result: Analysis | None, dims: list[int] | None, tables_drawn: bool | None) -> tuple:
    """The tab: its curves, and the model's two tables unless this session has them already.

    Returns:
        (curves, table, similarity, True): the tables as ``gr.skip()`` once drawn.
    """
    curves = show_positions(result, dims)
    if tables_drawn:
        return curves, gr.skip(), gr.skip(), True
    return curves, *model_tables(runner.get_model()[0].model), True


@functools.lru_cache(maxsize=1)
def model_tables(model) -> tuple[go.Figure, go.Figure]:
    """The model's table and the similarity of its positions: the same for every session, so built once."""
    table = analysis.positional_table(model)  # (P, D)
    return positional_heatmap(table), positional_similarity(table)


def positional_curves(table: np.ndarray, dims: Sequence[int], tokens: Sequence[str] = ()) -> go.Figure:
    """Selected dimensions of the positional-encoding table against position, the sentence's tokens marked.

    Args:
        table: (P, D), the model's own table.
        dims: the dimensions to draw.
        tokens: the sentence's N tokens; their positions 0..N-1 get markers and a shaded band.
    """
    colours = TEMPLATE.layout.colorway
    traces = [
        trace
        for k, dim in enumerate(dims)
        for trace in _dimension_traces(table, dim, tokens, colours[k % len(colours)])
    ]
    layout = {
        "template": TEMPLATE,
        "title": {"text": "Positional encoding: each dimension is a sine or cosine of the position"},
        "xaxis": {"title": {"text": "position"}},
        "yaxis": {"title": {"text": "value"}, "range": [-1.15, 1.15]},
        "height": 380,
        "margin": {"l": 10, "r": 10, "t": 60, "b": 10},
        "legend": LEGEND_BELOW | {"traceorder": "normal"},  # at a paper y under the axes it lay over the axis title
    }
    return go.Figure(data=traces, layout=layout | (_sentence_band(len(tokens)) if tokens else {}))


def _dimension_traces(table: np.ndarray, dim: int, tokens: Sequence[str], colour: str) -> list[dict]:
    """One dimension's curve over every position, and dots of its ``colour`` at the sentence's tokens (when there are
    any), with a legend entry of their own."""
    positions = np.arange(table.shape[0])
    values = np.asarray(table[:, dim], dtype=np.float32)  # (P,)
    name = f"dim {dim} ({'sin' if dim % 2 == 0 else 'cos'})"
    curve = {
        "type": "scatter",
        "x": positions,
        "y": values,
        "mode": "lines",
        "name": name,
        "legendgroup": name,
        "line": {"color": colour},
        "hovertemplate": f"{name}<br>position %{{x}}: %{{y:.3f}}<extra></extra>",
    }
    if not tokens:
        return [curve]
    n = len(tokens)
    markers = {
        "type": "scatter",
        "x": positions[:n],
        "y": values[:n],
        "mode": "markers",
        "name": f"{name} at your tokens",
        "legendgroup": name,
        "text": token_labels(tokens),
        "marker": {"size": 7, "color": colour, "line": {"width": 1, "color": "white"}},
        "hovertemplate": f"token %{{text}}<br>{name}: %{{y:.3f}}<extra></extra>",
    }
    return [curve, markers]


def _sentence_band(n: int) -> dict:
    """Layout additions that shade and name positions 0..n-1, the sentence's."""
    band = {
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
    label = {
        "x": -0.5,
        "y": 1,
        "xref": "x",
        "yref": "paper",
        "text": f"your {n} tokens",
        "showarrow": False,
        "xanchor": "left",
        "yanchor": "bottom",
    }
    return {"shapes": [band], "annotations": [label]}


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


def draw_main(result: Analysis | None, values: PageValues) -> go.Figure:
    """The curves the page draws with each analysis, for its dimensions."""
    return show_positions(result, values.dims)


def explanation(model) -> str:
    """What the table is, for the tutorial's sinusoids or a Hub model's learned position embeddings."""
    size = f"{model.max_len} positions × {model.d_model} dimensions"
    if SINUSOIDAL_POSITIONS not in model.capabilities:
        return (
            f"The model adds row *p* of this table to the embedding of the token at position *p*. This model "
            f"learned its table in training ({size}), where the tutorial's is fixed sines and cosines: nothing "
            "makes its rows smooth or periodic, so the curves show what training found useful."
        )
    return (
        f"The model adds row *p* of this table to the embedding of the token at position *p* "
        f"({embedding_scaling(model)}). The table is this model's own: {size}."
        + ("" if model.use_positional_encoding else " **This model was trained without it.**")
    )


def embedding_scaling(model) -> str:
    """What the tutorial's model does to the embedding before adding the row: its config's ``embedding_scale``."""
    if model.embedding_scale:
        return f"embeddings are scaled by √{model.d_model} ≈ {model.d_model**0.5:.1f} first"
    return "the embedding as looked up, unscaled: this model has no √d_model factor"


def layout(page: Page) -> Drawing:
    gr.Markdown(explanation(page.model))
    page.dims.render()
    curves = gr.Plot(label="Encoding against position", elem_id="pe-curves")
    with gr.Row():
        table = gr.Plot(label="The table", elem_id="pe-table")
        similarity = gr.Plot(label="Relative position", elem_id="pe-similarity")
    tables_drawn = gr.State(False)
    outputs = [curves, table, similarity, tables_drawn]
    return Drawing(show_encodings, [page.result, page.dims, tables_drawn], outputs, [page.dims.input])


VIEW = View("positional-encoding", "Positional encoding", layout, main=draw_main, colour_scale=False)
