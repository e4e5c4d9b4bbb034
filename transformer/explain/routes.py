"""How the decision travels: each block's output split into parts, and how much each part makes of its sum (ALTI,
Ferrando et al. 2022; information-flow routes, Ferrando & Voita 2024).

Shape letters: L = layers, H = heads, N = tokens, D = d_model, d_k = D // H, Q = queries in one chunk.

A block turns the stream x (every position's vector) into y. Position i's y_i is a sum of parts: the residual x_i,
each head h's share from each key j, α_hij · f_h(x_j) (key j's value times the head's slice of W_o, as
``attention_norms``), W_o's bias, and the feed-forward's output at i. In the tutorial's Pre-LN blocks
(y = x + attn(LN(x)) + ffn(...)) that sum is exact. In a Post-LN block (BERT's: y = LN₂(a + ffn(a)),
a = LN₁(x + attn(x))) each LayerNorm is linearised as ALTI does: LN(z) = γ ⊙ (z − mean z) / σ(z) + β, with σ the
one the forward pass computed at that position, is linear in z's parts, so every part goes through both norms on its
own, the βs join the bias, and the parts still add up exactly to y.

Each part z's importance to the sum y it joins is its proximity, max(0, ‖y‖ − ‖y − z‖) (how far the sum moves
towards the part; a part pointing away counts 0), divided by the sum of every part's (the bias's included), so the
importances of one sum are non-negative and add up to 1. The norm is L2 by default: ‖y − z‖² = ‖y‖² − 2 y·z + ‖z‖²
needs dot products only, so no (query, key, head) vector is ever made, and a DistilBERT-base's graph at 128 tokens
takes about 2 forward passes (``benchmarks/routes.py``). ``norm="l1"`` is ALTI's own; its distances are taken a
chunk of queries at a time (``QUERY_CHUNK_BYTES``), within the memory budget, but they touch every (query, key, head,
D) number: about 65 forward passes at that size, 8 s on one thread.
"""

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field

import torch
from torch import nn

from ..hub import hooks
from ..interface import Classifier
from .attention_norms import value_capture
from .run import check_sentence

NORMS = ("l2", "l1")
DEFAULT_NORM = "l2"  # the explorer's: dot products only (L1, ALTI's, is ~30x slower at real size)
QUERY_CHUNK_BYTES = 64 * 2**20  # the heads' parts of one chunk of queries, (H, Q, N, D) floats, for the L1 distances
FLOAT_BYTES = 4


@dataclass(frozen=True)
class BlockParts:
    """One block's output at every position as a sum of parts, each as it enters that sum.

    Head h's part from key j at query i is ``weights[h, i, j] · scale[i] · values[h, j] @ slices[h]``: key j's value
    through the head's slice of W_o (and, in a Post-LN block, the norms' linear parts), kept apart so that the (H, N, D)
    vectors are made only where a distance needs them (``moved``).

    Shape:
        output, residual, bias, feed_forward: (N, D); weights: (H, N, N), queries on rows; scale: (N,);
        values: (H, N, d_k); slices: (H, d_k, D).
    """

    output: torch.Tensor
    residual: torch.Tensor
    weights: torch.Tensor
    scale: torch.Tensor
    values: torch.Tensor
    slices: torch.Tensor
    bias: torch.Tensor
    feed_forward: torch.Tensor

    def moved(self) -> torch.Tensor:
        """What each head moves from each key, before its weight: (H, N, D)."""
        return self.values @ self.slices  # (H, N, d_k) @ (H, d_k, D)

    def heads_sum(self) -> torch.Tensor:
        """Every head's parts at each query, added up: (N, D)."""
        contexts = self.weights @ self.values  # (H, N, d_k)
        return self.scale[:, None] * (contexts @ self.slices).sum(dim=0)  # (N, D)


@dataclass(frozen=True)
class BlockImportance:
    """Each part's share of the sum it joins; at each position the four fields add up to 1.

    Shape:
        residual, bias, feed_forward: (N,); heads: (H, N, N), [head, query, key].
    """

    residual: torch.Tensor
    heads: torch.Tensor
    bias: torch.Tensor
    feed_forward: torch.Tensor


@dataclass
class Captured:
    """What one forward pass keeps for the decomposition: the stream at every stage, every layer's values (W_v's
    output), its two LayerNorms' inputs and outputs, in the order they ran, and the attention weights."""

    stages: list = field(default_factory=list)
    values: list = field(default_factory=list)
    norms: list = field(default_factory=list)
    weights: tuple = ()


def _stream(output) -> torch.Tensor:
    """A stage module's stream: its output, or the first element of a block's (stream, weights)."""
    return output[0] if isinstance(output, tuple) else output


@contextlib.contextmanager
def capturing(model: Classifier) -> Iterator[Captured]:
    """Hooks, for one forward of one sentence, that keep what ``block_parts`` reads."""
    kept = Captured()

    def stage(module, args, output):
        kept.stages.append(_stream(output)[0])  # (N, D)

    def norm(module, args, output):
        kept.norms.append((args[0][0], output[0]))  # (N, D) in, (N, D) out

    specs = [(module, stage, "post") for module in model.stage_modules()]
    specs += [(module, norm, "post") for layer in range(model.num_layers) for module in model.layer_norms(layer)]
    with hooks.added([*specs, *value_capture(model, kept.values)]):
        yield kept


def centred(vectors: torch.Tensor, norm: nn.LayerNorm) -> torch.Tensor:
    """γ ⊙ (v − mean v): a LayerNorm's linear part, before the division by σ. Shape: (..., D) -> (..., D)."""
    return norm.weight * (vectors - vectors.mean(dim=-1, keepdim=True))


def spread(inputs: torch.Tensor, norm: nn.LayerNorm) -> torch.Tensor:
    """σ of each position's LayerNorm input, as the forward pass divided by it. Shape: (N, D) -> (N, 1)."""
    deviations = inputs - inputs.mean(dim=-1, keepdim=True)  # (N, D); written out: 4x faster than ``var`` on 1 thread
    return (deviations.square().mean(dim=-1, keepdim=True) + norm.eps).sqrt()


def block_parts(model: Classifier, kept: Captured, layer: int) -> BlockParts:
    """``layer``'s output at every position split into parts that add up to it (``Captured`` from one forward)."""
    heads, d = model.num_heads, model.d_model
    w_o = model.attention_projections(layer)[1]
    values = kept.values[layer][0]  # (N, H·d_k)
    values = values.reshape(values.size(0), heads, -1).transpose(0, 1)  # (H, N, d_k)
    slices = w_o.weight.reshape(d, heads, -1).permute(1, 2, 0)  # (H, d_k, D): y = W_o x
    x, y = kept.stages[layer], kept.stages[layer + 1]  # (N, D) each
    weights = kept.weights[layer][0]  # (H, N, N)
    (first_in, first_out), (second_in, _) = kept.norms[2 * layer : 2 * layer + 2]
    first, second = model.layer_norms(layer)
    if model.norm_first:  # y = x + attn + ffn: every part as it is
        ones = torch.ones(x.size(0), dtype=x.dtype, device=x.device)  # (N,)
        return BlockParts(y, x, weights, ones, values, slices, w_o.bias.detach().expand_as(x), y - second_in)
    # Post-LN: LN₂(LN₁(x + attn) + ffn), each norm linearised at the σ the forward pass divided by.
    s1, s2 = spread(first_in, first), spread(second_in, second)  # (N, 1) each

    def both(vectors: torch.Tensor) -> torch.Tensor:
        """Both norms' linear parts along D, σs left to the caller; on W_o's slices, so never on (H, N, D)."""
        return centred(centred(vectors, first), second)  # (..., D)

    bias = both(w_o.bias) / (s1 * s2) + centred(first.bias, second) / s2 + second.bias  # (N, D)
    feed_forward = centred(second_in - first_out, second) / s2  # (N, D)
    scale = (1 / (s1 * s2))[:, 0]  # (N,)
    return BlockParts(y, both(x) / (s1 * s2), weights, scale, values, both(slices), bias, feed_forward)


@torch.no_grad()
def decompose(model: Classifier, input_ids: torch.Tensor) -> tuple[list[BlockParts], torch.Tensor, torch.Tensor]:
    """Every block's output split into parts, the stream at every stage and the logits, from one forward pass.

    Args:
        model: the classifier, in eval mode.
        input_ids: one sentence, no padding.

    Shape:
        input_ids: (1, N). Returns (L ``BlockParts``, stages (L + 1, N, D), logits (1, C)).
    """
    check_sentence(model, input_ids)
    with capturing(model) as kept:
        logits, kept.weights = model(input_ids, output_attentions=True)
    parts = [block_parts(model, kept, layer) for layer in range(model.num_layers)]
    return parts, torch.stack(kept.stages), logits


def proximity(total: torch.Tensor, part: torch.Tensor, norm: str) -> torch.Tensor:
    """max(0, ‖y‖ − ‖y − z‖) over the last dimension. Shape: total (..., D), part (..., D) -> (...)."""
    if norm == "l1":
        return (total.abs().sum(-1) - (total - part).abs().sum(-1)).clamp(min=0)
    return (total.norm(dim=-1) - (total - part).norm(dim=-1)).clamp(min=0)


def heads_proximity(parts: BlockParts, norm: str) -> torch.Tensor:
    """Each head's part from each key, its proximity to the query's sum, without keeping every part's vector.

    Shape: returns (H, N, N), [head, query, key].
    """
    y, alpha = parts.output, parts.weights * parts.scale[None, :, None]  # (N, D), (H, N, N)
    if norm == "l2":  # ‖y − αg‖² = ‖y‖² − 2α y·g + α²‖g‖², with g = v S: y·g = (y Sᵀ)·v and ‖g‖² = v (S Sᵀ) v
        dots = (y @ parts.slices.transpose(1, 2)) @ parts.values.transpose(1, 2)  # (H, N, d_k) @ (H, d_k, N)
        gram = parts.slices @ parts.slices.transpose(1, 2)  # (H, d_k, d_k)
        sizes = ((parts.values @ gram) * parts.values).sum(dim=-1).clamp(min=0)[:, None, :]  # (H, 1, N): ‖g‖²
        length = y.norm(dim=-1)[None, :, None]  # (1, N, 1)
        square = length**2 - 2 * alpha * dots + alpha**2 * sizes  # (H, N, N)
        return (length - square.clamp(min=0).sqrt()).clamp(min=0)
    moved = parts.moved()  # (H, N, D)
    heads, n, d = moved.shape
    chunk = max(1, QUERY_CHUNK_BYTES // (FLOAT_BYTES * heads * n * d))
    rows = []
    for start in range(0, n, chunk):
        queries = slice(start, start + chunk)
        part = alpha[:, queries, :, None] * moved[:, None]  # (H, Q, N, D)
        rows.append(proximity(y[None, queries, None], part, norm))  # (H, Q, N)
    return torch.cat(rows, dim=1)  # (H, N, N)


def importance(parts: BlockParts, norm: str = DEFAULT_NORM) -> BlockImportance:
    """Each part's proximity to its sum over every part's at that position: non-negative, 1 in all (a sum that
    is exactly zero gives every part 0)."""
    if norm not in NORMS:
        raise ValueError(f"norm must be one of {', '.join(NORMS)}; got {norm!r}")
    y = parts.output
    residual, bias = proximity(y, parts.residual, norm), proximity(y, parts.bias, norm)  # (N,) each
    feed_forward, heads = proximity(y, parts.feed_forward, norm), heads_proximity(parts, norm)  # (N,), (H, N, N)
    total = (residual + bias + feed_forward + heads.sum(dim=(0, 2))).clamp(min=torch.finfo(y.dtype).tiny)  # (N,)
    return BlockImportance(residual / total, heads / total[None, :, None], bias / total, feed_forward / total)
