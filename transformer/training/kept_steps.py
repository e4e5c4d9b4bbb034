"""Keeping the student at a handful of its training steps, writing them into the model folder, pushing them to the Hub.

The steps are log-spaced from 0 (the weights before the first optimiser step) to the last, since a model changes most
at first. Each kept state is the one the run scores and ships (the EMA of the weights when there is one), cast to
float16: 2.45 M parameters of the bundled size are 4.9 MB each, against 9.8 MB in float32. An EMA of decay d still
holds the initial weights at d ** step (0.87 at step 140 with the bundled 0.999), so the spacing counts from its
horizon, 1 / (1 - d) steps (``ema_horizon``): a run of 19,064 steps keeps 0, 4,366 and 19,064. Counted
from step 1, a full-size run's middle one was step 144 of 20,598, and it read five sentences within 0.02 of step 0.

They are written to the resumable state folder (``--checkpoint-dir``) as the run goes, so a resumed run keeps the
same ones, and into ``<output-dir>/checkpoints/`` at the end (``transformer.checkpoints`` says how they are laid out
and listed). The final checkpoint is the shipped model itself: the run ships its best epoch, so the kept steps after
that epoch's last step are dropped, and that step is the final one.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import safetensors.torch
import torch
from huggingface_hub import HfApi
from tokenizers import Tokenizer
from torch import nn

from ..checkpoints import CHECKPOINTS_DIR, INDEX_FILE, branch_name, folder_checkpoints, folder_name, step_of
from ..classifier import TransformerClassifier

DTYPE = torch.float16
TOTAL_FILE = "total-steps.txt"  # beside the kept states: the phase's steps, for a run resumed after its last epoch


def ema_horizon(decay: float) -> int:
    """The steps an EMA of ``decay`` takes to hold mostly trained weights, 1 / (1 - decay); 1 without an EMA."""
    return round(1 / (1 - decay)) if decay else 1


def kept_steps(total: int, count: int, start: int = 1) -> list[int]:
    """``count`` distinct steps from 0 to ``total``, both included, log-spaced in between as if counted from
    ``start`` (``ema_horizon``; clipped to ``total``): the i-th of the others is start * (total / start) ** (i /
    (count - 1)). Every step when ``count`` exceeds them; the last alone for a ``count`` of 1, none for 0."""
    if count < 1:
        return []
    if count == 1 or total < 1:
        return [total]
    if count > total:
        return list(range(total + 1))
    start = min(max(start, 1), total)
    steps = [0] + [round(start * (total / start) ** (i / (count - 1))) for i in range(1, count)]
    for i in range(1, count):  # round() puts early steps on one another: move each past the one before ...
        steps[i] = max(steps[i], steps[i - 1] + 1)
    steps[-1] = total  # (a ``start`` near ``total`` crowds them at the top)
    for i in range(count - 2, 0, -1):  # ... and before the one after, the last staying ``total``
        steps[i] = min(steps[i], steps[i + 1] - 1)
    return steps


def half_state(model: nn.Module) -> dict[str, torch.Tensor]:
    """The model's state on the CPU, floating tensors cast to float16, every tensor its own contiguous copy."""
    state = model.state_dict()
    return {k: (v.to(DTYPE) if v.is_floating_point() else v).detach().cpu().contiguous() for k, v in state.items()}


class StepKeeper:
    """Called before a phase's first step and after each (``loop.Phase.on_step``): keeps the float16 state at
    ``count`` of its steps (``kept_steps`` of the phase's total, known at the first call, from ``start``).

    Each is saved as ``folder/step-NNNNNN.safetensors`` (``folder`` None: kept in memory only).
    """

    def __init__(self, count: int, folder: Path | None = None, start: int = 1):
        self.count, self.start = count, start
        self.folder = folder
        self.total = 0
        self.steps: frozenset[int] = frozenset()
        self.memory: dict[int, dict[str, torch.Tensor]] = {}
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)
            if (folder / TOTAL_FILE).is_file():  # kept by the run this one resumes
                self.total = int((folder / TOTAL_FILE).read_text(encoding="utf-8"))
                self.steps = frozenset(kept_steps(self.total, count, start))

    def __call__(self, step: int, total: int, model: nn.Module) -> None:
        if total != self.total:
            self.total, self.steps = total, frozenset(kept_steps(total, self.count, self.start))
            if self.folder is not None:  # a run resumed after the phase's last epoch takes no step, yet needs it
                (self.folder / TOTAL_FILE).write_text(str(total), encoding="utf-8")
        if step not in self.steps:
            return
        state = half_state(model)
        if self.folder is None:
            self.memory[step] = state
            return
        path = self.folder / f"{folder_name(step)}.safetensors"
        partial = path.with_suffix(".partial")
        safetensors.torch.save_file(state, str(partial))
        partial.replace(path)  # a crash mid-write leaves no half file under a kept name

    def states(self, before: int) -> dict[int, dict[str, torch.Tensor]]:
        """{step: float16 state} of every kept step before ``before`` (the final step, which is the model itself)."""
        found = dict(self.memory)
        if self.folder is not None:
            for path in self.folder.glob("step-*.safetensors"):
                step = step_of(path.name.removesuffix(".safetensors"))
                if step is not None:
                    found[step] = safetensors.torch.load_file(str(path))
        return {step: found[step] for step in sorted(found) if step < before}


def write_checkpoints(
    folder: Path, model: TransformerClassifier, tokenizer: Tokenizer, states: dict, final_step: int, total_steps: int
) -> None:
    """``folder/checkpoints/``: one float16 model folder per state in ``states`` ({step: state}) and the index
    naming ``final_step``, whose checkpoint is ``folder`` itself (already holding ``model``), of the phase's
    ``total_steps``."""
    kept = folder / CHECKPOINTS_DIR
    kept.mkdir()
    half = copy.deepcopy(model).to(DTYPE)
    for step, state in states.items():
        half.load_state_dict(state)
        target = kept / folder_name(step)
        half.save_pretrained(target)  # config.json and float16 model.safetensors; ``load_model`` casts them back
        (target / "README.md").unlink(missing_ok=True)  # the mixin's stub card: the model's own card says it all
        tokenizer.save(str(target / "tokenizer.json"))
    index = {
        "final_step": final_step, "total_steps": total_steps, "steps": [*states, final_step],
        "dtype": str(DTYPE).removeprefix("torch."),
    }  # fmt: skip
    (kept / INDEX_FILE).write_text(json.dumps(index, indent=2) + "\n", encoding="utf-8")


def push_checkpoints(folder: Path, repo_id: str, api: HfApi | None = None) -> list[str]:
    """Push each of ``folder``'s checkpoints as a branch of ``repo_id`` named by its step (``step-120``); the
    final one is the model folder itself, its own ``checkpoints/`` left out. Returns the branches pushed.

    ``api`` is the one seam to the Hub (an ``HfApi`` by default; the tests pass a fake one).
    """
    api = api or HfApi()
    branches = []
    for checkpoint in folder_checkpoints(folder):
        branch = branch_name(checkpoint.step)
        api.create_branch(repo_id, branch=branch, exist_ok=True)
        api.upload_folder(
            repo_id=repo_id,
            folder_path=checkpoint.source,
            revision=branch,
            commit_message=f"Checkpoint at step {checkpoint.step}",
            ignore_patterns=[f"{CHECKPOINTS_DIR}/*"],
        )
        branches.append(branch)
    return branches
