"""Token-embeddings tab: a 2-D PCA map of the sentence's token vectors before the first layer and after each
one, so you can watch attention mix the tokens (they drift together as each borrows from the others).

The stages are the model's ``hidden_states``, the tutorial's model and a Hub model alike; a Hub model's
special tokens ([CLS] and [SEP], or <s> and </s>) are part of its sentence and are drawn with the words.

Each stage gets its own PCA (the stages differ in scale), with a fixed sign: a component's largest
coordinate is positive, so the same sentence always draws the same map.

Shape letters: S = stages (L + 1), N = tokens, D = d_model, K = 2 principal components.
"""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr
import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from ...interface import TUTORIAL_BLOCKS
from .. import runner
from ..analysis import Analysis, sentence_ids
from ..drawing.figures import STACKED_ON_PHONE, TEMPLATE, token_labels
from ..registry import Drawing, Page, View

TITLE = "Token embeddings"
# Two labels overlap when they are closer than about this share of a map's width and of its height: a short token
# in one of three maps side by side, a line of text in a 440-pixel figure.
LABEL_GAP = (0.25, 0.1)


@dataclass(frozen=True)
class EmbeddingsView:
    """The token vectors at every stage, projected on each stage's first two principal components.

    Shape:
        coordinates: (S, N, 2); explained: (S, 2), the share of the variance each component holds;
        spread: (S,), the tokens' mean cosine similarity to their mean (1: all alike, mixed).
    """

    tokens: list[str]
    coordinates: torch.Tensor
    explained: torch.Tensor
    spread: torch.Tensor


def principal_map(states: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Project points on their first two principal components, signs fixed (largest coordinate positive).

    Shape:
        states: (N, D). Returns (coordinates (N, 2), explained variance shares (2,)); missing components are 0.
    """
    centred = states - states.mean(dim=0, keepdim=True)  # (N, D)
    u, s, _ = torch.linalg.svd(centred.double(), full_matrices=False)  # u: (N, R), s: (R,)
    coordinates = (u * s)[:, :2]  # (N, min(R, 2))
    biggest = coordinates.abs().argmax(dim=0)  # (K,): the point that fixes each component's sign
    signs = coordinates.gather(0, biggest[None]).sign()  # (1, K)
    coordinates = coordinates * signs.masked_fill(signs == 0, 1.0)  # (N, K)
    variance = s.pow(2)
    explained = variance[:2] / variance.sum().clamp_min(1e-12)  # (K,)
    pad = 2 - coordinates.size(1)  # one token (or fewer dimensions) gives fewer than two components
    coordinates = torch.nn.functional.pad(coordinates, (0, pad))
    explained = torch.nn.functional.pad(explained, (0, pad))
    return coordinates.float(), explained.float()


@torch.no_grad()
def embeddings_view(model, tokenizer, result: Analysis) -> EmbeddingsView:
    """The sentence's token vectors entering layer 1 (the embedding layer's output, see ``explanation``) and leaving
    every layer: the model's ``hidden_states``, for the tutorial's model or a Hub model."""
    states = model.hidden_states(sentence_ids(model, result))  # S x (1, N, D); one unpadded sentence, no mask
    stacked = torch.stack([state[0] for state in states]).float().cpu()  # (S, N, D)
    maps = [principal_map(stage) for stage in stacked]
    unit = torch.nn.functional.normalize(stacked, dim=-1)  # (S, N, D)
    centre = torch.nn.functional.normalize(stacked.mean(dim=1, keepdim=True), dim=-1)  # (S, 1, D)
    return EmbeddingsView(
        tokens=result.tokens,
        coordinates=torch.stack([coordinates for coordinates, _ in maps]),  # (S, N, 2)
        explained=torch.stack([explained for _, explained in maps]),  # (S, 2)
        spread=(unit * centre).sum(dim=-1).mean(dim=1),  # (S,)
    )


LABEL_ROOM = (0.12, 0.3)  # of an axis's span, added below and above its points: labels sit above the points
SIDE_ROOM = 0.15  # of the x span, either side: a label is centred on its point


def padded_range(values: torch.Tensor, below: float, above: float) -> list[float]:
    """An axis range around ``values`` with ``below`` and ``above`` of their span (1 when they are all equal) added."""
    low, high = (float(values.min()), float(values.max())) if values.numel() else (0.0, 0.0)
    span = (high - low) or 1.0
    return [low - below * span, high + above * span]


def embeddings_figure(view: EmbeddingsView) -> go.Figure:
    """One PCA scatter per stage, each token labelled (escaped) with its position, coloured by position (with a key).

    Each axis leaves room for the labels, so that the top points' labels stay under the subplot titles.
    """
    stages = view.coordinates.size(0)
    titles = ["before layer 1"] + [f"after layer {layer}" for layer in range(1, stages)]
    titles = [
        f"{title} (PC1+PC2 {float(share.sum()):.0%})" for title, share in zip(titles, view.explained, strict=True)
    ]
    figure = make_subplots(rows=1, cols=stages, subplot_titles=titles)
    labels = token_labels(view.tokens)
    for stage in range(stages):
        points = view.coordinates[stage]  # (N, 2)
        figure.add_trace(
            go.Scatter(
                x=points[:, 0].tolist(),
                y=points[:, 1].tolist(),
                mode="markers+text",
                text=spaced_labels(points, labels),
                customdata=labels,
                textposition="top center",
                cliponaxis=False,
                marker={
                    "size": 8,
                    "color": list(range(len(labels))),
                    "colorscale": "Viridis",
                    "cmin": 0,
                    "cmax": max(len(labels) - 1, 1),
                    "showscale": stage == stages - 1,  # one key for every stage: the same positions
                    "colorbar": {"title": {"text": "token<br>position"}, "thickness": 12},
                },
                hovertemplate="%{customdata}<br>PC1 %{x:.3f}<br>PC2 %{y:.3f}<extra></extra>",
                showlegend=False,
            ),
            row=1,
            col=stage + 1,
        )
        figure.update_xaxes(range=padded_range(points[:, 0], SIDE_ROOM, SIDE_ROOM), row=1, col=stage + 1)
        figure.update_yaxes(range=padded_range(points[:, 1], *LABEL_ROOM), row=1, col=stage + 1)
    figure.update_xaxes(title_text="PC1", zeroline=True)
    figure.update_yaxes(title_text="PC2", zeroline=True)
    figure.update_layout(
        template=TEMPLATE,
        title="Token vectors on their two main directions, stage by stage (colour: position)",
        height=440,
        margin={"t": 100, "l": 10, "r": 10, "b": 10},
        **STACKED_ON_PHONE,
    )
    return figure


def spaced_labels(points: torch.Tensor, labels: list[str]) -> list[str]:
    """``labels`` to print beside the points, "" for a point too close to one labelled before it (in token order),
    so the labels never pile up; every point keeps its label on hover.

    Shape:
        points: (N, 2).
    """
    extent = (points.max(dim=0).values - points.min(dim=0).values).clamp(min=1e-9)  # (2,)
    gap = torch.tensor(LABEL_GAP, dtype=points.dtype)
    scaled = points / extent  # (N, 2): the map's width and height as 1
    shown: list[int] = []
    for i in range(len(labels)):
        if all(((scaled[i] - scaled[j]).abs() >= gap).any() for j in shown):
            shown.append(i)
    return [label if i in shown else "" for i, label in enumerate(labels)]


def show_embeddings(result: Analysis | None, kept: tuple | None) -> tuple:
    """(summary, the PCA maps, kept view): the maps an update, hidden for a text of one token."""
    if result is None:
        return "", None, None
    if len(result.tokens) < 2:  # one point has no main directions: three empty maps headed "PC1+PC2 0 %" said nothing
        said = "<p>This text is one token: there is nothing to compare it with. Type two or more words.</p>"
        return said, gr.update(value=None, visible=False), kept
    kept = runner.kept_view(kept, embeddings_view, result)
    view = kept[1]
    spread = ", ".join(f"{float(value):.2f}" for value in view.spread)
    summary = (
        f"<p>How alike the tokens are, stage by stage (mean cosine similarity to their average, 1 = identical): "
        f"<b>{spread}</b>. Attention mixes each position with the others, so the tokens usually draw together.</p>"
    )
    return summary, gr.update(value=embeddings_figure(view), visible=True), kept


def explanation(model) -> str:
    """The tab's introduction: what a token's vector is before layer 1, the tutorial's embedding plus positional
    encoding or a Hub model's embedding layer (summed embeddings, then LayerNorm), and then after each layer."""
    hub = TUTORIAL_BLOCKS not in model.capabilities  # a Hub model's embedding layer, tokens it adds
    if hub:
        first = (
            "the embedding layer's output: word, position (and, in BERT and RoBERTa, token-type) embeddings "
            "summed, then a LayerNorm"
        )
    elif model.use_positional_encoding:
        first = "its embedding plus positional encoding"
    else:
        first = "its embedding; this model adds no positional encoding"
    return (
        f"Each token's vector as it enters the first layer ({first}) and as it leaves each layer, drawn on that "
        "stage's two main directions (PCA). Watch the words move."
        + (" The tokens the tokenizer adds (`[CLS]` and `[SEP]`, or `<s>` and `</s>`) are drawn too." if hub else "")
    )


def layout(page: Page) -> Drawing:
    gr.Markdown(explanation(page.model))
    summary = gr.HTML(elem_id="embeddings-summary")
    plot = gr.Plot(label="Token vectors by stage", elem_id="embeddings-plot")
    kept = gr.State()
    return Drawing(show_embeddings, [page.result, kept], [summary, plot, kept])


VIEW = View("token-embeddings", TITLE, layout, colour_scale=False)
