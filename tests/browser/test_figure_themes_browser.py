"""The Walkthrough's and the faithfulness figures in Chromium, in the light, dark and phone layouts: each is drawn,
its text reads on what is behind it (dark labels on the light page, light ones on the dark page, which shows no
white figure), and on a phone the page never scrolls sideways. Numbers printed in a heatmap's cells are sized for
their cells (``phone.js`` ``fitText``)."""

import pytest
from test_browser import brightness

pytestmark = [
    pytest.mark.served,
    pytest.mark.browser,  # ``browser`` (tests/conftest.py) skips where Chromium is missing
    pytest.mark.filterwarnings("ignore:'future.no_silent_downcasting' is deprecated"),  # gradio's queue and pandas 3
    pytest.mark.filterwarnings("ignore:The copy keyword is deprecated"),
]
SENTENCE = "a wonderful film , the acting was dull"
FIGURES = {  # the address that opens a view, its figure, and what the figure's title says once drawn
    "walkthrough": ("view=walkthrough&step=6&layer=2&head=2", "#walk-plot", "Layer 2, head 2"),
    "faithfulness": ("view=attributions&steps=4", "#faithfulness-plot", "Erasure curves"),
}
TEXT_FILL = """(plot) => {
    const [r, g, b] = getComputedStyle(document.querySelector(plot + ' .gtitle')).fill.match(/[0-9.]+/g).map(Number);
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
}"""  # the title's luminance, 0 black .. 1 white


@pytest.mark.parametrize("figure", list(FIGURES))
@pytest.mark.parametrize(
    ("width", "scheme"), [(1280, "light"), (1280, "dark"), (390, "light")], ids=["light", "dark", "phone"]
)
def test_the_figure_draws_and_reads_in_the_light_dark_and_phone_layouts(browser, url, figure, width, scheme):
    address, plot, title = FIGURES[figure]
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)
    page = context.new_page()
    page.set_default_timeout(60_000)
    try:
        page.goto(f"{url}?text={SENTENCE}&{address}")
        page.wait_for_function(
            "([plot, title]) => document.querySelector(plot + ' .gtitle')?.textContent.includes(title)",
            arg=[plot, title],
        )
        page.locator(f"{plot} .main-svg").first.wait_for()
        assert page.locator(f"{plot} :is(.heatmaplayer image, .scatterlayer .trace)").count() > 0  # data drawn
        fill, shown = page.evaluate(TEXT_FILL, plot), brightness(page, f"{plot} .js-plotly-plot")
        if scheme == "dark":
            assert fill > 0.6 and shown < 110, (fill, shown)
        else:
            assert fill < 0.4 and shown > 150, (fill, shown)
        assert page.evaluate("() => document.documentElement.scrollWidth") <= width + 1  # nothing scrolls sideways
    finally:
        context.close()


CELL_FONTS = """() => ['#rollout-shares', '#attention-heatmap'].map((id) => {
    const trace = document.querySelector(id + ' .js-plotly-plot')?.data?.[0];
    return trace ? {numbers: !!trace.texttemplate, size: trace.textfont?.size ?? null} : null;
})"""


def cell_fonts(browser, url: str, width: int) -> list:
    """[the rollout strip's, the attention map's] first trace: whether it prints numbers, and their font size."""
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.set_default_timeout(60_000)
    try:
        page.goto(f"{url}?text={SENTENCE}&view=rollout")
        page.locator("#rollout-shares .main-svg").first.wait_for()
        page.locator('#views [data-tab-id="attention"]').first.click()
        page.locator("#attention-heatmap .main-svg").first.wait_for()
        return page.evaluate(CELL_FONTS)
    finally:
        context.close()


def test_numbers_in_cells_are_sized_for_their_cells_and_other_maps_left_alone(browser, url):
    """``phone.js`` ``fitText`` sizes a heatmap's coloured cell numbers from the cell's width, 6 to 12 px: smaller
    on a phone's narrow cells than on the desktop's; a heatmap without numbers is left as plotly sizes it."""
    (desktop, desktop_map), (phone, phone_map) = (cell_fonts(browser, url, width) for width in (1280, 390))
    assert desktop["numbers"] and phone["numbers"]
    assert 6 <= phone["size"] < desktop["size"] <= 12, (phone, desktop)
    assert desktop_map == phone_map == {"numbers": False, "size": None}
