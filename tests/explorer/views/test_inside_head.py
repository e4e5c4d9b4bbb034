"""The Inside-a-head tab (transformer.explorer.views.inside_head): ``/head_internals``'s scores against the
model's weights."""

import math

import numpy as np
import pytest
from app_fixtures import SENTENCE, close

from transformer.explorer import views


def test_head_internals_endpoint_scales_by_root_dk_and_matches_the_models_weights(app, result):
    answer = views.inside_head.head_internals(SENTENCE, layer=2, head=1)["scores"]
    raw, scaled, weights = (np.array(answer[key]) for key in ("raw", "scaled", "weights"))
    assert (answer["layer"], answer["head"], answer["d_k"]) == (2, 1, 8)  # as sent: layers and heads count from 1
    close(scaled, raw / math.sqrt(8), atol=1e-5)
    close(weights, result.attentions[1, 0], atol=1e-5)
    by_hand = -(weights * np.log(np.where(weights > 0, weights, 1))).sum(axis=-1)
    close(answer["entropy"], by_hand, atol=1e-4)
    assert answer["max_entropy"] == pytest.approx(math.log(len(result.tokens)), abs=1e-6)
