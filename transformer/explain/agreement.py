"""How far the token-importance methods agree: Spearman rank correlation between their scores.

Shape letters: K = methods, N = tokens.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from ..interface import Classifier
from .attribution import DEFAULT_IG_STEPS, gradient_x_input, integrated_gradients
from .rollout import attention_rollout, pooled_attention, pooled_relevance
from .run import predict

METHODS = ("attention", "rollout", "gradient × input", "integrated gradients")


@dataclass(frozen=True)
class Agreement:
    """Each method's per-token scores and their rank correlations.

    Shape:
        scores: (K, N), one row per name in ``methods``; correlation: (K, K).
    """

    methods: tuple[str, ...]
    scores: torch.Tensor
    correlation: torch.Tensor


def average_ranks(values: torch.Tensor) -> torch.Tensor:
    """Ranks 1..N in ascending order; tied values share the mean of the ranks they span.

    Shape:
        values: (N,). Returns (N,) float64.
    """
    sorted_values, order = values.sort(stable=True)  # (N,), (N,)
    _, group, counts = torch.unique_consecutive(sorted_values, return_inverse=True, return_counts=True)
    last = counts.cumsum(0).double()  # (G,): 1-based rank of each tie group's last member
    mean_rank = last - (counts - 1) / 2  # (G,)
    ranks = torch.empty(values.numel(), dtype=torch.float64, device=values.device)
    ranks[order] = mean_rank[group]
    return ranks


def spearman_matrix(scores: torch.Tensor) -> torch.Tensor:
    """Spearman correlation between every pair of rows: the Pearson correlation of their average ranks.

    A row with all values tied has no ranking, so its correlations are NaN.

    Shape:
        scores: (K, N). Returns (K, K) float64.
    """
    ranks = torch.stack([average_ranks(row) for row in scores])  # (K, N)
    centred = ranks - ranks.mean(dim=1, keepdim=True)
    norms = centred.norm(dim=1, keepdim=True)  # (K, 1)
    unit = centred / norms.masked_fill(norms == 0, float("nan"))
    return (unit @ unit.T).clamp(-1.0, 1.0)  # (K, K); clamp trims rounding past ±1


def agreement_of(
    attentions: Sequence[torch.Tensor],
    gradient_scores: torch.Tensor,
    ig_scores: torch.Tensor,
    absolute: bool = True,
    pooling: str = "mean",
) -> Agreement:
    """Rank-correlate the methods in ``METHODS`` from a sentence's attentions and its two gradient attributions.

    Attention is the last layer's head-averaged attention read for the pooled output, rollout its
    pooled relevance after the last layer (see ``rollout``); both are about the input
    whatever the class. The gradient scores are for whichever class they were computed for.

    Args:
        attentions: the model's ``attentions`` output for the sentence.
        gradient_scores: gradient × input.
        ig_scores: Integrated Gradients attributions.
        absolute: rank the gradient methods by magnitude. Attention and rollout say how much a
            token is used, never in which direction, so magnitudes are the like-for-like comparison.
        pooling: the model's ``pooling`` ("mean", or "first" for a model that reads its first token), which
            attention and rollout are read for.

    Shape:
        attentions: L tensors of (1, H, N, N); gradient_scores, ig_scores: (N,).

    Returns:
        An ``Agreement``.
    """
    gradients = [gradient_scores, ig_scores]
    if absolute:
        gradients = [score.abs() for score in gradients]
    scores = torch.stack(
        [
            pooled_attention(attentions, pooling=pooling),
            pooled_relevance(attention_rollout(attentions)[-1], pooling),
            *gradients,
        ]
    )  # (K, N)
    return Agreement(methods=METHODS, scores=scores, correlation=spearman_matrix(scores))


def method_agreement(
    model: Classifier,
    input_ids: torch.Tensor,
    target: int,
    steps: int = DEFAULT_IG_STEPS,
    absolute: bool = True,
) -> Agreement:
    """Score the tokens with every method in ``METHODS`` and rank-correlate the scores (see ``agreement_of``).

    Args:
        model: the classifier, in eval mode.
        input_ids: one sentence, no padding.
        target: class index for the gradient methods.
        steps: Integrated Gradients steps.
        absolute: as in ``agreement_of``.

    Shape:
        input_ids: (1, N).

    Returns:
        An ``Agreement``.
    """
    return agreement_of(
        predict(model, input_ids).attentions,
        gradient_x_input(model, input_ids, target),
        integrated_gradients(model, input_ids, target, steps=steps).attributions,
        absolute,
        model.pooling,
    )
