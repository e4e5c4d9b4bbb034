"""Views that read the tutorial's architecture (its embedding, sinusoidal encoding and blocks) say plainly that they
do not apply to another kind of model, in the tab and at their endpoint; the Positional encoding tab says whether
its table is the tutorial's sinusoids or a learned one."""

import dataclasses
import types

import pytest
from tiny import tiny_model

from transformer.explorer import runner
from transformer.explorer.analysis import InputError
from transformer.explorer.registry import not_for_this_model, require_tutorial_model
from transformer.explorer.views import positional_encoding, token_embeddings, walkthrough

OTHER = types.SimpleNamespace(model_type="bert", max_len=512, d_model=32)  # what the views see of a Hub model


def test_only_the_tutorials_architecture_passes():
    assert not_for_this_model("Walkthrough", tiny_model()) is None
    said = not_for_this_model("Walkthrough", OTHER)
    assert said.startswith("Walkthrough follows the tutorial's architecture") and "this bert model" in said
    with pytest.raises(InputError, match="does not apply to this bert model"):
        require_tutorial_model("Token embeddings", OTHER)


@pytest.fixture
def result_of_another_model(app, monkeypatch):
    """An analysis, then the app with a model of another kind loaded."""
    result = runner.run_model("a wonderful film")
    loaded, note = runner.get_model()
    monkeypatch.setattr(runner, "get_model", lambda: (dataclasses.replace(loaded, model=OTHER), note))
    return result


def test_each_tab_says_it_does_not_apply_and_draws_nothing(result_of_another_model):
    result = result_of_another_model
    text, code, figure, _ = walkthrough.show_step(result, 6, 1, 1, None)
    assert "does not apply to this bert model" in text and figure is None and code == ""
    summary, figure, _ = token_embeddings.show_embeddings(result, None)
    assert "does not apply" in summary and figure is None


@pytest.mark.parametrize("build", [walkthrough.walkthrough_view, token_embeddings.embeddings_view])
def test_each_endpoint_answers_in_one_line_that_it_does_not_apply(build):
    with pytest.raises(InputError, match="does not apply to this bert model"):
        build(OTHER, None, types.SimpleNamespace(tokens=["a"], token_ids=[1], text="a"))


def test_the_positional_encoding_tab_says_which_table_it_draws():
    assert "√16" in positional_encoding.explanation(tiny_model()) and "learned" not in positional_encoding.explanation(
        tiny_model()
    )
    learned = positional_encoding.explanation(OTHER)
    assert "learned its table" in learned and "512 positions × 32 dimensions" in learned
