"""Accuracy of a saved model on labelled ``sentence<TAB>label`` files.

Example:
    python -m transformer.evaluate --model assets/model --data ../shared/data/sst2/{glue_dev,sent_test}.tsv

Prints one JSON object per file on stdout, ``{"data": "<file name>", "n": <rows>, "accuracy": <0..1>}``,
and a confusion summary per file on stderr. ``--model`` is a local folder or a Hugging Face Hub repo id.
"""

import argparse
import json
import sys
from pathlib import Path

import torch
from tokenizers import Tokenizer

from .classifier import TransformerClassifier
from .data import read_tsv
from .loading import DEFAULT_MODEL_DIR, ModelLoadError, load_model
from .tokenizer import encode_batch


@torch.no_grad()
def predict(
    model: TransformerClassifier, tokenizer: Tokenizer, texts: list[str], batch_size: int = 256
) -> torch.Tensor:
    """Predicted class ids for ``texts``, in order, as a (len(texts),) int64 CPU tensor.

    Runs in eval mode on the model's device (the model's previous mode is restored) and truncates
    each text to ``model.max_len`` tokens. Texts are batched by length so little time goes to padding.
    """
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    predictions = torch.empty(len(texts), dtype=torch.long)
    for start in range(0, len(order), batch_size):
        rows = order[start : start + batch_size]
        input_ids, attention_mask = encode_batch(tokenizer, [texts[i] for i in rows], model.max_len)  # (B, N) each
        logits = model(input_ids.to(device), attention_mask.to(device))  # (B, C)
        predictions[rows] = logits.argmax(dim=-1).cpu()
    model.train(was_training)
    return predictions


def accuracy(predictions: torch.Tensor, labels: list[int]) -> float:
    """Fraction of predictions equal to the labels."""
    return (predictions == torch.tensor(labels)).sum().item() / len(labels)


def confusion_summary(name: str, predictions: torch.Tensor, labels: list[int], label_names: list[str]) -> str:
    """One line per true class: how its rows were predicted, e.g. ``negative: 380 negative, 48 positive``."""
    lines = [f"{name}:"]
    truth = torch.tensor(labels)
    for true_id, true_name in enumerate(label_names):
        predicted = predictions[truth == true_id]
        counts = ", ".join(f"{(predicted == i).sum().item()} {label}" for i, label in enumerate(label_names))
        lines.append(f"  true {true_name} ({len(predicted)}): predicted {counts}")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface of ``python -m transformer.evaluate``."""
    parser = argparse.ArgumentParser(prog="python -m transformer.evaluate", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--model", default=str(DEFAULT_MODEL_DIR), help="model folder or Hub repo id (default: the bundled model)"
    )
    parser.add_argument("--revision", default=None, help="Hub branch, tag or commit (Hub repo ids only)")
    parser.add_argument("--data", type=Path, nargs="+", required=True, help="sentence<TAB>label files to score")
    parser.add_argument("--device", default=None, help="torch device (default: cuda if available, else cpu)")
    parser.add_argument("--batch-size", type=int, default=256, help="sentences per forward pass")
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
            data = read_tsv(path)
        except (OSError, ValueError) as error:
            sys.exit(f"error: {error}")
        predictions = predict(loaded.model, loaded.tokenizer, data.texts, args.batch_size)
        result = {"data": path.name, "n": len(data.texts), "accuracy": accuracy(predictions, data.labels)}
        print(json.dumps(result), flush=True)
        print(confusion_summary(path.name, predictions, data.labels, loaded.model.label_names), file=sys.stderr)
        results.append(result)
    return results


if __name__ == "__main__":
    main()
