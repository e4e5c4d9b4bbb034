"""Error-browser tab: the bundled dev sets' sentences the model gets wrong, most confident first, and the
``/errors`` endpoint.

The list is computed with the model into ``errors.json`` next to it (``explorer.artifacts``); the Space
never needs the data. Filters: set, true label, and a text search. Clicking a row opens its sentence in
the explorer, so the page address holds it and a wrong prediction can be shared as a link.
"""

from __future__ import annotations

import functools
import html

import gradio as gr

from .. import artifacts, runner, scripts
from ..analysis import InputError
from ..inputs import shown, whole_number
from ..registry import Drawing, Page, View

ALL = "all"
MAX_SHOWN = 500  # rows drawn in the table; the summary says how many match
COLUMNS = ["set", "true label", "predicted", "confidence", "text"]
# Wide enough for each header in bold with its sort icon: a wrapped header would break "confidence" mid-word.
COLUMN_WIDTHS = ["90px", "120px", "120px", "130px", "auto"]


# Reads the clicked row's sentence into the explorer as a person would: type it, show Attention, press Analyze.
@functools.lru_cache(maxsize=1)
def model_errors() -> dict | None:
    """The errors.json made for the explorer's model (same weights hash), read once; None when there is none."""
    folder = runner.get_model()[0].folder
    if folder is None or not (folder / artifacts.WEIGHTS_FILE).is_file():
        return None
    return artifacts.read_artifact(folder, artifacts.ERRORS_FILE, artifacts.model_hash(folder))


def filter_errors(errors: list[dict], set_name: str = ALL, label: str = ALL, search: str = "") -> list[dict]:
    """The errors of ``set_name`` (or every set) whose true label is ``label`` (or any) and whose text holds
    ``search`` (case-insensitive), in the file's order (most confident first)."""
    needle = search.casefold().strip()
    return [
        error
        for error in errors
        if set_name in (ALL, error["set"]) and label in (ALL, error["label"]) and needle in error["text"].casefold()
    ]


def check_filters(data: dict, set_name, label, search) -> tuple[str, str, str]:
    """The filters as sent when the file offers them, else an ``InputError`` that says what is allowed."""
    sets, labels = [ALL, *data["sets"]], [ALL, *data["label_names"]]
    if set_name not in sets:
        raise InputError(f"Choose a set from {', '.join(sets)}; got {shown(set_name)}.")
    if label not in labels:
        raise InputError(f"Choose a true label from {', '.join(labels)}; got {shown(label)}.")
    if not isinstance(search, str):
        raise InputError(f"The search must be text; got {shown(search)}.")
    return set_name, label, search[:200]


def errors_summary(data: dict | None, matching: int | None = None) -> str:
    """How many errors each set has, how many match the filters, or why there is no list."""
    if data is None:
        return (
            "<p>No error list ships with this model. Make one with <code>python -m transformer.artifacts "
            "--model MODEL_FOLDER --data-dir DATA_FOLDER</code>; it writes <code>errors.json</code> next to the "
            "model.</p>"
        )
    counts = ", ".join(
        f"{html.escape(name)} {count['wrong']} of {count['rows']}" for name, count in data["sets"].items()
    )
    left_out = f" ({data['left_out']} least confident left out to keep the file small)" if data["left_out"] else ""
    shown_rows = f"; {matching} match, the first {min(matching, MAX_SHOWN)} are listed" if matching is not None else ""
    return f"<p>Wrong predictions: {counts}{left_out}{shown_rows}. Click a row to open it in the explorer.</p>"


def show_errors(set_name: str, label: str, search: str) -> tuple:
    """(summary, table rows) for the filters; no list when the model has no errors.json."""
    data = model_errors()
    if data is None:
        return errors_summary(None), None
    with runner.clear_errors("Cannot filter the errors"):
        picked = filter_errors(data["errors"], *check_filters(data, set_name, label, search or ""))
    rows = [[e["set"], e["label"], e["predicted"], e["confidence"], e["text"]] for e in picked[:MAX_SHOWN]]
    return errors_summary(data, len(picked)), rows


def picked_text(event: gr.SelectData) -> str:
    """The sentence of the clicked row, or "" for anything else."""
    row = event.row_value if isinstance(event.row_value, list) else []
    return str(row[-1]) if len(row) == len(COLUMNS) and isinstance(row[-1], str) else ""


def errors(set: str = ALL, label: str = ALL, search: str = "", limit: int = 100) -> dict:
    """The bundled dev sets' sentences the explorer's model gets wrong, most confident first.
    Layers and heads count from 1 and token positions from 0, in every argument and answer.

    Args:
        set: "all" or one dev set ("sst2", "yelp", "pros_cons", "tweets").
        label: "all" or a true label ("negative", "positive").
        search: only sentences that contain this text (case-insensitive).
        limit: at most this many errors (1 to 5000).

    Returns:
        {"sets": {set: {"rows", "wrong"}}, "matching": how many match, "errors": [{"set", "text", "label"
        (true), "predicted", "confidence" (the predicted class's probability)}, ...]}; without a list, no errors and
        a "note" that says so.
    """
    data = model_errors()
    if data is None:
        return {"sets": {}, "matching": 0, "errors": [], "note": "No error list ships with this model (errors.json)."}
    with runner.clear_errors("Cannot filter the errors"):
        limit = whole_number(limit, "Limit", 1, 5000)
        picked = filter_errors(data["errors"], *check_filters(data, set, label, search))
    return {"sets": data["sets"], "matching": len(picked), "errors": picked[:limit]}


def layout(page: Page) -> Drawing:
    gr.Markdown("The dev-set sentences the model gets wrong, the most confident mistakes first.")
    data = model_errors()
    with gr.Row():
        set_name = gr.Dropdown(
            [ALL, *(data["sets"] if data else [])],
            value=ALL,
            label="Set",
            allow_custom_value=True,
            elem_id="errors-set",
        )
        label = gr.Dropdown(
            [ALL, *(data["label_names"] if data else [])],
            value=ALL,
            label="True label",
            allow_custom_value=True,  # checked by check_filters, which never echoes a deep link's markup
            elem_id="errors-label",
        )
        search = gr.Textbox(label="Text contains", placeholder="press Enter to search", elem_id="errors-search")
    summary = gr.HTML(elem_id="errors-summary")
    table = gr.Dataframe(
        headers=COLUMNS,
        datatype=["str", "str", "str", "number", "str"],
        interactive=False,
        wrap=True,
        column_widths=COLUMN_WIDTHS,
        label="Wrong predictions (click a row to open it)",
        elem_id="errors-table",
    )
    clicked = gr.Textbox(visible=False, elem_id="errors-clicked")
    table.select(picked_text, None, clicked, api_visibility="private").then(
        None, clicked, None, js=scripts.call("openText"), api_visibility="private"
    )
    return Drawing(
        show_errors, [set_name, label, search], [summary, table], [set_name.input, label.input, search.submit]
    )


VIEW = View("errors", "Errors", layout, endpoints={"errors": errors}, colour_scale=False)
