"""``Classifier``: the one model interface that ``transformer.explain`` and the explorer's views are written against.

Shape letters: B = batch, N = tokens, D = d_model, H = heads, L = layers, C = classes, P = positions, d_k = D // H.

Two kinds of model satisfy it: the tutorial's ``TransformerClassifier`` and ``hub.adapter.HubClassifier``, a
``transformers`` BERT, DistilBERT or RoBERTa classifier behind the same calls. What only one kind can do is said as
data, in ``capabilities``, so no view asks which class it holds.
"""

from typing import Protocol, runtime_checkable

import torch
from torch import nn

# The capabilities a model may list.
TUTORIAL_BLOCKS = "tutorial_blocks"  # the tutorial's embedding, encoding and encoder blocks: the Walkthrough reads them
SINUSOIDAL_POSITIONS = "sinusoidal_positions"  # fixed sines and cosines added to the embedding, not a learned table
CAPABILITIES = frozenset({TUTORIAL_BLOCKS, SINUSOIDAL_POSITIONS})


@runtime_checkable
class Classifier(Protocol):
    """A sequence classifier the explorer can explain.

    Attributes:
        num_layers, num_heads, d_model, max_len: L, H, D and the most tokens it reads.
        pad_token_id: the id of [PAD].
        label_names: the class names, in logit order.
        model_type: the kind of model, in words a message can name: "tutorial", "bert", "distilbert" or "roberta".
        pooling: what the classifier reads: "mean" of the tokens, or "first" ([CLS] or <s>).
        norm_first: whether each block normalises a sub-layer's input (Pre-LN: x + f(LN(x))) rather than the sum
            after it (Post-LN: LN(x + f(x)), BERT's).
        use_positional_encoding: whether positions are added unless a call says otherwise.
        special_token_ids: ids that views leave out of a colour scale ([CLS], [SEP], [PAD], ...).
        added_token_ids: ids the tokenizer adds around every sentence, which stay in place when a view edits it.
        capabilities: what only some models can do (``CAPABILITIES``).
    """

    num_layers: int
    num_heads: int
    d_model: int
    max_len: int
    pad_token_id: int
    label_names: list[str]
    pooling: str
    norm_first: bool
    use_positional_encoding: bool
    added_token_ids: tuple[int, ...]
    capabilities: frozenset[str]
    training: bool  # ``nn.Module``'s: whether dropout is on

    @property
    def model_type(self) -> str:
        """The kind of model (read-only: a Hub model's is its family's)."""

    @property
    def special_token_ids(self) -> tuple[int, ...]:
        """Ids that views leave out of a colour scale (read-only: the tutorial's are its tokenizer's)."""

    def __call__(
        self,
        input_ids=None,
        attention_mask=None,
        output_attentions=False,
        *,
        inputs_embeds=None,
        head_mask=None,
        positional_encoding=None,
    ):
        """Logits (B, C) for ids (B, N) with 1 = token, 0 = padding in ``attention_mask``; with
        ``output_attentions``, also one (B, H, N, N) tensor per layer. ``head_mask`` (L, H) or (B, L, H): 0 knocks a
        head out. ``positional_encoding`` False adds no positions. ``inputs_embeds`` (B, N, D) replaces the lookup."""

    def token_embeddings(self, input_ids: torch.Tensor) -> torch.Tensor:
        """The embedding lookup that ``inputs_embeds`` takes: (B, N) -> (B, N, D)."""

    def hidden_states(
        self, input_ids=None, attention_mask=None, *, inputs_embeds=None, head_mask=None, positional_encoding=None
    ) -> tuple[torch.Tensor, ...]:
        """L + 1 tensors (B, N, D): the stream entering the first layer and leaving each."""

    def query_key(
        self, input_ids: torch.Tensor, layer: int, *, head_mask=None, positional_encoding=None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Every head's queries and keys in ``layer`` for one sentence (1, N): each (H, N, d_k)."""

    def position_table(self) -> torch.Tensor:
        """The position vectors added at positions 0 .. max_len − 1: (P, D)."""

    def stage_modules(self) -> list[nn.Module]:
        """The L + 1 modules whose output is the residual stream (a tensor, or a tuple that starts with it)."""

    def attention_projections(self, layer: int) -> tuple[nn.Linear, nn.Linear]:
        """``layer``'s value projection (output: every head's values side by side) and W_o (input: every head's
        context side by side, (B, N, H·d_k))."""

    def feed_forward_input(self, layer: int) -> nn.Module:
        """The module that takes ``layer``'s feed-forward input, every position's (B, N, D) after attention."""

    def layer_norms(self, layer: int) -> tuple[nn.LayerNorm, nn.LayerNorm]:
        """``layer``'s two LayerNorms, the attention's then the feed-forward's: before each sub-layer (Pre-LN) or
        after each residual sum (Post-LN, ``norm_first`` False)."""

    def parameters(self, recurse: bool = True):
        """The weights (``nn.Module``'s): their device is the model's."""

    def eval(self):
        """Switch dropout off (``nn.Module``'s)."""
