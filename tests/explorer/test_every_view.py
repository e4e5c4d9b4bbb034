"""Every view at once: bad controls get a clear, escaped error; every free text is capped; tabs redraw without the model
and are empty without an analysis."""

import inspect

import gradio as gr
import pytest
from app_fixtures import SENTENCE

from transformer.explorer import analysis, views
from transformer.explorer.page import api
from transformer.explorer.registry import Registry
from transformer.explorer.views import VIEWS

REGISTRY = Registry(VIEWS)  # the page's views, as app.py registers them


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda app: views.inside_head.head_internals(SENTENCE, layer=0),
            "Layer must be a whole number from 1 to 2; got 0",
        ),
        (
            lambda app: views.inside_head.head_internals(SENTENCE, head=1.5),
            "Head must be a whole number from 1 to 2",
        ),
        (lambda app: views.compare.compare(SENTENCE, "good", layer=3), "Layer must be a whole number from 1 to 2"),
        (
            lambda app: views.knockout.knockout(SENTENCE, ["L1 H3"]),
            "head in a head name must be a whole number from 1 to 2",
        ),
        (lambda app: views.knockout.knockout(SENTENCE, ["layer 1"]), 'Name heads like "L1 H2"'),
        (lambda app: views.knockout.knockout(SENTENCE, "L1 H1"), "a list of names"),
        (
            lambda app: views.attributions.attributions(SENTENCE, target="<b>"),
            "Choose a target class from negative, positive",
        ),
        (
            lambda app: views.attributions.attributions(SENTENCE, steps=0),
            "steps must be a whole number from 1 to 128",
        ),
        (
            lambda app: views.attributions.attributions(SENTENCE, steps=views.attributions.MAX_IG_STEPS + 1),
            "steps must be a whole number from 1 to 128; got 129",
        ),
        (lambda app: views.knockout.knockout(SENTENCE, ["L1 H1"] * 10**6), "at most 4 heads"),
        (lambda app: views.attributions.attributions(SENTENCE, baseline="noise"), "baseline is one of pad, zero"),
        (lambda app: views.perturb.perturb(SENTENCE, position=-1), "position must be a whole number from 0 to 7"),
        (lambda app: views.perturb.perturb(SENTENCE, mode="swap"), "mask or remove"),
        (lambda app: views.perturb.perturb("film", mode="remove"), "one token"),
        (lambda app: views.export.export(SENTENCE, head="9"), "Head must be a whole number from 1 to 2"),
        (lambda app: views.rollout.rollout("   "), "Type a sentence"),
        (lambda app: views.knockout.knockout(["a list"]), "The text must be a string, not list"),
        (lambda app: views.word_order.word_order(SENTENCE, reordered=5), "Type your own reordering"),
        (lambda app: views.compare.compare(SENTENCE, "x" * 20_000), "at most 10,000"),
        (lambda app: views.routes.routes(SENTENCE, threshold=0.9), "threshold must be a number from 0.02 to 0.5"),
    ],
)
def test_bad_controls_get_a_clear_error_without_a_stack_trace(app, call, message):
    with pytest.raises(gr.Error, match=message) as raised:
        call(app)
    assert raised.value.print_exception is False


def test_error_messages_quote_a_bad_value_short_and_escaped(app):
    value = '<img src=x onerror="alert(1)">' + "x" * 5_000
    for call in (
        lambda: views.attributions.attributions(SENTENCE, target=value),
        lambda: views.attributions.attributions(SENTENCE, baseline=value),
        lambda: views.perturb.perturb(SENTENCE, mode=value),
        lambda: views.knockout.knockout(SENTENCE, [value]),
        lambda: views.inside_head.head_internals(SENTENCE, layer=value),
    ):
        with pytest.raises(gr.Error) as raised:
            call()
        message = raised.value.message
        assert len(message) < 200 and "<img" not in message and "&lt;img" in message


FREE_TEXTS = {"text", "text_a", "text_b", "reordered"}  # read by the model, so capped at MAX_INPUT_CHARS
# Choices (the Behaviour tab's filters among them), and search, which is cut to 200.
NOT_FREE_TEXTS = {"target", "baseline", "mode", "head", "set", "label", "search", "part", "capability", "test", "sort"}
NOT_FREE_TEXTS |= {"direction"}  # /patching's: "b_into_a" or "a_into_b"


def test_every_text_an_endpoint_reads_is_capped(app):
    over = "a " * (analysis.MAX_INPUT_CHARS // 2 + 1)  # 10,002 characters of words
    capped = set()
    for name, endpoint in api.endpoints(REGISTRY).items():
        parameters = inspect.signature(endpoint).parameters
        texts = {name for name, parameter in parameters.items() if "str" in str(parameter.annotation)} - {"heads_off"}
        assert texts <= FREE_TEXTS | NOT_FREE_TEXTS, f"{name}: is {texts - FREE_TEXTS - NOT_FREE_TEXTS} free text?"
        for text in texts & FREE_TEXTS:
            with pytest.raises(gr.Error, match="accepts at most 10,000"):
                endpoint(**(dict.fromkeys(texts & FREE_TEXTS, SENTENCE) | {text: over}))
            capped.add(f"{name}.{text}")
    assert {"predict.text", "compare.text_a", "compare.text_b", "word_order.reordered"} <= capped


def test_tab_redraws_reuse_their_kept_view_and_never_run_the_model(app, result, forward_calls):
    knockout = views.knockout.show_knockout(result, ["L2 H1"], "global", [], None, None)
    attributions = views.attributions.show_attributions(result, "predicted", 32, "pad", None)
    head = views.inside_head.show_inside_head(result, 1, 2, 0, None)
    forward_calls.clear()
    for scale in ("row", "global"):
        again = views.knockout.show_knockout(result, ["L2 H1"], scale, ["punctuation"], *knockout[-2:])
        assert again[-2] is knockout[-2] and again[-1] is knockout[-1]
    assert (
        views.attributions.show_attributions(result, "predicted", 32, "pad", attributions[-1])[-1] is attributions[-1]
    )
    _, _, choices, kept = views.inside_head.show_inside_head(result, 1, 2, 3, head[-1])
    assert kept is head[-1] and "value" not in choices  # the query as sent: kept on the page (kept_control)
    assert not forward_calls
    views.knockout.show_knockout(result, ["L2 H2"], "global", [], *knockout[-2:])  # another control: the model runs
    assert forward_calls


@pytest.mark.parametrize(
    "handler",
    [
        "rollout.show_rollout",
        "attributions.show_attributions",
        "inside_head.show_inside_head",
        "knockout.show_knockout",
        "routes.show_routes",
        "perturb.show_perturbation",
        "word_order.show_word_order",
        "compare.show_compare",
        "export.show_export",
        "export.build_json",
        "export.build_csv",
        "attention.show_head",
        "all_heads.show_grid",
    ],
)
def test_every_tab_is_empty_without_an_analysis(app, handler, forward_calls):
    module, name = handler.split(".")
    fn = getattr(getattr(views, module), name)
    arguments = [None] * (fn.__code__.co_argcount - 1)
    outputs = fn(None, *arguments)
    assert not forward_calls
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    assert all(value in (None, "") or isinstance(value, gr.Dropdown) for value in outputs)
