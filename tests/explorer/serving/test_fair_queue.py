"""Gradio's queue made fair (transformer.explorer.serving.fair_queue.make_fair): each push reorders the waiting jobs."""

import asyncio
import types

from transformer.explorer.serving import clients, fair_queue


def job(client: str, text: str) -> types.SimpleNamespace:
    """A queued event of ``client`` calling /attributions on ``text`` (a longer text costs more)."""
    request = types.SimpleNamespace(scope={clients.SCOPE_CLIENT: client}, headers={})
    fn = types.SimpleNamespace(queue=True, api_visibility="public", api_name="attributions")
    return types.SimpleNamespace(request=request, fn=fn, data=types.SimpleNamespace(data=[text]))


def fake_queue(waiting: list) -> types.SimpleNamespace:
    queue = types.SimpleNamespace(
        active_jobs=[], event_queue_per_concurrency_id={"work": types.SimpleNamespace(queue=[])}
    )

    async def push(event):
        queue.event_queue_per_concurrency_id["work"].queue.append(event)

    queue.push = push
    for event in waiting:
        queue.event_queue_per_concurrency_id["work"].queue.append(event)
    return queue


def test_two_waiting_jobs_are_put_in_their_fair_order():
    heavy, light = job("a", "x" * 10_000), job("b", "short")
    queue = fake_queue([])
    fair_queue.make_fair(queue)
    asyncio.run(queue.push(heavy))
    asyncio.run(queue.push(light))  # two jobs waiting: the cheaper one goes first
    assert queue.event_queue_per_concurrency_id["work"].queue == [light, heavy]


def test_a_client_alone_keeps_its_order():
    first, second = job("a", "x" * 10_000), job("a", "short")
    queue = fake_queue([first])
    fair_queue.make_fair(queue)
    asyncio.run(queue.push(second))
    assert queue.event_queue_per_concurrency_id["work"].queue == [first, second]
