"""What each explanation tab shows: a view from ``explain_views`` in, the values of its Gradio components out.

Pure functions, no model: figures (``go.Figure``), HTML for ``gr.HTML`` (every piece of user text
and every class name escaped) and class -> probability dicts for ``gr.Label``. Redrawing a tab
with other drawing controls (colour scale, query token, layer of a kept view) calls only these.

Shape letters: L = layers, H = heads, N = tokens, C = classes.
"""

from __future__ import annotations

import html
import unicodedata
from collections.abc import Sequence

import plotly.graph_objects as go
import torch

from .analysis import text_pieces
from .explain_colour import SCALES
from .explain_figures import (
    agreement_figure,
    attribution_figure,
    attribution_html,
    difference_figure,
    head_figure,
    rollout_figure,
    word_order_figure,
)
from .explain_views import (
    AttributionView,
    CompareView,
    HeadView,
    KnockoutView,
    PerturbationView,
    RolloutView,
    WordOrderView,
    whole_number,
)
from .figures import attention_grid, attention_heatmap
from .tokenizer import SPECIAL_TOKENS

# What the colour scale can leave out: (what the page says, the value in the address and the API)
LEAVE_OUT = [("special tokens ([PAD], [UNK], [MASK])", "special"), ("punctuation", "punctuation")]


def excluded_positions(tokens: Sequence[str], leave_out: Sequence[str] | None) -> list[int]:
    """The positions of the tokens that ``leave_out`` ("special", "punctuation") keeps out of the colour range."""
    chosen = set(leave_out or ())
    return [
        position
        for position, token in enumerate(tokens)
        if ("special" in chosen and token in SPECIAL_TOKENS)
        or ("punctuation" in chosen and all(unicodedata.category(char).startswith("P") for char in token))
    ]


def colour_scale(scale: str | None) -> str:
    """The colour-scale choice, "global" unless it is one of ``explain_colour.SCALES``."""
    return scale if scale in SCALES else "global"


def token_choices(tokens: Sequence[str]) -> list[tuple[str, int]]:
    """Dropdown choices for picking a token: ("position token", position); Gradio shows them as plain text."""
    return [(f"{position} {token}", position) for position, token in enumerate(tokens)]


def pick_position(value, n: int) -> int:
    """``value`` when it is one of n token positions, else 0: a kept choice may outlive its sentence."""
    try:
        return whole_number(value, "position", 0, n - 1)
    except ValueError:
        return 0


def probabilities(label_names: Sequence[str], values: torch.Tensor | Sequence[float]) -> dict[str, float]:
    """Class name -> probability, the value ``gr.Label`` shows."""
    return dict(zip(label_names, (float(v) for v in values), strict=True))


def _table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """An HTML table; every cell is escaped."""

    def cells(tag: str, values: Sequence[object]) -> str:
        return "".join(f"<{tag}>{html.escape(str(value))}</{tag}>" for value in values)

    body = "".join(f"<tr>{cells('td', row)}</tr>" for row in rows)
    return f"<table><thead><tr>{cells('th', header)}</tr></thead><tbody>{body}</tbody></table>"


def _sentence(tokens: Sequence[str]) -> str:
    """Tokens as escaped HTML code, separated by spaces, so each stays visible as the model reads it."""
    return " ".join(f"<code>{html.escape(token)}</code>" for token in tokens)


def _change_rows(label_names: Sequence[str], before, after) -> list[list[str]]:
    """One row per class: its name, probability before, after, and the change."""
    return [
        [name, f"{b:.4f}", f"{a:.4f}", f"{a - b:+.4f}"]
        for name, b, a in zip(label_names, map(float, before), map(float, after), strict=True)
    ]


def rollout_panel(view: RolloutView, layer, scale: str, leave_out: Sequence[str]) -> tuple[go.Figure, go.Figure]:
    """The pooled output's share of each token after every layer, and the rollout matrix after ``layer`` (from 1)."""
    index = whole_number(layer, "Layer", 1, view.rollout.size(0)) - 1
    matrix = attention_heatmap(
        view.tokens,
        view.rollout[index],
        f"Rollout after layer {index + 1}: where each position's representation comes from",
        scale=colour_scale(scale),
        exclude=excluded_positions(view.tokens, leave_out),
        value_name="share",
    )
    return rollout_figure(view.rollout, view.tokens), matrix


def attribution_panel(view: AttributionView) -> tuple[str, str, str, go.Figure, go.Figure]:
    """(summary, gradient × input over the text, Integrated Gradients over the text, both per token, agreement)."""
    ig = view.integrated_gradients
    pieces = text_pieces(view.text, view.offsets)
    baseline = "every token replaced by [PAD]" if ig.baseline == "pad" else "all-zero token embeddings"
    difference = ig.target_logit - ig.baseline_logit
    verdict = "within" if ig.complete else "outside"
    summary = (
        f"<p>Target class <b>{html.escape(view.target_label)}</b>: red tokens push its logit up, blue ones down "
        "(hover a token for its score). "
        f"Integrated Gradients baseline: {baseline}, same positions. With {ig.steps} steps the attributions sum to "
        f"{difference + ig.completeness_error:.4f} and f(input) − f(baseline) = {difference:.4f}: "
        f"completeness error {ig.relative_completeness_error:.2%}, {verdict} the 5% tolerance"
        f"{'' if ig.complete else ' (use more steps)'}.</p>"
    )
    scores = torch.stack([view.gradient_x_input, ig.attributions])  # (2, N)
    return (
        summary,
        attribution_html(pieces, view.tokens, view.gradient_x_input),
        attribution_html(pieces, view.tokens, ig.attributions),
        attribution_figure(scores, ["gradient × input", "integrated gradients"], view.tokens),
        agreement_figure(view.agreement),
    )


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


def knockout_panel(view: KnockoutView, scale: str, leave_out: Sequence[str]) -> tuple[dict, str, go.Figure]:
    """(prediction with the knockout, how it changed, every head's attention with the knockout)."""
    off = ", ".join(view.heads_off) or "no head"
    summary = f"<p>Switched off: {html.escape(off)}.</p>" + _table(
        ["class", "all heads on", "with the knockout", "change"],
        _change_rows(view.label_names, view.probabilities_before, view.probabilities),
    )
    grid = attention_grid(
        view.tokens,
        view.attentions.numpy(),
        scale=colour_scale(scale),
        exclude=excluded_positions(view.tokens, leave_out),
        title=f"Every head's attention with {off} switched off",
    )
    return probabilities(view.label_names, view.probabilities), summary, grid


def perturbation_panel(view: PerturbationView) -> tuple[dict, str]:
    """(prediction after the change, the changed sentence and the change per class)."""
    done = "masked" if view.mode == "mask" else "removed"
    summary = (
        f"<p>Token {view.position} <code>{html.escape(view.tokens[view.position])}</code> {done}; "
        f"the model now reads: {_sentence(view.tokens_after)}</p>"
        + _table(
            ["class", "before", "after", "change"],
            _change_rows(view.label_names, view.probabilities_before, view.probabilities_after),
        )
    )
    return probabilities(view.label_names, view.probabilities_after), summary


def word_order_panel(view: WordOrderView) -> tuple[str, go.Figure]:
    """(both orders and their four predictions, with the verdict on positional encoding; the figure)."""
    rows = []
    for order, name in enumerate(("the sentence", "the reordering")):
        for encoding, switch in enumerate(("on", "off")):
            probs = view.experiment.probs[order, encoding].tolist()
            rows.append([name, switch, *(f"{p:.4f}" for p in probs)])
    if not view.experiment.is_permutation:
        verdict = "Your text is not a reordering of the same tokens, so the two need not agree even without it."
    else:
        verdict = (
            "Without positional encoding the two orders get the same prediction "
            f"(largest logit gap {view.difference_without_encoding:.1e}, float rounding): attention and mean "
            "pooling cannot see order. With it the gap is "
            f"{view.difference_with_encoding:.4f}."
        )
    how = "your own reordering" if view.seed is None else f"shuffled with seed {view.seed}"
    summary = (
        f"<p>The sentence: {_sentence(view.tokens)}</p>"
        f"<p>Reordered ({how}): {_sentence(view.reordered_tokens)}</p>"
        + _table(["order", "positional encoding", *view.label_names], rows)
        + f"<p>{verdict}</p>"
    )
    return summary, word_order_figure(view.experiment, view.label_names)


def compare_panel(
    view: CompareView, scale: str, leave_out: Sequence[str]
) -> tuple[dict, dict, go.Figure, go.Figure, go.Figure | None, str]:
    """(prediction A, prediction B, A's head, B's head, B − A where the tokens line up, a summary)."""
    comparison = view.comparison
    scale = colour_scale(scale)
    exclude_b = excluded_positions(view.tokens_b, leave_out)
    head = f"layer {comparison.layer + 1}, head {comparison.head + 1}"
    heatmaps = [
        attention_heatmap(
            tokens, weights, f"Sentence {name}, {head}", scale=scale, exclude=excluded_positions(tokens, leave_out)
        )
        for name, tokens, weights in (
            ("A", view.tokens_a, comparison.attention_a),
            ("B", view.tokens_b, comparison.attention_b),
        )
    ]
    pairs = comparison.pairs
    excluded_pairs = [k for k, (_, j) in enumerate(pairs) if j in exclude_b]
    difference = difference_figure(comparison, view.tokens_b, scale, excluded_pairs) if pairs else None
    aligned = ", ".join(f"{view.tokens_a[i]} ({i}→{j})" for i, j in pairs) or "none"
    summary = (
        f"<p>{len(pairs)} of {len(view.tokens_a)} tokens of A line up with B: {html.escape(aligned)}.</p>"
        + _table(["class", "A", "B", "B − A"], _change_rows(view.label_names, comparison.probs_a, comparison.probs_b))
    )
    return (
        probabilities(view.label_names, comparison.probs_a),
        probabilities(view.label_names, comparison.probs_b),
        *heatmaps,
        difference,
        summary,
    )
