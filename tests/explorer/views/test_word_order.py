"""The Word-order tab (transformer.explorer.views.word_order): ``/word_order`` with and without positional
encoding, shuffled or your own order."""

import gradio as gr
import numpy as np
import pytest
from app_fixtures import SENTENCE, close

from transformer.explorer import views


def test_word_order_endpoint_gives_identical_predictions_without_positional_encoding(app, result):
    answer = views.word_order.word_order(SENTENCE, seed=3)
    probs = np.array(answer["experiment"]["probs"])  # [order][encoding][class]
    assert sorted(answer["reordered_tokens"]) == sorted(result.tokens)
    assert answer["reordered_tokens"] != result.tokens and answer["experiment"]["is_permutation"]
    close(probs[0, 1], probs[1, 1], atol=1e-6)
    assert answer["difference_without_encoding"] < 1e-5 < answer["difference_with_encoding"]
    close(probs[0, 0], result.probabilities)


def test_word_order_endpoint_takes_your_own_reordering(app):
    answer = views.word_order.word_order("the acting was dull", reordered="dull was the acting")
    assert answer["seed"] is None and answer["reordered_tokens"] == ["dull", "was", "the", "acting"]
    assert answer["experiment"]["is_permutation"] and answer["difference_without_encoding"] < 1e-5
    with pytest.raises(gr.Error, match="same words in another order"):
        views.word_order.word_order("the acting was dull", reordered="the acting")


def test_word_order_tab_shuffles_or_takes_your_text(app, result):
    summary, *_ = views.word_order.show_word_order(result, "shuffle", 1, "", None)
    assert "shuffled with seed 1" in summary and "same prediction" in summary


def test_word_order_asks_for_a_reordering_and_says_what_is_wrong_in_place_of_the_result(app, result):
    """Ticking "my own reordering" before typing one is no mistake: a plain request, no error. A reordering
    that cannot be used is an alert in the summary, which the next valid result replaces."""
    show = views.word_order.show_word_order
    asked, plot, _ = show(result, "yours", 1, " ", None)
    assert "Type your own reordering" in asked and "alert" not in asked and plot is None
    wrong, plot, _ = show(result, "yours", 1, "wonderful", None)
    assert 'role="alert"' in wrong and "tokens and the sentence" in wrong and plot is None
    reordered = " ".join(reversed(result.text.split()))
    summary, plot, kept = show(result, "yours", 1, reordered, None)
    assert "your own reordering" in summary and "alert" not in summary and plot is not None
    assert show(result, "yours", 1, "", kept)[2] is kept  # asking again keeps the kept view
