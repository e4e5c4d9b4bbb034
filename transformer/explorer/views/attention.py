"""Attention tab: one layer's head (or the mean of its heads) as a heatmap, and the ``/attention`` endpoint.

Drawn by the page with every analysis (``main``); a new layer or head redraws from the kept analysis.
"""

from __future__ import annotations

import gradio as gr
import plotly.graph_objects as go

from .. import analysis, runner
from ..analysis import Analysis
from ..colour import colour_scale, excluded_positions
from ..figures import attention_heatmap
from ..inputs import layer_head
from ..registry import Drawing, Page, View


def show_head(
    result: Analysis | None, layer: int, head: str, scale: str = "global", leave_out: list[str] | None = None
) -> go.Figure | None:
    """Redraw the one-head heatmap from the kept analysis (no model call); ``head`` is "1".."H" or "mean"."""
    if result is None:
        return None
    with runner.clear_errors():
        layer_index, head_index = layer_head(layer, head, *result.attentions.shape[:2], mean=True)
    weights = analysis.attention_matrix(result, layer_index, head_index)
    which = "mean of all heads" if head_index is None else f"head {head_index + 1}"
    return attention_heatmap(
        result.tokens,
        weights,
        f"Layer {layer_index + 1}, {which}: who attends to whom",
        scale=colour_scale(scale),
        exclude=excluded_positions(result.tokens, leave_out),
    )


def attention(text: str) -> dict:
    """Every head's attention weights for a text.
    Layers and heads count from 1 and token positions from 0, in every argument and answer.

    Returns {"tokens": [...], "offsets": [[start, end], ...], "truncated": bool,
    "attentions": [layer][head][query][key]} (weights rounded to 4 decimals; each query row sums to 1).
    """
    return analysis.attention_payload(runner.read_for_api(text))


def layout(page: Page) -> Drawing:
    gr.Markdown(
        "Who attends to whom in one layer: each row is a token (the query) and shows how it shares its attention "
        "over every token (the keys); a stronger colour is more weight, and each row adds up to 1. Pick one head or "
        "the mean of the layer's heads."
    )
    with gr.Row():
        page.layer.render()
        page.head.render()
    heatmap = gr.Plot(label="One head", elem_id="attention-heatmap")
    inputs = [page.result, page.layer, page.head, page.scale, page.leave_out]
    return Drawing(show_head, inputs, [heatmap], [page.layer.input, page.head.input])


VIEW = View("attention", "Attention", layout, endpoints=(attention,), main=True)
