"""Inside-one-head tab: raw scores QKᵀ, scaled QKᵀ/√d_k, softmax with and without the scaling, and every
query's entropy; the ``/head_internals`` endpoint.

Shape letters: N = tokens.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import gradio as gr
import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from ...explain.head import HeadScores, head_scores
from .. import payloads, runner
from ..analysis import Analysis, sentence_ids
from ..drawing.figures import STACKED_ON_PHONE, TEMPLATE, token_labels
from ..inputs import chosen_indices, layer_head, number, page_numbers, pick_position, token_choices
from ..jsonable import to_jsonable
from ..registry import (
    Drawing,
    Page,
    View,
    head_choices,
    kept_control,
    layer_choices,
    read_head,
    read_layer,
)

# Blue for anything with the 1/√d_k scaling, orange for without.
_SCALED_COLOUR, _UNSCALED_COLOUR = "#1f77b4", "#ff7f0e"

TITLE = "Inside one head"
ROW_MAPS = ("raw", "scaled", "weights", "weights_unscaled")  # (N, N) each: /head_internals answers chosen rows


@dataclass(frozen=True)
class HeadView:
    """One head's raw scores, scaled scores, softmax and entropy for every query (layer and head from 1)."""

    text: str
    tokens: list[str]
    scores: HeadScores


def head_view(model, tokenizer, result: Analysis, layer: int = 1, head: int = 1) -> HeadView:
    """Inside one head (``layer`` and ``head`` from 1): its scores for every query, with and without scaling."""
    layer_index, head_index = layer_head(layer, head, model.num_layers, model.num_heads)
    scores = head_scores(model, sentence_ids(model, result), layer_index, head_index)
    return HeadView(text=result.text, tokens=result.tokens, scores=page_numbers(runner.on_cpu(scores)))


def _with_and_without_scaling(labels: list[str], scaled: torch.Tensor, unscaled: torch.Tensor, legend: bool):
    """A pair of bar traces, one colour for "with 1/√d_k" and one for "without", shared by two panels.

    Shape:
        scaled, unscaled: (N,).
    """
    return [
        go.Bar(x=labels, y=values.tolist(), name=name, marker_color=colour, legendgroup=name, showlegend=legend)
        for name, values, colour in (("with 1/√d_k", scaled, _SCALED_COLOUR), ("without", unscaled, _UNSCALED_COLOUR))
    ]


def head_figure(scores: HeadScores, tokens: list[str], query: int) -> go.Figure:
    """Inside one head for one query: raw QKᵀ, QKᵀ/√d_k, the softmax of each, and every query's entropy.

    Args:
        scores: from ``head_scores``, layer and head counted from 1 (``page_numbers``).
        tokens: token strings.
        query: the query position shown in the first three panels.
    """
    labels = token_labels(tokens)
    titles = ["raw scores QKᵀ", f"scaled QKᵀ/√{scores.d_k}", "softmax weights", "entropy per query (nats)"]
    figure = make_subplots(rows=1, cols=4, subplot_titles=titles)
    for col, (name, values, colour) in enumerate(
        [("raw", scores.raw[query], _UNSCALED_COLOUR), ("scaled", scores.scaled[query], _SCALED_COLOUR)], start=1
    ):
        figure.add_trace(
            go.Bar(x=labels, y=values.tolist(), name=name, marker_color=colour, showlegend=False), row=1, col=col
        )
    figure.add_traces(
        _with_and_without_scaling(labels, scores.weights[query], scores.weights_unscaled[query], legend=True),
        rows=1,
        cols=3,
    )
    figure.add_traces(
        _with_and_without_scaling(labels, scores.entropy, scores.entropy_unscaled, legend=False), rows=1, cols=4
    )
    figure.add_hline(y=scores.max_entropy, line_dash="dot", annotation_text="log N (uniform)", row=1, col=4)
    figure.update_xaxes(type="category", tickangle=-45)
    figure.update_layout(
        template=TEMPLATE,
        barmode="group",
        title=(  # the label is escaped already; the rest is ours
            f"Layer {scores.layer}, head {scores.head}, query {labels[query]}: mean entropy "
            f"{scores.mean_entropy:.2f} with scaling, {scores.mean_entropy_unscaled:.2f} without"
        ),
        margin={"t": 80, "l": 10, "r": 10, "b": 10},
        **STACKED_ON_PHONE,
    )
    return figure


def head_panel(view: HeadView, query) -> tuple[go.Figure, str]:
    """Inside one head for the query at position ``query`` (another sentence's choice falls back to 0)."""
    scores = view.scores
    query = pick_position(query, len(view.tokens))
    summary = (
        f"<p>Mean attention entropy over the queries: <b>{scores.mean_entropy:.3f}</b> nats with the 1/√d_k "
        f"scaling (d_k = {scores.d_k}), <b>{scores.mean_entropy_unscaled:.3f}</b> without; a uniform row has "
        f"log N = {scores.max_entropy:.3f}. Without the scaling the scores spread √d_k times wider, the softmax "
        "saturates and the entropy drops: that is why attention divides by √d_k.</p>"
    )
    return head_figure(scores, view.tokens, query), summary


def show_inside_head(result: Analysis | None, layer: int, head: int, query, kept: tuple | None) -> tuple:
    """(figure, entropy summary, query choices, kept view); a new query only redraws."""
    if result is None:
        return None, "", gr.Dropdown(choices=[], value=None), None
    kept = runner.kept_view(kept, head_view, result, layer=layer, head=head)
    position = pick_position(query, len(result.tokens))
    figure, summary = head_panel(kept[1], position)
    return figure, summary, kept_control(query, position, choices=token_choices(result.tokens)), kept


def head_internals(text: str, layer: int = 1, head: int = 1, query: int | list[int] | None = None) -> dict:
    """Inside one head (layer and head from 1): raw scores QKᵀ, scaled QKᵀ/√d_k, softmax and entropy.
    Layers and heads count from 1 and token positions from 0, in every argument and answer.

    Args:
        text: the text to read.
        layer: the layer, from 1.
        head: the head, from 1.
        query: the query positions whose rows of the four maps to answer: one number or a list; none (or []) for
            every query. An answer holds at most 8 MB of rows (at 512 tokens, about 340 of a head's 512): beyond
            that, choose some.

    Returns:
        {"tokens", "queries" (the chosen ones), "scores": {"layer", "head" (from 1, as sent), "d_k", "raw",
        "scaled", "weights", "weights_unscaled": [query][key] for those queries, "entropy", "entropy_unscaled":
        [query] for every query (nats), "mean_entropy", ...}}.
    """
    view = runner.explain(head_view, runner.read_for_api(text), layer=layer, head=head)
    scores, n = view.scores, len(view.tokens)
    with runner.clear_errors("Cannot answer this"):
        queries = chosen_indices(query, "Query position", n, first=0)
        maps = torch.stack([getattr(scores, name) for name in ROW_MAPS], dim=1)  # 4 × (N, N) -> (N, 4, N)
        payloads.refuse_past_size(
            len(queries), maps.numpy(), len(ROW_MAPS) * n, runner.API_DECIMALS, "queries' rows", "query (e.g. query=0)"
        )
    rows = {name: getattr(scores, name)[queries] for name in ROW_MAPS}  # each (queries, N)
    chosen = dataclasses.replace(view, scores=dataclasses.replace(scores, **rows))
    return to_jsonable(chosen, runner.API_DECIMALS) | {"queries": queries}


def layout(page: Page) -> Drawing:
    gr.Markdown(
        "One head, step by step, for one query token: the raw scores QKᵀ, the scaled scores QKᵀ/√d_k, and "
        "the softmax weights with and without the scaling; then every query's attention entropy (how "
        "spread out its weights are) with and without it."
    )
    with gr.Row():
        layer = gr.Radio(layer_choices(page.model), value=1, label="Layer")
        head = gr.Radio(head_choices(page.model), value=1, label="Head")
        query = gr.Dropdown(choices=[], label="Query token", allow_custom_value=True, elem_id="query")
    summary = gr.HTML(elem_id="head-summary")
    plot = gr.Plot(label="Inside the head", elem_id="head-plot")
    kept = gr.State()
    return Drawing(
        show_inside_head,
        [page.result, layer, head, query, kept],
        [plot, summary, query, kept],
        [layer.input, head.input, query.input],
        {"head_layer": layer, "head_head": head, "query": query},
    )


VIEW = View(
    "inside-head",
    TITLE,
    layout,
    params={
        "head_layer": read_layer,
        "head_head": read_head,
        "query": lambda value, r: number(value, 0, r.tokens - 1),
    },
    endpoints={"head_internals": head_internals},
    colour_scale=False,
)
