"""The sentiment classifier (tutorial section 7), Hub-ready.

Shape letters: B = batch, N = sequence length, D = d_model, H = heads, L = layers, C = classes.

``attention_mask`` follows the Hugging Face convention: 1 for a real token, 0 for padding.
It is converted exactly once, in ``_stream``, into the boolean "True = may attend" mask that
attention and torch's SDPA expect.
"""

import math
import os

import safetensors.torch
import torch
from huggingface_hub import PyTorchModelHubMixin, constants, hf_hub_download
from torch import nn

from .encoder_block import TransformerEncoderBlock
from .interface import SINUSOIDAL_POSITIONS, TUTORIAL_BLOCKS
from .positional_encoding import PositionalEncoding
from .tokenizer import MASK_ID, UNK_ID

HEAD_ACTIVATIONS = {"relu": nn.ReLU, "gelu": nn.GELU}  # the classifier head's non-linearity, by config name
# What a config.json without these keys means: every checkpoint saved before they were options used them.
LEGACY_ARCHITECTURE = {"embedding_scale": True, "head_activation": "gelu"}


class TransformerClassifier(
    nn.Module,
    PyTorchModelHubMixin,
    library_name="pytorch",
    pipeline_tag="text-classification",
    license="mit",
    tags=["transformer-attention-explorer", "sentiment-analysis"],
):
    """Embedding -> positional encoding -> encoder blocks -> LayerNorm -> mean pooling -> MLP head.

    The tutorial's arguments and defaults come first and behave as in the tutorial: the embedding lookup
    enters the positional encoding as it is, and the head is Linear → ReLU → Dropout → Linear. The extras:
    ``norm_first`` (Pre-LN, default, or Post-LN), ``use_positional_encoding`` (switch it off to see
    that attention alone ignores word order), ``pad_token_id`` and ``label_names``; and two deviations
    off by default, which checkpoints from before they were options were trained with
    (``LEGACY_ARCHITECTURE``): ``embedding_scale`` (multiply the lookup by √D) and ``head_activation``
    (``"relu"`` or ``"gelu"``).
    """

    def __init__(
        self,
        vocab_size: int,
        num_classes: int,
        d_model: int = 256,
        num_heads: int = 4,
        num_layers: int = 3,
        d_ff: int = 512,
        max_len: int = 256,
        dropout: float = 0.1,
        norm_first: bool = True,
        use_positional_encoding: bool = True,
        pad_token_id: int = 0,
        label_names: list[str] | None = None,
        embedding_scale: bool = False,
        head_activation: str = "relu",
    ):
        super().__init__()
        if label_names is not None and len(label_names) != num_classes:
            raise ValueError(f"label_names has {len(label_names)} names for {num_classes} classes")
        if head_activation not in HEAD_ACTIVATIONS:
            raise ValueError(f"head_activation must be one of {', '.join(HEAD_ACTIVATIONS)}; got {head_activation!r}")
        self.embedding_scale = embedding_scale
        self.head_activation = head_activation
        self.d_model = d_model
        self.num_heads = num_heads
        self.num_layers = num_layers
        self.max_len = max_len
        self.use_positional_encoding = use_positional_encoding
        self.model_type = "tutorial"  # the interface's name for this kind (a Hub model says its family)
        self.norm_first = norm_first  # every block's arrangement, Pre-LN or Post-LN (``interface.Classifier``)
        self.pooling = "mean"  # what the classifier reads: the mean of the tokens (see ``explain.rollout``)
        self.capabilities = frozenset({TUTORIAL_BLOCKS, SINUSOIDAL_POSITIONS})
        self.pad_token_id = pad_token_id
        self.label_names = list(label_names) if label_names else [str(i) for i in range(num_classes)]
        self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=pad_token_id)
        self.positional_encoding = PositionalEncoding(d_model, max_len, dropout)
        self.layers = nn.ModuleList(
            TransformerEncoderBlock(d_model, num_heads, d_ff, dropout, norm_first) for _ in range(num_layers)
        )
        self.norm = nn.LayerNorm(d_model)
        self.classifier = nn.Sequential(
            nn.Linear(d_model, d_model // 2),
            HEAD_ACTIVATIONS[head_activation](),
            nn.Dropout(dropout),
            nn.Linear(d_model // 2, num_classes),
        )

    def token_embeddings(self, input_ids: torch.Tensor) -> torch.Tensor:
        """The embedding lookup, as the tutorial feeds it to the positional encoding: (B, N) -> (B, N, D).

        With ``embedding_scale`` (older checkpoints) it is multiplied by √D first.
        Attribution methods differentiate with respect to this tensor (``inputs_embeds``).
        """
        rows = self.embedding(input_ids)  # (B, N, D)
        return rows * math.sqrt(self.d_model) if self.embedding_scale else rows

    def position_table(self) -> torch.Tensor:
        """The sinusoidal table the model adds at positions 0 .. max_len − 1: (P, D), P = ``max_len``.

        ``transformer.hub``'s ``HubClassifier`` returns its learned position embeddings here.
        """
        return self.positional_encoding.pe[0]  # (1, max_len, D) -> (max_len, D)

    @property
    def special_token_ids(self) -> tuple[int, ...]:
        """The ids of the tokenizer's special tokens ([PAD], [UNK], [MASK]), which views leave out of a colour scale."""
        return (self.pad_token_id, UNK_ID, MASK_ID)

    def stage_modules(self) -> list[nn.Module]:
        """The L + 1 modules whose output is the residual stream: entering block 1 (the positional encoding's dropout,
        which runs with the encoding on or off) and leaving each block (the first element of its output).

        Activation patching and the class readout hook them to replace the stream (``explain.patching``).
        """
        return [self.positional_encoding.dropout, *self.layers]

    def attention_projections(self, layer: int) -> tuple[nn.Linear, nn.Linear]:
        """Block ``layer``'s W_v and W_o: W_v's output is every head's values side by side, bias included; W_o's
        input is every head's context side by side, (B, N, H·d_k), head h in columns h·d_k .. (h + 1)·d_k."""
        attention = self.layers[layer].attention
        return attention.W_v, attention.W_o

    @torch.no_grad()
    def query_key(self, input_ids: torch.Tensor, layer: int, *, head_mask=None, positional_encoding=None):
        """Every head's queries and keys in block ``layer``, recomputed from the block's input (then its LayerNorm
        in a Pre-LN block) with its own W_q and W_k; scores = Q Kᵀ / √d_k.

        Args:
            input_ids: one sentence, no padding.
            layer: block index, from 0.
            head_mask, positional_encoding: as in ``forward`` (a knockout changes the later blocks' inputs).

        Shape:
            input_ids: (1, N). Returns (queries, keys), each (H, N, d_k).
        """
        if not 0 <= layer < self.num_layers:
            raise ValueError(f"layer must be in [0, {self.num_layers}), got {layer}")
        x = self.hidden_states(input_ids, head_mask=head_mask, positional_encoding=positional_encoding)[layer]
        block = self.layers[layer]
        h = block.norm1(x) if block.norm_first else x  # (1, N, D); Post-LN normalises after the sub-layer
        attention = block.attention
        return attention.split_heads(attention.W_q(h))[0], attention.split_heads(attention.W_k(h))[0]  # (H, N, d_k)

    def feed_forward_input(self, layer: int) -> nn.Module:
        """The module that takes block ``layer``'s feed-forward input, every position's (B, N, D) after attention."""
        return self.layers[layer].feed_forward

    def layer_norms(self, layer: int) -> tuple[nn.LayerNorm, nn.LayerNorm]:
        """Block ``layer``'s ``norm1`` and ``norm2``: before attention and feed-forward (Pre-LN) or after each sum."""
        block = self.layers[layer]
        return block.norm1, block.norm2

    added_token_ids: tuple[int, ...] = ()  # the tokens a tokenizer adds around a sentence: ours adds none ([CLS]...)

    def embed(self, input_ids=None, *, inputs_embeds=None, positional_encoding=None) -> torch.Tensor:
        """The input of the first encoder block: token embeddings plus positional encoding, then dropout.

        Args:
            input_ids: token ids (may be None when ``inputs_embeds`` is given).
            inputs_embeds: precomputed ``token_embeddings(input_ids)``.
            positional_encoding: override ``use_positional_encoding`` for this call.

        Shape:
            input_ids: (B, N); inputs_embeds: (B, N, D). Returns (B, N, D).
        """
        x = self.token_embeddings(input_ids) if inputs_embeds is None else inputs_embeds  # (B, N, D)
        use_pe = self.use_positional_encoding if positional_encoding is None else positional_encoding
        return self.positional_encoding(x) if use_pe else self.positional_encoding.dropout(x)

    def _stream(self, input_ids, attention_mask, output_attentions, *, inputs_embeds, head_mask, positional_encoding):
        """The residual stream entering the first block and leaving each one, with each block's attention weights.

        ``encode`` and ``hidden_states`` both read it; the arguments are those of ``forward``.

        Shape:
            input_ids, attention_mask: (B, N); inputs_embeds: (B, N, D); head_mask: (L, H) or (B, L, H).

        Returns:
            ``(states, attentions)``: states a tuple of L + 1 tensors (B, N, D); attentions a tuple of L tensors
            (B, H, N, N) with ``output_attentions``, else a tuple of L Nones.
        """
        x = self.embed(input_ids, inputs_embeds=inputs_embeds, positional_encoding=positional_encoding)  # (B, N, D)

        mask = None
        if attention_mask is not None:
            mask = attention_mask.bool()[:, None, None, :]  # (B, 1, 1, N): True = may attend
        states, attentions = [x], []
        for i, layer in enumerate(self.layers):
            layer_head_mask = None if head_mask is None else head_mask[..., i, :]  # (H,) or (B, H)
            x, weights = layer(x, mask, output_attentions, layer_head_mask)  # x: (B, N, D)
            states.append(x)
            attentions.append(weights)
        return tuple(states), tuple(attentions)

    def hidden_states(
        self, input_ids=None, attention_mask=None, *, inputs_embeds=None, head_mask=None, positional_encoding=None
    ) -> tuple[torch.Tensor, ...]:
        """Every token's vector entering the first block (``embed``: embeddings plus positional encoding) and
        leaving each block, before the final LayerNorm; ``transformers``' ``output_hidden_states``.

        Args:
            input_ids: token ids (may be None when ``inputs_embeds`` is given).
            attention_mask: 1 for a real token, 0 for padding; None means no padding.
            inputs_embeds: precomputed ``token_embeddings(input_ids)``.
            head_mask: 1 keeps a head, 0 knocks it out, as in ``forward``.
            positional_encoding: override ``use_positional_encoding`` for this call.

        Shape:
            input_ids, attention_mask: (B, N); inputs_embeds: (B, N, D); head_mask: (L, H) or (B, L, H).

        Returns:
            a tuple of L + 1 tensors (B, N, D): stage 0 enters block 1, stage i leaves block i.
        """
        states, _ = self._stream(
            input_ids,
            attention_mask,
            False,
            inputs_embeds=inputs_embeds,
            head_mask=head_mask,
            positional_encoding=positional_encoding,
        )
        return states

    def encode(
        self,
        input_ids=None,
        attention_mask=None,
        output_attentions=False,
        *,
        inputs_embeds=None,
        head_mask=None,
        positional_encoding=None,
    ):
        """Every token's hidden state after the last block and the final LayerNorm: what pooling reads.

        Masked-language-model pre-training predicts tokens from these states; ``forward`` pools them.
        The arguments are those of ``forward``.

        Shape:
            input_ids, attention_mask: (B, N); inputs_embeds: (B, N, D); head_mask: (L, H) or (B, L, H).

        Returns:
            ``(hidden, attentions)``: hidden (B, N, D); attentions a tuple of L tensors (B, H, N, N) with
            ``output_attentions``, else a tuple of L Nones.
        """
        states, attentions = self._stream(
            input_ids,
            attention_mask,
            output_attentions,
            inputs_embeds=inputs_embeds,
            head_mask=head_mask,
            positional_encoding=positional_encoding,
        )
        return self.norm(states[-1]), attentions

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
        """Classify token sequences.

        Args:
            input_ids: token ids (may be None when ``inputs_embeds`` is given).
            attention_mask: 1 for a real token, 0 for padding; None means no padding. Padded keys
                get exactly zero attention and padded positions are left out of the mean pooling.
            output_attentions: also return the attention weights of every layer.
            inputs_embeds: precomputed ``token_embeddings(input_ids)``, for gradient attributions.
            head_mask: 1 keeps a head, 0 knocks it out; one mask for the batch or one per row.
            positional_encoding: override ``use_positional_encoding`` for this call.

        Shape:
            input_ids, attention_mask: (B, N); inputs_embeds: (B, N, D); head_mask: (L, H) or (B, L, H).

        Returns:
            logits (B, C); with ``output_attentions``, ``(logits, attentions)`` where ``attentions``
            is a tuple of L tensors of shape (B, H, N, N), the format of Hugging Face and bertviz.
        """
        x, attentions = self.encode(
            input_ids,
            attention_mask,
            output_attentions,
            inputs_embeds=inputs_embeds,
            head_mask=head_mask,
            positional_encoding=positional_encoding,
        )  # (B, N, D)
        if attention_mask is None:
            pooled = x.mean(dim=1)  # (B, D)
        else:
            keep = attention_mask.unsqueeze(-1).to(x.dtype)  # (B, N, 1)
            pooled = (x * keep).sum(dim=1) / keep.sum(dim=1).clamp(min=1.0)  # (B, D)
        logits = self.classifier(pooled)  # (B, C)
        return (logits, attentions) if output_attentions else logits

    @classmethod
    def _from_pretrained(
        cls,
        *,
        model_id: str,
        revision,
        cache_dir,
        force_download: bool,
        local_files_only: bool,
        token,
        map_location: str = "cpu",
        strict: bool = True,
        **model_kwargs,
    ):
        """Load ``model.safetensors`` strictly; unlike the mixin's default, never fall back to pickle.

        A config.json written before ``embedding_scale`` and ``head_activation`` existed lacks them: such a
        checkpoint was trained with √D and a GELU head, so it is rebuilt that way (``LEGACY_ARCHITECTURE``).
        """
        model = cls(**{**LEGACY_ARCHITECTURE, **model_kwargs})
        if os.path.isdir(model_id):
            weights_file = os.path.join(model_id, constants.SAFETENSORS_SINGLE_FILE)
            if not os.path.isfile(weights_file):
                raise FileNotFoundError(f"{model_id}: no {constants.SAFETENSORS_SINGLE_FILE} in this folder")
        else:
            weights_file = hf_hub_download(
                repo_id=model_id,
                filename=constants.SAFETENSORS_SINGLE_FILE,
                revision=revision,
                cache_dir=cache_dir,
                force_download=force_download,
                token=token,
                local_files_only=local_files_only,
            )
        try:
            state_dict = safetensors.torch.load_file(weights_file, device=str(map_location))
        except Exception as error:  # safetensors raises its own error types for corrupt files
            raise ValueError(f"{model_id}: model.safetensors is not a readable safetensors file ({error})") from None
        problems = weight_mismatches(model.state_dict(), state_dict, strict)
        if problems:
            raise ValueError(f"{model_id}: the weights do not match config.json: {problems}")
        model.load_state_dict(state_dict, strict=strict)
        return model.to(map_location)


def weight_mismatches(expected: dict, found: dict, strict: bool = True) -> str:
    """Describe, in one short line, how a checkpoint's tensors differ from the model's ('' if they fit)."""
    shapes = [k for k in expected.keys() & found.keys() if expected[k].shape != found[k].shape]
    missing = sorted(expected.keys() - found.keys()) if strict else []
    unexpected = sorted(found.keys() - expected.keys()) if strict else []
    parts = []
    if shapes:
        k = sorted(shapes)[0]
        example = f"{k} is {tuple(found[k].shape)} in the file, {tuple(expected[k].shape)} in the model"
        parts.append(f"{len(shapes)} tensors have other shapes (e.g. {example})")
    if missing:
        parts.append(f"missing: {', '.join(missing[:5])}{' …' if len(missing) > 5 else ''}")
    if unexpected:
        parts.append(f"unexpected: {', '.join(unexpected[:5])}{' …' if len(unexpected) > 5 else ''}")
    return "; ".join(parts)
