"""Faithfulness by erasure over a corpus: each method's AOPC averaged over many sentences (``faithfulness``).

Each sentence is explained for the class the model predicts for it, as the Attributions tab does by
default: attention and rollout rank the tokens by how much they are used, gradient × input and
Integrated Gradients by their signed evidence for that class (``agreement_of`` with ``absolute=False``).
Both removal modes come from one forward pass per sentence.

Shape letters: N = tokens, K = methods.
"""

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import torch

from ..interface import Classifier
from .agreement import METHODS, agreement_of
from .attribution import DEFAULT_IG_STEPS, gradient_x_input, integrated_gradients
from .faithfulness import MODES, Faithfulness, faithfulness_by_mode
from .run import predict


@dataclass(frozen=True)
class CorpusFaithfulness:
    """Mean AOPC per method and of the random floor, per removal mode, over ``sentences`` sentences.

    ``comprehensiveness[mode][method]`` and ``sufficiency[mode][method]``; the floor under the method
    name ``"random"``.
    """

    sentences: int
    comprehensiveness: dict[str, dict[str, float]]
    sufficiency: dict[str, dict[str, float]]


def predicted_class_erasure(
    model: Classifier, input_ids: torch.Tensor, steps: int, modes: Sequence[str]
) -> dict[str, Faithfulness]:
    """One sentence's erasure curves (``faithfulness_by_mode``) for the class the model predicts for it, the four
    methods (``METHODS``' order) ranking by their scores for that class, signed where a method has a sign.

    Shape:
        input_ids: (1, N).
    """
    prediction = predict(model, input_ids)
    target = int(prediction.logits.argmax())
    gradients = gradient_x_input(model, input_ids, target)
    ig = integrated_gradients(model, input_ids, target, steps=steps).attributions
    scores = agreement_of(prediction.attentions, gradients, ig, absolute=False, pooling=model.pooling).scores  # (K, N)
    return faithfulness_by_mode(model, input_ids, target, scores, METHODS, modes)


def corpus_faithfulness(
    model: Classifier,
    sentences: Sequence[torch.Tensor],
    steps: int = DEFAULT_IG_STEPS,
    modes: Sequence[str] = MODES,
    progress: Callable[[Iterable], Iterable] = iter,
) -> CorpusFaithfulness:
    """The mean comprehensiveness and sufficiency AOPC of every method, and of the random floor, over ``sentences``.

    Args:
        model: the classifier, in eval mode.
        sentences: each one sentence's ids, no padding; at least one.
        steps: Integrated Gradients steps.
        modes: any of ``MODES``.
        progress: wraps the sentences' iteration (a progress bar).

    Shape:
        sentences: each (1, N).
    """
    if not sentences:
        raise ValueError("corpus faithfulness needs at least one sentence")
    names = [*METHODS, "random"]
    totals = {curve: {mode: dict.fromkeys(names, 0.0) for mode in modes} for curve in ("comp", "suff")}
    for input_ids in progress(sentences):
        for mode, result in predicted_class_erasure(model, input_ids, steps, modes).items():
            comp = [*result.comprehensiveness_aopc.tolist(), result.random_comprehensiveness_aopc]
            suff = [*result.sufficiency_aopc.tolist(), result.random_sufficiency_aopc]
            for name, c, s in zip(names, comp, suff, strict=True):
                totals["comp"][mode][name] += c
                totals["suff"][mode][name] += s
    mean = {
        curve: {
            mode: {name: total / len(sentences) for name, total in by_name.items()} for mode, by_name in by_mode.items()
        }
        for curve, by_mode in totals.items()
    }
    return CorpusFaithfulness(len(sentences), mean["comp"], mean["suff"])
