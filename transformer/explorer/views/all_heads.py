"""All-heads tab: every layer's and head's attention as small multiples on one colour scale."""

from __future__ import annotations

import gradio as gr
import plotly.graph_objects as go

from ..analysis import Analysis
from ..controls import weighting
from ..drawing.attention_maps import attention_grid
from ..drawing.colour import colour_scale, excluded_positions
from ..registry import Drawing, Page, PageValues, View


def show_grid(
    result: Analysis | None, scale: str = "global", leave_out: list[str] | None = None, measure: str = weighting.WEIGHTS
) -> go.Figure | None:
    """Redraw every layer's and head's attention, or weight × ‖f(x)‖ (``measure``), from the kept analysis (no model
    call)."""
    if result is None:
        return None
    return attention_grid(
        result.tokens,
        weighting.attentions(result, measure),
        scale=colour_scale(scale),
        exclude=excluded_positions(result.tokens, leave_out),
        value_name=weighting.value_name(measure),
    )


def draw_main(result: Analysis | None, values: PageValues) -> go.Figure | None:
    """The grid the page draws with each analysis, for its colour controls and weighting."""
    return show_grid(result, values.scale, values.leave_out, values.controls.get("grid_weighting", weighting.WEIGHTS))


def layout(page: Page) -> Drawing:
    gr.Markdown(
        "Every head of every layer at once, one small heatmap each (rows: layers, columns: heads) on one colour "
        "scale, so you can spot the heads that look at the previous token, at themselves or at one word. "
        + weighting.NOTE
    )
    measure_control = weighting.control("grid-weighting")
    grid = gr.Plot(label="Every layer and head", elem_id="attention-grid")
    inputs = [page.result, page.scale, page.leave_out, measure_control]
    return Drawing(show_grid, inputs, [grid], [measure_control.input], {"grid_weighting": measure_control})


VIEW = View("all-heads", "All heads", layout, params={"grid_weighting": weighting.read}, main=draw_main)
