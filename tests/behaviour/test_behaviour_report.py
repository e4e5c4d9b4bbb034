"""The behavioural report's tables (transformer.behaviour.report), on hand-made results whose figures are worked out
by hand: a test's row, a capability's pooled rate and the mean of its tests' rates, and the failing cases."""

import pytest

from transformer.behaviour import run
from transformer.behaviour.report import build_report, capability_rows
from transformer.behaviour.suite import Test as SuiteTest


def row(capability: str, cases: int, failed: int, part: str = "test") -> dict:
    return {"part": part, "capability": capability, "cases": cases, "failed": failed,
            "failure_rate": round(failed / cases, 4)}  # fmt: skip


def test_a_capability_pools_its_cases_and_means_its_tests_rates():
    # "c": 0 of 10, 0 of 10, 2 of 2 (pooled 2 / 22, mean of rates 1 / 3, their median 0); "d" in another part.
    rows = [row("c", 10, 0), row("c", 10, 0), row("d", 4, 1, part="selection"), row("c", 2, 2)]
    found = {(r["part"], r["capability"]): r for r in capability_rows(rows)}
    assert list(found) == [("test", "c"), ("selection", "d")]  # in the tests' order
    c = found["test", "c"]
    assert (c["tests"], c["cases"], c["failed"]) == (3, 22, 2)
    assert c["failure_rate"] == pytest.approx(2 / 22, abs=1e-4)
    assert c["mean_test_rate"] == pytest.approx(1 / 3, abs=1e-4)
    d = found["selection", "d"]
    assert (d["tests"], d["cases"], d["failed"], d["failure_rate"], d["mean_test_rate"]) == (1, 4, 1, 0.25, 0.25)


def test_the_report_of_hand_made_results():
    positive = SuiteTest("pos", "vocabulary", "label", "test", "positive", (("a",), ("b",), ("c",)))
    same = SuiteTest("typos", "robustness", "invariance", "test", None, (("d", "e"), ("f", "g")))
    results = [
        run.TestResult(positive, ((0.9,), (0.3,), (0.45,)), (1, 2)),
        run.TestResult(same, ((0.2, 0.6), (0.7, 0.8)), (0,)),
    ]
    report = build_report(results)
    assert report["parts"] == ["test"]
    assert [(r["test"], r["cases"], r["failed"], r["failure_rate"]) for r in report["tests"]] == [
        ("pos", 3, 2, round(2 / 3, 4)),
        ("typos", 2, 1, 0.5),
    ]
    misses = [(case["test"], case["case"], case["texts"], case["miss"]) for case in report["failures"]]
    # a label case misses by its distance to 0.5; an invariance case by the smaller overhang past 0.5 (0.1 of 0.2, 0.6)
    assert misses == [("pos", 1, ["b"], 0.2), ("pos", 2, ["c"], 0.05), ("typos", 0, ["d", "e"], 0.1)]
    assert [(r["capability"], r["mean_test_rate"]) for r in report["capabilities"]] == [
        ("vocabulary", round(2 / 3, 4)),
        ("robustness", 0.5),
    ]
