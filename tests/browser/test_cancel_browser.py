"""The Cancel button in Chromium (issue 37): the Head atlas's computation shows its progress bar and a Cancel button;
a click stops it on the server (its model passes end), says "Cancelled." in one line, and the tab computes again
from its button. The computation is ``conftest.slow_atlas``'s, made long. The Attributions tab's Integrated Gradients
does the same as the tab opens (``conftest.slow_passes``), and runs again from its controls."""

import time

import pytest
from conftest import PASS_WAIT, SLOW_PASSES, SLOW_WAIT, TIMEOUT_MS

BAR = "slow atlas"  # the computation's tqdm bar's name (``conftest.slow_atlas``)
pytestmark = [
    pytest.mark.browser,
    pytest.mark.served,
    pytest.mark.filterwarnings("ignore:'future.no_silent_downcasting' is deprecated"),  # gradio's queue and pandas 3
    pytest.mark.filterwarnings("ignore:The copy keyword is deprecated"),
]


def opened(browser, address: str):
    """A desktop-sized page at ``address``: (its context, the page)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(address)
    return context, page


def cancelled_line(page, cancel):
    """Click ``cancel``: the tab's line (``events.cancelled``) says "Cancelled." in one line; the button goes."""
    cancel.click()
    line = page.locator('#views [data-testid="markdown"].view-failure:visible')
    line.wait_for()
    assert line.inner_text().startswith("Cancelled.") and "\n" not in line.inner_text().strip()
    cancel.wait_for(state="hidden")
    return line


def test_cancel_stops_the_atlas_says_so_and_it_computes_again(browser, slow_atlas):
    url, passes = slow_atlas
    context, page = opened(browser, f"{url}?view=head-atlas")
    page.locator("#atlas-compute").click()
    cancel = page.locator("#atlas-cancel")
    cancel.wait_for(state="visible")
    page.wait_for_function(f"() => document.body.innerText.includes('{BAR}')")  # the tqdm bar, drawn by the page
    assert 0 < len(passes) < SLOW_PASSES
    line = cancelled_line(page, cancel)
    page.wait_for_function(f"() => !document.body.innerText.includes('{BAR}')")  # the progress bar is gone
    at_end = len(passes)
    time.sleep(10 * SLOW_WAIT)
    assert len(passes) <= at_end + 1 < SLOW_PASSES  # the server's loop stopped, not only the page's bar

    passes.clear()
    page.locator("#atlas-compute").click()  # the tab as before: its button computes the atlas again
    page.wait_for_function(
        "() => document.querySelector('#atlas-table')?.textContent.includes('L1 H1')", timeout=TIMEOUT_MS
    )
    assert len(passes) == SLOW_PASSES and not line.is_visible()  # run to its end; the "Cancelled." line cleared
    context.close()


def test_cancel_stops_the_attributions_as_the_tab_opens_and_its_controls_run_them_again(browser, slow_passes):
    url, passes = slow_passes
    context, page = opened(browser, f"{url}?text=the+plot+was+boring")
    page.wait_for_function("() => window.explorer?.addressRead")  # the page load has analyzed the text
    # and Plotly has drawn its heatmap (after the load's answer: on a busy machine, CI once clicked the tab before)
    page.locator("#attention-heatmap svg.main-svg").first.wait_for()
    passes.clear()
    page.locator('#views [data-tab-id="attributions"]').click()
    cancel = page.locator("#attributions-cancel")
    cancel.wait_for(state="visible")
    bar = page.locator('[aria-valuetext^="Integrated Gradients:"]')  # Gradio's progress bar, from the passes' tqdm
    bar.first.wait_for()
    prediction = page.locator("#prediction").text_content()
    assert "%" in prediction and page.locator("#attention-heatmap svg.main-svg").count()  # the page's own views
    line = cancelled_line(page, cancel)
    bar.first.wait_for(state="detached")
    time.sleep(10 * PASS_WAIT)  # the page's /cancel has reached the server: the "Cancelled." line does not wait for it
    at_end = len(passes)
    time.sleep(10 * PASS_WAIT)
    assert 0 < at_end == len(passes)  # the server's job stopped, not only the page's bar (its whole job: ~100 passes)
    assert not page.locator("#faithfulness-plot svg.main-svg").count()  # nothing drawn
    assert page.locator("#prediction").text_content() == prediction  # the page's own views as they were
    assert page.locator("#attention-heatmap svg.main-svg").count()

    passes.clear()
    page.locator("#faithfulness-removal").get_by_label("delete", exact=True).check()  # its controls run it again
    cancel.wait_for(state="visible")
    page.locator("#faithfulness-plot svg.main-svg").first.wait_for()
    cancel.wait_for(state="hidden")
    assert len(passes) > at_end and not line.is_visible()  # run to its end; the "Cancelled." line cleared
    page.wait_for_function("() => /view=attributions.*removal=delete/.test(location.search)")  # then the address
    context.close()
