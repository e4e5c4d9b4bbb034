"""A model's training checkpoints: where they are kept, how they are named, and how to list them.

``python -m transformer.train --keep-steps N`` keeps the student at N steps of its training, 0 and the last
included. In a model folder they are ``checkpoints/step-000000/``, ... (each a model folder of its own, weights in
float16), and ``checkpoints/checkpoints.json`` names the final step, whose checkpoint is the model folder itself:
the shipped weights, bit for bit, never a second copy. On the Hub (``--push-to-hub``) each is a branch of the
model's repo named by its step, ``step-0``, ``step-120``, ... (as Pythia's ``step1000``), the final one holding
the model itself; ``load_model(repo, revision="step-120")`` loads one. Listing a repo's branches asks the Hub, or
reads the Hugging Face cache's ``refs/`` while offline (``HF_HUB_OFFLINE=1``) or unreachable.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from huggingface_hub import HfApi, constants
from huggingface_hub.file_download import repo_folder_name

CHECKPOINTS_DIR = "checkpoints"
INDEX_FILE = "checkpoints.json"  # {"final_step": N, "steps": [...], "dtype": "float16"}
_STEP_NAME = re.compile(r"step-0*(\d+)")


@dataclass(frozen=True)
class Checkpoint:
    """One kept step: ``load_model(source, revision=revision)`` loads it (revision None for a folder)."""

    step: int
    source: str
    revision: str | None = None


def folder_name(step: int) -> str:
    """A checkpoint's folder in a model folder's ``checkpoints/``: zero-padded, so folders sort by step."""
    return f"step-{step:06d}"


def branch_name(step: int) -> str:
    """A checkpoint's branch in a Hub repo, named by its step."""
    return f"step-{step}"


def step_of(name: str) -> int | None:
    """The step a folder or branch name holds (``step-120``, ``step-000120``), or None for any other name."""
    match = _STEP_NAME.fullmatch(name)
    return int(match.group(1)) if match else None


def list_checkpoints(source: str | Path) -> list[Checkpoint]:
    """The checkpoints of a model folder or a Hub repo id, by step; [] when it kept none.

    A folder's come from its ``checkpoints/`` (the final one being the folder itself); a repo's are its
    ``step-N`` branches, from the Hub or, offline, from the cache.
    """
    folder = Path(source)
    if folder.is_dir():
        return folder_checkpoints(folder)
    return hub_checkpoints(str(source))


def folder_checkpoints(folder: Path) -> list[Checkpoint]:
    """A model folder's checkpoints: each ``checkpoints/step-*`` folder before the final step, then the folder."""
    kept = folder / CHECKPOINTS_DIR
    try:
        final = int(json.loads((kept / INDEX_FILE).read_text(encoding="utf-8"))["final_step"])
    except (OSError, ValueError, KeyError, TypeError):  # no index (no checkpoints kept), or not one of ours
        return []
    steps = {step_of(path.name): path for path in kept.iterdir() if path.is_dir()}
    earlier = [Checkpoint(step, str(path)) for step, path in sorted(steps.items()) if step is not None and step < final]
    return [*earlier, Checkpoint(final, str(folder))]


def hub_checkpoints(repo_id: str, api: HfApi | None = None) -> list[Checkpoint]:
    """A Hub repo's ``step-N`` branches, by step: asked of the Hub, else read from the cache's ``refs/``."""
    names: list[str] = []
    if not constants.HF_HUB_OFFLINE:
        try:
            names = [ref.name for ref in (api or HfApi()).list_repo_refs(repo_id).branches]
        except Exception:  # unreachable, unknown or private: what the cache holds is all there is to list
            names = []
    if not names:
        refs = Path(constants.HF_HUB_CACHE) / repo_folder_name(repo_id=repo_id, repo_type="model") / "refs"
        names = [path.name for path in refs.iterdir()] if refs.is_dir() else []
    branches = {step: name for name in sorted(names) if (step := step_of(name)) is not None}
    return [Checkpoint(step, repo_id, name) for step, name in sorted(branches.items())]
