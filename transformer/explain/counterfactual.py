"""Counterfactual inputs: remove or mask one token; reorder the sentence with positional encoding on and off.

Shape letters: N = tokens, C = classes.

Why word order needs positional encoding: without it every block is permutation-equivariant
(attention and the feed-forward treat positions alike) and mean pooling is permutation-invariant,
so a reordered sentence gets exactly the same logits ("the dog bit the man" = "the man bit the dog").
"""

from dataclasses import dataclass

import torch

from ..interface import Classifier
from .run import check_sentence, predict


@dataclass(frozen=True)
class Perturbation:
    """The prediction before and after changing one token.

    Shape:
        input_ids: (1, N') the perturbed sentence, N' = N − 1 after a removal; probs_before,
        probs_after, change: (C,), ``change`` = after − before.
    """

    position: int
    mode: str
    input_ids: torch.Tensor
    probs_before: torch.Tensor
    probs_after: torch.Tensor
    change: torch.Tensor


@dataclass(frozen=True)
class WordOrder:
    """Logits of a sentence and a reordering of it, each with positional encoding on and off.

    Shape:
        logits, probs: (2, 2, C), indexed [order, encoding]: order 0 = original, 1 = reordered;
        encoding 0 = on, 1 = off. ``is_permutation``: the reordering has the same tokens, so the
        two "off" rows must agree.
    """

    reordered_ids: torch.Tensor
    is_permutation: bool
    logits: torch.Tensor
    probs: torch.Tensor


def perturb_token(
    model: Classifier,
    input_ids: torch.Tensor,
    position: int,
    mode: str = "mask",
    mask_id: int | None = None,
) -> Perturbation:
    """Remove token ``position`` or replace it by [MASK], and compare the predictions.

    Args:
        model: the classifier, in eval mode.
        input_ids: one sentence, no padding.
        position: the token to change.
        mode: "remove" deletes it (the sentence gets shorter), "mask" replaces it by ``mask_id``.
        mask_id: the tokenizer's [MASK] id; required for "mask".

    Shape:
        input_ids: (1, N).

    Returns:
        A ``Perturbation``.
    """
    check_sentence(model, input_ids)
    n = input_ids.size(1)
    if not 0 <= position < n:
        raise ValueError(f"position must be in [0, {n}), got {position}")
    if mode == "remove":
        if n == 1:
            raise ValueError("cannot remove the only token")
        perturbed = torch.cat([input_ids[:, :position], input_ids[:, position + 1 :]], dim=1)  # (1, N - 1)
    elif mode == "mask":
        if mask_id is None:
            raise ValueError('mode "mask" needs mask_id')
        perturbed = input_ids.clone()
        perturbed[0, position] = mask_id
    else:
        raise ValueError(f'mode must be "remove" or "mask", got {mode!r}')
    before, after = predict(model, input_ids).probs, predict(model, perturbed).probs
    return Perturbation(
        position=position, mode=mode, input_ids=perturbed, probs_before=before, probs_after=after, change=after - before
    )


def shuffled_permutation(n: int, seed: int = 0) -> torch.Tensor:
    """A seeded random order of n positions, never the identity when n >= 2.

    Args:
        n: number of tokens.
        seed: the same seed gives the same order.

    Apply it as ``input_ids[:, permutation]`` and ``[tokens[i] for i in permutation]``.

    Shape:
        Returns (N,) int64.
    """
    generator = torch.Generator().manual_seed(seed)
    permutation = torch.randperm(n, generator=generator)
    while n >= 2 and torch.equal(permutation, torch.arange(n)):  # an unchanged order shows nothing
        permutation = torch.randperm(n, generator=generator)
    return permutation


def sentence_permutation(input_ids: torch.Tensor, seed: int = 0, kept_ids=()) -> torch.Tensor:
    """A seeded shuffle of the sentence's own tokens: a position that holds one of ``kept_ids`` stays where it is.

    ``kept_ids`` are the tokens a tokenizer adds around every sentence (``model.added_token_ids``: a BERT's [CLS]
    and [SEP]). A [CLS] model classifies from position 0, so moving it would change the prediction with
    positional encoding off too. The others move, never all back in place when two or more can.

    Shape:
        input_ids: (1, N). Returns (N,) int64, applied as ``shuffled_permutation``'s.
    """
    ids = input_ids[0].cpu()  # (N,)
    movable = (~torch.isin(ids, torch.tensor(list(kept_ids), dtype=ids.dtype))).nonzero().flatten()  # (M,)
    permutation = torch.arange(ids.numel())
    permutation[movable] = movable[shuffled_permutation(movable.numel(), seed)]
    return permutation


@torch.no_grad()
def word_order_experiment(model: Classifier, input_ids: torch.Tensor, reordered_ids: torch.Tensor) -> WordOrder:
    """Classify a sentence and its reordering with positional encoding on and off (two forwards of two rows).

    Args:
        model: the classifier, in eval mode.
        input_ids: the sentence.
        reordered_ids: the same number of tokens in another order, e.g.
            ``input_ids[:, shuffled_permutation(N, seed)]`` or the user's own reordering.

    Shape:
        input_ids, reordered_ids: (1, N).

    Returns:
        A ``WordOrder``.
    """
    check_sentence(model, input_ids)
    check_sentence(model, reordered_ids)
    if reordered_ids.shape != input_ids.shape:
        raise ValueError(f"a reordering has the same length: {tuple(reordered_ids.shape)} vs {tuple(input_ids.shape)}")
    both = torch.cat([input_ids, reordered_ids])  # (2, N)
    logits = torch.stack([model(both, positional_encoding=True), model(both, positional_encoding=False)], dim=1)
    return WordOrder(
        reordered_ids=reordered_ids,
        is_permutation=torch.equal(input_ids.sort(dim=1).values, reordered_ids.sort(dim=1).values),
        logits=logits,  # (2, 2, C)
        probs=logits.softmax(dim=-1),
    )
