"""Colour scales for attention views that stay readable when a few tokens take most of the weight.

Shape letters: N = query tokens, M = key tokens.
"""

import unicodedata
from collections.abc import Iterable, Sequence

import torch

from ...tokenizer import SPECIAL_TOKENS

SCALES = ("global", "row")
# What the colour scale can leave out: (what the page says, the value in the address and the API)
LEAVE_OUT = [("special tokens ([PAD], [UNK], [MASK], [CLS], [SEP])", "special"), ("punctuation", "punctuation")]
# The tutorial's special tokens, then those a Hub model's tokenizer adds: BERT's and DistilBERT's, RoBERTa's.
SPECIAL = {*SPECIAL_TOKENS, "[CLS]", "[SEP]", "<s>", "</s>", "<pad>", "<unk>", "<mask>"}


def colour_scale(scale: str | None) -> str:
    """The colour-scale choice, "global" unless it is one of ``SCALES``."""
    return scale if scale in SCALES else "global"


def excluded_positions(tokens: Sequence[str], leave_out: Sequence[str] | None) -> list[int]:
    """The positions of the tokens that ``leave_out`` ("special", "punctuation") keeps out of the colour range."""
    chosen = set(leave_out or ())
    return [
        position
        for position, token in enumerate(tokens)
        if ("special" in chosen and token in SPECIAL)
        or ("punctuation" in chosen and all(unicodedata.category(char).startswith("P") for char in token))
    ]


def colour_limit(matrix: torch.Tensor, scale: str = "global", exclude: Iterable[int] = ()) -> torch.Tensor:
    """The largest magnitude that sets the colour range, over the whole matrix or per row, chosen tokens left out.

    Special or padding tokens often take most of the attention and wash out the rest; positions in
    ``exclude`` neither set the range as queries (rows) nor as keys (columns). A range of 0 (nothing
    left to set it) becomes 1, which leaves the values as they are.

    Args:
        matrix: attention weights or differences.
        scale: "global", one range for the matrix; "row", one per query, to compare where each
            token looks whatever its largest weight.
        exclude: positions (rows and columns both) to leave out of the range.

    Shape:
        matrix: (..., N, M), one map or several on one range. Returns () for "global", (..., N, 1) for "row".
    """
    if scale not in SCALES:
        raise ValueError(f'scale must be "global" or "row", got {scale!r}')
    *_, n, m = matrix.shape
    excluded = torch.tensor(sorted(set(exclude)), dtype=torch.long, device=matrix.device)
    keep_rows = torch.ones(n, dtype=torch.bool, device=matrix.device)
    keep_cols = torch.ones(m, dtype=torch.bool, device=matrix.device)
    keep_rows[excluded[excluded < n]] = False
    keep_cols[excluded[excluded < m]] = False
    # copies only where needed: a map of 72 heads at 512 tokens is 75 MB
    magnitude = matrix.abs() if matrix.numel() and matrix.min() < 0 else matrix  # (..., N, M)
    if not keep_cols.all():
        magnitude = magnitude.masked_fill(~keep_cols, 0.0)  # excluded keys set no range
    if scale == "row":
        limit = magnitude.amax(dim=-1, keepdim=True)  # (..., N, 1)
    elif keep_rows.any():
        limit = (magnitude if keep_rows.all() else magnitude[..., keep_rows, :]).amax()
    else:
        limit = magnitude.new_zeros(())
    return limit.masked_fill(limit == 0, 1.0)


def normalise_attention(matrix: torch.Tensor, scale: str = "global", exclude: Iterable[int] = ()) -> torch.Tensor:
    """Divide by ``colour_limit``, clipping the excluded tokens' own cells to the range; signs are kept.

    Args:
        matrix: attention weights or differences.
        scale, exclude: as in ``colour_limit``.

    Shape:
        matrix: (..., N, M). Returns (..., N, M) in [-1, 1] ([0, 1] for attention weights).
    """
    return (matrix / colour_limit(matrix, scale, exclude)).clamp_(-1.0, 1.0)
