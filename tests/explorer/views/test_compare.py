"""Compare with a second model (MODEL_ID_B): the sentence through both, each model's own prediction, the same head
in each model that has it and each model's attributions for its prediction; loading the second model, its
address controls, its endpoint, and the page laid out with it."""

import re
import types

import gradio as gr
import numpy as np
import pytest
import torch
from app_fixtures import SENTENCE, close
from hub_checkpoints import write_deeper_bert

from transformer.explain.attribution import gradient_x_input, integrated_gradients
from transformer.explorer import runner, views
from transformer.explorer.drawing import status
from transformer.explorer.drawing.figures import shown_values
from transformer.explorer.registry import Reading
from transformer.explorer.two_models import ModelReading, ModelsView, same_classes
from transformer.explorer.views import compare
from transformer.loading import load_model


@pytest.fixture(scope="module")
def deeper_bert_dir(tmp_path_factory):
    return write_deeper_bert(tmp_path_factory.mktemp("bert-3x4"))


@pytest.fixture
def second(app, deeper_bert_dir, monkeypatch):
    """The app with the deeper BERT loaded as its second model."""
    loaded = load_model(deeper_bert_dir, device="cpu")
    monkeypatch.setattr(runner, "get_second_model", lambda: (loaded, None))
    return loaded


def own_reading(loaded, text: str):
    """(token ids, probabilities, attentions) of ``text`` through ``loaded``'s model, computed here directly."""
    ids = torch.tensor([loaded.tokenizer.encode(text).ids])
    with torch.no_grad():
        logits, attentions = loaded.model(ids, output_attentions=True)
    return ids, logits.softmax(-1)[0], torch.stack(attentions)[:, 0]  # (L, H, N, N)


def drawn(figure) -> np.ndarray:
    """The values a heatmap figure draws (its first trace's)."""
    return shown_values(figure.data[0])


def test_the_tab_shows_each_models_own_prediction_head_and_attributions(app, second):
    result = runner.run_model(SENTENCE)
    label_a, label_b, summary, heat_a, heat_b, text_a, text_b, scores_a, scores_b, _ = compare.show_models(
        result, 2, 1, "global", [], None
    )
    ids_a, probs_a, attentions_a = own_reading(runner.get_model()[0], SENTENCE)
    ids_b, probs_b, attentions_b = own_reading(second, SENTENCE)
    assert [label_a[name] for name in result.label_names] == pytest.approx(probs_a.tolist(), abs=1e-6)
    assert [label_b[name] for name in second.model.label_names] == pytest.approx(probs_b.tolist(), abs=1e-6)
    assert np.allclose(drawn(heat_a), attentions_a[1, 0].numpy(), atol=1e-4)  # drawn to 4 decimals
    assert np.allclose(drawn(heat_b), attentions_b[1, 0].numpy(), atol=1e-4)
    assert "[CLS]" in str(list(heat_b.data[0].x)) and "[CLS]" not in str(list(heat_a.data[0].x))  # own tokens
    assert "dull" in text_a and "dull" in text_b  # both highlight the typed sentence
    target_b = int(probs_b.argmax())
    ig_b = integrated_gradients(second.model, ids_b, target_b, "pad", 32).attributions
    assert np.allclose(drawn(scores_b)[1], ig_b.numpy(), atol=1e-3)  # shown to 3 decimals
    gx_a = gradient_x_input(runner.get_model()[0].model, ids_a, int(probs_a.argmax()))
    assert np.allclose(drawn(scores_a)[0], gx_a.numpy(), atol=1e-3)  # shown to 3 decimals
    assert "3 layers of 4 heads" in summary and "2 layers of 2 heads" in summary and "B − A" in summary


def test_a_head_only_one_model_has_is_drawn_for_that_model_and_said_for_the_other(app, second):
    result = runner.run_model(SENTENCE)
    _, _, summary, heat_a, heat_b, *_ = compare.show_models(result, 3, 4, "global", [], None)
    assert heat_a.data == () and "Model A has no layer 3, head 4" in heat_a.layout.annotations[0].text
    assert len(heat_b.data) == 1 and "It has no layer 3, head 4." in summary
    with pytest.raises(gr.Error, match="Layer must be a whole number from 1 to 3"):
        compare.show_models(result, 4, 1, "global", [], None)


def test_a_head_change_calls_neither_model(app, second, forward_calls):
    result = runner.run_model(SENTENCE)
    calls_b = []
    handle = second.model.register_forward_hook(lambda *_: calls_b.append(1))
    try:
        assert compare.explains_both(result, 1, 1, "global", [], None)  # its Cancel button shows (Drawing.starts)
        *_, kept = compare.show_models(result, 1, 1, "global", [], None)
        before = (len(forward_calls), len(calls_b))
        assert before[0] > 0 and before[1] > 0
        assert not compare.explains_both(result, 3, 2, "row", ["special"], kept)  # and for a head change, none
        *_, kept_again = compare.show_models(result, 3, 2, "row", ["special"], kept)
        assert (len(forward_calls), len(calls_b)) == before
        assert kept_again.analysis_b is kept.analysis_b
    finally:
        handle.remove()


def test_the_endpoint_answers_for_both_models(app, second):
    answer = compare.compare_models(SENTENCE, layer=3, head=1)
    a, b = answer["readings"]
    assert (answer["layer"], answer["head"]) == (3, 1)
    assert (a["name"], a["num_layers"], b["name"], b["num_layers"], b["num_heads"]) == ("A", 2, "B", 3, 4)
    assert a["attention"] is None and len(b["attention"]) == len(b["tokens"])
    assert b["tokens"][0] == "[CLS]" and len(b["attributions"]["integrated_gradients"]["attributions"]) == len(
        b["tokens"]
    )


def test_without_a_second_model_the_endpoint_says_how_to_load_one(app, monkeypatch):
    monkeypatch.setattr(runner, "get_second_model", lambda: (None, None))
    with pytest.raises(gr.Error, match="start the explorer with MODEL_ID_B"):
        compare.compare_models(SENTENCE)


def test_the_address_reads_a_layer_and_head_of_either_model(app, second):
    reading = Reading(model=runner.get_model()[0].model, tokens=5)
    assert compare.read_compare_layer("3", reading) == 3 and compare.read_compare_head("4", reading) == 4
    assert compare.read_compare_layer("4", reading) is None


def test_the_address_reads_only_the_explorers_model_without_a_second(app, monkeypatch):
    monkeypatch.setattr(runner, "get_second_model", lambda: (None, None))
    reading = Reading(model=runner.get_model()[0].model, tokens=5)
    assert compare.read_compare_layer("2", reading) == 2 and compare.read_compare_layer("3", reading) is None


def test_classes_are_the_same_up_to_case_and_order_matters():
    def reading(*names):
        return types.SimpleNamespace(label_names=list(names))

    assert same_classes([reading("negative", "positive"), reading("NEGATIVE", "POSITIVE")])
    assert not same_classes([reading("negative", "positive"), reading("positive", "negative")])
    assert not same_classes([reading("negative", "positive"), reading("LABEL_0", "LABEL_1")])


@pytest.fixture
def second_model_env(monkeypatch):
    """``get_second_model`` read afresh from the environment, and forgotten again after the test."""
    runner.get_second_model.cache_clear()
    yield monkeypatch
    runner.get_second_model.cache_clear()


def test_the_second_model_loads_from_model_id_b(second_model_env, deeper_bert_dir):
    second_model_env.delenv("MODEL_ID_B", raising=False)
    assert runner.get_second_model() == (None, None)
    runner.get_second_model.cache_clear()
    second_model_env.setenv("MODEL_ID_B", str(deeper_bert_dir))
    loaded, note = runner.get_second_model()
    assert note is None and loaded.model.num_layers == 3 and loaded.source == str(deeper_bert_dir)


def test_a_second_model_that_does_not_load_leaves_a_one_line_note(second_model_env, tmp_path):
    second_model_env.setenv("MODEL_ID_B", str(tmp_path / "nowhere"))
    loaded, note = runner.get_second_model()
    assert loaded is None and note.startswith("Could not load MODEL_ID_B") and "\n" not in note
    with pytest.raises(Exception, match="Could not load MODEL_ID_B"):
        runner.loaded_model(second=True)


def test_the_page_lays_out_the_two_model_tab(app, second):
    demo = app.build_demo()
    ids = {block.elem_id for block in demo.blocks.values()}
    assert {"compare-text-a", "compare-text-b", "compare-attributions-a", "compare-attributions-b"} <= ids
    assert "compare-cancel" in ids  # both models' attributions, a job of many passes, can be cancelled
    layer = next(block for block in demo.blocks.values() if getattr(block, "elem_id", None) == "compare-layer")
    assert [value for _, value in layer.choices] == [1, 2, 3]


def test_the_status_line_names_the_second_model_or_why_it_is_missing(app, second):
    first = runner.get_model()
    assert "**Model B (Compare)**" in status.page_status(first, (second, None))
    said = status.page_status(first, (None, "Could not load MODEL_ID_B <b>x</b>"))
    assert "&lt;b&gt;x" in said and "<b>" not in said and "Model B" not in said.split("  \n")[0]
    assert status.page_status(first, (None, None)) == status.model_status(*first)


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


def test_compare_tab_runs_sentence_b_once_and_lines_up_the_heads(app, result, forward_calls):
    outputs = views.compare.show_compare(result, SENTENCE, 1, 2, "global", [], None)
    label_a, label_b, heatmap_a, heatmap_b, difference, summary, kept_b = outputs
    assert label_a == pytest.approx(label_b) and len(forward_calls) == 1
    assert difference["visible"]
    np.testing.assert_array_equal(difference["value"].data[0].z, np.zeros((len(result.tokens),) * 2))
    assert list(heatmap_a.data[0].y) == list(heatmap_b.data[0].y)
    assert f"{len(result.tokens)} of {len(result.tokens)} tokens" in summary
    forward_calls.clear()
    views.compare.show_compare(result, SENTENCE, 2, 1, "row", ["special"], kept_b)  # another head: a redraw
    assert not forward_calls


def test_compare_tab_without_a_shared_token_says_so_and_draws_no_empty_box(app, result):
    """Issue 53: two sentences with no token in common left an empty B − A box under "0 of 8 tokens ... none"."""
    *_, difference, summary, _ = views.compare.show_compare(result, "שלום", 1, 1, "global", [], None)
    assert difference == gr.update(value=None, visible=False) and "share no token" in summary


def test_compare_tab_asks_for_a_second_sentence(app, result):
    *figures, summary, kept = views.compare.show_compare(result, "  ", 1, 1, "global", [], None)
    assert "second sentence" in summary and kept is None and figures == [None] * 5


# The summary of two models (models_summary): each class's probability under A, under B, and B − A, from readings
# made by hand.


def hand_reading(name: str, probabilities: list[float], label_names=("negative", "positive")) -> ModelReading:
    return ModelReading(
        name=name,
        source=f"model {name}",
        tokens=["a", "b"],
        offsets=[(0, 1), (2, 3)],
        label_names=list(label_names),
        probabilities=probabilities,
        num_layers=2,
        num_heads=2,
        attention=None,
        attributions=types.SimpleNamespace(target_label="positive"),
    )


def table_rows(summary: str) -> list[list[str]]:
    return [re.findall(r"<t[dh]>(.*?)</t[dh]>", row) for row in re.findall(r"<tr>(.*?)</tr>", summary)]


def test_the_table_gives_a_then_b_then_b_minus_a():
    view = ModelsView("a b", 1, 1, (hand_reading("A", [0.8, 0.2]), hand_reading("B", [0.3, 0.7])))
    assert table_rows(compare.models_summary(view)) == [
        ["class", "A", "B", "B − A"],
        ["negative", "0.8000", "0.3000", "-0.5000"],
        ["positive", "0.2000", "0.7000", "+0.5000"],
    ]


def test_models_naming_their_classes_differently_get_no_table():
    view = ModelsView("a b", 1, 1, (hand_reading("A", [0.8, 0.2]), hand_reading("B", [0.3, 0.7], ("neg", "pos"))))
    summary = compare.models_summary(view)
    assert not table_rows(summary) and "name their classes differently" in summary
