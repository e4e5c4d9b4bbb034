"""The contribution graph of one sentence: from the tokens through every head and feed-forward to the class.

Shape letters: L = layers, H = heads, N = tokens, C = classes.

Nodes are every position at every stage (stage 0 enters block 1, stage s leaves block s), then the pooled vector and
the class. An edge of block l goes from stage l to stage l + 1: the residual and the feed-forward at position i, and
head (l, h) from key j to query i; the pooling edges give each position's share of the pooled vector. Every edge's
importance is its part's share of the sum it joins (``routes.importance``), so the graph says which parts make up
each vector, not what would happen without them (importance, not causation).

Flow follows the importances down from the class: the class gets 1, the positions of the last stage their pooling
share, and each vector hands its flow to its parts in proportion to their importances. A head's flow, summed over its
edges, is the graph's estimate of how much of the decision travels through it (``Routes.head_share``).
"""

from dataclasses import dataclass

import torch

from ..interface import Classifier
from .routes import DEFAULT_NORM, NORMS, decompose, importance, proximity

KINDS = ("head", "feed-forward", "residual", "pooling")


@dataclass(frozen=True)
class Routes:
    """One sentence's importances at every sum, and the flow they give.

    Shape:
        residual, bias, feed_forward: (L, N); heads: (L, H, N, N), [layer, head, query, key]; pooling: (N,);
        probabilities: (C,); flow: (L + 1, N); head_share: (L, H).
    """

    norm: str
    probabilities: torch.Tensor
    residual: torch.Tensor
    heads: torch.Tensor
    bias: torch.Tensor
    feed_forward: torch.Tensor
    pooling: torch.Tensor
    flow: torch.Tensor
    head_share: torch.Tensor


@dataclass(frozen=True)
class Edge:
    """One kept edge. ``layer`` is the block (0-based; the last stage's for a pooling edge) and ``head`` −1 unless
    ``kind`` is "head"; ``source`` and ``target`` are positions (the pooled vector's edge has target −1)."""

    kind: str
    layer: int
    head: int
    source: int
    target: int
    importance: float


def pooling_share(model: Classifier, last: torch.Tensor, norm: str) -> torch.Tensor:
    """Each position's share of what the classifier reads: 1 for the first token of a model that reads [CLS], else
    each position's part of the mean of the last stream (the final LayerNorm, position by position, left out).

    Shape: last (N, D) -> (N,).
    """
    if model.pooling == "first":
        return torch.nn.functional.one_hot(torch.tensor(0), last.size(0)).to(last)  # (N,)
    near = proximity(last.mean(dim=0), last / last.size(0), norm)  # (N,)
    return near / near.sum().clamp(min=torch.finfo(last.dtype).tiny)


def flows(pooling: torch.Tensor, residual, heads, feed_forward) -> tuple[torch.Tensor, torch.Tensor]:
    """The flow at every node and through every head, from the class down.

    Shape:
        pooling: (N,); residual, feed_forward: (L, N); heads: (L, H, N, N). Returns (flow (L + 1, N), per head
        (L, H)).
    """
    layers = residual.size(0)
    node = [pooling]
    shares = [torch.zeros(0)] * layers
    for layer in reversed(range(layers)):
        above = node[0]  # (N,): stage layer + 1
        through = heads[layer] * above[None, :, None]  # (H, N, N)
        shares[layer] = through.sum(dim=(1, 2))  # (H,)
        node.insert(0, above * (residual[layer] + feed_forward[layer]) + through.sum(dim=(0, 1)))  # (N,)
    return torch.stack(node), torch.stack(shares)


@torch.no_grad()
def routes(model: Classifier, input_ids: torch.Tensor, norm: str = DEFAULT_NORM) -> Routes:
    """Every part's importance at every sum of one sentence, from one forward pass, and the flow they give.

    Args:
        model: the classifier, in eval mode.
        input_ids: one sentence, no padding.
        norm: "l2" (dot products only) or "l1" (ALTI's), the distance of the proximity rule.

    Shape:
        input_ids: (1, N).

    Returns:
        A ``Routes``, on the model's device.
    """
    if norm not in NORMS:
        raise ValueError(f"norm must be one of {', '.join(NORMS)}; got {norm!r}")
    parts, stages, logits = decompose(model, input_ids)
    blocks = [importance(block, norm) for block in parts]
    residual, feed_forward = (torch.stack([getattr(b, name) for b in blocks]) for name in ("residual", "feed_forward"))
    heads, bias = torch.stack([b.heads for b in blocks]), torch.stack([b.bias for b in blocks])  # (L, H, N, N), (L, N)
    pooling = pooling_share(model, stages[-1], norm)
    flow, head_share = flows(pooling, residual, heads, feed_forward)
    probabilities = logits[0].softmax(dim=-1)  # (C,)
    return Routes(norm, probabilities, residual, heads, bias, feed_forward, pooling, flow, head_share)


def kept_edges(found: Routes, threshold: float) -> list[Edge]:
    """The edges of importance ≥ ``threshold`` reached from the class: the pooling edges, then block by block from
    the last down, only those into a position some kept edge leaves from above."""
    positions = (found.pooling >= threshold).nonzero()[:, 0].tolist()
    edges = [Edge("pooling", found.residual.size(0), -1, i, -1, float(found.pooling[i])) for i in positions]
    for layer in reversed(range(found.residual.size(0))):
        sources: set[int] = set()
        for i in positions:
            for kind, value in (("residual", found.residual[layer, i]), ("feed-forward", found.feed_forward[layer, i])):
                if value >= threshold:
                    edges.append(Edge(kind, layer, -1, i, i, float(value)))
                    sources.add(i)
        heads = found.heads[layer][:, positions]  # (H, P, N): the kept queries' rows
        for head, row, key in (heads >= threshold).nonzero().tolist():
            edges.append(Edge("head", layer, head, key, positions[row], float(heads[head, row, key])))
            sources.add(key)
        positions = sorted(sources)
    return edges


def strongest(edges: list[Edge], limit: int) -> list[Edge]:
    """The ``limit`` most important of ``edges``, in their order: what an answer or a figure of bounded size holds."""
    if len(edges) <= limit:
        return edges
    kept = set(sorted(range(len(edges)), key=lambda k: -edges[k].importance)[:limit])
    return [edge for k, edge in enumerate(edges) if k in kept]
