"""A fair turn for every client in Gradio's queue: one client's many jobs do not make everyone wait behind them, and
a heavy job does not wait for ever behind lighter ones that keep coming.

Gradio runs a concurrency group's waiting jobs first in, first out. In the group of page events and heavy
endpoints (``page.launch.MODEL_WORK``) a client with several jobs queued ahead would make the next visitor wait for
all of them, and forty clients with one heavy job each would make a light call wait behind forty heavy ones.
``make_fair`` reorders the waiting jobs after each new one by their rank (``fair_order``), lowest first:

    rank = the cost its client has running or ahead of it, this job's included (``admission.call_cost``)
           - ``AGE_CREDIT`` x the seconds it has waited

and among equals the earlier arrival goes first; a client alone keeps its order. So a visitor's light call goes
before anyone's heavy job, and a job that waits gains on every newcomer at ``AGE_CREDIT`` a second: a job of rank
r is behind no job that arrives more than (r - ``admission.LIGHT_COST``) / ``AGE_CREDIT`` seconds after it: 7 s at
most, as a client holds at most ``admission.CLIENT_BUDGET`` (8). Aging never reorders the jobs already waiting (they
age together); it only stops newcomers going first for ever.
"""

from __future__ import annotations

import time
from collections import Counter

from . import admission, clients, gradio_seam


def client_of(event) -> str:
    """The client that sent a queued event (its join request's, as the guard identified it)."""
    return clients.request_client(event.request) if event.request is not None else clients.UNKNOWN


def cost_of(event) -> float:
    """What a queued event costs (``admission.call_cost`` of its event and inputs)."""
    body = getattr(event, "data", None)
    return admission.call_cost(getattr(event, "fn", None), getattr(body, "data", None))


def waiting_events(queue) -> list:
    """The events waiting in every concurrency group of Gradio's ``queue``."""
    return [event for events in gradio_seam.waiting_groups(queue) for event in events]


AGE_CREDIT = 1.0  # cost a waiting job's rank loses per second waited: one light call's


def fair_order(waiting: list, running: list, waited=lambda event: 0.0) -> list:
    """``waiting`` events in their fair order, given the events ``running`` now.

    Args:
        waiting: the group's waiting events, in arrival order.
        running: the events being processed (each counts its cost for its client).
        waited: the seconds an event has waited (by default none has).

    Returns:
        The same events, by (rank, arrival); the rank is the module's.
    """
    ahead = Counter()
    for event in running:
        ahead[client_of(event)] += cost_of(event)
    ranked = []
    for arrival, event in enumerate(waiting):
        client = client_of(event)
        ahead[client] += cost_of(event)
        ranked.append((ahead[client] - AGE_CREDIT * waited(event), arrival, event))
    return [event for _, _, event in sorted(ranked, key=lambda rank: rank[:2])]


def make_fair(queue, clock=time.monotonic) -> None:
    """Make Gradio's ``queue`` put each new job in its fair place (``fair_order``) among the waiting ones, by how long
    each has waited on ``clock``."""
    arrived: dict[int, tuple[object, float]] = {}  # id(event) -> (the event, kept so its id is not reused; when)

    def reorder() -> None:
        now, running, waiting = clock(), gradio_seam.running_events(queue), waiting_events(queue)
        for event in waiting:
            arrived.setdefault(id(event), (event, now))
        for gone in arrived.keys() - {id(event) for event in waiting}:
            del arrived[gone]
        for events in gradio_seam.waiting_groups(queue):
            if len(events) > 1:
                events[:] = fair_order(events, running, lambda event: now - arrived[id(event)][1])

    gradio_seam.after_each_push(queue, reorder)


def drop_waiting(queue, event_id: str, reason: str) -> bool:
    """Take the waiting event ``event_id`` out of Gradio's ``queue`` and tell its client ``reason``; True if it
    was waiting (a running or finished event is left alone)."""
    for events in gradio_seam.waiting_groups(queue):
        event = next((event for event in events if gradio_seam.event_id_of(event) == event_id), None)
        if event is not None:
            events.remove(event)
            gradio_seam.forget_event(queue, event_id)
            gradio_seam.tell_dropped(queue, event, reason)
            return True
    return False
