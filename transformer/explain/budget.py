"""Defaults that scale with the model: as much work as a few seconds of one CPU thread allow, estimated from the
model's shapes, never more than the bundled model's defaults.

Shape letters: L = layers, H = heads, N = tokens, D = d_model, F = the feed-forward width (taken as 4D, as
``batching`` does).

One row of N tokens costs about 2·L·(N·(4D² + 2DF) + 2N²D) floating-point operations forward (the four
projections, the feed-forward and the two attention products, two operations a multiply-add), and forward and
backward takes ``BACKWARD_COST`` times a forward's time. Both constants are measured on one thread of this
project's 2-core machine on a DistilBERT-base at 128 tokens (``benchmarks/real_size.py``'s floors, CPU time): 73
forward rows, 817 GFLOP by this count, in 12.7 s (64 GFLOP/s, taken lower: ``FLOPS_PER_SECOND``); 34 forward and
backward rows in 10.4 s, 1.75 times a forward row's time. On the bundled model every default is its own maximum, so
its answers are unchanged; a DistilBERT-base gets fewer steps and ranks fewer heads, within the seconds its caller
allows.
"""

import math
import sys

from ..interface import Classifier
from .attribution import DEFAULT_IG_STEPS

FLOPS_PER_SECOND = 60e9
BACKWARD_COST = 2
MIN_IG_STEPS = 4  # the Attributions slider's least and its step: a default is a multiple of it
MIN_HEADS_RANKED = 12  # a DistilBERT-base's one layer: fewer ranks too little to read


def row_flops(model: Classifier, tokens: int, backward: bool = False) -> float:
    """Estimated floating-point operations of one row of ``tokens`` tokens through ``model``, forward; with
    ``backward``, the forward's that take as long as forward and backward (``BACKWARD_COST`` times as many)."""
    n, d, f = tokens, model.d_model, 4 * model.d_model
    forward = 2 * model.num_layers * (n * (4 * d * d + 2 * d * f) + 2 * n * n * d)
    return BACKWARD_COST * forward if backward else forward


def affordable_rows(model: Classifier, tokens: int, seconds: float, backward: bool = False) -> int:
    """How many rows of ``tokens`` tokens ``seconds`` of ``FLOPS_PER_SECOND`` pay for (0 when not even one; with no
    limit, ``math.inf`` seconds, ``sys.maxsize``)."""
    rows = seconds * FLOPS_PER_SECOND / row_flops(model, tokens, backward)
    return math.floor(rows) if math.isfinite(rows) else sys.maxsize


def ig_steps(model: Classifier, tokens: int, seconds: float) -> int:
    """Integrated Gradients' default steps for a ``tokens``-token sentence: the most, a multiple of
    ``MIN_IG_STEPS`` up to ``DEFAULT_IG_STEPS`` (the bundled model's), whose S + 2 forward and backward rows fit in
    ``seconds``; at least ``MIN_IG_STEPS`` (the completeness check then says whether more are needed)."""
    steps = affordable_rows(model, tokens, seconds, backward=True) - 2  # the path's two ends are rows too
    return min(DEFAULT_IG_STEPS, max(MIN_IG_STEPS, steps // MIN_IG_STEPS * MIN_IG_STEPS))


def heads_ranked(model: Classifier, tokens: int, seconds: float) -> int:
    """How many heads head importance knocks out by default for a ``tokens``-token sentence: every head when its
    1 + L·H forward rows fit in ``seconds``, else as many as fit after the one forward and backward row that picks
    them (``knockout.head_importance``), at least ``MIN_HEADS_RANKED`` (or every head, when fewer)."""
    every = model.num_layers * model.num_heads
    rows = affordable_rows(model, tokens, seconds)  # one knocked-out head a row
    if rows >= 1 + every:
        return every
    return min(every, max(MIN_HEADS_RANKED, rows - BACKWARD_COST))  # the picking pass: a forward and backward row
