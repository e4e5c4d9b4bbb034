"""The Rollout tab (transformer.explorer.views.rollout): ``/rollout``'s numbers and the tab's drawing."""

import gradio as gr
import numpy as np
import pytest
import torch
from app_fixtures import SENTENCE, close, ids_of

from transformer import explain
from transformer.explorer import analysis, views
from transformer.explorer.drawing.figures import shown_values


def test_rollout_endpoint_rows_sum_to_one_and_pool_by_column_means(app, loaded, result):
    answer = views.rollout.rollout(SENTENCE)
    rollout = np.array(answer["rollout"])
    n = len(result.tokens)
    assert answer["tokens"] == result.tokens and rollout.shape == (2, n, n)
    close(rollout.sum(axis=-1), np.ones((2, n)), atol=1e-5)
    expected = explain.attention_rollout(explain.predict(loaded.model, ids_of(result)).attentions)
    close(rollout, expected)
    close(answer["pooled"], expected.mean(dim=1))


def test_rollout_tab_draws_the_chosen_layer_without_the_model(app, result, forward_calls):
    shares, matrix = views.rollout.show_rollout(result, 1, "row", ["punctuation"])
    assert not forward_calls
    rollout = explain.attention_rollout(analysis.model_attentions(result))
    close(shown_values(matrix.data[0]), rollout[0], atol=1e-4)  # shown to 4 decimals
    assert len(shares.data[0].y) == 2  # one row per layer
    assert "after layer 1" in matrix.layout.title.text


def test_rollout_endpoint_answers_the_chosen_layers_as_the_full_answers_slice(app):
    every = views.rollout.rollout(SENTENCE)
    assert every["layers"] == [1, 2]  # every layer by default: the tiny model's answer fits
    second = views.rollout.rollout(SENTENCE, layer=2)
    assert second["layers"] == [2] and second["tokens"] == every["tokens"]
    assert second["rollout"] == every["rollout"][1:] and second["pooled"] == every["pooled"][1:]
    assert views.rollout.rollout(SENTENCE, layer=[2, 1])["rollout"] == every["rollout"]  # sorted
    with pytest.raises(gr.Error, match="Layer must be a whole number from 1 to 2"):
        views.rollout.rollout(SENTENCE, layer=3)


@pytest.mark.parametrize(("tokens", "printed"), [(views.rollout.SHOW_VALUES_UP_TO, True), (99, False)])
def test_the_rollout_strip_prints_its_shares_only_while_they_fit(tokens, printed):
    """Issue 53: at 99 tokens the printed shares ran into one black line; past the limit they are hover-only."""
    shares = torch.full((2, tokens), 1 / tokens)
    (trace,) = views.rollout.rollout_figure(shares, [f"t{i}" for i in range(tokens)]).data
    assert (trace.texttemplate is not None) is printed and len(trace.customdata[0]) == tokens  # the hover keeps them
