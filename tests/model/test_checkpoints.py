"""Listing a model's checkpoints, in its folder or as a Hub repo's branches (offline, from a cache laid out here),
and loading each with its own weights."""

import json
import os
import subprocess
import sys
from pathlib import Path

import torch
from hub_checkpoints import COMMIT, lay_out_hub_cache
from tiny import write_checkpointed_model

from transformer.checkpoints import Checkpoint, branch_name, folder_name, list_checkpoints, step_of
from transformer.loading import DEFAULT_MODEL_DIR, load_model

REPO_ROOT = Path(__file__).resolve().parents[2]
OTHER_COMMIT = "fedcba9876543210fedcba9876543210fedcba98"
IDS = [[5, 9, 23, 7, 2]]
FILES = ("config.json", "model.safetensors", "tokenizer.json")


def logits_of(source, revision=None) -> list[float]:
    return load_model(source, revision=revision, device="cpu").model(torch.tensor(IDS))[0].tolist()


def test_names_carry_the_step_both_ways():
    assert (folder_name(120), branch_name(120)) == ("step-000120", "step-120")
    assert step_of("step-000120") == step_of("step-120") == 120 and step_of("step-0") == 0
    assert step_of("main") is None and step_of("step-x") is None and step_of("steps-1") is None


def test_a_folder_lists_its_checkpoints_the_last_being_the_folder_itself(tmp_path, tiny_tokenizer):
    folder = write_checkpointed_model(tmp_path / "model", tiny_tokenizer)
    checkpoints = list_checkpoints(folder)
    assert [c.step for c in checkpoints] == [0, 4, 9]
    assert checkpoints[-1] == Checkpoint(9, str(folder)) and Path(checkpoints[0].source).name == "step-000000"
    logits = [logits_of(c.source) for c in checkpoints]
    assert logits[0] != logits[1] != logits[2] != logits[0]


def test_a_model_without_checkpoints_lists_none(tiny_model_dir):
    assert list_checkpoints(tiny_model_dir) == [] and list_checkpoints(DEFAULT_MODEL_DIR) == []


HUB_SCRIPT = """
import json
import sys
import torch
from transformer.checkpoints import list_checkpoints
from transformer.loading import load_model
IDS = json.loads(sys.argv[1])
found = list_checkpoints("owner/tiny")
logits = {c.revision: load_model(c.source, revision=c.revision, device="cpu").model(torch.tensor(IDS))[0].tolist()
          for c in found}
print(json.dumps({"steps": [[c.step, c.source, c.revision] for c in found], "logits": logits,
                  "none": len(list_checkpoints("owner/absent"))}))
"""


def test_a_hub_repo_lists_its_step_branches_offline_and_each_loads_its_own_weights(tmp_path, tiny_tokenizer):
    folder = write_checkpointed_model(tmp_path / "model", tiny_tokenizer)
    first = list_checkpoints(folder)[0]
    hub = tmp_path / "hf-home" / "hub"
    lay_out_hub_cache(hub, "owner/tiny", [Path(first.source) / name for name in FILES], "step-0", OTHER_COMMIT)
    lay_out_hub_cache(hub, "owner/tiny", [folder / name for name in FILES], "step-9", COMMIT)
    (hub / "models--owner--tiny" / "refs" / "main").write_text(COMMIT)  # main is the final step, and no step
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf-home"), "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO_ROOT)}
    env.pop("HF_HUB_CACHE", None)
    completed = subprocess.run(
        [sys.executable, "-c", HUB_SCRIPT, json.dumps(IDS)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    found = json.loads(completed.stdout.strip().splitlines()[-1])
    assert found["steps"] == [[0, "owner/tiny", "step-0"], [9, "owner/tiny", "step-9"]] and found["none"] == 0
    torch.testing.assert_close(torch.tensor(found["logits"]["step-0"]), torch.tensor(logits_of(first.source)))
    torch.testing.assert_close(torch.tensor(found["logits"]["step-9"]), torch.tensor(logits_of(folder)))
    assert found["logits"]["step-0"] != found["logits"]["step-9"]
