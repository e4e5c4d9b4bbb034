"""Sweep: the Walkthrough's every step at every token count from 1 to 128, drawn as the page draws it
(``walkthrough.draw_step``: its text, its code and its figure), at the first and the last layer and head in turn.

A step's figure was refused by plotly for about one length in ten (step 11's stacked panels, a domain below 0), so
every length is drawn; the figures are built unvalidated for speed, as the page builds them, every axis domain is
checked against [0, 1] as plotly checks it, and every step's figure at a sample of lengths is validated whole.
"""

import plotly.graph_objects as go
import pytest
import torch
from tiny import tiny_model

from transformer.explain.walkthrough import walk_through
from transformer.explorer.views.walkthrough import SOURCES, STEPS, WalkView, code_block, draw_step

pytestmark = pytest.mark.slow  # many seconds: left out of make test-fast

MAX_TOKENS = 128
VALIDATED = {1, 8, 31, 128}  # lengths whose figures plotly validates whole (slow): the ends and two that once failed


@pytest.fixture(scope="module")
def model():
    return tiny_model(seed=3, max_len=MAX_TOKENS, num_heads=4)


def axis_domains(figure: go.Figure) -> list[list[float]]:
    """Every axis's domain, read from the layout alone (``to_dict`` would copy every matrix too)."""
    return [axis["domain"] for name, axis in figure.layout.to_plotly_json().items() if name[1:5] == "axis"]


def test_every_step_draws_at_every_length_up_to_128(model):
    ids = torch.randint(5, 50, (1, MAX_TOKENS), generator=torch.Generator().manual_seed(0))
    ids[0, 60:] = ids[0, :8].repeat(9)[:68]  # repeated words, as in the sentences that failed
    for n in range(1, MAX_TOKENS + 1):
        view = WalkView([f"w{i}" for i in range(n)], walk_through(model, ids[:, :n]))
        layer, head = (1, 1) if n % 2 else (model.num_layers, model.num_heads)  # each end in turn
        for step in range(1, len(STEPS) + 1):
            text, code, figure = draw_step(view, step, layer, head)
            assert text.startswith(f"### {step}.") and code == code_block(SOURCES[step - 1])
            for low, high in axis_domains(figure):
                assert 0.0 <= low < high <= 1.0, (n, step, low, high)
            if n in VALIDATED:
                go.Figure(figure.to_dict())  # raises on anything plotly does not accept
