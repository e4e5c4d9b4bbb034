"""The page load: the text, the view and its controls read back from the page address, every value untrusted.

``restore_view`` reads the page's own controls and analyzes the text; ``restore_controls`` then reads the
view's controls (``View.params``). Each value is the address's when it is one of its control's choices,
else the page's when that is, else the control's default: never echoed in an error.
"""

from __future__ import annotations

import re

import gradio as gr

from .. import inputs, runner
from ..analysis import Analysis
from ..drawing.colour import LEAVE_OUT, SCALES
from ..registry import MAX_DIMS, Reading, Registry, default_dims, head_choices
from ..serving.link_store import load_link
from .address import CUT_PARAM, GRADIO_VIEWS, LINK_PARAM, address
from .page import show_text


def _page_choice(value, allowed: list, default):
    """The page's ``value`` when it is one of the ``allowed`` choices, else ``default``."""
    picked = inputs.choice(str(value), allowed) if isinstance(value, str | int) else None
    return default if picked is None else picked


def _page_choices(value, allowed: list, default: list, most: int | None = None) -> list:
    """The page's list ``value`` when it holds only ``allowed`` choices (at most ``most``), else ``default``."""
    if not isinstance(value, list) or (most is not None and len(value) > most):
        return default
    picked = [_page_choice(item, allowed, None) for item in value]
    return default if None in picked else picked


def page_dims(dims, model) -> list[int]:
    """The page's positional-encoding dimensions when they are the dropdown's choices (at most 8), else the default."""
    allowed, default = list(range(model.d_model)), default_dims(model)
    return _page_choices(dims, allowed, default, most=MAX_DIMS)


def restore_view(
    registry: Registry,
    text: str,
    layer: int,
    head: str,
    dims: list[int] | None,
    request: gr.Request | None,
    scale: str = "global",
    leave_out: list[str] | None = None,
    view: str | None = None,
) -> tuple:
    """Page load: take text, layer, head, colour scale and view from the address; draw the view if it is a main one.

    The page's own values run here unchecked by Gradio (the load event does not preprocess), so a page value
    is used only when it is one of its control's choices, else the control's default; never echoed in an
    error. The address's values (and a ``?link=``'s) are checked the same way.

    Returns:
        (text, layer, head, scale, leave_out, *the outputs of ``show_text``).
    """
    params = address(request)
    model = runner.get_model()[0].model
    layers, heads = list(inputs.numbers(model.num_layers)), [value for _, value in head_choices(model, mean=True)]
    leave_out_values = [value for _, value in LEAVE_OUT]  # the page's own values are checked against the same
    read = {name: reader(params.get(name)) for name, reader in page_readers(registry, model).items()}
    text = params.get("text", text if isinstance(text, str) else "")
    layer = read["layer"] or _page_choice(layer, layers, 1)
    head = read["head"] or _page_choice(head, heads, "1")
    scale = read["scale"] or _page_choice(scale, SCALES, "global")
    leave_out = _page_choices(leave_out, leave_out_values, []) if read["leave_out"] is None else read["leave_out"]
    dims = page_dims(dims, model)
    view = read["view"] or _page_choice(view, registry.ids, registry.first_view)
    return (text, layer, head, scale, leave_out, *show_text(registry, text, layer, head, dims, scale, leave_out, view))


def page_readers(registry: Registry, model) -> dict:
    """{page address parameter: its reader, ``value -> allowed value or None``} (the text needs none)."""
    layers, heads = list(inputs.numbers(model.num_layers)), [value for _, value in head_choices(model, mean=True)]
    leave_out_values = [value for _, value in LEAVE_OUT]
    return {
        "layer": lambda value: inputs.choice(value, layers),
        "head": lambda value: inputs.choice(value, heads),
        "scale": lambda value: inputs.choice(value, SCALES),
        "leave_out": lambda value: inputs.choices(value, leave_out_values),
        "view": lambda value: inputs.choice(value, registry.ids),
    }


def unrestored(
    registry: Registry, result: Analysis | None, request: gr.Request | None, labels: dict[str, str] | None = None
) -> str:
    """One line naming what the address asked for that the page could not restore ("" when nothing): an
    unknown or expired ``?link=``, each text the address left out (``?cut=``, too long for an address: ``page.js``),
    and each parameter whose value is not allowed, in the page's words (its control's ``labels``, never the
    address's name for it, never its value). Gradio's own ``?view=api`` is not the app's to read."""
    sent = dict(request.query_params) if request is not None else {}
    said = (
        ["The shared link is unknown or has expired."]
        if LINK_PARAM in sent and load_link(sent[LINK_PARAM]) is None
        else []
    )
    cut = [name for name in sent.get(CUT_PARAM, "").split(",") if name in registry.text_params]
    if cut:
        texts = described_all(registry, cut, labels)
        it = "it" if len(cut) == 1 else "them"
        said.append(
            f"{texts} {'was' if it == 'it' else 'were'} too long for the address and left out: a link from "
            f"“Copy link to this view” keeps {it}."
        )
    if names := not_allowed(registry, result, request):
        one = len(names) == 1
        said.append(
            f"{described_all(registry, names, labels)} {'is' if one else 'are'} not allowed here, so the page "
            f"shows {'its' if one else 'their'} default."
        )
    return " ".join(said)


def not_allowed(registry: Registry, result: Analysis | None, request: gr.Request | None) -> list[str]:
    """The address's parameters whose value the page does not allow (Gradio's own ``?view=api`` is allowed)."""
    params = address(request)
    model = runner.get_model()[0].model
    reading = Reading(model, len(result.tokens) if result is not None else 0)
    read = dict(registry.readers)
    read |= {
        name: lambda value, _, reader=reader: reader(value) for name, reader in page_readers(registry, model).items()
    }
    names = [name for name, value in params.items() if name in read and read[name](value, reading) is None]
    return [name for name in names if not (name == "view" and params[name] in GRADIO_VIEWS)]


def described_all(registry: Registry, names: list[str], labels: dict[str, str] | None) -> str:
    """``names`` in the page's words (``described``), in one phrase that opens a sentence."""
    items = [described(registry, name, labels or {}) for name in names]
    phrase = items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"
    return phrase[0].upper() + phrase[1:]


PLAIN_NAMES = {"view": "the tab", "text": "the sentence"}  # the page's parameters without a label of their own


def described(registry: Registry, name: str, labels: dict[str, str]) -> str:
    """An address parameter as the page shows it: its control's label (less any note in brackets), and its tab."""
    if name in PLAIN_NAMES:
        return PLAIN_NAMES[name]
    label = "“" + re.sub(r"\s*\(.*\)$", "", labels.get(name) or name.replace("_", " ")) + "”"
    owner = next((view.title for view in registry.views if name in registry.view_params.get(view.id, [])), None)
    return f"the {owner} tab's {label}" if owner else f"the page's {label}"


def restore_controls(registry: Registry, result: Analysis | None, request: gr.Request | None) -> dict[str, object]:
    """Page load, after ``restore_view``: the view and its controls from the address (``?view=knockout&...``).

    A view's ``fallbacks`` fill one of its parameters from a page parameter when the address lacks it.

    Returns:
        {URL parameter: value} for each parameter present and allowed; the others keep what the page has.
    """
    params = address(request)
    params |= {name: params[page] for name, page in registry.fallbacks.items() if name not in params and page in params}
    reading = Reading(runner.get_model()[0].model, len(result.tokens) if result is not None else 0)
    read_params = {"view": lambda value, _: inputs.choice(value, registry.ids)} | registry.readers
    restored = {name: read(params[name], reading) for name, read in read_params.items() if name in params}
    return {name: value for name, value in restored.items() if value is not None}


def drawn_over(values: dict, drawn: dict) -> dict:
    """The load's ``values`` with the view's ``drawn`` answers over them. An answer that leaves a control's value out
    (a skip, or ``registry.kept_control``: a draw never sends back the value it read) keeps the value restored."""
    merged = dict(values)
    for block, answer in drawn.items():
        if isinstance(answer, dict) and "value" not in answer and block in values:
            before = values[block]
            answer = (before if isinstance(before, dict) else gr.update(value=before)) | answer
        merged[block] = answer
    return merged
