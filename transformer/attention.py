"""Scaled dot-product attention and multi-head attention (tutorial sections 3 and 4).

Shape letters: B = batch, H = heads, N = query length, M = key length, D = d_model, d_k = D // H.

Mask convention inside the model: a boolean tensor broadcastable to (B, H, N, M) in which
True means "may attend", the meaning torch's SDPA gives a boolean mask. The classifier builds it
once from the user-facing ``attention_mask`` (1 = token, 0 = padding).
"""

import math

import torch
import torch.nn.functional as F
from torch import nn


def scaled_dot_product_attention(Q, K, V, mask=None, dropout=None):
    """softmax(Q Kᵀ / √d_k) V, written out so the weights can be returned.

    Args:
        Q, K, V: queries, keys and values.
        mask: optional boolean mask, True = attend; masked keys get exactly zero weight.
        dropout: optional ``nn.Dropout`` applied to the weights.

    Shape:
        Q: (..., N, d_k); K: (..., M, d_k); V: (..., M, d_v); mask broadcastable to (..., N, M).

    Returns:
        (output (..., N, d_v), weights (..., N, M)); weights are taken before dropout.
    """
    d_k = Q.size(-1)
    scores = Q @ K.transpose(-2, -1) / math.sqrt(d_k)  # (..., N, M)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(dim=-1)
    attended = dropout(weights) if dropout is not None else weights
    return attended @ V, weights


class MultiHeadAttention(nn.Module):
    """Multi-head attention with separate W_q, W_k, W_v and output projection W_o."""

    def __init__(self, d_model: int = 512, num_heads: int = 8, dropout: float = 0.1):
        super().__init__()
        if d_model % num_heads:
            raise ValueError(f"d_model ({d_model}) must be divisible by num_heads ({num_heads})")
        self.d_model = d_model
        self.num_heads = num_heads
        self.d_k = d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def split_heads(self, x: torch.Tensor) -> torch.Tensor:
        """(B, N, D) -> (B, H, N, d_k)."""
        B, N, _ = x.shape
        return x.view(B, N, self.num_heads, self.d_k).transpose(1, 2)  # (B, H, N, d_k)

    def forward(self, query, key, value, mask=None, need_weights=False, head_mask=None):
        """Attend from ``query`` to ``key``/``value`` in H heads.

        Args:
            query, key, value: inputs (the same tensor for self-attention).
            mask: optional boolean mask, True = attend.
            need_weights: if True, run the explicit path and return the per-head weights;
                otherwise run ``F.scaled_dot_product_attention`` (fused kernels where available).
            head_mask: optional per-head multiplier, 1 = keep, 0 = knock the head out. It scales the
                head's output before W_o, so a fully knocked-out layer outputs only W_o's bias.

        Shape:
            query: (B, N, D); key, value: (B, M, D); mask broadcastable to (B, H, N, M);
            head_mask: (H,) or (B, H).

        Returns:
            (output (B, N, D), weights (B, H, N, M) or None).
        """
        Q = self.split_heads(self.W_q(query))  # (B, H, N, d_k)
        K = self.split_heads(self.W_k(key))  # (B, H, M, d_k)
        V = self.split_heads(self.W_v(value))  # (B, H, M, d_k)
        if need_weights:
            heads, weights = scaled_dot_product_attention(Q, K, V, mask, self.dropout)
        else:
            p = self.dropout.p if self.training else 0.0
            heads, weights = F.scaled_dot_product_attention(Q, K, V, attn_mask=mask, dropout_p=p), None
        if head_mask is not None:
            heads = heads * head_mask.to(heads).reshape(-1, self.num_heads, 1, 1)  # (B or 1, H, 1, 1)
        B, _, N, _ = heads.shape
        merged = heads.transpose(1, 2).reshape(B, N, self.d_model)  # (B, N, D)
        return self.W_o(merged), weights
