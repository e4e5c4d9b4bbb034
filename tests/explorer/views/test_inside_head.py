"""The Inside-a-head tab (transformer.explorer.views.inside_head): ``/head_internals``'s scores against the
model's weights."""

import math

import gradio as gr
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


def test_head_internals_answers_the_chosen_queries_rows_and_every_querys_entropy(app, result):
    every = views.inside_head.head_internals(SENTENCE, layer=2, head=1)
    n = len(result.tokens)
    assert every["queries"] == list(range(n))  # every query by default: the tiny model's answer fits
    chosen = views.inside_head.head_internals(SENTENCE, layer=2, head=1, query=[n - 1, 0])
    assert chosen["queries"] == [0, n - 1]
    for name in views.inside_head.ROW_MAPS:
        assert chosen["scores"][name] == [every["scores"][name][0], every["scores"][name][n - 1]], name
    rest = {key: value for key, value in chosen["scores"].items() if key not in views.inside_head.ROW_MAPS}
    assert rest == {key: every["scores"][key] for key in rest}  # entropies for every query, layer, head, d_k
    with pytest.raises(gr.Error, match=f"Query position must be a whole number from 0 to {n - 1}"):
        views.inside_head.head_internals(SENTENCE, query=n)
