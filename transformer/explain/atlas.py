"""The head atlas: what every head does over a corpus (Clark et al. 2019), its role, and its importance.

Shape letters: L = layers, H = heads, B = sentences in a batch, N = tokens (padded), V = vocabulary,
K = behaviours, C = classes.

The corpus is a list of unpadded token id lists, read in right-padded batches sorted by length (little
padding); padded keys get zero attention and padded queries are left out, so every number is the
same as if each sentence were read alone. Layers and heads are the model's 0-based indices.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import torch

from ..interface import Classifier
from ..tokenizer import pad_ids
from .batching import passes_for

# What a head's attention may go to, for each query: itself, the token before, the token after, the first
# and the last token of the sentence, and the punctuation tokens (their weights summed).
BEHAVIOURS = ("self", "previous", "next", "first", "last", "punctuation")
ROLE_NAMES = {
    "self": "self",
    "previous": "previous token",
    "next": "next token",
    "first": "first token",
    "last": "last token",
    "punctuation": "punctuation",
}
ROLE_THRESHOLD = 0.5  # a behaviour names the role when its mean weight reaches this
BROAD_ENTROPY = 0.8  # else "broad" when the mean entropy reaches this share of the uniform maximum, log(n)
ROLE_RULE = (
    f"The behaviour with the largest mean weight names the head when it reaches {ROLE_THRESHOLD} "
    f"(self, previous token, next token, first token, last token, punctuation); otherwise the head is "
    f'"broad" when its mean attention entropy is at least {BROAD_ENTROPY:.0%} of the uniform maximum log(n), '
    f'else "mixed".'
)
MIN_TOKEN_COUNT = 10  # a token must occur this often in the corpus to be among a head's top tokens


@dataclass(frozen=True)
class HeadBehaviour:
    """Each head's attention over a corpus.

    Attributes:
        behaviour: mean weight on each of ``BEHAVIOURS``, over the queries that have that key (every query
            but the first has a previous token; punctuation counts only sentences that have some).
        entropy_mean, entropy_std: the attention entropy of a query row, in nats, over every query.
        entropy_share: the mean of entropy / log(n) over queries of sentences with n ≥ 2 (1 = uniform).
        token_scores: for each vocabulary entry, the attention it receives per occurrence, summed over the
            queries of its sentence (1 = its fair share under uniform attention); 0 for unseen tokens.
        token_counts: how often each vocabulary entry occurs in the corpus.
        sentences: how many sentences were read.

    Shape:
        behaviour: (L, H, K); entropy_mean, entropy_std, entropy_share: (L, H); token_scores: (L, H, V);
        token_counts: (V,).
    """

    behaviour: torch.Tensor
    entropy_mean: torch.Tensor
    entropy_std: torch.Tensor
    entropy_share: torch.Tensor
    token_scores: torch.Tensor
    token_counts: torch.Tensor
    sentences: int


@dataclass(frozen=True)
class CorpusImportance:
    """What knocking each head out alone costs over a labelled corpus.

    Attributes:
        base_accuracy: accuracy with every head on.
        accuracy_drop: base accuracy minus the accuracy with that head knocked out.
        prob_drop: the mean drop in the true class's probability with that head knocked out.

    Shape:
        accuracy_drop, prob_drop: (L, H).
    """

    base_accuracy: float
    accuracy_drop: torch.Tensor
    prob_drop: torch.Tensor


def batches(id_lists: list[list[int]], batch_size: int) -> Iterator[tuple[list[int], torch.Tensor, torch.Tensor]]:
    """Right-padded batches of the sentences, shortest first: (their indices, input_ids, attention_mask).

    Shape:
        input_ids, attention_mask: (B, N), N the batch's longest sentence.
    """
    order = sorted(range(len(id_lists)), key=lambda i: len(id_lists[i]))
    for start in range(0, len(order), batch_size):
        chosen = order[start : start + batch_size]
        yield (chosen, *pad_ids([id_lists[i] for i in chosen]))


def _check(model: Classifier, id_lists: list[list[int]]) -> None:
    if model.training:
        raise ValueError("call model.eval() first: with dropout active the atlas is a random draw")
    if not id_lists or any(not ids or len(ids) > model.max_len for ids in id_lists):
        raise ValueError(f"expected a non-empty corpus of sentences with 1 to {model.max_len} tokens each")


@torch.no_grad()
def head_behaviour(
    model: Classifier,
    id_lists: list[list[int]],
    is_punctuation: torch.Tensor,
    batch_size: int = 64,
    progress: Callable[[Iterable], Iterable] = iter,
) -> HeadBehaviour:
    """Every head's behaviour over a corpus, read in padded batches.

    Args:
        model: the classifier, in eval mode.
        id_lists: the corpus, one unpadded list of token ids per sentence (at most ``max_len`` each).
        is_punctuation: True for the vocabulary entries that are punctuation.
        batch_size: sentences per forward pass.
        progress: wraps the batches, e.g. ``tqdm`` for a progress bar.

    Shape:
        is_punctuation: (V,) bool.
    """
    _check(model, id_lists)
    device = next(model.parameters()).device
    L, H, V = model.num_layers, model.num_heads, is_punctuation.numel()
    sums = torch.zeros(L, H, len(BEHAVIOURS), dtype=torch.float64)  # (L, H, K)
    counts = torch.zeros(len(BEHAVIOURS), dtype=torch.float64)  # (K,): queries that have each key
    entropy = torch.zeros(3, L, H, dtype=torch.float64)  # sum, sum of squares, sum of entropy / log(n)
    entropy_counts = torch.zeros(2, dtype=torch.float64)  # queries, queries of sentences with n >= 2
    received = torch.zeros(L, H, V, dtype=torch.float64)  # (L, H, V)
    token_counts = torch.zeros(V, dtype=torch.float64)  # (V,)
    punctuation = is_punctuation.to(device)
    chunks = list(batches(id_lists, batch_size))
    for _, ids, mask in progress(chunks):
        ids, mask = ids.to(device), mask.to(device)
        _, attentions = model(ids, mask, output_attentions=True)  # L x (B, H, N, N)
        weights = torch.stack(attentions, dim=1).double()  # (B, L, H, N, N)
        real = mask.bool()  # (B, N)
        n = mask.sum(dim=1)  # (B,)
        b, width = ids.shape
        key_punct = punctuation[ids] & real  # (B, N)
        has_punct = key_punct.any(dim=1)  # (B,)
        # Each behaviour as (B, L, H, N) per query, with the queries that have that key: (B, N).
        last = (n - 1).view(b, 1, 1, 1, 1).expand(b, L, H, width, 1)  # (B, L, H, N, 1)
        per_query = {
            "self": (weights.diagonal(dim1=-2, dim2=-1), real),
            "previous": (weights.diagonal(offset=-1, dim1=-2, dim2=-1), real[:, 1:]),  # query i+1, key i
            "next": (weights.diagonal(offset=1, dim1=-2, dim2=-1), real[:, 1:]),  # query i, key i+1
            "first": (weights[..., 0], real),
            "last": (weights.gather(-1, last).squeeze(-1), real),
            "punctuation": ((weights * key_punct.view(b, 1, 1, 1, width)).sum(-1), real & has_punct[:, None]),
        }
        for k, name in enumerate(BEHAVIOURS):
            values, queries = per_query[name]  # (B, L, H, M), (B, M) with M = N or N - 1
            sums[:, :, k] += (values * queries[:, None, None, :]).sum(dim=(0, 3)).cpu()
            counts[k] += queries.sum().item()
        rows = torch.special.entr(weights).sum(-1)  # (B, L, H, N): entropy of each query row, 0·log 0 = 0
        query = real[:, None, None, :].double()  # (B, 1, 1, N)
        top = torch.log(n.double().clamp(min=2)).view(b, 1, 1, 1)  # (B, 1, 1, 1): log(n), the uniform maximum
        wide = (query * (n >= 2).view(b, 1, 1, 1)).double()  # (B, 1, 1, N)
        entropy[0] += (rows * query).sum(dim=(0, 3)).cpu()
        entropy[1] += (rows.square() * query).sum(dim=(0, 3)).cpu()
        entropy[2] += (rows / top * wide).sum(dim=(0, 3)).cpu()
        entropy_counts += torch.stack([query.sum(), wide.sum()]).cpu()
        got = (weights * real[:, None, None, :, None]).sum(dim=-2)  # (B, L, H, N): summed over real queries
        flat_ids = ids[real]  # (T,): every real token of the batch
        got = got.permute(1, 2, 0, 3)[:, :, real]  # (L, H, T)
        received.index_add_(2, flat_ids.cpu(), got.cpu())
        token_counts.index_add_(0, flat_ids.cpu(), torch.ones(flat_ids.numel(), dtype=torch.float64))
    mean = entropy[0] / entropy_counts[0]
    return HeadBehaviour(
        behaviour=(sums / counts.clamp(min=1)).float(),
        entropy_mean=mean.float(),
        entropy_std=(entropy[1] / entropy_counts[0] - mean.square()).clamp(min=0).sqrt().float(),
        entropy_share=(entropy[2] / entropy_counts[1].clamp(min=1)).float(),
        token_scores=(received / token_counts.clamp(min=1)).float(),
        token_counts=token_counts.long(),
        sentences=len(id_lists),
    )


def head_role(behaviour: torch.Tensor, entropy_share: float) -> str:
    """The rule-based role of one head (``ROLE_RULE``): its dominant behaviour, "broad" or "mixed".

    Shape:
        behaviour: (K,), the head's mean weights on ``BEHAVIOURS``.
    """
    best = int(behaviour.argmax())
    if float(behaviour[best]) >= ROLE_THRESHOLD:
        return ROLE_NAMES[BEHAVIOURS[best]]
    return "broad" if entropy_share >= BROAD_ENTROPY else "mixed"


def top_tokens(
    scores: torch.Tensor, counts: torch.Tensor, k: int = 5, min_count: int = MIN_TOKEN_COUNT
) -> list[tuple[int, float]]:
    """The ``k`` token ids with the highest score among those occurring at least ``min_count`` times.

    Shape:
        scores: (V,), one head's ``token_scores``; counts: (V,).
    """
    eligible = torch.where(counts >= min_count, scores, torch.full_like(scores, float("-inf")))  # (V,)
    values, ids = eligible.topk(min(k, int((counts >= min_count).sum())))
    return [(int(i), float(v)) for i, v in zip(ids, values, strict=True)]


@torch.no_grad()
def corpus_importance(
    model: Classifier,
    id_lists: list[list[int]],
    labels: list[int],
    batch_size: int = 64,
    progress: Callable[[Iterable], Iterable] = iter,
) -> CorpusImportance:
    """Knock out each head alone over a labelled corpus: accuracy drop and mean drop in the true class's probability.

    As ``knockout.head_importance`` does for one sentence, each batch is repeated 1 + L·H times, in as few
    forward passes as the memory budget allows (``batching``): copy 0 keeps every head, copy 1 + l·H + h knocks
    out head h of layer l only.

    Args:
        model: the classifier, in eval mode.
        id_lists: the corpus, one unpadded list of token ids per sentence.
        labels: the true class of each sentence.
        batch_size: sentences per batch (its passes read (1 + L·H) times as many rows).
        progress: wraps the batches, e.g. ``tqdm``.
    """
    _check(model, id_lists)
    device = next(model.parameters()).device
    L, H = model.num_layers, model.num_heads
    R = 1 + L * H
    masks = torch.cat([torch.ones(1, L * H), 1 - torch.eye(L * H)]).view(R, L, H).to(device)  # (R, L, H)
    truth = torch.tensor(labels, device=device)  # (S,)
    correct = torch.zeros(R, dtype=torch.float64)  # (R,)
    true_prob = torch.zeros(R, dtype=torch.float64)  # (R,)
    for chosen, ids, mask in progress(list(batches(id_lists, batch_size))):
        b = len(chosen)
        ids, mask = ids.to(device).repeat(R, 1), mask.to(device).repeat(R, 1)  # (R·B, N)
        row_masks = masks.repeat_interleave(b, dim=0)  # (R·B, L, H): copy r of the batch gets mask r
        rows = passes_for(model, R * b, ids.size(1), backward=False)  # a real-size model's R·B rows in a few passes
        logits = torch.cat([model(ids[p], mask[p], head_mask=row_masks[p]) for p in rows])  # (R·B, C)
        probs = logits.softmax(dim=-1).view(R, b, -1)  # (R, B, C)
        target = truth[chosen]  # (B,)
        correct += (probs.argmax(dim=-1) == target).sum(dim=1).double().cpu()
        true_prob += probs.gather(-1, target.view(1, b, 1).expand(R, b, 1)).squeeze(-1).sum(dim=1).double().cpu()
    accuracy, mean_prob = correct / len(labels), true_prob / len(labels)  # (R,)
    return CorpusImportance(
        base_accuracy=float(accuracy[0]),
        accuracy_drop=(accuracy[0] - accuracy[1:]).view(L, H).float(),
        prob_drop=(mean_prob[0] - mean_prob[1:]).view(L, H).float(),
    )


@torch.no_grad()
def corpus_probabilities(
    model: Classifier,
    id_lists: list[list[int]],
    batch_size: int = 128,
    progress: Callable[[Iterable], Iterable] = iter,
) -> torch.Tensor:
    """Every sentence's class probabilities, read in padded batches, in the corpus's order.

    Shape:
        returns (S, C).
    """
    _check(model, id_lists)
    device = next(model.parameters()).device
    out = torch.zeros(len(id_lists), len(model.label_names))  # (S, C)
    for chosen, ids, mask in progress(list(batches(id_lists, batch_size))):
        out[chosen] = model(ids.to(device), mask.to(device)).softmax(dim=-1).float().cpu()
    return out
