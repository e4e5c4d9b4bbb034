"""Hostile input through the served app: every endpoint and every page event, found at run time, one server.

The public endpoints come from ``gradio_client.Client.view_api`` and their arguments from each parameter's
declared JSON schema, so an endpoint added to app.py is fuzzed without touching this file. The page's own
events (``api_visibility="private"``) are posted over plain HTTP, as the page does: hiding
them from gradio_client does not stop anyone else from calling them. After every batch a normal request
must still get a normal answer. Each test spends a fixed budget of calls, spread over what it found.

Every test runs twice, in this process: on the app as the session imported it (the tutorial's tiny model, or the
checkpoint ``EXPLORER_TEST_MODEL`` names), then on the page built again on a tiny RoBERTa (``app`` below).
"""

import os

os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
os.environ["HF_HUB_OFFLINE"] = "1"

import collections
import inspect
import json

import gradio as gr
import numpy as np
import pytest
from app_fixtures import page_on
from fuzz_helpers import (
    CAP,
    NORMAL_TEXT,
    UNHANDLED,
    QueueCaller,
    any_json,
    for_schema,
    hostile_int,
    hostile_text,
    injected_markup,
    is_clear_sentence,
    leaks,
    without_echo,
)
from gradio_client.exceptions import AppError
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from transformer.explorer.page.draws import GivenEvent

CALL_TIMEOUT = 60  # seconds for one call: an input that hangs the server fails the test instead of the run
KNOWN_ENDPOINTS = {"/predict", "/attention"}
# Under the size cap, and some 1,800 tokens: past the positions of any model the app serves, so every view cuts it
LONG_TEXT = " ".join([NORMAL_TEXT] * 200)
RENDERED_AS_HTML = (gr.HTML, gr.Markdown, gr.Plot)  # what the page renders as markup (plotly reads some tags)
# Byte-level BPE turns any Unicode into tokens (no [UNK] to hide behind), and positions start at 2: hostile and
# over-long texts reach the most of the Hub adapter's tokenizer and position code on RoBERTa.
HUB_FAMILY = "roberta"


def fuzz_settings(calls: int, calls_per_example: int) -> settings:
    """Derandomized and bounded: about ``calls`` requests in all, however many endpoints there are.

    A failure is reported as found, unshrunk: shrinking would replay hundreds of requests.
    """
    return settings(
        max_examples=max(4, calls // max(calls_per_example, 1)),
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
        phases=[Phase.explicit, Phase.generate],  # no shrinking: a request apiece would take minutes
        report_multiple_bugs=False,
    )


# gradio's queue summarises its events with pandas after each one; pandas 3 warns about the options it uses
pytestmark = [
    pytest.mark.served,
    pytest.mark.filterwarnings("ignore:'future.no_silent_downcasting' is deprecated"),
    pytest.mark.filterwarnings("ignore:The copy keyword is deprecated"),
]


@pytest.fixture(scope="module", params=["as imported", HUB_FAMILY])
def app(request, app, hub_model_dirs, tmp_path_factory):
    """The app as the session imported it, then the page built again in this process on the tiny ``HUB_FAMILY``
    checkpoint (``app_fixtures.page_on``: its corpus views compute theirs on first use)."""
    if request.param != HUB_FAMILY:
        yield app
        return
    with page_on(app, hub_model_dirs[HUB_FAMILY], tmp_path_factory.mktemp(f"fuzz-{HUB_FAMILY}")) as on_hub:
        assert getattr(on_hub.get_model()[0].model, "model_type", None) == HUB_FAMILY
        yield on_hub


@pytest.fixture
def caller(url):
    caller = QueueCaller(url, timeout=CALL_TIMEOUT)
    yield caller
    caller.close()


@pytest.fixture(scope="module")
def endpoints(client) -> dict[str, list[dict]]:
    """Every endpoint gradio_client can call: api name (or fn index) -> its parameters as the API page lists them."""
    info = client.view_api(print_info=False, return_format="dict")
    found = {name: spec["parameters"] for name, spec in info["named_endpoints"].items()}
    found.update({int(index): spec["parameters"] for index, spec in info["unnamed_endpoints"].items()})
    return found


@pytest.fixture(scope="module")
def fn_index(app) -> dict[str, int]:
    """Public api name ("/predict") -> its index in the queue, for calls over plain HTTP."""
    return {f"/{fn.api_name}": index for index, fn in app.demo.fns.items() if fn.api_visibility != "private"}


@pytest.fixture(scope="module")
def ui_events(app) -> dict[int, object]:
    """The page's own events that run Python and take inputs, and the page load (it reads the address): fn
    index -> gradio's BlockFunction."""
    return {
        index: fn
        for index, fn in app.demo.fns.items()
        if fn.fn is not None and fn.api_visibility == "private" and (fn.inputs or is_page_load(fn))
    }


def is_page_load(fn) -> bool:
    return any(event == "load" for _, event in fn.targets)


def page_load(ui_events) -> list[int]:
    """The events the page runs when it opens (``demo.load``), so the session has an analysis to draw from."""
    return [index for index, fn in ui_events.items() if is_page_load(fn)]


def call(client, endpoint, args):
    where = {"api_name": endpoint} if isinstance(endpoint, str) else {"fn_index": endpoint}
    return client.submit(*args, **where).result(timeout=CALL_TIMEOUT)


def assert_serves_normally(client, app) -> None:
    """A normal request gets a normal answer: the server survived whatever came before."""
    model = app.get_model()[0].model
    label = client.predict(NORMAL_TEXT, api_name="/predict")
    assert label["label"] in model.label_names
    assert sum(entry["confidence"] for entry in label["confidences"]) == pytest.approx(1, abs=1e-3)
    result = client.predict(NORMAL_TEXT, api_name="/attention")
    n = len(result["tokens"])
    assert n > 0 and np.array(result["attentions"]).shape == (model.num_layers, model.num_heads, n, n)


def refused_clearly(outcome, sent: object) -> bool:
    """A failed call is a refusal: it carries a message for a person (a sentence that leaks nothing), never silence."""
    return (
        bool(outcome.error) and is_clear_sentence(without_echo(outcome.error, sent)) and not leaks(outcome.error, sent)
    )


def assert_clear(message: str, sent: object, markup: bool = True) -> None:
    """A message for the person who sent ``sent``: a sentence, no trace, no path, no class, no markup of theirs.

    ``markup=False`` looks only at the app's own words, not at how it quotes the caller's values (API answers:
    test_error_messages_quote_the_callers_values_short_and_escaped checks that).
    """
    assert is_clear_sentence(message if markup else without_echo(message, sent)), message[:1000]
    assert not leaks(message, sent), (leaks(message, sent), message)
    assert not markup or not injected_markup(message), f"the message carries the caller's markup: {message}"


def normal_argument(parameter: dict):
    """A plain value for an API parameter: its default, else a sentence or 1."""
    if parameter["parameter_has_default"]:
        return parameter["parameter_default"]
    return NORMAL_TEXT if parameter["type"].get("type") == "string" else 1


def test_every_endpoint_is_found_and_declares_its_parameter_types(app, endpoints, fn_index):
    assert set(endpoints) >= KNOWN_ENDPOINTS
    assert set(app.demo.get_api_info()["named_endpoints"]) == {name for name in endpoints if isinstance(name, str)}
    assert {name for name in endpoints if isinstance(name, str)} <= set(fn_index)
    for name, parameters in endpoints.items():
        for parameter in parameters:  # arguments are drawn from these types; an untyped one would get any JSON
            assert parameter.get("type"), f"{name} {parameter.get('parameter_name')}: no declared type"


def test_endpoints_answer_hostile_well_typed_values_or_give_a_clear_reason(app, client, endpoints):
    """Through gradio_client: texts of any Unicode, markup, near and over the cap; indices out of range."""
    outcomes = collections.Counter()

    @fuzz_settings(calls=80, calls_per_example=len(endpoints))
    @given(data=st.data())
    def fuzz(data):
        for endpoint, parameters in sorted(endpoints.items(), key=str):
            args = [data.draw(for_schema(p["type"]), label=f"{endpoint} {p['parameter_name']}") for p in parameters]
            try:
                result = call(client, endpoint, args)
            except AppError as error:
                assert UNHANDLED not in error.message, f"{endpoint}{tuple(args)!r:.500} raised an unhandled exception"
                assert_clear(error.message, args, markup=False)
                outcomes[endpoint, "clear error"] += 1
            else:
                json.dumps(result, allow_nan=False)
                outcomes[endpoint, "answer"] += 1

    fuzz()
    assert_serves_normally(client, app)
    for endpoint in KNOWN_ENDPOINTS:  # the texts drawn both read and fail (blank, over the cap)
        assert outcomes[endpoint, "answer"] and outcomes[endpoint, "clear error"], outcomes


def test_endpoints_survive_values_of_any_type(app, client, caller, endpoints, fn_index):
    """None, numbers, lists, dicts where a text or an index belongs: an answer or an error, no trace, no crash."""
    named = {name: parameters for name, parameters in endpoints.items() if isinstance(name, str)}

    @fuzz_settings(calls=150, calls_per_example=len(named))
    @given(data=st.data())
    def fuzz(data):
        for endpoint, parameters in sorted(named.items()):
            args = [data.draw(any_json(), label=f"{endpoint} {p['parameter_name']}") for p in parameters]
            outcome = caller.call(fn_index[endpoint], args)
            assert outcome.success or refused_clearly(outcome, args), (endpoint, outcome)

    fuzz()
    assert_serves_normally(client, app)


def each_text_set_to(value, endpoints: dict[str, list[dict]]):
    """(endpoint, parameter name, arguments) for every text parameter of every endpoint in turn: that one set to
    ``value``, the others to plain values."""
    for endpoint, parameters in sorted(endpoints.items(), key=str):
        for i, parameter in enumerate(parameters):
            if parameter["type"].get("type") == "string":
                args = [normal_argument(p) for p in parameters]
                args[i] = value
                yield endpoint, parameter["parameter_name"], args


@pytest.mark.parametrize("value", [5, ["a", "list"], {"text": "a dict"}], ids=lambda v: type(v).__name__)
def test_a_value_of_the_wrong_type_where_a_text_belongs_gets_a_clear_message(client, endpoints, value):
    """Every text parameter of every endpoint in turn gets a number, list or dict: a clear error, or an answer."""
    unclear = []
    for endpoint, name, args in each_text_set_to(value, endpoints):
        try:
            call(client, endpoint, args)
        except AppError as error:
            if UNHANDLED in error.message or not is_clear_sentence(error.message) or leaks(error.message, value):
                unclear.append(f"{endpoint} {name}={value!r}: {error.message[:200]}")
    assert not unclear, unclear


def test_error_messages_quote_the_callers_values_short_and_escaped(client, endpoints):
    """Each text parameter in turn gets markup, then a long value, the others plain values: short, inert messages.

    gradio renders a gr.Error message as HTML (in its toast, and in apps that gr.load() this one).
    """
    evil = '<img src=x onerror="window.__pwned=1"><a href="javascript:pwned()">x</a>'
    echoed = []
    for value in (evil, "x" * 5_000):
        for endpoint, name, args in each_text_set_to(value, endpoints):
            try:
                call(client, endpoint, args)
            except AppError as error:
                if injected_markup(error.message) or len(error.message) > 600:
                    echoed.append(f"{endpoint} {name}: {error.message[:200]}")
    assert not echoed, echoed


def test_a_text_longer_than_the_model_reads_gets_an_answer_or_a_clear_reason(client, endpoints):
    """Each text parameter in turn gets a text under the size cap but far over the tokens the model reads, the others
    plain values: the endpoint reads its first max_len tokens (or says clearly why not), never fails unhandled.

    The fuzz draws such texts too, but by chance; this is the case where a model's positions run out.
    """
    assert len(LONG_TEXT) < CAP
    unclear = []
    for endpoint, name, args in each_text_set_to(LONG_TEXT, endpoints):
        try:
            call(client, endpoint, args)
        except AppError as error:
            message = error.message
            if UNHANDLED in message or not is_clear_sentence(without_echo(message, args)) or leaks(message, args):
                unclear.append(f"{endpoint} {name}: {message[:200]}")
    assert not unclear, unclear


def batches(items: list, size: int = 8) -> list[list]:
    """``items`` in runs of ``size``: each run is fuzzed on its own, so every event gets its turn."""
    return [items[start : start + size] for start in range(0, len(items), size)]


def page_values(block) -> st.SearchStrategy:
    """What the page itself can send for ``block``: one of its choices for a selector, its declared type else."""
    if isinstance(block, gr.State):
        return st.none()  # the server keeps the state; the page sends null
    if isinstance(block, gr.Dataset):
        return st.integers(0, len(block.samples) - 1)
    schema = block.api_info()
    choices = [value for _, value in getattr(block, "choices", None) or []]
    if choices and not getattr(block, "allow_custom_value", False):  # hostile choices: see test_security.py
        pick = st.sampled_from(choices)
        return st.lists(pick, unique=True, max_size=len(choices)) if schema.get("type") == "array" else pick
    if isinstance(block, gr.Slider):
        return st.integers(int(block.minimum), int(block.maximum))
    # A text box takes at most its max_length (each visible one has one); a dropdown's typed value, CAP. Longer, the
    # request is over the guard's body cap and refused (413) before any event: test_guard.py tests that.
    most = getattr(block, "max_length", None) or CAP
    return for_schema(schema).map(lambda value: value[:most] if isinstance(value, str) else value)


def view_drawn(fn) -> str | None:
    """The view that a quick view's one drawing event (``PageParts.open_or_draw``) draws, else None."""
    handler = inspect.unwrap(fn.fn) if fn.fn is not None else None
    return handler.args[0] if isinstance(handler, GivenEvent) else None


def test_the_pages_own_events_answer_hostile_values_or_give_a_clear_reason(app, client, url, ui_events):
    """The page's events on hostile texts and numbers (and a hostile address): an answer or a clear reason.

    One session per example: the page-load events first, as the page runs them, then a run of the others.
    Whatever a view renders as markup (HTML, Markdown, plot labels) carries no tag from the input.
    """
    assert {fn.name for fn in ui_events.values()} >= {"show_text", "open_or_draw", "restore_page"}
    assert {"attention", "positional-encoding"} <= {view_drawn(fn) for fn in ui_events.values()}
    loading = page_load(ui_events)
    runs = batches(sorted(set(ui_events) - set(loading)))
    address = {
        "text": hostile_text().map(lambda text: text[:2000]),  # browsers and servers cap an address's length
        "layer": hostile_int().map(str),
        "head": st.text(max_size=8),
        "view": st.text(max_size=12),
        "model": st.just("evil/model"),
    }
    called = set()

    def fuzz_run(run: list[int]):
        @fuzz_settings(calls=150 // len(runs), calls_per_example=len(loading) + len(run))
        @given(data=st.data())
        def fuzz(data):
            query = data.draw(st.fixed_dictionaries({}, optional=address), label="page address")
            caller = QueueCaller(url, timeout=CALL_TIMEOUT)
            try:
                for index in [*loading, *run]:
                    fn = ui_events[index]
                    values = [data.draw(page_values(block), label=f"{fn.name} input") for block in fn.inputs]
                    outcome = caller.call(index, values, params=query, queued=fn.queue)
                    called.add(index)
                    if outcome.success:
                        assert len(outcome.data) == len(fn.outputs), fn.name
                        for block, value in zip(fn.outputs, outcome.data, strict=True):
                            if isinstance(block, RENDERED_AS_HTML):
                                assert not injected_markup(value), (fn.name, block, injected_markup(value))
                    else:
                        assert outcome.error is not None, f"{fn.name}{tuple(values)!r:.500} raised an unhandled error"
                        assert_clear(outcome.error, [values, query])
            finally:
                caller.close()

        return fuzz

    for run in runs:
        fuzz_run(run)()
    assert_serves_normally(client, app)
    assert called == set(ui_events)


def page_default(block):
    """What the page sends for ``block`` before anyone touches it, but ``LONG_TEXT`` in every text box."""
    if isinstance(block, gr.State):
        return None
    if isinstance(block, gr.Dataset):
        return 0
    return LONG_TEXT if isinstance(block, gr.Textbox) else block.value


def test_the_pages_own_events_on_a_text_longer_than_the_model_reads_answer_or_give_a_clear_reason(url, ui_events):
    """One session opened on an address holding a long text, then every other event in turn, every text box holding
    ``LONG_TEXT`` and every other input its first value: each answers or gives a clear reason."""
    loading = page_load(ui_events)
    caller = QueueCaller(url, timeout=CALL_TIMEOUT)
    query = {"text": LONG_TEXT[:2000]}  # browsers and servers cap an address's length
    unclear = []
    try:
        for index in [*loading, *sorted(set(ui_events) - set(loading))]:
            fn = ui_events[index]
            values = [page_default(block) for block in fn.inputs]
            outcome = caller.call(index, values, params=query, queued=fn.queue)
            if not outcome.success and (outcome.error is None or not is_clear_sentence(outcome.error)):
                unclear.append(f"{index} {fn.name}: {outcome.error or 'an unhandled error'}"[:300])
    finally:
        caller.close()
    assert not unclear, unclear


def test_the_pages_own_events_survive_values_of_any_type_and_count(app, client, caller, ui_events):
    """Any JSON for every input, and too few or too many inputs: the server answers, leaks nothing, keeps serving."""
    runs = batches(sorted(ui_events))

    def fuzz_run(run: list[int]):
        @fuzz_settings(calls=120 // len(runs), calls_per_example=len(run))
        @given(data=st.data())
        def fuzz(data):
            for index in run:
                fn = ui_events[index]
                count = data.draw(st.sampled_from([len(fn.inputs), len(fn.inputs), 0, len(fn.inputs) + 1]))
                values = data.draw(st.lists(any_json(), min_size=count, max_size=count), label=fn.name or "")
                outcome = caller.call(index, values, queued=fn.queue)
                # The page never sends these; Gradio refuses a mistyped value before any handler runs, silently
                # (no show_error), so a failure here may carry no message, only never a leak.
                assert outcome.success or not outcome.error or not leaks(outcome.error, values), outcome.error

        return fuzz

    for run in runs:
        fuzz_run(run)()
    assert_serves_normally(client, app)


def test_a_single_dimension_instead_of_a_list_is_drawn(app, caller, ui_events):
    """The Dropdown lets a lone choice through where the page sends a list; the view still draws."""
    for loading in page_load(ui_events):  # the session's analysis, which the view is drawn from
        assert caller.call(loading, [], queued=ui_events[loading].queue).success
    index = next(index for index, fn in ui_events.items() if view_drawn(fn) == "positional-encoding")
    fn = ui_events[index]
    parts = inspect.unwrap(fn.fn).func.__self__  # events.PageParts, whose open_or_draw this is
    sent = {parts.load_mark: "loaded"}  # the page load's answer came
    values = [1 if isinstance(block, gr.Dropdown) else sent.get(block) for block in fn.inputs]  # its dimensions
    outcome = caller.call(index, values, queued=fn.queue)
    assert outcome.success, outcome.error
    figure = outcome.data[fn.outputs.index(parts.drawings["positional-encoding"].outputs[0])]
    assert figure and figure.get("__type__") != "update", figure  # drawn, not left as it was
