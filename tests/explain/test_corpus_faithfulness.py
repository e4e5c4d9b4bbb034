"""Faithfulness over a corpus: the means are those of each sentence's own curves, the artifacts command writes them
next to the model tied to its weights, and the Attributions tab and ``/faithfulness`` show them beside the
sentence's, or say how to make them."""

import pytest
import torch
from tiny import tiny_model

from transformer.artifacts import main as write_artifacts
from transformer.explain.agreement import METHODS
from transformer.explain.attribution import integrated_gradients
from transformer.explain.corpus_faithfulness import corpus_faithfulness, predicted_class_erasure
from transformer.explain.faithfulness import MODES, faithfulness_by_mode
from transformer.explorer import runner
from transformer.explorer.corpus import data_folder as corpus
from transformer.explorer.corpus import model_files as artifacts
from transformer.explorer.views import attributions
from transformer.loading import DEFAULT_MODEL_DIR

SENTENCES = [torch.tensor([[5, 9, 2, 7]]), torch.tensor([[3, 11]]), torch.tensor([[8, 4, 6, 2, 9, 12, 3]])]


def scores_by_hand(model, ids: torch.Tensor) -> tuple[int, torch.Tensor]:
    """(the predicted class, the four methods' scores for it), written out here: the last layer's head-averaged
    attention and the rollout, mean over queries; gradient × input and Integrated Gradients, signed.

    Shape:
        ids: (1, N). Returns the class and (K, N).
    """
    logits, attentions = model(ids, output_attentions=True)
    target = int(logits.argmax())
    weights = torch.stack(attentions)[:, 0].detach().mean(dim=1)  # (L, N, N), heads averaged
    eye = torch.eye(ids.size(1))
    rollout = eye
    for layer in weights:
        mixed = 0.5 * layer + 0.5 * eye
        rollout = (mixed / mixed.sum(dim=-1, keepdim=True)) @ rollout  # (N, N)
    embeds = model.token_embeddings(ids).detach().requires_grad_()  # (1, N, D)
    (gradient,) = torch.autograd.grad(model(inputs_embeds=embeds)[0, target], embeds)
    gradient_x_input = (gradient * embeds).detach()[0].sum(dim=-1)  # (N,)
    ig = integrated_gradients(model, ids, target, steps=4).attributions
    return target, torch.stack([weights[-1].mean(dim=0), rollout.mean(dim=0), gradient_x_input, ig])


def test_the_corpus_means_are_the_means_of_each_sentences_curves_for_its_predicted_class():
    model = tiny_model(seed=2)
    found = corpus_faithfulness(model, SENTENCES, steps=4)
    assert found.sentences == 3
    each = []
    for ids in SENTENCES:
        target, scores = scores_by_hand(model, ids)
        each.append(faithfulness_by_mode(model, ids, target, scores, METHODS, MODES))
    assert any((scores_by_hand(model, ids)[1][2:] < 0).any() for ids in SENTENCES)  # signed scores matter here
    for mode in MODES:
        for k, method in enumerate(METHODS):
            expected = sum(e[mode].comprehensiveness_aopc[k].item() for e in each) / 3
            assert found.comprehensiveness[mode][method] == pytest.approx(expected, abs=1e-6)
            expected = sum(e[mode].sufficiency_aopc[k].item() for e in each) / 3
            assert found.sufficiency[mode][method] == pytest.approx(expected, abs=1e-6)
        floor = sum(e[mode].random_comprehensiveness_aopc for e in each) / 3
        assert found.comprehensiveness[mode]["random"] == pytest.approx(floor, abs=1e-9)


def test_each_sentence_is_explained_for_its_predicted_class():
    model = tiny_model(seed=2)
    for ids in SENTENCES:
        predicted = int(model(ids).argmax())
        assert all(result.target == predicted for result in predicted_class_erasure(model, ids, 4, MODES).values())


def test_an_empty_corpus_is_refused():
    with pytest.raises(ValueError, match="at least one sentence"):
        corpus_faithfulness(tiny_model(), [])


def test_the_command_writes_the_means_tied_to_the_weights(tiny_model_dir, tiny_data_dir, capsys):
    write_artifacts(
        ["--model", str(tiny_model_dir), "--data-dir", str(tiny_data_dir), "--sentences", "6", "--ig-steps", "4"]
    )
    sha = artifacts.model_hash(tiny_model_dir)
    data = artifacts.read_artifact(tiny_model_dir, artifacts.FAITHFULNESS_FILE, sha)
    assert data["sentences"] == 6 and data["ig_steps"] == 4 and set(data["modes"]) == set(MODES)
    for means in data["modes"].values():
        assert set(means["comprehensiveness_aopc"]) == {*METHODS, "random"} == set(means["sufficiency_aopc"])
    assert "faithfulness.json: 6 sentences, most faithful" in capsys.readouterr().out


@pytest.fixture
def corpus_file(app):
    """The app's model with a faithfulness.json of its own (made from three sentences), removed after."""
    loaded = app.get_model()[0]
    sha = artifacts.model_hash(loaded.folder)
    rows = [corpus.Row("sst2", text, 1) for text in ("a wonderful film", "dull", "the plot is thin")]
    data = artifacts.build_faithfulness(loaded.model, loaded.tokenizer, rows, sha, steps=4)
    path = artifacts.write_artifact(loaded.folder, artifacts.FAITHFULNESS_FILE, data)
    attributions.CORPUS.forget()
    yield data
    path.unlink()
    attributions.CORPUS.forget()


def test_the_tab_and_the_endpoint_show_the_corpus_means_beside_the_sentences(app, corpus_file):
    answer = attributions.faithfulness("a wonderful film", mode="delete", steps=4)
    assert answer["corpus"]["sentences"] == 3
    assert answer["corpus"]["comprehensiveness_aopc"] == corpus_file["modes"]["delete"]["comprehensiveness_aopc"]
    summary = attributions.show_attributions(runner.run_model("a wonderful film"), "predicted", 4, "pad", None)[5]
    assert "corpus mean" in summary and "3 sentences" in summary
    random_mean = corpus_file["modes"]["pad"]["comprehensiveness_aopc"]["random"]
    assert f"{random_mean:.4f}" in summary


def test_without_the_file_the_tab_says_how_to_make_it(app):
    attributions.CORPUS.forget()
    assert artifacts.read_artifact(app.get_model()[0].folder, artifacts.FAITHFULNESS_FILE, "any") is None
    assert attributions.faithfulness("a wonderful film", steps=4)["corpus"] is None
    summary = attributions.show_attributions(runner.run_model("a wonderful film"), "predicted", 4, "pad", None)[5]
    assert "No corpus means for this model" in summary and "python -m transformer.artifacts" in summary


def test_the_bundled_model_carries_its_corpus_means():
    sha = artifacts.model_hash(DEFAULT_MODEL_DIR)
    data = artifacts.read_artifact(DEFAULT_MODEL_DIR, artifacts.FAITHFULNESS_FILE, sha)
    assert data is not None, "faithfulness.json is stale or missing: run make artifacts"
    assert data["sentences"] >= 1000 and set(data["modes"]) == set(MODES)
