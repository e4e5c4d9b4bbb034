"""Soak test: what the server keeps after real traffic, round after round (stops by itself in about 10 minutes).

Each round: ``--visits`` Chromium pages each analyze a distinct ~300-word sentence, copy a link, open the
knockout, attributions, rollout and inside-one-head tabs, copy a second link, and close; ``--clients``
gradio_client callers, each with a fresh session, call every API endpoint once; one 5 MB upload is tried;
Gradio's deep-link route is called for each API session. After the round the server's resident memory and
the bytes its temporary folder holds are printed. The app runs in a subprocess with its own TMPDIR.

    python -m benchmarks.soak --rounds 3 --visits 8 --clients 1 --minutes 10   # = make soak
    python -m benchmarks.soak --visits 12 --minutes 16   # the README's run: three rounds of 12
"""

import argparse
import os
import tempfile
import time
from pathlib import Path

import httpx

from .browser import sentence
from .chromium import launch_chromium
from .load import free_port, rss_mb, start_server

VIEWS = [("Head knockout", "#knockout-summary p"), ("Attributions", "#attribution-summary p")]
VIEWS += [("Rollout", "#rollout-shares svg.main-svg"), ("Inside one head", "#head-plot svg.main-svg")]
WORDS = 300
LAST_VISIT_SECONDS = 60  # room left for the last visit, the API callers and the measurement


def folder_bytes(folder: Path) -> tuple[int, int]:
    """(bytes, files) under ``folder``."""
    sizes = [path.stat().st_size for path in folder.rglob("*") if path.is_file()]
    return sum(sizes), len(sizes)


def visit(context, url: str, text: str) -> None:
    """One visitor: analyze ``text``, copy a link, open the explanation tabs, copy another link, leave.

    Visitors share one browser ``context`` (its cache: the page's scripts are fetched once, as a returning
    visitor's are), each in a tab of their own, closed at the end: a new session each time.
    """
    page = context.new_page()
    page.set_default_timeout(60_000)
    try:
        page.goto(url)
        page.wait_for_selector("#attention-heatmap svg.main-svg")
        page.locator("#sentence textarea").fill(text)
        page.locator("#analyze").click()
        page.wait_for_function("(w) => document.querySelector('#tokens')?.textContent.includes(w)", arg=text.split()[1])
        for tab, drawn in VIEWS:
            if tab == "Head knockout":
                copy_link(page)
            page.get_by_role("tab", name=tab).click()
            page.locator(drawn).first.wait_for()
        copy_link(page)
    finally:
        page.close()  # the tab closes: its heartbeat ends


def copy_link(page) -> None:
    page.evaluate("() => navigator.clipboard.writeText('')")
    page.get_by_role("button", name="Copy link to this view").click()
    page.wait_for_function("async () => (await navigator.clipboard.readText()).includes('link=')")


def api_client(url: str, text: str) -> int:
    """A caller with a fresh session calls every named endpoint once; returns how many calls failed."""
    from gradio_client import Client

    client = Client(url, verbose=False, analytics_enabled=False)
    failed = 0
    for name, endpoint in client.view_api(return_format="dict", print_info=False)["named_endpoints"].items():
        args = [text if "text" in p["parameter_name"] else p["parameter_default"] for p in endpoint["parameters"]]
        try:
            client.predict(*args, api_name=name)
        except Exception:
            failed += 1
        httpx.get(f"{url}gradio_api/deep_link", params={"session_hash": client.session_hash}, trust_env=False)
    return failed


def main(argv: list[str] | None = None) -> None:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--visits", type=int, default=8, help="browser sessions per round (about 20 s each here)")
    parser.add_argument("--clients", type=int, default=1, help="API callers (fresh sessions) per round")
    parser.add_argument("--settle", type=float, default=20, help="seconds after a round before measuring")
    parser.add_argument("--minutes", type=float, default=10, help="the most it runs: no visit starts too late")
    args = parser.parse_args(argv)

    started = time.monotonic()
    temp = Path(tempfile.mkdtemp(prefix="soak-"))
    port = free_port()
    server = start_server(["app.py"], port, env={"TMPDIR": str(temp), "GRADIO_TEMP_DIR": str(temp / "gradio")})
    url = f"http://127.0.0.1:{port}/"
    print(f"{'round':>5} {'visits':>6} {'API calls failed':>16} {'upload':>6} {'RSS MB':>7} {'+MB':>6} "
          f"{'links':>5} {'link KB':>7} {'temp KB':>8} {'temp files':>10}", flush=True)  # fmt: skip
    try:
        before = rss_mb(server.pid)
        print(f"{0:>5} {'':>6} {'':>16} {'':>6} {before:>7.0f}", flush=True)
        with sync_playwright() as playwright:
            browser = launch_chromium(playwright)
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            context.grant_permissions(["clipboard-read", "clipboard-write"], origin=url.rstrip("/"))
            last_start = started + 60 * args.minutes - args.settle - LAST_VISIT_SECONDS
            for round_ in range(1, args.rounds + 1):
                if time.monotonic() > last_start:
                    print("time is up: no more rounds", flush=True)
                    break
                took = []
                for i in range(args.visits):
                    if time.monotonic() > last_start:
                        print(f"time is up: round {round_} measured after {i} visits", flush=True)
                        break
                    begun = time.monotonic()
                    visit(context, url, sentence(f"visit {round_} {i}", WORDS))
                    took.append(time.monotonic() - begun)
                failed = sum(api_client(url, sentence(f"client {round_} {i}", WORDS)) for i in range(args.clients))
                blob = {"files": ("blob.bin", os.urandom(5_000_000))}
                upload = httpx.post(f"{url}gradio_api/upload", files=blob, trust_env=False, timeout=60).status_code
                time.sleep(args.settle)  # closed pages are noticed at their next heartbeat (15 s)
                rss = rss_mb(server.pid)
                links = folder_bytes(temp / "attention-explorer-links")
                temp_all = folder_bytes(temp)
                print(f"visits took {' '.join(f'{t:.0f}' for t in took)} s", flush=True)
                print(
                    f"{round_:>5} {len(took):>6} {failed:>16} {upload:>6} {rss:>7.0f} {rss - before:>+6.0f} "
                    f"{links[1]:>5} {links[0] / 1024:>7.1f} {temp_all[0] / 1024:>8.0f} {temp_all[1]:>10}",
                    flush=True,
                )
                before = rss
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    print(f"done in {time.monotonic() - started:.0f} s; temporary folder {temp}")


if __name__ == "__main__":
    main()
