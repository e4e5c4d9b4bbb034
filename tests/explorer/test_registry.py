"""What a view is (transformer.explorer.registry): the helpers views draw with."""

import inspect

import gradio as gr
import pytest

from transformer.explorer.registry import kept_control


@pytest.mark.parametrize(
    ("sent", "chosen", "expected"),
    [
        ("negative", "negative", gr.update(choices=["all"])),  # as read: left out, so a newer choice stays
        (3, 3, gr.update(choices=["all"])),
        (99, 0, gr.update(value=0, choices=["all"])),  # the draw changed it (a position past a shorter sentence)
        (None, 0, gr.update(value=0, choices=["all"])),
        (True, 1, gr.update(value=1, choices=["all"])),  # equal in Python, not the same value: sent
        ("3", 3, gr.update(value=3, choices=["all"])),
    ],
)
def test_a_control_gets_its_value_back_only_where_the_draw_changed_it(sent, chosen, expected):
    assert kept_control(sent, chosen, choices=["all"]) == expected


def answered(answer) -> dict:
    """A draw's answer for a control as Gradio sends it: a component returned stands for its constructor's props."""
    return answer.constructor_args if isinstance(answer, gr.blocks.Block) else answer


def test_every_views_draw_leaves_out_the_control_values_it_read(app, result):
    """Drawn again with what its first answer put on the page, no view sends back a control's value: one sent back
    as it was read would undo a choice made while the draw ran (test_browser's slowed Errors draw)."""
    parts = next(inspect.unwrap(fn.fn).__self__ for fn in app.demo.fns.values() if fn.name == "restore_page")
    checked = []
    for view, drawing in parts.drawings.items():
        read = {id(block) for block in drawing.inputs if not isinstance(block, gr.State)}
        controls = [block for block in drawing.outputs if id(block) in read]
        if not controls:
            continue
        values = {block: block.value for block in drawing.inputs} | {parts.page.result: result}
        first = parts.draw_view(view, values)
        values |= {block: answered(first[block])["value"] for block in controls if "value" in answered(first[block])}
        again = parts.draw_view(view, values)
        assert [block.label for block in controls if "value" in answered(again[block])] == [], view
        checked.append(view)
    assert sorted(checked) == ["behaviour", "errors", "inside-head", "perturb", "training"]  # a new one is checked too
