"""A public server one client cannot take down: client identity, rate limits, closed routes, private events,
jobs and sessions per client, and Gradio's input errors kept out of the log.

The server here has the limits as shipped; two clients are told apart by their loopback source address
(127.0.0.1 and 127.0.0.2), as ``make attack`` does.
"""

import os

os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"

import asyncio
import contextlib
import functools
import re
import socket
import threading
import time
import types
import uuid
from pathlib import Path
from urllib.parse import urlsplit

import gradio as gr
import httpx
import pytest
import torch
from app_fixtures import serving
from uvicorn.protocols.http.flow_control import FlowControl

from transformer.explorer import runner
from transformer.explorer.page import api
from transformer.explorer.page import launch as server
from transformer.explorer.page.address import share_link
from transformer.explorer.registry import Registry
from transformer.explorer.serving import admission, clients, fair_queue, gradio_seam, guard, link_store, sessions
from transformer.explorer.views import VIEWS

REGISTRY = Registry(VIEWS)  # the page's views, as app.py registers them


pytestmark = [  # gradio's queue summarises its events with pandas after each one; pandas 3 warns
    pytest.mark.filterwarnings("ignore:'future.no_silent_downcasting' is deprecated"),
    pytest.mark.filterwarnings("ignore:The copy keyword is deprecated"),
]
OTHER = "127.0.0.2"  # the second client's source address


def fake_request(host: str | None, forwarded: str | None = None):
    headers = {"x-forwarded-for": forwarded} if forwarded else {}
    return types.SimpleNamespace(client=types.SimpleNamespace(host=host) if host else None, headers=headers)


@pytest.fixture(scope="module")
def guarded(app):
    """The app served as shipped (launch settings and limits unchanged)."""
    with serving(app.demo, **app.launch_settings()) as url:
        yield url.rstrip("/")


def http(source: str = "127.0.0.1") -> httpx.Client:
    return httpx.Client(transport=httpx.HTTPTransport(local_address=source), timeout=30, trust_env=False)


# Who is the client


def test_a_direct_connection_is_its_address_and_a_forwarded_header_is_ignored_off_a_space(monkeypatch):
    monkeypatch.delenv("SYSTEM", raising=False)
    monkeypatch.delenv(clients.TRUSTED_PROXY_HOPS, raising=False)
    assert clients.trusted_proxy_hops() == 0
    assert clients.client_address(fake_request("10.0.0.5", forwarded="1.2.3.4")) == "10.0.0.5"
    assert clients.client_address(fake_request(None)) == clients.UNKNOWN


def test_on_a_space_the_client_is_the_hop_its_proxy_appended_whatever_the_sender_wrote(monkeypatch):
    monkeypatch.setenv("SYSTEM", "spaces")
    monkeypatch.delenv(clients.TRUSTED_PROXY_HOPS, raising=False)
    assert clients.on_space() and clients.trusted_proxy_hops() == clients.SPACE_PROXY_HOPS == 1
    for spoofed in ("6.6.6.6", "7.7.7.7, 8.8.8.8", ""):  # whatever the sender put on the left
        forwarded = ", ".join(filter(None, [spoofed, "1.2.3.4"]))  # the proxy appends who connected to it
        assert clients.client_address(fake_request("10.0.0.5", forwarded=forwarded)) == "1.2.3.4"
    assert clients.client_address(fake_request("10.0.0.5")) == "10.0.0.5"  # no header: the connection
    assert clients.client_address(fake_request("10.0.0.5", "1.2.3.4"), hops=0) == "10.0.0.5"


def test_the_trusted_hops_are_a_setting_counted_from_the_right(monkeypatch):
    monkeypatch.delenv("SYSTEM", raising=False)
    monkeypatch.setenv(clients.TRUSTED_PROXY_HOPS, "2")
    assert clients.trusted_proxy_hops() == 2
    assert clients.client_address(fake_request("10.0.0.5", "6.6.6.6, 1.2.3.4, 10.1.1.1")) == "1.2.3.4"
    assert clients.client_address(fake_request("10.0.0.5", "10.1.1.1")) == "10.0.0.5"  # fewer hops than trusted
    assert clients.forwarded_client(" a , b ,c ", 1) == "c" and clients.forwarded_client("a, b", 3) is None


# Rate limits


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_a_token_bucket_allows_its_burst_then_one_per_interval_per_client():
    clock = Clock()
    limit = clients.RateLimit(per_second=0.5, burst=3, clock=clock)
    assert [limit.take("a") for _ in range(3)] == [0.0] * 3
    assert limit.take("a") == pytest.approx(2.0)  # refused: the next token in 2 s
    assert limit.take("b") == 0.0  # another client has its own bucket
    clock.now = 2.0
    assert limit.take("a") == 0.0 and limit.take("a") > 0


def test_a_token_bucket_remembers_a_bounded_number_of_clients():
    limit = clients.RateLimit(per_second=1, burst=1, max_clients=10, clock=Clock())
    for i in range(1000):
        limit.take(f"client {i}")
    assert len(limit._buckets) == 10


def test_a_client_makes_a_burst_of_links_then_is_told_when_to_retry(monkeypatch, tmp_path):
    monkeypatch.setattr(link_store, "LINK_DIR", tmp_path)
    monkeypatch.setattr(link_store, "NEW_LINKS", clients.RateLimit(per_second=0.2, burst=link_store.NEW_LINKS_BURST))
    values = dict.fromkeys(REGISTRY.url_params, "")
    attacker, victim = fake_request("127.0.0.3"), fake_request(OTHER)
    for i in range(link_store.NEW_LINKS_BURST):
        share_link(REGISTRY, attacker, *(values | {"text": f"link {i}", "view": "attention"}).values())
    with pytest.raises(gr.Error, match=r"Too many shared links from your address; retry in \d+ s"):
        share_link(REGISTRY, attacker, *(values | {"text": "one more", "view": "attention"}).values())
    assert link_store.load_link(
        share_link(REGISTRY, victim, *(values | {"text": "mine", "view": "attention"}).values())
    )
    assert len(list(tmp_path.iterdir())) == link_store.NEW_LINKS_BURST + 1


# Sessions


@pytest.fixture
def holder():
    with gr.Blocks() as blocks:
        gr.State()
    made = sessions.LeanSessions()
    made.set_blocks(blocks)
    return made


def open_session(holder, key: str, client: str | None):
    """``holder[key]`` as the request of ``client`` makes it, in its own task (as the server's routes do)."""

    async def in_request():
        clients.CURRENT.set((client, asyncio.current_task()))
        return holder[key]

    return asyncio.run(in_request())


def test_a_flood_of_new_sessions_evicts_only_sessions_that_never_came_back(holder):
    holder.capacity = 50
    holder.all_new_sessions = clients.RateLimit(per_second=1, burst=10**6)  # this test is about eviction
    open_session(holder, "victim", OTHER)
    open_session(holder, "victim", OTHER)  # it came back: a page in use
    for i in range(500):  # many addresses, one request each
        open_session(holder, f"flood {i}", f"10.0.{i // 250}.{i % 250}")
    assert "victim" in holder.session_data and len(holder.session_data) == 50


def test_all_addresses_together_open_sessions_at_a_bounded_rate(holder):
    holder.all_new_sessions = clients.RateLimit(per_second=5, burst=sessions.ALL_NEW_SESSIONS_BURST, clock=Clock())
    refused = 0
    for i in range(64 * 30):  # 64 addresses, 30 sessions each: within each one's own burst
        try:
            open_session(holder, f"flood {i}", f"10.1.{i % 64}.1")
        except sessions.TooManySessions as refusal:
            assert clients.FROM_EVERYONE in refusal.detail  # not the address's own limit
            refused += 1
    assert len(holder.session_data) == sessions.ALL_NEW_SESSIONS_BURST and refused == 64 * 30 - len(holder.session_data)
    assert holder.new_sessions.take("10.1.0.1") == 0.0  # a refusal spent none of the address's own tokens


def test_a_link_opened_recently_outlives_a_flood_of_fresh_links_from_many_addresses(monkeypatch, tmp_path):
    monkeypatch.setattr(link_store, "LINK_DIR", tmp_path)
    monkeypatch.setattr(link_store, "MAX_LINKS", 100)
    monkeypatch.setattr(link_store, "OPENED", type(link_store.OPENED)())
    monkeypatch.setattr(link_store, "ALL_NEW_LINKS", clients.RateLimit(per_second=1, burst=10**6))  # pruning here
    values = dict.fromkeys(REGISTRY.url_params, "")
    mine = share_link(REGISTRY, fake_request(OTHER), *(values | {"text": "mine", "view": "attention"}).values())
    time.sleep(0.01)
    assert link_store.load_link(mine)  # opened: someone followed it
    for i in range(64 * link_store.NEW_LINKS_BURST):
        share_link(
            REGISTRY, fake_request(f"10.2.{i % 64}.1"), *(values | {"text": f"flood {i}", "view": "attention"}).values()
        )
    assert link_store.load_link(mine) == {"text": "mine", "view": "attention"}
    assert len(list(tmp_path.iterdir())) == 100


def test_all_addresses_together_make_links_at_a_bounded_rate(monkeypatch, tmp_path):
    monkeypatch.setattr(link_store, "LINK_DIR", tmp_path)
    monkeypatch.setattr(link_store, "ALL_NEW_LINKS", clients.RateLimit(per_second=1, burst=50, clock=Clock()))
    values, made = dict.fromkeys(REGISTRY.url_params, ""), 0
    for i in range(64 * 5):
        try:
            share_link(
                REGISTRY, fake_request(f"10.3.{i % 64}.1"), *(values | {"text": f"flood {i}", "view": "x"}).values()
            )
            made += 1
        except gr.Error as refusal:  # the cap of everyone's links, not the address's own
            assert "Too many shared links from all addresses together; retry in" in str(refusal)
    assert made == 50


def test_sessions_an_api_call_made_go_before_a_page_opened_once(holder):
    holder.capacity = 3
    open_session(holder, "page", OTHER)  # the oldest, used by one request
    made_by_workers = [holder[key] for key in ("api 1", "api 2")]  # made outside a request: no client
    open_session(holder, "new page", "127.0.0.3")
    assert made_by_workers[1] is holder.session_data["api 2"]
    assert list(holder.session_data) == ["page", "api 2", "new page"]


def test_one_client_holds_at_most_its_share_and_is_rate_limited(holder):
    opened = 0
    with pytest.raises(sessions.TooManySessions) as refused:
        for i in range(10_000):
            open_session(holder, f"s{i}", "127.0.0.3")
            opened += 1
    assert refused.value.status_code == 429 and "retry in" in refused.value.detail
    assert opened == sessions.NEW_SESSIONS_BURST
    assert len(holder.owned["127.0.0.3"]) == min(opened, sessions.SESSIONS_PER_CLIENT)
    open_session(holder, "victim", OTHER)  # another address is not limited by it
    assert sessions.drop_session(holder, "victim") and OTHER not in holder.owned


def test_past_its_share_a_client_replaces_its_own_oldest_session(holder, monkeypatch):
    monkeypatch.setattr(sessions, "SESSIONS_PER_CLIENT", 3)
    for key in "abcd":
        open_session(holder, key, "127.0.0.3")
    open_session(holder, "victim", OTHER)
    assert list(holder.session_data) == ["b", "c", "d", "victim"]


@pytest.mark.served
def test_a_session_flood_through_the_server_is_refused_and_the_victims_session_survives(app, guarded):
    cheap = next(i for i, fn in app.demo.fns.items() if not fn.queue)  # any event: the session comes first
    with http(OTHER) as victim:
        victim.post(f"{guarded}/gradio_api/run/predict", json={"data": [], "fn_index": cheap, "session_hash": "v1"})
    codes = []
    with http() as attacker:
        for _ in range(200):
            body = {"data": [], "fn_index": cheap, "session_hash": uuid.uuid4().hex}
            codes.append(attacker.post(f"{guarded}/gradio_api/run/predict", json=body).status_code)
    assert codes.count(429) >= 200 - sessions.NEW_SESSIONS_BURST - 5  # a few tokens come back meanwhile
    assert "v1" in app.demo.state_holder.session_data
    assert len(app.demo.state_holder.owned["127.0.0.1"]) <= sessions.SESSIONS_PER_CLIENT


def queued(client: str):
    return types.SimpleNamespace(request=fake_request(client))


def test_fair_order_puts_each_clients_kth_job_behind_everyones_earlier_ones():
    a1, a2, a3, b1, c1, b2 = (queued(client) for client in "aaabcb")
    running = [queued("a"), queued("a")]
    assert fair_queue.fair_order([a1, a2, a3, b1, c1, b2], running) == [b1, c1, b2, a1, a2, a3]
    assert fair_queue.fair_order([a1, a2, a3], running) == [a1, a2, a3]  # alone, a client keeps its order
    assert fair_queue.fair_order([b1, a1, b2], []) == [b1, a1, b2]


def test_fair_order_puts_a_light_call_before_many_clients_single_heavy_jobs(app):
    heavy_fn = next(fn for fn in app.demo.fns.values() if fn.api_name == "attributions")
    light_fn = next(fn for fn in app.demo.fns.values() if fn.api_name == "predict")

    def job(client: str, fn, text: str = "a text"):
        return types.SimpleNamespace(request=fake_request(client), fn=fn, data=types.SimpleNamespace(data=[text]))

    crowd = [job(f"10.0.0.{i}", heavy_fn) for i in range(40)]
    victim = job(OTHER, light_fn)
    running = [job("10.0.1.1", heavy_fn), job("10.0.1.2", heavy_fn)]
    assert fair_queue.fair_order([*crowd, victim], running)[0] is victim  # it arrived last
    assert fair_queue.fair_order(crowd, running) == crowd  # equals keep their arrival order
    long_text = job("10.0.0.99", heavy_fn, "x" * 10_000)
    assert fair_queue.fair_order([long_text, crowd[0]], [])[0] is crowd[0]  # the costlier input waits


# Routes, events and limits of the server as shipped


def test_only_the_routes_the_page_the_api_and_mcp_use_are_open():
    assert guard.closed_route("POST", "/gradio_api/upload")[0] == 403
    for url in ("https://example.com/x", "//example.com/x", "HTTP://example.com/x", "ftp://example.com/x"):
        assert guard.closed_route("GET", f"/gradio_api/file={url}")[0] == 403, url
        assert guard.closed_route("GET", f"/gradio_api/file/{url}")[0] == 403, url  # the deprecated spelling
    assert guard.closed_route("GET", "/gradio_api/proxy=https://example.com/")[0] == 403
    closed = [
        ("POST", "/gradio_api/process_recording"),
        ("POST", "/gradio_api/vibe-edit/"),
        ("POST", "/gradio_api/stream/abc"),
        ("GET", "/gradio_api/upload_progress"),
        ("GET", "/monitoring/summary"),
        ("GET", "/monitoring"),
        ("POST", "/login"),
        ("GET", "/gradio_api/runs"),
        ("GET", "/gradio_api/something-gradio-adds-next"),
        ("PUT", "/"),
        ("DELETE", "/gradio_api/queue/join"),
        ("POST", f"/{api.PAGE}"),
        ("GET", f"/{api.PAGE}/more"),
    ]
    for method, path in closed:
        assert guard.closed_route(method, path)[0] in (403, 404), (method, path)
    opened = [
        ("GET", "/"),
        ("HEAD", "/"),
        ("GET", f"/{api.PAGE}"),  # the endpoints' page
        ("GET", f"/{api.PAGE}/"),  # Gradio's redirect to it
        ("GET", "/config"),
        ("GET", "/theme.css"),
        ("GET", "/assets/index-abc.js"),
        ("GET", "/gradio_api/info"),
        ("GET", "/gradio_api/heartbeat/abc123"),
        ("GET", "/gradio_api/queue/data"),
        ("GET", "/gradio_api/file=/tmp/gradio/abc/export.json"),
        ("POST", "/gradio_api/queue/join"),
        ("POST", "/gradio_api/run/predict"),
        ("POST", "/gradio_api/cancel"),
        ("POST", "/gradio_api/call/walkthrough"),
        ("GET", "/gradio_api/call/walkthrough/0123abcd"),
        ("POST", "/gradio_api/mcp/"),
        ("GET", "/gradio_api/mcp/schema"),
    ]
    for method, path in opened:
        assert guard.closed_route(method, path) is None, (method, path)


@pytest.mark.served
def test_every_private_event_is_refused_by_name_and_a_public_endpoint_answers(app, guarded):
    names = guard.private_names(app.demo)
    assert {"show_text", "share_link"} <= names and "predict" not in names
    with http() as client:
        for name in sorted(names):
            for route in ("call", "call/v2", "run", "api"):
                answer = client.post(f"{guarded}/gradio_api/{route}/{name}", json={"data": []})
                assert answer.status_code == 404, (route, name, answer.text)
        joined = client.post(f"{guarded}/gradio_api/call/predict", json={"data": ["a fine film"]})
        assert joined.status_code == 200
        result = client.get(f"{guarded}/gradio_api/call/predict/{joined.json()['event_id']}").text
        assert "event: complete" in result and "confidences" in result


@pytest.mark.served
def test_routes_off_the_allow_list_write_nothing_and_fetch_nothing_and_the_page_and_endpoints_still_answer(
    app, guarded, tmp_path
):
    temp = Path(app.demo.server_app.uploaded_file_dir)
    before = sorted(temp.rglob("*")) if temp.exists() else []
    with http() as client:
        for _ in range(20):
            recording = {"video": ("r.webm", b"x" * 1000)}
            assert client.post(f"{guarded}/gradio_api/process_recording", files=recording).status_code == 404
        for fetch in ("file/http://127.0.0.9:9/x", "file=http://127.0.0.9:9/x", "file/https:/127.0.0.9/x"):
            assert client.get(f"{guarded}/gradio_api/{fetch}").status_code == 403, fetch
        assert client.get(f"{guarded}/gradio_api/vibe-edit/").status_code == 404
        for route in ("/", "/config", "/gradio_api/info", "/theme.css"):
            assert client.get(f"{guarded}{route}").status_code == 200, route
    assert (sorted(temp.rglob("*")) if temp.exists() else []) == before
    for fn in app.demo.fns.values():  # every named endpoint's routes pass (tests/explorer/page/test_api.py calls each)
        if fn.api_visibility != "private":
            assert guard.closed_route("POST", f"/gradio_api/call/{fn.api_name}") is None, fn.api_name


@pytest.mark.served
def test_in_space_mode_a_rotated_left_hand_hop_is_one_client(app, guarded, monkeypatch):
    monkeypatch.setenv("SYSTEM", "spaces")
    monkeypatch.delenv(clients.TRUSTED_PROXY_HOPS, raising=False)
    release, _ = held_model(monkeypatch)
    try:
        with http("127.0.0.6") as proxy:  # the Space's proxy appends the address that connected to it
            codes = [
                proxy.post(
                    f"{guarded}/gradio_api/call/predict",
                    json={"data": [f"rotated {i}"]},
                    headers={"x-forwarded-for": f"10.{i // 250}.{i % 250}.1, 203.0.113.7"},
                ).status_code
                for i in range(3 * LIGHT_JOBS)
            ]
    finally:
        release.set()
    assert codes.count(200) == LIGHT_JOBS and codes.count(429) == 2 * LIGHT_JOBS


@pytest.mark.served
def test_an_upload_is_refused_before_a_byte_is_written(app, guarded):
    upload_dir = Path(app.demo.server_app.uploaded_file_dir)
    before = sorted(upload_dir.rglob("*")) if upload_dir.exists() else []
    files = [("files", (f"f{i}.txt", b"x" * 100)) for i in range(200)]
    with http() as client:
        assert client.post(f"{guarded}/gradio_api/upload", files=files).status_code == 403
        big = {"files": ("blob.bin", os.urandom(5_000_000))}
        assert client.post(f"{guarded}/gradio_api/upload", files=big).status_code == 403
    assert (sorted(upload_dir.rglob("*")) if upload_dir.exists() else []) == before


@pytest.mark.served
def test_answers_carry_the_security_headers_and_closed_routes_are_closed(guarded):
    with http() as client:
        page = client.get(f"{guarded}/")
        assert page.headers["content-security-policy"] == guard.FRAME_ANCESTORS
        assert page.headers["x-content-type-options"] == "nosniff"
        assert page.headers["referrer-policy"] == "strict-origin-when-cross-origin"
        assert client.get(f"{guarded}/gradio_api/file=https://example.com/").status_code == 403
        assert client.get(f"{guarded}/monitoring/summary").status_code == 404
        big = b'{"data": ["' + b"x" * (guard.MAX_BODY_BYTES + 1) + b'"]}'
        answer = client.post(
            f"{guarded}/gradio_api/call/predict", content=big, headers={"content-type": "application/json"}
        )
        assert answer.status_code == 413


@pytest.mark.served
def test_the_page_and_its_configuration_come_compressed_and_streams_do_not(guarded):
    """A browser that accepts gzip gets the page's first HTML and ``/config`` compressed (the same JSON, several
    times smaller); an event stream is sent uncompressed, as it comes, and a client that does not ask gets plain."""
    with http() as client:
        plain = client.get(f"{guarded}/config", headers={"accept-encoding": "identity"})
        zipped = client.get(f"{guarded}/config", headers={"accept-encoding": "gzip"})
        assert "content-encoding" not in plain.headers and zipped.headers["content-encoding"] == "gzip"
        assert zipped.json() == plain.json()  # httpx decompresses
        assert int(zipped.headers["content-length"]) * 4 < len(plain.content)
        page = client.get(f"{guarded}/", headers={"accept-encoding": "gzip"})
        assert page.headers["content-encoding"] == "gzip"
        # Gradio's scripts come gzipped once (``static_files``), kept by the browser, through the front door
        script = re.search(r'src="\./assets/(index-[\w-]+\.js)"', page.text).group(1)
        fetched = client.get(f"{guarded}/assets/{script}", headers={"accept-encoding": "gzip, deflate, br, zstd"})
        assert fetched.headers["content-encoding"] == "gzip" and "immutable" in fetched.headers["cache-control"]
        assert fetched.content == (gradio_seam.frontend_assets() / script).read_bytes()  # httpx decompresses
        assert fetched.headers["x-content-type-options"] == "nosniff"  # the guard's headers: it stands in front
        event = client.post(f"{guarded}/gradio_api/call/predict", json={"data": ["a fine film"]}).json()["event_id"]
        stream = client.get(f"{guarded}/gradio_api/call/predict/{event}", headers={"accept-encoding": "gzip"})
        assert stream.headers["content-type"].startswith("text/event-stream")
        assert "content-encoding" not in stream.headers and "event: complete" in stream.text


def test_light_endpoints_have_a_lane_of_their_own_and_the_rest_routes_skip_no_queue(app):
    queued = {fn.api_name if fn.api_visibility != "private" else "page": fn for fn in app.demo.fns.values() if fn.queue}
    lanes = {name: (fn.concurrency_id, fn.concurrency_limit) for name, fn in queued.items()}
    light, heavy = (server.LIGHT_WORK, server.LIGHT_WORKERS), (server.MODEL_WORK, server.model_workers())
    assert lanes["predict"] == lanes["attention"] == light
    assert lanes["page"] == lanes["walkthrough"] == lanes["attributions"] == lanes["export"] == heavy
    # the endpoints without a weight (one forward pass each, test_admission checks); /patching (hundreds of patched
    # passes) ran here and held the light lane for seconds
    one_pass = {name for name in api.endpoints(app.REGISTRY) if name not in admission.HEAVY_WEIGHTS}
    assert {name for name, lane in lanes.items() if lane == light} == one_pass and "patching" not in one_pass
    assert set(lanes.values()) == {light, heavy}
    assert app.demo.api_open is False and app.demo._queue.max_size == server.QUEUE_SIZE


@pytest.mark.served
def test_a_light_call_is_answered_while_heavy_jobs_hold_every_model_worker(app, guarded, monkeypatch):
    heavy = next(fn for fn in app.demo.fns.values() if fn.api_name == "attributions")
    release, started, explain = threading.Event(), threading.Semaphore(0), heavy.fn

    def held_heavy(*args, **kwargs):  # a stand-in for a job at the longest legal input
        started.release()
        release.wait(30)
        return explain(*args, **kwargs)

    monkeypatch.setattr(heavy, "fn", held_heavy)
    workers = server.model_workers()
    try:
        for i in range(workers + 1):  # one per address (a client's budget holds few heavy jobs): one waits
            with http(f"127.0.0.{20 + i}") as crowd:
                body = {"data": ["a heavy text", "predicted", 8, "pad"]}
                assert crowd.post(f"{guarded}/gradio_api/call/attributions", json=body).status_code == 200
        assert all(started.acquire(timeout=20) for _ in range(workers))  # every model worker is held
        with http(OTHER) as victim:
            event = victim.post(f"{guarded}/gradio_api/call/predict", json={"data": ["mine"]}).json()["event_id"]
            answer = victim.get(f"{guarded}/gradio_api/call/predict/{event}", timeout=10).text
        assert "event: complete" in answer and not release.is_set()
    finally:
        release.set()
        queue = gradio_seam.queue_of(app.demo)
        deadline = time.monotonic() + 20  # the next test starts with an empty queue
        while (fair_queue.waiting_events(queue) or gradio_seam.running_events(queue)) and time.monotonic() < deadline:
            time.sleep(0.05)


def held_model(monkeypatch):
    """Make every model call wait for the returned event to be set (and count its start on the semaphore)."""
    release, started = threading.Event(), threading.Semaphore(0)
    analyze = runner.run_model

    def slow_model(text, **options):
        started.release()
        release.wait(30)
        return analyze(text, **options)

    monkeypatch.setattr(runner, "run_model", slow_model)
    return release, started


LIGHT_JOBS = int(admission.CLIENT_BUDGET / admission.LIGHT_COST)  # light calls one client may have in flight


@pytest.mark.served
def test_a_client_past_its_budget_is_told_to_retry_and_another_client_still_gets_in(app, guarded, monkeypatch):
    release, _ = held_model(monkeypatch)
    try:
        with http() as attacker, http(OTHER) as victim:
            joined = [
                attacker.post(f"{guarded}/gradio_api/call/predict", json={"data": [f"text {i}"]})
                for i in range(LIGHT_JOBS + 2)
            ]
            assert [answer.status_code for answer in joined] == [200] * LIGHT_JOBS + [429] * 2
            assert "retry in" in joined[-1].json()["detail"] and joined[-1].headers["retry-after"].isdigit()
            assert victim.post(f"{guarded}/gradio_api/call/predict", json={"data": ["mine"]}).status_code == 200
            waiting = app.demo._queue.event_queue_per_concurrency_id[server.LIGHT_WORK].queue
            assert [fair_queue.client_of(event) for event in waiting][:2] == [OTHER, "127.0.0.1"]
    finally:
        release.set()
    with http() as attacker:  # its answers read, the client is welcome again
        for answer in joined[:LIGHT_JOBS]:
            attacker.get(f"{guarded}/gradio_api/call/predict/{answer.json()['event_id']}")
        again = attacker.post(f"{guarded}/gradio_api/call/predict", json={"data": ["again"]})
        assert again.status_code == 200  # read, so that it does not hold the light lane into the next test
        assert "event: complete" in attacker.get(f"{guarded}/gradio_api/call/predict/{again.json()['event_id']}").text


@pytest.mark.served
def test_inputs_gradio_refuses_are_answered_without_a_traceback_in_the_log(app, guarded, capfd):
    cheap = next(i for i, fn in app.demo.fns.items() if not fn.queue and fn.inputs)
    with http("127.0.0.5") as client:  # an address whose sessions no other test has opened
        answer = client.post(
            f"{guarded}/gradio_api/run/predict", json={"data": [], "fn_index": cheap, "session_hash": "q1"}
        )
    assert answer.status_code == 500 and "enough input values" in answer.json()["error"]
    assert "Traceback" not in capfd.readouterr().err


def test_files_gradio_remembers_are_forgotten_once_pruned(tmp_path):
    with gr.Blocks() as blocks:
        button = gr.DownloadButton()
    kept, pruned = tmp_path / "kept.json", tmp_path / "pruned.json"
    kept.write_text("{}")
    button.temp_files |= {str(kept), str(pruned)}
    assert server.forget_removed_files(blocks) == 1
    assert button.temp_files == {str(kept)} and any(button.temp_files is paths for paths in blocks.temp_file_sets)


@pytest.mark.served
def test_a_full_queue_drops_the_heaviest_clients_newest_waiting_job_for_a_light_client(app, guarded, monkeypatch):
    release, _ = held_model(monkeypatch)
    monkeypatch.setattr(app.demo._queue, "max_size", 4)
    heavy, light = "127.0.0.7", "127.0.0.8"
    try:
        with http(heavy) as crowd, http(light) as victim:
            sent = server.LIGHT_WORKERS + 5  # the light lane's running jobs, 4 waiting (full), one more
            joined = [
                crowd.post(f"{guarded}/gradio_api/call/predict", json={"data": [f"crowd {i}"]}) for i in range(sent)
            ]
            assert [answer.status_code for answer in joined] == [200] * (sent - 1) + [503]
            assert victim.post(f"{guarded}/gradio_api/call/predict", json={"data": ["mine"]}).status_code == 200
            dropped = crowd.get(f"{guarded}/gradio_api/call/predict/{joined[-2].json()['event_id']}").text
            assert "event: error" in dropped and "retry in" in dropped
    finally:
        release.set()


def closed_by_server(sock: socket.socket, seconds: float) -> bool:
    """Whether the server closes ``sock`` within ``seconds`` (it reads what the server sends until then)."""
    sock.settimeout(seconds)
    try:
        while sock.recv(4096):
            pass
    except TimeoutError:
        return False
    return True


@pytest.mark.served
def test_connections_that_send_no_whole_request_or_idle_after_an_answer_are_closed(guarded, monkeypatch):
    monkeypatch.setattr(server, "HEAD_SECONDS", 0.5)
    host, port = urlsplit(guarded).hostname, urlsplit(guarded).port
    with socket.create_connection((host, port)) as silent, socket.create_connection((host, port)) as slow:
        slow.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")  # a head that never ends
        assert closed_by_server(silent, 5) and closed_by_server(slow, 5)
    with socket.create_connection((host, port)) as trickle:  # a whole head, then a body that never ends
        head = b"POST /gradio_api/call/predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        trickle.sendall(head + b"Content-Length: 100\r\n\r\n" + b'{"data": ["')
        assert closed_by_server(trickle, 5)
    with httpx.Client(timeout=5) as client:  # a whole request with a body is answered
        assert client.post(f"{guarded}/gradio_api/call/predict", json={"data": ["fine"]}).status_code == 200
    with socket.create_connection((host, port)) as idle:
        idle.sendall(b"GET /gradio_api/info HTTP/1.1\r\nHost: x\r\n\r\n")
        assert closed_by_server(idle, server.KEEP_ALIVE_SECONDS + 5)  # it read the answer, then was closed
    with httpx.Client(timeout=5) as client:  # a whole request still gets its answer
        assert client.get(f"{guarded}/gradio_api/info").status_code == 200


class FakeLoop:
    """``call_later`` that keeps each callback until the test runs it (the time passed)."""

    def __init__(self):
        self.timers = []

    def call_later(self, delay, callback):
        self.timers.append(types.SimpleNamespace(delay=delay, callback=callback, cancelled=False))
        self.timers[-1].cancel = functools.partial(setattr, self.timers[-1], "cancelled", True)
        return self.timers[-1]

    def run_due(self, seconds: float) -> None:
        for timer in [timer for timer in self.timers if not timer.cancelled and timer.delay <= seconds]:
            timer.cancelled = True
            timer.callback()


def connection() -> tuple[server.ConnectionDeadlines, FakeLoop, list]:
    """A ``ConnectionDeadlines`` mid-answer, on a fake loop and a transport that records ``abort``."""
    protocol, loop, aborted = server.ConnectionDeadlines.__new__(server.ConnectionDeadlines), FakeLoop(), []
    protocol.loop, protocol.drain_deadline = loop, None
    protocol.transport = types.SimpleNamespace(abort=lambda: aborted.append(True))
    protocol.flow = FlowControl(protocol.transport)
    return protocol, loop, aborted


def test_a_reader_that_lets_its_send_buffer_stay_full_is_cut_off_and_one_that_drains_is_not():
    stalled, loop, aborted = connection()
    stalled.pause_writing()  # the buffer passed uvicorn's high-water mark
    loop.run_due(server.DRAIN_SECONDS)
    assert aborted == [True]  # its unsent bytes are dropped with it
    draining, loop, aborted = connection()
    draining.pause_writing()
    draining.resume_writing()  # it read down to the low-water mark in time
    loop.run_due(server.DRAIN_SECONDS)
    assert aborted == []


@pytest.mark.served
def test_answers_for_an_unknown_session_or_event_are_one_line_not_a_traceback(guarded, capfd):
    with http() as client:
        for _ in range(3):
            unknown = client.get(f"{guarded}/gradio_api/queue/data", params={"session_hash": uuid.uuid4().hex})
            assert unknown.status_code == 404 and "No such session" in unknown.json()["detail"]
            assert client.get(f"{guarded}/gradio_api/call/predict/{uuid.uuid4().hex}").status_code == 404
    assert "Traceback" not in capfd.readouterr().err


# Bodies sent in chunks, with no Content-Length


def chunked_body(total: int, chunk: int = 64 * 1024):
    """An ASGI ``receive`` streaming ``total`` bytes in ``chunk``-byte messages (chunked transfer: no length said),
    then disconnecting; and the list of the bytes it has handed out so far."""
    sent = []

    async def receive():
        if sum(sent) >= total:
            return {"type": "http.disconnect"}
        sent.append(min(chunk, total - sum(sent)))
        return {"type": "http.request", "body": b"x" * sent[-1], "more_body": sum(sent) < total}

    return receive, sent


def post_scope(path: str) -> dict:
    """A POST to ``path`` with no Content-Length; reaching for Gradio's app (admission does) fails the test."""

    def get_blocks():
        raise AssertionError("the body was accepted: the request went on to admission")

    app = types.SimpleNamespace(get_blocks=get_blocks)
    return {"type": "http", "method": "POST", "path": path, "headers": [], "client": ("10.9.9.9", 1234),
            "query_string": b"", "app": app}  # fmt: skip


def test_a_chunked_job_body_past_the_cap_is_refused_once_it_passes_the_cap():
    async def never_called(scope, receive, send):
        raise AssertionError("the app was reached")

    receive, sent = chunked_body(4 * guard.MAX_BODY_BYTES)
    answers = []

    async def send(message):
        answers.append(message)

    asyncio.run(guard.Guard(never_called)(post_scope("/gradio_api/queue/join"), receive, send))
    assert answers[0]["status"] == 413
    assert guard.MAX_BODY_BYTES < sum(sent) <= guard.MAX_BODY_BYTES + 64 * 1024  # read no further than the cap


def test_any_other_chunked_body_ends_as_a_disconnect_once_it_passes_the_cap():
    seen = []

    async def reader(scope, receive, send):  # reads as Starlette does: until the body ends or the client leaves
        while True:
            message = await receive()
            seen.append(message)
            if message["type"] == "http.disconnect" or not message.get("more_body"):
                return

    receive, sent = chunked_body(4 * guard.MAX_BODY_BYTES)
    asyncio.run(guard.Guard(reader)(post_scope("/gradio_api/mcp/"), receive, lambda message: None))
    assert seen[-1]["type"] == "http.disconnect"
    assert sum(len(m.get("body", b"")) for m in seen) <= guard.MAX_BODY_BYTES < sum(sent)


def test_a_view_job_is_stopped_at_its_first_pass_past_the_job_deadline_and_only_that_job(app, monkeypatch):
    """However long a job's input lets it run, it holds a worker at most ``runner.JOB_SECONDS`` and one pass."""
    from transformer.explain import batching
    from transformer.explorer.views import attributions

    now, passes, job_start = [0.0], [], []  # the clock; when each pass began; when the job began
    monkeypatch.setattr(runner, "clock", lambda: now[0])
    model = app.get_model()[0].model

    def one_second_pass(*_) -> None:  # after a pass the deadline's pre-hook let through: when it began, then 1 s
        passes.append(now[0])
        now[0] += 1.0

    deadline = runner.job_deadline

    @contextlib.contextmanager
    def noted_deadline():  # passes before the job (the sentence's analysis, unless kept) are not the job's
        job_start.append(now[0])
        with deadline():
            yield

    monkeypatch.setattr(runner, "job_deadline", noted_deadline)
    handle = model.register_forward_hook(one_second_pass)
    monkeypatch.setattr(batching, "rows_per_pass", lambda *_: 32)  # 128 steps + 2 rows: 5 passes, as on a big model
    try:
        monkeypatch.setattr(runner, "JOB_SECONDS", 3.5)  # each pass "takes" 1 s: the job's 5th starts past it
        with pytest.raises(gr.Error, match=r"longer than 3\.5 s") as stopped:
            attributions.attributions("a long and slow text", steps=128)
        assert stopped.value.print_exception is False
        began = [t - job_start[0] for t in passes if t >= job_start[0]]
        assert began == [0.0, 1.0, 2.0, 3.0]  # every pass that began within 3.5 s ran, and none after
        passes.clear()
        assert runner.run_model("a pass outside any job").tokens  # no deadline outside a view's job
        monkeypatch.setattr(runner, "JOB_SECONDS", 1e9)
        assert attributions.attributions("the next job runs whole", steps=128)["tokens"]  # its own deadline
    finally:
        handle.remove()


def test_a_job_deadline_stops_the_passes_a_job_runs_on_other_threads(app, monkeypatch):
    """Patching runs its passes on threads of their own (``batching.in_parallel``): the job's deadline goes too."""
    from transformer.explain.patching import activation_patching

    now, passes = [0.0], []
    monkeypatch.setattr(runner, "clock", lambda: now[0])
    monkeypatch.setattr(runner, "JOB_SECONDS", 1.5)  # the two sentences' pass and the first patched pass fit
    model = app.get_model()[0].model

    def one_second_pass(*_) -> None:
        passes.append(threading.get_ident())
        now[0] += 1.0

    ids_a = torch.tensor([[5, 9, 13, 21, 30, 7]])  # (1, N)
    ids_b = ids_a.clone()
    ids_b[0, 3] = 42
    handle = model.register_forward_hook(one_second_pass)
    try:
        with runner.job_deadline(), pytest.raises(runner.JobTooLong):
            activation_patching(model, ids_a, ids_b, threads=2)
    finally:
        handle.remove()
    assert threading.get_ident() not in passes[1:]  # the patched passes ran elsewhere, and were stopped there


def full_queue(waiting: list[str]) -> types.SimpleNamespace:
    """What ``make_room`` reads and edits of Gradio's queue: ``waiting`` event ids in one group, and it is full."""
    events = [types.SimpleNamespace(_id=event_id) for event_id in waiting]
    told = []
    queue = types.SimpleNamespace(
        max_size=len(waiting),
        event_queue_per_concurrency_id={"model": types.SimpleNamespace(queue=events)},
        event_ids_to_events={event._id: event for event in events},
        active_jobs=[],
        send_message=lambda event, message: told.append(event._id),
        told=told,
    )
    return queue


@pytest.mark.parametrize(("newcomer_holds", "dropped"), [(2.0, None), (1.0, "a-2")])
def test_a_full_queue_drops_a_job_only_for_a_client_who_holds_strictly_less(newcomer_holds, dropped):
    """Kills ``make_room`` with ``<`` for ``<=``: when the heaviest client holds exactly what the newcomer will
    (its holdings and this job's cost), nothing is dropped; holding more than that, its newest waiting job is."""
    held = admission.Admission(budget=100, light_reserve=0)
    for event_id in ("a-1", "a-2"):
        held.bind(held.admit("a", 2.0), event_id, "session-a")
    held.admit("b", newcomer_holds)
    queue = full_queue(["a-1", "a-2"])
    victim = guard.make_room(queue, held, "b", 2.0)  # "a" holds 4; "b" will hold newcomer_holds + 2
    assert (victim.event_id if victim else None) == dropped
    assert queue.told == ([dropped] if dropped else [])


def test_the_model_workers_are_every_core_without_sched_getaffinity(monkeypatch):
    """The launch's workers count the cores as ``batching.usable_cores`` does, on a platform without affinity too."""
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 3)
    assert server.model_workers() == 3
