"""Export tab: the analysis as JSON (numbers exact) and the Attention tab's layer and head as CSV; ``/export``.

A file is built when its button is clicked, never when the tab is drawn: the button's job (on the queue, admitted
like any page event) writes it to the bounded export folder (``export_files``), and the page then has the
browser save it. Nothing is kept per session.
"""

from __future__ import annotations

import dataclasses

import gradio as gr
import numpy as np
import torch

from .. import payloads, runner
from ..analysis import Analysis, InputError, attention_matrix
from ..inputs import MEAN_HEAD, layer_head, page_number
from ..jsonable import analysis_to_json, attention_to_csv, exact_array, exact_array_bytes, to_jsonable
from ..page import scripts
from ..registry import Drawing, Page, View
from ..serving.export_files import write_export

JSON_NAME = "attention-explorer-analysis.json"


def chosen(result: Analysis, layer, head) -> tuple[int, int | None]:
    """(layer, head) from 0 of the CSV's matrix; ``layer`` and ``head`` from 1, head "mean" gives None."""
    with runner.clear_errors():
        return layer_head(layer, head, *result.attentions.shape[:2], mean=True)


def export_csv(result: Analysis, layer, head) -> tuple[str, str]:
    """(file name, CSV text) of one attention matrix; ``layer`` and ``head`` from 1, head "mean" averages."""
    layer_index, head_index = chosen(result, layer, head)
    matrix = torch.from_numpy(attention_matrix(result, layer_index, head_index))  # (N, N)
    which = MEAN_HEAD if head_index is None else page_number(head_index)
    return f"attention-layer{page_number(layer_index)}-head{which}.csv", attention_to_csv(matrix, result.tokens)


def show_export(result: Analysis | None, layer: int, head: str) -> str:
    """The tab drawn: what the two downloads will hold. Nothing is built until a button is clicked."""
    if result is None:
        return ""
    layer_index, head_index = chosen(result, layer, head)
    which = "the mean of its heads" if head_index is None else f"head {page_number(head_index)}"
    layers, heads = result.attentions.shape[:2]
    tokens = "its one token" if len(result.tokens) == 1 else f"all {len(result.tokens)} tokens"
    return (
        f"The JSON holds {tokens} and {layers} layers × {heads} heads of attention; "
        f"the CSV holds layer {page_number(layer_index)}, {which}."
    )


def build_json(result: Analysis | None) -> str | None:
    """The path of the analysis as a JSON file in the export folder, built now (a download button's click)."""
    return None if result is None else str(write_export(JSON_NAME, analysis_to_json(result)))


def build_csv(result: Analysis | None, layer: int, head: str) -> str | None:
    """The path of the current layer's and head's attention as a CSV file in the export folder, built now."""
    return None if result is None else str(write_export(*export_csv(result, layer, head)))


def export(text: str, layer: int = 1, head: str = "1") -> dict:
    """The analysis of a text with every number exact, and one attention matrix as CSV (head "mean" averages).
    Built when called and kept by nothing after it is read (an answer unread 10 s after its job is dropped), as
    the page's downloads are built when clicked. The analysis's arrays come as exact float32 in base64 with their
    shape (4 bytes a number: 2.8 MB for 4 layers × 8 heads at 128 tokens); an answer holds at most 8 MB, so where
    they do not fit (every head of a DistilBERT past about 135 tokens) it is refused, saying so: /attention answers the
    heads you choose, and the page's Export tab downloads the whole analysis.
    Layers and heads count from 1 and token positions from 0, in every argument and answer.

    Args:
        text: the text to read.
        layer: the layer of the CSV's attention matrix, from 1.
        head: its head, from 1, or "mean" for the mean of the layer's heads.

    Returns:
        {"analysis": {"text", "tokens", "token_ids", "offsets", "label_names", "probabilities",
        "attentions": [layer][head][query][key], "value_norms": [layer][head][key] (‖f(x_j)‖), ...}, each array as
        {"dtype": "float32", "shape", "base64": little-endian, C order; numpy: np.frombuffer(base64.b64decode(
        a["base64"]), "<f4").reshape(a["shape"])}, "attention_csv": the CSV text, a header of key tokens and one
        row per query}.
    """
    result = runner.read_for_api(text)
    csv_text = export_csv(result, layer, head)[1]
    fields = {field.name: getattr(result, field.name) for field in dataclasses.fields(result)}
    arrays = {name: value for name, value in fields.items() if isinstance(value, np.ndarray)}
    with runner.clear_errors("Cannot export this text"):
        check_size(len(result.tokens), sum(map(exact_array_bytes, arrays.values())) + len(csv_text))
    plain = to_jsonable({name: value for name, value in fields.items() if name not in arrays})
    return {"analysis": plain | {name: exact_array(value) for name, value in arrays.items()}, "attention_csv": csv_text}


def check_size(tokens: int, size: int) -> None:
    """Refuse an answer of ``size`` bytes (its arrays and CSV) over ``payloads.MAX_ANSWER_BYTES``.

    Raises:
        InputError: it does not fit, saying what does.
    """
    if size + payloads.OTHER_FIELDS_BYTES > payloads.MAX_ANSWER_BYTES:
        raise InputError(
            f"At {tokens} tokens this model's exact attention maps are {size / 10**6:.0f} MB, over the "
            f"{payloads.MAX_ANSWER_BYTES // 10**6} MB an answer holds: /attention answers the heads you choose (layer "
            "and head), and the page's Export tab downloads the whole analysis."
        )


def layout(page: Page) -> Drawing:
    gr.Markdown(
        "The analysis as JSON (text, tokens, offsets, probabilities and every attention weight, numbers "
        "exact) and the Attention tab's current layer and head as CSV (queries on rows, keys on columns). "
        "Each file is built when you click."
    )
    summary = gr.Markdown(elem_id="export-summary")
    with gr.Row():
        json_button = gr.Button("Download the analysis (JSON)", elem_id="export-json")
        csv_button = gr.Button("Download this layer and head (CSV)", elem_id="export-csv")
    built = gr.DownloadButton(visible="hidden", elem_id="export-file")  # what a click built, saved by the browser
    built.change(None, None, None, js=scripts.call("download"), api_visibility="private")
    computes = [
        Drawing(build_json, [page.result], [built], [json_button.click]),
        Drawing(build_csv, [page.result, page.layer, page.head], [built], [csv_button.click]),
    ]
    return Drawing(show_export, [page.result, page.layer, page.head], [summary], computes=computes)


VIEW = View("export", "Export", layout, endpoints={"export": export}, colour_scale=False)
