"""Analyze to heatmap and a cold deep link in Chromium, this tree against another commit's, interleaved in one run.

``python -m benchmarks.browser_ab --old-tree ../old --rounds 16`` (make the old tree with
``git worktree add ../old <commit>``). Both apps serve the bundled model from their own tree, in subprocesses of
this interpreter; one page each, clicked in turn (which goes first alternates by round), 25 then 128 tokens per
click, timed as ``benchmarks.browser`` times a click; then each tree's cold deep link to the knockout view (a fresh
browser context, as ``benchmarks.browser`` times it). Runs apart drift by more than a change costs (the floor of
``benchmarks.browser`` moved from 293 to 426 ms between runs on one day), so a regression is judged here: the ratio
of the two medians of the same run.
"""

import argparse
import statistics
from pathlib import Path
from urllib.parse import quote

from .browser import DEEP_LINK, FIRST_WORDS, KNOCKOUT_DRAWN, VIEWPORT, click_to_heatmap, cold_load, sentence
from .chromium import launch_chromium
from .load import ROOT, free_port, start_server

LENGTHS = (25, 128)
COLD = "cold deep link"


def open_page(browser, url: str):
    """A page at ``url`` once its first heatmap is drawn."""
    page = browser.new_page(viewport=VIEWPORT)
    page.set_default_timeout(180_000)
    page.goto(url)
    page.wait_for_selector("#attention-heatmap svg.main-svg")
    return page


def run(old_tree: Path, rounds: int = 16) -> list[str]:
    """Lines of the report: per length, each tree's median and this tree's ÷ the old one's."""
    from playwright.sync_api import sync_playwright

    trees = {"old": Path(old_tree).resolve(), "this": ROOT}
    ports = {name: free_port() for name in trees}
    servers, samples = {}, {}
    try:  # a server that fails to start leaves none running
        for name, tree in trees.items():
            servers[name] = start_server(["app.py"], ports[name], cwd=tree)
        with sync_playwright() as playwright:
            browser = launch_chromium(playwright)
            pages = {name: open_page(browser, f"http://127.0.0.1:{port}/") for name, port in ports.items()}
            for round_ in range(rounds + 1):  # the first round warms up
                for name in ("old", "this") if round_ % 2 else ("this", "old"):
                    pages[name].bring_to_front()
                    times = {
                        tokens: click_to_heatmap(pages[name], tokens, FIRST_WORDS[(2 * round_ + i) % 4])
                        for i, tokens in enumerate(LENGTHS)
                    }
                    deep = f"http://127.0.0.1:{ports[name]}/?text={quote(sentence('good', 25))}&{DEEP_LINK}"
                    times[COLD] = cold_load(browser, deep, KNOCKOUT_DRAWN)
                    for what, seconds in times.items():
                        if round_:
                            samples.setdefault((name, what), []).append(seconds)
            browser.close()
    finally:
        for server in servers.values():
            server.terminate()
            server.wait(timeout=30)
    lines = [f"Analyze to heatmap and a cold deep link, {rounds} rounds interleaved, old tree {trees['old']}"]
    for what in (*LENGTHS, COLD):
        old, this = (statistics.median(samples[(name, what)]) for name in ("old", "this"))
        label = f"click {what}" if what in LENGTHS else what
        lines.append(f"{label}: old p50 {1000 * old:.0f} ms, this p50 {1000 * this:.0f} ms, {this / old:.2f}×")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--old-tree", type=Path, required=True, help="a checkout of the commit to compare with")
    parser.add_argument("--rounds", type=int, default=16, help="timed rounds after one warm-up round (default 16)")
    args = parser.parse_args()
    print("\n".join(run(args.old_tree, args.rounds)))


if __name__ == "__main__":
    main()
