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

Gradio internals still read in place, outside this module (not yet behind a seam): the queue's
``pending_event_ids_session``, ``pending_messages_per_session``, ``event_queue_per_concurrency_id``,
``active_jobs``, ``send_message`` and an event's ``_id`` (``admission``, ``guard``, ``fair_queue``), ``LeanSession``'s
overrides of ``SessionState`` (``sessions``), ``Blocks.preprocess_data``, ``temp_file_sets`` and ``server.config``
(``page.launch``), and ``gradio.context.LocalContext`` (``runner.stoppable``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gradio.state_holder import SessionState, StateHolder

__all__ = [
    "CHECKED_ON",
    "SessionState",
    "StateHolder",
    "after_each_push",
    "describe_on_api_page",
    "forget_event",
    "gradio_endpoint",
    "is_queued",
    "queue_of",
    "queued_event",
    "queued_events",
    "replace_route",
    "route_first",
    "session_store_of",
    "use_session_store",
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
