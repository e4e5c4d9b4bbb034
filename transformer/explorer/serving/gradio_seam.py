"""Gradio's internals, in one place: every private name of Gradio that the explorer relies on is reached through here.

The explorer pins ``gradio`` exactly (``requirements.txt``, the README's ``sdk_version``). Where it needs what Gradio
does not offer publicly, it goes through one of the seams below, and ``tests/explorer/serving/test_gradio_seam.py``
holds each one's shape to the installed Gradio (the attribute exists, with its signature, and a replaced method is
really called on a request), so that an upgrade fails there, in one line naming the seam, rather than silently: a
replaced method that is no longer called guards nothing. ``tests/codebase/test_codebase.py`` checks that no other
module of ``transformer/`` names these internals.

Checked on Gradio ``CHECKED_ON`` (6.30.0 and 6.31.0; the package index has no later release). The seams:

- **The queue** (``queue_of``: ``Blocks._queue``). The guard, admission and the fair queue read the running app's
  queue: which events wait and run, whose they are, which answers wait unread. Gradio's public API bounds a queue
  (``demo.queue(max_size=...)``, per-event ``concurrency_limit`` and ``concurrency_id``, which ``page.launch`` uses)
  but gives no handle on its events.
- **Queued events by id** (``queued_event``, ``queued_events``, ``is_queued``, ``forget_event``:
  ``Queue.event_ids_to_events``). Whether an admitted job is still queued or running (its ticket counts until it is
  not), which session a ``/call`` event answers and which client sent it (a cancel is refused to another client),
  and the removal of a waiting job that a full queue drops for a lighter client. No public API names a queued event.
- **A turn after each new job** (``after_each_push``: ``Queue.push`` replaced by a call of Gradio's own, then
  ``then()``). The fair queue reorders a group's waiting jobs by what each client already holds; Gradio runs a
  group first in, first out, with no hook on arrival (``concurrency_id`` groups events; it does not order them).
- **The sessions' store** (``use_session_store``, ``session_store_of``, ``SessionState``, ``StateHolder``:
  ``App.state_holder``, ``Blocks.state_holder``, ``gradio.state_holder``). A session is dropped when its page closes
  or idles, with a per-client share, and keeps no copy of every value sent; publicly Gradio offers only
  ``state_session_capacity`` (oldest dropped first, which ``launch_settings`` still sets) and ``gr.State``'s
  ``time_to_live``, which frees a state an hour after its page closed.
- **Routes ahead of Gradio's** (``gradio_endpoint``, ``route_first``, ``replace_route``: ``App.router.routes``).
  ``/gradio_api/cancel`` must stop the cancelled job's thread before Gradio's handler runs, and the deep-link route
  must stop writing state to disk. FastAPI's public ``add_api_route`` appends a route, which Gradio's own, added
  first, shadows; a middleware could answer the request but not call Gradio's cancel handler after ours.
- **The API page's descriptions** (``describe_on_api_page``: ``gr.Api``'s ``_api_info``). ``gr.api`` documents an
  endpoint from its docstring for MCP and takes ``api_description`` for the endpoint itself, but the API page shows
  each parameter as "1st", "2nd" and the answer as "Any": the parameters' names and descriptions, and the answer's
  keys, are written into the components' schema here.

- **Answers not yet read** (``unread_event_ids``, ``unread_messages``, ``session_with_unread``,
  ``has_answer_stream``, ``forget_unread``: ``Queue.pending_event_ids_session``, ``pending_messages_per_session``).
  Admission counts an answer its client has not read against that client and drops it when the client is gone; the
  guard refuses a stream of answers for a session the queue does not hold. Gradio keeps them until read, unbounded.
- **The page's stream of answers** (``page/answer_stream.js``: one of the two seams outside this module, since they
  are the page's). Gradio's page reads a session's answers from one stream (``GET queue/data``), which the server ends
  with a ``close_stream`` message once nothing is pending; the page opens another at its next join only if it has
  read that close by then, so an event joined in that instant was never read (Gradio 6.31's client). The script keeps
  the client on one stream and opens the server's again while an answer is due, reading each message's kind and event
  id from its first characters. Checked on 6.31's client only. The contract tests hold the stream's format and the
  client's join (their names say "stream of answers"); ``tests/browser/test_answer_stream_browser.py`` holds the race.
- **The page's plot draws** (``page/phone.js``'s ``Plotly.react``: the other seam of the page). Gradio 6.31's ``Plot``
  mounts a new plot element for each new figure (a keyed block whose key goes up when ``value.plot`` changes) and
  first hands the figure to the element being replaced, which leaves the page in the same update: a draw thrown away
  (40-100 ms of an Analyze, issue 54). The script draws a figure for an element already drawn a task later, and only
  if that element is still on the page. Gradio offers no hook on its plot's draws. The contract test holds the
  ``Plot`` bundle's keyed block and ``PlotlyPlot``'s ``react`` call; ``tests/browser/test_draws_browser.py`` counts
  the plot elements an Analyze changes (one), from one token to past ``max_len``, on the tutorial and each Hub family.
- **Running and waiting jobs** (``running_events``, ``waiting_groups``, ``event_id_of``, ``tell_dropped``:
  ``Queue.active_jobs``, ``event_queue_per_concurrency_id``, ``Event._id``, ``Queue.send_message``). The fair queue
  orders each group's waiting list in place, and a full queue drops one waiting job with a message to its client.
  A queued event's ``session_hash``, ``fn``, ``request`` and ``data`` (set in ``Event.__init__``) are read as they
  are; the contract test checks they are still set there.
- **Reading an event's inputs** (``wrap_input_reading``: ``Blocks.preprocess_data``). A refused input becomes a
  one-line ``gr.Error`` instead of a traceback quoting the values; no public hook runs before a component's
  ``preprocess``.
- **Files an event returned** (``returned_file_sets``: ``Blocks.temp_file_sets``). Gradio keeps every path until
  shutdown; pruned exports are forgotten so the sets do not grow for weeks.
- **The server's settings** (``server_config_of``: ``Blocks.server.config``, uvicorn's ``Config``). Keep-alive and
  per-connection deadlines; ``launch()`` takes no uvicorn settings.
- **Closing a served page from another thread** (``close_served``: ``App.stop_event``, ``Blocks.server.servers``,
  uvicorn's listening sockets). ``Blocks.close`` sets the app's stop event, an ``asyncio.Event`` of the server's loop,
  from the calling thread; a heartbeat whose page closed at that moment is cancelled on the loop, and the event's
  ``set`` raises ``InvalidStateError`` or ``RuntimeError`` (deque mutated) in the caller. The tests and benchmarks
  that serve the page in-process close it here; the Space never closes it.
- **The running event** (``current_event_id``: ``gradio.context.LocalContext.event_id``). A cancelled event's model
  passes stop; an event handler is not told its own id.
- **The page's configuration** (``pass_config_through``: ``Blocks.get_config_file``). The configuration the page
  inlines carries, for every component, the schemas of Gradio's API page (``api_info`` and its input and output
  forms, ``example_inputs``), which the browser never reads; for the components only private events use, they are
  a fifth of the page's first download (issue 54). ``launch()`` takes no hook on the configuration it serves.
- **Gradio's own readers** (``type_hints_gradio_reads``, ``docstring_parts``, ``upload_folder``, ``CancelBody``:
  ``gradio.utils.get_type_hints``, ``get_function_description``, ``get_upload_folder``,
  ``gradio.data_classes.CancelBody``). A job wrapper keeps the hints Gradio reads (``gr.Progress``, ``gr.Request``);
  the API page's descriptions are parsed as ``gr.api`` parses them for MCP; exports go where Gradio serves files
  from; the cancel route takes Gradio's own body.

- **Gradio's page files** (``frontend_assets``: the folder ``GET /assets/<name>`` serves, ``templates/frontend/assets``
  in the package). ``static_files`` sends its scripts and styles compressed once; Gradio compresses each fetch anew.

``sessions.LeanSession`` and ``LeanSessions`` subclass ``SessionState`` and ``StateHolder`` and override methods the
contract test names.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib.resources
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gradio.context import LocalContext
from gradio.data_classes import CancelBody
from gradio.server_messages import ProcessCompletedMessage
from gradio.state_holder import SessionState, StateHolder
from gradio.utils import get_function_description, get_type_hints, get_upload_folder

__all__ = [
    "CHECKED_ON",
    "CancelBody",
    "SessionState",
    "StateHolder",
    "after_each_push",
    "close_served",
    "current_event_id",
    "describe_on_api_page",
    "docstring_parts",
    "event_id_of",
    "forget_event",
    "forget_unread",
    "gradio_endpoint",
    "has_answer_stream",
    "is_queued",
    "queue_of",
    "queued_event",
    "queued_events",
    "replace_route",
    "returned_file_sets",
    "route_first",
    "running_events",
    "server_config_of",
    "session_store_of",
    "session_with_unread",
    "tell_dropped",
    "type_hints_gradio_reads",
    "unread_event_ids",
    "unread_messages",
    "upload_folder",
    "use_session_store",
    "waiting_groups",
    "wrap_input_reading",
]

# The Gradio versions each seam's shape was checked on (the contract test): 6.31.0, the pin; 6.30.0, the release
# before it (its wheel alone on PYTHONPATH: the contract test and the fair queue's, sessions' and API page's pass).
CHECKED_ON = ("6.30.0", "6.31.0")


def queue_of(blocks) -> Any | None:
    """The queue of ``blocks`` (a ``gr.Blocks``), or None for none (a session store before it has its Blocks)."""
    return getattr(blocks, "_queue", None)


def queued_event(queue, event_id: str) -> Any | None:
    """The event ``event_id`` while ``queue`` holds it (waiting or running), else None."""
    return queue.event_ids_to_events.get(event_id)


def queued_events(queue) -> list:
    """Every event ``queue`` holds (waiting or running)."""
    return list(queue.event_ids_to_events.values())


def is_queued(queue, event_id: str) -> bool:
    """Whether ``queue`` still holds the event ``event_id`` (waiting or running)."""
    return event_id in queue.event_ids_to_events


def forget_event(queue, event_id: str) -> None:
    """Take ``event_id`` out of ``queue``'s record of its events (a waiting job dropped); nothing if absent."""
    queue.event_ids_to_events.pop(event_id, None)


def after_each_push(queue, then: Callable[[], None]) -> None:
    """Make ``queue`` call ``then()`` after each job Gradio adds to it (by its own ``push``, whose answer stands)."""
    push = queue.push

    async def push_then(*args, **kwargs):
        answer = await push(*args, **kwargs)
        then()
        return answer

    queue.push = push_then


def use_session_store(app, holder: StateHolder) -> None:
    """Make ``holder`` the store of every session of the FastAPI ``app`` Gradio made, and of its Blocks."""
    holder.set_blocks(app.get_blocks())  # also points the Blocks at it
    app.state_holder = holder


def session_store_of(blocks) -> StateHolder:
    """The store of the sessions of ``blocks``."""
    return blocks.state_holder


def gradio_endpoint(app, path: str) -> Callable:
    """The function Gradio serves ``path`` with on the FastAPI ``app`` (its routes sit in one mounted router)."""
    routers = [getattr(route, "original_router", None) for route in app.router.routes]
    routes = [route for router in routers if router is not None for route in router.routes]
    return next(route.endpoint for route in routes if getattr(route, "path", "") == path)


def route_first(app, path: str, endpoint: Callable, methods: list[str]) -> None:
    """Serve ``path`` on the FastAPI ``app`` with ``endpoint``, matched before Gradio's route of the same path."""
    app.add_api_route(path, endpoint, methods=methods)
    app.router.routes.insert(0, app.router.routes.pop())


def replace_route(app, path: str, endpoint: Callable, methods: list[str]) -> None:
    """Serve ``path`` on the FastAPI ``app`` with ``endpoint`` alone: any route of that path is removed first."""
    app.router.routes[:] = [route for route in app.router.routes if getattr(route, "path", "") != path]
    app.add_api_route(path, endpoint, methods=methods)


def describe_on_api_page(component, described: dict) -> None:
    """Add ``described`` to the schema the API page shows for ``component``, one of ``gr.api``'s ``gr.Api``s."""
    component._api_info = component._api_info | described


def unread_event_ids(queue, session: str) -> set | None:
    """The ids of ``session``'s events whose answers ``queue`` holds unread (Gradio's own set: discarding from it
    drops the record), or None for none."""
    return queue.pending_event_ids_session.get(session)


def unread_messages(queue, session: str):
    """The ``asyncio.Queue`` of ``session``'s messages not yet sent to it, or None for none."""
    return queue.pending_messages_per_session.get(session)


def session_with_unread(queue, event_id: str) -> str | None:
    """The session holding ``event_id``'s unread answer, or None."""
    return next((session for session, ids in queue.pending_event_ids_session.items() if event_id in ids), None)


def has_answer_stream(queue, session: str) -> bool:
    """Whether ``queue`` holds a stream of messages for ``session`` (one it may read)."""
    return session in queue.pending_messages_per_session


def forget_unread(queue, session: str) -> None:
    """Drop ``queue``'s record of ``session``'s unread answers and its message stream; nothing if absent."""
    queue.pending_event_ids_session.pop(session, None)
    queue.pending_messages_per_session.pop(session, None)


def running_events(queue) -> list:
    """The events ``queue`` is processing now."""
    return [event for job in list(queue.active_jobs) if job is not None for event in job]


def waiting_groups(queue) -> list[list]:
    """Each concurrency group's list of waiting events, in its order: Gradio's own lists, reordered in place."""
    return [events.queue for events in list(queue.event_queue_per_concurrency_id.values())]


def event_id_of(event) -> str:
    """The id of a queued ``event`` (the one its client cancels and ``queued_event`` finds)."""
    return event._id


def tell_dropped(queue, event, reason: str) -> None:
    """Send ``event``'s client the end of its job: an error saying ``reason``, titled "Busy"."""
    queue.send_message(event, ProcessCompletedMessage(output={"error": reason}, success=False, title="Busy"))


def wrap_input_reading(blocks, wrap: Callable[[Callable], Callable]) -> None:
    """Make ``blocks`` read each event's inputs with ``wrap(read)``, ``read`` being its own coroutine
    ``read(block_fn, inputs, state, explicit_call=False)``."""
    blocks.preprocess_data = wrap(blocks.preprocess_data)


def returned_file_sets(blocks) -> list[set]:
    """The sets of file paths ``blocks``' events returned, which Gradio keeps to delete at shutdown (its own sets)."""
    return blocks.temp_file_sets


def server_config_of(blocks) -> Any | None:
    """The uvicorn ``Config`` of the server ``blocks`` runs on, or None before it has one."""
    return getattr(getattr(blocks, "server", None), "config", None)


def close_served(blocks, wait_s: float = 10.0) -> None:
    """Close ``blocks``, launched with ``prevent_thread_lock`` and served on a thread of its own, from this thread.

    Its stop event is set first on the server's loop, where the heartbeats that wait on it are cancelled, so
    ``Blocks.close`` finds it set and leaves it; ``Blocks.close`` runs whatever happens before it. A loop that has
    stopped runs no heartbeat: ``wait_s`` bounds the wait for one that stops meanwhile. A page that an earlier
    ``Blocks.close`` left half closed (not running) is not closed again: ``Blocks.close`` returns at once."""
    listening = getattr(getattr(blocks, "server", None), "servers", None) or []
    loop = listening[0].get_loop() if listening else None
    try:
        if loop is not None and loop.is_running():
            set_on_its_loop(blocks.app.stop_event, loop, wait_s)
    finally:
        blocks.close()


def set_on_its_loop(event: asyncio.Event, loop: asyncio.AbstractEventLoop, wait_s: float) -> None:
    """Set ``event`` on ``loop``, from another thread, waiting up to ``wait_s``. A loop that stops or closes first
    runs nothing that waits on the event, so it is then left unset (and the set that was scheduled, cancelled)."""

    async def set_event() -> None:
        event.set()

    try:
        setting = asyncio.run_coroutine_threadsafe(set_event(), loop)
    except RuntimeError:  # the loop closed since it was seen running
        return
    try:
        setting.result(timeout=wait_s)
    except (concurrent.futures.TimeoutError, concurrent.futures.CancelledError):
        setting.cancel()


def current_event_id() -> str | None:
    """The id of the Gradio event the calling thread runs for, or None outside an event."""
    return LocalContext.event_id.get(None)


def pass_config_through(blocks, change: Callable[[dict], dict]) -> None:
    """Make every configuration ``blocks`` makes (at launch and for ``/config`` and the page's HTML) pass through
    ``change``; ``blocks.config`` is remade through it now."""
    made = blocks.get_config_file
    blocks.get_config_file = lambda: change(made())
    blocks.config = blocks.get_config_file()


def type_hints_gradio_reads(fn: Callable) -> dict:
    """``fn``'s type hints as Gradio reads them to find ``gr.Progress`` and ``gr.Request`` parameters."""
    return get_type_hints(fn)


def docstring_parts(fn: Callable) -> tuple[str, dict, list]:
    """``fn``'s docstring parsed as ``gr.api`` parses it: (description, {parameter: description}, returns)."""
    return get_function_description(fn)


def frontend_assets() -> Path:
    """The folder of Gradio's page files (its scripts and styles, named by their content's hash), which Gradio serves
    at ``/assets/<name>``."""
    return Path(str(importlib.resources.files("gradio").joinpath("templates/frontend/assets")))


def upload_folder() -> str:
    """The folder Gradio serves returned files from (``GRADIO_TEMP_DIR`` or its default)."""
    return get_upload_folder()
