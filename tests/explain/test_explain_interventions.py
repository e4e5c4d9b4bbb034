"""Experiments that change the model or the input: head knockout, token perturbation, word order."""

import functools

import pytest
import torch
from tiny import tiny_model as shared_tiny_model

from transformer.explain import (
    head_importance,
    layer_input,
    perturb_token,
    predict,
    predict_with_knockout,
    shuffled_permutation,
    word_order_experiment,
)

tiny_model = functools.partial(shared_tiny_model, num_classes=3, num_layers=3)
SENTENCE = torch.tensor([[5, 9, 3, 7, 9, 12]])


@torch.no_grad()
def finish_by_hand(model, x, first_layer):
    """Run blocks ``first_layer``.. with every head on, then the final norm, mean pooling and the head."""
    for block in model.layers[first_layer:]:
        x, _ = block(x)
    return model.classifier(model.norm(x).mean(dim=1))[0]


@pytest.mark.parametrize("norm_first", [True, False])
@pytest.mark.parametrize("layer", [0, 1, 2])
def test_knocking_out_a_whole_layer_leaves_only_the_output_bias(norm_first, layer):
    model = tiny_model(norm_first=norm_first)
    head_mask = torch.ones(3, 2)
    head_mask[layer] = 0.0
    x = layer_input(model, SENTENCE, layer)
    block = model.layers[layer]
    with torch.no_grad():
        bias = block.attention.W_o.bias
        if norm_first:  # x + b_o, then the feed-forward sub-layer
            hand = x + bias
            hand = hand + block.feed_forward(block.norm2(hand))
        else:
            hand = block.norm1(x + bias)
            hand = block.norm2(hand + block.feed_forward(hand))
        got, _ = block(x, None, False, head_mask[layer])
    torch.testing.assert_close(got, hand)
    torch.testing.assert_close(
        predict_with_knockout(model, SENTENCE, head_mask).logits, finish_by_hand(model, hand, layer + 1)
    )


def test_knockout_changes_the_prediction_and_keeps_the_attention_maps():
    model = tiny_model()
    head_mask = torch.ones(3, 2)
    head_mask[1, 0] = 0.0
    full, knocked = predict(model, SENTENCE), predict_with_knockout(model, SENTENCE, head_mask)
    assert not torch.allclose(full.probs, knocked.probs)
    torch.testing.assert_close(knocked.attentions[0], full.attentions[0])  # layers before the knockout are untouched
    with pytest.raises(ValueError, match="head_mask must have shape"):
        predict_with_knockout(model, SENTENCE, torch.ones(2, 3))


@pytest.mark.parametrize("target", [None, 2])
def test_batched_head_importance_equals_one_forward_per_head(target):
    model = tiny_model()
    importance = head_importance(model, SENTENCE, target)
    base = predict(model, SENTENCE).probs
    expected_target = int(base.argmax()) if target is None else target
    assert importance.target == expected_target
    assert importance.base_prob == pytest.approx(base[expected_target].item(), abs=1e-6)
    expected = torch.empty(3, 2)
    for layer in range(3):
        for head in range(2):
            head_mask = torch.ones(3, 2)
            head_mask[layer, head] = 0.0
            expected[layer, head] = predict_with_knockout(model, SENTENCE, head_mask).probs[expected_target]
    torch.testing.assert_close(importance.ablated_prob, expected, atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(importance.drop, base[expected_target] - expected, atol=1e-6, rtol=1e-5)


def test_removing_a_token_shortens_the_sentence():
    model = tiny_model()
    result = perturb_token(model, SENTENCE, 2, mode="remove")
    torch.testing.assert_close(result.input_ids, torch.tensor([[5, 9, 7, 9, 12]]))
    torch.testing.assert_close(result.probs_after, predict(model, result.input_ids).probs)
    torch.testing.assert_close(result.change, result.probs_after - result.probs_before)
    assert result.change.sum().item() == pytest.approx(0.0, abs=1e-6)


def test_masking_a_token_replaces_it():
    model = tiny_model()
    result = perturb_token(model, SENTENCE, 0, mode="mask", mask_id=4)
    torch.testing.assert_close(result.input_ids, torch.tensor([[4, 9, 3, 7, 9, 12]]))
    torch.testing.assert_close(result.probs_before, predict(model, SENTENCE).probs)
    assert not torch.allclose(result.probs_after, result.probs_before)
    assert SENTENCE[0, 0] == 5  # the caller's ids are left alone


def test_perturbation_rejects_what_it_cannot_do():
    model = tiny_model()
    with pytest.raises(ValueError, match="mask_id"):
        perturb_token(model, SENTENCE, 0, mode="mask")
    with pytest.raises(ValueError, match="only token"):
        perturb_token(model, SENTENCE[:, :1], 0, mode="remove")
    with pytest.raises(ValueError, match="position"):
        perturb_token(model, SENTENCE, 6, mode="remove")


def test_shuffled_permutation_is_seeded_and_never_the_identity():
    for n in range(2, 6):
        for seed in range(20):
            permutation = shuffled_permutation(n, seed)
            assert sorted(permutation.tolist()) == list(range(n))
            assert permutation.tolist() != list(range(n))
    torch.testing.assert_close(shuffled_permutation(9, 3), shuffled_permutation(9, 3))
    assert shuffled_permutation(1).tolist() == [0]


def test_word_order_matters_only_with_positional_encoding():
    model = tiny_model()
    reordered = SENTENCE[:, shuffled_permutation(6, seed=1)]
    result = word_order_experiment(model, SENTENCE, reordered)
    assert result.is_permutation
    assert result.logits.shape == (2, 2, 3)
    torch.testing.assert_close(result.logits[0, 1], result.logits[1, 1], atol=1e-5, rtol=0)  # PE off: identical
    assert (result.logits[0, 0] - result.logits[1, 0]).abs().max() > 1e-3  # PE on: they differ
    torch.testing.assert_close(result.logits[0, 0], predict(model, SENTENCE).logits)
    torch.testing.assert_close(result.logits[1, 1], predict(model, reordered, positional_encoding=False).logits)
    torch.testing.assert_close(result.probs, result.logits.softmax(dim=-1))


def test_word_order_flags_a_sentence_that_is_not_a_reordering():
    model = tiny_model()
    assert not word_order_experiment(model, SENTENCE, torch.tensor([[5, 9, 3, 7, 9, 13]])).is_permutation
    with pytest.raises(ValueError, match="same length"):
        word_order_experiment(model, SENTENCE, SENTENCE[:, :4])


def test_explanations_need_eval_mode_and_one_sentence():
    model = tiny_model()
    with pytest.raises(ValueError, match=r"\(1, N\)"):
        predict(model, torch.cat([SENTENCE, SENTENCE]))
    with pytest.raises(ValueError, match="eval"):
        predict(model.train(), SENTENCE)
