"""Who sent a request, and how often each sender may do something costly: the client's address and rate limits.

A client is an address. Behind ``trusted_proxy_hops()`` proxies (``TRUSTED_PROXY_HOPS``; 1 on a Hugging Face
Space, 0 elsewhere) the sender is the ``X-Forwarded-For`` entry that many hops from the right: each proxy
appends the address that connected to it, so the right-hand entries are written by proxies we trust and
everything to their left by whoever sent the request (Werkzeug's ``ProxyFix(x_for=N)``, uvicorn's
``--forwarded-allow-ips``). With no proxy trusted, or fewer entries than hops, the connection's own address is
the client. A Space is recognised as Gradio recognises one: ``SYSTEM=spaces``.

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
SCOPE_CLIENT = "explorer.client"  # the key under which ``guard.Guard`` records a request's client in its scope


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


TRUSTED_PROXY_HOPS = "TRUSTED_PROXY_HOPS"  # the setting: how many proxies in front of the app append a hop
# A Space's requests reach the app through Hugging Face's one reverse proxy, which appends the address that
# connected to it; its documentation says no more than that (see README "Security"), so 1, overridable.
SPACE_PROXY_HOPS = 1


def trusted_proxy_hops() -> int:
    """How many ``X-Forwarded-For`` hops, from the right, our own proxies wrote: ``$TRUSTED_PROXY_HOPS``, else
    ``SPACE_PROXY_HOPS`` on a Space and 0 elsewhere (a header nobody we trust wrote is ignored)."""
    setting = os.environ.get(TRUSTED_PROXY_HOPS, "").strip()
    if setting:
        return max(0, int(setting))
    return SPACE_PROXY_HOPS if on_space() else 0


def forwarded_client(forwarded_for: str, hops: int) -> str | None:
    """The address ``hops`` entries from the right of an ``X-Forwarded-For`` value, or None where there are fewer
    (or ``hops`` is 0): what the nearest trusted proxy saw connect to it, whatever the sender wrote to its left."""
    entries = [entry.strip() for entry in forwarded_for.split(",") if entry.strip()]
    return entries[-hops] if 0 < hops <= len(entries) else None


def client_address(request, hops: int | None = None) -> str:
    """The client that sent ``request`` (anything with ``.client`` and ``.headers``: Starlette's or ``gr.Request``).

    Args:
        request: the request.
        hops: how many proxies in front of the app to trust; by default, ``trusted_proxy_hops()``.

    Returns:
        The ``X-Forwarded-For`` entry ``hops`` from the right where there is one, else the connection's
        address (``UNKNOWN`` where there is none).
    """
    hops = trusted_proxy_hops() if hops is None else hops
    forwarded = forwarded_client(request.headers.get("x-forwarded-for") or "", hops) if hops else None
    if forwarded:
        return forwarded
    client = getattr(request, "client", None)
    return getattr(client, "host", None) or UNKNOWN


def request_client(request) -> str:
    """The client of a request (Starlette's, or a ``gr.Request`` around one) as the guard identified it (it records
    it in the request's scope), else its address."""
    starlette_request = getattr(request, "__dict__", {}).get("request") or request  # gr.Request copies a scope read
    scope = getattr(starlette_request, "scope", None)
    return (scope.get(SCOPE_CLIENT) if isinstance(scope, dict) else None) or client_address(request)


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

    def refund(self, client: str) -> None:
        """Give back the token ``client`` just spent (an action another limit then refused)."""
        with self._lock:
            tokens, then = self._buckets.get(client, (float(self.burst), self.clock()))
            self._buckets[client] = (min(float(self.burst), tokens + 1), then)


EVERYONE = "*"  # the one key of a ``RateLimit`` that counts all clients together
FROM_YOU, FROM_EVERYONE = "from your address", "from all addresses together"  # whose limit refused, as said


def take_both(own: RateLimit, everyone: RateLimit, client: str) -> tuple[float, str]:
    """Spend a token of ``client`` in ``own`` and one of all clients in ``everyone`` (a refusal by either spends
    nothing in the other).

    Returns:
        (0.0, ``FROM_YOU``), or (the seconds to wait, whose limit refused: ``FROM_YOU`` or ``FROM_EVERYONE``).
    """
    own_wait = own.take(client)
    if own_wait:
        return own_wait, FROM_YOU
    all_wait = everyone.take(EVERYONE)
    if all_wait:
        own.refund(client)
        return all_wait, FROM_EVERYONE
    return 0.0, FROM_YOU


def retry_message(what: str, wait_seconds: float, source: str = FROM_YOU) -> str:
    """The refusal a rate-limited client reads: what it did too often, whose limit that is (``source``), and when to
    try again."""
    return f"Too many {what} {source}; retry in {max(1, math.ceil(wait_seconds))} s."
