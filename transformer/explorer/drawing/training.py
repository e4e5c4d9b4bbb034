"""The Training tab's figures: a sentence's class probabilities across checkpoints with the step where its prediction
settles, the behavioural suite's failure rate per capability across them, and every head's role at each one.

The checkpoints sit evenly along the x axis, labelled by step: they are log-spaced, so a step axis would crowd
the early ones (where the model changes most) into its first pixels.
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go
import torch
from plotly.colors import qualitative

from ...explain.atlas import ROLE_NAMES
from .figures import CLASS_COLOURS, LEGEND_BELOW, TEMPLATE, escape

BROAD_ROLES = ("broad", "mixed")  # the roles a head has when no behaviour reaches the atlas's threshold
ROLE_ORDER = (*ROLE_NAMES.values(), *BROAD_ROLES)
# One light colour per role (dark text stays legible on each), as a stepless scale over the roles' indices
ROLE_COLOURS = [[i / len(ROLE_ORDER), colour] for i, colour in enumerate(qualitative.Set3[: len(ROLE_ORDER) + 1])]


def step_labels(steps: Sequence[int]) -> list[str]:
    """The x axis's labels: one per checkpoint, its step."""
    return [f"step {step:,}" for step in steps]


def across_checkpoints(steps: Sequence[int], lines: dict[str, list[float]], title: str, yaxis: dict, shown: str):
    """One line per entry of ``lines`` ({name, escaped here: a value per checkpoint}) over the checkpoints, each
    value hovered as ``shown`` (a plotly format of ``y``), the legend below; a figure taller with more lines."""
    figure = go.Figure()
    for k, (name, values) in enumerate(lines.items()):
        figure.add_trace(
            go.Scatter(
                x=step_labels(steps),
                y=values,
                mode="lines+markers",
                name=escape(name),
                line={"color": CLASS_COLOURS[k]} if len(lines) <= len(CLASS_COLOURS) else None,
                hovertemplate=f"{escape(name)}<br>%{{x}}: {shown}<extra></extra>",
            )
        )
    figure.update_layout(
        template=TEMPLATE,
        title=title,
        yaxis=yaxis,
        xaxis={"type": "category", "title": "checkpoint"},
        legend=LEGEND_BELOW,
        height=340 + 20 * len(lines),
        margin={"t": 60, "b": 60 + 20 * len(lines)},
    )
    return figure


def probability_figure(
    steps: Sequence[int], probabilities: torch.Tensor, label_names: Sequence[str], settled: int
) -> go.Figure:
    """P(class) at each checkpoint, a line per class, and a dashed line at the checkpoint where the prediction settles.

    Shape:
        probabilities: (K, C).
    """
    lines = {f"P({name})": probabilities[:, c].tolist() for c, name in enumerate(label_names)}
    yaxis = {"range": [0, 1.1], "title": "probability"}
    title = "The sentence's prediction at each training checkpoint"
    figure = across_checkpoints(steps, lines, title, yaxis, "%{y:.3f}")
    figure.add_vline(x=settled, line_dash="dash", line_color="#555")
    figure.add_annotation(x=settled, y=1.04, text=f"settles at step {steps[settled]:,}", showarrow=False, yref="y")
    return figure


def capabilities_figure(training: dict) -> go.Figure:
    """The behavioural suite's failure rate per capability (a line each, both parts of the suite) at each
    checkpoint of ``training.json``."""
    rows: dict[str, list[float]] = {}
    for checkpoint in training["checkpoints"]:
        for row in checkpoint["capabilities"]:
            rows.setdefault(f"{row['capability']} ({row['part']})", []).append(row["failure_rate"])
    title = "The behavioural suite across training: failure rate per capability"
    yaxis = {"range": [0, 1], "title": "failure rate", "tickformat": ".0%"}
    return across_checkpoints(training["steps"], rows, title, yaxis, "%{y:.1%} failed")


def roles_figure(training: dict) -> go.Figure:
    """Every head's atlas role (a row per head) at each checkpoint (a column), coloured by role and written in."""
    roles = [checkpoint["roles"] for checkpoint in training["checkpoints"]]  # K x L x H
    heads = [(layer, head) for layer in range(len(roles[0])) for head in range(len(roles[0][0]))]
    text = [[roles[k][layer][head] for k in range(len(roles))] for layer, head in heads]  # (L·H, K)
    order = {role: i for i, role in enumerate(ROLE_ORDER)}
    z = [[order.get(role, len(ROLE_ORDER)) for role in row] for row in text]  # (L·H, K)
    figure = go.Figure(
        go.Heatmap(
            z=z,
            x=step_labels(training["steps"]),
            y=[f"L{layer + 1} H{head + 1}" for layer, head in heads],  # counted from 1, as everywhere on the page
            text=text,
            texttemplate="%{text}",
            colorscale=ROLE_COLOURS,
            zmin=0,
            zmax=len(ROLE_ORDER),
            showscale=False,
            hovertemplate="%{y} at %{x}: %{text}<extra></extra>",
            xgap=2,
            ygap=2,
        )
    )
    figure.update_layout(
        template=TEMPLATE,
        title="Each head's role at each checkpoint (the head atlas's rule)",
        yaxis={"autorange": "reversed", "title": "head"},
        xaxis={"type": "category", "title": "checkpoint"},
        height=120 + 34 * len(heads),
        margin={"t": 60},
    )
    return figure
