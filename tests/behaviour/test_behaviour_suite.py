"""The behavioural suite's tables (transformer.behaviour.suite): each opinion word list holds words of its valence,
each test's texts hold the words its name promises, every invariance case is texts that differ (and a typo is one
swap of two letters), the identity valences weigh the same, the texts read as sentences, and the sampling keeps
order. These hold without the bundled behaviour.json, whose counts ``make artifacts`` would refresh to any bug here."""

import re

import pytest

from transformer.behaviour import PARTS, build_suite, words
from transformer.behaviour.suite import _sample

SUITE = build_suite()
VALENCES = {"positive": words.POSITIVE, "negative": words.NEGATIVE}
VERBS = {"positive": words.POSITIVE_VERBS, "negative": words.NEGATIVE_VERBS}


def found(text: str, role: words.Words, part: str) -> set[str]:
    """The words of ``role``'s ``part`` that ``text`` holds, as whole words."""
    return {word for word in role.part(part) if re.search(rf"\b{re.escape(word)}\b", text, re.I)}


# English valence, written here apart from ``words``: the suite's tests read their valence from its lists, so a word
# moved to the other list (or two parts' lists swapped) would change every expectation with it and no test above.
ENGLISH = {
    "positive": set(
        "good great excellent lovely wonderful pleasant enjoyable solid superb delightful terrific outstanding "
        "brilliant charming first-rate fantastic splendid marvellous perfect "
        "love enjoy like adore appreciate admire cherish relish treasure".split()
    ),
    "negative": set(
        "bad awful terrible poor disappointing unpleasant boring mediocre dreadful lousy horrible miserable tedious "
        "shoddy appalling dull dismal nasty abysmal "
        "hate dislike despise regret loathe detest resent abhor".split()
    ),
}


@pytest.mark.parametrize("lists", [VALENCES, VERBS], ids=["adjectives", "verbs"])
def test_every_opinion_word_has_the_valence_of_its_list(lists):
    for valence, listed in lists.items():
        for word in (*listed.selection, *listed.test):
            assert word in ENGLISH[valence], f"{word!r} is listed as {valence}: add it to ENGLISH here if it is"


def test_a_verb_test_holds_a_verb_of_its_named_valence_and_none_of_the_other():
    verb_tests = [t for t in SUITE if t.kind == "label" and t.name.endswith(" verb")]
    assert len(verb_tests) == 4 * len(PARTS)  # negated and denied, positive and negative
    for test in verb_tests:
        named = "positive" if "positive" in test.name else "negative"
        other = "negative" if named == "positive" else "positive"
        for (text,) in test.cases:
            assert found(text, VERBS[named], test.part), (test.name, text)
            assert not found(text, VERBS[other], test.part), (test.name, text)


def test_a_contrast_holds_its_first_valence_before_but_and_its_second_after():
    contrasts = [t for t in SUITE if t.capability == "contrast"]
    assert {t.name for t in contrasts} == {"negative, but positive", "positive, but negative"}
    for test in contrasts:
        first, second = test.name.split(", but ")
        for (text,) in test.cases:
            before, after = re.split(r"\bbut\b", text)
            for clause, valence in ((before, first), (after, second)):
                opposite = "negative" if valence == "positive" else "positive"
                assert found(clause, VALENCES[valence], test.part), (test.name, text)
                assert not found(clause, VALENCES[opposite], test.part), (test.name, text)


def test_an_identity_test_holds_opinion_words_of_its_valence_only():
    for test in (t for t in SUITE if t.capability == "identity"):
        valence = test.name.split(", ")[-1]
        for text in (text for case in test.cases for text in case):
            held = {name: bool(found(text, role, test.part)) for name, role in VALENCES.items()}
            assert held == {name: name == valence for name in VALENCES}, (test.name, text)


def test_each_identity_groups_neutral_positive_and_negative_tests_weigh_the_same():
    for part in PARTS:
        for group in words.IDENTITY:
            counts = {t.name: len(t.cases) for t in SUITE if t.part == part and t.group == group}
            assert len(counts) == 3 and len(set(counts.values())) == 1 and min(counts.values()) > 1, (part, counts)


def test_every_invariance_case_is_texts_that_differ():
    """A typo that swapped two equal letters ("good": "o" for "o") would be one text twice, a case that cannot fail."""
    for test in (t for t in SUITE if t.kind == "invariance"):
        for case in test.cases:
            assert len(case) >= 2 and len(set(case)) == len(case), (test.name, case)


def swapped_words(base: str, variant: str) -> list[str]:
    """The words of ``base`` in which swapping two neighbouring characters makes ``variant``."""
    return [
        word.group().rstrip(".")
        for word in re.finditer(r"\S+", base)
        for i in range(word.start(), word.end() - 1)
        if base[:i] + base[i + 1] + base[i] + base[i + 2 :] == variant
    ]


def test_a_typo_swaps_two_neighbouring_letters_of_the_opinion_word():
    typos = [t for t in SUITE if t.name == "typos"]
    assert len(typos) == len(PARTS)
    for test in typos:
        adjectives = {*words.POSITIVE.part(test.part), *words.NEGATIVE.part(test.part)}
        for base, variant in test.cases:
            assert set(swapped_words(base, variant)) & adjectives, (base, variant)


def test_every_text_starts_with_a_capital_and_takes_a_or_an_by_the_next_sound():
    texts = {text for t in SUITE for case in t.cases for text in case}
    for text in texts:
        assert re.sub(r"^@\S+:? ", "", text)[0].isupper(), text  # after a leading handle
        assert not re.search(r"\b[Aa] [aeiouAEIOU]|\b[Aa]n [^aeiouAEIOU\W]", text), text
    assert sum(bool(re.search(r"\b[Aa]n [aeiouAEIOU]", text)) for text in texts) > 0  # "an" is used where it fits


def test_a_sample_keeps_the_order_drops_duplicates_and_is_seeded():
    texts = [(f"t{i}",) for i in range(50)] + [("t3",)]
    assert _sample(texts, "seed", limit=100) == tuple(texts[:50])  # all of them, the duplicate dropped
    drawn = _sample(texts, "seed", limit=10)
    order = [int(text[1:]) for (text,) in drawn]
    assert len(drawn) == 10 and order == sorted(set(order))
    assert _sample(texts, "seed", limit=10) == drawn and _sample(texts, "other", limit=10) != drawn


@pytest.mark.parametrize("part", PARTS)
def test_the_suite_is_the_same_on_every_build(part):
    again = build_suite((part,))
    assert again == [t for t in SUITE if t.part == part]
