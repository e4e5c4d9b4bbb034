"""The page's configuration, lighter: Gradio writes into it, for every component, the schemas its API page and
clients read (``api_info``, its input and output forms, ``example_inputs``), though the browser reads none of them
and the API page and the Python client read them from ``/info``, which Gradio makes from the endpoints' own
components. They are dropped from the components that only private events use (the page's own events, which no
client may call): a fifth of what a visitor downloads before the first click (issue 54). So are the properties
only the server reads (``SERVER_PROPS``: Gradio's page never names them), and no Markdown typesets LaTeX: no text
of the page is LaTeX, a typed "$$" stays as typed, and each Markdown's default delimiters were 60 bytes."""

from __future__ import annotations

from ..serving import gradio_seam

API_SCHEMAS = ("api_info", "api_info_as_input", "api_info_as_output", "example_inputs")
SERVER_PROPS = ("preserved_by_key", "delete_callback")  # gr.render's keys, and a file's removal: read in Python only


def without_private_schemas(config: dict) -> dict:
    """``config`` with ``API_SCHEMAS`` dropped from each component that no public or undocumented event reads or
    writes."""
    endpoints = [event for event in config["dependencies"] if event.get("api_visibility") != "private"]
    served = {block for event in endpoints for block in (*event["inputs"], *event["outputs"])}
    for component in config["components"]:
        if component["id"] not in served:
            for schema in API_SCHEMAS:
                component.pop(schema, None)
    return config


def for_the_page(config: dict) -> dict:
    """``config`` without ``SERVER_PROPS``, and with every Markdown's LaTeX delimiters emptied (Gradio's default
    typesets ``$$...$$``)."""
    for component in config["components"]:
        props = component.get("props", {})
        for name in SERVER_PROPS:
            props.pop(name, None)
        if component["type"] == "markdown":
            props["latex_delimiters"] = []
    return config


def light_config(config: dict) -> dict:
    """``config`` ``without_private_schemas``, and ``for_the_page``."""
    return for_the_page(without_private_schemas(config))


def serve_light_config(demo) -> None:
    """Serve ``demo``'s configuration as ``light_config`` makes it, from now on."""
    gradio_seam.pass_config_through(demo, light_config)
