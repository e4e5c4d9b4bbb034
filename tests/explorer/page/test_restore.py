"""The page address read back (transformer.explorer.page.restore): the view and its controls, and nothing the
page does not offer."""

import gradio as gr

from transformer.explorer.page import restore
from transformer.explorer.registry import Registry
from transformer.explorer.views import VIEWS

REGISTRY = Registry(VIEWS)  # the page's views, as app.py registers them


def test_address_restores_the_view_and_its_controls(app, result):
    query = {
        "view": "knockout",
        "heads_off": "L1 H2,L2 H1",
        "compare": "not good",
        "compare_head": "2",
        "steps": "64",
        "position": "3",
        "seed": "7",
        "target": "positive",
    }
    restored = restore.restore_controls(REGISTRY, result, gr.Request(query_params=query))
    assert restored == {
        "view": "knockout",
        "heads_off": ["L1 H2", "L2 H1"],
        "compare": "not good",
        "compare_head": 2,
        "steps": 64,
        "position": 3,
        "seed": 7,
        "target": "positive",
    }


def test_address_values_the_page_does_not_offer_are_dropped(app, result):
    query = {"view": "<script>", "heads_off": "L1 H9", "steps": "1e9", "position": "99", "baseline": "x", "mode": ""}
    assert restore.restore_controls(REGISTRY, result, gr.Request(query_params=query)) == {}


def test_a_drawn_answer_without_a_value_keeps_the_value_the_load_restored():
    """The page load restores a link's controls, then draws the view in the same answer; a draw leaves out a value it
    read (``registry.kept_control``), which must not drop what the link restored."""
    label, query, table, fresh = gr.Dropdown(), gr.Dropdown(), gr.Dataframe(), gr.Dropdown()
    values = {label: "negative", query: gr.update(value=3), table: None}
    drawn = {label: gr.update(choices=["all", "negative"]), query: gr.skip(), table: [[1]], fresh: gr.update()}
    assert restore.drawn_over(values, drawn) == {
        label: gr.update(value="negative", choices=["all", "negative"]),
        query: gr.update(value=3),
        table: [[1]],
        fresh: gr.update(),  # nothing restored into it: the answer as it is
    }
    assert restore.drawn_over(values, {label: gr.update(value="all")})[label] == gr.update(value="all")  # changed
