"""Each seam of ``serving/gradio_seam.py`` against the installed Gradio: the private attribute is there with the shape
the explorer relies on, and a replaced method or route is really called on a request. An upgrade that moves one
fails here, in a test named after the seam."""

import asyncio
import inspect
import json
import re
import threading

import gradio as gr
import httpx
import pytest
from app_fixtures import serving
from gradio import route_utils
from gradio.data_classes import CancelBody
from gradio.queueing import Event, Queue

from transformer.explorer.page import scripts
from transformer.explorer.serving import gradio_seam

pytestmark = [  # gradio's queue summarises its events with pandas after each one; pandas 3 warns
    pytest.mark.filterwarnings("ignore:'future.no_silent_downcasting' is deprecated"),
    pytest.mark.filterwarnings("ignore:The copy keyword is deprecated"),
]
CANCEL, DEEP_LINK = "/gradio_api/cancel", "/gradio_api/deep_link"
PROGRESS = gr.Progress()


def shouting_page() -> gr.Blocks:
    """A page of one queued event that reads and writes a ``gr.State``: the text shouted, and a count of calls."""
    with gr.Blocks() as demo:
        text, count, shouted = gr.Textbox(), gr.State(0), gr.Textbox()
        text.submit(lambda said, calls: (said.upper(), calls + 1), [text, count], [shouted, count], api_name="shout")
    demo.queue()
    return demo


def test_the_seam_was_checked_on_the_installed_gradio():
    assert gr.__version__ in gradio_seam.CHECKED_ON, (
        f"gradio {gr.__version__} is not among the versions serving/gradio_seam.py was checked on: run this module,"
        " fix the seams that fail, and add the version to CHECKED_ON"
    )


def test_seam_the_queue_is_the_blocks_queue_with_its_events_by_id():
    assert gradio_seam.queue_of(None) is None  # a session store before it has its Blocks
    queue = gradio_seam.queue_of(shouting_page())
    assert isinstance(queue, Queue) and isinstance(queue.event_ids_to_events, dict)
    event = object()
    queue.event_ids_to_events["e1"] = event
    assert gradio_seam.is_queued(queue, "e1") and gradio_seam.queued_event(queue, "e1") is event
    gradio_seam.forget_event(queue, "e1")
    assert not gradio_seam.is_queued(queue, "e1") and gradio_seam.queued_event(queue, "e1") is None


def test_seam_unread_answers_are_the_queues_records_per_session():
    queue = gradio_seam.queue_of(shouting_page())
    assert isinstance(queue.pending_event_ids_session, dict) and isinstance(queue.pending_messages_per_session, dict)
    assert gradio_seam.unread_event_ids(queue, "s1") is None and not gradio_seam.has_answer_stream(queue, "s1")
    queue.pending_event_ids_session["s1"] = {"e1"}
    queue.pending_messages_per_session["s1"] = messages = asyncio.Queue()
    assert gradio_seam.unread_event_ids(queue, "s1") == {"e1"} and gradio_seam.unread_messages(queue, "s1") is messages
    assert gradio_seam.session_with_unread(queue, "e1") == "s1" and gradio_seam.session_with_unread(queue, "e2") is None
    assert gradio_seam.has_answer_stream(queue, "s1")
    gradio_seam.forget_unread(queue, "s1")
    assert gradio_seam.unread_event_ids(queue, "s1") is None and not gradio_seam.has_answer_stream(queue, "s1")
    queue.pending_event_ids_session["s2"] = {"e3"}  # an answer recorded, its stream not (yet) open
    assert not gradio_seam.has_answer_stream(queue, "s2")


def test_seam_running_and_waiting_jobs_are_the_queues_own_lists():
    """The fair queue reorders the lists ``waiting_groups`` gives in place, so they must be the queue's own."""
    demo = shouting_page()
    queue = gradio_seam.queue_of(demo)
    assert list(inspect.signature(Event).parameters) == ["session_hash", "fn", "request", "username"]
    event = Event("s1", next(iter(demo.fns.values())), request=None, username=None)
    assert {"session_hash", "fn", "request", "data"} <= set(vars(event))  # read in place by the fair queue
    assert gradio_seam.event_id_of(event) and gradio_seam.event_id_of(event) != "s1"
    assert gradio_seam.waiting_groups(queue) == []  # a group appears with its first job
    queue.create_event_queue_for_fn(event.fn)
    assert gradio_seam.waiting_groups(queue) == [[]]
    gradio_seam.waiting_groups(queue)[0].append(event)
    assert gradio_seam.waiting_groups(queue) == [[event]]
    queue.active_jobs[:] = [None, None]  # a worker each, as Gradio sets them when the queue starts
    assert gradio_seam.running_events(queue) == []
    queue.active_jobs[1] = [event]
    assert gradio_seam.running_events(queue) == [event]
    assert list(inspect.signature(Queue.send_message).parameters) == ["self", "event", "event_message"]


def test_seam_blocks_read_inputs_keep_returned_files_and_a_server_config():
    demo = shouting_page()
    read = demo.preprocess_data
    assert inspect.iscoroutinefunction(read)
    assert list(inspect.signature(read).parameters) == ["block_fn", "inputs", "state", "explicit_call"]
    gradio_seam.wrap_input_reading(demo, lambda own: ("wrapped", own))
    assert demo.preprocess_data == ("wrapped", read)
    assert isinstance(gradio_seam.returned_file_sets(demo), list)
    assert gradio_seam.server_config_of(demo) is None  # not launched


def test_seam_gradio_s_own_readers_keep_their_shape():
    def described(text: str, progress: gr.Progress = PROGRESS) -> dict:
        """Say it.

        Args:
            text: what to say.
        """
        return {}

    assert gradio_seam.current_event_id() is None  # outside an event
    assert gradio_seam.type_hints_gradio_reads(described)["progress"] is gr.Progress
    about, parameters, _ = gradio_seam.docstring_parts(described)
    assert about.startswith("Say it") and parameters["text"] == "what to say."
    assert isinstance(gradio_seam.upload_folder(), str)
    assert {"session_hash", "fn_index", "event_id"} <= set(gradio_seam.CancelBody.model_fields)


def test_seam_gradio_s_page_files_are_the_folder_its_assets_route_serves():
    folder = gradio_seam.frontend_assets()
    assert str(folder) == route_utils.BUILD_PATH_LIB  # what ``GET /assets/<name>`` joins the name to
    assert list(folder.glob("index-*.js")) and list(folder.glob("PlotlyPlot-*.js"))


class NotedStopEvent(asyncio.Event):
    """A stop event that notes the thread that set it."""

    def __init__(self):
        super().__init__()
        self.set_by: list[threading.Thread] = []

    def set(self):
        if not self.is_set():
            self.set_by.append(threading.current_thread())
        super().set()


@pytest.mark.served
def test_seam_a_served_page_closes_with_its_stop_event_set_on_the_servers_loop():
    """``Blocks.close`` sets ``App.stop_event`` from the calling thread, where it races a heartbeat cancelled on the
    server's loop; ``close_served`` sets it on that loop (the server's thread), and the page closes."""
    demo = shouting_page()
    with serving(demo) as url:
        stop = demo.app.stop_event = NotedStopEvent()  # what the heartbeat route and Blocks.close read
        with httpx.stream("GET", f"{url}gradio_api/heartbeat/seam", timeout=30) as heartbeat:
            assert next(heartbeat.iter_raw()).startswith(b"data: ALIVE")  # a heartbeat waits on the event
            gradio_seam.close_served(demo)
        assert stop.set_by == [demo.server.thread] and not demo.is_running
        with pytest.raises(httpx.ConnectError):
            httpx.get(url, timeout=5)


def test_seam_push_is_the_queues_coroutine_that_takes_each_job():
    assert inspect.iscoroutinefunction(Queue.push)
    assert list(inspect.signature(Queue.push).parameters) == ["self", "body", "request", "username"]


def test_seam_the_session_store_has_what_lean_sessions_read_and_replace():
    """``sessions.LeanSessions`` and ``LeanSession`` read these records and override these methods."""
    assert {"session_data", "time_last_used", "lock"} <= set(vars(gradio_seam.StateHolder()))
    assert callable(gradio_seam.StateHolder.set_blocks)
    session = gradio_seam.SessionState(shouting_page())
    assert "config_values" in vars(session) and list(session.state_components) == []  # no state value yet
    for method in ("_update_config", "_update_value_in_config", "__setitem__"):
        assert callable(getattr(gradio_seam.SessionState, method)), method


def test_seam_the_api_pages_descriptions_are_the_api_components_schema():
    def shout(text: str) -> dict:
        """Shout.

        Args:
            text: what to shout.

        Returns:
            {"shouted"}.
        """
        return {"shouted": text.upper()}

    with gr.Blocks() as demo:  # described inside the page's block, as ``page.api.serve_endpoints`` does
        gr.api(shout, api_name="shout")
        (block_fn,) = demo.fns.values()
        gradio_seam.describe_on_api_page(block_fn.inputs[0], {"additional_description": "what to shout, seamed"})
        gradio_seam.describe_on_api_page(block_fn.outputs[0], {"type": "object", "description": "the answer, seamed"})
    described = json.dumps(demo.get_api_info()["named_endpoints"]["/shout"])
    assert "what to shout, seamed" in described and "the answer, seamed" in described


@pytest.mark.served
def test_seams_each_replaced_method_and_route_is_called_on_a_request():
    """On a served page: the push replacement runs after each job, the session store installed holds the session,
    the route put first answers /cancel and then calls Gradio's own, and the replaced deep-link route answers."""
    demo = shouting_page()
    pushed, cancelled = [], []
    gradio_seam.after_each_push(gradio_seam.queue_of(demo), lambda: pushed.append(1))
    with serving(demo) as url, httpx.Client(base_url=url, timeout=60, trust_env=False) as http:
        app = demo.server_app
        holder = gradio_seam.StateHolder()
        gradio_seam.use_session_store(app, holder)
        assert gradio_seam.session_store_of(demo) is holder
        gradio_cancel = gradio_seam.gradio_endpoint(app, CANCEL)
        assert list(inspect.signature(gradio_cancel).parameters) == ["body"]

        async def cancel(body: CancelBody):
            cancelled.append(body.event_id)
            return await gradio_cancel(body)

        gradio_seam.route_first(app, CANCEL, cancel, ["POST"])
        gradio_seam.replace_route(app, DEEP_LINK, lambda session_hash="": "no link", ["GET"])
        (index,) = demo.fns
        body = {"data": ["hi", None], "fn_index": index, "session_hash": "s1", "event_data": None}
        event_id = http.post("/gradio_api/queue/join", json=body).raise_for_status().json()["event_id"]
        with http.stream("GET", "/gradio_api/queue/data", params={"session_hash": "s1"}) as stream:
            said = [line for line in stream.iter_lines() if "process_completed" in line]
        assert '"HI"' in said[0] and pushed == [1]
        assert "s1" in holder and holder["s1"][demo.fns[index].inputs[1]._id] == 1  # the count, kept in our store
        cancel_body = {"session_hash": "s1", "fn_index": index, "event_id": event_id}
        assert http.post(CANCEL, json=cancel_body).status_code == 200 and cancelled == [event_id]
        assert http.get(DEEP_LINK, params={"session_hash": "s1"}).json() == "no link"


def answer_stream_head() -> re.Pattern:
    """``page/answer_stream.js``'s ``HEAD``: an event's message kind and event id, read from its first characters."""
    source = (scripts.HERE / "answer_stream.js").read_text(encoding="utf-8")
    return re.compile(re.search(r"const HEAD = /(.+)/;", source).group(1))


@pytest.mark.served
def test_seam_a_stream_of_answers_is_events_named_at_their_head_then_a_close():
    """The page's seam (``page/answer_stream.js``): every event of a session's stream of answers (``queue/data``)
    names its kind and event id where the script reads them, an answer's end (``process_completed``) names its
    event, and with nothing pending the stream's last event is ``close_stream``."""
    demo, head = shouting_page(), answer_stream_head()
    with serving(demo) as url, httpx.Client(base_url=url, timeout=60, trust_env=False) as http:
        (index,) = demo.fns
        body = {"data": ["hi", None], "fn_index": index, "session_hash": "s1", "event_data": None}
        event_id = http.post("/gradio_api/queue/join", json=body).raise_for_status().json()["event_id"]
        with http.stream("GET", "/gradio_api/queue/data", params={"session_hash": "s1"}) as stream:
            *events, after_last = "".join(stream.iter_text()).split("\n\n")
    named = [head.match(event) for event in events]
    assert after_last == "" and all(named), events
    kinds = [(match[1], match[2]) for match in named]
    assert ("process_completed", event_id) in kinds and kinds[-1] == ("close_stream", None)


def test_seam_gradio_s_client_opens_a_stream_of_answers_at_a_join_only_while_it_takes_its_own_for_closed():
    """What ``page/answer_stream.js`` works around, in the client of Gradio's page: a join opens a stream of answers
    only where the client's stream is not marked open (``close_stream`` unmarks it), and the routes it names."""
    bundles = [path.read_text(encoding="utf-8") for path in gradio_seam.frontend_assets().glob("index-*.js")]
    (client,) = [text for text in bundles if "`queue/join`" in text]
    assert "`queue/data`" in client and "msg===`close_stream`" in client and "`process_completed`" in client
    assert re.search(r"\b\w+\.open\|\|await this\.open_stream\(\)", client)


def test_seam_gradio_s_plot_mounts_a_plot_element_per_figure_and_draws_it_with_plotly_react():
    """What ``page/phone.js``'s deferred draw works around, in Gradio's page: ``Plot`` keys its plot element by a count
    that goes up whenever the figure (``value.plot``) changes, so each new figure gets an element of its own; the
    plotly element draws what it is handed with ``Plotly.react`` (the call the script wraps, on the ``window.Plotly``
    that the bundle sets), then resizes it."""
    assets = gradio_seam.frontend_assets()
    (plot,) = [path.read_text(encoding="utf-8") for path in assets.glob("Plot-*.js")]
    (plotly,) = [path.read_text(encoding="utf-8") for path in assets.glob("PlotlyPlot-*.js")]
    bump = re.search(
        r"(\w+)=\w+\.value\?\.plot,.{0,80}?\b\1!==\w+\(\w+\)[^;]{0,40}?&&\w+\((\w+),(\w+)\(\2\)\+1\)", plot
    )
    assert bump, "Plot no longer counts its figures"
    assert f"()=>{bump[3]}({bump[2]})," in plot, "Plot no longer keys its plot element by that count"
    assert re.search(r"\.react\((\w+),(\w+)\.data,\2\.layout,\2\.config\),\w+\.default\.Plots\.resize\(\1\)", plotly)
    assert re.search(r"window\.Plotly=\w+", plotly)


@pytest.mark.served
def test_seam_every_configuration_made_passes_through():
    """``pass_config_through``: the configuration remade at launch, and the one ``/config`` serves, are changed."""

    def labelled(config: dict) -> dict:
        for component in config["components"]:
            component["props"]["label"] = "changed"
        return config

    demo = shouting_page()
    gradio_seam.pass_config_through(demo, labelled)
    assert {c["props"].get("label") for c in demo.config["components"]} == {"changed"}
    with serving(demo) as url:
        served = httpx.get(f"{url}config", timeout=60, trust_env=False).json()["components"]
        assert served and {c["props"].get("label") for c in served} == {"changed"}


def test_seam_gradio_reads_the_hints_of_a_partial_from_its_call():
    """``page.draws.GivenEvent`` is handed the event because Gradio reads a non-function handler's hints from
    ``__call__``."""
    from transformer.explorer.page.draws import GivenEvent

    handler = GivenEvent(lambda view, values, event: (view, values, event), "attention")
    assert gradio_seam.type_hints_gradio_reads(handler)["event"] is gr.EventData
    assert list(inspect.signature(handler).parameters) == ["values", "event"]
