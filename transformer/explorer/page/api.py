"""The API and MCP endpoints: ``/predict`` and every view's (``View.endpoints``), each under an explicit name.

Each endpoint is a plain typed function, named as its endpoint (Gradio names an MCP tool after the
function), whose docstring has "Args:" and "Returns:" sections. Gradio reads the description and, for MCP
tools, each parameter's; ``serve_endpoints`` also gives the API page each parameter's name and description
and what the endpoint returns, where ``gr.api`` alone shows "1st", "2nd" and "Any". The docstring of an
endpoint whose arguments or answer hold a layer, a head or a token position says how they are numbered.
``/predict`` is served on the explorer's page, the others on a page of their own, ``/api`` (``serve_endpoints``).
"""

from __future__ import annotations

import functools
import inspect
import re

import gradio as gr

from .. import payloads, runner
from ..registry import Registry
from ..serving import gradio_seam


def predict(text: str) -> dict:
    """Classify a text.

    Args:
        text: the text to classify (at most 10,000 characters; the model reads its first max_len tokens).

    Returns:
        {"label": the most likely class, "confidences": [{"label": class, "confidence": probability}, ...],
        "clear": false when the model has no clear opinion, its two likeliest classes less than 0.2 apart (for
        two classes, a probability between 0.4 and 0.6), else true}.
    """
    return payloads.label_payload(runner.read_for_api(text))


def endpoints(registry: Registry) -> dict:
    """{API name: function}: ``/predict``, then each view's, in the page's order.

    Raises:
        ValueError: a name taken twice, or a function not named as its endpoint (its MCP tool would differ).
    """
    served = {"predict": predict}
    for view in registry.views:
        for name, fn in view.endpoints.items():
            if name in served:
                raise ValueError(f'Two endpoints are named "{name}": {served[name].__module__} and {fn.__module__}')
            served[name] = fn
    for name, fn in served.items():
        if fn.__name__ != name:
            raise ValueError(f'The endpoint "{name}" is served by {fn.__name__}: name the function as its endpoint')
    return served


PAGE = "api"  # the address of the endpoints' own page, /api: not one of Gradio's (``demo.route`` refuses those)
ON_THE_EXPLORER = ("predict",)  # the endpoints served on the explorer's page itself (``serve_endpoints``)
PAGE_TEXT = (  # the endpoints' page shows this alone: a visitor of /api learns where the endpoints are described
    "This address serves the explorer's API endpoints and has no page of its own: *Use via API or MCP*, at the foot "
    "of this page, describes them (`/predict` at the foot of [the explorer's page](./)), as the README does."
)


def serve_endpoints(demo: gr.Blocks, registry: Registry) -> None:
    """Serve ``endpoints(registry)`` from ``demo``, after its ``with`` block, each documented from its docstring:
    ``ON_THE_EXPLORER`` on the explorer's page, the others on a page of their own, ``PAGE``, out of the navbar.

    A page's first HTML carries its own page's configuration only (Gradio's ``get_page_config``), and the endpoints'
    ``gr.Api`` components and events were a fifth of the explorer's (issue 54), which its page never calls. MCP,
    ``/gradio_api/info``, ``/gradio_api/call/<name>`` and the Python client find an endpoint on any page, and the
    "Use via API or MCP" panel's MCP tab lists every tool; its Python, JavaScript and cURL tabs list its own page's
    endpoints, and with none the panel says "No API Routes found" instead: so ``/predict`` stays.
    """
    served = endpoints(registry)
    with demo:
        # Its one other page is out of the navbar, which Gradio would still draw, with one link, "Home". Not
        # visible=False: that Navbar is never mounted, so the bar stays (gradio-app/gradio#12532). Hidden, it hides
        # the bar once the page's components mount; before that, ``theme.HEAD_CSS`` does.
        gr.Navbar(visible="hidden")
        serve(demo, {name: served.pop(name) for name in ON_THE_EXPLORER})
    with demo.route("API", PAGE, show_in_navbar=False):
        gr.Markdown(PAGE_TEXT)
        serve(demo, served)


def serve(demo: gr.Blocks, served: dict) -> None:
    """Serve each of ``served`` ({API name: function}) on the page ``demo`` lays out, documented (``document``)."""
    for name, fn in served.items():
        gr.api(as_gradio_reads(fn), api_name=name, api_description=description(fn))
        block_fn = next(block_fn for block_fn in demo.fns.values() if block_fn.api_name == name)
        document(block_fn, fn)


def as_gradio_reads(fn):
    """``fn``, its docstring with each argument on one line: Gradio's MCP server describes a tool's parameters from
    the function's docstring and keeps only an argument's first line ("... for every head. An answer")."""

    @functools.wraps(fn)
    def endpoint(*args, **kwargs):
        return fn(*args, **kwargs)

    docstring = inspect.getdoc(fn) or ""
    head, args_and_rest = docstring.split("Args:", 1) if "Args:" in docstring else (docstring, "")
    rest = re.split(r"\n\s*\n", args_and_rest, maxsplit=1)[1:]  # after the arguments' blank line
    lines = [f"    {name}: {plain(about)}" for name, about in _arguments(docstring).items()]
    endpoint.__doc__ = "\n\n".join([head.rstrip(), "Args:\n" + "\n".join(lines), *rest]) if lines else docstring
    return endpoint


def document(block_fn, fn) -> None:
    """Name and describe ``fn``'s parameters and returns on the API page, from its docstring.

    ``gr.api`` makes one ``gr.Api`` component per parameter and return value; the API page shows each one's
    ``label`` and its schema's descriptions (``additional_description`` for an input, ``description`` for
    an output), which ``gr.api`` leaves empty (``gradio_seam.describe_on_api_page``).
    """
    _, parameters, returns = documented(fn)
    for component, (name, about) in zip(block_fn.inputs, parameters.items(), strict=True):
        component.label = name
        gradio_seam.describe_on_api_page(component, {"additional_description": about})
    answer = " ".join(returns)
    (component,) = block_fn.outputs
    component.label = ANSWER_LABEL
    keys = {key: {} for key in answer_keys(answer)}  # the Python tab shows "dict(tokens: Any, ...)", not "Any"
    gradio_seam.describe_on_api_page(component, {"type": "object", "properties": keys, "description": answer})


ANSWER_LABEL = "answer (a JSON object)"


def description(fn) -> str:
    """What the API page and the MCP tool say of ``fn``: its docstring's description, then its answer.

    Gradio's own MCP description joins the answer's docstring lines with ", ", doubling each comma that ends
    a line (``"truncated": bool,, "attentions"``); here they are joined by spaces.
    """
    about, _, returns = documented(fn)
    return f"{about} Returns: {' '.join(returns)}"


def documented(fn) -> tuple[str, dict[str, str], list[str]]:
    """``fn``'s docstring as Gradio reads it (description, {parameter: its line}, the answer's lines), read as the API
    page's plain text: each parameter's description whole (Gradio keeps only an argument's first line, cutting
    "... for every head. An answer" mid-sentence), and reST's double backticks dropped around a name."""
    about, parameters, returns = gradio_seam.docstring_parts(fn)
    arguments = _arguments(inspect.getdoc(fn) or "")
    whole = {name: arguments.get(name, line) for name, line in parameters.items()}
    return plain(about), {name: plain(line) for name, line in whole.items()}, [plain(line) for line in returns]


def _arguments(docstring: str) -> dict[str, str]:
    """{name: its description, continuation lines joined} from a docstring's "Args:" section."""
    section = docstring.split("Args:", 1)[1] if "Args:" in docstring else ""
    section = re.split(r"\n\s*\n|\n\S", section, maxsplit=1)[0]  # up to a blank line or the next heading
    arguments = re.findall(r"^    (\w+): (.*(?:\n {8,}.*)*)", section, flags=re.MULTILINE)
    return {name: " ".join(about.split()) for name, about in arguments}


def plain(text: str) -> str:
    """``text`` with reST's ````name```` written name."""
    return re.sub(r"``([^`]+)``", r"\1", text)


def answer_keys(answer: str) -> list[str]:
    """The top-level keys of an answer written ``{"tokens", "scores": {"layer", ...}, ...}``, in order."""
    keys, depth = [], 0
    for match in re.finditer(r'[{}\[\]]|"(\w+)"', answer):
        if match[0] in "{[":
            depth += 1
        elif match[0] in "}]":
            depth -= 1
        elif depth == 1:
            keys.append(match[1])
    return list(dict.fromkeys(keys))
