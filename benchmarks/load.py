"""Load test: concurrent gradio_client callers against the app and against Gradio's no-op floor.

Both servers run on loopback as subprocesses; every client is its own process (so the client
side is not serialised by one GIL) with its own loopback address (a visitor of its own, as the
server's per-address limits see it). Each level runs for a fixed time and then stops by itself.

    python -m benchmarks.load --clients 1 4 16 --seconds 60
"""

import argparse
import contextlib
import os
import socket
import statistics
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
LAUNCH_SETTLE_SECONDS = 2
SENTENCE = "The acting was wonderful, but the plot didn't hold together and I left disappointed."


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(
    args: list[str], port: int, env: dict | None = None, cwd: Path = ROOT, log: Path | None = None
) -> subprocess.Popen:
    """``python <args> --port <port>``, its output to ``log`` (or nowhere), once its page answers."""
    env = os.environ | {"GRADIO_ANALYTICS_ENABLED": "False", "HF_HUB_OFFLINE": "1"} | (env or {})
    with open(log, "ab") if log else contextlib.nullcontext(subprocess.DEVNULL) as output:  # the child keeps its own
        proc = subprocess.Popen(
            [sys.executable, *args, "--port", str(port)], cwd=cwd, env=env, stdout=output, stderr=subprocess.STDOUT,
        )  # fmt: skip
    # Ready once the page answers, not once the port opens: Gradio's launch then still checks the page itself (a HEAD
    # with a 3 s timeout) and exits if that times out, which 16 clients starting at once on a loaded machine made
    # it do ("Connection reset by peer" in every client after).
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/", timeout=10).status_code == 200:
                time.sleep(LAUNCH_SETTLE_SECONDS)  # the launch's own check, sent before ours, has its answer
                if proc.poll() is None:
                    return proc
        except httpx.HTTPError:
            time.sleep(0.5)
    proc.kill()
    raise RuntimeError(f"server {args} did not start on port {port}")


def rss_mb(pid: int) -> float:
    """Resident memory of a process, from /proc (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("VmRSS not found")


def leave_from(address: str) -> None:
    """Make this process's httpx connections leave from loopback ``address``: each client process is one
    visitor, and the server limits jobs per address (``explorer.serving.guard``)."""
    import httpx

    for transport in (httpx.HTTPTransport, httpx.AsyncHTTPTransport):
        opened = transport.__init__

        def from_address(self, *args, _opened=opened, **kwargs):
            kwargs.setdefault("local_address", address)
            _opened(self, *args, **kwargs)

        transport.__init__ = from_address


def client_loop(
    url: str, api_name: str, seconds: float, max_requests: int, address: str = "127.0.0.1"
) -> tuple[list[float], int, str]:
    """One client, from ``address``: call the endpoint until time or count runs out.

    Returns:
        (latencies, errors, last error).
    """
    from gradio_client import Client

    leave_from(address)

    client = Client(url, verbose=False, analytics_enabled=False)
    latencies, errors, last_error = [], 0, ""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and len(latencies) + errors < max_requests:
        start = time.perf_counter()
        try:
            client.predict(SENTENCE, api_name=api_name)
            latencies.append(time.perf_counter() - start)
        except Exception as error:  # counted and reported, never hidden
            errors += 1
            last_error = repr(error)[:200]
    return latencies, errors, last_error


def run_level(url: str, api_name: str, clients: int, seconds: float, max_requests: int) -> dict:
    with ProcessPoolExecutor(clients) as pool:
        start = time.perf_counter()
        addresses = [f"127.0.1.{i + 1}" for i in range(clients)]  # one visitor each
        futures = [pool.submit(client_loop, url, api_name, seconds, max_requests, a) for a in addresses]
        results = [f.result() for f in futures]
        elapsed = time.perf_counter() - start
    latencies = sorted(x for lat, _, _ in results for x in lat)
    errors = sum(e for _, e, _ in results)
    p95 = latencies[min(len(latencies) - 1, round(0.95 * (len(latencies) - 1)))] if latencies else float("nan")
    return {
        "requests": len(latencies),
        "errors": errors,
        "last_error": next((m for _, _, m in results if m), ""),
        "rps": len(latencies) / elapsed,
        "p50_ms": 1000 * statistics.median(latencies) if latencies else float("nan"),
        "p95_ms": 1000 * p95,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 4, 16], help="concurrency levels")
    parser.add_argument("--seconds", type=float, default=60, help="duration of each level")
    parser.add_argument("--max-requests", type=int, default=5000, help="cap per client per level")
    parser.add_argument("--memory-requests", type=int, default=1000, help="requests for the memory-growth check")
    args = parser.parse_args(argv)

    servers = {"floor /noop": (["-m", "benchmarks.floor_app"], "/noop")}
    servers |= {"app /predict": (["app.py"], "/predict"), "app /attention": (["app.py"], "/attention")}
    procs: dict[tuple, tuple[subprocess.Popen, str]] = {}
    try:
        print(f"{'endpoint':>16} {'clients':>7} {'requests':>8} {'errors':>6} {'req/s':>7} {'p50 ms':>8} {'p95 ms':>8}")
        for name, (server_args, api_name) in servers.items():
            key = tuple(server_args)
            if key not in procs:
                port = free_port()
                procs[key] = (start_server(server_args, port), f"http://127.0.0.1:{port}/")
            _, url = procs[key]
            for clients in args.clients:
                r = run_level(url, api_name, clients, args.seconds, args.max_requests)
                print(
                    f"{name:>16} {clients:>7} {r['requests']:>8} {r['errors']:>6} {r['rps']:>7.1f} "
                    f"{r['p50_ms']:>8.1f} {r['p95_ms']:>8.1f}"
                    + (f"  last error: {r['last_error']}" if r["errors"] else ""),
                    flush=True,
                )
        app_proc, url = procs[("app.py",)]
        before = rss_mb(app_proc.pid)
        r = run_level(url, "/attention", 4, 3600, args.memory_requests // 4)
        after = rss_mb(app_proc.pid)
        growth = 100 * (after - before) / before
        print(
            f"\napp memory: {before:.0f} MB before, {after:.0f} MB after {r['requests']} more /attention requests "
            f"({growth:+.1f}%; target < 5%), errors {r['errors']}"
        )
    finally:
        for proc, _ in procs.values():
            proc.terminate()
            proc.wait(timeout=30)


if __name__ == "__main__":
    main()
