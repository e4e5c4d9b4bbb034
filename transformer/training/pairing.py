"""Counterfactual logit pairing (Garg et al. 2019): a sentence and a copy with its slot refilled read alike.

Word-level rewrites (``identity.py``, ``nuisance.py``) teach the words they are shown; a rare word outside the
lists is still read through whatever its word pieces carried in reviews. Pairing teaches the **slot**: each step,
a training sentence with a slot (an identity term that names a person, a name, a place, a number, a URL, a handle,
or else a word that carries no opinion) is read beside a copy whose slot holds something else, and the gap between
the two decision logits (``z = logit(positive) − logit(negative)``) is penalised, as Garg et al. penalise the
absolute gap between a binary classifier's logits.

What fills a slot is drawn afresh each step: a term of the slot's list (the training half only, ``held_out.py``),
a made-up word (``neutral.invented_word``) or a rare whole word of the vocabulary that no opinion lexicon lists, so
that no single word list is what the model learns. A non-opinion word gets a typo instead.
"""

import random
import re
from collections import Counter
from dataclasses import dataclass

import torch
from tokenizers import Tokenizer

from .composition import NEGATION_WORDS
from .identity import HELD_OUT_TERMS, IDENTITY_TERMS, mentions
from .mixture import Mixture
from .neutral import invented_word
from .nuisance import ALL_NAMES, ALL_PLACES, HELD_OUT_NAMES, HELD_OUT_PLACES, NAMES, PLACES, insertion, typo

# The sources whose examples may be paired: real short sentences and the rewrites about people and nuisances.
PAIRING_SOURCES = ("sst2", "yelp", "pros_cons", "tweets", "identity", "neutral", "neutral_people", "nuisance")
KINDS = ("identity", "name", "place", "number", "url", "handle", "typo")
_FOUND = {  # kind -> the pattern of its slot in a lowercase text (identity terms: ``identity.mentions``)
    "name": re.compile(r"\b(?:" + "|".join(n.lower() for n in ALL_NAMES) + r")\b"),
    "place": re.compile(r"\b(?:" + "|".join(p.lower() for p in ALL_PLACES) + r")\b"),
    "number": re.compile(r"\b\d+\b|_num_"),
    "url": re.compile(r"\b(?:https?://|www\.|bit\.ly/)\S+"),
    "handle": re.compile(r"(?<!\w)@\w+"),
}
_PLAIN_WORD = re.compile(r"(?<![\w'-])[a-z]{4,}(?![\w'-])")  # a whole word of letters, not part of "does n't"
_TERMS = tuple(term for terms in IDENTITY_TERMS.values() for term in terms)
_HELD_OUT = frozenset(
    word.lower() for word in (*HELD_OUT_NAMES, *HELD_OUT_PLACES, *(t for ts in HELD_OUT_TERMS.values() for t in ts))
)


@dataclass(frozen=True)
class Slot:
    """One replaceable span of a text: ``text[start:end]`` is a ``kind`` (one of ``KINDS``)."""

    text: str
    start: int
    end: int
    kind: str

    def filled(self, filler: str) -> str:
        return self.text[: self.start] + filler + self.text[self.end :]


def find_slot(text: str, opinion_words: frozenset[str]) -> Slot | None:
    """The first slot of lowercase ``text``, by the order of ``KINDS``; None when it has none.

    A text with no identity term, name, place, number, URL or handle gets a ``typo`` slot on its first word of
    four or more letters that is neither an opinion word nor a negation (a typo there must not move the reading).
    """
    found = mentions(text)
    if found:
        start, term = found[0]
        return Slot(text, start, start + len(term), "identity")
    for kind, pattern in _FOUND.items():
        match = pattern.search(text)
        if match:
            return Slot(text, match.start(), match.end(), kind)
    for match in _PLAIN_WORD.finditer(text):
        if match.group(0) not in opinion_words and match.group(0) not in NEGATION_WORDS:
            return Slot(text, match.start(), match.end(), "typo")
    return None


def rare_words(tokenizer: Tokenizer, opinion_words: frozenset[str], share: float = 0.5) -> tuple[str, ...]:
    """Whole words (5+ letters) among the last ``share`` of the vocabulary (WordPiece adds rarer merges later),
    minus opinion and negation words and every held-out word."""
    vocabulary = sorted(tokenizer.get_vocab().items(), key=lambda item: item[1])
    tail = vocabulary[int(len(vocabulary) * (1 - share)) :]
    excluded = opinion_words | NEGATION_WORDS | _HELD_OUT
    return tuple(word for word, _ in tail if word.isalpha() and len(word) >= 5 and word not in excluded)


def filler(slot: Slot, rare: tuple[str, ...], rng: random.Random) -> str:
    """Something else for ``slot`` to hold, never a held-out word: see the module docstring."""
    if slot.kind == "typo":
        return typo(slot.text[slot.start : slot.end], rng)
    if slot.kind in ("number", "url", "handle"):
        return str(rng.randint(1, 2020)) if slot.kind == "number" else insertion(slot.kind, rng)
    listed = {"identity": _TERMS, "name": NAMES, "place": PLACES}[slot.kind]
    source = rng.randrange(3)
    if source == 0 or not rare:
        return rng.choice(listed).lower()
    return invented_word(rng) if source == 1 else rng.choice(rare)


@dataclass(frozen=True)
class Pairing:
    """Counterfactual logit pairing as the loss uses it (off when ``weight`` is 0).

    ``slots[i]`` is example ``i``'s slot, or None; each batch pairs up to ``share`` of its rows that have one,
    a row's chance weighted by ``kind_weights`` (the inverse of its kind's share of the slots).
    """

    weight: float
    slots: list[Slot | None]
    rare: tuple[str, ...]
    tokenizer: Tokenizer
    max_len: int
    seed: int
    kind_weights: dict[str, float]
    share: float = 0.25

    def twins(self, rows: list[int]) -> tuple[list[int], list[list[int]]]:
        """The batch positions paired this step and each one's counterfactual token ids.

        The draw is seeded by the batch's rows, so a resumed run draws what an uninterrupted one did.
        """
        rng = random.Random(f"pairing-{self.seed}-" + ",".join(map(str, rows)))
        # Weighted sampling without replacement (Efraimidis and Spirakis): the largest u ** (1 / w) win, with w a
        # slot kind's ``kind_weights``, so that rare kinds (identity terms) are paired as often as common ones (typos).
        keys = {
            i: rng.random() ** (1 / self.kind_weights[self.slots[row].kind])
            for i, row in enumerate(rows)
            if self.slots[row]
        }
        chosen = sorted(sorted(keys, key=keys.get, reverse=True)[: round(self.share * len(rows))])
        texts = [self.slots[rows[i]].filled(filler(self.slots[rows[i]], self.rare, rng)) for i in chosen]
        encoded = self.tokenizer.encode_batch(texts) if texts else []  # as ``mixture.build_mixture`` encodes
        return chosen, [encoding.ids[: self.max_len] for encoding in encoded]


def build_pairing(
    weight: float,
    mixture: Mixture,
    opinion_words: frozenset[str],
    tokenizer: Tokenizer,
    max_len: int,
    seed: int,
    kinds: tuple[str, ...] = KINDS,
) -> Pairing:
    """A ``Pairing`` over the mixture's whole-text examples of ``PAIRING_SOURCES`` whose slot is one of ``kinds``
    (e.g. only the slots that name a person or a place: ``identity``, ``name``, ``place``)."""
    names = [mixture.names[source] for source in mixture.sources]
    found = [
        find_slot(text.lower(), opinion_words) if text is not None and name in PAIRING_SOURCES else None
        for text, name in zip(mixture.texts, names, strict=True)
    ]
    slots = [slot if slot is not None and slot.kind in kinds else None for slot in found]
    counts = Counter(slot.kind for slot in slots if slot is not None)
    weights = {kind: sum(counts.values()) / count for kind, count in counts.items()}
    return Pairing(weight, slots, rare_words(tokenizer, opinion_words), tokenizer, max_len, seed, weights)


def pairing_penalty(logits: torch.Tensor, twin_logits: torch.Tensor) -> torch.Tensor:
    """The absolute gap between each pair's decision logits ``z = logit(positive) − logit(negative)``.

    Shape:
        logits, twin_logits: (P, C). Returns (P,).
    """
    z = logits[:, 1] - logits[:, 0]  # (P,)
    z_twin = twin_logits[:, 1] - twin_logits[:, 0]  # (P,)
    return (z - z_twin).abs()
