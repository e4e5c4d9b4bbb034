"""One Transformer encoder block (tutorial section 6).

Shape letters: B = batch, N = sequence length, D = d_model, H = heads.
"""

from torch import nn

from .attention import MultiHeadAttention
from .feed_forward import PositionWiseFeedForward


class TransformerEncoderBlock(nn.Module):
    """Self-attention and feed-forward sub-layers, each wrapped in a residual connection.

    Pre-LN (default): x + Sublayer(LayerNorm(x)), which trains stably without warm-up tricks.
    Post-LN (``norm_first=False``, the original paper): LayerNorm(x + Sublayer(x)).
    Both use the same parameters, so a checkpoint loads into either.
    """

    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.1, norm_first: bool = True):
        super().__init__()
        self.attention = MultiHeadAttention(d_model, num_heads, dropout)
        self.feed_forward = PositionWiseFeedForward(d_model, d_ff, dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x, mask=None, need_weights=False, head_mask=None):
        """Run both sub-layers.

        Args:
            x: hidden states.
            mask: optional boolean attention mask, True = attend.
            need_weights: return this block's attention weights.
            head_mask: optional per-head multiplier (see ``MultiHeadAttention``).

        Shape:
            x: (B, N, D); mask broadcastable to (B, H, N, N).

        Returns:
            (x (B, N, D), weights (B, H, N, N) or None).
        """
        if self.norm_first:
            h = self.norm1(x)
            attended, weights = self.attention(h, h, h, mask, need_weights, head_mask)
            x = x + self.dropout(attended)
            x = x + self.dropout(self.feed_forward(self.norm2(x)))
        else:
            attended, weights = self.attention(x, x, x, mask, need_weights, head_mask)
            x = self.norm1(x + self.dropout(attended))
            x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return x, weights
