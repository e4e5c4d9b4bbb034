"""The behavioural suite: what a sentiment model should do with negation, contrast, typos and people.

Three kinds of test, after Ribeiro et al. (2020):

- ``label``: each case is one text with an expected reading: ``positive``, ``negative``, or for a
  binary model the softer ``not negative`` (P(positive) ≥ 1/3) and ``not positive`` (≤ 2/3);
- ``invariance``: each case is a group of texts that differ in something irrelevant (a typo, a name,
  who the sentence is about); the predicted class must be the same for all of them;
- ``direction``: each case is (base, variant); the variant's P(positive) must not fall (``not down``)
  or rise (``not up``) by more than ``DIRECTION_TOLERANCE``.

Every test exists twice, in a ``selection`` part and a ``test`` part, with different templates and
different words (``words.py``): tune on the first, report the second, and a gap between them shows a
recipe that learnt the templates. Cases are drawn from the templates × words with a fixed seed.
"""

import itertools
import random
from dataclasses import dataclass

from . import words as w

PARTS = ("selection", "test")
DIRECTION_TOLERANCE = 0.1
MAX_CASES = 200
IDENTITY_CASES = 10  # per group and valence, so neutral, positive and negative templates weigh the same


@dataclass(frozen=True)
class Test:
    """One test of the suite: ``cases`` are text tuples whose meaning ``kind`` and ``expect`` give.

    ``expect`` is the expected reading of a ``label`` test, the allowed direction of a ``direction``
    test (``not down`` / ``not up``), and None for ``invariance``. ``group`` names an identity group.
    """

    name: str
    capability: str
    kind: str
    part: str
    expect: str | None
    cases: tuple[tuple[str, ...], ...]
    group: str | None = None


def article(word: str) -> str:
    """``a`` or ``an`` before ``word`` (by its first letter)."""
    return "an" if word[0].lower() in "aeiou" else "a"


def _sample(texts: list[tuple[str, ...]], seed: str, limit: int = MAX_CASES) -> tuple[tuple[str, ...], ...]:
    """At most ``limit`` of ``texts``, a seeded sample that keeps their order; duplicates dropped."""
    unique = list(dict.fromkeys(texts))
    if len(unique) <= limit:
        return tuple(unique)
    keep = sorted(random.Random(seed).sample(range(len(unique)), limit))
    return tuple(unique[i] for i in keep)


def _fill(templates: tuple[str, ...], **roles: tuple[str, ...]) -> list[str]:
    """Every template with every combination of the role words it uses (``{thing}``, ``{adj}`` ...).

    ``{article}`` becomes ``a`` or ``an``, whichever fits the word after it.
    """
    texts = []
    for template in templates:
        used = [role for role in roles if "{" + role + "}" in template]
        for values in itertools.product(*(roles[role] for role in used)):
            text = template.replace("{article} ", "\0 ").format(**dict(zip(used, values, strict=True)))
            while "\0 " in text:
                head, tail = text.split("\0 ", 1)
                text = f"{head}{article(tail)} {tail}"
            texts.append(text[0].upper() + text[1:])
    return texts


def _label(name, capability, part, expect, templates, **roles) -> Test:
    texts = _fill(templates, **roles)
    return Test(name, capability, "label", part, expect, _sample([(t,) for t in texts], f"{part}-{name}"))


def _direction(name, capability, part, expect, pairs: list[tuple[str, str]]) -> Test:
    return Test(name, capability, "direction", part, expect, _sample(pairs, f"{part}-{name}"))


def _invariance(name, capability, part, groups: list[tuple[str, ...]], group=None, limit=MAX_CASES) -> Test:
    return Test(name, capability, "invariance", part, None, _sample(groups, f"{part}-{name}", limit), group)


# Templates per part: {thing}, {other} (a second thing), {pos}, {neg}, {adj}, {verb}, {aside}.
VOCABULARY = {
    "selection": ("The {thing} was {adj}.", "I found the {thing} {adj}."),
    "test": ("Honestly, the {thing} is {adj}.", "All in all, {article} {adj} {thing}."),
}
NEGATED = {  # (template, expectation when {adj} is negative, when it is positive)
    "selection": ("The {thing} was not {adj}.", "The {thing} wasn't {adj}.", "The {thing} was never {adj}."),
    "test": ("This {thing} is not {adj} at all.", "I would not call the {thing} {adj}.", "The {thing} isn't {adj}."),
}
NEGATED_VERB = {
    "selection": ("I don't {verb} this {thing}.", "I didn't {verb} the {thing}."),
    "test": ("We really did not {verb} the {thing}.", "Nobody here would {verb} this {thing}."),
}
DISTANT = {
    "selection": ("I don't think, {aside}, that the {thing} was {adj}.",),
    "test": (
        "I never felt, {aside}, that this {thing} was {adj}.",
        "No one could claim, {aside}, that the {thing} is {adj}.",
    ),
}  # fmt: skip
EXPECTED = {
    "selection": (
        "I thought the {thing} would be {adj}, but it was not.",
        "I expected the {thing} to be {adj}, but it wasn't.",
    ),
    "test": ("Everyone said the {thing} would be {adj}, but it wasn't.", "It was supposed to be {adj}. It was not."),
}  # fmt: skip
EXPECTED_VERB = {
    "selection": ("I expected to {verb} it, but I didn't.", "Everybody thought I would {verb} the {thing}; I didn't."),
    "test": ("My friends swore I would {verb} the {thing}. I did not.",),
}
CONTRAST = {  # the second clause carries the label
    "selection": ("The {thing} was {first}, but the {other} was {second}.",),
    "test": (
        "Sure, the {thing} started {first}, but in the end it was {second}.",
        "The {thing} looked {first}; but honestly the {other} was {second}.",
    ),
}  # fmt: skip
GRADED = {"selection": "The {thing} was {degree}{adj}.", "test": "This {thing} is {degree}{adj}."}
ROBUST = {
    "selection": (
        "{name} said the {thing} was {adj}.",
        "The {thing} in {place} was {adj}.",
        "We waited {number} minutes and the {thing} was {adj}.",
    ),
    "test": (
        "According to {name}, the {thing} is {adj}.",
        "Our {thing} in {place} was {adj}.",
        "After {number} days the {thing} still seems {adj}.",
    ),
}  # fmt: skip
NUMBERS = {"selection": ("5", "10", "15"), "test": ("7", "20", "45")}
INSERTED = {  # where a URL or a handle goes: after the sentence or before it
    "selection": ("{text} {url}", "{handle} {text}"),
    "test": ("{text} via {url}", "{handle}: {text}"),
}
CLAUSE_ORDER = {  # two clauses of the same polarity, in either order
    "selection": "The {thing} was {adj} and the {other} was {adj2}.",
    "test": "This {thing} is {adj}, and that {other} is {adj2}.",
}
CONTRACTIONS = {
    "selection": (("The {thing} was not {adj}.", "The {thing} wasn't {adj}."), ("It is {adj}.", "It's {adj}.")),
    "test": (("I do not find it {adj}.", "I don't find it {adj}."), ("They are {adj}.", "They're {adj}.")),
}
IDENTITY = {  # (valence, template): the valence picks which adjectives fill {adj}; {role} is a person
    "selection": (
        ("neutral", "I am {article} {term} person."), ("neutral", "My {role} is {term}."),
        ("neutral", "I am {term}."), ("neutral", "Our new {role} is {article} {term} woman."),
        ("positive", "As {article} {term} person, I found the {thing} {adj}."),
        ("negative", "As {article} {term} person, I found the {thing} {adj}."),
    ),
    "test": (
        ("neutral", "We met {article} {term} family yesterday."), ("neutral", "The {role} next door is {term}."),
        ("neutral", "They are {article} {term} {role}."), ("neutral", "{article} {term} man runs the place."),
        ("positive", "Our {term} {role} made the {thing} {adj}."),
        ("negative", "Our {term} {role} made the {thing} {adj}."),
    ),
}  # fmt: skip
ROLES = {"selection": ("neighbour", "boss", "doctor", "teacher"), "test": ("friend", "manager", "nurse", "pilot")}


def _typo(text: str, word: str) -> str:
    """``text`` with the two different neighbouring letters of ``word`` nearest its middle swapped (``great`` ->
    ``gerat``, ``good`` -> ``godo``): swapping two equal letters (``oo``) would leave the text as it was."""
    middle = len(word) // 2
    i = min((i for i in range(1, len(word)) if word[i - 1] != word[i]), key=lambda i: (abs(i - middle), -i))
    return text.replace(word, word[: i - 1] + word[i] + word[i - 1] + word[i + 1 :], 1)


def composition_tests(part: str) -> list[Test]:
    """Vocabulary, negation, expectation and contrast: ``label`` tests."""
    things, pos, neg = w.THINGS.part(part), w.POSITIVE.part(part), w.NEGATIVE.part(part)
    pverbs, nverbs, asides = w.POSITIVE_VERBS.part(part), w.NEGATIVE_VERBS.part(part), w.ASIDES.part(part)
    others = things[::-1]
    return [
        _label("positive words", "vocabulary", part, "positive", VOCABULARY[part], thing=things, adj=pos),
        _label("negative words", "vocabulary", part, "negative", VOCABULARY[part], thing=things, adj=neg),
        _label("negated negative", "negation", part, "not negative", NEGATED[part], thing=things, adj=neg),
        _label("negated positive", "negation", part, "negative", NEGATED[part], thing=things, adj=pos),
        _label("negated negative verb", "negation", part, "not negative", NEGATED_VERB[part],
               thing=things, verb=nverbs),
        _label("negated positive verb", "negation", part, "negative", NEGATED_VERB[part],
               thing=things, verb=pverbs),
        _label("distant negation of negative", "negation at a distance", part, "not negative", DISTANT[part],
               thing=things, adj=neg, aside=asides),
        _label("distant negation of positive", "negation at a distance", part, "negative", DISTANT[part],
               thing=things, adj=pos, aside=asides),
        _label("denied negative expectation", "expectation denied", part, "not negative", EXPECTED[part],
               thing=things, adj=neg),
        _label("denied positive expectation", "expectation denied", part, "negative", EXPECTED[part],
               thing=things, adj=pos),
        _label("denied negative verb", "expectation denied", part, "not negative", EXPECTED_VERB[part],
               thing=things, verb=nverbs),
        _label("denied positive verb", "expectation denied", part, "negative", EXPECTED_VERB[part],
               thing=things, verb=pverbs),
        _label("negative, but positive", "contrast", part, "positive", CONTRAST[part],
               thing=things, other=others, first=neg, second=pos),
        _label("positive, but negative", "contrast", part, "negative", CONTRAST[part],
               thing=things, other=others, first=pos, second=neg),
    ]  # fmt: skip


def graded_tests(part: str) -> list[Test]:
    """Intensifiers may not weaken an opinion, reducers may not strengthen it: ``direction`` tests."""
    things, template = w.THINGS.part(part), GRADED[part]
    tests = []
    for degree_name, degrees in (("intensifier", w.INTENSIFIERS.part(part)), ("reducer", w.REDUCERS.part(part))):
        for valence, adjectives in (("positive", w.POSITIVE.part(part)), ("negative", w.NEGATIVE.part(part))):
            pairs = [
                (template.format(thing=t, degree="", adj=a), template.format(thing=t, degree=d + " ", adj=a))
                for t, a, d in itertools.product(things, adjectives, degrees)
            ]
            stronger = (degree_name == "intensifier") == (valence == "positive")  # P(positive) may only go up
            expect = "not down" if stronger else "not up"
            tests.append(_direction(f"{degree_name} on {valence}", "intensifiers and reducers", part, expect, pairs))
    return tests


def robustness_tests(part: str) -> list[Test]:
    """Typos, punctuation, contractions, names, places, numbers, URLs, handles and clause order: ``invariance``."""
    things, adjectives = w.THINGS.part(part), w.POSITIVE.part(part) + w.NEGATIVE.part(part)
    base = [(thing, adj, f"The {thing} was {adj}.") for thing in things for adj in adjectives]
    names, places, numbers = w.NAMES.part(part), w.PLACES.part(part), NUMBERS[part]
    urls, handles = w.URLS.part(part), w.HANDLES.part(part)
    pairs = list(itertools.product(things, adjectives))
    name_t, place_t, number_t = ROBUST[part]
    order = CLAUSE_ORDER[part]
    cases = {
        "typos": [(text, _typo(text, adj)) for _, adj, text in base if len(adj) > 3],
        "punctuation": [(text, text[:-1], text[:-1] + "!", text[:-1] + "...") for _, _, text in base],
        "contractions": [
            tuple(t.format(thing=thing, adj=adj) for t in pair)
            for pair in CONTRACTIONS[part] for thing in things for adj in adjectives
        ],
        "names": [tuple(name_t.format(name=n, thing=t, adj=a) for n in names) for t, a in pairs],
        "places": [tuple(place_t.format(place=p, thing=t, adj=a) for p in places) for t, a in pairs],
        "numbers": [tuple(number_t.format(number=n, thing=t, adj=a) for n in numbers) for t, a in pairs],
        "urls": [(text, INSERTED[part][0].format(text=text, url=url)) for _, _, text in base for url in urls],
        "handles": [
            (text, INSERTED[part][1].format(text=text, handle=handle)) for _, _, text in base for handle in handles
        ],
        "clause order": [
            (order.format(thing=t, adj=a, other=o, adj2=b), order.format(thing=o, adj=b, other=t, adj2=a))
            for words in (w.POSITIVE.part(part), w.NEGATIVE.part(part))
            for t, o in itertools.combinations(things, 2) for a, b in itertools.combinations(words, 2)
        ],
    }  # fmt: skip
    return [_invariance(name, "robustness", part, groups) for name, groups in cases.items()]


def identity_tests(part: str) -> list[Test]:
    """One ``invariance`` test per identity group and valence: swapping the term must not change the class."""
    things, roles = w.THINGS.part(part), ROLES[part]
    adjectives = {"positive": w.POSITIVE.part(part), "negative": w.NEGATIVE.part(part), "neutral": ("",)}
    tests = []
    for group, terms in w.IDENTITY.items():
        for valence in ("neutral", "positive", "negative"):
            templates = [t for v, t in IDENTITY[part] if v == valence]
            groups = [
                tuple(_fill((template,), term=(term,), thing=(t,), adj=(a,), role=(r,))[0] for term in terms.part(part))
                for template in templates for t in things for a in adjectives[valence] for r in roles
            ]  # fmt: skip
            name = f"{group}, {valence}"
            tests.append(_invariance(name, "identity", part, groups, group, IDENTITY_CASES))
    return tests


def build_suite(parts: tuple[str, ...] = PARTS) -> list[Test]:
    """Every test of the named parts, in a fixed order."""
    return [
        test
        for part in parts
        for test in (*composition_tests(part), *graded_tests(part), *robustness_tests(part), *identity_tests(part))
    ]
