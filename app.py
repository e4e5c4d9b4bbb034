"""Transformer Attention Explorer: type a sentence; see the prediction, every head's attention, positional
encoding, and explanations that go beyond raw attention.

``python app.py [--host H] [--port P] [--share]`` serves it (Gradio's GRADIO_SERVER_NAME, GRADIO_SERVER_PORT
and GRADIO_SHARE work too); ``gradio app.py`` serves it with reload. The model comes from MODEL_ID (a Hub
repo id or a folder) at MODEL_REVISION, by default the bundled assets/model.

This file only wires components. What the model makes of a text is in ``transformer/analysis.py``, the
explanation views' numbers in ``transformer/explain_views.py``, and what their tabs show in
``transformer/explain_panels.py``; the figures are in ``transformer/figures.py`` and
``transformer/explain_figures.py``. State flow:

- ``show_text`` (Analyze button, Enter, an example, page load) runs the model once and keeps the
  ``Analysis`` in ``gr.State``; the main views are drawn from it. It computes no explanation.
- ``show_head`` (layer or head changed), ``show_positions`` (dimensions changed) and the colour-scale
  controls redraw from that state without calling the model.
- The explanation tabs are drawn when used: when their tab is selected, when one of their controls
  changes, and, for the tab on screen, after each new analysis or colour-scale change. A tab whose
  numbers need the model keeps them in its own ``gr.State`` with the analysis and controls they came
  from, so redrawing it (colour scale, query token, coming back to the tab) calls no model.
- Every model call goes through ``run_model`` or ``run_view``, the GPU-wrapped functions.
- ``restore_view`` and ``restore_controls`` (page load) read the address (``?text=...&layer=2&view=knockout
  &heads_off=L1 H2``...); after each view the address is rewritten to hold the text, the view and that
  view's controls, so a copied address or the deep-link button reproduces the view.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import logging
import os
import sys
from pathlib import Path

import gradio as gr
import plotly.graph_objects as go
import torch

from transformer import analysis, explain_panels, explain_views, figures, page_address
from transformer.analysis import Analysis, EmptyInputError, InputError
from transformer.explain_attribution import DEFAULT_IG_STEPS
from transformer.explain_colour import SCALES
from transformer.explain_export import to_jsonable
from transformer.explain_figures import head_importance_figure
from transformer.export_files import write_export
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
MAX_DIMS = 8  # positional-encoding dimensions drawn at once
MAX_URL_TEXT = 1500  # URL-encoded characters of a text kept in the page address; longer texts travel by deep link
API_DECIMALS = 6  # the explanation endpoints round their numbers to this many decimals (/export keeps them exact)
EXAMPLES = [
    "The film was a quiet, funny and completely charming surprise.",
    "I did not like this movie at all, and the ending was not good either.",
    "Not bad at all: the plot is thin, but the cast is great and the music is great.",
    "A dull, lifeless remake that wastes a wonderful cast.",
]
COMPARE_EXAMPLE = "The film was not a quiet, funny or charming surprise."
CSS = (
    "#tokens .label { text-transform: none; }"  # token categories keep their case: "##o" is not "##O"
    " .explain-html table { border-collapse: collapse; margin: 0.5em 0; }"
    " .explain-html th, .explain-html td { border: 1px solid #ddd; padding: 2px 8px; text-align: right; }"
)
VIEWS = [  # the tabs' ids, the "view" in the page address
    "attention",
    "all-heads",
    "positional-encoding",
    "rollout",
    "attributions",
    "inside-head",
    "knockout",
    "perturb",
    "word-order",
    "compare",
    "export",
]
# The page address: parameters kept for every view, then each view's own (its controls).
GLOBAL_PARAMS = ["text", "view", "layer", "head", "scale", "leave_out"]
VIEW_PARAMS = {
    "rollout": ["rollout_layer"],
    "attributions": ["target", "steps", "baseline"],
    "inside-head": ["head_layer", "head_head", "query"],
    "knockout": ["heads_off"],
    "perturb": ["position", "mode"],
    "word-order": ["order", "seed", "reordered"],
    "compare": ["compare", "compare_layer", "compare_head"],
}
URL_PARAMS = GLOBAL_PARAMS + [name for names in VIEW_PARAMS.values() for name in names]
TEXT_PARAMS = ["text", "compare", "reordered"]


def _sync_url_js(address_read: bool = False) -> str:
    """JavaScript that writes the text, the view and that view's controls into the page address.

    Until the page load has read the address (``address_read``: the last step of the load), it
    changes nothing: Gradio selects the first tab when the page mounts, and rewriting the address
    then would lose the view that the address asks for.
    """
    return f"""
(...values) => {{
    {"window.__explorerAddressRead = true;" if address_read else "if (!window.__explorerAddressRead) return;"}
    const names = {json.dumps(URL_PARAMS)}, own = {json.dumps(VIEW_PARAMS)}, texts = {json.dumps(TEXT_PARAMS)};
    const view = values[names.indexOf("view")];
    const url = new URL(window.location.href);
    url.searchParams.delete("deep_link");
    names.forEach((name, i) => {{
        const value = Array.isArray(values[i]) ? values[i].join(",") : String(values[i] ?? "");
        const kept = {json.dumps(GLOBAL_PARAMS)}.includes(name) || (own[view] || []).includes(name);
        const fits = !texts.includes(name) || encodeURIComponent(value).length <= {MAX_URL_TEXT};
        if (kept && fits && value.trim()) {{
            url.searchParams.set(name, value);
        }} else {{
            url.searchParams.delete(name);
        }}
    }});
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
    """Analyse ``text`` with the explorer's model: one forward pass, every layer's attention kept."""
    loaded, _ = get_model()
    return analysis.analyze(loaded.model, loaded.tokenizer, text)


@_on_gpu
def run_view(build, result: Analysis, **controls):
    """Compute an explanation view, ``build(model, tokenizer, result, **controls)`` from ``explain_views``."""
    loaded, _ = get_model()
    return build(loaded.model, loaded.tokenizer, result, **controls)


def _user_error(error: InputError, title: str = "Cannot read this text") -> gr.Error:
    """A clear message for the person who sent the text or settings, without a stack trace in the log."""
    return gr.Error(str(error), title=title, print_exception=False)


def _read_for_api(text: str) -> Analysis:
    """``run_model`` for API callers: any unusable text, blank included, is a clear ``gr.Error``."""
    try:
        return run_model(text)
    except InputError as error:
        raise _user_error(error) from None


def _explain(build, result: Analysis, **controls):
    """``run_view`` for a person or an API caller: controls it cannot use are a clear ``gr.Error``."""
    try:
        return run_view(build, result, **controls)
    except InputError as error:
        raise _user_error(error, "Cannot draw this view") from None


def _kept_view(kept: tuple | None, build, result: Analysis, **controls) -> tuple:
    """A tab's (key, view): ``kept`` when it holds ``build``'s view of this analysis with these controls, else new.

    Redrawing a tab (another colour scale or query token, coming back to it) then calls no model.
    """
    key = (build.__name__, result.text, controls)
    return kept if kept is not None and kept[0] == key else (key, _explain(build, result, **controls))


def _layer_head(result: Analysis, layer, head) -> tuple[int, int | None]:
    """A layer and head counted from 1 ("mean": every head), as 0-based indices; one that does not exist is a
    clear ``gr.Error``, never Python's counting from the end."""
    layers, heads = result.attentions.shape[:2]
    try:
        layer_index = explain_views.whole_number(layer, "Layer", 1, layers) - 1
        head_index = None if head == MEAN_HEAD else explain_views.whole_number(head, "Head", 1, heads) - 1
    except InputError as error:
        raise _user_error(error, "Cannot draw this view") from None
    return layer_index, head_index


def show_head(
    result: Analysis | None, layer: int, head: str, scale: str = "global", leave_out: list[str] | None = None
) -> go.Figure | None:
    """Redraw the one-head heatmap from the kept analysis (no model call); ``head`` is "1".."H" or "mean"."""
    if result is None:
        return None
    layer_index, head_index = _layer_head(result, layer, head)
    weights = analysis.attention_matrix(result, layer_index, head_index)
    which = "mean of all heads" if head_index is None else f"head {head_index + 1}"
    return figures.attention_heatmap(
        result.tokens,
        weights,
        f"Layer {layer_index + 1}, {which}: who attends to whom",
        scale=explain_panels.colour_scale(scale),
        exclude=explain_panels.excluded_positions(result.tokens, leave_out),
    )


def show_grid(result: Analysis | None, scale: str = "global", leave_out: list[str] | None = None) -> go.Figure | None:
    """Redraw every layer's and head's attention from the kept analysis (no model call)."""
    if result is None:
        return None
    return figures.attention_grid(
        result.tokens,
        result.attentions,
        scale=explain_panels.colour_scale(scale),
        exclude=explain_panels.excluded_positions(result.tokens, leave_out),
    )


def show_attention(
    result: Analysis | None, layer: int, head: str, scale: str, leave_out: list[str] | None
) -> tuple[go.Figure | None, go.Figure | None]:
    """Redraw the one-head heatmap and the all-heads grid with another colour scale (no model call)."""
    return show_head(result, layer, head, scale, leave_out), show_grid(result, scale, leave_out)


def show_positions(result: Analysis | None, dims: list[int] | None) -> go.Figure:
    """Redraw the positional-encoding curves for the chosen dimensions, marking the kept analysis's tokens."""
    table = analysis.positional_table(get_model()[0].model)  # (max_len, D)
    dims = [dims] if isinstance(dims, int) else dims or []  # a single dimension, sent by an API caller
    dims = sorted({dim for dim in map(int, dims) if 0 <= dim < table.shape[1]})
    return figures.positional_curves(table, dims, result.tokens if result is not None else ())


def show_text(
    text: str | None,
    layer: int,
    head: str,
    dims: list[int] | None,
    scale: str = "global",
    leave_out: list[str] | None = None,
) -> tuple:
    """Run the model once on ``text`` and draw the main views (no explanation: those are drawn when used).

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
        show_head(result, layer, head, scale, leave_out),
        show_grid(result, scale, leave_out),
        show_positions(result, dims),
    )


def show_rollout(result: Analysis | None, layer: int, scale: str, leave_out: list[str] | None) -> tuple:
    """Rollout tab: (shares of the pooled output per layer, the rollout matrix after ``layer``); no model call."""
    if result is None:
        return None, None
    return explain_panels.rollout_panel(explain_views.rollout_view(result), layer, scale, leave_out)


def show_attributions(result: Analysis | None, target: str, steps: int, baseline: str, kept: tuple | None) -> tuple:
    """Attributions tab: (summary, gradient × input text, IG text, both per token, agreement, kept view)."""
    if result is None:
        return "", "", "", None, None, None
    kept = _kept_view(kept, explain_views.attribution_view, result, target=target, steps=steps, baseline=baseline)
    return (*explain_panels.attribution_panel(kept[1]), kept)


def show_inside_head(result: Analysis | None, layer: int, head: int, query, kept: tuple | None) -> tuple:
    """Inside-one-head tab: (figure, entropy summary, query choices, kept view); a new query only redraws."""
    if result is None:
        return None, "", gr.Dropdown(choices=[], value=None), None
    kept = _kept_view(kept, explain_views.head_view, result, layer=layer, head=head)
    position = explain_panels.pick_position(query, len(result.tokens))
    figure, summary = explain_panels.head_panel(kept[1], position)
    return figure, summary, gr.Dropdown(choices=explain_panels.token_choices(result.tokens), value=position), kept


def show_knockout(
    result: Analysis | None,
    heads_off: list[str] | None,
    scale: str,
    leave_out: list[str] | None,
    kept: tuple | None,
    kept_importance: tuple | None,
) -> tuple:
    """Knockout tab: (prediction, change, every head's attention, head importance, both kept views)."""
    if result is None:
        return None, "", None, None, None, None
    kept = _kept_view(kept, explain_views.knockout_view, result, heads_off=list(heads_off or []))
    kept_importance = _kept_view(kept_importance, explain_views.importance_view, result)
    importance = head_importance_figure(kept_importance[1].importance, result.label_names)
    return (*explain_panels.knockout_panel(kept[1], scale, leave_out), importance, kept, kept_importance)


def show_perturbation(result: Analysis | None, position, mode: str, kept: tuple | None) -> tuple:
    """Perturbation tab: (new prediction, what changed, token choices, kept view)."""
    if result is None:
        return None, "", gr.Dropdown(choices=[], value=None), None
    position = explain_panels.pick_position(position, len(result.tokens))
    kept = _kept_view(kept, explain_views.perturbation_view, result, position=position, mode=mode)
    choices = gr.Dropdown(choices=explain_panels.token_choices(result.tokens), value=position)
    return (*explain_panels.perturbation_panel(kept[1]), choices, kept)


def show_word_order(result: Analysis | None, order: str, seed: int, reordered: str, kept: tuple | None) -> tuple:
    """Word-order tab: (both orders and their predictions, the figure, kept view)."""
    if result is None:
        return "", None, None
    own = reordered if order == "yours" else None
    kept = _kept_view(kept, explain_views.word_order_view, result, seed=seed, reordered=own)
    return (*explain_panels.word_order_panel(kept[1]), kept)


def show_compare(
    result: Analysis | None,
    text_b: str,
    layer: int,
    head: int,
    scale: str,
    leave_out: list[str] | None,
    kept_b: Analysis | None,
) -> tuple:
    """Compare tab: (prediction A, prediction B, A's head, B's head, B − A, summary, B's kept analysis).

    Sentence A is the kept analysis; B runs through the model only when its text changes.
    """
    if result is None:
        return None, None, None, None, None, "", kept_b
    if kept_b is None or kept_b.text != text_b:
        try:
            kept_b = run_model(text_b)
        except EmptyInputError:
            return None, None, None, None, None, "<p>Type a second sentence to compare with.</p>", None
        except InputError as error:
            raise _user_error(error) from None
    view = explain_views.compare_view(result, kept_b, layer, head)
    return (*explain_panels.compare_panel(view, scale, leave_out), kept_b)


def show_export(result: Analysis | None, layer: int, head: str) -> tuple:
    """Export tab: (the analysis as a JSON file, the current layer's and head's attention as a CSV file)."""
    if result is None:
        return None, None
    layer_index, head_index = _layer_head(result, layer, head)
    csv_text = explain_views.export_csv(result, layer_index, head_index)
    which = MEAN_HEAD if head_index is None else head_index + 1
    return (
        write_export("attention-explorer-analysis.json", explain_views.export_json(result)),
        write_export(f"attention-layer{layer_index + 1}-head{which}.csv", csv_text),
    )


def default_dims(model) -> list[int]:
    """The positional-encoding dimensions shown at first: sines whose wavelengths (2π·10000^(dim/D)) span a
    sentence to a paragraph, and the first one's cosine."""
    sines = {2 * round(model.d_model * fraction / 2) for fraction in (0.1, 0.2, 0.35)}
    return sorted(dim for dim in sines | {min(sines) + 1} if dim < model.d_model)


def _page_choice(value, allowed: list, default):
    """The page's ``value`` when it is one of the ``allowed`` choices, else ``default``."""
    picked = page_address.choice(str(value), allowed) if isinstance(value, str | int) else None
    return default if picked is None else picked


def _page_choices(value, allowed: list, default: list, most: int | None = None) -> list:
    """The page's list ``value`` when it holds only ``allowed`` choices (at most ``most``), else ``default``."""
    if not isinstance(value, list) or (most is not None and len(value) > most):
        return default
    picked = [_page_choice(item, allowed, None) for item in value]
    return default if None in picked else picked


def restore_view(
    text: str,
    layer: int,
    head: str,
    dims: list[int] | None,
    request: gr.Request | None,
    scale: str = "global",
    leave_out: list[str] | None = None,
) -> tuple:
    """Page load: take text, layer, head and the colour scale from the address, then draw the main views.

    The page's own values run here unchecked by Gradio (the load event does not preprocess): a deep link
    (``?deep_link=``) fills the page with whatever its maker's session sent, so a page value is used only
    when it is one of its control's choices, else the control's default; never echoed in an error.

    Returns:
        (text, layer, head, scale, leave_out, *the outputs of ``show_text``).
    """
    params = dict(request.query_params) if request is not None else {}
    model = get_model()[0].model
    layers, heads = list(range(1, model.num_layers + 1)), [MEAN_HEAD, *map(str, range(1, model.num_heads + 1))]
    leave_out_values = [value for _, value in explain_panels.LEAVE_OUT]
    text = params.get("text", text if isinstance(text, str) else "")
    layer = page_address.choice(params.get("layer"), layers) or _page_choice(layer, layers, 1)
    head = page_address.choice(params.get("head"), heads) or _page_choice(head, heads, "1")
    scale = page_address.choice(params.get("scale"), SCALES) or _page_choice(scale, SCALES, "global")
    restored = page_address.choices(params.get("leave_out"), leave_out_values)
    leave_out = _page_choices(leave_out, leave_out_values, []) if restored is None else restored
    dims = page_dims(dims, model)
    return (text, layer, head, scale, leave_out, *show_text(text, layer, head, dims, scale, leave_out))


def page_dims(dims, model) -> list[int]:
    """The page's positional-encoding dimensions when they are the dropdown's choices (at most 8), else the default."""
    return _page_choices(dims, list(range(model.d_model)), default_dims(model), most=MAX_DIMS)


def restore_controls(result: Analysis | None, request: gr.Request | None) -> dict[str, object]:
    """Page load, after ``restore_view``: the view and its controls from the address (``?view=knockout&...``).

    Returns:
        {URL parameter: value} for each parameter present and allowed; the others keep what the page has.
    """
    params = dict(request.query_params) if request is not None else {}
    model = get_model()[0].model
    layers, heads = list(range(1, model.num_layers + 1)), list(range(1, model.num_heads + 1))
    n = len(result.tokens) if result is not None else 0
    readers = {
        "view": lambda value: page_address.choice(value, VIEWS),
        "rollout_layer": lambda value: page_address.choice(value, layers),
        "target": lambda value: page_address.choice(value, [explain_views.PREDICTED, *model.label_names]),
        "steps": lambda value: page_address.number(value, 1, explain_views.MAX_IG_STEPS),
        "baseline": lambda value: page_address.choice(value, explain_views.BASELINES),
        "head_layer": lambda value: page_address.choice(value, layers),
        "head_head": lambda value: page_address.choice(value, heads),
        "query": lambda value: page_address.number(value, 0, n - 1),
        "heads_off": lambda value: page_address.choices(
            value, explain_views.head_labels(model.num_layers, model.num_heads)
        ),
        "position": lambda value: page_address.number(value, 0, n - 1),
        "mode": lambda value: page_address.choice(value, explain_views.PERTURBATIONS),
        "order": lambda value: page_address.choice(value, ["shuffle", "yours"]),
        "seed": lambda value: page_address.number(value, 0, 2**31 - 1),
        "reordered": lambda value: value[: analysis.MAX_INPUT_CHARS],
        "compare": lambda value: value[: analysis.MAX_INPUT_CHARS],
        "compare_layer": lambda value: page_address.choice(value, layers),
        "compare_head": lambda value: page_address.choice(value, heads),
    }
    restored = {name: read(params[name]) for name, read in readers.items() if name in params}
    return {name: value for name, value in restored.items() if value is not None}


def _api_view(build, text: str, **controls):
    """An explanation view for an API caller, as JSON: unusable text or controls are a clear ``gr.Error``."""
    return to_jsonable(_explain(build, _read_for_api(text), **controls), API_DECIMALS)


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


def rollout(text: str) -> dict:
    """Attention rollout (Abnar & Zuidema 2020) after every layer, read for the mean-pooled output.

    Returns {"text", "tokens", "residual_weight", "rollout": [layer][query][key] (rows sum to 1),
    "pooled": [layer][token]: the pooled output's share of each token, the rollout's column means (sum to 1)}.
    """
    return to_jsonable(explain_views.rollout_view(_read_for_api(text)), API_DECIMALS)


def attributions(
    text: str, target: str = explain_views.PREDICTED, steps: int = DEFAULT_IG_STEPS, baseline: str = "pad"
) -> dict:
    """Gradient × input and Integrated Gradients for a target class, and how far four methods agree.

    target: a class name, or "predicted"; steps: Integrated Gradients steps (1-256); baseline: "pad" or "zero".
    Returns {"tokens", "target", "target_label", "gradient_x_input": [token], "integrated_gradients":
    {"attributions": [token], "target_logit", "baseline_logit", "completeness_error", "complete", ...},
    "agreement": {"methods", "scores": [method][token], "correlation": [method][method] (Spearman; null if undefined)}}.
    """
    return _api_view(explain_views.attribution_view, text, target=target, steps=steps, baseline=baseline)


def head_internals(text: str, layer: int = 1, head: int = 1) -> dict:
    """Inside one head (layer and head from 1): raw scores QKᵀ, scaled QKᵀ/√d_k, softmax and entropy.

    Returns {"tokens", "scores": {"layer", "head" (from 0), "d_k", "raw", "scaled", "weights",
    "weights_unscaled": [query][key], "entropy", "entropy_unscaled": [query] (nats), "mean_entropy", ...}}.
    """
    return _api_view(explain_views.head_view, text, layer=layer, head=head)


def knockout(text: str, heads: list[str] | None = None) -> dict:
    """Classify a text with some heads switched off, named like "L1 H2" (layer 1, head 2).

    Returns {"tokens", "label_names", "heads_off", "probabilities_before" (all heads on), "probabilities"
    (with the knockout), "attentions": [layer][head][query][key] with the knockout}.
    """
    return _api_view(explain_views.knockout_view, text, heads_off=heads or [])


def head_importance(text: str) -> dict:
    """For each head alone, how far the predicted class's probability drops when it is switched off.

    Returns {"tokens", "label_names", "importance": {"target", "base_prob", "ablated_prob": [layer][head],
    "drop": [layer][head]}}.
    """
    return _api_view(explain_views.importance_view, text)


def perturb(text: str, position: int = 0, mode: str = "mask") -> dict:
    """Replace the token at a position (from 0) by [MASK] (mode "mask") or delete it ("remove"), and re-classify.

    Returns {"tokens", "tokens_after", "position", "mode", "probabilities_before", "probabilities_after", "change"}.
    """
    return _api_view(explain_views.perturbation_view, text, position=position, mode=mode)


def word_order(text: str, reordered: str = "", seed: int = 0) -> dict:
    """Classify a text and a reordering (yours, or its tokens shuffled with the seed), positional encoding on and off.

    Returns {"tokens", "reordered_tokens", "seed", "experiment": {"is_permutation", "logits", "probs":
    [order][encoding][class] (order 0 = the text; encoding 0 = on)}, "difference_without_encoding" (0 up to
    float rounding for a true reordering), "difference_with_encoding"}.
    """
    shuffle = isinstance(reordered, str) and not reordered.strip()
    return _api_view(explain_views.word_order_view, text, seed=seed, reordered=None if shuffle else reordered)


def compare(text_a: str, text_b: str, layer: int = 1, head: int = 1) -> dict:
    """Two texts through one head (layer and head from 1), with B − A where their tokens line up.

    Returns {"tokens_a", "tokens_b", "label_names", "comparison": {"probs_a", "probs_b", "attention_a",
    "attention_b", "pairs": [[position in A, position in B], ...], "difference": [pair][pair]}}.
    """
    result_a, result_b = _read_for_api(text_a), _read_for_api(text_b)
    try:
        return to_jsonable(explain_views.compare_view(result_a, result_b, layer, head), API_DECIMALS)
    except InputError as error:
        raise _user_error(error, "Cannot draw this view") from None


def export(text: str, layer: int = 1, head: str = "1") -> dict:
    """The analysis of a text with every number exact, and one attention matrix as CSV (head "mean" averages).

    Returns {"analysis": {"text", "tokens", "token_ids", "offsets", "label_names", "probabilities",
    "attentions": [layer][head][query][key], ...}, "attention_csv": the CSV text, a header of key tokens
    and one row per query}.
    """
    result = _read_for_api(text)
    layer_index, head_index = _layer_head(result, layer, head)
    return {
        "analysis": to_jsonable(result),  # what the JSON download holds, numbers exact
        "attention_csv": explain_views.export_csv(result, layer_index, head_index),
    }


def build_demo() -> gr.Blocks:
    """Lay out the explorer on ``get_model()``'s model and wire its events."""
    loaded, note = get_model()
    model = loaded.model
    table = analysis.positional_table(model)
    pe_scale = f"√{model.d_model} ≈ {model.d_model**0.5:.1f}"
    layer_choices = [(str(i), i) for i in range(1, model.num_layers + 1)]
    head_choices = [(str(h), h) for h in range(1, model.num_heads + 1)]
    with gr.Blocks(title="Transformer Attention Explorer") as demo:
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
        with gr.Row():
            scale = gr.Radio(
                [("one range for the whole map", "global"), ("one range per query row", "row")],
                value="global",
                label="Colour scale of the attention maps",
                elem_id="colour-scale",
            )
            leave_out = gr.CheckboxGroup(
                explain_panels.LEAVE_OUT,
                value=[],
                label="Leave out of the colour range (they are still drawn, clipped)",
                elem_id="leave-out",
            )
        current_view = gr.Textbox("attention", visible=False, elem_id="current-view")
        with gr.Tabs(elem_id="views") as tabs:
            with gr.Tab("Attention", id="attention") as attention_tab:
                with gr.Row():
                    layer = gr.Radio(layer_choices, value=1, label="Layer")
                    head = gr.Radio(
                        [(str(h), str(h)) for h in range(1, model.num_heads + 1)] + [("mean of heads", MEAN_HEAD)],
                        value="1",
                        label="Head",
                    )
                heatmap = gr.Plot(label="One head", elem_id="attention-heatmap")
            with gr.Tab("All heads", id="all-heads") as all_heads_tab:
                grid = gr.Plot(label="Every layer and head", elem_id="attention-grid")
            with gr.Tab("Positional encoding", id="positional-encoding") as positions_tab:
                gr.Markdown(
                    f"The model adds row *p* of this table to the embedding of the token at position *p* "
                    f"(embeddings are scaled by {pe_scale} first). The table is this model's own: "
                    f"{model.max_len} positions × {model.d_model} dimensions."
                    + ("" if model.use_positional_encoding else " **This model was trained without it.**")
                )
                dims = gr.Dropdown(
                    list(range(model.d_model)),
                    value=default_dims(model),
                    multiselect=True,
                    max_choices=MAX_DIMS,
                    label="Dimensions",
                )
                curves = gr.Plot(label="Encoding against position", elem_id="pe-curves")
                with gr.Row():
                    gr.Plot(figures.positional_heatmap(table), label="The table")
                    gr.Plot(figures.positional_similarity(table), label="Relative position")
            with gr.Tab("Rollout", id="rollout") as rollout_tab:
                gr.Markdown(
                    "**Attention rollout** follows attention through the layers: each layer's heads are averaged, "
                    "the residual connection is added as the identity (half the weight), rows are renormalised and "
                    "the layers are multiplied. Row *i* of the matrix says how much of position *i* after that layer "
                    "comes from each input token.\n\n"
                    "**Reading it for this model:** the classifier has no [CLS] token; it averages every final "
                    "position (mean pooling). So the pooled output's view of the rollout is the *mean of the rows*, "
                    "one share per token, summing to 1. The chart shows those shares after each layer, coloured by "
                    "how far they are above (red) or below (blue) an even share 1/N."
                )
                rollout_layer = gr.Radio(layer_choices, value=model.num_layers, label="Rollout after layer")
                rollout_shares = gr.Plot(label="What the pooled output takes from each token", elem_id="rollout-shares")
                rollout_matrix = gr.Plot(label="Rollout matrix", elem_id="rollout-matrix")
            with gr.Tab("Attributions", id="attributions") as attributions_tab:
                gr.Markdown(
                    "Which tokens push the chosen class's logit up (red) or down (blue). **Gradient × input** is the "
                    "first-order estimate; **Integrated Gradients** averages the gradient along the straight path "
                    "from a baseline (no words, same positions) to your sentence, so the scores add up to the "
                    "logit's change. Both attribute the token embeddings, not the positional encoding. The last "
                    "figure compares how the methods rank the tokens, raw attention and rollout included."
                )
                with gr.Row():
                    target = gr.Radio(
                        [("the predicted class", explain_views.PREDICTED), *((n, n) for n in model.label_names)],
                        value=explain_views.PREDICTED,
                        label="Target class",
                    )
                    steps = gr.Slider(
                        4, 128, value=DEFAULT_IG_STEPS, step=4, label="Integrated Gradients steps", elem_id="ig-steps"
                    )
                    baseline = gr.Radio(
                        [("[PAD] tokens", "pad"), ("zero embeddings", "zero")], value="pad", label="Baseline"
                    )
                attribution_summary = gr.HTML(elem_id="attribution-summary")
                gradient_text = gr.HTML(label="Gradient × input", elem_id="gradient-x-input")
                ig_text = gr.HTML(label="Integrated Gradients", elem_id="integrated-gradients")
                attribution_plot = gr.Plot(label="Attribution per token", elem_id="attribution-plot")
                agreement_plot = gr.Plot(label="Method agreement", elem_id="agreement-plot")
            with gr.Tab("Inside one head", id="inside-head") as inside_tab:
                gr.Markdown(
                    "One head, step by step, for one query token: the raw scores QKᵀ, the scaled scores QKᵀ/√d_k, and "
                    "the softmax weights with and without the scaling; then every query's attention entropy (how "
                    "spread out its weights are) with and without it."
                )
                with gr.Row():
                    head_layer = gr.Radio(layer_choices, value=1, label="Layer")
                    head_head = gr.Radio(head_choices, value=1, label="Head")
                    query = gr.Dropdown(choices=[], label="Query token", allow_custom_value=True, elem_id="query")
                head_summary = gr.HTML(elem_id="head-summary")
                head_plot = gr.Plot(label="Inside the head", elem_id="head-plot")
            with gr.Tab("Head knockout", id="knockout") as knockout_tab:
                gr.Markdown(
                    "Switch heads off (their output is multiplied by 0 before the output projection) and watch the "
                    "prediction and the later layers' attention move. The importance chart knocks out each head "
                    "alone: how far the predicted class's probability drops without it (red: the head supports it)."
                )
                heads_off = gr.CheckboxGroup(
                    explain_views.head_labels(model.num_layers, model.num_heads),
                    value=[],
                    label="Heads switched off (L = layer, H = head)",
                    elem_id="heads-off",
                )
                with gr.Row():
                    knockout_prediction = gr.Label(label="Prediction with the knockout", elem_id="knockout-prediction")
                    knockout_summary = gr.HTML(elem_id="knockout-summary", elem_classes="explain-html")
                knockout_grid = gr.Plot(label="Every head with the knockout", elem_id="knockout-grid")
                importance_plot = gr.Plot(label="Head importance", elem_id="head-importance")
            with gr.Tab("Token perturbation", id="perturb") as perturb_tab:
                gr.Markdown("Mask or remove one token and see how the prediction changes.")
                with gr.Row():
                    position = gr.Dropdown(choices=[], label="Token", allow_custom_value=True, elem_id="position")
                    mode = gr.Radio([("replace by [MASK]", "mask"), ("remove", "remove")], value="mask", label="Change")
                with gr.Row():
                    perturb_prediction = gr.Label(label="Prediction after the change", elem_id="perturb-prediction")
                    perturb_summary = gr.HTML(elem_id="perturb-summary", elem_classes="explain-html")
            with gr.Tab("Word order", id="word-order") as order_tab:
                gr.Markdown(
                    "Attention alone cannot see word order: without positional encoding every block treats the "
                    "positions alike and mean pooling ignores their order, so a reordered sentence gets exactly "
                    'the same prediction ("the dog bit the man" = "the man bit the dog"). With positional '
                    "encoding on, the two can differ. Both are shown, for your sentence and a reordering of it."
                )
                with gr.Row():
                    order = gr.Radio(
                        [("shuffle the tokens", "shuffle"), ("my own reordering", "yours")],
                        value="shuffle",
                        label="Reordering",
                    )
                    seed = gr.Number(0, precision=0, minimum=0, label="Shuffle seed")
                    reordered = gr.Textbox(label="My reordering (the same words)", elem_id="reordered")
                    reorder_button = gr.Button("Reorder", elem_id="reorder")
                order_summary = gr.HTML(elem_id="order-summary", elem_classes="explain-html")
                order_plot = gr.Plot(label="Predictions", elem_id="order-plot")
            with gr.Tab("Compare", id="compare") as compare_tab:
                gr.Markdown(
                    "Your sentence (A) beside a second one (B): both predictions, the same head in each, and B − A "
                    "for the tokens the two share (lined up in order; red: B attends more)."
                )
                with gr.Row(equal_height=True):
                    compare_text = gr.Textbox(COMPARE_EXAMPLE, label="Sentence B", scale=3, elem_id="compare-text")
                    compare_layer = gr.Radio(layer_choices, value=1, label="Layer", elem_id="compare-layer")
                    compare_head = gr.Radio(head_choices, value=1, label="Head")
                    compare_button = gr.Button("Compare", elem_id="compare-button")
                with gr.Row():
                    compare_a = gr.Label(label="Prediction A", elem_id="compare-a")
                    compare_b = gr.Label(label="Prediction B", elem_id="compare-b")
                    compare_summary = gr.HTML(elem_id="compare-summary", elem_classes="explain-html")
                with gr.Row():
                    heatmap_a = gr.Plot(label="A", elem_id="compare-heatmap-a")
                    heatmap_b = gr.Plot(label="B", elem_id="compare-heatmap-b")
                difference_plot = gr.Plot(label="B − A", elem_id="compare-difference")
            with gr.Tab("Export", id="export") as export_tab:
                gr.Markdown(
                    "The analysis as JSON (text, tokens, offsets, probabilities and every attention weight, numbers "
                    "exact) and the Attention tab's current layer and head as CSV (queries on rows, keys on columns)."
                )
                with gr.Row():
                    json_file = gr.DownloadButton("Download the analysis (JSON)", elem_id="export-json")
                    csv_file = gr.DownloadButton("Download this layer and head (CSV)", elem_id="export-csv")
        result_state = gr.State()
        attribution_state, head_state, knockout_state, importance_state = gr.State(), gr.State(), gr.State(), gr.State()
        perturb_state, order_state, compare_state = gr.State(), gr.State(), gr.State()

        # Each tab drawn when used: (handler, inputs, outputs, the tab's own triggers).
        explain = {
            "rollout": (
                show_rollout,
                [result_state, rollout_layer, scale, leave_out],
                [rollout_shares, rollout_matrix],
                [rollout_layer.input],
            ),
            "attributions": (
                show_attributions,
                [result_state, target, steps, baseline, attribution_state],
                [attribution_summary, gradient_text, ig_text, attribution_plot, agreement_plot, attribution_state],
                [target.input, steps.release, baseline.input],
            ),
            "inside-head": (
                show_inside_head,
                [result_state, head_layer, head_head, query, head_state],
                [head_plot, head_summary, query, head_state],
                [head_layer.input, head_head.input, query.input],
            ),
            "knockout": (
                show_knockout,
                [result_state, heads_off, scale, leave_out, knockout_state, importance_state],
                [
                    knockout_prediction,
                    knockout_summary,
                    knockout_grid,
                    importance_plot,
                    knockout_state,
                    importance_state,
                ],
                [heads_off.input],
            ),
            "perturb": (
                show_perturbation,
                [result_state, position, mode, perturb_state],
                [perturb_prediction, perturb_summary, position, perturb_state],
                [position.input, mode.input],
            ),
            "word-order": (
                show_word_order,
                [result_state, order, seed, reordered, order_state],
                [order_summary, order_plot, order_state],
                [order.input, seed.submit, reordered.submit, reorder_button.click],
            ),
            "compare": (
                show_compare,
                [result_state, compare_text, compare_layer, compare_head, scale, leave_out, compare_state],
                [compare_a, compare_b, heatmap_a, heatmap_b, difference_plot, compare_summary, compare_state],
                [compare_text.submit, compare_button.click, compare_layer.input, compare_head.input],
            ),
            "export": (show_export, [result_state, layer, head], [json_file, csv_file], []),
        }
        view_inputs = {current_view, *(c for _, inputs, _, _ in explain.values() for c in inputs)}
        view_outputs = [current_view, *(c for _, _, outputs, _ in explain.values() for c in outputs)]

        def show_view(view: str, values: dict) -> dict:
            """Make ``view`` the current view and draw it from the dispatcher's input ``values``."""
            if view not in explain:
                return {current_view: view}
            handler, inputs, outputs, _ = explain[view]
            return {current_view: view, **dict(zip(outputs, handler(*(values[c] for c in inputs)), strict=True))}

        def show_current_view(values: dict) -> dict:
            """Redraw the view on screen (after a new analysis or colour scale)."""
            return show_view(values[current_view], values)

        url_controls = {
            "text": text_box,
            "view": current_view,
            "layer": layer,
            "head": head,
            "scale": scale,
            "leave_out": leave_out,
            "rollout_layer": rollout_layer,
            "target": target,
            "steps": steps,
            "baseline": baseline,
            "head_layer": head_layer,
            "head_head": head_head,
            "query": query,
            "heads_off": heads_off,
            "position": position,
            "mode": mode,
            "order": order,
            "seed": seed,
            "reordered": reordered,
            "compare": compare_text,
            "compare_layer": compare_layer,
            "compare_head": compare_head,
        }
        sync_url = dict(fn=None, inputs=[url_controls[name] for name in URL_PARAMS], js=_sync_url_js())
        private = dict(trigger_mode="always_last", api_visibility="private")
        refresh = dict(fn=show_current_view, inputs=view_inputs, outputs=view_outputs, **private)

        main_views = [result_state, prediction, tokens_view, notice, heatmap, grid, curves]
        analyse = dict(fn=show_text, inputs=[text_box, layer, head, dims, scale, leave_out], outputs=main_views)
        attention_inputs = [result_state, layer, head, scale, leave_out]
        recolour = dict(fn=show_attention, inputs=attention_inputs, outputs=[heatmap, grid])
        # The address follows the main views at once, and the tab on screen once it is redrawn.
        for redrawn in (
            gr.on([analyze_button.click, text_box.submit], **analyse, **private),
            examples.load_input_event.then(**analyse, **private),
            gr.on([scale.input, leave_out.input], **recolour, **private),
        ):
            redrawn.success(**sync_url)
            redrawn.success(**refresh).success(**sync_url)
        gr.on([layer.input, head.input], show_head, attention_inputs, heatmap, **private).success(**sync_url)
        dims.input(show_positions, [result_state, dims], curves, **private)
        tab_list = [attention_tab, all_heads_tab, positions_tab, rollout_tab, attributions_tab, inside_tab]
        tab_list += [knockout_tab, perturb_tab, order_tab, compare_tab, export_tab]
        for view, tab in zip(VIEWS, tab_list, strict=True):
            if view in explain:
                selected = tab.select(functools.partial(show_view, view), view_inputs, view_outputs, **private)
            else:  # drawn with the main views: selecting it reads nothing from the page
                # (Gradio selects the first tab as the page mounts, before the load has checked the page's values)
                selected = tab.select(functools.partial(str, view), None, current_view, **private)
            selected.success(**sync_url)
        for handler, inputs, outputs, triggers in explain.values():
            if triggers:
                gr.on(triggers, handler, inputs, outputs, **private).success(**sync_url)

        restored = [url_controls[name] for name in ["view", *(n for names in VIEW_PARAMS.values() for n in names)]]

        def restore(result: Analysis | None, shown_dims, request: gr.Request) -> dict:
            """Set the view's tab and every control the later steps read: from the address, else its default.

            A deep-linked page holds whatever its maker's session sent, unchecked; each choice control gets
            a valid value here (the dimensions: the page's if valid), so no later step sends Gradio a value
            whose rejection would echo it. The texts (B, the reordering) keep the page's: a deep link carries
            the long ones, and a text is never echoed.
            """
            values = restore_controls(result, request)
            view = values.get("view", current_view.value)
            kept = {url_controls[name]: url_controls[name].value for name in URL_PARAMS if name not in TEXT_PARAMS}
            controls = {control: value for control, value in kept.items() if control in restored}
            return {
                tabs: gr.Tabs(selected=view),
                dims: page_dims(shown_dims, model),
                **controls,
                **{url_controls[name]: value for name, value in values.items()},
                current_view: view,
            }

        # The load steps read no choice from the page through Gradio's checks (preprocess=False): on a
        # deep-linked page those are an attacker's, and Gradio's rejection would echo them in a toast that
        # renders HTML. ``restore_view`` and ``restore`` check them against the choices themselves, and
        # write a valid value into every control that ``refresh`` then reads.
        # Each step runs even if the one before failed (an unreadable text in the address, say), so the
        # last one always hands the address over to the views.
        demo.load(
            restore_view,
            inputs=[text_box, layer, head, dims, scale, leave_out],
            outputs=[text_box, layer, head, scale, leave_out, *main_views],
            preprocess=False,
            api_visibility="private",
        ).then(restore, [result_state, dims], [tabs, dims, *restored], preprocess=False, api_visibility="private").then(
            **refresh
        ).then(**(sync_url | {"js": _sync_url_js(address_read=True)}))

        for endpoint in (
            predict,
            attention,
            rollout,
            attributions,
            head_internals,
            knockout,
            head_importance,
            perturb,
            word_order,
            compare,
            export,
        ):
            gr.api(endpoint, api_name=endpoint.__name__)

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
