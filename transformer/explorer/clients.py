"""Who sent a request, and how often each sender may do something costly: the client's address and rate limits.

A client is an address. On a Hugging Face Space every request reaches the app through the Space's proxy, so
the sender is the first ``X-Forwarded-For`` hop, which the proxy writes. Anywhere else that header is
whatever the sender chose to put there, so the connection's own address is used. A Space is recognised as
Gradio recognises one: ``SYSTEM=spaces`` (set by Hugging Face in every Space, with ``SPACE_ID``).

``RateLimit`` is a token bucket per client: ``burst`` actions at once, then one every ``1 / per_second``
seconds. It remembers at most ``max_clients`` clients (the least recently seen forgotten first, each with a
full bucket again), so its memory is bounded whatever the number of senders.
"""

from __future__ import annotations

import asyncio
import contextvars
import math
import os
import threading
import time
from collections import OrderedDict

UNKNOWN = "unknown"  # a request with no connection address (an in-process test client)
# (client, the task handling its request), set by ``guard.Guard``; read through ``current_client``. A task that
# a request's task starts (Gradio's queue workers can be) inherits the value, hence the task kept beside it.
CURRENT = contextvars.ContextVar("explorer_client", default=None)


def current_client() -> str | None:
    """The client whose request this task is handling, or None (a queue worker, a thread, no request)."""
    held = CURRENT.get()
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no event loop in this thread
        return None
    return held[0] if held is not None and held[1] is task else None


def on_space() -> bool:
    """True when the app runs as a Hugging Face Space (Gradio's own test: ``SYSTEM=spaces``)."""
    return os.environ.get("SYSTEM") == "spaces"


def client_address(request, behind_space_proxy: bool | None = None) -> str:
    """The client that sent ``request`` (anything with ``.client`` and ``.headers``: Starlette's or ``gr.Request``).

    Args:
        request: the request.
        behind_space_proxy: whether to trust ``X-Forwarded-For``; by default, ``on_space()``.

    Returns:
        The first ``X-Forwarded-For`` hop behind a Space's proxy, else the connection's address
        (``UNKNOWN`` where there is none).
    """
    if behind_space_proxy if behind_space_proxy is not None else on_space():
        first_hop = (request.headers.get("x-forwarded-for") or "").split(",")[0].strip()
        if first_hop:
            return first_hop
    client = getattr(request, "client", None)
    return getattr(client, "host", None) or UNKNOWN


class RateLimit:
    """Token buckets by client: ``take(client)`` spends one token or says how long until one is free."""

    def __init__(self, per_second: float, burst: int, max_clients: int = 10_000, clock=time.monotonic):
        self.per_second, self.burst, self.max_clients, self.clock = per_second, burst, max_clients, clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # client -> (tokens, when)
        self._lock = threading.Lock()

    def take(self, client: str) -> float:
        """Spend one of ``client``'s tokens: 0.0 if there was one, else the seconds until there is (nothing spent)."""
        now = self.clock()
        with self._lock:
            tokens, then = self._buckets.pop(client, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - then) * self.per_second)
            wait = 0.0 if tokens >= 1 else (1 - tokens) / self.per_second
            self._buckets[client] = (tokens - 1 if wait == 0 else tokens, now)
            while len(self._buckets) > self.max_clients:
                self._buckets.popitem(last=False)
        return wait


def retry_message(what: str, wait_seconds: float) -> str:
    """The refusal a rate-limited client reads: what it did too often, and when to try again."""
    return f"Too many {what} from your address; retry in {max(1, math.ceil(wait_seconds))} s."
