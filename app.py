"""Transformer Attention Explorer: type a sentence; see the prediction, every head's attention, positional
encoding, and explanations that go beyond raw attention.

``python app.py [--host H] [--port P] [--share]`` serves it (Gradio's GRADIO_SERVER_NAME, GRADIO_SERVER_PORT
and GRADIO_SHARE work too); ``gradio app.py`` serves it with reload. The model comes from MODEL_ID (a Hub
repo id or a folder) at MODEL_REVISION, by default the bundled assets/model.

This file only assembles the page: each tab is one module of ``transformer/explorer/views`` (in ``VIEWS``);
``explorer/page.py`` reads the sentence and the address and says how the state flows; ``explorer/runner.py``
loads the model once and makes every call to it; ``explorer/theme.py`` styles the page.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys

import gradio as gr
import torch

from transformer.explorer import analysis
from transformer.explorer.colour import LEAVE_OUT
from transformer.explorer.inputs import MEAN_HEAD
from transformer.explorer.page import (
    GLOBAL_PARAMS,
    MAIN_VIEWS,
    REDRAW_ID,
    TEXT_PARAMS,
    URL_PARAMS,
    VIEW_PARAMS,
    copy_link_js,
    keep_typed_js,
    on_screen_view_js,
    predict,
    reanalyse_js,
    restore_controls,
    restore_view,
    share_link,
    show_text,
    sync_url_js,
)
from transformer.explorer.registry import Page, layer_choices
from transformer.explorer.runner import get_model
from transformer.explorer.server import DELETE_CACHE, configure_events, launch_settings
from transformer.explorer.sessions import release_on_unload
from transformer.explorer.views import VIEWS, positional_encoding

if "OMP_NUM_THREADS" not in os.environ:
    # One request is a few milliseconds of small matrix products: intra-op threads only spin against each
    # other and any neighbour (measured: 110 ms with 2 threads on 2 busy cores, 2 ms with 1). Requests run
    # in parallel through the queue instead.
    torch.set_num_threads(1)

EXAMPLES = [  # each predicted correctly by the bundled model (tests/test_bundled_model.py), each worth a look
    "The plot is thin, but the cast is great.",
    "The food was not bad at all, and the staff were friendly.",
    "The service was slow, but the food made up for it.",
    "I did not like this movie at all, and the ending was not good either.",
    "I was skeptical at first, but this blender is fantastic.",
    "The hotel was not as clean as the photos suggested.",
    "A dull, lifeless remake that wastes a wonderful cast.",
]


def build_demo() -> gr.Blocks:
    """Lay out the explorer on ``get_model()``'s model: the sentence, then one tab per view, then the events."""
    loaded, note = get_model()
    model = loaded.model
    with gr.Blocks(title="Transformer Attention Explorer", delete_cache=DELETE_CACHE) as demo:
        gr.Markdown(
            "# Transformer Attention Explorer\n"
            "Type a sentence and see how a small Transformer sentiment classifier reads it: "
            "its prediction, the tokens it sees, where every attention head looks, how it encodes position, "
            "and what explains its prediction beyond raw attention."
        )
        gr.Markdown(analysis.model_status(loaded, note), elem_id="model-status")
        with gr.Row(equal_height=True):
            text_box = gr.Textbox(
                value=EXAMPLES[0],
                label="Sentence",
                placeholder="Type a sentence: press Enter to analyze, Shift+Enter for a new line",
                lines=1,  # one line grows to max_lines; Gradio's Enter submits only a one-line box
                max_lines=6,
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
                # The page load's text, which its next step moves into the box unless the person has typed.
                restored_text = gr.Textbox(text_box.value, visible=False, elem_id="restored-text")
        examples = gr.Examples(EXAMPLES, inputs=[text_box], label="Or try one of these", api_visibility="private")
        notice = gr.Markdown(elem_id="notice")
        with gr.Row():
            prediction = gr.Label(label="Prediction", elem_id="prediction", scale=1)
            tokens_view = gr.HighlightedText(
                label="Tokens the model reads: position, and the token where it differs from your text",
                show_legend=False,
                elem_id="tokens",
                scale=2,
            )
        with gr.Row(elem_id="colour-controls") as colour_controls:  # shown on the tabs of views that use them
            scale = gr.Radio(
                [("one range for the whole map", "global"), ("one range per query row", "row")],
                value="global",
                label="Colour scale of the attention maps",
                elem_id="colour-scale",
            )
            leave_out = gr.CheckboxGroup(
                LEAVE_OUT,
                value=[],
                label="Leave out of the colour range (they are still drawn, clipped)",
                elem_id="leave-out",
            )
        page = Page(
            model=model,
            result=gr.State(),
            scale=scale,
            leave_out=leave_out,
            layer=gr.Radio(layer_choices(model), value=1, label="Layer", render=False, elem_id="layer"),
            head=gr.Radio(
                [(str(h), str(h)) for h in range(1, model.num_heads + 1)] + [("mean of heads", MEAN_HEAD)],
                value="1",
                label="Head",
                render=False,
                elem_id="head",
            ),
            dims=positional_encoding.dims_control(model),
        )
        current_view = gr.Textbox("attention", visible=False, elem_id="current-view")
        tabs_drawn = {}
        with gr.Tabs(elem_id="views", overflow_behavior="wrap"):  # every tab in view, in a fixed order
            for view in VIEWS:
                with gr.Tab(view.title, id=view.id) as tab:
                    tabs_drawn[view.id] = (tab, view.layout(page))
        drawings = {view_id: drawing for view_id, (_, drawing) in tabs_drawn.items()}
        uses_colour_scale = {view.id: view.colour_scale for view in VIEWS}

        def show_colour_controls(view: str) -> dict:
            """The colour-scale and leave-out controls, shown only with a view whose figures they change."""
            return {colour_controls: gr.update(visible=uses_colour_scale.get(view, True))}

        def draw_view(view: str, values: dict) -> dict:
            """Draw ``view`` from its inputs' ``values``; a main view only from an analysis (else it stays as it is)."""
            if view in MAIN_VIEWS and values[page.result] is None:
                return {output: gr.skip() for output in drawings[view].outputs}
            return drawings[view].draw(values)

        def open_view(view: str, values: dict) -> dict:
            """A tab was selected: draw it. Gradio also selects the first tab as the page mounts, whenever that
            request reaches the queue; it names the view already current, so it changes nothing (the load draws).
            """
            drawn = (
                {current_view: gr.skip()}
                if view == values[current_view]
                else {current_view: view} | draw_view(view, values)
            )
            return drawn | show_colour_controls(view)

        page_controls = {"text": text_box, "view": current_view, "layer": page.layer, "head": page.head}
        page_controls |= {"scale": scale, "leave_out": leave_out}
        url_controls = page_controls | {k: c for drawing in drawings.values() for k, c in drawing.controls.items()}
        private = dict(trigger_mode="always_last", api_visibility="private")

        def sync_url(names: list[str] = URL_PARAMS, **options) -> dict:
            """The js-only step that writes the address from ``names`` (``sync_url_js``), and may press a redraw."""
            return dict(fn=None, inputs=[url_controls[name] for name in names], js=sync_url_js(names, **options))

        def view_names(view: str) -> list[str]:
            """The address parameters of ``view``'s own events: the global ones and the view's."""
            return GLOBAL_PARAMS + VIEW_PARAMS.get(view, [])

        explanations = [view_id for view_id in drawings if view_id not in MAIN_VIEWS]
        main_outputs = [drawings[view].outputs[0] for view in MAIN_VIEWS]  # heatmap, grid, curves
        main_views = [page.result, prediction, tokens_view, notice, *main_outputs]
        analyse_inputs = [text_box, page.layer, page.head, page.dims, scale, leave_out, current_view]
        # The analysis draws the main view on screen (the tab shown, even if chosen an instant before); then
        # the address follows, and an explanation tab on screen is redrawn from the analysis.
        on_screen = on_screen_view_js(len(analyse_inputs))
        # Spinners only on the prediction and the figures: every component an event names as an output (or as
        # where it shows progress) is one more that Gradio refreshes on every later message of every event.
        spinners = [prediction, *main_outputs]
        analyse = dict(fn=show_text, inputs=analyse_inputs, outputs=main_views, js=on_screen, show_progress_on=spinners)
        for analysed in (
            gr.on([analyze_button.click, text_box.submit], **analyse, **private),
            examples.load_input_event.then(**analyse, **private),
        ):
            analysed.success(**sync_url(redraw=explanations))
        gr.on([scale.input, leave_out.input], **sync_url(redraw=list(drawings)))  # a new colour scale: any view
        # Each view is drawn by events that name only its own components (a tab select, its controls, a hidden
        # redraw button that the page's script presses for the tab on screen): on every message of every event,
        # Gradio refreshes the loading status of every component that the events run so far have named, inputs
        # included. A main view is redrawn from the kept analysis, a few milliseconds without the model, so its
        # events skip the queue: each of the queue's extra messages costs the page such a refresh.
        for view_id, (tab, drawing) in tabs_drawn.items():
            events = private | {"queue": view_id not in MAIN_VIEWS}
            own_inputs, own_outputs = {current_view, *drawing.inputs}, [current_view, colour_controls, *drawing.outputs]
            opened = tab.select(functools.partial(open_view, view_id), own_inputs, own_outputs, **events)
            opened.success(**sync_url(view_names(view_id)))
            redraw_button = gr.Button(visible="hidden", elem_id=REDRAW_ID + view_id)
            redraw_button.click(functools.partial(draw_view, view_id), set(drawing.inputs), drawing.outputs, **events)
            if drawing.triggers:
                changed = gr.on(drawing.triggers, drawing.handler, drawing.inputs, drawing.outputs, **events)
                changed.success(**sync_url(view_names(view_id)))

        shared = share_button.click(share_link, [url_controls[name] for name in URL_PARAMS], link_key, **private)
        shared.success(None, link_key, None, js=copy_link_js())

        restored_names = ["view", *(name for names in VIEW_PARAMS.values() for name in names)]
        restored = [url_controls[name] for name in restored_names]
        shown = [restored_text, page.layer, page.head, scale, leave_out, *main_views]  # ``restore_view``'s outputs

        def restore_page(request: gr.Request) -> dict:
            """Page load, one step: the text, the view and its controls from the address; the analysis; the view drawn.

            It reads nothing from the page: a page that has just opened holds the defaults, and a deep-linked
            one could hold anything (Gradio's rejection of a value would echo it in a toast that renders HTML).
            Each control gets the address's value, checked against its choices, else its default; a text the
            address does not hold keeps the page's. A text or control that cannot be read is said in a warning
            and the rest is restored all the same, so the next step still hands the address over to the views.
            The text goes to ``restored_text``, never into the sentence box: the person may have typed while this
            ran, and the page's next step (``keep_typed_js``) keeps what they typed.
            """
            text, layer, head, dims, *rest = (c.value for c in analyse_inputs)
            try:
                values = dict(zip(shown, restore_view(text, layer, head, dims, request, *rest), strict=True))
            except gr.Error as error:  # a text in the address that the model cannot read
                gr.Warning(error.message, title=error.title)
                values = {}
            values |= {
                url_controls[name]: url_controls[name].value for name in restored_names if name not in TEXT_PARAMS
            }
            values |= {url_controls[name]: v for name, v in restore_controls(values.get(page.result), request).items()}
            view = values[current_view]
            analysed = [main_outputs[MAIN_VIEWS.index(view)]] if view in MAIN_VIEWS else []  # drawn already
            if drawings[view].outputs != analysed:  # an explanation, or the positional tables
                try:  # a view's gr.State starts at its own value, as in a new session
                    values |= draw_view(view, {c: values.get(c, c.value) for c in drawings[view].inputs})
                except gr.Error as error:
                    gr.Warning(error.message, title=error.title)
            return values | show_colour_controls(view)

        # Then the page's script puts the text in the box unless the person typed one meanwhile (decided in the
        # page when the load's answer has arrived, so a keystroke at any moment wins), selects the view's tab,
        # writes the address, and analyses a typed text. (An event with the tabs as output would name every
        # component of every tab: see the views' events.)
        loaded = demo.load(
            restore_page,
            None,
            list(
                dict.fromkeys([*shown, *restored, colour_controls, *(c for d in drawings.values() for c in d.outputs)])
            ),
            api_visibility="private",
            show_progress_on=spinners,
        )
        loaded = loaded.then(None, [restored_text, text_box], text_box, js=keep_typed_js(text_box.value))
        loaded.then(**sync_url(address_read=True, show_tab=True)).then(None, js=reanalyse_js())

        release_on_unload(demo)
        for endpoint in (predict, *(endpoint for view in VIEWS for endpoint in view.endpoints)):
            gr.api(endpoint, api_name=endpoint.__name__)

    configure_events(demo)  # one worker per core for all model calls together (`make load` tunes it)
    return demo


demo = build_demo()


def main(argv: list[str] | None = None) -> None:
    """Serve the explorer; keep serving when a public share link cannot be made, and say why."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", help="address to listen on (default 127.0.0.1, or GRADIO_SERVER_NAME)")
    parser.add_argument("--port", type=int, help="port to listen on (default 7860, or GRADIO_SERVER_PORT)")
    parser.add_argument("--share", action="store_true", help="also ask Gradio for a temporary public link")
    args = parser.parse_args(argv)
    where = {"server_name": args.host, "server_port": args.port, "share": args.share or None}
    demo.launch(**where, prevent_thread_lock=True, mcp_server=True, **launch_settings())  # MCP: /gradio_api/mcp/
    if demo.share_url is None and (args.share or os.environ.get("GRADIO_SHARE", "").lower() == "true"):
        print(
            "No public link: Gradio could not reach its share server (offline, or blocked by a firewall). "
            f"The explorer is still running at {demo.local_url}",
            file=sys.stderr,
        )
    demo.block_thread()


if __name__ == "__main__":
    main()
