"""The Training tab and ``/training``: the sentence at each checkpoint of the app's tiny model (three, the last the
model itself), the settle step, the slider's redraw from the kept view, training.json, and a model without any."""

import contextlib

import gradio as gr
import numpy as np
import pytest
import torch
from app_fixtures import SENTENCE, desktop_page, forget_the_models
from tiny import write_checkpointed_model, write_dev_sets

from transformer.artifacts import write_training
from transformer.explain.training import settled_index
from transformer.explorer import runner
from transformer.explorer.analysis import NO_OPINION_MARGIN
from transformer.explorer.corpus import data_folder, model_files
from transformer.explorer.drawing.figures import shown_values
from transformer.explorer.page import api
from transformer.explorer.registry import Reading
from transformer.explorer.views import attention, training
from transformer.loading import load_model

STEPS = [0, 4, 9]  # what app_fixtures.write_model_dir keeps


@pytest.mark.parametrize(
    ("positive", "settled"),
    [
        ([0.1, 0.9, 0.2, 0.8, 0.9], 3),
        ([0.9, 0.8, 0.95], 0),
        ([0.3], 0),
        ([0.9, 0.1], 1),
        ([0.2, 0.1, 0.9, 0.2], 3),
        ([0.49, 0.1, 0.03], 1),  # step 0 leans negative by chance: not yet the final model's clear opinion
        ([0.51, 0.625, 0.9], 1),  # a difference of exactly the margin (0.625 against 0.375, exact in binary) is clear
        ([0.51, 0.62, 0.9], 2),  # just inside the margin is not
        ([0.2, 0.45, 0.55, 0.52], 2),  # the final reading has no clear opinion: its class alone counts
    ],
)
def test_the_prediction_settles_where_it_last_becomes_the_final_clear_opinion(positive, settled):
    probabilities = torch.tensor([[1 - p, p] for p in positive], dtype=torch.float64)  # (K, 2)
    assert settled_index(probabilities, 0.25) == settled


def test_the_endpoint_reads_the_sentence_at_every_checkpoint_and_its_last_point_is_predict(app):
    answer = training.training(SENTENCE, layer=2, head=1)
    assert answer["steps"] == STEPS and (answer["layer"], answer["head"]) == (2, 1)
    probabilities = np.array(answer["probabilities"])  # (K, C)
    predicted = {row["label"]: row["confidence"] for row in api.predict(SENTENCE)["confidences"]}
    final = [predicted["negative"], predicted["positive"]]
    np.testing.assert_allclose(probabilities[-1], final, atol=6e-5)  # /predict rounds to 4 decimals
    assert not np.allclose(probabilities[0], probabilities[1]) and not np.allclose(probabilities[1], probabilities[2])
    settled = settled_index(torch.from_numpy(probabilities), NO_OPINION_MARGIN)
    assert answer["settled_step"] == STEPS[settled]
    attentions = np.array(answer["attentions"])  # (K, N, N)
    assert attentions.shape[0] == 3 and np.allclose(attentions.sum(axis=-1), 1, atol=1e-4)


def drawn(app, layer=1, head=2, position=100):
    result = runner.run_model(SENTENCE)
    return result, training.show_training(result, layer, head, position, None)


def test_the_curve_ends_at_predict_and_the_slider_redraws_from_the_kept_view_with_no_model(app, monkeypatch):
    result, (summary, curve, heat, _, _, _, slider, kept) = drawn(app)
    assert slider["maximum"] == 3 and slider["value"] == 3 and "settles at step" in summary
    predicted = api.predict(SENTENCE)["confidences"]
    by_label = {row["label"]: row["confidence"] for row in predicted}
    for trace in curve["value"].data:
        assert trace.y[-1] == pytest.approx(by_label[trace.name[2:-1]], abs=6e-5)
    # The slider's last position is the Attention tab's map of the same head: the final checkpoint is the model.
    last = attention.show_head(result, 1, "2")
    np.testing.assert_array_equal(shown_values(heat["value"].data[0]), shown_values(last.data[0]))

    def no_model(*args, **kwargs):
        raise AssertionError("the slider ran a model")

    monkeypatch.setattr(runner, "get_checkpoints", no_model)
    monkeypatch.setattr(runner, "run_view", no_model)
    first, first_map = training.show_checkpoint(result, kept, 1)
    again, _ = training.show_checkpoint(result, kept, 3)
    np.testing.assert_array_equal(shown_values(again.data[0]), shown_values(last.data[0]))
    assert not np.array_equal(shown_values(first.data[0]), shown_values(last.data[0]))
    assert "step 0" in first.layout.title.text and len(first_map.data) == 3  # a map per stage: L + 1
    assert training.show_checkpoint(result, None, 2) == (gr.skip(), gr.skip())  # nothing read yet
    other = runner.run_model("another sentence entirely")
    assert training.show_checkpoint(other, kept, 2) == (gr.skip(), gr.skip())  # kept for another sentence


@contextlib.contextmanager
def explorer_on(model_id: str | None, monkeypatch):
    """The explorer's model switched to ``model_id`` (None: the bundled model), and back after."""
    with monkeypatch.context() as patch:
        if model_id is None:
            patch.delenv("MODEL_ID", raising=False)
        else:
            patch.setenv("MODEL_ID", model_id)
        forget_the_models()
        try:
            yield
        finally:
            forget_the_models()
    forget_the_models()


def test_a_model_without_checkpoints_says_so_in_one_line(app, tiny_model_dir, monkeypatch):
    with explorer_on(str(tiny_model_dir), monkeypatch):
        result = runner.run_model(SENTENCE)
        said, curve, *_, slider, kept = training.show_training(result, 1, 1, 3, None)
        assert said.startswith("This model kept no training checkpoints") and "\n" not in said
        assert str(tiny_model_dir) not in said  # a folder's path is the server's own
        assert curve["visible"] is False and slider["visible"] is False and kept is None
        with pytest.raises(gr.Error) as error:
            training.training(SENTENCE)
        assert error.value.message == said


def test_training_json_gives_the_suite_and_the_roles_at_each_checkpoint(app, tmp_path, monkeypatch):
    folder = write_checkpointed_model(tmp_path / "model", app.get_model()[0].tokenizer, max_len=32)
    rows = data_folder.reference_corpus(data_folder.dev_sets(write_dev_sets(tmp_path / "data")), size=10)
    loaded = load_model(folder, device="cpu")
    write_training(folder, loaded, rows, model_files.model_hash(folder))
    stored = model_files.read_artifact(folder, model_files.TRAINING_FILE, model_files.model_hash(folder))
    assert stored["steps"] == STEPS and stored["sentences"] == 10
    final_atlas = model_files.build_atlas(loaded.model, loaded.tokenizer, rows, "x")
    assert [role for layer in stored["checkpoints"][-1]["roles"] for role in layer] == [
        head["role"] for head in final_atlas["heads"]
    ]  # the last checkpoint's roles are the head atlas's
    behaviour = model_files.build_behaviour(loaded.model, loaded.tokenizer, "x")
    assert stored["checkpoints"][-1]["capabilities"] == [
        {key: row[key] for key in ("part", "capability", "failure_rate")} for row in behaviour["capabilities"]
    ]
    with explorer_on(str(folder), monkeypatch):
        _, (summary, *_, suite, roles, _, _) = drawn(app)
        assert suite["visible"] and roles["visible"] and "has not made" not in summary
        assert roles["value"].data[0].text[0][-1] == stored["checkpoints"][-1]["roles"][0][0]
        assert len(suite["value"].data) == len(behaviour["capabilities"])
        assert training.training(SENTENCE)["roles"] == [c["roles"] for c in stored["checkpoints"]]


def test_write_training_makes_no_file_without_checkpoints(tiny_model_dir, capsys):
    write_training(tiny_model_dir, load_model(tiny_model_dir, device="cpu"), [], "x")
    assert not (tiny_model_dir / model_files.TRAINING_FILE).exists()
    assert "no training checkpoints" in capsys.readouterr().out


def test_the_view_holds_cpu_tensors_of_every_checkpoint(app):
    result = runner.run_model(SENTENCE)
    view = runner.run_view(training.training_view, result, layer=1, head=1)
    assert view.probabilities.shape == (3, 2) and view.attentions.shape == (3, len(result.tokens), len(result.tokens))
    assert torch.equal(view.attentions[-1], torch.from_numpy(result.attentions[0, 0]))


def test_the_address_readers_keep_a_checkpoint_and_a_head_of_the_model(model):
    reading = Reading(model, tokens=5)
    read = training.VIEW.params
    assert read["training_point"]("3", reading) == 3 and read["training_point"]("0", reading) is None
    assert read["training_point"](str(training.MAX_CHECKPOINTS + 1), reading) is None
    assert read["training_layer"]("2", reading) == 2 and read["training_head"]("3", reading) is None
    assert training.VIEW.fallbacks == {"training_layer": "layer", "training_head": "head"}


@pytest.mark.browser
@pytest.mark.served
def test_a_link_opens_the_tab_at_its_checkpoint_and_head_in_chromium(browser, url):
    address = f"{url}?text={SENTENCE}&view=training&training_layer=2&training_head=1&training_point=1"
    with desktop_page(browser, address) as page:
        page.wait_for_function(
            """() => {
                const heat = document.querySelector('#training-attention');
                const curve = document.querySelector('#training-curve');
                return heat?.textContent.includes('Layer 2, head 1 at step 0')
                    && curve?.querySelectorAll('.scatterlayer .trace').length === 2
                    && document.querySelector('#training-embeddings .scatterlayer .trace');
            }"""
        )
        assert "settles at step" in page.locator("#training-summary").text_content()
        address = page.evaluate("() => window.location.href")
        assert "view=training" in address and "training_point=1" in address and "training_layer=2" in address
