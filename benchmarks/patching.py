"""Activation patching on the bundled model: the whole grid (every stage × position and every head, batched) for two
25-token sentences that differ in their first word, then the Patching tab's whole work (B read, the grid, both
readouts) and ``/layer_readout``'s; then the grid on a random DistilBERT of distilbert-base's size (hidden 768, 6
layers, 12 heads) through ``HubClassifier``, its passes side by side on the cores (``batching.pass_threads``) and,
for the ratio, one after another. One torch thread, as the app sets it. Targets: the grid's p50 ≤ 300 ms
on the bundled model, ≤ 3 s on the DistilBERT. Example::

    HF_HUB_OFFLINE=1 python -m benchmarks.patching
"""

import torch

from transformer.explain import batching
from transformer.explain.layer_readout import layer_readout
from transformer.explain.patching import activation_patching
from transformer.explorer import analysis
from transformer.explorer.views.patching import patching_view
from transformer.hub.adapter import HubClassifier
from transformer.hub.families import FAMILIES
from transformer.loading import DEFAULT_MODEL_DIR, load_model

from .browser import sentence
from .timing import measure, median_ms, p95_ms

TARGET_MS = 300.0
BASE_TARGET_MS = 3000.0
TOKENS = 25


def distilbert_base() -> HubClassifier:
    """A random DistilBERT classifier of distilbert-base's size (``DistilBertConfig``'s defaults), in eval mode."""
    import transformers

    torch.manual_seed(0)
    config = transformers.DistilBertConfig(id2label={0: "negative", 1: "positive"})
    hf_model = transformers.AutoModelForSequenceClassification.from_config(config).eval()
    return HubClassifier(hf_model, FAMILIES["distilbert"]).eval()


def base_lines(rounds: int) -> list[str]:
    """The grid on ``distilbert_base`` for two 25-token rows of random ids that differ in one token."""
    model = distilbert_base()
    ids_a = torch.randint(1000, 20000, (1, TOKENS), generator=torch.Generator().manual_seed(0))
    ids_b = ids_a.clone()
    ids_b[0, 3] += 1
    threads = batching.pass_threads(model)
    candidates = {  # the grid as the explorer runs it, and with its passes one after another
        "grid": lambda: activation_patching(model, ids_a, ids_b),
        "one thread": lambda: activation_patching(model, ids_a, ids_b, threads=1),
    }
    times = measure(candidates, rounds=rounds, warmup=1)
    runs = (model.num_layers + 1) * TOKENS + model.num_layers * model.num_heads
    met = "met" if median_ms(times["grid"]) <= BASE_TARGET_MS else "MISSED"
    ratio = median_ms(times["one thread"]) / median_ms(times["grid"])
    return [
        f"DistilBERT-base size, a grid of {runs} cells, {rounds} rounds, passes on {threads} threads: p50"
        f" {median_ms(times['grid']):7.1f} ms  p95 {p95_ms(times['grid']):7.1f} ms; target <= {BASE_TARGET_MS:.0f} ms:"
        f" {met}",
        f"  the same passes on one thread: p50 {median_ms(times['one thread']):7.1f} ms ({ratio:.2f}x the grid's)",
    ]


def run(rounds: int = 20) -> list[str]:
    torch.set_num_threads(1)
    loaded = load_model(DEFAULT_MODEL_DIR, device="cpu")
    model, tokenizer = loaded.model, loaded.tokenizer
    text_a, text_b = sentence("good", TOKENS), sentence("bad", TOKENS)
    result_a = analysis.analyze(model, tokenizer, text_a)
    ids_a, ids_b = (analysis.sentence_ids(model, analysis.analyze(model, tokenizer, t)) for t in (text_a, text_b))
    assert ids_a.shape == ids_b.shape == (1, TOKENS)
    candidates = {
        "grid": lambda: activation_patching(model, ids_a, ids_b),
        "tab": lambda: patching_view(model, tokenizer, result_a, text_b=text_b),
        "readout": lambda: layer_readout(model, ids_a),
    }
    times = measure(candidates, rounds=rounds, warmup=3)
    runs = (model.num_layers + 1) * TOKENS + model.num_layers * model.num_heads
    lines = [f"{TOKENS} tokens, one torch thread, {rounds} interleaved rounds; the grid has {runs} cells"]
    for name, samples in times.items():
        lines.append(f"{name:<8} p50 {median_ms(samples):6.1f} ms  p95 {p95_ms(samples):6.1f} ms")
    met = "met" if median_ms(times["grid"]) <= TARGET_MS else "MISSED"
    lines.append(f"grid p50 target <= {TARGET_MS:.0f} ms: {met}")
    return lines + base_lines(max(3, rounds // 4))


if __name__ == "__main__":
    print("\n".join(run()))
