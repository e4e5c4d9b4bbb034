"""The page's stream of answers (``page/answer_stream.js``): an event joined just as the server closes the session's
stream is answered, and an idle page holds no stream open.

The server's close is held back (``AnswerWriter.send``, which every answer stream writes through) until the page has
the answer to its next join: the order in which Gradio's client, left alone, opens no stream for that event and then
closes the one it had (it failed ``make test`` in CI as Analyze pressed while the page loaded)."""

import asyncio
import threading
import time

import pytest
from conftest import TIMEOUT_MS
from test_browser import wait_for_heatmap_with
from test_page_browser import SETTLED, fresh_page

from transformer.explorer.serving import unsent

pytestmark = [pytest.mark.browser, pytest.mark.served]
CLOSE = b'"msg":"close_stream"'
STREAM = "/gradio_api/queue/data"
JOIN = "/gradio_api/queue/join"


@pytest.fixture
def closes_held(monkeypatch):
    """Each close of an answer stream is written only once ``release`` is set (at most ``TIMEOUT_MS`` later);
    ``held`` counts those that waited for it."""
    release, held = threading.Event(), []
    send = unsent.AnswerWriter.send

    async def held_send(writer, message):
        if CLOSE in message.get("body", b"") and not release.is_set():
            held.append(message)
            deadline = time.monotonic() + TIMEOUT_MS / 1000
            while not release.is_set() and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
        await send(writer, message)

    monkeypatch.setattr(unsent.AnswerWriter, "send", held_send)
    return release, held


def streams_of(page) -> dict:
    """The page's requests for a stream of answers: those started, and those over (finished or cut)."""
    streams = {"started": [], "over": []}
    page.on("request", lambda request: STREAM in request.url and streams["started"].append(request))
    for over in ("requestfinished", "requestfailed"):
        page.on(over, lambda request: STREAM in request.url and streams["over"].append(request))
    return streams


def analyze(page, *words: str) -> None:
    page.locator("#sentence textarea").fill(" ".join(words))
    page.locator("#analyze").click()


def test_an_analysis_joined_as_the_answer_stream_closes_is_drawn_and_the_next_one_too(browser, url, closes_held):
    release, held = closes_held
    context, page = fresh_page(browser, url)
    try:
        page.wait_for_function(SETTLED)  # the load's answer is read; its stream's close is held
        page.on("response", lambda response: JOIN in response.url and release.set())
        analyze(page, "funny", "dull")
        wait_for_heatmap_with(page, "funny", "dull")
        assert held, "no close of an answer stream was held: the race was not set up"
        analyze(page, "wonderful", "journey")  # Analyze is not left waiting behind a lost answer
        wait_for_heatmap_with(page, "wonderful", "journey")
    finally:
        context.close()


def test_an_idle_page_holds_no_stream_of_answers_open(browser, url):
    context, page = fresh_page(browser, url)
    streams = streams_of(page)
    try:
        page.wait_for_function(SETTLED)
        for words in (("charming", "film"), ("dull", "acting")):
            analyze(page, *words)
            wait_for_heatmap_with(page, *words)
        deadline = time.monotonic() + TIMEOUT_MS / 1000
        while len(streams["over"]) < len(streams["started"]) and time.monotonic() < deadline:
            page.wait_for_timeout(100)
        assert len(streams["started"]) >= 2  # one per event here: each closed once its answer was read
        assert len(streams["over"]) == len(streams["started"])
    finally:
        context.close()
