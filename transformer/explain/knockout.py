"""Head knockout: switch heads off and watch the prediction move.

Shape letters: L = layers, H = heads, N = tokens, C = classes, K = heads knocked out, R = K (+ 1 with every head).

A knocked-out head's output is multiplied by 0 before W_o, so with every head of a layer off
that attention sub-layer outputs only W_o's bias.
"""

import math
from dataclasses import dataclass

import torch

from ..interface import Classifier
from .batching import passes_for, progress
from .run import Prediction, check_sentence, predict


@dataclass(frozen=True)
class HeadImportance:
    """The predicted class's probability drop when each head alone is knocked out.

    Shape:
        drop, ablated_prob: (L, H), NaN for a head not knocked out; ``drop`` = ``base_prob`` − ``ablated_prob``,
        positive when the head supports the class.
    """

    target: int
    base_prob: float
    ablated_prob: torch.Tensor
    drop: torch.Tensor


def predict_with_knockout(model: Classifier, input_ids: torch.Tensor, head_mask: torch.Tensor) -> Prediction:
    """Classify one sentence with some heads switched off.

    Args:
        model: the classifier, in eval mode.
        input_ids: one sentence, no padding.
        head_mask: 1 keeps a head, 0 knocks it out.

    Shape:
        input_ids: (1, N); head_mask: (L, H).

    Returns:
        A ``Prediction``; the knocked-out heads' attention maps are still computed and returned,
        their outputs are what is dropped.
    """
    expected = (model.num_layers, model.num_heads)
    if tuple(head_mask.shape) != expected:
        raise ValueError(f"head_mask must have shape {expected}, got {tuple(head_mask.shape)}")
    return predict(model, input_ids, head_mask=head_mask)


def picked_heads(model: Classifier, input_ids: torch.Tensor, target: int | None) -> tuple:
    """Every head ordered by how far a first-order estimate says its knockout moves the target probability: |∂p/∂m|
    at a head mask m of ones (Michel et al. 2019), from one forward and backward pass.

    Shape:
        input_ids: (1, N). Returns (the probabilities with every head on (C,), the target class, flat head indices
        l·H + h (L·H,), largest estimate first).
    """
    mask = torch.ones(model.num_layers, model.num_heads, device=input_ids.device, requires_grad=True)  # (L, H)
    with torch.enable_grad():
        probabilities = model(input_ids, head_mask=mask).softmax(dim=-1)[0]  # (C,)
        target = int(probabilities.argmax()) if target is None else target
        (gradient,) = torch.autograd.grad(probabilities[target], mask)  # (L, H)
    return probabilities.detach(), target, gradient.abs().flatten().argsort(descending=True, stable=True)


@torch.no_grad()
def head_importance(
    model: Classifier, input_ids: torch.Tensor, target: int | None = None, heads: int | None = None
) -> HeadImportance:
    """Knock out each head alone and measure the target probability's drop, in batched forwards.

    Row 0 keeps every head (unless ``picked_heads`` ran); each further row knocks out one head only. The rows run in
    as few passes as the memory budget allows (``batching``): one on a small model, a few for a long sentence on a
    large one.

    Args:
        model: the classifier, in eval mode.
        input_ids: one sentence, no padding.
        target: class index; None means the class predicted with every head on.
        heads: how many heads to knock out; None (or L·H) for every head. Fewer are the first that ``picked_heads``
            orders, and the rest are NaN in ``ablated_prob`` and ``drop`` (not ranked).

    Shape:
        input_ids: (1, N).

    Returns:
        A ``HeadImportance``.
    """
    check_sentence(model, input_ids)
    L, H = model.num_layers, model.num_heads
    every = heads is None or heads >= L * H
    if every:
        knocked, base_rows = torch.arange(L * H), 1  # (L·H,); row 0 keeps every head
    else:
        base_probs, target, order = picked_heads(model, input_ids, target)
        knocked, base_rows = order[: max(heads or 0, 0)].cpu(), 0  # (K,)
    masks = torch.ones(base_rows + len(knocked), L * H)  # (R, L·H): row base_rows + k knocks out head knocked[k]
    masks[torch.arange(base_rows, len(masks)), knocked] = 0.0
    masks = masks.view(-1, L, H).to(input_ids.device)  # (R, L, H)
    rows = passes_for(model, len(masks), input_ids.size(1), backward=False)
    logits = [
        model(input_ids.expand(r.stop - r.start, -1), head_mask=masks[r]) for r in progress(rows, "head importance")
    ]  # each (K', C)
    probs = torch.cat(logits).softmax(dim=-1)  # (R, C)
    if every:
        base_probs = probs[0]
        target = int(base_probs.argmax()) if target is None else target
    ablated = torch.full((L * H,), math.nan, device=input_ids.device)  # (L·H,): NaN where not knocked out
    ablated[knocked.to(input_ids.device)] = probs[base_rows:, target]
    ablated = ablated.view(L, H)  # (L, H)
    assert target is not None  # the caller's, or the picking pass's, or the unchanged row's
    base = base_probs[target]
    return HeadImportance(target=target, base_prob=base.item(), ablated_prob=ablated, drop=base - ablated)
