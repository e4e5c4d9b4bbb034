"""The page load: the text, the view and its controls read back from the page address, every value untrusted.

``restore_view`` reads the page's own controls and analyzes the text; ``restore_controls`` then reads the
view's controls (``View.params``). Each value is the address's when it is one of its control's choices,
else the page's when that is, else the control's default: never echoed in an error.
"""

from __future__ import annotations

import gradio as gr

from . import readers, runner
from .address import address
from .analysis import Analysis
from .colour import LEAVE_OUT, SCALES
from .page import FIRST_VIEW, show_text
from .registry import Reading, head_choices
from .views import VIEWS, positional_encoding

VIEW_IDS = [view.id for view in VIEWS]


def _page_choice(value, allowed: list, default):
    """The page's ``value`` when it is one of the ``allowed`` choices, else ``default``."""
    picked = readers.choice(str(value), allowed) if isinstance(value, str | int) else None
    return default if picked is None else picked


def _page_choices(value, allowed: list, default: list, most: int | None = None) -> list:
    """The page's list ``value`` when it holds only ``allowed`` choices (at most ``most``), else ``default``."""
    if not isinstance(value, list) or (most is not None and len(value) > most):
        return default
    picked = [_page_choice(item, allowed, None) for item in value]
    return default if None in picked else picked


def page_dims(dims, model) -> list[int]:
    """The page's positional-encoding dimensions when they are the dropdown's choices (at most 8), else the default."""
    allowed, default = list(range(model.d_model)), positional_encoding.default_dims(model)
    return _page_choices(dims, allowed, default, most=positional_encoding.MAX_DIMS)


def restore_view(
    text: str,
    layer: int,
    head: str,
    dims: list[int] | None,
    request: gr.Request | None,
    scale: str = "global",
    leave_out: list[str] | None = None,
    view: str = FIRST_VIEW,
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
    layers, heads = list(range(1, model.num_layers + 1)), [value for _, value in head_choices(model, mean=True)]
    leave_out_values = [value for _, value in LEAVE_OUT]
    text = params.get("text", text if isinstance(text, str) else "")
    layer = readers.choice(params.get("layer"), layers) or _page_choice(layer, layers, 1)
    head = readers.choice(params.get("head"), heads) or _page_choice(head, heads, "1")
    scale = readers.choice(params.get("scale"), SCALES) or _page_choice(scale, SCALES, "global")
    restored = readers.choices(params.get("leave_out"), leave_out_values)
    leave_out = _page_choices(leave_out, leave_out_values, []) if restored is None else restored
    dims = page_dims(dims, model)
    view = readers.choice(params.get("view"), VIEW_IDS) or _page_choice(view, VIEW_IDS, FIRST_VIEW)
    return (text, layer, head, scale, leave_out, *show_text(text, layer, head, dims, scale, leave_out, view))


def restore_controls(result: Analysis | None, request: gr.Request | None) -> dict[str, object]:
    """Page load, after ``restore_view``: the view and its controls from the address (``?view=knockout&...``).

    A view's ``fallbacks`` fill one of its parameters from a page parameter when the address lacks it.

    Returns:
        {URL parameter: value} for each parameter present and allowed; the others keep what the page has.
    """
    params = address(request)
    for view in VIEWS:
        params |= {name: params[page] for name, page in view.fallbacks.items() if name not in params and page in params}
    reading = Reading(runner.get_model()[0].model, len(result.tokens) if result is not None else 0)
    read_params = {"view": lambda value, _: readers.choice(value, VIEW_IDS)}
    read_params |= {name: read for view in VIEWS for name, read in view.params.items()}
    restored = {name: read(params[name], reading) for name, read in read_params.items() if name in params}
    return {name: value for name, value in restored.items() if value is not None}
