"""How the explorer is served so that traffic cannot exhaust memory or disk: the launch settings.

- Sessions: at most ``sessions.SESSION_CAPACITY``, lean (``sessions.LeanSession``), released when their page
  closes or goes idle.
- Gradio's ``/gradio_api/deep_link`` route (mounted whether or not a page uses it) writes a session's every
  component value to disk and never removes it: it is replaced by one that writes nothing. Shared links
  go through ``link_store`` (inputs only, capped).
- Gradio's ``/gradio_api/cancel`` (a Cancel button, an API caller's cancel) also stops the job's thread at its
  next model pass (``stop_on_cancel``), or before it begins; only the client that sent a job may cancel it. Gradio
  frees a cancelled event's worker at once, so each job's thread holds a slot of its lane, and its client's
  ticket, until it returns (``runner.one_job``).
- The page's style sheet (``theme.PAGE_CSS``: figures in the dark theme, the phone layout) and its scripts
  (``scripts.head``) go with them, so every server of the app, tests' included, serves the same page.
- Uploads: the app takes none (``guard`` refuses the route; ``MAX_FILE_SIZE`` would refuse any real file);
  ``DELETE_CACHE`` removes temporary files an hour old.
- Every request passes ``guard.Guard`` (allowed routes only, private event names, admission by cost per client,
  security headers); finished answers nobody read are dropped every ``SETTLE_EVERY`` (``admission``).
- MCP tool calls that fail say why without the loopback address Gradio called (``plain_tool_errors``).
- Connections: an idle one is closed ``KEEP_ALIVE_SECONDS`` after its last answer, and one that has not sent
  a whole request, head and body, ``HEAD_SECONDS`` after it opened or was last answered is closed too
  (``ConnectionDeadlines``); one whose reader stops draining its answer is cut off ``DRAIN_SECONDS`` after its send
  buffer filled.
- Model work: page events and heavy endpoints share one concurrency group, ``MODEL_WORK``, of one worker
  per core (``model_workers``); the light endpoints (one forward pass each, ``/predict`` among them) have a
  lane of their own, ``LIGHT_WORK``, of ``LIGHT_WORKERS``, so a light call never waits for a heavy job to end
  (one Integrated Gradients job at the longest legal input runs for seconds). The REST routes that would skip
  the queue are closed (``api_open=False``, as on a Space), so however many events or callers there are, at
  most ``model_workers() + LIGHT_WORKERS`` model calls run at once; waiting jobs take turns by client
  (``fair_queue``).
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import os
import re
import threading

import gradio as gr
import h11
from fastapi import HTTPException, Request
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from uvicorn.protocols.http.h11_impl import H11Protocol

from ...explain import batching
from .. import runner
from ..drawing import theme
from ..inputs import InputError, check_unicode
from ..registry import Registry
from ..serving import admission, clients, fair_queue, gradio_seam, guard, sessions
from ..serving.static_files import StaticFiles
from . import address, scripts

MAX_FILE_SIZE = "1kb"
DELETE_CACHE = (600, 3600)  # (every, older than) seconds: for gr.Blocks(delete_cache=...)
GRADIO_DEEP_LINK = "/gradio_api/deep_link"
MODEL_WORK = "model"  # the concurrency group of page events and heavy endpoints
LIGHT_WORK = "light"  # the lane of the light endpoints: they never queue behind a heavy job
LIGHT_WORKERS = 1  # a light call is milliseconds, so one worker drains its lane; more would only time-slice
QUEUE_SIZE = 64  # jobs waiting at once, all clients together: a full queue drains in about 3 s (`make load`)


def model_workers() -> int:
    """One worker per core this process may use: a model call is 2-1000 ms of CPU, so more only time-slice."""
    return batching.usable_cores()


def job_thread_name(lane: str) -> str:
    """The name the system shows for a thread while it runs a job of ``lane`` (``runner.one_job``)."""
    return f"{lane} job"


def lane(fn) -> tuple[str, int]:
    """The concurrency group of Gradio's queued event ``fn`` and its number of workers: ``LIGHT_WORK`` for a
    named endpoint that costs one forward pass (``admission.call_cost``), ``MODEL_WORK`` for the rest."""
    if admission.call_cost(fn, []) <= admission.LIGHT_COST:
        return LIGHT_WORK, LIGHT_WORKERS
    return MODEL_WORK, model_workers()


def configure_events(demo) -> None:
    """Put every queued event of ``demo`` in its ``lane``, each job holding a worker of it until its thread returns
    (``runner.one_job``), in turns fair to every client (``fair_queue``), and answer inputs that Gradio refuses
    without a traceback in the log (``quiet_input_errors``)."""
    workers = model_workers()
    slots = {}  # lane -> its workers as a semaphore, held by each job's thread until it returns
    for fn in demo.fns.values():
        if fn.queue:
            fn.concurrency_id, fn.concurrency_limit = lane(fn)
            if fn.fn is not None:
                lane_slots = slots.setdefault(fn.concurrency_id, threading.BoundedSemaphore(fn.concurrency_limit))
                fn.fn = runner.one_job(fn.fn, lane_slots, job_thread_name(fn.concurrency_id))
    demo.queue(default_concurrency_limit=workers, max_size=QUEUE_SIZE, api_open=False)
    fair_queue.make_fair(gradio_seam.queue_of(demo))
    quiet_input_errors(demo)


def quiet_input_errors(demo) -> None:
    """Make what ``demo`` refuses while reading an event's inputs (too few values, a value not among a control's
    choices, text that is not valid Unicode: ``inputs.check_unicode``) a short ``gr.Error`` for the sender: Gradio
    would print a traceback, quoting the values, per call."""

    def quietly(read_inputs):
        async def read_inputs_quietly(block_fn, inputs, *args, **kwargs):
            try:
                check_unicode(inputs)
            except InputError as error:
                raise gr.Error(str(error), title="Cannot read this text", print_exception=False) from None
            try:
                return await read_inputs(block_fn, inputs, *args, **kwargs)
            except gr.Error as error:  # a component's own refusal, already worded for the sender
                error.print_exception = False
                raise
            except Exception as error:  # every refusal here is about the sender's values
                reason = str(error).strip().splitlines()[0][:200] if str(error).strip() else "bad inputs"
                raise gr.Error(
                    html.escape(reason, quote=False), title="Cannot use these inputs", print_exception=False
                ) from None

        return read_inputs_quietly

    gradio_seam.wrap_input_reading(demo, quietly)


GRADIO_CANCEL = "/gradio_api/cancel"


def stop_on_cancel(app) -> None:
    """Make Gradio's ``GRADIO_CANCEL`` on the FastAPI ``app`` stop the cancelled job itself (``runner.cancel``), then
    do what it did: Gradio cancels only the task that awaits a job's thread, so the thread would run to its end,
    holding its worker (and the /cancel request, which waits for that task) all the while. The stop is only for the
    session that sent the event; a cancel of a session whose jobs another client sent is refused (a ``/call``'s
    session is its event id, which a leak would give away)."""
    gradio_cancel = gradio_seam.gradio_endpoint(app, GRADIO_CANCEL)

    async def cancel(body: gradio_seam.CancelBody, request: Request):
        queue = gradio_seam.queue_of(app.get_blocks())
        if not own_session(queue, body.session_hash, clients.request_client(request)):
            raise HTTPException(403, "Only the client that sent a job can cancel it.")
        event = gradio_seam.queued_event(queue, body.event_id)
        if event is not None and event.session_hash == body.session_hash:
            runner.cancel(body.event_id)
        return await gradio_cancel(body)

    gradio_seam.route_first(app, GRADIO_CANCEL, cancel, ["POST"])


def own_session(queue, session_hash: str, client: str) -> bool:
    """Whether ``client`` sent every job of ``session_hash`` that Gradio's ``queue`` holds (true of none)."""
    events = gradio_seam.queued_events(queue)
    return all(fair_queue.client_of(event) == client for event in events if event.session_hash == session_hash)


def no_deep_link(session_hash: str = "") -> str:
    """What Gradio's route answers for a session it does not know: no link, nothing written."""
    return ""


def close_gradio_deep_links(app) -> None:
    """Make ``GRADIO_DEEP_LINK`` on the FastAPI ``app`` answer ``no_deep_link`` instead of writing state to disk."""
    gradio_seam.replace_route(app, GRADIO_DEEP_LINK, no_deep_link, ["GET"])


FORGET_EVERY = 60  # seconds between rounds of ``forget_removed_files``


def forget_removed_files(blocks) -> int:
    """Forget the files ``blocks`` returned that are gone (pruned exports); returns how many were forgotten.

    Gradio remembers the path of every file an event returns, to delete it at shutdown, and never forgets
    one: about 150 bytes per export, a set that would grow for as long as the server runs.
    """
    forgotten = 0
    for paths in gradio_seam.returned_file_sets(blocks):
        for path in list(paths):  # copied: an event may be adding to it on another thread
            if not os.path.exists(path):
                paths.discard(path)
                forgotten += 1
    return forgotten


async def forget_removed_files_forever(blocks) -> None:
    while True:
        await asyncio.sleep(FORGET_EVERY)
        await asyncio.to_thread(forget_removed_files, blocks)


SETTLE_EVERY = 1.0  # seconds between rounds of ``admission.Admission.settle``


async def settle_forever(app) -> None:
    """Release the tickets of jobs that are over, and drop answers unread too long, every ``SETTLE_EVERY``."""
    while True:
        await asyncio.sleep(SETTLE_EVERY)
        held, queue = getattr(app.state, guard.ADMISSION, None), gradio_seam.queue_of(app.get_blocks())
        if held is not None and queue is not None:
            held.settle(queue)


LINK = re.compile(r"\s*(?:for url|For more information check:)?\s*'?[a-z]+://\S*", re.IGNORECASE)


def plain_error(text: str) -> str:
    """A tool call's error as its caller should read it: a refusal as the guard words it, no internal address."""
    if "429" in text:
        return clients.retry_message("requests at once", guard.RETRY_SECONDS)
    return LINK.sub("", text).strip() or "The call failed."


def plain_tool_errors(blocks) -> None:
    """Make the MCP server of ``blocks`` (if it has one) word its tool calls' errors with ``plain_error``: Gradio
    sends a queued tool call to its own loopback address, and its HTTP errors quote that address."""
    server = getattr(blocks, "mcp_server_obj", None)
    if server is None:
        return
    from mcp import types  # only where Gradio made an MCP server, which needs it

    handlers = server.mcp_server.request_handlers
    call_tool = handlers[types.CallToolRequest]

    async def call_tool_plainly(request):
        result = await call_tool(request)
        if getattr(result.root, "isError", False):
            for item in result.root.content:
                if getattr(item, "type", None) == "text":
                    item.text = plain_error(item.text)
        return result

    handlers[types.CallToolRequest] = call_tool_plainly


KEEP_ALIVE_SECONDS = 5  # an idle connection is closed this long after its last answer (uvicorn's default)
HEAD_SECONDS = 10  # a request's head and body must all arrive within this long (512 KiB: 51 KB/s at least)


DRAIN_SECONDS = 10  # a connection whose send buffer stays over uvicorn's high-water mark this long is cut off


class ConnectionDeadlines(H11Protocol):
    """uvicorn's HTTP/1.1 connection, closed when a whole request (its head, then any body) has not arrived
    ``HEAD_SECONDS`` after the connection opened or its last answer ended, and cut off (its unsent bytes dropped)
    when its reader lets the send buffer stay full for ``DRAIN_SECONDS``. uvicorn itself times out only a
    connection idle after an answer, and a byte sent resets that: one that sends nothing, its headers a byte
    at a time, or whole headers and then a body that never ends, is kept open for ever, and a few hundred such
    connections hold every socket the server may open. One that reads its answer 512 bytes at a time would hold
    the answer for ever (``unsent.AnswerWriter`` writes it in ``unsent.ANSWER_CHUNK`` pieces, so the reader must keep
    taking about 48 KB every ``DRAIN_SECONDS``)."""

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self.head_deadline = self.loop.call_later(HEAD_SECONDS, self.close_if_no_request)
        self.drain_deadline = None

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state not in UNFINISHED:  # the request is all in: its own time is the app's
            self.head_deadline.cancel()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self.head_deadline.cancel()
        self.head_deadline = self.loop.call_later(HEAD_SECONDS, self.close_if_no_request)

    def pause_writing(self) -> None:
        super().pause_writing()
        self.drain_deadline = self.loop.call_later(DRAIN_SECONDS, self.transport.abort)  # close() would wait to send

    def resume_writing(self) -> None:
        super().resume_writing()
        if self.drain_deadline is not None:
            self.drain_deadline.cancel()

    def connection_lost(self, exc: Exception | None) -> None:
        self.head_deadline.cancel()
        if self.drain_deadline is not None:
            self.drain_deadline.cancel()
        super().connection_lost(exc)

    def close_if_no_request(self) -> None:
        if self.conn.their_state in UNFINISHED and not self.transport.is_closing():
            self.transport.close()


UNFINISHED = (h11.IDLE, h11.SEND_BODY)  # h11's states of a client still sending its request: no head, or a body


async def limit_connections(app) -> None:
    """Once the uvicorn server serving ``app`` is known (Gradio builds its settings, with no say in these, and
    sets ``blocks.server`` after start-up), give the connections it opens from then on ``KEEP_ALIVE_SECONDS``
    and ``ConnectionDeadlines``: uvicorn makes each connection from its settings when it opens."""
    blocks = app.get_blocks()
    while (config := gradio_seam.server_config_of(blocks)) is None or config.app is not app:
        await asyncio.sleep(0.05)  # not yet set, or still the server of an earlier launch
    config.timeout_keep_alive = KEEP_ALIVE_SECONDS
    config.http_protocol_class = ConnectionDeadlines


@contextlib.asynccontextmanager
async def lifespan(app):
    """While the server runs: Gradio's deep links closed, cancelled jobs stopped, lean sessions, idle ones swept,
    removed files forgotten, finished jobs settled, MCP errors plain, connections limited."""
    close_gradio_deep_links(app)
    stop_on_cancel(app)
    plain_tool_errors(app.get_blocks())
    tasks = [
        asyncio.create_task(sessions.sweep_idle(sessions.lean_sessions(app))),
        asyncio.create_task(forget_removed_files_forever(app.get_blocks())),
        asyncio.create_task(settle_forever(app)),
        asyncio.create_task(limit_connections(app)),
    ]
    try:
        yield
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task


GZIP_MIN_BYTES, GZIP_LEVEL = 1024, 6  # level 6: about level 9's size at a fraction of its CPU


class PageCompression(GZipMiddleware):
    """Gzip for the answers that Gradio's own compression (its Brotli middleware, which reads a file's extension)
    leaves plain: the page's first HTML and its configuration, hundreds of KB read before the first click, most of it
    the tabs' settings. A file's path is left alone: Gradio's scripts and styles come gzipped once
    (``static_files``; plotly's 4.6 MB took a median 337 ms a fetch gzipped here at level 6, and 216 ms as Gradio's
    brotli, on every fresh visitor), and Gradio's own compression takes the rest by their extension."""

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http" and "." in scope["path"].rsplit("/", 1)[-1]:
            await self.app(scope, receive, send)
        else:
            await super().__call__(scope, receive, send)


def compressed() -> Middleware:
    """``PageCompression``: the page's own answers gzip-compressed for a browser that asks. Streams of events are sent
    as they are (Starlette leaves ``text/event-stream`` alone), so a job's progress and answer are not held back to
    fill a compressed block."""
    return Middleware(PageCompression, minimum_size=GZIP_MIN_BYTES, compresslevel=GZIP_LEVEL)


def launch_settings(registry: Registry) -> dict:
    """Keyword arguments for ``demo.launch`` of a page laid out with ``registry`` (a fresh dict: Gradio changes
    ``app_kwargs``)."""
    return {
        "css": theme.PAGE_CSS,
        "head": f"<style>{theme.HEAD_CSS}</style>\n" + scripts.head(address.script_config(registry)),
        "max_file_size": MAX_FILE_SIZE,
        "state_session_capacity": sessions.SESSION_CAPACITY,
        "app_kwargs": {
            "lifespan": lifespan,
            "middleware": [compressed(), Middleware(guard.Guard, busy=runner.running), Middleware(StaticFiles)],
        },
    }
