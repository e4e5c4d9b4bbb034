"""The Attributions tab's faithfulness figure and sentence: erasure curves per method over the random floor,
and which method is most faithful for this input. Pure functions from ``explain.faithfulness`` results.

Shape letters: J = removal sizes.
"""

from __future__ import annotations

import html

import plotly.graph_objects as go
import torch

from ...explain.faithfulness import Faithfulness, Verdict
from .figures import LEGEND_BELOW, TEMPLATE, TOUCH, escape
from .markup import table

REMOVED = {
    "pad": "removed tokens replaced by [PAD] (the Integrated Gradients baseline)",
    "delete": "removed tokens deleted",
}
RANDOM_COLOUR = "#7f7f7f"  # the floor: grey and dashed, under the methods' colours
COLOURS = TEMPLATE.layout.colorway


def _curve_trace(name: str, result: Faithfulness, values: torch.Tensor, axis: int, **style) -> dict:
    """One curve as a scatter trace on subplot ``axis`` (1 or 2); the legend shows each name once."""
    suffix = "" if axis == 1 else str(axis)
    return dict(
        type="scatter",
        mode="lines+markers",
        x=list(result.percents),
        y=values.tolist(),
        name=escape(name),
        legendgroup=escape(name),
        showlegend=axis == 1,
        xaxis=f"x{suffix}",
        yaxis=f"y{suffix}",
        customdata=list(result.counts),
        hovertemplate=f"{escape(name)}<br>%{{x}} % (%{{customdata}} tokens): %{{y:.4f}}<extra></extra>",
        **style,
    )


def faithfulness_figure(result: Faithfulness, label: str) -> go.Figure:
    """Comprehensiveness and sufficiency against the share of tokens erased, per method, over the random floor.

    Args:
        result: from ``faithfulness_by_mode``; its mode is named in the title.
        label: the target class's name (escaped here).
    """
    traces = []
    pairs = (
        (result.comprehensiveness, result.random_comprehensiveness),
        (result.sufficiency, result.random_sufficiency),
    )
    for axis, (curves, floor) in enumerate(pairs, start=1):
        traces += [  # one colour per method in both panels, as the one legend says
            _curve_trace(method, result, curve, axis, line={"color": COLOURS[k % len(COLOURS)]})
            for k, (method, curve) in enumerate(zip(result.methods, curves, strict=True))
        ]
        traces.append(
            _curve_trace("random (floor)", result, floor, axis, line={"dash": "dash", "color": RANDOM_COLOUR})
        )
    fall = f"fall in p({escape(label)})"
    layout = dict(
        template=TEMPLATE,
        title={"text": f"Erasure curves for {escape(label)}: {escape(REMOVED[result.mode])}"},
        xaxis={"domain": [0, 0.45], "title": {"text": "top tokens removed (%)"}, "tickvals": list(result.percents)},
        xaxis2={"domain": [0.55, 1], "title": {"text": "only top tokens kept (%)"}, "tickvals": list(result.percents)},
        yaxis={"title": {"text": fall}},
        yaxis2={"anchor": "x2", "title": {"text": fall}},
        annotations=[
            dict(text=text, x=x, y=1.0, xref="paper", yref="paper", xanchor="center", yanchor="bottom", showarrow=False)
            for text, x in (("comprehensiveness: higher is better", 0.225), ("sufficiency: lower is better", 0.775))
        ],
        legend=LEGEND_BELOW,
        height=420,
        **TOUCH,
    )
    return go.Figure(data=traces, layout=layout)


def faithfulness_html(result: Faithfulness, verdict: Verdict, label: str) -> str:
    """A sentence naming the most faithful method for this input and its margin, and the mode the figure uses."""
    best, runner_up = html.escape(verdict.method), html.escape(verdict.runner_up)
    lead = (
        f"tied with <b>{runner_up}</b> (ties go to the lower sufficiency AOPC, then to the method listed first)"
        if verdict.margin == 0
        else f"{verdict.margin:.4f} ahead of <b>{runner_up}</b>"
    )
    floor = (
        f"{verdict.above_random:.4f} above the random floor"
        if verdict.above_random > 0
        else "no better than the random floor: on this input no method's ranking beats chance"
    )
    sizes = ", ".join(f"{p} %" for p in result.percents)
    return (
        f"<p>Most faithful for this input: <b>{best}</b>, with a comprehensiveness AOPC of {verdict.aopc:.4f} "
        f"for <b>{html.escape(label)}</b>, {lead} and {floor}. AOPC is the mean over the removal sizes "
        f"({sizes} of the tokens, rounded up) of how far p({html.escape(label)}) = {result.full_probability:.4f} "
        f"falls. The figure uses {html.escape(REMOVED[result.mode])}; the random floor is the mean of "
        f"{len(result.seeds)} random rankings.</p>"
    )


def corpus_table(result: Faithfulness, corpus: dict | None) -> str:
    """This sentence's AOPC beside the corpus means (``faithfulness.json``'s, for the same removal mode), one row
    per method and the random floor; without the file, how to make it.

    Args:
        result: this sentence's curves.
        corpus: the loaded model's ``faithfulness.json`` data (``model_files.build_faithfulness``), or None.
    """
    if corpus is None or result.mode not in corpus.get("modes", {}):
        return (
            "<p>No corpus means for this model: <code>python -m transformer.artifacts --model MODEL_FOLDER "
            "--data-dir DATA_FOLDER</code> writes them (<code>faithfulness.json</code>).</p>"
        )
    means = corpus["modes"][result.mode]
    sentence = {
        "comprehensiveness_aopc": [*result.comprehensiveness_aopc.tolist(), result.random_comprehensiveness_aopc],
        "sufficiency_aopc": [*result.sufficiency_aopc.tolist(), result.random_sufficiency_aopc],
    }
    names = [*result.methods, "random"]
    rows = [
        [
            name,
            *(f"{sentence[curve][k]:.4f}" for curve in sentence),
            *(f"{means[curve][name]:.4f}" for curve in sentence),
        ]
        for k, name in enumerate(names)
        if all(name in means[curve] for curve in sentence)
    ]
    header = ["method", "comprehensiveness, this input", "sufficiency, this input"]
    header += ["comprehensiveness, corpus mean", "sufficiency, corpus mean"]
    caption = (
        f"<p>Beside the means over the reference corpus ({corpus['sentences']:,} sentences, each explained for its "
        "predicted class, the same removal mode):</p>"
    )
    return caption + table(header, rows)
