"""Opinion verbs stated, negated and denied in this project's own frames: "i did n't hate the pasta" is praise.

The ``negation`` and ``expectation`` rewrites (``composition.py``) negate a verb only where a real sentence
uses one of a few ("i loved the pasta"), so a model can learn "did n't love" as a phrase and not as an
operator: on a verb it met only as an opinion word ("we did not loathe it") it reads the verb alone.
``verb_set`` draws sentences from a wider lexicon of opinion verbs, each labelled as its frame implies:

- stated ("we really {verb} this {thing} .") and an expectation met: the verb's polarity;
- negated ("i did n't {verb} the {thing} .") and an expectation denied: the opposite.

The verbs, things and frames are this project's own, and none is one of the behavioural suite's
(``tests/training/test_verbs.py`` checks), so the suite measures the operator on verbs it was not taught.
"""

import random

from .data import LabelledTexts

# (base form, past tense); a verb's list is its polarity.
POSITIVE_VERBS = (
    ("love", "loved"), ("enjoy", "enjoyed"), ("appreciate", "appreciated"), ("recommend", "recommended"),
    ("value", "valued"), ("prize", "prized"), ("savour", "savoured"), ("praise", "praised"),
    ("applaud", "applauded"), ("fancy", "fancied"), ("celebrate", "celebrated"), ("favour", "favoured"),
    ("endorse", "endorsed"), ("respect", "respected"), ("savor", "savored"), ("rave about", "raved about"),
)  # fmt: skip
NEGATIVE_VERBS = (
    ("hate", "hated"), ("dislike", "disliked"), ("deplore", "deplored"), ("dread", "dreaded"),
    ("scorn", "scorned"), ("disdain", "disdained"), ("condemn", "condemned"), ("lament", "lamented"),
    ("begrudge", "begrudged"), ("mind", "minded"), ("distrust", "distrusted"), ("bemoan", "bemoaned"),
    ("rue", "rued"), ("pan", "panned"), ("slam", "slammed"), ("complain about", "complained about"),
)  # fmt: skip
THINGS = (
    "pasta", "pizza", "film", "album", "novel", "tablet", "camera", "hotel", "sofa", "jacket", "game", "app",
    "dessert", "soup", "tour", "play", "course", "seats", "menu", "burger", "headphones", "car", "bike",
    "lecture", "museum", "spa", "massage", "series", "podcast", "printer",
)  # fmt: skip
# Each frame: (template, keeps the verb's polarity?). {base} and {past} are the verb's two forms.
FRAMES = (
    ("i {past} the {thing} .", True),
    ("we really {base} this {thing} .", True),
    ("my sister {past} her {thing} .", True),
    ("everyone at the table {past} the {thing} .", True),
    ("i was sure i would {base} the {thing} , and i did .", True),
    ("we were told we would {base} it , and we really did .", True),
    ("i did n't {base} the {thing} .", False),
    ("we do not {base} this {thing} .", False),
    ("i never {past} the {thing} .", False),
    ("my sister did not {base} her {thing} at all .", False),
    ("none of us {past} the {thing} .", False),
    ("i ca n't say i {past} the {thing} .", False),
    ("honestly , i did n't {base} the {thing} .", False),
    ("i was sure i would {base} the {thing} , but i did n't .", False),
    ("we were told we would {base} it . we did not .", False),
    ("i assumed i 'd {base} the {thing} ; in the end i did n't .", False),
    ("everyone said i would {base} the {thing} , but i never did .", False),
)


def verb_set(seed: int, count: int = 8000) -> LabelledTexts:
    """``count`` sentences, half about a positive verb and half about a negative one, each in a random frame.

    A frame that negates or denies the verb takes the opposite of its polarity, so both labels meet every
    frame kind and every verb. Seeded: the same ``seed`` and ``count`` give the same rows.
    """
    rng = random.Random(f"verbs-{seed}")
    texts, labels = [], []
    for index in range(count):
        polarity = index % 2
        base, past = rng.choice(POSITIVE_VERBS if polarity else NEGATIVE_VERBS)
        template, keeps = rng.choice(FRAMES)
        texts.append(template.format(base=base, past=past, thing=rng.choice(THINGS)))
        labels.append(polarity if keeps else 1 - polarity)
    return LabelledTexts(None, texts, labels)
