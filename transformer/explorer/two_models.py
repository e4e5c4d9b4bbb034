"""One sentence through two models, the explorer's (A) and MODEL_ID_B's (B): the numbers Compare draws when both are
loaded (``views.compare``).

Each model reads the sentence with its own tokenizer, so their tokens need not line up (a BERT adds [CLS] and
[SEP] and cuts words into pieces): each model's head and attributions are drawn on its own tokens, side by
side. The attributions are each model's for the class it predicts. Layers and heads count from 1 here.

Shape letters: N = one model's tokens, C = classes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ..explain.attribution import IntegratedGradients, gradient_x_input, integrated_gradients
from ..explain.budget import ig_steps
from ..interface import Classifier
from . import runner
from .analysis import Analysis, sentence_ids
from .inputs import PREDICTED, checked_numbers, class_index, model_head

NAMES = ("A", "B")


@dataclass(frozen=True)
class Attributions:
    """One model's gradient × input and Integrated Gradients for the class it predicts.

    Shape:
        gradient_x_input: (N,); ``integrated_gradients.attributions``: (N,).
    """

    target_label: str
    gradient_x_input: torch.Tensor
    integrated_gradients: IntegratedGradients


def attributions_of(model: Classifier, tokenizer, result: Analysis, steps: int | None = None) -> Attributions:
    """``model``'s attributions of ``result`` (its own analysis) for its predicted class, [PAD] as IG's baseline;
    ``steps`` by default as many as half the job cap pays for on this model (``explain.budget.ig_steps``)."""
    target = class_index(PREDICTED, result)
    ids = sentence_ids(model, result)  # (1, N)
    steps = ig_steps(model, ids.size(1), runner.default_seconds()) if steps is None else steps
    return Attributions(
        target_label=result.label_names[target],
        gradient_x_input=gradient_x_input(model, ids, target).cpu(),
        integrated_gradients=runner.on_cpu(integrated_gradients(model, ids, target, "pad", steps)),
    )


@dataclass(frozen=True)
class ModelReading:
    """What one model made of the sentence.

    Shape:
        probabilities: (C,); attention: (N, N), the chosen head's, None when the model has no such head.
    """

    name: str
    source: str
    tokens: list[str]
    offsets: list[tuple[int, int]]
    label_names: list[str]
    probabilities: list[float]
    num_layers: int
    num_heads: int
    attention: np.ndarray | None
    attributions: Attributions


@dataclass(frozen=True)
class ModelsView:
    """The sentence through both models, one head (layer and head from 1) in each that has it."""

    text: str
    layer: int
    head: int
    readings: tuple[ModelReading, ...]  # A's, then B's


def models_view(
    results: Sequence[Analysis], attributions: Sequence[Attributions], sources: Sequence[str], layer=1, head=1
) -> ModelsView:
    """Both models' readings of one text (no model call): each model's analysis, attributions and source, A first.

    Raises:
        InputError: ``layer`` or ``head`` is in neither model.
    """
    shapes = [result.attentions.shape[:2] for result in results]
    layer, head = checked_numbers(layer, head, max(layers for layers, _ in shapes), max(heads for _, heads in shapes))
    cells = [model_head(layer, head, layers, heads) for layers, heads in shapes]  # None: the model lacks the head
    readings = tuple(
        ModelReading(
            name=name,
            source=source,
            tokens=result.tokens,
            offsets=result.offsets,
            label_names=result.label_names,
            probabilities=result.probabilities,
            num_layers=layers,
            num_heads=heads,
            attention=None if cell is None else result.attentions[cell],
            attributions=explained,
        )
        for name, result, explained, source, (layers, heads), cell in zip(
            NAMES, results, attributions, sources, shapes, cells, strict=True
        )
    )
    return ModelsView(text=results[0].text, layer=layer, head=head, readings=readings)


def same_classes(readings: Sequence[ModelReading]) -> bool:
    """Whether both models name the same classes in the same order, case aside ("POSITIVE" is "positive")."""
    names = [[name.casefold() for name in reading.label_names] for reading in readings]
    return names[0] == names[1]
