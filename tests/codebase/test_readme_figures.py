"""Numbers in prose come from the shipped model (issue 53): every figure the README states about the bundled model
is checked here against what produced it, so a retrained model fails this module until the text is redrawn.

- the faithfulness table against ``assets/model/faithfulness.json``;
- the accuracy table and the neutral-statement figures against ``assets/model/metrics.json``;
- the patching paragraph against a patching run of its own pair, and its head against the model's attention;
- the training paragraph against the bundled checkpoints' reading of its sentence and ``training.json``'s roles.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from transformer.checkpoints import list_checkpoints
from transformer.explain.layer_readout import layer_readout
from transformer.explain.patching import activation_patching
from transformer.explain.training import read_at_checkpoints, settled_index
from transformer.explorer.analysis import NO_OPINION_MARGIN, analyze, sentence_ids
from transformer.explorer.views import routes
from transformer.loading import DEFAULT_MODEL_DIR, load_model

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
PAIR = {"A": "The film was really good.", "B": "The film was not good."}
NOT = 3  # the position where B says "not"
ROUNDED = 0.0005 + 1e-9  # a figure written with three decimals
ACCURACY_ROWS = {  # the README's accuracy table: row -> metrics.json's (part, data set)
    "SST-2 dev (selection)": ("dev", "sst2"),
    "SST-2 test": ("test", "sst2"),
    "IMDB test, chunks averaged": ("test", "imdb"),
    "Yelp sentences dev (selection)": ("dev", "yelp"),
    "pros/cons dev (selection)": ("dev", "pros_cons"),
    "tweets dev (selection)": ("dev", "tweets"),
    "CAD dev, originals and edits (selection)": ("dev", "cad"),
    "multi-domain Amazon test": ("test", "multi_domain"),
    "everyday sentences, `benchmarks/everyday_sentences.tsv`": ("test", "everyday"),
}


def artifact(name: str) -> dict:
    return json.loads((DEFAULT_MODEL_DIR / name).read_text(encoding="utf-8"))


def table_row(first_cell: str) -> list[str]:
    """The cells of the README's table row that starts with ``first_cell``."""
    line = next(line for line in README.splitlines() if line.startswith(f"| {first_cell} |"))
    return [cell.strip() for cell in line.strip("|").split("|")]


def figures(text: str) -> list[float]:
    return [float(number) for number in re.findall(r"-?\d+\.\d+", text)]


def paragraph(start: str) -> str:
    """The README's paragraph that starts with ``start``, on one line."""
    return " ".join(README[README.index(start) :].split("\n\n")[0].split())


@pytest.fixture(scope="module")
def bundled():
    return load_model(device="cpu")


def test_the_faithfulness_table_is_faithfulness_json():
    header = table_row("comprehensiveness AOPC, `[PAD]` / deleted")[1:]
    row = table_row("mean over 2,000 sentences")[1:]
    saved = artifact("faithfulness.json")
    assert saved["sentences"] == 2000
    aopc = {mode: saved["modes"][mode]["comprehensiveness_aopc"] for mode in ("pad", "delete")}
    for method, cell in zip(header, row, strict=True):
        key = "integrated gradients" if method == "Integrated Gradients" else method
        assert figures(cell) == pytest.approx([aopc["pad"][key], aopc["delete"][key]], abs=ROUNDED), method
    best = max(aopc["pad"], key=aopc["pad"].get)  # the bold one, "the most faithful"
    assert best == max(aopc["delete"], key=aopc["delete"].get)
    assert [cell.startswith("**") for cell in row] == [method.lower() == best for method in header]
    methods = {name: value for name, value in aopc["pad"].items() if name != "random"}
    assert min(methods, key=methods.get) == "attention" and methods["attention"] > aopc["pad"]["random"]


def test_the_accuracy_table_and_the_neutral_figures_are_metrics_json():
    metrics = artifact("metrics.json")
    for row, (part, name) in ACCURACY_ROWS.items():
        assert figures(table_row(row)[2])[0] == pytest.approx(metrics[part][name], abs=ROUNDED), row
    neutral = metrics["behaviour"]["test"]["identity"]["neutral"]
    said = paragraph("**People and words with no opinion.**")
    assert f"median spread of P(positive) across a group's terms is {neutral['median_spread']:.3f}" in said
    assert f"{neutral['clear_opinion']:.0%} read as a clear opinion".replace("%", " %") in said


def test_the_patching_paragraph_is_a_patching_run_of_its_pair(bundled):
    model, tokenizer = bundled.model, bundled.tokenizer
    analyses = {name: analyze(model, tokenizer, text) for name, text in PAIR.items()}
    ids = {name: sentence_ids(model, result) for name, result in analyses.items()}
    patched = activation_patching(model, ids["A"], ids["B"], "b_into_a").restored  # (L + 1, N)
    readout = {name: layer_readout(model, ids[name]).softmax(dim=-1)[:, 1].tolist() for name in PAIR}
    result = analyses["A"]
    head = result.attentions[0, 1]  # layer 1, head 2: (N, N)
    good = result.tokens.index("good")
    moved = head * result.value_norms[0, 1][None, :]  # weight × ‖f(x_j)‖
    moved = moved / moved.sum(axis=-1, keepdims=True)
    after_layer_2 = patched[2].numpy()
    expected = [
        readout["B"][-1],
        readout["A"][-1],
        patched[1, NOT].item(),
        after_layer_2.min(),
        after_layer_2.max(),
        *readout["A"],
        *readout["B"],
        head[:, good].mean(),
        moved[:, good].mean(),
    ]
    said = paragraph("**Where the decision is carried.**")
    assert figures(said) == pytest.approx(expected, abs=0.005 + 1e-9), said
    assert patched[0, NOT].item() == pytest.approx(1.0) and np.delete(patched[0].numpy(), NOT) == pytest.approx(0)
    assert all(a - b > 0 for a, b in zip(readout["A"][1:], readout["B"][1:], strict=True))  # "layer 1 decides most"
    assert readout["A"][1] - readout["A"][0] > readout["A"][2] - readout["A"][1]


ROUTES_SENTENCE = "The plot is thin, but the cast is great."


def test_the_routes_paragraph_is_a_routes_run_and_each_heads_knockout(bundled):
    """The graph's top head and its share, that head's measured knockout (the largest drop of all heads), and how
    far the graph's ranking of the heads agrees with the knockouts' (Spearman, no ties)."""
    model, tokenizer = bundled.model, bundled.tokenizer
    result = analyze(model, tokenizer, ROUTES_SENTENCE)
    ranking = routes.ranked_heads(routes.routes_view(model, tokenizer, result).routes)
    checks = {head: routes.head_check(model, tokenizer, result, head) for head, _ in ranking}
    drops = {head: check.probability - check.knocked_out for head, check in checks.items()}
    top, share = ranking[0]
    shares_rank = np.argsort(np.argsort([-value for _, value in ranking]))
    drops_rank = np.argsort(np.argsort([-drops[head] for head, _ in ranking]))
    spearman = np.corrcoef(shares_rank, drops_rank)[0, 1]
    said = paragraph("**How the decision travels.**")
    assert f"ranks layer {top[1]} head {top[-1]} first" in said and max(drops, key=drops.get) == top
    expected = [result.probabilities[1], share, checks[top].probability, checks[top].knocked_out, spearman]
    assert figures(said) == pytest.approx(expected, abs=0.005 + 1e-9), said


TRAINING = ("The film was not good.", 1, 2, "not")  # the README's sentence across training, the head it names, a token


def test_the_training_paragraph_is_the_bundled_checkpoints_reading_of_its_sentence(bundled):
    """P(positive) at each kept checkpoint and the step where it settles (as the Training tab reads them), the named
    head's mean weight on the named token at each, and that head's role at each in training.json."""
    checkpoints = list_checkpoints(DEFAULT_MODEL_DIR)
    models = [load_model(checkpoint.source, device="cpu").model for checkpoint in checkpoints]
    sentence, layer, head, token = TRAINING
    result = analyze(bundled.model, bundled.tokenizer, sentence)
    readings = read_at_checkpoints(models, torch.tensor([result.token_ids]), result.tokens, layer - 1, head - 1)
    on_token = readings.attentions[:, :, result.tokens.index(token)].mean(dim=-1)  # (K,): over the queries
    steps = [checkpoint.step for checkpoint in checkpoints]
    settled = steps[settled_index(readings.probabilities, NO_OPINION_MARGIN)]
    roles = [stored["roles"][layer - 1][head - 1] for stored in artifact("training.json")["checkpoints"]]
    said = paragraph("**How it learned.**")
    assert f"Layer {layer} head {head}" in said and f"`{token}`" in said and f"settles at step {settled:,}" in said
    assert all(f"step {step:,}" in said for step in steps) and all(f'"{role}"' in said for role in roles)
    expected = [*readings.probabilities[:, 1].tolist(), *on_token.tolist()]
    assert figures(said) == pytest.approx(expected, abs=0.005 + 1e-9), said
