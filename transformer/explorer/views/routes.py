"""Routes tab: how the decision travels from the tokens through every head and feed-forward to the class, with the
knockout of one head measured beside the graph's estimate; the ``/routes`` endpoint.

Shape letters: L = layers, H = heads, N = tokens, C = classes.
"""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr
import torch

from ...explain import route_graph
from ...explain.knockout import predict_with_knockout
from ...explain.route_graph import Edge, Routes, kept_edges, strongest
from ...interface import Classifier
from .. import runner
from ..analysis import Analysis, InputError, sentence_ids
from ..drawing.markup import table
from ..drawing.routes import routes_figure
from ..inputs import choice, head_label, head_labels, number, page_number, parse_heads, quoted, whole_number
from ..jsonable import to_jsonable
from ..registry import Drawing, Page, View

THRESHOLDS = (2, 50)  # the least importance an edge needs to be kept, in percent: the slider's range
DEFAULT_THRESHOLD = 5  # percent
TOP_HEADS = 5  # heads the graph's ranking lists
# The most edges an answer holds (about 100 bytes each: at most 2 MB, under issue 56's 3 MB with the nodes) and a
# figure draws (a line and a hover point each), the most important first; at the least threshold a 128-token
# DistilBERT-base may keep up to about 30,000 (50 parts of 0.02 at every sum).
MAX_EDGES, MAX_DRAWN = 20_000, 3_000
NOTE = (
    "The graph splits every vector the model makes into its parts: what the position held before the layer (the "
    "residual), what each head brings from each token, and the feed-forward's output. Each edge's width is its "
    "part's **importance to that sum**: ALTI's proximity rule (how far the sum moves towards the part; a part that "
    "points away counts 0) with the L2 norm, normalised to 1 at every sum. The graph is built from the class down, "
    "keeping the edges above the threshold. Importance to a sum is not causation: switching a head off (below) "
    "measures what the prediction loses without it. In a BERT-style model, whose LayerNorms come after each sum, "
    "each LayerNorm is linearised as ALTI does (divided by the σ the forward pass used), so the parts still add up "
    "exactly; a mean-pooled model's pooling shares are taken before its final LayerNorm."
)


@dataclass(frozen=True)
class RoutesView:
    """One sentence's routes, on the CPU."""

    tokens: list[str]
    label_names: list[str]
    routes: Routes

    @property
    def predicted(self) -> int:
        return int(self.routes.probabilities.argmax())


@dataclass(frozen=True)
class HeadCheck:
    """P(predicted class) with every head on and with ``head`` switched off."""

    head: str
    probability: float
    knocked_out: float


def routes_view(model: Classifier, tokenizer, result: Analysis) -> RoutesView:
    """The importances at every sum, from one forward pass."""
    found = route_graph.routes(model, sentence_ids(model, result))
    return RoutesView(result.tokens, result.label_names, runner.on_cpu(found))


def head_check(model: Classifier, tokenizer, result: Analysis, head: str = "") -> HeadCheck:
    """One forward pass with ``head`` ("L1 H2") switched off (``explain.knockout``)."""
    ((layer, index),) = parse_heads([head], model.num_layers, model.num_heads)
    ids = sentence_ids(model, result)
    mask = torch.ones(model.num_layers, model.num_heads, device=ids.device)  # (L, H)
    mask[layer, index] = 0.0
    target = max(range(len(result.probabilities)), key=result.probabilities.__getitem__)
    knocked = predict_with_knockout(model, ids, mask).probs[target].item()
    return HeadCheck(head, result.probabilities[target], knocked)


def ranked_heads(found: Routes) -> list[tuple[str, float]]:
    """Every head, by the share of the route through it (the graph's estimate), largest first."""
    shares = found.head_share.flatten()  # (L·H,)
    heads = found.head_share.size(1)
    order = shares.argsort(descending=True, stable=True).tolist()
    return [(head_label(i // heads, i % heads), float(shares[i])) for i in order]


def comparison(view: RoutesView, check: HeadCheck) -> str:
    """The chosen head's share of the route beside its measured knockout, and the graph's top heads."""
    ranking = ranked_heads(view.routes)
    rank, share = next((k + 1, s) for k, (name, s) in enumerate(ranking) if name == check.head)
    name = view.label_names[view.predicted]
    change = check.knocked_out - check.probability
    rows = [
        ["graph's estimate", f"{share:.3f} of the route to the class (rank {rank} of {len(ranking)} heads)"],
        ["measured knockout", f"P({name}) {check.probability:.3f} → {check.knocked_out:.3f} ({change:+.3f})"],
    ]
    top = ", ".join(f"{head} {value:.3f}" for head, value in ranking[:TOP_HEADS])
    return table([f"head {check.head}", "what it does to the prediction"], rows) + (
        f"<p>The graph's top heads (share of the route): {top}.</p>"
    )


def graph_figure(kept: tuple, percent: float):
    """The graph at ``percent`` % from a kept view: no model call (a threshold off the slider is a clear error)."""
    view = kept[1]
    with runner.clear_errors():
        percent = whole_number(percent, "The threshold (%)", *THRESHOLDS)
    edges = strongest(kept_edges(view.routes, percent / 100), MAX_DRAWN)
    return routes_figure(
        edges, view.tokens, view.routes.residual.size(0), view.label_names[view.predicted], percent / 100
    )


def show_routes(result: Analysis | None, percent: float, head: str | None, kept: tuple | None, checked: tuple | None):
    """(graph, comparison, both kept views): the graph once per sentence, the knockout once per head."""
    if result is None:
        return None, "", None, None
    kept = runner.kept_view(kept, routes_view, result)
    head = head or ranked_heads(kept[1].routes)[0][0]
    checked = runner.kept_view(checked, head_check, result, head=head)
    return graph_figure(kept, percent), comparison(kept[1], checked[1]), kept, checked


def redraw_graph(percent: float, kept: tuple | None):
    """The threshold slider's redraw, from the kept graph."""
    return graph_figure(kept, percent) if kept else None


def edge_json(edge: Edge) -> dict:
    """An edge as the API answers it: stage ids "s{stage}:{position}", layers and heads from 1."""
    source = f"s{edge.layer}:{edge.source}"
    target = "pooled" if edge.kind == "pooling" else f"s{edge.layer + 1}:{edge.target}"
    layer = None if edge.kind == "pooling" else page_number(edge.layer)
    head = page_number(edge.head) if edge.kind == "head" else None
    return {
        "kind": edge.kind,
        "layer": layer,
        "head": head,
        "source": source,
        "target": target,
        "importance": round(edge.importance, runner.API_DECIMALS),
    }


def check_threshold(threshold) -> float:
    """The threshold as sent, a number in the slider's range as a fraction, else an ``InputError``."""
    low, high = (t / 100 for t in THRESHOLDS)
    if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not low <= threshold <= high:
        raise InputError(f"The threshold must be a number from {low} to {high}; got {quoted(threshold)}.")
    return float(threshold)


def routes_answer(view: RoutesView, threshold: float) -> dict:
    """``/routes``'s answer for a computed view."""
    found, n = view.routes, len(view.tokens)
    nodes = [
        {"id": f"s{s}:{i}", "stage": s, "position": i, "flow": found.flow[s, i]}
        for s in range(found.flow.size(0))
        for i in range(n)
    ]
    kept = kept_edges(found, threshold)
    edges = [edge_json(edge) for edge in strongest(kept, MAX_EDGES)]
    name = view.label_names[view.predicted]
    return to_jsonable(
        {
            "tokens": view.tokens,
            "label_names": view.label_names,
            "predicted": name,
            "norm": found.norm,
            "threshold": threshold,
            "nodes": [*nodes, {"id": "pooled"}, {"id": "class", "class": name}],
            "edges": [
                *edges,
                {
                    "kind": "class",
                    "layer": None,
                    "head": None,
                    "source": "pooled",
                    "target": "class",
                    "importance": 1.0,
                },
            ],
            "left_out": len(kept) - len(edges),
            "heads": [{"head": head, "share": share} for head, share in ranked_heads(found)],
        },
        runner.API_DECIMALS,
    )


def routes(text: str, threshold: float = DEFAULT_THRESHOLD / 100) -> dict:
    """The contribution graph of a text: from the tokens through every head and feed-forward to the class.
    Layers and heads count from 1 and token positions from 0, in every argument and answer.

    Args:
        text: the text to read.
        threshold: the least importance an edge needs to be kept, 0.02 to 0.5 (importance: a part's share of the
            sum it joins, ALTI's proximity rule with the L2 norm).

    Returns:
        {"tokens", "label_names", "predicted", "norm", "threshold", "nodes": [{"id" ("s{stage}:{position}", stage 0
        entering layer 1; then "pooled" and "class"), "stage", "position", "flow"}], "edges": [{"kind" ("head",
        "feed-forward", "residual", "pooling", "class"), "layer", "head", "source", "target", "importance"}] (the
        kept ones, from the class down; at most 20,000, the most important), "left_out" (kept edges beyond those),
        "heads": [{"head", "share" (of the route, the graph's estimate)}]}.
    """
    with runner.clear_errors("Cannot answer this"):
        threshold = check_threshold(threshold)
    return routes_answer(runner.explain(routes_view, runner.read_for_api(text)), threshold)


def layout(page: Page) -> Drawing:
    """Called inside the tab: the note, the threshold and head, the graph and the comparison."""
    gr.Markdown(NOTE)
    with gr.Row():
        low, high = THRESHOLDS
        percent = gr.Slider(
            low,
            high,
            value=DEFAULT_THRESHOLD,
            step=1,
            label="Keep edges of importance at least (%)",
            elem_id="routes-threshold",
        )
        head = gr.Dropdown(
            head_labels(page.model.num_layers, page.model.num_heads),
            value=None,
            label="Switch off one head (default: the graph's top head)",
            elem_id="routes-head",
        )
    plot = gr.Plot(label="Routes", elem_id="routes-plot")
    summary = gr.HTML(elem_id="routes-check", elem_classes="explain-html")
    kept, checked = gr.State(), gr.State()
    redraw = Drawing(redraw_graph, [percent, kept], [plot], [percent.release])
    return Drawing(
        show_routes,
        [page.result, percent, head, kept, checked],
        [plot, summary, kept, checked],
        [head.input],
        {"routes_threshold": percent, "routes_head": head},
        redraws=[redraw],
    )


VIEW = View(
    "routes",
    "Routes",
    layout,
    params={
        "routes_threshold": lambda value, reading: number(value, *THRESHOLDS),
        "routes_head": lambda value, reading: choice(
            value, head_labels(reading.model.num_layers, reading.model.num_heads)
        ),
    },
    endpoints={"routes": routes},
    colour_scale=False,
)
