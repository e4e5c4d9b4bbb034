"""The server's front door: what a request may reach and how much of the server one client may hold at once.

``Guard`` is an ASGI middleware around Gradio's app (``server.launch_settings`` installs it). Per request:

- **Closed routes** answer 404 or 403 before Gradio sees them: uploads (the app has no upload control, so
  not one file is written), ``file=`` with a URL (Gradio would fetch it for anyone), ``proxy=`` (for
  ``gr.load``, unused), and the monitoring dashboard and its public summary.
- **Private events by name.** Gradio's ``/call/<name>``, ``/run/<name>`` and ``/api/<name>`` routes find an
  event by its name whatever its ``api_visibility``; here a private event's name answers 404. The page itself
  reaches its events by number (``queue/join``, and ``run/predict`` for the few that skip the queue).
- **Jobs per client.** A client with ``JOBS_PER_CLIENT`` jobs queued or running (Gradio's queue holds each
  job's request, so the count is read from it) gets 429 "retry in N s" for the next one, and the queue's
  places stay open to everyone else.
- **Bodies** over ``MAX_BODY_BYTES`` are refused (413): no input the page sends comes near it.
- **Headers** on every answer: framing only by the page itself and Hugging Face (``FRAME_ANCESTORS``),
  ``nosniff``, and a referrer policy that sends other sites the origin only, never a link's key.

It also records the request's client in ``clients.CURRENT`` for the route's own code (``sessions``).
"""

from __future__ import annotations

import asyncio
import json
import re

from starlette.requests import HTTPConnection

from . import clients, fair_queue

JOBS_PER_CLIENT = 4  # a page runs one or two events at a time; a person does not need more
RETRY_SECONDS = 2  # the page's heaviest job (Integrated Gradients, 128 steps, 128 tokens) takes about 1 s
MAX_BODY_BYTES = 512 * 1024  # the largest page request (two 10,000-character texts, JSON-escaped) is ~130 KB
FRAME_ANCESTORS = "frame-ancestors 'self' https://huggingface.co https://*.huggingface.co"
SECURITY_HEADERS = [
    (b"content-security-policy", FRAME_ANCESTORS.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"strict-origin-when-cross-origin"),
]
API = "/gradio_api/"
NAMED_EVENT = re.compile(r"(?:run|api|call|call/v2)/([^/]+)/?")  # the POST routes that name an event
JOB_ROUTE = re.compile(r"queue/join|(?:run|api|call|call/v2)/[^/]+/?")  # the POST routes that start a job
DIRECT_ROUTE = re.compile(r"(?:run|api)/[^/]+/?")  # of those, the ones that run it in the request itself


def closed_route(method: str, path: str) -> tuple[int, str] | None:
    """(status, reason) for a route the app does not serve, else None."""
    route = path.split(API, 1)[1] if API in path else None
    if route is None:
        return (404, "Not found.") if re.fullmatch(r"(?:/.*)?/monitoring(?:/.*)?", path) else None
    if route.rstrip("/") in ("upload", "upload_progress"):
        return 403, "This app takes no uploads."
    if route.startswith("proxy=") or re.match(r"file=\s*(?:https?:)?//", route, re.IGNORECASE):
        return 403, "This app fetches no URLs."
    return None


def private_names(blocks) -> frozenset[str]:
    """The names of ``blocks``' private events (public ones may share a name with none of them)."""
    public = {fn.api_name for fn in blocks.fns.values() if fn.api_visibility != "private"}
    return frozenset(fn.api_name for fn in blocks.fns.values() if fn.api_visibility == "private") - public


def queued_jobs(queue, client: str) -> int:
    """How many of Gradio's ``queue`` events, waiting or running, ``client`` sent."""
    jobs = fair_queue.waiting_events(queue) + fair_queue.running_events(queue)
    return sum(fair_queue.client_of(event) == client for event in jobs)


async def answer(send, status: int, detail: str, headers: tuple = ()) -> None:
    """Send a JSON ``{"detail": ...}`` answer, as FastAPI's own errors are."""
    body = json.dumps({"detail": detail}).encode()
    start = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *headers]
    await send({"type": "http.response.start", "status": status, "headers": start + SECURITY_HEADERS})
    await send({"type": "http.response.body", "body": body})


def bounded(receive, limit: int):
    """``receive`` that ends the request as a disconnect once its body passes ``limit`` bytes."""
    seen = 0

    async def receive_bounded():
        nonlocal seen
        message = await receive()
        seen += len(message.get("body", b""))
        return {"type": "http.disconnect"} if seen > limit else message

    return receive_bounded


class Guard:
    """ASGI middleware: closed routes, private event names, jobs per client, body size, security headers."""

    def __init__(self, app, jobs_per_client: int | None = None, max_body_bytes: int = MAX_BODY_BYTES):
        self.app, self.max_body_bytes = app, max_body_bytes
        self.jobs_per_client = jobs_per_client or JOBS_PER_CLIENT
        self.direct: dict[str, int] = {}  # client -> requests running in the request itself (``DIRECT_ROUTE``)
        self._private: frozenset[str] | None = None

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        connection = HTTPConnection(scope)
        client = clients.client_address(connection)
        clients.CURRENT.set((client, asyncio.current_task()))
        refusal = self.refusal(scope, connection, client)
        if refusal is not None:
            return await answer(send, *refusal)
        receive, send = bounded(receive, self.max_body_bytes), self.with_headers(send)
        if not (scope["method"] == "POST" and DIRECT_ROUTE.fullmatch(scope["path"].split(API, 1)[-1])):
            return await self.app(scope, receive, send)
        self.direct[client] = self.direct.get(client, 0) + 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.direct[client] -= 1
            if not self.direct[client]:
                del self.direct[client]

    def refusal(self, scope, connection: HTTPConnection, client: str) -> tuple | None:
        """(status, detail[, headers]) for a request refused before Gradio sees it, else None."""
        method, path = scope["method"], scope["path"]
        closed = closed_route(method, path)
        if closed is not None or method != "POST" or API not in path:
            return closed
        route = path.split(API, 1)[1]
        named = NAMED_EVENT.fullmatch(route)
        if named and named[1] in self.private(scope):
            return 404, f"No API endpoint named {named[1]!r}."
        if int(connection.headers.get("content-length") or 0) > self.max_body_bytes:
            return 413, f"A request holds at most {self.max_body_bytes:,} bytes."
        if JOB_ROUTE.fullmatch(route) and self.jobs(scope, client) >= self.jobs_per_client:
            message = clients.retry_message(f"requests at once ({self.jobs_per_client} at most)", RETRY_SECONDS)
            return 429, message, ((b"retry-after", str(RETRY_SECONDS).encode()),)
        return None

    def private(self, scope) -> frozenset[str]:
        """The private event names of the Gradio app serving ``scope`` (read once: events are fixed at launch)."""
        if self._private is None:
            self._private = private_names(scope["app"].get_blocks())
        return self._private

    def jobs(self, scope, client: str) -> int:
        """``client``'s jobs now: queued or running in Gradio's queue, and running in their own request."""
        queue = scope["app"].get_blocks()._queue
        return queued_jobs(queue, client) + self.direct.get(client, 0)

    def with_headers(self, send):
        """``send`` that adds ``SECURITY_HEADERS`` to the answer's headers."""

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                message = message | {"headers": [*message.get("headers", []), *SECURITY_HEADERS]}
            await send(message)

        return send_with_headers
