"""Sinusoidal positional encoding against its closed form."""

import math

import pytest
import torch

from transformer import PositionalEncoding, sinusoidal_table


@pytest.mark.parametrize("d_model", [8, 7])
def test_table_matches_closed_form(d_model):
    table = sinusoidal_table(50, d_model)
    assert table.shape == (50, d_model)
    for pos in (0, 1, 17, 49):
        for dim in range(d_model):
            i = dim // 2
            angle = pos / 10000 ** (2 * i / d_model)
            expected = math.sin(angle) if dim % 2 == 0 else math.cos(angle)
            assert table[pos, dim].item() == pytest.approx(expected, abs=1e-5)


def test_module_adds_table_and_keeps_it_out_of_the_state_dict():
    pe = PositionalEncoding(d_model=6, max_len=20, dropout=0.0)
    x = torch.randn(2, 5, 6)
    torch.testing.assert_close(pe(x), x + sinusoidal_table(20, 6)[:5])
    assert "pe" not in pe.state_dict()  # recomputed exactly, so not saved
    assert not any(p.requires_grad for p in pe.buffers())


def test_too_long_input_is_a_clear_error():
    with pytest.raises(ValueError, match="exceeds max_len 4"):
        PositionalEncoding(6, max_len=4)(torch.zeros(1, 5, 6))
