"""Counterfactual identity examples: who a sentence is about never decides its label.

Words such as "black", "muslim", "gay" or "disabled" sit in more negative review sentences than
their peers ("the screen went black", "the feature is disabled"), so a model learns them as opinion
words and scores "I am disabled." as a complaint. Two kinds of example undo that:

- **swaps**: a real sentence that mentions a person by an identity term ("as a gay man ...",
  "our waiter was black") is copied with another term of the same group, keeping its label;
- **frames**: a real sentence with an identity mention around it ("as a muslim woman , the food was
  great"), each frame drawn with a random term of a random group, keeping the sentence's label.

Across all the examples, every term of a group meets the same labels, so none carries sentiment.
The term lists and frames here are this project's own, for training; the behavioural suite
(``transformer.behaviour``) has its own.
"""

import random
import re
from collections.abc import Iterable

from .data import LabelledTexts
from .held_out import split_groups

IDENTITY_LEXICON = {  # interchangeable adjectives, one list per group; none is a word of the suite's test part
    "race": ["black", "white", "asian", "brown", "biracial", "multiracial", "indigenous", "pacific islander"],
    "ethnicity": [
        "hispanic", "latina", "romani", "kurdish", "hmong", "punjabi", "cherokee", "navajo", "tamil", "armenian",
    ],
    "nationality": [
        "american", "mexican", "chinese", "indian", "french", "german", "british", "russian", "pakistani",
        "korean", "italian", "somali", "vietnamese", "japanese", "polish", "egyptian", "kenyan", "turkish",
        "filipino", "canadian", "irish", "ukrainian", "cuban", "ethiopian", "syrian", "afghan", "colombian",
    ],
    "religion": [
        "christian", "muslim", "jewish", "catholic", "protestant", "mormon", "atheist", "agnostic", "evangelical",
        "jain", "taoist", "pagan",
    ],
    "gender": ["male", "female", "trans", "cisgender", "genderqueer", "intersex"],
    "sexuality": ["gay", "straight", "queer", "heterosexual", "homosexual", "pansexual", "asexual"],
    "disability": [
        "disabled", "blind", "wheelchair-using", "paraplegic", "dyslexic", "hard-of-hearing", "visually impaired",
        "neurodivergent", "epileptic",
    ],
    "age": ["young", "old", "elderly", "older", "retired", "adolescent", "senior", "twenty-something"],
    "migration": [
        "immigrant", "refugee", "migrant", "undocumented", "foreign-born", "expat", "naturalized",
        "first-generation", "second-generation",
    ],
}  # fmt: skip
# Training rewrites fill a slot from the training half only; the evaluation half is the probe's (``held_out.py``).
IDENTITY_TERMS, HELD_OUT_TERMS = split_groups(IDENTITY_LEXICON)
PERSON_NOUNS = (
    "person", "man", "woman", "guy", "lady", "friend", "couple", "family", "neighbour", "student", "owner",
    "customer", "waiter", "waitress", "manager", "teacher", "kid", "people", "men", "women", "staff",
)  # fmt: skip
RELATIONS = ("friend", "neighbour", "coworker", "partner", "roommate", "cousin", "boss")
_FRAMES = (
    "as {a} {term} {noun} , {sentence}", "i am {term} , and {sentence}", "{sentence} , says my {term} {relation}",
    "my {term} {relation} and i agree : {sentence}", "speaking as someone {term} , {sentence}",
    "{sentence} . i am {a} {term} {noun} , for what it 's worth",
)  # fmt: skip
# Every term of the lexicon is found (a held-out term in a real sentence is swapped out too); a swap writes a term
# of the training half.
_GROUP_OF = {term: group for group, terms in IDENTITY_LEXICON.items() for term in terms}
# A term followed by a person noun, or after "am", "'m" or "as a(n)".
_ALTERNATION = "|".join(sorted(map(re.escape, _GROUP_OF), key=len, reverse=True))
_NOUNS = "|".join(PERSON_NOUNS)
_MENTION = re.compile(rf"\b(?P<a>{_ALTERNATION}) (?={_NOUNS}\b)|(?:\bam|'m|\bas an?) (?P<b>{_ALTERNATION})\b")


def mentions(text: str) -> list[tuple[int, str]]:
    """``(start, term)`` for each identity term of lowercase ``text`` that names a person (see ``_MENTION``)."""
    return [(match.start("a" if match["a"] else "b"), match["a"] or match["b"]) for match in _MENTION.finditer(text)]


def swap(text: str, rng: random.Random) -> str | None:
    """``text`` (lowered) with each person-naming identity term replaced by another of its group's training half;
    None if none."""
    lowered = text.lower()
    found = mentions(lowered)
    if not found:
        return None
    pieces, end = [], 0
    for start, term in found:
        others = [other for other in IDENTITY_TERMS[_GROUP_OF[term]] if other != term]
        pieces.extend([lowered[end:start], rng.choice(others)])
        end = start + len(term)
    return "".join([*pieces, lowered[end:]])


def identity_set(sentence_sets: Iterable[LabelledTexts], seed: int, frames: int = 20_000) -> LabelledTexts:
    """Swapped copies of every sentence that mentions a person by identity, plus framed sentences.

    The framed sentences are drawn from the short sentences (at most 20 words) of ``sentence_sets``:
    ``frames`` of them, or one for every ten short sentences where there are fewer.
    """
    rng = random.Random(f"identity-{seed}")
    texts, labels, short = [], [], []
    for rows in sentence_sets:
        for text, label in zip(rows.texts, rows.labels, strict=True):
            swapped = swap(text, rng)
            if swapped is not None:
                texts.append(swapped)
                labels.append(label)
            if len(text.split()) <= 20:
                short.append((text.lower().rstrip(" .!?"), label))
    for _ in range(min(frames, len(short) // 10)):
        sentence, label = rng.choice(short)
        term = rng.choice(IDENTITY_TERMS[rng.choice(list(IDENTITY_TERMS))])
        frame = rng.choice(_FRAMES).format(
            a="an" if term[0] in "aeiou" else "a", term=term, noun=rng.choice(PERSON_NOUNS[:14]),
            relation=rng.choice(RELATIONS), sentence=sentence,
        )  # fmt: skip
        texts.append(frame + " .")
        labels.append(label)
    return LabelledTexts(None, texts, labels)
