"""Browser latency against the floor: Debian's Chromium, the app and ``floor_app`` side by side, rounds interleaved.

Both run on loopback in subprocesses (the app on the bundled model); Playwright drives /usr/bin/chromium
(never a downloaded browser). Each round times, for the app and then the floor, each of:

- click Analyze until the heatmap shows the new sentence (its first word differs from the last one's), at each length;
- change the head until the heatmap is redrawn (no model call in the app; it skips Gradio's queue, the floor's
  ``#head`` does not), and, for the floor only, the same through its ``#head-direct``, which skips the queue
  too: the app's head change against that is reported without a target;
- a cold deep link: a fresh browser context opening ``?text=...&view=knockout&heads_off=L1 H2`` until the knockout
  view is fully drawn, against the floor's page load to its first plot;
- a cold link to the Attention tab (issue 54): a fresh context opening ``?text=<25 tokens>&view=attention`` until its
  heatmap shows the sentence, against a fresh context loading the floor, typing that sentence and pressing Analyze
  until its heatmap shows it (what a visitor does there to see what the link shows).

Each timed action starts ``SETTLE_S`` after the one before, from a page at rest. Ratios are app ÷ floor of
the medians from the same run.
"""

import argparse
import json
import statistics
import time
from urllib.parse import quote

from transformer.explorer.views.walkthrough import STEPS

from .chromium import launch_chromium
from .load import ROOT, free_port, start_server
from .timing import p95_ms

FIRST_WORDS = ["good", "bad", "fine", "poor"]  # one token each; each click's differs from the sentence on screen
FILLER = "the plot is thin but the cast is great and the music is lovely".split()
VIEWPORT = {"width": 1280, "height": 900}
DEEP_LINK = "view=knockout&heads_off=L1 H2"
SETTLE_S = 0.5  # each timed action starts from a page at rest, the steps that trail the one before (the address) done
COLD_ATTENTION = "cold link, Attention"
TARGETS = {"click 25": 1.1, "click 128": 1.2, "click 256": 1.5, COLD_ATTENTION: 1.2, "cold deep link": 1.5,
           "head redraw": 1.1}  # issue 54's, where it sets one  # fmt: skip
OFF_QUEUE = "head, no queue"  # the app's head redraw against the floor's #head-direct
STEP_SHOWN = "(s) => document.querySelector('#walk-text')?.textContent.trim().startsWith(s)"  # "2. ..."
STEP_DRAWN = """([step, title]) => document.querySelector('#walk-text')?.textContent.trim().startsWith(step)
    && document.querySelector('#walk-plot .gtitle')?.textContent !== title"""  # its text, and its own figure
WALK_STEPS = len(STEPS)
WALK_TARGET = 1.1  # a Walkthrough step change against the app's own head change, same run
SHOWS_FIRST_WORD = """(label) => [...document.querySelectorAll('#attention-heatmap .xtick text')]
    .some((t) => t.textContent === label)"""
TITLED = """(words) => { const t = document.querySelector('#attention-heatmap .gtitle');
    return !!t && t.textContent.includes(words); }"""
KNOCKOUT_DRAWN = """() => ['#knockout-grid', '#head-importance']
    .every((s) => document.querySelector(s + ' svg.main-svg'))
    && document.querySelector('#knockout-summary')?.textContent.includes('Switched off: L1 H2')"""


def sentence(first_word: str, tokens: int) -> str:
    """A sentence of ``tokens`` words (each is one token for the bundled tokenizer)."""
    words = [first_word] + [FILLER[i % len(FILLER)] for i in range(tokens - 1)]
    return " ".join(words)


def click_to_heatmap(page, tokens: int, word: str) -> float:
    page.locator("#sentence textarea").fill(sentence(word, tokens))
    time.sleep(SETTLE_S)
    start = time.perf_counter()
    page.locator("#analyze").click()
    page.wait_for_function(SHOWS_FIRST_WORD, arg=f"0 {word}", polling="raf")
    return time.perf_counter() - start


def head_redraw(page, round_: int, choice: str = "#head", heads: tuple[str, str] = ("3", "4")) -> float:
    head = heads[round_ % 2]
    radio = page.locator(choice).get_by_label(head, exact=True)  # both pages' head choice has the id #head
    time.sleep(SETTLE_S)
    start = time.perf_counter()
    radio.check()
    page.wait_for_function(TITLED, arg=f"head {head}", polling="raf")
    return time.perf_counter() - start


def walk_steps(page, round_: int) -> list[float]:
    """Every step change of the Walkthrough: Next from step 1 to the last (even rounds), or Previous back to 1
    (odd), each timed to the step's text and its own figure drawn."""
    button, steps = (
        ("#walk-next", range(2, WALK_STEPS + 1))
        if round_ % 2 == 0
        else ("#walk-previous", range(WALK_STEPS - 1, 0, -1))
    )
    times = []
    for step in steps:
        title = page.locator("#walk-plot .gtitle").text_content()
        time.sleep(SETTLE_S)
        start = time.perf_counter()
        page.locator(button).click()
        page.wait_for_function(STEP_DRAWN, arg=[f"{step}. ", title], polling="raf")
        times.append(time.perf_counter() - start)
    return times


def cold_load(browser, url: str, ready: str, arg=None, headers: dict[str, str] | None = None) -> float:
    """Seconds from opening ``url`` in a fresh context (sending ``headers`` with each request) to ``ready``."""
    context = browser.new_context(viewport=VIEWPORT, extra_http_headers=headers)
    page = context.new_page()
    page.set_default_timeout(180_000)
    time.sleep(SETTLE_S)
    start = time.perf_counter()
    page.goto(url)
    page.wait_for_function(ready, arg=arg, polling="raf")
    elapsed = time.perf_counter() - start
    context.close()
    return elapsed


def cold_type_and_draw(browser, url: str, word: str) -> float:
    """Seconds from opening ``url`` in a fresh context, through typing a 25-token sentence that starts with ``word``
    and pressing Analyze, to its heatmap showing it."""
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.set_default_timeout(180_000)
    time.sleep(SETTLE_S)
    start = time.perf_counter()
    page.goto(url)
    page.wait_for_selector("#attention-heatmap svg.main-svg")
    page.locator("#sentence textarea").fill(sentence(word, 25))
    page.locator("#analyze").click()
    page.wait_for_function(SHOWS_FIRST_WORD, arg=f"0 {word}", polling="raf")
    elapsed = time.perf_counter() - start
    context.close()
    return elapsed


def run(lengths=(25, 128, 256), rounds: int = 8) -> list[str]:
    from playwright.sync_api import sync_playwright

    max_len = json.loads((ROOT / "assets" / "model" / "config.json").read_text())["max_len"]
    lengths = sorted({min(tokens, max_len) for tokens in lengths})
    ports = {"app": free_port(), "floor": free_port()}
    urls = {name: f"http://127.0.0.1:{port}/" for name, port in ports.items()}
    samples: dict[tuple[str, str], list[float]] = {}
    servers = {}
    try:  # a server that fails to start leaves none running
        servers["app"] = start_server(["app.py"], ports["app"])
        servers["floor"] = start_server(["-m", "benchmarks.floor_app"], ports["floor"])
        with sync_playwright() as playwright:
            browser = launch_chromium(playwright)
            pages = {}
            for name, url in urls.items():
                pages[name] = browser.new_page(viewport=VIEWPORT)
                pages[name].set_default_timeout(180_000)
                pages[name].goto(url)
                pages[name].wait_for_selector("#attention-heatmap svg.main-svg")
            deep = f"{urls['app']}?text={quote(sentence('good', 25))}&{DEEP_LINK}"
            walk = browser.new_page(viewport=VIEWPORT)  # the app's Walkthrough tab, drawn from its kept pass
            walk.set_default_timeout(180_000)
            walk.goto(f"{urls['app']}?text={quote(sentence('good', 25))}&view=walkthrough&step=1")
            walk.wait_for_function(STEP_SHOWN, arg="1. ")
            walk.locator("#walk-plot .gtitle").wait_for()
            for round_ in range(rounds + 1):  # the first round warms up
                for name in ("app", "floor"):
                    pages[name].bring_to_front()  # the page a person looks at; a page behind may draw late
                    times = {
                        f"click {tokens}": click_to_heatmap(pages[name], tokens, FIRST_WORDS[(2 * round_ + i) % 4])
                        for i, tokens in enumerate(lengths)
                    }
                    times["head redraw"] = head_redraw(pages[name], round_)
                    if name == "app":
                        walk.bring_to_front()
                        walked = walk_steps(walk, round_)
                        pages[name].bring_to_front()
                        times[OFF_QUEUE] = times["head redraw"]
                        times["cold deep link"] = cold_load(browser, deep, KNOCKOUT_DRAWN)
                        linked = f"{urls['app']}?text={quote(sentence('fine', 25))}&view=attention"
                        times[COLD_ATTENTION] = cold_load(browser, linked, SHOWS_FIRST_WORD, "0 fine")
                    else:  # heads 2 and 1 (its first value is 1): the title changes from the 3 or 4 just drawn
                        times[OFF_QUEUE] = head_redraw(pages[name], round_, "#head-direct", ("2", "1"))
                        times["cold deep link"] = cold_load(browser, urls["floor"], SHOWS_FIRST_WORD, "0 the")
                        times[COLD_ATTENTION] = cold_type_and_draw(browser, urls["floor"], "fine")
                    for what, seconds in times.items():
                        if round_:
                            samples.setdefault((what, name), []).append(seconds)
                    if name == "app" and round_:
                        samples.setdefault(("walkthrough step", name), []).extend(walked)
            browser.close()
    finally:
        for server in servers.values():
            server.terminate()
            server.wait(timeout=30)
    lines = [
        f"{'':<16} {'app p50':>8} {'app p95':>8} {'floor p50':>10} {'floor p95':>10} {'ratio':>6} {'target':>7}",
    ]
    for what in dict.fromkeys(what for what, _ in samples if (what, "floor") in samples):
        app, floor = samples[(what, "app")], samples[(what, "floor")]
        ratio = statistics.median(app) / statistics.median(floor)
        target = TARGETS.get(what) or TARGETS.get("click 256" if what.startswith("click") else what)
        lines.append(
            f"{what:<16} {1000 * statistics.median(app):>8.0f} {p95_ms(app):>8.0f} "
            f"{1000 * statistics.median(floor):>10.0f} {p95_ms(floor):>10.0f} {ratio:>5.2f}× "
            f"{f'≤ {target}×' if target else '—':>7}"
        )
    walked, head = samples[("walkthrough step", "app")], samples[("head redraw", "app")]
    lines.append(
        f"walkthrough step (Next/Previous through all {WALK_STEPS} steps, to its text and figure drawn; "
        f"{len(walked)} changes) {1000 * statistics.median(walked):.0f} ms against the "
        f"app's head change {1000 * statistics.median(head):.0f} ms: "
        f"{statistics.median(walked) / statistics.median(head):.2f}× (target ≤ {WALK_TARGET}×)"
    )
    lines.append(
        f"ms; {rounds} interleaved rounds (app, then floor, each round); floor = benchmarks/floor_app.py drawing one "
        f"heatmap of the same size; {OFF_QUEUE}: the app's head redraw against the floor's off the queue; cold deep "
        f"link: fresh context to the knockout view drawn, floor: to its first plot; {COLD_ATTENTION}: a fresh "
        f"context to the Attention tab's heatmap, floor: load, type, Analyze, heatmap; app at {ROOT.name}"
    )
    return lines


def main(argv: list[str] | None = None) -> None:
    """``python -m benchmarks.browser [--rounds 8] [--lengths 25 128 256]`` (``make bench`` runs the defaults)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=8, help="timed rounds, after one warm-up round")
    parser.add_argument("--lengths", type=int, nargs="+", default=[25, 128, 256], help="click lengths, in tokens")
    args = parser.parse_args(argv)
    print("\n".join(run(tuple(args.lengths), args.rounds)))


if __name__ == "__main__":
    main()
