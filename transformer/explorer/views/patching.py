"""Patching tab: where in the network the decision between two sentences is carried (activation patching per
stage × position and per head, both directions) and the class read out after every layer; the ``/patching`` and
``/layer_readout`` endpoints.

Shape letters: L = layers, H = heads, N = tokens, C = classes.
"""

from __future__ import annotations

import difflib
import html
from dataclasses import dataclass

import gradio as gr
import plotly.graph_objects as go
import torch

from ...explain.layer_readout import layer_readout as readout_logits
from ...explain.patching import DIRECTIONS, activation_patching
from .. import runner
from ..analysis import MAX_INPUT_CHARS, Analysis, EmptyInputError, InputError, read_tokens, sentence_ids
from ..drawing.markup import table
from ..drawing.patching import heads_figure, readout_figure, restored_figure
from ..inputs import choice, quoted
from ..page import scripts
from ..registry import Drawing, Page, View, cancel_button, read_text

EXAMPLES = {  # each pair the same length for the bundled model's tokenizer, and each flips its prediction
    "a word swapped": ("The film was good.", "The film was bad."),
    "a negation added": ("The film was really good.", "The film was not good."),
    "a contrast clause flipped": (
        "The service was slow, but the food was great.",
        "The service was great, but the food was slow.",
    ),
}
DIRECTION_CHOICES = [("B into A (rerun A with a piece of B)", "b_into_a"), ("A into B", "a_into_b")]


@dataclass(frozen=True)
class PatchingView:
    """Activation patching between two sentences, and each one's class read out after every layer.

    Shape:
        restored: (L + 1, N) over the patched sentence's positions, stage 0 = after the embeddings;
        heads: (L, H); readout_a, readout_b: (L + 1, C) probabilities.
    """

    direction: str
    tokens: list[str]
    source_tokens: list[str]
    label_names: list[str]
    target: str
    contrast: str
    ld_a: float
    ld_b: float
    restored: torch.Tensor
    heads: torch.Tensor
    readout_a: torch.Tensor
    readout_b: torch.Tensor


@dataclass(frozen=True)
class ReadoutView:
    """Shape: probabilities (L + 1, C), stage 0 = after the embeddings; the last stage is the prediction."""

    tokens: list[str]
    label_names: list[str]
    probabilities: torch.Tensor


def length_message(tokens_a: list[str], tokens_b: list[str]) -> str:
    """One line: the two lengths, and each place where they part once their shared tokens are lined up
    (``difflib``), so that the edit that would line them up is plain."""
    matcher = difflib.SequenceMatcher(a=tokens_a, b=tokens_b, autojunk=False)
    edits = [edit(tokens_a, tokens_b, *op) for op in matcher.get_opcodes() if op[0] != "equal"]
    return (
        f"A has {len(tokens_a)} tokens and B has {len(tokens_b)}, but patching lines them up position by position: "
        f"{'; '.join(edits)}. Swap words one for one instead (e.g. 'really good' against 'not good')."
    )


def edit(tokens_a: list[str], tokens_b: list[str], kind: str, a_start: int, a_end: int, b_start: int, b_end: int):
    """One place where B parts from A, in words: what B adds, drops or has instead, and where in A."""
    where = f"before {quoted(tokens_a[a_end])} (A's position {a_end})" if a_end < len(tokens_a) else "at the end"
    a_piece, b_piece = quoted(" ".join(tokens_a[a_start:a_end])), quoted(" ".join(tokens_b[b_start:b_end]))
    if kind == "insert":
        return f"B adds {b_piece} {where}"
    if kind == "delete":
        return f"B lacks A's {a_piece} at A's position {a_start}"
    return f"B has {b_piece} where A has {a_piece} (A's position {a_start})"


def plots(*figures: go.Figure | None) -> tuple:
    """The tab's three plots: each drawn, or hidden where there is none (a message instead), never an empty box."""
    return tuple(gr.update(value=figure, visible=figure is not None) for figure in figures)


def readout_probabilities(model, ids: torch.Tensor) -> torch.Tensor:
    """P(class) after every stage: (L + 1, C)."""
    return readout_logits(model, ids).float().softmax(dim=-1).cpu()


def patching_view(model, tokenizer, result: Analysis, text_b: str = "", direction: str = "b_into_a") -> PatchingView:
    """Patch B into A (or A into B) at every stage, position and head; A is ``result``, B is read here."""
    if direction not in DIRECTIONS:
        raise InputError(f"The direction is one of {', '.join(DIRECTIONS)}; got {quoted(direction)}.")
    encoding_b, n_b = read_tokens(model, tokenizer, text_b)  # B's tokens only: its attentions would sit under the grid
    tokens_b = list(encoding_b.tokens[:n_b])
    if len(result.tokens) != n_b:
        raise InputError(length_message(result.tokens, tokens_b))
    ids_a = sentence_ids(model, result)
    ids_b = torch.tensor([encoding_b.ids[:n_b]], device=ids_a.device)  # (1, N)
    try:
        patching = activation_patching(model, ids_a, ids_b, direction)
    except InputError:  # a job cancelled or past its deadline (``runner.check_deadline``): said as it is
        raise
    except ValueError as error:  # the same logit difference: nothing to restore
        raise InputError(f"Cannot patch these two sentences: {error}.") from None
    tokens, source = (result.tokens, tokens_b) if direction == "b_into_a" else (tokens_b, result.tokens)
    names = result.label_names
    return PatchingView(
        direction=direction,
        tokens=tokens,
        source_tokens=source,
        label_names=names,
        target=names[patching.target],
        contrast=names[patching.contrast],
        ld_a=patching.ld_a,
        ld_b=patching.ld_b,
        restored=patching.restored.cpu(),
        heads=patching.heads.cpu(),
        readout_a=readout_probabilities(model, ids_a),
        readout_b=readout_probabilities(model, ids_b),
    )


def readout_view(model, tokenizer, result: Analysis) -> ReadoutView:
    """The class read out after every layer for the analyzed sentence."""
    return ReadoutView(result.tokens, result.label_names, readout_probabilities(model, sentence_ids(model, result)))


def rerun(view: PatchingView) -> str:
    """The sentence the patched runs rerun: "A" for B into A, else "B"."""
    return "A" if view.direction == "b_into_a" else "B"


def summary(view: PatchingView) -> str:
    """What is measured, in HTML: the two logit differences and the last stage's readout of each sentence."""
    target, contrast, into = html.escape(view.target), html.escape(view.contrast), rerun(view)
    rows = [
        [name, f"{ld:+.3f}", f"{readout[-1, view.label_names.index(view.target)]:.3f}"]
        for name, ld, readout in (("A", view.ld_a, view.readout_a), ("B", view.ld_b, view.readout_b))
    ]
    return (
        f"<p>Logit difference LD = logit({target}) − logit({contrast}). Each cell reruns {into} with one piece of "
        f"the other sentence and shows (LD<sub>patched</sub> − LD<sub>{into}</sub>) ÷ "
        f"(LD<sub>other</sub> − LD<sub>{into}</sub>): 0 changes nothing, 1 moves all the way.</p>"
        + table(["sentence", "LD", f"P({target})"], rows)
    )


def show_patching(text_a: str, text_b: str, direction: str, kept: tuple | None) -> tuple:
    """(summary, stages × positions, heads, readout, kept): A and B are this tab's own sentences; each plot an update
    (``plots``)."""
    try:
        result_a = runner.run_model(text_a)
        kept = runner.kept_view(kept, patching_view, result_a, text_b=text_b, direction=direction)
    except EmptyInputError:
        return "<p>Type two sentences with the same number of tokens.</p>", *plots(None, None, None), kept
    except runner.JobCancelled:  # the tab keeps what it showed (``events.PageParts.long_job``)
        raise
    except InputError as error:  # its message is HTML already, the caller's values in it escaped (``inputs.shown``)
        return f"<p>{error}</p>", *plots(None, None, None), kept
    except gr.Error as error:  # what ``runner.kept_view`` says of text or controls it cannot use
        return f"<p>{error.message}</p>", *plots(None, None, None), kept
    view = kept[1]
    into = rerun(view)
    readout = readout_figure(
        {"A": view.readout_a, "B": view.readout_b}, view.target, view.label_names.index(view.target)
    )
    restored = restored_figure(view.restored, view.tokens, view.source_tokens, into)
    return summary(view), *plots(restored, heads_figure(view.heads, into), readout), kept


def patches(text_a: str, text_b: str, direction: str, kept: tuple | None) -> bool:
    """Whether ``show_patching`` runs the patching (``Drawing.starts``): for two typed sentences it keeps none for."""
    if not (isinstance(text_a, str) and text_a.strip() and isinstance(text_b, str) and text_b.strip()):
        return False
    return not runner.is_kept(kept, runner.kept_key(patching_view, text_a, text_b=text_b, direction=direction))


def patching(text_a: str, text_b: str, direction: str = "b_into_a") -> dict:
    """Activation patching between two texts of the same number of tokens: rerun one with one residual vector (one
    stage, one position), or one head's output (every position), taken from the other, and measure the share of
    the logit difference that comes back.
    Layers and heads count from 1 and token positions from 0, in every argument and answer.

    Args:
        text_a: the first text (A).
        text_b: the second text (B), with as many tokens as A.
        direction: "b_into_a" (rerun A with pieces of B) or "a_into_b".

    Returns:
        {"direction", "tokens" (the rerun text's), "source_tokens", "label_names", "target", "contrast" (LD =
        logit(target) − logit(contrast): target is B's predicted class, contrast A's or A's runner-up), "ld_a",
        "ld_b", "restored": [stage][position] (stage 0 = after the embeddings, stage s after layer s),
        "heads": [layer][head], "readout_a", "readout_b": [stage][class] probabilities}.
    """
    return runner.api_view(patching_view, text_a, text_b=text_b, direction=direction)


def layer_readout(text: str) -> dict:
    """The class read out after every layer: the model's own final steps (final LayerNorm, pooling, classifier
    head) applied to the residual stream after the embeddings and after each layer.
    Layers and heads count from 1 and token positions from 0, in every argument and answer.

    Args:
        text: the text to read (at most 10,000 characters; the model reads its first max_len tokens).

    Returns:
        {"tokens", "label_names", "probabilities": [stage][class]} (stage 0 = after the embeddings, stage s after
        layer s; the last stage is /predict's).
    """
    return runner.api_view(readout_view, text)


def example_pair(name: str | None) -> tuple:
    """The two sentences of the example pair ``name``; anything else leaves both boxes as they are."""
    return EXAMPLES.get(str(name), (gr.skip(), gr.skip()))


def layout(page: Page) -> Drawing:
    gr.Markdown(
        "Where is the decision carried? Take two sentences of the same length that the model reads differently, "
        "rerun one with a single piece of the other, and see how much of the difference comes back: one token's "
        "vector at one stage (a row per stage), or one head's output. Bright cells are where the decision lives "
        "at that point; the line chart reads the class out after every layer."
    )
    first_a, first_b = next(iter(EXAMPLES.values()))
    with gr.Row(equal_height=True):
        text_a = gr.Textbox(first_a, label="Sentence A", max_length=MAX_INPUT_CHARS, elem_id="patching-a")
        text_b = gr.Textbox(first_b, label="Sentence B", max_length=MAX_INPUT_CHARS, elem_id="patching-b")
    with gr.Row(equal_height=True):
        example = gr.Dropdown(list(EXAMPLES), value=None, label="Example pair", elem_id="patching-example")
        direction = gr.Radio(DIRECTION_CHOICES, value="b_into_a", label="Patch", elem_id="patching-direction")
        button = gr.Button("Patch", elem_id="patching-button")
    cancel = cancel_button("patching")
    about = gr.HTML(elem_id="patching-summary", elem_classes="explain-html")
    stages = gr.Plot(label="Stages × positions", elem_id="patching-stages")
    with gr.Row():
        heads = gr.Plot(label="Heads", elem_id="patching-heads")
        readout = gr.Plot(label="Class after every layer", elem_id="patching-readout")
    kept = gr.State()
    inputs, outputs = [text_a, text_b, direction, kept], [about, stages, heads, readout, kept]
    # ``select``, not ``input``: a dropdown sends ``input`` each time it loses focus too, with no pair chosen. The pair
    # is drawn by the tab's hidden redraw button: the page's event, with the Cancel button, and the address after
    picked = example.select(example_pair, example, [text_a, text_b], api_visibility="private")
    picked.then(None, js=scripts.call("redrawView", VIEW_ID))
    return Drawing(
        show_patching,
        inputs,
        outputs,
        [button.click, text_a.submit, text_b.submit, direction.input],
        {"patch_a": text_a, "patch_b": text_b, "patch_direction": direction},
        cancel=cancel,
        starts=patches,
    )


VIEW_ID = "patching"
VIEW = View(
    VIEW_ID,
    "Patching",
    layout,
    params={
        "patch_a": read_text,
        "patch_b": read_text,
        "patch_direction": lambda value, reading: choice(value, DIRECTIONS),
    },
    endpoints={"patching": patching, "layer_readout": layer_readout},
    colour_scale=False,
)
