"""The configuration the page inlines drops the API schemas of components that no client may call, and only those:
the API page (``/info``) and the Python client read the same endpoints as before. It drops the properties only the
server reads, which Gradio's page never names, and no Markdown typesets LaTeX."""

from __future__ import annotations

import json

import gradio as gr
import httpx
import pytest
from app_fixtures import serving

from transformer.explorer.page.page_config import API_SCHEMAS, SERVER_PROPS, serve_light_config, without_private_schemas
from transformer.explorer.serving import gradio_seam


def page_of_two_events() -> tuple[gr.Blocks, dict]:
    """A page with a private event (the page's own) and a public endpoint; {role: component}."""
    with gr.Blocks() as demo:
        own_in, own_out = gr.Textbox(elem_id="own-in"), gr.Textbox(elem_id="own-out")
        api_in, api_out = gr.Textbox(elem_id="api-in"), gr.Textbox(elem_id="api-out")
        own_in.submit(str.upper, own_in, own_out, api_visibility="private")
        api_in.submit(str.lower, api_in, api_out, api_name="lower")
    return demo, {"own_in": own_in, "own_out": own_out, "api_in": api_in, "api_out": api_out}


def schemas(config: dict) -> dict[str, set[str]]:
    """{elem_id: the API schemas its component carries in ``config``}."""
    return {
        c["props"]["elem_id"]: {key for key in API_SCHEMAS if key in c}
        for c in config["components"]
        if c["props"].get("elem_id")
    }


def test_only_components_of_private_events_lose_their_schemas():
    demo, _ = page_of_two_events()
    before = schemas(demo.get_config_file())
    assert all(found == set(API_SCHEMAS) for found in before.values())  # Gradio writes all four on each
    after = schemas(without_private_schemas(demo.get_config_file()))
    assert after == {"own-in": set(), "own-out": set(), "api-in": set(API_SCHEMAS), "api-out": set(API_SCHEMAS)}


def test_a_component_shared_by_a_private_event_and_an_endpoint_keeps_them():
    demo, parts = page_of_two_events()
    with demo:
        parts["own_in"].change(str.strip, parts["own_in"], parts["api_out"], api_visibility="private")
    assert schemas(without_private_schemas(demo.get_config_file()))["api-out"] == set(API_SCHEMAS)


def test_an_undocumented_endpoint_counts_as_one_a_client_may_call():
    with gr.Blocks() as demo:
        box, out = gr.Textbox(elem_id="in"), gr.Textbox(elem_id="out")
        box.submit(str.upper, box, out, api_visibility="undocumented")
    assert schemas(without_private_schemas(demo.get_config_file()))["in"] == set(API_SCHEMAS)


@pytest.mark.served
def test_the_served_page_and_config_are_lighter_and_the_api_page_unchanged():
    demo, _ = page_of_two_events()
    plain_info = demo.get_api_info()
    serve_light_config(demo)
    assert demo.get_api_info() == plain_info and "/lower" in plain_info["named_endpoints"]
    with serving(demo) as url, httpx.Client(base_url=url, timeout=60, trust_env=False) as http:
        served = schemas(http.get("/config").json())
        assert served["own-in"] == set() and served["api-in"] == set(API_SCHEMAS)
        page = http.get("/").text
        assert '"elem_id":"own-in"' in page.replace(" ", "") and page.count('"api_info"') == 2  # the endpoint's two
        assert http.get("/gradio_api/info").json()["named_endpoints"]["/lower"]["parameters"]


CONFIG_BYTES, CONFIG_EVENTS = 250_000, 100  # issue 54's targets for the configuration a visitor downloads first
INLINED = "window.gradio_config = "


@pytest.mark.served
def test_the_first_html_inlines_a_configuration_within_the_targets(url):
    """What a browser downloads before the first click: the first HTML inlines the page's configuration, at most
    ``CONFIG_BYTES`` with at most ``CONFIG_EVENTS`` events, none of them carrying the scripts' comments, and no
    Markdown with LaTeX delimiters."""
    html = httpx.get(url, headers={"accept-encoding": "identity"}, timeout=60, trust_env=False).text
    start = html.index(INLINED) + len(INLINED)
    inlined = html[start : html.index("</script>", start)].rstrip().removesuffix(";")
    config = json.loads(inlined)
    assert len(inlined.encode()) <= CONFIG_BYTES, f"{len(inlined.encode()):,} bytes"
    assert len(config["dependencies"]) <= CONFIG_EVENTS
    assert not [c["id"] for c in config["components"] if "api_info" in c and c["type"] != "api"]
    assert not [c["id"] for c in config["components"] if set(SERVER_PROPS) & set(c.get("props", {}))]
    markdowns = [c["props"] for c in config["components"] if c["type"] == "markdown"]
    assert markdowns and all(props["latex_delimiters"] == [] for props in markdowns)  # no text of the page is LaTeX


def test_gradio_s_page_never_reads_the_properties_left_out():
    """``SERVER_PROPS`` go unsent because no file of Gradio's page names them (Gradio's Python reads them from the
    components themselves): a Gradio whose page reads one fails here."""
    pages = [path.read_text(encoding="utf-8", errors="replace") for path in gradio_seam.frontend_assets().glob("*.js")]
    assert len(pages) > 10 and any("latex_delimiters" in page for page in pages)  # the page's files, read
    assert not [name for name in SERVER_PROPS if any(name in page for page in pages)]
