"""Answers on their way to a socket, counted against their client until written.

An answer stream's route (a session's ``queue/data``, an event's ``/call`` stream) hands its messages to
``AnswerWriter.send``, which queues them and returns at once; a task of the writer's own writes them in order,
``ANSWER_CHUNK`` bytes at a time, waiting on the socket as uvicorn does before each write. So a slow reader holds
only the answer's bytes here, counted in ``Unsent``, and not what the route built them from: Gradio's stream keeps
the answer's data, its dumped copy and its JSON text (about 8× the bytes, 31 MiB for a 256-token ``/attention``
answer) until its ``send`` returns. A client over ``MAX_UNSENT_PER_CLIENT``, or everyone over ``MAX_UNSENT_BYTES``,
is told to retry before a new job (``guard.Guard``); a reader that stops draining is cut off
(``page.launch.ConnectionDeadlines``), and the writer then drops what it holds.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter, deque

from . import clients

ANSWER_CHUNK = 64 * 1024  # bytes written to a socket at a time: uvicorn's high-water mark for its send buffer
MAX_UNSENT_PER_CLIENT = 16 * 2**20  # two answers at the endpoints' cap (``payloads``' 8 MB)
MAX_UNSENT_BYTES = 128 * 2**20  # all clients together


class Unsent:
    """The bytes of answers handed to their stream but not yet written to its socket, by client."""

    def __init__(self):
        self.by_client: Counter[str] = Counter()
        self.total = 0

    def add(self, client: str, size: int) -> None:
        self.by_client[client] += size
        self.total += size
        if self.by_client[client] <= 0:
            del self.by_client[client]

    def source_over(self, client: str) -> str | None:
        """Whose unsent answers are over their cap (``clients.FROM_YOU`` or ``FROM_EVERYONE``), or None."""
        if self.by_client.get(client, 0) > MAX_UNSENT_PER_CLIENT:
            return clients.FROM_YOU
        return clients.FROM_EVERYONE if self.total > MAX_UNSENT_BYTES else None


class AnswerWriter:
    """One answer stream's messages, written to its socket in order by a task of its own, counted until written.

    Use ``send`` as the route's ASGI ``send``, then ``await finish()`` once the route has returned (the request is
    over only when its answer is written, or its connection lost), or ``await drop()`` where it failed.
    """

    def __init__(self, unsent: Unsent, client: str, send):
        self.unsent, self.client, self.socket_send = unsent, client, send
        self.queued: deque[dict] = deque()  # messages not yet written, the first maybe in part
        self.queued_bytes = 0  # the body bytes of ``queued`` still to write (counted in ``unsent``)
        self.more = asyncio.Event()  # set when a message is queued, or the route is over
        self.over = False
        self.task: asyncio.Task | None = None

    async def send(self, message: dict) -> None:
        """Queue ``message`` and return: its bytes count against the client until the writer has written them."""
        if self.task is not None and self.task.done():
            return  # the connection failed: as uvicorn does once a client has gone, nothing more is written
        size = len(message.get("body", b"")) if message["type"] == "http.response.body" else 0
        self.count(size)
        self.queued.append(message)
        self.more.set()
        if self.task is None:
            self.task = asyncio.create_task(self.write())

    def count(self, size: int) -> None:
        self.queued_bytes += size
        self.unsent.add(self.client, size)

    async def write(self) -> None:
        """Write the queued messages, a body ``ANSWER_CHUNK`` bytes at a time, until the route is over."""
        try:
            while self.queued or not self.over:
                if not self.queued:
                    self.more.clear()
                    await self.more.wait()
                    continue
                message = self.queued.popleft()
                if message["type"] != "http.response.body":
                    await self.socket_send(message)
                    continue
                body = message.get("body", b"")
                for start in range(0, max(len(body), 1), ANSWER_CHUNK):
                    chunk = body[start : start + ANSWER_CHUNK]
                    more = start + ANSWER_CHUNK < len(body) or message.get("more_body", False)
                    await self.socket_send({"type": "http.response.body", "body": chunk, "more_body": more})
                    self.count(-len(chunk))
        finally:  # written, the connection lost, or cancelled: nothing is held or counted past here
            self.queued.clear()
            self.count(-self.queued_bytes)

    async def finish(self) -> None:
        """Wait until everything queued is written (the route is over); cancelled meanwhile, drop it."""
        self.over = True
        self.more.set()
        if self.task is None:
            return
        try:
            await asyncio.shield(self.task)
        except asyncio.CancelledError:
            await self.drop()
            raise

    async def drop(self) -> None:
        """Stop writing and forget what is queued (the route failed or was cancelled)."""
        self.over = True
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task
