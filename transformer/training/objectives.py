"""The two training objectives: sentiment classification and masked-language-model pre-training.

Both read padded batches of token ids. ``attention_mask`` is 1 for a token and 0 for padding, as
everywhere in this project; the model converts it for attention.

Shape letters: B = batch, N = sequence length, D = d_model, V = vocabulary, C = classes, M = masked tokens.
"""

from dataclasses import dataclass

import torch
from torch import nn

from ..classifier import TransformerClassifier
from ..tokenizer import MASK_ID, SPECIAL_TOKENS, UNK_ID, pad_ids
from .pairing import Pairing, pairing_penalty


def target_distributions(labels: list[float]) -> torch.Tensor:
    """Each example's label, P(positive) (0, 1 or a soft 0.5), as the distribution (P(negative), P(positive)).

    Shape:
        Returns (n, 2).
    """
    positive = torch.tensor(labels, dtype=torch.float32)  # (n,)
    return torch.stack([1 - positive, positive], dim=1)  # (n, 2)


def drop_words(input_ids: torch.Tensor, attention_mask: torch.Tensor, rate: float) -> torch.Tensor:
    """Word dropout: each real token becomes ``[UNK]`` with probability ``rate``; padding is never touched.

    Shape:
        input_ids, attention_mask: (B, N). Returns (B, N).
    """
    dropped = (torch.rand(input_ids.shape) < rate) & attention_mask.bool()  # (B, N)
    return input_ids.masked_fill(dropped, UNK_ID)


@dataclass(frozen=True)
class PairMargin:
    """A hinge between the two sides of a pair of opposite labels (CAD's original and its edit, a clause and its
    negation: ``mixture.PAIRED_SOURCES``).

    With ``z = logit(positive) - logit(negative)``, each pair adds ``max(0, margin - (z_positive - z_negative))``:
    the positive side must read at least ``margin`` logits more positive than its negative twin. The batch's
    pair term is the sum over its pairs divided by the batch's rows, times ``weight``, so that at weight 1 a pair
    weighs as much as one row's cross-entropy; weight 0 turns it off.
    """

    weight: float = 0.0
    margin: float = 2.0


def pair_margin_loss(logits: torch.Tensor, partner_logits: torch.Tensor, sign: torch.Tensor, margin: float):
    """The hinge of ``PairMargin`` of each pair.

    Shape:
        logits, partner_logits: (P, C) for the two sides; sign: (P,), +1 where the first side is the positive one,
        -1 where it is the negative one. Returns (P,).
    """
    z = logits[:, 1] - logits[:, 0]  # (P,)
    z_partner = partner_logits[:, 1] - partner_logits[:, 0]  # (P,)
    return nn.functional.relu(margin - sign * (z - z_partner))


def classification_loss(
    model: TransformerClassifier,
    sequences: list[list[int]],
    targets: torch.Tensor,
    rows: list[int],
    word_dropout: float,
    label_smoothing: float,
    partners: list[int] | None = None,
    pairs: PairMargin = PairMargin(),
    pairing: Pairing | None = None,
) -> torch.Tensor:
    """Cross-entropy of the model on ``sequences[rows]`` against target distributions ``targets[rows]`` (n, C).

    Targets may be soft (distillation) or one-hot; word dropout is applied to the inputs first. With
    ``pairs.weight`` > 0, each row that has a partner (``partners[row]`` ≥ 0) is also read beside its partner
    and the pair's hinge is added; the partner itself adds no cross-entropy here. With ``pairing.weight`` > 0,
    some rows are also read beside a counterfactual twin (``pairing.Pairing.twins``) and the gap between their
    logits is added; word dropout spares both sides of those pairs, so that the gap is the slot's alone.
    """
    device = next(model.parameters()).device
    firsts = [i for i, row in enumerate(rows) if pairs.weight and partners is not None and partners[row] >= 0]
    paired = [rows[i] for i in firsts]  # (P,): the rows read beside their partners
    batch = rows + [partners[row] for row in paired]
    twinned, twin_ids = pairing.twins(rows) if pairing is not None and pairing.weight else ([], [])
    input_ids, attention_mask = pad_ids([sequences[i] for i in batch] + twin_ids)  # (B + P + T, N) each
    spared = attention_mask.clone()
    spared[twinned + list(range(len(batch), len(input_ids)))] = 0  # no word dropout on either side of a twin pair
    input_ids = drop_words(input_ids, spared, word_dropout)
    with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
        logits = model(input_ids.to(device), attention_mask.to(device)).float()  # (B + P + T, C)
    loss = nn.functional.cross_entropy(logits[: len(rows)], targets[rows].to(device), label_smoothing=label_smoothing)
    if twinned:
        gaps = pairing_penalty(logits[twinned], logits[len(batch) :])  # (T,)
        loss = loss + pairing.weight * gaps.sum() / len(rows)
    if not paired:
        return loss
    positive = targets[paired, 1] > targets[[partners[row] for row in paired], 1]  # (P,)
    sign = (positive.float() * 2 - 1).to(device)  # (P,)
    hinges = pair_margin_loss(logits[firsts], logits[len(rows) : len(batch)], sign, pairs.margin)  # (P,)
    return loss + pairs.weight * hinges.sum() / len(rows)


class MaskedLanguageModelHead(nn.Module):
    """BERT's pre-training head on the classifier's encoder: transform, then scores tied to the embedding table.

    Used only in pre-training; the classifier that is saved never holds it.
    """

    def __init__(self, encoder: TransformerClassifier):
        super().__init__()
        vocab_size, d_model = encoder.embedding.weight.shape
        self.transform = nn.Sequential(nn.Linear(d_model, d_model), nn.GELU(), nn.LayerNorm(d_model))
        self.bias = nn.Parameter(torch.zeros(vocab_size))

    def forward(self, encoder: TransformerClassifier, hidden: torch.Tensor) -> torch.Tensor:
        """Vocabulary scores of hidden states.

        Shape:
            hidden: (M, D). Returns (M, V).
        """
        return self.transform(hidden) @ encoder.embedding.weight.T + self.bias  # (M, V)


class MaskedLanguageModel(nn.Module):
    """The classifier's encoder (embeddings, positions, blocks, final LayerNorm) plus an MLM head.

    ``encoder`` is the very classifier that is fine-tuned afterwards: pre-training changes its weights
    in place, and its own classification head is left untouched.
    """

    def __init__(self, encoder: TransformerClassifier):
        super().__init__()
        self.encoder = encoder
        self.head = MaskedLanguageModelHead(encoder)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, selected: torch.Tensor) -> torch.Tensor:
        """Vocabulary scores at the ``selected`` positions.

        Args:
            input_ids: token ids, with the positions to predict already corrupted.
            attention_mask: 1 for a token, 0 for padding.
            selected: True where a prediction is wanted.

        Shape:
            input_ids, attention_mask, selected: (B, N). Returns (M, V) with M = selected.sum().
        """
        hidden, _ = self.encoder.encode(input_ids, attention_mask)  # (B, N, D)
        return self.head(self.encoder, hidden[selected])  # (M, V)


def mask_tokens(
    input_ids: torch.Tensor, attention_mask: torch.Tensor, vocab_size: int, rate: float = 0.15
) -> tuple[torch.Tensor, torch.Tensor]:
    """BERT's corruption: choose ``rate`` of the real tokens; of those 80 % become ``[MASK]``, 10 % a random
    token, 10 % stay. At least one token per row is chosen, so every row has something to predict.

    Shape:
        input_ids, attention_mask: (B, N). Returns (corrupted ids, chosen positions), both (B, N).
    """
    real = attention_mask.bool()  # (B, N)
    scores = torch.rand(input_ids.shape).masked_fill(~real, 2.0)  # (B, N): padding is never chosen
    chosen = (scores < rate) & real
    chosen[torch.arange(len(input_ids)), scores.argmin(dim=1)] = True  # the lowest score of each row
    action = torch.rand(input_ids.shape)  # (B, N)
    random_ids = torch.randint(len(SPECIAL_TOKENS), vocab_size, input_ids.shape)  # (B, N): never a special token
    corrupted = torch.where(chosen & (action < 0.8), MASK_ID, input_ids)
    corrupted = torch.where(chosen & (action >= 0.8) & (action < 0.9), random_ids, corrupted)
    return corrupted, chosen


def mlm_loss(model: MaskedLanguageModel, sequences: list[list[int]], rows: list[int], rate: float) -> torch.Tensor:
    """Cross-entropy of predicting the chosen tokens of ``sequences[rows]``."""
    device = next(model.parameters()).device
    input_ids, attention_mask = pad_ids([sequences[i] for i in rows])  # (B, N) each
    corrupted, chosen = mask_tokens(input_ids, attention_mask, model.encoder.embedding.num_embeddings, rate)
    with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
        scores = model(corrupted.to(device), attention_mask.to(device), chosen.to(device))  # (M, V)
    return nn.functional.cross_entropy(scores.float(), input_ids[chosen].to(device))
