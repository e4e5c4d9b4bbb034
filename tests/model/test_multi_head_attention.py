"""Scaled dot-product and multi-head attention: invariants and parity with torch."""

import math

import pytest
import torch
from torch import nn

from transformer import MultiHeadAttention, scaled_dot_product_attention


def key_mask(lengths, n):
    """Boolean (B, 1, 1, n) mask, True = attend, from per-row lengths."""
    return (torch.arange(n)[None, :] < torch.tensor(lengths)[:, None])[:, None, None, :]


def test_weights_rows_sum_to_one_and_padded_keys_get_zero():
    torch.manual_seed(0)
    Q, K, V = torch.randn(3, 2, 5, 4), torch.randn(3, 2, 5, 4), torch.randn(3, 2, 5, 4)
    mask = key_mask([5, 3, 1], 5)
    _, weights = scaled_dot_product_attention(Q, K, V, mask)
    torch.testing.assert_close(weights.sum(-1), torch.ones(3, 2, 5))
    assert weights[1, :, :, 3:].abs().max() == 0
    assert weights[2, :, :, 1:].abs().max() == 0


def test_matches_closed_form():
    torch.manual_seed(1)
    Q, K, V = torch.randn(1, 3, 8), torch.randn(1, 4, 8), torch.randn(1, 4, 6)
    out, weights = scaled_dot_product_attention(Q, K, V)
    expected_w = torch.softmax(Q @ K.transpose(1, 2) / math.sqrt(8), dim=-1)
    torch.testing.assert_close(weights, expected_w)
    torch.testing.assert_close(out, expected_w @ V)


@pytest.mark.parametrize("lengths", [[7, 7], [7, 4]])
def test_sdpa_path_equals_explicit_path(lengths):
    torch.manual_seed(2)
    mha = MultiHeadAttention(d_model=32, num_heads=4, dropout=0.0).eval()
    x = torch.randn(2, 7, 32)
    mask = key_mask(lengths, 7)
    explicit, weights = mha(x, x, x, mask, need_weights=True)
    fused, none = mha(x, x, x, mask, need_weights=False)
    assert none is None and weights.shape == (2, 4, 7, 7)
    torch.testing.assert_close(explicit, fused, atol=1e-6, rtol=1e-5)


def test_parity_with_torch_multihead_attention():
    torch.manual_seed(3)
    d_model, heads = 32, 4
    ours = MultiHeadAttention(d_model, heads, dropout=0.0).eval()
    ref = nn.MultiheadAttention(d_model, heads, dropout=0.0, batch_first=True).eval()
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([ours.W_q.weight, ours.W_k.weight, ours.W_v.weight]))
        ref.in_proj_bias.copy_(torch.cat([ours.W_q.bias, ours.W_k.bias, ours.W_v.bias]))
        ref.out_proj.weight.copy_(ours.W_o.weight)
        ref.out_proj.bias.copy_(ours.W_o.bias)
    x = torch.randn(2, 6, d_model)
    lengths = [6, 4]
    out, weights = ours(x, x, x, key_mask(lengths, 6), need_weights=True)
    padding = torch.arange(6)[None, :] >= torch.tensor(lengths)[:, None]  # torch's convention: True = ignore
    ref_out, ref_weights = ref(x, x, x, key_padding_mask=padding, need_weights=True, average_attn_weights=False)
    torch.testing.assert_close(out, ref_out, atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(weights, ref_weights, atol=1e-6, rtol=1e-5)


def test_head_mask_zero_leaves_output_bias():
    torch.manual_seed(4)
    mha = MultiHeadAttention(16, 2, dropout=0.0).eval()
    x = torch.randn(1, 3, 16)
    out, _ = mha(x, x, x, head_mask=torch.zeros(2))
    torch.testing.assert_close(out, mha.W_o.bias.expand(1, 3, 16))


def test_rejects_indivisible_heads():
    with pytest.raises(ValueError, match="divisible"):
        MultiHeadAttention(10, 3)
