"""python -m transformer.train on a tiny toy task, run in-process: learning, outputs, determinism, failures."""

import json
import random

import pytest
import torch
import yaml

from transformer.data import bucketed_batches, read_tsv
from transformer.evaluate import accuracy, predict
from transformer.loading import load_model
from transformer.train import build_parser, distillation_targets, main

EXPECTED_FILES = {"config.json", "model.safetensors", "tokenizer.json", "metrics.json", "README.md"}


def test_toy_task_is_learned_and_loss_falls(trained_toy_model_dir):
    metrics = json.loads((trained_toy_model_dir / "metrics.json").read_text())
    losses = [epoch["train_loss"] for epoch in metrics["history"]]
    assert len(losses) == 4 and losses[-1] < 0.5 * losses[0]
    assert metrics["dev_accuracy"] >= 0.95 and metrics["test_accuracy"] >= 0.95
    assert metrics["dev_accuracy"] == max(epoch["dev_accuracy"] for epoch in metrics["history"])


def test_writes_one_complete_folder(trained_toy_model_dir):
    assert {path.name for path in trained_toy_model_dir.iterdir()} == EXPECTED_FILES
    assert not [path for path in trained_toy_model_dir.parent.iterdir() if path.name.startswith(".")]
    metrics = json.loads((trained_toy_model_dir / "metrics.json").read_text())
    for key in ("dev_accuracy", "test_accuracy", "train_seconds", "device", "command", "seed", "data"):
        assert key in metrics
    assert metrics["command"].startswith("python -m transformer.train --data-dir ")
    assert metrics["seed"] == 0 and metrics["data"]["train"] == "glue_train.tsv"
    config = json.loads((trained_toy_model_dir / "config.json").read_text())
    assert config["label_names"] == ["negative", "positive"] and config["pad_token_id"] == 0
    assert (config["d_model"], config["num_layers"], config["max_len"]) == (32, 1, 32)


def test_model_card_has_metadata_and_the_command(trained_toy_model_dir):
    card = (trained_toy_model_dir / "README.md").read_text()
    _, front_matter, body = card.split("---\n", 2)
    metadata = yaml.safe_load(front_matter)
    assert metadata["pipeline_tag"] == "text-classification"
    assert metadata["license"] and metadata["language"] and metadata["datasets"] and metadata["library_name"]
    metrics = json.loads((trained_toy_model_dir / "metrics.json").read_text())
    results = metadata["model-index"][0]["results"]
    assert [r["metrics"][0]["value"] for r in results] == [metrics["dev_accuracy"], metrics["test_accuracy"]]
    assert metrics["command"] in body and f"seed {metrics['seed']}" in body


def test_saved_model_reproduces_the_recorded_accuracy(trained_toy_model_dir, toy_data_dir):
    loaded = load_model(trained_toy_model_dir, device="cpu")
    dev = read_tsv(toy_data_dir / "glue_dev.tsv")
    assert accuracy(predict(loaded.model, loaded.tokenizer, dev.texts), dev.labels) == pytest.approx(
        loaded.metrics["dev_accuracy"], abs=1e-4
    )


def test_same_seed_same_model_and_output_is_replaced(trained_toy_model_dir, toy_data_dir, toy_train_args, tmp_path):
    output = tmp_path / "model"
    output.mkdir()
    (output / "stale.txt").write_text("from an older run")
    metrics = main(["--data-dir", str(toy_data_dir), "--output-dir", str(output), *toy_train_args])
    assert {path.name for path in output.iterdir()} == EXPECTED_FILES
    assert (output / "model.safetensors").read_bytes() == (trained_toy_model_dir / "model.safetensors").read_bytes()
    assert metrics["history"] == json.loads((trained_toy_model_dir / "metrics.json").read_text())["history"]
    assert [path.name for path in tmp_path.iterdir()] == ["model"]


def test_max_train_rows_limits_the_training_set(toy_data_dir, toy_train_args, tmp_path):
    args = ["--data-dir", str(toy_data_dir), "--output-dir", str(tmp_path / "m"), *toy_train_args]
    metrics = main([*args, "--max-train-rows", "50", "--epochs", "1"])
    assert metrics["train_rows"] == 50 and len(metrics["history"]) == 1


def test_push_to_hub_offline_fails_in_one_line_before_training(toy_data_dir, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", True)
    monkeypatch.setenv("HF_TOKEN", "hf_not_a_real_token")
    output = tmp_path / "model"
    with pytest.raises(SystemExit) as exit_info:
        main(["--data-dir", str(toy_data_dir), "--output-dir", str(output), "--push-to-hub", "owner/name"])
    message = str(exit_info.value.code)
    assert message.startswith("error: cannot push to owner/name") and "\n" not in message
    assert not output.exists()


def test_missing_data_dir_fails_in_one_line_before_writing(tmp_path):
    with pytest.raises(SystemExit) as exit_info:
        main(["--data-dir", str(tmp_path / "no-data"), "--output-dir", str(tmp_path / "m")])
    assert "no-data/glue_train.tsv" in str(exit_info.value.code) and "\n" not in str(exit_info.value.code)
    assert not (tmp_path / "m").exists()


def test_flags_are_kebab_case_with_help():
    parser = build_parser()
    for action in parser._actions:
        for flag in action.option_strings:
            assert flag == flag.lower() and "_" not in flag
        assert action.help
    assert parser.parse_args([]).data_dir.name == "sst2"


def test_bucketed_batches_cover_every_row_once_in_similar_lengths():
    lengths = [random.Random(i).randint(1, 60) for i in range(1000)]
    batches = bucketed_batches(lengths, batch_size=32, rng=random.Random(0))
    assert sorted(i for batch in batches for i in batch) == list(range(1000))
    assert all(len(batch) <= 32 for batch in batches)
    spread = sum(max(lengths[i] for i in b) - min(lengths[i] for i in b) for b in batches) / len(batches)
    assert spread < 10  # random batches of 32 would span about 55
    assert batches == bucketed_batches(lengths, batch_size=32, rng=random.Random(0))


def test_distillation_trains_teachers_first_and_learns_from_them(toy_data_dir, toy_train_args, tmp_path):
    args = ["--data-dir", str(toy_data_dir), "--output-dir", str(tmp_path / "m"), *toy_train_args]
    metrics = main([*args, "--teachers", "2", "--teacher-epochs", "2", "--distill-weight", "0.7"])
    assert [teacher["seed"] for teacher in metrics["teachers"]] == [1, 2]
    assert all(len(teacher["history"]) == 2 for teacher in metrics["teachers"])
    assert metrics["dev_accuracy"] >= 0.95


def test_distillation_targets_mix_labels_and_the_teachers_mean(toy_data_dir, toy_train_args, tiny_tokenizer):
    args = build_parser().parse_args([*toy_train_args, "--teachers", "1", "--teacher-epochs", "1"])
    dev = read_tsv(toy_data_dir / "glue_dev.tsv")
    sequences = [tiny_tokenizer.encode(text).ids for text in dev.texts]
    targets, teachers = distillation_targets(args, tiny_tokenizer, sequences, dev.labels, dev, torch.device("cpu"))
    assert targets.shape == (100, 2) and torch.allclose(targets.sum(dim=1), torch.ones(100))
    true_class = targets[torch.arange(100), torch.tensor(dev.labels)]
    assert (true_class >= 1 - args.distill_weight).all() and (true_class < 1).any()
    assert len(teachers) == 1 and teachers[0]["seed"] == args.seed + 1
