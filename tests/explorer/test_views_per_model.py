"""Only the Walkthrough, which reads the tutorial's architecture step by step (its embedding, sinusoidal encoding and
blocks), says plainly that it does not apply to another kind of model, in the tab and at its endpoint; every other
view draws a Hub model too (Token embeddings from its ``hidden_states``); the Positional encoding tab says whether
its table is the tutorial's sinusoids or a learned one; rollout and attention are read for what the classifier
pools (the tokens' mean, or a Hub model's first token)."""

import dataclasses
import types

import pytest
import torch
from app_fixtures import build_model, build_tokenizer
from tiny import tiny_model

from transformer.explain.agreement import agreement_of
from transformer.explain.rollout import pooled_relevance
from transformer.explain.run import predict
from transformer.explorer import analysis, runner
from transformer.explorer.analysis import InputError
from transformer.explorer.drawing.colour import excluded_positions
from transformer.explorer.registry import not_for_this_model, require_tutorial_model
from transformer.explorer.views import attributions, positional_encoding, token_embeddings, walkthrough, word_order
from transformer.loading import load_model

OTHER = types.SimpleNamespace(
    model_type="bert", max_len=512, d_model=32, capabilities=frozenset()
)  # a Hub model's face


def test_only_the_tutorials_architecture_passes():
    assert not_for_this_model("Walkthrough", tiny_model()) is None
    said = not_for_this_model("Walkthrough", OTHER)
    assert said.startswith("Walkthrough follows the tutorial's architecture") and "this bert model" in said
    with pytest.raises(InputError, match="does not apply to this bert model"):
        require_tutorial_model("Walkthrough", OTHER)


@pytest.fixture
def result_of_another_model(app, monkeypatch):
    """An analysis, then the app with a model of another kind loaded."""
    result = runner.run_model("a wonderful film")
    loaded, note = runner.get_model()
    monkeypatch.setattr(runner, "get_model", lambda: (dataclasses.replace(loaded, model=OTHER), note))
    return result


def test_the_walkthrough_tab_says_it_does_not_apply_and_draws_nothing(result_of_another_model):
    text, code, figure, _ = walkthrough.show_step(result_of_another_model, 6, 1, 1, None)
    assert "does not apply to this bert model" in text and figure is None and code == ""


def test_the_walkthrough_endpoint_answers_in_one_line_that_it_does_not_apply():
    with pytest.raises(InputError, match="does not apply to this bert model"):
        walkthrough.walkthrough_view(OTHER, None, types.SimpleNamespace(tokens=["a"], token_ids=[1], text="a"))


@pytest.mark.parametrize("family", ["bert", "roberta"])
def test_the_token_embeddings_tab_draws_a_hub_model(hub_model_dirs, monkeypatch, family):
    loaded = load_model(hub_model_dirs[family], device="cpu")
    monkeypatch.setattr(runner, "get_model", lambda: (loaded, None))
    result = analysis.analyze(loaded.model, loaded.tokenizer, "a wonderful film")
    summary, shown, kept = token_embeddings.show_embeddings(result, None)
    figure = shown["value"]
    assert "does not apply" not in summary and "cosine similarity" in summary
    assert len(figure.data) == loaded.model.num_layers + 1  # one map per stage, the embedding layer's first
    assert kept[1].coordinates.shape == (loaded.model.num_layers + 1, len(result.tokens), 2)
    assert figure.data[0].text[0].endswith("[CLS]" if family == "bert" else "&lt;s&gt;")  # drawn, escaped


def test_the_positional_encoding_tab_says_which_table_it_draws():
    assert "learned" not in positional_encoding.explanation(tiny_model())
    learned = positional_encoding.explanation(OTHER)
    assert "learned its table" in learned and "512 positions × 32 dimensions" in learned


@pytest.mark.parametrize(("scaled", "said"), [(False, "unscaled: this model has no √d_model"), (True, "scaled by √16")])
def test_the_positional_encoding_tab_says_what_the_model_does_to_the_embedding(scaled, said):
    """Issue 53: the tab said "scaled by √128" of the shipped model, whose config has ``embedding_scale: false``."""
    explained = positional_encoding.explanation(tiny_model(embedding_scale=scaled))
    assert said in explained and ("√16" in explained) is scaled


def test_rollout_and_attention_are_read_for_what_the_classifier_pools(hub_model_dirs):
    matrix = torch.rand(2, 4, 4)
    assert torch.allclose(pooled_relevance(matrix), matrix.mean(dim=-2))  # the tutorial's mean of the tokens
    assert torch.equal(pooled_relevance(matrix, "first"), matrix[:, 0])  # a [CLS] model's first token
    with pytest.raises(ValueError, match="pooling is one of"):
        pooled_relevance(matrix, "max")
    assert tiny_model().pooling == "mean"
    bert = load_model(hub_model_dirs["bert"], device="cpu").model
    assert bert.pooling == "first"
    ids = torch.tensor([[2, 7, 9, 11, 3]])  # [CLS] ... [SEP]
    attentions = predict(bert, ids).attentions
    read = agreement_of(attentions, torch.rand(5), torch.rand(5), pooling=bert.pooling).scores[0]
    assert torch.allclose(read, attentions[-1][0].mean(dim=0)[0])  # the last layer's heads' mean, [CLS]'s row


def test_a_hub_tokenizers_special_tokens_can_be_left_out_of_the_colour_scale():
    assert excluded_positions(["[CLS]", "good", "[SEP]"], ["special"]) == [0, 2]
    assert excluded_positions(["<s>", "good", "</s>", "[PAD]"], ["special"]) == [0, 2, 3]
    assert excluded_positions(["<s>", "good"], []) == []


def test_the_attributions_tab_says_which_tokens_the_pad_baseline_keeps(app, hub_model_dirs):
    loaded = load_model(hub_model_dirs["roberta"], device="cpu")
    result = analysis.analyze(loaded.model, loaded.tokenizer, "a wonderful film")
    summary = attributions.attribution_panel(attributions.attribution_view(loaded.model, None, result))[0]
    assert "every token replaced by [PAD] but &lt;s&gt;, &lt;/s&gt;, kept" in summary
    ours = attributions.attribution_view(runner.get_model()[0].model, None, runner.run_model("a wonderful film"))
    assert "every token replaced by [PAD], same positions" in attributions.attribution_panel(ours)[0]


@pytest.mark.parametrize("family", ["bert", "distilbert", "roberta"])
def test_word_order_shuffles_only_the_sentence_and_its_verdict_follows_the_pooling(hub_model_dirs, family):
    """A shuffle that moved [CLS] (or <s>) from position 0 changed what a Hub classifier reads, so "the same
    prediction without positional encoding" was false; the added tokens now stay and the verdict names them."""
    loaded = load_model(hub_model_dirs[family], device="cpu")
    model, tokenizer = loaded.model, loaded.tokenizer
    result = analysis.analyze(model, tokenizer, "a wonderful film with great acting and a moving story")
    added = [i for i, token in enumerate(result.token_ids) if token in model.added_token_ids]
    assert added == [0, len(result.tokens) - 1]
    for seed in range(4):
        view = word_order.word_order_view(model, tokenizer, result, seed=seed)
        assert [view.reordered_tokens[i] for i in added] == [result.tokens[i] for i in added]
        assert view.reordered_tokens != result.tokens and sorted(view.reordered_tokens) == sorted(result.tokens)
        assert view.difference_without_encoding < 1e-5, (seed, view.difference_without_encoding)
    summary, figure = word_order.word_order_panel(view)
    assert "first token the classifier reads stays in place" in summary and "mean pooling" not in summary
    assert "&lt;s&gt;" in summary and "<s>" not in summary  # named, escaped
    assert "first token" in figure.layout.title.text
    tutorial = word_order.word_order_panel(word_order.word_order_view(*build_tutorial(), seed=1))
    assert "mean pooling cannot see order" in tutorial[0] and "mean pooling" in tutorial[1].layout.title.text


def build_tutorial() -> tuple:
    """The tiny tutorial model, its tokenizer and an analysis of a short sentence."""
    tokenizer = build_tokenizer()
    model = build_model(tokenizer)
    return model, tokenizer, analysis.analyze(model, tokenizer, "a wonderful film , the acting was dull")
