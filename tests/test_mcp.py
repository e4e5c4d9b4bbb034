"""The explorer as Model Context Protocol tools: the app served with ``mcp_server=True`` on 127.0.0.1, read
with the ``mcp`` client package, its answers checked against the same endpoints through gradio_client."""

import ast
import asyncio

import httpx
import pytest
from app_fixtures import serving
from gradio_client import Client

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
    pytest.mark.filterwarnings("ignore:'future.no_silent_downcasting' is deprecated"),
    pytest.mark.filterwarnings("ignore:The copy keyword is deprecated"),
]


@pytest.fixture(scope="module")
def url(app):
    with serving(app.demo, mcp_server=True) as served:
        yield served


async def _session(url: str, work):
    async with (
        httpx.AsyncClient(trust_env=False, timeout=60) as http,
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
    }


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
