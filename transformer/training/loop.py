"""One training loop for every phase (pre-training, teachers, the student), resumable after any epoch.

Each phase is a ``Phase``: its loss on a batch, the batches of an epoch, and optionally a score that
picks the best epoch. ``fit`` runs it with AdamW, warm-up + cosine decay, gradient clipping and an
optional exponential moving average (EMA) of the weights. After every epoch the whole state is saved
to a ``Checkpoints`` folder: the model, the optimiser, the EMA, the schedule and torch's random state.
A resumed run therefore takes the same steps as one that was never interrupted, and ends with the same
weights, byte for byte.
"""

import copy
import math
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn
from tqdm import tqdm


@dataclass(frozen=True)
class Schedule:
    """How a phase is optimised."""

    epochs: int
    lr: float
    weight_decay: float = 0.1
    warmup: float = 0.05  # fraction of the steps with linear warm-up
    ema_decay: float = 0.0  # 0 = no moving average
    embedding_lr_scale: float = 1.0  # the token embedding table's peak learning rate, as a multiple of ``lr``
    clip: float = 1.0


@dataclass(frozen=True)
class Phase:
    """What one training phase computes.

    Attributes:
        name: names the progress bar and the checkpoint file.
        batches: ``batches(epoch)`` -> the example index lists of that epoch (1-based), deterministic.
        loss: ``loss(model, rows)`` -> the scalar training loss on those examples.
        score: ``score(model)`` -> a number to maximise after each epoch (None: keep the last epoch).
        on_step: ``on_step(step, total_steps, model)``, called with the weights that are scored (the EMA's, with
            one) before the first step (step 0) and after each (``kept_steps.StepKeeper`` keeps some of them).
    """

    name: str
    batches: Callable[[int], list[list[int]]]
    loss: Callable[[nn.Module, list[int]], torch.Tensor]
    score: Callable[[nn.Module], dict] | None = None
    on_step: Callable[[int, int, nn.Module], None] | None = None


class Checkpoints:
    """A folder of resumable state, one file per phase; ``None`` folder = keep nothing."""

    def __init__(self, folder: Path | None):
        self.folder = folder
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)

    def path(self, name: str) -> Path | None:
        return None if self.folder is None else self.folder / f"{name}.pt"

    def save(self, name: str, state: dict) -> None:
        """Write ``state`` atomically: a crash mid-write leaves the previous checkpoint intact."""
        path = self.path(name)
        if path is not None:
            partial = path.with_suffix(".partial")
            torch.save(state, partial)
            partial.replace(path)

    def load(self, name: str) -> dict | None:
        path = self.path(name)
        return torch.load(path, weights_only=False) if path is not None and path.exists() else None

    def clear(self) -> None:
        if self.folder is not None and self.folder.exists():
            shutil.rmtree(self.folder)


def adamw(model: nn.Module, lr: float, weight_decay: float, embedding_lr_scale: float = 1.0) -> torch.optim.AdamW:
    """AdamW whose weight decay applies to matrices (embedding table included), not to biases or LayerNorm.

    With ``embedding_lr_scale`` k ≠ 1 the embedding tables (every ``nn.Embedding``'s weight) form a third
    group with learning rate k × ``lr`` and weight decay ``weight_decay`` / k: AdamW decays by lr × decay
    per step, so the table's decay per step stays what it was, and only its gradient steps grow. At k = 1
    the groups are the two above, so older checkpoints still load.
    """
    tables = set()
    if embedding_lr_scale != 1:
        tables = {id(m.weight) for m in model.modules() if isinstance(m, nn.Embedding)}
    decay = [p for p in model.parameters() if p.dim() >= 2 and id(p) not in tables]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    if tables:
        embeddings = [p for p in model.parameters() if id(p) in tables]
        scaled = {"lr": lr * embedding_lr_scale, "weight_decay": weight_decay / embedding_lr_scale}
        groups.append({"params": embeddings, **scaled})
    return torch.optim.AdamW(groups, lr=lr)


def warmup_cosine(
    optimizer: torch.optim.Optimizer, warmup_steps: int, total_steps: int
) -> torch.optim.lr_scheduler.LambdaLR:
    """Linear warm-up from 0 to the peak learning rate, then cosine decay to 0 (each group from its own peak)."""

    def factor(step: int) -> float:
        if step < warmup_steps:
            return (step + 1) / warmup_steps
        progress = (step - warmup_steps) / max(1, total_steps - warmup_steps)
        return 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress)))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def fit(model: nn.Module, phase: Phase, schedule: Schedule, checkpoints: Checkpoints) -> tuple[list[dict], dict]:
    """Train ``model`` through ``phase``; continue from its checkpoint when one exists.

    Returns:
        (history: one dict per epoch with the mean training loss and the score, state dict of the kept
        epoch: the best-scoring one, or the last without a score). With ``schedule.ema_decay`` the
        averaged weights are the ones scored and kept. ``model`` is left with its last-epoch weights.
    """
    steps_per_epoch = len(phase.batches(1))
    total_steps = steps_per_epoch * schedule.epochs
    optimizer = adamw(model, schedule.lr, schedule.weight_decay, schedule.embedding_lr_scale)
    scheduler = warmup_cosine(optimizer, int(schedule.warmup * total_steps), total_steps)
    averaged = None
    if schedule.ema_decay:
        averaged = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(schedule.ema_decay), use_buffers=True)
    scored = scored_weights(model, averaged)
    history, best, best_state, first_epoch = [], -math.inf, None, 1

    saved = checkpoints.load(phase.name)
    if saved is not None:
        model.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        scheduler.load_state_dict(saved["scheduler"])
        if averaged is not None:
            averaged.load_state_dict(saved["averaged"])
        torch.set_rng_state(saved["torch_rng"])
        if saved["cuda_rng"] is not None:
            torch.cuda.set_rng_state_all(saved["cuda_rng"])
        history, best, best_state, first_epoch = (
            saved["history"],
            saved["best"],
            saved["best_state"],
            saved["epoch"] + 1,
        )

    if phase.on_step is not None and first_epoch == 1:
        phase.on_step(0, total_steps, scored)
    with tqdm(
        total=total_steps, initial=(first_epoch - 1) * steps_per_epoch, desc=phase.name, unit="step",
        file=sys.stderr, mininterval=2.0, dynamic_ncols=True,
    ) as progress:  # fmt: skip
        for epoch in range(first_epoch, schedule.epochs + 1):
            loss = train_epoch(model, averaged, phase, epoch, optimizer, scheduler, schedule.clip, progress)
            record = {"epoch": epoch, "train_loss": round(loss, 4)}
            if phase.score is not None:
                record["dev"] = phase.score(scored)
                progress.write(f"{phase.name} epoch {epoch}: loss {loss:.4f}, dev {record['dev']}")
            else:
                progress.write(f"{phase.name} epoch {epoch}: loss {loss:.4f}")
            history.append(record)
            value = record["dev"]["mean"] if phase.score is not None else epoch
            if value > best:
                best, best_state = value, copy.deepcopy(scored.state_dict())
            checkpoints.save(
                phase.name,
                {
                    "epoch": epoch, "history": history, "best": best, "best_state": best_state,
                    "model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "scheduler": scheduler.state_dict(), "torch_rng": torch.get_rng_state(),
                    "cuda_rng": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None,
                    "averaged": None if averaged is None else averaged.state_dict(),
                },
            )  # fmt: skip
    return history, best_state


def scored_weights(model: nn.Module, averaged) -> nn.Module:
    """The weights a phase scores and keeps: the EMA's when there is one, else the model's."""
    return averaged.module if averaged is not None else model


def train_epoch(model, averaged, phase: Phase, epoch: int, optimizer, scheduler, clip: float, progress) -> float:
    """One pass over ``phase.batches(epoch)``; returns the mean training loss per batch."""
    model.train()
    total, count = 0.0, 0
    batches = phase.batches(epoch)
    for rows in batches:
        loss = phase.loss(model, rows)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
        scheduler.step()
        if averaged is not None:
            averaged.update_parameters(model)
        total, count = total + loss.item(), count + 1
        if phase.on_step is not None:  # steps counted over the phase; every epoch has as many batches
            phase.on_step((epoch - 1) * len(batches) + count, progress.total, scored_weights(model, averaged))
        progress.set_postfix(loss=f"{total / count:.4f}", refresh=False)
        progress.update()
    return total / max(count, 1)
