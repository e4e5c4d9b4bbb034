"""A cold link to each tab (a fresh browser: no session, no cache) opens that tab with its view drawn: the page load
draws it, and the tab's one drawing event (``ViewDraws.opened_or_drawn``), fired as the page selects the tab, finds it
current and draws nothing over it (issue 54)."""

from __future__ import annotations

import inspect

import pytest
from app_fixtures import desktop_page
from conftest import TIMEOUT_MS

from transformer.explorer.views import VIEWS

TEXT = "a+wonderful+journey"
SETTLED = "() => window.explorer?.addressRead === true"
FAILED = "could not be drawn"
pytestmark = [pytest.mark.browser, pytest.mark.served]


def first_output(app, view: str):
    """The first output of ``view``'s drawing: what its tab shows first."""
    parts = next(inspect.unwrap(fn.fn).__self__ for fn in app.demo.fns.values() if fn.name == "restore_page")
    return parts.drawings[view].outputs[0]


@pytest.mark.parametrize("view", [view.id for view in VIEWS])
def test_a_cold_link_to_each_tab_opens_it_drawn(browser, url, app, view):
    shown = first_output(app, view)
    assert shown.elem_id, f"{view}: its first output needs an elem_id for this test"
    with desktop_page(browser, f"{url}?text={TEXT}&view={view}", TIMEOUT_MS) as page:
        page.wait_for_function(SETTLED)
        page.locator(f'#views [data-tab-id="{view}"][aria-selected="true"]').wait_for()
        page.wait_for_function(  # drawn: text in it, and a plotly figure's svg where it is a plot
            """(id) => {
                const element = document.getElementById(id);
                if (!element || !element.checkVisibility()) return false;
                const plot = element.querySelector('.js-plotly-plot');
                return plot ? !!element.querySelector('svg.main-svg') : element.textContent.trim().length > 0;
            }""",
            arg=shown.elem_id,
        )
        assert FAILED not in page.locator("#views").inner_text()
        assert f"view={view}" in page.url
