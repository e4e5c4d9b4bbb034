"""What one session holds on the server: a 256-token sentence analysed, then every tab opened, as a page does.

The app (bundled model) is served in this process; one session runs the page-load analysis and selects each
tab through the queue, then its ``gr.State`` values (pickled) and the component values Gradio keeps for it
(JSON) are measured.

    python -m benchmarks.session_size
"""

import json
import pickle
import time
import uuid

import httpx
import orjson

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
    from transformer.explorer.server import launch_settings

    app.demo.launch(server_name="127.0.0.1", prevent_thread_lock=True, quiet=True, **launch_settings())
    url, session = app.demo.local_url, uuid.uuid4().hex[:11]
    try:
        with httpx.Client(timeout=120, trust_env=False) as http:
            fns = app.demo.fns
            load = next(i for i, fn in fns.items() if fn.name == "restore_view")
            call(http, url, session, load, [b.value for b in fns[load].inputs], {"text": sentence("good", TOKENS)})
            tabs = [i for i, fn in fns.items() if any(t == "select" for _, t in fn.targets)]
            for index in tabs:
                call(http, url, session, index, [b.value for b in fns[index].inputs])
            time.sleep(0.5)
            held = app.demo.state_holder.session_data[session]
            states = sum(len(pickle.dumps(value)) for _, value, _ in held.state_components)
            components = len(orjson.dumps(list(held.components), option=orjson.OPT_SERIALIZE_NUMPY, default=str))
            print(
                f"one session, {TOKENS} tokens, {len(tabs)} tabs opened: gr.State {states / 1e6:.2f} MB, "
                f"component values kept by Gradio {components / 1e6:.2f} MB"
            )
    finally:
        app.demo.close()


if __name__ == "__main__":
    main()
