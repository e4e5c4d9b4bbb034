"""The walkthrough's steps are the model's own forward, captured on the way: they recompose to its logits, and
its Q, K, V and weights are what ``MultiHeadAttention`` computes, in Pre-LN and Post-LN blocks alike."""

import math

import pytest
import torch
from tiny import tiny_model

from transformer.explain.walkthrough import walk_through

IDS = torch.tensor([[5, 9, 2, 7, 11, 3]])
ATOL = 1e-5


LEGACY = {"embedding_scale": True, "head_activation": "gelu"}  # how checkpoints before these options were built


@pytest.fixture(params=[(True, {}), (False, {}), (True, LEGACY)], ids=["pre-ln", "post-ln", "pre-ln-legacy"])
def model(request):
    norm_first, options = request.param  # float64: recomposition errors are rounding only
    return tiny_model(seed=3, norm_first=norm_first, **options).double()


def recompose(model, walk) -> torch.Tensor:
    """The logits from the walkthrough's own steps, each step computed from the previous one's tensor."""
    x = walk.scaled_embeddings + walk.positions  # (N, D)
    scale = math.sqrt(model.d_model) if model.embedding_scale else 1.0
    assert walk.embedding_scale == model.embedding_scale and walk.head_activation == model.head_activation
    torch.testing.assert_close(walk.scaled_embeddings, walk.embeddings * scale, atol=ATOL, rtol=0)
    torch.testing.assert_close(x, walk.embedded, atol=ATOL, rtol=0)
    for block, steps in zip(model.layers, walk.layers, strict=True):
        torch.testing.assert_close(steps.block_input, x, atol=ATOL, rtol=0)
        merged = steps.heads.transpose(0, 1).reshape(x.shape)  # (H, N, d_k) -> (N, D): the heads side by side
        torch.testing.assert_close(merged, steps.merged, atol=ATOL, rtol=0)
        attended = block.attention.W_o(merged)
        residual = x + attended if block.norm_first else block.norm1(x + attended)
        torch.testing.assert_close(residual, steps.after_attention, atol=ATOL, rtol=0)
        ffn = block.feed_forward.linear2(torch.nn.functional.gelu(block.feed_forward.linear1(steps.ffn_input)))
        torch.testing.assert_close(ffn, steps.ffn_output, atol=ATOL, rtol=0)
        x = residual + ffn if block.norm_first else block.norm2(residual + ffn)
        torch.testing.assert_close(x, steps.block_output, atol=ATOL, rtol=0)
    torch.testing.assert_close(model.norm(x), walk.final_norm, atol=ATOL, rtol=0)
    pooled = walk.final_norm.mean(dim=0)  # (D,): no padding, so every token
    torch.testing.assert_close(pooled, walk.pooled, atol=ATOL, rtol=0)
    head = model.classifier
    activation = {"relu": torch.relu, "gelu": torch.nn.functional.gelu}[model.head_activation]
    return head[3](activation(head[0](pooled)))


def test_the_steps_recompose_to_the_models_logits(model):
    walk = walk_through(model, IDS)
    logits = model(IDS)[0]
    torch.testing.assert_close(walk.logits, logits, atol=ATOL, rtol=0)
    torch.testing.assert_close(recompose(model, walk), logits, atol=ATOL, rtol=0)
    torch.testing.assert_close(walk.probabilities.sum(), torch.tensor(1.0, dtype=logits.dtype))


def test_queries_keys_values_and_weights_are_what_the_attention_computes(model):
    walk = walk_through(model, IDS)
    _, attentions = model(IDS, output_attentions=True)
    for block, steps, weights in zip(model.layers, walk.layers, attentions, strict=True):
        attention, h = block.attention, steps.attention_input[None]  # (1, N, D)
        expected = block.norm1(steps.block_input) if block.norm_first else steps.block_input
        torch.testing.assert_close(steps.attention_input, expected, atol=ATOL, rtol=0)
        for captured, projection in (
            (steps.queries, attention.W_q),
            (steps.keys, attention.W_k),
            (steps.values, attention.W_v),
        ):
            torch.testing.assert_close(captured, attention.split_heads(projection(h))[0], atol=ATOL, rtol=0)
        torch.testing.assert_close(steps.scaled, steps.scores / math.sqrt(attention.d_k), atol=ATOL, rtol=0)
        torch.testing.assert_close(steps.scaled.softmax(dim=-1), weights[0], atol=ATOL, rtol=0)
        torch.testing.assert_close(steps.weights, weights[0], atol=ATOL, rtol=0)
        assert steps.queries.shape == (model.num_heads, IDS.size(1), model.d_model // model.num_heads)
        assert steps.ffn_hidden.shape == (IDS.size(1), block.feed_forward.linear1.out_features)


def test_the_pass_leaves_no_hook_behind(model):
    before = [len(module._forward_hooks) + len(module._forward_pre_hooks) for module in model.modules()]
    walk_through(model, IDS)
    assert [len(m._forward_hooks) + len(m._forward_pre_hooks) for m in model.modules()] == before


def test_a_model_in_training_mode_is_refused():
    with pytest.raises(ValueError, match="eval"):
        walk_through(tiny_model().train(), IDS)
