"""Sinusoidal positional encoding (tutorial section 2).

Shape letters: B = batch, N = sequence length, D = d_model.
"""

import math

import torch
from torch import nn


def sinusoidal_table(max_len: int, d_model: int) -> torch.Tensor:
    """The fixed sinusoidal table, PE[pos, 2i] = sin(pos / 10000^(2i/D)), PE[pos, 2i+1] = cos(same).

    Returns:
        A float32 tensor of shape (max_len, d_model). Pure: the UI plots it directly.
    """
    position = torch.arange(max_len, dtype=torch.float32).unsqueeze(1)  # (max_len, 1)
    div_term = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float32) * (-math.log(10000.0) / d_model))
    table = torch.zeros(max_len, d_model)
    table[:, 0::2] = torch.sin(position * div_term)
    table[:, 1::2] = torch.cos(position * div_term[: d_model // 2])  # odd d_model has one cos column fewer
    return table


class PositionalEncoding(nn.Module):
    """Adds the sinusoidal table to token embeddings, then applies dropout."""

    def __init__(self, d_model: int, max_len: int = 5000, dropout: float = 0.1):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        # A buffer moves with .to(device) but is never trained; not persistent because it is
        # recomputed exactly from (max_len, d_model), which keeps it out of model.safetensors.
        self.register_buffer("pe", sinusoidal_table(max_len, d_model).unsqueeze(0), persistent=False)  # (1, max_len, D)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Add position information.

        Args:
            x: token embeddings.

        Shape:
            x: (B, N, D) with N <= max_len. Returns (B, N, D).
        """
        if x.size(1) > self.pe.size(1):
            raise ValueError(f"sequence length {x.size(1)} exceeds max_len {self.pe.size(1)}")
        return self.dropout(x + self.pe[:, : x.size(1)].to(x.dtype))
