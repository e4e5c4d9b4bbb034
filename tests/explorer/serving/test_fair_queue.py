"""Gradio's queue made fair (transformer.explorer.serving.fair_queue.make_fair): each push reorders the waiting jobs,
by cost and by how long each has waited."""

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


def test_a_heavy_job_goes_first_within_seconds_while_lighter_ones_keep_arriving():
    """On a fake clock: a long text's job (cost 4) waits while a new client's short one (cost 2) arrives every second
    and one worker takes the first waiting job each second. Aged by ``AGE_CREDIT``, the heavy job outranks the
    newcomers after (4 - 2) / 1 s; ranked by cost alone it would wait for as long as they come."""
    now = [0.0]
    heavy = job("heavy", "x" * 10_000)
    queue = fake_queue([])
    fair_queue.make_fair(queue, clock=lambda: now[0])
    asyncio.run(queue.push(heavy))
    waiting, taken = queue.event_queue_per_concurrency_id["work"].queue, []
    for second in range(1, 30):
        now[0] = float(second)
        asyncio.run(queue.push(job(f"light-{second}", "short")))
        taken.append(waiting.pop(0))  # the worker's next job
        if taken[-1] is heavy:
            break
    assert taken[-1] is heavy and now[0] <= 4.0
