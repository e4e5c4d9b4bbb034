"""Error-browser tab: the bundled dev sets' sentences the model gets wrong, most confident first, and the
``/errors`` endpoint.

The list is read from ``errors.json`` next to the model when its hash is the model's (``python -m
transformer.artifacts`` writes it; the Space never needs the data), else from the explorer's cache folder. A model
with neither (a retrained or user model) has it computed on first open of the tab or first call of ``/errors``
when the data folder is at hand: once, with a progress bar, the list that command would write, kept in the cache
folder, never the model folder. Without the data folder the tab says how to make one. Filters: set, true label
(their choices follow the list), and a text search. Clicking a row opens its sentence in the explorer, so the page
address holds it and a wrong prediction can be shared as a link.
"""

from __future__ import annotations

import html
import time

import gradio as gr
import torch

from ...explain.layer_readout import committed_stage, layer_readout
from .. import runner
from ..analysis import InputError
from ..corpus import data_folder, model_files
from ..corpus.on_demand import (
    COMMAND,
    ModelArtifact,
    compute_then_draw,
    data_folder_for,
    requested,
    run_request,
    time_note,
)
from ..inputs import choice, quoted, whole_number
from ..page import scripts
from ..registry import Drawing, Page, View, cancel_button, kept_control, read_text

ALL = "all"
LATE = "late flips only"  # the "Decided at" filter's choice: the errors decided at the last layer only
MAX_SHOWN = 500  # rows drawn in the table; the summary says how many match
COLUMNS = ["set", "true label", "predicted", "confidence", "decided at", "text"]
# Wide enough for each header in bold with its sort icon: a wrapped header would break "confidence" mid-word.
COLUMN_WIDTHS = ["90px", "120px", "120px", "130px", "120px", "auto"]
# (model hash, text) -> the stage from which the class read out after every layer stays the predicted one: the
# commitment strip's column. Computed for the listed sentences as a draw shows them, so at most the list's texts.
DECIDED: dict[tuple[str, str], int] = {}


def build_errors(sha: str) -> dict:
    """The loaded model's wrong predictions on the bundled dev sets, as ``python -m transformer.artifacts`` writes
    them (tqdm progress).

    Raises:
        gr.Error: there is no data folder to compute them from.
    """
    data_dir = data_folder_for("the errors", "them")
    loaded, _ = runner.get_model()
    return model_files.build_errors(loaded.model, loaded.tokenizer, data_folder.dev_sets(data_dir), sha)


def dev_texts() -> list[str]:
    """Every dev set's texts, which the error list reads."""
    return [row.text for rows in data_folder.dev_sets(data_folder.data_dir()).values() for row in rows]


ERRORS = ModelArtifact(model_files.ERRORS_FILE, build_errors)  # errors.json, else the cache's, else computed once


def filter_choices(data: dict | None) -> tuple[list[str], list[str]]:
    """The set and true-label choices: ``ALL``, then the list's sets and label names (none without a list)."""
    return [ALL, *(data["sets"] if data else [])], [ALL, *(data["label_names"] if data else [])]


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
    sets, labels = filter_choices(data)
    if set_name not in sets:
        raise InputError(f"Choose a set from {', '.join(sets)}; got {quoted(set_name)}.")
    if label not in labels:
        raise InputError(f"Choose a true label from {', '.join(labels)}; got {quoted(label)}.")
    if not isinstance(search, str):
        raise InputError(f"The search must be text; got {quoted(search)}.")
    return set_name, label, search[:200]


def errors_summary(data: dict | None, matching: int | None = None, computing: bool = False, note: str = "") -> str:
    """How many errors each set has, how many match the filters; or that the list is ``computing`` now (with the
    ``note`` of how long that takes), or how to make one."""
    if data is None and computing:
        return "<p>No error list for this model yet: computing it on the dev sets now.</p>" + note
    if data is None:
        return (
            f"<p>No error list ships with this model. Make one with <code>{html.escape(COMMAND)}</code>; it writes "
            "<code>errors.json</code> next to the model.</p>"
        )
    counts = ", ".join(
        f"{html.escape(name)} {count['wrong']} of {count['rows']}" for name, count in data["sets"].items()
    )
    left_out = f" ({data['left_out']} least confident left out to keep the file small)" if data["left_out"] else ""
    shown_rows = f"; {matching} match, the first {min(matching, MAX_SHOWN)} are listed" if matching is not None else ""
    return (
        f"<p>Wrong predictions: {counts}{left_out}{shown_rows}. Click a row to open it in the explorer. "
        "<i>Decided at</i>: the first layer from which the class read out after every layer (the Patching tab's "
        "readout) stays the predicted one; a late flip is decided at the last layer only.</p>"
    )


def decide(data: dict, errors: list[dict]) -> dict[str, int]:
    """The committed stage (``layer_readout.committed_stage``) of each of ``errors``' sentences, computed for those
    not yet kept while ``runner.default_seconds()`` last (a later draw computes the rest); {text: stage}."""
    loaded = runner.loaded_model()
    model, device = loaded.model, next(loaded.model.parameters()).device
    deadline = time.monotonic() + runner.default_seconds()
    for error in errors:
        key = (data["model_sha256"], error["text"])
        if key not in DECIDED and time.monotonic() < deadline:
            ids = loaded.tokenizer.encode(error["text"]).ids[: model.max_len]
            DECIDED[key] = committed_stage(layer_readout(model, torch.tensor([ids], device=device)))
    kept = ((error["text"], DECIDED.get((data["model_sha256"], error["text"]))) for error in errors)
    return {text: stage for text, stage in kept if stage is not None}


def stage_name(stage: int | None) -> str:
    """A committed stage as the table shows it: "embeddings", "layer 2", or "…" when not computed yet."""
    return "…" if stage is None else "embeddings" if stage == 0 else f"layer {stage}"


def late_flips(errors: list[dict], decided: dict[str, int], layers: int) -> list[dict]:
    """The errors whose class read out changes to the predicted one only at the last layer."""
    return [error for error in errors if layers and decided.get(error["text"]) == layers]


def show_errors(set_name: str, label: str, search: str, decided_at: str = ALL) -> tuple:
    """(summary, table rows, set and label choices, the hidden box) for the filters: no list yet but the data folder
    at hand sets the box to a new ``run_request``, which computes it. The filters' values are never sent back as
    they came (``kept_control``): one chosen while this draw ran stays."""
    data = ERRORS.current()
    if data is None:
        computing = data_folder.has_dev_sets(data_folder.data_dir())
        note = time_note("the error list", dev_texts()) if computing else ""
        return (
            errors_summary(None, computing=computing, note=note),
            None,
            kept_control(set_name, typed_choice(set_name)),
            kept_control(label, typed_choice(label)),
            run_request() if computing else "",
        )
    with runner.clear_errors("Cannot filter the errors"):
        picked = filter_errors(data["errors"], *check_filters(data, set_name, label, search or ""))
    late = decided_at == LATE
    decided = decide(data, picked if late else picked[:MAX_SHOWN])
    if late:
        picked = late_flips(picked, decided, runner.loaded_model().model.num_layers)
    rows = [
        [e["set"], e["label"], e["predicted"], e["confidence"], stage_name(decided.get(e["text"])), e["text"]]
        for e in picked[:MAX_SHOWN]
    ]
    sets, labels = filter_choices(data)
    chosen = gr.update(choices=sets), gr.update(choices=labels)  # the values as sent, so left out (kept_control)
    return errors_summary(data, len(picked)), rows, *chosen, ""


def typed_choice(value) -> str:
    """A filter's value kept as it was sent where it is text (a link's, checked when there is a list to check it
    against), else ``ALL``: an API caller's number or object is never sent back."""
    return value if isinstance(value, str) else ALL


def compute_and_show(needed, set_name, label, search, decided_at: str = ALL):
    """The hidden box's change to a ``run_request``: compute the list (only if there is none yet; the page draws its
    tqdm bar as a progress bar), then draw. Any other change (its clearing) draws nothing."""
    return compute_then_draw(ERRORS, needed, show_errors, (set_name, label, search, decided_at), 5)


def picked_text(event: gr.SelectData) -> str:
    """The sentence of the clicked row, or "" for anything else."""
    row = event.row_value if isinstance(event.row_value, list) else []
    return str(row[-1]) if len(row) == len(COLUMNS) and isinstance(row[-1], str) else ""


def errors(set: str = ALL, label: str = ALL, search: str = "", limit: int = 100) -> dict:
    """The bundled dev sets' sentences the explorer's model gets wrong, most confident first (computed on first use
    when no errors.json was made for these weights and the data folder is at hand).

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
    data = ERRORS.current()
    if data is None and data_folder.has_dev_sets(data_folder.data_dir()):
        data = ERRORS.compute()  # the one computation, shared with any request waiting for it
    if data is None:
        return {"sets": {}, "matching": 0, "errors": [], "note": "No error list ships with this model (errors.json)."}
    with runner.clear_errors("Cannot filter the errors"):
        limit = whole_number(limit, "Limit", 1, 5000)
        picked = filter_errors(data["errors"], *check_filters(data, set, label, search))
    return {"sets": data["sets"], "matching": len(picked), "errors": picked[:limit]}


def layout(page: Page) -> Drawing:
    gr.Markdown("The dev-set sentences the model gets wrong, the most confident mistakes first.")
    sets, labels = filter_choices(ERRORS.current())  # a list computed later: the draws set the choices
    with gr.Row():
        set_name = gr.Dropdown(
            sets,
            value=ALL,
            label="Set",
            allow_custom_value=True,
            elem_id="errors-set",
        )
        label = gr.Dropdown(
            labels,
            value=ALL,
            label="True label",
            allow_custom_value=True,  # checked by check_filters, which never echoes a deep link's markup
            elem_id="errors-label",
        )
        search = gr.Textbox(
            label="Text contains", placeholder="press Enter to search", max_length=200, elem_id="errors-search"
        )
        late = gr.Radio([ALL, LATE], value=ALL, label="Decided at", elem_id="errors-late")
    summary = gr.HTML(elem_id="errors-summary")
    cancel = cancel_button("errors")
    table = gr.Dataframe(
        headers=COLUMNS,
        datatype=["str", "str", "str", "number", "str", "str"],
        interactive=False,
        wrap=True,
        column_widths=COLUMN_WIDTHS,
        label="Wrong predictions (click a row to open it)",
        elem_id="errors-table",
    )
    needed = gr.Textbox(visible="hidden", elem_id="errors-needed")
    clicked = gr.Textbox(visible=False, elem_id="errors-clicked")
    inputs, outputs = [set_name, label, search, late], [summary, table, set_name, label, needed]
    # Reads the clicked row's sentence into the explorer as a person would: type it, show Attention, press Analyze.
    table.select(picked_text, None, clicked, api_visibility="private").then(
        None, clicked, None, js=scripts.call("openText"), api_visibility="private"
    )
    triggers = [set_name.input, label.input, search.submit, late.input]
    computed = Drawing(compute_and_show, [needed, *inputs], outputs, [needed.change], starts=requested)
    controls = {"errors_set": set_name, "errors_label": label, "errors_search": search, "errors_decided": late}
    return Drawing(show_errors, inputs, outputs, triggers, controls, computes=[computed], cancel=cancel)


VIEW = View(
    "errors",
    "Errors",
    layout,
    params={
        "errors_set": lambda value, reading: choice(value, [ALL, *data_folder.DEV_SETS]),
        "errors_label": lambda value, reading: choice(value, [ALL, *reading.model.label_names]),
        "errors_search": read_text,
        "errors_decided": lambda value, reading: choice(value, [ALL, LATE]),
    },
    endpoints={"errors": errors},
    colour_scale=False,
)
