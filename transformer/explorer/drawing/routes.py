"""The Routes tab's figure: the contribution graph drawn in layers, the tokens along the bottom. A pure function of
the kept edges.

Shape letters: L = layers, N = tokens.

Stage s of position i sits at (i, s); the pooled vector and the class above the last stage, in the middle. An edge is
a line (the feed-forward's bends right, so it never hides the residual's beside it) whose width grows with its
importance, coloured by kind; plotly hovers over points, not lines, so each edge has a marker at its middle that
names it and gives its number.
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from ...explain.route_graph import KINDS, Edge
from ..inputs import head_label, page_number
from .figures import LEGEND_BELOW, TEMPLATE, TOUCH, escape, token_labels
from .patching import stage_labels

COLOURS = dict(zip(KINDS, ("#636efa", "#FFA15A", "#8c8c8c", "#00cc96"), strict=True))
WIDTHS = (1.0, 2.5, 4.5, 7.0)  # line widths for importance in [0, .25), [.25, .5), [.5, .75), [.75, 1]
BEND = 0.3  # how far right of its position the feed-forward's edge bends


def edge_points(edge: Edge, layers: int, middle: float) -> tuple[list[float], list[float]]:
    """The (x, y) points of one edge's line, source first."""
    if edge.kind == "pooling":
        return [edge.source, middle], [layers, layers + 1]
    bend = [edge.source + BEND] if edge.kind == "feed-forward" else []
    return [edge.source, *bend, edge.target], [edge.layer, *([edge.layer + 0.5] if bend else []), edge.layer + 1]


def edge_name(edge: Edge, labels: Sequence[str]) -> str:
    """What the hover says of an edge (labels escaped)."""
    if edge.kind == "head":
        where = f"key {labels[edge.source]} → query {labels[edge.target]}"
        return f"head {head_label(edge.layer, edge.head)}: {where}"
    if edge.kind == "pooling":
        return f"pooling: {labels[edge.source]} → pooled vector"
    return f"{edge.kind} of layer {page_number(edge.layer)} at {labels[edge.source]}"


def edge_traces(edges: Sequence[Edge], labels: Sequence[str], layers: int, middle: float) -> list[dict]:
    """One line trace per kind and width band, then one trace of hover markers at the edges' middles."""
    lines: dict[tuple[str, int], tuple[list, list]] = {}
    hover: tuple[list, list, list, list] = ([], [], [], [])
    for edge in edges:
        xs, ys = edge_points(edge, layers, middle)
        band = min(int(edge.importance * len(WIDTHS)), len(WIDTHS) - 1)
        x_line, y_line = lines.setdefault((edge.kind, band), ([], []))
        x_line += [*xs, None]
        y_line += [*ys, None]
        middle_point = len(xs) // 2
        hover[0].append((xs[middle_point] + xs[~middle_point]) / 2)
        hover[1].append((ys[middle_point] + ys[~middle_point]) / 2)
        hover[2].append(f"{edge_name(edge, labels)}<br>importance {edge.importance:.3f}")
        hover[3].append(COLOURS[edge.kind])
    traces = [
        dict(
            type="scatter",
            x=x,
            y=y,
            mode="lines",
            hoverinfo="skip",
            name=kind,
            legendgroup=kind,
            showlegend=not any(k == kind for k, b in lines if b < band),
            line=dict(color=COLOURS[kind], width=WIDTHS[band]),
        )
        for (kind, band), (x, y) in sorted(lines.items())
    ]
    marker = dict(color=hover[3], size=7, opacity=0.6)
    return [*traces, points(hover[0], hover[1], marker, text=hover[2], hovertemplate="%{text}<extra></extra>")]


def points(xs: list, ys: list, marker: dict, **hover) -> dict:
    """A trace of markers outside the legend; ``hover`` says what hovering shows (nothing by default)."""
    return dict(
        type="scatter", x=xs, y=ys, mode="markers", marker=marker, showlegend=False, **(hover or {"hoverinfo": "skip"})
    )


def routes_figure(edges: Sequence[Edge], tokens: Sequence[str], layers: int, class_name: str, threshold: float):
    """The graph: every position at every stage, the pooled vector and the class, and the kept edges.

    Args:
        edges: the kept edges (``route_graph.kept_edges``).
        tokens: the sentence's tokens (escaped here).
        layers: L; the stages are 0 .. L.
        class_name: the predicted class, the top node.
        threshold: the least importance kept, for the title.
    """
    labels, middle = token_labels(tokens), (len(tokens) - 1) / 2
    touched = {(e.layer, e.source) for e in edges} | {(e.layer + 1, e.target) for e in edges if e.kind != "pooling"}
    xs = [i for s in range(layers + 1) for i in range(len(tokens))] + [middle, middle]
    ys = [s for s in range(layers + 1) for _ in tokens] + [layers + 1, layers + 2]
    on_route = [(s, i) in touched for s in range(layers + 1) for i in range(len(tokens))] + [bool(edges)] * 2
    nodes = points(xs, ys, dict(size=[9 if kept else 4 for kept in on_route], color="#2a3f5f"))
    figure = go.Figure([*edge_traces(edges, labels, layers, middle), nodes])
    stages = [*stage_labels(layers), "pooled vector", f"class: {escape(class_name)}"]
    title = f"How the decision travels: edges of importance ≥ {threshold:.2f}, from the class down"
    figure.update_layout(
        template=TEMPLATE,
        title=escape(title),
        legend=LEGEND_BELOW,
        height=220 + 90 * layers,
        margin={"t": 60, "l": 10, "r": 10, "b": 10},
        **TOUCH,
    )
    figure.update_xaxes(tickvals=list(range(len(tokens))), ticktext=labels, tickangle=-45, title="token")
    figure.update_yaxes(tickvals=list(range(layers + 3)), ticktext=stages, range=[-0.3, layers + 2.3])
    return figure
