"""How many rows of one sentence a heavy method runs in one pass: as many as its activations fit in a memory budget.

Shape letters: L = layers, H = heads, N = tokens, D = d_model, F = the feed-forward width (taken as 4D, BERT's).

Integrated Gradients runs S + 2 path points and head importance 1 + L·H knocked-out copies of one sentence. One
batch holds them all on the bundled model (a few MB a row), but a row of DistilBERT-base at 512 tokens holds about
340 MB for the backward pass: 34 points in one batch would be 11 GB. So each method cuts its rows into passes of at
most ``rows_per_pass`` rows, sized from the model's shapes, and the passes are balanced (73 rows at most 50 a pass
run as 37 + 36, not 50 + 23).

Passes that do not depend on each other (activation patching's) can run side by side (``in_parallel``) on the cores
that torch's intra-op threads leave idle: the explorer sets one thread per request, so on a 2-core machine one
patching job would otherwise hold one core while the other waits. The threads come from one budget for the whole
process (``MODEL_THREADS``): a job takes what the jobs running beside it leave, at least its own thread, so two
patching jobs at once share the cores instead of each taking a thread per core.

Each method's passes go through ``progress``, a tqdm bar of its own that prints nothing: the explorer's page draws it
as the job's progress bar (Gradio's ``track_tqdm``), where a real-size model's job takes seconds.
"""

import contextlib
import contextvars
import itertools
import math
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import torch
from tqdm import tqdm

from ..interface import Classifier
from . import heap

T = TypeVar("T")

# Bytes of activations one heavy call may hold at once, beyond the weights; more only saves per-pass overhead, which
# is small at these sizes (benchmarks/real_size.py times the passes against the bare model's).
MEMORY_BUDGET_BYTES = 512 * 2**20
FLOAT_BYTES = 4


def row_bytes(model: Classifier, tokens: int, backward: bool) -> int:
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


def rows_per_pass(model: Classifier, tokens: int, backward: bool, budget: int | None = None) -> int:
    """The most rows of ``tokens`` tokens one pass may run within ``budget`` bytes (``MEMORY_BUDGET_BYTES``); at
    least 1."""
    budget = MEMORY_BUDGET_BYTES if budget is None else budget
    return max(1, budget // row_bytes(model, tokens, backward))


def passes(rows: int, most: int) -> list[slice]:
    """``rows`` rows cut into the fewest passes of at most ``most`` rows each, of sizes that differ by at most one."""
    count = math.ceil(rows / most)
    bounds = [round(i * rows / count) for i in range(count + 1)]
    return [slice(start, stop) for start, stop in itertools.pairwise(bounds)]


def passes_for(model: Classifier, rows: int, tokens: int, backward: bool) -> list[slice]:
    """The passes a heavy method runs ``rows`` rows of a ``tokens``-token sentence in (``rows_per_pass``)."""
    return passes(rows, rows_per_pass(model, tokens, backward))


def progress(items: Sequence[T], desc: str) -> Iterable[T]:
    """``items``, a method's passes, through a tqdm bar named ``desc`` that prints nothing (``disable``): a page that
    tracks tqdm (Gradio's ``gr.Progress(track_tqdm=True)``) still draws it, a pass at a time."""
    return tqdm(items, desc=desc, unit="pass", leave=False, disable=True)


def usable_cores() -> int:
    """The cores this process may run on: its CPU affinity where the platform tells it (Linux), else every core
    (macOS and Windows have no ``os.sched_getaffinity``)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


def pass_threads(model: Classifier) -> int:
    """How many passes of ``model`` may run at once: on a CPU, the cores divided by torch's intra-op threads (1 in
    the explorer, which sets one); on a GPU, 1, since its kernels already share one device."""
    if next(model.parameters()).device.type != "cpu":
        return 1
    return max(1, usable_cores() // torch.get_num_threads())


class ThreadBudget:
    """The threads that the process's jobs run their passes on, shared: ``pass_threads`` in all, lent to each job for
    as long as it runs (``lend``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.lent = 0  # threads lent to the jobs running now, each job's own thread counted

    @contextlib.contextmanager
    def lend(self, model: Classifier) -> Iterator[int]:
        """Inside it, the threads one job of ``model`` may run its passes on: what the jobs running beside it leave
        of ``pass_threads(model)``, at least 1 (the job's own thread, which runs anyway); given back as it ends."""
        with self._lock:
            given = max(1, pass_threads(model) - self.lent)
            self.lent += given
        try:
            yield given
        finally:
            with self._lock:
                self.lent -= given


MODEL_THREADS = ThreadBudget()  # the process's one budget of threads for passes side by side


def in_parallel(calls: Sequence[Callable[[], T]], threads: int, desc: str = "passes") -> list[T]:
    """Each call's result, in order, with up to ``threads`` calls running at once on threads of their own, counted
    by a ``progress`` bar named ``desc`` as they end.

    A call runs in a copy of the caller's context (a job's deadline goes with it) and with the caller's grad and
    inference modes, which are per thread in torch. The memory each call freed goes back to the system as it ends
    (``heap``): passes of unlike sizes on two threads, each with its own arena, otherwise left holes that grew a
    DistilBERT-base's 128-token patching job to 1.7 times its memory budget. What the caller freed before goes back
    first: the threads, with arenas of their own, would not reuse it (a DistilBERT-base's 512-token analyses and
    runs left 200 MB of it under the passes). The first error is raised once every started call has ended; calls not
    yet started are cancelled.

    Hooks do not go with a call: a hook added for one call (``hub.hooks.added``: head knockout, positions off, a
    capture) acts only in the thread that added it, so a call that needs one adds it inside itself (as ``patching``'s
    passes do); one the caller added acts in none of the calls. Take ``threads`` from ``MODEL_THREADS.lend``, so that
    jobs running at once share the cores.
    """
    heap.return_freed_memory()  # what the caller freed (the runs the passes start from) is no use to their arenas
    if threads <= 1 or len(calls) <= 1:
        return [_freeing(call) for call in progress(calls, desc)]
    grad, inference = torch.is_grad_enabled(), torch.is_inference_mode_enabled()

    def in_modes(call: Callable[[], T]) -> T:
        with torch.inference_mode(inference), torch.set_grad_enabled(grad):
            return _freeing(call)

    with ThreadPoolExecutor(max_workers=threads) as pool:
        futures = [pool.submit(contextvars.copy_context().run, in_modes, call) for call in calls]
        try:
            return [future.result() for future in progress(futures, desc)]
        except BaseException:
            pool.shutdown(cancel_futures=True)
            raise


def _freeing(call: Callable[[], T]) -> T:
    """``call()``, then the memory it freed handed back (``heap.return_freed_memory``)."""
    try:
        return call()
    finally:
        heap.return_freed_memory()
