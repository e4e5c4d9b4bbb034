"""The explorer as Model Context Protocol tools: the app served as shipped (its guard) with ``mcp_server=True`` on
127.0.0.1, read with the ``mcp`` client package, its answers checked against the same endpoints through
gradio_client; each MCP caller is a client of its own."""

import ast
import asyncio
import threading

import httpx
import pytest
from app_fixtures import serving
from gradio_client import Client

from transformer.explorer import runner
from transformer.explorer.page import api
from transformer.explorer.registry import Registry
from transformer.explorer.serving import admission, guard
from transformer.explorer.views import VIEWS

mcp = pytest.importorskip("mcp")
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

SENTENCE = "a wonderful film , the acting was dull"
NO_LAYERS_OR_POSITIONS = {
    "predict",
    "errors",
    "behaviour",
}  # tools that neither take nor answer a layer, head or position
# gradio's queue summarises its events with pandas after each one; pandas 3 warns about the options it uses
pytestmark = [
    pytest.mark.served,
    pytest.mark.filterwarnings("ignore:'future.no_silent_downcasting' is deprecated"),
    pytest.mark.filterwarnings("ignore:The copy keyword is deprecated"),
]


@pytest.fixture(scope="module")
def url(app):
    with serving(app.demo, mcp_server=True, **app.launch_settings()) as served:
        yield served


async def _session(url: str, work, source: str = "127.0.0.1"):
    transport = httpx.AsyncHTTPTransport(local_address=source)
    async with (
        httpx.AsyncClient(transport=transport, trust_env=False, timeout=60) as http,
        streamable_http_client(f"{url}gradio_api/mcp/", http_client=http) as (read, write, _),
        mcp.ClientSession(read, write) as session,
    ):
        await session.initialize()
        return await work(session)


def call(url: str, work):
    return asyncio.run(_session(url, work))


def answer(result) -> object:
    """A tool's answer: Gradio sends the endpoint's return value as the text of its one content item."""
    assert not result.isError, result.content
    (content,) = result.content
    return ast.literal_eval(content.text)


def test_every_public_endpoint_is_a_tool_that_says_how_heads_are_numbered(url):
    tools = call(url, lambda session: session.list_tools()).tools
    endpoints = Client(url, verbose=False, analytics_enabled=False).view_api(print_info=False, return_format="dict")
    assert {tool.name for tool in tools} == {name.lstrip("/") for name in endpoints["named_endpoints"]}
    described = {tool.name: tool.description for tool in tools}
    assert {
        "predict",
        "attention",
        "knockout",
        "head_atlas",
        "errors",
        "behaviour",
        "faithfulness",
        "walkthrough",
    } <= described.keys()
    numbered = "Layers and heads count from 1 and token positions from 0"
    for name, description in described.items():
        assert "Returns: {" in description and ",," not in description, name  # one sentence, not lines joined by ","
        assert description.count(numbered) == (name not in NO_LAYERS_OR_POSITIONS), name
    assert set(next(t for t in tools if t.name == "head_internals").inputSchema["properties"]) == {
        "text",
        "layer",
        "head",
        "query",
    }


def test_each_tool_parameter_is_described_whole_as_on_the_api_page(url):
    """Gradio's MCP server keeps only an argument's first docstring line: "... for every head. An answer" was cut
    mid-sentence. Each parameter's description is now its whole argument, as the API page shows it."""
    tools = {tool.name: tool for tool in call(url, lambda session: session.list_tools()).tools}
    served = api.endpoints(Registry(VIEWS))
    for name, tool in tools.items():
        described = {key: value.get("description") for key, value in tool.inputSchema["properties"].items()}
        assert described == api.documented(served[name])[1], name
        assert all(about.endswith((".", ")")) and "``" not in about for about in described.values()), name
    assert tools["attention"].inputSchema["properties"]["head"]["description"].endswith("beyond that, choose some.")


def test_the_prediction_and_attention_tools_answer_as_the_api_does(url):
    async def work(session):
        return (
            await session.call_tool("predict", {"text": SENTENCE}),
            await session.call_tool("attention", {"text": SENTENCE}),
        )

    predicted, attended = (answer(result) for result in call(url, work))
    client = Client(url, verbose=False, analytics_enabled=False)
    assert predicted == client.predict(SENTENCE, api_name="/predict")
    expected = client.predict(SENTENCE, api_name="/attention")
    assert attended["tokens"] == expected["tokens"] and attended["attentions"] == expected["attentions"]
    assert len(attended["attentions"]) == 2 and len(attended["attentions"][0][0]) == len(expected["tokens"])


def test_a_bad_call_is_a_clear_error(url):
    result = call(url, lambda session: session.call_tool("head_internals", {"text": SENTENCE, "layer": 9, "head": 1}))
    assert result.isError and "Layer must be a whole number from 1 to 2" in result.content[0].text


def test_each_mcp_caller_is_its_own_client_and_a_refusal_names_no_internal_address(app, url, monkeypatch):
    release, analyze = threading.Event(), runner.run_model
    monkeypatch.setattr(runner, "run_model", lambda text, **options: release.wait(30) and analyze(text, **options))
    held = getattr(app.demo.server_app.state, guard.ADMISSION)
    first, second, in_flight = "127.0.0.4", "127.0.0.5", int(admission.CLIENT_BUDGET / admission.LIGHT_COST)

    async def until(condition):
        for _ in range(600):
            if condition():
                return
            await asyncio.sleep(0.05)
        raise AssertionError("timed out")

    async def first_caller(session):
        calls = [asyncio.create_task(session.call_tool("predict", {"text": f"busy {i}"})) for i in range(in_flight)]
        await until(lambda: held.held.get(first) == in_flight * admission.LIGHT_COST)
        refused = await session.call_tool("predict", {"text": "one more"})
        other = asyncio.create_task(_session(url, lambda s: s.call_tool("predict", {"text": SENTENCE}), second))
        await until(lambda: held.held.get(second))  # admitted beside the first caller's full budget
        release.set()
        return refused, await other, await asyncio.gather(*calls)

    try:
        refused, other, busy = asyncio.run(_session(url, first_caller, first))
    finally:
        release.set()
    assert refused.isError and "retry in" in refused.content[0].text
    assert "127.0.0.1" not in refused.content[0].text and "http" not in refused.content[0].text
    assert answer(other)["label"] in ("negative", "positive")
    assert all(not result.isError for result in busy)
