"""Head-knockout tab: switch heads off and watch the prediction and the later layers' attention move, and
each head's importance alone; the ``/knockout`` and ``/head_importance`` endpoints.

Shape letters: L = layers, H = heads, N = tokens, C = classes.
"""

from __future__ import annotations

import dataclasses
import html
from dataclasses import dataclass

import gradio as gr
import plotly.graph_objects as go
import torch

from ... import explain
from ...explain.budget import heads_ranked
from ...explain.knockout import HeadImportance, predict_with_knockout
from ...explain.rollout import stack_attentions
from .. import payloads, runner
from ..analysis import Analysis, sentence_ids
from ..drawing.attention_maps import attention_grid
from ..drawing.colour import colour_scale, excluded_positions
from ..drawing.figures import heads_heatmap
from ..drawing.markup import change_rows, probabilities, table
from ..inputs import choices, head_label, head_labels, parse_heads
from ..jsonable import to_jsonable
from ..registry import Drawing, Page, View, cancel_button


@dataclass(frozen=True)
class KnockoutView:
    """The prediction and every head's attention with some heads switched off.

    Shape:
        probabilities_before, probabilities: (C,), all heads on and with the knockout;
        attentions: (L, H, N, N) with the knockout (a switched-off head's own map is still computed).
    """

    text: str
    tokens: list[str]
    label_names: list[str]
    heads_off: list[str]
    probabilities_before: torch.Tensor
    probabilities: torch.Tensor
    attentions: torch.Tensor


@dataclass(frozen=True)
class ImportanceView:
    """For each head alone, how far the predicted class's probability drops when it is switched off."""

    text: str
    tokens: list[str]
    label_names: list[str]
    importance: HeadImportance


def knockout_view(model, tokenizer, result: Analysis, heads_off=()) -> KnockoutView:
    """The prediction and attention with the heads named in ``heads_off`` ("L1 H2", ...) switched off."""
    heads = parse_heads(heads_off, model.num_layers, model.num_heads)
    ids = sentence_ids(model, result)
    head_mask = torch.ones(model.num_layers, model.num_heads, device=ids.device)  # (L, H)
    for layer, head in heads:
        head_mask[layer, head] = 0.0
    prediction = predict_with_knockout(model, ids, head_mask)
    return KnockoutView(
        text=result.text,
        tokens=result.tokens,
        label_names=result.label_names,
        heads_off=[head_label(layer, head) for layer, head in heads],
        probabilities_before=torch.tensor(result.probabilities),
        probabilities=prediction.probs.cpu(),
        attentions=stack_attentions(prediction.attentions).cpu(),  # (L, H, N, N)
    )


def importance_view(model, tokenizer, result: Analysis) -> ImportanceView:
    """Head importance for the predicted class: every single-head knockout, in batched passes."""
    ids = sentence_ids(model, result)
    heads = heads_ranked(model, ids.size(1), runner.default_seconds())
    importance = explain.knockout.head_importance(model, ids, heads=heads)  # the endpoint's namesake
    return ImportanceView(
        text=result.text, tokens=result.tokens, label_names=result.label_names, importance=runner.on_cpu(importance)
    )


def head_importance_figure(importance: HeadImportance, class_names: list[str] | None = None) -> go.Figure:
    """Layers × heads: how much the class's probability drops when that head alone is knocked out.

    Args:
        importance: from ``head_importance``.
        class_names: names for the title, e.g. ``model.label_names``.
    """
    name = class_names[importance.target] if class_names else str(importance.target)
    ranked = int(importance.drop.isfinite().sum())
    picked = (
        "" if ranked == importance.drop.numel() else f"; {ranked} heads, picked by a gradient estimate, blank: not run"
    )
    return heads_heatmap(
        importance.drop,
        title=f"Drop in P({name}) when one head alone is off (all heads on: {importance.base_prob:.3f}{picked})",
        colour_title="drop",
    )


def knockout_panel(view: KnockoutView, scale: str, leave_out) -> tuple[dict, str, go.Figure]:
    """(prediction with the knockout, how it changed, every head's attention with the knockout)."""
    off = ", ".join(view.heads_off) or "no head"
    summary = f"<p>Switched off: {html.escape(off)}.</p>" + table(
        ["class", "all heads on", "with the knockout", "change"],
        change_rows(view.label_names, view.probabilities_before, view.probabilities),
    )
    grid = attention_grid(
        view.tokens,
        view.attentions.numpy(),
        scale=colour_scale(scale),
        exclude=excluded_positions(view.tokens, leave_out),
        title=f"Every head's attention with {off} switched off",
    )
    return probabilities(view.label_names, view.probabilities), summary, grid


def show_knockout(
    result: Analysis | None,
    heads_off: list[str] | None,
    scale: str,
    leave_out: list[str] | None,
    kept: tuple | None,
    kept_importance: tuple | None,
) -> tuple:
    """(prediction, change, every head's attention, head importance, both kept views)."""
    if result is None:
        return None, "", None, None, None, None
    kept = runner.kept_view(kept, knockout_view, result, heads_off=list(heads_off or []))
    kept_importance = runner.kept_view(kept_importance, importance_view, result)
    importance = head_importance_figure(kept_importance[1].importance, result.label_names)
    return (*knockout_panel(kept[1], scale, leave_out), importance, kept, kept_importance)


def ranks_heads(
    result: Analysis | None, heads_off, scale: str, leave_out, kept: tuple | None, kept_importance: tuple | None
) -> bool:
    """Whether ``show_knockout`` ranks the heads (``Drawing.starts``), once per sentence: a knockout alone is one
    pass."""
    return result is not None and not runner.is_kept(kept_importance, runner.kept_key(importance_view, result.text))


def knockout(
    text: str,
    heads_off: list[str] | None = None,
    layer: int | list[int] | None = None,
    head: int | list[int] | None = None,
) -> dict:
    """Classify a text with some heads switched off (``heads_off``, as in the page address), named like "L1 H2"
    (layer 1, head 2), and answer the attention of the heads chosen with ``layer`` and ``head`` (every one by
    default) after the knockout.
    Layers and heads count from 1 and token positions from 0, in every argument and answer.

    Args:
        text: the text to classify.
        heads_off: the heads to switch off, named like "L1 H2" (layer 1, head 2), as in the page address.
        layer: the layers whose attention to answer: one number or a list; none (or []) for every layer.
        head: the heads of those layers to answer: one number or a list; none (or []) for every head. An answer
            holds at most 8 MB of maps (at 512 tokens, 3 heads): beyond that, choose some.

    Returns:
        {"tokens", "label_names", "heads_off", "probabilities_before" (all heads on), "probabilities"
        (with the knockout), "layers", "heads" (the chosen ones), "attentions": [layer][head][query][key] with the
        knockout, for those layers and heads (weights rounded to 4 decimals)}.
    """
    result = runner.read_for_api(text)
    with runner.clear_errors("Cannot answer this"):
        payloads.chosen_heads(layer, head, *result.attentions.shape[:2])  # a bad choice is refused before the knockout
    view = runner.explain(knockout_view, result, heads_off=heads_off or [])
    with runner.clear_errors("Cannot answer this"):
        maps = payloads.chosen_maps(view.attentions.numpy(), layer, head, "attentions")
    rest = {field.name: getattr(view, field.name) for field in dataclasses.fields(view) if field.name != "attentions"}
    return to_jsonable(rest, runner.API_DECIMALS) | maps


def head_importance(text: str) -> dict:
    """For each head alone, how far the predicted class's probability drops when it is switched off.
    Layers and heads count from 1 and token positions from 0, in every argument and answer. Every head is knocked out
    on a model whose 1 + L·H passes fit in half the job cap (the bundled model's; a DistilBERT-base's up to about
    45 tokens); on a bigger one, the heads a gradient estimate (|dP/d head mask|) says matter most, as many as fit,
    and the rest are null.

    Args:
        text: the text to classify.

    Returns:
        {"tokens", "label_names", "importance": {"target", "base_prob", "ablated_prob": [layer][head],
        "drop": [layer][head]}}.
    """
    return runner.api_view(importance_view, text)


def layout(page: Page) -> Drawing:
    gr.Markdown(
        "Switch heads off (their output is multiplied by 0 before the output projection) and watch the "
        "prediction and the later layers' attention move. The importance chart knocks out each head "
        "alone: how far the predicted class's probability drops without it (red: the head supports it)."
    )
    heads_off = gr.CheckboxGroup(
        head_labels(page.model.num_layers, page.model.num_heads),
        value=[],
        label="Heads switched off (L = layer, H = head)",
        elem_id="heads-off",
    )
    cancel = cancel_button("knockout")
    with gr.Row():
        prediction = gr.Label(label="Prediction with the knockout", elem_id="knockout-prediction")
        summary = gr.HTML(elem_id="knockout-summary", elem_classes="explain-html")
    grid = gr.Plot(label="Every head with the knockout", elem_id="knockout-grid")
    importance = gr.Plot(label="Head importance", elem_id="head-importance")
    kept, kept_importance = gr.State(), gr.State()
    return Drawing(
        show_knockout,
        [page.result, heads_off, page.scale, page.leave_out, kept, kept_importance],
        [prediction, summary, grid, importance, kept, kept_importance],
        [heads_off.input],
        {"heads_off": heads_off},
        cancel=cancel,
        starts=ranks_heads,
    )


VIEW = View(
    "knockout",
    "Head knockout",
    layout,
    params={"heads_off": lambda value, r: choices(value, head_labels(r.model.num_layers, r.model.num_heads))},
    endpoints={"knockout": knockout, "head_importance": head_importance},
)
