"""Labelled sentence files and length-bucketed training batches.

A data file is UTF-8 text with the header ``sentence<TAB>label`` and one example a line; each
line is split on its last tab and quotes are ordinary characters (no CSV quote processing).
"""

import random
from dataclasses import dataclass
from pathlib import Path

HEADER = ["sentence", "label"]
LABEL_NAMES = ["negative", "positive"]


@dataclass(frozen=True)
class LabelledTexts:
    """The rows of one data file: ``texts[i]`` has label ``labels[i]`` (0 = negative, 1 = positive)."""

    path: Path
    texts: list[str]
    labels: list[int]


def read_tsv(path: str | Path) -> LabelledTexts:
    """Read a ``sentence<TAB>label`` file.

    Raises:
        FileNotFoundError: if the file does not exist.
        ValueError: naming the file and line, for a wrong header, a line without a tab, a label
            other than 0 or 1, or an empty sentence.
    """
    path = Path(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines or lines[0].split("\t") != HEADER:
        raise ValueError(f"{path}: the first line must be the header 'sentence<TAB>label'")
    texts, labels = [], []
    for line_number, line in enumerate(lines[1:], start=2):
        text, tab, label = line.rpartition("\t")
        if not tab:
            raise ValueError(f"{path}:{line_number}: no tab in this line")
        if label not in ("0", "1"):
            raise ValueError(f"{path}:{line_number}: label {label!r} is not 0 or 1")
        if not text.strip():
            raise ValueError(f"{path}:{line_number}: empty sentence")
        texts.append(text)
        labels.append(int(label))
    return LabelledTexts(path, texts, labels)


def bucketed_batches(
    lengths: list[int], batch_size: int, rng: random.Random, pool_batches: int = 50
) -> list[list[int]]:
    """Shuffle example indices into batches of similar length, so little compute goes to padding.

    The indices are shuffled, cut into pools of ``pool_batches`` batches, sorted by length within
    each pool and cut into batches; the batches are shuffled again. Deterministic for a given ``rng``.
    """
    order = list(range(len(lengths)))
    rng.shuffle(order)
    pool_size = batch_size * pool_batches
    batches = []
    for start in range(0, len(order), pool_size):
        pool = sorted(order[start : start + pool_size], key=lengths.__getitem__)
        batches.extend(pool[i : i + batch_size] for i in range(0, len(pool), batch_size))
    rng.shuffle(batches)
    return batches
