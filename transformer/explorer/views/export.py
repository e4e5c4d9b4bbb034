"""Export tab: the analysis as JSON (numbers exact) and the Attention tab's layer and head as CSV; ``/export``."""

from __future__ import annotations

import gradio as gr
import torch

from .. import runner
from ..analysis import Analysis, attention_matrix
from ..export import analysis_to_json, attention_to_csv, to_jsonable
from ..export_files import write_export
from ..inputs import MEAN_HEAD, layer_head, page_number
from ..registry import Drawing, Page, View


def export_csv(result: Analysis, layer, head) -> tuple[str, str]:
    """(file name, CSV text) of one attention matrix; ``layer`` and ``head`` from 1, head "mean" averages."""
    with runner.clear_errors():
        layer_index, head_index = layer_head(layer, head, *result.attentions.shape[:2], mean=True)
    matrix = torch.from_numpy(attention_matrix(result, layer_index, head_index))  # (N, N)
    which = MEAN_HEAD if head_index is None else page_number(head_index)
    return f"attention-layer{page_number(layer_index)}-head{which}.csv", attention_to_csv(matrix, result.tokens)


def show_export(result: Analysis | None, layer: int, head: str) -> tuple:
    """(the analysis as a JSON file, the current layer's and head's attention as a CSV file)."""
    if result is None:
        return None, None
    name, csv_text = export_csv(result, layer, head)
    return write_export("attention-explorer-analysis.json", analysis_to_json(result)), write_export(name, csv_text)


def export(text: str, layer: int = 1, head: str = "1") -> dict:
    """The analysis of a text with every number exact, and one attention matrix as CSV (head "mean" averages).
    Layers and heads count from 1 and token positions from 0, in every argument and answer.

    Args:
        text: the text to read.
        layer: the layer of the CSV's attention matrix, from 1.
        head: its head, from 1, or "mean" for the mean of the layer's heads.

    Returns:
        {"analysis": {"text", "tokens", "token_ids", "offsets", "label_names", "probabilities",
        "attentions": [layer][head][query][key], "value_norms": [layer][head][key] (‖f(x_j)‖), ...},
        "attention_csv": the CSV text, a header of key tokens and one row per query}.
    """
    result = runner.read_for_api(text)
    return {
        "analysis": to_jsonable(result),  # what the JSON download holds, numbers exact
        "attention_csv": export_csv(result, layer, head)[1],
    }


def layout(page: Page) -> Drawing:
    gr.Markdown(
        "The analysis as JSON (text, tokens, offsets, probabilities and every attention weight, numbers "
        "exact) and the Attention tab's current layer and head as CSV (queries on rows, keys on columns)."
    )
    with gr.Row():
        json_file = gr.DownloadButton("Download the analysis (JSON)", elem_id="export-json")
        csv_file = gr.DownloadButton("Download this layer and head (CSV)", elem_id="export-csv")
    return Drawing(show_export, [page.result, page.layer, page.head], [json_file, csv_file])


VIEW = View("export", "Export", layout, endpoints={"export": export}, colour_scale=False)
