"""python -m transformer.evaluate and the TSV reader it shares with training."""

import json

import pytest
import torch

from transformer.data import read_tsv
from transformer.evaluate import accuracy, main, predict
from transformer.loading import load_model


def test_prints_one_json_line_per_file(trained_toy_model_dir, toy_data_dir, capsys):
    files = [toy_data_dir / "glue_dev.tsv", toy_data_dir / "sent_test.tsv"]
    returned = main(["--model", str(trained_toy_model_dir), "--data", *map(str, files), "--device", "cpu"])
    out, err = capsys.readouterr()
    lines = [json.loads(line) for line in out.splitlines()]
    assert lines == returned
    assert [set(line) for line in lines] == [{"data", "n", "accuracy"}] * 2
    assert [(line["data"], line["n"]) for line in lines] == [("glue_dev.tsv", 100), ("sent_test.tsv", 100)]
    metrics = json.loads((trained_toy_model_dir / "metrics.json").read_text())
    assert lines[0]["accuracy"] == pytest.approx(metrics["dev_accuracy"], abs=1e-4)
    assert lines[1]["accuracy"] == pytest.approx(metrics["test_accuracy"], abs=1e-4)
    assert "glue_dev.tsv:" in err and "true negative" in err and "true positive" in err


def test_batched_predictions_match_one_by_one(tiny_model_dir):
    loaded = load_model(tiny_model_dir, device="cpu")
    texts = ["it 's charming", "unflinchingly bleak and desperate", "a dull , simple-minded tale", "astounding"]
    predictions = predict(loaded.model, loaded.tokenizer, texts, batch_size=3)
    one_by_one = torch.cat([predict(loaded.model, loaded.tokenizer, [text]) for text in texts])
    assert torch.equal(predictions, one_by_one)
    assert accuracy(predictions, predictions.tolist()) == 1.0
    assert accuracy(predictions, (1 - predictions).tolist()) == 0.0


def test_predict_restores_training_mode(tiny_model_dir):
    loaded = load_model(tiny_model_dir, device="cpu")
    loaded.model.train()
    predict(loaded.model, loaded.tokenizer, ["it 's charming"])
    assert loaded.model.training


def test_missing_model_is_one_line_error(tmp_path):
    data = tmp_path / "d.tsv"
    data.write_text("sentence\tlabel\ngood\t1\n")
    with pytest.raises(SystemExit) as exit_info:
        main(["--model", str(tmp_path / "nope"), "--data", str(data)])
    assert "no such model folder" in str(exit_info.value.code) and "\n" not in str(exit_info.value.code)


def test_read_tsv_splits_on_the_last_tab_and_keeps_quotes(tmp_path):
    path = tmp_path / "quotes.tsv"
    path.write_text('sentence\tlabel\n"a ""quoted"" one\t1\nit \'s a\ttab inside \t0\n', encoding="utf-8")
    data = read_tsv(path)
    assert data.texts == ['"a ""quoted"" one', "it 's a\ttab inside "]
    assert data.labels == [1, 0]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("text\tlabel\ngood\t1\n", "header"),
        ("sentence\tlabel\ngood 1\n", ":2: no tab"),
        ("sentence\tlabel\ngood\t1\nbad\tneg\n", ":3: label 'neg'"),
        ("sentence\tlabel\n  \t1\n", ":2: empty sentence"),
        ("", "header"),
    ],
)
def test_read_tsv_names_the_bad_line(tmp_path, content, message):
    path = tmp_path / "bad.tsv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        read_tsv(path)
