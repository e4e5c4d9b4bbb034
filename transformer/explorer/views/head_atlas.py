"""Head-atlas tab: what every head does over a reference corpus, its rule-based role and its importance, and
the ``/head_atlas`` endpoint.

The atlas depends on the model only. It is read from ``head_atlas.json`` next to the model when its hash is
the model's (``python -m transformer.artifacts`` writes it), else from the explorer's cache folder
(``model_files.cache_folder``: ``$ATTENTION_EXPLORER_CACHE``, else ``$XDG_CACHE_HOME/attention-explorer``, else
``~/.cache/attention-explorer``, then the model's sha256). Only when neither has one, and the data folder is at
hand, is it computed on request: once, one computation at a time (concurrent requests wait for it and share
it), kept for the process and written to the cache folder, never the model folder (a cache folder that cannot
be written leaves it in memory only). Clicking a head's row opens the Attention tab on that layer and head.
"""

from __future__ import annotations

import html

import gradio as gr
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ...explain.atlas import BEHAVIOURS
from .. import runner
from ..corpus import data_folder, model_files
from ..corpus.on_demand import COMMAND, ModelArtifact, data_folder_for, time_note
from ..drawing.figures import TEMPLATE, escape
from ..page import scripts
from ..registry import Drawing, Page, View, cancel_button

COLUMNS = [
    "head",
    "role",
    *BEHAVIOURS,
    "entropy (nats)",
    "entropy spread",
    "accuracy drop",
    "P(true) drop",
    "top tokens (attention per occurrence)",
]


def build_atlas(sha: str) -> dict:
    """The loaded model's atlas over the reference corpus (tqdm progress).

    Raises:
        gr.Error: there is no data folder to compute it from.
    """
    data_dir = data_folder_for("the atlas")
    loaded, _ = runner.get_model()
    return model_files.build_atlas(
        loaded.model, loaded.tokenizer, atlas_corpus(loaded, data_folder.dev_sets(data_dir)), sha
    )


def atlas_corpus(loaded, sets: dict) -> list:
    """The reference corpus at the model's default sample size (``model_files.atlas_sentences``)."""
    return data_folder.reference_corpus(sets, model_files.atlas_sentences(loaded.model, loaded.tokenizer, sets))


ATLAS = ModelArtifact(model_files.ATLAS_FILE, build_atlas)  # head_atlas.json, else the cache's, else computed once


def bar_top(atlas: dict) -> float:
    """The bar charts' shared top: 10% over the largest mean weight of any head (weights of 0.2 stay visible)."""
    largest = max((row[name] for row in atlas["heads"] for name in BEHAVIOURS), default=0.0)
    return min(1.0, largest * 1.1) or 1.0


def atlas_figure(atlas: dict) -> go.Figure:
    """One small bar chart per head (layers as rows): its mean weight on each behaviour, titled with its role."""
    L, H = atlas["num_layers"], atlas["num_heads"]
    titles = [escape(f"L{row['layer']} H{row['head']}: {row['role']}") for row in atlas["heads"]]
    figure = make_subplots(rows=L, cols=H, subplot_titles=titles, shared_yaxes=True)
    for row in atlas["heads"]:
        figure.add_trace(
            go.Bar(
                x=list(BEHAVIOURS),
                y=[row[name] for name in BEHAVIOURS],
                marker={"color": "#4c72b0"},
                hovertemplate=f"L{row['layer']} H{row['head']}<br>%{{x}}: %{{y:.3f}}<extra></extra>",
                showlegend=False,
            ),
            row=row["layer"],
            col=row["head"],
        )
    figure.update_yaxes(range=[0, bar_top(atlas)])  # one range for every head, so that their bars compare
    figure.update_layout(
        template=TEMPLATE,
        title="Mean attention on each kind of key, per head",
        height=260 * L + 60,
        margin={"t": 80, "l": 10, "r": 10, "b": 10},
    )
    return figure


def atlas_rows(atlas: dict) -> list[list]:
    """The sortable table: one row per head, named "L1 H2"."""
    return [
        [
            f"L{row['layer']} H{row['head']}",
            row["role"],
            *(row[name] for name in BEHAVIOURS),
            row["entropy_mean"],
            row["entropy_std"],
            row["accuracy_drop"],
            row["prob_drop"],
            ", ".join(f"{top['token']} {top['score']:.2f}" for top in row["top_tokens"]),
        ]
        for row in atlas["heads"]
    ]


def atlas_summary(atlas: dict | None, note: str = "") -> str:
    """What the atlas was computed on and the role rule, or how to make one (and the ``note`` of how long that
    takes)."""
    if atlas is None:
        where = (
            "the data folder is here: compute it now"
            if data_folder.has_dev_sets(data_folder.data_dir())
            else "make it with"
        )
        return (
            f"<p>No head atlas for this model yet ({where}: <code>{html.escape(COMMAND)}</code>, "
            "which writes <code>head_atlas.json</code> next to the model).</p>" + note
        )
    sets = ", ".join(f"{html.escape(str(name))} {count}" for name, count in atlas["sets"].items())
    return (
        f"<p>Computed over the atlas's reference corpus of {atlas['sentences']} sentences ({sets}); the model's "
        f"accuracy on those {atlas['sentences']} sentences with every head on: {atlas['base_accuracy']:.1%}. "
        f"<b>Role rule:</b> {html.escape(atlas['role_rule'])} "
        "Importance: knock the head out alone over the corpus; the drop in accuracy and in the true class's "
        "mean probability. Click a row to open that head in the Attention tab.</p>"
    )


def show_atlas() -> tuple:
    """(summary, small multiples, table, compute button) from the atlas, if there is one; without one the figure's box
    is hidden (Gradio's empty plot was a box with an icon, named with an ``aria-label`` its ``div`` may not have)."""
    atlas = ATLAS.current()
    can_compute = atlas is None and data_folder.has_dev_sets(data_folder.data_dir())
    if atlas is None:
        note = ""
        if can_compute:
            loaded = runner.get_model()[0]
            texts = [row.text for row in atlas_corpus(loaded, data_folder.dev_sets(data_folder.data_dir()))]
            note = time_note("the atlas", texts, model_files.atlas_rows(loaded.model))
        button = gr.Button(
            visible=can_compute, **({"value": "Compute the atlas now"} if note else {})
        )  # note: how long
        return atlas_summary(None, note), gr.update(value=None, visible=False), gr.Dataframe(value=None), button
    figure = gr.update(value=atlas_figure(atlas), visible=True)
    return atlas_summary(atlas), figure, atlas_rows(atlas), gr.Button(visible=False)


def compute_and_show() -> tuple:
    """The compute button: compute the atlas (only if there is none yet; the page draws its tqdm bar as a progress
    bar), then draw it."""
    ATLAS.compute()
    return show_atlas()


def picked_head(event: gr.SelectData) -> str:
    """The head named in the clicked row ("L2 H3"), or "" for anything else."""
    row = event.row_value if isinstance(event.row_value, list) else []
    return str(row[0]) if row and isinstance(row[0], str) else ""


def head_atlas() -> dict:
    """The head atlas of the explorer's model, over its reference corpus (SST-2 dev and a fixed sample of the
    other dev sets). Layers and heads count from 1 and token positions from 0, in every argument and answer.

    Returns:
        {"model_sha256", "num_layers", "num_heads", "sentences", "sets", "behaviours", "role_rule",
        "base_accuracy", "heads": [{"layer", "head", "role", "self", "previous", "next", "first", "last",
        "punctuation" (mean attention weights), "entropy_mean", "entropy_std", "entropy_share", "accuracy_drop",
        "prob_drop" (knocking the head out alone), "top_tokens": [{"token", "score", "count"}]}, ...]}; without an
        atlas (and no data folder to compute one), {"heads": [], "note": how to make one}.
    """
    atlas = ATLAS.current()
    if atlas is None and data_folder.has_dev_sets(data_folder.data_dir()):
        atlas = ATLAS.compute()  # the one computation, shared with any request waiting for it
    return atlas or {"heads": [], "note": f"No head atlas for this model yet. Make it with: {COMMAND}"}


def layout(page: Page) -> Drawing:
    gr.Markdown(
        "What each head does over a whole corpus, not one sentence: how much it attends to the token itself, "
        "the previous and next token, the first and last token and punctuation, how spread out its attention is, "
        "the tokens it attends to most (per occurrence), a role named by a simple rule, and what knocking it out "
        "costs the model over the corpus."
    )
    summary = gr.HTML(elem_id="atlas-summary")
    compute = gr.Button("Compute the atlas now (about 30 s)", visible=False, elem_id="atlas-compute")
    cancel = cancel_button("atlas")
    plot = gr.Plot(label="Each head's behaviour", elem_id="atlas-plot")
    table = gr.Dataframe(
        headers=COLUMNS,
        datatype=["str", "str", *["number"] * (len(COLUMNS) - 3), "str"],
        interactive=False,
        wrap=True,  # the long last column wraps; the table scrolls sideways inside itself if still too wide
        label="Every head (sort from a column's menu; click a row to open the head)",
        elem_id="atlas-table",
    )
    clicked = gr.Textbox(visible=False, elem_id="atlas-clicked")
    outputs = [summary, plot, table, compute]
    table.select(picked_head, None, clicked, api_visibility="private").then(
        None, clicked, None, js=scripts.call("openHead"), api_visibility="private"
    )
    computed = Drawing(compute_and_show, [], outputs, [compute.click])
    return Drawing(show_atlas, [], outputs, computes=[computed], cancel=cancel)


VIEW = View("head-atlas", "Head atlas", layout, endpoints={"head_atlas": head_atlas}, colour_scale=False)
