"""Attributions tab: gradient × input and Integrated Gradients for a target class, how far four methods
agree and how faithful each is by erasure; the ``/attributions`` and ``/faithfulness`` endpoints.

Shape letters: N = tokens, K = methods, J = removal sizes.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import gradio as gr
import plotly.graph_objects as go
import torch

from ...explain.agreement import METHODS, Agreement, agreement_of
from ...explain.attribution import IntegratedGradients, gradient_x_input, integrated_gradients
from ...explain.budget import ig_steps
from ...explain.faithfulness import MODES, Faithfulness, Verdict, faithfulness_by_mode, most_faithful
from .. import runner
from ..analysis import Analysis, InputError, model_attentions, sentence_ids
from ..corpus import model_files
from ..corpus.on_demand import ModelArtifact
from ..drawing.attributions import attribution_figure, attribution_html
from ..drawing.erasure import corpus_table, faithfulness_figure, faithfulness_html
from ..drawing.figures import escape, heatmap
from ..drawing.token_spans import text_pieces
from ..inputs import PREDICTED, choice, class_index, number, quoted, whole_number
from ..registry import Drawing, Page, View, cancel_button

MAX_IG_STEPS = 128  # the slider's top and the check's: no API caller gets more steps than the page offers
SLIDER_TOKENS = 128  # the page's steps slider starts at the default for a sentence this long (or max_len)
BASELINES = ("pad", "zero")
CORPUS = ModelArtifact(
    model_files.FAITHFULNESS_FILE
)  # read only: ``make artifacts`` writes it, the tab never computes it


@dataclass(frozen=True)
class AttributionView:
    """Gradient × input and Integrated Gradients for one class, and how far four methods agree.

    Shape:
        gradient_x_input: (N,); ``integrated_gradients.attributions``: (N,).
    """

    text: str
    tokens: list[str]
    offsets: list[tuple[int, int]]
    target: int
    target_label: str
    gradient_x_input: torch.Tensor
    integrated_gradients: IntegratedGradients
    agreement: Agreement


def default_steps(model, tokens: int) -> int:
    """Integrated Gradients' default steps for a ``tokens``-token sentence on ``model``: as many as half the job cap
    pays for (``explain.budget.ig_steps``), 32 on the bundled model."""
    return ig_steps(model, tokens, runner.default_seconds())


def attribution_view(
    model, tokenizer, result: Analysis, target: str | None = PREDICTED, steps: int | None = None, baseline="pad"
) -> AttributionView:
    """Gradient × input and Integrated Gradients for ``target`` (a class name), and the methods' agreement.

    Args:
        model, tokenizer: the explorer's model (the tokenizer is not needed here).
        result: the analyzed sentence.
        target: a class name, or ``PREDICTED``.
        steps: Integrated Gradients steps, 1 to ``MAX_IG_STEPS``; None for ``default_steps``.
        baseline: "pad" or "zero" (see ``integrated_gradients``).
    """
    index = class_index(target, result)
    steps = default_steps(model, len(result.tokens)) if steps is None else steps
    steps = whole_number(steps, "Integrated Gradients steps", 1, MAX_IG_STEPS)
    if baseline not in BASELINES:
        raise InputError(f"The baseline is one of {', '.join(BASELINES)}; got {quoted(baseline)}.")
    ids = sentence_ids(model, result)
    gradient = gradient_x_input(model, ids, index).cpu()  # (N,)
    ig = runner.on_cpu(integrated_gradients(model, ids, index, baseline, steps))
    return AttributionView(
        text=result.text,
        tokens=result.tokens,
        offsets=result.offsets,
        target=index,
        target_label=result.label_names[index],
        gradient_x_input=gradient,
        integrated_gradients=ig,
        agreement=agreement_of(model_attentions(result), gradient, ig.attributions, pooling=model.pooling),
    )


def faithfulness_scores(view: AttributionView) -> torch.Tensor:
    """The scores each method ranks the tokens by for erasure, one row per name in ``METHODS``.

    Attention and rollout as the agreement reads them (how much a token is used); gradient × input and
    Integrated Gradients signed, so evidence for the target class ranks first and evidence against it last.

    Shape:
        Returns (K, N).
    """
    used = view.agreement.scores[:2]  # (2, N): attention, rollout
    return torch.cat([used, torch.stack([view.gradient_x_input, view.integrated_gradients.attributions])])


def check_removal(removal) -> str:
    """``removal`` if it is one of ``MODES``, else a clear ``InputError``."""
    if removal not in MODES:
        raise InputError(f"The removal is one of {', '.join(MODES)}; got {quoted(removal)}.")
    return removal


def erasure(model, result: Analysis, view: AttributionView, modes: tuple[str, ...]) -> dict[str, Faithfulness]:
    """Each mode's erasure curves for the view's four methods and target class: one forward pass in all."""
    scores = faithfulness_scores(view).to(next(model.parameters()).device)  # (K, N)
    return faithfulness_by_mode(model, sentence_ids(model, result), view.target, scores, METHODS, modes)


@dataclass(frozen=True)
class AttributionTab:
    """What the tab keeps: the attributions, and the faithfulness of each removal mode drawn so far."""

    attributions: AttributionView
    faithfulness: dict[str, Faithfulness]


def attribution_tab(
    model,
    tokenizer,
    result: Analysis,
    target: str | None = PREDICTED,
    steps: int | None = None,
    baseline: str = "pad",
    removal: str = "pad",
) -> AttributionTab:
    """``attribution_view``, then the erasure curves in the ``removal`` mode."""
    view = attribution_view(model, tokenizer, result, target, steps, baseline)
    return AttributionTab(view, erasure(model, result, view, (removal,)))


def with_mode(model, tokenizer, result: Analysis, tab: AttributionTab, removal: str) -> AttributionTab:
    """The kept tab with the ``removal`` mode's curves added, from the kept scores: one forward pass."""
    return AttributionTab(tab.attributions, tab.faithfulness | erasure(model, result, tab.attributions, (removal,)))


@dataclass(frozen=True)
class Curves:
    """One ranking's erasure curves and their AOPC. Shape: comprehensiveness, sufficiency: (J,)."""

    comprehensiveness: torch.Tensor
    sufficiency: torch.Tensor
    comprehensiveness_aopc: float
    sufficiency_aopc: float


@dataclass(frozen=True)
class FaithfulnessView:
    """The ``/faithfulness`` answer: each method's curves, the random floor's, and the most faithful method."""

    tokens: list[str]
    target: int
    target_label: str
    mode: str
    percents: tuple[int, ...]
    counts: tuple[int, ...]
    seeds: tuple[int, ...]
    full_probability: float
    methods: dict[str, Curves]
    random: Curves
    most_faithful: Verdict
    corpus: dict | None  # the mode's means over the reference corpus: "sentences" and each curve's AOPC by method


def corpus_means(mode: str) -> dict | None:
    """The loaded model's mean AOPC over the reference corpus in ``mode`` (``faithfulness.json``), or None."""
    stored = CORPUS.current()
    if stored is None or mode not in stored.get("modes", {}):
        return None
    return {"sentences": stored["sentences"], **stored["modes"][mode]}


def faithfulness_view(model, tokenizer, result: Analysis, removal: str = "pad", **controls) -> FaithfulnessView:
    """The four methods' scores, then their erasure curves in one mode (``MODES``): ``attribution_tab`` with its
    ``target``, ``steps`` and ``baseline`` (``controls``), as the API sees it."""
    tab = attribution_tab(model, tokenizer, result, **controls, removal=check_removal(removal))
    view, found = tab.attributions, tab.faithfulness[removal]
    comprehensive, sufficient = found.comprehensiveness_aopc.tolist(), found.sufficiency_aopc.tolist()
    methods = {
        name: Curves(found.comprehensiveness[k], found.sufficiency[k], comprehensive[k], sufficient[k])
        for k, name in enumerate(found.methods)
    }
    floor = Curves(
        found.random_comprehensiveness,
        found.random_sufficiency,
        found.random_comprehensiveness_aopc,
        found.random_sufficiency_aopc,
    )
    return FaithfulnessView(
        view.tokens, view.target, view.target_label, removal, found.percents, found.counts, found.seeds,
        found.full_probability, methods, floor, most_faithful(found), corpus_means(removal),
    )  # fmt: skip


def agreement_figure(agreement: Agreement) -> go.Figure:
    """Spearman rank correlation between the methods, from −1 to 1 (blank where undefined).

    Args:
        agreement: from ``method_agreement``.
    """
    names = [escape(name) for name in agreement.methods]
    return heatmap(
        agreement.correlation,
        names,
        names,
        title="How far the methods agree (Spearman rank correlation)",
        axis_titles=("method", "method"),
        signed=True,
        colour_title="ρ",
        show_values=True,
        limit=1.0,  # ρ's own range, so that colours compare across sentences
    )


def attribution_panel(view: AttributionView) -> tuple[str, str, str, go.Figure, go.Figure]:
    """(summary, gradient × input over the text, Integrated Gradients over the text, both per token, agreement)."""
    ig = view.integrated_gradients
    pieces = text_pieces(view.text, view.offsets)
    baseline = "all-zero token embeddings"
    if ig.baseline == "pad":
        kept = html.escape(", ".join(dict.fromkeys(view.tokens[p] for p in ig.kept_positions)))
        baseline = "every token replaced by [PAD]" + (f" but {kept}, kept (so they get none)" if kept else "")
    difference = ig.target_logit - ig.baseline_logit
    verdict = "within" if ig.complete else "outside"
    summary = (
        f"<p>Target class <b>{html.escape(view.target_label)}</b>: red tokens push its logit up, blue ones down "
        "(hover a token for its score). "
        f"Integrated Gradients baseline: {baseline}, same positions. With {ig.steps} steps the attributions sum to "
        f"{difference + ig.completeness_error:.4f} and f(input) − f(baseline) = {difference:.4f}: "
        f"completeness error {ig.relative_completeness_error:.2%}, {verdict} the 5% tolerance"
        f"{'' if ig.complete else f' (use more steps: try {min(2 * ig.steps, MAX_IG_STEPS)})'}.</p>"
    )
    scores = torch.stack([view.gradient_x_input, ig.attributions])  # (2, N)
    return (
        summary,
        attribution_html(pieces, view.tokens, view.gradient_x_input, "Gradient × input (first-order estimate)"),
        attribution_html(pieces, view.tokens, ig.attributions, f"Integrated Gradients ({ig.steps} steps)"),
        attribution_figure(scores, ["gradient × input", "integrated gradients"], view.tokens),
        agreement_figure(view.agreement),
    )


def show_attributions(
    result: Analysis | None, target: str, steps: int, baseline: str, kept: tuple | None, removal: str = "pad"
) -> tuple:
    """(summary, gradient × input text, IG text, both per token, agreement, faithfulness sentence and figure, kept).

    The kept tab is kept under the attribution controls: another removal mode adds its curves to it, from the
    kept scores, and a mode drawn before runs nothing.
    """
    if result is None:
        return "", "", "", None, None, "", None, None
    with runner.clear_errors():
        removal = check_removal(removal)
    controls = dict(target=target, steps=steps, baseline=baseline)
    key = runner.kept_key(attribution_tab, result.text, **controls)
    if not runner.is_kept(kept, key):
        kept = (key, runner.explain(attribution_tab, result, **controls, removal=removal))
    elif removal not in kept[1].faithfulness:
        kept = (key, runner.explain(with_mode, result, tab=kept[1], removal=removal))
    tab = kept[1]
    found, label = tab.faithfulness[removal], tab.attributions.target_label
    summary = faithfulness_html(found, most_faithful(found), label) + corpus_table(found, CORPUS.current())
    faithful = (summary, faithfulness_figure(found, label))
    return (*attribution_panel(tab.attributions), *faithful, kept)


def computes(
    result: Analysis | None, target: str, steps: int, baseline: str, kept: tuple | None, removal: str = "pad"
) -> bool:
    """Whether ``show_attributions`` runs a job (``Drawing.starts``): Integrated Gradients and erasure for controls it
    keeps nothing for, erasure for a removal mode not drawn yet; nothing when the tab keeps both."""
    if result is None:
        return False
    key = runner.kept_key(attribution_tab, result.text, target=target, steps=steps, baseline=baseline)
    return not runner.is_kept(kept, key) or removal not in kept[1].faithfulness


def attributions(text: str, target: str = PREDICTED, steps: int | None = None, baseline: str = "pad") -> dict:
    """Gradient × input and Integrated Gradients for a target class, and how far four methods agree.
    Layers and heads count from 1 and token positions from 0, in every argument and answer.

    Args:
        text: the text to explain.
        target: a class name, or "predicted" (the class the model predicts).
        steps: Integrated Gradients steps (1-128); none for the model's default: 32 where they fit in half the job
            cap (the bundled model), fewer on a big model (a DistilBERT-base at 128 tokens: 8). "complete" says
            whether they were enough.
        baseline: "pad" (every token [PAD], same positions) or "zero" (all-zero token embeddings).

    Returns:
        {"tokens", "target", "target_label", "gradient_x_input": [token], "integrated_gradients":
        {"attributions": [token], "target_logit", "baseline_logit", "completeness_error", "complete", ...},
        "agreement": {"methods", "scores": [method][token], "correlation": [method][method] (Spearman; null if
        undefined)}}.
    """
    return runner.api_view(attribution_view, text, target=target, steps=steps, baseline=baseline)


def faithfulness(
    text: str, target: str = PREDICTED, mode: str = "pad", steps: int | None = None, baseline: str = "pad"
) -> dict:
    """How faithful four explanation methods are by erasure (ERASER): remove each one's top tokens and see
    how far the target class's probability falls. Layers and heads count from 1 and token positions from 0,
    in every argument and answer.

    Args:
        text: the text to explain.
        target: a class name, or "predicted" (the class the model predicts).
        mode: "pad" (a removed token is replaced by [PAD], same length) or "delete" (it is deleted).
        steps: Integrated Gradients steps (1-128), for its scores; none for the model's default (as /attributions).
        baseline: Integrated Gradients' baseline, "pad" or "zero".

    Returns:
        {"tokens", "target", "target_label", "mode", "percents": [10, ..., 50], "counts": tokens removed per
        size (⌈p·N/100⌉), "seeds", "full_probability", "methods": {method: {"comprehensiveness": [size],
        "sufficiency": [size], "comprehensiveness_aopc", "sufficiency_aopc"}}, "random": the same for the mean
        of the seeds' random rankings, "most_faithful": {"method", "aopc", "runner_up", "margin", "above_random"},
        "corpus": the loaded model's means over its reference corpus in this mode, {"sentences",
        "comprehensiveness_aopc": {method: mean}, "sufficiency_aopc": {...}} with "random" among the methods,
        or null when it has no faithfulness.json}.
    """
    return runner.api_view(faithfulness_view, text, target=target, steps=steps, baseline=baseline, removal=mode)


def layout(page: Page) -> Drawing:
    gr.Markdown(
        "Which tokens push the chosen class's logit up (red) or down (blue). **Gradient × input** is the "
        "first-order estimate; **Integrated Gradients** averages the gradient along the straight path "
        "from a baseline (no words, same positions) to your sentence, so the scores add up to the "
        "logit's change. Both attribute the token embeddings, not the positional encoding. The next "
        "figure compares how the methods rank the tokens, raw attention and rollout included; the last "
        "asks which ranking the model follows: remove each method's top tokens, or keep only them, and "
        "see how far the class's probability falls (ERASER's comprehensiveness and sufficiency)."
    )
    with gr.Row():
        target = gr.Radio(
            [("the predicted class", PREDICTED), *((n, n) for n in page.model.label_names)],
            value=PREDICTED,
            label="Target class",
        )
        steps = gr.Slider(
            4,
            MAX_IG_STEPS,
            value=default_steps(page.model, min(page.model.max_len, SLIDER_TOKENS)),
            step=4,
            label="Integrated Gradients steps",
            elem_id="ig-steps",
        )
        baseline = gr.Radio([("[PAD] tokens", "pad"), ("zero embeddings", "zero")], value="pad", label="Baseline")
        removal = gr.Radio(
            [("replace by [PAD]", "pad"), ("delete", "delete")],
            value="pad",
            label="Faithfulness: a removed token is",
            elem_id="faithfulness-removal",
        )
    cancel = cancel_button("attributions")
    outputs = [
        gr.HTML(elem_id="attribution-summary"),
        gr.HTML(label="Gradient × input", elem_id="gradient-x-input"),
        gr.HTML(label="Integrated Gradients", elem_id="integrated-gradients"),
        gr.Plot(label="Attribution per token", elem_id="attribution-plot"),
        gr.Plot(label="Method agreement", elem_id="agreement-plot"),
        gr.HTML(elem_id="faithfulness-summary"),
        gr.Plot(label="Faithfulness by erasure", elem_id="faithfulness-plot"),
        gr.State(),
    ]
    return Drawing(
        show_attributions,
        [page.result, target, steps, baseline, outputs[-1], removal],
        outputs,
        [target.input, steps.input, baseline.input, removal.input],  # input: Enter, arrow keys, drags (always last)
        {"target": target, "steps": steps, "baseline": baseline, "removal": removal},
        cancel=cancel,
        starts=computes,
    )


VIEW = View(
    "attributions",
    "Attributions",
    layout,
    params={
        "target": lambda value, r: choice(value, [PREDICTED, *r.model.label_names]),
        "steps": lambda value, r: number(value, 1, MAX_IG_STEPS),
        "baseline": lambda value, r: choice(value, BASELINES),
        "removal": lambda value, r: choice(value, MODES),
    },
    endpoints={"attributions": attributions, "faithfulness": faithfulness},
    colour_scale=False,
)
