"""The Behaviour tab's logic: the suite's report (misses, counts, merging a live run), its filters and orders, the
report read from behaviour.json only when made for these weights and else computed once into the cache, the live
run, the ``/behaviour`` endpoint, and the bundled model's behaviour.json."""

import inspect
import json
import os
import zlib
from pathlib import Path

import gradio as gr
import pytest
from conftest import without_artifact

from transformer.artifacts import main as write_artifacts
from transformer.behaviour import build_suite, run_suite
from transformer.behaviour.report import (
    SORTS,
    build_report,
    filter_failures,
    merge_reports,
    miss,
    sort_failures,
)
from transformer.behaviour.run import case_fails
from transformer.behaviour.suite import Test as SuiteTest
from transformer.explorer import views
from transformer.explorer.analysis import InputError
from transformer.explorer.corpus import model_files as artifacts
from transformer.explorer.corpus.on_demand import RUN
from transformer.explorer.views import behaviour as view
from transformer.loading import DEFAULT_MODEL_DIR, load_model

pytestmark = pytest.mark.slow  # many seconds: left out of make test-fast

ANY = ("all", "all", "all", "", SORTS[0], None)  # every part, capability and test; no search; worst first; no live run


def label(expect: str) -> SuiteTest:
    return SuiteTest("t", "c", "label", "test", expect, (("x",),))


def test_a_miss_is_how_far_a_case_is_from_passing_and_zero_exactly_when_it_passes():
    assert miss(label("positive"), [0.3]) == pytest.approx(0.2) and miss(label("positive"), [0.7]) == 0
    assert miss(label("not negative"), [0.2]) == pytest.approx(1 / 3 - 0.2)
    assert miss(label("not positive"), [0.9]) == pytest.approx(0.9 - 2 / 3)
    invariance = SuiteTest("t", "c", "invariance", "test", None, (("a", "b"),))
    assert miss(invariance, [0.4, 0.7]) == pytest.approx(0.1) and miss(invariance, [0.6, 0.9]) == 0
    down = SuiteTest("t", "c", "direction", "test", "not down", (("a", "b"),))
    assert miss(down, [0.8, 0.6]) == pytest.approx(0.1) and miss(down, [0.8, 0.75]) == 0
    up = SuiteTest("t", "c", "direction", "test", "not up", (("a", "b"),))
    assert miss(up, [0.2, 0.5]) == pytest.approx(0.2)
    for test in build_suite(("test",))[::9]:  # on the real tests: a miss exactly where ``case_fails`` says
        for probs in ([0.1] * 6, [0.9] * 6, [0.1, 0.9, 0.5, 0.2, 0.8, 0.4], [0.9, 0.1, 0.4, 0.6, 0.3, 0.7]):
            probs = probs[: len(test.cases[0])]
            assert (miss(test, probs) > 0) == case_fails(test, probs), (test.name, probs)


@pytest.fixture(scope="module")
def report():
    """The whole suite on a rule model: P(positive) 0.9 for a text with "not" or "n't" in it or whose CRC-32
    is a multiple of 3 (a typo or a name can change that), else 0.2."""

    def rule(text: str) -> float:
        return 0.9 if "not" in text or "n't" in text or zlib.crc32(text.encode()) % 3 == 0 else 0.2

    results = run_suite(build_suite(), lambda texts: [rule(text) for text in texts])
    return {**build_report(results), "model_sha256": "rule", "texts": 1, "seconds": 0.0}


def test_the_report_counts_every_failing_case_per_test_and_capability(report):
    suite = build_suite()
    assert [(row["part"], row["test"]) for row in report["tests"]] == [(t.part, t.name) for t in suite]
    assert sum(row["failed"] for row in report["tests"]) == len(report["failures"]) > 0
    for row in report["tests"]:
        assert row["failure_rate"] == round(row["failed"] / row["cases"], 4)
    for row in report["capabilities"]:
        mine = [t for t in report["tests"] if (t["part"], t["capability"]) == (row["part"], row["capability"])]
        assert (row["tests"], row["cases"]) == (len(mine), sum(t["cases"] for t in mine))
        assert row["failed"] == sum(t["failed"] for t in mine)
    assert all(case["miss"] > 0 for case in report["failures"])  # every failing case misses by something
    assert json.loads(json.dumps(report)) == report


def test_the_filters_pick_by_part_capability_test_and_text(report):
    failures = report["failures"]
    typos = filter_failures(failures, "test", "robustness", "typos")
    assert typos and all((c["part"], c["capability"], c["test"]) == ("test", "robustness", "typos") for c in typos)
    assert filter_failures(failures, "test", test="robustness: typos") == typos  # the full name or the name alone
    assert filter_failures(failures, "selection", "robustness", "typos") != typos
    negation = filter_failures(failures, capability="negation")
    assert negation and {c["capability"] for c in negation} == {"negation"}
    assert {c["part"] for c in negation} == {"selection", "test"}
    found = filter_failures(failures, search="NOT")
    assert found and all(any("not" in t.casefold() for t in c["texts"]) for c in found)
    assert filter_failures(failures, "test", "identity", "typos") == []
    assert len(filter_failures(failures)) == len(failures)


def test_each_order_sorts_the_cases_and_keeps_the_suites_order_on_ties(report):
    failures = report["failures"]
    worst = sort_failures(failures, "worst first")
    assert [c["miss"] for c in worst] == sorted((c["miss"] for c in failures), reverse=True)
    assert worst[0]["miss"] == max(c["miss"] for c in failures)
    assert sort_failures(worst, "suite order") == worst  # ties everywhere: the order it was given
    assert sort_failures(failures, "suite order") == failures
    lowest = [min(c["probabilities"]) for c in sort_failures(failures, "P(positive), lowest first")]
    highest = [max(c["probabilities"]) for c in sort_failures(failures, "P(positive), highest first")]
    assert lowest == sorted(lowest) and highest == sorted(highest, reverse=True)
    with pytest.raises(ValueError, match="order must be one of"):
        sort_failures(failures, "<b>random</b>")


def test_the_view_checks_its_filters_and_says_what_is_allowed(report):
    rows = view.case_rows(view.picked_cases(report, "test", "robustness", "typos", "", "worst first"))
    assert rows and all(row[:3] == ["test", "robustness", "typos"] and len(row) == len(view.COLUMNS) for row in rows)
    assert [row[6] for row in rows] == sorted((row[6] for row in rows), reverse=True)
    assert len(view.case_rows(report["failures"])) == view.MAX_SHOWN < sum(len(c["texts"]) for c in report["failures"])
    for bad in [("<b>x</b>", "all", "all"), ("all", "<b>x</b>", "all"), ("all", "all", "typos <b>")]:
        with pytest.raises(InputError, match="Choose a") as raised:
            view.picked_cases(report, *bad)
        assert "<b>" not in str(raised.value)
    with pytest.raises(InputError, match="Choose an order"):
        view.picked_cases(report, order="shuffled")
    figures = view.figures_html({**report, "tests": [{**report["tests"][0], "test": "<b>bold</b>"}]})
    assert "<b>bold" not in figures and "&lt;b&gt;bold" in figures


def test_a_live_run_replaces_its_tests_figures_and_cases_and_the_capabilities_are_counted_again(report):
    typos = next(row for row in report["tests"] if (row["part"], row["test"]) == ("test", "typos"))
    live_row = {**typos, "failed": 0, "failure_rate": 0.0}
    merged = merge_reports(report, {"tests": [live_row], "failures": []})
    assert live_row in merged["tests"] and len(merged["tests"]) == len(report["tests"])
    assert filter_failures(merged["failures"], "test", "robustness", "typos") == []
    robustness = next(r for r in merged["capabilities"] if (r["part"], r["capability"]) == ("test", "robustness"))
    before = next(r for r in report["capabilities"] if (r["part"], r["capability"]) == ("test", "robustness"))
    assert robustness["failed"] == before["failed"] - typos["failed"]
    assert len(merged["failures"]) == len(report["failures"]) - typos["failed"]


def test_the_tab_comes_after_errors_and_its_endpoint_is_named_as_its_function():
    assert [v.id for v in views.VIEWS][-2:] == ["errors", "behaviour"]
    assert view.VIEW.title == "Behaviour" and view.VIEW.endpoints == {"behaviour": view.behaviour}


# --- the report of the explorer's model: stored, computed, live ---------------------------------------------------


@pytest.fixture
def fresh_report(app, tmp_path, monkeypatch):
    """The app's model folder with no report kept, stored or read yet, and a cache folder of this test's own."""
    with without_artifact(view.REPORT, app.get_model()[0].folder, tmp_path / "cache", monkeypatch) as folder:
        yield folder


def counting_builds(monkeypatch) -> list:
    """The list grows by one per ``build_behaviour`` call (each still runs)."""
    calls, build = [], artifacts.build_behaviour
    monkeypatch.setattr(artifacts, "build_behaviour", lambda *args, **kwargs: calls.append(1) or build(*args, **kwargs))
    return calls


def a_new_process():
    view.REPORT.forget()


def test_a_model_without_behaviour_json_runs_the_suite_on_first_open_into_the_cache(fresh_report, monkeypatch):
    builds = counting_builds(monkeypatch)
    before = sorted(path.name for path in fresh_report.iterdir())
    summary, figures, rows, needed, *listed = view.show_behaviour(*ANY)
    assert "running the suite" in summary and rows is None and needed.split()[0] == RUN and not builds  # the tab's draw
    assert listed == list(view.listed_choices())  # the lists come with the first draw, before the suite has run
    assert view.compute_and_show("", *ANY) == (gr.skip(),) * 8  # the hidden box cleared: nothing runs
    summary, figures, rows, needed, *_ = view.compute_and_show(needed, *ANY)  # its change to the request, with the bar
    assert len(builds) == 1 and needed == "" and rows and "Per capability" in figures
    assert f"{len(build_suite())} tests" in summary
    assert sorted(path.name for path in fresh_report.iterdir()) == before  # nothing written next to the model
    sha = artifacts.model_hash(fresh_report)
    cached = artifacts.cache_folder(sha) / artifacts.BEHAVIOUR_FILE
    assert cached.parent == Path(os.environ[artifacts.CACHE_VARIABLE]) / sha
    a_new_process()
    assert view.REPORT.current() == json.loads(cached.read_text(encoding="utf-8"))  # a restart reads the cache
    view.compute_and_show(RUN, *ANY)
    assert view.show_behaviour(*ANY)[3] == "" and len(builds) == 1  # computed once


def test_a_stale_behaviour_json_is_ignored_and_a_current_one_is_read_first(fresh_report, monkeypatch):
    builds = counting_builds(monkeypatch)
    sha = artifacts.model_hash(fresh_report)
    stale = {"model_sha256": "0" * 64, "tests": [], "capabilities": [], "failures": [], "parts": []}
    artifacts.write_artifact(fresh_report, artifacts.BEHAVIOUR_FILE, stale)
    assert view.REPORT.current() is None and view.show_behaviour(*ANY)[3].split()[0] == RUN
    computed = view.behaviour()  # the endpoint runs the suite when there is no report
    assert computed["model_sha256"] == sha and len(builds) == 1
    bundled = {**view.REPORT.current(), "texts": 7}  # what the artifacts command writes next to the model
    artifacts.write_artifact(fresh_report, artifacts.BEHAVIOUR_FILE, bundled)
    a_new_process()
    assert view.REPORT.current() == bundled and len(builds) == 1


def test_the_endpoint_answers_with_the_figures_and_the_filtered_cases(fresh_report):
    answer = view.behaviour(part="all", limit=5)
    assert set(answer) == {"model_sha256", "parts", "capabilities", "tests", "matching", "failures"}
    assert len(answer["tests"]) == len(build_suite()) and len(answer["failures"]) == min(5, answer["matching"])
    assert json.loads(json.dumps(answer)) == answer
    typos = view.behaviour(test="typos", sort="suite order", limit=5000)
    assert all(c["test"] == "typos" and c["part"] == "test" for c in typos["failures"])
    assert typos["failures"] == view.behaviour(test="robustness: typos", sort="suite order", limit=5000)["failures"]
    for bad in [{"part": "<b>all</b>"}, {"sort": "best"}, {"limit": 0}, {"test": "no such test"}]:
        with pytest.raises(gr.Error) as raised:
            view.behaviour(**bad)
        assert raised.value.print_exception is False and "<b>" not in raised.value.message


def test_the_live_control_runs_one_test_and_the_page_then_uses_its_figures(fresh_report):
    view.compute_and_show(RUN, *ANY)
    worst = max(view.REPORT.current()["tests"], key=lambda row: row["failed"])  # the tiny model's worst test
    name, full = f"{worst['part']} / {worst['capability']}: {worst['test']}", f"{worst['capability']}: {worst['test']}"
    said, summary, _, rows, _, *filters, names, live = view.run_and_show(name, "", SORTS[0], None)
    part, capability, test = (update["value"] for update in filters)  # the filters set to the test run
    assert (part, capability, test) == (worst["part"], worst["capability"], full) and set(live) == {name}
    assert names == gr.update(choices=list(view.suite()))
    assert live[name]["tests"] == [worst]  # the same model: the same figures as the whole suite's run
    assert f"{worst['failed']} of {worst['cases']}" in said and "run now" in said
    assert rows and all(r[:3] == [worst["part"], worst["capability"], worst["test"]] for r in rows)
    assert f"Run live here: {name}" in summary
    assert view.show_behaviour(part, capability, test, "", SORTS[0], live)[2] == rows
    with pytest.raises(gr.Error, match="Choose a test of the suite"):
        view.run_and_show("<b>no</b>", "", SORTS[0], None)


def test_the_artifacts_command_writes_behaviour_json_for_the_weights(tiny_model_dir, tiny_data_dir):
    write_artifacts(["--model", str(tiny_model_dir), "--data-dir", str(tiny_data_dir), "--sentences", "10"])
    sha = artifacts.model_hash(tiny_model_dir)
    written = artifacts.read_artifact(tiny_model_dir, artifacts.BEHAVIOUR_FILE, sha)
    assert written["model_sha256"] == sha and len(written["tests"]) == len(build_suite())


def test_the_bundled_behaviour_json_is_the_bundled_models_and_matches_the_command():
    """assets/model/behaviour.json was made for these weights (re-run ``make artifacts`` after training), and its
    counts are those of ``python -m transformer.behaviour``'s scoring: that the shipped file is current. It is no test
    of the suite or its scoring (``make artifacts`` would refresh it to any bug): tests/behaviour/ are."""
    from transformer.training.scoring import positive_probabilities

    sha = artifacts.model_hash(DEFAULT_MODEL_DIR)
    for name in (artifacts.ATLAS_FILE, artifacts.ERRORS_FILE, artifacts.BEHAVIOUR_FILE):
        assert artifacts.read_artifact(DEFAULT_MODEL_DIR, name, sha) is not None, f"{name} is stale or missing"
    bundled = artifacts.read_artifact(DEFAULT_MODEL_DIR, artifacts.BEHAVIOUR_FILE, sha)
    loaded = load_model(DEFAULT_MODEL_DIR, device="cpu")
    results = run_suite(build_suite(), positive_probabilities(loaded.model, loaded.tokenizer))
    assert [row["failed"] for row in bundled["tests"]] == [len(result.failed) for result in results]


def test_the_first_open_and_the_live_run_show_a_progress_bar_of_the_suite(app):
    """The hidden box's change and the live button run the suite with ``gr.Progress(track_tqdm=True)``: Gradio
    draws its progress bar from the suite's tqdm bar."""
    found = {fn.name: fn for fn in app.demo.fns.values() if view.VIEW.id in getattr(inspect.unwrap(fn.fn), "args", ())}
    found = {name: found[name] for name in found.keys() & {"compute_and_show", "run_and_show"}}
    assert set(found) == {"compute_and_show", "run_and_show"}
    for fn in found.values():
        assert fn.tracks_progress and fn.api_visibility == "private" and fn.queue


def test_the_long_lists_are_not_in_the_page_configuration(app):
    """Issue 54: the tests' lists (30 KB of the page's configuration) come with the tab's draw instead."""
    config = app.demo.get_config_file()
    listed = {
        c["props"].get("elem_id"): c["props"]["choices"] for c in config["components"] if c.get("type") == "dropdown"
    }
    for elem_id in ("behaviour-part", "behaviour-capability", "behaviour-test", "behaviour-name"):
        assert len(listed[elem_id]) == 1, elem_id
    assert len(view.suite()) > 50  # what the lists would hold
