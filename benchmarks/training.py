"""The Training tab at the bundled size: its checkpoints loaded and run on one sentence, and the slider's redraw.

The bundled model's own checkpoints first, when it ships them; then a model folder built in a temporary folder with
the bundled config (random weights, the bundled tokenizer when it is there) and 12 checkpoints as ``transformer.train
--keep-steps 12`` keeps them (float16 folders, the last the model itself). Timed for each: listing and loading them
all (``runner.load_checkpoints``: ``load_model`` each but the last, which is the explorer's model), reading one
sentence of 25 tokens with them all (``explain.training.read_at_checkpoints``), both together (the tab's first draw
on a fresh server), and the slider's redraw from the kept view (``views.training.checkpoint_figures``: no model
call, no load). Target: all checkpoints loaded and run ≤ 1 s.

    python -m benchmarks.training
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import torch
from tokenizers import Tokenizer

from transformer import TransformerClassifier
from transformer.checkpoints import list_checkpoints
from transformer.explain.training import read_at_checkpoints
from transformer.explorer import runner
from transformer.explorer.views.training import TrainingView, checkpoint_figures
from transformer.loading import DEFAULT_MODEL_DIR, load_model
from transformer.tokenizer import train_tokenizer
from transformer.training.kept_steps import half_state, kept_steps, write_checkpoints

from .timing import measure, median_ms

KEEP, TOTAL_STEPS, TOKENS = 12, 5000, 25


def bundled_tokenizer() -> Tokenizer:
    """The bundled tokenizer, or one learned on a few sentences when the folder is not there."""
    path = DEFAULT_MODEL_DIR / "tokenizer.json"
    return Tokenizer.from_file(str(path)) if path.is_file() else train_tokenizer(["a film", "the acting"] * 50, 200)


def write_folder(folder: Path, tokenizer: Tokenizer) -> Path:
    """A model of the bundled size with ``KEEP`` checkpoints, each of its own random weights."""
    config = json.loads((DEFAULT_MODEL_DIR / "config.json").read_text()) if DEFAULT_MODEL_DIR.is_dir() else {}
    config = config | {"vocab_size": tokenizer.get_vocab_size(), "num_classes": 2, "dropout": 0.0}
    steps = kept_steps(TOTAL_STEPS, KEEP)

    def model(seed: int) -> TransformerClassifier:
        torch.manual_seed(seed)
        return TransformerClassifier(**config).eval()

    final = model(0)
    final.save_pretrained(folder)
    tokenizer.save(str(folder / "tokenizer.json"))
    states = {step: half_state(model(step + 1)) for step in steps[:-1]}
    write_checkpoints(folder, final, tokenizer, states, steps[-1], TOTAL_STEPS)
    return folder


def time_checkpoints(folder: Path, tokenizer: Tokenizer, rounds: int) -> list[str]:
    """The figures for ``folder``'s checkpoints: loading them, reading one sentence with them, the slider."""
    found = list_checkpoints(folder)
    sizes = [sum(p.stat().st_size for p in Path(c.source).iterdir() if p.is_file()) for c in found[:-1]]
    text = " ".join(["the acting was good but the film was long"] * 3)
    ids = torch.tensor([tokenizer.encode(text).ids[:TOKENS]])  # (1, N)
    tokens = tokenizer.encode(text).tokens[:TOKENS]
    final = load_model(folder, device="cpu")  # the explorer's model, loaded at start-up

    def load_all() -> list:
        """What the tab's first draw loads on a fresh server: the other checkpoints (the last is the model)."""
        return [loaded.model for _, loaded in runner.load_checkpoints(final)[0]]

    models = load_all()
    readings = read_at_checkpoints(models, ids, tokens, 0, 0)
    numbers = (readings.probabilities, readings.attentions, readings.maps)
    view = TrainingView(tokens, ["negative", "positive"], [c.step for c in found], 0, 0, *numbers)
    slow = measure(
        {
            "load": load_all,
            "run": lambda: read_at_checkpoints(models, ids, tokens, 0, 0),
            "both": lambda: read_at_checkpoints(load_all(), ids, tokens, 0, 0),
        },
        rounds=rounds,
        warmup=1,
    )
    slider = measure({"slider": lambda: checkpoint_figures(view, len(found) // 2)}, rounds=30)
    weights = sum(p.numel() * p.element_size() for m in models for p in m.parameters())
    load, read, both = (median_ms(slow[k]) for k in ("load", "run", "both"))
    return [
        f"{len(found)} checkpoints (steps {', '.join(f'{c.step:,}' for c in found)}) of d_model {models[0].d_model}, "
        f"{models[0].num_layers} layers, vocabulary {tokenizer.get_vocab_size():,}; {ids.size(1)} tokens",
        f"each kept checkpoint folder: {sizes[0] / 1e6:.2f} MB (float16 weights and tokenizer.json); the "
        f"{len(sizes)} on disk: {sum(sizes) / 1e6:.1f} MB; the last is the model folder itself",
        f"load all {len(found)} (the last is the explorer's model): {load:.0f} ms; "
        f"run all on the sentence: {read:.0f} ms; "
        f"both: {both:.0f} ms "
        f"(target ≤ 1000 ms: {'met' if both <= 1000 else 'MISSED'})",
        f"slider redraw from the kept view (head and embeddings maps, no model): {median_ms(slider['slider']):.1f} ms",
        f"the checkpoints' weights in memory (float32): {weights / 1e6:.0f} MB",
    ]


def run(rounds: int = 5) -> list[str]:
    """The bundled model's own checkpoints when it ships them, then 12 of random weights at its size."""
    torch.set_num_threads(1)  # as app.py
    header = f"torch {torch.__version__}, {torch.get_num_threads()} thread; medians of {rounds} rounds (slider: 30)"
    lines, tokenizer = [header], bundled_tokenizer()
    if list_checkpoints(DEFAULT_MODEL_DIR):
        lines += ["the bundled model's:", *time_checkpoints(DEFAULT_MODEL_DIR, tokenizer, rounds)]
    with tempfile.TemporaryDirectory() as scratch:
        folder = write_folder(Path(scratch) / "model", tokenizer)
        lines += [f"{KEEP} of random weights at its size:", *time_checkpoints(folder, tokenizer, rounds)]
    return lines


if __name__ == "__main__":
    print("\n".join(run()))
