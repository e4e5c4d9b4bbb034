"""A sentence's token vectors at every stage (entering the first layer, leaving each), each stage on its own first
two principal components: the Token embeddings tab's map, and the Training tab's at each checkpoint.

Each stage gets its own PCA (the stages differ in scale), with a fixed sign: a component's largest
coordinate is positive, so the same sentence always draws the same map.

Shape letters: S = stages (L + 1), N = tokens, D = d_model, K = 2 principal components.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..interface import Classifier


@dataclass(frozen=True)
class EmbeddingsView:
    """The token vectors at every stage, projected on each stage's first two principal components.

    Shape:
        coordinates: (S, N, 2); explained: (S, 2), the share of the variance each component holds;
        spread: (S,), the tokens' mean cosine similarity to their mean (1: all alike, mixed).
    """

    tokens: list[str]
    coordinates: torch.Tensor
    explained: torch.Tensor
    spread: torch.Tensor


def principal_map(states: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Project points on their first two principal components, signs fixed (largest coordinate positive).

    Shape:
        states: (N, D). Returns (coordinates (N, 2), explained variance shares (2,)); missing components are 0.
    """
    centred = states - states.mean(dim=0, keepdim=True)  # (N, D)
    u, s, _ = torch.linalg.svd(centred.double(), full_matrices=False)  # u: (N, R), s: (R,)
    coordinates = (u * s)[:, :2]  # (N, min(R, 2))
    biggest = coordinates.abs().argmax(dim=0)  # (K,): the point that fixes each component's sign
    signs = coordinates.gather(0, biggest[None]).sign()  # (1, K)
    coordinates = coordinates * signs.masked_fill(signs == 0, 1.0)  # (N, K)
    variance = s.pow(2)
    explained = variance[:2] / variance.sum().clamp_min(1e-12)  # (K,)
    pad = 2 - coordinates.size(1)  # one token (or fewer dimensions) gives fewer than two components
    coordinates = torch.nn.functional.pad(coordinates, (0, pad))
    explained = torch.nn.functional.pad(explained, (0, pad))
    return coordinates.float(), explained.float()


@torch.no_grad()
def embedding_map(model: Classifier, input_ids: torch.Tensor, tokens: list[str]) -> EmbeddingsView:
    """The ``tokens`` read as ``input_ids`` (1, N), one unpadded sentence, at every stage of the model's
    ``hidden_states`` (the tutorial's model or a Hub model), each on its own two principal components."""
    states = model.hidden_states(input_ids)  # S x (1, N, D); one unpadded sentence, no mask
    stacked = torch.stack([state[0] for state in states]).float().cpu()  # (S, N, D)
    maps = [principal_map(stage) for stage in stacked]
    unit = torch.nn.functional.normalize(stacked, dim=-1)  # (S, N, D)
    centre = torch.nn.functional.normalize(stacked.mean(dim=1, keepdim=True), dim=-1)  # (S, 1, D)
    return EmbeddingsView(
        tokens=tokens,
        coordinates=torch.stack([coordinates for coordinates, _ in maps]),  # (S, N, 2)
        explained=torch.stack([explained for _, explained in maps]),  # (S, 2)
        spread=(unit * centre).sum(dim=-1).mean(dim=1),  # (S,)
    )
