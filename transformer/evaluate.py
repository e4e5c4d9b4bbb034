"""Accuracy of a saved model on labelled files: SST-2 TSVs or the gzip TSVs of the other sets.

Example:
    python -m transformer.evaluate --model assets/model \\
        --data ../shared/data/sst2/glue_dev.tsv ../shared/data/yelp/dev.tsv.gz benchmarks/everyday_sentences.tsv

A file's header is ``sentence<TAB>label`` or ``text<TAB>label`` (further columns are ignored); ``.gz``
files are read directly. Reviews longer than the model's ``max_len`` tokens are read in chunks whose
probabilities are averaged. Prints one JSON object per file on stdout,
``{"data": "<file name>", "n": <rows>, "accuracy": <0..1>, "negation": {...}}``, and a confusion
summary per file on stderr. ``negation`` is the accuracy on the rows holding a negation word, and on
the positive ones among them. A paired file (header ``text<TAB>label<TAB>pair``, as ``cad/``) also
gets ``originals``, ``edits`` and ``pair_consistency`` (both sides of a pair right). ``--model`` is a
local folder or a Hugging Face Hub repo id.
"""

import argparse
import json
import sys
from pathlib import Path

import torch

from .loading import DEFAULT_MODEL_DIR, ModelLoadError, load_model
from .training.data import is_paired, parse_labelled, parse_pairs, read_lines
from .training.scoring import accuracy, negation_scores, pair_scores, predicted_classes


def confusion_summary(name: str, predictions: torch.Tensor, labels: list[int], label_names: list[str]) -> str:
    """One line per true class: how its rows were predicted, e.g. ``negative: 380 negative, 48 positive``."""
    lines = [f"{name}:"]
    truth = torch.tensor(labels)
    for true_id, true_name in enumerate(label_names):
        predicted = predictions[truth == true_id]
        counts = ", ".join(f"{(predicted == i).sum().item()} {label}" for i, label in enumerate(label_names))
        lines.append(f"  true {true_name} ({len(predicted)}): predicted {counts}")
    return "\n".join(lines)


def display_name(path: Path) -> str:
    """``yelp/dev.tsv.gz`` for files whose own name is shared across sets, else the file name."""
    return f"{path.parent.name}/{path.name}" if path.name.startswith(("dev.", "train.", "test.")) else path.name


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface of ``python -m transformer.evaluate``."""
    parser = argparse.ArgumentParser(prog="python -m transformer.evaluate", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--model", default=str(DEFAULT_MODEL_DIR), help="model folder or Hub repo id (default: the bundled model)"
    )
    parser.add_argument("--revision", default=None, help="Hub branch, tag or commit (Hub repo ids only)")
    parser.add_argument("--data", type=Path, nargs="+", required=True, help="labelled files to score (.tsv, .tsv.gz)")
    parser.add_argument("--device", default=None, help="torch device (default: cuda if available, else cpu)")
    parser.add_argument("--batch-size", type=int, default=256, help="sequences per forward pass")
    return parser


def main(argv: list[str] | None = None) -> list[dict]:
    """Score the model on each file; print the JSON lines and return them as dicts."""
    args = build_parser().parse_args(argv)
    try:
        loaded = load_model(args.model, revision=args.revision, device=args.device)
    except ModelLoadError as error:
        sys.exit(f"error: {error}")
    results = []
    for path in args.data:
        try:
            lines = read_lines(path)
            paired = is_paired(lines)
            data = (parse_pairs if paired else parse_labelled)(path, lines)
        except (OSError, ValueError) as error:
            sys.exit(f"error: {error}")
        predictions = predicted_classes(loaded.model, loaded.tokenizer, data.texts, args.batch_size)
        name = display_name(path)
        result = {"data": name, "n": len(data.texts), "accuracy": accuracy(predictions, data.labels)}
        result["negation"] = negation_scores(predictions, data.labels, data.texts)
        if paired:
            result.update(pair_scores(predictions, data.labels))
        print(json.dumps(result), flush=True)
        print(confusion_summary(name, predictions, data.labels, loaded.model.label_names), file=sys.stderr)
        results.append(result)
    return results


if __name__ == "__main__":
    main()
