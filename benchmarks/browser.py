"""Browser latency: click Analyze in Debian's Chromium until the heatmap shows the new sentence.

The app runs on the bundled model in a subprocess on loopback; Playwright drives /usr/bin/chromium
(never a downloaded browser). Sentences alternate their first word so each round waits for a redraw.
"""

import statistics
import time

from .load import ROOT, free_port, start_server
from .timing import p95_ms

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]
FILLER = "the plot is thin but the cast is great and the music is lovely".split()


def sentence(first_word: str, tokens: int) -> str:
    """A sentence of ``tokens`` words (each is one token for the bundled tokenizer)."""
    words = [first_word] + [FILLER[i % len(FILLER)] for i in range(tokens - 1)]
    return " ".join(words)


def run(lengths=(25, 128, 256), rounds: int = 8) -> list[str]:
    from playwright.sync_api import sync_playwright

    port = free_port()
    server = start_server(["app.py"], port)
    lines = [f"{'tokens':>7} {'p50 ms':>8} {'p95 ms':>8}   (click Analyze -> heatmap shows the new sentence)"]
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.set_default_timeout(30_000)
            page.goto(f"http://127.0.0.1:{port}/")
            page.wait_for_selector("#attention-heatmap svg.main-svg")
            for tokens in lengths:
                samples = []
                for i in range(rounds + 1):  # the first round warms up
                    word = ("good", "bad")[i % 2]
                    page.locator("#sentence textarea").fill(sentence(word, tokens))
                    start = time.perf_counter()
                    page.locator("#analyze").click()
                    page.wait_for_function(
                        """(label) => {
                            const ticks = document.querySelectorAll('#attention-heatmap .xtick text');
                            return [...ticks].some((t) => t.textContent === label);
                        }""",
                        arg=f"0 {word}",
                        polling="raf",
                    )
                    if i:
                        samples.append(time.perf_counter() - start)
                lines.append(f"{tokens:>7} {1000 * statistics.median(samples):>8.0f} {p95_ms(samples):>8.0f}")
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    lines.append(f"targets: 25 tokens <= 1000 ms, 256 tokens <= 2000 ms; {rounds} rounds each, app at {ROOT.name}")
    return lines


if __name__ == "__main__":
    print("\n".join(run()))
