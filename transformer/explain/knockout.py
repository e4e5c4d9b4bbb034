"""Head knockout: switch heads off and watch the prediction move.

Shape letters: L = layers, H = heads, N = tokens, C = classes, R = 1 + L·H ablation rows.

A knocked-out head's output is multiplied by 0 before W_o, so with every head of a layer off
that attention sub-layer outputs only W_o's bias.
"""

from dataclasses import dataclass

import torch

from ..interface import Classifier
from .batching import passes_for
from .run import Prediction, check_sentence, predict


@dataclass(frozen=True)
class HeadImportance:
    """The predicted class's probability drop when each head alone is knocked out.

    Shape:
        drop, ablated_prob: (L, H); ``drop`` = ``base_prob`` − ``ablated_prob``, positive when the
        head supports the class.
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


@torch.no_grad()
def head_importance(model: Classifier, input_ids: torch.Tensor, target: int | None = None) -> HeadImportance:
    """Knock out each head alone and measure the target probability's drop, in batched forwards.

    Row 0 keeps every head; row 1 + l·H + h knocks out head h of layer l only. The rows run in as few passes as
    the memory budget allows (``batching``): one on a small model, a few for a long sentence on a large one.

    Args:
        model: the classifier, in eval mode.
        input_ids: one sentence, no padding.
        target: class index; None means the class predicted with every head on.

    Shape:
        input_ids: (1, N).

    Returns:
        A ``HeadImportance``.
    """
    check_sentence(model, input_ids)
    L, H = model.num_layers, model.num_heads
    masks = torch.cat([torch.ones(1, L * H), 1 - torch.eye(L * H)]).to(input_ids.device)  # (R, L·H)
    masks = masks.view(1 + L * H, L, H)  # (R, L, H)
    rows = passes_for(model, 1 + L * H, input_ids.size(1), backward=False)
    logits = [model(input_ids.expand(r.stop - r.start, -1), head_mask=masks[r]) for r in rows]  # each (K, C)
    probs = torch.cat(logits).softmax(dim=-1)  # (R, C)
    target = int(probs[0].argmax()) if target is None else target
    ablated = probs[1:, target].reshape(L, H)  # (L, H)
    base = probs[0, target]
    return HeadImportance(target=target, base_prob=base.item(), ablated_prob=ablated, drop=base - ablated)
