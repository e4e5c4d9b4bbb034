"""Where Analyze → heatmap spends its time, in the app and in the floor app: a timeline on each page's own clock.

``python -m benchmarks.click_timeline --tokens 128 --rounds 6 [--tree ../other]`` serves the app from this tree
(and from each ``--tree``) and ``floor_app``, and clicks Analyze on each page in turn, as ``benchmarks.browser``
times a click. ``click_timeline.js`` marks, on the page's clock: the click, the queue's join sent and answered, the
job's start and end read from the event stream, the heatmap's ``Plotly.react`` called and its promise resolved,
the address written, and the first word seen on the heatmap's axis (the click's end in ``benchmarks.browser``).
Printed: each mark's median milliseconds after the click. The stages say which side of the wire a gap is on; the
ratios to judge are ``benchmarks.browser``'s.
"""

import argparse
import statistics
import time
from pathlib import Path

from .browser import FIRST_WORDS, VIEWPORT, click_to_heatmap
from .chromium import launch_chromium
from .load import ROOT, free_port, start_server

MARKS = Path(__file__).with_name("click_timeline.js").read_text()
SEEN = "first word seen"


def timeline(page, tokens: int, word: str) -> dict[str, float]:
    """{mark: milliseconds after the click} for one Analyze of a ``tokens``-word sentence that starts with ``word``,
    clicked and waited for as ``benchmarks.browser`` times it (``click_to_heatmap``)."""
    page.evaluate("() => { window.__timeline = []; }")
    click_to_heatmap(page, tokens, word)
    page.evaluate(f"() => window.__timeline.push(['{SEEN}', performance.now()])")
    time.sleep(0.3)  # marks that trail the draw (the address)
    marks = page.evaluate("() => window.__timeline")
    clicked = next(at for name, at in marks if name == "click")
    first: dict[str, float] = {}
    for name, at in marks:
        first.setdefault(name, at - clicked)
    return first


def run(trees: list[Path], tokens: int, rounds: int) -> list[str]:
    from playwright.sync_api import sync_playwright

    ports = {str(tree): free_port() for tree in trees} | {"floor": free_port()}
    servers, samples = {}, {}
    try:
        for name, port in ports.items():
            args = ["-m", "benchmarks.floor_app"] if name == "floor" else ["app.py"]
            servers[name] = start_server(args, port, cwd=ROOT if name == "floor" else Path(name))
        with sync_playwright() as playwright:
            browser = launch_chromium(playwright)
            pages = {}
            for name, port in ports.items():
                context = browser.new_context(viewport=VIEWPORT)
                context.add_init_script(MARKS)
                pages[name] = context.new_page()
                pages[name].set_default_timeout(180_000)
                pages[name].goto(f"http://127.0.0.1:{port}/")
                pages[name].wait_for_selector("#attention-heatmap svg.main-svg")
                pages[name].evaluate("() => window.__wrapPlotly()")
            for round_ in range(rounds + 1):  # the first round warms up
                for name, page in pages.items():
                    page.bring_to_front()
                    marks = timeline(page, tokens, FIRST_WORDS[round_ % 4])
                    for mark, ms in marks.items():
                        if round_:
                            samples.setdefault(name, {}).setdefault(mark, []).append(ms)
            browser.close()
    finally:
        for server in servers.values():
            server.terminate()
    lines = []
    for name, marks in samples.items():
        lines.append(f"{name}: {tokens} tokens, median ms after the click over {rounds} rounds")
        for mark, values in sorted(marks.items(), key=lambda item: statistics.median(item[1])):
            lines.append(f"  {mark:<24} {statistics.median(values):7.1f}  (n={len(values)})")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", type=int, default=128, help="words in the sentence, one token each (default 128)")
    parser.add_argument("--rounds", type=int, default=6, help="timed rounds after one warm-up round (default 6)")
    parser.add_argument("--tree", type=Path, action="append", default=[], help="another checkout to serve as well")
    args = parser.parse_args()
    print("\n".join(run([ROOT, *args.tree], args.tokens, args.rounds)))


if __name__ == "__main__":
    main()
