"""Gradio's page files compressed once per server, not once per fetch.

Every fresh visitor fetches Gradio's scripts and styles (``/assets/<name>``; 5.5 MB on the explorer's page, plotly's
bundle 4.6 MB of it), and Gradio compresses each answer anew on the server's event loop: a fetch of plotly's took a
median 216 ms (benchmarks/README, issue 54), on the path of every cold link's first heatmap and in the way of every
other request meanwhile. Their names carry a hash of their content, so an answer never changes while the server
runs: ``StaticFiles`` gzips each the first time it is asked for (off the event loop, once even when many ask at
the same moment), answers from memory after, and lets browsers keep it (``Cache-Control: immutable``).

The memory is bounded by the installed Gradio, not by clients: only names that are files of its page folder are
kept (``gradio_seam.frontend_assets``: 20 MB of scripts and styles, about 6 MB gzipped were every one fetched).
"""

from __future__ import annotations

import asyncio
import gzip
import mimetypes
from pathlib import Path

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from . import gradio_seam

ROUTE = "/assets/"  # where Gradio serves its page files
KEPT_SUFFIXES = (".js", ".css")  # text, fetched by every page; fonts and images are compressed already
GZIP_LEVEL = 9  # paid once per file per server
CACHE_CONTROL = b"public, max-age=31536000, immutable"  # a name changes with its content


class StaticFiles:
    """ASGI middleware: ``GET /assets/<name>`` of a script or style in Gradio's page folder, from a browser that takes
    gzip, answered gzipped from memory; everything else passed to ``app``."""

    def __init__(self, app: ASGIApp, folder: Path | None = None) -> None:
        self.app = app
        self.folder = folder or gradio_seam.frontend_assets()
        self.gzipped: dict[str, bytes] = {}  # {name: its file gzipped}
        self.locks: dict[str, asyncio.Lock] = {}  # one per name being compressed: the first asker compresses

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        name = self.kept_name(scope)
        if name is None:
            await self.app(scope, receive, send)
            return
        body = await self.compressed(name)
        content_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
        headers = [
            (b"content-type", f"{content_type}; charset=utf-8".encode()),
            (b"content-encoding", b"gzip"),
            (b"content-length", str(len(body)).encode()),
            (b"cache-control", CACHE_CONTROL),
            (b"vary", b"Accept-Encoding"),
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    def kept_name(self, scope: Scope) -> str | None:
        """The file name ``scope`` asks for when this answers it: a GET of ``ROUTE`` + a script's or style's name (no
        folder) that is a file in the page folder, from a browser that takes gzip; else None."""
        if scope["type"] != "http" or scope["method"] != "GET":
            return None
        path = scope["path"].removeprefix(scope.get("root_path", ""))
        name = path.removeprefix(ROUTE)
        if name == path or "/" in name or not name.endswith(KEPT_SUFFIXES):
            return None
        if "gzip" not in Headers(scope=scope).get("accept-encoding", ""):
            return None
        try:
            return name if name in self.gzipped or (self.folder / name).is_file() else None
        except (OSError, ValueError):  # a name no file system takes (a NUL byte, too long)
            return None

    async def compressed(self, name: str) -> bytes:
        """``name``'s file gzipped: compressed in a worker thread by the first asker, the others waiting for it."""
        if name in self.gzipped:
            return self.gzipped[name]
        async with self.locks.setdefault(name, asyncio.Lock()):
            if name not in self.gzipped:
                raw = await asyncio.to_thread((self.folder / name).read_bytes)
                self.gzipped[name] = await asyncio.to_thread(gzip.compress, raw, GZIP_LEVEL, mtime=0)
        return self.gzipped[name]
