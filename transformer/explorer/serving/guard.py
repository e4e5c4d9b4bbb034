"""The server's front door: what a request may reach and how much of the server one client may hold at once.

``Guard`` is an ASGI middleware around Gradio's app (``page.launch.launch_settings`` installs it). Per request:

- **Deny by default.** Only the routes the page, the named API endpoints and MCP use pass (``ALLOWED``); every
  other route answers 404 before Gradio sees it, whatever Gradio adds next. Uploads and URL fetches
  (``file=`` with a URL) are named in their 403: the app takes no file and fetches nothing.
- **Private events by name.** Gradio's ``/call/<name>``, ``/run/<name>`` and ``/api/<name>`` routes find an
  event by its name whatever its ``api_visibility``; here a private event's name answers 404. The page itself
  reaches its events by number (``queue/join``, and ``run/predict`` for the few that skip the queue).
- **Admission.** Each job is admitted, or refused with 429 "retry in N s", in one atomic step
  (``admission.Admission``) before it reaches Gradio's queue; its cost counts while it is queued, running (until
  its thread returns, a cancelled job's too), or finished and unread. A job that finds the queue full takes the
  place of the newest waiting job of the client holding the most, when that client holds more than it will
  (``make_room``).
- **Who.** The client is ``clients.client_address`` (proxy hops counted from the right). An MCP tool call
  reaches the queue through Gradio's own loopback client: the MCP request is stamped with its caller's address
  and a secret of this process (``MCP_CLIENT``), which the loopback call carries, so each MCP caller is its own
  client. The stamp is removed from every other request.
- **Bodies** over ``MAX_BODY_BYTES`` are refused (413): no input the page sends comes near it.
- **Answers streams** for a session or event the queue does not know answer 404 in one line (Gradio would
  log a traceback for each). Each answer stream is written by its own ``unsent.AnswerWriter``: the route's
  ``send`` returns at once, so a slow reader holds only the answer's bytes, counted against its client until
  written (``unsent.Unsent``), not the answer Gradio built them from. A client with more than
  ``unsent.MAX_UNSENT_PER_CLIENT`` bytes unsent, or all together past ``unsent.MAX_UNSENT_BYTES``, is told to
  retry before a new job; a reader that stops draining is cut off (``page.launch.ConnectionDeadlines``).
- **Headers** on every answer: framing only by the page itself and Hugging Face (``FRAME_ANCESTORS``),
  ``nosniff``, and a referrer policy that sends other sites the origin only, never a link's key.

It also records the request's client in ``clients.CURRENT`` for the route's own code (``sessions``).
"""

from __future__ import annotations

import asyncio
import hmac
import json
import re
import secrets
from urllib.parse import parse_qs

from starlette.requests import HTTPConnection

from . import admission, clients, fair_queue, gradio_seam
from .unsent import AnswerWriter, Unsent

RETRY_SECONDS = 2  # the page's heaviest job (Integrated Gradients, 128 steps, 128 tokens) takes about 1 s
MAX_BODY_BYTES = 512 * 1024  # the largest page request (two 10,000-character texts, JSON-escaped) is ~130 KB
FRAME_ANCESTORS = "frame-ancestors 'self' https://huggingface.co https://*.huggingface.co"
SECURITY_HEADERS = [
    (b"content-security-policy", FRAME_ANCESTORS.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"strict-origin-when-cross-origin"),
]
API = "/gradio_api/"
NAME = r"[A-Za-z0-9_]+"
# (methods, path) of every route the page, the API and MCP use; ``{API}`` is Gradio's API prefix. ``/api`` is the
# endpoints' page (``page.api.PAGE``; Gradio redirects ``/api/`` to it).
ALLOWED = [
    (("GET", "HEAD"), r"/|/api/?|/config/?|/theme\.css|/robots\.txt|/favicon\.ico|/manifest\.json|/pwa_icon(?:/\d+)?"),
    (("GET", "HEAD"), r"/(?:static|assets|svelte)/[^?#]+"),
    (("GET",), r"{API}(?:info/?|openapi\.json|app_id/?|login_check/?|user/?|startup-events|theme\.css|deep_link)"),
    (("GET",), r"{API}(?:heartbeat/[^/]+|queue/data|call/(?:v2/)?NAME/[^/]+)"),
    (("GET", "HEAD"), r"{API}file=[^?#]+"),  # files the app wrote (exports); Gradio checks the folder
    (("POST",), r"{API}(?:queue/join|(?:run|api|call|call/v2)/NAME/?|cancel|reset/?)"),
    (("GET", "POST", "DELETE"), r"{API}mcp(?:/[^?#]*)?"),
]
ALLOWED_ROUTES = [
    (methods, re.compile(pattern.replace("{API}", API).replace("NAME", NAME))) for methods, pattern in ALLOWED
]
NAMED_EVENT = re.compile(r"(?:run|api|call|call/v2)/([^/]+)/?")  # the POST routes that name an event
JOB_ROUTE = re.compile(r"queue/join|(?:run|api|call|call/v2)/[^/]+/?")  # the POST routes that start a job
DIRECT_ROUTE = re.compile(r"(?:run|api)/[^/]+/?")  # of those, the ones that run it in the request itself
EVENT_STREAM = re.compile(r"call/(?:v2/)?[^/]+/([^/]+)")  # GET: a ``/call`` event's answers
MCP_ROUTE = re.compile(r"mcp(?:/.*)?")
MCP_CLIENT = b"x-explorer-mcp-client"  # "<this process's secret> <the MCP caller's address>"
MCP_SECRET = secrets.token_urlsafe(32)
ADMISSION = "explorer_admission"  # the app state attribute holding the guard's ``admission.Admission``
MAX_ANSWER_READ = 4096  # bytes of a join's answer read for its event id ({"event_id": "<32 hex>"})
ANSWER_STREAM = re.compile(r"queue/data|call/(?:v2/)?[^/]+/[^/]+")  # GET: a session's or an event's answers


def closed_route(method: str, path: str) -> tuple[int, str] | None:
    """(status, reason) for a route the app does not serve (``ALLOWED``), else None."""
    route = path.split(API, 1)[1] if API in path else ""
    if route.rstrip("/") in ("upload", "upload_progress"):
        return 403, "This app takes no uploads."
    if route.startswith(("proxy=", "file/")) or re.match(r"file=\s*(?:[a-z][a-z0-9+.-]*:)?//", route, re.I):
        return 403, "This app fetches no URLs."
    if any(method in methods and pattern.fullmatch(path) for methods, pattern in ALLOWED_ROUTES):
        return None
    return 404, "Not found."


def private_names(blocks) -> frozenset[str]:
    """The names of ``blocks``' private events (public ones may share a name with none of them)."""
    public = {fn.api_name for fn in blocks.fns.values() if fn.api_visibility != "private"}
    return frozenset(fn.api_name for fn in blocks.fns.values() if fn.api_visibility == "private") - public


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


async def read_body(receive, limit: int) -> bytes | None:
    """The whole request body, or None when the client left or sent more than ``limit`` bytes."""
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunks.append(message.get("body", b""))
        size += len(chunks[-1])
        if size > limit:
            return None
        if not message.get("more_body"):
            return b"".join(chunks)


def replay(body: bytes, receive):
    """``receive`` that gives ``body`` once, as one message, then whatever the client sends next (a disconnect)."""
    given = False

    async def receive_again():
        nonlocal given
        if given:
            return await receive()
        given = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receive_again


def job_cost(blocks, route: str, body: bytes) -> float:
    """``admission.call_cost`` of the job ``body`` asks ``route`` for: an event by number, or by name."""
    try:
        request = json.loads(body or b"{}")
    except ValueError:
        request = {}
    request = request if isinstance(request, dict) else {}
    named = NAMED_EVENT.fullmatch(route)
    fn = blocks.fns.get(request.get("fn_index")) if isinstance(request.get("fn_index"), int) else None
    if fn is None and named:
        fn = next((fn for fn in blocks.fns.values() if fn.api_name == named[1]), None)
    return admission.call_cost(fn, request.get("data"))


def session_of(queue, event_id: str) -> str:
    """The session Gradio's ``queue`` sends ``event_id``'s answer to (a ``/call`` without one: the event's id)."""
    event = gradio_seam.queued_event(queue, event_id)
    if event is not None:
        return event.session_hash
    return gradio_seam.session_with_unread(queue, event_id) or event_id


def known_stream(queue, route: str, query: str) -> bool:
    """Whether a GET of answers (``queue/data`` or a ``/call`` event's) names a session the queue holds."""
    if route == "queue/data":
        session = parse_qs(query).get("session_hash", [""])[0]
        return gradio_seam.has_answer_stream(queue, session)
    event = EVENT_STREAM.fullmatch(route)
    return event is None or gradio_seam.has_answer_stream(queue, session_of(queue, event[1]))


def make_room(queue, held: admission.Admission, client: str, cost: float) -> admission.Ticket | None:
    """When Gradio's ``queue`` is full: drop the newest waiting job of the client, among those with jobs waiting,
    that holds the most, if it holds more than ``client`` will with ``cost`` added; that job's ticket (released),
    or None."""
    waiting = fair_queue.waiting_events(queue)
    if queue.max_size is None or len(waiting) < queue.max_size:
        return None
    waiting_ids = {gradio_seam.event_id_of(event) for event in waiting}
    newest_waiting = {  # client -> its newest waiting job's ticket
        owner: ticket for owner, tickets in held.tickets.items() for ticket in tickets if ticket.event_id in waiting_ids
    }
    heaviest = max(newest_waiting, key=lambda owner: held.held.get(owner, 0.0), default=None)
    if heaviest is None or held.held.get(heaviest, 0.0) <= held.held.get(client, 0.0) + cost:
        return None
    victim = newest_waiting[heaviest]
    fair_queue.drop_waiting(queue, victim.event_id, clients.retry_message("jobs waiting", RETRY_SECONDS))
    held.release(victim)
    return victim


class Guard:
    """ASGI middleware: allowed routes, private event names, admission, body size, security headers."""

    def __init__(self, app, budget: float | None = None, max_body_bytes: int = MAX_BODY_BYTES, busy=None):
        """``busy(event_id)``: whether a thread still runs that event's job (its ticket is held until it returns)."""
        self.app, self.max_body_bytes = app, max_body_bytes
        self.admission = admission.Admission(budget or admission.CLIENT_BUDGET, busy=busy or (lambda event_id: False))
        self.unsent = Unsent()
        self._private: frozenset[str] | None = None

    async def __call__(self, scope, receive, send):
        if scope["type"] == "websocket":  # the app serves none
            return await send({"type": "websocket.close", "code": 1008})
        if scope["type"] != "http":
            if scope["type"] == "lifespan":  # the server's own tasks settle finished jobs (``page.launch.lifespan``)
                setattr(scope["app"].state, ADMISSION, self.admission)
            return await self.app(scope, receive, send)
        client = self.identify(scope)
        clients.CURRENT.set((client, asyncio.current_task()))
        scope[clients.SCOPE_CLIENT] = client
        refusal = self.refusal(scope, HTTPConnection(scope))
        if refusal is not None:
            return await answer(send, *refusal)
        send = self.with_headers(send)
        route = scope["path"].split(API, 1)[-1]
        if scope["method"] == "GET" and ANSWER_STREAM.fullmatch(route):
            writer = AnswerWriter(self.unsent, client, send)
            try:
                await self.app(scope, bounded(receive, self.max_body_bytes), writer.send)
            except BaseException:  # cancelled, or the route failed: what it queued is not written
                await writer.drop()
                raise
            return await writer.finish()
        if not (scope["method"] == "POST" and JOB_ROUTE.fullmatch(route)):
            return await self.app(scope, bounded(receive, self.max_body_bytes), send)
        if source := self.unsent.source_over(client):
            message = clients.retry_message("answers still being sent", RETRY_SECONDS, source)
            return await answer(send, 429, message, ((b"retry-after", str(RETRY_SECONDS).encode()),))
        body = await read_body(receive, self.max_body_bytes)
        if body is None:
            return await answer(send, 413, f"A request holds at most {self.max_body_bytes:,} bytes.")
        await self.admit_job(scope, replay(body, receive), send, client, job_cost(self.blocks(scope), route, body))

    def identify(self, scope) -> str:
        """The request's client; an MCP request is stamped with it (``MCP_CLIENT``), any other stamp is removed."""
        headers = [(key, value) for key, value in scope["headers"] if key != MCP_CLIENT]
        stamp = next((value for key, value in scope["headers"] if key == MCP_CLIENT), b"").decode("latin-1")
        secret, _, stamped = stamp.partition(" ")
        if stamped and hmac.compare_digest(secret, MCP_SECRET):
            client = stamped
        else:
            client = clients.client_address(HTTPConnection(scope))
        if MCP_ROUTE.fullmatch(scope["path"].split(API, 1)[-1]) and API in scope["path"]:
            headers.append((MCP_CLIENT, f"{MCP_SECRET} {client}".encode("latin-1")))
        scope["headers"] = headers
        return client

    async def admit_job(self, scope, receive, send, client: str, cost: float) -> None:
        """Run the job request if ``client`` can afford ``cost`` (else 429); keep its ticket until the job is over."""
        queue = gradio_seam.queue_of(self.blocks(scope))
        ticket = self.admission.admit(client, cost, queue)
        if ticket is None:
            message = clients.retry_message("requests at once", RETRY_SECONDS)
            return await answer(send, 429, message, ((b"retry-after", str(RETRY_SECONDS).encode()),))
        if not DIRECT_ROUTE.fullmatch(scope["path"].split(API, 1)[-1]):
            make_room(queue, self.admission, client, cost)
        status, answer_bytes = 0, bytearray()

        async def send_reading(message):
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            elif len(answer_bytes) < MAX_ANSWER_READ:
                answer_bytes.extend(message.get("body", b"")[:MAX_ANSWER_READ])
            await send(message)

        try:
            await self.app(scope, receive, send_reading)
        finally:
            event_id = queued_event(status, bytes(answer_bytes))
            if event_id is None or DIRECT_ROUTE.fullmatch(scope["path"].split(API, 1)[-1]):
                self.admission.release(ticket)
            else:
                self.admission.bind(ticket, event_id, session_of(queue, event_id))

    def refusal(self, scope, connection: HTTPConnection) -> tuple | None:
        """(status, detail[, headers]) for a request refused before Gradio sees it, else None."""
        method, path = scope["method"], scope["path"]
        closed = closed_route(method, path)
        if closed is not None or API not in path:
            return closed
        route = path.split(API, 1)[1]
        if method == "GET" and not known_stream(
            gradio_seam.queue_of(self.blocks(scope)), route, scope.get("query_string", b"").decode()
        ):
            return 404, "No such session or event: its answers were read, dropped, or never existed."
        if method != "POST":
            return None
        named = NAMED_EVENT.fullmatch(route)
        if named and named[1] in self.private(scope):
            return 404, f"No API endpoint named {named[1]!r}."
        if int(connection.headers.get("content-length") or 0) > self.max_body_bytes:
            return 413, f"A request holds at most {self.max_body_bytes:,} bytes."
        return None

    @staticmethod
    def blocks(scope):
        return scope["app"].get_blocks()

    def private(self, scope) -> frozenset[str]:
        """The private event names of the Gradio app serving ``scope`` (read once: events are fixed at launch)."""
        if self._private is None:
            self._private = private_names(self.blocks(scope))
        return self._private

    def with_headers(self, send):
        """``send`` that adds ``SECURITY_HEADERS`` to the answer's headers."""

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                message = message | {"headers": [*message.get("headers", []), *SECURITY_HEADERS]}
            await send(message)

        return send_with_headers


def queued_event(status: int, answer_bytes: bytes) -> str | None:
    """The event id in a job route's answer (``{"event_id": ...}``), or None where the job was not queued."""
    if status != 200:
        return None
    try:
        event_id = json.loads(answer_bytes).get("event_id")
    except (ValueError, AttributeError):
        return None
    return event_id if isinstance(event_id, str) else None
