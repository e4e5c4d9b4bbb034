"""Labelled and unlabelled text files, and length-bucketed training batches.

A labelled file is UTF-8 TSV, plain or gzip-compressed (``.gz``), whose header starts with
``sentence<TAB>label`` (SST-2) or ``text<TAB>label`` (the other sets); further columns, such as
multi_domain's ``domain``, are ignored. Quotes are ordinary characters (no CSV quote processing).
An unlabelled file holds one text a line, with no header.
"""

import gzip
import random
from dataclasses import dataclass
from pathlib import Path

TEXT_COLUMNS = ("sentence", "text")
PAIR_COLUMN = "pair"  # the last column of a paired file (cad/): rows 2k and 2k + 1 are one pair
LABEL_NAMES = ["negative", "positive"]


@dataclass(frozen=True)
class LabelledTexts:
    """The rows of one data file: ``texts[i]`` has label ``labels[i]`` (0 = negative, 1 = positive; a training
    source of sentences with no opinion holds the soft label 0.5, P(positive))."""

    path: Path
    texts: list[str]
    labels: list[float]

    def rows(self, start: int = 0, end: int | None = None) -> "LabelledTexts":
        """The rows ``start:end`` of this file (``end`` None = to the last)."""
        return LabelledTexts(self.path, self.texts[start:end], self.labels[start:end])


def read_lines(path: str | Path) -> list[str]:
    """The lines of a UTF-8 text file, gunzipped when the name ends in ``.gz``, without line ends.

    Raises:
        FileNotFoundError: if the file does not exist.
        ValueError: naming the file, if it is not valid gzip or not UTF-8.
    """
    path = Path(path)
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rt", encoding="utf-8") as file:
                return file.read().splitlines()
        return path.read_text(encoding="utf-8").splitlines()
    except (gzip.BadGzipFile, EOFError, UnicodeDecodeError) as error:
        raise ValueError(f"{path}: cannot be read as UTF-8 text ({error})") from None


def read_labelled(path: str | Path) -> LabelledTexts:
    """Read a labelled TSV file (see the module docstring for the format).

    Raises:
        FileNotFoundError: if the file does not exist.
        ValueError: naming the file and line, for a wrong header, a line with too few columns, a label
            other than 0 or 1, an empty text, or a gzip file that is not valid gzip.
    """
    path = Path(path)
    return parse_labelled(path, read_lines(path))


def parse_labelled(path: Path, lines: list[str]) -> LabelledTexts:
    """The rows of a labelled file already read into ``lines`` (``path`` names it in errors); see ``read_labelled``."""
    header = lines[0].split("\t") if lines else []
    if len(header) < 2 or header[0] not in TEXT_COLUMNS or header[1] != "label":
        raise ValueError(f"{path}: the first line must be the header 'sentence<TAB>label' or 'text<TAB>label'")
    extra_columns = len(header) - 2
    texts, labels = [], []
    for line_number, line in enumerate(lines[1:], start=2):
        fields = line.rsplit("\t", 1 + extra_columns)  # the text is the only column that may hold a tab
        if len(fields) != len(header):
            raise ValueError(f"{path}:{line_number}: expected {len(header)} tab-separated columns")
        text, label = fields[0], fields[1]
        if label not in ("0", "1"):
            raise ValueError(f"{path}:{line_number}: label {label!r} is not 0 or 1")
        if not text.strip():
            raise ValueError(f"{path}:{line_number}: empty text")
        texts.append(text)
        labels.append(int(label))
    return LabelledTexts(path, texts, labels)


def is_paired(lines: list[str]) -> bool:
    """Whether the file read into ``lines`` is a paired one: its header's last column is ``pair``."""
    return bool(lines) and lines[0].split("\t")[-1] == PAIR_COLUMN


def read_pairs(path: str | Path) -> LabelledTexts:
    """Read a paired file (``text<TAB>label<TAB>pair``, as ``cad/``): each original row, then its edit.

    Returns the rows in file order, so rows ``2k`` and ``2k + 1`` are pair ``k``: the original and
    the minimal edit that flips its label.

    Raises:
        ValueError: naming the file and line, for anything ``read_labelled`` refuses, a header without
            ``pair``, or a pair that is not two adjacent rows with opposite labels.
    """
    path = Path(path)
    return parse_pairs(path, read_lines(path))


def parse_pairs(path: Path, lines: list[str]) -> LabelledTexts:
    """The rows of a paired file already read into ``lines``; see ``read_pairs``."""
    if not is_paired(lines):
        raise ValueError(f"{path}: the header must end in a 'pair' column")
    rows = parse_labelled(path, lines)
    pairs = [line.rsplit("\t", 1)[1] for line in lines[1:]]
    for i in range(0, len(pairs), 2):
        if i + 1 == len(pairs) or pairs[i] != pairs[i + 1] or rows.labels[i] == rows.labels[i + 1]:
            raise ValueError(f"{path}:{i + 2}: pair {pairs[i]!r} is not two adjacent rows with opposite labels")
    if len(set(pairs)) != len(pairs) // 2:
        raise ValueError(f"{path}: a pair id is used for more than one pair")
    return rows


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
