"""What the server keeps per visitor, and for how long: each session is released when its page closes, or
after ``IDLE_SECONDS`` without a request.

Gradio keeps every session (its ``gr.State`` values and the last value of every component it sent) until
``state_session_capacity`` sessions exist; a closed page only marks its ``gr.State`` values to go an hour
later. Here a closed page (``demo.unload``, run when its heartbeat connection ends) and an idle session
(swept every ``SWEEP_SECONDS``) are dropped whole, so memory follows the sessions that are open.

A session here is a ``LeanSession``: it keeps what handlers read (``gr.State`` values, components changed
by an update) but not Gradio's copy of every component's configuration and last value sent, every figure
included, which only Gradio's deep-link route reads (``page.launch`` replaces that route).
"""

from __future__ import annotations

import asyncio
import datetime
import math
from collections import OrderedDict

import gradio as gr
from fastapi import HTTPException

from ...explain.heap import return_freed_memory
from . import clients, gradio_seam
from .gradio_seam import SessionState, StateHolder

IDLE_SECONDS = 3600  # a session with no request for an hour is dropped (its page must analyze again)
SWEEP_SECONDS = 5  # how often idle sessions are looked for
# Sessions held at once, the oldest dropped first. A session with every tab open holds 1.35 MB with the
# bundled model (it reads 128 tokens) and 5.3 MB with one that reads 256 (``benchmarks.session_size``,
# README "Performance and reliability"): 1,000 of the latter, 5.3 GB, fit in a third of a 16 GB CPU Space.
SESSION_CAPACITY = 1000
# One address's share: 32 sessions are 43 MB with the bundled model and 170 MB with a 256-token one, so a
# client can hold no more than a few percent of the sessions' memory. A person opens one per page.
SESSIONS_PER_CLIENT = 32
NEW_SESSIONS_BURST = 30  # sessions one address may open at once (a class behind one school address) ...
NEW_SESSIONS_PER_SECOND = 0.5  # ... and then one every 2 s
# All addresses together: fresh sessions fill at most a fifth of ``SESSION_CAPACITY`` at once, then 5 a second,
# so however many addresses a flood comes from, the sessions people came back to stay (they go last anyway).
ALL_NEW_SESSIONS_BURST = 200
ALL_NEW_SESSIONS_PER_SECOND = 5.0


class LeanSession(SessionState):
    """Gradio 6.31's session without ``config_values``: the configuration and last sent value of each component."""

    def __init__(self, blocks: gr.Blocks):
        super().__init__(blocks)
        self.config_values = {}

    def __setitem__(self, key: int, value) -> None:
        super().__setitem__(key, value)
        self.config_values.pop(key, None)

    def _update_config(self, key: int) -> None:
        """Gradio records a component's new configuration here for its deep links; nothing to keep."""

    def _update_value_in_config(self, key: int, value) -> None:
        """Gradio records each value sent (a figure's whole JSON) here for its deep links; nothing to keep."""


class TooManySessions(HTTPException):
    """429 for a client opening sessions faster than ``NEW_SESSIONS_PER_SECOND`` allows (FastAPI answers it)."""

    def __init__(self, wait_seconds: float, source: str = clients.FROM_YOU):
        message = clients.retry_message("new sessions", wait_seconds, source)
        super().__init__(429, message, headers={"Retry-After": str(max(1, math.ceil(wait_seconds)))})


class LeanSessions(StateHolder):
    """Gradio's ``StateHolder`` (sessions by hash, least recently used first) holding ``LeanSession``s, fair to
    every client.

    - A session belongs to the client whose request opened it (``clients.current_client``; one that Gradio's
      queue opens for an API call, in its worker, belongs to no client). A client opens at most
      ``NEW_SESSIONS_BURST`` at once and then ``NEW_SESSIONS_PER_SECOND``, all clients together
      ``ALL_NEW_SESSIONS_BURST`` and then ``ALL_NEW_SESSIONS_PER_SECOND``; past that, ``TooManySessions``.
      A client holds at most ``SESSIONS_PER_CLIENT``: its next one replaces its own least recently used.
    - Past ``capacity``, sessions go in this order, each kind least recently used first: those an API call
      made (no client request used them), those one request used (a page opened once, or what a flood of new
      sessions is made of), then those a page came back to.

    ``dropped`` counts the sessions released, so the sweep knows when memory was freed.
    """

    def __init__(self):
        super().__init__()
        self.dropped = 0
        self.new_sessions = clients.RateLimit(NEW_SESSIONS_PER_SECOND, NEW_SESSIONS_BURST)
        self.all_new_sessions = clients.RateLimit(ALL_NEW_SESSIONS_PER_SECOND, ALL_NEW_SESSIONS_BURST)
        self.owner: dict[str, str] = {}  # session -> the client that opened it
        self.owned: dict[str, OrderedDict[str, None]] = {}  # client -> its sessions, least recently used first
        self.requests: dict[str, int] = {}  # session -> how many client requests used it (queue workers' uses not)

    def __getitem__(self, session_id: str) -> SessionState:
        client = clients.current_client()
        if session_id not in self.session_data:
            self._open(session_id, client)
        self.requests[session_id] = self.requests.get(session_id, 0) + (client is not None)
        return super().__getitem__(session_id)

    def _open(self, session_id: str, client: str | None) -> None:
        """Make ``client``'s new session (None: opened by the server's own worker, owned by no client)."""
        if client is not None:
            wait, source = clients.take_both(self.new_sessions, self.all_new_sessions, client)
            if wait:
                raise TooManySessions(wait, source)
            own = self.owned.get(client, {})
            if len(own) >= SESSIONS_PER_CLIENT:
                drop_session(self, next(iter(own)))
        with self.lock:
            self.session_data[session_id] = LeanSession(self.blocks)
            if client is not None:
                self.owner[session_id] = client
                self.owned.setdefault(client, OrderedDict())[session_id] = None

    def update(self, session_id: str) -> None:
        """``session_id`` was used: the most recently used now; past ``capacity``, one session goes."""
        with self.lock:
            if session_id in self.session_data:
                self.session_data.move_to_end(session_id)
                own = self.owned.get(self.owner.get(session_id))
                if own is not None:
                    own.move_to_end(session_id)
            evicted = self._eviction(keep=session_id) if len(self.session_data) > self.capacity else None
        if evicted is not None:
            drop_session(self, evicted)

    def _eviction(self, keep: str) -> str | None:
        """The session to drop when full, never ``keep``: the least recently used of those that served the fewest
        client requests (none: an API call's; one: a page opened once, or a flood's), counting 2 or more alike."""
        others = (key for key in self.session_data if key != keep)  # least recently used first
        return min(others, key=lambda key: min(self.requests.get(key, 0), 2), default=None)

    def forget(self, session_id: str) -> SessionState | None:
        """Remove ``session_id`` from every record (the caller holds ``lock``); the session, or None."""
        session = self.session_data.pop(session_id, None)
        self.time_last_used.pop(session_id, None)
        self.requests.pop(session_id, None)
        client = self.owner.pop(session_id, None)
        own = self.owned.get(client)
        if own is not None:
            own.pop(session_id, None)
            if not own:
                del self.owned[client]
        self.dropped += session is not None
        return session


def lean_sessions(app) -> LeanSessions:
    """Give the FastAPI ``app`` Gradio made (before it serves anything) a ``LeanSessions`` holder; returns it."""
    holder = LeanSessions()
    gradio_seam.use_session_store(app, holder)
    return holder


def drop_session(holder: LeanSessions, session_hash: str) -> bool:
    """Forget everything Gradio keeps for ``session_hash`` in the ``holder``; True if it was there."""
    with holder.lock:
        session = holder.forget(session_hash)
    if session is None:
        return False
    for state, value, _ in list(session.state_components):
        state.delete_callback(value)
    return True


def drop_idle(holder: LeanSessions, idle_seconds: float) -> int:
    """Drop every session with no request for ``idle_seconds``; returns how many went."""
    cutoff = datetime.datetime.now() - datetime.timedelta(seconds=idle_seconds)
    idle = [key for key, used in list(holder.time_last_used.items()) if used < cutoff]
    return sum(drop_session(holder, key) for key in idle)


def release_on_unload(demo: gr.Blocks) -> None:
    """Inside ``demo``: when a page closes (Gradio's ``unload``), drop its session at once."""

    def release(request: gr.Request) -> None:
        drop_session(gradio_seam.session_store_of(demo), request.session_hash)

    demo.unload(release)


def work_done(holder: LeanSessions) -> tuple[int, int] | None:
    """(sessions dropped, jobs queued) so far, when no queued job is running now; None while one runs."""
    queue = gradio_seam.queue_of(holder.blocks)
    if queue is not None and queue.get_active_worker_count():
        return None
    return holder.dropped, getattr(queue, "events_recorded", 0)


async def sweep_idle(holder: LeanSessions) -> None:
    """Forever: every ``SWEEP_SECONDS``, drop the sessions idle for ``IDLE_SECONDS`` (read each time) and, when
    sessions went (closed pages included) or jobs ran since the last round and none runs now, return the
    memory they freed: a burst of heavy jobs leaves its freed tensors in the allocator's arenas otherwise."""
    returned = work_done(holder)
    while True:
        await asyncio.sleep(SWEEP_SECONDS)
        drop_idle(holder, IDLE_SECONDS)
        done = work_done(holder)
        if done is not None and done != returned:
            returned = done
            await asyncio.to_thread(return_freed_memory)
