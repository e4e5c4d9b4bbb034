"""Gradio's own floor: a no-op endpoint, served the same way as the app, for side-by-side load figures."""

import argparse

import gradio as gr


def echo(text: str) -> str:
    return text


with gr.Blocks() as demo:
    box = gr.Textbox()
    out = gr.Textbox()
    box.submit(echo, box, out, api_name="noop")

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=7861)
    args = parser.parse_args()
    demo.queue().launch(server_name="127.0.0.1", server_port=args.port)
