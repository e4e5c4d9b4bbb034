"""Gradio's own floor, served the same way as the app, for side-by-side figures.

- ``/noop`` echoes its text: the floor of an API call (``make load``).
- The page is the floor of the explorer's page (``make bench``'s browser section): a sentence box, an
  Analyze button and a head choice, each drawing one attention-sized heatmap (one float32 matrix, a
  token label per row and column) with nothing else; on page load it draws the sentence already there.
  Every event goes through Gradio's queue, its default. A second head choice (``#head-direct``) draws the
  same heatmap off the queue (``queue=False``), as the explorer's head choice does.
"""

import argparse

import gradio as gr
import numpy as np
import plotly.graph_objects as go


def echo(text: str) -> str:
    return text


def floor_heatmap(text: str, head: int = 1) -> go.Figure:
    """A row-stochastic N x N heatmap for the N words of ``text``, labelled "position word" like the app's."""
    words = (text or "").split()
    weights = np.random.default_rng(head).random((len(words), len(words)), dtype=np.float32)
    weights /= weights.sum(axis=1, keepdims=True)
    labels = [f"{i} {word}" for i, word in enumerate(words)]
    trace = {"type": "heatmap", "z": weights, "x": labels, "y": labels, "colorscale": "Blues"}
    layout = {"title": {"text": f"head {head}"}, "height": int(np.clip(220 + 16 * len(words), 360, 900))}
    layout |= {"xaxis": {"type": "category"}, "yaxis": {"type": "category", "autorange": "reversed"}}
    return go.Figure(data=[trace], layout=layout)


with gr.Blocks() as demo:
    box = gr.Textbox()
    out = gr.Textbox()
    box.submit(echo, box, out, api_name="noop")
    sentence = gr.Textbox("the film was a quiet funny and completely charming surprise", elem_id="sentence")
    analyze = gr.Button("Analyze", elem_id="analyze")
    head = gr.Radio([1, 2, 3, 4], value=1, label="Head", elem_id="head")
    head_direct = gr.Radio([1, 2, 3, 4], value=1, label="Head, off the queue", elem_id="head-direct")
    plot = gr.Plot(elem_id="attention-heatmap")
    analyze.click(floor_heatmap, [sentence, head], plot, api_visibility="private")
    head.input(floor_heatmap, [sentence, head], plot, api_visibility="private")
    head_direct.input(floor_heatmap, [sentence, head_direct], plot, api_visibility="private", queue=False)
    demo.load(floor_heatmap, [sentence, head], plot, api_visibility="private")

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=7861)
    args = parser.parse_args()
    demo.queue().launch(server_name="127.0.0.1", server_port=args.port)
