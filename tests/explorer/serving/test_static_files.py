"""Gradio's page files compressed once (``serving.static_files``): answered gzipped from memory, compressed once even
when many ask at once, and nothing else touched."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import threading

import pytest

from transformer.explorer.serving import static_files
from transformer.explorer.serving.static_files import StaticFiles

GZIP = {"accept-encoding": "gzip, deflate, br"}


class Passed:
    """The app behind the middleware: counts what it is handed and answers 204."""

    def __init__(self) -> None:
        self.paths: list[str] = []

    async def __call__(self, scope, receive, send) -> None:
        self.paths.append(scope["path"])
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})


def request(files: StaticFiles, path: str, headers: dict | None = None, method: str = "GET", root_path: str = ""):
    """(status, {header: value}, body) of one request through ``files``."""
    sent: list[dict] = []
    scope = {
        "type": "http",
        "method": method,
        "path": root_path + path,
        "root_path": root_path,
        "headers": [(k.encode(), v.encode()) for k, v in (GZIP if headers is None else headers).items()],
    }

    async def send(message):
        sent.append(message)

    asyncio.run(files(scope, None, send))
    start, body = sent[0], b"".join(m.get("body", b"") for m in sent[1:])
    return start["status"], {k.decode(): v.decode() for k, v in start["headers"]}, body


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "index-Ab12.js").write_text("export const a = 1;\n" * 500)
    (tmp_path / "theme-Cd34.css").write_text("body { margin: 0 }\n" * 200)
    (tmp_path / "logo.png").write_bytes(b"\x89PNG" + bytes(64))
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "deep.js").write_text("x")
    return tmp_path


def test_a_script_or_style_is_answered_gzipped_from_memory_and_kept_by_the_browser(folder):
    inner = Passed()
    files = StaticFiles(inner, folder)
    for name, kind in (("index-Ab12.js", "javascript"), ("theme-Cd34.css", "text/css")):
        status, headers, body = request(files, f"/assets/{name}")
        assert status == 200 and headers["content-encoding"] == "gzip" and kind in headers["content-type"]
        assert gzip.decompress(body) == (folder / name).read_bytes()
        assert int(headers["content-length"]) == len(body) < (folder / name).stat().st_size
        assert "immutable" in headers["cache-control"] and headers["vary"] == "Accept-Encoding"
    (folder / "index-Ab12.js").write_text("changed")  # never read again: the name stands for its content
    assert gzip.decompress(request(files, "/assets/index-Ab12.js")[2]).startswith(b"export const a = 1;")
    assert inner.paths == []


@pytest.mark.parametrize(
    ("path", "headers", "method"),
    [
        ("/assets/index-Ab12.js", {"accept-encoding": "identity"}, "GET"),  # a client that takes no gzip
        ("/assets/index-Ab12.js", {}, "GET"),
        ("/assets/index-Ab12.js", None, "POST"),
        ("/assets/logo.png", None, "GET"),  # compressed already
        ("/assets/sub/deep.js", None, "GET"),  # no folders
        ("/assets/../secret.js", None, "GET"),
        ("/assets/missing-Zz99.js", None, "GET"),
        ("/assets/a\x00b.js", None, "GET"),
        ("/gradio_api/file=/assets/index-Ab12.js", None, "GET"),  # another route that ends the same way
        ("/", None, "GET"),
    ],
)
def test_anything_else_goes_to_the_app_untouched(folder, path, headers, method):
    inner = Passed()
    status, _, _ = request(StaticFiles(inner, folder), path, headers, method)
    assert status == 204 and inner.paths == [path]


def test_under_a_root_path_the_route_is_read_after_it(folder):
    inner = Passed()
    status, headers, _ = request(StaticFiles(inner, folder), "/assets/index-Ab12.js", root_path="/proxy")
    assert status == 200 and headers["content-encoding"] == "gzip" and inner.paths == []


def test_many_first_asks_at_the_same_moment_compress_the_file_once(folder, monkeypatch):
    calls, both_in = [], threading.Barrier(2, timeout=5)
    compress = gzip.compress

    def counted(data, *args, **kwargs):
        calls.append(len(data))
        # a second compression at the same time would meet this one here; with the lock there is none
        with contextlib.suppress(threading.BrokenBarrierError):
            both_in.wait(timeout=0.5)
        return compress(data, *args, **kwargs)

    monkeypatch.setattr(static_files.gzip, "compress", counted)
    files = StaticFiles(Passed(), folder)

    async def ask_many():
        return await asyncio.gather(*(files.compressed("index-Ab12.js") for _ in range(8)))

    bodies = asyncio.run(ask_many())
    assert len(calls) == 1 and len(set(bodies)) == 1
