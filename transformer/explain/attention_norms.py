"""Attention weighted by what it moves (Kobayashi et al. 2020, "Attention is Not Only a Weight").

Shape letters: L = layers, H = heads, N = tokens, D = d_model, d_k = D // H.

Head h of a layer adds to query i the sum over keys j of α_ij · f(x_j), where f(x_j) = v_j W_o^h is key j's value
vector (W_v's bias included) times the head's slice of W_o (W_o's bias is shared by the heads and left out). A
large weight on a vector near zero moves almost nothing: α_ij · ‖f(x_j)‖ says how much each key actually sends.
‖f(x_j)‖ depends on the key only, so ``norms / weights`` is the same in every row of a head.
"""

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import torch

from ..hub import hooks
from ..interface import Classifier
from .run import check_sentence

Values = TypeVar("Values", torch.Tensor, np.ndarray)  # the numbers ``weighted`` takes: tensors, or arrays alike


@dataclass(frozen=True)
class AttentionNorms:
    """One sentence's attention weights, how long each key's transformed value is, and their product.

    Shape:
        weights, norms: (L, H, N, N), queries on rows; value_norms: (L, H, N), one per key.
    """

    weights: torch.Tensor
    value_norms: torch.Tensor
    norms: torch.Tensor


def value_capture(model: Classifier, store: list) -> list[hooks.HookSpec]:
    """Hooks that append each layer's W_v output (every head's values side by side) to ``store``, in order."""

    def keep(module, args, output):
        store.append(output)

    return [(model.attention_projections(layer)[0], keep, "post") for layer in range(model.num_layers)]


def transformed_value_norms(model: Classifier, values: Sequence[torch.Tensor]) -> torch.Tensor:
    """‖f(x_j)‖ for every layer, head and key of one sentence, from the values ``value_capture`` kept.

    Shape:
        values: L tensors of (1, N, D). Returns (L, H, N).
    """
    norms = []
    for layer, value in enumerate(values):
        heads = value[0].reshape(value.size(1), model.num_heads, -1).transpose(0, 1)  # (H, N, d_k)
        w_o = model.attention_projections(layer)[1].weight  # (D, H·d_k): y = W_o x
        slices = w_o.reshape(w_o.size(0), model.num_heads, -1).permute(1, 2, 0)  # (H, d_k, D)
        norms.append((heads @ slices.to(heads.dtype)).norm(dim=-1))  # (H, N, D) -> (H, N)
    return torch.stack(norms)  # (L, H, N)


def weighted(weights: Values, value_norms: Values) -> Values:
    """α_ij · ‖f(x_j)‖.

    Shape:
        weights: (..., N, N); value_norms: (..., N). Returns (..., N, N).
    """
    return weights * value_norms[..., None, :]  # works on tensors and arrays alike


@contextlib.contextmanager
def value_norms_of_run(model: Classifier) -> Iterator[Callable[[], torch.Tensor]]:
    """Around one forward of one sentence: yields a function that gives its ‖f(x_j)‖, (L, H, N), once the forward
    has run inside the block (for a caller that runs the model itself, as the explorer's analysis does)."""
    store: list = []
    with hooks.added(value_capture(model, store)):
        yield lambda: transformed_value_norms(model, store)


@torch.no_grad()
def attention_norms(model: Classifier, input_ids: torch.Tensor) -> AttentionNorms:
    """Every head's weights and weight × ‖f(x_j)‖, in one forward.

    Args:
        model: the classifier, in eval mode.
        input_ids: one sentence, no padding.

    Shape:
        input_ids: (1, N).

    Returns:
        An ``AttentionNorms``.
    """
    check_sentence(model, input_ids)
    with value_norms_of_run(model) as value_norms:
        _, attentions = model(input_ids, output_attentions=True)
        norms = value_norms()  # (L, H, N)
    weights = torch.cat(attentions)  # L x (1, H, N, N) -> (L, H, N, N)
    return AttentionNorms(weights=weights, value_norms=norms, norms=weighted(weights, norms))
