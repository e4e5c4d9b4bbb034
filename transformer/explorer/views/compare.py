"""Compare tab: a second sentence beside yours through the same head, with B − A where their tokens line
up; the ``/compare`` endpoint. Sentence B runs through the model only when its text changes.

With a second model (MODEL_ID_B, ``runner.get_second_model``) the tab shows your sentence through both models
instead (``explorer.two_models``), and ``/compare_models`` answers for them; ``/compare`` still compares two
sentences through the explorer's model.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

import gradio as gr
import plotly.graph_objects as go
import torch

from ...explain.compare import Comparison, compare_attentions
from .. import runner
from ..analysis import MAX_INPUT_CHARS, Analysis, EmptyInputError, InputError
from ..drawing import status
from ..drawing.attention_maps import attention_heatmap
from ..drawing.attributions import attribution_figure, attribution_html
from ..drawing.colour import colour_scale, excluded_positions
from ..drawing.figures import TEMPLATE
from ..drawing.markup import change_rows, probabilities, table
from ..drawing.token_spans import text_pieces
from ..inputs import choice, layer_head, numbers, page_numbers
from ..jsonable import to_jsonable
from ..registry import Drawing, Page, Reading, View, cancel_button, head_choices, layer_choices, read_text
from ..two_models import ModelReading, ModelsView, attributions_of, models_view, same_classes

EXAMPLE = "The film was not a quiet, funny or charming surprise."


@dataclass(frozen=True)
class CompareView:
    """Two sentences through one head (layer and head from 1), lined up where their tokens agree."""

    text_a: str
    text_b: str
    tokens_a: list[str]
    tokens_b: list[str]
    label_names: list[str]
    comparison: Comparison


def compare_view(result_a: Analysis, result_b: Analysis, layer: int = 1, head: int = 1) -> CompareView:
    """Two analyzed sentences through one head (``layer`` and ``head`` from 1), lined up (no model call)."""
    layer_index, head_index = layer_head(layer, head, *result_a.attentions.shape[:2])
    comparison = compare_attentions(
        torch.from_numpy(result_a.attentions),
        torch.from_numpy(result_b.attentions),
        torch.tensor(result_a.probabilities),
        torch.tensor(result_b.probabilities),
        result_a.tokens,
        result_b.tokens,
        layer_index,
        head_index,
    )
    return CompareView(
        text_a=result_a.text,
        text_b=result_b.text,
        tokens_a=result_a.tokens,
        tokens_b=result_b.tokens,
        label_names=result_a.label_names,
        comparison=page_numbers(comparison),
    )


def difference_figure(
    comparison: Comparison, tokens_b: list[str], scale: str = "global", exclude: list[int] | tuple[int, ...] = ()
) -> go.Figure:
    """Sentence B's attention minus sentence A's for one head, over the tokens that line up.

    Args:
        comparison: from ``compare_view``, layer and head counted from 1.
        tokens_b: sentence B's token strings; labels carry their positions in B.
        scale, exclude: colour-scale options of ``attention_maps.attention_heatmap``; ``exclude`` counts
            aligned pairs, not positions.
    """
    positions = [j for _, j in comparison.pairs]
    return attention_heatmap(
        [tokens_b[j] for j in positions],
        comparison.difference,
        f"Layer {comparison.layer}, head {comparison.head}: attention of B minus A on aligned tokens",
        scale=scale,
        exclude=exclude,
        positions=positions,
        value_name="B − A",
        signed=True,
    )


def compare_panel(
    view: CompareView, scale: str, leave_out: Sequence[str]
) -> tuple[dict, dict, go.Figure, go.Figure, go.Figure | None, str]:
    """(prediction A, prediction B, A's head, B's head, B − A where the tokens line up, a summary)."""
    comparison = view.comparison
    scale = colour_scale(scale)
    exclude_b = excluded_positions(view.tokens_b, leave_out)
    head = f"layer {comparison.layer}, head {comparison.head}"
    heatmaps = [
        attention_heatmap(
            tokens, weights, f"Sentence {name}, {head}", scale=scale, exclude=excluded_positions(tokens, leave_out)
        )
        for name, tokens, weights in (
            ("A", view.tokens_a, comparison.attention_a),
            ("B", view.tokens_b, comparison.attention_b),
        )
    ]
    pairs = comparison.pairs
    excluded_pairs = [k for k, (_, j) in enumerate(pairs) if j in exclude_b]
    difference = difference_figure(comparison, view.tokens_b, scale, excluded_pairs) if pairs else None
    summary = aligned_sentence(view.tokens_a, pairs) + table(
        ["class", "A", "B", "B − A"], change_rows(view.label_names, comparison.probs_a, comparison.probs_b)
    )
    return (
        probabilities(view.label_names, comparison.probs_a),
        probabilities(view.label_names, comparison.probs_b),
        *heatmaps,
        difference,
        summary,
    )


def aligned_sentence(tokens_a: list[str], pairs: list) -> str:
    """One paragraph: which of A's tokens line up with B's, or that none does and so there is no B − A map."""
    if not pairs:
        return "<p>No token of A lines up with one of B, so there is no B − A map: the two share no token.</p>"
    aligned = ", ".join(f"{tokens_a[i]} ({i}→{j})" for i, j in pairs)
    return f"<p>{len(pairs)} of {len(tokens_a)} tokens of A line up with B: {html.escape(aligned)}.</p>"


def show_compare(
    result: Analysis | None,
    text_b: str,
    layer: int,
    head: int,
    scale: str,
    leave_out: list[str] | None,
    kept_b: Analysis | None,
) -> tuple:
    """(prediction A, prediction B, A's head, B's head, B − A, summary, B's kept analysis); A is the kept analysis."""
    if result is None:
        return None, None, None, None, None, "", kept_b
    if kept_b is None or kept_b.text != text_b:
        try:
            kept_b = runner.run_model(text_b)
        except EmptyInputError:
            return None, None, None, None, None, "<p>Type a second sentence to compare with.</p>", None
        except runner.JobCancelled:  # the tab keeps what it showed (``events.PageParts.long_job``)
            raise
        except InputError as error:
            raise runner.user_error(error) from None
    with runner.clear_errors():
        view = compare_view(result, kept_b, layer, head)
    *heads, difference, summary = compare_panel(view, scale, leave_out)
    shown = gr.update(value=difference, visible=difference is not None)  # no token lines up: said, not an empty box
    return (*heads, shown, summary, kept_b)


def compare(text_a: str, text_b: str, layer: int = 1, head: int = 1) -> dict:
    """Two texts through one head (layer and head from 1), with B − A where their tokens line up.
    Layers and heads count from 1 and token positions from 0, in every argument and answer.

    Args:
        text_a: the first text (A).
        text_b: the second text (B).
        layer: the layer, from 1.
        head: the head, from 1.

    Returns:
        {"tokens_a", "tokens_b", "label_names", "comparison": {"probs_a", "probs_b", "attention_a",
        "attention_b", "pairs": [[position in A, position in B], ...], "difference": [pair][pair],
        "layer", "head" (from 1, as sent)}}.
    """
    result_a, result_b = runner.read_for_api(text_a), runner.read_for_api(text_b)
    with runner.clear_errors():
        return to_jsonable(compare_view(result_a, result_b, layer, head), runner.API_DECIMALS)


def predictions_and_heads(name: str) -> tuple:
    """A's and B's predictions ("``name`` A", "``name`` B") and the summary in a row, their heads in the next."""
    with gr.Row():
        prediction_a = gr.Label(label=f"{name} A", elem_id="compare-a")
        prediction_b = gr.Label(label=f"{name} B", elem_id="compare-b")
        summary = gr.HTML(elem_id="compare-summary", elem_classes="explain-html")
    with gr.Row():
        heatmap_a = gr.Plot(label="A", elem_id="compare-heatmap-a")
        heatmap_b = gr.Plot(label="B", elem_id="compare-heatmap-b")
    return prediction_a, prediction_b, summary, heatmap_a, heatmap_b


def sentences_layout(page: Page) -> Drawing:
    gr.Markdown(
        "Your sentence (A) beside a second one (B): both predictions, the same head in each, and B − A "
        "for the tokens the two share (lined up in order; red: B attends more)."
    )
    with gr.Row(equal_height=True):
        text = gr.Textbox(EXAMPLE, label="Sentence B", scale=3, max_length=MAX_INPUT_CHARS, elem_id="compare-text")
        layer = gr.Radio(layer_choices(page.model), value=1, label="Layer", elem_id="compare-layer")
        head = gr.Radio(head_choices(page.model), value=1, label="Head", elem_id="compare-head")
        button = gr.Button("Compare", elem_id="compare-button")
    prediction_a, prediction_b, summary, heatmap_a, heatmap_b = predictions_and_heads("Prediction")
    difference = gr.Plot(label="B − A", elem_id="compare-difference")
    kept_b = gr.State()
    return Drawing(
        show_compare,
        [page.result, text, layer, head, page.scale, page.leave_out, kept_b],
        [prediction_a, prediction_b, heatmap_a, heatmap_b, difference, summary, kept_b],
        [text.submit, button.click, layer.input, head.input],
        {"compare": text, "compare_layer": layer, "compare_head": head},
    )


def models_summary(view: ModelsView) -> str:
    """Each model's source and shape, which of them lacks the head, and the predictions class by class."""
    lines = [
        f"<b>{r.name}</b>: {html.escape(r.source)}, {r.num_layers} layers of {r.num_heads} heads, "
        f"{len(r.tokens)} tokens; attributions for its prediction, <b>{html.escape(r.attributions.target_label)}</b>."
        + ("" if r.attention is not None else f" It has no layer {view.layer}, head {view.head}.")
        for r in view.readings
    ]
    a, b = view.readings
    classes = (
        table(["class", "A", "B", "B − A"], change_rows(a.label_names, a.probabilities, b.probabilities))
        if same_classes(view.readings)
        else "<p>The models name their classes differently, so their predictions are shown apart.</p>"
    )
    return "".join(f"<p>{line}</p>" for line in lines) + classes


def no_head_figure(view: ModelsView, reading: ModelReading) -> go.Figure:
    """An empty figure that says the model has no such head, where its heatmap would be."""
    figure = go.Figure()
    figure.add_annotation(
        text=f"Model {reading.name} has no layer {view.layer}, head {view.head}:<br>"
        f"it has {reading.num_layers} layers of {reading.num_heads} heads.",
        showarrow=False,
        font={"size": 14},
    )
    figure.update_xaxes(visible=False)
    figure.update_yaxes(visible=False)
    figure.update_layout(template=TEMPLATE, height=300, margin={"t": 20, "l": 10, "r": 10, "b": 10})
    return figure


def reading_figures(view: ModelsView, reading: ModelReading, scale: str, leave_out) -> tuple:
    """(prediction, the head's heatmap, IG over the text, both attributions per token) of one model."""
    explained = reading.attributions
    ig = explained.integrated_gradients
    if reading.attention is None:
        heatmap = no_head_figure(view, reading)
    else:
        title = f"Model {reading.name}, layer {view.layer}, head {view.head}"
        exclude = excluded_positions(reading.tokens, leave_out)
        heatmap = attention_heatmap(reading.tokens, reading.attention, title, scale=scale, exclude=exclude)
    caption = f"Model {reading.name}: Integrated Gradients for {explained.target_label} ({ig.steps} steps)"
    scores = torch.stack([explained.gradient_x_input, ig.attributions])  # (2, N)
    return (
        probabilities(reading.label_names, reading.probabilities),
        heatmap,
        attribution_html(text_pieces(view.text, reading.offsets), reading.tokens, ig.attributions, caption),
        attribution_figure(
            scores,
            ["gradient × input", "integrated gradients"],
            reading.tokens,
            title=f"Model {reading.name}'s attributions (each row on its own scale)",
        ),
    )


def models_panel(view: ModelsView, scale: str, leave_out: Sequence[str] | None) -> tuple:
    """(prediction A, prediction B, summary, A's head, B's head, A's and B's IG over the text, A's and B's
    attributions per token): each pair side by side on the page."""
    a, b = (reading_figures(view, reading, colour_scale(scale), leave_out) for reading in view.readings)
    return a[0], b[0], models_summary(view), a[1], b[1], a[2], b[2], a[3], b[3]


@dataclass(frozen=True)
class KeptModels:
    """What the two-model tab keeps: model B's analysis of the sentence, each model's (key, attributions)."""

    analysis_b: Analysis
    attributions_a: tuple
    attributions_b: tuple


def analysis_b(text: str) -> Analysis:
    """``text`` through the second model; text it cannot read is a clear ``gr.Error``."""
    with runner.clear_errors("Model B cannot read this text"):
        return runner.run_model(text, second=True)


def sources() -> tuple[str, str]:
    """How the page names the two models."""
    return tuple(status.model_source(runner.loaded_model(second).source) for second in (False, True))


def show_models(result: Analysis | None, layer: int, head: int, scale: str, leave_out, kept: KeptModels | None):
    """(the nine outputs of ``models_panel``, what the tab keeps); a head change calls neither model."""
    if result is None:
        return None, None, "", None, None, "", "", None, None, kept
    if not isinstance(kept, KeptModels) or kept.analysis_b.text != result.text:
        kept = KeptModels(analysis_b(result.text), None, None)
    kept = KeptModels(
        kept.analysis_b,
        runner.kept_view(kept.attributions_a, attributions_of, result),
        runner.kept_view(kept.attributions_b, attributions_of, kept.analysis_b, second=True),
    )
    explained = (kept.attributions_a[1], kept.attributions_b[1])
    with runner.clear_errors():
        view = models_view((result, kept.analysis_b), explained, sources(), layer, head)
    return (*models_panel(view, scale, leave_out), kept)


def explains_both(result: Analysis | None, layer, head, scale, leave_out, kept: KeptModels | None) -> bool:
    """Whether ``show_models`` runs the two models' attributions (``Drawing.starts``): once per sentence."""
    if result is None:
        return False
    if not isinstance(kept, KeptModels) or kept.analysis_b.text != result.text:
        return True
    return not runner.is_kept(kept.attributions_a, runner.kept_key(attributions_of, result.text))


def compare_models(text: str, layer: int = 1, head: int = 1) -> dict:
    """One text through the explorer's model (A) and the second model (B, set by MODEL_ID_B): both predictions,
    the same head in each model that has it, and each model's attributions for the class it predicts. Each
    model reads with its own tokenizer. Layers and heads count from 1 and token positions from 0, in every
    argument and answer.

    Args:
        text: the text both models read.
        layer: the layer, from 1 (in either model).
        head: the head, from 1 (in either model).

    Returns:
        {"text", "layer", "head", "readings": [{"name" ("A" or "B"), "source", "tokens", "offsets", "label_names",
        "probabilities", "num_layers", "num_heads", "attention" (the head's, null in a model without it),
        "attributions": {"target_label", "gradient_x_input", "integrated_gradients": {"attributions", ...}}},
        ...]}; without a second model, an error that says how to load one.
    """
    result_a = runner.read_for_api(text)
    with runner.clear_errors("Cannot compare two models"):
        runner.loaded_model(second=True)  # there is one, else a clear error
    results = result_a, runner.read_for_api(text, second=True)
    explained = [runner.explain(attributions_of, results[0]), runner.explain(attributions_of, results[1], second=True)]
    with runner.clear_errors():
        view = models_view(results, explained, sources(), layer, head)
    return to_jsonable(view, runner.API_DECIMALS)


def both_shapes() -> tuple[int, int]:
    """The most layers and heads of either model: Compare's layer and head choices with two models."""
    models = [runner.loaded_model().model]
    if runner.get_second_model()[0] is not None:
        models.append(runner.loaded_model(second=True).model)
    return max(m.num_layers for m in models), max(m.num_heads for m in models)


def read_compare_layer(value: str, reading: Reading) -> int | None:
    """A layer of either model, counted from 1."""
    return choice(value, numbers(both_shapes()[0]))


def read_compare_head(value: str, reading: Reading) -> int | None:
    """A head of either model, counted from 1."""
    return choice(value, numbers(both_shapes()[1]))


def models_layout(page: Page) -> Drawing:
    source_a, source_b = (html.escape(source) for source in sources())
    gr.Markdown(
        f"Your sentence through two models, **A** ({source_a}) and **B** ({source_b}): both predictions, the same "
        "head in each model that has it, and each model's attributions for the class it predicts (red for it, "
        "blue against). Each model reads with its own tokenizer, so their tokens can differ."
    )
    layers, heads = both_shapes()
    with gr.Row(equal_height=True):
        text = gr.Textbox(visible=False, elem_id="compare-text")  # holds the address's second sentence, unused here
        layer = gr.Radio([(str(i), i) for i in numbers(layers)], value=1, label="Layer", elem_id="compare-layer")
        head = gr.Radio([(str(i), i) for i in numbers(heads)], value=1, label="Head", elem_id="compare-head")
    cancel = cancel_button("compare")
    prediction_a, prediction_b, summary, heatmap_a, heatmap_b = predictions_and_heads("Model")
    with gr.Row():
        text_a = gr.HTML(elem_id="compare-text-a", elem_classes="explain-html")
        text_b = gr.HTML(elem_id="compare-text-b", elem_classes="explain-html")
    with gr.Row():
        scores_a = gr.Plot(label="A's attributions", elem_id="compare-attributions-a")
        scores_b = gr.Plot(label="B's attributions", elem_id="compare-attributions-b")
    kept = gr.State()
    outputs = [prediction_a, prediction_b, summary, heatmap_a, heatmap_b, text_a, text_b, scores_a, scores_b, kept]
    return Drawing(
        show_models,
        [page.result, layer, head, page.scale, page.leave_out, kept],
        outputs,
        [layer.input, head.input],
        {"compare": text, "compare_layer": layer, "compare_head": head},
        cancel=cancel,
        starts=explains_both,
    )


def layout(page: Page) -> Drawing:
    """Two sentences through the explorer's model, or with a second model loaded, one sentence through both."""
    return models_layout(page) if runner.get_second_model()[0] is not None else sentences_layout(page)


VIEW = View(
    "compare",
    "Compare",
    layout,
    params={
        "compare": read_text,
        "compare_layer": read_compare_layer,
        "compare_head": read_compare_head,
    },
    endpoints={"compare": compare, "compare_models": compare_models},
)
