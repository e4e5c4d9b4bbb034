"""The Walkthrough tab: each step's code is the current source of the function it names, a step change draws
from the kept pass without the model, the last step's probabilities are the page's prediction, and in Chromium
Previous/Next walk every step, a deep link opens step 6 at its layer and head, and a phone shows one step."""

import inspect
import json
from urllib.parse import parse_qs, urlparse

import gradio as gr
import plotly.graph_objects as go
import pytest
import torch
from tiny import tiny_model

from transformer.explain.walkthrough import walk_through
from transformer.explorer import runner
from transformer.explorer.page import api, restore
from transformer.explorer.registry import Reading, Registry
from transformer.explorer.views import VIEWS, walkthrough

REGISTRY = Registry(VIEWS)  # the page's views, as app.py registers them


SENTENCE = "a wonderful film , the acting was dull"
CODE_SHOWS = "(s) => document.querySelector('#walk-code')?.textContent.includes(s)"  # the step's code is drawn


def test_each_steps_code_is_the_current_source_of_its_function():
    assert len(walkthrough.STEPS) == 12
    for step, source in zip(walkthrough.STEPS, walkthrough.SOURCES, strict=True):
        assert source == inspect.getsource(step.code), step.title
        assert source.lstrip().startswith("def "), step.title  # a whole function, not a fragment
        assert walkthrough.code_block(source) == f"```python\n{source.rstrip()}\n```" and "```" not in source


def test_a_step_change_draws_from_the_kept_pass_without_the_model(app):
    result = runner.run_model(SENTENCE)
    calls = []
    handle = app.get_model()[0].model.register_forward_hook(lambda *_: calls.append(1))
    try:
        text, code, figure, kept = walkthrough.show_step(result, 1, 1, 1, None)
        assert len(calls) == 1  # the one pass
        for step in range(1, len(walkthrough.STEPS) + 1):
            for layer, head in ((1, 1), (2, 2)):
                text, code, figure, kept = walkthrough.show_step(result, step, layer, head, kept)
                assert isinstance(figure, go.Figure) and figure.data, step
                assert text.startswith(f"### {step}.") and code == walkthrough.code_block(walkthrough.SOURCES[step - 1])
        assert len(calls) == 1
    finally:
        handle.remove()


@pytest.mark.parametrize(
    ("step", "usable"), [(1, (False, True)), (6, (True, True)), (12, (True, False)), ("x", (False, True))]
)
def test_previous_and_next_are_usable_only_where_they_lead_somewhere(step, usable):
    """Issue 53: "Next ▶" was enabled at step 12. Every change of the step, off the queue, sets both buttons."""
    assert len(walkthrough.STEPS) == 12
    previous, following = walkthrough.step_ends(step)
    assert (previous["interactive"], following["interactive"]) == usable


def test_every_change_of_the_step_sets_previous_and_next_off_the_queue(app):
    (ends,) = [fn for fn in app.demo.fns.values() if fn.name == "step_ends"]
    assert [c.elem_id for c in ends.outputs] == ["walk-previous", "walk-next"] and not ends.queue
    assert [(c.elem_id, trigger) for c, trigger in ((app.demo.blocks[i], t) for i, t in ends.targets)] == [
        ("walk-step", "change")
    ]


def test_the_last_step_gives_the_pages_prediction(app):
    result = runner.run_model(SENTENCE)
    text, *_ = walkthrough.show_step(result, 12, 1, 1, None)
    for name, p in result.prediction.items():
        assert f"{name} {p:.3f}" in text
    answer = walkthrough.walkthrough(SENTENCE, step=12)
    assert answer["tokens"] == result.tokens
    predicted = {c["label"]: c["confidence"] for c in api.predict(SENTENCE)["confidences"]}
    for name, p in zip(answer["label_names"], answer["tensors"]["probabilities"], strict=True):
        assert p == pytest.approx(predicted[name], abs=1e-4)


def test_the_endpoint_answers_one_step_with_only_the_tensors_its_figure_shows(app):
    """It answered every tensor of the pass: about 10 MB of JSON for a 128-token text (issue 36)."""
    model = app.get_model()[0].model
    result = runner.run_model(SENTENCE)
    walk = walk_through(model, torch.tensor([result.token_ids]))
    layer, head = 2, 2
    steps = walk.layers[layer - 1]
    expected = {
        5: {"queries": steps.queries[head - 1], "keys": steps.keys[head - 1], "values": steps.values[head - 1]},
        6: {"scores": steps.scores[head - 1], "scaled": steps.scaled[head - 1], "weights": steps.weights[head - 1]},
        9: {name: getattr(steps, name) for name in walkthrough.STEPS[8].fields},
        10: {"block_output": torch.stack([each.block_output for each in walk.layers])},
        12: {
            "hidden": walk.hidden,
            "activated": walk.activated,
            "logits": walk.logits,
            "probabilities": walk.probabilities,
        },
    }
    whole = len(json.dumps(runner.to_jsonable(walk, runner.API_DECIMALS)))
    for step in range(1, len(walkthrough.STEPS) + 1):
        answer = walkthrough.walkthrough(SENTENCE, step=step, layer=layer, head=head)
        assert (answer["step"], answer["layer"], answer["head"]) == (step, layer, head)
        assert answer["title"].startswith(f"{step}.") and list(answer["tensors"]) == list(
            walkthrough.STEPS[step - 1].fields
        )
        for name, tensor in expected.get(step, {}).items():
            assert close(tensor, torch.tensor(answer["tensors"][name], dtype=torch.float64)), (step, name)
        assert len(json.dumps(answer)) < whole / 2, step  # never the pass, not even half of it


@pytest.mark.parametrize(
    ("controls", "message"),
    [
        ({"step": 13}, "Step must be a whole number from 1 to 12; got 13"),
        ({"step": 0}, "Step must be a whole number from 1 to 12"),
        ({"layer": 3}, "Layer must be a whole number from 1 to 2; got 3"),
        ({"head": "<b>"}, "Head must be a whole number from 1 to 2; got '&lt;b&gt;'"),
    ],
)
def test_the_endpoint_refuses_a_step_layer_or_head_the_model_lacks_before_the_pass(app, controls, message):
    calls = []
    handle = app.get_model()[0].model.register_forward_hook(lambda *_: calls.append(1))
    try:
        with pytest.raises(gr.Error, match=message):
            walkthrough.walkthrough(SENTENCE, **controls)
    finally:
        handle.remove()
    assert len(calls) == 1  # the text's analysis only, not the walkthrough's pass


def test_the_address_readers_allow_only_the_models_steps_layers_and_heads(app):
    reading = Reading(app.get_model()[0].model, 8)
    params = walkthrough.VIEW.params
    assert params["step"]("6", reading) == 6 and params["step"]("13", reading) is None
    assert params["walk_layer"]("2", reading) == 2 and params["walk_layer"]("3", reading) is None
    assert params["walk_head"]("<b>", reading) is None


def panels(figure: go.Figure) -> dict[str, torch.Tensor]:
    """{panel title without its range: the values it draws}."""
    titles = [note.text for note in figure.layout.annotations]
    return {title: torch.tensor(trace.z, dtype=torch.float64) for title, trace in zip(titles, figure.data, strict=True)}


def close(a: torch.Tensor, b: torch.Tensor) -> bool:
    return torch.allclose(a, b.to(a.dtype).reshape(a.shape), atol=1e-5)


def test_each_step_shows_the_captured_tensors_it_names_side_by_side():
    model = tiny_model(seed=4)
    walk = walk_through(model, torch.tensor([[5, 9, 2, 7]]))
    tokens, layer, head = ["a", "b", "c", "d"], 1, 1
    steps, shown = walk.layers[layer], {}
    for i, step in enumerate(walkthrough.STEPS[1:], start=2):  # step 1 is a table (``test_a_learner_...``)
        shown[i] = panels(step.values(walk, tokens, layer, head))
    assert list(shown[2]) == ["Embedding(ids)"] and close(shown[2]["Embedding(ids)"], walk.embeddings)
    assert close(shown[3]["PE[0:N]"], walk.positions) and close(shown[3]["x + PE"], walk.embedded)
    assert close(shown[4]["LayerNorm(x)"], steps.attention_input)
    for name, field in zip("QKV", ("queries", "keys", "values"), strict=True):
        assert close(shown[5][name], getattr(steps, field)[head]), name
    six = shown[6]
    assert list(six) == ["Q Kᵀ", "÷ √8", "softmax"]
    assert close(six["Q Kᵀ"], steps.scores[head]) and close(six["softmax"], steps.weights[head])
    assert close(six["÷ √8"], steps.scores[head] / 8**0.5)
    assert close(shown[7]["× W_o"], steps.attention_output) and close(shown[8]["x + out"], steps.after_attention)
    assert close(shown[9]["GELU"], steps.ffn_activated) and close(shown[9]["x + FFN"], steps.block_output)
    assert close(shown[11]["mean over the tokens"], walk.pooled)
    assert close(shown[12]["softmax"], walk.probabilities) and close(shown[12]["Linear → 2 logits"], walk.logits)
    assert close(shown[12]["ReLU"], walk.activated)


def test_a_legacy_model_shows_its_scaling_and_its_gelu_head():
    walk = walk_through(tiny_model(seed=4, embedding_scale=True, head_activation="gelu"), torch.tensor([[5, 9, 2]]))
    view = walkthrough.WalkView(["a", "b", "c"], walk)
    two = panels(walkthrough.STEPS[1].values(walk, view.tokens, 0, 0))
    assert close(two["Embedding(ids)"], walk.embeddings) and close(two["× √16"], walk.scaled_embeddings)
    assert "· √d_model" in walkthrough.step_text(view, 1, 0, 0)
    assert "Linear(GELU(Linear(s)))" in walkthrough.step_text(view, 11, 0, 0)
    assert "GELU" in panels(walkthrough.STEPS[11].values(walk, view.tokens, 0, 0))
    tutorial = walkthrough.WalkView(view.tokens, walk_through(tiny_model(seed=4), torch.tensor([[5, 9, 2]])))
    assert "√" not in walkthrough.step_text(tutorial, 1, 0, 0)
    assert "Linear(ReLU(Linear(s)))" in walkthrough.step_text(tutorial, 11, 0, 0)


def test_a_learner_sees_each_steps_own_code_the_ids_as_whole_numbers_and_every_panels_signed_colour_bar():
    """Step 1 showed the embedding code (step 2's) and its ids as a heatmap coloured by size, printed "173.000";
    step 10 showed a call to ``self._stream`` instead of the loop over the blocks; a panel gave its range as "±27.8"
    and no colour legend."""
    sources = walkthrough.SOURCES
    assert "def encode_batch" in sources[0] and sources[0] != sources[1]
    assert "for i, layer in enumerate(self.layers)" in sources[9]  # the loop over the blocks itself
    model = tiny_model(seed=4)
    ids = [5, 9, 2, 7]
    walk = walk_through(model, torch.tensor([ids]))
    tokens = ["a", "<b>", "c", "d"]
    (table,) = walkthrough.STEPS[0].values(walk, tokens, 0, 0).data
    assert table.type == "table" and list(table.cells.values[2]) == ids and table.cells.format[2] == "d"
    assert list(table.cells.values[1]) == ["a", "&lt;b&gt;", "c", "d"]  # escaped
    for step in walkthrough.STEPS[1:]:
        figure = step.values(walk, tokens, 1, 1)
        for trace in figure.data:
            bar, top = trace.colorbar, trace.zmax
            assert trace.showscale and bar.orientation == "h", step.title
            if trace.zmin < 0:  # diverging: both signs, and 0, said on the bar
                assert list(bar.tickvals) == [-top, 0, top] and bar.ticktext[0].startswith("−"), step.title
                assert bar.ticktext[1] == "0" and bar.ticktext[2].startswith("+"), step.title
            else:
                assert list(bar.tickvals) == [0, top] and not bar.ticktext[1].startswith("+"), step.title
        go.Figure(figure.to_dict())  # the colour bars are ones plotly accepts


def test_the_steps_tell_a_post_ln_model_what_it_does():
    walk = walk_through(tiny_model(seed=4, norm_first=False), torch.tensor([[5, 9, 2]]))
    view = walkthrough.WalkView(["a", "b", "c"], walk)
    assert "Post-LN" in walkthrough.step_text(view, 3, 0, 0) and "Pre-LN" not in walkthrough.step_text(view, 3, 0, 0)
    assert "LayerNorm(x + out)" in walkthrough.step_text(view, 7, 0, 0)
    figure = walkthrough.STEPS[3].values(walk, view.tokens, 0, 0)
    assert list(panels(figure)) == ["x, the block's input"]  # no LayerNorm before attention in a Post-LN block
    pre = walkthrough.WalkView(view.tokens, walk_through(tiny_model(seed=4), torch.tensor([[5, 9, 2]])))
    assert "Pre-LN" in walkthrough.step_text(pre, 3, 0, 0)


def test_the_pages_layer_and_head_open_the_walkthrough_where_its_own_are_absent(app):
    result = runner.run_model(SENTENCE)
    query = {"view": "walkthrough", "step": "6", "layer": "2", "head": "2"}  # the app's tiny model has 2 of each
    restored = restore.restore_controls(REGISTRY, result, gr.Request(query_params=query))
    assert restored["walk_layer"] == 2 and restored["walk_head"] == 2
    own = restore.restore_controls(REGISTRY, result, gr.Request(query_params=query | {"walk_head": "1"}))
    assert own["walk_head"] == 1  # the view's own parameter wins
    mean = restore.restore_controls(REGISTRY, result, gr.Request(query_params=query | {"head": "mean"}))
    assert "walk_head" not in mean  # "mean of heads" is no head of the walkthrough's: it keeps its own


def test_no_analysis_asks_for_one():
    text, _, figure, _ = walkthrough.show_step(None, 3, 1, 1, None)
    assert "Analyze" in text and figure is None


DISABLED = "(id) => document.querySelector(id)?.disabled === true"


@pytest.mark.served
@pytest.mark.browser
@pytest.mark.parametrize("width, height", [(1280, 900), (390, 844)], ids=["desktop", "phone"])
def test_previous_and_next_walk_every_step_and_a_deep_link_opens_its_step(browser, url, width, height):
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(60_000)
    try:
        page.goto(f"{url}?text=a wonderful film&view=walkthrough&step=6&layer=2&head=2")  # the page's layer and head
        page.wait_for_function("() => document.querySelector('#walk-text')?.textContent.includes('6. Scores')")
        try:
            page.wait_for_function(
                "() => document.querySelector('#walk-plot')?.textContent.includes('Layer 2, head 2')", timeout=15000
            )
        except Exception:
            print("PLOT:", page.locator("#walk-plot").text_content()[:500])
            print("TEXT:", page.locator("#walk-text").text_content())
            raise
        page.wait_for_function(CODE_SHOWS, arg="def scaled_dot_product_attention")  # Markdown highlights it after
        for step in range(7, 13):  # Next to the last step, where it is disabled (issue 53: it stayed usable)
            page.locator("#walk-next").click()
            page.wait_for_function(
                "(s) => document.querySelector('#walk-text')?.textContent.includes(s)", arg=f"{step}."
            )
        page.wait_for_function(DISABLED, arg="#walk-next")
        for step in range(11, 0, -1):
            page.locator("#walk-previous").click()
            page.wait_for_function(
                "(s) => document.querySelector('#walk-text')?.textContent.includes(s)", arg=f"{step}. "
            )
        page.wait_for_function(DISABLED, arg="#walk-previous")
        assert not page.locator("#walk-next").is_disabled()
        page.wait_for_function("() => new URL(location.href).searchParams.get('step') === '1'")
        query = parse_qs(urlparse(page.url).query)
        assert query["view"] == ["walkthrough"] and query["walk_layer"] == ["2"] and query["walk_head"] == ["2"]
        assert page.evaluate("() => document.documentElement.scrollWidth") <= width + 1  # nothing scrolls sideways
    finally:
        context.close()


def test_a_quick_step_change_never_calls_the_model(app):
    """The off-queue draw reads only the kept pass: with none (or another sentence's) it leaves the tab as it is."""
    result, other = runner.run_model(SENTENCE), runner.run_model("dull")
    calls = []
    handle = app.get_model()[0].model.register_forward_hook(lambda *_: calls.append(1))
    try:
        assert all(out is not None for out in walkthrough.show_kept_step(result, 2, 1, 1, None))
        assert not any(isinstance(out, go.Figure) for out in walkthrough.show_kept_step(result, 2, 1, 1, None))
        kept = walkthrough.show_step(other, 1, 1, 1, None)[-1]
        calls.clear()
        assert not any(isinstance(out, go.Figure) for out in walkthrough.show_kept_step(result, 2, 1, 1, kept))
        kept = walkthrough.show_step(result, 1, 1, 1, None)[-1]
        calls.clear()
        text, _, figure = walkthrough.show_kept_step(result, 5, 2, 2, kept)
        assert text.startswith("### 5.") and "layer 2, head 2" in figure.layout.title.text.lower()
        assert not calls
    finally:
        handle.remove()


def test_previous_and_next_keep_the_step_within_the_sliders_range(app):
    """Kills Previous at step 1 clamped to 0: Previous at the first step and Next at the last stay there (the step
    they answer is the slider's value, which Gradio would refuse outside 1..12), and each draws that step."""
    result = runner.run_model(SENTENCE)
    kept = walkthrough.show_step(result, 1, 1, 1, None)[-1]
    last = len(walkthrough.STEPS)
    step, text, _, _ = walkthrough.step_mover(-1)(result, 1, 1, 1, kept)
    assert step == 1 and text.startswith("### 1.")
    step, text, _, _ = walkthrough.step_mover(+1)(result, last, 1, 1, kept)
    assert step == last and text.startswith(f"### {last}.")
    assert walkthrough.step_mover(-1)(result, 2, 1, 1, kept)[0] == 1
    assert walkthrough.step_mover(+1)(result, 1, 1, 1, kept)[0] == 2


CRASHED = " ".join(["a wonderful film"] * 7)  # 21 tokens: step 11's stacked layout was refused at this length
COLD_AT_ONCE = 4  # cold links loading side by side (tests/browser/test_page_browser.py: 20 at once overload two cores)


@pytest.mark.served
@pytest.mark.browser
def test_a_sentence_whose_step_11_crashed_walks_every_step_and_opens_at_every_step_from_a_cold_link(page, url):
    """Its step 11 raised plotly's "yaxis domain[0] = -2.2e-16" (Next stayed at step 10 with red badges), and a
    cold link to step 11 broke the whole page. Every step now draws: with Next, and from a link."""
    step_text = "(s) => document.querySelector('#walk-text')?.textContent.includes(s)"
    drawn = "() => document.querySelector('#walk-plot .main-svg') !== null"
    page.goto(f"{url}?text={CRASHED}&view=walkthrough&step=1")
    page.wait_for_function(step_text, arg="1. Tokens")
    page.wait_for_function(drawn)
    for step in range(2, len(walkthrough.STEPS) + 1):
        page.locator("#walk-next").click()
        page.wait_for_function(step_text, arg=f"{step}. ")
        page.wait_for_function("(s) => new URL(location.href).searchParams.get('step') === s", arg=str(step))
    page.wait_for_function(CODE_SHOWS, arg="def forward")  # step 12: the classifier's forward
    page.locator("#walk-plot").hover()
    with page.expect_download() as download:  # the PNG is named after the figure's box and the sentence
        page.locator("#walk-plot [data-title^='Download plot']").click()
    assert download.value.suggested_filename.startswith("walk-plot-a-wonderful-film-a-wonderful")
    steps = range(1, len(walkthrough.STEPS) + 1)
    for first in steps[::COLD_AT_ONCE]:  # a cold link to each step, a few side by side: that step, the sentence's own
        opened = {step: page.context.new_page() for step in steps[first - 1 : first - 1 + COLD_AT_ONCE]}
        for step, tab in opened.items():
            tab.set_default_timeout(60_000)
            tab.goto(f"{url}?text={CRASHED}&view=walkthrough&step={step}&walk_layer=2&walk_head=2", wait_until="commit")
        for step, tab in opened.items():
            tab.wait_for_function(step_text, arg=f"{step}. ")
            tab.wait_for_function(drawn)
            assert tab.locator("#sentence textarea").input_value() == CRASHED
            assert tab.locator(".toast-body").count() == 0, tab.locator(".toast-body").all_text_contents()
            tab.close()


def test_the_table_of_ids_shows_the_page_behind_its_text_in_either_theme():
    """Issue 53: in the dark theme the table was white cells under near-white text (the theme colours the text)."""
    model = tiny_model()
    walk = walk_through(model, torch.tensor([[1, 2, 3]]))
    (table,) = walkthrough.STEPS[0].values(walk, ["a", "b", "c"], 0, 0).data
    alpha = [
        float(colour.rsplit(",", 1)[1].rstrip(")")) for colour in (table.cells.fill.color, table.header.fill.color)
    ]
    assert alpha[0] == 0 and alpha[1] <= 0.2  # no cell fill; a faint header on light and dark pages alike
