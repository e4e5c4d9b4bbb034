"""python -m transformer.train on a tiny toy mixture, in-process: learning, outputs, determinism, resume, failures."""

import json
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml
from conftest import SOURCES

from transformer.loading import load_model
from transformer.train import build_parser, main, parse_args
from transformer.training.data import bucketed_batches, read_labelled
from transformer.training.loop import Checkpoints, Schedule
from transformer.training.mixture import PAIRED_SOURCES, read_dev_sets, read_test_sets
from transformer.training.model_card import describe_probe, describe_recipe
from transformer.training.objectives import PairMargin
from transformer.training.pairing import PAIRING_SOURCES
from transformer.training.scoring import accuracy, predicted_classes

pytestmark = pytest.mark.slow  # many seconds: left out of make test-fast

REPO_ROOT = Path(__file__).resolve().parents[2]
EXPECTED_FILES = {"config.json", "model.safetensors", "tokenizer.json", "metrics.json", "README.md", "checkpoints"}
DEV_SETS = {"sst2", "yelp", "pros_cons", "tweets", "cad", "imdb", "ood"}
TEST_SETS = {"sst2", "imdb", "multi_domain", "everyday"}
# What a resumed run must reproduce exactly (the rest names the command line, paths and the time taken).
SAME_AFTER_RESUME = ["dev", "test", "best_epoch", "train_examples", "dev_rows", "test_rows", "pretrain_history",
                     "history", "teachers"]  # fmt: skip


def read_metrics(folder: Path) -> dict:
    return json.loads((folder / "metrics.json").read_text(encoding="utf-8"))


def measured_accuracies(folder: Path, data_dir: Path) -> tuple[dict, dict]:
    """Accuracy of the saved model on the selection and test sets of its run, recomputed from the files."""
    loaded = load_model(folder, device="cpu")
    arguments = loaded.metrics["arguments"]
    dev = read_dev_sets(data_dir, arguments["imdb_dev_rows"], Path(arguments["ood_file"]), arguments["max_rows"])
    test = read_test_sets(data_dir, arguments["max_rows"])
    test["everyday"] = read_labelled(arguments["check_file"]).rows(0, arguments["max_rows"])

    def score(sets: dict) -> dict:
        return {
            name: round(accuracy(predicted_classes(loaded.model, loaded.tokenizer, rows.texts), rows.labels), 4)
            for name, rows in sets.items()
        }

    return score(dev), score(test)


def test_toy_task_is_learned_and_loss_falls(trained_toy_model_dir):
    metrics = read_metrics(trained_toy_model_dir)
    losses = [epoch["train_loss"] for epoch in metrics["history"]]
    assert len(losses) == 3 and losses[0] > losses[1] > losses[2]
    assert metrics["history"][0]["dev"]["mean"] < metrics["dev"]["mean"]  # it learned during the run
    assert set(metrics["dev"]) == DEV_SETS | {"mean"} and set(metrics["test"]) == TEST_SETS
    assert metrics["dev"]["mean"] >= 0.9 and min(metrics["dev"].values()) >= 0.8
    assert min(metrics["test"].values()) >= 0.8
    best = max(metrics["history"], key=lambda epoch: epoch["dev"]["mean"])
    assert metrics["dev"] == best["dev"] and metrics["best_epoch"] == best["epoch"]
    dev_scores = [value for name, value in metrics["dev"].items() if name != "mean"]
    assert metrics["dev"]["mean"] == pytest.approx(sum(dev_scores) / len(dev_scores), abs=1e-4)


def test_writes_one_complete_folder_and_clears_its_checkpoints(trained_toy_model_dir):
    assert {path.name for path in trained_toy_model_dir.iterdir()} == EXPECTED_FILES
    # No staging folder left beside it, and the checkpoints are gone after a successful run.
    assert [path.name for path in trained_toy_model_dir.parent.iterdir()] == ["model"]
    metrics = read_metrics(trained_toy_model_dir)
    for key in ("dev", "test", "train_examples", "history", "pretrain_history", "teachers", "command", "seed",
                "arguments", "best_epoch", "train_seconds", "device", "dev_rows", "test_rows"):  # fmt: skip
        assert key in metrics, key
    assert metrics["command"].startswith("python -m transformer.train --data-dir ")
    assert metrics["seed"] == 0 and metrics["arguments"]["quick"] is True
    assert list(metrics["train_examples"]) == SOURCES
    # glue_train has 96 rows, cut to --quick's 64; the lexicon gives each word and "not <word>";
    # 24 IMDB training reviews (32 minus the 8 held out) become more examples once chunked.
    assert metrics["train_examples"]["sst2"] == 64 and metrics["train_examples"]["lexicon"] == 24
    assert metrics["train_examples"]["imdb"] > 24
    assert metrics["dev_rows"] == {
        "sst2": 24,
        "yelp": 24,
        "pros_cons": 24,
        "tweets": 24,
        "cad": 16,
        "imdb": 8,
        "ood": 16,
    }
    # The suite's figures for both parts, and the composition scores of the selection sets.
    assert set(metrics["behaviour"]) == {"selection", "test"} and "identity" in metrics["behaviour"]["test"]
    assert set(metrics["composition"]) == {"negation", "cad"} and "pooled" in metrics["composition"]["negation"]
    assert metrics["test_rows"] == {"sst2": 24, "imdb": 16, "multi_domain": 16, "everyday": 16}
    # The neutral dev sentences, by source, are read apart from the selection sets (no label to be right about).
    assert set(metrics["neutral"]) == {"sst5", "tweeteval"} and metrics["neutral"]["sst5"]["n"] == 4
    assert metrics["train_examples"]["neutral"] == 24 and metrics["train_examples"]["neutral_people"] == 64
    # The held-out probe, on both halves of the word lists.
    assert set(metrics["probe"]["identity"]) == {"training", "held_out"} and 0 <= metrics["probe"]["temporal"] <= 1
    assert len(metrics["pretrain_history"]) == 1 and metrics["pretrain_history"][0]["epoch"] == 1
    assert [teacher["seed"] for teacher in metrics["teachers"]] == [1]
    config = json.loads((trained_toy_model_dir / "config.json").read_text())
    assert config["label_names"] == ["negative", "positive"] and config["pad_token_id"] == 0
    assert (config["d_model"], config["num_layers"], config["max_len"]) == (32, 1, 32)
    assert config["embedding_scale"] is False and config["head_activation"] == "relu"  # written, not implied


def test_model_card_has_metadata_every_dataset_and_the_command(trained_toy_model_dir):
    card = (trained_toy_model_dir / "README.md").read_text()
    _, front_matter, body = card.split("---\n", 2)
    metadata = yaml.safe_load(front_matter)
    assert metadata["pipeline_tag"] == "text-classification"
    assert metadata["license"] and metadata["language"] and metadata["datasets"] and metadata["library_name"]
    metrics = read_metrics(trained_toy_model_dir)
    results = {
        (r["dataset"]["split"], r["dataset"]["type"]): r["metrics"][0]["value"]
        for r in metadata["model-index"][0]["results"]
    }
    expected = {("validation", k): v for k, v in metrics["dev"].items() if k != "mean"}
    assert results == expected | {("test", k): v for k, v in metrics["test"].items()}
    assert metrics["command"] in body and f"seed {metrics['seed']}" in body
    # Every data set the recipe reads has a row in the card: what it is, a licence, a citation with a year,
    # and the number of examples it gave.
    data_table = body.split("## Training data", 1)[1].split("\n## ", 1)[0]
    for source in SOURCES:
        rows = [line for line in data_table.splitlines() if line.startswith(f"| {source} |")]
        assert len(rows) == 1, source
        cells = [cell.strip() for cell in rows[0].strip("|").split("|")]
        assert len(cells) == 5 and all(cells), rows[0]
        assert re.search(r"\b(19|20)\d\d\b", cells[3]), f"{source}: no year in the citation {cells[3]!r}"
        assert cells[4] == f"{metrics['train_examples'][source]:,}"
    bias = body.split("## Bias, risks and limitations", 1)[1]
    assert "| negation |" in bias and "swaps that change the class" in bias
    typos = re.search(r"^\| typos \|(.*)\|$", bias, re.M).group(1).split("|")  # each invariance, per part
    parts = metrics["behaviour"].values()
    assert [cell.strip() for cell in typos] == [f"{part['tests']['robustness: typos']:.1%}" for part in parts]
    assert "unlabelled" in body.lower()


def test_saved_model_reproduces_the_recorded_accuracy(trained_toy_model_dir, toy_data_dir):
    metrics = read_metrics(trained_toy_model_dir)
    dev, test = measured_accuracies(trained_toy_model_dir, toy_data_dir)
    assert dev == {name: value for name, value in metrics["dev"].items() if name != "mean"}
    assert test == metrics["test"]


def test_max_rows_cuts_every_file_and_a_middling_model_still_reproduces_its_scores(
    toy_data_dir, toy_train_args, tmp_path
):
    output = tmp_path / "m"
    metrics = main([*toy_train_args, "--output-dir", str(output), "--max-rows", "6", "--epochs", "1"])
    assert metrics["train_examples"]["sst2"] == 6 and metrics["train_examples"]["lexicon"] == 12
    assert metrics["dev_rows"] == dict.fromkeys(DEV_SETS, 6) and len(metrics["history"]) == 1
    assert {name: metrics["test_rows"][name] for name in ("sst2", "imdb", "multi_domain")} == dict.fromkeys(
        ("sst2", "imdb", "multi_domain"), 6
    )
    # A model this undertrained scores far from 1.0, so matching its recorded scores means the saved weights
    # are the scored ones (the EMA of the best epoch), not merely some model that learned the task.
    dev, test = measured_accuracies(output, toy_data_dir)
    assert dev == {name: value for name, value in metrics["dev"].items() if name != "mean"} and test == metrics["test"]
    assert metrics["dev"]["mean"] < 0.9


def test_same_seed_same_model_and_output_is_replaced(trained_toy_model_dir, toy_train_args, tmp_path):
    output = tmp_path / "model"
    output.mkdir()
    (output / "stale.txt").write_text("from an older run")
    metrics = main([*toy_train_args, "--output-dir", str(output)])
    assert {path.name for path in output.iterdir()} == EXPECTED_FILES
    for name in ("model.safetensors", "tokenizer.json", "config.json"):
        assert (output / name).read_bytes() == (trained_toy_model_dir / name).read_bytes(), name
    recorded = read_metrics(trained_toy_model_dir)
    assert {key: metrics[key] for key in SAME_AFTER_RESUME} == {key: recorded[key] for key in SAME_AFTER_RESUME}
    assert sorted(path.name for path in tmp_path.iterdir()) == ["model"]  # no staging folder, no checkpoints


def test_another_process_writes_the_same_bytes(trained_toy_model_dir, toy_train_args, tmp_path):
    """``python -m transformer.train`` in a fresh interpreter, with another hash seed (so set and dict orders
    differ), writes the very files of the run made in this process."""
    hash_seed = "1" if os.environ.get("PYTHONHASHSEED") != "1" else "2"
    output = tmp_path / "model"
    # The same thread count as this process: the runs must differ only in the process and its hash seed.
    command = [sys.executable, "-m", "transformer.train", *toy_train_args, "--output-dir", str(output),
               "--threads", str(torch.get_num_threads())]  # fmt: skip
    env = {**os.environ, "PYTHONHASHSEED": hash_seed, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.splitlines()[-1])["dev"] == read_metrics(trained_toy_model_dir)["dev"]
    for name in ("model.safetensors", "tokenizer.json", "config.json"):
        assert (output / name).read_bytes() == (trained_toy_model_dir / name).read_bytes(), name
    recorded = read_metrics(trained_toy_model_dir)
    assert {key: read_metrics(output)[key] for key in SAME_AFTER_RESUME} == {k: recorded[k] for k in SAME_AFTER_RESUME}


class Interrupted(Exception):
    """Raised in place of a crash or Ctrl-C, right after a checkpoint was written."""


def interrupt_after_saving(monkeypatch, phase: str) -> None:
    """Make the next run stop right after it checkpoints ``phase`` for the first time."""
    save = Checkpoints.save

    def save_then_stop(self, name, state):
        save(self, name, state)
        if name == phase:
            raise Interrupted(name)

    monkeypatch.setattr(Checkpoints, "save", save_then_stop)


@pytest.mark.parametrize("phase", ["pretrain", "teacher-1", "student"])
def test_resume_ends_with_the_same_files_as_an_uninterrupted_run(
    trained_toy_model_dir, toy_train_args, tmp_path, monkeypatch, phase
):
    with monkeypatch.context() as patch:
        interrupt_after_saving(patch, phase)
        with pytest.raises(Interrupted):
            main([*toy_train_args, "--output-dir", str(tmp_path / "first")])
    checkpoints = tmp_path / "checkpoints"
    assert {"recipe.json", "tokenizer.json", f"{phase}.pt"} <= {path.name for path in checkpoints.iterdir()}
    assert not (tmp_path / "first").exists()
    # --output-dir and --threads may change on resume: they change neither the steps nor the result.
    output = tmp_path / "resumed"
    metrics = main([*toy_train_args, "--output-dir", str(output), "--threads", "1", "--resume"])
    for name in ("model.safetensors", "tokenizer.json", "config.json"):
        assert (output / name).read_bytes() == (trained_toy_model_dir / name).read_bytes(), name
    recorded = read_metrics(trained_toy_model_dir)
    assert {key: metrics[key] for key in SAME_AFTER_RESUME} == {key: recorded[key] for key in SAME_AFTER_RESUME}
    assert not checkpoints.exists()


def test_the_regularisers_on_the_command_line_reach_the_classifier_phases(toy_train_args, tmp_path, monkeypatch):
    # Distinct values, none the default, so a dropped or swapped argument shows; the run stops at the teachers.
    setups = []

    def stop_at_the_teachers(build, one_hot, setup, *rest):
        setups.append(setup)
        raise Interrupted("teachers")

    monkeypatch.setattr("transformer.train.teacher_targets", stop_at_the_teachers)
    flags = ["--label-smoothing", "0.25", "--word-dropout", "0.05", "--pretrain-epochs", "0", "--batch-size", "12",
             "--pair-weight", "0.4", "--pair-margin", "1.5", "--pairing-weight", "0.7"]  # fmt: skip
    with pytest.raises(Interrupted):
        main([*toy_train_args, *flags, "--output-dir", str(tmp_path / "m")])
    (setup,) = setups
    assert (setup.label_smoothing, setup.word_dropout, setup.batch_size, setup.seed) == (0.25, 0.05, 12, 0)
    assert setup.pairs == PairMargin(0.4, 1.5) and setup.pairing.weight == 0.7
    slotted = {setup.mixture.names[setup.mixture.sources[i]] for i, slot in enumerate(setup.pairing.slots) if slot}
    assert slotted and slotted <= set(PAIRING_SOURCES)
    # The toy CAD pairs and the negation pairs are linked both ways in the mixture; no other source has a partner.
    partners, names = setup.mixture.partners, setup.mixture.names
    linked = [i for i, partner in enumerate(partners) if partner >= 0]
    assert linked and all(partners[partners[i]] == i for i in linked)
    assert {names[setup.mixture.sources[i]] for i in linked} == set(PAIRED_SOURCES)
    assert all(setup.mixture.labels[i] != setup.mixture.labels[partners[i]] for i in linked)


def test_the_embedding_lr_scale_reaches_every_phases_schedule(toy_train_args, tmp_path, monkeypatch):
    schedules = {}

    def record(name: str, result=None):
        """A stand-in for a phase that keeps its schedule, then returns ``result(*args)`` or stops the run."""

        def phase(*args):
            schedules[name] = next(arg for arg in args if isinstance(arg, Schedule))
            if result is None:
                raise Interrupted(name)
            return result(*args)

        return phase

    monkeypatch.setattr("transformer.train.pretrain", record("pretrain", lambda *args: []))
    monkeypatch.setattr("transformer.train.teacher_targets", record("teachers", lambda _, labels, *rest: (labels, [])))
    monkeypatch.setattr("transformer.train.train_classifier", record("student"))
    with pytest.raises(Interrupted):
        main([*toy_train_args, "--output-dir", str(tmp_path / "m"), "--embedding-lr-scale", "3"])
    assert {name: schedule.embedding_lr_scale for name, schedule in schedules.items()} == {
        "pretrain": 3.0, "teachers": 3.0, "student": 3.0
    }  # fmt: skip
    assert (schedules["pretrain"].lr, schedules["pretrain"].ema_decay, schedules["student"].lr) == (1e-3, 0.0, 3e-3)
    assert (schedules["teachers"].epochs, schedules["student"].epochs) == (1, 3)


@pytest.mark.parametrize("scale", ["0", "-2"])
def test_a_non_positive_embedding_lr_scale_is_a_usage_error(scale, capsys):
    with pytest.raises(SystemExit) as exit_info:
        parse_args(["--embedding-lr-scale", scale])
    assert exit_info.value.code == 2 and "--embedding-lr-scale" in capsys.readouterr().err


@pytest.mark.parametrize("flag", ["--pair-weight", "--pair-margin", "--pairing-weight"])
def test_a_negative_pair_setting_is_a_usage_error(flag, capsys):
    with pytest.raises(SystemExit) as exit_info:
        parse_args([flag, "-1"])
    error = capsys.readouterr().err
    assert exit_info.value.code == 2 and flag in error and "must be 0 or more" in error


def test_the_card_names_the_pair_hinge_only_when_it_is_on(trained_toy_model_dir):
    metrics = read_metrics(trained_toy_model_dir)
    assert metrics["arguments"]["pair_weight"] == 0.0 and "hinge" not in describe_recipe(metrics)
    metrics["arguments"].update(pair_weight=0.5, pair_margin=2.0)
    assert "each clause and its negation when drawn (weight 0.5)" in describe_recipe(metrics)
    assert "outscore its twin by 2 logits" in describe_recipe(metrics)


def test_the_card_names_counterfactual_pairing_only_when_it_is_on(trained_toy_model_dir):
    metrics = read_metrics(trained_toy_model_dir)
    assert metrics["arguments"]["pairing_weight"] == 0.0 and "pairing" not in describe_recipe(metrics)
    metrics["arguments"]["pairing_weight"] = 0.5
    assert "counterfactual logit pairing (weight 0.5)" in describe_recipe(metrics)


def test_the_card_reports_the_held_out_probe_of_the_run(trained_toy_model_dir):
    """Issue 51: the card says what is still wrong on words the training never named, from metrics.json's probe."""
    metrics = read_metrics(trained_toy_model_dir)
    probe, card = metrics["probe"], (trained_toy_model_dir / "README.md").read_text()
    for half, label in (("training", "training half"), ("held_out", "held-out half")):
        figures = probe["identity"][half]
        assert (
            f"| {label} | {figures['terms']} | {figures['median_spread']:.3f} | {figures['clear_opinion']:.1%} |"
            in card
        )
    outside = sum(not 0.35 <= mean <= 0.65 for mean in probe["frame_means"].values())
    assert f"[0.35, 0.65]: {outside} of {len(probe['frame_means'])}" in card and "trained before the split" not in card
    probe["frame_means"] = dict.fromkeys(probe["frame_means"], 0.5) | {"My dentist is {term}.": 0.349}  # a boundary
    assert '[0.35, 0.65]: 1 of 8: "My dentist is {term}." 0.349.' in describe_probe(metrics)
    metrics["probe"]["trained_before_the_split"] = True
    assert "trained before the split" in describe_probe(metrics)
    assert describe_probe({key: value for key, value in metrics.items() if key != "probe"}) == ""


def test_the_card_names_an_embedding_lr_scale_only_when_it_is_not_one(trained_toy_model_dir):
    metrics = read_metrics(trained_toy_model_dir)
    assert metrics["arguments"]["embedding_lr_scale"] == 11.0  # recorded like every flag; the default
    assert "the token embedding table at 11 × the learning rate and weight decay / 11" in describe_recipe(metrics)
    metrics["arguments"]["embedding_lr_scale"] = 1.0
    recipe = describe_recipe(metrics)
    assert "embedding table" not in recipe
    del metrics["arguments"]["embedding_lr_scale"]  # a metrics.json from before the flag
    assert describe_recipe(metrics) == recipe


def test_resume_refuses_a_changed_recipe(toy_train_args, tmp_path, monkeypatch):
    with monkeypatch.context() as patch:
        interrupt_after_saving(patch, "pretrain")
        with pytest.raises(Interrupted):
            main([*toy_train_args, "--output-dir", str(tmp_path / "m")])
    with pytest.raises(SystemExit) as exit_info:
        changed = ["--epochs", "4", "--lr", "0.02", "--embedding-lr-scale", "2"]
        main([*toy_train_args, "--output-dir", str(tmp_path / "m"), "--resume", *changed])
    message = str(exit_info.value.code)
    assert message.startswith("error: --resume:") and "\n" not in message
    assert message.split("other settings: ")[1].split(", ") == ["embedding_lr_scale", "epochs", "lr"]
    assert (tmp_path / "checkpoints" / "pretrain.pt").exists()  # the refused resume left the state as it was
    assert not (tmp_path / "m").exists()


def test_resume_without_a_checkpoint_exits_clearly(toy_train_args, tmp_path):
    with pytest.raises(SystemExit) as exit_info:
        main([*toy_train_args, "--output-dir", str(tmp_path / "m"), "--resume"])
    message = str(exit_info.value.code)
    assert message.startswith("error: --resume:") and str(tmp_path / "checkpoints") in message and "\n" not in message
    assert not (tmp_path / "m").exists()


def test_distillation_trains_teachers_first_and_learns_from_them(toy_train_args, tmp_path):
    args = [*toy_train_args, "--output-dir", str(tmp_path / "m")]
    metrics = main([*args, "--teachers", "2", "--teacher-epochs", "2", "--distill-weight", "0.7"])
    assert [teacher["seed"] for teacher in metrics["teachers"]] == [1, 2]
    assert all([epoch["epoch"] for epoch in teacher["history"]] == [1, 2] for teacher in metrics["teachers"])
    assert all("dev" in epoch for teacher in metrics["teachers"] for epoch in teacher["history"])
    assert metrics["teachers"][0]["history"] != metrics["teachers"][1]["history"]  # two seeds, two models
    assert metrics["dev"]["mean"] >= 0.9
    assert "2 teacher classifiers" in (tmp_path / "m" / "README.md").read_text()


def test_push_to_hub_offline_fails_in_one_line_before_training(toy_train_args, tmp_path, monkeypatch):
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", True)
    monkeypatch.setenv("HF_TOKEN", "hf_not_a_real_token")
    output = tmp_path / "model"
    with pytest.raises(SystemExit) as exit_info:
        main([*toy_train_args, "--output-dir", str(output), "--push-to-hub", "owner/name"])
    message = str(exit_info.value.code)
    assert message.startswith("error: cannot push to owner/name") and "\n" not in message
    assert not output.exists() and not (tmp_path / "checkpoints").exists()


def test_missing_data_dir_fails_in_one_line_before_writing(tmp_path):
    args = ["--output-dir", str(tmp_path / "m"), "--checkpoint-dir", str(tmp_path / "checkpoints")]
    with pytest.raises(SystemExit) as exit_info:
        main(["--data-dir", str(tmp_path / "no-data"), *args])
    message = str(exit_info.value.code)
    assert message.startswith("error: ") and "no-data/sst2/glue_train.tsv" in message and "\n" not in message
    assert not (tmp_path / "m").exists() and not (tmp_path / "checkpoints").exists()


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("lexicons/opinion_lexicon.tsv", None),
        ("imdb/unsup.txt.gz", None),
        ("multi_domain/test.tsv.gz", None),
        ("tweets/dev.tsv.gz", b"not gzip at all"),
        ("imdb/unsup.txt.gz", b"not gzip at all"),
        ("lexicons/opinion_lexicon.tsv", b"word\tlabel\ngood\t1\nbad\n"),
        ("lexicons/opinion_lexicon.tsv", b"word\tlabel\ngood\tpositive\n"),
        ("lexicons/opinion_lexicon.tsv", b"word\tlabel\ngood\t2\n"),
    ],
    ids=[
        "no-lexicon",
        "no-unsup",
        "no-test-file",
        "corrupt-gzip",
        "corrupt-unsup",
        "lexicon-no-tab",
        "lexicon-word",
        "lexicon-2",
    ],
)
def test_a_missing_or_broken_file_is_named_in_one_line(toy_data_dir, toy_train_args, tmp_path, name, content):
    data = Path(shutil.copytree(toy_data_dir, tmp_path / "data"))
    if content is None:
        (data / name).unlink()
    else:
        (data / name).write_bytes(content)
    with pytest.raises(SystemExit) as exit_info:
        main([*toy_train_args, "--data-dir", str(data), "--output-dir", str(tmp_path / "m")])
    message = str(exit_info.value.code)
    assert message.startswith("error: ") and name in message and "\n" not in message
    assert not (tmp_path / "m").exists() and not (tmp_path / "checkpoints").exists()


def test_flags_are_kebab_case_with_help_and_quick_only_changes_defaults():
    parser = build_parser()
    for action in parser._actions:
        for flag in action.option_strings:
            assert flag == flag.lower() and "_" not in flag
        assert action.help
    assert parser.parse_args([]).data_dir == Path("../shared/data")
    full, quick = parse_args([]), parse_args(["--quick"])
    assert (full.d_model, full.max_rows, full.teachers) == (128, None, 0)
    assert (quick.d_model, quick.max_rows, quick.teachers) == (32, 64, 1)
    overridden = parse_args(["--quick", "--d-model", "48", "--max-rows", "5"])
    assert (overridden.d_model, overridden.max_rows, overridden.num_layers) == (48, 5, 1)
    assert parse_args(["--source-weights", "sst2=2", "tweets=0"]).weights == {"sst2": 2.0, "tweets": 0.0}


@pytest.mark.parametrize("pair", ["sst2", "sst2=", "sst2=many", "sst2=-1"])
def test_a_malformed_source_weight_is_a_usage_error(pair, capsys):
    with pytest.raises(SystemExit) as exit_info:
        parse_args(["--source-weights", pair])
    assert exit_info.value.code == 2 and repr(pair) in capsys.readouterr().err


def test_an_unknown_source_name_is_refused_before_training(toy_train_args, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([*toy_train_args, "--output-dir", str(tmp_path / "m"), "--source-weights", "sst2=1", "sst3=2"])
    code = exit_info.value.code  # a usage error (exit 2, message on stderr) or an "error: ..." line
    message = capsys.readouterr().err if isinstance(code, int) else str(code)
    assert code != 0 and "sst3" in message
    assert not (tmp_path / "checkpoints" / "pretrain.pt").exists()  # refused before any training


def test_bucketed_batches_cover_every_row_once_in_similar_lengths():
    lengths = [random.Random(i).randint(1, 60) for i in range(1000)]
    batches = bucketed_batches(lengths, batch_size=32, rng=random.Random(0))
    assert sorted(i for batch in batches for i in batch) == list(range(1000))
    assert all(len(batch) <= 32 for batch in batches)
    spread = sum(max(lengths[i] for i in b) - min(lengths[i] for i in b) for b in batches) / len(batches)
    assert spread < 10  # random batches of 32 would span about 55
    assert batches == bucketed_batches(lengths, batch_size=32, rng=random.Random(0))
