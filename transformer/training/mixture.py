"""The training mixture: which files are read, how long documents are cut, and how sources are weighted.

The data folder (``--data-dir``) is laid out as ``../shared/data/README.md`` describes: ``sst2/``,
``yelp/``, ``pros_cons/``, ``tweets/``, ``imdb/``, ``multi_domain/`` and ``lexicons/``. Every source
is tokenised once; an example longer than ``max_len`` tokens (an IMDB or Amazon review) becomes
consecutive ``max_len``-token chunks, each with the review's label. An epoch then draws
``weight × size`` examples from each source: weight 1 is one pass, 0.5 a random half, 2 two passes.

The opinion lexicon is a source of its own: each word with its label, and ``not <word>`` with the
opposite label, so that negation is seen on every sentiment word the lexicon lists. ``cad`` holds
the counterfactually-augmented IMDb reviews: each original beside a minimal human edit that flips it. It is
read as pairs (``PAIRED_SOURCES``), and the mixture links each side to the other (``Mixture.partners``), so
that a loss can compare them (``--pair-weight``); so is ``negation_pairs``, each real clause beside a negated copy.

``neutral`` holds the real sentences with no opinion (``neutral/``), with the soft target
P(positive) = 0.5 (``neutral.py``); a label in this module is P(positive), 0, 1 or 0.5.

More sources are made from the real sentences rather than read (``DERIVED``): ``negation``,
``expectation`` and ``contrast`` (``composition.py``) teach how words combine, ``negated_praise``
picks the real positive sentences that hold a negation word and ``composed`` the real sentences with
a negation or contrast word, as many of each label; ``identity`` (``identity.py``) teaches that who a
sentence is about does not change its label, ``neutral_people`` (``neutral.py``) that a plain statement
about a person reads 0.5, ``nuisance`` (``nuisance.py``) that names, places, numbers, URLs, handles,
hashtags, emoji and typos carry no opinion, ``verbs`` (``verbs.py``) that a negated or denied opinion
verb turns its opinion over, and ``negation_pairs`` (off by default) pairs a clause with its negation.
"""

import random
from dataclasses import dataclass
from pathlib import Path

from tokenizers import Tokenizer

from .composition import composed_sentences, composition_sets, negated_praise, negation_pair_set, rewritable
from .data import LabelledTexts, read_labelled, read_lines, read_pairs
from .identity import identity_set
from .neutral import neutral_people, read_neutral
from .nuisance import nuisance_set
from .verbs import verb_set

TRAIN_FILES = {
    "sst2": "sst2/glue_train.tsv",
    "yelp": "yelp/train.tsv.gz",
    "pros_cons": "pros_cons/train.tsv.gz",
    "tweets": "tweets/train.tsv.gz",
    "imdb": "imdb/train.tsv.gz",  # minus its first --imdb-dev-rows reviews, held out for selection
    "multi_domain": "multi_domain/train.tsv.gz",
    "lexicon": "lexicons/opinion_lexicon.tsv",
    "cad": "cad/train.tsv.gz",
    "neutral": "neutral/train.tsv.gz",
}
DERIVED = (  # made from the sources above
    "negation", "expectation", "contrast", "negated_praise", "composed", "identity", "neutral_people", "nuisance",
    "verbs", "negation_pairs",
)  # fmt: skip
SOURCES = (*TRAIN_FILES, *DERIVED)
COMPOSITION_SOURCES = ("sst2", "yelp", "pros_cons")  # short single sentences, where a rewrite reads naturally
PAIRED_SOURCES = ("cad", "negation_pairs")  # rows 2k and 2k + 1 are one pair of opposite labels
PRAISE_SOURCES = ("sst2", "yelp", "pros_cons", "tweets")  # where negated_praise, composed and nuisance look
DEV_FILES = {  # model selection: the mean accuracy over these, plus the held-out IMDB reviews and --ood-file;
    # cad/dev is read as pairs (data.read_pairs), so its pair consistency can be scored too
    "sst2": "sst2/glue_dev.tsv",
    "yelp": "yelp/dev.tsv.gz",
    "pros_cons": "pros_cons/dev.tsv.gz",
    "tweets": "tweets/dev.tsv.gz",
    "cad": "cad/dev.tsv.gz",
}
TEST_FILES = {  # scored once, at the end
    "sst2": "sst2/sent_test.tsv",
    "imdb": "imdb/test.tsv.gz",
    "multi_domain": "multi_domain/test.tsv.gz",
}
NEUTRAL_DEV_FILE = "neutral/dev.tsv.gz"  # scored once at the end (neutral_scores), never for selection
UNLABELLED_FILE = "imdb/unsup.txt.gz"
MIN_CHUNK_FRACTION = 0.25  # a review's last chunk shorter than this share of max_len is dropped


def read_lexicon(path: Path, max_rows: int | None = None) -> LabelledTexts:
    """The opinion lexicon (``word<TAB>label``) as examples: each word, and ``not <word>`` with the other label.

    Raises:
        ValueError: naming the file and line, for a line that is not ``word<TAB>0`` or ``word<TAB>1``.
    """
    texts, labels = [], []
    for line_number, line in enumerate(read_lines(path)[1:][:max_rows], start=2):
        word, tab, label = line.partition("\t")
        if not tab or not word.strip() or label not in ("0", "1"):
            raise ValueError(f"{path}:{line_number}: expected 'word<TAB>0' or 'word<TAB>1'")
        texts.extend([word, f"not {word}"])
        labels.extend([int(label), 1 - int(label)])
    return LabelledTexts(path, texts, labels)


def read_training_sets(
    data_dir: Path, imdb_dev_rows: int, max_rows: int | None = None, seed: int = 0
) -> dict[str, LabelledTexts]:
    """The training split of every source, each file cut to its first ``max_rows`` rows when given.

    The first ``imdb_dev_rows`` IMDB training reviews are left out here: ``read_dev_sets`` holds them out.
    The ``DERIVED`` sources are made from what was read, with draws seeded by ``seed``.
    """
    sets = {}
    for name, relative in TRAIN_FILES.items():
        if name in ("lexicon", "neutral"):
            sets[name] = (read_lexicon if name == "lexicon" else read_neutral)(data_dir / relative, max_rows)
            continue
        if name in PAIRED_SOURCES:  # whole pairs only: an odd row cap keeps one row fewer
            sets[name] = read_pairs(data_dir / relative).rows(0, None if max_rows is None else max_rows // 2 * 2)
            continue
        start = imdb_dev_rows if name == "imdb" else 0
        sets[name] = read_labelled(data_dir / relative).rows(start, None if max_rows is None else start + max_rows)
    clauses = rewritable([sets[name] for name in COMPOSITION_SOURCES], sets["lexicon"])
    sets.update(composition_sets(clauses, seed))
    praise = [sets[name] for name in PRAISE_SOURCES]
    sets["negated_praise"] = negated_praise(praise)
    sets["composed"] = composed_sentences(praise, seed)
    sets["identity"] = identity_set([sets[name] for name in TRAIN_FILES if name not in ("lexicon", "neutral")], seed)
    sets["neutral_people"] = neutral_people(seed).rows(0, max_rows)
    sets["nuisance"] = nuisance_set(praise, sets["lexicon"], seed)
    sets["verbs"] = verb_set(seed).rows(0, max_rows)
    sets["negation_pairs"] = negation_pair_set(clauses, seed)
    return sets


def read_dev_sets(
    data_dir: Path, imdb_dev_rows: int, ood_file: Path | None, max_rows: int | None = None
) -> dict[str, LabelledTexts]:
    """The selection sets: each dev file, the held-out IMDB reviews and the out-of-domain file."""
    sets = {
        name: (read_pairs if name == "cad" else read_labelled)(data_dir / relative)
        for name, relative in DEV_FILES.items()
    }
    sets["imdb"] = read_labelled(data_dir / TRAIN_FILES["imdb"]).rows(0, imdb_dev_rows)
    if ood_file is not None:
        sets["ood"] = read_labelled(ood_file)
    return {name: rows.rows(0, max_rows) for name, rows in sets.items()}


def read_test_sets(data_dir: Path, max_rows: int | None = None) -> dict[str, LabelledTexts]:
    """The test files, scored once on the final model."""
    return {name: read_labelled(data_dir / relative).rows(0, max_rows) for name, relative in TEST_FILES.items()}


def read_neutral_dev(data_dir: Path, max_rows: int | None = None) -> dict[str, list[str]]:
    """The neutral dev sentences by source (``sst5``, ``tweeteval``), as they are (no cue stripped)."""
    by_source: dict[str, list[str]] = {}
    for line in read_lines(data_dir / NEUTRAL_DEV_FILE)[1:][:max_rows]:
        text, _, source = line.rpartition("\t")
        by_source.setdefault(source, []).append(text)
    return by_source


def read_unlabelled(data_dir: Path, max_rows: int | None = None) -> list[str]:
    """The unlabelled IMDB reviews, for the tokenizer and masked-language-model pre-training."""
    return read_lines(data_dir / UNLABELLED_FILE)[:max_rows]


def chunk(ids: list[int], max_len: int) -> list[list[int]]:
    """Cut token ids into consecutive ``max_len`` windows; a short tail is dropped unless it is the only window."""
    windows = [ids[start : start + max_len] for start in range(0, len(ids), max_len)]
    if len(windows) > 1 and len(windows[-1]) < MIN_CHUNK_FRACTION * max_len:
        windows.pop()
    return windows


@dataclass(frozen=True)
class Mixture:
    """Tokenised training examples from several sources.

    ``sequences[i]`` (at most ``max_len`` ids) has label ``labels[i]`` (P(positive): 0, 1, or 0.5 for a
    sentence with no opinion) and comes from source ``names[sources[i]]``. ``partners[i]`` is the index of
    the other side of its counterfactual pair, or -1: only a pair whose two texts are one window each is linked.
    ``texts[i]`` is the example's text when it is one whole window, None for a window of a longer text.
    """

    names: list[str]
    sequences: list[list[int]]
    labels: list[float]
    sources: list[int]
    partners: list[int] | None = None  # None: no example has a partner
    texts: list[str | None] | None = None  # None: not kept

    def counts(self) -> dict[str, int]:
        """Examples per source, after chunking."""
        totals = dict.fromkeys(self.names, 0)
        for source in self.sources:
            totals[self.names[source]] += 1
        return totals

    def sample_epoch(self, weights: dict[str, float], rng: random.Random) -> list[int]:
        """The example indices of one epoch: from each source, ``round(weight × size)`` draws.

        Whole passes come first (weight 2 = every example twice), then a random subset for the
        fraction; a source with weight 0 is left out. Deterministic for a given ``rng``.
        """
        unknown = sorted(weights.keys() - set(self.names))
        if unknown:
            raise ValueError(f"no source named {', '.join(unknown)}; the sources are {', '.join(self.names)}")
        members = {name: [] for name in self.names}
        for index, source in enumerate(self.sources):
            members[self.names[source]].append(index)
        chosen = []
        for name in self.names:
            weight, indices = weights.get(name, 1.0), members[name]
            passes, fraction = divmod(weight, 1.0)
            chosen.extend(indices * int(passes))
            chosen.extend(rng.sample(indices, round(fraction * len(indices))))
        return chosen


def build_mixture(sets: dict[str, LabelledTexts], tokenizer: Tokenizer, max_len: int) -> Mixture:
    """Tokenise every source and chunk long examples into ``max_len`` windows; link the pairs of ``PAIRED_SOURCES``."""
    names, sequences, labels, sources, partners, texts = list(sets), [], [], [], [], []
    for source, name in enumerate(names):
        rows = sets[name]
        first_windows = []  # per row: the index of its first window, and how many it has
        for text, encoding, label in zip(rows.texts, tokenizer.encode_batch(rows.texts), rows.labels, strict=True):
            windows = [window for window in chunk(encoding.ids, max_len) if window]
            first_windows.append((len(sequences), len(windows)))
            texts.extend([text] if len(windows) == 1 else [None] * len(windows))
            sequences.extend(windows)
            labels.extend([label] * len(windows))
            sources.extend([source] * len(windows))
        partners.extend([-1] * (len(sequences) - len(partners)))
        if name in PAIRED_SOURCES:
            for (a, a_windows), (b, b_windows) in zip(first_windows[::2], first_windows[1::2], strict=True):
                if a_windows == b_windows == 1:
                    partners[a], partners[b] = b, a
    return Mixture(names, sequences, labels, sources, partners, texts)


def parse_weights(pairs: list[str]) -> dict[str, float]:
    """``["sst2=2", "tweets=0.5"]`` -> ``{"sst2": 2.0, "tweets": 0.5}``; a source not named keeps weight 1.

    Raises:
        ValueError: for a pair that is not ``name=number`` or a negative weight.
    """
    weights = {}
    for pair in pairs:
        name, equals, value = pair.partition("=")
        try:
            weight = float(value)
        except ValueError:
            weight = -1.0
        if not equals or weight < 0:
            raise ValueError(f"source weight {pair!r} is not name=number (a number ≥ 0)")
        weights[name] = weight
    return weights
