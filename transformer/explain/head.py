"""Inside one head: raw scores QKᵀ, scaled scores QKᵀ/√d_k, softmax weights and attention entropy.

Shape letters: L = layers, H = heads, N = tokens, D = d_model, d_k = D // H.

The scores are recomputed from the model's own modules (``embed``, the earlier blocks, norm1, W_q,
W_k), without changing the model, so the softmax weights match the attentions the model returns.
"""

import math
from dataclasses import dataclass

import torch

from ..interface import Classifier
from .run import check_sentence


@dataclass(frozen=True)
class HeadScores:
    """One head's attention for one sentence, with and without the 1/√d_k scaling.

    Shape:
        raw, scaled, weights, weights_unscaled: (N, N), rows are queries; entropy,
        entropy_unscaled: (N,) in nats, one per query. ``max_entropy`` = log N, a uniform row.
    """

    layer: int
    head: int
    d_k: int
    raw: torch.Tensor
    scaled: torch.Tensor
    weights: torch.Tensor
    weights_unscaled: torch.Tensor
    entropy: torch.Tensor
    entropy_unscaled: torch.Tensor
    mean_entropy: float
    mean_entropy_unscaled: float
    max_entropy: float


def attention_entropy(weights: torch.Tensor) -> torch.Tensor:
    """Shannon entropy in nats of each attention row; 0 log 0 counts as 0.

    Shape:
        weights: (..., N) rows summing to 1. Returns (...).
    """
    return -torch.special.xlogy(weights, weights).sum(dim=-1)


@torch.no_grad()
def layer_input(
    model: Classifier,
    input_ids: torch.Tensor,
    layer: int,
    *,
    head_mask: torch.Tensor | None = None,
    positional_encoding: bool | None = None,
) -> torch.Tensor:
    """The hidden states entering block ``layer``: embeddings, positional encoding, earlier blocks.

    Args:
        model: the classifier, in eval mode.
        input_ids: one sentence, no padding.
        layer: block index; block 0 gets the embeddings plus positional encoding.
        head_mask: knocked-out heads for the earlier blocks, as in ``model.forward``.
        positional_encoding: override the model's positional-encoding switch.

    Shape:
        input_ids: (1, N); head_mask: (L, H). Returns (1, N, D).
    """
    check_sentence(model, input_ids)
    if not 0 <= layer < model.num_layers:
        raise ValueError(f"layer must be in [0, {model.num_layers}), got {layer}")
    return model.hidden_states(input_ids, head_mask=head_mask, positional_encoding=positional_encoding)[layer]


def queries_keys(
    model: Classifier, input_ids: torch.Tensor, layer: int, **switches
) -> tuple[torch.Tensor, torch.Tensor]:
    """Every head's queries and keys in block ``layer``, the model's own (``Classifier.query_key``), for a sentence
    the model can read.

    Shape:
        input_ids: (1, N). Returns (queries, keys), each (H, N, d_k).
    """
    check_sentence(model, input_ids)
    return model.query_key(input_ids, layer, **switches)


@torch.no_grad()
def head_scores(
    model: Classifier,
    input_ids: torch.Tensor,
    layer: int,
    head: int,
    *,
    head_mask: torch.Tensor | None = None,
    positional_encoding: bool | None = None,
) -> HeadScores:
    """Recompute one head's scores for every query, the tutorial's reason for scaling on this sentence.

    Without the 1/√d_k the scores' spread grows with √d_k, the softmax saturates and the entropy
    drops: compare ``entropy`` with ``entropy_unscaled``.

    Args:
        model: the classifier, in eval mode.
        input_ids: one sentence, no padding.
        layer, head: which head.
        head_mask, positional_encoding: as in ``layer_input``.

    Shape:
        input_ids: (1, N); head_mask: (L, H).

    Returns:
        A ``HeadScores``.
    """
    if not 0 <= head < model.num_heads:
        raise ValueError(f"head must be in [0, {model.num_heads}), got {head}")
    queries, keys = queries_keys(model, input_ids, layer, head_mask=head_mask, positional_encoding=positional_encoding)
    query, key = queries[head], keys[head]  # (N, d_k)
    d_k = query.size(-1)
    raw = query @ key.T  # (N, N)
    scaled = raw / math.sqrt(d_k)
    weights, weights_unscaled = scaled.softmax(dim=-1), raw.softmax(dim=-1)
    entropy, entropy_unscaled = attention_entropy(weights), attention_entropy(weights_unscaled)
    return HeadScores(
        layer=layer,
        head=head,
        d_k=d_k,
        raw=raw,
        scaled=scaled,
        weights=weights,
        weights_unscaled=weights_unscaled,
        entropy=entropy,
        entropy_unscaled=entropy_unscaled,
        mean_entropy=entropy.mean().item(),
        mean_entropy_unscaled=entropy_unscaled.mean().item(),
        max_entropy=math.log(raw.size(0)),
    )
