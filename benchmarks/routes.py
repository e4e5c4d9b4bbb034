"""The Routes graph (issue 56): on the bundled model at 25 tokens, the graph (one forward pass, the decomposition, every
part's importance, the kept edges), the tab's whole draw (the graph, its figure, the top head's knockout) and the
threshold slider's redraw, which runs no model; then on a random DistilBERT of distilbert-base's size at 128 tokens,
the graph with the L2 norm (the default) and the L1 norm (ALTI's) against one forward pass returning every attention,
and ``/routes``'s answer size at the default threshold and the least. One torch thread, as the app sets it. Targets: the
bundled model's graph p50 <= 150 ms; at DistilBERT-base size, <= 2x the forward pass, the answer <= 3 MB. Example::

    HF_HUB_OFFLINE=1 nice -n 10 python -m benchmarks.routes
"""

import dataclasses
import json

import torch

from transformer.explain.route_graph import Routes, kept_edges, routes
from transformer.explorer import analysis
from transformer.explorer.views import routes as view
from transformer.loading import DEFAULT_MODEL_DIR, load_model

from .browser import sentence
from .patching import distilbert_base
from .timing import measure, median_ms, p95_ms

TOKENS, BASE_TOKENS = 25, 128
TARGET_MS, BASE_RATIO, ANSWER_BYTES = 150.0, 2.0, 3 * 2**20
DEFAULT_THRESHOLD = view.DEFAULT_THRESHOLD / 100  # the tab's and /routes' default, as a fraction


def bundled_lines(rounds: int) -> list[str]:
    """The graph, the tab and the redraw on the bundled model; the redraw's model calls counted."""
    loaded = load_model(DEFAULT_MODEL_DIR, device="cpu")
    model, tokenizer = loaded.model, loaded.tokenizer
    result = analysis.analyze(model, tokenizer, sentence("good", TOKENS))
    ids = analysis.sentence_ids(model, result)
    assert ids.shape == (1, TOKENS)
    kept = (None, view.routes_view(model, tokenizer, result))
    candidates = {
        "graph": lambda: kept_edges(routes(model, ids), DEFAULT_THRESHOLD),
        "tab": lambda: view.show_routes(result, view.DEFAULT_THRESHOLD, None, None, None),
        "redraw": lambda: view.redraw_graph(20, kept),
    }
    times = measure(candidates, rounds=rounds, warmup=3)
    calls: list[int] = []
    handle = model.register_forward_hook(lambda *_: calls.append(1))
    view.redraw_graph(30, kept)
    handle.remove()
    lines = [f"bundled model, {TOKENS} tokens, one torch thread, {rounds} interleaved rounds"]
    lines += [f"{name:<7} p50 {median_ms(s):6.1f} ms  p95 {p95_ms(s):6.1f} ms" for name, s in times.items()]
    met = "met" if median_ms(times["graph"]) <= TARGET_MS else "MISSED"
    return [*lines, f"graph p50 target <= {TARGET_MS:.0f} ms: {met}; the redraw ran the model {len(calls)} times"]


def base_lines(rounds: int) -> list[str]:
    """The graph on ``distilbert_base`` at 128 tokens of random ids, against its forward pass with attentions."""
    model = distilbert_base()
    tokens = [f"t{i}" for i in range(BASE_TOKENS)]
    ids = torch.randint(1000, 20000, (1, BASE_TOKENS), generator=torch.Generator().manual_seed(0))
    candidates = {
        "forward, attentions": lambda: model(ids, output_attentions=True),
        "graph, L2": lambda: kept_edges(routes(model, ids), DEFAULT_THRESHOLD),
        "graph, L1": lambda: kept_edges(routes(model, ids, norm="l1"), DEFAULT_THRESHOLD),
    }
    times = measure(candidates, rounds=rounds, warmup=1)
    floor = median_ms(times["forward, attentions"])
    lines = [f"DistilBERT-base size, {BASE_TOKENS} tokens, {rounds} interleaved rounds"]
    for name, samples in times.items():
        ratio = median_ms(samples) / floor
        lines.append(f"{name:<20} p50 {median_ms(samples):7.1f} ms  p95 {p95_ms(samples):7.1f} ms  ({ratio:.2f}x)")
        if name.startswith("graph"):
            met = "met" if ratio <= BASE_RATIO else "MISSED"
            lines.append(f"  target <= {BASE_RATIO:.0f}x the forward pass: {met}")
    found = routes(model, ids)
    for threshold in (DEFAULT_THRESHOLD, view.THRESHOLDS[0] / 100):
        for name, graph in (("the model's", found), ("crowded", crowded(found, threshold))):
            answer = view.routes_answer(view.RoutesView(tokens, ["negative", "positive"], graph), threshold)
            size = len(json.dumps(answer).encode()) / 2**20
            met = "met" if size <= ANSWER_BYTES / 2**20 else "MISSED"
            edges, left = len(answer["edges"]), answer["left_out"]
            lines.append(f"/routes, {name} graph, threshold {threshold:.2f}: {edges} edges ({left} left out),"
                         f" {size:.2f} MB (<= 3 MB: {met})")  # fmt: skip
    return lines


def crowded(found: Routes, threshold: float) -> Routes:
    """``found`` with the most edges a graph can keep at ``threshold``: every sum made of round(1 / threshold) head
    parts of exactly that importance, from keys spread over every position (query i reads keys i, i + 1, ..., head
    k mod H), and no residual or feed-forward.
    """
    heads = torch.zeros_like(found.heads)  # (L, H, N, N)
    _, count, n, _ = heads.shape
    queries = torch.arange(n)
    for k in range(round(1 / threshold)):
        heads[:, k % count, queries, (queries + k) % n] = threshold
    nothing = torch.zeros_like(found.residual)  # (L, N)
    return dataclasses.replace(found, heads=heads, residual=nothing, feed_forward=nothing)


def run(rounds: int = 20) -> list[str]:
    torch.set_num_threads(1)
    return bundled_lines(rounds) + base_lines(max(3, rounds // 4))


if __name__ == "__main__":
    print("\n".join(run()))
