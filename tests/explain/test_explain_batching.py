"""Heavy methods in passes sized from the model: the passes, the memory estimate, and results equal one row at a time
on the tutorial model and on tiny Hub models (Integrated Gradients' path points, head importance's knockouts)."""

import contextvars
import functools
import os
import threading
import time

import pytest
import torch
from hub_checkpoints import hub_classifier
from tiny import tiny_model

from transformer.explain import batching, head_importance, heap, integrated_gradients, predict_with_knockout
from transformer.explain.faithfulness import faithfulness
from transformer.explain.patching import activation_patching
from transformer.hub import hooks
from transformer.hub.adapter import HubClassifier
from transformer.hub.families import FAMILIES


def hub_model(family: str, **overrides) -> HubClassifier:
    """A tiny random Hub classifier of ``family`` (vocabulary 60) behind the explorer's interface."""
    return HubClassifier(hub_classifier(family, 60, **overrides), FAMILIES[family], added_token_ids=(2, 3)).eval()


def sentence(tokens: int) -> torch.Tensor:
    """[CLS] w ... w [SEP] as the tiny WordPiece numbers them: (1, N)."""
    return torch.tensor([[2, *(5 + (7 * i) % 40 for i in range(tokens - 2)), 3]])


def passes_seen(model) -> list[int]:
    """The batch size of every forward ``model`` runs from now on (by ids or by embeddings)."""
    seen = []

    def note(module, args, kwargs):
        rows = kwargs.get("inputs_embeds") if kwargs.get("inputs_embeds") is not None else args[0]
        seen.append(rows.size(0))

    model.register_forward_pre_hook(note, with_kwargs=True)
    return seen


def one_row_a_pass(monkeypatch, model, tokens: int, backward: bool, rows: int = 1) -> None:
    """Set the memory budget to what ``rows`` rows of this model at ``tokens`` tokens need."""
    monkeypatch.setattr(batching, "MEMORY_BUDGET_BYTES", rows * batching.row_bytes(model, tokens, backward))


@pytest.mark.parametrize(("rows", "most"), [(73, 50), (73, 73), (73, 1), (34, 8), (5, 7), (145, 36)])
def test_passes_cover_every_row_once_in_balanced_passes(rows, most):
    cut = batching.passes(rows, most)
    covered = [i for part in cut for i in range(part.start, part.stop)]
    assert covered == list(range(rows))
    sizes = [part.stop - part.start for part in cut]
    assert max(sizes) <= most and max(sizes) - min(sizes) <= 1
    assert len(cut) == -(-rows // most)  # as few passes as the bound allows


def test_rows_per_pass_shrinks_with_tokens_and_size_and_is_at_least_one():
    small, large = hub_model("distilbert"), hub_model("bert", hidden_size=64, num_attention_heads=4)
    assert batching.rows_per_pass(small, 16, True) > batching.rows_per_pass(small, 64, True)
    assert batching.rows_per_pass(small, 64, False) > batching.rows_per_pass(small, 64, True)
    assert batching.rows_per_pass(small, 64, True) > batching.rows_per_pass(large, 64, True)
    assert batching.rows_per_pass(large, 64, True, budget=1) == 1


def test_the_backward_estimate_bounds_what_autograd_saves():
    # DistilBERT with BERT's proportions (F = 4D), 2 layers: count the bytes the forward saves for the backward.
    model = hub_model("distilbert", dim=64, hidden_dim=256, n_heads=4)
    tokens = 48
    embeds = model.token_embeddings(sentence(tokens)).detach().requires_grad_()
    weights = {p.untyped_storage().data_ptr() for p in model.parameters()}
    saved = {}

    def keep(tensor):
        storage = tensor.untyped_storage()
        if storage.data_ptr() not in weights:
            saved[storage.data_ptr()] = storage.nbytes()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(keep, lambda tensor: tensor):
        model(inputs_embeds=embeds)
    estimate = batching.row_bytes(model, tokens, backward=True)
    assert 0.5 * estimate <= sum(saved.values()) <= estimate


MODELS = {  # the tutorial's model (mean-pooled) and the Hub families (first token), each built fresh
    "tutorial": lambda: tiny_model(num_layers=3),
    "distilbert": lambda: hub_model("distilbert"),
    "bert": lambda: hub_model("bert"),
    "roberta": lambda: hub_model("roberta"),
}


@pytest.mark.parametrize("name", ["tutorial", "distilbert", "bert"])
@pytest.mark.parametrize("rows", [1, 3])
def test_head_importance_in_passes_equals_one_knockout_at_a_time(monkeypatch, name, rows):
    model, ids = MODELS[name](), sentence(10)
    one_row_a_pass(monkeypatch, model, 10, backward=False, rows=rows)
    seen = passes_seen(model)
    importance = head_importance(model, ids, target=1)
    total = 1 + model.num_layers * model.num_heads
    assert sum(seen) == total and len(seen) == -(-total // rows) > 1
    for layer in range(model.num_layers):
        for head in range(model.num_heads):
            mask = torch.ones(model.num_layers, model.num_heads)
            mask[layer, head] = 0
            alone = predict_with_knockout(model, ids, mask).probs[1]
            torch.testing.assert_close(importance.ablated_prob[layer, head], alone, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("name", ["tutorial", "distilbert", "roberta"])
def test_integrated_gradients_in_passes_equal_one_point_at_a_time(monkeypatch, name):
    model, ids = MODELS[name](), sentence(9)
    whole = integrated_gradients(model, ids, 0, steps=20)
    one_row_a_pass(monkeypatch, model, 9, backward=True)
    seen = passes_seen(model)
    alone = integrated_gradients(model, ids, 0, steps=20)
    assert seen == [1] * 22  # every node and both ends, one at a time
    torch.testing.assert_close(alone.attributions, whole.attributions, rtol=1e-5, atol=1e-6)
    assert alone.target_logit == pytest.approx(whole.target_logit, abs=1e-6)
    assert alone.completeness_error == pytest.approx(whole.completeness_error, abs=1e-5)


def test_each_heavy_method_counts_its_passes_in_a_silent_progress_bar_named_for_it(monkeypatch):
    """The explorer's page draws these bars (Gradio's ``track_tqdm``) while a job runs: one per method, a step per
    pass (a thread's pass as it ends, for patching), printing nothing elsewhere."""
    bars = []

    def bar(items, desc, disable, **settings):
        bars.append({"desc": desc, "length": len(items), "counted": 0, "silent": disable})
        for item in items:
            bars[-1]["counted"] += 1
            yield item

    monkeypatch.setattr(batching, "tqdm", bar)
    monkeypatch.setattr(batching, "MEMORY_BUDGET_BYTES", 1)  # one row a pass
    model, ids = MODELS["tutorial"](), sentence(9)
    other = ids.clone()
    other[0, 4] = 17  # (1, N): one word changed
    seen = passes_seen(model)
    integrated_gradients(model, ids, 0, steps=20)
    ig_passes = len(seen)
    head_importance(model, ids, target=1)
    importance_passes = len(seen) - ig_passes
    faithfulness(model, ids, 0, torch.rand(2, 9), ["a", "b"])
    activation_patching(model, ids, other, threads=2)
    assert [b["desc"] for b in bars] == ["Integrated Gradients", "head importance", "erasure", "patching"]
    assert all(b["silent"] and b["length"] == b["counted"] > 1 for b in bars), bars
    assert [b["length"] for b in bars[:2]] == [ig_passes, importance_passes]  # every pass, counted once


def test_in_parallel_keeps_the_order_the_context_and_the_grad_modes_and_raises_the_first_error():
    job = contextvars.ContextVar("job", default=None)
    job.set("the caller's job")

    def seen(i):
        time.sleep(0.01 * (3 - i))  # later calls finish first
        return i, job.get(), torch.is_grad_enabled(), torch.is_inference_mode_enabled(), threading.get_ident()

    calls = [functools.partial(seen, i) for i in range(4)]
    with torch.inference_mode():
        results = batching.in_parallel(calls, threads=3)
    assert [r[:4] for r in results] == [(i, "the caller's job", False, True) for i in range(4)]
    assert len({r[4] for r in results}) > 1 and threading.get_ident() not in {r[4] for r in results}
    assert [r[2:4] for r in batching.in_parallel(calls[:2], threads=2)] == [(True, False)] * 2

    def fails():
        raise ValueError("the second pass failed")

    with pytest.raises(ValueError, match="second pass"):
        batching.in_parallel([calls[0], fails, calls[1]], threads=2)


@pytest.mark.parametrize("threads", [1, 2])
def test_in_parallel_hands_back_what_the_caller_and_each_pass_freed_before_the_next_pass(monkeypatch, threads):
    events = []  # (what, the thread it ran on)
    monkeypatch.setattr(heap, "MALLOC_TRIM", lambda pad: events.append(("trim", threading.get_ident())))

    def one_pass(i):
        events.append((i, threading.get_ident()))
        if i == 3:
            raise ValueError("a pass stopped past its deadline")
        return i

    with pytest.raises(ValueError):
        batching.in_parallel([functools.partial(one_pass, i) for i in range(4)], threads)
    assert events[0] == ("trim", threading.get_ident())  # the caller's, before any pass
    passes = events[1:]
    assert len(passes) == 8  # every pass, the failed one too, then its trim
    for thread in {at for _, at in passes}:
        on_thread = [what for what, at in passes if at == thread]  # pass, trim, pass, trim, ...
        assert on_thread[1::2] == ["trim"] * (len(on_thread) // 2) and "trim" not in on_thread[::2]


def test_pass_threads_leave_a_core_per_intra_op_thread(monkeypatch):
    model = torch.nn.Linear(2, 2)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(4)))
    monkeypatch.setattr(torch, "get_num_threads", lambda: 1)
    assert batching.pass_threads(model) == 4
    monkeypatch.setattr(torch, "get_num_threads", lambda: 3)
    assert batching.pass_threads(model) == 1


def test_without_sched_getaffinity_every_core_is_usable(monkeypatch):
    """macOS and Windows have no ``os.sched_getaffinity``: the cores are ``os.cpu_count()``'s, and a patching job
    still runs there (it raised AttributeError)."""
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 3)
    monkeypatch.setattr(torch, "get_num_threads", lambda: 1)
    assert batching.usable_cores() == 3 and batching.pass_threads(torch.nn.Linear(2, 2)) == 3
    monkeypatch.setattr(os, "cpu_count", lambda: None)  # "undetermined"
    assert batching.usable_cores() == 1
    model = tiny_model()
    ids_a = torch.tensor([[5, 9, 13, 21, 30, 7]])  # (1, N)
    ids_b = ids_a.clone()
    ids_b[0, 3] = 42
    assert activation_patching(model, ids_a, ids_b).restored.shape == (model.num_layers + 1, 6)


def test_jobs_at_once_share_one_budget_of_threads(monkeypatch):
    """Two jobs at once take what the other leaves, each at least its own thread; a job's threads come back as it
    ends, an error too."""
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(4)), raising=False)
    monkeypatch.setattr(torch, "get_num_threads", lambda: 1)
    model, budget = torch.nn.Linear(2, 2), batching.ThreadBudget()
    with budget.lend(model) as first:
        with budget.lend(model) as second:
            assert (first, second, budget.lent) == (4, 1, 5)
        assert budget.lent == 4
    with pytest.raises(ValueError), budget.lend(model) as alone:
        assert alone == 4
        raise ValueError("the job failed")
    assert budget.lent == 0


def test_patching_takes_its_threads_from_the_process_budget(monkeypatch):
    """A patching job beside another that holds every core runs its passes on its own thread alone."""
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(4)), raising=False)
    monkeypatch.setattr(torch, "get_num_threads", lambda: 1)
    used = []
    in_parallel = batching.in_parallel
    monkeypatch.setattr(
        batching, "in_parallel", lambda calls, threads, desc: used.append(threads) or in_parallel(calls, threads, desc)
    )
    model = tiny_model()
    ids_a = torch.tensor([[5, 9, 13, 21, 30, 7]])  # (1, N)
    ids_b = ids_a.clone()
    ids_b[0, 3] = 42
    activation_patching(model, ids_a, ids_b)
    with batching.MODEL_THREADS.lend(model) as other:
        activation_patching(model, ids_a, ids_b)
    assert other == 4 and used == [4, 1] and batching.MODEL_THREADS.lent == 0


def test_a_hook_goes_to_in_parallels_calls_only_when_each_call_adds_it(monkeypatch):
    """``in_parallel`` documents it: a one-call hook (``hub.hooks.added``) acts only in the thread that added it, so
    one the caller added does nothing in the calls' threads, and one each call adds inside itself acts there."""
    model = tiny_model()
    ids = torch.tensor([[5, 9, 13, 21, 30, 7]])
    module = model.stage_modules()[0]
    seen: list[int] = []
    spec = [(module, lambda *_: seen.append(threading.get_ident()), "post")]

    def bare():
        model(ids)

    def hooked():
        with hooks.added(spec):
            model(ids)

    with hooks.added(spec):
        batching.in_parallel([bare, bare], threads=2)
    assert seen == []  # the caller's hook ran in none of the calls' threads
    batching.in_parallel([hooked, hooked], threads=2)
    assert len(seen) == 2 and threading.get_ident() not in seen
