"""Activation patching, attention weighted by what it moves, and the class readout after every layer: each checked
on the tiny tutorial model against an exact property or a hand computation, and on a tiny BERT, DistilBERT and
RoBERTa through the same model interface (``stage_modules``, ``attention_projections``)."""

import math
import threading
from types import SimpleNamespace

import pytest
import torch
from tiny import tiny_model

from transformer.explain import batching
from transformer.explain.attention_norms import attention_norms
from transformer.explain.layer_readout import committed_stage, layer_readout
from transformer.explain.patching import (
    ROW_TOKENS,
    activation_patching,
    activations,
    pass_rows,
    patched_logits,
    planned_passes,
)
from transformer.loading import load_model

A = torch.tensor([[5, 9, 13, 21, 30, 7]])  # (1, N)
EDITED = 3  # B differs from A at this position only
B = A.clone()
B[0, EDITED] = 42
HUB_A, HUB_B = "the plot was boring", "a plot was boring"


@pytest.fixture(scope="module", params=["tutorial", "bert", "distilbert", "roberta"])
def pair(request, hub_model_dirs):
    """(a model in eval mode, sentence A, sentence B): B differs from A in one token, the same number of tokens."""
    if request.param == "tutorial":
        return tiny_model(seed=1), A, B
    loaded = load_model(hub_model_dirs[request.param], device="cpu")
    ids_a, ids_b = (torch.tensor([loaded.tokenizer.encode(text).ids]) for text in (HUB_A, HUB_B))
    return loaded.model, ids_a, ids_b


def edited_positions(ids_a, ids_b) -> list[int]:
    return (ids_a[0] != ids_b[0]).nonzero()[:, 0].tolist()


@pytest.mark.parametrize("direction", ["b_into_a", "a_into_b"])
def test_at_the_embedding_stage_only_the_edited_position_restores_and_it_restores_all(pair, direction):
    # Stage 0 depends on one token and its position only: patching the edited position gives the whole of the
    # source's stage 0 (the source's run), any other position gives back the destination's own vector (no change).
    model, ids_a, ids_b = pair
    (edited,) = edited_positions(ids_a, ids_b)
    patching = activation_patching(model, ids_a, ids_b, direction)
    assert abs(patching.ld_b - patching.ld_a) > 0.05  # a real gap: the shares are not noise over a tiny number
    expected = torch.zeros(ids_a.size(1))
    expected[edited] = 1.0
    torch.testing.assert_close(patching.restored[0], expected, atol=1e-4, rtol=0)
    assert patching.restored.shape == (model.num_layers + 1, ids_a.size(1))
    assert patching.heads.shape == (model.num_layers, model.num_heads)


def test_the_last_stage_patched_everywhere_gives_the_sources_logits_and_nowhere_the_destinations(pair):
    model, ids_a, ids_b = pair
    run_a, run_b = activations(model, torch.cat([ids_a, ids_b]))
    everywhere = [(model.num_layers, p) for p in range(ids_a.size(1))]
    assert not torch.allclose(run_a.logits, run_b.logits, atol=1e-3)
    torch.testing.assert_close(patched_logits(model, ids_a, run_b, stages=everywhere), run_b.logits)
    torch.testing.assert_close(patched_logits(model, ids_b, run_a, stages=everywhere), run_a.logits)
    torch.testing.assert_close(patched_logits(model, ids_a, run_b), model(ids_a)[0])
    torch.testing.assert_close(run_a.logits, model(ids_a)[0])  # the capturing run is the plain forward


def restored_by_hand(model, ids_a, run_b, logits_a, target, contrast, **patch) -> float:
    ld = lambda logits: float(logits[target] - logits[contrast])  # noqa: E731
    return (ld(patched_logits(model, ids_a, run_b, **patch)) - ld(logits_a)) / (ld(run_b.logits) - ld(logits_a))


def test_the_batched_grids_are_the_single_runs_in_small_passes_too(pair):
    model, ids_a, ids_b = pair
    run_a, run_b = activations(model, torch.cat([ids_a, ids_b]))
    one_pass = activation_patching(model, ids_a, ids_b)
    small = activation_patching(model, ids_a, ids_b, row_tokens=3 * ids_a.size(1))  # three runs per pass
    torch.testing.assert_close(small.restored, one_pass.restored)
    torch.testing.assert_close(small.heads, one_pass.heads)
    classes = (one_pass.target, one_pass.contrast)
    for stage in range(model.num_layers + 1):
        for position in range(ids_a.size(1)):
            expected = restored_by_hand(model, ids_a, run_b, run_a.logits, *classes, stages=[(stage, position)])
            assert one_pass.restored[stage, position].item() == pytest.approx(expected, abs=1e-4)
    for layer in range(model.num_layers):
        for head in range(model.num_heads):
            expected = restored_by_hand(model, ids_a, run_b, run_a.logits, *classes, heads=[(layer, head)])
            assert one_pass.heads[layer, head].item() == pytest.approx(expected, abs=1e-4)
    assert one_pass.restored[1:].abs().sum() > 0.1 and one_pass.heads.abs().sum() > 0.01  # the grids move


def test_the_blocks_before_a_patch_run_once_per_stage_and_those_after_it_once_per_patch():
    # The grid's cost: a pass per stage runs the blocks before it on one row, and the blocks after it on one row per
    # patch (every position but stage 0's unedited ones, which restore 0 without a run, and each head of the next
    # block). Whole reruns per patch would put (L + 1)·N + L·H rows through every block. One thread: with more, each
    # stage is cut into a pass per thread, and each pass runs the blocks before it on one row of its own.
    model = tiny_model(seed=1)
    rows = []
    for block in model.layers:
        block.register_forward_pre_hook(lambda module, args: rows.append(args[0].size(0)))
    activation_patching(model, A, B, threads=1)
    L, H, n = model.num_layers, model.num_heads, A.size(1)
    patches = [1 + H] + [n + H] * (L - 1) + [n]  # rows after stage s: stage 0 has one edited position
    expected = 2 * L + sum(s + (L - s) * patches[s] for s in range(L + 1))  # A and B once, then each stage's pass
    assert sum(rows) == expected


def test_a_pass_holds_no_more_rows_than_the_memory_budget_allows(monkeypatch):
    model, rows = tiny_model(seed=1), []
    whole = activation_patching(model, A, B)
    monkeypatch.setattr(batching, "rows_per_pass", lambda *_, **__: 2)  # a real-size model at a long text
    model.layers[-1].register_forward_pre_hook(lambda module, args: rows.append(args[0].size(0)))
    budgeted = activation_patching(model, A, B)
    assert max(rows) == 2 and len(rows) > model.num_layers + 1
    torch.testing.assert_close(budgeted.restored, whole.restored)
    torch.testing.assert_close(budgeted.heads, whole.heads)


def test_a_model_that_reads_its_first_token_runs_its_last_feed_forward_on_that_row_alone(pair):
    model, ids_a, ids_b = pair
    last = model.num_layers - 1
    widths = []  # positions out of the last feed-forward's first module, a pass each
    handle = model.feed_forward_input(last).register_forward_hook(lambda module, args, out: widths.append(out.size(1)))
    try:
        activation_patching(model, ids_a, ids_b)
    finally:
        handle.remove()
    n = ids_a.size(1)
    patched = widths[1:]  # after A and B's own pass, which keeps every position
    assert widths[0] == n and patched
    assert set(patched) == ({1} if model.pooling == "first" else {n})


def test_passes_running_at_once_share_the_memory_budget(monkeypatch):
    budgets = []
    monkeypatch.setattr(batching, "rows_per_pass", lambda *_, budget, **__: budgets.append(budget) or 64)
    activation_patching(tiny_model(seed=1), A, B, threads=4)
    assert budgets == [batching.MEMORY_BUDGET_BYTES // 4]


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("tokens", [25, 128, 512])
def test_the_passes_at_once_hold_at_most_the_memory_budget_however_many_the_grid_has(tokens, threads):
    shapes = SimpleNamespace(num_layers=6, num_heads=12, d_model=768)  # DistilBERT-base, as ``row_bytes`` reads it
    layers, heads = shapes.num_layers, torch.arange(shapes.num_heads)
    every = [(torch.arange(tokens), heads)] * layers + [(torch.arange(tokens), heads[:0])]  # nothing shared
    planned = planned_passes(every, pass_rows(shapes, tokens, ROW_TOKENS, threads), threads)
    rows = [len(positions) + len(by_head) for _, positions, by_head in planned]
    assert sum(rows) == (layers + 1) * tokens + layers * shapes.num_heads  # each patch in one pass
    held = threads * max(rows) * batching.row_bytes(shapes, tokens, backward=False)  # the largest passes at once
    assert held <= batching.MEMORY_BUDGET_BYTES
    if tokens == 512:  # hundreds of passes: what they hold at once does not depend on how many there are
        assert len(planned) > 100 and held > batching.MEMORY_BUDGET_BYTES // 2  # and the budget is used


def test_passes_on_several_threads_give_the_one_thread_grid_and_share_every_stage():
    model = tiny_model(seed=1)
    alone = activation_patching(model, A, B, threads=1)
    patched_rows = {}  # thread -> the rows it ran through the last block, one entry a pass
    caller, lock = threading.get_ident(), threading.Lock()
    meeting = threading.Barrier(2, timeout=30)  # two workers' first passes wait for each other: they run at once

    def count_rows(module, args):
        with lock:
            thread = patched_rows.setdefault(threading.get_ident(), [])
            thread.append(args[0].size(0))
            first_of_two = len(thread) == 1 and len(patched_rows.keys() - {caller}) <= 2
        if first_of_two and threading.get_ident() != caller:
            meeting.wait()  # broken (the test fails) if no second thread ever runs a pass

    model.layers[-1].register_forward_pre_hook(count_rows)
    shared = activation_patching(model, A, B, threads=3)
    torch.testing.assert_close(shared.restored, alone.restored)
    torch.testing.assert_close(shared.heads, alone.heads)
    del patched_rows[threading.get_ident()]  # A and B's own pass
    # Each stage is cut into 3 passes of nearly equal rows, which run on more than one thread; the last stage's
    # (after the last block) take their rows apart after it, so each puts one row through it.
    rows_by_stage = [1 + model.num_heads, A.size(1) + model.num_heads]
    passes = sorted(rows for thread in patched_rows.values() for rows in thread)
    assert len(patched_rows) > 1
    assert passes == sorted([1] * 3 + [rows // 3 + (i < rows % 3) for rows in rows_by_stage for i in range(3)])


@torch.no_grad()
def manual_forward(model, ids, patched_head=None, source_heads=None):
    """The tutorial's Pre-LN forward written out, without hooks; with ``patched_head`` = (layer, head), that head's
    context is ``source_heads[layer][head]``. Returns (logits (C,), every layer's heads' contexts (H, N, d_k))."""
    x = model.embed(ids)  # (1, N, D)
    contexts = []
    for index, block in enumerate(model.layers):
        attention, h = block.attention, block.norm1(x)
        q, k, v = (attention.split_heads(w(h)) for w in (attention.W_q, attention.W_k, attention.W_v))  # (1, H, N, d_k)
        heads = ((q @ k.transpose(-2, -1)) / math.sqrt(attention.d_k)).softmax(-1) @ v  # (1, H, N, d_k)
        contexts.append(heads[0].clone())
        if patched_head is not None and patched_head[0] == index:
            heads[0, patched_head[1]] = source_heads[index][patched_head[1]]
        x = x + attention.W_o(heads.transpose(1, 2).reshape(1, ids.size(1), -1))
        x = x + block.feed_forward(block.norm2(x))
    return model.classifier(model.norm(x).mean(dim=1))[0], contexts


def test_each_heads_share_is_a_manual_patch_of_its_context():
    model = tiny_model(seed=1)
    logits_a, _ = manual_forward(model, A)
    logits_b, heads_b = manual_forward(model, B)
    patching = activation_patching(model, A, B)
    ld = lambda logits: float(logits[patching.target] - logits[patching.contrast])  # noqa: E731
    assert ld(logits_a) == pytest.approx(patching.ld_a, abs=1e-5) and ld(logits_b) == pytest.approx(patching.ld_b)
    for layer in range(model.num_layers):
        for head in range(model.num_heads):
            patched, _ = manual_forward(model, A, (layer, head), heads_b)
            expected = (ld(patched) - ld(logits_a)) / (ld(logits_b) - ld(logits_a))
            assert patching.heads[layer, head].item() == pytest.approx(expected, abs=1e-4)


def test_patching_says_what_it_cannot_do():
    model = tiny_model(seed=1)
    with pytest.raises(ValueError, match="same number of tokens, got 6 and 5"):
        activation_patching(model, A, B[:, :5])
    with pytest.raises(ValueError, match="direction is one of b_into_a, a_into_b"):
        activation_patching(model, A, B, "sideways")
    with pytest.raises(ValueError, match="same logit difference"):
        activation_patching(model, A, A.clone())


def test_the_norms_are_a_hand_computation_from_the_weights():
    model, layer, head = tiny_model(seed=1), 1, 1
    result = attention_norms(model, A)
    block = model.layers[layer].attention
    x = model.layers[layer].norm1(model.hidden_states(A)[layer])[0]  # (N, D): what W_v reads in a Pre-LN block
    d_k = block.d_k
    columns = slice(head * d_k, (head + 1) * d_k)
    value = x @ block.W_v.weight[columns].T + block.W_v.bias[columns]  # (N, d_k): the head's values, bias included
    moved = value @ block.W_o.weight[:, columns].T  # (N, D): f(x_j), the head's slice of W_o
    _, attentions = model(A, output_attentions=True)
    weights = attentions[layer][0, head]  # (N, N)
    torch.testing.assert_close(result.weights[layer, head], weights)
    torch.testing.assert_close(result.norms[layer, head], weights * moved.norm(dim=-1)[None, :])


def test_norms_over_weights_depend_on_the_key_only_in_every_head(pair):
    model, ids_a, _ = pair
    result = attention_norms(model, ids_a)
    _, attentions = model(ids_a, output_attentions=True)
    torch.testing.assert_close(result.weights, torch.cat(attentions))
    ratio = result.norms / result.weights  # (L, H, N, N)
    torch.testing.assert_close(ratio, ratio[:, :, :1].expand_as(ratio))  # every query row the same
    torch.testing.assert_close(ratio[:, :, 0], result.value_norms)
    assert result.value_norms.std(dim=-1).min() > 0  # the keys' norms differ: the weighting changes the picture


def test_the_readouts_last_stage_is_the_forward_pass(pair):
    model, ids_a, _ = pair
    readout = layer_readout(model, ids_a)
    assert readout.shape == (model.num_layers + 1, len(model.label_names))
    torch.testing.assert_close(readout[-1], model(ids_a)[0])
    assert not torch.allclose(readout[0], readout[-1], atol=1e-3)  # the stages differ on a real model


@pytest.mark.parametrize(
    ("classes", "stage"), [([1, 1, 1], 0), ([0, 1, 1], 1), ([1, 0, 1], 2), ([0, 0, 1], 2), ([1, 1, 0], 2), ([0], 0)]
)
def test_the_committed_stage_is_the_first_from_which_the_readout_stays_the_final_class(classes, stage):
    logits = torch.nn.functional.one_hot(torch.tensor(classes), 2).float()  # (L + 1, C)
    assert committed_stage(logits) == stage


def test_with_identity_blocks_every_stage_reads_as_the_last():
    model = tiny_model(seed=1)
    with torch.no_grad():
        for block in model.layers:  # Pre-LN: x + W_o(...) + FF(...) is x when both output layers are zero
            for linear in (block.attention.W_o, block.feed_forward.linear2):
                linear.weight.zero_()
                linear.bias.zero_()
    readout = layer_readout(model, A)
    torch.testing.assert_close(readout, readout[-1:].expand_as(readout))
    torch.testing.assert_close(readout[-1], model(A)[0])
