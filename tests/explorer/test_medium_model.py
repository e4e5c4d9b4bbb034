"""The explorer on bigger models than the tiny ones (issue 37): a medium random BERT (4 layers × 8 heads × 256 wide,
128 positions) answers every endpoint and draws every tab at full length, and a narrow one with DistilBERT-base's
heads (6 × 12, 512 positions) keeps ``/attention``, ``/attention_norms``, ``/knockout``, ``/rollout`` and
``/head_internals`` within their size, with and without a choice of heads (layers, query rows). Sizes are the answers
as the API sends them: ``json.dumps`` of the outputs, as ``/call/<endpoint>`` writes them (the longer of Gradio's two
ways; the queue's orjson leaves out the spaces)."""

import base64
import json
import re

import gradio as gr
import numpy as np
import plotly.graph_objects as go
import pytest
from app_fixtures import forget_the_models, probe_endpoints
from hub_checkpoints import write_sized_bert
from tiny import write_dev_sets

from transformer.explorer import payloads, runner, views
from transformer.explorer.controls import weighting
from transformer.explorer.page import api
from transformer.explorer.registry import Registry
from transformer.explorer.views import VIEWS
from transformer.loading import load_model

pytestmark = pytest.mark.slow  # many seconds: left out of make test-fast

MEDIUM = {"layers": 4, "heads": 8, "width": 256, "positions": 128}
DISTILBERT_HEADS = {"layers": 6, "heads": 12, "width": 96, "positions": 512}  # DistilBERT-base's heads, narrow: fast
SENTENCE = "a wonderful film , the acting was dull"  # 8 tokens in the checkpoints' WordPiece vocabulary
# every endpoint the page serves (its registry's) but the Walkthrough's, which does not apply to a Hub model, and
# Training's, which says in one line that a model without training checkpoints has none to show
REFUSED = {"walkthrough", "training"}
ANSWERED = tuple(name for name in api.endpoints(Registry(VIEWS)) if name not in REFUSED)
MB = 10**6
ONE_HEAD_MOST = 3 * MB  # one head's /attention at 512 tokens (the target)
MOST_FIGURE_BYTES = 2 * MB  # any one figure a tab sends at 128 tokens


def long_text(tokens: int) -> str:
    """A text of more than ``tokens`` tokens: the model reads its first max_len."""
    return " ".join([SENTENCE] * (tokens // 8 + 1))


def answer_bytes(answer) -> int:
    """An answer's size as ``/call/<endpoint>`` sends it: ``json.dumps`` of the list of outputs."""
    return len(json.dumps([answer]))


@pytest.fixture(scope="module")
def medium_dir(tmp_path_factory):
    return write_sized_bert(tmp_path_factory.mktemp("medium"), **MEDIUM)


@pytest.fixture(scope="module")
def probed(medium_dir, hub_model_dirs, tmp_path_factory) -> tuple[dict, dict, str]:
    """Every endpoint on the medium model at its 128 tokens, its defaults otherwise, in a process of its own:
    ({endpoint: "ok" or its error}, {endpoint: answer bytes}, the device). The behavioural suite runs one test of each
    part and capability (``hub_probe``'s ``PROBE_SUITE_SAMPLE``): all 96 took more than half of this probe's time."""
    env = {
        "MODEL_ID": str(medium_dir),
        "MODEL_ID_B": str(hub_model_dirs["distilbert"]),  # Compare's second model
        "SENTIMENT_DATA_DIR": str(write_dev_sets(tmp_path_factory.mktemp("medium-data") / "data")),
        "ATTENTION_EXPLORER_CACHE": str(tmp_path_factory.mktemp("medium-cache")),
        "PROBE_REPEAT": "16",  # 16 × 8 words: past the 128 positions
        "PROBE_SUITE_SAMPLE": "1",  # the suite's texts are short: a sample of them reads no more of the model
    }
    return probe_endpoints(env, timeout=1200)


def test_every_endpoint_answers_on_a_medium_model_at_its_full_length(probed):
    answers = probed[0]
    refused = {name: said for name, said in answers.items() if said != "ok"}
    assert refused.keys() == REFUSED, refused  # each said in one line
    assert "does not apply to this bert model" in refused["walkthrough"]
    assert "kept no training checkpoints" in refused["training"]


@pytest.mark.parametrize("endpoint", ANSWERED)
def test_every_default_answer_on_a_medium_model_is_at_most_8_mb(probed, endpoint):
    """/export too: its exact numbers written out were 12 MB here; as float32 in base64 they are 2.8 MB."""
    assert set(ANSWERED) == set(probed[0]) - REFUSED  # no endpoint left out
    assert probed[1][endpoint] <= payloads.MAX_ANSWER_BYTES


@pytest.fixture
def serving(monkeypatch):
    """Serve the model in ``folder`` to the endpoints (``runner.get_model``) for one test; its ``LoadedModel``."""

    def serve(folder):
        loaded = runner.on_device(load_model(folder, device="cpu"))
        monkeypatch.setattr(runner, "get_model", lambda: (loaded, None))
        return loaded

    yield serve
    monkeypatch.undo()
    forget_the_models()  # the corpus views' caches (the model's identity) must not keep this model for later tests


@pytest.fixture(scope="module")
def distilbert_heads_dir(tmp_path_factory):
    return write_sized_bert(tmp_path_factory.mktemp("distilbert-heads"), **DISTILBERT_HEADS)


def heads_that_fit(error: gr.Error) -> int:
    """The number of heads a refusal says fit."""
    return int(re.search(r"at most (\d+) heads", str(error.message))[1])


def test_every_head_at_512_tokens_is_refused_and_the_heads_that_fit_fit(serving, distilbert_heads_dir):
    loaded = serving(distilbert_heads_dir)
    text = long_text(512)
    result = runner.run_model(text)
    assert result.attentions.shape == (6, 12, 512, 512)
    with pytest.raises(gr.Error, match=r"At 512 tokens an answer holds at most \d+ heads") as refused:
        views.attention.attention(text)  # 149 MB of JSON before: 72 maps of 262,144 weights
    fit = heads_that_fit(refused.value)
    assert fit >= 3
    heads = list(range(1, fit + 1))
    answer = views.attention.attention(text, layer=2, head=heads)
    assert answer_bytes(answer) <= payloads.MAX_ANSWER_BYTES  # the most heads that fit, each near 8 bytes a weight
    assert (answer["layers"], answer["heads"]) == ([2], heads)
    np.testing.assert_allclose(answer["attentions"][0], result.attentions[1, :fit], atol=5e-5)
    with pytest.raises(gr.Error, match=f"at most {fit} heads"):
        views.attention.attention(text, layer=[2], head=[*heads, fit + 1])
    assert loaded.model.num_heads == 12


def test_rollout_and_head_internals_at_512_tokens_answer_what_fits_in_8_mb(serving, distilbert_heads_dir):
    """/rollout's every layer (14.0 MB) and /head_internals' whole head (9.4 MB) were over 8 MB at 512 tokens: each
    default is refused, the refusal names how many fit, and that many answer within 8 MB as the full answer's
    slice."""
    serving(distilbert_heads_dir)
    text = long_text(512)
    with pytest.raises(gr.Error, match=r"At 512 tokens an answer holds at most (\d+) layers' rollout maps") as refused:
        views.rollout.rollout(text)
    fit = int(re.search(r"at most (\d+) layers", str(refused.value.message))[1])
    assert 1 <= fit < 6 and "e.g. layer=6" in str(refused.value.message)
    last = views.rollout.rollout(text, layer=list(range(7 - fit, 7)))  # the last layers that fit
    assert answer_bytes(last) <= payloads.MAX_ANSWER_BYTES and last["layers"] == list(range(7 - fit, 7))
    every = views.rollout.rollout_view(runner.run_model(text))  # rollout (6, N, N), pooled (6, N)
    np.testing.assert_allclose(last["rollout"], every.rollout[6 - fit :], atol=1e-6)
    np.testing.assert_allclose(last["pooled"], every.pooled[6 - fit :], atol=1e-6)
    with pytest.raises(gr.Error, match=r"At 512 tokens an answer holds at most \d+ queries' rows") as refused:
        views.inside_head.head_internals(text, layer=6, head=12)  # 4 maps of 262,144 scores: 9.4 MB
    rows = int(re.search(r"at most (\d+) queries' rows", str(refused.value.message))[1])
    assert 1 <= rows < 512 and "choose fewer with query" in str(refused.value.message)
    chosen = views.inside_head.head_internals(text, layer=6, head=12, query=list(range(512 - rows, 512)))
    assert answer_bytes(chosen) <= payloads.MAX_ANSWER_BYTES and len(chosen["scores"]["raw"]) == rows
    one = views.inside_head.head_internals(text, layer=6, head=12, query=511)["scores"]
    assert chosen["scores"]["weights"][-1] == one["weights"][0] and len(chosen["scores"]["entropy"]) == 512
    with pytest.raises(gr.Error, match=f"at most {rows} queries' rows"):
        views.inside_head.head_internals(text, layer=6, head=12, query=list(range(511 - rows, 512)))


def test_one_head_at_512_tokens_is_at_most_3_mb_from_each_endpoint(serving, distilbert_heads_dir):
    serving(distilbert_heads_dir)
    text = long_text(512)
    result = runner.run_model(text)
    one = views.attention.attention(text, layer=6, head=12)
    assert answer_bytes(one) <= ONE_HEAD_MOST
    assert np.asarray(one["attentions"]).shape == (1, 1, 512, 512)
    np.testing.assert_allclose(one["attentions"][0][0], result.attentions[5, 11], atol=5e-5)
    with pytest.raises(gr.Error, match="at most"):
        views.knockout.knockout(text, ["L1 H1"])
    knocked = views.knockout.knockout(text, ["L1 H1"], layer=[1], head=[1])
    assert answer_bytes(knocked) <= ONE_HEAD_MOST and knocked["heads_off"] == ["L1 H1"]
    assert np.asarray(knocked["attentions"]).shape == (1, 1, 512, 512)
    with pytest.raises(gr.Error, match="at most"):
        weighting.attention_norms(text)
    norms = weighting.attention_norms(text, layer=3, head=[4])
    assert answer_bytes(norms) <= ONE_HEAD_MOST
    expected = weighting.attentions(result, weighting.NORMS)[2, 3]
    np.testing.assert_allclose(norms["norms"][0][0], expected, atol=2e-6)
    np.testing.assert_allclose(norms["value_norms"][0][0], result.value_norms[2, 3], atol=2e-6)


def test_export_fits_with_and_without_a_choice_and_is_refused_where_it_cannot(
    serving, medium_dir, distilbert_heads_dir
):
    serving(medium_dir)
    text = long_text(128)
    result = runner.run_model(text)
    default, chosen = views.export.export(text), views.export.export(text, layer=4, head="mean")
    for answer in (default, chosen):
        assert answer_bytes(answer) <= payloads.MAX_ANSWER_BYTES
        attentions = answer["analysis"]["attentions"]
        exact = np.frombuffer(base64.b64decode(attentions["base64"]), "<f4").reshape(attentions["shape"])
        assert np.array_equal(exact, result.attentions)  # every number exact, all 32 heads
    assert answer_bytes(default) > 2 * MB  # the maps are there, not left out
    assert default["attention_csv"].count("\n") == chosen["attention_csv"].count("\n") == 129  # header + queries
    assert default["attention_csv"] != chosen["attention_csv"]  # layer 1 head 1, then layer 4's mean
    serving(distilbert_heads_dir)
    with pytest.raises(gr.Error, match=r"At 512 tokens this model's exact attention maps are \d+ MB, over the 8 MB"):
        views.export.export(long_text(512))


def test_a_choice_of_heads_answers_only_those_heads(serving, medium_dir):
    serving(medium_dir)
    text = long_text(128)
    result = runner.run_model(text)
    every = views.attention.attention(text)
    assert (every["layers"], every["heads"]) == ([1, 2, 3, 4], list(range(1, 9)))
    assert answer_bytes(every) <= payloads.MAX_ANSWER_BYTES
    chosen = views.attention.attention(text, layer=[3, 1, 3], head=[8, 2])  # sorted, each once
    assert (chosen["layers"], chosen["heads"]) == ([1, 3], [2, 8])
    np.testing.assert_allclose(chosen["attentions"], result.attentions[np.ix_([0, 2], [1, 7])], atol=5e-5)
    assert answer_bytes(chosen) < answer_bytes(every) * 4 / 32 + 20_000  # 4 maps of 32, and the tokens
    for bad, said in [(5, "Layer must be a whole number from 1 to 4"), ([1] * 9, "at most 4 layers")]:
        with pytest.raises(gr.Error, match=said):
            views.attention.attention(text, layer=bad)
    with pytest.raises(gr.Error, match="Head must be a whole number from 1 to 8"):
        views.knockout.knockout(text, head=[0])


@pytest.mark.parametrize("view", [view.id for view in VIEWS])
def test_every_tab_draws_a_medium_model_at_its_full_length(app, serving, medium_dir, view):
    """Each tab's own drawing, as the page runs it, at the defaults on 128 tokens: no error, and every figure sent in
    at most ``MOST_FIGURE_BYTES`` (All heads: one heatmap of 32 maps)."""
    loaded = serving(medium_dir)
    with gr.Blocks():
        parts = app.lay_out_page(loaded.model)
    drawing = parts.drawings[view]
    result = runner.run_model(long_text(128))
    assert len(result.tokens) == 128
    drawn = drawing.draw({control: control.value for control in drawing.inputs} | {parts.page.result: result})
    figures = [figure for figure in drawn.values() if isinstance(figure, go.Figure)]
    for figure in figures:
        assert len(figure.to_json()) <= MOST_FIGURE_BYTES, (view, figure.layout.title.text)
    if view == "all-heads":
        assert len(figures[0].data) == 1  # one heatmap, not 32 subplots
