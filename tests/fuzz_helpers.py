"""Hostile inputs and the checks every answer to them must pass, shared by the fuzz and security tests.

- Strategies: ``hostile_text`` (any Unicode, markup, controls, NUL, texts near and over the app's size cap),
  ``hostile_int`` (out-of-range and negative indices), ``any_json`` (wrong types), and ``for_schema``, which
  turns an endpoint parameter's JSON schema (as ``gradio_client.Client.view_api`` reports it) into values of
  that type, hostile ones included.
- ``leaks``: what in a message sent to a client betrays the server (a stack trace, a file path, an exception
  class); ``is_clear_sentence``: whether a message reads as a sentence written for a person.
- ``QueueCaller``: call any of the app's events by ``fn_index`` over plain HTTP, as the browser does. That
  reaches the UI's own events too (``api_visibility="private"`` only hides them from gradio_client and the API
  page; the server runs them for anyone who posts them).

Importing this module imports ``app_fixtures`` first, which switches Gradio analytics and Hub access off.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from dataclasses import dataclass
from html.parser import HTMLParser

import app_fixtures  # noqa: F401  (sets GRADIO_ANALYTICS_ENABLED=False and HF_HUB_OFFLINE=1 before gradio loads)
import httpx
from hypothesis import strategies as st

from transformer.explorer import analysis

CAP = analysis.MAX_INPUT_CHARS
NORMAL_TEXT = "a wonderful film , the acting was dull"

# What gradio_client raises when the server hit an exception that was not a gr.Error: it says nothing about
# the input, so the caller cannot tell what to change.
UNHANDLED = "The upstream Gradio app has raised an exception but has not enabled verbose error reporting"

# Every tag below carries the marker "pwned" (in an attribute or a script body): ``injected_markup`` finds a tag
# that came from the input by it, and the browser tests look for the same marker in the page.
MARKER = "pwned"
MARKUP = [
    "<b class=pwned>bold</b>",
    "<script>window.__pwned=1</script>",
    '<a href="javascript:window.__pwned=1">click</a>',
    "<a id=pwned-link href=https://example.com>x</a>",
    "<img src=x onerror=window.__pwned=1>",
    '<svg onload="window.__pwned=1">',
    "<iframe srcdoc='<script>parent.__pwned=1</script>'>",
    "<br id=pwned-br><i class=pwned>i</i>",
    "<style>body{--pwned:1}</style>",
    "&lt;b&gt; &amp; &#60;script&#62;",
    "%3Cscript%3E",
    "{{7*7}} ${7*7} <%= 7*7 %>",
    "[link](javascript:pwned()) ![x](x)",
    "</textarea></code></p><b class=pwned>",
]
SCRIPTS = [
    "😀👍🏽👨‍👩‍👧‍👦🏳️‍🌈",  # emoji, skin tone, ZWJ sequences
    "שלום עולם مرحبا بالعالم",  # right to left
    "\u202eevil\u202c \u2066isolate\u2069 \u200f",  # bidi overrides and marks
    "漢字かなカナ 한국어",  # CJK
    "e\u0301\u0301\u0301 Z\u0335\u0321\u0322",  # combining marks
    "\x00\x01\x07\x1b[31m\x7f\u0085\u2028\u2029",  # NUL, controls, ANSI escape, line separators
    "\ufeff\u200b\u2060\ufffd\uffff",  # BOM, zero-width, replacement, non-character
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 \U0010fffd \U0001f9ea",  # astral planes
    "\t\n\r\x0b\x0c",  # whitespace only
]
PATH_LIKE = ["../../etc/passwd", "/work/main/app.py", "C:\\Windows\\win.ini", "file:///etc/passwd", "%s%n%x"]
HOSTILE_SNIPPETS = MARKUP + SCRIPTS + PATH_LIKE


def near_cap_text() -> st.SearchStrategy[str]:
    """Texts at, just under and over the size cap, and far over it, built by repeating a short unit."""
    units = st.sampled_from(["a ", "😀", "<b>", "\x00", "שלום ", "wonderful "]) | st.text(min_size=1, max_size=4)
    lengths = st.sampled_from([CAP - 1, CAP, CAP + 1, 2 * CAP, 50_000])
    return st.builds(lambda unit, n: (unit * (n // len(unit) + 1))[:n], units, lengths)


def hostile_text() -> st.SearchStrategy[str]:
    """Any Unicode (no lone surrogates: JSON cannot carry them), markup, controls, and very long texts."""
    snippets = st.sampled_from(HOSTILE_SNIPPETS)
    mixed = st.lists(snippets | st.text(max_size=20), min_size=1, max_size=6).map(" ".join)
    return st.one_of(
        st.text(max_size=200),  # the whole of Unicode but surrogates
        st.text(st.characters(codec="utf-8", categories=["Cc", "Cf", "Zs", "Zl", "Zp", "Mn"]), max_size=50),
        snippets,
        mixed,
        near_cap_text(),
    )


def hostile_int() -> st.SearchStrategy[int]:
    """Indices a layer or head selector must survive: negative, zero, small, just past the end, huge."""
    return st.one_of(st.integers(-3, 10), st.sampled_from([-(2**63), -(2**31), 2**31, 2**63 - 1, 10**30]))


def hostile_number() -> st.SearchStrategy[float]:
    return hostile_int() | st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from([0.5, -0.0, 1e308])


def any_json() -> st.SearchStrategy:
    """Any JSON value: what a caller can send where the endpoint expects something else."""
    floats = st.floats(allow_nan=False, allow_infinity=False)  # JSON has neither
    scalars = st.none() | st.booleans() | hostile_int() | floats | st.text(max_size=20)
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
        max_leaves=6,
    )


def for_schema(schema: dict | None) -> st.SearchStrategy:
    """Values of the type a JSON schema names, hostile ones first; any JSON for a type it does not name."""
    schema = schema or {}
    if schema.get("enum"):
        return st.sampled_from(schema["enum"]) | hostile_text()
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:
        return st.one_of([for_schema(option) for option in options])
    kind = schema.get("type")
    if isinstance(kind, list):
        return st.one_of([for_schema({**schema, "type": one}) for one in kind])
    if kind == "string":
        return hostile_text()
    if kind == "integer":
        return hostile_int()
    if kind == "number":
        return hostile_number()
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        items = schema.get("items")
        return st.lists(for_schema(items if isinstance(items, dict) else {}), max_size=6)
    if kind == "object":
        properties = schema.get("properties") or {}
        if properties:
            return st.fixed_dictionaries({name: for_schema(sub) for name, sub in properties.items()})
        return st.dictionaries(st.text(max_size=8), any_json(), max_size=4)
    return any_json()


_CLASS_DUMP = re.compile(r"<class '[\w.]+'>|\b[A-Z]\w*(Error|Exception|Warning)\b(: |\()|object at 0x[0-9a-f]+")
LEAK_MARKERS = ("Traceback", 'File "', "/work", "site-packages", ".py", "/tmp/", "/home/", "/usr/lib")


# gradio's own check of a selector's value (Radio, Dropdown, CheckboxGroup) names the value's Python type; the
# app cannot change that message, only keep bad values from reaching it (test_security.py has that case).
GRADIO_CHOICE_TYPE = re.compile(r" \(type: <class '\w+'>\)(?= is not in the list of choices)")


def leaks(message: str, sent: object = "") -> list[str]:
    """What in ``message`` betrays the server: a trace, a path, an exception class; [] if nothing.

    A marker that the caller itself sent (``sent``, any JSON value) is not a leak when the message echoes it.
    """
    echoed = json.dumps(sent, ensure_ascii=False) + str(sent)
    message = GRADIO_CHOICE_TYPE.sub("", message)
    found = [marker for marker in LEAK_MARKERS if marker in message and marker not in echoed]
    found += [match.group(0) for match in _CLASS_DUMP.finditer(message) if match.group(0) not in echoed]
    return found


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in [*value.keys(), *value.values()] for text in _strings(item)]
    if isinstance(value, list | tuple):
        return [text for item in value for text in _strings(item)]
    return []


def without_echo(message: str, sent: object) -> str:
    """``message`` with every quoted copy of a string the caller sent cut to "…": the app's own words.

    How an echo is quoted, cut and escaped is checked on its own (test_error_messages_quote_..._escaped).
    """
    texts = _strings(sent)
    forms = {form for text in texts for form in (repr(text), json.dumps(text), json.dumps(text, ensure_ascii=False))}
    forms |= {text for text in texts if len(text) >= 8}
    for form in sorted(forms, key=len, reverse=True):
        message = message.replace(form, "…")
    return message


def is_clear_sentence(message: str) -> bool:
    """A message for a person: starts with a capital letter (or digit), ends like a sentence, one paragraph."""
    message = message.strip()
    return (
        0 < len(message) <= 600
        and (message[0].isupper() or message[0].isdigit())
        and message[-1] in ".!?)"
        and UNHANDLED not in message
        and "\n\n" not in message
    )


class _TagFinder(HTMLParser):
    """Collects the tags of an HTML string that carry ``MARKER``: markup that came from the input."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self._raw: str | None = None  # inside <script> or <style>

    def handle_starttag(self, tag, attrs):
        if any(MARKER in f"{name}={value}" for name, value in attrs):
            self.found.append(self.get_starttag_text() or tag)
        if tag in ("script", "style"):
            self._raw = tag

    def handle_endtag(self, tag):
        if tag == self._raw:
            self._raw = None

    def handle_data(self, data):
        if self._raw and MARKER in data:
            self.found.append(f"<{self._raw}>{data}")


def injected_markup(value: object) -> list[str]:
    """Tags carrying ``MARKER`` in any string of ``value`` (any JSON; JSON inside strings too, as plots send)."""
    if isinstance(value, dict):
        return [tag for item in value.values() for tag in injected_markup(item)]
    if isinstance(value, list | tuple):
        return [tag for item in value for tag in injected_markup(item)]
    if not isinstance(value, str) or MARKER not in value:
        return []
    if value[:1] in "{[":
        try:
            return injected_markup(json.loads(value))
        except ValueError:
            pass
    finder = _TagFinder()
    finder.feed(value)
    finder.close()
    return finder.found


@dataclass
class Outcome:
    """One event's answer over plain HTTP: ``success`` and ``data``, or the error payload gradio sent."""

    success: bool
    data: list | None
    error: str | None  # None when the server sent no message: an exception that was not a gr.Error
    title: str | None


def _sse_lines(stream: httpx.Response):
    """The stream's lines, split at line feeds only, as the page reads them.

    ``httpx``'s ``iter_lines`` also splits at U+2028, U+2029 and U+0085, which JSON leaves unescaped.
    """
    pending = ""
    for chunk in stream.iter_text():
        pending += chunk
        *lines, pending = pending.split("\n")
        yield from (line.rstrip("\r") for line in lines)
    if pending:
        yield pending


class QueueCaller:
    """Call the app's events over HTTP as the page does (through the queue, or straight for an event that skips it),
    one session per caller."""

    def __init__(self, url: str, session_hash: str | None = None, timeout: float = 60):
        self.url = url.rstrip("/")
        self.session_hash = session_hash or uuid.uuid4().hex[:11]
        self.timeout = timeout
        self.http = httpx.Client(timeout=timeout, trust_env=False)

    def close(self) -> None:
        self.http.close()

    def call(
        self, fn_index: int, data: list, trigger_id: int | None = None, params: dict | None = None, queued: bool = True
    ) -> Outcome:
        body = {
            "data": data,
            "fn_index": fn_index,
            "trigger_id": trigger_id,
            "session_hash": self.session_hash,
            "event_data": None,
        }
        if not queued:  # an event with queue=False: one POST, answered with its outputs or a 500 and the error
            answer = self.http.post(f"{self.url}/gradio_api/run/predict", json=body, params=params or {})
            content = answer.json()
            if answer.status_code == 200:
                return Outcome(True, content.get("data"), None, None)
            return Outcome(False, None, content.get("error"), content.get("title"))
        joined = self.http.post(f"{self.url}/gradio_api/queue/join", json=body, params=params or {})
        joined.raise_for_status()
        event_id = joined.json()["event_id"]
        deadline = time.monotonic() + self.timeout  # heartbeats keep the stream alive: a hung event must still fail
        with self.http.stream(
            "GET", f"{self.url}/gradio_api/queue/data", params={"session_hash": self.session_hash}
        ) as stream:
            for line in _sse_lines(stream):
                assert time.monotonic() < deadline, f"event {fn_index} ran over {self.timeout} s: {data!r:.300}"
                if not line.startswith("data:"):
                    continue
                message = json.loads(line[5:])
                if message.get("event_id") != event_id or message.get("msg") != "process_completed":
                    continue
                output = message.get("output") or {}
                if message.get("success"):
                    return Outcome(True, output.get("data"), None, None)
                return Outcome(False, None, output.get("error"), output.get("title"))
        raise AssertionError(f"the stream closed without completing event {event_id}")
