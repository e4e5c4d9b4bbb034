"""CONTRIBUTING.md's worked example runs as written: its two files, registered as the one list edit says, add a
tab and an endpoint to the page, and the view draws the model's own numbers."""

from __future__ import annotations

import inspect
import itertools
import re
import sys
import types
from pathlib import Path

import gradio as gr
import plotly.graph_objects as go
import pytest
import torch
from app_fixtures import forget_the_models, import_app, write_model_dir
from hub_checkpoints import HUB_FAMILIES

from transformer.explorer import analysis, runner
from transformer.explorer.page import address, api
from transformer.explorer.registry import Registry, view_params
from transformer.explorer.views import VIEWS

GUIDE = Path(__file__).resolve().parents[2] / "CONTRIBUTING.md"


def example_files() -> dict[str, str]:
    """{path in the repository: source} of each Python block in CONTRIBUTING.md that starts with its path."""
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(encoding="utf-8"), flags=re.S)
    return {block.splitlines()[0].removeprefix("# "): block for block in blocks if block.startswith("# transformer/")}


def load_module(path: str, source: str) -> types.ModuleType:
    """``source`` as the module ``path`` names, importable (and relative imports resolved) as if it were there."""
    name = path.removesuffix(".py").replace("/", ".")
    module = types.ModuleType(name)
    module.__package__ = name.rpartition(".")[0]
    module.__file__ = path
    sys.modules[name] = module
    exec(compile(source, path, "exec"), module.__dict__)
    return module


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    return import_app(write_model_dir(tmp_path_factory.mktemp("contributing-model")))


@pytest.fixture
def example_view(app):
    """The guide's view, importable as its two files; afterwards the modules as they were."""
    files = example_files()
    assert set(files) == {"transformer/explain/vector_lengths.py", "transformer/explorer/views/token_lengths.py"}
    names = [path.removesuffix(".py").replace("/", ".") for path in files]
    try:
        for path, source in files.items():
            module = load_module(path, source)
        yield module
    finally:
        for name in names:
            sys.modules.pop(name, None)


def test_the_worked_example_adds_a_tab_and_an_endpoint(app, example_view):
    """Listed after the others in ``VIEWS`` (here a registry of them), the view is a tab, an endpoint and an address
    view: no module of the page keeps a table of its own to reload."""
    registry = Registry([*VIEWS, example_view.VIEW])
    demo = app.build_demo(registry)
    tabs = [block for block in demo.blocks.values() if isinstance(block, gr.Tab)]
    assert "Token lengths" in [tab.label for tab in tabs]
    served = {fn.api_name: fn for fn in demo.fns.values() if fn.api_visibility == "public"}
    assert inspect.unwrap(served["token_lengths"].fn) is example_view.token_lengths
    assert {"predict", "attention"} <= served.keys()  # the page's own endpoints are all still there
    assert address.script_config(registry)["viewOfTitle"]["Token lengths"] == "token-lengths"
    assert "token-lengths" not in app.REGISTRY.ids  # the app's own registry is untouched


def test_the_worked_example_draws_the_models_own_vector_lengths(app, example_view):
    model = runner.get_model()[0].model
    result = runner.run_model("a wonderful film")
    figure, kept = example_view.show_lengths(result, None)
    assert isinstance(figure, go.Figure)
    lengths = kept[1].lengths
    assert lengths.shape == (model.num_layers + 1, len(result.tokens))
    with torch.no_grad():  # the first stage is what the model adds up before layer 1
        entering = model.embed(analysis.sentence_ids(model, result))[0].norm(dim=-1)
    torch.testing.assert_close(lengths[0], entering.cpu())


@pytest.mark.parametrize("family", ["tutorial", *HUB_FAMILIES])
def test_the_worked_examples_endpoint_answers_on_every_kind_of_model(
    app, example_view, hub_model_dirs, family, monkeypatch
):
    """Written against the interface alone, the example's endpoint answers on the tutorial's model and on a BERT, a
    DistilBERT and a RoBERTa: one length per stage and token, the last stage the stream the classifier reads."""
    if family != "tutorial":
        monkeypatch.setenv("MODEL_ID", str(hub_model_dirs[family]))
        forget_the_models()  # the runner loads this one; afterwards the app's again
    try:
        model = runner.get_model()[0].model
        assert model.model_type == family
        answer = example_view.token_lengths("a wonderful film")
        result = runner.run_model("a wonderful film")
        assert answer["tokens"] == result.tokens and len(answer["lengths"]) == model.num_layers + 1
        with torch.no_grad():
            last = model.hidden_states(analysis.sentence_ids(model, result))[-1][0].norm(dim=-1)
        torch.testing.assert_close(torch.tensor(answer["lengths"][-1]), last.cpu(), atol=1e-4, rtol=1e-4)
    finally:
        if family != "tutorial":
            forget_the_models()


def test_an_address_parameter_claimed_twice_stops_the_start_up_naming_both():
    claims = types.SimpleNamespace(id="first", params={"depth": None})
    again = types.SimpleNamespace(id="second", params={"depth": None})
    with pytest.raises(ValueError, match='"depth" is claimed by both view first and view second'):
        Registry([claims, again])
    with pytest.raises(ValueError, match='"layer" is claimed by both the page and view first'):
        view_params([types.SimpleNamespace(id="first", params={"layer": None})])
    assert view_params([claims]) == {"first": ["depth"]}


def readme_table(section: str) -> list[str]:
    """The first column of the first table under the README's ``## section``, backticks and slashes dropped."""
    text = (GUIDE.parent / "README.md").read_text(encoding="utf-8")
    lines = text[text.index(f"## {section}\n") :].splitlines()
    table = itertools.takewhile(
        lambda line: line.startswith("|"), itertools.dropwhile(lambda line: not line.startswith("|"), lines)
    )
    return [row.split("|")[1].strip().strip("`").lstrip("/") for row in list(table)[2:]]


def test_the_readmes_views_and_api_tables_are_the_registrys():
    """A view added to ``VIEWS`` (or an endpoint to a view) that the README does not list fails here, by name."""
    registry = Registry(VIEWS)
    assert readme_table("The views") == [view.title for view in registry.views]
    listed = readme_table("API and MCP")
    assert set(listed) == set(api.endpoints(registry)) and len(listed) == len(set(listed))
