"""Listing a model's checkpoints, in its folder or as a Hub repo's branches (offline, from a cache laid out here),
and loading each with its own weights."""

import itertools
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import torch
from hub_checkpoints import COMMIT, lay_out_hub_cache
from safetensors.torch import load_file
from tiny import write_checkpointed_model

from transformer.checkpoints import (
    CHECKPOINTS_DIR,
    INDEX_FILE,
    Checkpoint,
    branch_name,
    folder_name,
    list_checkpoints,
    step_of,
)
from transformer.loading import DEFAULT_MODEL_DIR, load_model
from transformer.training.kept_steps import ema_horizon, kept_steps

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
    assert list_checkpoints(tiny_model_dir) == []


MAKEFILE = REPO_ROOT / "Makefile"
BUNDLED_MAX_BYTES = 15 * 1000 * 1000  # issue 57's budget for the bundled checkpoints
SENTENCES = ["The film was not good.", "A wonderful, moving story.", "I hated every minute of it."]


def test_the_bundled_model_ships_make_train_s_checkpoints_the_last_being_the_model_itself():
    checkpoints = list_checkpoints(DEFAULT_MODEL_DIR)
    index = json.loads((DEFAULT_MODEL_DIR / CHECKPOINTS_DIR / INDEX_FILE).read_text(encoding="utf-8"))
    arguments = json.loads((DEFAULT_MODEL_DIR / "metrics.json").read_text(encoding="utf-8"))["arguments"]
    start = ema_horizon(arguments["ema_decay"])
    make_train_keeps = int(re.search(r"^KEEP_STEPS \?= (\d+)$", MAKEFILE.read_text(encoding="utf-8"), re.M).group(1))
    assert arguments["keep_steps"] == make_train_keeps
    assert [c.step for c in checkpoints] == index["steps"] == kept_steps(index["total_steps"], make_train_keeps, start)
    assert checkpoints[-1] == Checkpoint(index["final_step"], str(DEFAULT_MODEL_DIR)) and index["dtype"] == "float16"
    earlier = [Path(c.source) for c in checkpoints[:-1]]
    on_disk = [path for folder in earlier for path in folder.iterdir()]
    assert sum(path.stat().st_size for path in on_disk) <= BUNDLED_MAX_BYTES
    for folder in earlier:  # the model's tokenizer and configuration, its weights in float16
        assert (folder / "tokenizer.json").read_bytes() == (DEFAULT_MODEL_DIR / "tokenizer.json").read_bytes()
        config, model_config = (json.loads((f / "config.json").read_text()) for f in (folder, DEFAULT_MODEL_DIR))
        assert {k: v for k, v in config.items() if k != "torch_dtype"} == {
            k: v for k, v in model_config.items() if k != "torch_dtype"
        }
        assert {t.dtype for t in load_file(str(folder / "model.safetensors")).values() if t.is_floating_point()} == {
            torch.float16
        }


def test_the_bundled_checkpoints_read_sentences_as_training_went():
    positive = []
    for checkpoint in list_checkpoints(DEFAULT_MODEL_DIR):
        loaded = load_model(checkpoint.source, device="cpu")
        ids = [torch.tensor([loaded.tokenizer.encode(text).ids]) for text in SENTENCES]  # (1, N) each
        with torch.no_grad():
            positive.append([torch.softmax(loaded.model(i)[0], -1)[1].item() for i in ids])  # logits (C,)
    first, *_, last = positive
    assert all(abs(p - 0.5) < 0.1 for p in first)  # step 0: the initial weights read every sentence near even
    assert [p > 0.5 for p in last] == [False, True, False]  # the shipped model reads them right
    assert all(a != b for a, b in itertools.pairwise(positive))  # each checkpoint its own weights


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
