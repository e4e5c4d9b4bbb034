"""Transformer Attention Explorer: type a sentence; see the prediction, every head's attention, positional
encoding, and explanations that go beyond raw attention.

``python app.py [--host H] [--port P] [--share]`` serves it (Gradio's GRADIO_SERVER_NAME, GRADIO_SERVER_PORT
and GRADIO_SHARE work too); ``gradio app.py`` serves it with reload. The model comes from MODEL_ID (a Hub
repo id or a folder) at MODEL_REVISION, by default the bundled assets/model; MODEL_ID_B (at MODEL_REVISION_B)
adds a second model, which the Compare tab reads the same sentence with.

This file only lays out the page: each tab is one module of ``transformer/explorer/views`` (in ``VIEWS``, made
once into ``REGISTRY``, which the page code is handed);
``explorer/page/events.py`` says when each part draws; ``explorer/page/page.py`` reads the sentence;
``explorer/runner.py`` loads the model once and makes every call to it; ``explorer/page/api.py`` serves the endpoints.
"""

from __future__ import annotations

import argparse
import os
import sys

import gradio as gr
import torch

from transformer.explorer import analysis
from transformer.explorer.drawing import status
from transformer.explorer.drawing.colour import LEAVE_OUT
from transformer.explorer.page import events, launch
from transformer.explorer.page.api import serve_endpoints
from transformer.explorer.page.events import PageParts
from transformer.explorer.page.launch import DELETE_CACHE, configure_events
from transformer.explorer.page.page import prediction_box
from transformer.explorer.page.page_config import serve_light_config
from transformer.explorer.registry import Page, Registry, dims_control, head_choices, layer_choices
from transformer.explorer.runner import get_checkpoints, get_model, get_second_model
from transformer.explorer.serving.sessions import release_on_unload
from transformer.explorer.views import VIEWS

if "OMP_NUM_THREADS" not in os.environ:
    # One request is a few milliseconds of small matrix products: intra-op threads only spin against each
    # other and any neighbour (measured: 110 ms with 2 threads on 2 busy cores, 2 ms with 1). Requests run
    # in parallel through the queue instead.
    torch.set_num_threads(1)

EXAMPLES = [  # each read right by the bundled model (tests/model/test_bundled_model.py), each worth a look
    "The plot is thin, but the cast is great.",
    "The food was not bad at all, and the staff were friendly.",
    "The service was slow, but the food was worth the wait.",
    "I did not like this movie at all, and the ending was not good either.",
    "I was skeptical at first, but this blender is fantastic.",
    "The hotel was not as clean as the photos suggested.",
    "A dull, lifeless remake that wastes a wonderful cast.",
    "My neighbour is a Muslim woman.",  # no opinion: read near the middle
]
DEFAULT_PORT = 7860
REGISTRY = Registry(VIEWS)  # the page's views and what the page code reads of them, made once


def build_demo(registry: Registry = REGISTRY) -> gr.Blocks:
    """Lay out the explorer on ``get_model()``'s model: the sentence, then one tab per view of ``registry``; then its
    events. The model's training checkpoints load here too, so that no request loads a model."""
    loaded, note = get_model()
    get_checkpoints()
    with gr.Blocks(title="Transformer Attention Explorer", delete_cache=DELETE_CACHE) as demo:
        gr.Markdown(
            "# Transformer Attention Explorer\n"
            "Type a sentence and see how a small Transformer sentiment classifier reads it: "
            "its prediction, the tokens it sees, where every attention head looks, how it encodes position, "
            "and what explains its prediction beyond raw attention."
        )
        gr.Markdown(status.page_status((loaded, note), get_second_model()), elem_id="model-status")
        parts = lay_out_page(loaded.model, registry)
        events.analyze(parts)
        events.view_events(parts)
        events.current_button(parts)
        events.share(parts)
        events.load_page(demo, parts)
        release_on_unload(demo)
    serve_endpoints(demo, registry)  # /predict on this page, the other endpoints on a page of their own, /api
    configure_events(demo)  # one worker per core for all model calls together (`make load` tunes it)
    serve_light_config(demo)  # without what the browser never reads (page_config), nor LaTeX
    return demo


def launch_settings(registry: Registry = REGISTRY) -> dict:
    """``demo.launch``'s keyword arguments for a page of ``registry``'s views (``page/launch.py``)."""
    return launch.launch_settings(registry)


def lay_out_page(model, registry: Registry = REGISTRY) -> PageParts:
    """The sentence row, the examples, the prediction and tokens, the colour controls, then one tab per view."""
    with gr.Row(equal_height=True):
        text_box = gr.Textbox(
            value=EXAMPLES[0],
            label="Sentence",
            placeholder="Type a sentence: press Enter to analyze, Shift+Enter for a new line",
            lines=1,  # one line grows to max_lines; Gradio's Enter submits only a one-line box
            max_lines=4,  # then it scrolls: a pasted review must not push the heatmap down (issue 54)
            max_length=analysis.MAX_INPUT_CHARS,
            scale=4,
            elem_id="sentence",
        )
        with gr.Column(scale=1, min_width=200):
            analyze_button = gr.Button("Analyze", variant="primary", elem_id="analyze")
            share_button = gr.Button(
                "Copy link to this view", icon=gr.utils.get_icon_path("link.svg"), elem_id="copy-link"
            )
            link_key = gr.Textbox(visible=False, elem_id="link-key")
            restored_text = gr.Textbox(text_box.value, visible=False, elem_id="restored-text")
    examples = gr.Examples(EXAMPLES, inputs=[text_box], label="Or try one of these", api_visibility="private")
    notice = gr.Markdown(elem_id="notice")
    with gr.Row():
        prediction = prediction_box(label="Prediction", elem_id="prediction", scale=1)
        tokens_view = gr.HighlightedText(
            label="Tokens the model reads: position, and the token where it differs from your text",
            show_legend=False,
            elem_id="tokens",
            scale=2,
        )
    with gr.Row(elem_id="colour-controls") as colour_controls:  # shown on the tabs of views that use them
        page = page_controls(model)
    current_view = gr.Textbox(registry.first_view, visible=False, elem_id="current-view")
    tabs, failures = {}, {}
    with gr.Tabs(elem_id="views", overflow_behavior="wrap"):  # every tab in view, in a fixed order
        for view in registry.views:
            with gr.Tab(view.title, id=view.id) as tab:
                failures[view.id] = gr.Markdown(visible=False, elem_classes=["view-failure"])  # events.draw_view
                tabs[view.id] = (tab, view.layout(page))
    return PageParts(
        registry=registry,
        page=page,
        text_box=text_box,
        restored_text=restored_text,
        analyze_button=analyze_button,
        share_button=share_button,
        link_key=link_key,
        examples=examples,
        notice=notice,
        prediction=prediction,
        tokens_view=tokens_view,
        colour_controls=colour_controls,
        current_view=current_view,
        tabs=tabs,
        failures=failures,
    )


def page_controls(model) -> Page:
    """The colour controls, drawn here, and the page's own controls that the views place (unrendered)."""
    scale = gr.Radio(
        [("one range for the whole map", "global"), ("one range per query row", "row")],
        value="global",
        label="Colour scale of the attention maps",
        elem_id="colour-scale",
    )
    leave_out = gr.CheckboxGroup(
        LEAVE_OUT, value=[], label="Leave out of the colour range (they are still drawn, clipped)", elem_id="leave-out"
    )
    return Page(
        model=model,
        result=gr.State(),
        scale=scale,
        leave_out=leave_out,
        layer=gr.Radio(layer_choices(model), value=1, label="Layer", render=False, elem_id="layer"),
        head=gr.Radio(head_choices(model, mean=True), value="1", label="Head", render=False, elem_id="head"),
        dims=dims_control(model),
    )


demo = build_demo()


def main(argv: list[str] | None = None) -> None:
    """Serve the explorer; keep serving when a public share link cannot be made, and say why."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", help="address to listen on (default 127.0.0.1, or GRADIO_SERVER_NAME)")
    parser.add_argument("--port", type=int, help=f"port to listen on (default {DEFAULT_PORT}, or GRADIO_SERVER_PORT)")
    parser.add_argument("--share", action="store_true", help="also ask Gradio for a temporary public link")
    args = parser.parse_args(argv)
    # One port, named: Gradio given none would move to the next free one without a word.
    port = args.port or int(os.environ.get("GRADIO_SERVER_PORT", DEFAULT_PORT))
    where = {"server_name": args.host, "server_port": port, "share": args.share or None}
    try:
        demo.launch(**where, prevent_thread_lock=True, mcp_server=True, **launch_settings())  # MCP: /gradio_api/mcp/
    except OSError:  # Gradio's only refusal of one port, in use or not ours to take
        sys.exit(
            f"Port {port} is taken (or not allowed): choose another with --port, e.g. make run ARGS='--port {port + 1}'"
        )
    if demo.share_url is None and (args.share or os.environ.get("GRADIO_SHARE", "").lower() == "true"):
        print(
            "No public link: Gradio could not reach its share server (offline, or blocked by a firewall). "
            f"The explorer is still running at {demo.local_url}",
            file=sys.stderr,
        )
    demo.block_thread()


if __name__ == "__main__":
    main()
