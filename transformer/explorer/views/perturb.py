"""Token-perturbation tab: mask or remove one token and see how the prediction changes; ``/perturb``.

Shape letters: C = classes.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import gradio as gr
import torch

from ...explain.counterfactual import perturb_token
from ...tokenizer import MASK_TOKEN
from .. import runner
from ..analysis import Analysis, InputError, sentence_ids
from ..drawing.markup import change_rows, probabilities, sentence, table
from ..inputs import choice, number, pick_position, quoted, token_choices, whole_number
from ..registry import Drawing, Page, View, kept_control

PERTURBATIONS = ("mask", "remove")

MASK_TOKENS = (MASK_TOKEN, "<mask>")  # the tutorial's and BERT's, then RoBERTa's


@dataclass(frozen=True)
class PerturbationView:
    """The prediction before and after masking or removing one token.

    Shape:
        probabilities_before, probabilities_after, change: (C,).
    """

    text: str
    tokens: list[str]
    label_names: list[str]
    position: int
    mode: str
    tokens_after: list[str]
    probabilities_before: torch.Tensor
    probabilities_after: torch.Tensor
    change: torch.Tensor


def perturbation_view(model, tokenizer, result: Analysis, position: int = 0, mode: str = "mask") -> PerturbationView:
    """The prediction after replacing token ``position`` by [MASK] (``mode="mask"``) or deleting it ("remove")."""
    n = len(result.tokens)
    position = whole_number(position, "The token position", 0, n - 1)
    if mode not in PERTURBATIONS:
        raise InputError(f"Choose how to change the token: {' or '.join(PERTURBATIONS)}; got {quoted(mode)}.")
    if mode == "remove" and n == 1:
        raise InputError("The sentence has one token: removing it leaves nothing to read. Mask it instead.")
    mask_token = next((token for token in MASK_TOKENS if tokenizer.token_to_id(token) is not None), None)
    mask_id = None if mask_token is None else tokenizer.token_to_id(mask_token)
    if mode == "mask" and mask_id is None:
        raise InputError(f"This model's tokenizer has no {MASK_TOKEN} token; remove the token instead.")
    change = perturb_token(model, sentence_ids(model, result), position, mode, mask_id)
    tokens_after = list(result.tokens)
    if mode == "remove":
        del tokens_after[position]
    else:
        tokens_after[position] = mask_token
    return PerturbationView(
        text=result.text,
        tokens=result.tokens,
        label_names=result.label_names,
        position=position,
        mode=mode,
        tokens_after=tokens_after,
        probabilities_before=change.probs_before.cpu(),
        probabilities_after=change.probs_after.cpu(),
        change=change.change.cpu(),
    )


def perturbation_panel(view: PerturbationView) -> tuple[dict, str]:
    """(prediction after the change, the changed sentence and the change per class)."""
    done = "masked" if view.mode == "mask" else "removed"
    summary = (
        f"<p>Token {view.position} <code>{html.escape(view.tokens[view.position])}</code> {done}; "
        f"the model now reads: {sentence(view.tokens_after)}</p>"
        + table(
            ["class", "before", "after", "change"],
            change_rows(view.label_names, view.probabilities_before, view.probabilities_after),
        )
    )
    return probabilities(view.label_names, view.probabilities_after), summary


def show_perturbation(result: Analysis | None, position, mode: str, kept: tuple | None) -> tuple:
    """(new prediction, what changed, token choices, kept view)."""
    if result is None:
        return None, "", gr.Dropdown(choices=[], value=None), None
    picked = pick_position(position, len(result.tokens))
    kept = runner.kept_view(kept, perturbation_view, result, position=picked, mode=mode)
    chosen = kept_control(position, picked, choices=token_choices(result.tokens))
    return (*perturbation_panel(kept[1]), chosen, kept)


def perturb(text: str, position: int = 0, mode: str = "mask") -> dict:
    """Replace the token at a position (from 0) by [MASK] (mode "mask") or delete it ("remove"), and re-classify.
    Layers and heads count from 1 and token positions from 0, in every argument and answer.

    Args:
        text: the text to classify.
        position: the token position to change, from 0.
        mode: "mask" (replace it by [MASK]) or "remove" (delete it).

    Returns:
        {"tokens", "tokens_after", "position", "mode", "probabilities_before", "probabilities_after", "change"}.
    """
    return runner.api_view(perturbation_view, text, position=position, mode=mode)


def layout(page: Page) -> Drawing:
    gr.Markdown("Mask or remove one token and see how the prediction changes.")
    with gr.Row():
        position = gr.Dropdown(choices=[], label="Token", allow_custom_value=True, elem_id="position")
        mode = gr.Radio([("replace by [MASK]", "mask"), ("remove", "remove")], value="mask", label="Change")
    with gr.Row():
        prediction = gr.Label(label="Prediction after the change", elem_id="perturb-prediction")
        summary = gr.HTML(elem_id="perturb-summary", elem_classes="explain-html")
    kept = gr.State()
    return Drawing(
        show_perturbation,
        [page.result, position, mode, kept],
        [prediction, summary, position, kept],
        [position.input, mode.input],
        {"position": position, "mode": mode},
    )


VIEW = View(
    "perturb",
    "Token perturbation",
    layout,
    params={
        "position": lambda value, r: number(value, 0, r.tokens - 1),
        "mode": lambda value, r: choice(value, PERTURBATIONS),
    },
    endpoints={"perturb": perturb},
    colour_scale=False,
)
