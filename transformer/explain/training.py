"""One sentence read by a model at each of its training checkpoints: its class probabilities, one head's attention
and the token-embeddings map at every one, and the checkpoint from which its prediction settles.

Shape letters: K = checkpoints, C = classes, N = tokens, S = stages (L + 1).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from ..interface import Classifier
from .embedding_map import EmbeddingsView, embedding_map


@dataclass(frozen=True)
class CheckpointReadings:
    """The sentence at every checkpoint, oldest first.

    Shape:
        probabilities: (K, C); attentions: (K, N, N), the one chosen head's; maps: K maps of (S, N, 2).
    """

    probabilities: torch.Tensor
    attentions: torch.Tensor
    maps: list[EmbeddingsView]


@torch.no_grad()
def read_at_checkpoints(
    models: Sequence[Classifier], input_ids: torch.Tensor, tokens: list[str], layer: int, head: int
) -> CheckpointReadings:
    """Each checkpoint's reading of one unpadded sentence ``input_ids`` (1, N): P(class), the attention of head
    ``head`` of layer ``layer`` (0-based) and the embeddings map (``embedding_map``), on the checkpoints' device."""
    probabilities, attentions, maps = [], [], []
    for model in models:
        ids = input_ids.to(next(model.parameters()).device)  # (1, N)
        logits, weights = model(ids, output_attentions=True)  # (1, C), L x (1, H, N, N)
        probabilities.append(logits[0].float().softmax(dim=-1).cpu())  # (C,)
        attentions.append(weights[layer][0, head].float().cpu())  # (N, N)
        maps.append(embedding_map(model, ids, tokens))
    return CheckpointReadings(torch.stack(probabilities), torch.stack(attentions), maps)  # (K, C), (K, N, N)


def settled_index(probabilities: torch.Tensor, margin: float) -> int:
    """The first checkpoint (its index) from which every reading to the end agrees with the final one: the same
    class and, where the final reading is a clear opinion (its two likeliest classes at least ``margin`` apart), a
    clear one too. An untrained model leans by chance: by class alone, "The film was not good." read at P(negative)
    0.51 by random weights would have settled at step 0.

    Shape:
        probabilities: (K, C), oldest first.
    """
    likeliest = probabilities.topk(2, dim=-1).values  # (K, 2)
    clear = likeliest[:, 0] - likeliest[:, 1] >= margin  # (K,)
    predicted = probabilities.argmax(dim=-1)  # (K,)
    agrees = ((predicted == predicted[-1]) & (clear | ~clear[-1])).tolist()
    index = len(agrees) - 1
    while index > 0 and agrees[index - 1]:
        index -= 1
    return index
