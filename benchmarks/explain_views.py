"""The explanation views and the main handler, as the app runs them: ``python -m benchmarks.explain_views``.

On the bundled model when assets/model is there, else on random weights of the default sizes (d_model 256, 3 layers,
4 heads, d_ff 512). Sentences of 25, 128 and 256 tokens, torch on one thread as the app sets it. Targets (issues 4, 5):
Integrated Gradients at its default steps <= 300 ms, head importance <= 300 ms, the main handler p50 <= 100 ms.
"""

import itertools
import json
import os
import tempfile
from pathlib import Path

import plotly.graph_objects as go
import torch

from transformer import TransformerClassifier
from transformer.explorer.page import page
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


def sentence_of(runner, tokens: int) -> tuple[str, object]:
    """A text the model reads as exactly ``tokens`` tokens (or its max_len), and its analysis."""
    words = (WORDS * (tokens // len(WORDS) + 2))[: tokens + 8]
    text = " ".join(words)
    result = runner.run_model(text)
    while result.total_tokens > tokens and len(words) > 1:
        words = words[:-1]
        text = " ".join(words)
        result = runner.run_model(text)
    return text, result


def payload_kb(outputs) -> float:
    """What the outputs weigh as JSON: figures as plotly serialises them, dicts and text as they are."""
    total = 0
    for out in outputs if isinstance(outputs, tuple) else (outputs,):
        if isinstance(out, go.Figure):
            total += len(out.to_json())
        elif isinstance(out, dict | list):
            total += len(json.dumps(out, default=str))
        elif isinstance(out, str):
            total += len(out)
    return total / 1024


MAIN_HANDLER = "main handler show_text (the tab on screen)"
HEAD_REDRAW = "head redraw show_head (no model call)"
WALK_FIRST = "walkthrough tab, first draw (the pass, step 6)"
WALK_STEP = "walkthrough step change, all steps (kept pass)"


def run(lengths=(25, 128, 256), rounds: int = 20) -> list[str]:
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    os.environ["MODEL_ID"] = str(_model_dir())
    import app  # after MODEL_ID: importing app loads the model
    from transformer.explain import integrated_gradients
    from transformer.explorer import analysis, runner, views

    loaded = app.get_model()[0]
    model, tokenizer = loaded.model, loaded.tokenizer
    lines = [
        f"model {loaded.source}: d_model={model.d_model} heads={model.num_heads} layers={model.num_layers}; "
        f"torch {torch.__version__}, {torch.get_num_threads()} thread(s) as the app sets it; "
        f"median and p95 of {rounds} interleaved rounds; payload = JSON the view sends",
        f"{'tokens':>6} {'':<48} {'median ms':>10} {'p95 ms':>8} {'payload KB':>11}",
    ]
    for tokens in lengths:
        text, result = sentence_of(runner, tokens)
        ids = analysis.sentence_ids(model, result)
        walked = views.walkthrough.show_step(result, 1, 1, 1, None)[-1]  # the kept pass a step change draws from
        steps = itertools.cycle(range(1, len(views.walkthrough.STEPS) + 1))  # every step's figure, in turn
        candidates = {
            MAIN_HANDLER: lambda t=text: page.show_text(app.REGISTRY, t, 1, "1", [26, 27, 50, 90]),
            HEAD_REDRAW: lambda r=result: views.attention.show_head(r, 2, "mean"),
            "model forward with attentions (analyze)": lambda t=text: runner.run_model(t),
            "integrated gradients, default steps": lambda i=ids: integrated_gradients(model, i, 1),
            "head importance (every head, one batch)": lambda r=result: views.knockout.importance_view(
                model, tokenizer, r
            ),
            "attributions tab, first draw": lambda r=result: views.attributions.show_attributions(
                r, "predicted", 32, "pad", None
            ),
            "knockout tab, first draw (+ importance)": lambda r=result: views.knockout.show_knockout(
                r, ["L1 H2"], "global", [], None, None
            ),
            "compare tab, first draw (B through the model)": lambda r=result, t=text: views.compare.show_compare(
                r, t + " !", 1, 1, "global", [], None
            ),
            "/attention API payload": lambda t=text: views.attention.attention(t),
            WALK_FIRST: lambda r=result: views.walkthrough.show_step(r, 6, 1, 1, None),
            WALK_STEP: lambda r=result, k=walked, s=steps: views.walkthrough.show_step(r, next(s), 2, 1, k),
        }
        times = measure(candidates, rounds=rounds, warmup=2)
        sizes = {name: payload_kb(fn()) for name, fn in candidates.items()}
        for name, t in times.items():
            size = f"{sizes[name]:>11.0f}" if sizes[name] else f"{'-':>11}"
            lines.append(f"{len(result.tokens):>6} {name:<48} {median_ms(t):>10.1f} {p95_ms(t):>8.1f} {size}")
        step = median_ms(times[WALK_STEP]) / median_ms(times[HEAD_REDRAW])
        first = median_ms(times[WALK_FIRST]) / median_ms(times[MAIN_HANDLER])
        lines.append(
            f"{'':>6} walkthrough: step change / head redraw {step:.2f}x, first draw / main handler {first:.2f}x"
        )
    lines.append(
        "targets at 25 tokens: integrated gradients <= 300 ms, head importance <= 300 ms, main handler <= 100 ms; "
        "walkthrough step change <= 1.1x a head redraw, its first draw <= 2x the main handler at 128 tokens"
    )
    return lines


if __name__ == "__main__":
    print("\n".join(run()))
