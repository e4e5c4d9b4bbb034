"""The explanation views and the main handler, as the app runs them: ``python -m benchmarks.explain_views``.

On the bundled model when assets/model is there, else on random weights of its sizes (d_model 256, 3 layers,
4 heads, d_ff 512). A 25-token sentence, torch on one thread as the app sets it. Targets (issue 5, issue 4):
Integrated Gradients at its default steps <= 300 ms, head importance <= 300 ms, the main handler p50 <= 100 ms.
"""

import json
import os
import tempfile
from pathlib import Path

import torch

from transformer import TransformerClassifier
from transformer.tokenizer import train_tokenizer

from .timing import measure, median_ms, p95_ms

MODEL_DIR = Path(__file__).resolve().parent.parent / "assets" / "model"
WORDS = (  # 32 words: cut to 25 tokens below
    "the film was a quiet , funny and completely charming surprise , but the plot is thin , the music is loud "
    "and the ending drags on far too long"
).split()


def _model_dir() -> Path:
    """The bundled model, or a folder with random weights of its sizes and a small tokenizer."""
    if (MODEL_DIR / "config.json").exists():
        return MODEL_DIR
    folder = Path(tempfile.mkdtemp()) / "bundled-size"
    tokenizer = train_tokenizer([" ".join(WORDS)] * 3, vocab_size=200)
    torch.manual_seed(0)
    sizes = dict(d_model=256, num_heads=4, num_layers=3, d_ff=512, max_len=256)
    model = TransformerClassifier(tokenizer.get_vocab_size(), 2, **sizes, label_names=["negative", "positive"])
    model.save_pretrained(folder)
    tokenizer.save(str(folder / "tokenizer.json"))
    (folder / "metrics.json").write_text(json.dumps({"note": "random weights"}))
    return folder


def run(rounds: int = 30) -> list[str]:
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    os.environ["MODEL_ID"] = str(_model_dir())
    import app  # after MODEL_ID: importing app loads the model
    from transformer import explain_views
    from transformer.explain import integrated_gradients

    loaded = app.get_model()[0]
    text = " ".join(WORDS)
    result = app.run_model(text)
    while len(result.tokens) > 25:  # the sentence length
        text = text.rsplit(" ", 1)[0]
        result = app.run_model(text)
    model, tokenizer = loaded.model, loaded.tokenizer
    ids = explain_views.sentence_ids(model, result)
    candidates = {
        "main handler show_text (every main view)": lambda: app.show_text(text, 1, "1", [26, 27, 50, 90]),
        "integrated gradients, default steps": lambda: integrated_gradients(model, ids, 1),
        "attributions view (grad×input + IG + agreement)": lambda: explain_views.attribution_view(
            model, tokenizer, result
        ),
        "head importance (every head, one batch)": lambda: explain_views.importance_view(model, tokenizer, result),
        "knockout view": lambda: explain_views.knockout_view(model, tokenizer, result, ["L1 H2"]),
        "attributions tab, first draw": lambda: app.show_attributions(result, "predicted", 32, "pad", None),
        "knockout tab, first draw (+ importance)": lambda: app.show_knockout(
            result, ["L1 H2"], "global", [], None, None
        ),
        "compare tab, first draw (B through the model)": lambda: app.show_compare(
            result, text + " !", 1, 1, "global", [], None
        ),
    }
    times = measure(candidates, rounds=rounds)
    lines = [
        f"model {loaded.source}: d_model={model.d_model} heads={model.num_heads} layers={model.num_layers}; "
        f"{len(result.tokens)} tokens; torch {torch.__version__}, {torch.get_num_threads()} thread(s); "
        f"medians of {rounds} interleaved rounds",
        f"{'':<48} {'median ms':>10} {'p95 ms':>8}",
    ]
    lines += [f"{name:<48} {median_ms(t):>10.1f} {p95_ms(t):>8.1f}" for name, t in times.items()]
    lines.append("targets: integrated gradients <= 300 ms, head importance <= 300 ms, main handler <= 100 ms")
    return lines


if __name__ == "__main__":
    print("\n".join(run()))
