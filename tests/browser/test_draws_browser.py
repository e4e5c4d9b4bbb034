"""The page's draws (``page/phone.js``'s ``Plotly.react``, where a figure for a plot element already drawn waits a
task and is skipped if Gradio's ``Plot`` has replaced that element) swept over what a visitor types: one token to the
model's ``max_len`` and past it, on the tutorial's model and on a checkpoint of each Hub family. Every Analyze changes
one plot element and shows its own figure, with one row per token the model read."""

import contextlib

import pytest
from conftest import serving_app
from test_browser import OBSERVE_PLOT_CHANGES, wait_for_heatmap_with
from test_page_browser import WORDS, fresh_page

from transformer.explorer import analysis

pytestmark = [pytest.mark.browser, pytest.mark.served, pytest.mark.slow]
FAMILIES = ["tutorial", "bert", "distilbert", "roberta"]
# The heatmap's plot elements on screen, the rows (y labels) of the first, one per token the model read, and whether
# that element is not the one shown before the Analyze (``window.lastHeatmap``).
SHOWN_HEATMAP = """() => {
    const shown = [...document.querySelectorAll("#attention-heatmap .js-plotly-plot")];
    const heatmap = (shown[0]?.data || []).find((trace) => trace.type === "heatmap");
    return {shown: shown.length, rows: heatmap?.y?.length ?? null, new: shown[0] !== window.lastHeatmap};
}"""
HEATMAP_REDRAWN = f"() => {{ const shown = ({SHOWN_HEATMAP})(); return shown.new && shown.rows !== null; }}"
NEXT_ANALYZE = """() => {
    window.changedIn = [];
    window.lastHeatmap = document.querySelector("#attention-heatmap .js-plotly-plot");
}"""


@pytest.fixture(scope="module", params=FAMILIES)
def served(request, app, hub_model_dirs, tmp_path_factory):
    """(URL, ``LoadedModel``): the page on the tutorial's tiny model, or built again on a family's tiny checkpoint."""
    with contextlib.ExitStack() as stack:
        on = app
        if request.param != "tutorial":
            from app_fixtures import page_on

            folder = tmp_path_factory.mktemp(f"draws-{request.param}")
            on = stack.enter_context(page_on(app, hub_model_dirs[request.param], folder))
        yield stack.enter_context(serving_app(on)), on.get_model()[0]


def text_of(loaded, first: str, tokens: int) -> tuple[str, int]:
    """``first``, then "a" repeated until the tokenizer finds at least ``tokens`` tokens; the text and how many of
    them the model reads (at most its ``max_len``)."""
    words = [first]
    while len(analysis.read_tokens(loaded.model, loaded.tokenizer, " ".join(words))[0].ids) < tokens:
        words.append("a")
    text = " ".join(words)
    return text, analysis.read_tokens(loaded.model, loaded.tokenizer, text)[1]


def test_an_analysis_at_every_length_to_past_max_len_is_drawn_once_with_a_row_per_token_read(browser, served):
    url, loaded = served
    max_len = loaded.model.max_len
    context, page = fresh_page(browser, url)
    try:
        wait_for_heatmap_with(page)
        page.evaluate(OBSERVE_PLOT_CHANGES)
        for step, tokens in enumerate((1, 2, 8, 17, max_len - 1, max_len, max_len + 5)):
            text, read = text_of(loaded, WORDS[step], tokens)
            page.evaluate(NEXT_ANALYZE)
            page.locator("#sentence textarea").fill(text)
            page.locator("#analyze").click()
            page.wait_for_function(HEATMAP_REDRAWN)
            page.wait_for_timeout(500)  # a draw deferred by a task would have come
            drawn = page.evaluate(SHOWN_HEATMAP) | {"changed": page.evaluate("() => new Set(window.changedIn).size")}
            assert drawn == {"shown": 1, "rows": read, "new": True, "changed": 1}, (tokens, text)
        assert read == max_len  # the last text ran past max_len, and the model read max_len of it
    finally:
        context.close()
