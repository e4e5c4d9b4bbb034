"""The explorer on each Hub family (tiny random BERT, DistilBERT and RoBERTa checkpoints): the page is built on it
(``MODEL_ID`` = its folder, another family as its second model; in this process, ``app_fixtures.page_on``), every
endpoint answers, and the views that read the tutorial's architecture say in one line that they do not apply. (The
endpoint fuzz tests run on a tiny RoBERTa too: tests/served/test_fuzz_api.py.)"""

import inspect

import pytest
from app_fixtures import page_on
from hub_checkpoints import HUB_FAMILIES

from transformer.explorer.page import api
from transformer.explorer.registry import Registry
from transformer.explorer.views import VIEWS

REGISTRY = Registry(VIEWS)  # the page's views, as app.py registers them


pytestmark = pytest.mark.slow  # many seconds: left out of make test-fast

TUTORIAL_ONLY = {"walkthrough"}  # its maths reads the tutorial's embedding, encoding and blocks
NO_CHECKPOINTS = {"training"}  # the tiny checkpoints keep no training checkpoints (tests/model/test_checkpoints.py)
# Two words swapped: as many tokens in any tokenizer, as /patching needs.
SENTENCE, OTHER = "a wonderful film , the acting was dull", "a dull film , the acting was wonderful"


def arguments(fn) -> dict[str, str]:
    """The texts an endpoint takes, filled in; every other argument keeps its default."""
    named = inspect.signature(fn).parameters
    return {name: text for name, text in (("text", SENTENCE), ("text_a", SENTENCE), ("text_b", OTHER)) if name in named}


def answer(fn) -> str:
    """ "ok", "empty", or what a caller would see of its error, in one line."""
    try:
        return "ok" if fn(**arguments(fn)) else "empty"
    except Exception as error:
        return f"{type(error).__name__}: {error}"


@pytest.fixture(scope="module")
def answers(app, hub_model_dirs, tmp_path_factory) -> dict[str, dict[str, str]]:
    """{family: {endpoint: "ok" or its error}}: the page built on each family, with the next family as its second
    model (``MODEL_ID_B``, which Compare reads the same sentence with), every endpoint called as an API caller would
    (a sentence, the defaults)."""
    found = {}
    for i, family in enumerate(HUB_FAMILIES):
        second = hub_model_dirs[HUB_FAMILIES[(i + 1) % len(HUB_FAMILIES)]]
        with page_on(app, hub_model_dirs[family], tmp_path_factory.mktemp(f"hub-{family}"), second) as on_hub:
            assert getattr(on_hub.get_model()[0].model, "model_type", None) == family
            found[family] = {name: answer(fn) for name, fn in api.endpoints(REGISTRY).items()}
    return found


@pytest.mark.parametrize("family", HUB_FAMILIES)
def test_every_endpoint_answers_on_each_family(answers, family):
    answered = answers[family]
    assert {"predict", "attention", "attributions", "faithfulness", "knockout", "compare_models"} <= set(answered)
    explained = TUTORIAL_ONLY | NO_CHECKPOINTS  # answered with one line saying why
    broken = {name: said for name, said in answered.items() if name not in explained and said != "ok"}
    assert not broken, broken
    for name in NO_CHECKPOINTS:
        said = answers[family][name]
        assert "kept no training checkpoints" in said and "\n" not in said, said
    for name in TUTORIAL_ONLY:
        said = answers[family][name]
        assert "does not apply to this" in said and "\n" not in said, said  # one line, not a stack trace
