"""Faithfulness by erasure: the curves on a model whose prediction one token decides, and on a random tiny model
against one forward pass per erased sentence."""

import math

import pytest
import torch
from tiny import tiny_model

from transformer import TransformerClassifier
from transformer.explain import batching
from transformer.explain.faithfulness import (
    MODES,
    PERCENTS,
    RANDOM_SEEDS,
    Faithfulness,
    aopc,
    erased_rows,
    faithfulness,
    faithfulness_by_mode,
    most_faithful,
    token_counts,
)

DECIDER, PAD = 7, 0  # the one token the hand-built model reads; the tiny models' [PAD]
SENTENCE = [[12, 5, 33, DECIDER, 9, 41, 18, 26, 3, 30]]  # N = 10, the decider at position 3
METHODS = ("decider first", "decider last", "constant")


def one_token_model() -> TransformerClassifier:
    """A tiny classifier whose positive logit is GELU(40 · share of ``DECIDER`` tokens), its negative logit 0.

    No positional encoding and every encoder weight zero, so each block passes its input through (Pre-LN);
    every embedding but ``DECIDER``'s is zero, so the final LayerNorm maps those tokens to 0 and the mean
    pooling reads share · LayerNorm(v), which the head projects on a line and sends through GELU.
    """
    model = tiny_model(use_positional_encoding=False)
    with torch.no_grad():
        for parameter in model.layers.parameters():
            parameter.zero_()
        v = torch.linspace(-1.0, 1.0, model.d_model)
        model.embedding.weight.zero_()
        model.embedding.weight[DECIDER] = v / math.sqrt(model.d_model)  # token_embeddings multiplies by √D
        normed = torch.nn.functional.layer_norm(v, (model.d_model,))
        for layer in (model.classifier[0], model.classifier[3]):
            layer.weight.zero_()
            layer.bias.zero_()
        model.classifier[0].weight[0] = 40 * normed / normed.square().sum()
        model.classifier[3].weight[1, 0] = 1.0
    return model


def scores_by_hand() -> torch.Tensor:
    """(3, N): the decider ranked first, the decider ranked last, and every token alike (sentence order)."""
    first = torch.zeros(10)
    first[3] = 1.0
    last = torch.arange(10.0, 0.0, -1.0)
    last[3] = -1.0
    return torch.stack([first, last, torch.zeros(10)])


def test_the_hand_built_model_reads_only_the_share_of_its_one_token():
    model = one_token_model()
    ids = torch.tensor(SENTENCE)
    without = ids.clone()
    without[0, 3] = 11
    p = model(torch.cat([ids, without, ids.flip(1)])).softmax(-1)[:, 1].tolist()
    assert p[0] > 0.9 and p[1] == pytest.approx(0.5, abs=1e-6)  # GELU(0) = 0: both logits 0
    assert p[2] == pytest.approx(p[0], abs=1e-6)  # order does not matter, only what is there


@pytest.mark.parametrize("mode", MODES)
def test_the_method_that_ranks_the_deciding_token_first_is_the_most_comprehensive(mode):
    result = faithfulness(one_token_model(), torch.tensor(SENTENCE), 1, scores_by_hand(), METHODS, mode)
    best, worst, _ = result.comprehensiveness_aopc.tolist()
    assert result.comprehensiveness[0].tolist() == pytest.approx([result.full_probability - 0.5] * 5, abs=1e-6)
    assert best > result.random_comprehensiveness_aopc > worst  # the random floor lies between
    assert (result.random_comprehensiveness <= result.comprehensiveness[0] + 1e-9).all()
    assert (result.random_comprehensiveness >= result.comprehensiveness[1] - 1e-9).all()
    assert result.sufficiency_aopc[0] < result.random_sufficiency_aopc < result.sufficiency_aopc[1]
    verdict = most_faithful(result)
    assert verdict.method == "decider first"
    second = sorted(result.comprehensiveness_aopc.tolist())[-2]
    assert verdict.margin == pytest.approx(best - second) and verdict.margin > 0
    assert verdict.above_random == pytest.approx(best - result.random_comprehensiveness_aopc)


def test_in_pad_mode_only_the_deciding_token_counts():
    result = faithfulness(one_token_model(), torch.tensor(SENTENCE), 1, scores_by_hand(), METHODS, "pad")
    assert result.comprehensiveness[1].abs().max() < 1e-6  # the decider is never among the last half
    assert result.sufficiency[0].abs().max() < 1e-6  # the decider alone, same length: same share
    assert result.sufficiency[1].tolist() == pytest.approx([result.full_probability - 0.5] * 5, abs=1e-6)


def test_in_delete_mode_the_kept_tokens_close_up():
    result = faithfulness(one_token_model(), torch.tensor(SENTENCE), 1, scores_by_hand(), METHODS, "delete")
    assert (result.comprehensiveness[1] < 0).all()  # fewer other tokens: the decider's share grows
    assert (result.sufficiency[0] < 0).all()  # the decider with fewer others: more than the full sentence


@pytest.mark.parametrize("mode", MODES)
def test_removing_every_token_gives_the_empty_input_prediction(mode):
    model, ids = tiny_model(), torch.tensor(SENTENCE)
    result = faithfulness(model, ids, 0, torch.randn(2, 10), ("a", "b"), mode, percents=(100,))
    empty = torch.full_like(ids, PAD) if mode == "pad" else torch.tensor([[PAD]])  # delete: one [PAD] is left
    p_full, p_empty = (model(x).softmax(-1)[0, 0].item() for x in (ids, empty))
    assert result.counts == (10,) and result.full_probability == pytest.approx(p_full, abs=1e-6)
    assert result.comprehensiveness[:, 0].tolist() == pytest.approx([p_full - p_empty] * 2, abs=1e-6)
    assert result.random_comprehensiveness.item() == pytest.approx(p_full - p_empty, abs=1e-6)
    assert result.sufficiency.abs().max() < 1e-6  # keeping every token changes nothing


def test_aopc_is_the_mean_of_the_curve_s_points():
    curve = torch.tensor([[0.1, 0.3, 0.2, 0.6, 0.3], [0.0, -0.5, 0.5, 1.0, 1.5]])
    assert aopc(curve).tolist() == pytest.approx([0.3, 0.5])
    result = faithfulness(tiny_model(), torch.tensor(SENTENCE), 1, torch.randn(3, 10), METHODS)
    for curve, area in (
        (result.comprehensiveness, result.comprehensiveness_aopc),
        (result.sufficiency, result.sufficiency_aopc),
    ):
        assert area.tolist() == pytest.approx([sum(row) / len(row) for row in curve.tolist()])
    floor = result.random_comprehensiveness.tolist()
    assert result.random_comprehensiveness_aopc == pytest.approx(sum(floor) / len(floor))


def test_the_k_grid_rounds_up_to_at_least_one_token():
    assert token_counts(10) == (1, 2, 3, 4, 5)  # 30 % of 10 is 3, not 4 by float rounding
    assert token_counts(7) == (1, 2, 3, 3, 4)  # ⌈0.7⌉, ⌈1.4⌉, ⌈2.1⌉, ⌈2.8⌉, ⌈3.5⌉
    assert token_counts(128) == (13, 26, 39, 52, 64)
    assert token_counts(1) == (1,) * 5 and token_counts(3, (34, 100)) == (2, 3)
    for bad in ((0,), (101,), ()):
        with pytest.raises(ValueError, match="percents"):
            token_counts(5, bad)
    with pytest.raises(ValueError, match="at least one token"):
        token_counts(0)


def one_by_one(model, ids: list[int], order: list[int], k: int, mode: str, target: int) -> tuple[float, float]:
    """(comprehensiveness, sufficiency) at k for one ranking, each erased sentence run alone and unpadded."""
    top = set(order[:k])

    def p(keep) -> float:
        row = (
            [t if keep(i) else PAD for i, t in enumerate(ids)]
            if mode == "pad"
            else [t for i, t in enumerate(ids) if keep(i)]
        )
        return model(torch.tensor([row or [PAD]])).softmax(-1)[0, target].item()

    full = p(lambda i: True)
    return full - p(lambda i: i not in top), full - p(lambda i: i in top)


@pytest.mark.parametrize("rows_a_pass", [None, 3])
@pytest.mark.parametrize("mode", MODES)
def test_the_batched_pass_equals_one_forward_per_erased_sentence(monkeypatch, mode, rows_a_pass):
    model, ids = tiny_model(seed=3), SENTENCE[0]
    scores = torch.randn(4, 10, generator=torch.Generator().manual_seed(1))
    scores[2] = scores[2].round()  # ties, ranked in sentence order
    if rows_a_pass:  # a budget of 3 rows: the erased sentences run in passes of at most 3
        monkeypatch.setattr(batching, "MEMORY_BUDGET_BYTES", rows_a_pass * batching.row_bytes(model, 10, False))
    calls = []
    model.register_forward_hook(lambda _, args, out: calls.append(out.size(0)))
    result = faithfulness(model, torch.tensor(SENTENCE), 1, scores, "abcd", mode)
    assert len(calls) == 1 if rows_a_pass is None else max(calls) <= 3 < len(calls)
    calls.clear()
    counts = token_counts(10)
    orders = [sorted(range(10), key=lambda i, row=row: (-row[i], i)) for row in scores.tolist()]
    for method, order in enumerate(orders):
        expected = [one_by_one(model, ids, order, k, mode, 1) for k in counts]
        assert result.comprehensiveness[method].tolist() == pytest.approx([c for c, _ in expected], abs=1e-5)
        assert result.sufficiency[method].tolist() == pytest.approx([s for _, s in expected], abs=1e-5)
    randoms = [torch.randperm(10, generator=torch.Generator().manual_seed(seed)).tolist() for seed in RANDOM_SEEDS]
    floor = torch.tensor([[one_by_one(model, ids, order, k, mode, 1) for k in counts] for order in randoms]).mean(0)
    assert result.random_comprehensiveness.tolist() == pytest.approx(floor[:, 0].tolist(), abs=1e-5)
    assert result.random_sufficiency.tolist() == pytest.approx(floor[:, 1].tolist(), abs=1e-5)


def test_both_modes_run_in_one_pass_and_agree_with_each_mode_alone():
    model, ids, scores = tiny_model(), torch.tensor(SENTENCE), torch.randn(4, 10)
    calls = []
    model.register_forward_hook(lambda *_: calls.append(1))
    both = faithfulness_by_mode(model, ids, 0, scores, "abcd")
    assert len(calls) == 1 and set(both) == set(MODES)
    for mode in MODES:
        alone = faithfulness(model, ids, 0, scores, "abcd", mode)
        assert torch.allclose(both[mode].comprehensiveness, alone.comprehensiveness, atol=1e-6)
        assert torch.allclose(both[mode].random_sufficiency, alone.random_sufficiency, atol=1e-6)
    assert not torch.allclose(both["pad"].comprehensiveness, both["delete"].comprehensiveness)


def test_the_random_floor_is_the_same_every_run_and_moves_with_its_seeds():
    model, ids, scores = tiny_model(), torch.tensor(SENTENCE), torch.randn(2, 10)
    first, again = (faithfulness(model, ids, 1, scores, "ab") for _ in range(2))
    assert torch.equal(first.random_comprehensiveness, again.random_comprehensiveness)
    other = faithfulness(model, ids, 1, scores, "ab", seeds=(11, 12))
    assert not torch.equal(first.random_comprehensiveness, other.random_comprehensiveness)
    assert first.seeds == RANDOM_SEEDS and first.percents == PERCENTS


def test_replaced_tokens_stay_tokens_and_deleted_ones_become_padding():
    ids = torch.tensor([[5, 6, 7, 8]])
    keep = torch.tensor([[True, False, True, False], [False, False, False, False]])
    padded, mask = erased_rows(ids, keep, "pad", PAD)
    assert padded.tolist() == [[5, PAD, 7, PAD], [PAD] * 4] and mask.tolist() == [[1] * 4] * 2
    deleted, mask = erased_rows(ids, keep, "delete", PAD)
    assert deleted.tolist() == [[5, 7, PAD, PAD], [PAD] * 4] and mask.tolist() == [[1, 1, 0, 0], [1, 0, 0, 0]]
    with pytest.raises(ValueError, match="mode must be one of pad, delete"):
        erased_rows(ids, keep, "mask", PAD)


def hand_made(comprehensive: list[float], sufficient: list[float]) -> Faithfulness:
    k = len(comprehensive)
    flat = torch.zeros(k, 5, dtype=torch.float64)
    return Faithfulness(
        methods=tuple("abcd"[:k]), mode="pad", target=1, percents=PERCENTS, counts=(1, 2, 3, 4, 5), seeds=(0,),
        full_probability=0.9, comprehensiveness=flat, sufficiency=flat,
        comprehensiveness_aopc=torch.tensor(comprehensive, dtype=torch.float64),
        sufficiency_aopc=torch.tensor(sufficient, dtype=torch.float64),
        random_comprehensiveness=flat[0], random_sufficiency=flat[0],
        random_comprehensiveness_aopc=0.05, random_sufficiency_aopc=0.2,
    )  # fmt: skip


def test_ties_go_to_the_more_sufficient_method_then_the_first_listed():
    verdict = most_faithful(hand_made([0.2, 0.4, 0.4, 0.1], [0.1, 0.3, 0.2, 0.0]))
    assert (verdict.method, verdict.runner_up, verdict.margin) == ("c", "b", 0.0)
    verdict = most_faithful(hand_made([0.4, 0.4, 0.1], [0.3, 0.3, 0.0]))
    assert (verdict.method, verdict.runner_up) == ("a", "b")
    verdict = most_faithful(hand_made([0.5, 0.2, 0.3], [0.3, 0.3, 0.0]))
    assert (verdict.method, verdict.runner_up) == ("a", "c") and verdict.margin == pytest.approx(0.2)
    alone = most_faithful(hand_made([0.3], [0.1]))
    assert alone.runner_up == "random" and alone.margin == pytest.approx(0.25) == alone.above_random


def test_bad_scores_are_refused():
    with pytest.raises(ValueError, match=r"expected scores of shape \(2, 10\)"):
        faithfulness(tiny_model(), torch.tensor(SENTENCE), 1, torch.zeros(2, 9), "ab")
    with pytest.raises(ValueError, match="at least one seed"):
        faithfulness(tiny_model(), torch.tensor(SENTENCE), 1, torch.zeros(2, 10), "ab", seeds=())
