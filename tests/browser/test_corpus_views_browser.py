"""The Head-atlas and Errors tabs in Chromium: a head's row opens it in the Attention tab, an error's row opens
its sentence, and the page address follows both; and, with these files every tab draws its figures, on a phone no
figure's title sits under plotly's toolbar. The tiny model gets its files from a tiny data folder."""

from urllib.parse import parse_qs, urlparse

import gradio as gr
import pytest
from conftest import serving_app
from tiny import write_gz

from transformer.explorer.corpus import data_folder as corpus
from transformer.explorer.corpus import model_files as artifacts
from transformer.explorer.views import errors, head_atlas

pytestmark = [
    pytest.mark.served,
    pytest.mark.browser,  # ``browser`` and ``page`` (tests/conftest.py) skip where Chromium is missing
    pytest.mark.filterwarnings("ignore:'future.no_silent_downcasting' is deprecated"),  # gradio's queue and pandas 3
    pytest.mark.filterwarnings("ignore:The copy keyword is deprecated"),
]


@pytest.fixture(scope="module")
def url(app, tmp_path_factory):
    """The app with head_atlas.json and errors.json written next to its tiny model, served as ``app.main`` serves
    it (its phone layout too)."""
    data = tmp_path_factory.mktemp("corpus")
    (data / "sst2").mkdir()
    lines = ["a charming and often affecting journey .", "the movie is n't funny", "a wonderful film", "dull"]
    (data / "sst2" / "glue_dev.tsv").write_text(
        "sentence\tlabel\n" + "".join(f"{text}\t{i % 2}\n" for i, text in enumerate(lines)), encoding="utf-8"
    )
    for name in ("yelp", "pros_cons", "tweets"):
        write_gz(data / name / "dev.tsv.gz", [(f"the {name} was great , and dull {i}", i % 2) for i in range(6)])
    loaded = app.get_model()[0]
    sha = artifacts.model_hash(loaded.folder)
    sets = corpus.dev_sets(data)
    built = artifacts.build_atlas(loaded.model, loaded.tokenizer, corpus.reference_corpus(sets, 12), sha)
    artifacts.write_artifact(loaded.folder, artifacts.ATLAS_FILE, built)
    artifacts.write_artifact(
        loaded.folder, artifacts.ERRORS_FILE, artifacts.build_errors(loaded.model, loaded.tokenizer, sets, sha)
    )
    head_atlas.ATLAS.forget()
    errors.ERRORS.forget()
    with serving_app(app) as served:
        yield served


def query(page) -> dict:
    return parse_qs(urlparse(page.evaluate("() => window.location.href")).query)


def test_clicking_a_head_in_the_atlas_opens_it_in_the_attention_tab(page, url):
    page.goto(f"{url}?text=a wonderful film&view=head-atlas")
    page.wait_for_function("() => document.querySelector('#atlas-table')?.textContent.includes('L2 H2')")
    assert "Role rule" in page.locator("#atlas-summary").text_content()
    page.locator("#atlas-table").get_by_text("L2 H2", exact=True).click()
    page.wait_for_function(
        "() => document.querySelector('#attention-heatmap')?.textContent.includes('Layer 2, head 2')"
    )
    assert page.get_by_role("tab", name="Attention").get_attribute("aria-selected") == "true"
    page.wait_for_function("() => new URL(location.href).searchParams.get('head') === '2'")
    assert query(page)["layer"] == ["2"] and query(page)["text"] == ["a wonderful film"]


def test_clicking_an_error_opens_its_sentence_and_the_address_holds_it(page, url):
    page.goto(f"{url}?view=errors")
    page.wait_for_function("() => document.querySelector('#errors-summary')?.textContent.includes('Wrong predictions')")
    first = errors.ERRORS.current()["errors"][0]["text"]
    page.locator("#errors-table").get_by_text(first, exact=True).first.click()
    page.wait_for_function("(t) => document.querySelector('#sentence textarea').value === t", arg=first)
    page.wait_for_function("(t) => new URL(location.href).searchParams.get('text') === t", arg=first)
    page.wait_for_function(
        "(w) => document.querySelector('#attention-heatmap')?.textContent.includes(w)", arg=first.split()[0]
    )
    assert page.get_by_role("tab", name="Attention").get_attribute("aria-selected") == "true"


def plots_by_tab(app) -> dict[str, list[str]]:
    """{tab title: the element ids of the plotly figures in that tab}, read from the page's layout."""

    def walk(block, tab, found):
        for child in getattr(block, "children", None) or []:
            inner = child if isinstance(child, gr.Tab) else tab
            if isinstance(child, gr.Plot) and inner is not None:
                found.setdefault(inner.label, []).append(child.elem_id)
            walk(child, inner, found)
        return found

    return walk(app.demo, None, {})


TOOLBAR_AND_TITLE = """(id) => {
    const plot = document.querySelector(`#${id} .js-plotly-plot`);
    const box = (e) => e ? e.getBoundingClientRect().toJSON() : null;
    const title = [...plot.querySelectorAll('.gtitle')].find((t) => t.textContent.trim());
    return {modebar: box(plot.querySelector('.modebar')), title: box(title), text: title?.textContent ?? null};
}"""


def settled(page, plot: str) -> dict:
    """The toolbar's and the title's boxes once two readings 0.3 s apart agree (the phone layout may redraw)."""
    page.locator(f"#{plot} .js-plotly-plot svg.main-svg").first.wait_for()
    last, now = None, page.evaluate(TOOLBAR_AND_TITLE, plot)
    while now != last:
        page.wait_for_timeout(300)
        last, now = now, page.evaluate(TOOLBAR_AND_TITLE, plot)
    return now


def intersect(a: dict, b: dict, slack: float = 1) -> bool:
    """Whether boxes ``a`` and ``b`` overlap by more than ``slack`` pixels each way (touching is not overlapping)."""
    across = min(a["right"], b["right"]) - max(a["left"], b["left"])
    down = min(a["bottom"], b["bottom"]) - max(a["top"], b["top"])
    return across > slack and down > slack


def shown(box: dict) -> str:
    return "({left:.1f}, {top:.1f}, {right:.1f}, {bottom:.1f})".format(**box)


TABLE_FIT = """(id) => {
    const table = document.querySelector(`#${id} table`);
    if (!table) return {missing: document.querySelector(`#${id}`)?.innerHTML.slice(0, 3000)};
    const scroller = [table.parentElement, table.parentElement?.parentElement, table.closest(".table-container")]
        .find((element) => element && element.scrollWidth > element.clientWidth
            && ["auto", "scroll"].includes(getComputedStyle(element).overflowX));
    const headers = [...table.querySelectorAll("thead th")].map((th) => {
        const text = th.innerText.trim();
        const probe = document.createElement("span");  // the header's longest word on one line, in its font
        probe.style.cssText = `font: ${getComputedStyle(th).font}; white-space: nowrap; position: absolute;`;
        probe.textContent = text.split(/\\s+/).sort((a, b) => b.length - a.length)[0] || "";
        document.body.append(probe);
        const word = probe.getBoundingClientRect().width;
        probe.remove();
        return {text, width: th.getBoundingClientRect().width, word};
    });
    return {
        pageWidth: document.documentElement.scrollWidth, viewport: window.innerWidth,
        tableWidth: table.scrollWidth, box: table.parentElement.getBoundingClientRect().width,
        scrolls: Boolean(scroller), headers,
    };
}"""


@pytest.mark.parametrize("width", [1280, 390], ids=["desktop", "phone"])
def test_the_atlas_and_errors_tables_keep_every_column_and_whole_header_words(browser, url, width):
    """A table wider than its box scrolls inside it (its last column is reachable) and the page does not scroll
    sideways; no header breaks inside a word ("confidence" was cut to "confiden / ce")."""
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.set_default_timeout(60_000)
    try:
        for view, table, ready in [("head-atlas", "atlas-table", "L2 H2"), ("errors", "errors-table", "confidence")]:
            page.goto(f"{url}?text=a wonderful film&view={view}")
            page.wait_for_function(
                "([id, word]) => document.querySelector(`#${id}`)?.textContent.includes(word)", arg=[table, ready]
            )
            fit = page.evaluate(TABLE_FIT, table)
            assert fit["pageWidth"] <= fit["viewport"] + 1, (view, fit)  # the page itself never scrolls sideways
            assert fit["tableWidth"] <= fit["box"] + 1 or fit["scrolls"], (view, fit)  # else its columns are lost
            assert fit["headers"], (view, fit)
            for header in fit["headers"]:
                assert header["width"] + 1 >= header["word"], (view, header)  # the longest word fits on one line
    finally:
        context.close()


def test_no_figure_title_sits_under_the_plotly_toolbar_on_a_phone(browser, url, app):
    """On a phone the titles move under the toolbar (``phone.js``): on each tab with a figure, opened with its
    tab button, no figure's title box meets its toolbar's (shown on hover, over the top right corner), titles
    broken onto two lines included."""
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    page.set_default_timeout(60_000)
    measured, covered = {}, {}
    try:
        page.goto(f"{url}?text=a wonderful film")
        page.locator("#attention-heatmap svg.main-svg").first.wait_for()
        page.wait_for_function("() => window.explorer?.addressRead === true")
        tabs = plots_by_tab(app)
        assert len(tabs) >= 10, tabs  # every tab with a figure (only Export and Errors have none)
        for title, plots in tabs.items():
            page.get_by_role("tab", name=title, exact=True).click()
            if title == "Patching":  # its example pairs line up on the bundled tokenizer, not on the tiny one
                page.locator("#patching-a textarea").fill("the film was dull .")
                page.locator("#patching-b textarea").fill("the film was good .")
                page.locator("#patching-button").click()
            for index, plot in enumerate(plots):
                if index and not page.locator(f"#{plot}").is_visible():
                    continue  # hidden by the tab's draw, which drew its first (Training's two without training.json)
                measured[plot] = boxes = settled(page, plot)
                if boxes["modebar"] and boxes["title"] and intersect(boxes["modebar"], boxes["title"]):
                    covered[plot] = f"{title}: #{plot}: toolbar {shown(boxes['modebar'])}, title " + (
                        f"{shown(boxes['title'])} {boxes['text']!r}"
                    )
    finally:
        context.close()
    assert sum(bool(boxes["title"]) for boxes in measured.values()) > len(measured) / 2  # titles were measured
    report = "titles under the toolbar, boxes (left, top, right, bottom) px:\n" + "\n".join(covered.values())
    assert not covered, report
