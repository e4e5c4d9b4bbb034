"""The explanation views in the app: each endpoint's numbers, the tabs' handlers, and the page address."""

import csv
import inspect
import io
import json
import math
from pathlib import Path

import gradio as gr
import numpy as np
import pytest
import torch
from gradio_client.exceptions import AppError

from transformer import explain
from transformer.explorer import analysis, runner, views
from transformer.explorer.drawing.figures import shown_values
from transformer.explorer.page import api, restore
from transformer.tokenizer import MASK_TOKEN

SENTENCE = "a wonderful film , the acting was dull"


@pytest.fixture(scope="module")
def result(app):
    return runner.run_model(SENTENCE)


def ids_of(result):
    return torch.tensor([result.token_ids])


def close(values, expected, atol=2e-6):
    """API numbers are rounded to 6 decimals."""
    np.testing.assert_allclose(np.array(values, dtype=np.float64), np.asarray(expected, dtype=np.float64), atol=atol)


# --- endpoints, called as handlers ---


def test_rollout_endpoint_rows_sum_to_one_and_pool_by_column_means(app, loaded, result):
    answer = views.rollout.rollout(SENTENCE)
    rollout = np.array(answer["rollout"])
    n = len(result.tokens)
    assert answer["tokens"] == result.tokens and rollout.shape == (2, n, n)
    close(rollout.sum(axis=-1), np.ones((2, n)), atol=1e-5)
    expected = explain.attention_rollout(explain.predict(loaded.model, ids_of(result)).attentions)
    close(rollout, expected)
    close(answer["pooled"], expected.mean(dim=1))


def test_attributions_endpoint_is_complete_and_matches_the_functions(app, loaded, result):
    answer = views.attributions.attributions(SENTENCE, target="positive", steps=32, baseline="pad")
    ig = answer["integrated_gradients"]
    assert answer["target"] == 1 and answer["target_label"] == "positive" and ig["steps"] == 32
    difference = ig["target_logit"] - ig["baseline_logit"]
    tolerance = explain.COMPLETENESS_RTOL * abs(difference) + explain.COMPLETENESS_ATOL
    assert abs(sum(ig["attributions"]) - difference) <= tolerance and ig["complete"]
    expected = explain.integrated_gradients(loaded.model, ids_of(result), 1, "pad", 32)
    close(ig["attributions"], expected.attributions)
    close(answer["gradient_x_input"], explain.gradient_x_input(loaded.model, ids_of(result), 1))
    correlation = np.array(answer["agreement"]["correlation"], dtype=float)
    assert answer["agreement"]["methods"] == list(explain.METHODS)
    close(np.diag(correlation), np.ones(4))


def test_attributions_for_the_predicted_class_follow_the_prediction(app, result):
    answer = views.attributions.attributions(SENTENCE)
    assert answer["target"] == int(np.argmax(result.probabilities))
    assert answer["integrated_gradients"]["baseline"] == "pad"


def test_head_internals_endpoint_scales_by_root_dk_and_matches_the_models_weights(app, result):
    answer = views.inside_head.head_internals(SENTENCE, layer=2, head=1)["scores"]
    raw, scaled, weights = (np.array(answer[key]) for key in ("raw", "scaled", "weights"))
    assert (answer["layer"], answer["head"], answer["d_k"]) == (2, 1, 8)  # as sent: layers and heads count from 1
    close(scaled, raw / math.sqrt(8), atol=1e-5)
    close(weights, result.attentions[1, 0], atol=1e-5)
    by_hand = -(weights * np.log(np.where(weights > 0, weights, 1))).sum(axis=-1)
    close(answer["entropy"], by_hand, atol=1e-4)
    assert answer["max_entropy"] == pytest.approx(math.log(len(result.tokens)), abs=1e-6)


def test_knockout_endpoint_with_a_whole_layer_off_equals_predict_with_knockout(app, loaded, result):
    answer = views.knockout.knockout(SENTENCE, ["L1 H2", "l1h1"])
    assert answer["heads_off"] == ["L1 H1", "L1 H2"]
    head_mask = torch.tensor([[0.0, 0.0], [1.0, 1.0]])
    expected = explain.predict_with_knockout(loaded.model, ids_of(result), head_mask)
    close(answer["probabilities"], expected.probs)
    close(answer["attentions"], explain.stack_attentions(expected.attentions), atol=5e-5)  # weights: 4 decimals
    close(answer["probabilities_before"], result.probabilities)
    assert not np.allclose(answer["probabilities"], result.probabilities, atol=1e-6)


def test_knockout_endpoint_with_no_head_off_is_the_plain_prediction(app, result):
    answer = views.knockout.knockout(SENTENCE)
    close(answer["probabilities"], result.probabilities)
    close(answer["attentions"], result.attentions, atol=5e-5)


def test_head_importance_endpoint_equals_one_knockout_per_head(app, loaded, result):
    importance = views.knockout.head_importance(SENTENCE)["importance"]
    target = int(np.argmax(result.probabilities))
    assert importance["target"] == target
    for layer in range(2):
        for head in range(2):
            single = views.knockout.knockout(SENTENCE, [f"L{layer + 1} H{head + 1}"])["probabilities"][target]
            assert importance["ablated_prob"][layer][head] == pytest.approx(single, abs=2e-6)
            assert importance["drop"][layer][head] == pytest.approx(result.probabilities[target] - single, abs=2e-6)


@pytest.mark.parametrize("mode", ["mask", "remove"])
def test_perturb_endpoint_changes_one_token(app, loaded, result, mode):
    answer = views.perturb.perturb(SENTENCE, position=1, mode=mode)
    ids = result.token_ids
    mask_id = loaded.tokenizer.token_to_id(MASK_TOKEN)
    changed = ids[:1] + ids[2:] if mode == "remove" else [ids[0], mask_id, *ids[2:]]
    after = explain.predict(loaded.model, torch.tensor([changed])).probs
    close(answer["probabilities_after"], after)
    close(answer["change"], after - torch.tensor(result.probabilities))
    assert answer["tokens_after"][1] == (result.tokens[2] if mode == "remove" else MASK_TOKEN)


def test_word_order_endpoint_gives_identical_predictions_without_positional_encoding(app, result):
    answer = views.word_order.word_order(SENTENCE, seed=3)
    probs = np.array(answer["experiment"]["probs"])  # [order][encoding][class]
    assert sorted(answer["reordered_tokens"]) == sorted(result.tokens)
    assert answer["reordered_tokens"] != result.tokens and answer["experiment"]["is_permutation"]
    close(probs[0, 1], probs[1, 1], atol=1e-6)
    assert answer["difference_without_encoding"] < 1e-5 < answer["difference_with_encoding"]
    close(probs[0, 0], result.probabilities)


def test_word_order_endpoint_takes_your_own_reordering(app):
    answer = views.word_order.word_order("the acting was dull", reordered="dull was the acting")
    assert answer["seed"] is None and answer["reordered_tokens"] == ["dull", "was", "the", "acting"]
    assert answer["experiment"]["is_permutation"] and answer["difference_without_encoding"] < 1e-5
    with pytest.raises(gr.Error, match="same words in another order"):
        views.word_order.word_order("the acting was dull", reordered="the acting")


def test_compare_endpoint_of_identical_sentences_has_zero_difference(app, result):
    answer = views.compare.compare(SENTENCE, SENTENCE, layer=2, head=2)["comparison"]
    assert (answer["layer"], answer["head"]) == (2, 2)  # as sent: layers and heads count from 1
    n = len(result.tokens)
    assert answer["pairs"] == [[i, i] for i in range(n)]
    close(answer["difference"], np.zeros((n, n)), atol=0)
    close(answer["probs_a"], answer["probs_b"], atol=0)
    close(answer["attention_a"], result.attentions[1, 1])


def test_compare_endpoint_lines_up_shared_tokens(app):
    answer = views.compare.compare("a charming journey", "not a charming journey", layer=1, head=1)["comparison"]
    pairs = answer["pairs"]
    assert [pair[0] for pair in pairs] == [0, 1, 2] and len(answer["difference"]) == 3
    b = np.array(answer["attention_b"])
    a = np.array(answer["attention_a"])
    index_b = [j for _, j in pairs]
    close(answer["difference"], b[np.ix_(index_b, index_b)] - a, atol=3e-6)


def test_export_endpoint_parses_back_to_the_same_numbers(app, result):
    answer = views.export.export(SENTENCE, layer=2, head="mean")
    exported = answer["analysis"]
    assert exported["tokens"] == result.tokens and exported["text"] == SENTENCE
    assert np.array_equal(np.array(exported["attentions"], dtype=np.float32), result.attentions)  # exact
    assert exported["probabilities"] == result.probabilities
    rows = list(csv.reader(io.StringIO(answer["attention_csv"])))
    assert rows[0][1:] == [f"{i} {token}" for i, token in enumerate(result.tokens)]
    parsed = np.array([[float(value) for value in row[1:]] for row in rows[1:]], dtype=np.float32)
    assert np.array_equal(parsed, analysis.attention_matrix(result, 1, None))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda app: views.inside_head.head_internals(SENTENCE, layer=0),
            "Layer must be a whole number from 1 to 2; got 0",
        ),
        (
            lambda app: views.inside_head.head_internals(SENTENCE, head=1.5),
            "Head must be a whole number from 1 to 2",
        ),
        (lambda app: views.compare.compare(SENTENCE, "good", layer=3), "Layer must be a whole number from 1 to 2"),
        (
            lambda app: views.knockout.knockout(SENTENCE, ["L1 H3"]),
            "head in a head name must be a whole number from 1 to 2",
        ),
        (lambda app: views.knockout.knockout(SENTENCE, ["layer 1"]), 'Name heads like "L1 H2"'),
        (lambda app: views.knockout.knockout(SENTENCE, "L1 H1"), "a list of names"),
        (
            lambda app: views.attributions.attributions(SENTENCE, target="<b>"),
            "Choose a target class from negative, positive",
        ),
        (
            lambda app: views.attributions.attributions(SENTENCE, steps=0),
            "steps must be a whole number from 1 to 128",
        ),
        (
            lambda app: views.attributions.attributions(SENTENCE, steps=views.attributions.MAX_IG_STEPS + 1),
            "steps must be a whole number from 1 to 128; got 129",
        ),
        (lambda app: views.knockout.knockout(SENTENCE, ["L1 H1"] * 10**6), "at most 4 heads"),
        (lambda app: views.attributions.attributions(SENTENCE, baseline="noise"), "baseline is one of pad, zero"),
        (lambda app: views.perturb.perturb(SENTENCE, position=-1), "position must be a whole number from 0 to 7"),
        (lambda app: views.perturb.perturb(SENTENCE, mode="swap"), "mask or remove"),
        (lambda app: views.perturb.perturb("film", mode="remove"), "one token"),
        (lambda app: views.export.export(SENTENCE, head="9"), "Head must be a whole number from 1 to 2"),
        (lambda app: views.rollout.rollout("   "), "Type a sentence"),
        (lambda app: views.knockout.knockout(["a list"]), "The text must be a string, not list"),
        (lambda app: views.word_order.word_order(SENTENCE, reordered=5), "Type your own reordering"),
        (lambda app: views.compare.compare(SENTENCE, "x" * 20_000), "at most 10,000"),
    ],
)
def test_bad_controls_get_a_clear_error_without_a_stack_trace(app, call, message):
    with pytest.raises(gr.Error, match=message) as raised:
        call(app)
    assert raised.value.print_exception is False


def test_error_messages_quote_a_bad_value_short_and_escaped(app):
    value = '<img src=x onerror="alert(1)">' + "x" * 5_000
    for call in (
        lambda: views.attributions.attributions(SENTENCE, target=value),
        lambda: views.attributions.attributions(SENTENCE, baseline=value),
        lambda: views.perturb.perturb(SENTENCE, mode=value),
        lambda: views.knockout.knockout(SENTENCE, [value]),
        lambda: views.inside_head.head_internals(SENTENCE, layer=value),
    ):
        with pytest.raises(gr.Error) as raised:
            call()
        message = raised.value.message
        assert len(message) < 200 and "<img" not in message and "&lt;img" in message


FREE_TEXTS = {"text", "text_a", "text_b", "reordered"}  # read by the model, so capped at MAX_INPUT_CHARS
# Choices (the Behaviour tab's filters among them), and search, which is cut to 200.
NOT_FREE_TEXTS = {"target", "baseline", "mode", "head", "set", "label", "search", "part", "capability", "test", "sort"}
NOT_FREE_TEXTS |= {"direction"}  # /patching's: "b_into_a" or "a_into_b"


def test_every_text_an_endpoint_reads_is_capped(app):
    over = "a " * (analysis.MAX_INPUT_CHARS // 2 + 1)  # 10,002 characters of words
    capped = set()
    for name, endpoint in api.endpoints().items():
        parameters = inspect.signature(endpoint).parameters
        texts = {name for name, parameter in parameters.items() if "str" in str(parameter.annotation)} - {"heads_off"}
        assert texts <= FREE_TEXTS | NOT_FREE_TEXTS, f"{name}: is {texts - FREE_TEXTS - NOT_FREE_TEXTS} free text?"
        for text in texts & FREE_TEXTS:
            with pytest.raises(gr.Error, match="accepts at most 10,000"):
                endpoint(**(dict.fromkeys(texts & FREE_TEXTS, SENTENCE) | {text: over}))
            capped.add(f"{name}.{text}")
    assert {"predict.text", "compare.text_a", "compare.text_b", "word_order.reordered"} <= capped


def test_the_ig_slider_stops_where_the_api_does(app):
    slider = next(block for block in app.demo.blocks.values() if block.elem_id == "ig-steps")
    assert slider.maximum == views.attributions.MAX_IG_STEPS == 128
    assert f"(1-{views.attributions.MAX_IG_STEPS})" in views.attributions.attributions.__doc__


# --- the tabs' handlers ---


def test_tab_redraws_reuse_their_kept_view_and_never_run_the_model(app, result, forward_calls):
    knockout = views.knockout.show_knockout(result, ["L2 H1"], "global", [], None, None)
    attributions = views.attributions.show_attributions(result, "predicted", 32, "pad", None)
    head = views.inside_head.show_inside_head(result, 1, 2, 0, None)
    forward_calls.clear()
    for scale in ("row", "global"):
        again = views.knockout.show_knockout(result, ["L2 H1"], scale, ["punctuation"], *knockout[-2:])
        assert again[-2] is knockout[-2] and again[-1] is knockout[-1]
    assert (
        views.attributions.show_attributions(result, "predicted", 32, "pad", attributions[-1])[-1] is attributions[-1]
    )
    _, _, choices, kept = views.inside_head.show_inside_head(result, 1, 2, 3, head[-1])
    assert kept is head[-1] and choices.value == 3
    assert not forward_calls
    views.knockout.show_knockout(result, ["L2 H2"], "global", [], *knockout[-2:])  # another control: the model runs
    assert forward_calls


def test_rollout_tab_draws_the_chosen_layer_without_the_model(app, result, forward_calls):
    shares, matrix = views.rollout.show_rollout(result, 1, "row", ["punctuation"])
    assert not forward_calls
    rollout = explain.attention_rollout(analysis.model_attentions(result))
    close(shown_values(matrix.data[0]), rollout[0], atol=1e-4)  # shown to 4 decimals
    assert len(shares.data[0].y) == 2  # one row per layer
    assert "after layer 1" in matrix.layout.title.text


def test_knockout_tab_shows_the_change_and_the_importance(app, result):
    label, summary, grid, importance, *_ = views.knockout.show_knockout(
        result, ["L1 H1", "L1 H2"], "global", [], None, None
    )
    assert set(label) == {"negative", "positive"}
    assert "L1 H1, L1 H2" in summary and "<table>" in summary
    assert len(grid.data) == 4 and "L1 H1, L1 H2 switched off" in grid.layout.title.text
    assert np.array(importance.data[0].z).shape == (2, 2)


def test_compare_tab_runs_sentence_b_once_and_lines_up_the_heads(app, result, forward_calls):
    outputs = views.compare.show_compare(result, SENTENCE, 1, 2, "global", [], None)
    label_a, label_b, heatmap_a, heatmap_b, difference, summary, kept_b = outputs
    assert label_a == pytest.approx(label_b) and len(forward_calls) == 1
    np.testing.assert_array_equal(difference.data[0].z, np.zeros((len(result.tokens),) * 2))
    assert list(heatmap_a.data[0].y) == list(heatmap_b.data[0].y)
    assert f"{len(result.tokens)} of {len(result.tokens)} tokens" in summary
    forward_calls.clear()
    views.compare.show_compare(result, SENTENCE, 2, 1, "row", ["special"], kept_b)  # another head: a redraw
    assert not forward_calls


def test_compare_tab_asks_for_a_second_sentence(app, result):
    *figures, summary, kept = views.compare.show_compare(result, "  ", 1, 1, "global", [], None)
    assert "second sentence" in summary and kept is None and figures == [None] * 5


def test_perturbation_and_head_tabs_offer_this_sentences_tokens(app, result):
    _, summary, choices, _ = views.perturb.show_perturbation(
        result, 99, "mask", None
    )  # a choice kept from a longer text
    assert choices.value == 0 and [label for label, _ in choices.choices][:2] == ["0 a", "1 wonderful"]
    assert "[MASK]" in summary


def test_word_order_tab_shuffles_or_takes_your_text(app, result):
    summary, *_ = views.word_order.show_word_order(result, "shuffle", 1, "", None)
    assert "shuffled with seed 1" in summary and "same prediction" in summary


def test_word_order_asks_for_a_reordering_and_says_what_is_wrong_in_place_of_the_result(app, result):
    """Ticking "my own reordering" before typing one is no mistake: a plain request, no error. A reordering
    that cannot be used is an alert in the summary, which the next valid result replaces."""
    show = views.word_order.show_word_order
    asked, plot, _ = show(result, "yours", 1, " ", None)
    assert "Type your own reordering" in asked and "alert" not in asked and plot is None
    wrong, plot, _ = show(result, "yours", 1, "wonderful", None)
    assert 'role="alert"' in wrong and "tokens and the sentence" in wrong and plot is None
    reordered = " ".join(reversed(result.text.split()))
    summary, plot, kept = show(result, "yours", 1, reordered, None)
    assert "your own reordering" in summary and "alert" not in summary and plot is not None
    assert show(result, "yours", 1, "", kept)[2] is kept  # asking again keeps the kept view


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


@pytest.mark.parametrize(
    "handler",
    [
        "rollout.show_rollout",
        "attributions.show_attributions",
        "inside_head.show_inside_head",
        "knockout.show_knockout",
        "perturb.show_perturbation",
        "word_order.show_word_order",
        "compare.show_compare",
        "export.show_export",
        "export.build_json",
        "export.build_csv",
        "attention.show_head",
        "all_heads.show_grid",
    ],
)
def test_every_tab_is_empty_without_an_analysis(app, handler, forward_calls):
    module, name = handler.split(".")
    fn = getattr(getattr(views, module), name)
    arguments = [None] * (fn.__code__.co_argcount - 1)
    outputs = fn(None, *arguments)
    assert not forward_calls
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    assert all(value in (None, "") or isinstance(value, gr.Dropdown) for value in outputs)


def test_address_restores_the_view_and_its_controls(app, result):
    query = {
        "view": "knockout",
        "heads_off": "L1 H2,L2 H1",
        "compare": "not good",
        "compare_head": "2",
        "steps": "64",
        "position": "3",
        "seed": "7",
        "target": "positive",
    }
    restored = restore.restore_controls(result, gr.Request(query_params=query))
    assert restored == {
        "view": "knockout",
        "heads_off": ["L1 H2", "L2 H1"],
        "compare": "not good",
        "compare_head": 2,
        "steps": 64,
        "position": 3,
        "seed": 7,
        "target": "positive",
    }


def test_address_values_the_page_does_not_offer_are_dropped(app, result):
    query = {"view": "<script>", "heads_off": "L1 H9", "steps": "1e9", "position": "99", "baseline": "x", "mode": ""}
    assert restore.restore_controls(result, gr.Request(query_params=query)) == {}


# --- through gradio_client on a live server ---


def test_client_knockout_and_compare(client, app):
    knocked = client.predict(SENTENCE, ["L2 H1"], api_name="/knockout")
    assert knocked == views.knockout.knockout(SENTENCE, ["L2 H1"])
    compared = client.predict("good", "not good", layer=1, head=2, api_name="/compare")
    assert (compared["comparison"]["layer"], compared["comparison"]["head"]) == (1, 2)  # the caller's numbering


def test_client_attributions_and_export(client, app, result):
    answer = client.predict(SENTENCE, target="negative", steps=16, api_name="/attributions")
    assert answer["integrated_gradients"]["steps"] == 16 and answer["target"] == 0
    exported = client.predict(SENTENCE, api_name="/export")["analysis"]
    assert np.array_equal(np.array(exported["attentions"], dtype=np.float32), result.attentions)


def test_client_gets_clear_errors_for_bad_indices(client):
    with pytest.raises(AppError, match="Layer must be a whole number from 1 to 2; got 7") as raised:
        client.predict(SENTENCE, layer=7, api_name="/head_internals")
    text = str(raised.value)
    assert "Traceback" not in text and "/work" not in text and ".py" not in text
    assert client.predict(SENTENCE, api_name="/rollout")["tokens"][0] == "a"  # still serving
