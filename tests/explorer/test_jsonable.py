"""JSON and CSV exports parse back to the same numbers."""

import csv
import io
import json

import numpy as np
import pytest
import torch

from transformer.explain import HeadImportance
from transformer.explorer.jsonable import analysis_to_json, attention_to_csv, to_jsonable


def test_analysis_json_round_trips_tensors_and_dataclasses():
    torch.manual_seed(0)
    rollout = torch.rand(2, 3, 3)
    importance = HeadImportance(target=1, base_prob=0.75, ablated_prob=torch.rand(2, 2), drop=torch.rand(2, 2))
    analysis = {
        "sentence": 'a "quoted" <b>sentence</b> — ünïcode',
        "tokens": ["a", "<b>", "sentence"],
        "rollout": rollout,
        "importance": importance,
        "pairs": [(0, 1), (2, 2)],
        "counts": np.arange(3),
        3: "non-string key",
    }
    parsed = json.loads(analysis_to_json(analysis))
    assert parsed["sentence"] == analysis["sentence"]
    assert parsed["tokens"] == analysis["tokens"]
    assert torch.equal(torch.tensor(parsed["rollout"], dtype=torch.float32), rollout)  # exact, not close
    assert parsed["importance"]["target"] == 1
    assert torch.equal(torch.tensor(parsed["importance"]["drop"], dtype=torch.float32), importance.drop)
    assert parsed["pairs"] == [[0, 1], [2, 2]]
    assert parsed["counts"] == [0, 1, 2]
    assert parsed["3"] == "non-string key"


def test_non_finite_numbers_become_null():
    text = analysis_to_json({"rho": torch.tensor([[1.0, float("nan")]]), "error": float("inf")})
    assert "NaN" not in text and "Infinity" not in text
    assert json.loads(text) == {"rho": [[1.0, None]], "error": None}
    assert to_jsonable(np.float32(0.5)) == 0.5
    rounded = to_jsonable({"w": torch.tensor([[0.12280000001, float("-inf")]]), "n": np.float32("nan")}, decimals=4)
    assert json.dumps(rounded) == '{"w": [[0.1228, null]], "n": null}'  # rounded in float64, non-finite null


def test_attention_csv_parses_back_to_the_same_numbers():
    torch.manual_seed(1)
    matrix = torch.rand(4, 4).softmax(dim=-1)
    tokens = ["the", 'say "hi"', "a, b", "the"]
    rows = list(csv.reader(io.StringIO(attention_to_csv(matrix, tokens))))
    labels = ["0 the", '1 say "hi"', "2 a, b", "3 the"]  # the two "the" stay apart
    assert rows[0] == ["query \\ key", *labels]
    assert [row[0] for row in rows[1:]] == labels
    parsed = torch.tensor([[float(value) for value in row[1:]] for row in rows[1:]], dtype=torch.float32)
    assert torch.equal(parsed, matrix)


def test_attention_csv_defuses_formulas_and_checks_its_shape():
    rows = list(csv.reader(io.StringIO(attention_to_csv(torch.eye(2), ["=1+1", "@cmd"]))))
    assert rows[0][1:] == ["0 =1+1", "1 @cmd"]  # a label starts with its position, never a formula
    rectangular = attention_to_csv(torch.ones(1, 2), ["good"], key_tokens=["not", "good"])
    assert rectangular.splitlines()[0] == "query \\ key,0 not,1 good"
    with pytest.raises(ValueError, match="does not match"):
        attention_to_csv(torch.eye(3), ["a", "b"])
