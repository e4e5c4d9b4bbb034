"""The API and MCP endpoints: ``/predict`` and every view's (``View.endpoints``), each under an explicit name.

Each endpoint is a plain typed function, named as its endpoint (Gradio names an MCP tool after the
function), whose docstring has "Args:" and "Returns:" sections. Gradio reads the description and, for MCP
tools, each parameter's; ``serve_endpoints`` also gives the API page each parameter's name and description
and what the endpoint returns, where ``gr.api`` alone shows "1st", "2nd".
"""

from __future__ import annotations

import gradio as gr
from gradio.utils import get_function_description

from . import payloads, runner
from .views import VIEWS


def predict(text: str) -> dict:
    """Classify a text.
    Layers and heads count from 1 and token positions from 0, in every argument and answer.

    Args:
        text: the text to classify (at most 10,000 characters; the model reads its first max_len tokens).

    Returns:
        {"label": the most likely class, "confidences": [{"label": class, "confidence": probability}, ...]}.
    """
    return payloads.label_payload(runner.read_for_api(text))


def endpoints() -> dict:
    """{API name: function}: ``/predict``, then each view's, in the page's order.

    Raises:
        ValueError: a name taken twice, or a function not named as its endpoint (its MCP tool would differ).
    """
    served = {"predict": predict}
    for view in VIEWS:
        for name, fn in view.endpoints.items():
            if name in served:
                raise ValueError(f'Two endpoints are named "{name}": {served[name].__module__} and {fn.__module__}')
            served[name] = fn
    for name, fn in served.items():
        if fn.__name__ != name:
            raise ValueError(f'The endpoint "{name}" is served by {fn.__name__}: name the function as its endpoint')
    return served


def serve_endpoints(demo: gr.Blocks) -> None:
    """Serve ``endpoints()`` from ``demo`` (inside its ``with`` block), each documented from its docstring."""
    for name, fn in endpoints().items():
        gr.api(fn, api_name=name)
        block_fn = next(block_fn for block_fn in demo.fns.values() if block_fn.api_name == name)
        document(block_fn, fn)


def document(block_fn, fn) -> None:
    """Name and describe ``fn``'s parameters and returns on the API page, from its docstring.

    ``gr.api`` makes one ``gr.Api`` component per parameter and return value; the API page shows each one's
    ``label`` and its schema's descriptions (``additional_description`` for an input, ``description`` for
    an output), which ``gr.api`` leaves empty.
    """
    _, parameters, returns = get_function_description(fn)
    for component, (name, about) in zip(block_fn.inputs, parameters.items(), strict=True):
        component.label = name
        component._api_info = component._api_info | {"additional_description": about}
    for component in block_fn.outputs:
        component._api_info = component._api_info | {"description": " ".join(returns)}
