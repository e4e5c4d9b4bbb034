"""The views' numbers and panels without the app: controls checked, CPU tensors, panels, address, export files."""

import dataclasses
import json
import os
import time

import numpy as np
import pytest
import torch
from app_fixtures import MARKUP

from transformer.explorer import analysis, inputs
from transformer.explorer import inputs as readers
from transformer.explorer.analysis import InputError
from transformer.explorer.drawing.colour import excluded_positions
from transformer.explorer.jsonable import to_jsonable
from transformer.explorer.serving.export_files import write_export
from transformer.explorer.views import (
    attributions,
    compare,
    export,
    inside_head,
    knockout,
    perturb,
    rollout,
    word_order,
)

SENTENCE = "a wonderful film , the acting was dull"


@pytest.fixture(scope="module")
def result(model, tokenizer):
    return analysis.analyze(model, tokenizer, SENTENCE)


@pytest.mark.parametrize("value", [1, 2, "2", 2.0, " 1 "])
def test_whole_number_accepts_whole_numbers_in_range(value):
    assert inputs.whole_number(value, "Layer", 1, 2) == int(float(value))


@pytest.mark.parametrize("value", [0, 3, 1.5, "1.5", "x", None, "", [1]])
def test_whole_number_names_the_control_and_its_range(value):
    with pytest.raises(InputError, match=r"^Layer must be a whole number from 1 to 2; got "):
        inputs.whole_number(value, "Layer", 1, 2)


def test_head_names_round_trip():
    labels = inputs.head_labels(2, 3)
    assert labels == ["L1 H1", "L1 H2", "L1 H3", "L2 H1", "L2 H2", "L2 H3"]
    # Case, spaces and a repeat: six names (the most a 2 × 3 model takes) for five heads, sorted.
    assert inputs.parse_heads([*labels[:1:-1], "l2h3", " l1  H1 "], 2, 3) == [(0, 0), (0, 2), (1, 0), (1, 1), (1, 2)]
    assert inputs.parse_heads([], 2, 3) == []


class _Unread(list):
    """A list that fails the test if anything reads its entries (its length is fine)."""

    def __iter__(self):
        raise AssertionError("the entries were read")

    def __getitem__(self, index):
        raise AssertionError("the entries were read")


def test_a_head_list_longer_than_the_model_has_heads_is_refused_unread():
    with pytest.raises(InputError, match=r"^Name at most 6 heads \(the model has 6\); got 1,000,000 names\.$"):
        inputs.parse_heads(_Unread(["L1 H1"] * 10**6), 2, 3)
    with pytest.raises(InputError, match="at most 6 heads"):
        inputs.parse_heads([*inputs.head_labels(2, 3), "L1 H1"], 2, 3)  # every name valid, one too many
    assert inputs.parse_heads(["L2 H3"] * 6, 2, 3) == [(1, 2)]  # as many as the model has heads: parsed


def test_class_index_defaults_to_the_prediction(result):
    predicted = int(np.argmax(result.probabilities))
    assert inputs.class_index(None, result) == inputs.class_index("predicted", result) == predicted
    assert inputs.class_index("positive", result) == 1


def test_views_hold_cpu_tensors_and_serialise_to_strict_json(model, tokenizer, result):
    views = [
        rollout.rollout_view(result),
        attributions.attribution_view(model, tokenizer, result, "negative", 8, "zero"),
        inside_head.head_view(model, tokenizer, result, 2, 2),
        knockout.knockout_view(model, tokenizer, result, ["L2 H2"]),
        knockout.importance_view(model, tokenizer, result),
        perturb.perturbation_view(model, tokenizer, result, 0, "mask"),
        word_order.word_order_view(model, tokenizer, result, seed=5),
        compare.compare_view(result, result, 1, 1),
    ]
    for view in views:
        payload = to_jsonable(view, 6)
        json.dumps(payload, allow_nan=False)
        tensors = [value for value in vars(view).values() if isinstance(value, torch.Tensor)]
        assert all(tensor.device.type == "cpu" for tensor in tensors)


def test_rollout_view_pools_by_column_means(result):
    view = rollout.rollout_view(result)
    torch.testing.assert_close(view.rollout.sum(dim=-1), torch.ones(2, len(result.tokens)))
    torch.testing.assert_close(view.pooled, view.rollout.mean(dim=1))


def test_word_order_view_needs_the_same_number_of_tokens(model, tokenizer, result):
    with pytest.raises(InputError, match="has 2 tokens and the sentence 8"):
        word_order.word_order_view(model, tokenizer, result, reordered="dull film")
    own = word_order.word_order_view(model, tokenizer, result, reordered="dull was the acting , film wonderful a")
    assert own.seed is None and own.experiment.is_permutation
    assert own.difference_without_encoding < 1e-5


def test_export_csv_averages_the_heads_for_the_mean(result):
    name, csv_text = export.export_csv(result, 1, "mean")
    rows = csv_text.splitlines()
    assert name == "attention-layer1-headmean.csv"
    assert len(rows) == 1 + len(result.tokens)
    first = np.array([float(value) for value in rows[1].split(",")[1:]], dtype=np.float32)
    np.testing.assert_array_equal(first, result.attentions[0].mean(axis=0)[0])


def test_excluded_positions_pick_special_tokens_and_punctuation():
    tokens = ["[UNK]", "good", ",", "!?", "[MASK]", "n't", "##s", "[PAD]"]
    assert excluded_positions(tokens, ["special"]) == [0, 4, 7]
    assert excluded_positions(tokens, ["punctuation"]) == [2, 3]
    assert excluded_positions(tokens, []) == excluded_positions(tokens, None) == []


@pytest.mark.parametrize(("value", "expected"), [(3, 3), ("2", 2), (8, 0), (-1, 0), (None, 0), ("x", 0)])
def test_pick_position_falls_back_to_the_first_token(value, expected):
    assert inputs.pick_position(value, 8) == expected


def test_compare_panel_without_shared_tokens_has_no_difference(model, tokenizer, result):
    other = analysis.analyze(model, tokenizer, "שלום")
    *_, heatmap_b, difference, summary = compare.compare_panel(compare.compare_view(result, other, 1, 1), "global", [])
    assert difference is None and "No token of A lines up with one of B" in summary
    assert len(heatmap_b.data[0].x) == len(other.tokens)


@pytest.fixture(scope="module")
def markup(model, tokenizer):
    """``MARKUP`` read by the model: its tokens hold "<" and ">", and its tail, past ``max_len``, is no token."""
    result = analysis.analyze(model, tokenizer, MARKUP)
    assert result.truncated and "<" in result.tokens
    return result


def test_attributions_html_escapes_the_typed_text_and_its_untokenised_tail(model, tokenizer, markup):
    _, gradient, ig, *_ = attributions.attribution_panel(
        attributions.attribution_view(model, tokenizer, markup, "predicted", 4, "pad")
    )
    for html_text in (gradient, ig):
        assert "link&lt;/a&gt;" in html_text  # the cut tail, shown plain but escaped
        assert "&lt;</span>" in html_text  # a token of the typed markup, highlighted and escaped
        assert "<script" not in html_text and "</a>" not in html_text and "<b>" not in html_text


def test_panels_escape_tokens_and_class_names(model, tokenizer, markup):
    """Every HTML panel built from user text or class names holds it escaped (checked without a browser)."""
    _, summary = perturb.perturbation_panel(perturb.perturbation_view(model, tokenizer, markup, 1, "remove"))
    assert "<code>&lt;</code>" in summary and "<code><</code>" not in summary
    summary, _ = word_order.word_order_panel(word_order.word_order_view(model, tokenizer, markup, seed=1))
    assert "<code>&lt;</code>" in summary and "<code><</code>" not in summary
    summary = compare.compare_panel(compare.compare_view(markup, markup, 1, 1), "row", [])[-1]
    assert "&lt; (0→0)" in summary and "< (0→0)" not in summary  # the aligned tokens, as the model read them
    view = knockout.knockout_view(model, tokenizer, markup, ["L1 H1"])
    _, summary, _ = knockout.knockout_panel(dataclasses.replace(view, label_names=["<b>neg</b>", "pos"]), "global", [])
    assert "&lt;b&gt;neg&lt;/b&gt;" in summary and "<b>neg" not in summary
    _, summary = inside_head.head_panel(inside_head.head_view(model, tokenizer, markup, 1, 1), 0)
    assert "<" not in summary.replace("<p>", "").replace("</p>", "").replace("<b>", "").replace("</b>", "")
    summary = attributions.attribution_panel(
        dataclasses.replace(
            attributions.attribution_view(model, tokenizer, markup, "predicted", 4, "pad"), target_label="<i>x</i>"
        )
    )[0]
    assert "&lt;i&gt;x&lt;/i&gt;" in summary and "<i>" not in summary


def test_head_and_compare_views_speak_the_pages_numbering(model, tokenizer, result):
    scores = inside_head.head_view(model, tokenizer, result, 2, 1).scores
    assert (scores.layer, scores.head) == (2, 1)
    comparison = compare.compare_view(result, result, 1, 2).comparison
    assert (comparison.layer, comparison.head) == (1, 2)


def test_address_readers():
    assert readers.choice("2", [1, 2, 3]) == 2
    assert readers.choice("<b>", ["a"]) is readers.choice(None, ["a"]) is None
    assert readers.choices("L1 H2, L2 H1", ["L1 H2", "L2 H1"]) == ["L1 H2", "L2 H1"]
    assert readers.choices("", ["a"]) == []
    assert readers.choices("a,b", ["a"]) is None
    assert readers.number("7", 0, 9) == 7
    assert readers.number("10", 0, 9) is readers.number("1.5", 0, 9) is None


def test_export_files_are_written_once_per_content_and_pruned(tmp_path, monkeypatch):
    first = write_export("a.json", "{}", tmp_path)
    assert first.read_text() == "{}" and write_export("a.json", "{}", tmp_path) == first
    monkeypatch.setattr("transformer.explorer.serving.export_files.KEEP", 2)
    os.utime(first.parent, (time.time() - 60, time.time() - 60))
    second, third = write_export("b.csv", "x", tmp_path), write_export("c.csv", "y", tmp_path)
    assert not first.exists() and second.exists() and third.exists()
    assert [path.name for path in tmp_path.iterdir() if not path.is_dir()] == []


def test_an_error_quotes_the_value_sent_in_plain_quotes_with_its_markup_escaped():
    """Gradio's toast renders a message as HTML, so markup is escaped; quotes are plain text there and for an API
    caller, who would read ``got &#x27;3&#x27;``."""
    with pytest.raises(InputError) as refused:
        inputs.whole_number("three", "The layer", 1, 2)
    assert "'three'" in str(refused.value) and "&#" not in str(refused.value)
    with pytest.raises(InputError) as refused:
        inputs.parse_heads(["<b>L1</b>"], 2, 2)
    assert "&lt;b&gt;" in str(refused.value) and "<b>" not in str(refused.value)
