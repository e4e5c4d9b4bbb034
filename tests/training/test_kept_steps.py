"""The student's kept checkpoints: which steps, what each holds, the final one being the model, and the Hub push."""

import itertools
import json
import math
from pathlib import Path

import pytest
import torch
from tiny import tiny_model

from transformer.checkpoints import CHECKPOINTS_DIR, INDEX_FILE, list_checkpoints
from transformer.loading import load_model
from transformer.train import parse_args, push_folder
from transformer.training.kept_steps import StepKeeper, ema_horizon, half_state, kept_steps, push_checkpoints
from transformer.training.loop import Checkpoints, Phase, Schedule, fit

pytestmark = pytest.mark.slow  # trains a toy model (the session's shared one)

KEEP = 12  # the default of --keep-steps, which the toy run leaves as it is


CASES = [(1000, 12), (40, 12), (11, 12), (12, 12), (3, 2), (5, 1), (0, 4)]


@pytest.mark.parametrize(("total", "count"), CASES)
@pytest.mark.parametrize("start", [1, 10, 1000])
def test_kept_steps_are_distinct_include_both_ends_and_spread_out(total, count, start):
    steps = kept_steps(total, count, start)
    assert steps == sorted(set(steps)) and len(steps) == min(count, total + 1) and steps[-1] == total
    assert count < 2 or steps[0] == 0
    assert kept_steps(total, 0, start) == []
    if total == 1000 and start == 1:  # log-spaced: each gap at least the one before it, the first steps close
        gaps = [b - a for a, b in itertools.pairwise(steps[1:])]
        assert gaps == sorted(gaps) and steps[1] == round(1000 ** (1 / 11)) and steps[-2] == round(1000 ** (10 / 11))
    if total == 1000 and start == 10:  # counted from ``start``: none kept between 0 and it
        assert steps[1] == round(10 * 100 ** (1 / 11)) > 10 and steps[-2] == round(10 * 100 ** (10 / 11))


def test_an_ema_s_kept_steps_count_from_its_horizon():
    assert (ema_horizon(0.999), ema_horizon(0.9), ema_horizon(0.0)) == (1000, 10, 1)
    assert kept_steps(19064, 3, ema_horizon(0.999)) == [0, 4366, 19064]  # the bundled run's
    assert kept_steps(19064, 3) == [0, 138, 19064]  # counted from step 1, its EMA still 0.87 the initial weights
    assert kept_steps(10, 3, 1000) == [0, 9, 10]  # a horizon past the run: crowded at the top, still distinct


def test_the_keeper_holds_the_weights_before_and_after_the_steps_it_names():
    model = tiny_model(dropout=0.0).train()
    ids = torch.randint(1, 50, (8, 6))  # (B, N)
    labels = torch.arange(8) % 2

    def loss(m, rows):
        return torch.nn.functional.cross_entropy(m(ids[rows]), labels[rows])

    keeper = StepKeeper(4)
    first = half_state(model)
    phase = Phase("t", lambda epoch: [[0, 1], [2, 3], [4, 5], [6, 7]], loss, on_step=keeper)
    _, last_state = fit(model, phase, Schedule(epochs=2, lr=1e-2), Checkpoints(None))
    assert sorted(keeper.memory) == kept_steps(8, 4) == [0, 2, 4, 8]
    assert all(torch.equal(keeper.memory[0][k], v) for k, v in first.items())  # step 0: before any step
    assert all(torch.equal(keeper.memory[8][k], v.half()) for k, v in last_state.items())  # the last: the kept model
    assert not torch.equal(keeper.memory[2]["embedding.weight"], keeper.memory[4]["embedding.weight"])


def test_a_keeper_resumed_on_its_folder_knows_the_phase_s_steps_and_states(tmp_path):
    model = tiny_model()
    keeper = StepKeeper(3, tmp_path / "kept", start=2)
    keeper(0, 10, model)
    keeper(1, 10, model)  # not kept: 0, 4 and 10 are (counted from step 2)
    resumed = StepKeeper(3, tmp_path / "kept", start=2)  # a run resumed after the last epoch takes no step
    assert (resumed.total, sorted(resumed.steps)) == (10, [0, 4, 10])
    assert sorted(resumed.states(before=10)) == [0]
    assert all(torch.equal(resumed.states(before=10)[0][k], v) for k, v in half_state(model).items())


def index_of(folder: Path) -> dict:
    return json.loads((folder / CHECKPOINTS_DIR / INDEX_FILE).read_text(encoding="utf-8"))


def test_a_trained_model_keeps_the_steps_it_says_each_loading_with_its_own_logits(trained_toy_model_dir):
    index = index_of(trained_toy_model_dir)
    metrics = load_model(trained_toy_model_dir, device="cpu").metrics
    epochs = metrics["arguments"]["epochs"]
    final = index["total_steps"] * metrics["best_epoch"] // epochs  # the shipped epoch's last step
    start = ema_horizon(metrics["arguments"]["ema_decay"])
    planned = [step for step in kept_steps(index["total_steps"], KEEP, start) if step < final] + [final]
    checkpoints = list_checkpoints(trained_toy_model_dir)
    assert [c.step for c in checkpoints] == index["steps"] == planned and index["final_step"] == final
    assert len(planned) >= 6 and index["dtype"] == "float16"
    ids = torch.tensor([[5, 9, 23, 7, 2]])  # (1, N)
    logits = []
    for checkpoint in checkpoints:
        loaded = load_model(checkpoint.source, revision=checkpoint.revision, device="cpu")
        assert loaded.model.embedding.weight.dtype == torch.float32  # float16 on disk, float32 once loaded
        logits.append(loaded.model(ids)[0])
    assert all(not torch.allclose(a, b) for i, a in enumerate(logits) for b in logits[i + 1 :])


def test_the_last_checkpoint_is_the_shipped_model_and_the_others_are_float16(trained_toy_model_dir):
    checkpoints = list_checkpoints(trained_toy_model_dir)
    assert Path(checkpoints[-1].source) == trained_toy_model_dir  # the very files shipped: bit for bit
    for checkpoint in checkpoints[:-1]:
        folder = Path(checkpoint.source)
        assert folder.parent == trained_toy_model_dir / CHECKPOINTS_DIR
        assert {p.name for p in folder.iterdir()} == {"config.json", "model.safetensors", "tokenizer.json"}
        size = (folder / "model.safetensors").stat().st_size
        assert size < 0.55 * (trained_toy_model_dir / "model.safetensors").stat().st_size  # half, and a header


def test_bundled_size_checkpoints_fit_the_budget_that_make_train_keeps():
    """4.9 MB of float16 weights each at the bundled size: --keep-steps 3 (two folders and the model) stays under
    15 MB with their tokenizers, 4 would not."""
    parameters = 16000 * 128 + 2 * (4 * 128 * 129 + 2 * 128 * 513 + 128 + 512 + 4 * 128) + 2 * 128 + 128 * 129 + 2 * 129
    per_folder = 2 * parameters + 360_447  # float16 weights and the bundled tokenizer.json
    assert math.floor(15e6 / per_folder) + 1 == 3
    assert parse_args([]).keep_steps == 12


class FakeHub:
    """The part of ``HfApi`` the push uses, recording each call."""

    def __init__(self):
        self.calls = []

    def create_repo(self, repo_id, exist_ok):
        self.calls.append(("create_repo", repo_id))

    def create_branch(self, repo_id, branch, exist_ok):
        self.calls.append(("create_branch", repo_id, branch))

    def upload_folder(self, repo_id, folder_path, commit_message, revision=None, ignore_patterns=None):
        files = sorted(p.name for p in Path(folder_path).iterdir() if p.name != CHECKPOINTS_DIR)
        self.calls.append(("upload_folder", repo_id, revision, files, ignore_patterns))


def test_push_to_hub_pushes_each_checkpoint_as_a_branch_named_by_its_step(trained_toy_model_dir, capsys):
    hub = FakeHub()
    push_folder(trained_toy_model_dir, "owner/name", api=hub)
    steps = index_of(trained_toy_model_dir)["steps"]
    assert hub.calls[0] == ("create_repo", "owner/name")
    assert hub.calls[1][:3] == ("upload_folder", "owner/name", None) and hub.calls[1][4] == ["checkpoints/*"]
    branches = [call[2] for call in hub.calls if call[0] == "create_branch"]
    assert branches == [f"step-{step}" for step in steps]
    uploads = [call for call in hub.calls[2:] if call[0] == "upload_folder"]
    assert [call[2] for call in uploads] == branches
    assert all({"config.json", "model.safetensors", "tokenizer.json"} <= set(call[3]) for call in uploads)
    assert "metrics.json" in uploads[-1][3]  # the final branch is the model folder itself
    assert "step-0" in capsys.readouterr().out
    assert push_checkpoints(trained_toy_model_dir.parent, "owner/x", api=FakeHub()) == []  # no checkpoints: none
