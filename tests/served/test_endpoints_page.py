"""The explorer's page and the endpoints' page (``page.api.PAGE``) on a live server, as ``app.main`` serves them: the
first HTML inlines the explorer's page without the endpoints' ``gr.Api`` components and events (issue 54), and every
endpoint is still documented and answers by name."""

import json
import re

import httpx
import pytest

from transformer.explorer.page import api
from transformer.explorer.registry import Registry
from transformer.explorer.views import VIEWS

# gradio's queue summarises its events with pandas after each one; pandas 3 warns about the options it uses
pytestmark = [
    pytest.mark.served,
    pytest.mark.filterwarnings("ignore:'future.no_silent_downcasting' is deprecated"),
    pytest.mark.filterwarnings("ignore:The copy keyword is deprecated"),
]
SERVED = list(api.endpoints(Registry(VIEWS)))  # every endpoint's name, as app.py serves them
INLINED = re.compile(r"<script>window\.(gradio_config|gradio_api_info) = (.*?);</script>", re.S)


def inlined(html: str) -> dict:
    """{"gradio_config": ..., "gradio_api_info": ...}: what a page's first HTML hands its browser."""
    return {name: json.loads(value) for name, value in INLINED.findall(html)}


def public_names(config: dict) -> list[str]:
    return [fn["api_name"] for fn in config["dependencies"] if fn["api_visibility"] == "public"]


def test_the_first_html_carries_predict_alone_while_the_api_info_and_config_hold_every_endpoint(url):
    with httpx.Client(timeout=60, trust_env=False) as client:
        page = inlined(client.get(url).text)
        info = client.get(f"{url}gradio_api/info").json()
        every_page = client.get(f"{url}config").json()  # what gradio_client reads
    config = page["gradio_config"]
    assert public_names(config) == ["predict"]
    assert sum(component["type"] == "api" for component in config["components"]) == 2  # /predict's text and answer
    assert list(page["gradio_api_info"]["named_endpoints"]) == ["/predict"]
    assert set(info["named_endpoints"]) == {f"/{name}" for name in SERVED}
    assert all(info["named_endpoints"][f"/{name}"]["description"] for name in SERVED)
    assert sorted(public_names(every_page)) == sorted(SERVED)


def test_the_endpoints_page_says_where_they_are_described_and_its_endpoints_answer_by_name(url):
    with httpx.Client(timeout=60, trust_env=False) as client:
        page = client.get(f"{url}{api.PAGE}")
        assert page.status_code == 200
        config = inlined(page.text)["gradio_config"]
        assert api.PAGE_TEXT in [component["props"].get("value") for component in config["components"]]
        assert public_names(config) == SERVED[1:]  # every endpoint but /predict, the first
        assert client.get(f"{url}{api.PAGE}/").status_code == 301  # Gradio's redirect to the page
        joined = client.post(f"{url}gradio_api/call/layer_readout", json={"data": ["a fine film"]})
        assert joined.status_code == 200
        answer = client.get(f"{url}gradio_api/call/layer_readout/{joined.json()['event_id']}").text
        assert "event: complete" in answer and "probabilities" in answer
