"""The Patching tab's figures: the share restored per stage × position and per head, and the class read out after
every layer. Pure functions of the tab's numbers.

Shape letters: L = layers, H = heads, N = tokens, C = classes.
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go
import torch

from ..inputs import page_number
from .figures import TEMPLATE, TOUCH, escape, heads_heatmap, heatmap, token_labels

COLOURS = TEMPLATE.layout.colorway


def stage_labels(num_layers: int) -> list[str]:
    """The L + 1 stages, as the page names them: stage 0 is the embeddings' output, stage s leaves layer s."""
    return ["after the embeddings", *(f"after layer {page_number(layer)}" for layer in range(num_layers))]


def pair_labels(tokens: Sequence[str], source_tokens: Sequence[str]) -> list[str]:
    """Each position's token in the patched sentence, with the other sentence's after a slash where they differ."""
    pairs = zip(token_labels(tokens), token_labels(source_tokens), strict=True)
    return [mine if mine == theirs else f"{mine} / {theirs.split(' ', 1)[1]}" for mine, theirs in pairs]


def _limit(values: torch.Tensor) -> float:
    """The colour range's top: 1 (all of the difference restored), or more when a patch overshoots."""
    return max(1.0, values.abs().nan_to_num().max().item() if values.numel() else 0.0)


def restored_figure(restored: torch.Tensor, tokens: Sequence[str], source_tokens: Sequence[str], into: str):
    """Stages × positions: the share of the logit difference one patched residual vector brings back.

    Args:
        restored: (L + 1, N), stage 0 = after the embeddings.
        tokens, source_tokens: the patched sentence's tokens and the other's (escaped here).
        into: which sentence is rerun, "A" or "B".
    """
    return heatmap(
        restored,
        pair_labels(tokens, source_tokens),
        stage_labels(restored.size(0) - 1),
        title=f"Share of the logit difference restored by one vector patched into {into}",
        axis_titles=("position", "stage"),
        signed=True,
        colour_title="restored",
        show_values=restored.size(1) <= 16,
        limit=_limit(restored),
    )


def heads_figure(heads: torch.Tensor, into: str) -> go.Figure:
    """Layers × heads: the share restored by one head's output, at every position, patched into ``into``.

    Shape:
        heads: (L, H).
    """
    return heads_heatmap(
        heads,
        title=f"Share restored by one head's output patched into {into}",
        colour_title="restored",
        limit=_limit(heads),
    )


def readout_figure(readouts: dict[str, torch.Tensor], label: str, target: int) -> go.Figure:
    """P(``label``) read out after every stage, one line per sentence.

    Args:
        readouts: sentence name ("A", "B") -> its probabilities, (L + 1, C).
        label: the class's name (escaped here); ``target`` its index.
    """
    stages = stage_labels(next(iter(readouts.values())).size(0) - 1)
    traces = [
        go.Scatter(
            x=stages,
            y=probabilities[:, target].tolist(),
            mode="lines+markers",
            name=f"sentence {escape(name)}",
            line={"color": COLOURS[k % len(COLOURS)]},
            hovertemplate=f"sentence {escape(name)}, %{{x}}: P = %{{y:.3f}}<extra></extra>",
        )
        for k, (name, probabilities) in enumerate(readouts.items())
    ]
    figure = go.Figure(traces)
    figure.update_layout(
        template=TEMPLATE,
        title=f"P({escape(label)}) read out after every layer",
        yaxis={"range": [0, 1], "title": f"P({escape(label)})"},
        xaxis={"type": "category"},
        height=320,
        margin={"t": 60, "l": 10, "r": 10, "b": 10},
        **TOUCH,
    )
    return figure
