"""How many rows of one sentence a heavy method runs in one pass: as many as its activations fit in a memory budget.

Shape letters: L = layers, H = heads, N = tokens, D = d_model, F = the feed-forward width (taken as 4D, BERT's).

Integrated Gradients runs S + 2 path points and head importance 1 + L·H knocked-out copies of one sentence. One
batch holds them all on the bundled model (a few MB a row), but a row of DistilBERT-base at 512 tokens holds about
340 MB for the backward pass: 34 points in one batch would be 11 GB. So each method cuts its rows into passes of at
most ``rows_per_pass`` rows, sized from the model's shapes, and the passes are balanced (73 rows at most 50 a pass
run as 37 + 36, not 50 + 23).
"""

import itertools
import math

# Bytes of activations one heavy call may hold at once, beyond the weights; more only saves per-pass overhead, which
# is small at these sizes (benchmarks/real_size.py times the passes against the bare model's).
MEMORY_BUDGET_BYTES = 512 * 2**20
FLOAT_BYTES = 4


def row_bytes(model, tokens: int, backward: bool) -> int:
    """Estimated bytes one row of ``tokens`` tokens holds at its peak in a forward pass.

    With ``backward``, every layer keeps what autograd saves for the gradient: about N·(12D + 2F) + 2H·N²
    floats a layer (counted with ``saved_tensors_hooks`` on one DistilBERT-base layer at 16 to 512 tokens: 72 to
    90 % of this; the rest is room for the gradients' own transients). Without, only one layer's tensors are alive
    at once: its residual stream, projections and feed-forward, N·(4D + 2F), and the scores, masked scores and
    weights, 3H·N².
    """
    n, d, h = tokens, model.d_model, model.num_heads
    f = 4 * d
    if backward:
        floats = model.num_layers * (n * (12 * d + 2 * f) + 2 * h * n * n)
    else:
        floats = n * (4 * d + 2 * f) + 3 * h * n * n
    return FLOAT_BYTES * floats


def rows_per_pass(model, tokens: int, backward: bool, budget: int | None = None) -> int:
    """The most rows of ``tokens`` tokens one pass may run within ``budget`` bytes (``MEMORY_BUDGET_BYTES``); at
    least 1."""
    budget = MEMORY_BUDGET_BYTES if budget is None else budget
    return max(1, budget // row_bytes(model, tokens, backward))


def passes(rows: int, most: int) -> list[slice]:
    """``rows`` rows cut into the fewest passes of at most ``most`` rows each, of sizes that differ by at most one."""
    count = math.ceil(rows / most)
    bounds = [round(i * rows / count) for i in range(count + 1)]
    return [slice(start, stop) for start, stop in itertools.pairwise(bounds)]


def passes_for(model, rows: int, tokens: int, backward: bool) -> list[slice]:
    """The passes a heavy method runs ``rows`` rows of a ``tokens``-token sentence in (``rows_per_pass``)."""
    return passes(rows, rows_per_pass(model, tokens, backward))
