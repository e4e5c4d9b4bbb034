"""A page opened from an address whose share of the server is still held (pages just closed or reloaded, a few
shared links opened at once) draws once the share frees, saying meanwhile that it waits; the server as shipped
(its per-client budget unchanged), in Debian's Chromium as in tests/browser/test_browser.py."""

import uuid

import httpx
import pytest
from app_fixtures import serving
from conftest import TIMEOUT_MS
from test_browser import wait_for_heatmap_with

from transformer.explorer.serving import admission

pytestmark = [pytest.mark.browser, pytest.mark.served]
# their loads hold all a page event may take of the budget (a light call's reserve aside)
CLOSED_PAGES = int((admission.CLIENT_BUDGET - admission.LIGHT_RESERVE) / admission.PAGE_EVENT_COST)
# Polled each frame: the lines saying the page waits, once the one-head heatmap is drawn (until then, false).
NOTICES_UNTIL_DRAWN = """() => {
    const notices = (window.busyNotices ??= []);
    const line = document.getElementById("busy-retry")?.textContent;
    if (line && !notices.includes(line)) notices.push(line);
    return document.querySelector("#attention-heatmap svg.main-svg") ? notices : false;
}"""


@pytest.fixture(scope="module")
def shipped(app):
    """The app served with its limits as shipped."""
    with serving(app.demo, **app.launch_settings()) as url:
        yield url


def close_pages(app, url: str) -> None:
    """Start the page load of ``CLOSED_PAGES`` pages from this address, as pages do, and never read the answers, as
    pages closed meanwhile do not: each holds its share of the budget until the server drops it."""
    load = next(i for i, fn in app.demo.fns.items() if getattr(fn.fn, "__name__", "") == "restore_page")
    with httpx.Client(timeout=30, trust_env=False) as http:
        for _ in range(CLOSED_PAGES):
            body = {"data": [], "fn_index": load, "session_hash": uuid.uuid4().hex, "event_data": None}
            assert http.post(f"{url}gradio_api/queue/join", json=body).status_code == 200
        refused = http.post(f"{url}gradio_api/queue/join", json=body | {"session_hash": uuid.uuid4().hex})
        assert refused.status_code == 429  # the next page's load would be refused now


def test_a_page_opened_while_closed_pages_hold_its_addresss_budget_draws_and_says_it_waits(app, browser, shipped):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    try:
        close_pages(app, shipped)
        page.goto(shipped, wait_until="commit")
        notices = page.wait_for_function(NOTICES_UNTIL_DRAWN).json_value()  # a blank page never draws
        assert any("trying again" in notice for notice in notices), notices  # it said that it waits, meanwhile
        wait_for_heatmap_with(page)
        assert page.locator("#busy-retry").count() == 0  # and says so no more
    finally:
        context.close()
