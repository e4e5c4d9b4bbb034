"""Answers on their way to a slow reader: the route lets go at once, the bytes count against the client until
written, in order, and nothing stays counted once the request is over, however it ends."""

import asyncio
import types

import pytest

from transformer.explorer.serving import guard, unsent

CLIENT = "10.9.9.9"
BODY = b"x" * (4 * unsent.ANSWER_CHUNK + 1)


def stream_scope() -> dict:
    """A GET of a ``/call`` event's answers; the queue is a stand-in (``known_stream`` is patched to say yes)."""
    app = types.SimpleNamespace(get_blocks=lambda: types.SimpleNamespace(_queue=None))
    return {"type": "http", "method": "GET", "path": "/gradio_api/call/attention/e1", "headers": [],
            "client": (CLIENT, 1234), "query_string": b"", "app": app}  # fmt: skip


def post_scope() -> dict:
    app = types.SimpleNamespace(get_blocks=lambda: pytest.fail("the job went on to admission"))
    return {"type": "http", "method": "POST", "path": "/gradio_api/queue/join", "headers": [],
            "client": (CLIENT, 1234), "query_string": b"", "app": app}  # fmt: skip


class StalledSocket:
    """A socket whose reader takes the first write, then nothing until ``resume``; it keeps what it was sent."""

    def __init__(self):
        self.written, self.reading = [], asyncio.Event()

    async def send(self, message):
        if len(self.written) > 1:  # the answer's head, then its first chunk
            await self.reading.wait()
        self.written.append(message)

    def resume(self):
        self.reading.set()


def route_returned_flag():
    """An answer route as Gradio's stream is one: its head, one big body, then the end; ``done`` once it returns
    (from then on, what it built the answer from is no longer held)."""
    done = asyncio.Event()

    async def route(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": BODY, "more_body": True})
        await send({"type": "http.response.body", "body": b"end", "more_body": False})
        done.set()

    return route, done


async def until(condition):
    while not condition():
        await asyncio.sleep(0)


def test_the_route_lets_go_at_once_and_the_bytes_count_against_the_client_until_written(monkeypatch):
    monkeypatch.setattr(guard, "known_stream", lambda *args: True)
    monkeypatch.setattr(unsent, "MAX_UNSENT_PER_CLIENT", unsent.ANSWER_CHUNK)
    route, done = route_returned_flag()
    keeper, socket = guard.Guard(route), StalledSocket()

    async def scenario():
        request = asyncio.create_task(keeper(stream_scope(), None, socket.send))
        await asyncio.wait_for(done.wait(), 5)  # the reader has taken one chunk and stopped
        assert len(socket.written) == 2 and not request.done()
        assert keeper.unsent.by_client[CLIENT] == len(BODY) - unsent.ANSWER_CHUNK + len(b"end")
        refused = []

        async def record(message):
            refused.append(message)

        await keeper(post_scope(), None, record)  # over its cap: told to retry before admission
        assert refused[0]["status"] == 429 and b"answers still being sent from your address" in refused[1]["body"]
        socket.resume()
        await asyncio.wait_for(request, 5)

    asyncio.run(scenario())
    bodies = [m["body"] for m in socket.written[1:]]
    assert [len(b) for b in bodies] == [unsent.ANSWER_CHUNK] * 4 + [1, 3] and b"".join(bodies) == BODY + b"end"
    assert [m["more_body"] for m in socket.written[1:]] == [True] * 5 + [False]  # in order, the end last
    assert keeper.unsent.total == 0 and not keeper.unsent.by_client


@pytest.mark.parametrize("phase", ["before the first write", "with the reader stalled"])
def test_a_request_cancelled_at_any_phase_leaves_nothing_counted_or_running(monkeypatch, phase):
    monkeypatch.setattr(guard, "known_stream", lambda *args: True)
    route, done = route_returned_flag()
    keeper, socket = guard.Guard(route), StalledSocket()

    async def scenario():
        request = asyncio.create_task(keeper(stream_scope(), None, socket.send))
        if phase == "with the reader stalled":
            await asyncio.wait_for(done.wait(), 5)
            await until(lambda: len(socket.written) == 2)
        else:
            await asyncio.sleep(0)
        request.cancel()
        with pytest.raises(asyncio.CancelledError):
            await request
        others = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        assert not others  # the writer's task is gone with it

    asyncio.run(scenario())
    assert keeper.unsent.total == 0 and not keeper.unsent.by_client


def test_a_failed_write_drops_the_rest_and_later_messages_are_not_written():
    counts, written = unsent.Unsent(), []

    async def failing(message):
        if written:
            raise OSError("connection reset")
        written.append(message)

    async def scenario():
        writer = unsent.AnswerWriter(counts, CLIENT, failing)
        await writer.send({"type": "http.response.body", "body": BODY, "more_body": True})
        await until(lambda: writer.task.done())
        await writer.send({"type": "http.response.body", "body": b"late", "more_body": False})
        with pytest.raises(OSError):
            await writer.finish()

    asyncio.run(scenario())
    assert len(written) == 1 and counts.total == 0 and not counts.by_client
