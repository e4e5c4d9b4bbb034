"""What a visitor's browser downloads before the first click: the page's first HTML and its configuration (``GET
/config``), plain and as sent to a browser that accepts gzip, with the configuration's events and components.

    python -m benchmarks.page_config   # issue 54's targets: configuration <= 250 KB and <= 100 events
"""

from __future__ import annotations

import httpx

from .load import free_port, start_server


def sizes(url: str, path: str) -> tuple[int, int]:
    """(plain bytes, bytes sent gzip-compressed) of ``GET url/path``."""
    with httpx.Client(timeout=60, trust_env=False) as client:
        plain = client.get(f"{url}/{path}", headers={"accept-encoding": "identity"})
        zipped = client.get(f"{url}/{path}", headers={"accept-encoding": "gzip"})
        sent = int(zipped.headers.get("content-length", len(zipped.content)))
        return len(plain.content), sent


def run() -> list[str]:
    port = free_port()
    server = start_server(["app.py"], port)
    try:
        url = f"http://127.0.0.1:{port}"
        config = httpx.get(f"{url}/config", timeout=60, headers={"accept-encoding": "identity"}).json()
        rows = [f"{name}: {plain / 1000:.0f} KB, sent gzipped {sent / 1000:.0f} KB" for name, (plain, sent) in
                (("configuration (/config)", sizes(url, "config")), ("first HTML (/)", sizes(url, "")))]  # fmt: skip
        return [*rows, f"events {len(config['dependencies'])}, components {len(config['components'])}"]
    finally:
        server.kill()
        server.wait()


if __name__ == "__main__":
    print("\n".join(run()))
