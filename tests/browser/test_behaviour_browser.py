"""The Behaviour tab in Chromium: a model without behaviour.json runs the suite when the tab first opens, the filters
narrow the failing cases, the live control runs a test, a clicked case opens in the Attention tab with the address
holding it, and the tab draws in the light, dark and phone layouts."""

from urllib.parse import parse_qs, urlparse

import pytest
from conftest import serving_app, without_artifact
from test_corpus_views_browser import TABLE_FIT

from transformer.explorer.views import behaviour

pytestmark = [
    pytest.mark.served,
    pytest.mark.browser,  # ``browser`` and ``page`` (tests/conftest.py) skip where Chromium is missing
    pytest.mark.filterwarnings("ignore:'future.no_silent_downcasting' is deprecated"),  # gradio's queue and pandas 3
    pytest.mark.filterwarnings("ignore:The copy keyword is deprecated"),
]
SUMMARY = "() => document.querySelector('#behaviour-summary')?.textContent.includes('The behavioural suite on')"
TABLE_ROWS = """(column) => [...document.querySelectorAll('#behaviour-table .virtual-row')]
    .map((row) => row.querySelectorAll('[role=gridcell]')[column]?.innerText.trim()).filter(Boolean)"""


@pytest.fixture(scope="module")
def url(app, tmp_path_factory):
    """The app on its tiny model with no behaviour.json and an empty cache folder of its own: the first open runs
    the suite."""
    cache = tmp_path_factory.mktemp("behaviour-cache")
    with (
        pytest.MonkeyPatch.context() as patch,
        without_artifact(behaviour.REPORT, app.get_model()[0].folder, cache, patch),
        serving_app(app) as served,
    ):
        yield served


def query(page) -> dict:
    return parse_qs(urlparse(page.evaluate("() => window.location.href")).query)


def test_the_first_open_runs_the_suite_then_filters_and_the_live_run_narrow_the_cases(page, url):
    assert behaviour.REPORT.current() is None  # nothing stored: the tab's first draw runs the suite
    page.goto(f"{url}?view=behaviour")
    page.wait_for_function(SUMMARY)
    assert (
        behaviour.REPORT.current() is not None and "Per capability" in page.locator("#behaviour-figures").inner_text()
    )
    page.wait_for_function(f"() => ({TABLE_ROWS})(0).length > 0")
    assert set(page.evaluate(TABLE_ROWS, 0)) == {"test"}  # the part reported on, by default
    report = behaviour.REPORT.current()
    worst = max((row for row in report["tests"] if row["part"] == "test"), key=lambda row: row["failed"])
    assert worst["failed"] > 0  # the untrained tiny model fails some tests of the test part
    page.locator("#behaviour-capability").get_by_role("combobox").click()
    page.get_by_role("option", name=worst["capability"], exact=True).click()
    only = f"(c) => new Set(({TABLE_ROWS})(1)).size === 1 && ({TABLE_ROWS})(1)[0] === c"
    page.wait_for_function(only, arg=worst["capability"])
    name = f"test / {worst['capability']}: {worst['test']}"
    page.locator("#behaviour-name").get_by_role("combobox").fill(worst["test"])
    page.get_by_role("option", name=name, exact=True).click()
    page.locator("#behaviour-run").click()
    page.wait_for_function("() => document.querySelector('#behaviour-live')?.textContent.includes('run now')")
    page.wait_for_function(
        f"(t) => ({TABLE_ROWS})(2).length && ({TABLE_ROWS})(2).every((n) => n === t)", arg=worst["test"]
    )
    assert "Run live here" in page.locator("#behaviour-summary").text_content()


def test_a_clicked_case_opens_in_the_attention_tab_and_the_address_holds_it(page, url):
    page.goto(f"{url}?view=behaviour")
    page.wait_for_function(SUMMARY)
    page.wait_for_function(f"() => ({TABLE_ROWS})(7).length > 0")
    text = page.evaluate(TABLE_ROWS, 7)[0]
    page.locator("#behaviour-table .virtual-row").first.locator("[role=gridcell]").nth(7).click()
    page.wait_for_function("(t) => document.querySelector('#sentence textarea').value === t", arg=text)
    page.wait_for_function("(t) => new URL(location.href).searchParams.get('text') === t", arg=text)
    page.wait_for_function("() => document.querySelector('#attention-heatmap svg.main-svg')")
    assert page.get_by_role("tab", name="Attention").get_attribute("aria-selected") == "true"
    assert query(page)["text"] == [text]


CELL_COLOURS = """() => {
    const luminance = (colour) => {
        const [r, g, b] = colour.match(/[0-9.]+/g).map(Number);
        return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
    };
    const cell = document.querySelector('#behaviour-figures td');
    let back = cell, fill = 'rgba(0, 0, 0, 0)';
    while (back && /rgba\\(.*, 0\\)|transparent/.test(fill)) {
        fill = getComputedStyle(back).backgroundColor;
        back = back.parentElement;
    }
    return {text: luminance(getComputedStyle(cell).color), back: luminance(fill)};
}"""


@pytest.mark.parametrize(
    ("width", "scheme"), [(1280, "light"), (1280, "dark"), (390, "light")], ids=["light", "dark", "phone"]
)
def test_the_tab_draws_in_the_light_dark_and_phone_layouts(browser, url, width, scheme):
    """Its figures' text reads against their background in either theme, and on a phone the page never scrolls
    sideways, the cases' table scrolls inside itself and no header breaks inside a word."""
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)
    page = context.new_page()
    page.set_default_timeout(60_000)
    try:
        page.goto(f"{url}?view=behaviour")
        page.wait_for_function(SUMMARY)
        page.wait_for_function("() => document.querySelector('#behaviour-table')?.textContent.includes('miss')")
        assert page.evaluate("() => document.body.classList.contains('dark')") == (scheme == "dark")
        colours = page.evaluate(CELL_COLOURS)
        assert abs(colours["text"] - colours["back"]) > 0.5, colours  # light on dark, or dark on light
        fit = page.evaluate(TABLE_FIT, "behaviour-table")
        assert fit["pageWidth"] <= fit["viewport"] + 1, fit
        assert fit["tableWidth"] <= fit["box"] + 1 or fit["scrolls"], fit
        for header in fit["headers"]:
            assert header["width"] + 1 >= header["word"], header
    finally:
        context.close()
