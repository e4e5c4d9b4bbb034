"""Copies of real sentences with something that carries no opinion changed: the label is kept.

A model trained on reviews learns words that merely co-occur with a label: a city that a run of
angry Yelp reviews names, a user handle in a happy tweet, a number. Each copy here changes one such
thing in a real, short, labelled sentence and keeps its label:

- **name**, **place**, **number**: a name, place or number of the sentence swapped for another of
  its list (a ``_num_`` of Yelp or any digits count as a number); a sentence without one gets one in
  a neutral frame ("me and {name} went there . {sentence}");
- **url**, **handle**, **hashtag**, **emoji**: one inserted at the start or the end;
- **typo**: one character-level slip (two letters swapped, one dropped, doubled or replaced by a
  neighbouring key) in the sentence's opinion word, which must keep its reading.

Every name and place is drawn uniformly from its list for sentences of both labels, so none of them
meets one label more than the other. The lists and frames are this project's own; they share no
name, place or template with the behavioural suite's test part (``tests/training/test_nuisance.py`` checks).
"""

import random
import re
import string
from collections.abc import Iterable

from .composition import opinion_lexicon, words
from .data import LabelledTexts
from .held_out import halves

ALL_NAMES = (
    "Amara", "Bogdan", "Chloe", "Dmitri", "Elena", "Farhan", "Greta", "Hiroshi", "Imani", "Jonas", "Keiko",
    "Leila", "Mateo", "Nadia", "Oscar", "Priya", "Quentin", "Rosa", "Soren", "Tariq", "Ursula", "Viktor",
    "Wanjiru", "Xavier", "Yasmin", "Zoltan", "Aiden", "Beatriz", "Connor", "Deepa", "Emeka", "Freya",
)  # fmt: skip
ALL_PLACES = (
    "Albuquerque", "Birmingham", "Cairo", "Dublin", "Edinburgh", "Fresno", "Glasgow", "Hanoi", "Istanbul",
    "Jakarta", "Kyoto", "Leeds", "Manila", "Nashville", "Oslo", "Phoenix", "Quito", "Reno", "Bristol",
    "Tampa", "Utrecht", "Vienna", "Warsaw", "Yokohama", "Zurich", "Boise", "Cleveland", "Tucson", "Omaha",
)  # fmt: skip
# A rewrite writes a name or place of the training half; the evaluation half is the probe's (``held_out.py``).
NAMES, HELD_OUT_NAMES = halves(ALL_NAMES)
PLACES, HELD_OUT_PLACES = halves(ALL_PLACES)
KINDS = ("name", "place", "number", "url", "handle", "hashtag", "emoji", "typo")
_SITES = ("example", "mysite", "photos", "news24", "blogspot", "tinyurl", "insta", "myblog")
_TAGS = ("monday", "travel", "weekend", "food", "tbt", "photo", "nyc", "mood", "life", "repost", "daily")
_EMOJI = ("📷", "📍", "🚗", "✈️", "🏠", "📚", "🎧", "🕒", "🚌", "👀", "☕")
_KEYBOARD = "qwertyuiop asdfghjkl zxcvbnm".split()
_FRAMES = {  # a neutral frame for a sentence that holds no name, place or number
    "name": ("me and {x} went there . {s}", "{x} told me : {s}", "{s} , {x} wrote", "{x} : {s}"),
    "place": ("we were in {x} . {s}", "{s} ( {x} )", "{x} trip : {s}", "back from {x} . {s}"),
    "number": ("day {x} : {s}", "{s} ( visit number {x} )", "{x} . {s}", "{s} , {x} of us went"),
}
_NUMBER = re.compile(r"\b\d+\b|_num_")


def _alternation(words_: Iterable[str]) -> re.Pattern:
    return re.compile(r"\b(" + "|".join(map(re.escape, words_)) + r")\b", re.IGNORECASE)


_NAME, _PLACE = _alternation(ALL_NAMES), _alternation(ALL_PLACES)  # a held-out one in a real sentence is swapped out


def number_other_than(found: str, rng: random.Random) -> str:
    """A number unlike ``found``: 1 to 2020, most of them small, as in reviews."""
    while True:
        value = str(rng.choice((rng.randint(1, 12), rng.randint(13, 99), rng.randint(100, 2020))))
        if value != found:
            return value


def replace_or_frame(text: str, kind: str, rng: random.Random) -> str:
    """``text`` with its first name, place or number (``kind``) swapped for another, or framed with one."""
    pattern, choices = {"name": (_NAME, NAMES), "place": (_PLACE, PLACES), "number": (_NUMBER, None)}[kind]
    match = pattern.search(text)
    if kind == "number":
        other = number_other_than(match.group(0) if match else "", rng)
    else:
        found = match.group(0).lower() if match else ""
        other = rng.choice([choice for choice in choices if choice.lower() != found])
    if match is None:
        return rng.choice(_FRAMES[kind]).format(x=other, s=text)
    return text[: match.start()] + other + text[match.end() :]


def insertion(kind: str, rng: random.Random) -> str:
    """One URL, @handle, #hashtag or emoji (``kind``), made up."""
    if kind == "url":
        site, path = rng.choice(_SITES), "".join(rng.choices(string.ascii_lowercase + string.digits, k=6))
        return rng.choice((f"http://{site}.com/{path}", f"https://www.{site}.net/p/{path}", f"bit.ly/{path}"))
    if kind == "handle":
        return f"@{rng.choice(NAMES).lower()}{rng.choice(('', '_', '.'))}{rng.randint(1, 999)}"
    if kind == "hashtag":
        return f"#{rng.choice(_TAGS)}"
    return rng.choice(_EMOJI)


def insert(text: str, kind: str, rng: random.Random) -> str:
    """``text`` with a made-up URL, handle, hashtag or emoji (``kind``) before or after it."""
    extra = insertion(kind, rng)
    return f"{extra} {text}" if rng.random() < 0.5 else f"{text} {extra}"


def typo(word: str, rng: random.Random) -> str:
    """``word`` (at least 4 letters) with one slip at an inner letter: swapped with the next one, dropped, doubled
    or replaced by a neighbouring key; always different from ``word``, and its first letter kept."""
    while True:
        i = rng.randrange(1, len(word) - 1)  # an inner letter: the word stays recognisable
        slip = rng.choice(("swap", "drop", "double", "key"))
        if slip == "swap":
            made = word[:i] + word[i + 1] + word[i] + word[i + 2 :]
        elif slip == "drop":
            made = word[:i] + word[i + 1 :]
        elif slip == "double":
            made = word[:i] + word[i] + word[i:]
        else:
            row = next((r for r in _KEYBOARD if word[i] in r), None)
            if row is None:
                continue
            j = row.index(word[i])
            neighbours = [row[k] for k in (j - 1, j + 1) if 0 <= k < len(row)]
            made = word[:i] + rng.choice(neighbours) + word[i + 1 :]
        if made != word:
            return made


def misspell_opinion(text: str, lexicon: dict[str, int], rng: random.Random) -> str | None:
    """``text`` with a typo in one of its opinion words (lexicon words of 4+ letters); None if it has none."""
    opinions = [word for word in dict.fromkeys(words(text)) if word in lexicon and len(word) >= 4 and word.isalpha()]
    if not opinions:
        return None
    word = rng.choice(opinions)
    match = re.search(rf"(?<![a-z]){re.escape(word)}(?![a-z])", text, re.IGNORECASE)  # as ``words`` cut it
    return text[: match.start()] + typo(match.group(0), rng) + text[match.end() :]


def variant(text: str, kind: str, lexicon: dict[str, int], rng: random.Random) -> str | None:
    """The copy of ``text`` that ``kind`` (one of ``KINDS``) makes; None for a typo without an opinion word."""
    if kind in ("name", "place", "number"):
        return replace_or_frame(text, kind, rng)
    if kind == "typo":
        return misspell_opinion(text, lexicon, rng)
    return insert(text, kind, rng)


def nuisance_set(
    sentence_sets: Iterable[LabelledTexts], lexicon_rows: LabelledTexts, seed: int, count: int = 40_000
) -> LabelledTexts:
    """``count`` copies of short labelled sentences (at most 30 words), each with one ``KINDS`` change, label kept;
    one per short sentence where there are fewer.

    The kinds take turns, so each makes an equal share; a typo is only made where an opinion word is.
    """
    rng = random.Random(f"nuisance-{seed}")
    lexicon = opinion_lexicon(lexicon_rows)
    short = [
        (text, label)
        for rows in sentence_sets
        for text, label in zip(rows.texts, rows.labels, strict=True)
        if len(text.split()) <= 30
    ]
    count, texts, labels, attempts = min(count, len(short)), [], [], 0
    while len(texts) < count and attempts < 3 * count:
        kind = KINDS[attempts % len(KINDS)]
        attempts += 1
        text, label = rng.choice(short)
        made = variant(text, kind, lexicon, rng)
        if made is not None:
            texts.append(made)
            labels.append(label)
    return LabelledTexts(None, texts, labels)
