"""The behavioural suite's figures (transformer.behaviour.run): each test's failure rate, each capability's mean of
its tests' rates, and the identity figures over the neutral templates alone; expected values worked out by hand."""

import re

import pytest

from transformer.behaviour import build_suite, run_suite, summarise, words
from transformer.behaviour.suite import Test as SuiteTest


def label_test(name: str, capability: str, texts: list[str]) -> SuiteTest:
    return SuiteTest(name, capability, "label", "test", "positive", tuple((text,) for text in texts))


def test_each_tests_failure_rate_and_each_capabilitys_mean_of_them():
    # "c": rates 0, 0 and 0.9 (mean 0.3, median 0); "d": one test, 1 of 4 cases failing.
    tests = [
        label_test("one", "c", [f"good {i}" for i in range(10)]),
        label_test("two", "c", [f"fine {i}" for i in range(10)]),
        label_test("three", "c", ["good 0", *(f"bad {i}" for i in range(9))]),
        label_test("four", "d", ["good 1", "good 2", "good 3", "bad 0"]),
    ]
    results = run_suite(tests, lambda texts: [0.1 if text.startswith("bad") else 0.9 for text in texts])
    figures = summarise(results)["test"]
    assert figures["tests"] == {"c: one": 0.0, "c: two": 0.0, "c: three": 0.9, "d: four": 0.25}
    assert figures["capabilities"] == {"c": 0.3, "d": 0.25}


def _opinion_words() -> re.Pattern:
    adjectives = {word for role in (words.POSITIVE, words.NEGATIVE) for word in (*role.selection, *role.test)}
    return re.compile(rf"\b(?:{'|'.join(map(re.escape, sorted(adjectives, key=len, reverse=True)))})\b", re.I)


def test_the_neutral_figures_read_the_identity_texts_without_an_opinion_word_and_only_those():
    """A model that reads a text with an opinion word (the positive and negative identity templates) at 0.95 and one
    without (the neutral templates, "I am a ... person.") at 0.5: the neutral figures see no clear opinion."""
    opinion = _opinion_words()
    identity = [test for test in build_suite() if test.capability == "identity"]
    neutral_texts = [text for t in identity for case in t.cases for text in case if not opinion.search(text)]
    assert neutral_texts  # the rule tells the templates apart
    results = run_suite(identity, lambda texts: [0.95 if opinion.search(text) else 0.5 for text in texts])
    for part in ("selection", "test"):
        neutral = summarise(results)[part]["identity"]["neutral"]
        assert (neutral["clear_opinion"], neutral["median_spread"], neutral["swap_changes_class"]) == (0.0, 0.0, 0.0)
        assert set(neutral["by_group"]) == set(words.IDENTITY)
        assert all(group["clear_opinion"] == 0.0 for group in neutral["by_group"].values())


def test_the_identity_figures_count_class_changes_over_ordered_pairs_and_take_the_median_spread():
    # Case 1: P = 0.2, 0.8, 0.8 (4 of 6 ordered pairs change class, spread 0.6); case 2: 0.6, 0.7, 0.9 (none, 0.3);
    # case 3: 0.1, 0.1, 0.45 (none, 0.35). Median spread 0.35.
    scores = {"a": 0.2, "b": 0.8, "c": 0.8, "d": 0.6, "e": 0.7, "f": 0.9, "g": 0.1, "h": 0.1, "i": 0.45}
    test = SuiteTest("g, neutral", "identity", "invariance", "test", None, (("a", "b", "c"), ("d", "e", "f"),
                     ("g", "h", "i")), "g")  # fmt: skip
    identity = summarise(run_suite([test], lambda texts: [scores[t] for t in texts]))["test"]["identity"]
    assert identity["swap_changes_class"] == pytest.approx(4 / 18, abs=1e-4)
    assert identity["median_spread"] == pytest.approx(0.35)
    # 0.2, 0.8, 0.8, 0.9, 0.1, 0.1 lie outside [0.25, 0.75]: 6 of 9 texts read as a clear opinion
    assert identity["neutral"]["clear_opinion"] == pytest.approx(6 / 9, abs=1e-4)
