"""The app's own colours on the light and the dark page, in Chromium (issue 35, item 11): its text reaches WCAG's
4.5:1 against what it is drawn on, and the keyboard focus ring on radios and checkboxes 3:1 (non-text contrast).
Colours are read as the browser computes them, Gradio's theme variables resolved."""

import pytest
from conftest import TIMEOUT_MS

from transformer.explorer.drawing.attributions import _UNREAD
from transformer.explorer.views.word_order import _message

pytestmark = [pytest.mark.browser, pytest.mark.served]
SETTLED = "() => window.explorer?.addressRead === true"
TEXT, NON_TEXT = 4.5, 3.0
KNOCKED_OUT = "() => document.querySelector('#knockout-summary')?.textContent.includes('Switched off: L1 H1')"
# Every selector matches an element drawn in full (Gradio fades an output while its event runs).
DRAWN = """(selectors) => Object.values(selectors).every((selector) => {
    let box = document.querySelector(selector);
    if (!box) return false;
    for (; box; box = box.parentElement) if (getComputedStyle(box).opacity !== "1") return false;
    return true;
})"""

# The app's own HTML that a view writes only for some texts, put where views put theirs (a view's HTML box).
PIECES = {"unread tail": _UNREAD.format(text="past the last token"), "word-order alert": _message("cannot", alert=True)}
# The app's own text, by the tab it is shown on: the status line, the tabs' names, a table's caption and an
# HTML table of the app's (a view's failure line is a Markdown box like the status line, shown only on failure).
SHOWN = {
    "attention": {
        "status line": "#notice",
        "selected tab": "#views button[role='tab'].selected",
        "unselected tabs": "#views button[role='tab']:not(.selected)",  # every one of them
    },
    "errors": {"table caption": "#errors-table .label"},
    "knockout": {"HTML table": "#knockout-summary table"},  # drawn once a head is chosen
}

# {name: contrast ratio} of each element's text (and of a focused radio's outline) against its background.
# What the JavaScript below measures with: an element's colours as computed, its and its ancestors' opacity applied,
# over the first opaque background behind it (the page's own at the end), as WCAG's contrast ratio.
RATIO = """
    const rgba = (text) => {
        const [r, g, b, a = 1] = text.match(/[\\d.]+/g).map(Number);
        return [r, g, b, a];
    };
    const over = ([r, g, b, a], [R, G, B]) => [r * a + R * (1 - a), g * a + G * (1 - a), b * a + B * (1 - a)];
    const background = (e) => {
        const layers = [];
        for (let box = e; box; box = box.parentElement) {
            const fill = rgba(getComputedStyle(box).backgroundColor);
            if (fill[3] > 0) layers.push(fill);
            if (fill[3] >= 1) break;
        }
        let colour = layers.length && layers[layers.length - 1][3] >= 1 ? layers.pop() : [255, 255, 255, 1];
        for (const layer of layers.reverse()) colour = [...over(layer, colour), 1];
        return colour;
    };
    const opacity = (e) => {
        let product = 1;
        for (let box = e; box; box = box.parentElement) product *= Number(getComputedStyle(box).opacity);
        return product;
    };
    const luminance = (rgb) => {
        const linear = rgb.map((c) => c / 255).map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2];
    };
    const contrast = (e, colour) => {
        const back = background(e), [r, g, b, a] = rgba(colour);
        const front = over([r, g, b, a * opacity(e)], back);
        const [hi, lo] = [luminance(front), luminance(back)].sort((x, y) => y - x);
        return (hi + 0.05) / (lo + 0.05);
    };
"""

# {name: [the lowest contrast of the text in the elements it selects, that text]} ("missing" if none matches);
# ``pieces`` are first put in HTML boxes of their own among the views.
TEXT_CONTRASTS = f"""([pieces, selectors]) => {{
    {RATIO}
    const host = document.querySelector("#views");
    for (const [name, html] of Object.entries(pieces)) {{
        const box = document.createElement("div");
        box.className = "prose explain-html";
        box.dataset.probe = name;
        box.innerHTML = html;
        host.append(box);
        selectors[name] = `[data-probe="${{name}}"]`;
    }}
    const texts = (root) => [root, ...root.querySelectorAll("*")].filter(
        (e) => [...e.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim()));
    const found = {{}};
    for (const [name, selector] of Object.entries(selectors)) {{
        const matched = [...document.querySelectorAll(selector)];
        if (!matched.length) {{ found[name] = "missing"; continue; }}
        for (const e of matched) if (!texts(e).length) e.textContent = "probe";  // an empty status line: with text
        const rated = matched.flatMap(texts).map(
            (t) => [contrast(t, getComputedStyle(t).color), t.textContent.trim().slice(0, 30)]);
        found[name] = rated.sort(([x], [y]) => x - y)[0];  // the lowest, with the text it is
    }}
    return found;
}}"""

# The keyboard-focused element's outline: whether it shows, and its contrast against what is behind it.
FOCUS_RING = f"""() => {{
    {RATIO}
    const e = document.activeElement, style = getComputedStyle(e);
    return {{shown: e.matches(":focus-visible") && style.outlineStyle !== "none" && parseFloat(style.outlineWidth) >= 2,
             contrast: contrast(e.parentElement, style.outlineColor)}};
}}"""


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_app_s_own_text_and_focus_ring_reach_wcag_contrast(browser, url, theme):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    try:
        page.goto(f"{url}?__theme={theme}")
        page.wait_for_function(SETTLED)
        page.locator("#views input[type='radio']").first.focus()  # as the Tab key would, before any click
        ring = page.evaluate(FOCUS_RING)
        found = {}
        for tab, selectors in SHOWN.items():
            page.locator(f'#views [data-tab-id="{tab}"]').click()
            if tab == "knockout":
                page.locator("#views label", has_text="L1 H1").first.click()
                page.wait_for_function(KNOCKED_OUT)  # the head's own draw came, not only the tab's first one
            page.wait_for_function(DRAWN, arg=selectors)
            found |= page.evaluate(TEXT_CONTRASTS, [PIECES if tab == "knockout" else {}, selectors])
        assert ring["shown"] and ring["contrast"] >= NON_TEXT, ring
        low = {name: (round(ratio, 2), text) for name, (ratio, text) in found.items() if ratio < TEXT}
        assert set(found) == {*PIECES, *(name for selectors in SHOWN.values() for name in selectors)}
        assert not low, low
    finally:
        context.close()
