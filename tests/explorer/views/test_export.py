"""The Export tab (transformer.explorer.views.export): ``/export`` and the tab's files parse back to the same
numbers."""

import csv
import io
import json
from pathlib import Path

import numpy as np
from app_fixtures import SENTENCE, decoded

from transformer.explorer import analysis, views


def test_export_endpoint_parses_back_to_the_same_numbers(app, result):
    answer = views.export.export(SENTENCE, layer=2, head="mean")
    exported = answer["analysis"]
    assert exported["tokens"] == result.tokens and exported["text"] == SENTENCE
    assert exported["attentions"]["shape"] == list(result.attentions.shape)
    assert np.array_equal(decoded(exported["attentions"]), result.attentions)  # exact
    assert np.array_equal(decoded(exported["value_norms"]), result.value_norms)
    assert exported["probabilities"] == result.probabilities
    rows = list(csv.reader(io.StringIO(answer["attention_csv"])))
    assert rows[0][1:] == [f"{i} {token}" for i, token in enumerate(result.tokens)]
    parsed = np.array([[float(value) for value in row[1:]] for row in rows[1:]], dtype=np.float32)
    assert np.array_equal(parsed, analysis.attention_matrix(result, 1, None))


def test_export_buttons_build_files_that_parse_back(app, result):
    json_path, csv_path = Path(views.export.build_json(result)), Path(views.export.build_csv(result, 2, "1"))
    assert json_path.name == "attention-explorer-analysis.json" and csv_path.name == "attention-layer2-head1.csv"
    exported = json.loads(json_path.read_text(encoding="utf-8"))
    assert np.array_equal(np.array(exported["attentions"], dtype=np.float32), result.attentions)
    rows = list(csv.reader(io.StringIO(csv_path.read_text(encoding="utf-8"))))
    parsed = np.array([[float(value) for value in row[1:]] for row in rows[1:]], dtype=np.float32)
    assert np.array_equal(parsed, result.attentions[1, 0])
    assert views.export.build_json(result) == str(json_path)  # same content, same file
    assert views.export.build_json(None) is views.export.build_csv(None, 2, "1") is None  # nothing analyzed


def test_the_tab_counts_one_token_in_words(model, tokenizer, result):
    """Issue 53: "all 1 tokens"."""
    one = analysis.analyze(model, tokenizer, "film")
    assert "holds its one token and" in views.export.show_export(one, 1, "1")
    assert f"holds all {len(result.tokens)} tokens and" in views.export.show_export(result, 1, "1")
