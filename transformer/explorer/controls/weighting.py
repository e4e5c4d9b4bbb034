"""Attention as weights, or weighted by what each key moves: the option of the Attention and All heads tabs, and the
``/attention_norms`` endpoint.

Shape letters: L = layers, H = heads, N = tokens.

The analysis keeps ‖f(x_j)‖ for every head and key (``Analysis.value_norms``), so switching redraws from it with no
model call.
"""

from __future__ import annotations

import gradio as gr
import numpy as np

from ...explain.attention_norms import weighted
from .. import runner
from ..analysis import Analysis
from ..inputs import choice
from ..payloads import chosen_maps
from ..registry import Reading

WEIGHTS, NORMS = "weights", "norms"
CHOICES = [("weights", WEIGHTS), ("weight × ‖f(x)‖", NORMS)]
NOTE = (
    "**weight × ‖f(x)‖** (Kobayashi et al. 2020) scales each key's weight by the length of what the head moves "
    "from it: the key's value vector through the head's slice of the output projection. A large weight on a vector "
    "near zero (often a special token or punctuation) moves almost nothing, so the two pictures can disagree."
)


def control(elem_id: str) -> gr.Radio:
    """The radio that switches a tab between the weights and weight × ‖f(x)‖."""
    return gr.Radio(CHOICES, value=WEIGHTS, label="Show", elem_id=elem_id)


def read(value: str, reading: Reading) -> str | None:
    """The address reader of a weighting parameter."""
    return choice(value, [WEIGHTS, NORMS])


def value_name(weighting: str) -> str:
    """What a cell holds, for a hover and a colour bar."""
    return "weight × ‖f(x)‖" if weighting == NORMS else "weight"


def attentions(result: Analysis, weighting: str = WEIGHTS) -> np.ndarray:
    """Every head's weights, or weight × ‖f(x_j)‖, from the kept analysis: (L, H, N, N)."""
    return weighted(result.attentions, result.value_norms) if weighting == NORMS else result.attentions


def attention_norms(text: str, layer: int | list[int] | None = None, head: int | list[int] | None = None) -> dict:
    """The attention of the heads chosen with ``layer`` and ``head`` (every head by default) weighted by what it
    moves (Kobayashi et al. 2020): weight × ‖f(x_j)‖, where f(x_j) is key j's value vector (bias included) times
    the head's slice of the output projection W_o.
    Layers and heads count from 1 and token positions from 0, in every argument and answer.

    Args:
        text: the text to read (at most 10,000 characters; the model reads its first max_len tokens).
        layer: the layers to answer: one number or a list; none (or []) for every layer.
        head: the heads of those layers to answer: one number or a list; none (or []) for every head. An answer
            holds at most 8 MB of maps: beyond that, choose some.

    Returns:
        {"tokens": [...], "layers", "heads" (the chosen ones), "norms": [layer][head][query][key],
        "value_norms": [layer][head][key] (‖f(x_j)‖)}, for those layers and heads; norms / weights depends on the
        key only.
    """
    result = runner.read_for_api(text)
    with runner.clear_errors("Cannot answer this"):
        maps = chosen_maps(
            attentions(result, NORMS), layer, head, "norms", runner.API_DECIMALS, value_norms=result.value_norms
        )
    return {"tokens": result.tokens, **maps}
