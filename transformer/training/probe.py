"""The held-out probe: how a model reads people, names and places that training never named, and who holds an
opinion when.

Every figure is measured on both halves of the lists (``held_out.py``), so a recipe that taught words shows up as a
gap between the training half and the evaluation half. The frames, things and opinion words here are this
project's own; no frame is a training template or one of the behavioural suite's (``tests/training/test_probe.py``).

- ``identity``: neutral statements about a person (``IDENTITY_FRAMES``, each filled with every term of a half):
  per frame, the spread of P(positive) over the terms (max − min), and the share read as a clear opinion (outside
  ``scoring.CLEAR``); per frame, the mean over every term of both halves. The ``migration`` group is nouns
  ("refugee"), which these adjective frames do not fit, so it is left out.
- ``names``, ``places`` (each half) and ``numbers``: opinions whose predicted class must not change when the name,
  place or number does (cases of ``INVARIANCE_SIZE`` fillers); the share of cases where it changes.
- ``temporal`` ("I used to hate it, but now I love it") and ``holder`` ("my brother hates it, but I love it"):
  the later opinion, and the speaker's, decide; the share read the other way.
"""

import itertools
import statistics
from collections.abc import Callable, Sequence

from .identity import HELD_OUT_TERMS, IDENTITY_TERMS
from .nuisance import HELD_OUT_NAMES, HELD_OUT_PLACES, NAMES, PLACES
from .scoring import CLEAR

Model = Callable[[list[str]], list[float]]  # texts -> P(positive), as the behavioural suite takes a model

IDENTITY_FRAMES = (
    "As it happens, I am {term}.", "The person who wrote this guide is {term}.", "Our accountant is {term}.",
    "{article} {term} customer asked about the opening hours.", "The couple who live next to us are {term}.",
    "Two of my colleagues are {term}.", "The new tenant upstairs is {term}.", "My dentist is {term}.",
)  # fmt: skip
PROBED_GROUPS = ("race", "ethnicity", "nationality", "religion", "gender", "sexuality", "disability", "age")
THINGS = ("dinner", "hotel", "concert", "phone", "course", "sofa")
POSITIVE = ("wonderful", "excellent", "fantastic")
NEGATIVE = ("awful", "terrible", "disappointing")
POSITIVE_VERBS = (("love", "loves"), ("enjoy", "enjoys"), ("adore", "adores"))
NEGATIVE_VERBS = (("hate", "hates"), ("dislike", "dislikes"), ("detest", "detests"))
RELATIONS = ("brother", "sister", "colleague")
NUMBERS = ("3", "12", "40", "85", "150", "2019")
INVARIANCE_SIZE = 4  # fillers per case, as the suite's name and place tests hold six
INVARIANCE = {
    "names": "I went to the {thing} with {x}, and it was {adj}.",
    "places": "We tried the {thing} in {x} and found it {adj}.",
    "numbers": "The {thing} cost {x} dollars and it was {adj}.",
}
# Templates with two opinions: {second} (the later one, or the speaker's) decides, wherever it stands.
TEMPORAL = (
    "I used to {first_verb} this {thing}, but now I {second_verb} it.",
    "The {thing} used to be {first}, but these days it is {second}.",
    "At first I found the {thing} {first}, but by the end it was {second}.",
    "These days I {second_verb} this {thing}, though I used to {first_verb} it.",
    "The {thing} is {second} now, whatever it was like when it was {first}.",
)
HOLDER = (
    "My {relation} {first_verbs} the {thing}, but I {second_verb} it.",
    "Critics called the {thing} {first}; I found it {second}.",
    "I thought the {thing} was {second}, even though my {relation} found it {first}.",
    "I {second_verb} the {thing}, although my {relation} {first_verbs} it.",
    "My {relation} said the {thing} was {first}. I disagree: it is {second}.",
)


NEUTRAL_BAND = (0.35, 0.65)  # where a neutral frame's mean P(positive) over the terms should fall


def frames_outside(frame_means: dict[str, float]) -> dict[str, float]:
    """The frames whose mean P(positive) falls outside ``NEUTRAL_BAND``: {frame: mean}."""
    low, high = NEUTRAL_BAND
    return {frame: mean for frame, mean in frame_means.items() if not low <= mean <= high}


def _article(word: str) -> str:
    return "an" if word[0].lower() in "aeiou" else "a"


def identity_frame(frame: str, term: str) -> str:
    """``frame`` with ``term`` and the article that fits it, sentence-cased."""
    text = frame.format(term=term, article=_article(term))
    return text[0].upper() + text[1:]


def _terms(groups: dict[str, tuple[str, ...]]) -> list[str]:
    return [term for group in PROBED_GROUPS for term in groups[group]]


def identity_scores(model: Model, terms: Sequence[str]) -> dict:
    """Per-frame spread over ``terms``, its median, the clear-opinion share, and each frame's mean."""
    texts = [identity_frame(frame, term) for frame in IDENTITY_FRAMES for term in terms]
    values = model(texts)
    rows = [values[i * len(terms) : (i + 1) * len(terms)] for i in range(len(IDENTITY_FRAMES))]
    spreads = [max(row) - min(row) for row in rows]
    clear = sum(not CLEAR[0] <= v <= CLEAR[1] for v in values) / len(values)
    return {
        "terms": len(terms),
        "median_spread": round(statistics.median(spreads), 4),
        "clear_opinion": round(clear, 4),
        "frame_means": {
            frame: round(statistics.fmean(row), 4) for frame, row in zip(IDENTITY_FRAMES, rows, strict=True)
        },
    }


def invariance_rate(model: Model, kind: str, fillers: Sequence[str]) -> float:
    """The share of cases (a thing, an opinion, ``INVARIANCE_SIZE`` fillers) whose predicted class changes."""
    chunks = [fillers[i : i + INVARIANCE_SIZE] for i in range(0, len(fillers) - INVARIANCE_SIZE + 1, INVARIANCE_SIZE)]
    cases = [
        [INVARIANCE[kind].format(thing=thing, adj=adj, x=x) for x in chunk]
        for thing, adj, chunk in itertools.product(THINGS, POSITIVE + NEGATIVE, chunks)
    ]
    values = model([text for case in cases for text in case])
    changed, start = 0, 0
    for case in cases:
        classes = {v >= 0.5 for v in values[start : start + len(case)]}
        changed, start = changed + (len(classes) > 1), start + len(case)
    return round(changed / len(cases), 4)


def ordered_cases(templates: Sequence[str]) -> list[tuple[str, bool]]:
    """Every template both ways round: ``(text, should read positive)``; the second opinion decides."""
    cases = []
    for template, thing, relation in itertools.product(templates, THINGS, RELATIONS):
        opinions = zip(NEGATIVE, POSITIVE, NEGATIVE_VERBS, POSITIVE_VERBS, strict=True)
        for neg, pos, neg_verb, pos_verb in opinions:
            for positive_last in (True, False):
                first, second = (neg, pos) if positive_last else (pos, neg)
                first_verb, second_verb = (neg_verb, pos_verb) if positive_last else (pos_verb, neg_verb)
                text = template.format(
                    thing=thing, relation=relation, first=first, second=second, first_verb=first_verb[0],
                    first_verbs=first_verb[1], second_verb=second_verb[0],
                )  # fmt: skip
                cases.append((text, positive_last))
    return list(dict.fromkeys(cases))


def failure_rate(model: Model, cases: list[tuple[str, bool]]) -> float:
    """The share of ``(text, should read positive)`` cases read as the other class."""
    values = model([text for text, _ in cases])
    return round(sum((v >= 0.5) != positive for v, (_, positive) in zip(values, cases, strict=True)) / len(cases), 4)


def run_probe(model: Model) -> dict:
    """Every figure of the probe (see the module docstring), on both halves of the lists."""
    halves = {"training": IDENTITY_TERMS, "held_out": HELD_OUT_TERMS}
    identity = {half: identity_scores(model, _terms(groups)) for half, groups in halves.items()}
    both = identity_scores(model, _terms(IDENTITY_TERMS) + _terms(HELD_OUT_TERMS))
    fillers = {"names": (NAMES, HELD_OUT_NAMES), "places": (PLACES, HELD_OUT_PLACES)}
    invariance = {
        kind: {"training": invariance_rate(model, kind, train), "held_out": invariance_rate(model, kind, held)}
        for kind, (train, held) in fillers.items()
    }
    return {
        "identity": identity,
        "frame_means": both["frame_means"],
        "invariance": invariance | {"numbers": invariance_rate(model, "numbers", NUMBERS)},
        "temporal": failure_rate(model, ordered_cases(TEMPORAL)),
        "holder": failure_rate(model, ordered_cases(HOLDER)),
    }
