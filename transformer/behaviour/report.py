"""The suite's results as one JSON-ready report: failure rates with counts per test and per capability, and every
failing case with how far it misses; and the filters and orders a reader of the report picks cases with.

No torch here (enforced, as for ``run.py``): the report is made from ``run_suite``'s ``TestResult`` list, so the
explorer's Behaviour tab, ``python -m transformer.artifacts`` (``behaviour.json``) and a test all share it.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from .run import TestResult
from .suite import DIRECTION_TOLERANCE, Test

ALL = "all"
DECIMALS = 4
# Where a label test's P(positive) must be to pass: the threshold of each reading, and its side (+1: at or above).
_THRESHOLDS = {"positive": (0.5, 1), "negative": (0.5, -1), "not negative": (1 / 3, 1), "not positive": (2 / 3, -1)}
SORTS = ("worst first", "suite order", "P(positive), lowest first", "P(positive), highest first")


def miss(test: Test, probs: Sequence[float]) -> float:
    """How far one case is from passing, in P(positive): 0 for a case that passes, more the worse it fails.

    A label test: the distance from P(positive) to its reading's threshold; an invariance test: how far the
    group's texts lie on both sides of 0.5 (the smaller of the two overhangs: the least change that agrees them);
    a direction test: how far the variant moved past the tolerance.
    """
    if test.kind == "label":
        threshold, side = _THRESHOLDS[test.expect]
        return max(0.0, side * (threshold - probs[0]))
    if test.kind == "invariance":
        return max(0.0, min(max(probs) - 0.5, 0.5 - min(probs))) if len({p >= 0.5 for p in probs}) > 1 else 0.0
    base, variant = probs
    if test.expect == "not down":
        return max(0.0, base - DIRECTION_TOLERANCE - variant)
    return max(0.0, variant - base - DIRECTION_TOLERANCE)


def test_row(result: TestResult) -> dict:
    """One test's figures: its part, capability, name, kind, expectation, cases, failed cases and failure rate."""
    test = result.test
    return {
        "part": test.part,
        "capability": test.capability,
        "test": test.name,
        "kind": test.kind,
        "expect": test.expect,
        "cases": len(test.cases),
        "failed": len(result.failed),
        "failure_rate": round(result.failure_rate, DECIMALS),
    }


def capability_rows(tests: Sequence[dict]) -> list[dict]:
    """Per part and capability, in the tests' order: tests, cases, failed cases, the pooled failure rate (failed ÷
    cases) and the mean of its tests' rates (the figure ``summarise`` and ``metrics.json`` keep)."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for row in tests:
        groups.setdefault((row["part"], row["capability"]), []).append(row)
    return [
        {
            "part": part,
            "capability": capability,
            "tests": len(rows),
            "cases": sum(row["cases"] for row in rows),
            "failed": sum(row["failed"] for row in rows),
            "failure_rate": round(
                sum(row["failed"] for row in rows) / max(1, sum(row["cases"] for row in rows)), DECIMALS
            ),
            "mean_test_rate": round(statistics.mean(row["failure_rate"] for row in rows), DECIMALS),
        }
        for (part, capability), rows in groups.items()
    ]


def failing_cases(result: TestResult) -> list[dict]:
    """The test's failing cases: where it is ("case", from 0, in the test's order), its texts, their P(positive)
    and how far it misses (``miss``)."""
    test = result.test
    return [
        {
            "part": test.part,
            "capability": test.capability,
            "test": test.name,
            "kind": test.kind,
            "expect": test.expect,
            "case": i,
            "texts": list(test.cases[i]),
            "probabilities": [round(p, DECIMALS) for p in result.probabilities[i]],
            "miss": round(miss(test, result.probabilities[i]), DECIMALS),
        }
        for i in result.failed
    ]


def build_report(results: Sequence[TestResult]) -> dict:
    """The suite's results as JSON-ready data: {"parts", "tests", "capabilities", "failures"}, in the suite's order."""
    tests = [test_row(result) for result in results]
    return {
        "parts": list(dict.fromkeys(row["part"] for row in tests)),
        "tests": tests,
        "capabilities": capability_rows(tests),
        "failures": [case for result in results for case in failing_cases(result)],
    }


def merge_reports(report: dict, live: dict) -> dict:
    """``report`` with each test of ``live`` (a report of some tests, run again) in place of its own figures and
    failing cases; the capabilities are counted again. A test ``report`` lacks is left out."""

    def key(row: dict) -> tuple[str, str, str]:
        return row["part"], row["capability"], row["test"]

    again = {key(row): row for row in live["tests"]}
    tests = [again.get(key(row), row) for row in report["tests"]]
    kept = [case for case in report["failures"] if key(case) not in again]
    failures = kept + [case for case in live["failures"] if key(case) in {key(row) for row in tests}]
    order = {key(row): i for i, row in enumerate(tests)}
    failures.sort(key=lambda case: (order[key(case)], case["case"]))
    return {**report, "tests": tests, "capabilities": capability_rows(tests), "failures": failures}


def filter_failures(
    failures: Sequence[dict], part: str = ALL, capability: str = ALL, test: str = ALL, search: str = ""
) -> list[dict]:
    """The failing cases of ``part``, ``capability`` and ``test`` (each ``ALL`` for any; ``test`` is "capability:
    name" or the name alone) with a text that holds ``search`` (case-insensitive), in their order."""
    needle = search.casefold().strip()
    return [
        case
        for case in failures
        if part in (ALL, case["part"])
        and capability in (ALL, case["capability"])
        and test in (ALL, case["test"], f"{case['capability']}: {case['test']}")
        and (not needle or any(needle in text.casefold() for text in case["texts"]))
    ]


def sort_failures(failures: Sequence[dict], order: str = SORTS[0]) -> list[dict]:
    """The cases in ``order`` (one of ``SORTS``): the worst miss first, the suite's own order, or by the lowest or
    highest P(positive) of their texts. Ties keep the suite's order.

    Raises:
        ValueError: an order not in ``SORTS``.
    """
    keys = {
        SORTS[0]: lambda case: -case["miss"],
        SORTS[1]: lambda case: 0,
        SORTS[2]: lambda case: min(case["probabilities"]),
        SORTS[3]: lambda case: -max(case["probabilities"]),
    }
    if order not in keys:
        raise ValueError(f"order must be one of {', '.join(SORTS)}; got {order!r}")
    return sorted(failures, key=keys[order])
