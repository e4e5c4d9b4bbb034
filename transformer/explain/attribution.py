"""Gradient attributions for a target class: gradient × input and Integrated Gradients.

Shape letters: B = batch, N = tokens, D = d_model, S = integration steps, P = S + 2 points on the path,
K = points in one pass (``batching.rows_per_pass``).

Both differentiate the target class's logit f with respect to the √D-scaled token embeddings
(``model.token_embeddings``, the model's ``inputs_embeds``); the positional encoding is added
inside the model and is not attributed. A token's score is the sum over D of its embedding's
attribution.
"""

import math
from dataclasses import dataclass

import numpy as np
import torch

from ..interface import Classifier
from .batching import passes_for, progress
from .run import check_sentence

DEFAULT_IG_STEPS = 32
# Completeness holds when |sum(attributions) − (f(x) − f(baseline))| <= RTOL·|f(x) − f(baseline)| + ATOL.
# On random models of the bundled size, 32 Gauss-Legendre nodes give errors below 0.1%, 16 about 1%.
COMPLETENESS_RTOL = 0.05
COMPLETENESS_ATOL = 1e-3


@dataclass(frozen=True)
class IntegratedGradients:
    """Integrated Gradients for one sentence and target class.

    Shape:
        attributions: (N,). ``kept_positions``: the positions the baseline keeps as they are (a BERT's [CLS]
        and [SEP]). The rest are floats; ``completeness_error`` is sum(attributions) − (target_logit −
        baseline_logit), zero for exact integration.
    """

    attributions: torch.Tensor
    target: int
    baseline: str
    kept_positions: list[int]
    steps: int
    target_logit: float
    baseline_logit: float
    completeness_error: float
    relative_completeness_error: float
    complete: bool


def _target_gradient(model: Classifier, embeds: torch.Tensor, target: int):
    """Target logits of a batch of embedded sentences and their gradient with respect to the embeddings.

    Shape:
        embeds: (B, N, D). Returns (logits (B,), gradients (B, N, D)).
    """
    with torch.enable_grad():
        embeds = embeds.detach().requires_grad_()
        logits = model(inputs_embeds=embeds)[:, target]  # (B,)
        # Rows are independent in eval mode, so the gradient of the sum is each row's own gradient.
        (gradients,) = torch.autograd.grad(logits.sum(), embeds)
    return logits.detach(), gradients


def _path_integral(
    model: Classifier,
    reference: torch.Tensor,
    embeds: torch.Tensor,
    alphas: torch.Tensor,
    point_weights: torch.Tensor,
    target: int,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The target logit at each point reference + α(embeds − reference), and the weighted sum of its gradients.

    The points run a pass at a time (``batching.passes_for``: as many as the model's activations for the backward
    pass fit in the memory budget, all of them on a small model), so one call's memory is bounded whatever S is.

    Args:
        model: the classifier, in eval mode.
        reference, embeds: the path's two ends.
        alphas: where each point lies on the path, from 0 (reference) to 1 (embeds).
        point_weights: each point's quadrature weight.
        target: class index.

    Shape:
        reference, embeds: (N, D); alphas, point_weights: (P,).

    Returns:
        (logits (P,), Σ_p weight_p · ∇f(point_p) (N, D)).
    """
    logits, weighted = [], torch.zeros_like(embeds)  # (N, D)
    for points in progress(passes_for(model, alphas.numel(), embeds.size(0), backward=True), "Integrated Gradients"):
        with torch.no_grad():
            path = reference + alphas[points, None, None] * (embeds - reference)  # (K, N, D)
        pass_logits, gradients = _target_gradient(model, path, target)  # (K,), (K, N, D)
        logits.append(pass_logits)
        weighted += torch.einsum("k,knd->nd", point_weights[points], gradients)  # (N, D)
    return torch.cat(logits), weighted


def gradient_x_input(model: Classifier, input_ids: torch.Tensor, target: int) -> torch.Tensor:
    """Gradient × input: the first-order estimate of each token's contribution to the target logit.

    Args:
        model: the classifier, in eval mode.
        input_ids: one sentence, no padding.
        target: class index.

    Shape:
        input_ids: (1, N). Returns (N,).
    """
    check_sentence(model, input_ids)
    with torch.no_grad():
        embeds = model.token_embeddings(input_ids)  # (1, N, D)
    _, gradients = _target_gradient(model, embeds, target)
    return (gradients * embeds)[0].sum(dim=-1)  # (N,)


def integrated_gradients(
    model: Classifier,
    input_ids: torch.Tensor,
    target: int,
    baseline: str = "pad",
    steps: int = DEFAULT_IG_STEPS,
) -> IntegratedGradients:
    """Integrated Gradients (Sundararajan et al. 2017) by Gauss-Legendre quadrature, in passes of path points.

    attribution = (x − x') ⊙ ∫₀¹ ∇f(x' + α(x − x')) dα, summed over D per token, where x are the
    token embeddings and x' the baseline's. The integrand is sharply peaked near the baseline: once
    the token embeddings outgrow the positional encoding, LayerNorm makes f almost flat along the
    path. A uniform Riemann or trapezoid rule needs over 100 steps to reach 5% there; Gauss-Legendre
    (Captum's default) reaches it with a handful. The S nodes and the two end points, which give
    f(x') and f(x), run in passes of one forward and one backward each, as many points a pass as the memory
    budget holds (``batching``), so memory does not grow with S; the weighted gradients are summed across passes.

    Args:
        model: the classifier, in eval mode.
        input_ids: one sentence, no padding.
        target: class index; f is its logit.
        baseline: "pad", every token replaced by [PAD] (``model.pad_token_id``) but those the tokenizer adds
            around every sentence (``model.added_token_ids``: a BERT's [CLS] and [SEP], which then get no
            attribution), or "zero", all-zero embeddings. ``padding_idx`` keeps the tutorial model's [PAD]
            embedding at zero, so the two agree for it unless loaded weights changed that row. Either way
            the positions are still added, so the baseline is "no words, same positions".
        steps: S, the number of quadrature nodes.

    Shape:
        input_ids: (1, N).

    Returns:
        An ``IntegratedGradients``; ``complete`` says whether completeness holds within
        ``COMPLETENESS_RTOL`` and ``COMPLETENESS_ATOL``.
    """
    check_sentence(model, input_ids)
    if baseline not in ("pad", "zero"):
        raise ValueError(f'baseline must be "pad" or "zero", got {baseline!r}')
    if steps < 1:
        raise ValueError(f"steps must be at least 1, got {steps}")
    nodes, weights = np.polynomial.legendre.leggauss(steps)  # on [-1, 1]
    added = torch.tensor(model.added_token_ids, dtype=torch.long, device=input_ids.device)
    kept = torch.isin(input_ids, added) if baseline == "pad" else torch.zeros_like(input_ids, dtype=torch.bool)
    with torch.no_grad():
        embeds = model.token_embeddings(input_ids)[0]  # (N, D)
        if baseline == "pad":
            reference = model.token_embeddings(input_ids.masked_fill(~kept, model.pad_token_id))[0]  # (N, D)
        else:
            reference = torch.zeros_like(embeds)
    # (P,): the baseline, the input, then the nodes mapped to [0, 1]; the end points weigh nothing in the integral
    alphas = torch.tensor([0.0, 1.0, *((nodes + 1) / 2)], dtype=embeds.dtype, device=embeds.device)
    point_weights = torch.tensor([0.0, 0.0, *(weights / 2)], dtype=embeds.dtype, device=embeds.device)  # (P,)
    logits, mean_gradient = _path_integral(model, reference, embeds, alphas, point_weights, target)
    attributions = ((embeds - reference) * mean_gradient).sum(dim=-1)  # (N,)

    baseline_logit, target_logit = logits[0].item(), logits[1].item()
    difference = target_logit - baseline_logit
    error = attributions.sum().item() - difference
    return IntegratedGradients(
        attributions=attributions,
        target=target,
        baseline=baseline,
        kept_positions=kept[0].nonzero().flatten().tolist(),
        steps=steps,
        target_logit=target_logit,
        baseline_logit=baseline_logit,
        completeness_error=error,
        relative_completeness_error=abs(error) / abs(difference) if difference else math.inf,
        complete=abs(error) <= COMPLETENESS_RTOL * abs(difference) + COMPLETENESS_ATOL,
    )
