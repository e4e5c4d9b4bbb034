"""Colour scales for attention views that stay readable when a few tokens take most of the weight.

Shape letters: N = query tokens, M = key tokens.
"""

from collections.abc import Iterable

import torch


def normalise_attention(matrix: torch.Tensor, scale: str = "global", exclude: Iterable[int] = ()) -> torch.Tensor:
    """Divide by the largest magnitude, over the whole matrix or per row, leaving chosen tokens out of it.

    Special or padding tokens often take most of the attention and wash out the rest; positions in
    ``exclude`` neither set the range as queries (rows) nor as keys (columns). Their own cells are
    still drawn, clipped to the range. Signed matrices (differences) keep their sign.

    Args:
        matrix: attention weights or differences.
        scale: "global", one range for the matrix; "row", one per query, to compare where each
            token looks whatever its largest weight.
        exclude: positions (rows and columns both) to leave out of the range.

    Shape:
        matrix: (N, M). Returns (N, M) in [-1, 1] ([0, 1] for attention weights).
    """
    if scale not in ("global", "row"):
        raise ValueError(f'scale must be "global" or "row", got {scale!r}')
    n, m = matrix.shape
    excluded = torch.tensor(sorted(set(exclude)), dtype=torch.long)
    keep_rows, keep_cols = torch.ones(n, dtype=torch.bool), torch.ones(m, dtype=torch.bool)
    keep_rows[excluded[excluded < n]] = False
    keep_cols[excluded[excluded < m]] = False
    magnitude = matrix.abs().masked_fill(~keep_cols, 0.0)  # (N, M): excluded keys set no range
    if scale == "row":
        limit = magnitude.amax(dim=1, keepdim=True)  # (N, 1)
    else:
        limit = magnitude[keep_rows].amax() if keep_rows.any() else magnitude.new_zeros(())
    limit = limit.masked_fill(limit == 0, 1.0)  # an all-zero range leaves the values as they are
    return (matrix / limit).clamp(-1.0, 1.0)
