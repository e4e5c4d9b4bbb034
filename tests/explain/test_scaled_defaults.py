"""Defaults that scale with the model (issue 37): Integrated Gradients' steps, the heads head importance ranks and the
atlas's sample are the bundled model's own on it and fit the job cap (or the corpus time) on a DistilBERT-base; fewer
heads ranked are the full ranking at the heads a gradient estimate picks; and a corpus view says how long it will take
before it starts when the model's size makes it long. Shapes stand in for a DistilBERT-base where only its size is
read (``explain.budget``); a medium random BERT (4 × 8 × 256) runs the views."""

import copy
import dataclasses
import math
import random
from types import SimpleNamespace

import gradio as gr
import numpy as np
import pytest
import torch
from conftest import without_artifact
from hub_checkpoints import write_sized_bert

from transformer.behaviour.report import SORTS
from transformer.explain.attribution import DEFAULT_IG_STEPS
from transformer.explain.batching import rows_per_pass
from transformer.explain.budget import (
    FLOPS_PER_SECOND,
    MIN_HEADS_RANKED,
    MIN_IG_STEPS,
    heads_ranked,
    ig_steps,
    row_flops,
)
from transformer.explain.knockout import head_importance, picked_heads
from transformer.explorer import runner, views
from transformer.explorer.corpus import data_folder as corpus
from transformer.explorer.corpus import model_files as artifacts
from transformer.explorer.corpus import on_demand as model_artifacts
from transformer.explorer.corpus.data_folder import Row
from transformer.loading import DEFAULT_MODEL_DIR, load_model

pytestmark = pytest.mark.slow  # many seconds: left out of make test-fast

SPACE_SECONDS = 10 * runner.DEFAULT_SHARE  # half the Space's default job cap (JOB_SECONDS 10 s; the suite sets more)
DISTILBERT_BASE = SimpleNamespace(num_layers=6, num_heads=12, d_model=768, max_len=512)  # what the budget reads
MEDIUM = {"layers": 4, "heads": 8, "width": 256, "positions": 128}
SENTENCE = "a wonderful film , the acting was dull"


def seconds_of(model, rows: int, tokens: int, backward: bool = False) -> float:
    """``rows`` rows of ``tokens`` tokens, in seconds at the budget's rate."""
    return rows * row_flops(model, tokens, backward) / FLOPS_PER_SECOND


@pytest.fixture(scope="module")
def bundled():
    return load_model(DEFAULT_MODEL_DIR, device="cpu").model


@pytest.fixture(scope="module")
def medium(tmp_path_factory):
    return load_model(write_sized_bert(tmp_path_factory.mktemp("medium"), **MEDIUM), device="cpu")


def test_the_bundled_model_keeps_every_default_at_every_length(bundled):
    every = bundled.num_layers * bundled.num_heads
    for tokens in range(1, bundled.max_len + 1):
        assert ig_steps(bundled, tokens, SPACE_SECONDS) == DEFAULT_IG_STEPS
        assert heads_ranked(bundled, tokens, SPACE_SECONDS) == every


@pytest.mark.parametrize("tokens", [16, 64, 128, 256, 512])
def test_a_distilbert_base_gets_the_most_steps_and_heads_that_fit_half_the_cap(tokens):
    model, seconds = DISTILBERT_BASE, SPACE_SECONDS
    steps = ig_steps(model, tokens, seconds)
    assert steps % MIN_IG_STEPS == 0 and MIN_IG_STEPS <= steps <= DEFAULT_IG_STEPS
    if steps > MIN_IG_STEPS:  # the least is kept even past the budget: the job cap then speaks
        assert seconds_of(model, steps + 2, tokens, backward=True) <= seconds
    if steps < DEFAULT_IG_STEPS:  # four more steps would not have fit
        assert seconds_of(model, steps + MIN_IG_STEPS + 2, tokens, backward=True) > seconds
    heads = heads_ranked(model, tokens, seconds)
    every = model.num_layers * model.num_heads
    assert MIN_HEADS_RANKED <= heads <= every
    if heads == every:
        assert seconds_of(model, 1 + every, tokens) <= seconds
    elif heads > MIN_HEADS_RANKED:  # the heads' rows and the picking pass's fit; one more head would not
        picking = seconds_of(model, 1, tokens, backward=True)
        assert seconds_of(model, heads, tokens) + picking <= seconds < seconds_of(model, heads + 1, tokens) + picking


@pytest.mark.parametrize(("extra_rows", "expected"), [(0, 72), (-1, 72 - 2)])
def test_every_head_is_ranked_exactly_when_its_rows_and_one_more_fit(extra_rows, expected):
    """Kills ``rows >= 1 + every`` as ``>``: at exactly 1 + L·H affordable rows every head is ranked; one row fewer
    ranks those left after the picking pass."""
    every, tokens = 72, 128
    rows = 1 + every + extra_rows
    seconds = seconds_of(DISTILBERT_BASE, rows, tokens) * (1 + 1e-12)  # not a hair under the row, by rounding
    assert math.floor(seconds * FLOPS_PER_SECOND / row_flops(DISTILBERT_BASE, tokens)) == rows
    assert heads_ranked(DISTILBERT_BASE, tokens, seconds) == expected


def test_no_cap_gives_the_full_defaults():
    """``runner.JOB_SECONDS`` may be ``math.inf`` (``benchmarks/real_size.py`` sets it so)."""
    assert ig_steps(DISTILBERT_BASE, 512, math.inf) == DEFAULT_IG_STEPS
    assert heads_ranked(DISTILBERT_BASE, 512, math.inf) == 72


def test_the_defaults_fall_with_the_length_and_at_128_tokens_are_below_the_bundled_models():
    lengths = range(8, 513, 8)
    steps = [ig_steps(DISTILBERT_BASE, n, SPACE_SECONDS) for n in lengths]
    heads = [heads_ranked(DISTILBERT_BASE, n, SPACE_SECONDS) for n in lengths]
    assert steps == sorted(steps, reverse=True) and heads == sorted(heads, reverse=True)
    assert ig_steps(DISTILBERT_BASE, 128, SPACE_SECONDS) < DEFAULT_IG_STEPS
    assert heads_ranked(DISTILBERT_BASE, 128, SPACE_SECONDS) < 72


def sentence_ids(loaded) -> torch.Tensor:
    return torch.tensor([loaded.tokenizer.encode(SENTENCE).ids])  # (1, N)


def test_fewer_heads_ranked_are_the_full_ranking_at_the_picked_heads(medium):
    ids = sentence_ids(medium)
    full = head_importance(medium.model, ids)
    part = head_importance(medium.model, ids, heads=5)
    ranked = part.drop.isfinite()  # (L, H)
    assert int(ranked.sum()) == 5 and (part.target, part.base_prob) == pytest.approx((full.target, full.base_prob))
    np.testing.assert_allclose(part.drop[ranked], full.drop[ranked], atol=1e-5)
    np.testing.assert_allclose(part.ablated_prob[ranked], full.ablated_prob[ranked], atol=1e-5)
    _, target, order = picked_heads(medium.model, ids, None)
    assert target == full.target and set(order[:5].tolist()) == set(ranked.flatten().nonzero().flatten().tolist())
    assert head_importance(medium.model, ids, heads=32).drop.isfinite().all()


def test_the_heads_are_picked_by_how_far_a_small_knockout_moves_the_probability(medium):
    """|∂p/∂m| by finite differences in float64: the picked order ranks the heads by it."""
    model, ids = copy.deepcopy(medium.model).double(), sentence_ids(medium)
    L, H = model.num_layers, model.num_heads
    probabilities, target, order = picked_heads(model, ids, None)
    eps = 1e-6
    with torch.no_grad():
        masks = torch.ones(L * H, L * H, dtype=torch.float64) - eps * torch.eye(L * H, dtype=torch.float64)
        moved = model(ids.expand(L * H, -1), head_mask=masks.view(-1, L, H)).softmax(dim=-1)[:, target]  # (L·H,)
    slopes = ((probabilities[target] - moved) / eps).abs()[order]  # in the picked order
    assert (slopes[:-1] >= slopes[1:] - 1e-6 * slopes.max()).all(), slopes
    assert slopes[0] > slopes[-1]


@pytest.fixture
def serving(monkeypatch):
    """Serve a ``LoadedModel`` to the endpoints for one test."""

    def serve(loaded):
        monkeypatch.setattr(runner, "get_model", lambda: (runner.on_device(loaded), None))

    return serve


def test_on_a_model_too_big_for_the_cap_the_endpoints_default_to_fewer_steps_and_heads(medium, serving, monkeypatch):
    serving(medium)
    text = SENTENCE
    full = views.knockout.head_importance(text)["importance"]
    assert all(value is not None for row in full["drop"] for value in row)
    assert views.attributions.attributions(text)["integrated_gradients"]["steps"] == DEFAULT_IG_STEPS
    monkeypatch.setattr(runner, "DEFAULT_SHARE", 1e-9)  # as if the model were far bigger than the cap allows
    part = views.knockout.head_importance(text)["importance"]
    kept = [(i, h) for i, row in enumerate(part["drop"]) for h, value in enumerate(row) if value is not None]
    assert len(kept) == MIN_HEADS_RANKED
    assert all(part["drop"][i][h] == pytest.approx(full["drop"][i][h], abs=1e-5) for i, h in kept)
    assert views.attributions.attributions(text)["integrated_gradients"]["steps"] == MIN_IG_STEPS
    assert views.attributions.attributions(text, steps=12)["integrated_gradients"]["steps"] == 12  # as asked
    result = runner.run_model(text)
    figure = views.knockout.head_importance_figure(
        views.knockout.importance_view(medium.model, None, result).importance
    )
    assert f"{MIN_HEADS_RANKED} heads, picked by a gradient estimate" in figure.layout.title.text


def test_the_page_slider_starts_at_the_models_default(app, loaded, medium, monkeypatch):
    def slider_value(model) -> int:
        with gr.Blocks() as page:
            app.lay_out_page(model)
        return next(block.value for block in page.blocks.values() if getattr(block, "elem_id", "") == "ig-steps")

    assert slider_value(loaded.model) == DEFAULT_IG_STEPS
    monkeypatch.setattr(runner, "DEFAULT_SHARE", 1e-9)
    assert slider_value(medium.model) == MIN_IG_STEPS


def test_too_few_steps_say_how_many_to_try(app, loaded):
    view = views.attributions.attribution_view(loaded.model, None, runner.run_model(SENTENCE), steps=4)

    def summary(complete: bool, steps: int = 4) -> str:
        ig = dataclasses.replace(view.integrated_gradients, complete=complete, steps=steps)
        return views.attributions.attribution_panel(dataclasses.replace(view, integrated_gradients=ig))[0]

    assert "outside the 5% tolerance (use more steps: try 8)" in summary(False)
    assert "try" not in summary(True)
    assert "try 128" in summary(False, steps=100)  # never past the most the page offers


def sets_of(sizes: dict[str, int]) -> dict[str, list[Row]]:
    """Dev sets of these sizes, texts of 3 to 30 words."""
    rng = random.Random(0)
    words = SENTENCE.split()
    return {
        name: [Row(name, " ".join(rng.choices(words, k=rng.randint(3, 30))), i % 2) for i in range(size)]
        for name, size in sizes.items()
    }


SETS = {"sst2": 900, "yelp": 700, "pros_cons": 700, "tweets": 700}


def test_a_sample_below_sst2_dev_is_a_fixed_sample_of_it_in_file_order():
    sets = sets_of(SETS)
    picked = corpus.reference_corpus(sets, 200)
    assert len(picked) == 200 and {row.set for row in picked} == {"sst2"}
    assert picked == corpus.reference_corpus(sets, 200)
    positions = [sets["sst2"].index(row) for row in picked]
    assert positions == sorted(positions) and positions[-1] > 200  # a sample across the file, not its first rows
    assert len(corpus.reference_corpus(sets, 1000)) == 1000  # all of SST-2 dev, then the others (as before)


def test_the_atlas_sample_is_the_largest_that_fits_its_time(medium, bundled):
    sets = sets_of(SETS)
    encoded = {}

    def cost(model, tokenizer, size: int) -> float:
        key = (id(model), size)
        if key not in encoded:
            _, ids = artifacts.encode(tokenizer, corpus.reference_corpus(sets, size), model.max_len)
            encoded[key] = artifacts.nominal_seconds(model, ids, artifacts.atlas_rows(model))
        return encoded[key]

    seconds = cost(medium.model, medium.tokenizer, 1000) * 1.01
    size = artifacts.atlas_sentences(medium.model, medium.tokenizer, sets, seconds)
    assert size % artifacts.SENTENCES_STEP == 0 and artifacts.MIN_SENTENCES <= size < corpus.REFERENCE_SIZE
    assert cost(medium.model, medium.tokenizer, size) <= seconds < cost(medium.model, medium.tokenizer, size + 50)
    assert artifacts.atlas_sentences(medium.model, medium.tokenizer, sets, 1e-9) == artifacts.MIN_SENTENCES
    bundled_tokenizer = load_model(DEFAULT_MODEL_DIR, device="cpu").tokenizer
    assert artifacts.atlas_sentences(bundled, bundled_tokenizer, sets) == corpus.REFERENCE_SIZE  # unchanged
    distilbert = SimpleNamespace(**vars(DISTILBERT_BASE), num_params=0)
    assert artifacts.MIN_SENTENCES <= artifacts.atlas_sentences(distilbert, medium.tokenizer, sets) < 1000


def test_only_a_big_model_says_how_long_its_corpus_views_take():
    """At the corpus views' real sizes (2,000 atlas sentences, the errors' 6,872 dev texts, ~25 tokens each)."""
    bundled_shapes = SimpleNamespace(num_layers=2, num_heads=4, d_model=128)
    atlas, errors = [[1] * 25] * 2000, [[1] * 25] * 6872
    threshold = model_artifacts.SAY_TIME_AFTER_SECONDS
    for texts, rows in [(atlas, artifacts.atlas_rows(bundled_shapes)), (errors, 1)]:
        assert artifacts.nominal_seconds(bundled_shapes, texts, rows) <= threshold
    for texts, rows in [(atlas, artifacts.atlas_rows(DISTILBERT_BASE)), (errors, 1)]:
        assert artifacts.nominal_seconds(DISTILBERT_BASE, texts, rows) > threshold


def test_the_measured_time_grows_with_the_rows(loaded, monkeypatch):
    ticks = iter(range(0, 1000, 2))  # a clock whose every timed pass takes 2 s, so the test reads no real time
    monkeypatch.setattr(artifacts.time, "perf_counter", lambda: float(next(ticks)))
    ids = [loaded.tokenizer.encode(SENTENCE).ids] * 40
    one, many = (artifacts.measured_seconds(loaded.model, ids, rows) for rows in (1, 100))
    n = len(ids[0])
    assert one == pytest.approx(2.0 * len(ids) / artifacts.TIMED_SENTENCES) and n > 1  # 2 s a pass of 16, for 40
    assert many == pytest.approx(100 * one)


@pytest.mark.parametrize("threshold", [0.0, model_artifacts.SAY_TIME_AFTER_SECONDS])
def test_the_corpus_views_say_how_long_before_they_start_beyond_the_threshold(
    app, loaded, tiny_data_dir, tmp_path, monkeypatch, threshold
):
    monkeypatch.setenv(corpus.DATA_DIR_VARIABLE, str(tiny_data_dir))
    monkeypatch.setattr(model_artifacts, "SAY_TIME_AFTER_SECONDS", threshold)
    said = "takes about"
    folder = loaded.folder
    with without_artifact(views.errors.ERRORS, folder, tmp_path / "cache", monkeypatch):
        summary, *_, needed = views.errors.show_errors("all", "all", "")
        assert needed.startswith(model_artifacts.RUN) and (said in summary) == (threshold == 0)
        assert ("the error list takes about" in summary) == (threshold == 0)
    with without_artifact(views.head_atlas.ATLAS, folder, tmp_path / "cache", monkeypatch):
        summary, _, _, button = views.head_atlas.show_atlas()
        assert (said in summary) == (threshold == 0) and views.head_atlas.ATLAS.current() is None  # nothing ran
        assert ("about" in button.constructor_args.get("value", "about 30 s")) == (threshold != 0)  # no second time
    with without_artifact(views.behaviour.REPORT, folder, tmp_path / "cache", monkeypatch):
        summary, _, _, needed, *_ = views.behaviour.show_behaviour("test", "all", "all", "", SORTS[0], None)
        assert needed.startswith(model_artifacts.RUN) and (said in summary) == (threshold == 0)


def test_a_big_models_atlas_batches_are_one_pass_each_so_its_progress_moves(bundled):
    sentences = [[1] * 32] * 100
    assert artifacts.atlas_batch_size(bundled, sentences) == artifacts.ATLAS_BATCH  # as before
    size = artifacts.atlas_batch_size(DISTILBERT_BASE, sentences)
    knockouts = artifacts.atlas_rows(DISTILBERT_BASE) - 1
    most = rows_per_pass(DISTILBERT_BASE, 32, backward=False)
    assert size * knockouts <= most < (size + 1) * knockouts and size < artifacts.ATLAS_BATCH
