"""Compare two sentences: both predictions, one head's attention in each, and their difference where tokens line up.

Shape letters: N_a, N_b = tokens of sentences A and B, K = aligned token pairs, C = classes.
"""

from dataclasses import dataclass
from difflib import SequenceMatcher

import torch

from ..interface import Classifier
from .rollout import stack_attentions
from .run import predict


@dataclass(frozen=True)
class Comparison:
    """Two sentences through the same head.

    Shape:
        probs_a, probs_b: (C,); attention_a: (N_a, N_a); attention_b: (N_b, N_b); pairs: K index
        pairs (i in A, j in B) of equal tokens; difference: (K, K), B minus A on those pairs.
    """

    layer: int
    head: int
    probs_a: torch.Tensor
    probs_b: torch.Tensor
    attention_a: torch.Tensor
    attention_b: torch.Tensor
    pairs: list[tuple[int, int]]
    difference: torch.Tensor


def align_tokens(tokens_a: list[str], tokens_b: list[str]) -> list[tuple[int, int]]:
    """Pair up equal tokens in order, as ``difflib.SequenceMatcher`` matches them.

    Args:
        tokens_a, tokens_b: the two sentences' token strings.

    Returns:
        (i, j) pairs, increasing in both: "good" / "not good" gives [(0, 1)], the "good"s line up
        and "not" has no partner.
    """
    matcher = SequenceMatcher(a=tokens_a, b=tokens_b, autojunk=False)
    return [(block.a + k, block.b + k) for block in matcher.get_matching_blocks() for k in range(block.size)]


def aligned_difference(
    attention_a: torch.Tensor, attention_b: torch.Tensor, pairs: list[tuple[int, int]]
) -> torch.Tensor:
    """B's attention minus A's between aligned tokens.

    Args:
        attention_a, attention_b: one head's attention in each sentence.
        pairs: from ``align_tokens``.

    Rows are not renormalised over the aligned tokens, so a row's differences also reflect weight
    moved to or from unaligned tokens (in "not good", whatever "good" gives to "not").

    Shape:
        attention_a: (N_a, N_a); attention_b: (N_b, N_b). Returns (K, K).
    """
    index_a = torch.tensor([i for i, _ in pairs], dtype=torch.long, device=attention_a.device)  # (K,)
    index_b = torch.tensor([j for _, j in pairs], dtype=torch.long, device=attention_b.device)  # (K,)
    return attention_b[index_b][:, index_b] - attention_a[index_a][:, index_a]


def compare_attentions(
    attentions_a: torch.Tensor,
    attentions_b: torch.Tensor,
    probs_a: torch.Tensor,
    probs_b: torch.Tensor,
    tokens_a: list[str],
    tokens_b: list[str],
    layer: int,
    head: int,
) -> Comparison:
    """Line up one head's attention in two sentences that have been run already (no model call).

    Args:
        attentions_a, attentions_b: every layer's and head's attention in each sentence.
        probs_a, probs_b: each sentence's class probabilities.
        tokens_a, tokens_b: their token strings, used only to align them.
        layer, head: the head to compare.

    Shape:
        attentions_a: (L, H, N_a, N_a); attentions_b: (L, H, N_b, N_b); probs_a, probs_b: (C,).

    Returns:
        A ``Comparison``.
    """
    if len(tokens_a) != attentions_a.size(-1) or len(tokens_b) != attentions_b.size(-1):
        raise ValueError("each sentence needs one token string per position")
    attention_a, attention_b = attentions_a[layer, head], attentions_b[layer, head]  # (N_a, N_a), (N_b, N_b)
    pairs = align_tokens(tokens_a, tokens_b)
    return Comparison(
        layer=layer,
        head=head,
        probs_a=probs_a,
        probs_b=probs_b,
        attention_a=attention_a,
        attention_b=attention_b,
        pairs=pairs,
        difference=aligned_difference(attention_a, attention_b, pairs),
    )


def compare_sentences(
    model: Classifier,
    input_ids_a: torch.Tensor,
    input_ids_b: torch.Tensor,
    tokens_a: list[str],
    tokens_b: list[str],
    layer: int,
    head: int,
) -> Comparison:
    """Run both sentences and line up one head's attention (see ``compare_attentions``).

    Args:
        model: the classifier, in eval mode.
        input_ids_a, input_ids_b: the two sentences, no padding.
        tokens_a, tokens_b: their token strings, used only to align them.
        layer, head: the head to compare.

    Shape:
        input_ids_a: (1, N_a); input_ids_b: (1, N_b).

    Returns:
        A ``Comparison``.
    """
    a, b = predict(model, input_ids_a), predict(model, input_ids_b)
    return compare_attentions(
        stack_attentions(a.attentions),
        stack_attentions(b.attentions),
        a.probs,
        b.probs,
        tokens_a,
        tokens_b,
        layer,
        head,
    )
