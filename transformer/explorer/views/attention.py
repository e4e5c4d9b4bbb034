"""Attention tab: one layer's head (or the mean of its heads) as a heatmap, and the ``/attention`` endpoint.

Drawn by the page with every analysis (``main``); a new layer or head redraws from the kept analysis.
"""

from __future__ import annotations

import gradio as gr
import plotly.graph_objects as go

from .. import payloads, runner
from ..analysis import Analysis
from ..controls import weighting
from ..drawing.attention_maps import attention_heatmap
from ..drawing.colour import colour_scale, excluded_positions
from ..inputs import layer_head, page_number
from ..registry import Drawing, Page, PageValues, View


def show_head(
    result: Analysis | None,
    layer: int,
    head: str,
    scale: str = "global",
    leave_out: list[str] | None = None,
    measure: str = weighting.WEIGHTS,
) -> go.Figure | None:
    """Redraw the one-head heatmap from the kept analysis (no model call); ``head`` is "1".."H" or "mean";
    ``measure`` the weights or weight × ‖f(x)‖ (``weighting``)."""
    if result is None:
        return None
    with runner.clear_errors():
        layer_index, head_index = layer_head(layer, head, *result.attentions.shape[:2], mean=True)
    layer_weights = weighting.attentions(result, measure)[layer_index]  # (H, N, N)
    weights = layer_weights.mean(axis=0) if head_index is None else layer_weights[head_index]
    which = "mean of all heads" if head_index is None else f"head {page_number(head_index)}"
    return attention_heatmap(
        result.tokens,
        weights,
        f"Layer {page_number(layer_index)}, {which}: who attends to whom",
        scale=colour_scale(scale),
        exclude=excluded_positions(result.tokens, leave_out),
        value_name=weighting.value_name(measure),
    )


def attention(text: str, layer: int | list[int] | None = None, head: int | list[int] | None = None) -> dict:
    """The attention weights of the heads chosen with ``layer`` and ``head`` (every head by default) for a text.
    Layers and heads count from 1 and token positions from 0, in every argument and answer.

    Args:
        text: the text to read (at most 10,000 characters; the model reads its first max_len tokens).
        layer: the layers to answer: one number or a list; none (or []) for every layer.
        head: the heads of those layers to answer: one number or a list; none (or []) for every head. An answer
            holds at most 8 MB of maps (at 512 tokens, 3 heads): beyond that, choose some.

    Returns:
        {"tokens": [...], "offsets": [[start, end], ...], "truncated": bool, "layers", "heads" (the chosen ones),
        "attentions": [layer][head][query][key] for those layers and heads} (weights rounded to 4 decimals; each
        query row sums to 1).
    """
    result = runner.read_for_api(text)
    with runner.clear_errors("Cannot answer this"):
        return payloads.attention_payload(result, layer, head)


def draw_main(result: Analysis | None, values: PageValues) -> go.Figure | None:
    """The heatmap the page draws with each analysis, for its layer, head, colour controls and weighting."""
    measure = values.controls.get("weighting", weighting.WEIGHTS)
    return show_head(result, values.layer, values.head, values.scale, values.leave_out, measure)


def layout(page: Page) -> Drawing:
    gr.Markdown(
        "Who attends to whom in one layer: each row is a token (the query) and shows how it shares its attention "
        "over every token (the keys); a stronger colour is more weight, and each row adds up to 1. Pick one head or "
        "the mean of the layer's heads. " + weighting.NOTE
    )
    with gr.Row():
        page.layer.render()
        page.head.render()
        measure_control = weighting.control("attention-weighting")
    heatmap = gr.Plot(label="Attention: one head or the mean of the heads", elem_id="attention-heatmap")
    inputs = [page.result, page.layer, page.head, page.scale, page.leave_out, measure_control]
    triggers = [page.layer.input, page.head.input, measure_control.input]
    return Drawing(show_head, inputs, [heatmap], triggers, {"weighting": measure_control})


VIEW = View(
    "attention",
    "Attention",
    layout,
    params={"weighting": weighting.read},
    endpoints={"attention": attention, "attention_norms": weighting.attention_norms},
    main=draw_main,
)
