"""Faithfulness by erasure (ERASER, DeYoung et al. 2020): does a method's ranking pick out what the model uses?

Shape letters: N = tokens, K = methods, R = rankings (K methods, then one per random seed), J = removal
sizes, M = rows of the batch, U = distinct rows, C = classes.

For each ranking and each size k (``token_counts``), comprehensiveness is p_target(sentence) −
p_target(sentence without its top-k tokens): how far the prediction falls when they go. Sufficiency is
p_target(sentence) − p_target(only its top-k tokens): how far it falls when only they stay, lower is
better. AOPC is each curve's mean over the sizes. A removed token is either replaced by [PAD]
(``"pad"``, Integrated Gradients' baseline: same length, the attention mask still 1 there, since the
position holds a token) or deleted (``"delete"``: the kept tokens close up in their order, so they take
new positions; rows are padded to one length with the attention mask 0 on padding). Deleting every
token (only when k = N) leaves one [PAD] token: the model reads no sentence of length 0.

A ranking is the token positions by score, highest first; equal scores keep sentence order. Signed
scores rank evidence for the target first and evidence against it last. Every row, for every mode asked
for, runs batched with the full sentence (in passes within the memory budget); identical rows run once.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from ..interface import Classifier
from .batching import passes_for, progress
from .run import check_sentence

PERCENTS = (10, 20, 30, 40, 50)  # ERASER's sizes up to half the sentence, as whole percentages
RANDOM_SEEDS = (0, 1, 2, 3, 4)  # the random floor: one uniformly random ranking per seed, curves averaged
MODES = ("pad", "delete")


@dataclass(frozen=True)
class Faithfulness:
    """The erasure curves of each method and of the random floor for one sentence, mode and target class.

    Shape:
        comprehensiveness, sufficiency: (K, J), row k for ``methods[k]``, column j for ``counts[j]``
        tokens (``percents[j]`` % of them); comprehensiveness_aopc, sufficiency_aopc: (K,);
        random_comprehensiveness, random_sufficiency: (J,), the mean over ``seeds``;
        random_comprehensiveness_aopc, random_sufficiency_aopc and full_probability: floats.
    """

    methods: tuple[str, ...]
    mode: str
    target: int
    percents: tuple[int, ...]
    counts: tuple[int, ...]
    seeds: tuple[int, ...]
    full_probability: float
    comprehensiveness: torch.Tensor
    sufficiency: torch.Tensor
    comprehensiveness_aopc: torch.Tensor
    sufficiency_aopc: torch.Tensor
    random_comprehensiveness: torch.Tensor
    random_sufficiency: torch.Tensor
    random_comprehensiveness_aopc: float
    random_sufficiency_aopc: float


@dataclass(frozen=True)
class Verdict:
    """The most faithful method: the highest comprehensiveness AOPC.

    ``margin`` is its AOPC minus the runner-up's, the second-highest: 0 on a tie, never negative. With one
    method the runner-up is the random floor, named "random", and the margin may be negative.
    ``above_random`` is its AOPC minus the random floor's.
    """

    method: str
    aopc: float
    runner_up: str
    margin: float
    above_random: float


def token_counts(n: int, percents: Sequence[int] = PERCENTS) -> tuple[int, ...]:
    """How many tokens each size removes: ⌈p · N / 100⌉, the fewest that make at least p %; so at least one.

    Whole-number arithmetic, so 30 % of 10 tokens is 3, never 4 by float rounding.

    Args:
        n: N, at least 1.
        percents: each from 1 to 100.
    """
    if n < 1:
        raise ValueError(f"a sentence has at least one token, got {n}")
    if not percents or any(not 1 <= p <= 100 for p in percents):
        raise ValueError(f"percents must be whole numbers from 1 to 100, got {tuple(percents)}")
    return tuple(-(-p * n // 100) for p in percents)


def aopc(curve: torch.Tensor) -> torch.Tensor:
    """Area over the perturbation curve: the mean of the curve's points over the sizes (the last dimension).

    Shape:
        curve: (..., J). Returns (...).
    """
    return curve.mean(dim=-1)


def rankings(scores: torch.Tensor, seeds: Sequence[int] = RANDOM_SEEDS) -> torch.Tensor:
    """Each method's rank of every token (0 = its highest score; ties in sentence order), then one random per seed.

    Each seed's ranking is ``torch.randperm`` from a CPU ``torch.Generator`` seeded with it: the same every run.

    Shape:
        scores: (K, N). Returns (R, N) = (K + len(seeds), N), long.
    """
    n = scores.size(1)
    order = torch.sort(-scores.detach().cpu().double(), dim=1, stable=True).indices  # (K, N): positions, best first
    orders = [*order, *(torch.randperm(n, generator=torch.Generator().manual_seed(seed)) for seed in seeds)]
    order = torch.stack(orders)  # (R, N)
    ranks = torch.empty_like(order)
    ranks.scatter_(1, order, torch.arange(n).expand_as(order))  # ranks[r, order[r, i]] = i
    return ranks


def kept_tokens(ranks: torch.Tensor, counts: Sequence[int]) -> torch.Tensor:
    """Which tokens each erasure keeps: comprehensiveness drops the top k, sufficiency keeps only them.

    Shape:
        ranks: (R, N). Returns (R, J, 2, N) bool; [:, :, 0] comprehensiveness, [:, :, 1] sufficiency.
    """
    top = ranks[:, None, :] < torch.tensor(counts)[None, :, None]  # (R, J, N)
    return torch.stack([~top, top], dim=2)


def erased_rows(
    input_ids: torch.Tensor, keep: torch.Tensor, mode: str, pad_id: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """The erased sentences as one batch: ids and attention mask (1 = token, 0 = padding).

    "pad" writes [PAD] where a token goes and keeps the mask at 1 (a replaced token, not padding);
    "delete" closes the kept tokens up in their order and pads the rest (mask 0). A row that keeps
    nothing is one [PAD] token.

    Shape:
        input_ids: (1, N); keep: (M, N) bool. Returns (ids (M, N), mask (M, N)), long.
    """
    ids = input_ids.expand_as(keep)  # (M, N)
    pad = torch.full_like(ids, pad_id)
    if mode == "pad":
        return torch.where(keep, ids, pad), torch.ones_like(ids)
    if mode != "delete":
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    order = torch.sort((~keep).to(torch.int8), dim=1, stable=True).indices  # (M, N): kept positions first, in order
    present = torch.arange(keep.size(1), device=keep.device) < keep.sum(dim=1, keepdim=True)  # (M, N)
    ids = torch.where(present, ids.gather(1, order), pad)
    present[:, 0] = True  # an empty row reads one [PAD]
    return ids, present.long()


@torch.no_grad()
def target_probabilities(model: Classifier, ids: torch.Tensor, mask: torch.Tensor, target: int) -> torch.Tensor:
    """p_target of every row, batched; identical rows run once, in as few passes as the memory budget allows
    (``batching``: one on a small model).

    Shape:
        ids, mask: (M, N). Returns (M,).
    """
    rows, inverse = torch.unique(torch.cat([ids, mask], dim=1), dim=0, return_inverse=True)  # (U, 2N), (M,)
    n = ids.size(1)
    passes = passes_for(model, rows.size(0), n, backward=False)
    logits = torch.cat([model(rows[p, :n], attention_mask=rows[p, n:]) for p in progress(passes, "erasure")])  # (U, C)
    return logits.softmax(dim=-1)[:, target][inverse]


def _curves(drops: torch.Tensor, num_methods: int) -> dict:
    """Split the drops (R, J, 2) into the methods' curves and the random floor's, with their AOPCs."""
    method, floor = drops[:num_methods], drops[num_methods:].mean(dim=0)  # (K, J, 2), (J, 2)
    return dict(
        comprehensiveness=method[..., 0],
        sufficiency=method[..., 1],
        comprehensiveness_aopc=aopc(method[..., 0]),
        sufficiency_aopc=aopc(method[..., 1]),
        random_comprehensiveness=floor[:, 0],
        random_sufficiency=floor[:, 1],
        random_comprehensiveness_aopc=aopc(floor[:, 0]).item(),
        random_sufficiency_aopc=aopc(floor[:, 1]).item(),
    )


def faithfulness_by_mode(
    model: Classifier,
    input_ids: torch.Tensor,
    target: int,
    scores: torch.Tensor,
    methods: Sequence[str],
    modes: Sequence[str] = MODES,
    percents: Sequence[int] = PERCENTS,
    seeds: Sequence[int] = RANDOM_SEEDS,
) -> dict[str, Faithfulness]:
    """Comprehensiveness, sufficiency and their AOPC for every method, in every mode, from one forward pass.

    Args:
        model: the classifier, in eval mode; called as ``model(ids, attention_mask=mask)``.
        input_ids: one sentence, no padding.
        target: the class whose probability is followed.
        scores: each method's token scores; higher means more important for ``target``.
        methods: the K method names, one per row of ``scores``.
        modes: any of ``MODES``.
        percents: the removal sizes (see ``token_counts``).
        seeds: the random floor's seeds; at least one.

    Shape:
        input_ids: (1, N); scores: (K, N).

    Returns:
        {mode: ``Faithfulness``}.
    """
    check_sentence(model, input_ids)
    n = input_ids.size(1)
    if scores.dim() != 2 or scores.size(1) != n or scores.size(0) != len(methods):
        raise ValueError(f"expected scores of shape ({len(methods)}, {n}), got {tuple(scores.shape)}")
    if not seeds:
        raise ValueError("the random floor needs at least one seed")
    counts = token_counts(n, percents)
    keep = kept_tokens(rankings(scores, seeds), counts).to(input_ids.device)  # (R, J, 2, N)
    batches = [erased_rows(input_ids, keep.reshape(-1, n), mode, model.pad_token_id) for mode in modes]
    ids = torch.cat([input_ids, *(rows for rows, _ in batches)])  # (1 + len(modes)·R·J·2, N)
    mask = torch.cat([torch.ones_like(input_ids), *(rows for _, rows in batches)])
    probs = target_probabilities(model, ids, mask, target).cpu().double()  # (M,)
    drops = (probs[0] - probs[1:]).reshape(len(modes), *keep.shape[:3])  # (modes, R, J, 2)
    common: dict[str, Any] = dict(
        methods=tuple(methods), target=target, percents=tuple(percents), counts=counts, seeds=tuple(seeds)
    )
    return {
        mode: Faithfulness(mode=mode, full_probability=probs[0].item(), **common, **_curves(drops[i], len(methods)))
        for i, mode in enumerate(modes)
    }


def faithfulness(
    model: Classifier,
    input_ids: torch.Tensor,
    target: int,
    scores: torch.Tensor,
    methods: Sequence[str],
    mode: str = "pad",
    percents: Sequence[int] = PERCENTS,
    seeds: Sequence[int] = RANDOM_SEEDS,
) -> Faithfulness:
    """``faithfulness_by_mode`` for one mode: "pad" or "delete".

    Shape:
        input_ids: (1, N); scores: (K, N).
    """
    return faithfulness_by_mode(model, input_ids, target, scores, methods, (mode,), percents, seeds)[mode]


def most_faithful(result: Faithfulness) -> Verdict:
    """The method with the highest comprehensiveness AOPC, and by how much it leads.

    Ties go to the lower sufficiency AOPC (its top tokens alone keep more of the prediction), then to
    the method listed first.
    """
    comprehensive = result.comprehensiveness_aopc.tolist()
    sufficient = result.sufficiency_aopc.tolist()
    order = sorted(range(len(comprehensive)), key=lambda k: (-comprehensive[k], sufficient[k], k))
    best = order[0]
    runner_up, second = (
        (result.methods[order[1]], comprehensive[order[1]])
        if len(order) > 1
        else ("random", result.random_comprehensiveness_aopc)
    )
    return Verdict(
        method=result.methods[best],
        aopc=comprehensive[best],
        runner_up=runner_up,
        margin=comprehensive[best] - second,
        above_random=comprehensive[best] - result.random_comprehensiveness_aopc,
    )
