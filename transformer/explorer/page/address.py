"""The page address: the parameters it keeps, reading them from a request, and "Copy link".

The address (``?text=...&layer=2&view=knockout&heads_off=L1 H2``...) holds the text, the view, the page's
own controls (``GLOBAL_PARAMS``) and that view's controls (``View.params``, one namespace for all views,
listed by the ``Registry``). ``page.js`` writes it after each view is drawn, from what ``script_config`` tells it;
the page load reads it (``restore``). ``share_link`` keeps the same values in ``link_store`` for the "Copy link"
button, so that texts too long for an address travel too (``?link=<key>``).
"""

from __future__ import annotations

import gradio as gr

from .. import runner
from ..analysis import InputError
from ..drawing import theme
from ..drawing.figures import LEGEND_BELOW
from ..registry import GLOBAL_PARAMS, Registry
from ..serving import clients, link_store
from . import scripts

MAX_URL_TEXT = 1500  # URL-encoded characters of a text kept in the page address; longer texts travel by link
LINK_PARAM = "link"  # the address parameter naming inputs kept by ``share_link``
CUT_PARAM = "cut"  # the address parameter naming the texts ``page.js`` left out of it, too long for an address
GRADIO_VIEWS = ["api", "api-recorder", "settings"]  # ``?view=`` values of Gradio's own pages, never the app's tabs


def address(request: gr.Request | None) -> dict[str, str]:
    """The page address's parameters; a ``?link=`` adds the inputs it keeps (what the address says wins)."""
    params = dict(request.query_params) if request is not None else {}
    kept = link_store.load_link(params.pop(LINK_PARAM, None)) or {}
    return kept | params


def address_value(value) -> str:
    """A control's value as the address writes it: lists joined by commas, nothing as ""."""
    if isinstance(value, list):
        return ",".join(map(str, value))
    return "" if value is None else str(value)


def share_link(registry: Registry, request: gr.Request | None, *values) -> str:
    """The "Copy link" button: keep the view's inputs (``registry.url_params`` order, as the address has them); its
    key.

    What is kept is what ``page.js`` writes into the address, without its length limit: the text, the
    view and that view's controls, as strings. Nothing the page computed is kept. The ``request``'s client
    makes at most ``link_store.NEW_LINKS`` allows, and all clients together ``link_store.ALL_NEW_LINKS`` (None: a
    caller in this process, not limited).
    """
    client = None if request is None else clients.request_client(request)
    wait, source = (
        (0.0, "") if client is None else clients.take_both(link_store.NEW_LINKS, link_store.ALL_NEW_LINKS, client)
    )
    if wait:
        message = clients.retry_message("shared links", wait, source)
        raise gr.Error(message, title="Cannot share this view", print_exception=False)
    named = dict(zip(registry.url_params, values, strict=True))
    kept = GLOBAL_PARAMS + registry.view_params.get(address_value(named["view"]), [])
    params = {name: address_value(value) for name, value in named.items() if name in kept}
    try:
        return link_store.save_link({name: value for name, value in params.items() if value.strip()})
    except InputError as error:
        raise runner.user_error(error, "Cannot share this view") from None


def script_config(registry: Registry) -> dict:
    """What the page's scripts read from ``window.explorerConfig`` (``scripts.head``)."""
    return {
        "globalParams": GLOBAL_PARAMS,
        "viewParams": registry.view_params,
        "urlParams": registry.url_params,
        "textParams": registry.text_params,
        "maxUrlText": MAX_URL_TEXT,
        "linkParam": LINK_PARAM,
        "cutParam": CUT_PARAM,
        "gradioViews": GRADIO_VIEWS,
        "redrawId": scripts.REDRAW_ID,
        "currentId": scripts.CURRENT_ID,
        "viewOfTitle": registry.titles,
        "explanations": registry.explanations,
        "phone": {
            "phonePx": theme.PHONE_PX,
            "modebarPx": theme.MODEBAR_PX,
            "phoneGridLabels": theme.PHONE_GRID_LABELS,
            "legendBelow": LEGEND_BELOW,
        },
    }
