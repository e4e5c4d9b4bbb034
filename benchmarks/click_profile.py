"""Where the page's main thread spends an Analyze click: Chromium's CPU profile of the app and of the floor app.

``python -m benchmarks.click_profile --tokens 128 --rounds 8 [--tree ../other]`` serves the app (from this tree or
``--tree``) and ``floor_app``, clicks Analyze ``rounds`` times on each page as ``benchmarks.browser`` times a click,
under the DevTools protocol's sampling profiler (200 µs), and prints per page the busy milliseconds a click (samples
that are not idle) and the functions with the most self time and the most inclusive time. A function of ``page.js``
or ``phone.js`` shows with no script name (they are inlined in the page). ``benchmarks.browser`` holds the ratios
to judge; this says what a gap is made of.
"""

import argparse
import collections
from pathlib import Path

from .browser import FIRST_WORDS, VIEWPORT, click_to_heatmap
from .chromium import launch_chromium
from .load import ROOT, free_port, start_server


def frame_name(node: dict) -> str:
    frame = node["callFrame"]
    return f"{frame['functionName'] or '(anonymous)'} {frame['url'].rsplit('/', 1)[-1]}:{frame['lineNumber']}"


def profile_clicks(page, tokens: int, rounds: int) -> dict:
    """The CPU profile (the protocol's ``Profiler.Profile``) of ``rounds`` Analyze clicks, after one unprofiled."""
    click_to_heatmap(page, tokens, FIRST_WORDS[-1])
    session = page.context.new_cdp_session(page)
    session.send("Profiler.enable")
    session.send("Profiler.setSamplingInterval", {"interval": 200})
    session.send("Profiler.start")
    for round_ in range(rounds):
        click_to_heatmap(page, tokens, FIRST_WORDS[round_ % len(FIRST_WORDS)])
    return session.send("Profiler.stop")["profile"]


def summarise(profile: dict, rounds: int, top: int = 20) -> list[str]:
    """Busy milliseconds a click, then the ``top`` functions by self time and by inclusive time, a click each."""
    nodes = {node["id"]: node for node in profile["nodes"]}
    parent = {child: node["id"] for node in profile["nodes"] for child in node.get("children", [])}
    own, inclusive = collections.Counter(), collections.Counter()
    for sample, delta in zip(profile["samples"], profile["timeDeltas"], strict=True):
        ms = delta / 1000 / rounds
        own[frame_name(nodes[sample])] += ms
        seen, at = set(), sample
        while at is not None:  # a recursive function counts once per sample
            if (name := frame_name(nodes[at])) not in seen:
                inclusive[name] += ms
                seen.add(name)
            at = parent.get(at)
    for times in (own, inclusive):  # waiting, and the root that holds every sample
        for name in [name for name in times if name.startswith(("(idle)", "(root)"))]:
            del times[name]
    lines = [f"  busy {sum(own.values()):.0f} ms a click; self time:"]
    lines += [f"    {ms:7.1f}  {name}" for name, ms in own.most_common(top)]
    lines.append("  inclusive time:")
    return lines + [f"    {ms:7.1f}  {name}" for name, ms in inclusive.most_common(top)]


def run(tree: Path, tokens: int, rounds: int) -> list[str]:
    from playwright.sync_api import sync_playwright

    ports = {"app": free_port(), "floor": free_port()}
    servers = {}
    lines = [f"Analyze at {tokens} tokens, {rounds} clicks each, CPU profile (ms a click); app from {tree}"]
    try:
        servers["app"] = start_server(["app.py"], ports["app"], cwd=tree)
        servers["floor"] = start_server(["-m", "benchmarks.floor_app"], ports["floor"], cwd=ROOT)
        with sync_playwright() as playwright:
            browser = launch_chromium(playwright)
            for name, port in ports.items():
                page = browser.new_context(viewport=VIEWPORT).new_page()
                page.set_default_timeout(180_000)
                page.goto(f"http://127.0.0.1:{port}/")
                page.wait_for_selector("#attention-heatmap svg.main-svg")
                lines += [name, *summarise(profile_clicks(page, tokens, rounds), rounds)]
    finally:
        for server in servers.values():
            server.terminate()
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.click_profile", description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=128, help="the sentence's length in tokens (default 128)")
    parser.add_argument("--rounds", type=int, default=8, help="profiled clicks on each page (default 8)")
    parser.add_argument("--tree", type=Path, default=ROOT, help="the checkout to serve the app from (default: this)")
    args = parser.parse_args(argv)
    print("\n".join(run(args.tree, args.tokens, args.rounds)))


if __name__ == "__main__":
    main()
