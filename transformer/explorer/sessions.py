"""What the server keeps per visitor, and for how long: each session is released when its page closes, or
after ``IDLE_SECONDS`` without a request.

Gradio keeps every session (its ``gr.State`` values and the last value of every component it sent) until
``state_session_capacity`` sessions exist; a closed page only marks its ``gr.State`` values to go an hour
later. Here a closed page (``demo.unload``, run when its heartbeat connection ends) and an idle session
(swept every ``SWEEP_SECONDS``) are dropped whole, so memory follows the sessions that are open.

A session here is a ``LeanSession``: it keeps what handlers read (``gr.State`` values, components changed
by an update) but not Gradio's copy of every component's configuration and last value sent, every figure
included, which only Gradio's deep-link route reads (``server`` replaces that route).
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import datetime

import gradio as gr
from gradio.state_holder import SessionState, StateHolder

IDLE_SECONDS = 3600  # a session with no request for an hour is dropped (its page must analyse again)
SWEEP_SECONDS = 5  # how often idle sessions are looked for
# Sessions held at once, the oldest dropped first. A session with every tab open holds 1.35 MB with the
# bundled model (it reads 128 tokens) and 5.3 MB with one that reads 256 (``benchmarks.session_size``,
# README "Performance and reliability"): 1,000 of the latter, 5.3 GB, fit in a third of a 16 GB CPU Space.
SESSION_CAPACITY = 1000


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


class LeanSessions(StateHolder):
    """Gradio's ``StateHolder`` (sessions by hash, oldest dropped past ``capacity``) holding ``LeanSession``s.

    ``dropped`` counts the sessions ``drop_session`` released, so the sweep knows when memory was freed.
    """

    def __init__(self):
        super().__init__()
        self.dropped = 0

    def __getitem__(self, session_id: str) -> SessionState:
        if session_id not in self.session_data:
            self.session_data[session_id] = LeanSession(self.blocks)
        return super().__getitem__(session_id)


def lean_sessions(app) -> LeanSessions:
    """Give the FastAPI ``app`` Gradio made (before it serves anything) a ``LeanSessions`` holder; returns it."""
    holder = LeanSessions()
    holder.set_blocks(app.get_blocks())  # also points the Blocks at it
    app.state_holder = holder
    return holder


def drop_session(holder: LeanSessions, session_hash: str) -> bool:
    """Forget everything Gradio keeps for ``session_hash`` in the ``holder``; True if it was there."""
    with holder.lock:
        session = holder.session_data.pop(session_hash, None)
        holder.time_last_used.pop(session_hash, None)
        holder.dropped += session is not None
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
        drop_session(demo.state_holder, request.session_hash)

    demo.unload(release)


def _libc_malloc_trim():
    """glibc's ``malloc_trim``, or None where the C library is not glibc (macOS, musl)."""
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


MALLOC_TRIM = _libc_malloc_trim()


def return_freed_memory() -> bool:
    """Give the heap pages that dropped sessions freed back to the system; True where the C library can.

    glibc keeps freed memory in its per-thread arenas (Gradio runs handlers on many threads), so without
    this the server's resident memory stays at its peak after sessions go.
    """
    if MALLOC_TRIM is None:
        return False
    MALLOC_TRIM(0)
    return True


async def sweep_idle(holder: LeanSessions) -> None:
    """Forever: every ``SWEEP_SECONDS``, drop the sessions idle for ``IDLE_SECONDS`` (read each time) and, when
    sessions went since the last round (closed pages included), return the memory they freed."""
    returned = holder.dropped
    while True:
        await asyncio.sleep(SWEEP_SECONDS)
        drop_idle(holder, IDLE_SECONDS)
        if holder.dropped != returned:
            returned = holder.dropped
            await asyncio.to_thread(return_freed_memory)
