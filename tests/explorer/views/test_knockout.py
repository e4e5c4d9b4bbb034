"""The Knockout tab (transformer.explorer.views.knockout): ``/knockout`` and ``/head_importance`` against the
explanation functions, and the tab's figures."""

import numpy as np
import pytest
import torch
from app_fixtures import SENTENCE, close, ids_of

from transformer import explain
from transformer.explorer import views


def test_knockout_endpoint_with_a_whole_layer_off_equals_predict_with_knockout(app, loaded, result):
    answer = views.knockout.knockout(SENTENCE, ["L1 H2", "l1h1"])
    assert answer["heads_off"] == ["L1 H1", "L1 H2"]
    head_mask = torch.tensor([[0.0, 0.0], [1.0, 1.0]])
    expected = explain.predict_with_knockout(loaded.model, ids_of(result), head_mask)
    close(answer["probabilities"], expected.probs)
    close(answer["attentions"], explain.stack_attentions(expected.attentions), atol=5e-5)  # weights: 4 decimals
    close(answer["probabilities_before"], result.probabilities)
    assert not np.allclose(answer["probabilities"], result.probabilities, atol=1e-6)


def test_knockout_endpoint_with_no_head_off_is_the_plain_prediction(app, result):
    answer = views.knockout.knockout(SENTENCE)
    close(answer["probabilities"], result.probabilities)
    close(answer["attentions"], result.attentions, atol=5e-5)


def test_head_importance_endpoint_equals_one_knockout_per_head(app, loaded, result):
    importance = views.knockout.head_importance(SENTENCE)["importance"]
    target = int(np.argmax(result.probabilities))
    assert importance["target"] == target
    for layer in range(2):
        for head in range(2):
            single = views.knockout.knockout(SENTENCE, [f"L{layer + 1} H{head + 1}"])["probabilities"][target]
            assert importance["ablated_prob"][layer][head] == pytest.approx(single, abs=2e-6)
            assert importance["drop"][layer][head] == pytest.approx(result.probabilities[target] - single, abs=2e-6)


def test_knockout_tab_shows_the_change_and_the_importance(app, result):
    label, summary, grid, importance, *_ = views.knockout.show_knockout(
        result, ["L1 H1", "L1 H2"], "global", [], None, None
    )
    assert set(label) == {"negative", "positive"}
    assert "L1 H1, L1 H2" in summary and "<table tabindex='0'>" in summary
    assert len(grid.data) == 4 and "L1 H1, L1 H2 switched off" in grid.layout.title.text
    assert np.array(importance.data[0].z).shape == (2, 2)
