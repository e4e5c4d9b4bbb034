"""python -m transformer.evaluate, and the scoring it shares with training (long reviews read in chunks)."""

import gzip
import json

import pytest
import torch

from transformer.evaluate import confusion_summary, main
from transformer.loading import load_model
from transformer.training.data import read_labelled
from transformer.training.mixture import chunk
from transformer.training.scoring import (
    accuracy,
    predicted_classes,
    score_sets,
    text_probabilities,
    window_probabilities,
)

pytestmark = pytest.mark.slow  # many seconds: left out of make test-fast


def test_a_paired_file_gets_the_originals_the_edits_and_pair_consistency(trained_toy_model_dir, toy_data_dir, capsys):
    (line,) = main(["--model", str(trained_toy_model_dir), "--data", str(toy_data_dir / "cad" / "dev.tsv.gz")])
    assert line["n"] == 16 and {"originals", "edits", "pair_consistency"} <= set(line)
    assert line["pair_consistency"] <= min(line["originals"], line["edits"])
    assert line["accuracy"] == pytest.approx((line["originals"] + line["edits"]) / 2)


def test_prints_one_json_line_per_file_with_the_training_run_scores(trained_toy_model_dir, toy_data_dir, capsys):
    files = [
        toy_data_dir / "sst2" / "glue_dev.tsv",  # sentence header
        toy_data_dir / "yelp" / "dev.tsv.gz",  # gzip, text header
        toy_data_dir / "multi_domain" / "test.tsv.gz",  # a domain column, reviews longer than max_len
        toy_data_dir / "imdb" / "test.tsv.gz",
        toy_data_dir / "everyday.tsv",
    ]
    returned = main(["--model", str(trained_toy_model_dir), "--data", *map(str, files), "--device", "cpu"])
    out, err = capsys.readouterr()
    lines = [json.loads(line) for line in out.splitlines()]
    assert lines == returned
    assert [set(line) for line in lines] == [{"data", "n", "accuracy", "negation"}] * 5
    assert all(set(line["negation"]) == {"n", "accuracy", "positives", "positive_accuracy"} for line in lines)
    assert [(line["data"], line["n"]) for line in lines] == [
        ("glue_dev.tsv", 24), ("yelp/dev.tsv.gz", 24), ("multi_domain/test.tsv.gz", 16), ("imdb/test.tsv.gz", 16),
        ("everyday.tsv", 16),
    ]  # fmt: skip
    metrics = json.loads((trained_toy_model_dir / "metrics.json").read_text())
    recorded = [metrics["dev"]["sst2"], metrics["dev"]["yelp"], metrics["test"]["multi_domain"],
                metrics["test"]["imdb"], metrics["test"]["everyday"]]  # fmt: skip
    assert [line["accuracy"] for line in lines] == pytest.approx(recorded, abs=1e-4)
    assert "yelp/dev.tsv.gz:" in err and "true negative" in err and "true positive" in err


def test_evaluate_scores_like_training_on_a_middling_model(tiny_model_dir, toy_data_dir, capsys):
    # An untrained model: its accuracy is far from 1.0, so agreeing with score_sets means the same chunks
    # and the same averaging, not merely two right answers.
    loaded = load_model(tiny_model_dir, device="cpu")
    sets = {name: read_labelled(toy_data_dir / name / "test.tsv.gz") for name in ("imdb", "multi_domain")}
    scores = score_sets(loaded.model, loaded.tokenizer, sets)
    lines = main(["--model", str(tiny_model_dir), "--data", *(str(rows.path) for rows in sets.values())])
    capsys.readouterr()
    assert [line["accuracy"] for line in lines] == pytest.approx([scores["imdb"], scores["multi_domain"]], abs=1e-4)
    assert scores["mean"] == pytest.approx((scores["imdb"] + scores["multi_domain"]) / 2, abs=1e-4)
    assert 0.0 < scores["mean"] < 0.9


def test_the_confusion_summary_counts_each_true_class_by_its_predictions():
    # Rows of the confusion matrix [[1, 2, 0], [0, 1, 0], [1, 0, 0]]: not symmetric, so a transpose shows.
    labels = [0, 0, 0, 1, 2]
    predictions = torch.tensor([0, 1, 1, 1, 0])
    assert confusion_summary("set.tsv", predictions, labels, ["neg", "neu", "pos"]).splitlines() == [
        "set.tsv:",
        "  true neg (3): predicted 1 neg, 2 neu, 0 pos",
        "  true neu (1): predicted 0 neg, 1 neu, 0 pos",
        "  true pos (1): predicted 1 neg, 0 neu, 0 pos",
    ]


def test_a_long_text_gets_the_mean_of_its_chunks(tiny_model_dir):
    loaded = load_model(tiny_model_dir, device="cpu")
    model, tokenizer = loaded.model, loaded.tokenizer
    long_text = " ".join(["it 's a charming and often affecting journey ."] * 20)
    short_text = "unflinchingly bleak and desperate"
    ids = tokenizer.encode(long_text, add_special_tokens=False).ids
    windows = chunk(ids, model.max_len)
    assert len(windows) >= 3
    probabilities = text_probabilities(model, tokenizer, [short_text, long_text])
    torch.testing.assert_close(probabilities[1], window_probabilities(model, windows).mean(dim=0))
    short_ids = tokenizer.encode(short_text, add_special_tokens=False).ids
    torch.testing.assert_close(probabilities[0], window_probabilities(model, [short_ids])[0])
    assert not torch.allclose(probabilities[1], window_probabilities(model, windows[:1])[0])  # not the first only


def test_batched_predictions_match_one_by_one(tiny_model_dir):
    loaded = load_model(tiny_model_dir, device="cpu")
    texts = ["it 's charming", "unflinchingly bleak and desperate", "a dull , simple-minded tale", "astounding"]
    predictions = predicted_classes(loaded.model, loaded.tokenizer, texts, batch_size=3)
    one_by_one = torch.cat([predicted_classes(loaded.model, loaded.tokenizer, [text]) for text in texts])
    assert torch.equal(predictions, one_by_one)
    assert accuracy(predictions, predictions.tolist()) == 1.0
    assert accuracy(predictions, (1 - predictions).tolist()) == 0.0


def test_predict_restores_training_mode_and_refuses_empty_text(tiny_model_dir):
    loaded = load_model(tiny_model_dir, device="cpu")
    loaded.model.train()
    predicted_classes(loaded.model, loaded.tokenizer, ["it 's charming"])
    assert loaded.model.training
    with pytest.raises(ValueError, match="encodes to no tokens"):
        predicted_classes(loaded.model, loaded.tokenizer, ["fine", "   "])


def test_missing_model_is_one_line_error(tmp_path):
    data = tmp_path / "d.tsv"
    data.write_text("sentence\tlabel\ngood\t1\n")
    with pytest.raises(SystemExit) as exit_info:
        main(["--model", str(tmp_path / "nope"), "--data", str(data)])
    assert "no such model folder" in str(exit_info.value.code) and "\n" not in str(exit_info.value.code)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("missing.tsv", None, "missing.tsv"),
        ("bad-header.tsv.gz", gzip.compress(b"review\tlabel\ngood\t1\n", mtime=0), "header"),
        ("not-gzip.tsv.gz", b"text\tlabel\ngood\t1\n", "cannot be read"),
        ("bad-label.tsv", b"text\tlabel\ngood\t1\nbad\tneg\n", ":3: label 'neg'"),
    ],
)
def test_a_bad_data_file_is_a_one_line_error_naming_it(tiny_model_dir, tmp_path, capsys, name, content, message):
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(SystemExit) as exit_info:
        main(["--model", str(tiny_model_dir), "--data", str(path)])
    text = str(exit_info.value.code)
    assert text.startswith("error: ") and message in text and name in text and "\n" not in text


def test_read_labelled_splits_on_the_last_tabs_and_keeps_quotes(tmp_path):
    path = tmp_path / "quotes.tsv"
    path.write_text('sentence\tlabel\n"a ""quoted"" one\t1\nit \'s a\ttab inside \t0\n', encoding="utf-8")
    data = read_labelled(path)
    assert data.texts == ['"a ""quoted"" one', "it 's a\ttab inside "]
    assert data.labels == [1, 0]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("label\tsentence\n1\tgood\n", "header"),
        ("sentence\tlabel\ngood 1\n", ":2: expected 2 tab-separated columns"),
        ("sentence\tlabel\ngood\t1\nbad\tneg\n", ":3: label 'neg'"),
        ("text\tlabel\n  \t1\n", ":2: empty text"),
        ("", "header"),
    ],
)
def test_read_labelled_names_the_bad_line(tmp_path, content, message):
    path = tmp_path / "bad.tsv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        read_labelled(path)
