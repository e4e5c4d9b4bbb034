"""The Routes tab and ``/routes``: the answer is the graph the maths gives, the tab shows the graph's estimate and the
measured knockout of the chosen head, the threshold redraws without the model, and tokens are escaped."""

import gradio as gr
import pytest
import torch
from app_fixtures import MARKUP, SENTENCE, close, ids_of

from transformer.explain import predict_with_knockout
from transformer.explain.route_graph import Edge, kept_edges, routes
from transformer.explorer.drawing.routes import routes_figure
from transformer.explorer.views import routes as view


def test_routes_endpoint_answers_the_kept_edges_and_every_node(app, loaded, result):
    answer = view.routes(SENTENCE, threshold=0.02)
    found = routes(loaded.model, ids_of(result))
    edges = kept_edges(found, 0.02)
    assert len(answer["edges"]) == len(edges) + 1 and answer["edges"][-1]["target"] == "class"
    assert min(edge["importance"] for edge in answer["edges"]) >= 0.02
    n = len(result.tokens)
    assert len(answer["nodes"]) == (loaded.model.num_layers + 1) * n + 2
    heads = [edge for edge in answer["edges"] if edge["kind"] == "head"]
    assert all(1 <= edge["layer"] <= 2 and 1 <= edge["head"] <= 2 for edge in heads)
    first = next(e for e in edges if e.kind == "head")
    named = next(e for e in heads if e["importance"] == pytest.approx(first.importance, abs=1e-6))
    assert (
        named["source"] == f"s{first.layer}:{first.source}" and named["target"] == f"s{first.layer + 1}:{first.target}"
    )
    assert answer["norm"] == "l2" and answer["predicted"] in result.label_names
    close([h["share"] for h in answer["heads"]], sorted(found.head_share.flatten().tolist(), reverse=True), atol=1e-6)


@pytest.mark.parametrize("threshold", [0.01, 0.6, "0.1", True, float("nan")])
def test_a_threshold_outside_the_sliders_range_is_refused(app, threshold):
    with pytest.raises(gr.Error, match=r"threshold must be a number from 0\.02 to 0\.5"):
        view.routes(SENTENCE, threshold=threshold)


def test_the_tab_shows_the_graphs_estimate_and_the_measured_knockout_of_its_top_head(app, loaded, result):
    figure, summary, kept, checked = view.show_routes(result, 5, None, None, None)
    top = view.ranked_heads(kept[1].routes)[0]
    mask = torch.ones(2, 2)
    mask[int(top[0][1]) - 1, int(top[0][4]) - 1] = 0.0
    target = int(torch.tensor(result.probabilities).argmax())
    measured = predict_with_knockout(loaded.model, ids_of(result), mask).probs[target].item()
    assert f"head {top[0]}" in summary and f"{top[1]:.3f} of the route" in summary and "rank 1 of 4" in summary
    assert f"→ {measured:.3f}" in summary and "measured knockout" in summary
    assert "importance ≥ 0.05" in figure.layout.title.text
    _, other, _, checked_again = view.show_routes(result, 5, "L2 H2", kept, checked)
    assert "head L2 H2" in other and checked_again is not checked


def test_the_threshold_redraws_from_the_kept_graph_without_the_model(app, result, forward_calls):
    _, _, kept, _ = view.show_routes(result, 5, None, None, None)
    forward_calls.clear()
    loose, strict = view.redraw_graph(2, kept), view.redraw_graph(50, kept)
    assert not forward_calls
    assert len(loose.data[-2].text) > len(strict.data[-2].text)  # the hover markers: one per kept edge
    assert view.redraw_graph(5, None) is None
    with pytest.raises(gr.Error, match=r"threshold \(%\) must be a whole number from 2 to 50; got 1"):
        view.redraw_graph(1, kept)


def test_tokens_and_the_class_name_are_escaped_in_the_graph():
    edges = [Edge("head", 0, 1, 1, 0, 0.5), Edge("feed-forward", 0, -1, 0, 0, 0.3), Edge("pooling", 1, -1, 0, -1, 1.0)]
    figure = routes_figure(edges, ["<script>", MARKUP[:3]], 1, "<b>odd</b>", 0.05)
    hover = " ".join(figure.data[-2].text)
    assert "head L1 H2: key 1 &lt;b&gt; → query 0 &lt;script&gt;" in hover and "feed-forward of layer 1" in hover
    shown = " ".join([*figure.layout.xaxis.ticktext, *figure.layout.yaxis.ticktext, hover])
    assert "<script>" not in shown and "<b>" not in shown and "class: &lt;b&gt;odd&lt;/b&gt;" in shown


def test_an_answer_holds_the_most_important_edges_up_to_its_cap_and_says_how_many_it_left_out(app, monkeypatch):
    whole = view.routes(SENTENCE, threshold=0.02)
    monkeypatch.setattr(view, "MAX_EDGES", 3)
    capped = view.routes(SENTENCE, threshold=0.02)
    assert whole["left_out"] == 0 and capped["left_out"] == len(whole["edges"]) - 4  # the class's edge stays
    strongest = sorted((edge["importance"] for edge in whole["edges"][:-1]), reverse=True)[:3]
    assert sorted((edge["importance"] for edge in capped["edges"][:-1]), reverse=True) == strongest
