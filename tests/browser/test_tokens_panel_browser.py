"""The Tokens panel stays a panel (issue 54): past about six rows of chips it scrolls inside its own box, and the
heatmap, not the chips, comes next under the prediction; a 10,000-character text makes the page at most 400 px taller
than a short sentence does."""

import contextlib

import pytest
from conftest import TIMEOUT_MS

pytestmark = [pytest.mark.browser, pytest.mark.served]
SETTLED = "() => window.explorer?.addressRead === true"
LONG = " ".join(["the acting was wonderful but the ending was dull"] * 220)[:10_000]


def tokens_box(page, text: str) -> dict:
    """The Tokens panel's chip box once ``text`` is analyzed: its height, its content's, and one chip's."""
    page.locator("#sentence textarea").fill(text)
    page.locator("#analyze").click()
    page.wait_for_function("(word) => document.querySelector('#tokens')?.textContent.includes(word)", arg="acting")
    page.wait_for_timeout(500)  # the last chips laid out
    return page.evaluate(
        """() => {
            const field = document.querySelector('#tokens .textfield');
            const chip = field.firstElementChild.getBoundingClientRect().height;
            const scrolls = getComputedStyle(field).overflowY;
            return {box: field.clientHeight, content: field.scrollHeight, chip, scrolls};
        }"""
    )


@contextlib.contextmanager
def page_at(browser, url: str, width: int):
    """A fresh page ``width`` px wide, its address read (the page load's analysis done)."""
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    try:
        page.goto(url)
        page.wait_for_function(SETTLED)
        yield page
    finally:
        context.close()


@pytest.mark.parametrize("width", [1280, 390])
def test_a_long_text_scrolls_inside_the_tokens_panel(browser, url, width):
    with page_at(browser, url, width) as page:
        found = tokens_box(page, LONG)
    assert found["box"] <= 8 * found["chip"]  # about six rows of chips and their gaps
    assert found["content"] <= found["box"] or found["scrolls"] == "auto"


def page_height(page, text: str) -> float:
    """The page's height once ``text`` is analyzed and its heatmap drawn."""
    tokens_box(page, text)
    page.wait_for_timeout(500)  # plotly has resized the heatmap
    return page.evaluate("() => document.scrollingElement.scrollHeight")


@pytest.mark.parametrize("width", [1280, 390])
def test_a_long_text_makes_the_page_at_most_400_px_taller(browser, url, width):
    with page_at(browser, url, width) as page:
        short = page_height(page, "the acting was wonderful")
        long = page_height(page, LONG)
    assert long - short <= 400, f"{short} px with a short sentence, {long} px with 10,000 characters"
