"""The ``/predict`` and ``/attention`` answers: an ``Analysis`` as JSON, rounded."""

from __future__ import annotations

import numpy as np

from .analysis import Analysis

PAYLOAD_DECIMALS = 4


def label_payload(result: Analysis) -> dict:
    """The ``/predict`` answer, in ``gr.Label``'s format: {"label", "confidences": [{"label", "confidence"}]}."""
    ranked = sorted(result.prediction.items(), key=lambda item: item[1], reverse=True)
    return {
        "label": ranked[0][0],
        "confidences": [{"label": name, "confidence": round(p, PAYLOAD_DECIMALS)} for name, p in ranked],
    }


def attention_payload(result: Analysis) -> dict:
    """The ``/attention`` answer: tokens and weights as nested lists [layer][head][query][key], rounded."""
    return {
        "tokens": result.tokens,
        "offsets": [list(span) for span in result.offsets],
        "truncated": result.truncated,
        # float64 before rounding: a rounded float32 prints as 0.12280000001192093 in JSON
        "attentions": np.round(result.attentions.astype(np.float64), PAYLOAD_DECIMALS).tolist(),
    }
