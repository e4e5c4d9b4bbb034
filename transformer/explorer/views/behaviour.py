"""Behaviour tab: the behavioural suite's results for the explorer's model (failure rates with counts, per
capability and per test), its failing cases in a table to filter and sort, and the ``/behaviour`` endpoint.

The report (``behaviour.report``) is read from ``behaviour.json`` next to the model when its hash is the model's
(``python -m transformer.artifacts`` writes it), else from the explorer's cache folder. A model with neither (a
retrained or user model) runs the suite on first open, once, with a progress bar; it needs no data folder, and the
report goes to the cache folder, never the model folder. One control runs any test's cases on the model live, and
the page's figures then use that run. Clicking a case's text opens it in the Attention tab, so the page address
holds it.
"""

from __future__ import annotations

import functools
import html

import gradio as gr

from ...behaviour import build_suite
from ...behaviour.report import ALL, SORTS, filter_failures, merge_reports, sort_failures
from .. import runner
from ..analysis import InputError
from ..corpus import model_files
from ..corpus.on_demand import ModelArtifact, compute_then_draw, model_identity, requested, run_request, time_note
from ..drawing.markup import table
from ..inputs import quoted, whole_number
from ..page import scripts
from ..registry import Drawing, Page, View, cancel_button

MAX_SHOWN = 500  # rows drawn in the table; the summary says how many match
DEFAULT_PART = "test"  # the part a recipe is reported on (the selection part tunes it)
COLUMNS = ["part", "capability", "test", "case", "expected", "P(positive)", "miss", "text"]
COLUMN_WIDTHS = ["95px", "130px", "170px", "70px", "120px", "120px", "80px", "auto"]
EXPECTED = {"invariance": "same class", "direction": "variant {expect}"}
_last_figures: list[tuple[dict, str] | None] = [None]  # the report drawn last and its figures' HTML
_last_rows: list[tuple[dict, dict] | None] = [None]  # the report drawn last and its cases' table rows


@functools.lru_cache(maxsize=1)
def suite() -> dict[str, object]:
    """Every test of the suite by its full name ("part / capability: test"), in the suite's order."""
    return {f"{test.part} / {test.capability}: {test.name}": test for test in build_suite()}


def suite_texts() -> list[str]:
    """Every text the whole suite reads, each once."""
    return list(dict.fromkeys(text for test in suite().values() for case in test.cases for text in case))


def build_behaviour(sha: str) -> dict:
    """The whole suite run on the loaded model (tqdm progress): its report."""
    loaded, _ = runner.get_model()
    return model_files.build_behaviour(loaded.model, loaded.tokenizer, sha)


REPORT = ModelArtifact(model_files.BEHAVIOUR_FILE, build_behaviour)  # behaviour.json, else the cache's, else run once


def run_live(name: str) -> dict:
    """The cases of the test named ``name`` ("part / capability: test") run on the model now: a report of it.

    Raises:
        InputError: a name that is not a test of the suite.
    """
    if name not in suite():
        raise InputError(f"Choose a test of the suite (e.g. {next(iter(suite()))}); got {quoted(name)}.")
    loaded, _ = runner.get_model()
    sha = model_identity()[1]
    return model_files.build_behaviour(loaded.model, loaded.tokenizer, sha or "unknown", [suite()[name]])


def with_live(report: dict, live: dict | None) -> dict:
    """``report`` with the tests run live in this session (``live``: full name -> that run's report) in place."""
    for run in (live or {}).values():
        report = merge_reports(report, run)
    return report


@functools.lru_cache(maxsize=3)
def choices(key: str) -> list[str]:
    """A filter's choices: ``ALL``, then every part, capability or test ("capability: test") of the suite."""
    values = {
        "part": (test.part for test in suite().values()),
        "capability": (test.capability for test in suite().values()),
        "test": (f"{test.capability}: {test.name}" for test in suite().values()),
    }[key]
    return [ALL, *dict.fromkeys(values)]


def check_filters(part, capability, test, search, order) -> tuple[str, str, str, str, str]:
    """The filters and the order as sent when the suite has them (a test named alone, "typos", as the suite names it,
    "robustness: typos"), else an ``InputError`` that says what is allowed."""
    test = (
        next((name for name in choices("test") if name.endswith(f": {test}")), test) if isinstance(test, str) else test
    )
    for key, value in (("part", part), ("capability", capability), ("test", test)):
        if value not in choices(key):
            allowed = ", ".join(choices(key)[:4])
            raise InputError(f"Choose a {key} of the suite ({allowed}, ...); got {quoted(value)}.")
    if order not in SORTS:
        raise InputError(f"Choose an order from {', '.join(SORTS)}; got {quoted(order)}.")
    if not isinstance(search, str):
        raise InputError(f"The search must be text; got {quoted(search)}.")
    return part, capability, test, search[:200], order


def picked_cases(report: dict, part=DEFAULT_PART, capability=ALL, test=ALL, search="", order=SORTS[0]) -> list:
    """The report's failing cases that pass the filters, in ``order`` (checked first)."""
    part, capability, test, search, order = check_filters(part, capability, test, search, order)
    return sort_failures(filter_failures(report["failures"], part, capability, test, search), order)


def expected(case: dict) -> str:
    """What a case's test expects, in a few words: its label reading, "same class", or "variant not down"."""
    return EXPECTED.get(case["kind"], "{expect}").format(expect=case["expect"])


def text_rows(case: dict) -> list[list]:
    """The table rows of one case, one per text: the text last, for the click to read."""
    head = [case["part"], case["capability"], case["test"], case["case"], expected(case)]
    return [[*head, p, case["miss"], text] for text, p in zip(case["texts"], case["probabilities"], strict=True)]


def case_rows(cases: list[dict], report: dict | None = None) -> list[list]:
    """The cases' rows, at most ``MAX_SHOWN``; with ``report``, each case's rows are made once for that report."""
    made = _rows_made(report) if report is not None else {}
    rows = []
    for case in cases:
        if id(case) not in made:
            made[id(case)] = text_rows(case)
        rows.extend(made[id(case)])
        if len(rows) >= MAX_SHOWN:
            break
    return rows[:MAX_SHOWN]  # the rows are shared between draws: nothing changes them


def _rows_made(report: dict) -> dict:
    """The rows made so far for ``report``'s cases, by case (kept for the last report drawn)."""
    last = _last_rows[0]
    if last is None or last[0] is not report:
        last = _last_rows[0] = (report, {})
    return last[1]


def rate(row: dict) -> str:
    return f"{row['failed']} of {row['cases']} ({row['failure_rate']:.1%})"


def figures_html(report: dict) -> str:
    """Two tables: per capability (cases failed of all, the pooled rate and the mean of its tests' rates, as
    ``metrics.json`` keeps it), then per test; every cell escaped."""
    capabilities = table(
        ["part", "capability", "tests", "cases failed", "mean over its tests"],
        [
            [r["part"], r["capability"], r["tests"], rate(r), f"{r['mean_test_rate']:.1%}"]
            for r in report["capabilities"]
        ],
    )
    tests = table(
        ["part", "capability", "test", "kind", "expects", "cases failed"],
        [
            [r["part"], r["capability"], r["test"], r["kind"], r["expect"] or "same class", rate(r)]
            for r in report["tests"]
        ],
    )
    return (
        f"<h4>Per capability</h4><div class='behaviour-figures'>{capabilities}</div>"
        f"<details><summary>Per test ({len(report['tests'])} tests)</summary>"
        f"<div class='behaviour-figures'>{tests}</div></details>"
    )


def drawn_figures(report: dict) -> str:
    """``figures_html`` of ``report``, kept for the last report drawn (the stored one, on every opening)."""
    last = _last_figures[0]
    if last is None or last[0] is not report:
        last = _last_figures[0] = (report, figures_html(report))  # one assignment: a reader sees a whole pair
    return last[1]


def behaviour_summary(
    report: dict | None, matching: int | None = None, live: dict | None = None, texts: int = 0
) -> str:
    """Where the figures come from, how many cases fail, how many match the filters; or that the suite runs now."""
    if report is None:
        note = time_note("the behavioural suite", suite_texts())
        return "<p>No behaviour report for this model yet: running the suite on it now" + (
            ".</p>" + note if note else " (a few seconds).</p>"
        )
    failed = sum(row["failed"] for row in report["tests"])
    cases = sum(row["cases"] for row in report["tests"])
    runs = f" Run live here: {html.escape(', '.join(live))}." if live else ""
    listed = "" if matching is None else f" {matching} failing cases match the filters."
    listed += f" The first {MAX_SHOWN} of their {texts} texts are listed." if texts > MAX_SHOWN else ""
    return (
        f"<p>The behavioural suite on this model: {len(report['tests'])} tests, {failed} of {cases} cases fail "
        f"({report['texts']} texts read, {report['seconds']:.1f} s).{runs}{listed} Click a text to open it in the "
        "explorer.</p>"
    )


FILTERS = ("part", "capability", "test")


def listed_choices(chosen: tuple = (None, None, None)) -> tuple:
    """The filters' and the live test's choices, sent with the tab's draw rather than in the page's configuration
    (the tests' list is 30 KB); a filter's value only where ``chosen`` sets one (``registry.kept_control``)."""
    filters = [
        gr.update(choices=choices(key)) if value is None else gr.update(choices=choices(key), value=value)
        for key, value in zip(FILTERS, chosen, strict=True)
    ]
    return *filters, gr.update(choices=list(suite()))


def show_behaviour(part, capability, test, search, order, live) -> tuple:
    """(summary, figures, table rows, the hidden box, the filters' and the live test's choices): no report yet sets
    the box to a new ``run_request``, which runs the suite."""
    report = REPORT.current()
    if report is None:
        return behaviour_summary(None), "", None, run_request(), *listed_choices()
    report = with_live(report, live)
    with runner.clear_errors("Cannot filter the cases"):
        cases = picked_cases(report, part, capability, test, search or "", order)
    texts = sum(len(case["texts"]) for case in cases)
    drawn = behaviour_summary(report, len(cases), live, texts), drawn_figures(report), case_rows(cases, report), ""
    return *drawn, *listed_choices()


def compute_and_show(needed, part, capability, test, search, order, live):
    """The hidden box's change to a ``run_request``: run the suite (only if there is no report yet; the page draws
    its tqdm bar as a progress bar), then draw. Any other change (its clearing) draws nothing."""
    return compute_then_draw(REPORT, needed, show_behaviour, (part, capability, test, search, order, live), 8)


def run_and_show(name, search, order, live):
    """The live control: run one test's cases now (the page draws its tqdm bar as a progress bar), show its
    figures, and filter the table to it."""
    with runner.clear_errors("Cannot run this test"):
        run = run_live(name)
    live = {**(live or {}), name: run}
    row = run["tests"][0]
    chosen = row["part"], row["capability"], f"{row['capability']}: {row['test']}"
    drawn = show_behaviour(*chosen, search, order, live)[:4]
    said = f"<p>{html.escape(name)}, run now: {rate(row)} fail.</p>"
    return said, *drawn, *listed_choices(chosen), live


def picked_text(event: gr.SelectData) -> str:
    """The text of the clicked row, or "" for anything else."""
    row = event.row_value if isinstance(event.row_value, list) else []
    return str(row[-1]) if len(row) == len(COLUMNS) and isinstance(row[-1], str) else ""


def behaviour(
    part: str = DEFAULT_PART,
    capability: str = ALL,
    test: str = ALL,
    search: str = "",
    sort: str = SORTS[0],
    limit: int = 100,
) -> dict:
    """The behavioural suite's results for the explorer's model: failure rates with counts per capability and per
    test, and the failing cases (run on first use when no behaviour.json was made for these weights).

    Args:
        part: "all", "selection" or "test" (the part a recipe is reported on), for the failing cases.
        capability: "all" or one capability ("negation", "contrast", "robustness", "identity", ...).
        test: "all" or one test, "capability: name" or the name alone ("robustness: typos", "typos").
        search: only cases with a text that contains this (case-insensitive).
        sort: "worst first" (by miss), "suite order", "P(positive), lowest first" or "P(positive), highest first".
        limit: at most this many failing cases (1 to 5000).

    Returns:
        {"model_sha256", "parts", "capabilities": [{"part", "capability", "tests", "cases", "failed", "failure_rate"
        (failed / cases), "mean_test_rate"}], "tests": [{"part", "capability", "test", "kind", "expect", "cases",
        "failed", "failure_rate"}], "matching": how many cases match, "failures": [{"part", "capability", "test",
        "kind", "expect", "case" (from 0), "texts", "probabilities" (P(positive) of each text), "miss" (how far
        from passing)}, ...]}.
    """
    report = REPORT.compute()
    with runner.clear_errors("Cannot filter the cases"):
        limit = whole_number(limit, "Limit", 1, 5000)
        cases = picked_cases(report, part, capability, test, search, sort)
    kept = ("model_sha256", "parts", "capabilities", "tests")
    return {**{key: report[key] for key in kept}, "matching": len(cases), "failures": cases[:limit]}


def dropdown(key: str, label: str, value: str = ALL) -> gr.Dropdown:
    """A filter holding ``value`` alone until the tab's draw sends its choices (``listed_choices``).
    allow_custom_value: checked by check_filters, which never echoes a deep link's markup."""
    return gr.Dropdown([value], value=value, label=label, allow_custom_value=True, elem_id=f"behaviour-{key}")


def layout(page: Page) -> Drawing:
    gr.Markdown(
        "Where the model fails: the behavioural suite (negation, contrast, typos, names, identity terms ...) on this "
        "model, and every failing case. A case's *miss* is how far its P(positive) is from passing."
    )
    summary = gr.HTML(elem_id="behaviour-summary")
    cancel = cancel_button("behaviour")
    figures = gr.HTML(elem_id="behaviour-figures", elem_classes="explain-html")  # compact cells, as the other tables
    with gr.Row():
        filters = [
            dropdown("part", "Part", DEFAULT_PART),
            dropdown("capability", "Capability"),
            dropdown("test", "Test"),
        ]
        search = gr.Textbox(
            label="Text contains", placeholder="press Enter to search", max_length=200, elem_id="behaviour-search"
        )
        order = gr.Dropdown(list(SORTS), value=SORTS[0], label="Order", elem_id="behaviour-order")
    cases = gr.Dataframe(
        headers=COLUMNS,
        datatype=["str", "str", "str", "number", "str", "number", "number", "str"],
        interactive=False,
        wrap=True,
        column_widths=COLUMN_WIDTHS,
        label="Failing cases, one row per text (sort from a column's menu; click a text to open it)",
        elem_id="behaviour-table",
    )
    with gr.Row():
        first = next(n for n in suite() if n.startswith(DEFAULT_PART))  # the rest come with the draw
        name = gr.Dropdown([first], value=first, label="Run a test live", elem_id="behaviour-name")
        run = gr.Button("Run this test on the model now", elem_id="behaviour-run")
    said = gr.HTML(elem_id="behaviour-live")
    live = gr.State()
    needed = gr.Textbox(visible="hidden", elem_id="behaviour-needed")
    clicked = gr.Textbox(visible=False, elem_id="behaviour-clicked")
    inputs, outputs = [*filters, search, order, live], [summary, figures, cases, needed, *filters, name]
    cases.select(picked_text, None, clicked, api_visibility="private").then(
        None, clicked, None, js=scripts.call("openText"), api_visibility="private"
    )
    triggers = [*(f.input for f in filters), search.submit, order.input]
    computes = [
        Drawing(compute_and_show, [needed, *inputs], outputs, [needed.change], starts=requested),
        Drawing(run_and_show, [name, search, order, live], [said, *outputs, live], [run.click]),
    ]
    return Drawing(show_behaviour, inputs, outputs, triggers, computes=computes, cancel=cancel)


VIEW = View("behaviour", "Behaviour", layout, endpoints={"behaviour": behaviour}, colour_scale=False)
