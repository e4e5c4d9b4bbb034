"""Run the behavioural suite against any model, given as a function from texts to P(positive).

``run_suite`` needs no torch: ``probabilities(texts) -> list[float]`` is the whole model interface,
so a test can pass a rule ("always positive") and the command line passes the loaded classifier.
"""

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .suite import DIRECTION_TOLERANCE, Test

Probabilities = Callable[[list[str]], Sequence[float]]
_READINGS = {  # a label test's expectation -> whether P(positive) meets it
    "positive": lambda p: p >= 0.5,
    "negative": lambda p: p < 0.5,
    "not negative": lambda p: p >= 1 / 3,
    "not positive": lambda p: p <= 2 / 3,
}


@dataclass(frozen=True)
class TestResult:
    """How a model did on one test: P(positive) of every text of every case, and which cases failed."""

    test: Test
    probabilities: tuple[tuple[float, ...], ...]
    failed: tuple[int, ...]

    @property
    def failure_rate(self) -> float:
        """The share of cases that failed."""
        return len(self.failed) / len(self.test.cases) if self.test.cases else 0.0

    def swaps(self) -> tuple[int, int]:
        """For invariance: (ordered pairs of texts within a case whose predicted classes differ, all such pairs)."""
        changed = total = 0
        for probs in self.probabilities:
            classes = [p >= 0.5 for p in probs]
            changed += sum(a != b for a in classes for b in classes)
            total += len(classes) * (len(classes) - 1)
        return changed, total


def case_fails(test: Test, probs: Sequence[float]) -> bool:
    """Whether one case of ``test`` fails, given P(positive) of each of its texts."""
    if test.kind == "label":
        return not _READINGS[test.expect](probs[0])
    if test.kind == "invariance":
        return len({p >= 0.5 for p in probs}) > 1
    base, variant = probs
    if test.expect == "not down":
        return variant < base - DIRECTION_TOLERANCE
    return variant > base + DIRECTION_TOLERANCE


def run_suite(tests: Sequence[Test], probabilities: Probabilities) -> list[TestResult]:
    """Score every test; each distinct text goes to ``probabilities`` once, in one call."""
    texts = list(dict.fromkeys(text for test in tests for case in test.cases for text in case))
    scores = dict(zip(texts, (float(p) for p in probabilities(texts)), strict=True))
    results = []
    for test in tests:
        probs = tuple(tuple(scores[text] for text in case) for case in test.cases)
        failed = tuple(i for i, case_probs in enumerate(probs) if case_fails(test, case_probs))
        results.append(TestResult(test, probs, failed))
    return results


def identity_figures(results: Sequence[TestResult]) -> dict[str, float]:
    """The two identity figures over ``results``: swaps that change the class, and the median spread.

    A swap is an ordered pair of texts of one case (one template, two terms of a group); the spread of
    a case is max − min P(positive) across the group's terms, and the median is taken over cases.
    """
    changed = total = 0
    for result in results:
        pair_counts = result.swaps()
        changed, total = changed + pair_counts[0], total + pair_counts[1]
    spreads = [max(p) - min(p) for result in results for p in result.probabilities]
    return {
        "swap_changes_class": round(changed / total, 4) if total else 0.0,
        "median_spread": round(statistics.median(spreads), 4) if spreads else 0.0,
    }


CLEAR = (0.25, 0.75)  # a P(positive) outside this range reads as a clear opinion


def neutral_figures(results: Sequence[TestResult]) -> dict:
    """``identity_figures`` of neutral templates, plus the share of their texts read as a clear opinion (outside
    ``CLEAR``), over all groups and per group (``by_group``)."""

    def figures(chosen: Sequence[TestResult]) -> dict:
        values = [p for result in chosen for probs in result.probabilities for p in probs]
        clear = sum(not CLEAR[0] <= p <= CLEAR[1] for p in values) / len(values) if values else 0.0
        return {**identity_figures(chosen), "clear_opinion": round(clear, 4)}

    groups = dict.fromkeys(result.test.group for result in results)
    by_group = {group: figures([r for r in results if r.test.group == group]) for group in groups}
    return {**figures(results), "by_group": by_group}


def summarise(results: Sequence[TestResult]) -> dict:
    """The figures ``metrics.json`` keeps, per part: failure rate per test and per capability, and identity.

    Identity is given over all its tests and over the neutral templates alone ("I am a ... person."),
    where no opinion word can hide a difference between the terms; for those also the share read as a clear
    opinion, and every figure per identity group.
    """
    summary = {}
    for part in dict.fromkeys(result.test.part for result in results):
        mine = [result for result in results if result.test.part == part]
        capabilities = {}
        for result in mine:
            capabilities.setdefault(result.test.capability, []).append(result.failure_rate)
        identity = [result for result in mine if result.test.capability == "identity"]
        neutral = [result for result in identity if result.test.name.endswith("neutral")]
        summary[part] = {
            "tests": {f"{r.test.capability}: {r.test.name}": round(r.failure_rate, 4) for r in mine},
            "capabilities": {name: round(statistics.mean(rates), 4) for name, rates in capabilities.items()},
            "identity": {**identity_figures(identity), "neutral": neutral_figures(neutral)},
        }
    return summary
