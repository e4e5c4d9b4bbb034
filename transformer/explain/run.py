"""Running the model on one sentence: the entry point shared by every module of ``transformer.explain``.

Shape letters: N = tokens, C = classes, L = layers, H = heads.

Every explanation works on one unpadded sentence, ``input_ids`` of shape (1, N), with the model
in eval mode: dropout would make each explanation a random draw.
"""

from dataclasses import dataclass

import torch

from ..interface import Classifier


@dataclass(frozen=True)
class Prediction:
    """The model's output for one sentence.

    Shape:
        logits, probs: (C,); attentions: L tensors of (1, H, N, N), as the model returns them
        (the format of Hugging Face and bertviz, and what ``attention_rollout`` takes).
    """

    logits: torch.Tensor
    probs: torch.Tensor
    attentions: tuple[torch.Tensor, ...]


def check_sentence(model: Classifier, input_ids: torch.Tensor) -> None:
    """Raise ValueError unless ``input_ids`` is one non-empty sentence and the model is in eval mode.

    Shape:
        input_ids: (1, N).
    """
    if input_ids.dim() != 2 or input_ids.size(0) != 1 or input_ids.size(1) == 0:
        raise ValueError(f"expected input_ids of shape (1, N) with N >= 1, got {tuple(input_ids.shape)}")
    if model.training:
        raise ValueError("call model.eval() first: with dropout active every explanation is a random draw")


@torch.no_grad()
def predict(
    model: Classifier,
    input_ids: torch.Tensor,
    *,
    head_mask: torch.Tensor | None = None,
    positional_encoding: bool | None = None,
) -> Prediction:
    """Classify one sentence and keep every layer's attention.

    Args:
        model: the classifier, in eval mode.
        input_ids: one sentence, no padding.
        head_mask: 1 keeps a head, 0 knocks it out (see ``MultiHeadAttention``).
        positional_encoding: override the model's positional-encoding switch for this call.

    Shape:
        input_ids: (1, N); head_mask: (L, H).

    Returns:
        A ``Prediction``.
    """
    check_sentence(model, input_ids)
    logits, attentions = model(
        input_ids, output_attentions=True, head_mask=head_mask, positional_encoding=positional_encoding
    )
    return Prediction(logits=logits[0], probs=logits[0].softmax(-1), attentions=attentions)
