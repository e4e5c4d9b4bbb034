"""Position-wise feed-forward network (tutorial section 5).

Shape letters: B = batch, N = sequence length, D = d_model.
"""

import torch
from torch import nn


class PositionWiseFeedForward(nn.Module):
    """Linear(D, d_ff) -> GELU -> dropout -> Linear(d_ff, D), applied to every position alike."""

    def __init__(self, d_model: int = 512, d_ff: int = 2048, dropout: float = 0.1):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.activation = nn.GELU()
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Transform each position independently.

        Args:
            x: hidden states.

        Shape:
            x: (B, N, D). Returns (B, N, D).
        """
        return self.linear2(self.dropout(self.activation(self.linear1(x))))
