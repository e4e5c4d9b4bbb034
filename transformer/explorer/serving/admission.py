"""Admission: what each client holds of the server, counted in one atomic step before a job enters the queue.

Every job costs something (``job_cost``: its endpoint's weight, times more for a longer text). ``Admission.admit``
adds a job's cost to its client's total under one lock, or refuses it, in the same step: jobs sent together
cannot all pass a check made before any of them is counted. A ticket is held, and counts, while its job is

- admitted but not yet in Gradio's queue (the join request is still being handled),
- waiting or running in the queue, and after, while a thread still runs its job (``busy``: Gradio ends a cancelled
  event at once, and would start the next jobs beside a thread that runs on),
- finished but unread: its answer waits in Gradio's memory until the client reads it. Unread for
  ``UNREAD_SECONDS`` after it finished, the answer is dropped (``settle``), so answers cannot pile up.

A client's total is capped at ``CLIENT_BUDGET``; a heavy job must also leave ``LIGHT_RESERVE`` free, so a
light call (``/predict``) always fits beside the client's own heavy ones.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from ..analysis import MAX_INPUT_CHARS
from . import gradio_seam

LIGHT_COST = 1.0  # /predict, /attention and the like: one forward pass, a small answer
PAGE_EVENT_COST = 2.0  # a page event (``queue/join`` by number): the analysis or one view drawn from it
# The endpoints that cost more than one forward pass, by how much: their work and answer size at their worst legal
# input, as measured in benchmarks/README.md ("Each heavy job at its worst legal input", ``benchmarks.job_times``).
HEAVY_WEIGHTS = {
    "walkthrough": 2.0,
    "export": 3.0,
    "faithfulness": 3.0,
    "patching": 3.0,
    "routes": 2.0,
    "attributions": 2.0,
    "knockout": 2.0,
    "head_importance": 2.0,
    "perturb": 2.0,
    "word_order": 2.0,
    "compare": 2.0,
    "compare_models": 2.0,
    "head_atlas": 2.0,
    "errors": 2.0,
    "behaviour": 2.0,
    "training": 2.0,  # one pass per kept checkpoint (12 by default) of the one sentence
}
CLIENT_BUDGET = 8.0  # one client's total cost in flight: e.g. two long walkthroughs, or four light calls and a page
LIGHT_RESERVE = 2.0  # kept free of heavy jobs: a client's own light calls always fit
UNREAD_SECONDS = 10.0  # a finished answer nobody has read is dropped this long after the job ended


def job_cost(endpoint: str | None, text_chars: int) -> float:
    """What one job costs: a named endpoint's weight (``LIGHT_COST`` for a light one), a page event's
    ``PAGE_EVENT_COST`` (``endpoint`` None), times 1 to 2 with the text's length, in quarter steps of
    ``MAX_INPUT_CHARS / 4`` characters (the model reads more tokens; a short text costs the weight itself)."""
    if endpoint is None:
        return PAGE_EVENT_COST
    weight = HEAVY_WEIGHTS.get(endpoint)
    if weight is None:
        return LIGHT_COST
    quarters = min(text_chars, MAX_INPUT_CHARS) * 4 // MAX_INPUT_CHARS  # 0 to 4
    return weight * (1.0 + quarters / 4)


def call_cost(fn, data) -> float:
    """``job_cost`` of a call of Gradio's event ``fn`` (None: one Gradio will refuse) with its inputs ``data``.

    An event that skips the queue (the main views' redraws) is light; a private one is a page event.
    """
    if fn is None or not fn.queue:
        return LIGHT_COST
    if fn.api_visibility == "private":
        return job_cost(None, 0)
    texts = data if isinstance(data, list) else []
    return job_cost(fn.api_name, sum(len(value) for value in texts if isinstance(value, str)))


@dataclass(eq=False)
class Ticket:
    """One admitted job: whose, what it costs, and (once Gradio queued it) its event and session."""

    client: str
    cost: float
    event_id: str | None = None
    session_hash: str | None = None
    ended_at: float | None = None  # when it was first seen out of the queue (finished, failed or cancelled)
    released: bool = False


class Admission:
    """Each client's cost in flight; ``admit`` and ``release`` under one lock."""

    def __init__(
        self,
        budget: float = CLIENT_BUDGET,
        light_reserve: float = LIGHT_RESERVE,
        unread_seconds: float = UNREAD_SECONDS,
        clock=time.monotonic,
        busy=lambda event_id: False,
    ):
        """``busy(event_id)``: whether a thread still runs that event's job (``runner.running``)."""
        self.budget, self.light_reserve, self.unread_seconds, self.clock = budget, light_reserve, unread_seconds, clock
        self.busy = busy
        self._lock = threading.Lock()
        self.held: dict[str, float] = {}  # client -> the cost of its tickets
        self.tickets: dict[str, list[Ticket]] = {}  # client -> its tickets, oldest first

    def admit(self, client: str, cost: float, queue=None) -> Ticket | None:
        """Count ``cost`` against ``client`` and return its ticket, or None when it does not fit (nothing counted).

        With Gradio's ``queue``, the client's tickets whose jobs are over are released first (``settle``).
        """
        with self._lock:
            if queue is not None:
                self._settle(queue, self.tickets.get(client, []))
            limit = self.budget - (self.light_reserve if cost > LIGHT_COST else 0.0)
            if self.held.get(client, 0.0) + cost > limit + 1e-9:
                return None
            ticket = Ticket(client, cost)
            self.held[client] = self.held.get(client, 0.0) + cost
            self.tickets.setdefault(client, []).append(ticket)
            return ticket

    def bind(self, ticket: Ticket, event_id: str, session_hash: str | None) -> None:
        """``ticket``'s job is Gradio's event ``event_id`` in ``session_hash`` (the session its answer goes to)."""
        ticket.event_id, ticket.session_hash = event_id, session_hash or event_id

    def release(self, ticket: Ticket) -> None:
        """The job is over: its cost no longer counts (a second release does nothing)."""
        with self._lock:
            self._release(ticket)

    def _release(self, ticket: Ticket) -> None:
        if ticket.released:
            return
        ticket.released = True
        held = self.held.get(ticket.client, 0.0) - ticket.cost
        own = self.tickets.get(ticket.client, [])
        if ticket in own:
            own.remove(ticket)
        if own and held > 1e-9:
            self.held[ticket.client] = held
        else:
            self.held.pop(ticket.client, None)
            self.tickets.pop(ticket.client, None)

    def settle(self, queue) -> int:
        """Release every ticket whose job is over, dropping answers unread for ``unread_seconds``; how many went.

        Call it on the event loop that runs Gradio's ``queue`` (it edits the queue's messages).
        """
        with self._lock:
            return self._settle(queue, [ticket for own in self.tickets.values() for ticket in own])

    def _settle(self, queue, tickets: list[Ticket]) -> int:
        released = 0
        for ticket in list(tickets):
            if ticket.event_id is None or gradio_seam.is_queued(queue, ticket.event_id) or self.busy(ticket.event_id):
                continue  # still being admitted, waiting or running, or its event over but not its thread
            now = self.clock()
            ticket.ended_at = now if ticket.ended_at is None else ticket.ended_at
            if unread(queue, ticket):
                if now - ticket.ended_at < self.unread_seconds:
                    continue
                drop_answer(queue, ticket)
            self._release(ticket)
            released += 1
        return released


def unread(queue, ticket: Ticket) -> bool:
    """Whether ``ticket``'s answer is still waiting in Gradio's ``queue`` for its client to read it."""
    return ticket.event_id in (gradio_seam.unread_event_ids(queue, ticket.session_hash) or ())


def drop_answer(queue, ticket: Ticket) -> None:
    """Remove what Gradio's ``queue`` keeps for ``ticket``'s event (its messages, its answer among them), and the
    session's message queue once nothing is pending in it."""
    pending = gradio_seam.unread_event_ids(queue, ticket.session_hash)
    if pending is not None:
        pending.discard(ticket.event_id)
    messages = gradio_seam.unread_messages(queue, ticket.session_hash)
    if messages is not None:
        kept = []
        while not messages.empty():  # an asyncio.Queue: drained and refilled in one step of the event loop
            message = messages.get_nowait()
            if getattr(message, "event_id", None) != ticket.event_id:
                kept.append(message)
        for message in kept:
            messages.put_nowait(message)
    if not pending and (messages is None or messages.empty()):
        gradio_seam.forget_unread(queue, ticket.session_hash)
