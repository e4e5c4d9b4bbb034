"""The page around the tabs: reading the sentence, drawing the main views, and the page address.

- ``show_text`` runs the model once, keeps the ``Analysis`` in ``gr.State`` and draws the tab on screen when
  it is a ``main`` view (attention, all heads, positional encoding); the other main views are cleared and
  drawn from the kept analysis when their tab is opened, so one analysis sends one view's figure. Their own
  controls and the colour scale redraw from it without calling the model. It computes no explanation.
- The other tabs are drawn when used: when selected, when one of their controls changes, and, for the
  tab on screen, after each new analysis or colour-scale change. A tab whose numbers need the model keeps
  them in its own ``gr.State`` with the analysis and controls they came from (``runner.kept_view``).
- ``restore_view`` and ``restore_controls`` read the address (``?text=...&layer=2&view=knockout
  &heads_off=L1 H2``...) in the page load's one step, which also draws the view it names. ``sync_url_js``
  rewrites the address after each view to hold the text, the view and that view's controls, so a copied
  address reproduces the view. ``share_link`` keeps the same inputs in ``link_store`` for the "Copy link"
  button (texts too long for an address travel that way: ``?link=<key>``).
"""

from __future__ import annotations

import json
from pathlib import Path

import gradio as gr

from . import analysis, clients, link_store, page_address, runner
from .analysis import Analysis, EmptyInputError, InputError
from .colour import LEAVE_OUT, SCALES
from .inputs import MEAN_HEAD
from .registry import Reading, read_text
from .views import VIEWS, all_heads, attention, positional_encoding

REDRAW_ID = "redraw-"  # + a view's id: the element id of its hidden redraw button, which ``sync_url_js`` presses
MAX_URL_TEXT = 1500  # URL-encoded characters of a text kept in the page address; longer texts travel by link
LINK_PARAM = "link"  # the address parameter naming inputs kept by ``share_link``
# The page address: parameters kept for every view, then each view's own (its controls).
GLOBAL_PARAMS = ["text", "view", "layer", "head", "scale", "leave_out"]
VIEW_PARAMS = {view.id: list(view.params) for view in VIEWS if view.params}
URL_PARAMS = GLOBAL_PARAMS + [name for names in VIEW_PARAMS.values() for name in names]
TEXT_PARAMS = ["text", *(name for view in VIEWS for name, read in view.params.items() if read is read_text)]
PAGE_JS = (Path(__file__).parent / "page.js").read_text(encoding="utf-8")  # the functions ``page_script`` calls


def page_script(call: str) -> str:
    """A ``js=`` function that runs ``call`` (an expression over ``args``, the event's values) with page.js's
    functions in scope, and returns what it returns."""
    return f"(...args) => {{\n{PAGE_JS}\nreturn {call};\n}}"


def keep_typed_js(initial: str) -> str:
    """The page load's step after ``restore_page``: (its text, the box's) -> the box's text (page.js ``keepTyped``).

    ``initial`` is the sentence box's own value: a box that still holds it was not changed by the person.
    """
    return page_script(f"keepTyped(args[0], args[1], {json.dumps(initial)})")


def reanalyse_js() -> str:
    """The page load's last step: analyse a text typed while it ran (page.js ``reanalyseTyped``)."""
    return page_script("reanalyseTyped()")


def sync_url_js(
    names: list[str] = URL_PARAMS, address_read: bool = False, redraw: list[str] = (), show_tab: bool = False
) -> str:
    """JavaScript that writes the text, the view and that view's controls into the page address.

    Args:
        names: the address parameters the event sends, in order; the view and every global one among them.
            One the view keeps but the event does not send (a control it did not change) stays as it is.
        address_read: set by the last step of the page load. Until then it changes nothing: Gradio selects
            the first tab when the page mounts, and rewriting the address then would lose the view that the
            address asks for.
        redraw: views that are redrawn, when on screen, by pressing their hidden button (``REDRAW_ID``).
            Each view has its own event, so no event names every view's components (Gradio refreshes the
            loading status of every component an event has named, on every message of every event).
        show_tab: the page load's last step: select the view's tab (the page opens on the first). A tab that
            does not fit the width is in Gradio's overflow menu, found by its title. Its select event then
            finds the view already current and draws nothing.
    """
    titles = {view.id: view.title for view in VIEWS} if show_tab else {}
    return f"""
(...values) => {{
    {"window.__explorerAddressRead = true;" if address_read else "if (!window.__explorerAddressRead) return;"}
    const sent = {json.dumps(names)}, own = {json.dumps(VIEW_PARAMS)}, texts = {json.dumps(TEXT_PARAMS)};
    const view = values[sent.indexOf("view")];
    const url = new URL(window.location.href);
    url.searchParams.delete("deep_link");
    url.searchParams.delete("{LINK_PARAM}");
    {json.dumps(URL_PARAMS)}.forEach((name) => {{
        const kept = {json.dumps(GLOBAL_PARAMS)}.includes(name) || (own[view] || []).includes(name);
        if (kept && !sent.includes(name)) return;
        const value = values[sent.indexOf(name)];
        const shown = Array.isArray(value) ? value.join(",") : String(value ?? "");
        const fits = !texts.includes(name) || encodeURIComponent(shown).length <= {MAX_URL_TEXT};
        if (kept && fits && shown.trim()) {{
            url.searchParams.set(name, shown);
        }} else {{
            url.searchParams.delete(name);
        }}
    }});
    window.history.replaceState(window.history.state, "", url);
    const title = {json.dumps(titles)}[view];
    const find = (selector, test) => [...document.querySelectorAll(selector)].find(test);
    const tab = title && (find("#views [data-tab-id]", (b) => b.dataset.tabId === view)
        || find("#views .overflow-dropdown button", (b) => b.textContent.trim() === title));
    if (tab && tab.getAttribute("aria-selected") !== "true") tab.click();
    if ({json.dumps(list(redraw))}.includes(view)) document.getElementById("{REDRAW_ID}" + view)?.click();
}}
"""


def on_screen_view_js(inputs: int) -> str:
    """JavaScript run before an analysis: its last input, the view to draw, becomes the tab on screen.

    The page's current view changes only when a tab's select event comes back from the server; a tab
    chosen just before Analyze (the Errors tab opens a sentence in Attention) is already on screen.
    Gradio passes the event's ``inputs`` then its outputs; what it returns are the inputs sent.
    """
    titles = {view.title: view.id for view in VIEWS}
    return f"""
(...values) => {{
    const inputs = values.slice(0, {inputs});
    const tab = document.querySelector('#views button[role="tab"][aria-selected="true"]');
    const view = {json.dumps(titles)}[tab?.textContent.trim()];
    if (view) inputs[{inputs} - 1] = view;
    return inputs;
}}
"""


MAIN_VIEWS = [view.id for view in VIEWS if view.main]  # the order of ``show_text``'s figures


def show_main_view(result: Analysis | None, view: str, layer: int, head: str, dims, scale: str, leave_out) -> tuple:
    """The main views' figures (``MAIN_VIEWS`` order): ``view``'s drawn from the kept analysis, the others None."""
    drawn = {
        attention.VIEW.id: lambda: attention.show_head(result, layer, head, scale, leave_out),
        all_heads.VIEW.id: lambda: all_heads.show_grid(result, scale, leave_out),
        positional_encoding.VIEW.id: lambda: positional_encoding.show_positions(result, dims),
    }
    return tuple(drawn[main]() if main == view else None for main in MAIN_VIEWS)


def show_text(
    text: str | None,
    layer: int,
    head: str,
    dims: list[int] | None,
    scale: str = "global",
    leave_out: list[str] | None = None,
    view: str = attention.VIEW.id,
) -> tuple:
    """Run the model once on ``text``; draw the main view on screen, ``view``, and no other (no explanation).

    Returns:
        (analysis state, prediction, token spans, notice, heatmap, all-heads grid, positional curves): of
        the figures only ``view``'s, when it is a main view; the others None (drawn when their tab opens).
        Blank text gives a prompt in the notice and empty views, not an error.
    """
    try:
        result = runner.run_model(text)
    except EmptyInputError as prompt:
        return None, None, None, str(prompt), *show_main_view(None, view, layer, head, dims, scale, leave_out)
    except InputError as error:
        raise runner.user_error(error) from None
    return (
        result,
        result.prediction,
        analysis.token_spans(result),
        result.notice or "",
        *show_main_view(result, view, layer, head, dims, scale, leave_out),
    )


def share_link(request: gr.Request | None, *values) -> str:
    """The "Copy link" button: keep the view's inputs (``URL_PARAMS`` order, as the address has them); its key.

    What is kept is what ``sync_url_js`` writes into the address, without its length limit: the text, the
    view and that view's controls, as strings. Nothing the page computed is kept. The ``request``'s client
    makes at most ``link_store.NEW_LINKS`` allows (None: a caller in this process, not limited).
    """
    wait = 0.0 if request is None else link_store.NEW_LINKS.take(clients.client_address(request))
    if wait:
        raise gr.Error(
            clients.retry_message("shared links", wait), title="Cannot share this view", print_exception=False
        )
    named = dict(zip(URL_PARAMS, values, strict=True))
    kept = GLOBAL_PARAMS + VIEW_PARAMS.get(_address_value(named["view"]), [])
    params = {name: _address_value(value) for name, value in named.items() if name in kept}
    try:
        return link_store.save_link({name: value for name, value in params.items() if value.strip()})
    except InputError as error:
        raise runner.user_error(error, "Cannot share this view") from None


def _address_value(value) -> str:
    """A control's value as the address writes it: lists joined by commas, nothing as ""."""
    if isinstance(value, list):
        return ",".join(map(str, value))
    return "" if value is None else str(value)


def copy_link_js() -> str:
    """JavaScript that copies the page address with ``share_link``'s key added (``?link=<key>``), says so on the
    button, or shows the link selected where the clipboard refuses (page.js ``copyLink``)."""
    return page_script(f"copyLink(args[0], {json.dumps(LINK_PARAM)})")


def address(request: gr.Request | None) -> dict[str, str]:
    """The page address's parameters; a ``?link=`` adds the inputs it keeps (what the address says wins)."""
    params = dict(request.query_params) if request is not None else {}
    kept = link_store.load_link(params.pop(LINK_PARAM, None)) or {}
    return kept | params


def predict(text: str) -> dict:
    """Classify a text.
    Layers and heads count from 1 and token positions from 0, in every argument and answer.

    Returns {"label": the most likely class, "confidences": [{"label": class, "confidence": probability}, ...]}.
    """
    return analysis.label_payload(runner.read_for_api(text))


def _page_choice(value, allowed: list, default):
    """The page's ``value`` when it is one of the ``allowed`` choices, else ``default``."""
    picked = page_address.choice(str(value), allowed) if isinstance(value, str | int) else None
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
    view: str = attention.VIEW.id,
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
    layers, heads = list(range(1, model.num_layers + 1)), [MEAN_HEAD, *map(str, range(1, model.num_heads + 1))]
    leave_out_values = [value for _, value in LEAVE_OUT]
    text = params.get("text", text if isinstance(text, str) else "")
    layer = page_address.choice(params.get("layer"), layers) or _page_choice(layer, layers, 1)
    head = page_address.choice(params.get("head"), heads) or _page_choice(head, heads, "1")
    scale = page_address.choice(params.get("scale"), SCALES) or _page_choice(scale, SCALES, "global")
    restored = page_address.choices(params.get("leave_out"), leave_out_values)
    leave_out = _page_choices(leave_out, leave_out_values, []) if restored is None else restored
    dims = page_dims(dims, model)
    views = [view.id for view in VIEWS]
    view = page_address.choice(params.get("view"), views) or _page_choice(view, views, attention.VIEW.id)
    return (text, layer, head, scale, leave_out, *show_text(text, layer, head, dims, scale, leave_out, view))


def restore_controls(result: Analysis | None, request: gr.Request | None) -> dict[str, object]:
    """Page load, after ``restore_view``: the view and its controls from the address (``?view=knockout&...``).

    Returns:
        {URL parameter: value} for each parameter present and allowed; the others keep what the page has.
    """
    params = address(request)
    reading = Reading(runner.get_model()[0].model, len(result.tokens) if result is not None else 0)
    readers = {"view": lambda value, _: page_address.choice(value, [view.id for view in VIEWS])}
    readers |= {name: read for view in VIEWS for name, read in view.params.items()}
    restored = {name: read(params[name], reading) for name, read in readers.items() if name in params}
    return {name: value for name, value in restored.items() if value is not None}
