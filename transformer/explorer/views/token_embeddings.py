"""Token-embeddings tab: a 2-D PCA map of the sentence's token vectors before the first layer and after each
one, so you can watch attention mix the tokens (they drift together as each borrows from the others).

The stages are the model's ``hidden_states``, the tutorial's model and a Hub model alike; a Hub model's
special tokens ([CLS] and [SEP], or <s> and </s>) are part of its sentence and are drawn with the words.

The maths is ``explain.embedding_map``'s, the figure ``drawing.embedding_maps``'s (the Training tab draws both too).
"""

from __future__ import annotations

import gradio as gr

from ...explain.embedding_map import EmbeddingsView, embedding_map
from ...interface import TUTORIAL_BLOCKS
from .. import runner
from ..analysis import Analysis, sentence_ids
from ..drawing.embedding_maps import embeddings_figure
from ..registry import Drawing, Page, View

TITLE = "Token embeddings"


def embeddings_view(model, tokenizer, result: Analysis) -> EmbeddingsView:
    """The sentence's token vectors entering layer 1 (the embedding layer's output, see ``explanation``) and leaving
    every layer: the model's ``hidden_states``, for the tutorial's model or a Hub model."""
    return embedding_map(model, sentence_ids(model, result), result.tokens)


def show_embeddings(result: Analysis | None, kept: tuple | None) -> tuple:
    """(summary, the PCA maps, kept view): the maps an update, hidden for a text of one token."""
    if result is None:
        return "", None, None
    if len(result.tokens) < 2:  # one point has no main directions: three empty maps headed "PC1+PC2 0 %" said nothing
        said = "<p>This text is one token: there is nothing to compare it with. Type two or more words.</p>"
        return said, gr.update(value=None, visible=False), kept
    kept = runner.kept_view(kept, embeddings_view, result)
    view = kept[1]
    spread = ", ".join(f"{float(value):.2f}" for value in view.spread)
    summary = (
        f"<p>How alike the tokens are, stage by stage (mean cosine similarity to their average, 1 = identical): "
        f"<b>{spread}</b>. Attention mixes each position with the others, so the tokens usually draw together.</p>"
    )
    return summary, gr.update(value=embeddings_figure(view), visible=True), kept


def explanation(model) -> str:
    """The tab's introduction: what a token's vector is before layer 1, the tutorial's embedding plus positional
    encoding or a Hub model's embedding layer (summed embeddings, then LayerNorm), and then after each layer."""
    hub = TUTORIAL_BLOCKS not in model.capabilities  # a Hub model's embedding layer, tokens it adds
    if hub:
        first = (
            "the embedding layer's output: word, position (and, in BERT and RoBERTa, token-type) embeddings "
            "summed, then a LayerNorm"
        )
    elif model.use_positional_encoding:
        first = "its embedding plus positional encoding"
    else:
        first = "its embedding; this model adds no positional encoding"
    return (
        f"Each token's vector as it enters the first layer ({first}) and as it leaves each layer, drawn on that "
        "stage's two main directions (PCA). Watch the words move."
        + (" The tokens the tokenizer adds (`[CLS]` and `[SEP]`, or `<s>` and `</s>`) are drawn too." if hub else "")
    )


def layout(page: Page) -> Drawing:
    gr.Markdown(explanation(page.model))
    summary = gr.HTML(elem_id="embeddings-summary")
    plot = gr.Plot(label="Token vectors by stage", elem_id="embeddings-plot")
    kept = gr.State()
    return Drawing(show_embeddings, [page.result, kept], [summary, plot, kept])


VIEW = View("token-embeddings", TITLE, layout, colour_scale=False)
