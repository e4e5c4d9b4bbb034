"""Activation patching between two sentences of the same length: which residual vector, and which head, carries
the decision.

Shape letters: L = layers, H = heads, N = tokens, D = d_model, d_k = D // H, C = classes, R = patched runs.

Run the destination sentence (A, for "B into A") and the source (B) once, keeping the residual stream at every
stage (stage 0 enters block 1, stage s leaves block s) and every head's context before W_o. Then rerun the
destination with one piece taken from the source: one stage's vector at one position, or one head's context at
every position. Every patched run is a row of one batch (``ROW_TOKENS`` bounds a pass), and the hooks that
replace the pieces live for that call only (``hub.hooks.added``), on the modules each model names in
``stage_modules`` and ``attention_projections``: the tutorial's model and a Hub model alike.

The measure is the logit difference LD = logit[t] − logit[u], with t the class B predicts and u the class A
predicts (A's runner-up when both predict the same class). The share restored is (LD_patched − LD_dest) /
(LD_source − LD_dest): 0 when the patch changes nothing, 1 when it gives the source's LD. With two classes it
does not depend on which class is t.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from ..hub import hooks
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


def replace_hook(rows: torch.Tensor, positions: torch.Tensor, values: torch.Tensor) -> Callable:
    """A forward hook that sets the stream's vector at (rows[k], positions[k]) to values[k] for every k.

    Shape:
        rows, positions: (K,); values: (K, D); the module's stream: (B, N, D).
    """

    def hook(module, args, output):
        stream = _stream(output).clone()  # (B, N, D)
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
def activations(model, input_ids: torch.Tensor) -> list[Activations]:
    """Run a batch of sentences of one length once and keep, for each, what patching takes from it.

    Shape:
        input_ids: (B, N). Returns B ``Activations``.
    """
    states, contexts = [], []
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
    model,
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
    stage_plan, head_plan = (_one_row_plan(pairs, input_ids.device) for pairs in (stages, heads))
    return _patched_runs(model, input_ids, source, stage_plan, head_plan, rows=1)[0]


def _one_row_plan(pairs: Sequence[tuple[int, int]], device: torch.device) -> torch.Tensor:
    """(row 0, index, index) for each pair: (K, 3)."""
    return torch.tensor([(0, *pair) for pair in pairs], dtype=torch.long, device=device).reshape(-1, 3)


def _patched_runs(
    model, input_ids: torch.Tensor, source: Activations, stage_plan: torch.Tensor, head_plan: torch.Tensor, rows: int
) -> torch.Tensor:
    """``rows`` runs of ``input_ids`` in one batch, each with the pieces its plan rows name taken from ``source``.

    Shape:
        input_ids: (1, N); stage_plan: (K, 3) of (row, stage, position); head_plan: (K', 3) of (row, layer, head).
        Returns (rows, C).
    """
    specs = []
    for stage, module in enumerate(model.stage_modules()):
        row, _, position = stage_plan[stage_plan[:, 1] == stage].T  # each (K_s,)
        if len(row):
            specs.append((module, replace_hook(row, position, source.states[stage, position]), "post"))
    for layer in range(model.num_layers):
        row, _, head = head_plan[head_plan[:, 1] == layer].T  # each (K_l,)
        if len(row):
            values = source.contexts[layer][:, head].transpose(0, 1)  # (N, K_l, d_k) -> (K_l, N, d_k)
            hook = replace_heads_hook(row, head, values, model.num_heads)
            specs.append((model.attention_projections(layer)[1], hook, "pre"))
    with hooks.added(specs):
        return model(input_ids.expand(rows, -1))  # (rows, C)


def _batched(model, input_ids: torch.Tensor, source: Activations, plans: torch.Tensor, row_tokens: int):
    """Every run of ``plans`` (one per row: kind 0 a stage, 1 a head; then its two indices), in passes of at most
    ``row_tokens`` tokens.

    Shape:
        plans: (R, 3) of (kind, stage or layer, position or head). Returns (R, C).
    """
    per_pass = max(1, row_tokens // input_ids.size(1))
    logits = []
    for start in range(0, len(plans), per_pass):
        chunk = plans[start : start + per_pass]  # (R', 3)
        numbered = torch.cat([torch.arange(len(chunk), device=chunk.device)[:, None], chunk[:, 1:]], dim=1)  # (R', 3)
        stage_plan, head_plan = numbered[chunk[:, 0] == 0], numbered[chunk[:, 0] == 1]  # (K, 3), (K', 3)
        logits.append(_patched_runs(model, input_ids, source, stage_plan, head_plan, len(chunk)))
    return torch.cat(logits)  # (R, C)


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


@torch.no_grad()
def activation_patching(
    model, ids_a: torch.Tensor, ids_b: torch.Tensor, direction: str = "b_into_a", row_tokens: int = ROW_TOKENS
) -> Patching:
    """Patch every stage × position, and every head, from one sentence into the other, in batched passes.

    Args:
        model: the classifier, in eval mode.
        ids_a, ids_b: the two sentences, the same number of tokens.
        direction: "b_into_a" reruns A with pieces of B; "a_into_b" reruns B with pieces of A.
        row_tokens: tokens per batched pass (``ROW_TOKENS``).

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
    ids, source, ld_dest, ld_source = (
        (ids_a, run_b, ld_a, ld_b) if direction == "b_into_a" else (ids_b, run_a, ld_b, ld_a)
    )
    L, H, n = model.num_layers, model.num_heads, ids.size(1)
    stage_grid = torch.cartesian_prod(torch.arange(L + 1), torch.arange(n))  # (R_s, 2): stage, position
    head_grid = torch.cartesian_prod(torch.arange(L), torch.arange(H))  # (R_h, 2): layer, head
    plans = torch.cat(
        [
            torch.cat([torch.zeros(len(stage_grid), 1, dtype=torch.long), stage_grid], dim=1),
            torch.cat([torch.ones(len(head_grid), 1, dtype=torch.long), head_grid], dim=1),
        ]
    ).to(ids.device)  # (R, 3)
    logits = _batched(model, ids, source, plans, row_tokens)  # (R, C)
    restored = (logits[:, target] - logits[:, contrast] - ld_dest) / (ld_source - ld_dest)  # (R,)
    return Patching(
        direction=direction,
        target=target,
        contrast=contrast,
        ld_a=ld_a,
        ld_b=ld_b,
        restored=restored[: len(stage_grid)].reshape(L + 1, n),
        heads=restored[len(stage_grid) :].reshape(L, H),
    )
