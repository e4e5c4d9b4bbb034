"""Admission by cost: one atomic step per job, tickets held while a job is queued, running (its thread too) or
unread, and answers nobody reads dropped. The object alone, then the server as shipped (a burst released by a
barrier, unread answers).
"""

import os

os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"

import asyncio
import inspect
import sys
import threading
import time
import types

import httpx
import pytest
import torch
from app_fixtures import serving

from transformer.explorer import runner
from transformer.explorer.page import api
from transformer.explorer.serving import admission, guard

pytestmark = [  # gradio's queue summarises its events with pandas after each one; pandas 3 warns
    pytest.mark.filterwarnings("ignore:'future.no_silent_downcasting' is deprecated"),
    pytest.mark.filterwarnings("ignore:The copy keyword is deprecated"),
]
BURST = 64


class FakeQueue:
    """What ``Admission.settle`` reads of Gradio's queue."""

    def __init__(self):
        self.event_ids_to_events, self.pending_event_ids_session, self.pending_messages_per_session = {}, {}, {}


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def released_together(count: int, work) -> list:
    """``work(i)`` on ``count`` threads released at once by a barrier; the answers in order."""
    barrier, answers = threading.Barrier(count), [None] * count

    def run(i):
        barrier.wait()
        answers[i] = work(i)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return answers


def test_costs_grow_with_the_view_and_the_text_and_a_light_call_always_fits():
    assert admission.job_cost("predict", 10_000) == admission.LIGHT_COST
    assert admission.job_cost("walkthrough", 10) < admission.job_cost("walkthrough", 10_000)
    assert admission.job_cost("attributions", 100) < admission.job_cost("faithfulness", 100)
    held = admission.Admission()
    while held.admit("a", admission.job_cost("walkthrough", 10)) is not None:
        pass
    assert held.held["a"] <= admission.CLIENT_BUDGET - admission.LIGHT_RESERVE
    lights = [held.admit("a", admission.LIGHT_COST) for _ in range(int(admission.LIGHT_RESERVE))]
    assert all(lights)  # the client's own light calls fit beside its heavy ones
    assert held.admit("b", admission.job_cost("walkthrough", 10)) is not None  # another client is not counted


def test_a_burst_released_together_admits_exactly_the_budget():
    held = admission.Admission(budget=4, light_reserve=0)
    tickets = released_together(BURST, lambda i: held.admit("a", 1.0))
    assert sum(ticket is not None for ticket in tickets) == 4 and held.held["a"] == 4
    for ticket in filter(None, tickets):
        held.release(ticket)
        held.release(ticket)  # twice: counted once
    assert held.held == {} and held.tickets == {}


class YieldingCounts(dict):
    """``Admission.held`` that lets other threads run each time it is read, between a check and the count it
    guards: what a thread switch there does, made certain (without the lock, every thread reads 0 and all pass)."""

    def get(self, key, default=None):
        time.sleep(0.001)
        return super().get(key, default)


def test_admit_counts_and_checks_in_one_step_under_its_lock():
    """Kills ``admit`` without its lock: a burst released by a barrier, thread switches as often as the interpreter
    allows and a read of the counts that yields, still admits exactly the budget."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        held = admission.Admission(budget=4, light_reserve=0)
        held.held = YieldingCounts()
        tickets = released_together(16, lambda i: held.admit("a", 1.0))
    finally:
        sys.setswitchinterval(interval)
    assert sum(ticket is not None for ticket in tickets) == 4 and held.held["a"] == 4


LIGHT_ROWS = 3  # what ``LIGHT_COST`` pays for: the text's analysis and two passes of one sentence (/layer_readout's)
SENTENCES = {"text": "a wonderful film , the acting was dull", "text_a": "a wonderful film", "text_b": "a dull film"}


def rows_run(model, fn) -> int:
    """The sentences (batch rows) one call of the endpoint ``fn``, with its defaults, runs through ``model``; a call
    that fails (a corpus view without its data folder, Compare without a second model) counts what it ran."""
    rows = []

    def count(module, args, kwargs):
        first = next((value for value in (*args, *kwargs.values()) if isinstance(value, torch.Tensor)), None)
        rows.append(1 if first is None else first.size(0))

    handle = model.register_forward_pre_hook(count, with_kwargs=True)
    try:
        fn(**{name: text for name, text in SENTENCES.items() if name in inspect.signature(fn).parameters})
    except Exception:
        pass
    finally:
        handle.remove()
    return sum(rows)


def heavy_without_a_cost(model, endpoints: dict) -> list[str]:
    """The endpoints of ``endpoints`` ({name: function}) that run more than ``LIGHT_ROWS`` rows but have no weight in
    ``admission.HEAVY_WEIGHTS``: the guard would admit them as light, on the light lane."""
    unweighted = {name: fn for name, fn in endpoints.items() if name not in admission.HEAVY_WEIGHTS}
    return sorted(name for name, fn in unweighted.items() if rows_run(model, fn) > LIGHT_ROWS)


def test_every_endpoint_heavier_than_one_pass_has_a_weight(app):
    """A new view's endpoint that runs many passes fails here, by name, until ``HEAVY_WEIGHTS`` has it."""
    model = runner.get_model()[0].model
    assert heavy_without_a_cost(model, api.endpoints(app.REGISTRY)) == []

    def five_passes(text: str) -> dict:
        return {"tokens": [runner.run_model(text).tokens for _ in range(5)]}

    def one_pass(text: str) -> dict:
        return {"tokens": runner.run_model(text).tokens}

    assert heavy_without_a_cost(model, {"five_passes": five_passes, "one_pass": one_pass}) == ["five_passes"]


def test_a_ticket_counts_while_its_job_is_queued_or_unread_and_an_unread_answer_is_dropped():
    clock, queue = Clock(), FakeQueue()
    held = admission.Admission(budget=2, light_reserve=0, unread_seconds=10, clock=clock)
    first, read = held.admit("a", 1.0), held.admit("a", 1.0)
    assert held.admit("a", 1.0, queue) is None  # admitted but not yet queued: still counted
    for ticket, event in ((first, "e1"), (read, "e2")):
        held.bind(ticket, event, "s")
        queue.event_ids_to_events[event] = object()
    queue.pending_event_ids_session["s"] = {"e1", "e2"}
    queue.pending_messages_per_session["s"] = messages = asyncio.Queue()
    for event in ("e1", "e1"):  # e2's answer will have been read
        messages.put_nowait(types.SimpleNamespace(event_id=event))
    assert held.settle(queue) == 0  # both running
    queue.event_ids_to_events.clear()  # both finished ...
    queue.pending_event_ids_session["s"].discard("e2")  # ... and e2's answer was read
    assert held.settle(queue) == 1 and held.held["a"] == 1.0
    clock.now = 9.9
    assert held.settle(queue) == 0  # e1 unread, not yet for long: it counts
    clock.now = 10.0
    assert held.settle(queue) == 1 and held.held == {}
    assert "s" not in queue.pending_messages_per_session  # the unread answer is gone with its session's queue


def test_a_cancelled_jobs_ticket_is_held_until_its_thread_returns():
    """Gradio ends a cancelled event at once (it leaves the queue) while its thread runs on: the ticket still counts
    until ``busy`` says the thread has returned."""
    queue, threads = FakeQueue(), {"e1"}
    held = admission.Admission(budget=1, light_reserve=0, busy=lambda event_id: event_id in threads)
    held.bind(held.admit("a", 1.0), "e1", "s")  # cancelled: neither in the queue nor unread
    assert held.settle(queue) == 0 and held.admit("a", 1.0, queue) is None
    threads.clear()  # its thread returned
    assert held.settle(queue) == 1 and held.held == {}


# The server as shipped


@pytest.fixture(scope="module")
def guarded(app):
    with serving(app.demo, **app.launch_settings()) as url:
        yield url.rstrip("/")


@pytest.fixture
def held_model(monkeypatch):
    """Every model call waits until the returned event is set."""
    release, analyze = threading.Event(), runner.run_model

    def slow_model(text, **options):
        release.wait(30)
        return analyze(text, **options)

    monkeypatch.setattr(runner, "run_model", slow_model)
    yield release
    release.set()


def admitted(app) -> admission.Admission:
    return getattr(app.demo.server_app.state, guard.ADMISSION)


def post(url: str, path: str, body: dict, source: str = "127.0.0.1", headers: dict | None = None) -> httpx.Response:
    transport = httpx.HTTPTransport(local_address=source)
    with httpx.Client(transport=transport, timeout=60, trust_env=False) as client:
        return client.post(f"{url}{path}", json=body, headers=headers)


def wait_until_free(app, client: str) -> None:
    deadline = time.monotonic() + 30
    while admitted(app).held.get(client) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not admitted(app).held.get(client)


@pytest.mark.served
def test_a_burst_of_heavy_jobs_from_one_address_released_together_admits_at_most_its_budget(
    app, guarded, held_model, monkeypatch
):
    cost = admission.job_cost("walkthrough", len("a burst"))
    cap = int((admission.CLIENT_BUDGET - admission.LIGHT_RESERVE) // cost)
    body = {"data": ["a burst"]}
    codes = released_together(BURST, lambda i: post(guarded, "/gradio_api/call/walkthrough", body).status_code)
    assert codes.count(200) == cap and codes.count(429) == BURST - cap
    victim = post(guarded, "/gradio_api/call/predict", {"data": ["mine"]}, source="127.0.0.2")
    assert victim.status_code == 200
    monkeypatch.setattr(admitted(app), "unread_seconds", 0.5)  # nobody reads these answers
    held_model.set()
    wait_until_free(app, "127.0.0.1")


@pytest.mark.served
def test_answers_nobody_reads_count_until_dropped_then_are_gone(app, guarded, monkeypatch):
    source = "127.0.0.3"
    events = []
    for i in range(admission.CLIENT_BUDGET.__ceil__() + 1):
        answer = post(guarded, "/gradio_api/call/predict", {"data": [f"unread {i}"]}, source=source)
        events.append(answer.json().get("event_id") if answer.status_code == 200 else answer.status_code)
    assert events[-1] == 429  # the unread answers fill the budget, though every job has finished
    queue = app.demo._queue
    assert any(event in ids for ids in queue.pending_event_ids_session.values() for event in events[:-1])
    monkeypatch.setattr(admitted(app), "unread_seconds", 0.5)  # 10 s as shipped
    wait_until_free(app, source)
    assert not any(event in ids for ids in queue.pending_event_ids_session.values() for event in events[:-1])
    with httpx.Client(timeout=30, trust_env=False) as client:
        gone = client.get(f"{guarded}/gradio_api/call/predict/{events[0]}")
    assert gone.status_code == 404 and "dropped" in gone.json()["detail"]
    assert post(guarded, "/gradio_api/call/predict", {"data": ["again"]}, source=source).status_code == 200
