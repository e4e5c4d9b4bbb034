"""The page on a phone (390 × 844) in Chromium, every tab after the clicks that fill its tables (issue 35, item 4):
each table fits the width or scrolls inside a box of its own that does, and the page never scrolls sideways; the
Head atlas's grid goes to two columns, its titles apart."""

import contextlib
import json

import pytest
import torch
from conftest import TIMEOUT_MS, open_view

from transformer.explain.agreement import METHODS
from transformer.explain.atlas import BEHAVIOURS
from transformer.explain.faithfulness import PERCENTS, RANDOM_SEEDS, Faithfulness
from transformer.explorer import analysis, runner
from transformer.explorer.drawing.erasure import faithfulness_figure
from transformer.explorer.views.head_atlas import atlas_figure
from transformer.explorer.views.positional_encoding import positional_curves

pytestmark = [pytest.mark.browser, pytest.mark.served]
SETTLED = "() => window.explorer?.addressRead === true"

# Every table and figure shown in the views that reaches past the page's width, unless inside a box of its own that
# scrolls sideways (overflow auto or scroll) and itself fits; and how wide the document is.
CUT_OFF = """() => {
    const width = document.documentElement.clientWidth;
    const scrolls = (e) => ["auto", "scroll"].includes(getComputedStyle(e).overflowX);
    const cut = [];
    for (const e of document.querySelectorAll("#views :is(table, .table-container, .js-plotly-plot, .prose)")) {
        if (!e.offsetParent) continue;
        let box = e;
        while (box && box !== document.body && !scrolls(box)) box = box.parentElement;
        const scroller = box && box !== document.body ? box : null;
        const right = (scroller || e).getBoundingClientRect().right;
        const name = `${e.tagName}.${String(e.className).slice(0, 40)}`;
        if (right > width + 1) cut.push(`${name} reaches ${Math.round(right)}`);
    }
    return {cut, documentWidth: document.documentElement.scrollWidth, width};
}"""


def fill_tables(page, view: str) -> None:
    """The clicks after which ``view``'s tables hold their rows (the others are filled when the tab opens)."""
    if view == "knockout":
        page.locator("#views label", has_text="L1 H1").first.click()
    tables = {  # the HTML tables each view draws (Behaviour's per-capability tables among them)
        "knockout": "#knockout-summary table",
        "perturb": "#perturb-summary table",
        "compare": "#compare-summary table",
        "behaviour": "#behaviour-summary table, #behaviour-figures table",
    }
    if view in tables:
        page.wait_for_function("(selector) => document.querySelector(selector)?.offsetParent", arg=tables[view])


def test_on_a_phone_every_table_fits_or_scrolls_in_its_own_box(browser, url):
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    try:
        page.goto(url)
        page.wait_for_function(SETTLED)
        views = page.evaluate("() => [...document.querySelectorAll('#views [data-tab-id]')].map(b => b.dataset.tabId)")
        cut = {}
        for view in views:
            open_view(page, view)
            page.wait_for_timeout(300)  # Gradio hands a drawn figure to plotly, which lays it out after
            fill_tables(page, view)
            shown = page.evaluate(CUT_OFF)
            assert shown["documentWidth"] <= shown["width"], view  # the page itself never scrolls sideways
            if shown["cut"]:
                cut[view] = shown["cut"]
        assert not cut, cut
    finally:
        context.close()


def atlas(layers: int, heads: int) -> dict:
    """A made-up head atlas with what ``atlas_figure`` reads: each head's role and mean weight per behaviour."""
    rows = [
        {"layer": layer, "head": head, "role": "mixed", **{name: 0.1 * (k + 1) for k, name in enumerate(BEHAVIOURS)}}
        for layer in range(1, layers + 1)
        for head in range(1, heads + 1)
    ]
    return {"num_layers": layers, "num_heads": heads, "heads": rows}


# Plotly.react a figure into a new element of the page (phone.js lays it out, as for every figure Gradio draws);
# then how many columns its subplots take and how many pairs of its subplot titles overlap.
DRAW_GRID = """async (figure) => {
    const gd = document.createElement("div");
    document.body.prepend(gd);
    await Plotly.react(gd, figure.data, figure.layout);
    const axes = Object.keys(gd._fullLayout).filter((key) => /^xaxis\\d*$/.test(key));
    const columns = new Set(axes.map((key) => gd._fullLayout[key].domain[0].toFixed(3))).size;
    const boxes = [...gd.querySelectorAll(".annotation")].map((title) => title.getBoundingClientRect());
    let overlaps = 0;
    boxes.forEach((a, i) => boxes.slice(i + 1).forEach((b) => {
        overlaps += a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
    }));
    gd.remove();
    return {columns, titles: boxes.length, overlaps};
}"""


@pytest.mark.parametrize(("width", "columns"), [(390, 2), (1280, 4)], ids=["phone", "desktop"])
def test_the_head_atlas_grid_goes_to_two_columns_on_a_phone_and_its_titles_never_overlap(browser, url, width, columns):
    figure = json.loads(atlas_figure(atlas(2, 4)).to_json())
    context = browser.new_context(viewport={"width": width, "height": 844})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    try:
        page.goto(url)
        page.wait_for_function("() => window.Plotly")  # Gradio loads plotly for the first figure it draws
        drawn = page.evaluate(DRAW_GRID, figure)
        assert drawn == {"columns": columns, "titles": 8, "overlaps": 0}
    finally:
        context.close()


def erasure_curves() -> Faithfulness:
    """Made-up erasure curves with what ``faithfulness_figure`` reads: every method and the random floor."""
    k, j = len(METHODS), len(PERCENTS)
    curves = torch.linspace(0, 1, k * j).reshape(k, j)  # (K, J)
    return Faithfulness(
        methods=METHODS,
        mode="pad",
        target=1,
        percents=PERCENTS,
        counts=tuple(range(1, j + 1)),
        seeds=RANDOM_SEEDS,
        full_probability=0.9,
        comprehensiveness=curves,
        sufficiency=curves.flip(1),
        comprehensiveness_aopc=curves.mean(1),
        sufficiency_aopc=curves.mean(1),
        random_comprehensiveness=curves[0],
        random_sufficiency=curves[0],
        random_comprehensiveness_aopc=0.5,
        random_sufficiency_aopc=0.5,
    )


# Plotly.react a figure into a new element of the page; then which of its legend, axis titles and subplot titles
# overlap one another (pairs of their names).
DRAW_LABELS = """async (figure) => {
    const gd = document.createElement("div");
    document.body.prepend(gd);
    await Plotly.react(gd, figure.data, figure.layout);
    const named = [[gd.querySelector(".legend .bg"), "legend"]];
    gd.querySelectorAll(".g-xtitle, .g-x2title, .g-ytitle, .g-y2title").forEach((e) => named.push([e, e.classList[0]]));
    gd.querySelectorAll(".annotation").forEach((e, k) => named.push([e, `annotation ${k}`]));
    const boxes = named.map(([e, name]) => [e.getBoundingClientRect(), name]);
    const overlaps = [];
    boxes.forEach(([a, first], i) => boxes.slice(i + 1).forEach(([b, second]) => {
        const meet = a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
        if (meet) overlaps.push(`${first} × ${second}`);
    }));
    const height = gd.getBoundingClientRect().bottom, legendBottom = boxes[0][0].bottom;
    const plotHeight = gd._fullLayout._size.h;
    gd.remove();
    return {labels: boxes.length, overlaps, legendInside: legendBottom <= height + 1, plotHeight};
}"""


@contextlib.contextmanager
def opened(browser, address: str, width: int = 390):
    """A fresh page ``width`` px wide (844 px tall) at ``address``."""
    context = browser.new_context(viewport={"width": width, "height": 844})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    try:
        page.goto(address)
        yield page
    finally:
        context.close()


def labels_drawn(browser, url: str, width: int, figure) -> dict:
    """``DRAW_LABELS`` of ``figure`` drawn by plotly on a page ``width`` px wide."""
    with opened(browser, url, width) as page:
        page.wait_for_function("() => window.Plotly")
        return page.evaluate(DRAW_LABELS, json.loads(figure.to_json()))


@pytest.mark.parametrize("width", [390, 1280], ids=["phone", "desktop"])
def test_the_faithfulness_figure_s_legend_never_overlaps_its_axis_titles(browser, url, width):
    drawn = labels_drawn(browser, url, width, faithfulness_figure(erasure_curves(), "positive"))
    assert drawn.pop("plotHeight") >= 180  # the legend's rows leave the curves room
    assert drawn == {"labels": 7, "overlaps": [], "legendInside": True}


# The figure's title and every annotation in ``plot`` (a row of panels' titles among them): which pairs overlap, and
# which reach past the figure's left or right edge (cut off).
TITLES = """(plot) => {
    const svg = document.querySelector(`${plot} .main-svg`).getBoundingClientRect();
    const named = [[document.querySelector(`${plot} .g-gtitle`), "title"]];
    document.querySelectorAll(`${plot} .annotation`).forEach((e) => named.push([e, e.textContent]));
    const boxes = named.map(([e, name]) => [e.getBoundingClientRect(), name]);
    const overlaps = [], cut = [];
    boxes.forEach(([a, first], i) => {
        if (a.left < svg.left - 1 || a.right > svg.right + 1) cut.push(first);
        boxes.slice(i + 1).forEach(([b, second]) => {
            if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) {
                overlaps.push(`${first} × ${second}`);
            }
        });
    });
    return {labels: boxes.length, overlaps, cut};
}"""


@pytest.mark.parametrize(
    ("view", "plot", "panels"), [("inside-head", "#head-plot", 4), ("token-embeddings", "#embeddings-plot", 3)]
)
def test_a_row_of_panels_is_stacked_on_a_phone_its_titles_apart_and_whole(browser, url, view, plot, panels):
    """Issue 53: Inside one head's four panels and Token embeddings' three side by side at 390 px printed their
    titles over one another, and the figure's title ran past both edges."""
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    try:
        page.goto(f"{url}?view={view}&text=the+acting+was+not+good+at+all")
        page.wait_for_function("(plot) => document.querySelector(`${plot} .g-gtitle`)", arg=plot)
        page.wait_for_timeout(300)  # plotly's layout settled
        drawn = page.evaluate(TITLES, plot)
        assert drawn["labels"] >= panels + 1, drawn  # the title and one per panel at least
        assert drawn["overlaps"] == [] and drawn["cut"] == [], drawn
    finally:
        context.close()


@pytest.mark.parametrize("width", [390, 1280], ids=["phone", "desktop"])
def test_the_positional_encoding_curves_keep_their_height_and_their_legend_off_the_axis_title(browser, url, width):
    """Issue 53: on a phone the legend of the curves (8 entries: 4 dimensions, each with its dots) lay over the
    "position" axis title, and the curves were squashed into what was left."""
    table = analysis.positional_table(runner.get_model()[0].model)
    drawn = labels_drawn(browser, url, width, positional_curves(table, [2, 3, 6, 12], ["a", "dull", "film"]))
    assert drawn.pop("plotHeight") >= 180  # the legend's rows leave the curves room
    assert drawn == {"labels": 4, "overlaps": [], "legendInside": True}  # legend, 2 axis titles, "your 3 tokens"


# Each of Behaviour's tables on screen: how it scrolls, whether it shows it (two scroll shadows) and takes the
# keyboard's focus, and its cells narrower than their longest word (a word broken inside itself).
BEHAVIOUR_TABLES = """() => [...document.querySelectorAll('#behaviour-figures table')]
  .filter((t) => t.checkVisibility()).map((t) => {
    const broken = [...t.querySelectorAll('th, td')].filter((cell) => {
        const probe = document.createElement('span');  // the cell's longest word on one line, in its font
        probe.style.cssText = `font: ${getComputedStyle(cell).font}; white-space: nowrap; position: absolute;`;
        probe.textContent = cell.innerText.trim().split(/\\s+/).sort((a, b) => b.length - a.length)[0] || '';
        document.body.append(probe);
        const word = probe.getBoundingClientRect().width;
        probe.remove();
        const style = getComputedStyle(cell);
        return cell.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) + 1 < word;
    }).map((cell) => cell.innerText);
    const style = getComputedStyle(t);
    return {scrolls: style.overflowX, shadows: style.backgroundImage.split('radial-gradient').length - 1,
            focusable: t.tabIndex === 0, wider: t.scrollWidth > t.clientWidth, fits: t.getBoundingClientRect().right
            <= document.documentElement.clientWidth + 1, broken};
})"""


def test_behaviour_s_tables_on_a_phone_scroll_in_their_box_show_it_take_the_keyboard_and_keep_words_whole(browser, url):
    """Issue 53: at 390 px the per-capability table was cut in the middle of a word at the page's edge; it scrolls in
    a box of its own that shows it has more, which the keyboard can reach to scroll (axe's
    scrollable-region-focusable), and no cell breaks a word."""
    with opened(browser, f"{url}?view=behaviour") as page:
        page.wait_for_function("() => document.querySelector('#behaviour-figures table')?.offsetParent")
        (capabilities,) = page.evaluate(BEHAVIOUR_TABLES)  # the per-test table is folded away
    assert capabilities["wider"], capabilities  # it has more than the phone shows: what the rest checks matters
    assert capabilities == {
        "scrolls": "auto", "shadows": 2, "focusable": True, "wider": True, "fits": True, "broken": []
    }  # fmt: skip


def test_head_knockout_s_table_takes_the_phone_s_width_under_the_prediction(browser, url):
    """Issue 53: on a phone the Head knockout table stood beside the prediction in a 150 px box and showed two of its
    four columns; the row stacks, and the table's box is as wide as the tab."""
    with opened(browser, f"{url}?view=knockout&heads_off=L1+H1") as page:
        page.wait_for_function("() => document.querySelector('#knockout-summary table')")
        widths = page.evaluate(
            "() => ['#knockout-summary', '#views'].map((s) => document.querySelector(s).getBoundingClientRect().width)"
        )
    assert widths[0] >= 0.9 * widths[1], widths
