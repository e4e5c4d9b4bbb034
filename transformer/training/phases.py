"""The phases of the recipe: masked-language-model pre-training, teacher classifiers, the distilled student.

Each builds a ``loop.Phase`` and runs ``loop.fit``, so every phase shows a progress bar and resumes
from its last finished epoch. Randomness is seeded per phase (torch before each model is built, a
``random.Random`` per epoch for the data order), so a phase does the same thing whether the phases
before it ran in this process or were read back from their checkpoints.
"""

import random
from dataclasses import dataclass, field

import torch
from torch import nn

from ..classifier import TransformerClassifier
from .data import bucketed_batches
from .loop import Checkpoints, Phase, Schedule, fit
from .mixture import Mixture
from .objectives import MaskedLanguageModel, PairMargin, classification_loss, mlm_loss
from .pairing import Pairing
from .scoring import window_probabilities


@dataclass(frozen=True)
class ClassifierTraining:
    """What the classification phases share: the data, its weighting and the regularisers."""

    mixture: Mixture
    weights: dict[str, float]
    batch_size: int
    word_dropout: float
    label_smoothing: float
    seed: int
    pairs: PairMargin = field(default_factory=PairMargin)  # the hinge between CAD twins (off at weight 0)
    pairing: Pairing | None = None  # counterfactual logit pairing (None or weight 0: off)


def epoch_batches(lengths: list[int], chosen: list[int], batch_size: int, rng: random.Random) -> list[list[int]]:
    """Length-bucketed batches over the example indices ``chosen`` (as indices into ``lengths``)."""
    local = bucketed_batches([lengths[i] for i in chosen], batch_size, rng)
    return [[chosen[j] for j in batch] for batch in local]


def pretrain(
    model: TransformerClassifier,
    windows: list[list[int]],
    windows_per_epoch: int,
    batch_size: int,
    mask_rate: float,
    schedule: Schedule,
    checkpoints: Checkpoints,
    seed: int,
) -> list[dict]:
    """Masked-language-model pre-training of ``model``'s encoder, in place; returns the per-epoch history.

    Each epoch reads a fresh random sample of ``windows_per_epoch`` windows (all of them if fewer).
    """
    lengths = [len(window) for window in windows]

    def batches(epoch: int) -> list[list[int]]:
        rng = random.Random(f"pretrain-{seed}-{epoch}")
        chosen = rng.sample(range(len(windows)), min(windows_per_epoch, len(windows)))
        return epoch_batches(lengths, chosen, batch_size, rng)

    device = next(model.parameters()).device
    torch.manual_seed(seed)
    language_model = MaskedLanguageModel(model).to(device)
    phase = Phase("pretrain", batches, lambda m, rows: mlm_loss(m, windows, rows, mask_rate))
    history, last_state = fit(language_model, phase, schedule, checkpoints)
    language_model.load_state_dict(last_state)  # also the encoder's, after a resume that skipped the loop
    return history


def train_classifier(
    name: str,
    model: TransformerClassifier,
    targets: torch.Tensor,
    setup: ClassifierTraining,
    score,
    schedule: Schedule,
    checkpoints: Checkpoints,
    on_step=None,
) -> list[dict]:
    """Fit ``model`` on the mixture against ``targets`` (n, C); loads the best-scoring epoch into it.

    Returns the per-epoch history (training loss and the dev scores of each epoch). ``on_step`` is the
    phase's (``loop.Phase``): the student's keeps its checkpoints.
    """
    mixture, lengths = setup.mixture, [len(ids) for ids in setup.mixture.sequences]

    def batches(epoch: int) -> list[list[int]]:
        rng = random.Random(f"{name}-{setup.seed}-{epoch}")
        return epoch_batches(lengths, mixture.sample_epoch(setup.weights, rng), setup.batch_size, rng)

    def loss(m: nn.Module, rows: list[int]) -> torch.Tensor:
        return classification_loss(
            m,
            mixture.sequences,
            targets,
            rows,
            setup.word_dropout,
            setup.label_smoothing,
            mixture.partners,
            setup.pairs,
            setup.pairing,
        )

    history, best_state = fit(model, Phase(name, batches, loss, score, on_step), schedule, checkpoints)
    model.load_state_dict(best_state)
    return history


def teacher_targets(
    build, one_hot: torch.Tensor, setup: ClassifierTraining, count: int, score, schedule: Schedule, checkpoints
) -> tuple[torch.Tensor, list[dict]]:
    """Train ``count`` teachers (``build(seed)`` makes each) and return their mean prediction on the mixture.

    Returns:
        (the ensemble's class probabilities, (n, C); one summary per teacher: seed, history).
    """
    ensemble, summaries = torch.zeros_like(one_hot), []
    for k in range(1, count + 1):
        teacher_seed = setup.seed + k
        saved = checkpoints.load(f"teacher-{k}-probabilities")
        if saved is None:
            teacher = build(teacher_seed)
            history = train_classifier(f"teacher-{k}", teacher, one_hot, setup, score, schedule, checkpoints)
            saved = {"history": history, "probabilities": window_probabilities(teacher, setup.mixture.sequences)}
            checkpoints.save(f"teacher-{k}-probabilities", saved)
        ensemble += saved["probabilities"] / count
        summaries.append({"seed": teacher_seed, "history": saved["history"]})
    return ensemble, summaries
