"""axe-core on the page in Chromium (issue 53, item 14): no serious or critical violation on the main view and every
tab, in the light and the dark theme, at desktop (1280 px) and phone (390 px) widths.

axe-core comes from npm (``package.json``; ``make install`` runs ``npm ci``): without it the test fails, saying how to
install it, since CI installs it. One page per theme and width: a sentence analyzed, then each tab opened in turn,
its draw waited for, and axe run over the whole document.
"""

from collections import Counter
from pathlib import Path

import pytest
from conftest import TIMEOUT_MS, open_view

from transformer.explorer.views import VIEWS

pytestmark = [pytest.mark.browser, pytest.mark.served]
AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"
SETTLED = "() => window.explorer?.addressRead === true"
SENTENCE = "A wonderful film, but the acting was not good."
FAILING = ("serious", "critical")
# Plotly lays a figure out after Gradio hands it over, and a figure's transition runs a little after that.
LAID_OUT_MS = 400

# Nothing in the views is being drawn: Gradio fades an output to 0.2 (``.pending``) while its event runs, shows a
# progress bar over it, and fades it back in (a CSS transition of its opacity); axe would measure faded text.
DRAWN = """() => {
    const views = document.querySelector('#views');
    const shown = [...views.querySelectorAll(':is(.pending, .eta-bar, .progress-bar)')];
    const pending = shown.some((e) => e.checkVisibility());
    const fading = document.getAnimations().some((a) => a instanceof CSSTransition && a.transitionProperty === 'opacity'
        && a.playState === 'running' && views.contains(a.effect?.target));
    return !pending && !fading;
}"""

# axe over the document: each violation's rule, impact and up to five of its nodes' targets (and what axe saw).
RUN_AXE = """async () => {
    const found = await axe.run(document, {resultTypes: ["violations"]});
    return found.violations.map((rule) => ({
        id: rule.id,
        impact: rule.impact,
        nodes: rule.nodes.length,
        targets: rule.nodes.slice(0, 5).map((node) => [node.target.join(" "), node.failureSummary.split("\\n")[1]]),
    }));
}"""


def views(page) -> list[str]:
    return page.evaluate("() => [...document.querySelectorAll('#views [data-tab-id]')].map(b => b.dataset.tabId)")


def analyze(page) -> None:
    page.locator("#sentence textarea").fill(SENTENCE)
    page.locator("#analyze").click()
    page.wait_for_function("() => document.querySelector('#tokens')?.textContent.includes('acting')")
    page.wait_for_function("() => document.querySelector('#attention-heatmap')?.textContent.includes('acting')")


def drawn_view(page, view: str) -> None:
    """Open ``view``'s tab (the first is open already) and what fills its tables; wait for its draw."""
    if view != VIEWS[0].id:
        open_view(page, view)
    if view == "knockout":  # its before-and-after table is drawn once a head is switched off
        page.locator("#views label", has_text="L1 H1").first.click()
        page.wait_for_function(
            "() => document.querySelector('#knockout-summary')?.textContent.includes('Switched off: L1 H1')"
        )
    if view == "behaviour":  # the tab's first draw asks for the suite's run, a second event that draws its tables
        page.wait_for_function("() => document.querySelector('#behaviour-figures table')")
    page.wait_for_function(DRAWN)
    page.wait_for_timeout(LAID_OUT_MS)


def axe_on(page) -> list[dict]:
    """axe's violations on the page once nothing in the views is being drawn, before it ran and after: an event that
    starts meanwhile (Behaviour's run of the suite follows its first draw) fades what axe measured, so it runs again."""
    for _ in range(5):
        page.wait_for_function(DRAWN)
        found = page.evaluate(RUN_AXE)
        if page.evaluate(DRAWN):
            return found
        page.wait_for_timeout(LAID_OUT_MS)
    raise AssertionError("the views never stopped drawing while axe ran")


def findings(browser, url: str, theme: str, width: int) -> dict[str, list[dict]]:
    """{view: axe's violations there} on one page at ``width`` in ``theme``, after analyzing ``SENTENCE``."""
    if not AXE.exists():
        pytest.fail(f"axe-core is not installed at {AXE}: run `npm ci` at the repository root (`make install` does)")
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    try:
        page.goto(f"{url}?__theme={theme}")
        page.wait_for_function(SETTLED)
        assert page.evaluate("() => document.body.classList.contains('dark')") == (theme == "dark")
        analyze(page)
        page.add_script_tag(path=str(AXE))
        found = {}
        for view in views(page):
            drawn_view(page, view)
            found[view] = axe_on(page)
        return found
    finally:
        context.close()


@pytest.mark.parametrize("width", [1280, 390], ids=["desktop", "phone"])
@pytest.mark.parametrize("theme", ["light", "dark"])
def test_axe_finds_no_serious_or_critical_violation_on_any_tab(browser, url, theme, width):
    found = findings(browser, url, theme, width)
    assert list(found) == [view.id for view in VIEWS]  # every tab was checked, the main view (the first) too
    counts = {view: dict(Counter(f"{rule['impact']} {rule['id']}" for rule in rules)) for view, rules in found.items()}
    print(f"axe, {theme} at {width} px, rules violated:", counts)  # shown with -rP or on failure
    failing = [
        f"{view}: {rule['id']} ({rule['impact']}, {rule['nodes']} nodes): {rule['targets']}"
        for view, rules in found.items()
        for rule in rules
        if rule["impact"] in FAILING
    ]
    assert not failing, "\n".join(failing)
