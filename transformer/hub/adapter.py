"""``HubClassifier``: a ``transformers`` sequence classifier behind ``interface.Classifier``, the model interface.

Shape letters: B = batch, N = tokens, D = hidden size, H = heads, L = layers, C = classes, P = positions,
d_k = D // H.

The explorer and ``transformer.explain`` ask a model only what ``interface.Classifier`` declares. This wrapper gives
a BERT, DistilBERT or RoBERTa classifier the same, with head knockout and the position switch done by hooks added for
one call (``hooks``).

Two differences from ``TransformerClassifier`` stay visible: these models read the first token ([CLS] or
<s>) rather than the mean of all positions, and ``token_embeddings`` is the plain word-embedding lookup
(token-type embeddings and positions are added inside, then a LayerNorm).
"""

from operator import attrgetter
from typing import Any

import torch
from torch import nn

from . import hooks
from .families import Family


class HubClassifier(nn.Module):
    """A ``transformers`` ``*ForSequenceClassification`` model with the explorer's forward.

    Args:
        classifier: the ``transformers`` model, kept as ``hf_model``; switched to eager attention, the one
            that returns weights.
        family: where its layers, heads and position embeddings are (``families.FAMILIES``).
        special_token_ids: the ids the tokenizer adds or reserves ([CLS], [SEP], [PAD], ...), for views that
            leave them out of a colour scale.
        added_token_ids: the ids the tokenizer adds around every sentence ([CLS] and [SEP], or <s> and </s>),
            which Integrated Gradients' [PAD] baseline keeps.
    """

    def __init__(self, classifier: Any, family: Family, special_token_ids=(), added_token_ids=()):
        super().__init__()
        classifier.set_attn_implementation("eager")  # ``classifier``: a ``transformers`` model, untyped here
        config = classifier.config
        self.hf_model = classifier
        self.family = family
        self.num_layers: int = config.num_hidden_layers
        self.num_heads: int = config.num_attention_heads
        self.d_model: int = config.hidden_size
        self.pad_token_id: int = config.pad_token_id if config.pad_token_id is not None else 0
        self.position_offset = self.pad_token_id + 1 if family.position_offset else 0
        self.max_len: int = config.max_position_embeddings - self.position_offset
        self.label_names = [str(config.id2label[i]) for i in range(config.num_labels)]
        self.use_positional_encoding = True
        self.norm_first = False  # BERT, DistilBERT and RoBERTa normalise each residual sum (Post-LN)
        self.pooling = "first"  # the classifier reads the first token, [CLS] or <s> (see ``explain.rollout``)
        self.capabilities: frozenset[str] = frozenset()  # learned positions; its blocks are not the tutorial's
        self.special_token_ids = tuple(sorted(set(special_token_ids)))
        self.added_token_ids = tuple(sorted(set(added_token_ids)))

    @property
    def model_type(self) -> str:
        """config.json's ``model_type``: "bert", "distilbert" or "roberta"."""
        return self.family.model_type

    @property
    def base(self) -> nn.Module:
        """The encoder under the classification head (``BertModel``, ``DistilBertModel``, ``RobertaModel``)."""
        return getattr(self.hf_model, self.family.base)

    @property
    def hf_layers(self) -> nn.ModuleList:
        """The L ``transformers`` layers; not called ``layers``: their forward is not ``TransformerEncoderBlock``'s."""
        return attrgetter(self.family.layers)(self.base)

    @property
    def embedding(self) -> nn.Embedding:
        """The word embeddings, (vocab, D), as ``TransformerClassifier.embedding``."""
        return self.hf_model.get_input_embeddings()

    def token_embeddings(self, input_ids: torch.Tensor) -> torch.Tensor:
        """The word-embedding lookup, what ``inputs_embeds`` takes: (B, N) -> (B, N, D).

        Attribution methods differentiate with respect to this tensor; token types and positions are added
        inside the model, as the positional encoding is in ``TransformerClassifier``.
        """
        return self.embedding(input_ids)

    def position_table(self) -> torch.Tensor:
        """The learned position embeddings the model adds at positions 0 .. max_len − 1: (P, D), P = ``max_len``.

        RoBERTa's rows before ``pad_token_id + 1`` are never used for a token and are left out.
        """
        weight = attrgetter(self.family.positions)(self.base).weight  # (max_position_embeddings, D)
        return weight[self.position_offset :].detach()

    def stage_modules(self) -> list[nn.Module]:
        """The L + 1 modules whose output is the residual stream, as ``TransformerClassifier.stage_modules``: the
        embedding layer (words, positions, token types, LayerNorm) and each ``transformers`` layer."""
        return [self.base.embeddings, *self.hf_layers]

    def attention_projections(self, layer: int) -> tuple[nn.Linear, nn.Linear]:
        """Layer ``layer``'s value projection and W_o, as ``TransformerClassifier.attention_projections``."""
        block = self.hf_layers[layer]
        return attrgetter(self.family.value)(block), attrgetter(self.family.output_projection)(block)

    def feed_forward_input(self, layer: int) -> nn.Module:
        """The module that takes layer ``layer``'s feed-forward input, every position's (B, N, D) after attention, as
        ``TransformerClassifier.feed_forward_input``: BERT's and RoBERTa's ``intermediate``, DistilBERT's ``ffn``."""
        return attrgetter(self.family.feed_forward)(self.hf_layers[layer])

    def layer_norms(self, layer: int) -> tuple[nn.LayerNorm, nn.LayerNorm]:
        """Layer ``layer``'s LayerNorm after the attention's residual sum and after the feed-forward's (Post-LN)."""
        block = self.hf_layers[layer]
        first, second = (attrgetter(path)(block) for path in self.family.norms)
        return first, second

    def _hook_specs(self, head_mask: torch.Tensor | None, positional_encoding: bool | None) -> list[hooks.HookSpec]:
        """The hooks one call needs: a W_o pre-hook per layer for ``head_mask``, one to zero the positions.

        Shape:
            head_mask: (L, H) or (B, L, H).
        """
        specs = []
        if head_mask is not None:
            if tuple(head_mask.shape[-2:]) != (self.num_layers, self.num_heads) or head_mask.dim() not in (2, 3):
                raise ValueError(
                    f"head_mask must have shape (L, H) or (B, L, H) with (L, H) = {(self.num_layers, self.num_heads)},"
                    f" got {tuple(head_mask.shape)}"
                )
            projection = attrgetter(self.family.output_projection)
            for i, layer in enumerate(self.hf_layers):
                specs.append((projection(layer), hooks.head_mask_hook(head_mask[..., i, :], self.num_heads), "pre"))
        use_pe = self.use_positional_encoding if positional_encoding is None else positional_encoding
        if not use_pe:
            specs.append((attrgetter(self.family.positions)(self.base), hooks.zero_output_hook, "post"))
        return specs

    def forward(
        self,
        input_ids=None,
        attention_mask=None,
        output_attentions=False,
        *,
        inputs_embeds=None,
        head_mask=None,
        positional_encoding=None,
    ):
        """Classify token sequences, as ``TransformerClassifier.forward`` does.

        Args:
            input_ids: token ids, [CLS]/<s> first as the tokenizer adds them (None when ``inputs_embeds`` is given).
            attention_mask: 1 for a real token, 0 for padding; None means no padding.
            output_attentions: also return the attention weights of every layer.
            inputs_embeds: precomputed ``token_embeddings(input_ids)``, for gradient attributions.
            head_mask: 1 keeps a head, 0 knocks it out (its context is zeroed before W_o); one mask for the
                batch or one per row.
            positional_encoding: override ``use_positional_encoding`` for this call; False adds zero
                position embeddings.

        Shape:
            input_ids, attention_mask: (B, N); inputs_embeds: (B, N, D); head_mask: (L, H) or (B, L, H).

        Returns:
            logits (B, C); with ``output_attentions``, ``(logits, attentions)``, a tuple of L tensors (B, H, N, N).
        """
        with hooks.added(self._hook_specs(head_mask, positional_encoding)):
            output = self.hf_model(
                input_ids=input_ids,
                attention_mask=attention_mask,
                inputs_embeds=inputs_embeds,
                output_attentions=bool(output_attentions),
                return_dict=True,
            )
        return (output.logits, tuple(output.attentions)) if output_attentions else output.logits

    def hidden_states(
        self, input_ids=None, attention_mask=None, *, inputs_embeds=None, head_mask=None, positional_encoding=None
    ) -> tuple[torch.Tensor, ...]:
        """Every token's vector entering the first layer and leaving each layer, as ``TransformerClassifier``'s:
        the ``transformers`` model's ``output_hidden_states``.

        Stage 0 is the embedding layer's output: the word, position (and, in BERT and RoBERTa, token-type)
        embeddings summed, then a LayerNorm. The arguments are those of ``forward``.

        Args:
            input_ids: token ids, [CLS]/<s> first as the tokenizer adds them (None when ``inputs_embeds`` is given).
            attention_mask: 1 for a real token, 0 for padding; None means no padding.
            inputs_embeds: precomputed ``token_embeddings(input_ids)``.
            head_mask: 1 keeps a head, 0 knocks it out, as in ``forward``.
            positional_encoding: override ``use_positional_encoding`` for this call.

        Shape:
            input_ids, attention_mask: (B, N); inputs_embeds: (B, N, D); head_mask: (L, H) or (B, L, H).

        Returns:
            a tuple of L + 1 tensors (B, N, D): stage 0 enters layer 1, stage i leaves layer i.
        """
        with hooks.added(self._hook_specs(head_mask, positional_encoding)):
            output = self.base(  # the encoder alone: the states are all its own, the head is not needed
                input_ids=input_ids,
                attention_mask=attention_mask,
                inputs_embeds=inputs_embeds,
                output_hidden_states=True,
                return_dict=True,
            )
        return tuple(output.hidden_states)

    @torch.no_grad()
    def query_key(self, input_ids: torch.Tensor, layer: int, *, head_mask=None, positional_encoding=None):
        """Every head's queries and keys in one layer, for Inside one head; scores = Q Kᵀ / √d_k.

        Args:
            input_ids: one sentence, no padding.
            layer: layer index, from 0.
            head_mask, positional_encoding: as in ``forward`` (a knockout changes the later layers' inputs).

        Shape:
            input_ids: (1, N). Returns (queries, keys), each (H, N, d_k).
        """
        if not 0 <= layer < self.num_layers:
            raise ValueError(f"layer must be in [0, {self.num_layers}), got {layer}")
        queries: list[torch.Tensor] = []
        keys: list[torch.Tensor] = []
        block = self.hf_layers[layer]
        capture = [
            (attrgetter(self.family.query)(block), hooks.capture_hook(queries), "post"),
            (attrgetter(self.family.key)(block), hooks.capture_hook(keys), "post"),
        ]
        with hooks.added(capture):
            self(input_ids, head_mask=head_mask, positional_encoding=positional_encoding)
        return self._split_heads(queries[0]), self._split_heads(keys[0])

    def _split_heads(self, x: torch.Tensor) -> torch.Tensor:
        """One sentence's projections, every head side by side, as one slice per head: (1, N, D) -> (H, N, d_k)."""
        return x[0].reshape(x.size(1), self.num_heads, -1).transpose(0, 1)
