"""The verbs source (transformer.training.verbs): each frame gives the label it claims on both polarities, every
verb and frame is drawn, the labels balance, the draws are seeded, and nothing is the behavioural suite's."""

import re
from collections import Counter

from transformer.behaviour import build_suite, words
from transformer.behaviour.suite import EXPECTED_VERB, NEGATED_VERB
from transformer.training.verbs import FRAMES, NEGATIVE_VERBS, POSITIVE_VERBS, THINGS, verb_set

MADE = verb_set(seed=0, count=4000)
POLARITY = {form: label for label, lexicon in ((1, POSITIVE_VERBS), (0, NEGATIVE_VERBS)) for pair in lexicon
            for form in pair}  # fmt: skip
FLIPS = re.compile(r"\b(?:n't|not|never|none)\b")  # how a frame negates or denies: written here apart from FRAMES


def verb_of(text: str) -> str:
    """The lexicon verb form ``text`` holds (the longest, so "raved about" before a shorter match)."""
    held = [form for form in POLARITY if re.search(rf"\b{form}\b", text)]
    assert held, text
    return max(held, key=len)


def test_a_stated_or_met_verb_keeps_its_polarity_and_a_negated_or_denied_one_flips_it():
    for text, label in zip(MADE.texts, MADE.labels, strict=True):
        polarity = POLARITY[verb_of(text)]
        assert label == (1 - polarity if FLIPS.search(text) else polarity), text


def test_the_frames_that_flip_are_those_that_negate_and_each_kind_meets_both_polarities():
    for template, keeps in FRAMES:
        assert keeps == (FLIPS.search(template) is None), template
    kinds = Counter((FLIPS.search(text) is None, POLARITY[verb_of(text)]) for text in MADE.texts)
    assert set(kinds) == {(True, 0), (True, 1), (False, 0), (False, 1)} and min(kinds.values()) > 300, kinds


def test_every_verb_frame_and_thing_is_drawn_and_the_labels_balance():
    drawn = {verb_of(text) for text in MADE.texts}
    assert all(drawn & set(pair) for pair in POSITIVE_VERBS + NEGATIVE_VERBS)
    frames = {re.sub(r"\{\w+\}", "X", t) for t, _ in FRAMES}
    used = {re.sub(r"\b(?:" + "|".join(THINGS) + r")\b", "X", text) for text in MADE.texts}
    assert all(any(re.fullmatch(re.escape(f).replace("X", ".+"), u) for u in used) for f in frames)
    assert {thing for thing in THINGS if any(f" {thing} " in text for text in MADE.texts)} == set(THINGS)
    assert abs(sum(MADE.labels) / len(MADE.labels) - 0.5) < 0.03


def test_the_draws_are_seeded():
    assert verb_set(seed=0, count=4000) == MADE and verb_set(seed=1, count=4000) != MADE
    assert verb_set(seed=0, count=10).texts == MADE.texts[:10]


def test_no_verb_thing_or_frame_is_the_behavioural_suites():
    ours = {form for pair in POSITIVE_VERBS + NEGATIVE_VERBS for form in pair}
    for part in ("selection", "test"):
        suite_verbs = {*words.POSITIVE_VERBS.part(part), *words.NEGATIVE_VERBS.part(part)}
        assert len(suite_verbs) >= 4 and not {v for v in ours if v.split()[0] in suite_verbs}, part
        assert not set(THINGS) & set(words.THINGS.part(part)), part
    suite_frames = {t.lower() for part in NEGATED_VERB.values() for t in part} | {
        t.lower() for part in EXPECTED_VERB.values() for t in part
    }
    suite_texts = {text.lower().rstrip(".") for t in build_suite() for case in t.cases for text in case}
    for template, _ in FRAMES:
        assert template not in suite_frames
        pattern = re.sub(r"\\\{\w+\\\}", r"\\S+", re.escape(template.rstrip(" .")))
        assert not any(re.fullmatch(pattern, text) for text in suite_texts), template
