"""The files kept next to a model for its corpus views: the head atlas, the dev-set errors and the behaviour suite.

``head_atlas.json`` holds every head's behaviour, role, top tokens and importance over the reference
corpus (``data_folder.reference_corpus``); ``errors.json`` holds the dev-set sentences the model gets wrong,
most confident first (at most 1 MB); ``behaviour.json`` the behavioural suite's report (``behaviour.report``:
failure rates per test and capability, every failing case), which needs no data folder; ``faithfulness.json``
each explanation method's mean AOPC by erasure over the reference corpus (``explain.corpus_faithfulness``);
``training.json``, for a model that kept training checkpoints (``transformer.checkpoints``), the suite's failure rate
per capability and every head's role at each checkpoint (absent without checkpoints).
Each carries the sha256 of the weights (``model_hash``: ``model.safetensors``, or a sharded checkpoint's index
and shards): a file made for other weights is ignored, so the atlas and the report are recomputed when the model
changes. Layers and heads count from 1.

``python -m transformer.artifacts`` writes all four for a model folder (the data folder is needed there only,
never by the Space). An atlas, error list or report the explorer computes itself goes to its cache folder
instead, never the model folder (``cache_folder``): ``$ATTENTION_EXPLORER_CACHE/<sha256>/``, else
``$XDG_CACHE_HOME/attention-explorer/<sha256>/``, else ``~/.cache/attention-explorer/<sha256>/``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import threading
import time
import unicodedata
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import torch
from tqdm import tqdm

from ...behaviour import build_suite, run_suite
from ...behaviour.report import build_report
from ...behaviour.suite import Test
from ...explain import atlas
from ...explain.attribution import DEFAULT_IG_STEPS
from ...explain.batching import rows_per_pass
from ...explain.budget import FLOPS_PER_SECOND, row_flops
from ...explain.corpus_faithfulness import corpus_faithfulness
from ...explain.faithfulness import PERCENTS, RANDOM_SEEDS
from ...loading import INDEX_FILE, shard_names
from ..inputs import numbered_heads
from .data_folder import REFERENCE_SIZE, Row, reference_corpus

ATLAS_FILE = "head_atlas.json"
ERRORS_FILE = "errors.json"
BEHAVIOUR_FILE = "behaviour.json"
FAITHFULNESS_FILE = "faithfulness.json"
TRAINING_FILE = "training.json"
WEIGHTS_FILE = "model.safetensors"
MAX_ERRORS_BYTES = 1_000_000
DECIMALS = 4
TOP_TOKENS = 5
CACHE_VARIABLE = "ATTENTION_EXPLORER_CACHE"
CACHE_NAME = "attention-explorer"  # under $XDG_CACHE_HOME, else ~/.cache
# The atlas's default sample: the most sentences (a multiple of SENTENCES_STEP, at least MIN_SENTENCES, at most the
# reference corpus's 2,000) whose passes ``explain.budget`` estimates at CORPUS_SECONDS or less: 2,000 on the bundled
# model, 200 on a DistilBERT-base.
CORPUS_SECONDS = 600.0
MIN_SENTENCES = 100
SENTENCES_STEP = 50
ATLAS_BATCH = 64  # sentences per atlas batch, the most
TIMED_SENTENCES = 16  # the sentences of the one pass ``measured_seconds`` times


def atlas_rows(model) -> int:
    """The rows the atlas runs per sentence: one pass with its attentions, then 1 + L·H knockout copies."""
    return 2 + model.num_layers * model.num_heads


def nominal_seconds(model, ids: list[list[int]], rows_per_text: int) -> float:
    """``rows_per_text`` forward rows of each of ``ids``, in seconds at ``explain.budget.FLOPS_PER_SECOND``."""
    return rows_per_text * sum(row_flops(model, len(sentence)) for sentence in ids) / FLOPS_PER_SECOND


@torch.no_grad()
def measured_seconds(model, ids: list[list[int]], rows_per_text: int) -> float:
    """About how long ``rows_per_text`` forward rows of each of ``ids`` take on this machine now: one pass over the
    ``TIMED_SENTENCES`` middle sentences by length, timed, its seconds per operation (``explain.budget.row_flops``)
    times the operations of them all."""
    by_length = sorted(ids, key=len)
    middle = max(0, len(by_length) // 2 - TIMED_SENTENCES // 2)
    _, batch, mask = next(atlas.batches(by_length[middle : middle + TIMED_SENTENCES], TIMED_SENTENCES))  # (B, N)
    device = next(model.parameters()).device
    batch, mask = batch.to(device), mask.to(device)
    start = time.perf_counter()
    model(batch, mask)
    per_flop = (time.perf_counter() - start) / (len(batch) * row_flops(model, batch.size(1)))
    return nominal_seconds(model, ids, rows_per_text) * FLOPS_PER_SECOND * per_flop


def atlas_sentences(model, tokenizer, sets: dict[str, list[Row]], seconds: float = CORPUS_SECONDS) -> int:
    """The atlas's default sample size for ``model``: the largest (``CORPUS_SECONDS``) whose sample's passes fit."""
    for size in range(REFERENCE_SIZE, MIN_SENTENCES, -SENTENCES_STEP):
        _, ids = encode(tokenizer, reference_corpus(sets, size), model.max_len)
        if nominal_seconds(model, ids, atlas_rows(model)) <= seconds:
            return size
    return MIN_SENTENCES


def model_hash(folder: Path) -> str:
    """The sha256 of the folder's ``model.safetensors``, in hex: what ties an artifact to its model.

    A sharded ``transformers`` checkpoint (model.safetensors.index.json, no model.safetensors) has the sha256
    of its index and then each shard the index names, in sorted order, each file led by its name and size: a
    changed, renamed or added shard, or a changed index, changes the hash.
    """
    digest = hashlib.sha256()
    sharded = not (folder / WEIGHTS_FILE).is_file() and (folder / INDEX_FILE).is_file()
    names = [INDEX_FILE, *shard_names(folder / INDEX_FILE, str(folder))] if sharded else [WEIGHTS_FILE]
    for name in names:
        with open(folder / name, "rb") as file:
            if sharded:
                digest.update(f"{name}\0{os.fstat(file.fileno()).st_size}\0".encode())
            for block in iter(functools.partial(file.read, 1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def punctuation_ids(tokenizer) -> torch.Tensor:
    """True for each vocabulary entry made of punctuation only (as the colour scale's "punctuation"): (V,) bool."""
    flags = torch.zeros(tokenizer.get_vocab_size(), dtype=torch.bool)
    for token, index in tokenizer.get_vocab().items():
        flags[index] = all(unicodedata.category(char).startswith("P") for char in token)
    return flags


def encode(tokenizer, rows: list[Row], max_len: int) -> tuple[list[Row], list[list[int]]]:
    """The rows the model can read and their token ids, each cut to ``max_len`` (texts with no token are left out)."""
    # With the special tokens: a Hub model's tokenizer adds the [CLS] and [SEP] it was trained with (the tutorial's
    # adds none), as the page's own reading does (``analysis``).
    encodings = tokenizer.encode_batch([row.text for row in rows])
    kept = [(row, encoding.ids[:max_len]) for row, encoding in zip(rows, encodings, strict=True) if encoding.ids]
    return [row for row, _ in kept], [ids for _, ids in kept]


def _bar(desc: str) -> Callable[[Iterable], Iterable]:
    return functools.partial(tqdm, desc=desc, unit="batch", leave=False)


def atlas_batch_size(model, ids: list[list[int]]) -> int:
    """Sentences per atlas batch: ``ATLAS_BATCH`` (64), or as many as one pass of their 1 + L·H knockout copies holds
    (``batching.rows_per_pass`` at the longest sentence), so a big model's progress bar moves every pass: 5 on a
    DistilBERT-base at 32 tokens."""
    most = rows_per_pass(model, max(map(len, ids)), backward=False) // (atlas_rows(model) - 1)
    return min(ATLAS_BATCH, max(1, most))


def build_atlas(model, tokenizer, rows: list[Row], model_sha256: str, batch_size: int | None = None) -> dict:
    """The head atlas over ``rows`` as JSON-ready data (layers and heads from 1), with tqdm progress bars, in batches
    of ``batch_size`` sentences (default ``atlas_batch_size``)."""
    start = time.perf_counter()
    rows, ids = encode(tokenizer, rows, model.max_len)
    batch_size = batch_size or atlas_batch_size(model, ids)
    behaviour = atlas.head_behaviour(model, ids, punctuation_ids(tokenizer), batch_size, _bar("atlas: attention"))
    importance = atlas.corpus_importance(model, ids, [row.label for row in rows], batch_size, _bar("atlas: knockout"))
    heads = []
    for (layer, head), (page_layer, page_head) in numbered_heads(model.num_layers, model.num_heads):
        weights = behaviour.behaviour[layer, head]  # (K,)
        share = float(behaviour.entropy_share[layer, head])
        top = atlas.top_tokens(behaviour.token_scores[layer, head], behaviour.token_counts, TOP_TOKENS)
        heads.append(
            {
                "layer": page_layer,
                "head": page_head,
                "role": atlas.head_role(weights, share),
                **{name: round(float(w), DECIMALS) for name, w in zip(atlas.BEHAVIOURS, weights, strict=True)},
                "entropy_mean": round(float(behaviour.entropy_mean[layer, head]), DECIMALS),
                "entropy_std": round(float(behaviour.entropy_std[layer, head]), DECIMALS),
                "entropy_share": round(share, DECIMALS),
                "accuracy_drop": round(float(importance.accuracy_drop[layer, head]), DECIMALS),
                "prob_drop": round(float(importance.prob_drop[layer, head]), DECIMALS),
                "top_tokens": [
                    {
                        "token": tokenizer.id_to_token(i),
                        "score": round(s, DECIMALS),
                        "count": int(behaviour.token_counts[i]),
                    }
                    for i, s in top
                ],
            }
        )
    sets: dict[str, int] = {}
    for row in rows:
        sets[row.set] = sets.get(row.set, 0) + 1
    return {
        "model_sha256": model_sha256,
        "num_layers": model.num_layers,
        "num_heads": model.num_heads,
        "sentences": len(rows),
        "sets": sets,
        "behaviours": list(atlas.BEHAVIOURS),
        "role_rule": atlas.ROLE_RULE,
        "base_accuracy": round(importance.base_accuracy, DECIMALS),
        "heads": heads,
        "seconds": round(time.perf_counter() - start, 1),
    }


def build_errors(model, tokenizer, sets: dict[str, list[Row]], model_sha256: str, max_bytes: int = MAX_ERRORS_BYTES):
    """The misclassified rows of every set, most confident first, as JSON-ready data of at most ``max_bytes``.

    Each error: {"set", "text", "label" (true), "predicted", "confidence" (the predicted class's probability)}.
    When they do not fit, the least confident are left out and ``left_out`` says how many.
    """
    rows, ids = encode(tokenizer, [row for rows in sets.values() for row in rows], model.max_len)
    probs = atlas.corpus_probabilities(model, ids, progress=_bar("errors"))  # (S, C)
    confidence, predicted = probs.max(dim=-1)  # (S,), (S,)
    names = model.label_names
    wrong = [i for i, row in enumerate(rows) if int(predicted[i]) != row.label]
    wrong.sort(key=lambda i: -float(confidence[i]))
    errors = [
        {
            "set": rows[i].set,
            "text": rows[i].text,
            "label": names[rows[i].label],
            "predicted": names[int(predicted[i])],
            "confidence": round(float(confidence[i]), DECIMALS),
        }
        for i in wrong
    ]
    counts = {name: {"rows": 0, "wrong": 0} for name in sets}
    for i, row in enumerate(rows):
        counts[row.set]["rows"] += 1
        counts[row.set]["wrong"] += int(int(predicted[i]) != row.label)
    data: dict[str, Any] = {
        "model_sha256": model_sha256,
        "label_names": list(names),
        "sets": counts,
        "left_out": 0,
        "errors": errors,
    }
    size = len(json.dumps(data, ensure_ascii=False).encode())
    while size > max_bytes and data["errors"]:
        dropped = data["errors"].pop()
        data["left_out"] += 1
        size -= len(json.dumps(dropped, ensure_ascii=False).encode()) + 2
    return data


def suite_probabilities(model, tokenizer, progress: Callable[[Iterable], Iterable] = iter):
    """``texts -> [P(positive), ...]``, the model as ``behaviour.run_suite`` takes it: each text cut to ``max_len``
    tokens (the suite's are short), read in padded batches through ``progress``.

    Raises:
        ValueError: a text encodes to no token.
    """
    positive = list(model.label_names).index("positive") if "positive" in model.label_names else -1

    def probabilities(texts: list[str]) -> list[float]:
        ids = [encoding.ids[: model.max_len] for encoding in tokenizer.encode_batch(texts)]  # as ``encode`` reads
        if not all(ids):
            raise ValueError(f"text {texts[ids.index([])]!r} encodes to no token")
        return atlas.corpus_probabilities(model, ids, batch_size=256, progress=progress)[:, positive].tolist()

    return probabilities


def build_behaviour(model, tokenizer, model_sha256: str, tests: list[Test] | None = None, progress=None) -> dict:
    """The behavioural suite's report (``behaviour.report.build_report``) on the model, both parts unless ``tests``
    names some: JSON-ready, with the model's hash, the number of texts read and the seconds it took."""
    start = time.perf_counter()
    tests = build_suite() if tests is None else tests
    results = run_suite(tests, suite_probabilities(model, tokenizer, progress or _bar("behaviour suite")))
    texts = len({text for test in tests for case in test.cases for text in case})
    report = build_report(results)
    return {"model_sha256": model_sha256, "texts": texts, **report, "seconds": round(time.perf_counter() - start, 1)}


def build_training(checkpoints, tokenizer, rows: list[Row], model_sha256: str, batch_size: int | None = None) -> dict:
    """The model across its training checkpoints, ((step, model), ...) oldest first: at each, the behavioural suite's
    failure rate per part and capability (``build_behaviour``) and every head's atlas role over ``rows`` (layers and
    heads from 1, a row per layer). JSON-ready, tied to the final weights by ``model_sha256``."""
    start = time.perf_counter()
    rows, ids = encode(tokenizer, rows, checkpoints[-1][1].max_len)
    punctuation = punctuation_ids(tokenizer)
    kept = []
    for step, model in tqdm(checkpoints, desc="training: checkpoints", unit="checkpoint", leave=False):
        report = build_behaviour(model, tokenizer, model_sha256, progress=iter)
        found = atlas.head_behaviour(model, ids, punctuation, batch_size or atlas_batch_size(model, ids))
        roles = [
            [atlas.head_role(found.behaviour[layer, head], float(found.entropy_share[layer, head]))
             for head in range(model.num_heads)]
            for layer in range(model.num_layers)
        ]  # fmt: skip
        rates = [{key: row[key] for key in ("part", "capability", "failure_rate")} for row in report["capabilities"]]
        kept.append({"step": step, "capabilities": rates, "roles": roles})
    return {
        "model_sha256": model_sha256,
        "steps": [step for step, _ in checkpoints],
        "sentences": len(rows),
        "role_rule": atlas.ROLE_RULE,
        "checkpoints": kept,
        "seconds": round(time.perf_counter() - start, 1),
    }


def build_faithfulness(model, tokenizer, rows: list[Row], model_sha256: str, steps: int = DEFAULT_IG_STEPS) -> dict:
    """Each explanation method's mean AOPC by erasure over ``rows`` (``explain.corpus_faithfulness``), both removal
    modes, each sentence explained for its predicted class: JSON-ready, with a tqdm progress bar."""
    start = time.perf_counter()
    rows, ids = encode(tokenizer, rows, model.max_len)
    device = next(model.parameters()).device  # a model on CUDA (``make artifacts`` loads on it) reads ids there
    sentences = [torch.tensor([sentence], device=device) for sentence in ids]  # each (1, N)
    bar = functools.partial(tqdm, desc="faithfulness", unit="sentence", leave=False)
    found = corpus_faithfulness(model, sentences, steps, progress=bar)
    rounded = {
        mode: {
            "comprehensiveness_aopc": {name: round(v, DECIMALS) for name, v in found.comprehensiveness[mode].items()},
            "sufficiency_aopc": {name: round(v, DECIMALS) for name, v in found.sufficiency[mode].items()},
        }
        for mode in found.comprehensiveness
    }
    return {
        "model_sha256": model_sha256,
        "sentences": found.sentences,
        "ig_steps": steps,
        "percents": list(PERCENTS),
        "seeds": list(RANDOM_SEEDS),
        "modes": rounded,
        "seconds": round(time.perf_counter() - start, 1),
    }


def read_artifact(folder: Path | None, name: str, model_sha256: str | None) -> dict | None:
    """The artifact ``name`` in ``folder`` if made for these weights, else None (missing, unreadable, stale)."""
    if folder is None or model_sha256 is None:
        return None
    try:
        data = json.loads((folder / name).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) and data.get("model_sha256") == model_sha256 else None


def write_artifact(folder: Path, name: str, data: dict) -> Path:
    """Write ``data`` as ``folder/name`` (UTF-8 JSON, compact); return the path."""
    path = folder / name
    # Written aside, then renamed: a reader (another process on a shared cache) never sees half a file. The
    # partial file is named by process and thread, and opened plainly so the file gets the umask's mode.
    partial = folder / f".{name}.{os.getpid()}.{threading.get_ident()}.part"
    try:
        partial.write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)  # a full disk leaves no partial file behind
        raise
    return path


def cache_root() -> Path | None:
    """The explorer's cache folder: ``$ATTENTION_EXPLORER_CACHE``, else ``$XDG_CACHE_HOME/attention-explorer``,
    else ``~/.cache/attention-explorer``.

    Returns:
        That folder (perhaps not made yet), or None when neither variable is set and there is no home folder.
    """
    if os.environ.get(CACHE_VARIABLE):
        return Path(os.environ[CACHE_VARIABLE])
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]) / CACHE_NAME
    try:
        return Path.home() / ".cache" / CACHE_NAME
    except RuntimeError:  # no home folder to be found
        return None


def cache_folder(model_sha256: str | None) -> Path | None:
    """Where the explorer keeps what it computes for one model: ``cache_root()/<sha256>``.

    Args:
        model_sha256: the model's hash (``model_hash``), in hex; None for a model with no local weights.

    Returns:
        The folder (perhaps not made yet), or None without a hash or a cache root.
    """
    root = cache_root()
    if root is None or not model_sha256 or any(c not in "0123456789abcdef" for c in model_sha256):
        return None  # only a hex hash names a folder: nothing else reaches the path
    return root / model_sha256


def cache_artifact(name: str, data: dict) -> Path | None:
    """Write ``data`` as ``name`` in the cache folder of ``data["model_sha256"]``, making the folder if needed.

    Returns:
        The path written, or None when there is no such folder or it cannot be written (read-only, full).
    """
    folder = cache_folder(data.get("model_sha256"))
    if folder is None:
        return None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        return write_artifact(folder, name, data)
    except OSError:
        return None
