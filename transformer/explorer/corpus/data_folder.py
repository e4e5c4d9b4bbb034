"""The dev sets and the atlas's reference corpus, read from the data folder (``../shared/data`` by default).

The Space never has this folder: only the artifacts command (``python -m transformer.artifacts``) and the atlas's
first-use computation read it, and both say so when it is missing.
"""

from __future__ import annotations

import csv
import gzip
import os
import random
from dataclasses import dataclass
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[3]  # transformer/explorer/corpus/data_folder.py
DATA_DIR_VARIABLE = "SENTIMENT_DATA_DIR"
DEFAULT_DATA_DIR = REPOSITORY.parent / "shared" / "data"
# The bundled dev sets: set name -> file under the data folder (TSV, gzipped or not, header "sentence|text<TAB>label").
DEV_SETS = {
    "sst2": "sst2/glue_dev.tsv",
    "yelp": "yelp/dev.tsv.gz",
    "pros_cons": "pros_cons/dev.tsv.gz",
    "tweets": "tweets/dev.tsv.gz",
}
REFERENCE_SET = "sst2"  # the reference corpus holds all of it, then a fixed sample of the other dev sets
REFERENCE_SIZE = 2000
REFERENCE_SEED = 15


@dataclass(frozen=True)
class Row:
    """One labelled sentence of a dev set."""

    set: str
    text: str
    label: int


def data_dir() -> Path:
    """The data folder: ``SENTIMENT_DATA_DIR`` when set, else ``../shared/data`` beside the project."""
    return Path(os.environ.get(DATA_DIR_VARIABLE) or DEFAULT_DATA_DIR)


def has_dev_sets(folder: Path) -> bool:
    """Whether ``folder`` holds every file of ``DEV_SETS``."""
    return all((folder / path).is_file() for path in DEV_SETS.values())


def read_rows(path: Path, name: str) -> list[Row]:
    """A labelled TSV file (gzipped when it ends in .gz) as rows; its header names the text and label columns."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8", newline="") as file:
        reader = csv.reader(file, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(reader)
        text_column = header.index("sentence") if "sentence" in header else header.index("text")
        label_column = header.index("label")
        return [Row(name, row[text_column], int(row[label_column])) for row in reader if row]


def dev_sets(folder: Path) -> dict[str, list[Row]]:
    """Every bundled dev set, by name, in file order.

    Raises:
        FileNotFoundError: a file of ``DEV_SETS`` is missing, with its path.
    """
    missing = [str(folder / path) for path in DEV_SETS.values() if not (folder / path).is_file()]
    if missing:
        raise FileNotFoundError(f"the data folder lacks {', '.join(missing)}")
    return {name: read_rows(folder / path, name) for name, path in DEV_SETS.items()}


def reference_corpus(sets: dict[str, list[Row]], size: int = REFERENCE_SIZE, seed: int = REFERENCE_SEED) -> list[Row]:
    """The atlas's corpus: all of SST-2 dev, then a fixed sample of the other sets, equal shares, ``size`` in all; a
    ``size`` below SST-2 dev's, a fixed sample of it alone (in file order)."""
    rng = random.Random(seed)
    if size < len(sets[REFERENCE_SET]):
        return [sets[REFERENCE_SET][i] for i in sorted(rng.sample(range(len(sets[REFERENCE_SET])), size))]
    corpus = list(sets[REFERENCE_SET])
    others = [name for name in sets if name != REFERENCE_SET]
    left = max(0, size - len(corpus))
    for i, name in enumerate(others):
        share = left // len(others) + (1 if i < left % len(others) else 0)
        corpus += rng.sample(sets[name], min(share, len(sets[name])))
    return corpus
