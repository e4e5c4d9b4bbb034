"""The page around the tabs in a real browser (Debian's Chromium, as in tests/browser/test_browser.py): typing while the
page loads, Enter and Shift+Enter, the "Copy link" button, errors only after an action, a long text, and the
colour controls shown only where they change something."""

import dataclasses
import inspect
import json
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import gradio as gr
import pytest
from app_fixtures import TINY_MAX_LEN
from conftest import TIMEOUT_MS
from test_browser import copied_text, wait_for_heatmap_with

from transformer.explorer import analysis
from transformer.explorer.jsonable import analysis_to_json
from transformer.explorer.serving import export_files, link_store

# ``browser`` and ``page`` (tests/conftest.py) skip where Chromium is missing
pytestmark = [pytest.mark.browser, pytest.mark.served]
FRESH_PAGES = 6  # side by side: more at once overload two cores (20 ran past the 60 s timeout)
WORDS = ["charming", "journey", "funny", "dull", "wonderful", "film", "acting", "affecting"]
SETTLED = "() => window.explorer?.addressRead === true"  # the load's steps have all run (page.js keepTyped too)


def fresh_page(browser, url: str, address: str = "", init_script: str = "", **context):
    """A page in a new browser context (no session, no cache), opened at ``url + address`` without waiting;
    ``init_script`` runs in it before the page's own scripts."""
    opened = browser.new_context(**({"viewport": {"width": 1280, "height": 900}} | context))
    if init_script:
        opened.add_init_script(init_script)
    page = opened.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(url + address, wait_until="commit")
    return opened, page


# Every write into the sentence box's ``value`` (Playwright's ``fill`` types, and writes none): when, what, and the
# caller's frames, in ``window.sentenceWrites``, so that a lost text says what overwrote it.
SENTENCE_WRITES = """
window.sentenceWrites = [];
const own = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, "value");
Object.defineProperty(HTMLTextAreaElement.prototype, "value", {
    configurable: true,
    get() { return own.get.call(this); },
    set(value) {
        if (this.closest("#sentence")) {
            const frames = new Error().stack.split("\\n").slice(2, 6).map((line) => line.trim()).join(" < ");
            window.sentenceWrites.push([Math.round(performance.now()), String(value).slice(0, 30), frames]);
        }
        own.set.call(this, value);
    },
});
"""


def test_what_is_typed_while_the_page_loads_wins_over_the_load(browser, url):
    """Typed as soon as the box is there, before the page load's answer: every page keeps and draws it. The pages
    load side by side, so their loads' answers come at different moments after the typing."""
    texts = [[WORDS[i % len(WORDS)], WORDS[(i + 1 + i // len(WORDS)) % len(WORDS)]] for i in range(FRESH_PAGES)]
    opened = [fresh_page(browser, url, init_script=SENTENCE_WRITES) for _ in texts]
    kept = []
    try:
        for (_, page), words in zip(opened, texts, strict=True):
            box = page.locator("#sentence textarea")
            box.wait_for(state="attached")
            box.fill(" ".join(words))
            page.locator("#analyze").click()
        for (_, page), words in zip(opened, texts, strict=True):
            page.wait_for_function(SETTLED)
            wait_for_heatmap_with(page, *words)
            tokens = page.locator("#tokens").text_content()
            typed = page.locator("#sentence textarea").input_value() == " ".join(words)
            kept.append(typed and all(word in tokens for word in words))
    except AssertionError as error:  # say who wrote into the sentence box: Gradio's Textbox, or page.js
        writes = {
            " ".join(words): page.evaluate("() => window.sentenceWrites")
            for (_, page), words in zip(opened, texts, strict=True)
        }
        raise AssertionError(f"{error}; the sentence box's writes: {writes}") from None
    finally:
        for context, _ in opened:
            context.close()
    assert all(kept), f"{kept.count(False)} of {FRESH_PAGES} pages lost what was typed"


def forward_count(app):
    """A list that grows by one on each forward pass of the app's model, and the hook's handle."""
    calls = []
    return calls, app.get_model()[0].model.register_forward_hook(lambda *_: calls.append(1))


def test_enter_analyzes_and_shift_enter_starts_a_new_line(page, url, app):
    page.goto(url)
    wait_for_heatmap_with(page)  # the page-load analysis has finished
    box = page.locator("#sentence textarea")
    assert "press Enter to analyze, Shift+Enter for a new line" in box.get_attribute("placeholder")
    box.fill("a charming journey")
    box.press("Enter")
    wait_for_heatmap_with(page, "charming", "journey")
    assert box.input_value() == "a charming journey"  # Enter sent it, and added no line
    calls, hook = forward_count(app)
    try:
        box.press("End")
        box.press("Shift+Enter")
        box.press_sequentially("so dull")
        time.sleep(1.5)  # a submit would have reached the model by now
        assert box.input_value() == "a charming journey\nso dull" and not calls
        box.press("Enter")
        wait_for_heatmap_with(page, "charming", "dull")
        assert calls
    finally:
        hook.remove()


@pytest.mark.parametrize("view", ["attention", "all-heads"])
def test_an_analysis_on_a_main_view_sends_one_event_and_keeps_its_weighting(page, url, view):
    """The analysis draws the main view on screen with its own controls (the weighting), so that the page sends no
    second event to redraw it: one request to the server per Analyze."""
    page.goto(f"{url}?text=a%20dull%20journey&view={view}&{'grid_' if view == 'all-heads' else ''}weighting=norms")
    figure = "#attention-heatmap" if view == "attention" else "#attention-grid"
    shows = """([figure, word]) => {
        const plot = document.querySelector(figure);
        return plot?.querySelector('svg.main-svg') && plot.textContent.includes(word)
            && plot.textContent.includes('weight × ‖f(x)‖');
    }"""
    page.wait_for_function(shows, arg=[figure, "dull"])
    page.wait_for_function(SETTLED)
    sent = []
    page.on("request", lambda request: sent.append(request.url) if request.method == "POST" else None)
    page.locator("#sentence textarea").fill("a charming film")
    page.locator("#analyze").click()
    page.wait_for_function(shows, arg=[figure, "charming"])
    time.sleep(1.5)  # a redraw's request follows the analysis's answer at once
    assert [urlsplit(address).path.rsplit("/", 2)[-2:] for address in sent] == [["queue", "join"]], sent


# When the "Copy link" button's label became "Link copied", and when its own label came back (ms, the page's clock)
LABEL_TIMES = """() => {
    const button = document.querySelector('#copy-link');
    window.labelTimes = {};
    new MutationObserver(() => {
        const label = button.textContent, times = window.labelTimes;
        if (label.includes('Link copied') && times.copied === undefined) times.copied = performance.now();
        if (label.includes('Copy link to this view') && times.copied !== undefined) times.back ??= performance.now();
    }).observe(button, {subtree: true, childList: true, characterData: true});
}"""


def test_copy_link_says_link_copied_for_two_seconds(page, url):
    page.goto(url)
    wait_for_heatmap_with(page)
    page.wait_for_function(SETTLED)
    before = page.evaluate("() => navigator.clipboard.readText()")
    page.evaluate(LABEL_TIMES)  # timed in the page: a test's polls see a change late on a busy machine
    page.locator("#copy-link").click()
    assert "link=" in copied_text(page, before)
    page.wait_for_function("() => window.labelTimes.back !== undefined", timeout=5000)
    times = page.evaluate("() => window.labelTimes")
    assert 1500 < times["back"] - times["copied"] < 3500  # about two seconds, then its own label
    assert page.locator("#copy-link img").count() == 1  # the icon stays


NO_CLIPBOARD = {
    "missing": "Object.defineProperty(Navigator.prototype, 'clipboard', {get: () => undefined})",
    "refusing": """Object.defineProperty(Navigator.prototype, 'clipboard', {get: () => ({
        writeText: () => Promise.reject(new DOMException('Write permission denied.', 'NotAllowedError')),
    })})""",
}


@pytest.mark.parametrize("clipboard", list(NO_CLIPBOARD))
def test_without_a_clipboard_the_link_is_shown_selected(browser, url, clipboard):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_init_script(NO_CLIPBOARD[clipboard])
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    try:
        page.goto(url)
        wait_for_heatmap_with(page)
        page.wait_for_function(SETTLED)
        page.locator("#copy-link").click()
        field = page.locator("#copy-link-field")
        field.wait_for()
        assert "link=" in field.input_value() and field.is_visible()
        selected = page.evaluate(
            """() => {
                const field = document.activeElement;
                return [field.id, field.selectionStart, field.selectionEnd, field.value.length];
            }"""
        )
        assert selected[0] == "copy-link-field" and selected[1] == 0 and selected[2] == selected[3]
        assert "Link copied" not in page.locator("#copy-link").text_content()
    finally:
        context.close()


def test_choosing_my_own_reordering_asks_for_it_without_an_error(page, url):
    page.goto(url)
    wait_for_heatmap_with(page)
    page.get_by_role("tab", name="Word order").click()
    page.wait_for_function("() => document.querySelector('#order-summary').textContent.includes('Reordered')")
    page.get_by_label("my own reordering").check()
    page.wait_for_function("() => document.querySelector('#order-summary').textContent.includes('Type your own')")
    assert page.locator(".toast-body").count() == 0 and page.locator("#order-summary [role=alert]").count() == 0
    page.locator("#reordered textarea, #reordered input").fill("wonderful")
    page.locator("#reorder").click()
    page.wait_for_function("() => document.querySelector('#order-summary [role=alert]')")  # the answer to Reorder
    words = page.locator("#sentence textarea").input_value().split()
    page.locator("#reordered textarea, #reordered input").fill(" ".join(reversed(words)))
    page.locator("#reorder").click()
    page.wait_for_function("() => document.querySelector('#order-summary').textContent.includes('your own')")
    assert page.locator("#order-summary [role=alert]").count() == 0  # the valid result replaced the error


def page_height(page) -> int:
    return page.evaluate("() => document.documentElement.scrollHeight")


def test_a_long_text_shows_what_was_read_and_the_page_stays_short(page, url):
    page.goto(url)
    wait_for_heatmap_with(page)
    short = page_height(page)
    text = ("the movie is n't funny , and it does n't try hard enough . " * 200)[: analysis.MAX_INPUT_CHARS]
    page.locator("#sentence textarea").fill(text)
    page.locator("#analyze").click()
    page.wait_for_function(f"() => document.querySelector('#notice').textContent.includes('at most {TINY_MAX_LEN}')")
    page.wait_for_function("() => document.querySelector('#tokens').textContent.includes('more words not read')")
    tokens = page.locator("#tokens").text_content()
    assert tokens.count("more words not read") == 1 and len(tokens) < 1000
    assert page_height(page) < short + 400  # was 4,919 px: the whole unread text


def open_tab(page, view: str) -> None:
    """Select a view's tab in the tab row (which wraps: every tab is in it)."""
    page.locator(f'#views [data-tab-id="{view}"]').click()


def colour_controls_shown(page) -> bool:
    return page.locator("#colour-scale").is_visible() and page.locator("#leave-out").is_visible()


@pytest.mark.parametrize("view", ["export", "positional-encoding"])
def test_colour_controls_show_only_on_tabs_that_use_them(browser, url, view):
    context, page = fresh_page(browser, url, f"?view={view}&text=a%20charming%20journey")
    try:
        page.wait_for_function(SETTLED)
        assert page.locator("#sentence textarea").input_value() == "a charming journey"  # nothing typed: the link's
        page.locator("#colour-scale").wait_for(state="hidden")  # a deep link to a view without them
        open_tab(page, "all-heads")
        page.locator("#colour-scale").wait_for(state="visible")
        assert colour_controls_shown(page)
        for tab in ("positional-encoding", "errors", "word-order"):
            open_tab(page, tab)
            page.locator("#colour-scale").wait_for(state="hidden")
            assert not page.locator("#leave-out").is_visible()
        open_tab(page, "attention")
        page.locator("#colour-scale").wait_for(state="visible")
    finally:
        context.close()


def exported_files() -> set:
    """The files in the export folder of this process's server (``export_files.export_dir``)."""
    return {path for path in export_files.export_dir().rglob("*") if path.is_file()}


def test_export_files_are_built_when_a_button_is_clicked_and_saved_each_time(browser, url, loaded):
    text = "a charming journey with a wonderful cast"
    context, page = fresh_page(browser, url, f"?view=export&text={text.replace(' ', '%20')}", accept_downloads=True)
    try:
        page.wait_for_function(SETTLED)
        page.wait_for_function("() => document.querySelector('#export-summary').textContent.includes('CSV holds')")
        before = exported_files()
        open_tab(page, "attention")
        open_tab(page, "export")  # the tab drawn again: still nothing built
        page.wait_for_function("() => new URL(location.href).searchParams.get('view') === 'export'")
        assert exported_files() == before
        expected = analysis_to_json(analysis.analyze(loaded.model, loaded.tokenizer, text))
        for _ in range(2):  # the same file built again is saved again
            with page.expect_download() as saved:
                page.locator("#export-json").click()
            assert saved.value.suggested_filename == "attention-explorer-analysis.json"
            assert Path(saved.value.path()).read_text(encoding="utf-8") == expected
        with page.expect_download() as saved:
            page.locator("#export-csv").click()
        assert saved.value.suggested_filename == "attention-layer1-head1.csv"
        assert len(exported_files() - before) <= 2  # one file per content, in the bounded folder
    finally:
        context.close()


def wait_for_held(page, held: list) -> None:
    """Waits until a route of ``page`` holds a request in ``held`` (the routes run while the page waits)."""
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    while not held and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    assert held, "no request was held"


def test_a_tabs_late_answer_leaves_the_address_and_the_page_on_the_tab_on_screen(browser, url):
    """Attention is clicked, then Export, and Attention's answer comes back last (a slow line; CI once saw it). The
    address names Export all along, and the page makes Export its current view again, with Export's controls."""
    context, page = fresh_page(browser, url, "?view=positional-encoding&text=a%20charming%20journey")
    held, holding = [], {"Attention"}

    def hold(route, request):
        tab = json.loads(request.post_data or "{}").get("event_data", {}).get("value")
        held.append(route) if "*" in holding or tab in holding else route.continue_()

    try:
        page.wait_for_function(SETTLED)
        page.route("**/gradio_api/run/predict*", hold)
        page.route("**/gradio_api/queue/join*", hold)
        open_tab(page, "attention")
        wait_for_held(page, held)
        open_tab(page, "export")  # drawn, and the address written, while Attention's answer is held
        page.wait_for_function("() => document.querySelector('#export-summary').textContent.includes('CSV holds')")
        page.wait_for_function("() => new URL(location.href).searchParams.get('view') === 'export'")
        holding.add("*")  # from now on every request is held: the one that Attention's late answer calls for
        held.pop().continue_()
        wait_for_held(page, held)
        assert query(page)["view"] == ["export"]  # Attention's answer is in, its colour controls with it
        assert colour_controls_shown(page)
        assert json.loads(held[0].request.post_data)["data"] == ["export"]  # Export made the current view
        holding.clear()
        held.pop().continue_()
        page.wait_for_function("() => !document.querySelector('#colour-scale')?.checkVisibility()")
        assert query(page)["view"] == ["export"] and not colour_controls_shown(page)
    finally:
        context.close()


def query(page) -> dict:
    return parse_qs(urlsplit(page.url).query)


def swipe_down(session, x: float, y: float, steps: int = 10, step_px: float = 20) -> None:
    """A finger that touches at (x, y) and moves down ``steps`` times (the page, if it can, scrolls up)."""
    session.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x, "y": y}]})
    for k in range(1, steps + 1):
        session.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [{"x": x, "y": y + step_px * k}]})
        time.sleep(0.02)
    session.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})


def test_on_a_touch_screen_a_tap_shows_a_cells_value_and_a_swipe_scrolls_the_page(browser, url):
    """On a phone (touch, 390 px) a tap on a heatmap shows its hover label, and a vertical swipe that starts on
    the heatmap scrolls the page rather than zooming the figure (``figures.TOUCH``: no drag mode)."""
    context, page = fresh_page(
        browser, url, "?text=a%20charming%20journey", viewport={"width": 390, "height": 844}, has_touch=True
    )
    try:
        page.wait_for_function(SETTLED)
        wait_for_heatmap_with(page, "charming")
        plot = page.locator("#attention-heatmap .nsewdrag").first
        plot.scroll_into_view_if_needed()
        box = plot.bounding_box()
        page.touchscreen.tap(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.wait_for_function("() => document.querySelector('#attention-heatmap .hoverlayer .hovertext')")
        assert "charming" in page.locator("#attention-heatmap .hoverlayer").text_content()  # a cell's key or query
        before = page.evaluate("() => window.scrollY")
        assert before > 150  # the heatmap is below the first screen: a swipe down has room to scroll the page up
        swipe_down(context.new_cdp_session(page), box["x"] + box["width"] / 2, box["y"] + box["height"] / 3)
        page.wait_for_function("(y) => window.scrollY < y - 100", arg=before)
        dragmode = "() => document.querySelector('#attention-heatmap .js-plotly-plot')._fullLayout.dragmode"
        assert page.evaluate(dragmode) is False
        assert not page.locator("#attention-heatmap .zoombox").count()  # no zoom box was drawn
    finally:
        context.close()


def test_gradio_api_page_opens_at_view_api_and_the_address_keeps_it(browser, url):
    """``view`` names the app's tabs, but ``?view=api`` is Gradio's own API page: the page load leaves it open."""
    context, page = fresh_page(browser, url, "?view=api")
    try:
        page.wait_for_function(SETTLED)
        wait_for_heatmap_with(page)  # the load drew the default view behind the API page
        page.locator(".api-docs").wait_for(state="visible")
        time.sleep(1)  # a late address write would close it
        assert page.locator(".api-docs").is_visible() and "/predict" in page.locator(".api-docs").text_content()
        assert "view=api" in page.url
    finally:
        context.close()


def test_a_cold_link_to_a_view_that_fails_keeps_the_text_the_prediction_and_the_tab(browser, url, app, monkeypatch):
    """Issue 35: a shared link whose view could not be drawn took the whole page down (default text, "Error"
    in Prediction and Attention, the first tab). Now only that view says it failed."""
    parts = next(inspect.unwrap(fn.fn).__self__ for fn in app.demo.fns.values() if fn.name == "restore_page")

    def broken(*_):
        raise ValueError("yaxis domain[0] = -2.22e-16")

    monkeypatch.setitem(parts.drawings, "rollout", dataclasses.replace(parts.drawings["rollout"], handler=broken))
    context, page = fresh_page(browser, url, "?text=a+charming+journey&view=rollout&layer=99")
    try:
        page.wait_for_function(SETTLED)
        failure = page.locator("#views .prose.view-failure:visible")
        failure.wait_for()
        assert "could not be drawn" in failure.text_content()
        selected = page.locator('#views button[role="tab"][aria-selected="true"]')
        assert selected.text_content().strip() == "Rollout"
        assert page.locator("#sentence textarea").input_value() == "a charming journey"
        assert "positive" in page.locator("#prediction").text_content()
        assert page.locator(".toast-body", has_text="“Layer” is not allowed here").count() == 1  # said, in one line
        assert "Error" not in page.locator("#prediction").text_content()
    finally:
        context.close()


def test_a_long_job_that_fails_says_so_hides_its_cancel_button_and_leaves_the_address(browser, url, app, monkeypatch):
    """Issue 54: a long job's own answer hides its Cancel button, as Gradio's page runs no step after a failed event.
    A ``gr.Error`` in the Knockout tab's job is said in a warning, the button goes, and the address, written only after
    a draw that answers, still names the tab drawn before."""
    parts = next(inspect.unwrap(fn.fn).__self__ for fn in app.demo.fns.values() if fn.name == "restore_page")

    def refused(*_):
        raise gr.Error("No heads to rank here", title="Cannot draw this view", print_exception=False)

    monkeypatch.setitem(parts.drawings, "knockout", dataclasses.replace(parts.drawings["knockout"], handler=refused))
    context, page = fresh_page(browser, url, "?text=a+charming+journey")
    try:
        page.wait_for_function(SETTLED)
        page.locator("#attention-heatmap svg.main-svg").first.wait_for()
        page.locator('#views [data-tab-id="knockout"]').click()
        page.locator(".toast-body", has_text="No heads to rank here").wait_for()
        page.locator("#knockout-cancel").wait_for(state="hidden")
        address = parse_qs(urlsplit(page.url).query)
        assert address["view"] == ["attention"] and "heads_off" not in address
    finally:
        context.close()


def ig_steps_shown(page, steps: int) -> None:
    """Wait until the Attributions tab shows Integrated Gradients drawn with ``steps`` steps."""
    page.wait_for_function("(n) => document.querySelector('#views').textContent.includes(`(${n} steps)`)", arg=steps)


NAVBAR_SEEN = """{  // run as the page starts (an init script)
    window.navbarSeen = [];  // each moment the navbar was on screen, in ms from the start of the load
    window.navbarDrawn = false;  // whether Gradio put it in the page at all (it takes it out once the page mounts)
    const start = performance.now();
    new MutationObserver(() => {
        const bar = document.querySelector('.nav-holder');
        window.navbarDrawn ||= bar !== null;
        if (bar && bar.getBoundingClientRect().height > 0) window.navbarSeen.push(performance.now() - start);
    }).observe(document, {childList: true, subtree: true, attributes: true});
}"""


def test_the_endpoints_page_never_puts_a_navbar_on_the_explorer_while_it_loads(browser, url):
    """Gradio draws a navbar for the endpoints' page (out of the navbar, so it holds one link, "Home"); it must not show
    while the page loads, before the components mount and hide it (``theme.HEAD_CSS``)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        page.add_init_script(NAVBAR_SEEN)  # before the page's first script
        page.goto(url)
        page.wait_for_function(SETTLED)
        assert page.evaluate("window.navbarDrawn")  # Gradio still draws it, so the check below can see it
        assert page.evaluate("window.navbarSeen") == []
    finally:
        context.close()


def test_integrated_gradients_steps_recompute_on_enter_and_arrow_keys_and_the_link_keeps_them(page, url):
    """Issue 35, item 7: a typed value and Enter, and the arrow keys, used to change nothing until the pointer
    released the slider, and a link copied then kept the old value."""
    page.goto(url + "?view=attributions")
    page.wait_for_function(SETTLED)
    ig_steps_shown(page, 32)
    box = page.locator("#ig-steps input[type=number]")
    box.fill("64")
    box.press("Enter")
    ig_steps_shown(page, 64)
    slider = page.locator("#ig-steps input[type=range]")
    slider.focus()
    slider.press("ArrowRight")
    slider.press("ArrowRight")  # a step is 4
    ig_steps_shown(page, 72)
    before = page.evaluate("() => navigator.clipboard.readText()")
    page.locator("#copy-link").click()
    key = parse_qs(urlsplit(copied_text(page, before)).query)["link"][0]
    assert link_store.load_link(key)["steps"] == "72"


# Keys that arrive just after the page decided to keep what was typed (page.js keepTyped), before the load's last
# step is done: the box gets " journey" typed into it then.
LATE_KEYS = """Object.defineProperty(window, "explorer", {configurable: true, get: () => undefined, set(explorer) {
    const keepTyped = explorer.keepTyped;
    const type = (box, text) => {
        box.value = text;
        box.dispatchEvent(new Event("input", {bubbles: true}));
    };
    explorer.keepTyped = (...args) => {
        const box = document.querySelector("#sentence textarea");
        type(box, "a dull film");  // typed while the page loaded, whenever the load's answer arrives
        const kept = keepTyped(...args);
        type(box, box.value + " journey");  // typed the instant after the load decided
        return kept;
    };
    Object.defineProperty(window, "explorer", {value: explorer, writable: true, configurable: true});
}});"""


def test_keys_typed_as_the_load_ends_stay_and_analyze_reads_the_whole_box(browser, url):
    """Issue 35, item 6: the load decided what the box keeps, then wrote it later, over keys typed meanwhile; then
    Analyze (no Enter) read the value Gradio last stored, not the box as shown."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_init_script(LATE_KEYS)
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    try:
        page.goto(url, wait_until="commit")
        box = page.locator("#sentence textarea")
        box.wait_for(state="attached")
        # LATE_KEYS types around the load's decision itself: a fill here could land before or after the load ends
        page.wait_for_function("() => document.querySelector('#sentence textarea').value.endsWith(' journey')")
        page.wait_for_function(SETTLED)
        page.wait_for_timeout(500)  # the load's later steps have landed: none may write over the keys
        assert box.input_value() == "a dull film journey"
        page.locator("#analyze").click()
        wait_for_heatmap_with(page, "dull", "film", "journey")
        assert all(word in page.locator("#tokens").text_content() for word in ("dull", "film", "journey"))
    finally:
        context.close()


def test_the_api_page_opens_each_parameter_with_its_own_description(page, url):
    """Issue 53: Gradio's API page began every parameter with "The input value that is provided in the "text" Api
    component."; each now reads as its docstring's sentence (``page.js``'s ``plainApiDocs``)."""
    page.goto(url)
    wait_for_heatmap_with(page)
    page.get_by_text("Use via API").first.click()
    docs = page.locator(".api-docs")
    docs.get_by_text("The text to classify").first.wait_for()
    assert "input value that is provided" not in docs.inner_text()


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_analyze_button_and_the_footer_take_the_style_sheets_colours(browser, url, theme):
    """Issue 53: the style sheet's colours win over Gradio's theme in the page itself (its contrast is checked in
    tests/explorer/drawing/test_figure_contrast.py)."""
    context, page = fresh_page(browser, url, f"?__theme={theme}")
    try:
        page.locator("#analyze").wait_for()
        colours = page.evaluate(
            """() => [getComputedStyle(document.querySelector('#analyze')).backgroundColor,
                      getComputedStyle(document.querySelector('footer')).color]"""
        )
        assert colours[0] == "rgb(194, 65, 12)"
        assert colours[1] == ("rgb(82, 82, 91)" if theme == "light" else "rgb(187, 187, 194)")
    finally:
        context.close()


def test_the_colour_bar_keeps_its_colours_after_the_address_changes_and_a_resize(page, url):
    """Issue 53: after Analyze rewrote the address, a resize redrew the Attention colour bar white (its gradient
    pointed at the address of the figure's first draw: ``page.js``'s ``followAddress``)."""
    page.goto(url)
    wait_for_heatmap_with(page)
    page.locator("#sentence textarea").fill("a charming journey")
    page.locator("#analyze").click()
    wait_for_heatmap_with(page, "charming")
    page.wait_for_function("() => new URL(location.href).searchParams.get('text') === 'a charming journey'")
    page.set_viewport_size({"width": 900, "height": 800})
    page.wait_for_timeout(500)  # plotly redraws on the window's resize
    fill = page.evaluate("() => document.querySelector('#attention-heatmap .colorbar .cbfill')?.style.fill || ''")
    here = page.evaluate("() => location.href.split('#')[0]")
    assert "url(" in fill and here in fill, (fill, here)


def test_the_tab_bar_and_a_radio_group_are_one_tab_stop_each_moved_by_arrow_keys(page, url):
    """Issue 53: each of 17 tabs and every radio option was its own Tab stop (about 34 presses to reach the Attention
    controls) and arrow keys did not move between tabs. WAI-ARIA's patterns: one stop each, arrows select."""
    page.goto(url)
    wait_for_heatmap_with(page)
    stops = "(css) => [...document.querySelectorAll(css)].filter((e) => e.tabIndex === 0).length"
    page.wait_for_function(f"() => ({stops})('#views [role=tab]') === 1")
    selected = page.locator('#views [role="tab"][aria-selected="true"]')
    first = selected.text_content().strip()
    selected.focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_function(
        "(t) => document.activeElement?.getAttribute('aria-selected') === 'true' && "
        "document.activeElement.textContent.trim() !== t",
        arg=first,
    )
    page.keyboard.press("Home")
    page.wait_for_function("(t) => document.activeElement?.textContent.trim() === t", arg=first)
    assert page.evaluate(stops, "#layer input[type=radio]") == 1
    page.locator("#layer input[type=radio]:checked").focus()
    page.keyboard.press("ArrowRight")
    wait_for_heatmap_with(page, "Layer 2")
    assert page.evaluate(stops, "#layer input[type=radio]") == 1


def test_a_table_wider_than_a_phone_scrolls_in_its_box_and_shows_it(browser, url):
    """Issue 53: on a phone the Head knockout table showed 2 of its 4 columns with no sign that it scrolls; it is its
    own scroll box with a shadow at the edge that has more (theme.py's ``_TABLES``)."""
    context, page = fresh_page(
        browser, url, "?text=a+wonderful+journey&view=knockout", viewport={"width": 390, "height": 844}
    )
    try:
        table = page.locator("#knockout-summary table")
        table.wait_for()
        look = table.evaluate(
            "(t) => [getComputedStyle(t).overflowX, getComputedStyle(t).backgroundImage, t.scrollWidth, t.clientWidth]"
        )
        assert look[0] == "auto" and look[1].count("radial-gradient") == 2, look
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 391  # the page itself never scrolls
    finally:
        context.close()
