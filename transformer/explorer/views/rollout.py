"""Rollout tab: attention followed through the layers, read for the pooled output (the tokens' mean, or a Hub
model's first token); ``/rollout``.

Computed from the kept analysis's weights, no model call. Shape letters: L = layers, N = tokens.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import gradio as gr
import plotly.graph_objects as go
import torch

from ...explain.rollout import attention_rollout, pooled_relevance
from .. import payloads, runner
from ..analysis import Analysis, model_attentions
from ..drawing.attention_maps import attention_heatmap
from ..drawing.colour import colour_scale, excluded_positions
from ..drawing.figures import heatmap, token_labels
from ..inputs import chosen_indices, layer_index, page_number
from ..jsonable import to_jsonable
from ..registry import Drawing, Page, View, layer_choices, read_layer

RESIDUAL_WEIGHT = 0.5
SHOW_VALUES_UP_TO = 24  # the strip prints each share in its cell up to this many tokens (the Attributions heatmap's)


@dataclass(frozen=True)
class RolloutView:
    """Attention rollout after every layer, and what the mean-pooled output takes from each token.

    Shape:
        rollout: (L, N, N), rows summing to 1; pooled: (L, N), each row summing to 1.
    """

    text: str
    tokens: list[str]
    residual_weight: float
    rollout: torch.Tensor
    pooled: torch.Tensor


def rollout_view(result: Analysis) -> RolloutView:
    """Attention rollout from the analysis's weights (no model call)."""
    rollout = attention_rollout(model_attentions(result), RESIDUAL_WEIGHT)  # (L, N, N)
    pooling = runner.get_model()[0].model.pooling
    return RolloutView(result.text, result.tokens, RESIDUAL_WEIGHT, rollout, pooled_relevance(rollout, pooling))


def rollout_figure(shares: torch.Tensor, tokens: list[str]) -> go.Figure:
    """Per layer, how much the pooled output takes from each token according to rollout (``pooled_relevance``:
    the tokens' mean of the rollout's rows, or its first token's row).

    The shares sum to 1 and mixing pulls them towards 1/N, so the colour shows the share minus
    1/N (red: more than an even share); the numbers are the shares, printed up to ``SHOW_VALUES_UP_TO`` tokens.

    Shape:
        shares: (L, N), ``RolloutView.pooled``.
    """
    return heatmap(
        shares,
        token_labels(tokens),
        [f"after layer {page_number(i)}" for i in range(shares.size(0))],
        title="Attention rollout read by the pooled output",
        axis_titles=("token", "layer"),
        signed=True,
        colours=shares - 1 / shares.size(-1),
        colour_title="share − 1/N",
        show_values=len(tokens) <= SHOW_VALUES_UP_TO,  # past it they overprint into a black line (hover has them)
    )


def show_rollout(result: Analysis | None, layer, scale: str, leave_out: list[str] | None) -> tuple:
    """(shares of the pooled output per layer, the rollout matrix after ``layer``, from 1); no model call."""
    if result is None:
        return None, None
    view = rollout_view(result)
    with runner.clear_errors():
        index = layer_index(layer, view.rollout.size(0))
    matrix = attention_heatmap(
        view.tokens,
        view.rollout[index],
        f"Rollout after layer {page_number(index)}: where each position's representation comes from",
        scale=colour_scale(scale),
        exclude=excluded_positions(view.tokens, leave_out),
        value_name="share",
    )
    return rollout_figure(view.pooled, view.tokens), matrix


def rollout(text: str, layer: int | list[int] | None = None) -> dict:
    """Attention rollout (Abnar & Zuidema 2020) after the layers chosen with ``layer`` (every layer by default), read
    for the mean-pooled output.
    Layers and heads count from 1 and token positions from 0, in every argument and answer.

    Args:
        text: the text to read.
        layer: the layers to answer: one number or a list; none (or []) for every layer. An answer holds at most
            8 MB of maps (at 512 tokens, 2 layers): beyond that, choose some (e.g. the last).

    Returns:
        {"text", "tokens", "residual_weight", "layers" (the chosen ones), for those layers "rollout":
        [layer][query][key] (rows sum to 1) and "pooled": [layer][token]: the pooled output's share of each token,
        the rollout's column means (sum to 1)}.
    """
    view = rollout_view(runner.read_for_api(text))
    num_layers, n = view.rollout.shape[:2]
    with runner.clear_errors("Cannot answer this"):
        layers = chosen_indices(layer, "Layer", num_layers)
        payloads.refuse_past_size(  # a layer's part: its map and its pooled shares, no longer than the map's numbers
            len(layers),
            view.rollout.numpy(),
            n * n + n,
            runner.API_DECIMALS,
            "layers' rollout maps",
            f"layer (e.g. layer={num_layers})",
        )
    chosen = dataclasses.replace(view, rollout=view.rollout[layers], pooled=view.pooled[layers])
    return to_jsonable(chosen, runner.API_DECIMALS) | {"layers": [page_number(index) for index in layers]}


READINGS = {  # how the pooled output reads the rollout, by the model's ``pooling``
    "mean": "**Reading it for this model:** the classifier has no [CLS] token; it averages every final position "
    "(mean pooling). So the pooled output's view of the rollout is the *mean of the rows*, one share per token, "
    "summing to 1.",
    "first": "**Reading it for this model:** the classifier reads the first token's final state (`[CLS]` or `<s>`). "
    "So the pooled output's view of the rollout is the *first row*, one share per token, summing to 1.",
}


def layout(page: Page) -> Drawing:
    gr.Markdown(
        "**Attention rollout** follows attention through the layers: each layer's heads are averaged, "
        "the residual connection is added as the identity (half the weight), rows are renormalised and "
        "the layers are multiplied. Row *i* of the matrix says how much of position *i* after that layer "
        "comes from each input token.\n\n"
        + READINGS[page.model.pooling]
        + " The chart shows those shares after each layer, coloured by how far they are above (red) or below "
        "(blue) an even share 1/N."
    )
    layer = gr.Radio(layer_choices(page.model), value=page.model.num_layers, label="Rollout after layer")
    shares = gr.Plot(label="What the pooled output takes from each token", elem_id="rollout-shares")
    matrix = gr.Plot(label="Rollout matrix", elem_id="rollout-matrix")
    inputs = [page.result, layer, page.scale, page.leave_out]
    return Drawing(show_rollout, inputs, [shares, matrix], [layer.input], {"rollout_layer": layer})


VIEW = View(
    "rollout",
    "Rollout",
    layout,
    params={"rollout_layer": read_layer},
    endpoints={"rollout": rollout},
)
