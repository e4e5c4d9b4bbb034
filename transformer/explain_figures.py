"""Plotly figures (and one HTML snippet) for the explain views: pure functions, data in, figure out.

Shape letters: L = layers, H = heads, N = tokens, K = methods or aligned pairs, C = classes.

Every ``*_figure`` returns a ``go.Figure``; ``attribution_html`` a string. Attention maps themselves,
with the colour-scale options, are drawn by ``figures.attention_heatmap``.

Token strings are user text and plotly reads a subset of HTML in every label, hover and title
(<b>, <br>, <a href>): tokens go through ``figures.token_labels`` (escaped, unique "position token"
labels, the same as the explorer's other views) and every other string through ``_escape``.
Plotly decodes &amp;, &lt; and &gt; but not &quot;, so quotes are left alone. Axes are
categorical: plotly would place a token like "1995" on a numeric axis.
"""

import html
import math

import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from .explain_agreement import Agreement
from .explain_compare import Comparison
from .explain_counterfactual import WordOrder
from .explain_head import HeadScores
from .explain_knockout import HeadImportance
from .explain_rollout import pooled_relevance
from .figures import ATTENTION_COLORS, SIGNED_COLORS, TEMPLATE, attention_heatmap, token_labels

# Red for evidence for the class, blue against: the same in figures (SIGNED_COLORS) and highlighted text.
_POSITIVE_RGB, _NEGATIVE_RGB = "214, 39, 40", "31, 119, 180"
# Inside one head: blue for anything with the 1/√d_k scaling, orange for without.
_SCALED_COLOUR, _UNSCALED_COLOUR = "#1f77b4", "#ff7f0e"


def _escape(text: object) -> str:
    return html.escape(str(text), quote=False)


def _heatmap(
    values: torch.Tensor,
    x_labels: list[str],
    y_labels: list[str],
    *,
    title: str,
    axis_titles: tuple[str, str],
    signed: bool,
    colours: torch.Tensor | None = None,
    colour_title: str = "value",
    show_values: bool = False,
) -> go.Figure:
    """A heatmap whose hover shows ``values`` and whose colour shows ``colours`` (default: the values).

    Labels must already be escaped. Signed data gets a diverging scale centred on 0; NaN is blank.

    Shape:
        values, colours: (rows, columns).
    """
    colours = values if colours is None else colours
    limit = (colours.abs().nan_to_num().max().item() if colours.numel() else 0.0) or 1.0
    x_title, y_title = axis_titles
    text = [["" if math.isnan(value) else f"{value:.3f}" for value in row] for row in values.tolist()]
    trace = go.Heatmap(
        z=colours.tolist(),
        x=x_labels,
        y=y_labels,
        text=text,
        colorscale=SIGNED_COLORS if signed else ATTENTION_COLORS,
        colorbar={"title": {"text": colour_title}},
        zmin=-limit if signed else 0.0,
        zmax=limit,
        hovertemplate=f"{y_title} %{{y}}<br>{x_title} %{{x}}<br>value %{{text}}<extra></extra>",
        texttemplate="%{text}" if show_values else None,
    )
    figure = go.Figure(trace)
    figure.update_layout(template=TEMPLATE, title=_escape(title), margin={"t": 60, "l": 10, "r": 10, "b": 10})
    figure.update_xaxes(type="category", title=x_title, tickangle=-45)
    figure.update_yaxes(type="category", title=y_title, autorange="reversed")
    return figure


def rollout_figure(rollout: torch.Tensor, tokens: list[str]) -> go.Figure:
    """Per layer, how much the mean-pooled output takes from each token according to rollout.

    The shares sum to 1 and mixing pulls them towards 1/N, so the colour shows the share minus
    1/N (red: more than an even share); the numbers are the shares. For one layer's full rollout
    matrix use ``figures.attention_heatmap(tokens, rollout[l], title)``.

    Args:
        rollout: from ``attention_rollout``.
        tokens: token strings.

    Shape:
        rollout: (L, N, N), from ``attention_rollout``.
    """
    shares = pooled_relevance(rollout)  # (L, N)
    return _heatmap(
        shares,
        token_labels(tokens),
        [f"after layer {i + 1}" for i in range(rollout.size(0))],
        title="Attention rollout read by the pooled output",
        axis_titles=("token", "layer"),
        signed=True,
        colours=shares - 1 / shares.size(-1),
        colour_title="share − 1/N",
        show_values=True,
    )


def attribution_figure(scores: torch.Tensor, methods: list[str] | tuple[str, ...], tokens: list[str]) -> go.Figure:
    """Token scores of several methods, one row each, each row coloured on its own scale.

    Args:
        scores: e.g. signed gradient × input and Integrated Gradients, or ``Agreement.scores``.
        methods: the row names.
        tokens: token strings.

    Shape:
        scores: (K, N); methods: K names.
    """
    limit = scores.abs().amax(dim=1, keepdim=True)  # (K, 1)
    return _heatmap(
        scores,
        token_labels(tokens),
        [_escape(name) for name in methods],
        title="Token attributions (each row on its own scale; red supports the class)",
        axis_titles=("token", "method"),
        signed=True,
        colours=scores / limit.masked_fill(limit == 0, 1.0),
        colour_title="÷ row max",
        show_values=True,
    )


def attribution_html(pieces: list[tuple[str, int | None]], tokens: list[str], scores: torch.Tensor) -> str:
    """The typed sentence as highlighted text for a ``gr.HTML``: red supports the class, blue opposes it.

    Args:
        pieces: the typed text cut at token boundaries, ``analysis.text_pieces``: (piece, token
            position or None); text that is no token is shown plain.
        tokens: the N tokens (escaped here), named with their score when hovered.
        scores: one score per token; its opacity is the score over the largest magnitude.

    Shape:
        scores: (N,).

    Returns:
        An HTML string, ``<div class="attribution">`` with one ``<span>`` per token.
    """
    values = scores.tolist()
    limit = max((abs(v) for v in values), default=0.0) or 1.0
    parts = []
    for piece, position in pieces:
        if position is None:
            parts.append(html.escape(piece))
            continue
        value = values[position]
        rgb = _POSITIVE_RGB if value > 0 else _NEGATIVE_RGB
        style = f"background-color: rgba({rgb}, {abs(value) / limit:.3f}); padding: 0 1px; border-radius: 3px"
        title = html.escape(f"{position} {tokens[position]}: {value:+.4f}")
        parts.append(f'<span title="{title}" style="{style}">{html.escape(piece)}</span>')
    return f'<div class="attribution" style="white-space: pre-wrap; line-height: 1.9">{"".join(parts)}</div>'


def agreement_figure(agreement: Agreement) -> go.Figure:
    """Spearman rank correlation between the methods, from −1 to 1 (blank where undefined).

    Args:
        agreement: from ``method_agreement``.
    """
    names = [_escape(name) for name in agreement.methods]
    figure = _heatmap(
        agreement.correlation,
        names,
        names,
        title="How far the methods agree (Spearman rank correlation)",
        axis_titles=("method", "method"),
        signed=True,
        colour_title="ρ",
        show_values=True,
    )
    return figure.update_traces(zmin=-1.0, zmax=1.0)


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
        scores: from ``head_scores``.
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
            f"Layer {scores.layer + 1}, head {scores.head + 1}, query {labels[query]}: mean entropy "
            f"{scores.mean_entropy:.2f} with scaling, {scores.mean_entropy_unscaled:.2f} without"
        ),
        margin={"t": 80, "l": 10, "r": 10, "b": 10},
    )
    return figure


def head_importance_figure(importance: HeadImportance, class_names: list[str] | None = None) -> go.Figure:
    """Layers × heads: how much the class's probability drops when that head alone is knocked out.

    Args:
        importance: from ``head_importance``.
        class_names: names for the title, e.g. ``model.label_names``.
    """
    L, H = importance.drop.shape
    name = class_names[importance.target] if class_names else str(importance.target)
    return _heatmap(
        importance.drop,
        [f"head {h + 1}" for h in range(H)],
        [f"layer {layer + 1}" for layer in range(L)],
        title=f"Drop in P({name}) = {importance.base_prob:.3f} when one head is knocked out",
        axis_titles=("head", "layer"),
        signed=True,
        colour_title="drop",
        show_values=True,
    )


def word_order_figure(result: WordOrder, class_names: list[str] | None = None) -> go.Figure:
    """Class probabilities for the sentence and its reordering, each with positional encoding on and off.

    Args:
        result: from ``word_order_experiment``.
        class_names: one bar colour each, e.g. ``model.label_names``.
    """
    conditions = ["original, PE on", "original, PE off", "reordered, PE on", "reordered, PE off"]
    probs = result.probs.reshape(4, -1)  # (4, C) in the order of ``conditions``
    names = class_names or [str(c) for c in range(probs.size(1))]
    figure = go.Figure(
        [go.Bar(x=conditions, y=probs[:, c].tolist(), name=_escape(names[c])) for c in range(probs.size(1))]
    )
    note = "identical with PE off, as they must be" if result.is_permutation else "not a reordering of the same tokens"
    figure.update_layout(template=TEMPLATE, barmode="group", title=f"Word order and positional encoding: {note}")
    figure.update_xaxes(type="category")
    figure.update_yaxes(title="probability", range=[0, 1])
    return figure


def difference_figure(
    comparison: Comparison, tokens_b: list[str], scale: str = "global", exclude: list[int] | tuple[int, ...] = ()
) -> go.Figure:
    """Sentence B's attention minus sentence A's for one head, over the tokens that line up.

    Args:
        comparison: from ``compare_sentences``.
        tokens_b: sentence B's token strings; labels carry their positions in B.
        scale, exclude: colour-scale options of ``figures.attention_heatmap``; ``exclude`` counts
            aligned pairs, not positions.
    """
    positions = [j for _, j in comparison.pairs]
    return attention_heatmap(
        [tokens_b[j] for j in positions],
        comparison.difference,
        f"Layer {comparison.layer + 1}, head {comparison.head + 1}: attention of B minus A on aligned tokens",
        scale=scale,
        exclude=exclude,
        positions=positions,
        value_name="B − A",
        signed=True,
    )
