"""Attack replay: a fresh app server on loopback, each attack from a real issue replayed against it while a
victim client measures what it gets; then a markdown table (attack | what was measured | figure | target | met?).

The attacker's sockets come from 127.0.0.3 and the victim's from 127.0.0.2 (the server listens on 127.0.0.1
only), so a per-client limit on the server can tell them apart; the crowd and the floods use more loopback
addresses (127.0.1.x, 127.0.2.x). The server trusts one proxy hop (``TRUSTED_PROXY_HOPS=1``, a Space's default)
so the rotated-hop attack is the one a Space would see. Both speak Gradio's HTTP routes with httpx
(gradio_client cannot bind a source address). The server runs as ``python app.py --port P`` with TMPDIR,
GRADIO_TEMP_DIR and the atlas cache in a fresh temporary folder (its disk use is summed there) and an empty
data folder (the bundled model has its atlas: nothing is built). Every loop has a deadline; the server is
stopped at the end, on Ctrl-C or an error too. Progress goes to stderr, the table to stdout.

    python -m benchmarks.attack                                    # = make attack (all attacks; not timed in full)
    python -m benchmarks.attack --seconds 20 --only heavy small --json attack.json
    python -m benchmarks.attack --seconds 20 --only burst rotate routes mcp unread crowd   # issue 36
    python -m benchmarks.attack --only cancel slow weighted surrogate                     # issue 52
"""

import argparse
import asyncio
import contextlib
import functools
import json
import multiprocessing
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import httpx

from .browser import sentence
from .load import SENTENCE, free_port, rss_mb, start_server
from .soak import folder_bytes
from .timing import p95_ms

VICTIM, ATTACKER = "127.0.0.2", "127.0.0.3"  # source addresses; the server is always 127.0.0.1
ATTACKS = ["heavy", "memory", "disk", "private", "sessions", "links", "small"]
ATTACKS += ["burst", "unread", "crowd", "rotate", "routes", "mcp"]  # issue 36
ATTACKS += ["cancel", "slow", "weighted", "surrogate"]  # issue 52
HEAVY_SLOTS, HEAVY_STEPS = 64, 128  # Integrated Gradients jobs kept in flight, and their steps
HEAVY_TEXT = sentence("good", 2500)[:10_000]
EXPORT_LOOPS, RUN_BURST, UPLOAD_FILES = 2, 24, 1000
FLOOD_COUNT, FLOOD_THREADS, FLOOD_SECONDS = 5000, 8, 60  # the sessions and links floods: count, threads, deadline
PAGE_CHECK_SECONDS = 15  # the end of the heavy phase kept for the victim's page load and analysis
SETTLE_SECONDS = 60  # idle time before the memory is measured again
RSS_EVERY = 0.2
REFUSED = (429, 503)
REFUSED_PAUSE = 0.25  # an attacker slot waits this long after a refusal before it submits again
TEXT_ELEM, REDRAW_ELEM = "sentence", "redraw-attention"  # elem_ids: the text box; scripts.REDRAW_ID + "attention"
RESTORED_ELEM = "restored-text"  # the hidden box the page load writes a link's text to
MODEL_JOB_THREAD = "model job"  # launch.job_thread_name(launch.MODEL_WORK): a thread running a model job
LOAD_MARK_ELEM = "load-mark"  # filled by the page load's answer; a view's draw sent with it empty draws nothing
EXPORT_ELEMS = ("export-json", "export-csv")  # the Export tab's buttons: each builds its file when clicked
LINK_DIR = "attention-explorer-links"  # link_store.LINK_DIR, under the server's TMPDIR
STOP = threading.Event()  # set on Ctrl-C or an error: every loop in this process ends
BURST, CROWD_ADDRESSES, CROWD_JOBS, FLOOD_ADDRESSES = 64, 40, 4, 64
UNREAD_SETTLE_SECONDS = 30  # after the unread attack, before its memory is measured
CANCEL_SECONDS, CANCEL_LOOPS = 25, 4  # issue 52: the cancel-after-submit loops, from one address
SLOW_ADDRESSES, SLOW_STREAMS = ("127.0.4.1", "127.0.4.2", "127.0.4.3"), 135  # slow readers of /attention answers
SLOW_TEXT = sentence("good", 254)  # 256 tokens with [CLS] and [SEP]: a 3.95 MB /attention answer
SLOW_OPEN_SECONDS, SLOW_HOLD_SECONDS = 120, 15  # streams opened within, then held for
LIGHTER, HEAVIER = [f"127.0.5.{i}" for i in range(1, 10)], "127.0.5.100"  # cost-2 loops; one cost-6 loop
# Cost 2, an /attributions call under MAX_INPUT_CHARS / 4 characters, yet as long as the heavy one's at 256 tokens
LIGHTER_DATA = [HEAVY_TEXT[:2499], "predicted", HEAVY_STEPS, "pad"]
HEAVIER_DATA = [HEAVY_TEXT, "predicted", "pad", 32, "pad"]  # /faithfulness at 10,000 characters: cost 6
WEIGHTED_SECONDS = 40
SURROGATE_CALLS = 300
SERVER_LOG = "server.log"  # the server's stdout and stderr, in its temporary folder
PROBES = 200  # process_recording uploads and file/ fetches tried


@dataclass
class Server:
    proc: subprocess.Popen
    url: str
    temp: Path


def note(message: str) -> None:
    print(f"[attack {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def row(attack: str, measured: str, figure: str, target: str, met: bool | None, **data) -> dict:
    """One line of the table; ``met`` None for a figure given for information; ``data`` goes to the JSON."""
    return {"attack": attack, "measured": measured, "figure": figure, "target": target, "met": met, "data": data}


def alive(deadline: float) -> bool:
    return time.monotonic() < deadline and not STOP.is_set()


def client(url: str, address: str, timeout: float = 30) -> httpx.Client:
    """An httpx client to ``url`` whose sockets come from ``address``; the read timeout outlasts SSE heartbeats."""
    transport = httpx.HTTPTransport(local_address=address)
    return httpx.Client(base_url=url, transport=transport, timeout=httpx.Timeout(timeout, connect=5), trust_env=False)


def new_session() -> str:
    return secrets.token_hex(6)


def attempt(request, *args) -> str:
    """``request(*args)``'s outcome, or the exception's type (a dropped connection, an answer that is not
    Gradio's): a failure is counted, never raised."""
    try:
        return request(*args)
    except (httpx.HTTPError, ValueError, KeyError) as error:
        return type(error).__name__


def call_api(http: httpx.Client, api_name: str, data: list) -> str:
    """One job on /gradio_api/call/<api_name>, then its SSE result: 'complete', 'error' or 'http <status>'."""
    answer = http.post(f"/gradio_api/call/{api_name}", json={"data": data})
    if answer.status_code != 200:
        return f"http {answer.status_code}"
    with http.stream("GET", f"/gradio_api/call/{api_name}/{answer.json()['event_id']}") as stream:
        for line in stream.iter_lines():
            if line.startswith("event:") and line[6:].strip() in ("complete", "error"):
                return line[6:].strip()
    return "no result"


def join_page_event(http: httpx.Client, event: dict, data: list, session: str, params=None) -> tuple[str, list]:
    """A page event as the browser sends it (queue/join, then queue/data's SSE): ('complete', outputs) or (why, [])."""
    body = {"data": data, "fn_index": event["id"], "session_hash": session, "event_data": None, "trigger_id": None}
    answer = http.post("/gradio_api/queue/join", params=params, json=body)
    if answer.status_code != 200:
        return f"http {answer.status_code}", []
    with http.stream("GET", "/gradio_api/queue/data", params={"session_hash": session}) as stream:
        for line in stream.iter_lines():
            message = json.loads(line[5:]) if line.startswith("data:") else {}
            if message.get("msg") == "process_completed":
                return ("complete", message["output"]["data"]) if message.get("success") else ("error", [])
    return "no result", []


def run_page_event(http: httpx.Client, event: dict, data: list, session: str | None) -> tuple[int, list]:
    """A page event on the route the page's script uses for queue=False events, /gradio_api/run/predict with the
    event's number (Gradio finds the event by ``fn_index``, not by the name): (HTTP status, outputs)."""
    body = {"data": data, "fn_index": event["id"], "session_hash": session, "event_data": None, "trigger_id": None}
    answer = http.post("/gradio_api/run/predict", json=body)
    return answer.status_code, answer.json().get("data", []) if answer.status_code == 200 else []


def page_config(http: httpx.Client) -> dict:
    return http.get("/config").raise_for_status().json()


def page_event(config: dict, api_name: str) -> dict:
    return next(event for event in config["dependencies"] if event["api_name"] == api_name)


def elem_ids(config: dict) -> dict[int, str | None]:
    return {c["id"]: c.get("props", {}).get("elem_id") for c in config["components"]}


def event_inputs(config: dict, event: dict, by_elem_id: dict | None = None) -> list:
    """The page's values for ``event``'s inputs once its load has answered: each component's default, or
    ``by_elem_id``'s (a state: None)."""
    components = {c["id"]: c for c in config["components"]}
    by_elem_id = {LOAD_MARK_ELEM: "loaded"} | (by_elem_id or {})
    values = []
    for component_id in event["inputs"]:
        props = components[component_id].get("props", {})
        values.append(by_elem_id.get(props.get("elem_id"), props.get("value")))
    return values


def click_event(config: dict, elem: str = REDRAW_ELEM) -> dict:
    """The click event of the button ``elem`` (the Attention tab's hidden redraw button by default)."""
    button = next(i for i, elem_id in elem_ids(config).items() if elem_id == elem)
    return next(e for e in config["dependencies"] if [button, "click"] in e["targets"])


def in_threads(jobs: list[tuple], workers: int | None = None) -> Counter:
    """Run each ``(fn, *args)`` on ``workers`` threads (default: one each); the sum of the Counters they return."""
    with ThreadPoolExecutor(workers or len(jobs)) as pool:
        futures = [pool.submit(*job) for job in jobs]
        try:
            return sum((future.result() for future in futures), Counter())
        except BaseException:
            STOP.set()
            raise


class Tally:
    """Outcomes counted by many threads at once."""

    def __init__(self):
        self.counts, self.lock = Counter(), threading.Lock()

    def add(self, outcome: str) -> None:
        with self.lock:
            self.counts[outcome] += 1

    def snapshot(self) -> Counter:
        with self.lock:
            return Counter(self.counts)


def heavy_slot(url: str, deadline: float, tally: Tally) -> None:
    """One attacker slot: an Integrated Gradients job at a time, re-submitted as each ends, until ``deadline``."""
    with client(url, ATTACKER) as http:
        while alive(deadline):
            tally.add("attributions submitted")
            outcome = attempt(call_api, http, "attributions", [HEAVY_TEXT, "predicted", HEAVY_STEPS, "pad"])
            tally.add(f"attributions {outcome}")
            if outcome in (f"http {code}" for code in REFUSED):
                time.sleep(REFUSED_PAUSE)


def page_step(http: httpx.Client, config: dict, event: dict, session: str, by_elem_id: dict | None = None) -> str:
    """One page event in ``session`` (``join_page_event``): its outcome, a failure counted, never raised."""
    outcome = attempt(join_page_event, http, event, event_inputs(config, event, by_elem_id), session)
    return outcome if isinstance(outcome, str) else outcome[0]


def export_loop(url: str, deadline: float, tally: Tally) -> None:
    """One attacker loop, as the page exports: analyze a new 128-token text, then click the Export tab's two
    buttons (each builds its file, the JSON or the CSV), until ``deadline``."""
    prefix = secrets.token_hex(4)  # texts differ from every other loop's, in every phase
    with client(url, ATTACKER) as http:
        config = page_config(http)
        show, session = page_event(config, "show_text"), new_session()
        exports = [click_event(config, elem) for elem in EXPORT_ELEMS]
        for number in range(sys.maxsize):
            if not alive(deadline):
                return
            text = f"{prefix} {number} " + sentence("good", 126)
            analyzed = page_step(http, config, show, session, {TEXT_ELEM: text})
            for export in exports:
                tally.add(f"export {page_step(http, config, export, session) if analyzed == 'complete' else analyzed}")


def until_deadline(jobs: list[tuple], deadline: float) -> Counter:
    """Run each ``(fn, *args)`` as ``fn(*args, tally)`` on a daemon thread; at ``deadline`` return what they counted.

    Jobs still in flight then are abandoned, as an attacker leaving would: their threads stop submitting and go
    with this process (a job waiting in a long queue would otherwise hold the phase open until it ran).
    """
    tally = Tally()
    threads = [threading.Thread(target=fn, args=(*args, tally), daemon=True) for fn, *args in jobs]
    for thread in threads:
        thread.start()
    while alive(deadline):
        time.sleep(0.2)
    return tally.snapshot()


def heavy_attack(url: str, seconds: float, exporters: int) -> Counter:
    """The attacker's process for the heavy phase: ``HEAVY_SLOTS`` heavy jobs in flight, ``exporters`` export loops."""
    deadline = time.monotonic() + seconds
    jobs = [(heavy_slot, url, deadline)] * HEAVY_SLOTS + [(export_loop, url, deadline)] * exporters
    return until_deadline(jobs, deadline)


def victim_predicts(url: str, deadline: float) -> tuple[list[float], Counter]:
    """The victim calls /predict in a loop until ``deadline``: (seconds per completed call, failed outcomes)."""
    latencies, failures = [], Counter()
    with client(url, VICTIM) as http:
        while alive(deadline):
            start = time.perf_counter()
            outcome = attempt(call_api, http, "predict", [SENTENCE])
            if outcome == "complete":
                latencies.append(time.perf_counter() - start)
            else:
                failures[outcome] += 1
                time.sleep(0.1)  # a person retrying, not a spin
    return latencies, failures


def victim_page_check(url: str) -> tuple[bool, str]:
    """The victim loads the page (GET /) and analyzes a sentence through the page's own protocol."""
    with client(url, VICTIM) as http:
        try:
            page = http.get("/").status_code
            config = page_config(http)
            show = page_event(config, "show_text")
            data = event_inputs(config, show, {TEXT_ELEM: SENTENCE})
            analyzed, _ = join_page_event(http, show, data, new_session())
        except httpx.HTTPError as error:
            return False, f"failed: {type(error).__name__}"
    return page == 200 and analyzed == "complete", f"GET / {page}, analysis {analyzed}"


@contextlib.contextmanager
def sampled(measure: Callable[[], float]):
    """While inside: ``measure()`` every ``RSS_EVERY`` s in a thread of its own (a failed reading is skipped); yields
    the list of readings."""
    samples, stop = [], threading.Event()

    def sample() -> None:
        while not stop.wait(RSS_EVERY):
            with contextlib.suppress(OSError, RuntimeError):
                samples.append(measure())

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        yield samples
    finally:
        stop.set()
        sampler.join()


@contextlib.contextmanager
def peak_rss(pid: int):
    """While inside: the server's resident memory sampled every ``RSS_EVERY`` s; yields {"mb": the peak so far}."""
    peak = {"mb": rss_mb(pid)}

    def measure() -> float:
        peak["mb"] = max(peak["mb"], rss_mb(pid))
        return peak["mb"]

    with sampled(measure):
        yield peak


def vm_hwm_mb(pid: int) -> float:
    """The process's peak resident memory since it started (VmHWM), from /proc."""
    line = next(x for x in Path(f"/proc/{pid}/status").read_text().splitlines() if x.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024


def heavy_phase(server: Server, seconds: float, exporters: int) -> dict:
    """The attacker's heavy jobs (and ``exporters`` export loops) for ``seconds``, in a process of its own, while
    the victim calls /predict; in the last ``PAGE_CHECK_SECONDS`` the victim loads the page and analyzes."""
    note(f"heavy: {HEAVY_SLOTS} Integrated Gradients jobs in flight, {exporters} export loops, {seconds:.0f} s")
    spawn = multiprocessing.get_context("spawn")  # a fresh interpreter: no threads of this one forked
    with ProcessPoolExecutor(1, mp_context=spawn) as pool, peak_rss(server.proc.pid) as peak:
        attack = pool.submit(heavy_attack, server.url, seconds, exporters)
        try:
            latencies, failures = victim_predicts(server.url, time.monotonic() + seconds - PAGE_CHECK_SECONDS)
            page_ok, page_said = victim_page_check(server.url)
            attacker = attack.result(timeout=seconds + 120)
        except BaseException:
            STOP.set()
            raise
    note(f"heavy: attacker {dict(attacker)}; victim {len(latencies)} completed, failures {dict(failures)}")
    hwm = vm_hwm_mb(server.proc.pid)
    memory = {"peak_mb": max(peak["mb"], hwm), "sampled_peak_mb": peak["mb"]}
    return {"latencies": latencies, "failures": failures, "page": (page_ok, page_said), "attacker": attacker} | memory


def heavy_rows(phase: dict) -> list[dict]:
    latencies, failures, attacker = phase["latencies"], phase["failures"], phase["attacker"]
    calls, errors = len(latencies) + failures.total(), failures.total()
    p95 = p95_ms(latencies) / 1000 if latencies else float("inf")
    why = f" ({', '.join(f'{k} x{n}' for k, n in failures.most_common(3))})" if errors else ""
    submitted, done = attacker["attributions submitted"], attacker["attributions complete"]
    refused = sum(attacker[f"attributions http {code}"] for code in REFUSED)
    ended = sum(n for k, n in attacker.items() if k.startswith("attributions ")) - submitted
    attack = f"heavy ({HEAVY_SLOTS} IG jobs, steps={HEAVY_STEPS}, 10k chars)"
    return [
        row(attack, "victim /predict errors", f"{errors} of {calls}{why}", "0", errors == 0, failures=failures),
        row(attack, "victim /predict p95 latency", f"{p95:.2f} s ({len(latencies)} completed)", "≤ 2 s", p95 <= 2),
        row(
            attack,
            "victim loads the page and analyzes (end of phase)",
            phase["page"][1],
            "200, completes",
            phase["page"][0],
        ),
        row(
            attack,
            "attacker refusals (429/503)",
            f"{refused} of {submitted} submissions; {done} jobs completed, {submitted - ended} in flight at the end",
            "(information)",
            None,
            attacker=attacker,
        ),
    ]


def run_once(url: str) -> Counter:
    """One /gradio_api/run/attributions call (Gradio's route that skips the queue while the API is open)."""
    body = {"data": [HEAVY_TEXT, "predicted", HEAVY_STEPS, "pad"]}
    with client(url, ATTACKER, timeout=120) as http:
        return Counter([attempt(lambda: f"http {http.post('/gradio_api/run/attributions', json=body).status_code}")])


def burst_rows(server: Server) -> list[dict]:
    note(f"memory: {RUN_BURST} parallel /gradio_api/run/attributions calls")
    with peak_rss(server.proc.pid) as peak:
        outcomes = in_threads([(run_once, server.url)] * RUN_BURST)
    refused = sum(outcomes[f"http {code}"] for code in REFUSED)
    figure = f"{peak['mb']:.0f} MB; {refused} refused (429/503); answers {dict(outcomes)}"
    return [
        row(
            "memory",
            f"/run/attributions x{RUN_BURST} parallel: peak RSS",
            figure,
            "≤ 1.5 GB",
            peak["mb"] <= 1536,
            outcomes=outcomes,
        )
    ]


def peak_row(phase: dict) -> dict:
    figure = f"{phase['peak_mb']:.0f} MB (sampled every {RSS_EVERY} s: {phase['sampled_peak_mb']:.0f} MB)"
    return row(
        "memory",
        f"server peak RSS (VmHWM), heavy phase + {EXPORT_LOOPS} export loops",
        figure,
        "≤ 1.5 GB",
        phase["peak_mb"] <= 1536,
    )


def settle_row(server: Server, start_mb: float) -> dict:
    note(f"memory: {SETTLE_SECONDS} s idle before measuring again")
    deadline = time.monotonic() + SETTLE_SECONDS
    while alive(deadline):
        time.sleep(0.5)
    after_mb = rss_mb(server.proc.pid)
    figure = f"{after_mb:.0f} MB vs {start_mb:.0f} MB at start ({after_mb - start_mb:+.0f} MB)"
    return row(
        "memory",
        f"RSS {SETTLE_SECONDS} s after the attacks stop",
        figure,
        "within 100 MB of start",
        abs(after_mb - start_mb) <= 100,
    )


def upload_flood(server: Server) -> tuple[str, int]:
    """One multipart POST of ``UPLOAD_FILES`` files of 512 bytes: (answer, files added under the temp folder)."""
    files_before = folder_bytes(server.temp)[1]
    files = [("files", (f"note-{i}.txt", secrets.token_bytes(512), "text/plain")) for i in range(UPLOAD_FILES)]
    with client(server.url, ATTACKER, timeout=120) as http:
        answer = attempt(lambda: f"http {http.post('/gradio_api/upload', files=files).status_code}")
    time.sleep(2)  # Gradio moves uploads into its cache in a background task
    return answer, folder_bytes(server.temp)[1] - files_before


def disk_rows(server: Server, seconds: float) -> list[dict]:
    note(f"disk: {EXPORT_LOOPS} export loops for {seconds:.0f} s, then {UPLOAD_FILES} files in one upload")
    bytes_before = folder_bytes(server.temp)[0]
    deadline = time.monotonic() + seconds
    outcomes = until_deadline([(export_loop, server.url, deadline)] * EXPORT_LOOPS, deadline)
    time.sleep(2)  # an export in flight at the deadline may still write
    added_mb = (folder_bytes(server.temp)[0] - bytes_before) / 2**20
    answer, files_added = upload_flood(server)
    exports = f"{added_mb:.1f} MB added after {outcomes.total()} exports ({dict(outcomes)})"
    return [
        row(
            "disk",
            f"bytes added under TMPDIR/GRADIO_TEMP_DIR, {seconds:.0f} s of exports",
            exports,
            "≤ 64 MB",
            added_mb <= 64,
            outcomes=outcomes,
        ),
        row(
            "disk",
            f"files written by one upload of {UPLOAD_FILES} files ≤ 1 KB",
            f"{files_added} ({answer})",
            "0",
            files_added == 0,
        ),
    ]


def private_outcomes(url: str, event: dict, data: list) -> Counter:
    """One private event on /call/<api_name> and on /run/<api_name>, as an API caller would send it."""
    name = event["api_name"]
    with client(url, ATTACKER) as http:
        called = attempt(call_api, http, name, data)
        ran = attempt(lambda: f"http {http.post(f'/gradio_api/run/{name}', json={'data': data}).status_code}")
    return Counter({("call", name, called): 1, ("run", name, ran): 1})


def refusal(outcome: str) -> str | None:
    """'4xx' or 'error' for an answer that refused the call (an error result included); None for anything else."""
    if outcome.startswith("http 4"):
        return "4xx"
    return "error" if outcome in ("error", "http 500") else None


def private_rows(server: Server) -> list[dict]:
    with client(server.url, ATTACKER) as http:
        config = page_config(http)
    private = [e for e in config["dependencies"] if e.get("api_visibility") == "private"]
    note(f"private: {len(private)} private events on /call/ and /run/")
    outcomes = in_threads([(private_outcomes, server.url, e, event_inputs(config, e)) for e in private], workers=4)
    kinds = Counter(refusal(outcome) for _, _, outcome in outcomes)
    ran = sorted({f"{route} {name}" for route, name, outcome in outcomes if outcome in ("complete", "http 200")})
    note(f"private: these ran: {', '.join(ran)}")
    refused, total = kinds["4xx"] + kinds["error"], outcomes.total()
    figure = f"{refused}/{total} refused (4xx {kinds['4xx']}, error result {kinds['error']}); {len(ran)} ran"
    return [
        row(
            "private events",
            "each private event on /call/ and /run/",
            figure,
            "all refused",
            refused == total,
            ran=ran,
            outcomes={" ".join(k): n for k, n in outcomes.items()},
        )
    ]


def flood_thread(url: str, request, numbers: range, deadline: float) -> Counter:
    """``request(http, i)`` for each i in ``numbers``, request i from the i-th of ``FLOOD_ADDRESSES`` addresses."""
    outcomes = Counter()
    with contextlib.ExitStack() as stack:
        https = {}
        for number in numbers:
            if not alive(deadline):
                break
            address = f"127.0.2.{number % FLOOD_ADDRESSES + 1}"
            if address not in https:
                https[address] = stack.enter_context(client(url, address))
            outcomes[attempt(request, https[address], number)] += 1
    return outcomes


def flood(url: str, request, count: int = FLOOD_COUNT) -> tuple[Counter, float]:
    """``request(http, i)`` for each i < ``count`` on ``FLOOD_THREADS`` attacker threads, or until ``FLOOD_SECONDS``."""
    deadline, start = time.monotonic() + FLOOD_SECONDS, time.perf_counter()
    jobs = [(flood_thread, url, request, range(t, count, FLOOD_THREADS), deadline) for t in range(FLOOD_THREADS)]
    return in_threads(jobs), time.perf_counter() - start


def redraw_in_new_session(event: dict, data: list, http: httpx.Client, number: int) -> str:
    """The page's cheap queue=False redraw with a session hash never seen: Gradio makes a session for it."""
    return f"http {run_page_event(http, event, data, new_session())[0]}"


def attention_drawn(http: httpx.Client, event: dict, data: list, session: str) -> bool:
    """Whether the redraw in ``session`` draws a figure from its kept analysis (a lost session gets a skip). The
    figure is found among the outputs: the view's draw event also writes the current view and the address stamp."""
    status, outputs = run_page_event(http, event, data, session)
    return status == 200 and any(isinstance(output, dict) and output.get("type") == "plotly" for output in outputs)


def sessions_rows(server: Server) -> list[dict]:
    with client(server.url, VICTIM) as http:
        config, session = page_config(http), new_session()
        show, redraw = page_event(config, "show_text"), click_event(config)
        analyzed, _ = join_page_event(http, show, event_inputs(config, show, {TEXT_ELEM: SENTENCE}), session)
        redraw_data = event_inputs(config, redraw)
        drawn_before = attention_drawn(http, redraw, redraw_data, session)
        note(f"sessions: victim analyzed ({analyzed}, view drawn: {drawn_before}); {FLOOD_COUNT} new sessions")
        outcomes, took = flood(server.url, functools.partial(redraw_in_new_session, redraw, redraw_data))
        drawn_after = attention_drawn(http, redraw, redraw_data, session)
    figure = f"{'survives' if drawn_after else 'lost'} (before: {'drawn' if drawn_before else 'not drawn'}); "
    figure += f"{outcomes.total()} requests in {took:.0f} s: {dict(outcomes)}"
    return [
        row(
            "sessions",
            f"victim's session after {FLOOD_COUNT} new session hashes from {FLOOD_ADDRESSES} addresses",
            figure,
            "survives",
            drawn_before and drawn_after,
            outcomes=outcomes,
        )
    ]


def link_data(config: dict, event: dict, text: str) -> list:
    return event_inputs(config, event, {TEXT_ELEM: text})


def attacker_link(config: dict, event: dict, http: httpx.Client, number: int) -> str:
    """One shared link of a new text on the direct route (/run/predict by number); the queue where that is closed."""
    data = link_data(config, event, f"link {number}: {SENTENCE}")
    status, _ = run_page_event(http, event, data, None)
    if status in (403, 404, 405):
        return f"queue {join_page_event(http, event, data, new_session())[0]}"
    return f"http {status}"


def shown_value(output):
    """A component's value in an event's output: the value itself, or an update's ``value``."""
    return output.get("value") if isinstance(output, dict) else output


def link_opens(http: httpx.Client, config: dict, server: Server, key: str, text: str) -> tuple[bool, str]:
    """Whether the link ``key`` is stored, its address answers, and the page load restores its ``text``."""
    stored = (server.temp / LINK_DIR / f"{key}.json").is_file()
    page = http.get("/", params={"link": key}).status_code
    load = page_event(config, "restore_page")
    outcome, outputs = join_page_event(http, load, [], new_session(), params={"link": key})
    text_at = [elem_ids(config)[i] for i in load["outputs"]].index(RESTORED_ELEM)
    restored = outcome == "complete" and shown_value(outputs[text_at]) == text
    loaded = "yes" if restored else f"no (the load: {outcome})"
    said = f"stored: {'yes' if stored else 'no'}, GET /?link= {page}, page load restores it: {loaded}"
    return stored and page == 200 and restored, said


def links_rows(server: Server) -> list[dict]:
    text = f"The victim's shared view: {SENTENCE}"
    with client(server.url, VICTIM) as http:
        config = page_config(http)
        share = page_event(config, "share_link")
        made, outputs = join_page_event(http, share, link_data(config, share, text), new_session())
        key = shown_value(outputs[0]) if made == "complete" else ""
        if key:  # opened once, as a shared link is
            link_opens(http, config, server, key, text)
        note(f"links: victim's link {key or made}; the attackers make {FLOOD_COUNT}")
        outcomes, took = flood(server.url, functools.partial(attacker_link, config, share))
        opens, said = link_opens(http, config, server, key, text) if key else (False, f"no link made ({made})")
    figure = f"{'opens' if opens else 'broken'} ({said}); {outcomes.total()} links in {took:.0f} s: {dict(outcomes)}"
    return [
        row(
            "links",
            f"victim's opened link after {FLOOD_COUNT} links from {FLOOD_ADDRESSES} addresses",
            figure,
            "still opens",
            opens,
            outcomes=outcomes,
        )
    ]


def timed(request, *args) -> tuple[object, float]:
    start = time.perf_counter()
    return request(*args), time.perf_counter() - start


def remote_file_row(http: httpx.Client) -> dict:
    answer, took = timed(http.get, "/gradio_api/file=https://example.com/")
    refused = 400 <= answer.status_code < 500 and took < 2
    return row(
        "small",
        "/gradio_api/file=https://example.com/ refused, no fetch",
        f"{answer.status_code} in {took:.2f} s",
        "4xx in < 2 s",
        refused,
    )


def monitoring_row(http: httpx.Client) -> dict:
    answer = http.get("/monitoring/summary")
    public = answer.status_code == 200 and answer.content.strip() not in (b"", b"{}", b"null")
    figure = f"{answer.status_code}, {len(answer.content)} bytes" + (" of analytics" if public else "")
    return row("small", "/monitoring/summary not public", figure, "not 200 with data", not public)


def headers_row(http: httpx.Client) -> dict:
    headers = http.get("/").headers
    csp = headers.get("content-security-policy", "")
    found = {
        "CSP frame-ancestors": "frame-ancestors" in csp,
        "nosniff": headers.get("x-content-type-options") == "nosniff",
    }
    found["Referrer-Policy"] = "referrer-policy" in headers
    figure = ", ".join(f"{name}: {'yes' if present else 'no'}" for name, present in found.items())
    return row("small", "GET / security headers", figure, "all three", all(found.values()))


def knockout_row(http: httpx.Client) -> dict:
    heads = ["L1 H1"] * 1_000_000
    outcome, took = timed(attempt, call_api, http, "knockout", [SENTENCE, heads])
    refused = outcome != "complete" and took < 2
    return row(
        "small",
        "/call/knockout with a 1,000,000-entry heads list refused quickly",
        f"{outcome} in {took:.1f} s",
        "refused in < 2 s",
        refused,
    )


def small_rows(server: Server) -> list[dict]:
    note("small: remote file, monitoring, headers, a huge heads list")
    with client(server.url, ATTACKER) as http:
        return [check(http) for check in (remote_file_row, monitoring_row, headers_row, knockout_row)]


# Issue 36: a crowd, a race, unread answers, a rotated hop, unknown routes, MCP callers


def heavy_body() -> dict:
    return {"data": [HEAVY_TEXT, "predicted", HEAVY_STEPS, "pad"]}


def released_together(count: int, work) -> list:
    """``work(i)`` on ``count`` threads released at once by a barrier (bounded: each waits at most 60 s)."""
    barrier, answers = threading.Barrier(count), [None] * count

    def run(i: int) -> None:
        with contextlib.suppress(threading.BrokenBarrierError):
            barrier.wait(60)
            answers[i] = work(i)

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(180)
    return answers


def admitted_cap(endpoint: str, text: str) -> int:
    """How many ``endpoint`` jobs on ``text`` one client's budget admits (``admission``), for the target."""
    from transformer.explorer.serving import admission

    return int((admission.CLIENT_BUDGET - admission.LIGHT_RESERVE) // admission.job_cost(endpoint, len(text)))


def post_code(url: str, address: str, path: str, body: dict, headers: dict | None = None) -> int | str:
    with client(url, address) as http:
        return attempt(lambda: http.post(path, json=body, headers=headers).status_code)


def burst_attack_rows(server: Server) -> list[dict]:
    note(f"burst: {BURST} heavy submissions from one address released by a barrier")
    codes = released_together(
        BURST, lambda i: post_code(server.url, "127.0.0.9", "/gradio_api/call/attributions", heavy_body())
    )
    cap, admitted = admitted_cap("attributions", HEAVY_TEXT), codes.count(200)
    figure = f"{admitted} admitted of {BURST}; answers {dict(Counter(codes))}"
    return [row("burst", f"{BURST} simultaneous heavy submissions, one address", figure, f"≤ {cap}", admitted <= cap)]


def unread_loop(url: str, deadline: float, tally: Tally) -> None:
    """Submit /walkthrough jobs (step 9, its largest answer) on a 10,000-character text and never read one answer,
    until ``deadline``."""
    with client(url, "127.0.0.10") as http:
        while alive(deadline):
            code = attempt(
                lambda: http.post("/gradio_api/call/walkthrough", json={"data": [HEAVY_TEXT, 9, 1, 1]}).status_code
            )
            tally.add(f"http {code}")
            if code != 200:
                time.sleep(REFUSED_PAUSE)


def unread_rows(server: Server, seconds: float) -> list[dict]:
    note(f"unread: one address submits /walkthrough for {seconds:.0f} s and reads nothing")
    start_mb = rss_mb(server.proc.pid)
    with peak_rss(server.proc.pid) as peak:
        outcomes = until_deadline(
            [(unread_loop, server.url, time.monotonic() + seconds)] * 4, time.monotonic() + seconds
        )
        deadline = time.monotonic() + UNREAD_SETTLE_SECONDS
        while alive(deadline):
            time.sleep(0.5)
    after_mb = rss_mb(server.proc.pid)
    measured = f"RSS {UNREAD_SETTLE_SECONDS} s after {seconds:.0f} s of unread /walkthrough"
    figure = (
        f"{after_mb:.0f} MB vs {start_mb:.0f} MB before ({after_mb - start_mb:+.0f} MB); submissions {dict(outcomes)}"
    )
    return [
        row("unread", measured, figure, "within 300 MB", abs(after_mb - start_mb) <= 300, outcomes=outcomes),
        row("unread", "peak RSS during it", f"{peak['mb']:.0f} MB", "≤ 1.5 GB", peak["mb"] <= 1536),
    ]


def crowd_slot(url: str, address: str, deadline: float, tally: Tally) -> None:
    """One of an address's heavy jobs: an Integrated Gradients job at a time, read, until ``deadline``."""
    with client(url, address, timeout=120) as http:
        while alive(deadline):
            outcome = attempt(call_api, http, "attributions", heavy_body()["data"])
            tally.add(outcome)
            if outcome.startswith("http"):
                time.sleep(REFUSED_PAUSE)


def crowd_attack(url: str, seconds: float) -> Counter:
    """The crowd's process: ``CROWD_JOBS`` heavy jobs in flight from each of ``CROWD_ADDRESSES`` addresses."""
    deadline = time.monotonic() + seconds
    addresses = [f"127.0.1.{i + 1}" for i in range(CROWD_ADDRESSES)]
    return until_deadline([(crowd_slot, url, address, deadline) for address in addresses] * CROWD_JOBS, deadline)


def crowd_rows(server: Server, seconds: float) -> list[dict]:
    note(f"crowd: {CROWD_ADDRESSES} addresses x {CROWD_JOBS} heavy jobs for {seconds:.0f} s; the victim calls /predict")
    # The crowd's 160 threads in a process of their own, as in the heavy phase: on the victim's interpreter they
    # held its GIL while it timed its calls (its p95 counted their reading of answers and refusals).
    spawn = multiprocessing.get_context("spawn")
    with peak_rss(server.proc.pid) as peak, ProcessPoolExecutor(1, mp_context=spawn) as pool:
        crowd = pool.submit(crowd_attack, server.url, seconds)
        latencies, failures = victim_predicts(server.url, time.monotonic() + seconds)
        attackers = crowd.result(timeout=seconds + 120)
    calls, p95 = len(latencies) + failures.total(), p95_ms(latencies) / 1000 if latencies else float("inf")
    attack = f"crowd ({CROWD_ADDRESSES} addresses x {CROWD_JOBS} IG jobs)"
    return [
        row(attack, "victim /predict errors", f"{failures.total()} of {calls} {dict(failures)}", "0", not failures),
        row(attack, "victim /predict p95 latency", f"{p95:.2f} s ({len(latencies)} completed)", "≤ 3 s", p95 <= 3),
        row(attack, "peak RSS", f"{peak['mb']:.0f} MB; attackers {dict(attackers)}", "≤ 1.5 GB", peak["mb"] <= 1536),
    ]


def rotate_rows(server: Server) -> list[dict]:
    note(f"rotate: one connection, {BURST} heavy jobs, each with a new left-hand X-Forwarded-For hop")

    def rotated(i: int) -> int | str:
        headers = {"x-forwarded-for": f"10.9.{i // 250}.{i % 250 + 1}, 203.0.113.9"}  # the proxy appends the last
        return post_code(server.url, "127.0.0.11", "/gradio_api/call/attributions", heavy_body(), headers)

    codes = released_together(BURST, rotated)
    cap, admitted = admitted_cap("attributions", HEAVY_TEXT), codes.count(200)
    figure = f"{admitted} admitted of {BURST}; answers {dict(Counter(codes))}"
    return [row("rotate", "rotated left-hand hop, trusted hops 1", figure, f"≤ {cap}", admitted <= cap)]


class Listener:
    """A TCP listener on loopback that counts connections: a URL fetch by the server would reach it."""

    def __init__(self):
        import socket

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.sock.settimeout(0.2)
        self.port, self.connections, self.stop = self.sock.getsockname()[1], 0, threading.Event()
        self.thread = threading.Thread(target=self.accept, daemon=True)
        self.thread.start()

    def accept(self) -> None:
        while not self.stop.is_set():
            with contextlib.suppress(OSError):
                conn, _ = self.sock.accept()
                self.connections += 1
                conn.close()

    def close(self) -> None:
        self.stop.set()
        self.thread.join(5)
        self.sock.close()


def status_of(request, path: str, options: dict) -> int:
    return request(path, **options).status_code


def routes_rows(server: Server) -> list[dict]:
    note(f"routes: {PROBES} process_recording uploads and {PROBES} file/ fetches")
    files_before, listener = folder_bytes(server.temp)[1], Listener()
    recordings, fetches = Counter(), Counter()
    try:
        with client(server.url, ATTACKER) as http:
            for i in range(PROBES):
                upload = {"video": (f"r{i}.webm", secrets.token_bytes(900), "video/webm")}
                recordings[attempt(status_of, http.post, "/gradio_api/process_recording", {"files": upload})] += 1
                fetch = f"/gradio_api/{('file/', 'file=')[i % 2]}http://127.0.0.1:{listener.port}/x{i}"
                fetches[attempt(status_of, http.get, fetch, {})] += 1
        time.sleep(2)
    finally:
        listener.close()
    files_added = folder_bytes(server.temp)[1] - files_before
    return [
        row(
            "routes",
            f"files written by {PROBES} process_recording",
            f"{files_added} ({dict(recordings)})",
            "0",
            files_added == 0,
        ),
        row(
            "routes",
            f"fetches by {PROBES} file/ and file= URLs",
            f"{listener.connections} ({dict(fetches)})",
            "0",
            listener.connections == 0,
        ),
    ]


async def mcp_calls(url: str, address: str, calls: list[tuple[str, dict]]) -> list:
    """``calls`` as MCP tool calls, all at once, from ``address``: each result, or the exception's name."""
    import mcp
    from mcp.client.streamable_http import streamable_http_client

    transport = httpx.AsyncHTTPTransport(local_address=address)
    async with (
        httpx.AsyncClient(transport=transport, trust_env=False, timeout=120) as http,
        streamable_http_client(f"{url}/gradio_api/mcp/", http_client=http) as (read, write, _),
        mcp.ClientSession(read, write) as session,
    ):
        await session.initialize()
        tasks = [session.call_tool(name, arguments) for name, arguments in calls]
        return await asyncio.gather(*tasks, return_exceptions=True)


def mcp_outcome(result) -> str:
    if isinstance(result, BaseException):
        return type(result).__name__
    return "error: " + result.content[0].text[:80] if result.isError else "ok"


def mcp_rows(server: Server) -> list[dict]:
    note("mcp: one MCP client keeps 8 heavy calls in flight; a second calls /predict")
    heavy = [
        ("attributions", dict(zip(["text", "target", "steps", "baseline"], heavy_body()["data"], strict=True)))
    ] * 8

    async def both() -> tuple[list, list]:
        first = asyncio.create_task(mcp_calls(server.url, "127.0.0.12", heavy))
        await asyncio.sleep(2)
        second = await mcp_calls(server.url, "127.0.0.13", [("predict", {"text": SENTENCE})])
        return await first, second

    try:
        first, second = asyncio.run(asyncio.wait_for(both(), 300))
    except ImportError:
        return [row("mcp", "two MCP clients", "mcp package missing", "", None)]
    outcomes, said = Counter(mcp_outcome(r) for r in first), mcp_outcome(second[0])
    leaks = sum("127.0.0.1" in text or "http://" in text for text in outcomes)
    figure = f"second: {said}; first: {dict(outcomes)}"
    return [
        row("mcp", "second MCP client's /predict while the first holds 8 heavy calls", figure, "ok", said == "ok"),
        row("mcp", "refusals naming an internal URL", str(leaks), "0", leaks == 0),
    ]


# Issue 52: a crowd that cancels at once, reads slowly or mixes weights; a lone surrogate


def runnable_threads(pid: int) -> int:
    """How many of the process's threads are running or ready to run now (state R in /proc)."""
    count = 0
    for stat in Path(f"/proc/{pid}/task").glob("*/stat"):
        with contextlib.suppress(OSError, IndexError):
            count += stat.read_text().rsplit(")", 1)[1].split()[0] == "R"
    return count


def job_threads(pid: int, name: str) -> int:
    """How many of the process's threads are named ``name`` now: running a job of a lane (``launch.job_thread_name``:
    named once the job holds its lane's slot, until its thread returns, a cancelled job's too)."""
    count = 0
    for comm in Path(f"/proc/{pid}/task").glob("*/comm"):
        with contextlib.suppress(OSError):
            count += comm.read_text().rstrip("\n") == name
    return count


def busy_threads(pid: int):
    """While inside: the server's runnable threads and its threads running a model job, sampled every ``RSS_EVERY``
    s; yields the list of samples, each a pair."""
    return sampled(lambda: (runnable_threads(pid), job_threads(pid, MODEL_JOB_THREAD)))


def cancel_once(http: httpx.Client, fn_index: int) -> str:
    """Submit a heavy /attributions job, cancel it 0.02-0.1 s later, read its (null) result: the cancel's status."""
    answer = http.post("/gradio_api/call/attributions", json=heavy_body())
    if answer.status_code != 200:
        return f"submit http {answer.status_code}"
    event_id = answer.json()["event_id"]
    time.sleep(0.02 + 0.08 * secrets.randbelow(1000) / 1000)
    body = {"event_id": event_id, "session_hash": event_id, "fn_index": fn_index}
    cancelled = http.post("/gradio_api/cancel", json=body)
    http.get(f"/gradio_api/call/attributions/{event_id}")
    return f"cancel http {cancelled.status_code}"


def cancel_loop(url: str, deadline: float, tally: Tally) -> None:
    with client(url, ATTACKER) as http:
        fn_index = page_event(page_config(http), "attributions")["id"]
        while alive(deadline):
            outcome = attempt(cancel_once, http, fn_index)
            tally.add(outcome)
            if outcome.startswith("submit http"):
                time.sleep(REFUSED_PAUSE)


def cancel_rows(server: Server) -> list[dict]:
    note(f"cancel: one address submits and cancels heavy jobs in {CANCEL_LOOPS} loops for {CANCEL_SECONDS} s")
    deadline, pid = time.monotonic() + CANCEL_SECONDS, server.proc.pid
    with ThreadPoolExecutor(1) as pool, peak_rss(pid) as peak, busy_threads(pid) as busy:
        attack = pool.submit(until_deadline, [(cancel_loop, server.url, deadline)] * CANCEL_LOOPS, deadline)
        latencies, failures = victim_predicts(server.url, deadline)
        outcomes = attack.result()
    p95 = p95_ms(latencies) / 1000 if latencies else float("inf")
    workers = len(os.sched_getaffinity(0))  # the model lane's workers, one per core (launch.model_workers)
    runnable, jobs = max((r for r, _ in busy), default=0), max((j for _, j in busy), default=0)
    return [
        row("cancel", "threads running a model job at once (max of samples)", f"{jobs}; attacker {dict(outcomes)}",
            f"1 to {workers} (the model lane's workers; 0: none seen)", 1 <= jobs <= workers, outcomes=outcomes),
        row("cancel", "runnable server threads (max of samples)", f"{runnable} (Gradio's own included)", "", None),
        row("cancel", "peak RSS", f"{peak['mb']:.0f} MB", "≤ 1.5 GB", peak["mb"] <= 1536),
        row("cancel", "victim /predict p95", f"{p95:.2f} s ({len(latencies)} completed, failures {dict(failures)})",
            "≤ 1 s", p95 <= 1),
    ]  # fmt: skip


def slow_stream(url: str, address: str) -> tuple[str, socket.socket | None]:
    """A 256-token /attention job, its answer stream opened on a 4 KB receive buffer and 512 bytes of it read."""
    with client(url, address) as http:
        answer = http.post("/gradio_api/call/attention", json={"data": [SLOW_TEXT, None, None]})
    if answer.status_code != 200:
        return f"http {answer.status_code}", None
    reader = socket.socket()
    reader.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    reader.bind((address, 0))
    reader.connect(("127.0.0.1", int(url.rsplit(":", 1)[1])))
    reader.sendall(f"GET /gradio_api/call/attention/{answer.json()['event_id']} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    reader.recv(512)
    return "held", reader


def slow_readers(url: str, address: str, deadline: float, held: list) -> Counter:
    """``SLOW_STREAMS / 3`` slow streams from ``address`` (a refusal waits and tries again), kept in ``held``."""
    outcomes = Counter()
    while alive(deadline) and outcomes["held"] < SLOW_STREAMS // len(SLOW_ADDRESSES):
        outcome = attempt(lambda: slow_stream(url, address))
        outcome, reader = outcome if isinstance(outcome, tuple) else (outcome, None)
        outcomes[outcome] += 1
        if reader is None:
            time.sleep(REFUSED_PAUSE)
        else:
            held.append(reader)
    return outcomes


def slow_rows(server: Server) -> list[dict]:
    note(f"slow: {SLOW_STREAMS} answer streams from {len(SLOW_ADDRESSES)} addresses, read 512 bytes, held")
    start_mb, held, deadline = rss_mb(server.proc.pid), [], time.monotonic() + SLOW_OPEN_SECONDS
    with peak_rss(server.proc.pid) as peak:
        outcomes = in_threads([(slow_readers, server.url, address, deadline, held) for address in SLOW_ADDRESSES])
        hold = time.monotonic() + SLOW_HOLD_SECONDS
        while alive(hold):
            time.sleep(0.5)
    end_mb = rss_mb(server.proc.pid)
    cut = sum(closed_by_server(reader) for reader in held)
    for reader in held:
        reader.close()
    growth = peak["mb"] - start_mb
    figure = f"+{growth:.0f} MB ({start_mb:.0f} -> {peak['mb']:.0f}, {end_mb:.0f} at the end); {dict(outcomes)}; "
    figure += f"{cut} cut off by the server"
    return [row("slow", f"RSS growth while slow streams are held ({SLOW_HOLD_SECONDS} s)", figure, "≤ 300 MB",
                growth <= 300, outcomes=outcomes)]  # fmt: skip


def closed_by_server(reader: socket.socket) -> bool:
    """Whether the server has closed (or cut off) ``reader``'s connection: it reads what is there, without waiting."""
    reader.setblocking(False)
    try:
        while reader.recv(65536):
            pass
    except BlockingIOError:
        return False
    except OSError:
        return True
    return True


def weighted_loop(url: str, address: str, api_name: str, data: list, deadline: float, waits: list) -> Counter:
    """``api_name`` jobs from ``address`` one after another until ``deadline``: outcomes; each completion's seconds
    from submission go to ``waits``."""
    outcomes = Counter()
    with client(url, address, timeout=120) as http:
        while alive(deadline):
            outcome, seconds = timed(attempt, call_api, http, api_name, data)
            outcomes[outcome] += 1
            if outcome == "complete":
                waits.append(seconds)
            elif outcome.startswith("http"):
                time.sleep(REFUSED_PAUSE)
    return outcomes


def weighted_rows(server: Server) -> list[dict]:
    note(f"weighted: one address loops /faithfulness (cost 6) among {len(LIGHTER)} looping cost-2 calls")
    deadline, heavy_waits, light_waits = time.monotonic() + WEIGHTED_SECONDS, [], []
    light = [(weighted_loop, server.url, a, "attributions", LIGHTER_DATA, deadline, light_waits) for a in LIGHTER]
    heavy = (weighted_loop, server.url, HEAVIER, "faithfulness", HEAVIER_DATA, deadline, heavy_waits)
    outcomes = in_threads([heavy, *light])
    longest = max(heavy_waits, default=float("inf"))
    figure = f"{len(heavy_waits)} completed, longest {longest:.1f} s; lighter: {len(light_waits)} completed"
    met = len(heavy_waits) >= 3 and longest <= 15
    measured = f"heavy caller among lighter ones for {WEIGHTED_SECONDS} s"
    return [row("weighted", measured, figure, "≥ 3 completions, none > 15 s", met, outcomes=outcomes)]


def surrogate_rows(server: Server) -> list[dict]:
    note(f"surrogate: {SURROGATE_CALLS} /predict calls with a lone surrogate")
    log, before = server.temp / SERVER_LOG, (server.temp / SERVER_LOG).stat().st_size
    lines_before = (server.temp / SERVER_LOG).read_bytes().count(b"\n")
    said = Counter()
    with client(server.url, ATTACKER) as http:
        for _ in range(SURROGATE_CALLS):
            said[attempt(surrogate_answer, http)] += 1
    grown, lines = log.stat().st_size - before, log.read_bytes().count(b"\n") - lines_before
    clear = said["invalid Unicode"]
    return [
        row("surrogate", f"answers naming the invalid text, of {SURROGATE_CALLS}", f"{clear}; {dict(said)}",
            f"{SURROGATE_CALLS}", clear == SURROGATE_CALLS, said=said),
        row("surrogate", "server log growth", f"{grown:,} bytes, {lines} lines", f"≤ {SURROGATE_CALLS} lines",
            lines <= SURROGATE_CALLS),
    ]  # fmt: skip


def surrogate_answer(http: httpx.Client) -> str:
    body = json.dumps({"data": ["a wonderful \ud800 film"]})  # escaped: httpx's json= would refuse to encode it
    answer = http.post("/gradio_api/call/predict", content=body, headers={"content-type": "application/json"})
    if answer.status_code != 200:
        return f"http {answer.status_code}"
    said = http.get(f"/gradio_api/call/predict/{answer.json()['event_id']}").text
    return "invalid Unicode" if "invalid Unicode" in said else said.strip().splitlines()[-1][:60]


def guarded(name: str, attack, *args) -> list[dict]:
    """``attack(*args)``'s rows, or one row saying why it could not run (the other attacks still run)."""
    try:
        return attack(*args)
    except Exception as error:  # reported in the table, never hidden
        note(f"{name}: could not run: {error!r}")
        return [row(name, "the attack itself", f"could not run: {type(error).__name__}: {error}"[:160], "", False)]


def warm_up(server: Server) -> float:
    """The victim's first /predict calls (the server may still be starting); the server's RSS after them."""
    deadline = time.monotonic() + 120
    with client(server.url, VICTIM) as http:
        while attempt(call_api, http, "predict", [SENTENCE]) != "complete":
            if not alive(deadline):
                raise RuntimeError("the server never answered /predict")
            time.sleep(1)
        for _ in range(3):
            call_api(http, "predict", [SENTENCE])
    return rss_mb(server.proc.pid)


def launch() -> Server:
    """``python app.py --port P`` with TMPDIR and GRADIO_TEMP_DIR in a fresh folder, and an empty data folder."""
    temp = Path(tempfile.mkdtemp(prefix="attack-"))
    (temp / "no-data").mkdir()
    env = {"TMPDIR": str(temp), "GRADIO_TEMP_DIR": str(temp / "gradio"), "SENTIMENT_DATA_DIR": str(temp / "no-data")}
    env["ATTENTION_EXPLORER_CACHE"] = str(temp / "cache")
    env["TRUSTED_PROXY_HOPS"] = "1"  # as on a Space: the rotated-hop attack sends the hop a proxy would append
    port = free_port()
    try:
        proc = start_server(["app.py"], port, env=env, log=temp / SERVER_LOG)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    return Server(proc, f"http://127.0.0.1:{port}", temp)


def stop(server: Server) -> None:
    server.proc.terminate()
    try:
        server.proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.proc.kill()
        server.proc.wait(timeout=30)
    shutil.rmtree(server.temp, ignore_errors=True)


def run_attacks(server: Server, chosen: set[str], seconds: float) -> list[dict]:
    """Each chosen attack in turn: the heavy phase, the memory and disk floods, the settle, then the short ones."""
    start_mb = warm_up(server)
    note(f"server RSS after warm-up: {start_mb:.0f} MB")
    rows = []
    if chosen & {"heavy", "memory"}:
        phase = heavy_phase(server, seconds, EXPORT_LOOPS if "memory" in chosen else 0)
        rows += (heavy_rows(phase) if "heavy" in chosen else []) + ([peak_row(phase)] if "memory" in chosen else [])
    if "memory" in chosen:
        rows += guarded("memory", burst_rows, server)
    if "disk" in chosen:
        rows += guarded("disk", disk_rows, server, seconds)
    if "memory" in chosen:
        rows.append(settle_row(server, start_mb))
    short = {"private": private_rows, "sessions": sessions_rows, "links": links_rows, "small": small_rows}
    short |= {"burst": burst_attack_rows, "rotate": rotate_rows, "routes": routes_rows, "mcp": mcp_rows}
    short |= {"cancel": cancel_rows, "slow": slow_rows, "weighted": weighted_rows, "surrogate": surrogate_rows}
    short |= {"unread": functools.partial(unread_rows, seconds=seconds)}
    short |= {"crowd": functools.partial(crowd_rows, seconds=seconds)}
    for name, attack in short.items():
        if name in chosen:
            rows += guarded(name, attack, server)
    return rows


def table(rows: list[dict]) -> str:
    lines = ["| attack | what was measured | figure | target | met? |", "|---|---|---|---|---|"]
    for r in rows:
        met = {True: "yes", False: "**MISSED**", None: "(info)"}[r["met"]]
        lines.append(f"| {r['attack']} | {r['measured']} | {r['figure'].replace('|', '/')} | {r['target']} | {met} |")
    return "\n".join(lines)


LOAD_LINE = "Ordinary load: the figure is `make load`'s (16 clients: 0 errors, and its p95); not rerun here."


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=60, help="the heavy phase and the export flood")
    parser.add_argument("--only", nargs="+", choices=ATTACKS, metavar="NAME", help=f"some of: {' '.join(ATTACKS)}")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the figures here")
    args = parser.parse_args(argv)
    started = time.monotonic()
    server = launch()
    note(f"server pid {server.proc.pid} at {server.url}, temporary folder {server.temp}")
    try:
        rows = run_attacks(server, set(args.only or ATTACKS), args.seconds)
    except BaseException:
        STOP.set()
        raise
    finally:
        stop(server)
    print(table(rows))
    print(f"\n{LOAD_LINE}")
    note(f"done in {time.monotonic() - started:.0f} s")
    if args.json:
        args.json.write_text(json.dumps({"seconds": args.seconds, "rows": rows}, indent=2, default=str) + "\n")


if __name__ == "__main__":
    main()
