"""Transformer Attention Explorer: type a sentence; see the prediction, every head's attention, positional encoding.

``python app.py [--host H] [--port P] [--share]`` serves it (Gradio's GRADIO_SERVER_NAME, GRADIO_SERVER_PORT
and GRADIO_SHARE work too); ``gradio app.py`` serves it with reload. The model comes from MODEL_ID (a Hub
repo id or a folder) at MODEL_REVISION, by default the bundled assets/model.

This file only wires components. What the model makes of a text is in ``transformer/analysis.py``;
the figures are in ``transformer/figures.py``. State flow:

- ``show_text`` (Analyze button, Enter, an example, page load) runs the model once and keeps the
  ``Analysis`` in ``gr.State``; every view is drawn from it.
- ``show_head`` (layer or head changed) and ``show_positions`` (dimensions changed) redraw from that
  state without calling the model.
- ``restore_view`` (page load) reads ``?text=...&layer=...&head=...``; after each view the page address
  is rewritten to match, so a copied address or the deep-link button reproduces the view.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import logging
import os
import sys
from pathlib import Path

import gradio as gr
import plotly.graph_objects as go
import torch

from transformer import analysis, figures
from transformer.analysis import Analysis, EmptyInputError, InputError
from transformer.loading import DEFAULT_MODEL_DIR, LoadedModel, ModelLoadError, load_model

try:  # Hugging Face ZeroGPU: the model's work runs inside spaces.GPU; imported before anything touches CUDA
    import spaces
except ImportError:
    spaces = None

if "OMP_NUM_THREADS" not in os.environ:
    # One request is a few milliseconds of small matrix products: intra-op threads only spin against each
    # other and any neighbour (measured: 110 ms with 2 threads on 2 busy cores, 2 ms with 1). Requests run
    # in parallel through the queue instead.
    torch.set_num_threads(1)

logger = logging.getLogger(__name__)

MEAN_HEAD = "mean"
MAX_URL_TEXT = 1500  # URL-encoded characters of text kept in the page address; longer texts travel by deep link
EXAMPLES = [
    "The film was a quiet, funny and completely charming surprise.",
    "I did not like this movie at all, and the ending was not good either.",
    "Not bad at all: the plot is thin, but the cast is great and the music is great.",
    "A dull, lifeless remake that wastes a wonderful cast.",
]
CSS = "#tokens .label { text-transform: none; }"  # token categories keep their case: "##o" is not "##O"
SYNC_URL_JS = f"""
(text, layer, head) => {{
    const url = new URL(window.location.href);
    url.searchParams.delete("deep_link");
    if (text && text.trim() && encodeURIComponent(text).length <= {MAX_URL_TEXT}) {{
        url.searchParams.set("text", text);
    }} else {{
        url.searchParams.delete("text");
    }}
    url.searchParams.set("layer", layer);
    url.searchParams.set("head", head);
    window.history.replaceState(window.history.state, "", url);
}}
"""


@functools.lru_cache(maxsize=1)
def get_model() -> tuple[LoadedModel, str | None]:
    """The model to explore, loaded once: MODEL_ID at MODEL_REVISION, else the bundled model.

    It is read on the CPU and then moved to CUDA when there is a GPU: on ZeroGPU hardware the main
    process may not touch CUDA itself, and ``.to("cuda")`` is the move that ``spaces`` defers.

    Returns:
        (the loaded model, a note saying why the app fell back to the bundled model, or None).
    """
    source = os.environ.get("MODEL_ID") or str(DEFAULT_MODEL_DIR)
    revision = os.environ.get("MODEL_REVISION") or None
    note = None
    try:
        loaded = load_model(source, revision=revision, device="cpu")
    except ModelLoadError as error:
        if Path(source).resolve() == Path(DEFAULT_MODEL_DIR).resolve():
            raise
        note = f"Could not load {source} ({error}); showing the bundled model instead."
        logger.warning(note)
        try:
            loaded = load_model(DEFAULT_MODEL_DIR, device="cpu")
        except ModelLoadError as fallback_error:
            raise ModelLoadError(f"{error}; the bundled model did not load either: {fallback_error}") from None
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    loaded.model.to(device)
    return dataclasses.replace(loaded, device=device), note


def _on_gpu(fn):
    """``spaces.GPU(fn)`` where the ``spaces`` package is installed (Hugging Face ZeroGPU), else ``fn``."""
    return spaces.GPU(fn) if spaces is not None else fn


@_on_gpu
def run_model(text: str | None) -> Analysis:
    """Analyse ``text`` with the explorer's model: the only function that calls the model."""
    loaded, _ = get_model()
    return analysis.analyze(loaded.model, loaded.tokenizer, text)


def _user_error(error: InputError) -> gr.Error:
    """A clear message for the person who sent the text, without a stack trace in the log."""
    return gr.Error(str(error), title="Cannot read this text", print_exception=False)


def _read_for_api(text: str) -> Analysis:
    """``run_model`` for API callers: any unusable text, blank included, is a clear ``gr.Error``."""
    try:
        return run_model(text)
    except InputError as error:
        raise _user_error(error) from None


def show_head(result: Analysis | None, layer: int, head: str) -> go.Figure | None:
    """Redraw the one-head heatmap from the kept analysis (no model call); ``head`` is "1".."H" or "mean"."""
    if result is None:
        return None
    head_index = None if head == MEAN_HEAD else int(head) - 1
    weights = analysis.attention_matrix(result, int(layer) - 1, head_index)
    which = "mean of all heads" if head_index is None else f"head {head}"
    return figures.attention_heatmap(result.tokens, weights, f"Layer {layer}, {which}: who attends to whom")


def show_positions(result: Analysis | None, dims: list[int] | None) -> go.Figure:
    """Redraw the positional-encoding curves for the chosen dimensions, marking the kept analysis's tokens."""
    table = analysis.positional_table(get_model()[0].model)  # (max_len, D)
    dims = sorted({dim for dim in map(int, dims or []) if 0 <= dim < table.shape[1]})
    return figures.positional_curves(table, dims, result.tokens if result is not None else ())


def show_text(text: str | None, layer: int, head: str, dims: list[int] | None) -> tuple:
    """Run the model once on ``text`` and draw every view.

    Returns:
        (analysis state, prediction, token spans, notice, heatmap, all-heads grid, positional curves).
        Blank text gives a prompt in the notice and empty views, not an error.
    """
    try:
        result = run_model(text)
    except EmptyInputError as prompt:
        return None, None, None, str(prompt), None, None, show_positions(None, dims)
    except InputError as error:
        raise _user_error(error) from None
    return (
        result,
        result.prediction,
        analysis.token_spans(result),
        result.notice or "",
        show_head(result, layer, head),
        figures.attention_grid(result.tokens, result.attentions),
        show_positions(result, dims),
    )


def _choice(value: str | None, allowed: list[str], default):
    """``value`` if it is one of ``allowed``, else ``default``: query strings are untrusted."""
    return value if value in allowed else default


def restore_view(text: str, layer: int, head: str, dims: list[int] | None, request: gr.Request | None) -> tuple:
    """Page load: take text, layer and head from the address (``?text=...&layer=2&head=mean``), then draw.

    Returns:
        (text, layer, head, *the outputs of ``show_text``).
    """
    params = dict(request.query_params) if request is not None else {}
    model = get_model()[0].model
    text = params.get("text", text)
    layer = int(_choice(params.get("layer"), [str(i) for i in range(1, model.num_layers + 1)], layer))
    head = _choice(params.get("head"), [MEAN_HEAD, *map(str, range(1, model.num_heads + 1))], head)
    return (text, layer, head, *show_text(text, layer, head, dims))


def predict(text: str) -> dict:
    """Classify a text.

    Returns {"label": the most likely class, "confidences": [{"label": class, "confidence": probability}, ...]}.
    """
    return analysis.label_payload(_read_for_api(text))


def attention(text: str) -> dict:
    """Every head's attention weights for a text.

    Returns {"tokens": [...], "offsets": [[start, end], ...], "truncated": bool,
    "attentions": [layer][head][query][key]} (weights rounded to 4 decimals; each query row sums to 1).
    """
    return analysis.attention_payload(_read_for_api(text))


def build_demo() -> gr.Blocks:
    """Lay out the explorer on ``get_model()``'s model and wire its events."""
    loaded, note = get_model()
    model = loaded.model
    table = analysis.positional_table(model)
    pe_scale = f"√{model.d_model} ≈ {model.d_model**0.5:.1f}"
    # sines whose wavelengths (2π·10000^(dim/D)) span a sentence to a paragraph, and the first one's cosine
    sines = {2 * round(model.d_model * fraction / 2) for fraction in (0.1, 0.2, 0.35)}
    pe_dims = sorted(dim for dim in sines | {min(sines) + 1} if dim < model.d_model)
    with gr.Blocks(title="Transformer Attention Explorer") as demo:
        gr.Markdown(
            "# Transformer Attention Explorer\n"
            "Type a sentence and see how a small Transformer sentiment classifier reads it: "
            "its prediction, the tokens it sees, where every attention head looks, and how it encodes position."
        )
        gr.Markdown(analysis.model_status(loaded, note), elem_id="model-status")
        with gr.Row(equal_height=True):
            text_box = gr.Textbox(
                value=EXAMPLES[0],
                label="Sentence",
                placeholder="Type a sentence, then press Enter or Analyze",
                lines=2,
                max_length=analysis.MAX_INPUT_CHARS,
                scale=4,
                elem_id="sentence",
            )
            with gr.Column(scale=1, min_width=200):
                analyze_button = gr.Button("Analyze", variant="primary", elem_id="analyze")
                gr.DeepLinkButton("Copy link to this view", copied_value="Link copied!")
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
        with gr.Tabs():
            with gr.Tab("Attention", id="attention"):
                with gr.Row():
                    layer = gr.Radio([(str(i), i) for i in range(1, model.num_layers + 1)], value=1, label="Layer")
                    head = gr.Radio(
                        [(str(h), str(h)) for h in range(1, model.num_heads + 1)] + [("mean of heads", MEAN_HEAD)],
                        value="1",
                        label="Head",
                    )
                heatmap = gr.Plot(label="One head", elem_id="attention-heatmap")
            with gr.Tab("All heads", id="all-heads"):
                grid = gr.Plot(label="Every layer and head", elem_id="attention-grid")
            with gr.Tab("Positional encoding", id="positional-encoding"):
                gr.Markdown(
                    f"The model adds row *p* of this table to the embedding of the token at position *p* "
                    f"(embeddings are scaled by {pe_scale} first). The table is this model's own: "
                    f"{model.max_len} positions × {model.d_model} dimensions."
                    + ("" if model.use_positional_encoding else " **This model was trained without it.**")
                )
                dims = gr.Dropdown(
                    list(range(model.d_model)),
                    value=pe_dims,
                    multiselect=True,
                    max_choices=8,
                    label="Dimensions",
                )
                curves = gr.Plot(label="Encoding against position", elem_id="pe-curves")
                with gr.Row():
                    gr.Plot(figures.positional_heatmap(table), label="The table")
                    gr.Plot(figures.positional_similarity(table), label="Relative position")
            # Further views (explanations) go here as tabs that read `result_state`, never the model directly
            # unless they need gradients or interventions: see the module docstring for the state flow.
        result_state = gr.State()

        views = [result_state, prediction, tokens_view, notice, heatmap, grid, curves]
        analyse = dict(fn=show_text, inputs=[text_box, layer, head, dims], outputs=views, api_visibility="private")
        sync_url = dict(fn=None, inputs=[text_box, layer, head], js=SYNC_URL_JS)
        gr.on([analyze_button.click, text_box.submit], trigger_mode="always_last", **analyse).success(**sync_url)
        examples.load_input_event.then(**analyse).success(**sync_url)
        gr.on(
            [layer.input, head.input],
            show_head,
            inputs=[result_state, layer, head],
            outputs=heatmap,
            trigger_mode="always_last",
            api_visibility="private",
        ).success(**sync_url)
        dims.input(show_positions, [result_state, dims], curves, trigger_mode="always_last", api_visibility="private")
        demo.load(
            restore_view,
            inputs=[text_box, layer, head, dims],
            outputs=[text_box, layer, head, *views],
            api_visibility="private",
        ).success(**sync_url)

        gr.api(predict, api_name="predict")
        gr.api(attention, api_name="attention")

    # One request costs 2-100 ms of CPU (model forward and figures, torch on one thread), so two workers
    # match the two cores of the target machine: more would only time-slice the same cores and slow every
    # request down. A full queue of 64 drains in about 3 s at 100 ms a job on two workers; past that a
    # visitor is better told "busy, retry" than kept waiting. The load test is where these get tuned.
    demo.queue(default_concurrency_limit=2, max_size=64)
    return demo


demo = build_demo()


def main(argv: list[str] | None = None) -> None:
    """Serve the explorer; keep serving when a public share link cannot be made, and say why."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", help="address to listen on (default 127.0.0.1, or GRADIO_SERVER_NAME)")
    parser.add_argument("--port", type=int, help="port to listen on (default 7860, or GRADIO_SERVER_PORT)")
    parser.add_argument("--share", action="store_true", help="also ask Gradio for a temporary public link")
    args = parser.parse_args(argv)
    demo.launch(
        server_name=args.host, server_port=args.port, share=args.share or None, prevent_thread_lock=True, css=CSS
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
