"""Reading attention: rollout, inside one head, entropy, two-sentence comparison, colour ranges."""

import math

import pytest
import torch
from tiny import tiny_model

from transformer.explain import (
    align_tokens,
    aligned_difference,
    attention_entropy,
    attention_rollout,
    compare_sentences,
    head_scores,
    pooled_attention,
    pooled_relevance,
    predict,
    predict_with_knockout,
    stack_attentions,
)
from transformer.explain.attention_norms import attention_norms
from transformer.explorer.drawing.colour import normalise_attention

SENTENCE = torch.tensor([[5, 9, 3, 7, 9, 12]])


def test_rollout_rows_sum_to_one_and_follow_the_recursion():
    attentions = predict(tiny_model(), SENTENCE).attentions
    rollout = attention_rollout(attentions)
    assert rollout.shape == (2, 6, 6)
    torch.testing.assert_close(rollout.sum(dim=-1), torch.ones(2, 6))
    eye = torch.eye(6)
    first, second = (0.5 * a[0].mean(dim=0) + 0.5 * eye for a in attentions)
    torch.testing.assert_close(rollout[0], first)
    torch.testing.assert_close(rollout[1], second @ first)


def test_pooled_relevance_is_the_column_mean_and_sums_to_one():
    attentions = predict(tiny_model(), SENTENCE).attentions
    rollout = attention_rollout(attentions)
    pooled = pooled_relevance(rollout)
    assert pooled.shape == (2, 6)
    torch.testing.assert_close(pooled[1], rollout[1].sum(dim=0) / 6)
    torch.testing.assert_close(pooled.sum(dim=-1), torch.ones(2))
    torch.testing.assert_close(pooled_attention(attentions), attentions[-1][0].mean(dim=(0, 1)))


def test_rollout_needs_a_batch_of_one():
    attentions = predict(tiny_model(), SENTENCE).attentions
    with pytest.raises(ValueError, match=r"\(1, H, N, N\)"):
        stack_attentions([torch.cat([a, a]) for a in attentions])


@pytest.mark.parametrize("norm_first", [True, False])
@pytest.mark.parametrize("positional_encoding", [None, False])
def test_recomputed_head_weights_equal_the_models_attentions(norm_first, positional_encoding):
    model = tiny_model(norm_first=norm_first)
    attentions = predict(model, SENTENCE, positional_encoding=positional_encoding).attentions
    for layer in range(2):
        for head in range(2):
            scores = head_scores(model, SENTENCE, layer, head, positional_encoding=positional_encoding)
            torch.testing.assert_close(scores.weights, attentions[layer][0, head])


def test_scaled_scores_are_raw_over_root_dk_and_softmax_of_each():
    scores = head_scores(tiny_model(), SENTENCE, 1, 0)
    assert scores.d_k == 8
    torch.testing.assert_close(scores.scaled, scores.raw / math.sqrt(8))
    torch.testing.assert_close(scores.weights_unscaled, scores.raw.softmax(dim=-1))
    torch.testing.assert_close(scores.entropy, attention_entropy(scores.weights))
    assert scores.mean_entropy == pytest.approx(scores.entropy.mean().item())
    assert scores.max_entropy == pytest.approx(math.log(6))
    # Softmax entropy rises with temperature, and dividing by √d_k > 1 is a temperature above 1.
    assert (scores.entropy >= scores.entropy_unscaled - 1e-6).all()


def test_entropy_against_hand_computation():
    weights = torch.tensor([[0.25, 0.25, 0.25, 0.25], [0.5, 0.5, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.7, 0.2, 0.1, 0.0]])
    expected = torch.tensor(
        [math.log(4), math.log(2), 0.0, -(0.7 * math.log(0.7) + 0.2 * math.log(0.2) + 0.1 * math.log(0.1))]
    )
    torch.testing.assert_close(attention_entropy(weights), expected)


def test_head_scores_follow_knocked_out_heads_in_earlier_layers():
    model = tiny_model()
    head_mask = torch.tensor([[0.0, 1.0], [1.0, 1.0]])
    knocked_out = predict_with_knockout(model, SENTENCE, head_mask).attentions
    scores = head_scores(model, SENTENCE, 1, 1, head_mask=head_mask)
    torch.testing.assert_close(scores.weights, knocked_out[1][0, 1])
    assert not torch.allclose(scores.weights, predict(model, SENTENCE).attentions[1][0, 1])


def test_align_tokens_pairs_equal_tokens_in_order():
    assert align_tokens(["good"], ["not", "good"]) == [(0, 1)]
    assert align_tokens(["the", "dog", "bit", "the", "man"], ["the", "dog", "did", "not", "bite", "the", "man"]) == [
        (0, 0),
        (1, 1),
        (3, 5),
        (4, 6),
    ]


def test_aligned_difference_by_hand():
    a = torch.tensor([[0.6, 0.4], [0.3, 0.7]])
    b = torch.tensor([[0.5, 0.2, 0.3], [0.1, 0.1, 0.8], [0.2, 0.2, 0.6]])
    difference = aligned_difference(a, b, [(0, 1), (1, 2)])
    torch.testing.assert_close(difference, torch.tensor([[0.1 - 0.6, 0.8 - 0.4], [0.2 - 0.3, 0.6 - 0.7]]))


def test_compare_sentences_lines_up_one_head():
    model = tiny_model()
    ids_a, ids_b = torch.tensor([[7, 11]]), torch.tensor([[4, 7, 11]])
    comparison = compare_sentences(model, ids_a, ids_b, ["very", "good"], ["not", "very", "good"], layer=1, head=0)
    assert comparison.pairs == [(0, 1), (1, 2)]
    torch.testing.assert_close(comparison.attention_b, predict(model, ids_b).attentions[1][0, 0])
    torch.testing.assert_close(comparison.difference, comparison.attention_b[1:, 1:] - comparison.attention_a)
    torch.testing.assert_close(comparison.probs_a, predict(model, ids_a).probs)


def test_global_and_row_scales():
    matrix = torch.tensor([[0.8, 0.1, 0.1], [0.6, 0.2, 0.2], [0.5, 0.4, 0.1]])
    torch.testing.assert_close(normalise_attention(matrix), matrix / 0.8)
    torch.testing.assert_close(normalise_attention(matrix, "row"), matrix / torch.tensor([[0.8], [0.6], [0.5]]))


def test_excluded_tokens_set_no_range_and_are_clipped():
    matrix = torch.tensor([[0.8, 0.1, 0.1], [0.6, 0.2, 0.2], [0.5, 0.4, 0.1]])
    shown = normalise_attention(matrix, "global", exclude=[0])  # token 0 takes most of the attention
    expected = (matrix / 0.4).clamp(max=1.0)  # largest among rows 1-2, columns 1-2
    torch.testing.assert_close(shown, expected)
    by_row = normalise_attention(matrix, "row", exclude=[0])
    torch.testing.assert_close(by_row, (matrix / torch.tensor([[0.1], [0.2], [0.4]])).clamp(max=1.0))


def test_signed_matrices_keep_their_sign():
    difference = torch.tensor([[0.2, -0.4], [0.1, 0.0]])
    torch.testing.assert_close(normalise_attention(difference), difference / 0.4)


def test_attention_norms_answer_numbers_without_an_autograd_graph():
    """Kills ``attention_norms`` without ``no_grad``: its answer holds no graph back to the model's parameters (which
    would keep every intermediate tensor of the pass alive for as long as the answer is kept)."""
    model = tiny_model()
    assert any(parameter.requires_grad for parameter in model.parameters())
    answer = attention_norms(model, SENTENCE)
    for tensor in (answer.weights, answer.value_norms, answer.norms):
        assert not tensor.requires_grad and tensor.grad_fn is None
