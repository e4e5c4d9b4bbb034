"""What one session holds on the server: a 256-token sentence analyzed, then every tab opened, as a page does.

The app (bundled model) is served in this process; one session runs the page-load analysis and selects each
tab through the queue, then its ``gr.State`` values (pickled) and the component values Gradio keeps for it
(JSON) are measured, and, with ``tracemalloc``, the Python memory the whole session holds: what dropping it
(as a closed page does) frees. A first session, dropped before measuring, warms every cache.

    python -m benchmarks.session_size
"""

import gc
import json
import pickle
import time
import tracemalloc
import uuid

import gradio as gr
import httpx
import orjson

from transformer.explorer.serving import gradio_seam, sessions

from .browser import sentence

TOKENS = 256


def call(http: httpx.Client, url: str, session: str, index: int, data: list, params: dict | None = None) -> None:
    body = {"data": data, "fn_index": index, "trigger_id": None, "session_hash": session, "event_data": None}
    event = http.post(f"{url}gradio_api/queue/join", json=body, params=params or {}).json()["event_id"]
    with http.stream("GET", f"{url}gradio_api/queue/data", params={"session_hash": session}) as stream:
        for line in stream.iter_lines():
            if line.startswith("data:"):
                message = json.loads(line[5:])
                if message.get("event_id") == event and message.get("msg") == "process_completed":
                    assert message.get("success"), message
                    return


def main() -> None:
    import app

    app.demo.launch(server_name="127.0.0.1", prevent_thread_lock=True, quiet=True, **app.launch_settings())
    url = app.demo.local_url
    try:
        with httpx.Client(timeout=120, trust_env=False) as http:
            sessions.drop_session(app.demo.state_holder, visit(http, url, app.demo, "warm"))
            gc.collect()
            tracemalloc.start()
            before = traced()
            session = visit(http, url, app.demo, "good")
            time.sleep(0.5)
            with_session = traced()
            held = app.demo.state_holder.session_data[session]
            states = sum(len(pickle.dumps(value)) for _, value, _ in held.state_components)
            components = len(orjson.dumps(list(held.components), option=orjson.OPT_SERIALIZE_NUMPY, default=str))
            del held
            sessions.drop_session(app.demo.state_holder, session)
            freed = with_session - traced()
            tracemalloc.stop()
            print(
                f"one session, {TOKENS} tokens, every tab opened: gr.State {states / 1e6:.2f} MB, component values "
                f"kept by Gradio {components / 1e6:.2f} MB; Python memory held {(with_session - before) / 1e6:.2f} MB, "
                f"freed when it is dropped {freed / 1e6:.2f} MB"
            )
    finally:
        gradio_seam.close_served(app.demo)


def visit(http: httpx.Client, url: str, demo, first_word: str) -> str:
    """A new session: the page load on a ``TOKENS``-token sentence, then every tab selected; its hash."""
    session, fns = uuid.uuid4().hex[:11], demo.fns
    load = next(i for i, fn in fns.items() if fn.name == "restore_page")
    call(http, url, session, load, [b.value for b in fns[load].inputs], {"text": sentence(first_word, TOKENS)})
    tabs = [i for i, fn in fns.items() if any(isinstance(demo.blocks.get(b), gr.Tab) for b, _ in fn.targets)]
    for index in tabs:
        call(http, url, session, index, [b.value for b in fns[index].inputs])
    return session


def traced() -> int:
    """Bytes of Python memory allocated (since ``tracemalloc.start``) and still alive after a collection."""
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


if __name__ == "__main__":
    main()
