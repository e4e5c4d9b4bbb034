"""The token-embeddings map: one PCA scatter of the sentence's tokens per stage (``explain.embedding_map``), drawn
by the Token embeddings tab and, at each checkpoint, by the Training tab."""

from __future__ import annotations

import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from ...explain.embedding_map import EmbeddingsView
from .figures import STACKED_ON_PHONE, TEMPLATE, token_labels

# Two labels overlap when they are closer than about this share of a map's width and of its height: a short token
# in one of three maps side by side, a line of text in a 440-pixel figure.
LABEL_GAP = (0.25, 0.1)
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
