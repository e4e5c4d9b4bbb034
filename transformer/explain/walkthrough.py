"""One forward pass, step by step, as the tutorial walks through it: every intermediate tensor of the model's
own forward on one sentence, captured on the way by forward hooks on its modules (not recomputed beside it).

The steps: the token embedding (×√D in a model with ``embedding_scale``), the positional-encoding rows and their
sum; per layer, the block input and its LayerNorm, each head's Q, K and V, the heads concatenated and W_o, the
residual add, the feed-forward network (d_ff, GELU) and its residual; then the final LayerNorm, the mean pooling
and the classifier's two layers (ReLU or GELU between them, as the model's ``head_activation`` says). Only what no
module outputs is derived from what was captured, as the model's own functions compute it: QKᵀ and QKᵀ/√d_k from Q
and K (``scaled_dot_product_attention`` works them out inline), and each head's weights × V.

Shape letters: N = tokens, D = d_model, H = heads, d_k = D / H, F = d_ff, C = classes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from .run import check_sentence


@dataclass(frozen=True)
class LayerSteps:
    """One encoder block's intermediate tensors, for one sentence.

    Shape:
        block_input, attention_input, merged, attention_output, after_attention, ffn_input, ffn_output,
        block_output: (N, D); queries, keys, values, heads: (H, N, d_k); scores, scaled, weights: (H, N, N);
        ffn_hidden, ffn_activated: (N, F).
    """

    block_input: torch.Tensor
    attention_input: torch.Tensor  # LayerNorm(x) in a Pre-LN block, x itself in a Post-LN one
    queries: torch.Tensor
    keys: torch.Tensor
    values: torch.Tensor
    scores: torch.Tensor  # QKᵀ
    scaled: torch.Tensor  # QKᵀ / √d_k
    weights: torch.Tensor  # softmax of the scaled scores, as the model returned them
    heads: torch.Tensor  # weights × V
    merged: torch.Tensor  # the heads concatenated: W_o's input
    attention_output: torch.Tensor  # W_o's output
    after_attention: torch.Tensor  # the residual stream after the attention sub-layer
    ffn_input: torch.Tensor
    ffn_hidden: torch.Tensor  # Linear(D, F)
    ffn_activated: torch.Tensor  # GELU
    ffn_output: torch.Tensor  # Linear(F, D)
    block_output: torch.Tensor


@dataclass(frozen=True)
class Walkthrough:
    """The whole pass.

    Shape:
        token_ids: (N,); embeddings, scaled_embeddings, positions, embedded, final_norm: (N, D);
        pooled: (D,); hidden, activated: (D / 2,); logits, probabilities: (C,).
    """

    token_ids: torch.Tensor
    embeddings: torch.Tensor  # the embedding table's rows
    scaled_embeddings: torch.Tensor  # what enters the positional encoding: × √D with embedding_scale, else the rows
    positions: torch.Tensor  # the sinusoidal table's rows for positions 0..N-1
    embedded: torch.Tensor  # their sum: the first block's input
    layers: list[LayerSteps]
    final_norm: torch.Tensor
    pooled: torch.Tensor  # the mean over the real tokens
    hidden: torch.Tensor  # the classifier's first layer
    activated: torch.Tensor  # its activation (head_activation)
    logits: torch.Tensor
    probabilities: torch.Tensor
    label_names: list[str]  # the classes, in the logits' order
    pre_ln: bool  # LayerNorm before each sub-layer (this model's kind), or after each residual add (Post-LN)
    embedding_scale: bool  # the lookup is multiplied by √D before the positional encoding (older checkpoints)
    head_activation: str  # the classifier head's non-linearity: "relu" (the tutorial's) or "gelu"


class _Recorder:
    """Forward hooks that keep what named modules take in or give out during one pass, removed on exit."""

    def __init__(self):
        self.seen: dict[str, torch.Tensor] = {}
        self.handles = []

    def output(self, name: str, module: torch.nn.Module) -> None:
        self.handles.append(module.register_forward_hook(lambda _m, _i, out: self._keep(name, out)))

    def input(self, name: str, module: torch.nn.Module) -> None:
        self.handles.append(module.register_forward_pre_hook(lambda _m, args: self._keep(name, args[0])))

    def _keep(self, name: str, value) -> None:
        tensor = value[0] if isinstance(value, tuple) else value  # a block returns (x, weights)
        self.seen[name] = tensor[0].detach().cpu()  # the batch of one: (1, ...) -> (...), kept on the CPU

    def __enter__(self):
        return self

    def __exit__(self, *_):
        for handle in self.handles:
            handle.remove()


def _watch(recorder: _Recorder, model) -> None:
    """Hook every module whose input or output is a step."""
    recorder.output("embeddings", model.embedding)
    recorder.input("scaled_embeddings", model.positional_encoding)
    recorder.output("embedded", model.positional_encoding)
    for i, block in enumerate(model.layers):
        recorder.input(f"{i}.block_input", block)
        for name in ("W_q", "W_k", "W_v"):
            recorder.output(f"{i}.{name}", getattr(block.attention, name))
        recorder.input(f"{i}.merged", block.attention.W_o)
        recorder.output(f"{i}.attention_output", block.attention.W_o)
        recorder.output(f"{i}.norm1", block.norm1)
        recorder.input(f"{i}.ffn_input", block.feed_forward)
        recorder.output(f"{i}.ffn_hidden", block.feed_forward.linear1)
        recorder.output(f"{i}.ffn_activated", block.feed_forward.activation)
        recorder.output(f"{i}.ffn_output", block.feed_forward.linear2)
        recorder.input(f"{i}.norm2", block.norm2)
        recorder.output(f"{i}.block_output", block)
    recorder.output("final_norm", model.norm)
    recorder.input("pooled", model.classifier)
    recorder.output("hidden", model.classifier[0])
    recorder.output("activated", model.classifier[1])


def _layer_steps(seen: dict, i: int, block, weights: torch.Tensor) -> LayerSteps:
    """Layer ``i``'s steps from what the hooks kept and the weights the model returned, (H, N, N)."""
    attention = block.attention
    H, d_k = attention.num_heads, attention.d_k
    split = {
        name: seen[f"{i}.{name}"].view(-1, H, d_k).transpose(0, 1) for name in ("W_q", "W_k", "W_v")
    }  # (H, N, d_k)
    scores = split["W_q"] @ split["W_k"].transpose(-2, -1)  # (H, N, N)
    pre_ln = block.norm_first
    return LayerSteps(
        block_input=seen[f"{i}.block_input"],
        attention_input=seen[f"{i}.norm1"] if pre_ln else seen[f"{i}.block_input"],
        queries=split["W_q"],
        keys=split["W_k"],
        values=split["W_v"],
        scores=scores,
        scaled=scores / math.sqrt(d_k),
        weights=weights,
        heads=weights @ split["W_v"],  # (H, N, d_k)
        merged=seen[f"{i}.merged"],
        attention_output=seen[f"{i}.attention_output"],
        after_attention=seen[f"{i}.norm2"] if pre_ln else seen[f"{i}.norm1"],
        ffn_input=seen[f"{i}.ffn_input"],
        ffn_hidden=seen[f"{i}.ffn_hidden"],
        ffn_activated=seen[f"{i}.ffn_activated"],
        ffn_output=seen[f"{i}.ffn_output"],
        block_output=seen[f"{i}.block_output"],
    )


@torch.no_grad()
def walk_through(model, input_ids: torch.Tensor) -> Walkthrough:
    """Run the model once on one sentence and keep every step of the pass.

    Args:
        model: a ``TransformerClassifier`` in eval mode.
        input_ids: one sentence, no padding.

    Shape:
        input_ids: (1, N).

    Returns:
        A ``Walkthrough`` whose logits are the model's own, every tensor on the CPU.
    """
    check_sentence(model, input_ids)
    with _Recorder() as recorder:
        _watch(recorder, model)
        logits, attentions = model(input_ids, output_attentions=True)  # (1, C), L x (1, H, N, N)
    seen = recorder.seen
    n = input_ids.size(1)
    return Walkthrough(
        token_ids=input_ids[0].cpu(),
        embeddings=seen["embeddings"],
        scaled_embeddings=seen["scaled_embeddings"],
        positions=model.positional_encoding.pe[0, :n].to(seen["embedded"].dtype).cpu(),  # (N, D)
        embedded=seen["embedded"],
        layers=[_layer_steps(seen, i, block, attentions[i][0].cpu()) for i, block in enumerate(model.layers)],
        final_norm=seen["final_norm"],
        pooled=seen["pooled"],
        hidden=seen["hidden"],
        activated=seen["activated"],
        logits=logits[0].cpu(),
        probabilities=logits[0].softmax(dim=-1).cpu(),
        label_names=list(model.label_names),
        pre_ln=model.layers[0].norm_first,
        embedding_scale=model.embedding_scale,
        head_activation=model.head_activation,
    )
