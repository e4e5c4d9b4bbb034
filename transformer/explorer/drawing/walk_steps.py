"""The Walkthrough's figures, one per step of the tutorial's forward pass: the captured tensors of one sentence
(``explain.walkthrough.Walkthrough``) as panels side by side (``panels``), at the chosen layer and head (from 0).
The view (``views.walkthrough``) says what each step does and shows its code.

Shape letters: N = tokens, D = d_model, H = heads, F = d_ff, C = classes.
"""

from __future__ import annotations

import plotly.graph_objects as go
import torch

from ...explain.walkthrough import Walkthrough
from ..inputs import page_number
from .figures import TEMPLATE, escape, token_labels
from .panels import Panel, panel_figure

TABLE_ROW_PX, TABLE_TOP_PX, TABLE_MAX_PX = 28, 80, 640  # step 1's table of ids: a row, the title, the most shown
CLEAR, TABLE_HEADER, TABLE_LINES = "rgba(0,0,0,0)", "rgba(128,128,128,0.15)", "rgba(128,128,128,0.5)"  # either theme
HEAD_NAMES = {"relu": "ReLU", "gelu": "GELU"}


def token_panel(values: torch.Tensor, tokens: list[str], title: str, column: str, signed: bool = True) -> Panel:
    """A (N, columns) tensor as one panel: one row per token, one column per dimension."""
    return Panel(values, [f"{column}{j}" for j in range(values.size(-1))], token_labels(tokens), title, signed)


def vector_panel(values: torch.Tensor, column: str, title: str, signed: bool = True) -> Panel:
    """One vector as a one-row panel."""
    return Panel(values[None], [f"{column}{j}" for j in range(values.numel())], [""], title, signed)


def tokens_figure(walk: Walkthrough, tokens: list[str], layer: int, head: int) -> go.Figure:
    """A table of the tokens and their ids, printed as whole numbers: an id names a row of the embedding table,
    so its size means nothing and it gets no colour."""
    cells = [list(range(len(tokens))), [escape(token) for token in tokens], walk.token_ids.tolist()]
    # No fill of its own: the text takes the page theme's colour (theme.py), so cells must show the page behind them
    # (plotly's pale cells held near-white text in the dark theme)
    lines = {"color": TABLE_LINES}
    table = go.Table(
        header={"values": ["position", "token", "id"], "align": "left", "fill": {"color": TABLE_HEADER}, "line": lines},
        cells={"values": cells, "align": "left", "format": ["d", None, "d"], "fill": {"color": CLEAR}, "line": lines},
    )
    height = min(TABLE_TOP_PX + TABLE_ROW_PX * (len(tokens) + 1), TABLE_MAX_PX)  # a long sentence scrolls inside
    layout = {"template": TEMPLATE, "title": {"text": "The tokens and their ids"}, "height": height}
    return go.Figure(data=[table], layout=layout | {"margin": {"t": 60, "l": 10, "r": 10, "b": 10}})


def embeddings_figure(walk: Walkthrough, tokens: list[str], layer: int, head: int) -> go.Figure:
    rows = token_panel(walk.embeddings, tokens, "Embedding(ids)", "d")
    if not walk.embedding_scale:
        return panel_figure([rows], "The embedding rows", stacked=True)
    scaled = token_panel(walk.scaled_embeddings, tokens, f"× √{walk.embeddings.size(-1)}", "d")
    return panel_figure([rows, scaled], "The embedding rows, then scaled")


def positions_figure(walk: Walkthrough, tokens: list[str], layer: int, head: int) -> go.Figure:
    parts = [
        token_panel(walk.scaled_embeddings, tokens, "x", "d"),
        token_panel(walk.positions, tokens, "PE[0:N]", "d"),
        token_panel(walk.embedded, tokens, "x + PE", "d"),
    ]
    return panel_figure(parts, "The positional encoding, added")


def layer_norm_figure(walk: Walkthrough, tokens: list[str], layer: int, head: int) -> go.Figure:
    steps = walk.layers[layer]
    parts = [token_panel(steps.block_input, tokens, "x, the block's input", "d")]
    if walk.pre_ln:
        parts.append(token_panel(steps.attention_input, tokens, "LayerNorm(x)", "d"))
    return panel_figure(parts, f"Layer {page_number(layer)}: what attention reads")


def qkv_figure(walk: Walkthrough, tokens: list[str], layer: int, head: int) -> go.Figure:
    steps = walk.layers[layer]
    parts = [
        token_panel(getattr(steps, name)[head], tokens, name[0].upper(), name[0])
        for name in ("queries", "keys", "values")
    ]
    return panel_figure(parts, f"Layer {page_number(layer)}, head {page_number(head)}: Q, K and V")


def scores_figure(walk: Walkthrough, tokens: list[str], layer: int, head: int) -> go.Figure:
    steps, d_k = walk.layers[layer], walk.layers[layer].queries.size(-1)
    keys = token_labels(tokens)
    parts = [
        Panel(steps.scores[head], keys, keys, "Q Kᵀ"),
        Panel(steps.scaled[head], keys, keys, f"÷ √{d_k}"),
        Panel(steps.weights[head], keys, keys, "softmax", signed=False),
    ]
    return panel_figure(parts, f"Layer {page_number(layer)}, head {page_number(head)}: queries (rows) × keys (columns)")


def heads_figure(walk: Walkthrough, tokens: list[str], layer: int, head: int) -> go.Figure:
    steps = walk.layers[layer]
    parts = [
        token_panel(steps.heads[head], tokens, f"weights × V, head {page_number(head)}", "v"),
        token_panel(steps.merged, tokens, f"the {steps.heads.size(0)} heads side by side", "c"),
        token_panel(steps.attention_output, tokens, "× W_o", "d"),
    ]
    return panel_figure(parts, f"Layer {page_number(layer)}: the heads' output")


def residual_figure(walk: Walkthrough, tokens: list[str], layer: int, head: int) -> go.Figure:
    steps = walk.layers[layer]
    total = "x + out" if walk.pre_ln else "LayerNorm(x + out)"
    parts = [
        token_panel(steps.block_input, tokens, "x", "d"),
        token_panel(steps.attention_output, tokens, "out", "d"),
        token_panel(steps.after_attention, tokens, total, "d"),
    ]
    return panel_figure(parts, f"Layer {page_number(layer)}: the residual add")


def feed_forward_figure(walk: Walkthrough, tokens: list[str], layer: int, head: int) -> go.Figure:
    steps = walk.layers[layer]
    D, F = steps.ffn_output.size(-1), steps.ffn_hidden.size(-1)
    parts = [
        token_panel(steps.ffn_input, tokens, "LayerNorm(x)" if walk.pre_ln else "x", "d"),
        token_panel(steps.ffn_hidden, tokens, f"Linear {D}→{F}", "f"),
        token_panel(steps.ffn_activated, tokens, "GELU", "f"),
        token_panel(steps.ffn_output, tokens, f"Linear {F}→{D}", "d"),
        token_panel(steps.block_output, tokens, "x + FFN" if walk.pre_ln else "LayerNorm(x + FFN)", "d"),
    ]
    return panel_figure(parts, f"Layer {page_number(layer)}: the feed-forward network and its residual")


def blocks_figure(walk: Walkthrough, tokens: list[str], layer: int, head: int) -> go.Figure:
    parts = [token_panel(steps.block_output, tokens, f"after block {i}", "d") for i, steps in enumerate(walk.layers, 1)]
    return panel_figure(parts, "The residual stream after each block")


def pooling_figure(walk: Walkthrough, tokens: list[str], layer: int, head: int) -> go.Figure:
    parts = [
        token_panel(walk.final_norm, tokens, "LayerNorm(x)", "d"),
        vector_panel(walk.pooled, "d", "mean over the tokens"),
    ]
    return panel_figure(parts, "The final LayerNorm, then one vector for the sentence", stacked=True)


def classifier_figure(walk: Walkthrough, tokens: list[str], layer: int, head: int) -> go.Figure:
    D, C = walk.pooled.numel(), walk.logits.numel()
    classes = [escape(name) for name in walk.label_names]
    parts = [
        vector_panel(walk.hidden, "h", f"Linear {D}→{walk.hidden.numel()}"),
        vector_panel(walk.activated, "h", HEAD_NAMES[walk.head_activation]),
        Panel(walk.logits[None], classes, [""], f"Linear → {C} logits"),
        Panel(walk.probabilities[None], classes, [""], "softmax", signed=False),
    ]
    return panel_figure(parts, "The classifier", stacked=True)
