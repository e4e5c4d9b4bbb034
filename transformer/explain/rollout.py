"""Attention rollout (Abnar & Zuidema 2020) and how to read attention for a mean-pooling classifier.

Shape letters: L = layers, H = heads, N = tokens.

Reading it for this model: the classifier mean-pools the final positions, so the pooled vector
gives every position weight 1/N. A token's share in the pooled vector is therefore the mean over
queries i of the rollout R[i, j] (``pooled_relevance``): a column mean, which sums to 1 over j.
"""

from collections.abc import Sequence

import torch

POOLINGS = ("mean", "first")  # a model's ``pooling``: the mean of its tokens, or its first token


def stack_attentions(attentions: Sequence[torch.Tensor]) -> torch.Tensor:
    """Stack one sentence's per-layer attentions into one tensor.

    Args:
        attentions: the model's ``attentions`` output for a batch of one.

    Shape:
        attentions: L tensors of (1, H, N, N). Returns (L, H, N, N).
    """
    stacked = torch.stack(tuple(attentions))  # (L, 1, H, N, N)
    if stacked.dim() != 5 or stacked.size(1) != 1:
        raise ValueError(f"expected L tensors of shape (1, H, N, N), got {tuple(stacked.shape[1:])}")
    return stacked[:, 0]  # (L, H, N, N)


def attention_rollout(attentions: Sequence[torch.Tensor], residual_weight: float = 0.5) -> torch.Tensor:
    """Cumulative attention rollout after each layer.

    Per layer the heads are averaged, the residual connection is modelled by mixing in the
    identity, A' = (1 - r)·A + r·I, rows are renormalised, and the layers are multiplied:
    R_1 = A'_1, R_l = A'_l R_{l-1}. Row i of R_l says how much of position i after layer l
    comes from each input token. The classifier reads the mean of the final positions, so read
    the rollout for it with ``pooled_relevance``: token j's share is the mean over i of R[i, j].

    Args:
        attentions: the model's ``attentions`` output for one sentence.
        residual_weight: r, the weight given to the residual path (0.5 in the paper).

    Shape:
        attentions: L tensors of (1, H, N, N). Returns (L, N, N), rows summing to 1.
    """
    mixed = stack_attentions(attentions).mean(dim=1)  # (L, N, N)
    eye = torch.eye(mixed.size(-1), dtype=mixed.dtype, device=mixed.device)
    mixed = (1 - residual_weight) * mixed + residual_weight * eye  # (L, N, N)
    mixed = mixed / mixed.sum(dim=-1, keepdim=True)
    rollout = [mixed[0]]
    for layer_attention in mixed[1:]:
        rollout.append(layer_attention @ rollout[-1])
    return torch.stack(rollout)  # (L, N, N)


def pooled_relevance(matrix: torch.Tensor, pooling: str = "mean") -> torch.Tensor:
    """What the pooled vector takes from each token: the mean over queries (rows) for a mean-pooled model (the
    tutorial's), the first query's row for a model that reads its first token ([CLS], a Hub classifier's).

    Shape:
        matrix: (..., N, N), e.g. a rollout (L, N, N) or one attention map (N, N). Returns (..., N).
    """
    if pooling not in POOLINGS:
        raise ValueError(f"pooling is one of {', '.join(POOLINGS)}, got {pooling!r}")
    return matrix.mean(dim=-2) if pooling == "mean" else matrix[..., 0, :]


def pooled_attention(attentions: Sequence[torch.Tensor], layer: int = -1, pooling: str = "mean") -> torch.Tensor:
    """Raw attention read for the pooled output: one layer's head-averaged attention, mean over queries.

    Args:
        attentions: the model's ``attentions`` output for one sentence.
        layer: which layer (the last by default, the one the pooling reads).
        pooling: as in ``pooled_relevance``.

    Shape:
        attentions: L tensors of (1, H, N, N). Returns (N,).
    """
    return pooled_relevance(stack_attentions(attentions)[layer].mean(dim=0), pooling)
