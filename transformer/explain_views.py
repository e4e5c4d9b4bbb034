"""The explorer's explanation views: one analysed sentence and a view's controls in, that view's numbers out.

Each ``*_view`` function computes what one tab of the app shows and one API endpoint answers, from
an ``analysis.Analysis`` (the sentence as the model read it) and the view's controls. Those that run
the model take ``(model, tokenizer, result, **controls)``, put every tensor they make on the model's
device and return CPU tensors; the others need no model. Every view is a frozen dataclass that
``explain_export.to_jsonable`` turns into its endpoint's JSON and ``explain_panels`` draws.

Controls come from people (the page, its address, API callers), so they are checked here: a bad one
raises ``analysis.InputError`` with a message that says what is allowed. Indices are the page's:
layers and heads count from 1, token positions from 0 (as in the token labels).

Shape letters: L = layers, H = heads, N = tokens, C = classes.
"""

from __future__ import annotations

import dataclasses
import html
import re
from dataclasses import dataclass

import numpy as np
import torch

from .analysis import Analysis, InputError, attention_matrix, check_text
from .classifier import TransformerClassifier
from .explain_agreement import Agreement, agreement_of
from .explain_attribution import DEFAULT_IG_STEPS, IntegratedGradients, gradient_x_input, integrated_gradients
from .explain_compare import Comparison, compare_attentions
from .explain_counterfactual import WordOrder, perturb_token, shuffled_permutation, word_order_experiment
from .explain_export import analysis_to_json, attention_to_csv
from .explain_head import HeadScores, head_scores
from .explain_knockout import HeadImportance, head_importance, predict_with_knockout
from .explain_rollout import attention_rollout, pooled_relevance, stack_attentions
from .tokenizer import MASK_TOKEN

MAX_IG_STEPS = 256
BASELINES = ("pad", "zero")
PERTURBATIONS = ("mask", "remove")
PREDICTED = "predicted"  # the target-class choice that follows the model's prediction
ROLLOUT_RESIDUAL_WEIGHT = 0.5
_HEAD_LABEL = re.compile(r"\s*L\s*(\d+)\s*H\s*(\d+)\s*", re.IGNORECASE)


@dataclass(frozen=True)
class RolloutView:
    """Attention rollout after every layer, and what the mean-pooled output takes from each token.

    Shape:
        rollout: (L, N, N), rows summing to 1; pooled: (L, N), each row summing to 1.
    """

    text: str
    tokens: list[str]
    residual_weight: float
    rollout: torch.Tensor
    pooled: torch.Tensor


@dataclass(frozen=True)
class AttributionView:
    """Gradient × input and Integrated Gradients for one class, and how far four methods agree.

    Shape:
        gradient_x_input: (N,); ``integrated_gradients.attributions``: (N,).
    """

    text: str
    tokens: list[str]
    offsets: list[tuple[int, int]]
    target: int
    target_label: str
    gradient_x_input: torch.Tensor
    integrated_gradients: IntegratedGradients
    agreement: Agreement


@dataclass(frozen=True)
class HeadView:
    """One head's raw scores, scaled scores, softmax and entropy for every query."""

    text: str
    tokens: list[str]
    scores: HeadScores


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


@dataclass(frozen=True)
class WordOrderView:
    """The sentence and a reordering, each with positional encoding on and off.

    ``experiment`` holds the logits and probabilities, (2, 2, C) indexed [order, encoding]
    (see ``WordOrder``). The differences are the largest |logit| gap between the two orders with
    the encoding off (0 up to float rounding for a true reordering) and on. ``seed`` is None for
    the person's own reordering.
    """

    text: str
    tokens: list[str]
    label_names: list[str]
    seed: int | None
    reordered_tokens: list[str]
    experiment: WordOrder
    difference_without_encoding: float
    difference_with_encoding: float


@dataclass(frozen=True)
class CompareView:
    """Two sentences through one head, lined up where their tokens agree."""

    text_a: str
    text_b: str
    tokens_a: list[str]
    tokens_b: list[str]
    label_names: list[str]
    comparison: Comparison


def shown(value, limit: int = 40) -> str:
    """A caller's value quoted in a message: its repr, cut to ``limit`` characters and HTML-escaped.

    Gradio shows error messages as HTML, and a value may be markup or 10,000 characters long.
    """
    text = repr(value)
    return html.escape(text if len(text) <= limit else text[: limit - 1] + "…")


def whole_number(value, name: str, low: int, high: int) -> int:
    """``value`` as an int in [low, high], or an ``InputError`` naming ``name`` and the range."""
    try:
        number = int(value)
        ok = number == float(value) and low <= number <= high
    except (TypeError, ValueError, OverflowError):
        ok = False
    if not ok:
        raise InputError(f"{name} must be a whole number from {low} to {high}; got {shown(value)}.")
    return number


def layer_head(layer, head, num_layers: int, num_heads: int) -> tuple[int, int]:
    """A layer and head counted from 1, as 0-based indices, range-checked."""
    return whole_number(layer, "Layer", 1, num_layers) - 1, whole_number(head, "Head", 1, num_heads) - 1


def head_labels(num_layers: int, num_heads: int) -> list[str]:
    """Every head's name, "L1 H1" ... "L{L} H{H}", layer by layer."""
    return [f"L{layer} H{head}" for layer in range(1, num_layers + 1) for head in range(1, num_heads + 1)]


def parse_heads(labels: list[str] | tuple[str, ...], num_layers: int, num_heads: int) -> list[tuple[int, int]]:
    """Head names ("L1 H2", case and spaces free) as sorted, distinct 0-based (layer, head) pairs."""
    if isinstance(labels, str) or not isinstance(labels, list | tuple):
        raise InputError(f'Heads must be a list of names like "L1 H2"; got {shown(labels)}.')
    heads = set()
    for label in labels:
        match = _HEAD_LABEL.fullmatch(label) if isinstance(label, str) else None
        if match is None:
            raise InputError(f'Name heads like "L1 H2" (layer 1, head 2); got {shown(label)}.')
        heads.add(
            (
                whole_number(match[1], "The layer in a head name", 1, num_layers) - 1,
                whole_number(match[2], "The head in a head name", 1, num_heads) - 1,
            )
        )
    return sorted(heads)


def class_index(target: str | None, result: Analysis) -> int:
    """A class name as its index; None, "" or ``PREDICTED`` mean the class the model predicts."""
    if target in (None, "", PREDICTED):
        return int(np.argmax(result.probabilities))
    if target not in result.label_names:
        names = html.escape(", ".join(result.label_names))
        raise InputError(f'Choose a target class from {names} (or "{PREDICTED}"); got {shown(target)}.')
    return result.label_names.index(target)


def sentence_ids(model: TransformerClassifier, result: Analysis) -> torch.Tensor:
    """The tokens the model read, as its input on its device: (1, N)."""
    return torch.tensor([result.token_ids], device=next(model.parameters()).device)


def model_attentions(result: Analysis) -> tuple[torch.Tensor, ...]:
    """The analysis's weights in the model's output format: L tensors of (1, H, N, N)."""
    return torch.from_numpy(result.attentions).unsqueeze(1).unbind(0)  # (L, H, N, N) -> L x (1, H, N, N)


def _on_cpu(value):
    """A dataclass with each of its tensor fields moved to the CPU (views are kept and sent, never computed on)."""
    fields = {field.name: getattr(value, field.name) for field in dataclasses.fields(value)}
    return dataclasses.replace(value, **{k: v.cpu() for k, v in fields.items() if isinstance(v, torch.Tensor)})


def rollout_view(result: Analysis) -> RolloutView:
    """Attention rollout from the analysis's weights (no model call)."""
    rollout = attention_rollout(model_attentions(result), ROLLOUT_RESIDUAL_WEIGHT)  # (L, N, N)
    return RolloutView(
        text=result.text,
        tokens=result.tokens,
        residual_weight=ROLLOUT_RESIDUAL_WEIGHT,
        rollout=rollout,
        pooled=pooled_relevance(rollout),
    )


def attribution_view(
    model: TransformerClassifier,
    tokenizer,
    result: Analysis,
    target: str | None = PREDICTED,
    steps: int = DEFAULT_IG_STEPS,
    baseline: str = "pad",
) -> AttributionView:
    """Gradient × input and Integrated Gradients for ``target`` (a class name), and the methods' agreement.

    Args:
        model, tokenizer: the explorer's model (the tokenizer is not needed here).
        result: the analysed sentence.
        target: a class name, or ``PREDICTED``.
        steps: Integrated Gradients steps, 1 to ``MAX_IG_STEPS``.
        baseline: "pad" or "zero" (see ``integrated_gradients``).
    """
    index = class_index(target, result)
    steps = whole_number(steps, "Integrated Gradients steps", 1, MAX_IG_STEPS)
    if baseline not in BASELINES:
        raise InputError(f"The baseline is one of {', '.join(BASELINES)}; got {shown(baseline)}.")
    ids = sentence_ids(model, result)
    gradient = gradient_x_input(model, ids, index).cpu()  # (N,)
    ig = _on_cpu(integrated_gradients(model, ids, index, baseline, steps))
    return AttributionView(
        text=result.text,
        tokens=result.tokens,
        offsets=result.offsets,
        target=index,
        target_label=result.label_names[index],
        gradient_x_input=gradient,
        integrated_gradients=ig,
        agreement=agreement_of(model_attentions(result), gradient, ig.attributions),
    )


def head_view(model: TransformerClassifier, tokenizer, result: Analysis, layer: int = 1, head: int = 1) -> HeadView:
    """Inside one head (``layer`` and ``head`` from 1): its scores for every query, with and without scaling."""
    layer_index, head_index = layer_head(layer, head, model.num_layers, model.num_heads)
    scores = head_scores(model, sentence_ids(model, result), layer_index, head_index)
    return HeadView(text=result.text, tokens=result.tokens, scores=_on_cpu(scores))


def knockout_view(model: TransformerClassifier, tokenizer, result: Analysis, heads_off=()) -> KnockoutView:
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
        heads_off=[f"L{layer + 1} H{head + 1}" for layer, head in heads],
        probabilities_before=torch.tensor(result.probabilities),
        probabilities=prediction.probs.cpu(),
        attentions=stack_attentions(prediction.attentions).cpu(),  # (L, H, N, N)
    )


def importance_view(model: TransformerClassifier, tokenizer, result: Analysis) -> ImportanceView:
    """Head importance for the predicted class: every single-head knockout, in one batched forward."""
    importance = head_importance(model, sentence_ids(model, result))
    return ImportanceView(
        text=result.text, tokens=result.tokens, label_names=result.label_names, importance=_on_cpu(importance)
    )


def perturbation_view(
    model: TransformerClassifier, tokenizer, result: Analysis, position: int = 0, mode: str = "mask"
) -> PerturbationView:
    """The prediction after replacing token ``position`` by [MASK] (``mode="mask"``) or deleting it ("remove")."""
    n = len(result.tokens)
    position = whole_number(position, "The token position", 0, n - 1)
    if mode not in PERTURBATIONS:
        raise InputError(f"Choose how to change the token: {' or '.join(PERTURBATIONS)}; got {shown(mode)}.")
    if mode == "remove" and n == 1:
        raise InputError("The sentence has one token: removing it leaves nothing to read. Mask it instead.")
    mask_id = tokenizer.token_to_id(MASK_TOKEN)
    if mode == "mask" and mask_id is None:
        raise InputError(f"This model's tokenizer has no {MASK_TOKEN} token; remove the token instead.")
    change = perturb_token(model, sentence_ids(model, result), position, mode, mask_id)
    tokens_after = list(result.tokens)
    if mode == "remove":
        del tokens_after[position]
    else:
        tokens_after[position] = MASK_TOKEN
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


def word_order_view(
    model: TransformerClassifier, tokenizer, result: Analysis, seed: int = 0, reordered: str | None = None
) -> WordOrderView:
    """The sentence and a reordering of it, each classified with positional encoding on and off.

    Args:
        model, tokenizer: the explorer's model and its tokenizer.
        result: the analysed sentence.
        seed: shuffles the tokens when ``reordered`` is None.
        reordered: the person's own reordering, which must have as many tokens as the sentence.
    """
    ids = sentence_ids(model, result)  # (1, N)
    n = ids.size(1)
    if reordered is None:
        seed = whole_number(seed, "The shuffle seed", 0, 2**31 - 1)
        permutation = shuffled_permutation(n, seed)  # (N,)
        reordered_ids = ids[:, permutation.to(ids.device)]  # (1, N)
        reordered_tokens = [result.tokens[i] for i in permutation.tolist()]
    else:
        seed = None
        if not isinstance(reordered, str) or not reordered.strip():
            raise InputError("Type your own reordering of the sentence, or shuffle it.")
        encoding = tokenizer.encode(check_text(reordered))
        if len(encoding.ids) != n:
            raise InputError(
                f"Your reordering has {len(encoding.ids)} tokens and the sentence {n}: "
                "type the same words in another order."
            )
        reordered_ids = torch.tensor([encoding.ids], device=ids.device)  # (1, N)
        reordered_tokens = list(encoding.tokens)
    experiment = _on_cpu(word_order_experiment(model, ids, reordered_ids))
    logits = experiment.logits  # (2, 2, C): [order, encoding]
    return WordOrderView(
        text=result.text,
        tokens=result.tokens,
        label_names=result.label_names,
        seed=seed,
        reordered_tokens=reordered_tokens,
        experiment=experiment,
        difference_without_encoding=(logits[0, 1] - logits[1, 1]).abs().max().item(),
        difference_with_encoding=(logits[0, 0] - logits[1, 0]).abs().max().item(),
    )


def compare_view(result_a: Analysis, result_b: Analysis, layer: int = 1, head: int = 1) -> CompareView:
    """Two analysed sentences through one head (``layer`` and ``head`` from 1), lined up (no model call)."""
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
        comparison=comparison,
    )


def export_json(result: Analysis) -> str:
    """The whole analysis as JSON, numbers exact: the text, tokens, offsets, probabilities and every weight."""
    return analysis_to_json(result)


def export_csv(result: Analysis, layer: int, head: int | None) -> str:
    """One attention matrix as CSV (``layer`` and ``head`` from 0; ``head=None`` averages the heads)."""
    return attention_to_csv(torch.from_numpy(attention_matrix(result, layer, head)), result.tokens)
