"""The API page describes every endpoint from its handler: each parameter by name with its docstring line,
and what it returns; the endpoints but ``/predict`` sit on a page of their own, off the explorer's."""

from __future__ import annotations

import pytest
from app_fixtures import import_app, write_model_dir

from transformer.explorer.page import api
from transformer.explorer.registry import Registry
from transformer.explorer.views import VIEWS

REGISTRY = Registry(VIEWS)  # the page's views, as app.py registers them


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    return import_app(write_model_dir(tmp_path_factory.mktemp("api-model")))


def test_every_endpoint_documents_its_parameters_and_returns(app):
    documented = app.demo.get_api_info()["named_endpoints"]
    served = api.endpoints(REGISTRY)
    assert set(documented) == {f"/{name}" for name in served}
    for name, fn in served.items():
        _, described, returns = api.documented(fn)
        assert returns, f"{name}: its docstring has no Returns: section"
        info = documented[f"/{name}"]
        assert [p["label"] for p in info["parameters"]] == list(described), name  # named, not "1st", "2nd"
        for parameter in info["parameters"]:
            about = parameter["python_type"]["description"]
            assert about and about == described[parameter["label"]], (name, parameter["label"])
        (answer,) = info["returns"]
        assert answer["python_type"]["description"] == " ".join(returns), name
        # the Python tab shows the answer's type and label: a dict with its keys, not "Any" in "the 1st Api component"
        assert answer["label"] == api.ANSWER_LABEL, name
        keys = api.answer_keys(" ".join(returns))
        assert keys and answer["python_type"]["type"] == f"dict({', '.join(f'{key}: Any' for key in keys)})", name
        assert info["description"] == api.description(fn) and ",," not in info["description"], name


def test_an_answer_is_typed_by_its_top_level_keys():
    assert api.answer_keys('{"label": class, "confidences": [{"label": c, "confidence": p}, ...]}.') == [
        "label",
        "confidences",
    ]
    assert api.answer_keys('{"tokens", "scores": {"layer", "head" (from 1), "raw": [query][key]}}.') == [
        "tokens",
        "scores",
    ]


def test_an_endpoint_not_named_as_its_function_is_refused():
    view = VIEWS[0]
    shadow = type(view)(view.id, view.title, view.layout, endpoints={"renamed": api.predict})
    with pytest.raises(ValueError, match='"renamed" is served by predict'):
        api.endpoints(Registry([shadow]))
    with pytest.raises(ValueError, match='Two endpoints are named "renamed"'):
        api.endpoints(Registry([shadow, shadow]))


TEMPLATE_PHRASES = ("input value that is provided", "Api component", "1st", "``")


def test_the_api_page_reads_as_documentation(app):
    """Issue 53: whole sentences (six parameters stopped at "... for every head. An answer"), no reST backticks, and
    none of Gradio's template phrases, in what ``/gradio_api/info`` serves."""
    for name, info in app.demo.get_api_info()["named_endpoints"].items():
        texts = [info["description"], *(p["python_type"]["description"] for p in info["parameters"])]
        texts.append(info["returns"][0]["python_type"]["description"])
        for text in texts:
            assert text.rstrip().endswith((".", ")", "}")), (name, text)  # a cut sentence ends on a word
            assert not any(phrase in text for phrase in TEMPLATE_PHRASES), (name, text)
    head = app.demo.get_api_info()["named_endpoints"]["/attention_norms"]["parameters"][2]
    assert head["python_type"]["description"].endswith(
        "An answer holds at most 8 MB of maps: beyond that, choose some."
    )


def test_the_explorer_s_page_carries_predict_alone_and_the_others_sit_on_the_hidden_endpoints_page(app):
    """Issue 54: a page's first HTML inlines its own page's configuration (Gradio's ``get_page_config``), where the
    endpoints' ``gr.Api`` components and events were a fifth of the explorer's. ``/predict`` stays, so that the
    page's "Use via API or MCP" panel has an endpoint to open on; the endpoints' page holds nothing else."""
    config = app.demo.get_config_file()
    kinds = {component["id"]: component["type"] for component in config["components"]}
    named = {fn["id"]: fn["api_name"] for fn in config["dependencies"] if fn["api_visibility"] == "public"}
    explorer, endpoints_page = config["page"][""], config["page"][api.PAGE]
    assert [named[i] for i in explorer["dependencies"] if i in named] == ["predict"]
    predict = next(fn for fn in app.demo.fns.values() if fn.api_name == "predict")
    assert {i for i in explorer["components"] if kinds[i] == "api"} == {
        block._id for block in [*predict.inputs, *predict.outputs]
    }
    others = [name for name in api.endpoints(REGISTRY) if name != "predict"]
    assert [named.get(i) for i in endpoints_page["dependencies"]] == others  # and no event of the explorer's page
    assert {kinds[i] for i in endpoints_page["components"]} == {"api", "markdown"}
    assert (api.PAGE, "API", False) in app.demo.pages  # left out of the navbar, which the explorer's page hides
    (navbar,) = [component for component in config["components"] if component["type"] == "navbar"]
    assert navbar["id"] in explorer["components"] and navbar["props"]["visible"] == "hidden"
