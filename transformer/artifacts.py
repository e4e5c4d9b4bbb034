"""Write a model's corpus files, ``head_atlas.json``, ``errors.json``, ``behaviour.json`` and ``faithfulness.json``
(and ``training.json`` when it kept training checkpoints), next to it (built by ``explorer.corpus.model_files``).

The head atlas and the faithfulness means cover the reference corpus (SST-2 dev and a fixed sample of the
other dev sets, 2,000 sentences, or fewer for a big model: ``explorer.corpus.model_files.atlas_sentences``); the error
list, every bundled dev set; the behaviour report, both parts of the behavioural suite (``transformer.behaviour``,
no data needed); the training file, the suite's failure rate per capability and every head's atlas role (over the
same corpus) at each checkpoint. All carry the sha256 of ``model.safetensors``. Example (``make artifacts`` runs it
on the bundled model)::

    python -m transformer.artifacts --model assets/model --data-dir ../shared/data
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

from .checkpoints import list_checkpoints
from .explain.attribution import DEFAULT_IG_STEPS
from .explorer.corpus import data_folder
from .explorer.corpus.model_files import (
    ATLAS_FILE,
    BEHAVIOUR_FILE,
    ERRORS_FILE,
    FAITHFULNESS_FILE,
    TRAINING_FILE,
    atlas_sentences,
    build_atlas,
    build_behaviour,
    build_errors,
    build_faithfulness,
    build_training,
    model_hash,
    write_artifact,
)
from .loading import DEFAULT_MODEL_DIR, LoadedModel, ModelLoadError, load_model


def main(argv: list[str] | None = None) -> None:
    """Write head_atlas.json, errors.json, behaviour.json, faithfulness.json (and training.json) next to the model;
    print what and how long each took."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=__doc__.split("::")[-1].strip())
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL_DIR, help="model folder (default: assets/model)")
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=data_folder.data_dir(),
        help="data folder with the dev sets (default: $SENTIMENT_DATA_DIR, else ../shared/data)",
    )
    parser.add_argument(
        "--sentences",
        type=int,
        help="reference corpus size (default: 2000, SST-2 dev then a fixed sample, or fewer for a big model: as many "
        "as 10 minutes of the atlas's passes allow by the model's size, at least 100)",
    )
    parser.add_argument(
        "--batch-size",
        type=int,
        help="the atlas's sentences per batch (default 64, or fewer for a big model: one pass of their knockouts)",
    )
    parser.add_argument(
        "--ig-steps",
        type=int,
        default=DEFAULT_IG_STEPS,
        help=f"Integrated Gradients steps for the faithfulness means (default {DEFAULT_IG_STEPS})",
    )
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    try:
        loaded = load_model(args.model, device="cpu")
        sets = data_folder.dev_sets(args.data_dir)
    except (ModelLoadError, FileNotFoundError) as error:
        sys.exit(f"error: {error}")
    sha = model_hash(args.model)
    start = time.perf_counter()
    size = args.sentences or atlas_sentences(loaded.model, loaded.tokenizer, sets)
    rows = data_folder.reference_corpus(sets, size)
    data = build_atlas(loaded.model, loaded.tokenizer, rows, sha, args.batch_size)
    path = write_artifact(args.model, ATLAS_FILE, data)
    print(f"{path}: {data['sentences']} sentences, {time.perf_counter() - start:.1f} s")
    start = time.perf_counter()
    errors = build_errors(loaded.model, loaded.tokenizer, sets, sha)
    path = write_artifact(args.model, ERRORS_FILE, errors)
    shown = f"{len(errors['errors'])} errors" + (f" ({errors['left_out']} left out)" if errors["left_out"] else "")
    print(f"{path}: {shown}, {path.stat().st_size / 1000:.0f} KB, {time.perf_counter() - start:.1f} s")
    faithful = build_faithfulness(loaded.model, loaded.tokenizer, rows, sha, args.ig_steps)
    path = write_artifact(args.model, FAITHFULNESS_FILE, faithful)
    best = max(faithful["modes"]["pad"]["comprehensiveness_aopc"].items(), key=lambda item: item[1])
    print(
        f"{path}: {faithful['sentences']} sentences, most faithful {best[0]} ({best[1]}), {faithful['seconds']:.1f} s"
    )
    report = build_behaviour(loaded.model, loaded.tokenizer, sha)
    path = write_artifact(args.model, BEHAVIOUR_FILE, report)
    print(
        f"{path}: {len(report['tests'])} tests, {len(report['failures'])} failing cases, "
        f"{path.stat().st_size / 1000:.0f} KB, {report['seconds']:.1f} s"
    )
    write_training(args.model, loaded, rows, sha)


def write_training(folder: Path, loaded: LoadedModel, rows: list, sha: str) -> None:
    """training.json next to the model, from each of its checkpoints (the last is the model itself); none without."""
    checkpoints = list_checkpoints(folder)
    if not checkpoints:
        print(f"{folder}: no training checkpoints, so no {TRAINING_FILE}")
        return
    models = [
        (c.step, loaded.model if c.source == str(folder) else load_model(c.source, device="cpu").model)
        for c in checkpoints
    ]
    data = build_training(models, loaded.tokenizer, rows, sha)
    path = write_artifact(folder, TRAINING_FILE, data)
    print(f"{path}: {len(models)} checkpoints, steps {data['steps']}, {data['seconds']:.1f} s")


if __name__ == "__main__":
    main()
