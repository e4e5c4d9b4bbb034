"""Walkthrough tab: the tutorial's forward pass on the sentence, one step at a time, and the ``/walkthrough``
endpoint. Each step says what it does, shows the lines of ``transformer/`` that compute it (read from the
source at start-up), its shape and arithmetic, and this sentence's numbers from one captured pass
(``explain.walkthrough``). Changing the step, layer or head redraws from the kept pass, without the model.

Shape letters: N = tokens, D = d_model, H = heads, d_k = D / H, F = d_ff, C = classes.
"""

from __future__ import annotations

import html
import inspect
from collections.abc import Callable
from dataclasses import dataclass

import gradio as gr
import plotly.graph_objects as go
import torch

from ... import attention as attention_module
from ...classifier import TransformerClassifier
from ...encoder_block import TransformerEncoderBlock
from ...explain.walkthrough import Walkthrough, walk_through
from ...feed_forward import PositionWiseFeedForward
from ...positional_encoding import PositionalEncoding
from ...tokenizer import encode_batch
from .. import runner
from ..analysis import Analysis, sentence_ids
from ..drawing import walk_steps
from ..inputs import layer_head, number, page_number, whole_number
from ..registry import (
    Drawing,
    Page,
    View,
    head_choices,
    layer_choices,
    not_for_this_model,
    read_head,
    read_layer,
    require_tutorial_model,
)

TITLE = "Walkthrough"


@dataclass(frozen=True)
class Step:
    """One step: its title, what it does (for a learner), the function whose source computes it, its arithmetic,
    ``shape(walk, layer, head)`` with named dimensions, ``values(walk, tokens, layer, head)`` its figure, the
    tensors its figure shows (``fields``: of ``Walkthrough``, or of the chosen layer's ``LayerSteps``; of every
    layer with ``each_layer``), and the tab that goes deeper (title, view id) or None."""

    title: str
    what: str
    code: Callable
    arithmetic: str
    shape: Callable[[Walkthrough, int, int], str]
    values: Callable[[Walkthrough, list[str], int, int], go.Figure]
    fields: tuple[str, ...]
    deeper: tuple[str, str] | None = None
    post_ln: tuple[str, str] | None = None  # what it does and its arithmetic in a Post-LN model, where they differ
    scaled: tuple[str, str, str] | None = None  # title, what and arithmetic in a model that scales by √D
    each_layer: bool = False

    def told(self, walk: Walkthrough) -> tuple[str, str, str]:
        """(title, what the step does, its arithmetic) for this model: Pre-LN or Post-LN, √D-scaled embeddings
        or not, and its head's activation in place of ``{head}``."""
        what, arithmetic = (self.what, self.arithmetic) if walk.pre_ln or self.post_ln is None else self.post_ln
        title = self.title
        if walk.embedding_scale and self.scaled is not None:
            title, what, arithmetic = self.scaled
        head = walk_steps.HEAD_NAMES[walk.head_activation]
        return title, what.replace("{head}", head), arithmetic.replace("{head}", head)


def _dims(tensor: torch.Tensor, *names: str) -> str:
    """``(N=12, D=128)``: a tensor's shape with its dimensions named."""
    return "(" + ", ".join(f"{name}={size}" for name, size in zip(names, tensor.shape, strict=True)) + ")"


def _layer_shape(field: str, *names: str) -> Callable:
    """A step's ``shape``: the chosen layer's ``field`` (of ``LayerSteps``), its dimensions named."""
    return lambda walk, layer, head: _dims(getattr(walk.layers[layer], field), *names)


STEPS = [
    Step(
        "1. Tokens",
        "The tokenizer cuts the text into tokens from the model's vocabulary and gives each its id: the only "
        "thing the model ever sees of your text is this list of numbers.",
        encode_batch,
        "ids = tokenizer(text)",
        lambda walk, layer, head: _dims(walk.token_ids, "N"),
        walk_steps.tokens_figure,
        ("token_ids",),
    ),
    Step(
        "2. Embeddings",
        "Each id picks one row of the embedding table, a vector of d_model numbers learned in training. As in "
        "the tutorial, the rows go to the positional encoding as they are.",
        TransformerClassifier.token_embeddings,
        "x = Embedding(ids)",
        lambda walk, layer, head: _dims(walk.scaled_embeddings, "N", "D"),
        walk_steps.embeddings_figure,
        ("embeddings", "scaled_embeddings"),
        scaled=(
            "2. Embeddings, ×√d_model",
            "Each id picks one row of the embedding table, a vector of d_model numbers learned in training. This "
            "model (trained before the tutorial's unscaled lookup was its default) multiplies it by √d_model.",
            "x = Embedding(ids) · √d_model",
        ),
    ),
    Step(
        "3. Positional encoding, added",
        "Attention alone cannot tell word order. Row p of a fixed table of sines and cosines is added to the "
        "vector at position p, so the same word at two places gives two different vectors.",
        PositionalEncoding.forward,
        "x = x + PE[0:N]",
        lambda walk, layer, head: _dims(walk.embedded, "N", "D"),
        walk_steps.positions_figure,
        ("scaled_embeddings", "positions", "embedded"),
        ("what position does", "word-order"),
    ),
    Step(
        "4. LayerNorm of the block's input",
        "A Pre-LN block (this model's kind) first normalises every token's vector to mean 0 and variance 1, "
        "then scales and shifts it with learned weights; the residual stream itself is left untouched.",
        TransformerEncoderBlock.forward,
        "h = LayerNorm(x)",
        _layer_shape("attention_input", "N", "D"),
        walk_steps.layer_norm_figure,
        ("block_input", "attention_input"),
        post_ln=(
            "A Post-LN block (the original Transformer's kind, and this model's) gives the block's input to "
            "attention as it is; it normalises later, after each residual add (steps 8 and 9).",
            "h = x",
        ),
    ),
    Step(
        "5. Queries, keys and values",
        "Three learned projections turn each token's vector into a query (what it looks for), a key (what it "
        "offers) and a value (what it passes on), split into heads of d_k numbers each.",
        attention_module.MultiHeadAttention.forward,
        "Q = h W_q, K = h W_k, V = h W_v, split into H heads",
        _layer_shape("queries", "H", "N", "d_k"),
        walk_steps.qkv_figure,
        ("queries", "keys", "values"),
        ("see every head", "all-heads"),
    ),
    Step(
        "6. Scores, scaling, softmax",
        "Each query is compared with every key by a dot product. Dividing by √d_k keeps the scores from growing "
        "with the head's size; the softmax turns each row into weights that add up to 1. One sentence needs no "
        "padding mask; in a batch, padded keys get weight 0 here.",
        attention_module.scaled_dot_product_attention,
        "weights = softmax(Q Kᵀ / √d_k)",
        _layer_shape("weights", "H", "N", "N"),
        walk_steps.scores_figure,
        ("scores", "scaled", "weights"),
        ("why divide by √d_k", "inside-head"),
    ),
    Step(
        "7. Weights × V, the heads joined, W_o",
        "Each token's new vector is the weighted mean of the values; the H heads' results are put side by side "
        "and mixed by one more projection, W_o.",
        attention_module.MultiHeadAttention.forward,
        "out = concat(weights_h V_h) W_o",
        _layer_shape("attention_output", "N", "D"),
        walk_steps.heads_figure,
        ("heads", "merged", "attention_output"),
    ),
    Step(
        "8. The residual add",
        "The attention's output is added to the block's input: each sub-layer only adds a correction to the "
        "residual stream, which carries the token's vector through the whole model.",
        TransformerEncoderBlock.forward,
        "x = x + out",
        _layer_shape("after_attention", "N", "D"),
        walk_steps.residual_figure,
        ("block_input", "attention_output", "after_attention"),
        post_ln=(
            "The attention's output is added to the block's input, and the sum is normalised: in a Post-LN "
            "block every residual add is followed by a LayerNorm.",
            "x = LayerNorm(x + out)",
        ),
    ),
    Step(
        "9. The feed-forward network",
        "Every token then goes, on its own, through two linear layers with a GELU between them, d_ff wide; its "
        "output is added to the residual stream again.",
        PositionWiseFeedForward.forward,
        "x = x + Linear(GELU(Linear(LayerNorm(x))))",
        _layer_shape("ffn_activated", "N", "F"),
        walk_steps.feed_forward_figure,
        ("ffn_input", "ffn_hidden", "ffn_activated", "ffn_output", "block_output"),
        post_ln=(
            "Every token then goes, on its own, through two linear layers with a GELU between them, d_ff wide; "
            "its output is added to the residual stream and the sum normalised again.",
            "x = LayerNorm(x + Linear(GELU(Linear(x))))",
        ),
    ),
    Step(
        "10. The next layers",
        "The other blocks do the same with their own weights, each reading the stream the one before wrote.",
        TransformerClassifier._stream,
        "x = block_L(… block_1(x))",
        lambda walk, layer, head: _dims(walk.layers[-1].block_output, "N", "D"),
        walk_steps.blocks_figure,
        ("block_output",),
        ("what the heads do over a corpus", "head-atlas"),
        each_layer=True,
    ),
    Step(
        "11. Final LayerNorm, mean pooling",
        "A last LayerNorm, then the mean of the tokens' vectors: one vector for the whole sentence (padding, in "
        "a batch, is left out of the mean).",
        TransformerClassifier.forward,
        "s = mean over tokens of LayerNorm(x)",
        lambda walk, layer, head: _dims(walk.pooled, "D"),
        walk_steps.pooling_figure,
        ("final_norm", "pooled"),
    ),
    Step(
        "12. The classifier",
        "Two linear layers with a {head} between them give one logit per class; the softmax turns the logits into "
        "the probabilities shown at the top of the page.",
        TransformerClassifier.forward,
        "p = softmax(Linear({head}(Linear(s))))",
        lambda walk, layer, head: _dims(walk.logits, "C"),
        walk_steps.classifier_figure,
        ("hidden", "activated", "logits", "probabilities"),
    ),
]
SOURCES = [inspect.getsource(step.code) for step in STEPS]  # read once, at start-up: never drifts from the code


def code_block(source: str) -> str:
    """``source`` as a fenced Python block: the page's Markdown highlights it with its token classes, whose colours
    the style sheet sets (``theme._CODE``); a code box's own colours were 2.0 to 4.0:1 on the light page."""
    return f"```python\n{source.rstrip()}\n```"


@dataclass(frozen=True)
class WalkView:
    """The captured pass with the tokens it read."""

    tokens: list[str]
    walk: Walkthrough


def walkthrough_view(model, tokenizer, result: Analysis) -> WalkView:
    """One pass of the model on the kept analysis's tokens, every step kept (on the CPU)."""
    require_tutorial_model(TITLE, model)
    return WalkView(result.tokens, walk_through(model, sentence_ids(model, result)))


def step_text(view: WalkView, index: int, layer: int, head: int) -> str:
    """The step's Markdown: what it does, its shape and arithmetic, the layer and head shown, the deeper tab."""
    step = STEPS[index]
    title, what, arithmetic = step.told(view.walk)
    lines = [f"### {title}", what, f"**Shape** `{step.shape(view.walk, layer, head)}` · `{arithmetic}`"]
    if index == len(STEPS) - 1:
        shown = ", ".join(
            f"{html.escape(name)} {p:.3f}"
            for name, p in zip(view.walk.label_names, view.walk.probabilities.tolist(), strict=True)
        )
        lines.append(f"Probabilities: {shown}.")
    if step.deeper:
        lines.append(f"Deeper: **{step.deeper[0]}** in the {step.deeper[1].replace('-', ' ')} tab.")
    return "\n\n".join(lines)


def show_step(result: Analysis | None, step: int, layer: int, head: int, kept: tuple | None) -> tuple:
    """(text, code, figure, kept) for one step: the pass runs once per sentence (the tab's queued draw)."""
    if result is None:
        return "Analyze a sentence to walk through it.", "", None, kept
    if message := not_for_this_model(TITLE, runner.get_model()[0].model):
        return message, "", None, kept
    kept = runner.kept_view(kept, walkthrough_view, result)
    return (*draw_step(kept[1], step, layer, head), kept)


def _kept_pass(result: Analysis | None, kept: tuple | None) -> WalkView | None:
    """The kept pass of this analysis, or None (the tab's draw, after each analysis, makes one)."""
    if result is None or not runner.is_kept(kept, runner.kept_key(walkthrough_view, result.text)):
        return None
    return kept[1]


def show_kept_step(result: Analysis | None, step: int, layer: int, head: int, kept: tuple | None) -> tuple:
    """(text, code, figure) for a step, layer or head change, from the kept pass only: it never calls the model,
    so it skips the queue. Without a pass of this analysis the tab stays as it is."""
    view = _kept_pass(result, kept)
    return (gr.skip(),) * 3 if view is None else draw_step(view, step, layer, head)


def step_mover(change: int) -> Callable:
    """Previous (``change`` -1) or Next (+1): ``(result, step, layer, head, kept) -> (step, text, code, figure)``,
    the step moved within 1..12 and drawn from the kept pass (``show_kept_step``)."""

    def show_moved_step(result: Analysis | None, step: int, layer: int, head: int, kept: tuple | None) -> tuple:
        view = _kept_pass(result, kept)
        if view is None:
            return (gr.skip(),) * 4
        moved = min(max((number(str(step), 1, len(STEPS)) or 1) + change, 1), len(STEPS))
        return moved, *draw_step(view, moved, layer, head)

    return show_moved_step


def step_ends(step) -> tuple:
    """Previous and Next, each usable only where it leads somewhere: (Previous, Next) for ``step`` (from 1)."""
    index = number(str(step), 1, len(STEPS)) or 1
    return gr.update(interactive=index > 1), gr.update(interactive=index < len(STEPS))


def draw_step(view: WalkView, step: int, layer: int, head: int) -> tuple:
    """(text, code, figure) of step ``step`` (from 1) at ``layer`` and ``head`` (from 1)."""
    num_layers, num_heads = len(view.walk.layers), view.walk.layers[0].weights.size(0)
    with runner.clear_errors():
        index = number(str(step), 1, len(STEPS))
        layer_index, head_index = layer_head(layer, head, num_layers, num_heads)
    index = 0 if index is None else index - 1
    figure = STEPS[index].values(view.walk, view.tokens, layer_index, head_index)
    return step_text(view, index, layer_index, head_index), code_block(SOURCES[index]), figure


PER_HEAD = {"queries", "keys", "values", "scores", "scaled", "weights", "heads"}  # (H, ...): one head is shown


def step_tensors(walk: Walkthrough, index: int, layer: int, head: int) -> dict[str, torch.Tensor]:
    """{field: tensor} of what step ``index`` (from 0) shows at ``layer`` and ``head`` (from 0): a per-head field
    at that head only, a layer's field at that layer (at every layer, stacked, for a step of ``each_layer``)."""
    step, tensors = STEPS[index], {}
    for name in step.fields:
        if hasattr(walk, name):
            tensors[name] = getattr(walk, name)
        elif step.each_layer:
            tensors[name] = torch.stack([getattr(steps, name) for steps in walk.layers])  # (L, N, D)
        else:
            value = getattr(walk.layers[layer], name)
            tensors[name] = value[head] if name in PER_HEAD else value
    return tensors


def walkthrough_step(model, tokenizer, result: Analysis, step, layer, head) -> dict:
    """One step of the pass for an API caller (step, layer and head from 1, checked before the pass): its title,
    arithmetic and shape, and only the tensors the tab's figure of that step shows."""
    require_tutorial_model(TITLE, model)
    index = whole_number(step, "Step", 1, len(STEPS)) - 1
    layer_index, head_index = layer_head(layer, head, model.num_layers, model.num_heads)
    view = walkthrough_view(model, tokenizer, result)
    title, _, arithmetic = STEPS[index].told(view.walk)
    return {
        "tokens": view.tokens,
        "step": index + 1,
        "title": title,
        "arithmetic": arithmetic,
        "shape": STEPS[index].shape(view.walk, layer_index, head_index),
        "layer": page_number(layer_index),
        "head": page_number(head_index),
        "tensors": step_tensors(view.walk, index, layer_index, head_index),
        "label_names": view.walk.label_names,
        "probabilities": view.walk.probabilities,
        "pre_ln": view.walk.pre_ln,
    }


def walkthrough(text: str, step: int = 1, layer: int = 1, head: int = 1) -> dict:
    """One step of the tutorial's forward pass on a text, as the Walkthrough tab shows it: only that step's
    tensors, at the chosen layer and head, from the model's own pass (one step per call keeps answers small).
    Layers and heads count from 1 and token positions from 0, in every argument and answer.

    Args:
        text: the text to read.
        step: the step, from 1 (token ids) to 12 (the classifier), as the tab numbers them.
        layer: the layer of steps 4 to 9, from 1.
        head: the head of steps 5 to 7, from 1.

    Returns:
        {"tokens", "step", "title", "arithmetic", "shape", "layer", "head", "tensors": {name: values} (step 5:
        "queries", "keys", "values" [token][d_k] of the head; step 6: "scores", "scaled", "weights" [query][key];
        step 10: "block_output" [layer][token][d]; ...), "label_names", "probabilities", "pre_ln"}.
    """
    return runner.api_view(walkthrough_step, text, step=step, layer=layer, head=head)


def layout(page: Page) -> Drawing:
    gr.Markdown(
        "The tutorial's forward pass on your sentence, one step at a time: what each step does, the code that "
        "computes it, its shape, and this sentence's own numbers from one pass of the model."
    )
    with gr.Row():
        previous = gr.Button("◀ Previous", elem_id="walk-previous", scale=0, min_width=120, interactive=False)
        step = gr.Slider(1, len(STEPS), value=1, step=1, label="Step", elem_id="walk-step")
        following = gr.Button("Next ▶", elem_id="walk-next", scale=0, min_width=120)
    with gr.Row():
        layer = gr.Radio(layer_choices(page.model), value=1, label="Layer", elem_id="walk-layer")
        head = gr.Radio(head_choices(page.model), value=1, label="Head", elem_id="walk-head")
    text = gr.Markdown(elem_id="walk-text")
    # Gradio's Markdown gives a code block a copy button of its own (a second one, buttons=["copy"], showed two)
    code = gr.Markdown(label="The code that computes it", show_label=True, container=True, elem_id="walk-code")
    plot = gr.Plot(label="This sentence's numbers", elem_id="walk-plot")
    kept = gr.State()
    inputs, outputs = [page.result, step, layer, head, kept], [text, code, plot, kept]
    # A step, layer or head change draws from the kept pass off the queue (as a head change on the Attention tab
    # does), and so do Previous and Next, which move the step too. Not the step's change event: the page
    # load sets the step, layer and head at once, and a change event would read the layer and head from before.
    redraws = [Drawing(show_kept_step, inputs, outputs[:3], [step.release, layer.input, head.input])]
    for button, change in ((previous, -1), (following, 1)):  # one request that moves the step and draws it
        redraws.append(Drawing(step_mover(change), inputs, [step, *outputs[:3]], [button.click]))
    # Whatever moves the step (the slider, the buttons, a link), off the queue: Next was usable at the last step
    step.change(step_ends, step, [previous, following], queue=False, api_visibility="private", show_progress="hidden")
    controls = {"step": step, "walk_layer": layer, "walk_head": head}
    return Drawing(show_step, inputs, outputs, [], controls, redraws=redraws)


VIEW = View(
    "walkthrough",
    TITLE,
    layout,
    params={
        "step": lambda value, r: number(value, 1, len(STEPS)),
        "walk_layer": read_layer,
        "walk_head": read_head,
    },
    fallbacks={"walk_layer": "layer", "walk_head": "head"},
    endpoints={"walkthrough": walkthrough},
    colour_scale=False,
)
