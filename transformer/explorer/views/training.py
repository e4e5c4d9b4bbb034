"""Training tab: the typed sentence read by the model at each of its training checkpoints, and the ``/training``
endpoint.

The checkpoints are the model's own (``transformer.checkpoints``: a ``checkpoints/`` folder beside it, or ``step-N``
branches of its Hub repo), loaded once and kept (``runner.get_checkpoints``). One draw reads the sentence with
each; the kept view then holds every checkpoint's P(class), the chosen head's attention and the embeddings map,
so moving the checkpoint slider redraws with no model call and no load. The suite's rates and the heads' roles
across checkpoints come from ``training.json`` (``python -m transformer.artifacts``). A model with no
checkpoints: one line saying so.

Shape letters: K = checkpoints, C = classes, N = tokens.
"""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr
import plotly.graph_objects as go
import torch

from ...explain.embedding_map import EmbeddingsView
from ...explain.training import read_at_checkpoints, settled_index
from .. import runner
from ..analysis import NO_OPINION_MARGIN, Analysis
from ..corpus import model_files
from ..corpus.on_demand import ModelArtifact
from ..drawing.attention_maps import attention_heatmap
from ..drawing.embedding_maps import embeddings_figure
from ..drawing.training import capabilities_figure, probability_figure, roles_figure
from ..inputs import layer_head, number, page_number
from ..registry import Drawing, Page, View, head_choices, kept_control, layer_choices, read_head, read_layer

TITLE = "Training"
MAX_CHECKPOINTS = 100  # the slider's and the address's most; a model keeps a handful (``--keep-steps``, 12)
SETTLES = (
    "The prediction **settles** at the first checkpoint from which the predicted class stays the final model's to the "
    "end of training, with a clear opinion where the final model has one (its two likeliest classes at least "
    f"{NO_OPINION_MARGIN:g} apart): random weights lean one way or the other by chance."
)
TRAINING = ModelArtifact(model_files.TRAINING_FILE)  # training.json, made by python -m transformer.artifacts


@dataclass(frozen=True)
class TrainingView:
    """The sentence at every checkpoint, oldest first; ``layer`` and ``head`` (0-based) are the head drawn.

    Shape:
        probabilities: (K, C); attentions: (K, N, N); maps: K embeddings maps.
    """

    tokens: list[str]
    label_names: list[str]
    steps: list[int]
    layer: int
    head: int
    probabilities: torch.Tensor
    attentions: torch.Tensor
    maps: list[EmbeddingsView]

    @property
    def settled(self) -> int:
        """The checkpoint (its index) where the prediction settles (``explain.training.settled_index``)."""
        return settled_index(self.probabilities, NO_OPINION_MARGIN)


def training_view(model, tokenizer, result: Analysis, layer=1, head=1) -> TrainingView:
    """Read the sentence with every checkpoint (``layer`` and ``head`` counted from 1, checked first).

    Raises:
        InputError: no such head, or the model kept no checkpoints (the one line that says so).
    """
    layer_index, head_index = layer_head(layer, head, model.num_layers, model.num_heads)
    checkpoints = runner.checkpoint_models()
    models = [loaded.model for _, loaded in checkpoints]
    ids = torch.tensor([result.token_ids])  # (1, N); the checkpoints share the model's tokenizer (one run)
    readings = read_at_checkpoints(models, ids, result.tokens, layer_index, head_index)
    return TrainingView(
        result.tokens,
        list(result.label_names),
        [step for step, _ in checkpoints],
        layer_index,
        head_index,
        readings.probabilities,
        readings.attentions,
        readings.maps,
    )


def training_answer(model, tokenizer, result: Analysis, layer=1, head=1) -> dict:
    """``/training``'s answer: the view as JSON-ready numbers, with training.json's rates and roles when there."""
    view = training_view(model, tokenizer, result, layer, head)
    stored = TRAINING.current()
    return {
        "tokens": view.tokens,
        "label_names": view.label_names,
        "steps": view.steps,
        "probabilities": view.probabilities,
        "settled_step": view.steps[view.settled],
        "layer": page_number(view.layer),
        "head": page_number(view.head),
        "attentions": view.attentions,
        "capabilities": [c["capabilities"] for c in stored["checkpoints"]] if stored else None,
        "roles": [c["roles"] for c in stored["checkpoints"]] if stored else None,
    }


def training(text: str, layer: int = 1, head: int = 1) -> dict:
    """A text read by the model at each of its training checkpoints (oldest first): its class probabilities, the step
    where its prediction settles, and one head's attention at each. Layers and heads count from 1 and token
    positions from 0, in every argument and answer.

    Args:
        text: the text to read.
        layer: the layer of the head whose attention is answered, from 1.
        head: that head, from 1.

    Returns:
        {"tokens", "label_names", "steps", "probabilities": [checkpoint][class], "settled_step" (the first checkpoint
        from which the predicted class stays the final one, clearly where the final one is clear), "layer", "head",
        "attentions": [checkpoint][query][key], "capabilities": [checkpoint][{"part", "capability",
        "failure_rate"}] and "roles": [checkpoint][layer][head] from training.json (null when it was not made)}. A
        model without checkpoints answers an error saying so.
    """
    return runner.api_view(training_answer, text, layer=layer, head=head)


def checkpoint_number(view: TrainingView, position) -> int:
    """The slider's ``position`` (from 1) within the view's checkpoints; none yet: the last, the final model."""
    return min(max(int(position or len(view.steps)), 1), len(view.steps))


def checkpoint_figures(view: TrainingView, position) -> tuple[go.Figure, go.Figure]:
    """The chosen head's attention and the embeddings map at checkpoint ``position`` (``checkpoint_number``)."""
    k = checkpoint_number(view, position) - 1
    title = f"Layer {page_number(view.layer)}, head {page_number(view.head)} at step {view.steps[k]:,}"
    return attention_heatmap(view.tokens, view.attentions[k].numpy(), title), embeddings_figure(view.maps[k])


def corpus_figures() -> tuple:
    """The suite's and the roles' figures from training.json, hidden (and a line saying why) without it."""
    stored = TRAINING.current()
    if stored is None:
        hidden = gr.update(value=None, visible=False)
        said = f"The suite's rates and the heads' roles across checkpoints come from {model_files.TRAINING_FILE}, "
        return said + "which `python -m transformer.artifacts` has not made for these weights.", hidden, hidden
    shown = (gr.update(value=capabilities_figure(stored), visible=True),)
    return "", *shown, gr.update(value=roles_figure(stored), visible=True)


def show_training(result: Analysis | None, layer, head, position, kept: tuple | None) -> tuple:
    """(summary, curve, attention, map, suite, roles, slider, kept); a model without checkpoints: one line."""
    if result is None:
        return "", None, None, None, None, None, gr.update(), kept
    found, why = runner.get_checkpoints()
    if not found:
        hidden = gr.update(value=None, visible=False)
        return why, hidden, hidden, hidden, hidden, hidden, gr.update(visible=False), kept
    kept = runner.kept_view(kept, training_view, result, layer=layer, head=head)
    view = kept[1]
    chosen = checkpoint_number(view, position)
    slider = kept_control(position, chosen, maximum=len(view.steps), visible=True)
    settled = view.steps[view.settled]
    final = view.label_names[int(view.probabilities[-1].argmax())]
    summary = f"{len(view.steps)} checkpoints, steps {view.steps[0]:,} to {view.steps[-1]:,}. Finally **{final}**; "
    summary += f"the prediction settles at step **{settled:,}**. {SETTLES}" + (f" {why}" if why else "")
    said, suite, roles = corpus_figures()
    attention, embeddings = checkpoint_figures(view, chosen)
    curve = probability_figure(view.steps, view.probabilities, view.label_names, view.settled)
    shown = [gr.update(value=figure, visible=True) for figure in (curve, attention, embeddings)]
    return " ".join([summary, said]).strip(), *shown, suite, roles, slider, kept


def show_checkpoint(result: Analysis | None, kept: tuple | None, position) -> tuple:
    """The slider's redraw: the head and the map at that checkpoint, from the kept view of this analysis (no model
    call, no load). Without one (nothing read yet, another sentence since) the tab stays as it is."""
    key = runner.kept_key(training_view, result.text, **runner.kept_controls(kept)) if result is not None else None
    if key is None or not runner.is_kept(kept, key):
        return gr.skip(), gr.skip()
    return checkpoint_figures(kept[1], position)


def layout(page: Page) -> Drawing:
    gr.Markdown(
        "Your sentence read by the model at each checkpoint kept while it trained, from its random start to the "
        "finished model: the class probabilities, one head's attention and the tokens' map at the checkpoint you "
        "choose, the behavioural suite's failure rates and every head's role. " + SETTLES
    )
    summary = gr.Markdown(elem_id="training-summary")
    curve = gr.Plot(label="Prediction across training", elem_id="training-curve")
    with gr.Row():
        layer = gr.Radio(layer_choices(page.model), value=1, label="Layer", elem_id="training-layer")
        head = gr.Radio(head_choices(page.model), value=1, label="Head", elem_id="training-head")
    position = gr.Slider(
        1, MAX_CHECKPOINTS, value=MAX_CHECKPOINTS, step=1, label="Point in training (oldest to final)",
        elem_id="training-point",
    )  # fmt: skip
    attention = gr.Plot(label="The head at this checkpoint", elem_id="training-attention")
    embeddings = gr.Plot(label="Token vectors at this checkpoint", elem_id="training-embeddings")
    suite = gr.Plot(label="Behavioural suite across training", elem_id="training-suite")
    roles = gr.Plot(label="Head roles across training", elem_id="training-roles")
    kept = gr.State()
    inputs = [page.result, layer, head, position, kept]
    outputs = [summary, curve, attention, embeddings, suite, roles, position, kept]
    redraws = [Drawing(show_checkpoint, [page.result, kept, position], [attention, embeddings], [position.release])]
    controls = {"training_layer": layer, "training_head": head, "training_point": position}
    return Drawing(show_training, inputs, outputs, [layer.input, head.input], controls, redraws=redraws)


VIEW = View(
    "training",
    TITLE,
    layout,
    params={
        "training_layer": read_layer,
        "training_head": read_head,
        "training_point": lambda value, r: number(value, 1, MAX_CHECKPOINTS),
    },
    fallbacks={"training_layer": "layer", "training_head": "head"},
    endpoints={"training": training},
    colour_scale=False,
)
