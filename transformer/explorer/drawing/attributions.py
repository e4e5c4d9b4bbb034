"""Token attributions drawn two ways: as a heatmap of methods by token, and as the typed sentence highlighted.

The Attributions tab draws them for one model, Compare for two models side by side.
"""

from __future__ import annotations

import html

import plotly.graph_objects as go
import torch

from .figures import escape, heatmap, token_labels

# Red for evidence for the class, blue against: the same as the figures' diverging scale.
_POSITIVE_RGB, _NEGATIVE_RGB = "214, 39, 40", "31, 119, 180"
# The strongest highlight's opacity: the page's text on it keeps 5.4:1 on the light page and 7:1 on the dark one (at 1
# it was 3.0:1 and 4.4:1).
MAX_OPACITY = 0.6
SHOW_VALUES_UP_TO = 24  # the heatmap prints each score in its cell up to this many tokens; past it they smear
# The text past the last token read (a truncated text's tail): greyed, struck through and labelled. Greyed by
# fading the text colour, which keeps 4.5:1 in both themes; the theme's subdued colour faded fell to 1.5:1 (light).
_UNREAD = (
    '<span class="attribution-unread" title="not read: past the tokens the model reads" '
    'style="color: var(--body-text-color); opacity: 0.7; text-decoration: line-through">'
    '<em style="text-decoration: none">[not read]</em> {text}</span>'
)


def attribution_figure(
    scores: torch.Tensor,
    methods: list[str] | tuple[str, ...],
    tokens: list[str],
    title: str = "Token attributions (each row on its own scale; red supports the class)",
) -> go.Figure:
    """Token scores of several methods, one row each, each row coloured on its own scale.

    Args:
        scores: e.g. signed gradient × input and Integrated Gradients, or ``Agreement.scores``.
        methods: the row names.
        tokens: token strings.
        title: the figure's title (``heatmap`` escapes it).

    Shape:
        scores: (K, N); methods: K names.
    """
    limit = scores.abs().amax(dim=1, keepdim=True)  # (K, 1)
    return heatmap(
        scores,
        token_labels(tokens),
        [escape(name) for name in methods],
        title=title,
        axis_titles=("token", "method"),
        signed=True,
        colours=scores / limit.masked_fill(limit == 0, 1.0),
        colour_title="score ÷ its row's<br>largest |score|<br>(−1 to 1)",
        show_values=len(tokens) <= SHOW_VALUES_UP_TO,
    )


def attribution_html(
    pieces: list[tuple[str, int | None]], tokens: list[str], scores: torch.Tensor, caption: str = ""
) -> str:
    """The typed sentence as highlighted text for a ``gr.HTML``: red supports the class, blue opposes it.

    Args:
        pieces: the typed text cut at token boundaries, ``analysis.text_pieces``: (piece, token
            position or None); text that is no token is shown plain.
        tokens: the N tokens (escaped here), named with their score when hovered.
        scores: one score per token; its opacity is ``MAX_OPACITY`` × the score over the largest magnitude.
        caption: which method the scores are from, a bold line above the text (escaped here).

    Shape:
        scores: (N,).

    Returns:
        An HTML string, the caption's ``<p>`` then ``<div class="attribution">`` with one ``<span>`` per token, and
        the text past the last token read (a truncated text's tail) greyed and labelled "[not read]".
    """
    values = scores.tolist()
    limit = max((abs(v) for v in values), default=0.0) or 1.0
    last_read = max((i for i, (_, position) in enumerate(pieces) if position is not None), default=-1)
    parts = []
    for i, (piece, position) in enumerate(pieces):
        if position is None:
            unread = i > last_read and piece.strip()
            parts.append(_UNREAD.format(text=html.escape(piece)) if unread else html.escape(piece))
            continue
        value = values[position]
        rgb = _POSITIVE_RGB if value > 0 else _NEGATIVE_RGB
        # no padding, no rounded corners: a word's pieces ("matter" + "ed") join up, as typed
        style = f"background-color: rgba({rgb}, {MAX_OPACITY * abs(value) / limit:.3f})"
        title = html.escape(f"{position} {tokens[position]}: {value:+.4f}")
        parts.append(f'<span title="{title}" style="{style}">{html.escape(piece)}</span>')
    heading = f'<p class="attribution-caption"><strong>{html.escape(caption)}</strong></p>' if caption else ""
    return f'{heading}<div class="attribution" style="white-space: pre-wrap; line-height: 1.9">{"".join(parts)}</div>'
