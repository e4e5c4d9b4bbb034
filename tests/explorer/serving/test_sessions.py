"""What the server keeps per visitor: sessions released when their page closes or goes idle, shared links that
keep the inputs only (capped, oldest first), Gradio's deep-link route writing nothing, uploads refused."""

import asyncio
import json
import time
import types
from pathlib import Path

import gradio as gr
import httpx
import pytest
from fuzz_helpers import QueueCaller

from transformer.explorer.page import launch as server
from transformer.explorer.page.address import share_link
from transformer.explorer.page.restore import restore_controls, restore_view
from transformer.explorer.registry import Registry
from transformer.explorer.serving import clients, link_store, sessions
from transformer.explorer.views import VIEWS

REGISTRY = Registry(VIEWS)  # the page's views, as app.py registers them


TEXT = "a charming and often affecting journey ."


def analyzed_session(app, url) -> QueueCaller:
    """A page session that has read TEXT (its gr.State holds the analysis), as a browser's first load does."""
    caller = QueueCaller(url)
    index, fn = next((i, fn) for i, fn in app.demo.fns.items() if fn.name == "restore_page")
    assert caller.call(index, [block.value for block in fn.inputs], params={"text": TEXT}).success
    return caller


def holds_analysis(app, session_hash: str) -> bool:
    session = app.demo.state_holder.session_data.get(session_hash)
    return session is not None and any(value is not None for _, value, _ in session.state_components)


def wait_until(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


@pytest.mark.served
def test_a_closed_page_releases_its_session_and_the_memory_it_freed(app, url, monkeypatch):
    returned = []
    monkeypatch.setattr(sessions, "return_freed_memory", lambda: returned.append(True))  # read by the running sweep
    caller = analyzed_session(app, url)
    other = analyzed_session(app, url)
    try:
        assert holds_analysis(app, caller.session_hash)
        heartbeat = f"{url}gradio_api/heartbeat/{caller.session_hash}"
        with httpx.stream("GET", heartbeat, trust_env=False, timeout=10) as stream:  # the open page's connection
            next(stream.iter_lines())
        # closing the connection is closing the tab: Gradio runs the unload event, which drops the session whole
        assert wait_until(lambda: caller.session_hash not in app.demo.state_holder.session_data, 10)
        assert holds_analysis(app, other.session_hash)  # the page still open keeps its own
        assert wait_until(lambda: returned, 3 * sessions.SWEEP_SECONDS)  # the next sweep hands the heap back
    finally:
        caller.close()
        other.close()


@pytest.mark.served
def test_a_session_keeps_its_state_but_no_figure_sent(app, url):
    caller = analyzed_session(app, url)  # the page load drew the Attention heatmap and sent it
    try:
        session = app.demo.state_holder.session_data[caller.session_hash]
        assert isinstance(session, sessions.LeanSession)
        assert holds_analysis(app, caller.session_hash)
        assert list(session.components) == []  # Gradio's copy of each value sent, the heatmap's JSON included
    finally:
        caller.close()


@pytest.mark.served
def test_an_idle_session_expires(app, url, monkeypatch):
    caller = analyzed_session(app, url)
    try:
        assert holds_analysis(app, caller.session_hash)
        monkeypatch.setattr(sessions, "IDLE_SECONDS", 0)  # read by the running sweep at its next round
        assert wait_until(lambda: caller.session_hash not in app.demo.state_holder.session_data, 3 * 5 + 5)
    finally:
        caller.close()


@pytest.mark.served
def test_drop_idle_drops_only_sessions_idle_for_longer_than_the_limit(app, url):
    idle, busy = analyzed_session(app, url), analyzed_session(app, url)
    holder = app.demo.state_holder
    try:
        holder.time_last_used[idle.session_hash] -= sessions.datetime.timedelta(hours=2)
        sessions.drop_idle(holder, 3600)
        assert idle.session_hash not in holder.session_data and idle.session_hash not in holder.time_last_used
        assert holds_analysis(app, busy.session_hash)
    finally:
        idle.close()
        busy.close()


@pytest.mark.served
def test_the_launch_settings_bound_sessions_and_uploads(app, url):
    assert app.demo.state_session_capacity == sessions.SESSION_CAPACITY < 10_000  # Gradio's default
    assert app.demo.max_file_size == 1024
    assert app.demo.delete_cache == server.DELETE_CACHE


@pytest.mark.served
def test_gradios_deep_link_route_writes_nothing(app, url):
    caller = analyzed_session(app, url)
    folder = Path(app.demo.server_app.uploaded_file_dir) / "deep_links"
    before = set(folder.iterdir()) if folder.exists() else set()
    try:
        for _ in range(3):
            answer = httpx.get(
                f"{url}gradio_api/deep_link", params={"session_hash": caller.session_hash}, trust_env=False
            )
            assert answer.status_code == 200 and answer.json() == ""
    finally:
        caller.close()
    assert (set(folder.iterdir()) if folder.exists() else set()) == before


def page_values(**changed) -> list:
    """The values the page sends to ``share_link`` (``REGISTRY.url_params`` order): its defaults, some ``changed``."""
    defaults = {"text": TEXT, "view": "attention", "layer": 1, "head": "1", "scale": "global", "leave_out": []}
    values = defaults | changed
    return [values.get(name) for name in REGISTRY.url_params]


@pytest.fixture
def link_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(link_store, "LINK_DIR", tmp_path / "links")
    return tmp_path / "links"


def test_a_shared_link_keeps_only_the_views_inputs(app, link_dir):
    key = share_link(
        REGISTRY, None, *page_values(view="knockout", heads_off="L1 H2", layer=2, head="mean", leave_out=["special"])
    )
    (stored,) = link_dir.iterdir()
    kept = json.loads(stored.read_text())
    assert kept == {
        "text": TEXT, "view": "knockout", "layer": "2", "head": "mean", "scale": "global",
        "leave_out": "special", "heads_off": "L1 H2",
    }  # fmt: skip
    assert stored.stat().st_size < 300 and link_store.load_link(key) == kept
    assert share_link(
        REGISTRY, None, *page_values(view="knockout", heads_off="L1 H2", layer=2, head="mean", leave_out=["special"])
    )
    assert len(list(link_dir.iterdir())) == 1  # the same inputs make the same link


def test_a_restored_link_reproduces_the_view(app, link_dir):
    long_text = " ".join([TEXT] * 60)  # far longer than an address keeps
    key = share_link(REGISTRY, None, *page_values(text=long_text, view="rollout", layer=2, head="mean"))
    defaults = ["", 1, "1", None]
    restored = restore_view(REGISTRY, *defaults, request=gr.Request(query_params={"link": key}))
    direct = restore_view(
        REGISTRY, *defaults, request=gr.Request(query_params={"text": long_text, "layer": "2", "head": "mean"})
    )
    assert restored[:3] == (long_text, 2, "mean")
    assert restored[5].tokens == direct[5].tokens and restored[5].probabilities == direct[5].probabilities
    assert restore_controls(REGISTRY, restored[5], gr.Request(query_params={"link": key}))["view"] == "rollout"
    unknown = restore_view(REGISTRY, *defaults, request=gr.Request(query_params={"link": "A" * 16}))
    assert unknown[0] == ""  # an unknown or pruned link restores nothing


def test_the_link_store_never_exceeds_its_cap_and_drops_the_oldest(app, link_dir, monkeypatch):
    monkeypatch.setattr(link_store, "MAX_LINKS", 5)
    keys = []
    for i in range(12):
        keys.append(share_link(REGISTRY, None, *page_values(text=f"{TEXT} {i}")))
        assert len(list(link_dir.iterdir())) <= 5
        time.sleep(0.002)  # distinct modification times on coarse clocks
    assert [link_store.load_link(key) is not None for key in keys] == [False] * 7 + [True] * 5
    assert link_store.load_link(keys[-1])["text"] == f"{TEXT} 11"


def test_a_link_over_its_size_limit_is_refused_and_not_written(app, link_dir):
    texts = ["é" * 10_000] * 3  # three texts of the longest kind still fit...
    share_link(REGISTRY, None, *page_values(text=texts[0], view="compare", compare=texts[1]))
    with pytest.raises(gr.Error, match="at most"):  # ...but not a crafted value past the limit
        share_link(REGISTRY, None, *page_values(text="x" * (link_store.MAX_LINK_BYTES + 1)))
    assert len(list(link_dir.iterdir())) == 1
    assert all(path.stat().st_size <= link_store.MAX_LINK_BYTES for path in link_dir.iterdir())


def test_the_sweep_hands_memory_back_after_jobs_ran_and_only_once_none_runs():
    queue = types.SimpleNamespace(events_recorded=0, get_active_worker_count=lambda: 0)
    holder = types.SimpleNamespace(dropped=0, blocks=types.SimpleNamespace(_queue=queue))
    before = sessions.work_done(holder)
    queue.events_recorded, queue.get_active_worker_count = 5, lambda: 1
    assert sessions.work_done(holder) is None  # a job runs: its memory is in use, nothing to hand back
    queue.get_active_worker_count = lambda: 0
    assert sessions.work_done(holder) not in (None, before)  # jobs ran and none runs: the sweep trims


def test_a_new_api_session_in_a_full_holder_evicts_another_never_itself():
    with gr.Blocks() as blocks:
        gr.State()
    holder = sessions.LeanSessions()
    holder.set_blocks(blocks)
    holder.capacity = 2

    async def page_request(key: str):
        clients.CURRENT.set(("10.0.0.1", asyncio.current_task()))
        return holder[key]

    for key in ("page 1", "page 2"):
        asyncio.run(page_request(key))
    made = holder["api"]  # a queue worker's session for an API call: no client request, so the first to go ...
    assert holder.session_data["api"] is made  # ... but not before it is used
    assert list(holder.session_data) == ["page 2", "api"]
