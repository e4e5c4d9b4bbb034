"""What a visitor's browser downloads before the first click: the page's first HTML, plain and as sent to a browser
that accepts gzip, and the configuration it inlines, with that configuration's events and components.

A page's first HTML inlines its own page's configuration (Gradio's ``get_page_config``: ``GET /config?page=`` for the
explorer's page, ""), and the browser reads that one (it fetches ``/config`` only in Gradio's reload mode, asking
for its page). ``GET /config`` with no page is every page's: the endpoints' page (``page.api.PAGE``) too, which the
Python client reads. Both are measured.

    python -m benchmarks.page_config   # issue 54's targets: configuration <= 250 KB and <= 100 events
"""

from __future__ import annotations

import httpx

from .load import free_port, start_server

MEASURED = (  # (what, path)
    ("configuration of the explorer's page, inlined by / (/config?page=)", "config?page="),
    ("configuration of every page (/config)", "config"),
    ("first HTML (/)", ""),
)


def sizes(url: str, path: str) -> tuple[int, int]:
    """(plain bytes, bytes sent gzip-compressed) of ``GET url/path``."""
    with httpx.Client(timeout=60, trust_env=False) as client:
        plain = client.get(f"{url}/{path}", headers={"accept-encoding": "identity"})
        zipped = client.get(f"{url}/{path}", headers={"accept-encoding": "gzip"})
        sent = int(zipped.headers.get("content-length", len(zipped.content)))
        return len(plain.content), sent


def counts(url: str, path: str) -> str:
    """The events and components of the configuration at ``url/path``: "events E, components C"."""
    config = httpx.get(f"{url}/{path}", timeout=60, headers={"accept-encoding": "identity"}).json()
    return f"events {len(config['dependencies'])}, components {len(config['components'])}"


def run() -> list[str]:
    port = free_port()
    server = start_server(["app.py"], port)
    try:
        url = f"http://127.0.0.1:{port}"
        rows = [f"{name}: {plain / 1000:.0f} KB, sent gzipped {sent / 1000:.0f} KB" for name, path in MEASURED
                for plain, sent in [sizes(url, path)]]  # fmt: skip
        return [*rows, f"explorer's page: {counts(url, 'config?page=')}; every page: {counts(url, 'config')}"]
    finally:
        server.kill()
        server.wait()


if __name__ == "__main__":
    print("\n".join(run()))
