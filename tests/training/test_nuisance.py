"""Copies of real sentences with a name, place, number, URL, handle, hashtag, emoji or typo changed: what each
kind makes, that it keeps the label, and that its words and frames are not the behavioural suite's test part."""

import random
import re

import pytest

from transformer.behaviour import build_suite, words
from transformer.training import nuisance
from transformer.training.data import LabelledTexts

LEXICON = LabelledTexts(None, ["great", "not great", "awful", "not awful"], [1, 0, 0, 1])
ROWS = LabelledTexts(
    None,
    ["the pasta was great", "awful service in cairo , 2 hours wait", "Priya said it was great", "so awful"],
    [1, 0, 1, 0],
)


def test_a_swap_replaces_the_name_place_or_number_that_is_there_and_nothing_else():
    rng = random.Random(0)
    for text, kind, found, pool in (
        ("Priya said the pasta was great", "name", "Priya", nuisance.NAMES),
        ("awful service in cairo , sadly", "place", "cairo", nuisance.PLACES),
        ("we waited 40 minutes , awful", "number", "40", None),
        ("we waited _num_ minutes , awful", "number", "_num_", None),
    ):
        for _ in range(20):
            made = nuisance.replace_or_frame(text, kind, rng)
            before, after = text.split(found)
            assert made.startswith(before) and made.endswith(after), made
            other = made[len(before) : len(made) - len(after)]
            assert other.lower() != found.lower()  # actually swapped
            assert other in pool if pool else other.isdigit()


def test_a_sentence_without_one_is_framed_with_one():
    rng = random.Random(1)
    for kind, pattern in (("name", nuisance._NAME), ("place", nuisance._PLACE), ("number", re.compile(r"\d+"))):
        made = nuisance.replace_or_frame("the pasta was great", kind, rng)
        assert "the pasta was great" in made and pattern.search(made), made


@pytest.mark.parametrize("kind", ["url", "handle", "hashtag", "emoji"])
def test_an_insertion_adds_one_token_at_either_end(kind):
    rng = random.Random(2)
    marks = {"url": ("http", "bit.ly"), "handle": ("@",), "hashtag": ("#",), "emoji": nuisance._EMOJI}[kind]
    ends = set()
    for _ in range(30):
        made = nuisance.insert("the pasta was great", kind, rng)
        extra = made.replace("the pasta was great", "").strip()
        assert extra and " " not in extra and extra.startswith(marks), made
        ends.add(made.startswith("the pasta"))
    assert ends == {True, False}


def test_a_typo_changes_one_opinion_word_by_one_slip():
    rng = random.Random(3)
    lexicon = {"great": 1, "awful": 0}
    for _ in range(50):
        made = nuisance.misspell_opinion("the pasta was great , not the usual", lexicon, rng)
        assert made.startswith("the pasta was ") and made.endswith(" , not the usual")
        slipped = made.split()[3]
        assert slipped != "great" and slipped[0] == "g" and abs(len(slipped) - 5) <= 1
        assert (
            sorted(slipped) == sorted("great")
            or len(slipped) != 5
            or sum(a != b for a, b in zip(slipped, "great", strict=True)) == 1
        )
    assert nuisance.misspell_opinion("the pasta came at noon", lexicon, rng) is None


def test_the_set_keeps_every_label_makes_each_kind_and_meets_both_polarities():
    assert len(nuisance.nuisance_set([ROWS], LEXICON, seed=0, count=400).texts) == 4  # one per short sentence
    many = LabelledTexts(None, ROWS.texts * 100, ROWS.labels * 100)
    made = nuisance.nuisance_set([many], LEXICON, seed=0, count=400)
    assert len(made.texts) == 400 and made == nuisance.nuisance_set([many], LEXICON, seed=0, count=400)
    for text, label in zip(made.texts, made.labels, strict=True):
        positive = "pasta" in text or "said it was" in text  # the two positive sentences, whatever was changed
        negative = "service in" in text or "so " in text
        assert positive != negative and label == int(positive), text
    by_label = {label: [t for t, got in zip(made.texts, made.labels, strict=True) if got == label] for label in (0, 1)}
    for label, texts in by_label.items():  # every kind, on both polarities
        assert any("http" in t or "bit.ly" in t for t in texts) and any("#" in t for t in texts), label
        assert any("@" in t for t in texts) and any(nuisance._PLACE.search(t) for t in texts), label
    assert any(re.search(r"\b(?:gr\w{2,4}t|aw\w{2,4}l)\b", t) and "great" not in t and "awful" not in t
               for t in made.texts)  # fmt: skip


def test_no_name_place_or_frame_is_the_suites_test_part():
    suite_words = {w.lower() for role in (words.NAMES, words.PLACES) for w in role.test}
    assert not suite_words & {w.lower() for w in nuisance.NAMES + nuisance.PLACES}
    test_texts = {text.lower() for t in build_suite(("test",)) for case in t.cases for text in case}
    for frames in nuisance._FRAMES.values():
        for frame in frames:  # the frame, its sentence and its word as wildcards, never reads as a test text
            pattern = re.escape(frame).replace(r"\{s\}", ".+").replace(r"\{x\}", r"\S+")
            assert not any(re.fullmatch(pattern, text) for text in test_texts), frame
