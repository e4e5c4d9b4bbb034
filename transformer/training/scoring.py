"""Predictions and accuracy of a classifier on raw texts, long reviews included.

A text longer than the model's ``max_len`` tokens is read in consecutive ``max_len``-token chunks,
and its class probabilities are the mean over the chunks: the whole review counts, not only its
first lines. Texts that fit (every sentence of SST-2, Yelp, tweets...) are read whole, as the app does.

Shape letters: B = batch, N = sequence length, C = classes, W = windows.
"""

import torch
from tokenizers import Tokenizer

from ..classifier import TransformerClassifier
from ..tokenizer import pad_ids
from .composition import has_negation
from .data import LabelledTexts
from .mixture import chunk


@torch.no_grad()
def window_probabilities(model: TransformerClassifier, windows: list[list[int]], batch_size: int = 512) -> torch.Tensor:
    """Class probabilities of token id sequences, in order: (W, C) float32 on the CPU, in eval mode.

    The model's previous mode is restored; sequences are batched by length so little goes to padding.
    """
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    order = sorted(range(len(windows)), key=lambda i: len(windows[i]))
    result = torch.empty(len(windows), model.classifier[-1].out_features)  # (W, C)
    for start in range(0, len(order), batch_size):
        rows = order[start : start + batch_size]
        input_ids, attention_mask = pad_ids([windows[i] for i in rows])  # (B, N) each
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
            logits = model(input_ids.to(device), attention_mask.to(device))  # (B, C)
        result[rows] = logits.float().softmax(dim=-1).cpu()
    model.train(was_training)
    return result


def text_probabilities(
    model: TransformerClassifier, tokenizer: Tokenizer, texts: list[str], batch_size: int = 512
) -> torch.Tensor:
    """Class probabilities of raw texts, (len(texts), C): the mean over each text's ``max_len`` chunks.

    Raises:
        ValueError: if a text encodes to no tokens.
    """
    windows, owners = [], []
    for i, encoding in enumerate(tokenizer.encode_batch(texts, add_special_tokens=False)):
        if not encoding.ids:
            raise ValueError(f"text {texts[i]!r} encodes to no tokens; pass non-empty text")
        pieces = chunk(encoding.ids, model.max_len)
        windows.extend(pieces)
        owners.extend([i] * len(pieces))
    probabilities = window_probabilities(model, windows, batch_size)  # (W, C)
    owner = torch.tensor(owners)
    totals = torch.zeros(len(texts), probabilities.shape[1]).index_add_(0, owner, probabilities)
    return totals / torch.bincount(owner, minlength=len(texts)).unsqueeze(1)


def positive_probabilities(model: TransformerClassifier, tokenizer: Tokenizer):
    """``texts -> [P(positive), ...]`` (class 1): the model as the behavioural suite's ``run_suite`` takes it."""
    return lambda texts: text_probabilities(model, tokenizer, texts)[:, 1].tolist()


def predicted_classes(
    model: TransformerClassifier, tokenizer: Tokenizer, texts: list[str], batch_size: int = 512
) -> torch.Tensor:
    """Predicted class ids of raw texts, (len(texts),) int64 on the CPU."""
    return text_probabilities(model, tokenizer, texts, batch_size).argmax(dim=-1)


def accuracy(predictions: torch.Tensor, labels: list[int]) -> float:
    """Fraction of predictions equal to the labels."""
    return (predictions == torch.tensor(labels)).sum().item() / len(labels)


def pair_scores(predictions: torch.Tensor, labels: list[int]) -> dict[str, float]:
    """Accuracy on the originals (even rows), on the edits (odd rows), and pair consistency: both right.

    For a paired file as ``data.read_pairs`` returns it: rows ``2k`` and ``2k + 1`` are one pair (a last
    row without its partner, as a row cap may leave, is not counted).
    """
    whole = len(labels) // 2 * 2
    right = predictions[:whole] == torch.tensor(labels[:whole])
    originals, edits = right[0::2], right[1::2]
    return {
        "originals": round(originals.float().mean().item(), 4),
        "edits": round(edits.float().mean().item(), 4),
        "pair_consistency": round((originals & edits).float().mean().item(), 4),
    }


def negation_scores(predictions: torch.Tensor, labels: list[int], texts: list[str]) -> dict[str, float | int]:
    """Accuracy on the rows that hold a negation word, and on the positive ones among them."""
    rows = [i for i, text in enumerate(texts) if has_negation(text)]
    positives = [i for i in rows if labels[i] == 1]
    return {
        "n": len(rows),
        "accuracy": round(accuracy(predictions[rows], [labels[i] for i in rows]), 4) if rows else None,
        "positives": len(positives),
        "positive_accuracy": round(accuracy(predictions[positives], [1] * len(positives)), 4) if positives else None,
    }


def score_sets(model: TransformerClassifier, tokenizer: Tokenizer, sets: dict[str, LabelledTexts]) -> dict[str, float]:
    """Accuracy on each named set, rounded to 4 places, plus ``mean``: their unweighted mean."""
    scores = {
        name: round(accuracy(predicted_classes(model, tokenizer, rows.texts), rows.labels), 4)
        for name, rows in sets.items()
    }
    scores["mean"] = round(sum(scores.values()) / len(scores), 4)
    return scores


def composition_scores(model: TransformerClassifier, tokenizer: Tokenizer, sets: dict[str, LabelledTexts]) -> dict:
    """How the model reads negation and minimal edits on the selection sets.

    ``negation``: per set (all but ``cad``, ``imdb`` and ``ood``) the ``negation_scores``, plus ``pooled``,
    their rows taken together. ``cad``: ``pair_scores`` of the paired CAD dev reviews, when present.
    """
    report, pooled_predictions, pooled_labels, pooled_texts = {"negation": {}}, [], [], []
    for name, rows in sets.items():
        if name in ("imdb", "ood"):
            continue
        predictions = predicted_classes(model, tokenizer, rows.texts)
        if name == "cad":
            report["cad"] = pair_scores(predictions, rows.labels)
            continue
        report["negation"][name] = negation_scores(predictions, rows.labels, rows.texts)
        pooled_predictions.append(predictions)
        pooled_labels += rows.labels
        pooled_texts += rows.texts
    if pooled_texts:
        report["negation"]["pooled"] = negation_scores(torch.cat(pooled_predictions), pooled_labels, pooled_texts)
    return report


CLEAR = (0.25, 0.75)  # a P(positive) outside this range reads as a clear opinion


def neutral_scores(positive: list[float]) -> dict[str, float | int]:
    """How texts with no opinion are read, from their P(positive): the median, the median distance from 0.5, and
    the share read as a clear opinion (outside ``CLEAR``)."""
    values = torch.tensor(positive, dtype=torch.float64)  # (n,)
    outside = ((values < CLEAR[0]) | (values > CLEAR[1])).double().mean().item()
    return {
        "n": len(positive),
        "median": round(values.median().item(), 4),
        "median_distance": round((values - 0.5).abs().median().item(), 4),
        "clear_opinion": round(outside, 4),
    }
