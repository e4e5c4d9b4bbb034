"""``page/answer_stream.js`` in Node against a fake server (``answer_stream_driver.js``): it passes every event of a
stream of answers on as its bytes however the stream is cut into chunks, keeps the server's close from Gradio's
client, and opens the server's stream again only while an answer is due on it. The race it is for, in a browser:
``tests/browser/test_answer_stream_browser.py``."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from transformer.explorer.page import scripts

DRIVER = Path(__file__).with_name("answer_stream_driver.js")


def sse(kind: str, event_id: str | None, **fields) -> bytes:
    """One event as Gradio's ``queue/data`` writes it."""
    return f"data: {json.dumps({'msg': kind, 'event_id': event_id, **fields}, separators=(',', ':'))}\n\n".encode()


# Characters of two, three and four bytes, so that some cuts fall inside one
ANSWER = (
    sse("estimation", "e1", rank=0)
    + sse("process_completed", "e1", output={"data": ["naïve — café 😀"]}, success=True)
    + sse("heartbeat", None)
)
CLOSE = sse("close_stream", None)
DUE = sse("process_starts", "e2") + sse("process_completed", "e2", output={"data": ["ok"]}, success=True)


def run(cases: list[dict], tmp_path: Path) -> list[dict]:
    """Each case run by the driver, in one Node process: what the page's client read, and how it ended."""
    node = shutil.which("node")
    assert node, "node is needed (make install's npm brings it)"
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(cases), encoding="utf-8")
    script = scripts.HERE / "answer_stream.js"
    done = subprocess.run([node, str(DRIVER), str(script), str(path)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def cut(data: bytes, size: int) -> list[list[int]]:
    return [list(data[start : start + size]) for start in range(0, len(data), size)]


def test_every_event_is_passed_on_as_its_bytes_however_the_stream_is_cut(tmp_path):
    splits = [[list(ANSWER[:at]), list(ANSWER[at:])] for at in range(1, len(ANSWER))]
    chunked = [cut(ANSWER, size) for size in (1, 2, 3, 5, 64)]
    results = run([{"joins": [], "streams": [chunks]} for chunks in splits + chunked], tmp_path)
    assert all(bytes(result["read"]) == ANSWER for result in results)
    assert all(result["ended"] and result["opened"] == 1 for result in results)  # no close: its end passed on


def test_a_close_is_kept_from_the_client_and_no_stream_is_opened_while_no_answer_is_due(tmp_path):
    cases = [{"joins": [], "streams": [cut(ANSWER + CLOSE, size)]} for size in (1, 4, len(ANSWER + CLOSE))]
    for result in run(cases, tmp_path):
        assert bytes(result["read"]) == ANSWER and not result["ended"] and not result["failed"]
        assert result["opened"] == 1


def test_a_stream_closed_while_an_answer_is_due_is_opened_again_and_read(tmp_path):
    (result,) = run([{"joins": ["e2"], "streams": [[list(ANSWER + CLOSE)], [list(DUE + CLOSE)]]}], tmp_path)
    assert bytes(result["read"]) == ANSWER + DUE and result["opened"] == 2
    assert not result["ended"] and not result["failed"]  # e2's answer read: nothing more is asked for


def test_a_join_after_the_close_opens_the_stream_again(tmp_path):
    (result,) = run(
        [{"joins": [], "joinsLater": ["e2"], "streams": [[list(ANSWER + CLOSE)], [list(DUE + CLOSE)]]}], tmp_path
    )
    assert bytes(result["read"]) == ANSWER + DUE and result["opened"] == 2 and not result["ended"]


def test_an_answer_that_ended_before_its_join_was_read_is_not_waited_for(tmp_path):
    # e2's answer came whole on the stream before the page read e2's join: its join makes nothing due
    (result,) = run([{"joins": [], "joinsLater": ["e2"], "streams": [[list(DUE + CLOSE)]]}], tmp_path)
    assert bytes(result["read"]) == DUE and result["opened"] == 1


def test_an_event_dropped_without_an_end_is_no_longer_due_once_its_stream_closes(tmp_path):
    # e3 joined and had a message on the stream, then the server closed it: e3 was dropped, and no stream is held open
    dropped = sse("estimation", "e3", rank=0)
    (result,) = run([{"joins": ["e3"], "streams": [[list(dropped + CLOSE)]]}], tmp_path)
    assert bytes(result["read"]) == dropped and result["opened"] == 1 and not result["failed"]


def test_an_empty_chunk_between_an_events_two_line_feeds_keeps_the_event_whole(tmp_path):
    at = len(ANSWER) - 1  # between the last event's two line feeds, the close next
    chunks = [list(ANSWER[:at]), [], list(ANSWER[at:] + CLOSE)]
    (result,) = run([{"joins": [], "streams": [chunks]}], tmp_path)
    assert bytes(result["read"]) == ANSWER and not result["ended"]  # the close still kept from the client


def test_a_stream_refused_when_opened_again_fails_for_the_client(tmp_path):
    (result,) = run([{"joins": ["e2"], "streams": [[list(ANSWER + CLOSE)], None]}], tmp_path)
    assert bytes(result["read"]) == ANSWER and result["opened"] == 2
    assert "HTTP 404" in result["failed"]  # as a refused first stream: Gradio's client says the connection is lost
