"""The page in Chromium at real size: the app on a random DistilBERT-base checkpoint against the app on the bundled
model, side by side, rounds interleaved.

Both apps run on loopback in subprocesses (``load.start_server``): one on the bundled model, one with ``MODEL_ID``
a random DistilBERT-base folder (``real_size.write_checkpoint``, built in a child process, no download; 6 layers ×
12 heads × 768). Both have ``JOB_SECONDS`` 600, an empty data folder and a temporary cache. Playwright drives
Debian's Chromium; each round, for each app (the first alternating by round), times:

- Analyze: click until the Attention heatmap holds the new sentence (its first word, which changes every round);
- All heads: open the tab until its figure holds the new sentence (8 heads on the bundled model, 72 on DistilBERT's
  shapes), then back to Attention, untimed.

The sentence is the word twice, then filler (``browser.sentence``): ``--tokens`` words, each one token of both
vocabularies, so DistilBERT reads two more ([CLS], [SEP]). A figure holds the sentence when plotly's data on the page
has an axis label with the word and its heatmap image is drawn; DistilBERT's 72 heads come as one mosaic, in blocks
of 2 × 2 tokens at 100 tokens, so the word stands twice to start a block. Each timed action starts
``browser.SETTLE_S`` after the one before. Targets (issue 37, DistilBERT-base, about 100 tokens, differences in
the same run): Analyze ≤ the bundled model's + 0.5 s; All heads ≤ 3 s.

Where the time goes: each app's own process times the same two answers on the server (the Analyze handler,
``page.show_text``, and the All heads figure, ``all_heads.show_grid``, medians of 3, after one untimed Analyze)
and their JSON size as Gradio sends figures (``explain_views.payload_kb``); the page times ``Plotly.react`` on each
figure (its synchronous drawing, JSON parsing excluded). Example::

    HF_HUB_OFFLINE=1 nice -n 5 python -m benchmarks.real_size_page --rounds 5
"""

import argparse
import contextlib
import multiprocessing
import os
import statistics
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from transformer.loading import DEFAULT_MODEL_DIR

from .browser import FIRST_WORDS, SETTLE_S, sentence
from .browser_ab import open_page
from .chromium import launch_chromium
from .load import free_port, start_server
from .real_size import build_in_child
from .timing import measure

TOKENS = 100
ANALYZE_EXTRA_S = 0.5  # DistilBERT's Analyze to heatmap <= the bundled model's + this
GRID_S = 3.0  # DistilBERT's All heads drawn in at most this
SERVER_ROUNDS = 3
APPS = ("bundled", "DistilBERT")
HEATMAP, GRID = "#attention-heatmap", "#attention-grid"
HOLDS = """([selector, word]) => {
    const plot = document.querySelector(selector + ' .js-plotly-plot');
    return !!plot?.querySelector('.heatmaplayer image')
        && (plot.data?.[0]?.x ?? []).some((label) => String(label).includes(' ' + word));
}"""  # the figure on the page is the new sentence's: its labels hold the word, its cells are drawn
TIME_REACT = """() => {
    const plotly = window.Plotly, react = plotly.react;
    plotly.react = function (div, ...rest) {
        const start = performance.now(), out = react.call(this, div, ...rest);
        window.reactMs[div.closest('[id]').id] = performance.now() - start;
        return out;
    };
}"""  # Gradio draws each figure with window.Plotly's react
HEADS_DRAWN = """(selector) => {
    const plot = document.querySelector(selector + ' .js-plotly-plot');
    const across = plot.layout.xaxis?.ticktext?.length, down = plot.layout.yaxis?.ticktext?.length;
    return plot.data.length > 1 ? plot.data.length : across * down;
}"""  # small multiples: a trace a head; a mosaic: its head and layer ticks


def tab(page, view: str):
    """A view's tab in the tab row."""
    return page.locator(f'#views [data-tab-id="{view}"]')


def timed(page, act, selector: str, word: str) -> float:
    """Seconds from ``act()``, made ``SETTLE_S`` after the last action, until ``selector``'s figure holds ``word``."""
    time.sleep(SETTLE_S)
    start = time.perf_counter()
    act()
    page.wait_for_function(HOLDS, arg=[selector, word], polling="raf")
    return time.perf_counter() - start


def one_round(page, text: str, word: str) -> dict[str, float]:
    """Analyze ``text`` on the Attention tab, then open All heads; back to Attention. Each time in seconds, and the
    page's ``Plotly.react`` milliseconds for each figure."""
    page.locator("#sentence textarea").fill(text)
    page.evaluate("() => { window.reactMs = {}; }")
    times = {"analyze": timed(page, page.locator("#analyze").click, HEATMAP, word)}
    times["grid"] = timed(page, tab(page, "all-heads").click, GRID, word)
    react = page.evaluate("() => window.reactMs")
    tab(page, "attention").click()
    page.wait_for_function(HOLDS, arg=[HEATMAP, word], polling="raf")
    return times | {"analyze react": react[HEATMAP[1:]] / 1000, "grid react": react[GRID[1:]] / 1000}


def server_side(model_dir: str, text: str) -> dict:
    """In a fresh process on ``model_dir``'s model, one torch thread as the app: the Analyze handler's and the All
    heads figure's median seconds and answer size (KB)."""
    os.environ |= {"MODEL_ID": model_dir, "JOB_SECONDS": "600", "GRADIO_ANALYTICS_ENABLED": "False"}
    import torch

    from transformer.explorer.page import page
    from transformer.explorer.registry import Registry
    from transformer.explorer.views import VIEWS, all_heads

    from .explain_views import payload_kb

    torch.set_num_threads(1)
    registry = Registry(VIEWS)
    result = page.show_text(registry, text, 1, "1", None)[0]
    calls = {
        "analyze": lambda: page.show_text(registry, text, 1, "1", None)[1:],  # what it sends: not the kept analysis
        "grid": lambda: all_heads.show_grid(result),
    }
    times = measure(calls, rounds=SERVER_ROUNDS, warmup=0)
    return {name: (statistics.median(times[name]), payload_kb(fn())) for name, fn in calls.items()}


@contextlib.contextmanager
def serving(folders: dict[str, Path], work: Path):
    """Both apps' servers, each on ``folders``' model: yields their ports; stops every one started."""
    empty = work / "no-data"
    empty.mkdir()
    common = {"JOB_SECONDS": "600", "SENTIMENT_DATA_DIR": str(empty), "ATTENTION_EXPLORER_CACHE": str(work)}
    servers, ports = [], {}
    try:  # a server that fails to start leaves none running
        for name, folder in folders.items():
            ports[name] = free_port()
            servers.append(start_server(["app.py"], ports[name], common | {"MODEL_ID": str(folder)}))
        yield ports
    finally:
        for server in servers:
            server.terminate()
            server.wait(timeout=30)


def measure_pages(ports: dict[str, int], rounds: int, tokens: int) -> tuple[dict, dict]:
    """Every app's times over ``rounds`` timed rounds after one warm-up, and how many heads each grid drew."""
    from playwright.sync_api import sync_playwright

    samples: dict[tuple[str, str], list[float]] = {}
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        pages = {name: open_page(browser, f"http://127.0.0.1:{port}/") for name, port in ports.items()}
        for page in pages.values():
            page.evaluate(TIME_REACT)
        for round_ in range(rounds + 1):  # the first round warms up
            word = FIRST_WORDS[round_ % len(FIRST_WORDS)]
            for name in APPS if round_ % 2 else APPS[::-1]:
                pages[name].bring_to_front()  # the page a person looks at; a page behind may draw late
                for what, seconds in one_round(pages[name], f"{word} {sentence(word, tokens - 1)}", word).items():
                    if round_:
                        samples.setdefault((name, what), []).append(seconds)
        heads = {name: page.evaluate(HEADS_DRAWN, GRID) for name, page in pages.items()}
        browser.close()
    return samples, heads


def run(rounds: int = 5, tokens: int = TOKENS) -> list[str]:
    """The table: each app's medians, DistilBERT's against the targets, and the server's share."""
    text = f"good {sentence('good', tokens - 1)}"
    with tempfile.TemporaryDirectory() as work:
        folders = {"bundled": DEFAULT_MODEL_DIR, "DistilBERT": build_in_child(Path(work) / "distilbert", "distilbert")}
        spawn = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(1, mp_context=spawn, max_tasks_per_child=1) as pool:
            server = {name: pool.submit(server_side, str(folder), text).result() for name, folder in folders.items()}
        with serving(folders, Path(work)) as ports:
            samples, heads = measure_pages(ports, rounds, tokens)
    p50 = {key: statistics.median(values) for key, values in samples.items()}
    extra = p50[("DistilBERT", "analyze")] - p50[("bundled", "analyze")]
    grid = p50[("DistilBERT", "grid")]
    verdicts = {
        "analyze": f"≤ +{ANALYZE_EXTRA_S} s: {'met' if extra <= ANALYZE_EXTRA_S else 'MISSED'}",
        "grid": f"DistilBERT ≤ {GRID_S} s: {'met' if grid <= GRID_S else 'MISSED'}",
    }
    grid_name = f"All heads tab drawn ({heads['bundled']} heads, {heads['DistilBERT']})"
    names = {"analyze": "Analyze → Attention heatmap", "grid": grid_name}
    lines = [
        f"{tokens} words; medians of {rounds} interleaved rounds in Chromium; server: each app's handler alone "
        f"(median of {SERVER_ROUNDS}), answer as JSON; react: Plotly.react on the page",
        "| | bundled | DistilBERT-base | DistilBERT − bundled | target | server s (bundled, DistilBERT) "
        "| answer KB | react s |",
        "| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: |",
    ]
    for what, name in names.items():
        seconds = [server[app][what][0] for app in APPS]
        kb = [server[app][what][1] for app in APPS]
        react = [p50[(app, f"{what} react")] for app in APPS]
        lines.append(
            f"| {name} | {p50[('bundled', what)]:.2f} s | {p50[('DistilBERT', what)]:.2f} s "
            f"| {p50[('DistilBERT', what)] - p50[('bundled', what)]:+.2f} s | {verdicts[what]} "
            f"| {seconds[0]:.2f}, {seconds[1]:.2f} | {kb[0]:.0f}, {kb[1]:.0f} | {react[0]:.2f}, {react[1]:.2f} |"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds after one warm-up round (default 5)")
    parser.add_argument("--tokens", type=int, default=TOKENS, help=f"words in each sentence (default {TOKENS})")
    args = parser.parse_args()
    print("\n".join(run(args.rounds, args.tokens)))


if __name__ == "__main__":
    main()
