"""Word-order tab: the sentence and a reordering of it, each classified with positional encoding on and off;
the ``/word_order`` endpoint.

Shape letters: N = tokens, C = classes.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import gradio as gr
import plotly.graph_objects as go
import torch

from ...explain.counterfactual import WordOrder, sentence_permutation, word_order_experiment
from .. import runner
from ..analysis import MAX_INPUT_CHARS, Analysis, InputError, check_text, sentence_ids
from ..drawing.figures import CLASS_COLOURS, TEMPLATE, escape
from ..drawing.markup import sentence, table
from ..inputs import choice, number, whole_number
from ..registry import Drawing, Page, View, read_text


@dataclass(frozen=True)
class WordOrderView:
    """The sentence and a reordering, each with positional encoding on and off.

    ``experiment`` holds the logits and probabilities, (2, 2, C) indexed [order, encoding]
    (see ``WordOrder``). The differences are the largest |logit| gap between the two orders with
    the encoding off (0 up to float rounding for a true reordering) and on. ``seed`` is None for
    the person's own reordering. ``pooling`` is what the classifier reads: the tokens' "mean", or the "first" token
    ([CLS] or <s>), which a shuffle keeps in place with every token the tokenizer adds.
    """

    text: str
    tokens: list[str]
    label_names: list[str]
    seed: int | None
    reordered_tokens: list[str]
    experiment: WordOrder
    difference_without_encoding: float
    difference_with_encoding: float
    pooling: str = "mean"


def word_order_view(model, tokenizer, result: Analysis, seed: int = 0, reordered: str | None = None) -> WordOrderView:
    """The sentence and a reordering of it, each classified with positional encoding on and off.

    Args:
        model, tokenizer: the explorer's model and its tokenizer.
        result: the analyzed sentence.
        seed: shuffles the tokens when ``reordered`` is None.
        reordered: the person's own reordering, which must have as many tokens as the sentence.
    """
    ids = sentence_ids(model, result)  # (1, N)
    n = ids.size(1)
    if reordered is None:
        seed = whole_number(seed, "The shuffle seed", 0, 2**31 - 1)
        permutation = sentence_permutation(ids, seed, model.added_token_ids)  # (N,): [CLS] and [SEP] stay
        reordered_ids = ids[:, permutation.to(ids.device)]  # (1, N)
        reordered_tokens = [result.tokens[i] for i in permutation.tolist()]
    else:
        seed = None
        if not isinstance(reordered, str) or not reordered.strip():
            raise InputError("Type your own reordering of the sentence, or shuffle it.")
        encoding = tokenizer.encode(check_text(reordered))
        if len(encoding.ids) != n:
            raise InputError(
                f"Your reordering has {len(encoding.ids)} tokens and the sentence {n}: "
                "type the same words in another order."
            )
        reordered_ids = torch.tensor([encoding.ids], device=ids.device)  # (1, N)
        reordered_tokens = list(encoding.tokens)
    experiment = runner.on_cpu(word_order_experiment(model, ids, reordered_ids))
    logits = experiment.logits  # (2, 2, C): [order, encoding]
    return WordOrderView(
        text=result.text,
        tokens=result.tokens,
        label_names=result.label_names,
        seed=seed,
        reordered_tokens=reordered_tokens,
        experiment=experiment,
        difference_without_encoding=(logits[0, 1] - logits[1, 1]).abs().max().item(),
        difference_with_encoding=(logits[0, 0] - logits[1, 0]).abs().max().item(),
        pooling=model.pooling,
    )


UNSEEN_ORDER = {  # why the two orders agree with positional encoding off, by the model's ``pooling``
    "mean": "attention and mean pooling cannot see order",
    "first": "attention cannot see order, and the first token the classifier reads stays in place",
}
SHUFFLE_NOTE = {"mean": "", "first": " ([CLS] or <s>: a shuffle moves only the sentence's own tokens)"}


def word_order_figure(result: WordOrder, class_names: list[str] | None = None, pooling: str = "mean") -> go.Figure:
    """Class probabilities for the sentence and its reordering, each with positional encoding on and off.

    Args:
        result: from ``word_order_experiment``.
        class_names: one bar colour each, e.g. ``model.label_names``.
        pooling: what the classifier reads, ``model.pooling``: the title says why the orders agree without PE.
    """
    conditions = ["original, PE on", "original, PE off", "reordered, PE on", "reordered, PE off"]
    probs = result.probs.reshape(4, -1)  # (4, C) in the order of ``conditions``
    names = class_names or [str(c) for c in range(probs.size(1))]
    figure = go.Figure(
        [
            go.Bar(x=conditions, y=probs[:, c].tolist(), name=escape(names[c]), marker_color=class_colour(c))
            for c in range(probs.size(1))
        ]
    )
    note = f"identical with PE off: {UNSEEN_ORDER[pooling]}" if result.is_permutation else "not a reordering"
    figure.update_layout(template=TEMPLATE, barmode="group", title=f"Word order and positional encoding:<br>{note}")
    figure.update_xaxes(type="category")
    figure.update_yaxes(title="probability", range=[0, 1])
    return figure


def class_colour(index: int) -> str:
    """Class ``index``'s bar colour (``CLASS_COLOURS``, round again past the last)."""
    return CLASS_COLOURS[index % len(CLASS_COLOURS)]


def word_order_panel(view: WordOrderView) -> tuple[str, go.Figure]:
    """(both orders and their four predictions, with the verdict on positional encoding; the figure)."""
    rows = []
    for order, name in enumerate(("the sentence", "the reordering")):
        for encoding, switch in enumerate(("on", "off")):
            probs = view.experiment.probs[order, encoding].tolist()
            rows.append([name, switch, *(f"{p:.4f}" for p in probs)])
    if not view.experiment.is_permutation:
        verdict = "Your text is not a reordering of the same tokens, so the two need not agree even without it."
    else:
        verdict = (
            "Without positional encoding the two orders get the same prediction "
            f"(largest logit gap {view.difference_without_encoding:.1e}, float rounding): "
            f"{html.escape(UNSEEN_ORDER[view.pooling] + SHUFFLE_NOTE[view.pooling])}. With it the gap is "
            f"{view.difference_with_encoding:.4f}."
        )
    how = "your own reordering" if view.seed is None else f"shuffled with seed {view.seed}"
    summary = (
        f"<p>The sentence: {sentence(view.tokens)}</p>"
        f"<p>Reordered ({how}): {sentence(view.reordered_tokens)}</p>"
        + table(["order", "positional encoding", *view.label_names], rows)
        + f"<p>{verdict}</p>"
    )
    return summary, word_order_figure(view.experiment, view.label_names, view.pooling)


ASK_FOR_REORDERING = "Type your own reordering of the sentence, then press Enter or Reorder."


def show_word_order(result: Analysis | None, order: str, seed: int, reordered: str, kept: tuple | None) -> tuple:
    """(both orders and their predictions, the figure, kept view).

    Choosing "my own reordering" before typing one asks for it, as a plain line: choosing is no mistake. A
    reordering or seed that cannot be used is said in the summary, in place of the result, so the next
    result replaces it (a toast would stay on screen above it).
    """
    if result is None:
        return "", None, None
    own = reordered if order == "yours" else None
    if own is not None and not (isinstance(own, str) and own.strip()):
        return _message(ASK_FOR_REORDERING), None, kept
    try:
        kept = runner.kept_view(kept, word_order_view, result, seed=seed, reordered=own)
    except gr.Error as error:
        return _message(error.message, alert=True), None, kept
    return (*word_order_panel(kept[1]), kept)


def _message(text: str, alert: bool = False) -> str:
    """``text`` as the summary's one paragraph; an ``alert`` (what cannot be used) in the page's error colour."""
    if not alert:
        return f"<p>{html.escape(text)}</p>"
    return f'<p role="alert" class="order-error" style="color: var(--error-text-color)">{html.escape(text)}</p>'


def word_order(text: str, reordered: str = "", seed: int = 0) -> dict:
    """Classify a text and a reordering (yours, or its tokens shuffled with the seed), positional encoding on and off.
    Layers and heads count from 1 and token positions from 0, in every argument and answer.

    Args:
        text: the text to classify.
        reordered: your reordering of the text's words; empty to shuffle its tokens.
        seed: the shuffle's seed (0 to 2**31 - 1).

    Returns:
        {"tokens", "reordered_tokens", "seed", "experiment": {"is_permutation", "logits", "probs":
        [order][encoding][class] (order 0 = the text; encoding 0 = on)}, "difference_without_encoding" (0 up to
        float rounding for a true reordering), "difference_with_encoding"}.
    """
    shuffle = isinstance(reordered, str) and not reordered.strip()
    return runner.api_view(word_order_view, text, seed=seed, reordered=None if shuffle else reordered)


POOLING_IGNORES_ORDER = {  # the tab's introduction, by the model's ``pooling``
    "mean": "and mean pooling ignores their order",
    "first": "and the classifier reads the first token (`[CLS]` or `<s>`), which a shuffle keeps in place",
}


def layout(page: Page) -> Drawing:
    gr.Markdown(
        "Attention alone cannot see word order: without positional encoding every block treats the "
        f"positions alike {POOLING_IGNORES_ORDER[page.model.pooling]}, so a reordered sentence gets exactly "
        'the same prediction ("the dog bit the man" = "the man bit the dog"). With positional '
        "encoding on, the two can differ. Both are shown, for your sentence and a reordering of it."
    )
    with gr.Row():
        order = gr.Radio(
            [("shuffle the tokens", "shuffle"), ("my own reordering", "yours")], value="shuffle", label="Reordering"
        )
        seed = gr.Number(0, precision=0, minimum=0, label="Shuffle seed")
        reordered = gr.Textbox(label="My reordering (the same words)", max_length=MAX_INPUT_CHARS, elem_id="reordered")
        button = gr.Button("Reorder", elem_id="reorder")
    summary = gr.HTML(elem_id="order-summary", elem_classes="explain-html")
    plot = gr.Plot(label="Predictions", elem_id="order-plot")
    kept = gr.State()
    return Drawing(
        show_word_order,
        [page.result, order, seed, reordered, kept],
        [summary, plot, kept],
        [order.input, seed.submit, reordered.submit, button.click],
        {"order": order, "seed": seed, "reordered": reordered},
    )


VIEW = View(
    "word-order",
    "Word order",
    layout,
    params={
        "order": lambda value, r: choice(value, ["shuffle", "yours"]),
        "seed": lambda value, r: number(value, 0, 2**31 - 1),
        "reordered": read_text,
    },
    endpoints={"word_order": word_order},
    colour_scale=False,
)
