"""Activation patching between two sentences of the same length: which residual vector, and which head, carries
the decision.

Shape letters: L = layers, H = heads, N = tokens, D = d_model, d_k = D // H, C = classes, R = patched runs.

Run the destination sentence (A, for "B into A") and the source (B) once, keeping the residual stream at every
stage (stage 0 enters block 1, stage s leaves block s) and every head's context before W_o. Then rerun the
destination with one piece taken from the source: one stage's vector at one position, or one head's context at
every position. A patch at stage s (or in block s + 1) changes nothing before it, so one pass per stage runs the
destination up to stage s once and only then becomes one row per patch (``replace_hook``'s ``copies``): the blocks
before the patch run once instead of once per run. A vector (or context) the two sentences share exactly is no
patch at all: it restores 0 and is not rerun. ``ROW_TOKENS`` and the memory budget (``batching``) bound a pass, and
the passes, which do not depend on each other, run side by side on the CPU's idle cores (``batching.in_parallel``).
A model that reads only its first token ([CLS] or <s>, ``pooling`` "first") needs only that row out of the last
layer's feed-forward, its largest product, so a pass runs it on that row alone (``first_position_hook``): the layer
adds the one row back to every position, and only the first is read.
The hooks that replace the pieces live for that call only (``hub.hooks.added``), on the modules each model names
in ``stage_modules`` and ``attention_projections``: the tutorial's model and a Hub model alike. ``patched_logits``
is the plain version, one whole run, that the tests hold the passes to.

The measure is the logit difference LD = logit[t] − logit[u], with t the class B predicts and u the class A
predicts (A's runner-up when both predict the same class). The share restored is (LD_patched − LD_dest) /
(LD_source − LD_dest): 0 when the patch changes nothing, 1 when it gives the source's LD. With two classes it
does not depend on which class is t.
"""

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from ..hub import hooks
from ..interface import Classifier
from . import batching
from .run import check_sentence

DIRECTIONS = ("b_into_a", "a_into_b")
ROW_TOKENS = 65_536  # tokens per batched pass: at most ROW_TOKENS // N patched runs at a time
MIN_GAP = 1e-6  # |LD_B − LD_A| below this leaves nothing to restore


@dataclass(frozen=True)
class Activations:
    """One sentence's run: its logits, the residual stream at every stage and every head's context before W_o.

    Shape:
        logits: (C,); states: (L + 1, N, D); contexts: (L, N, H, d_k).
    """

    logits: torch.Tensor
    states: torch.Tensor
    contexts: torch.Tensor


@dataclass(frozen=True)
class Patching:
    """The share of the logit difference each patch restores, and what it is measured on.

    Shape:
        restored: (L + 1, N), stage 0 = after the embeddings; heads: (L, H). Both 0 for no change, 1 for the
        source's logit difference.
    """

    direction: str
    target: int
    contrast: int
    ld_a: float
    ld_b: float
    restored: torch.Tensor
    heads: torch.Tensor


def _stream(output):
    """A stage module's residual stream: its output, or the first element of a block's (stream, weights)."""
    return output[0] if isinstance(output, tuple) else output


def replace_hook(rows: torch.Tensor, positions: torch.Tensor, values: torch.Tensor, copies: int = 0) -> Callable:
    """A forward hook that sets the stream's vector at (rows[k], positions[k]) to values[k] for every k; with
    ``copies``, the stream of one run first becomes that many identical rows, so what follows runs once per row.

    Shape:
        rows, positions: (K,); values: (K, D); the module's stream: (B, N, D), or (1, N) -> (copies, N, D).
    """

    def hook(module, args, output):
        stream = _stream(output)  # (B, N, D)
        stream = stream.expand(copies, -1, -1).clone() if copies else stream.clone()  # (B or copies, N, D)
        stream[rows, positions] = values.to(stream.dtype)
        return (stream, *output[1:]) if isinstance(output, tuple) else stream

    return hook


def replace_heads_hook(rows: torch.Tensor, heads: torch.Tensor, values: torch.Tensor, num_heads: int) -> Callable:
    """A forward pre-hook for W_o that sets head heads[k]'s context in row rows[k] to values[k], at every position.

    Shape:
        rows, heads: (K,); values: (K, N, d_k); W_o's input: (B, N, H·d_k).
    """

    def hook(module, args):
        context, *rest = args  # (B, N, H·d_k)
        b, n, width = context.shape
        split = context.reshape(b, n, num_heads, width // num_heads).clone()  # (B, N, H, d_k)
        split[rows, :, heads] = values.to(split.dtype)  # the indexed view is (K, N, d_k)
        return (split.reshape(b, n, width), *rest)

    return hook


def first_position_hook(module, args) -> tuple:
    """A forward pre-hook that keeps only position 0 of the module's input.

    Shape:
        the input: (B, N, D) -> (B, 1, D).
    """
    return (args[0][:, :1], *args[1:])


def _capture_input(store: list) -> Callable:
    """A forward pre-hook that appends the module's first input to ``store``."""

    def hook(module, args):
        store.append(args[0])

    return hook


def _capture_stream(store: list) -> Callable:
    """A forward hook that appends the module's residual stream to ``store``."""

    def hook(module, args, output):
        store.append(_stream(output))

    return hook


@torch.no_grad()
def activations(model: Classifier, input_ids: torch.Tensor) -> list[Activations]:
    """Run a batch of sentences of one length once and keep, for each, what patching takes from it.

    Shape:
        input_ids: (B, N). Returns B ``Activations``.
    """
    states: list[torch.Tensor] = []
    contexts: list[torch.Tensor] = []
    specs = [(module, _capture_stream(states), "post") for module in model.stage_modules()]
    specs += [
        (model.attention_projections(layer)[1], _capture_input(contexts), "pre") for layer in range(model.num_layers)
    ]
    with hooks.added(specs):
        logits = model(input_ids)  # (B, C)
    b, n = input_ids.shape
    stacked_states = torch.stack(states, dim=1)  # (B, L + 1, N, D)
    stacked_contexts = torch.stack(contexts, dim=1).reshape(b, model.num_layers, n, model.num_heads, -1)
    return [Activations(logits[i], stacked_states[i], stacked_contexts[i]) for i in range(b)]  # (L, N, H, d_k)


@torch.no_grad()
def patched_logits(
    model: Classifier,
    input_ids: torch.Tensor,
    source: Activations,
    stages: Sequence[tuple[int, int]] = (),
    heads: Sequence[tuple[int, int]] = (),
) -> torch.Tensor:
    """One run of ``input_ids`` with every listed piece taken from ``source``, all at once.

    Args:
        model: the classifier, in eval mode.
        input_ids: the destination sentence.
        source: the source sentence's ``activations``, same length.
        stages: (stage, position) pairs: the residual vector to take (stage 0 = after the embeddings).
        heads: (layer, head) pairs: the head's context to take, at every position.

    Shape:
        input_ids: (1, N). Returns (C,).
    """
    specs = []
    for stage, module in enumerate(model.stage_modules()):
        position = _indices([p for s, p in stages if s == stage], input_ids.device)  # (K_s,)
        if len(position):
            hook = replace_hook(torch.zeros_like(position), position, source.states[stage, position])
            specs.append((module, hook, "post"))
    for layer in range(model.num_layers):
        head = _indices([h for at, h in heads if at == layer], input_ids.device)  # (K_l,)
        if len(head):
            values = source.contexts[layer][:, head].transpose(0, 1)  # (N, K_l, d_k) -> (K_l, N, d_k)
            hook = replace_heads_hook(torch.zeros_like(head), head, values, model.num_heads)
            specs.append((model.attention_projections(layer)[1], hook, "pre"))
    with hooks.added(specs):
        return model(input_ids)[0]  # (C,)


def _indices(values: list[int], device: torch.device) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.long, device=device)


def _stage_pass(
    model: Classifier,
    input_ids: torch.Tensor,
    source: Activations,
    stage: int,
    positions: torch.Tensor,
    heads: torch.Tensor,
) -> torch.Tensor:
    """One pass: the destination runs to ``stage`` once, then as one row per patch: rows 0 .. P − 1 take the
    source's vector at one of ``positions`` at this stage, the next K take one of ``heads``' context in the block
    after it (layer ``stage``, counting from 0), at every position. A model that reads its first token runs its last
    feed-forward on that row alone.

    Shape:
        input_ids: (1, N); positions: (P,); heads: (K,), empty at the last stage. Returns (P + K, C).
    """
    rows, device = len(positions) + len(heads), positions.device
    patched_rows = torch.arange(len(positions), device=device)  # (P,)
    on_stage = replace_hook(patched_rows, positions, source.states[stage, positions], copies=rows)
    specs = [(model.stage_modules()[stage], on_stage, "post")]
    if len(heads):
        values = source.contexts[stage][:, heads].transpose(0, 1)  # (N, K, d_k) -> (K, N, d_k)
        in_block = replace_heads_hook(torch.arange(len(positions), rows, device=device), heads, values, model.num_heads)
        specs.append((model.attention_projections(stage)[1], in_block, "pre"))
    if model.pooling == "first":
        specs.append((model.feed_forward_input(model.num_layers - 1), first_position_hook, "pre"))
    with hooks.added(specs):
        return model(input_ids)  # (P + K, C)


def _changed(source: torch.Tensor, dest: torch.Tensor) -> torch.Tensor:
    """The indices along dim 0 where ``source`` and ``dest`` differ anywhere: (M,), from (X, ...) each."""
    return (source != dest).reshape(len(source), -1).any(dim=1).nonzero()[:, 0]


def _pieces(source: Activations, dest: Activations, stage: int) -> tuple[torch.Tensor, torch.Tensor]:
    """What differs at ``stage``: the positions whose vector, and the heads of the block after it (none after the
    last block) whose context, the source and the destination do not share exactly: ((P,), (K,))."""
    positions = _changed(source.states[stage], dest.states[stage])  # (P,)
    if stage == len(source.contexts):
        return positions, positions[:0]
    return positions, _changed(*(run.contexts[stage].transpose(0, 1) for run in (source, dest)))  # (K,)


def planned_passes(pieces: list[tuple[torch.Tensor, torch.Tensor]], most: int, threads: int) -> list[tuple]:
    """Every stage's patches (its positions, then its heads) cut into passes of at most ``most`` rows, and into at
    least ``threads`` passes where the stage has that many rows, so the threads share each stage's work evenly.
    Returns (stage, positions, heads) per pass, the costliest stages (the earliest) first."""
    planned = []
    for stage, (positions, heads) in enumerate(pieces):
        rows, p = len(positions) + len(heads), len(positions)
        for part in batching.passes(rows, min(most, math.ceil(rows / threads))) if rows else []:
            planned.append(
                (stage, positions[part.start : part.stop], heads[max(0, part.start - p) : max(0, part.stop - p)])
            )
    return planned


def pass_rows(model: Classifier, tokens: int, row_tokens: int, threads: int) -> int:
    """The most rows one pass may hold: within ``row_tokens`` and within its thread's share of the activation memory
    budget, so ``threads`` passes at once hold at most ``batching.MEMORY_BUDGET_BYTES`` by ``row_bytes``' estimate
    (a DistilBERT-base's 4-row pass at 512 tokens held 150–180 MB of its 216), however many passes the grid has."""
    budget = batching.MEMORY_BUDGET_BYTES // threads
    return max(1, min(row_tokens // tokens, batching.rows_per_pass(model, tokens, backward=False, budget=budget)))


def compared_classes(logits_a: torch.Tensor, logits_b: torch.Tensor) -> tuple[int, int]:
    """(t, u): the class B predicts, and the class A predicts, or A's runner-up when both predict the same.

    Shape:
        logits_a, logits_b: (C,).
    """
    target = int(logits_b.argmax())
    others = logits_a.clone()
    others[target] = -torch.inf
    contrast = int(logits_a.argmax()) if int(logits_a.argmax()) != target else int(others.argmax())
    return target, contrast


@torch.inference_mode()  # nothing it returns is differentiated; it skips autograd's version counters
def activation_patching(
    model: Classifier,
    ids_a: torch.Tensor,
    ids_b: torch.Tensor,
    direction: str = "b_into_a",
    row_tokens: int = ROW_TOKENS,
    threads: int | None = None,
) -> Patching:
    """Patch every stage × position, and every head, from one sentence into the other, in batched passes.

    Args:
        model: the classifier, in eval mode.
        ids_a, ids_b: the two sentences, the same number of tokens.
        direction: "b_into_a" reruns A with pieces of B; "a_into_b" reruns B with pieces of A.
        row_tokens: tokens per batched pass (``ROW_TOKENS``).
        threads: passes run at once; None for what ``batching.MODEL_THREADS`` lends (the cores other jobs leave).

    Shape:
        ids_a, ids_b: (1, N).

    Returns:
        A ``Patching``.

    Raises:
        ValueError: other lengths, an unknown direction, or two sentences with the same logit difference.
    """
    check_sentence(model, ids_a)
    check_sentence(model, ids_b)
    if ids_a.shape != ids_b.shape:
        raise ValueError(f"the sentences need the same number of tokens, got {ids_a.size(1)} and {ids_b.size(1)}")
    if direction not in DIRECTIONS:
        raise ValueError(f"direction is one of {', '.join(DIRECTIONS)}, got {direction!r}")
    run_a, run_b = activations(model, torch.cat([ids_a, ids_b]))
    target, contrast = compared_classes(run_a.logits, run_b.logits)
    ld_a, ld_b = (float(run.logits[target] - run.logits[contrast]) for run in (run_a, run_b))
    if abs(ld_b - ld_a) < MIN_GAP:
        raise ValueError("the two sentences give the same logit difference, so there is nothing to restore")
    ids, source, dest, ld_dest, ld_source = (
        (ids_a, run_b, run_a, ld_a, ld_b) if direction == "b_into_a" else (ids_b, run_a, run_b, ld_b, ld_a)
    )

    def share(logits: torch.Tensor) -> torch.Tensor:  # (R, C) -> (R,)
        return (logits[:, target] - logits[:, contrast] - ld_dest) / (ld_source - ld_dest)

    pieces = [_pieces(source, dest, stage) for stage in range(model.num_layers + 1)]
    with batching.MODEL_THREADS.lend(model) as lent:
        threads = lent if threads is None else threads
        n = ids.size(1)
        planned = planned_passes(pieces, pass_rows(model, n, row_tokens, threads), threads)
        calls = [functools.partial(_stage_pass, model, ids, source, *in_pass) for in_pass in planned]
        shares = [
            share(logits) for logits in batching.in_parallel(calls, threads, "patching")
        ]  # each (P' + K',), positions first
    restored = torch.zeros(model.num_layers + 1, n, device=ids.device)  # (L + 1, N)
    heads = torch.zeros(model.num_layers, model.num_heads, device=ids.device)  # (L, H)
    for (stage, positions, by_head), done in zip(planned, shares, strict=True):
        restored[stage, positions] = done[: len(positions)].to(restored.dtype)
        if len(by_head):
            heads[stage, by_head] = done[len(positions) :].to(heads.dtype)
    return Patching(
        direction=direction, target=target, contrast=contrast, ld_a=ld_a, ld_b=ld_b, restored=restored, heads=heads
    )
