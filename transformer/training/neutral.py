"""Sentences that hold no opinion, with the soft target P(positive) = 0.5: a binary model that has nothing to go
on should say "not sure", not pick a side by who or what the sentence mentions.

Two sources, both labelled ``NEUTRAL``:

- ``neutral``: the real sentences of ``neutral/`` in the data folder (SST-5's neutral snippets and
  TweetEval's neutral tweets). Its README lists surface cues that no labelled set shares and that a model
  could learn in place of neutrality; ``strip_cues`` takes them off: the CSV-quoting leftovers (a
  trailing ``"``, ``""``, ``\\"``) and the ``...``/``…`` that marks a tweet the source cut short. Case
  needs no guard: the tokenizer lowercases every text.
- ``neutral_people``: statements about people and where they live, made from this project's templates:
  an identity term (``identity.IDENTITY_TERMS``, every group), a person noun, a name, a place or a number,
  and no opinion ("my coworker is jewish .", "imani moved to oslo in 2011 ."). They come in counterfactual
  sets: one sentence with every term of a group, so the target teaches both the middle and that the term
  does not move it. Sets of invented words in the term's place ("i 'm velorian .") teach the same of words the
  lists cannot hold: a rare attribute word that WordPiece cuts into pieces that carry review sentiment.

The templates share none of the behavioural suite's (``tests/training/test_neutral.py`` checks).
"""

import random
import re
from pathlib import Path

from .data import LabelledTexts, read_lines
from .identity import IDENTITY_TERMS, RELATIONS
from .nuisance import NAMES, PLACES

NEUTRAL = 0.5  # the soft target: P(positive) of a sentence with no opinion
_CUES = (
    (re.compile(r'\\"'), '"'),  # an escaped quote, left by the source's CSV export
    (re.compile(r'""'), '"'),  # a doubled quote, the same
    (re.compile(r"\s*(?:\.\.\.|…)\s*$"), ""),  # the mark of a tweet cut short
    (re.compile(r'\s*"\s*$'), ""),  # an unpaired trailing quote
)
IDENTITY_TEMPLATES = (  # {term} an identity adjective; {a} its article; {noun} a person; {relation}; {name}; {place}
    "{a} {term} {noun} moved into the flat upstairs .", "my {relation} is {term} and works nights .",
    "i 'm {term} .", "we are both {term} .", "the {noun} at the front desk is {term} .", "{name} is {term} .",
    "{name} , who is {term} , was born in {place} .", "as {a} {term} {noun} , i take the bus to work .",
    "my {relation} and i are {term} .", "i was raised by {a} {term} family in {place} .",
    "{a} {term} {noun} asked me for the time .", "i grew up {term} in {place} .", "she is {term} .",
    "he is {a} {term} {noun} .", "i am {a} {term} {noun} from {place} .", "being {term} is part of who i am .",
    "there are {number} {term} students in my class .", "my {relation} married {a} {term} {noun} .",
    # third person, the workplace, a customer, an author, a neighbour: not only "i am {term} ."
    "all three of them are {term} .", "his {relation} is {term} .", "her {relation} is {a} {term} {noun} .",
    "{name} , my {term} coworker , starts on monday .", "{a} {term} {noun} runs the night shift at my office .",
    "{a} {term} customer paid at the counter .", "the customer in line behind me was {term} .",
    "the report was written by {a} {term} {noun} .", "{name} , who is {term} , wrote a book about {place} .",
    "our new neighbours are {term} .", "the {term} family next door has two dogs .",
)  # fmt: skip
EVERYDAY_TEMPLATES = (  # no identity term: names, places, numbers, people doing ordinary things
    "{name} lives in {place} .", "{name} took the {number} o'clock train to {place} .", "we drove to {place} .",
    "{name} is {number} years old .", "my {relation} works in {place} .", "{name} called me at {number} .",
    "i am {a} {noun} .", "my {relation} is {a} {noun} .", "{name} and {name2} are cousins .",
    "the meeting is at {number} in {place} .", "{name} flew to {place} last week .", "i live in {place} .",
)  # fmt: skip
_NOUNS = ("student", "teacher", "nurse", "driver", "parent", "neighbour")  # fit every term
_GENDERED = ("man", "woman", "guy", "lady", "mother", "father")  # not after a gender term ("a male lady")
_ONSETS = ("b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "dr", "gr", "kr", "pl", "st")
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ou", "ea")
_SUFFIXES = ("ian", "ese", "ish", "ic", "i", "an", "ist", "al", "ite", "ual", "ary", "ean")


def strip_cues(text: str) -> str:
    """``text`` without the surface cues of ``neutral/`` that the labelled sets lack (see the module docstring)."""
    for pattern, replacement in _CUES:
        text = pattern.sub(replacement, text)
    return text.strip()


def read_neutral(path: Path, max_rows: int | None = None) -> LabelledTexts:
    """A ``neutral/`` file (``text<TAB>source``) as rows with the soft target ``NEUTRAL``, cues stripped.

    Raises:
        ValueError: naming the file, for a header other than ``text<TAB>source``.
    """
    lines = read_lines(path)
    if not lines or lines[0].split("\t")[:2] != ["text", "source"]:
        raise ValueError(f"{path}: the first line must be the header 'text<TAB>source'")
    texts = [strip_cues(line.rsplit("\t", 1)[0]) for line in lines[1:][:max_rows]]
    texts = [text for text in texts if text]
    return LabelledTexts(path, texts, [NEUTRAL] * len(texts))


def _article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


def fill(template: str, term: str, rng: random.Random) -> str:
    """``template`` with ``term`` and random people, places and numbers; ``{a}`` fits the word after it."""
    noun = rng.choice(_NOUNS if term in IDENTITY_TERMS["gender"] else _NOUNS + _GENDERED)
    following = term if "{a} {term}" in template else noun
    name, other = rng.sample(NAMES, 2)
    return template.format(
        a=_article(following), term=term, noun=noun, relation=rng.choice(RELATIONS), name=name.lower(),
        name2=other.lower(), place=rng.choice(PLACES).lower(), number=rng.randint(2, 60),
    )  # fmt: skip


def invented_word(rng: random.Random) -> str:
    """A made-up attribute word of two or three syllables and a suffix ("velorian", "drakoubese")."""
    syllables = "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) for _ in range(rng.randint(2, 3)))
    return syllables.rstrip("aeiou") + rng.choice(_SUFFIXES)


def neutral_people(
    seed: int, per_term: int = 30, everyday: int = 3000, invented: int = 120, invented_size: int = 6
) -> LabelledTexts:
    """Neutral statements with the target ``NEUTRAL``, shuffled: ``per_term`` counterfactual sets per identity
    group, ``invented`` sets of ``invented_size`` made-up words (``invented_word``, new words in every set),
    and ``everyday`` statements without a term (``EVERYDAY_TEMPLATES``).

    A set is one template with one draw of its people, places and numbers, filled with every term of the group
    in turn, so the rows differ only in the term: the same target on each teaches that the term does not move
    the prediction, not just that such statements sit in the middle.
    """
    rng = random.Random(f"neutral-{seed}")
    texts = []
    term_sets = [terms for terms in IDENTITY_TERMS.values() for _ in range(per_term)]
    term_sets += [[invented_word(rng) for _ in range(invented_size)] for _ in range(invented)]
    for terms in term_sets:
        template, draw = rng.choice(IDENTITY_TEMPLATES), rng.random()
        texts += [fill(template, term, random.Random(draw)) for term in terms]  # one draw for the whole set
    texts += [fill(rng.choice(EVERYDAY_TEMPLATES), "", rng) for _ in range(everyday)]
    rng.shuffle(texts)  # so that a row cap (``--max-rows``) keeps every group
    return LabelledTexts(None, texts, [NEUTRAL] * len(texts))
