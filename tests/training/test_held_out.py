"""The lexicon split: deterministic, disjoint, balanced, and no evaluation-half word in any row a training rewrite
writes."""

import random
import re

import pytest

from transformer.training import held_out, neutral, nuisance, pairing
from transformer.training.data import LabelledTexts
from transformer.training.identity import HELD_OUT_TERMS, IDENTITY_LEXICON, IDENTITY_TERMS, identity_set

HELD_OUT_TERM_LIST = [term for terms in HELD_OUT_TERMS.values() for term in terms]
HELD_OUT_WORDS = {w.lower() for w in (*nuisance.HELD_OUT_NAMES, *nuisance.HELD_OUT_PLACES, *HELD_OUT_TERM_LIST)}


def held_out_in(text: str) -> set[str]:
    """The evaluation-half words that ``text`` holds as whole words."""
    lowered = text.lower()
    return {word for word in HELD_OUT_WORDS if re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", lowered)}


def test_the_split_is_disjoint_balanced_and_independent_of_the_lists_order():
    for words in [*IDENTITY_LEXICON.values(), nuisance.ALL_NAMES, nuisance.ALL_PLACES]:
        train, evaluation = held_out.halves(words)
        assert set(train).isdisjoint(evaluation) and set(train) | set(evaluation) == set(words)
        assert abs(len(train) - len(evaluation)) <= 1
        shuffled = random.Random(len(words)).sample(list(words), len(words))
        assert {frozenset(half) for half in held_out.halves(shuffled)} == {frozenset(train), frozenset(evaluation)}
    assert held_out.halves(["b", "a", "c"]) == held_out.halves(["b", "a", "c"])
    assert IDENTITY_TERMS.keys() == HELD_OUT_TERMS.keys() == IDENTITY_LEXICON.keys()


def test_the_split_follows_the_hash_rule():
    words = ["alpha", "beta", "gamma", "delta", "epsilon"]
    ranked = sorted(words, key=held_out._digest)
    train, evaluation = held_out.halves(words)
    assert set(train) == set(ranked[0::2]) and set(evaluation) == set(ranked[1::2])


def test_neutral_statements_hold_no_held_out_word():
    made = neutral.neutral_people(seed=5, per_term=40, everyday=500, invented=30)
    leaks = {text: held_out_in(text) for text in made.texts if held_out_in(text)}
    assert not leaks, list(leaks.items())[:3]


def written(made: LabelledTexts, originals: list[str]) -> list[set[str]]:
    """Per made row, the held-out words it holds that the original it was made from (if it contains one) lacks."""
    found = []
    for text in made.texts:
        kept = [original for original in originals if original.rstrip(" .") in text]
        found.append(held_out_in(text) - set().union(*map(held_out_in, kept)))
    return found


def test_identity_swaps_and_frames_write_no_held_out_term():
    held = [t for terms in HELD_OUT_TERMS.values() for t in terms if " " not in t]
    sentences = [f"as a {term} woman , the soup was great ." for term in held] + ["my waiter was kind ."] * 50
    made = identity_set([LabelledTexts(None, sentences, [1] * len(sentences))], seed=1, frames=200)
    swaps = made.texts[: len(held)]  # every held-out mention swapped for a training-half term
    assert len(made.texts) > len(held) and not any(held_out_in(text) for text in swaps)
    assert not any(written(made, sentences))  # a frame keeps its sentence, and writes a training-half term


def test_nuisance_copies_write_no_held_out_name_or_place():
    pairs = zip(nuisance.NAMES, nuisance.PLACES + nuisance.PLACES[:1], strict=True)
    texts = [f"{name} said the soup in {place} was good ." for name, place in pairs] + ["the soup was good ."] * 40
    lexicon = LabelledTexts(None, ["good", "not good"], [1, 0])
    made = nuisance.nuisance_set([LabelledTexts(None, texts, [1] * len(texts))], lexicon, seed=2, count=400)
    assert len(made.texts) == len(texts) and not any(held_out_in(text) for text in made.texts)
    rng = random.Random(0)
    for name, place in zip(nuisance.HELD_OUT_NAMES, nuisance.HELD_OUT_PLACES, strict=False):  # swapped out
        assert not held_out_in(nuisance.replace_or_frame(f"{name} liked it", "name", rng))
        assert not held_out_in(nuisance.replace_or_frame(f"we liked {place}", "place", rng))


@pytest.mark.parametrize("kind", ["identity", "name", "place"])
def test_pairing_never_fills_a_slot_with_a_held_out_word(kind):
    rng = random.Random(kind)
    slot = pairing.Slot("x said hello", 0, 1, kind)
    rare = ("pushed", "staged", "frequent")
    filled = {pairing.filler(slot, rare, rng) for _ in range(3000)}
    assert filled and not filled & HELD_OUT_WORDS
    assert filled & set(rare) and len(filled) > 50  # made-up words as well as list words and rare words
