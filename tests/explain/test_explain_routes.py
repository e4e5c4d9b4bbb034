"""The Routes decomposition and graph: the parts add up to the forward pass's stream at every block, the importances
are shares, a silenced head or an identity block leaves the edges it should, and a head built to copy a token
carries the route; on the tiny tutorial model (Pre-LN and Post-LN), the bundled model and a tiny BERT, DistilBERT and
RoBERTa."""

from pathlib import Path

import pytest
import torch
from tiny import tiny_model

from transformer.explain import routes as routes_module
from transformer.explain.route_graph import kept_edges, routes
from transformer.explain.routes import decompose, heads_proximity, importance, proximity
from transformer.loading import load_model

ROOT = Path(__file__).resolve().parents[2]
IDS = torch.tensor([[2, 7, 11, 19, 23, 3, 9]])  # (1, N)
HUB_SENTENCE = "a wonderful film with great acting"


@pytest.fixture(scope="module", params=["tutorial", "post-ln", "bundled", "bert", "distilbert", "roberta"])
def sentence(request, hub_model_dirs):
    """(a model in eval mode, one sentence's ids (1, N))."""
    if request.param == "tutorial":
        return with_random_norms(tiny_model(seed=1)), IDS
    if request.param == "post-ln":
        return with_random_norms(tiny_model(seed=2, norm_first=False)), IDS
    folder = ROOT / "assets" / "model" if request.param == "bundled" else hub_model_dirs[request.param]
    loaded = load_model(folder, device="cpu")
    model = loaded.model if request.param == "bundled" else with_random_norms(loaded.model)  # the bundled: trained
    return model, torch.tensor([loaded.tokenizer.encode(HUB_SENTENCE).ids])


def with_random_norms(model: torch.nn.Module) -> torch.nn.Module:
    """``model`` with every LayerNorm's γ and β drawn at random: a fresh model's are 1 and 0, which would hide a
    wrong γ or β in the linearised norms."""
    generator = torch.Generator().manual_seed(5)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, torch.nn.LayerNorm):
                module.weight.copy_(1 + 0.3 * torch.randn(module.weight.shape, generator=generator))
                module.bias.copy_(0.3 * torch.randn(module.bias.shape, generator=generator))
    return model


def test_the_parts_add_up_to_the_stream_at_every_block(sentence):
    model, ids = sentence
    parts, stages, logits = decompose(model, ids)
    assert len(parts) == model.num_layers and stages.shape == (model.num_layers + 1, ids.size(1), model.d_model)
    states = model.hidden_states(ids)  # (1, N, D) each: the forward pass's own stream
    torch.testing.assert_close(logits, model(ids))
    for layer, block in enumerate(parts):
        total = block.residual + block.heads_sum() + block.bias + block.feed_forward  # (N, D)
        torch.testing.assert_close(total, states[layer + 1][0], atol=1e-5, rtol=0)
        assert block.heads_sum().abs().max() > 1e-3  # the heads' parts are a real share, not folded into the rest


@pytest.mark.parametrize("norm", ["l1", "l2"])
def test_importances_at_every_sum_are_non_negative_and_add_up_to_one(sentence, norm):
    model, ids = sentence
    for block in decompose(model, ids)[0]:
        shares = importance(block, norm)
        assert min(shares.residual.min(), shares.heads.min(), shares.bias.min(), shares.feed_forward.min()) >= 0
        total = shares.residual + shares.heads.sum(dim=(0, 2)) + shares.bias + shares.feed_forward  # (N,)
        torch.testing.assert_close(total, torch.ones_like(total))


@pytest.mark.parametrize("norm", ["l1", "l2"])
def test_the_heads_proximities_are_those_of_every_part_made_whole(sentence, norm):
    model, ids = sentence
    for block in decompose(model, ids)[0]:
        alpha = block.weights * block.scale[None, :, None]  # (H, N, N)
        parts = alpha[..., None] * block.moved()[:, None]  # (H, N, N, D): every part's vector, as a small model allows
        expected = proximity(block.output[None, :, None], parts, norm)  # (H, N, N)
        torch.testing.assert_close(heads_proximity(block, norm), expected, atol=2e-5, rtol=1e-4)
        assert expected.max() > 0


def test_the_l1_distances_taken_a_few_queries_at_a_time_are_those_taken_at_once(monkeypatch):
    block = decompose(tiny_model(seed=1), IDS)[0][1]
    whole = importance(block).heads
    monkeypatch.setattr(routes_module, "QUERY_CHUNK_BYTES", 2 * 4 * 2 * IDS.size(1) * 16)  # two queries a chunk
    torch.testing.assert_close(importance(block).heads, whole)


def test_a_head_whose_output_projection_is_zero_has_no_edges():
    model = tiny_model(seed=1)
    width = model.d_model // model.num_heads
    with torch.no_grad():
        model.layers[0].attention.W_o.weight[:, :width] = 0.0  # head 1 of layer 1 adds nothing
    found = routes(model, IDS)
    assert found.heads[0, 0].max() == 0 and found.head_share[0, 0] == 0
    assert found.heads[0, 1].max() > 0.01  # its neighbour still has edges
    edges = kept_edges(found, 0.0)
    assert not [e for e in edges if e.kind == "head" and (e.layer, e.head) == (0, 0) and e.importance > 0]


def test_blocks_that_are_identities_give_residual_edges_only():
    model = tiny_model(seed=1)
    with torch.no_grad():
        for block in model.layers:
            for linear in (block.attention.W_o, block.feed_forward.linear2):
                linear.weight.zero_()
                linear.bias.zero_()
    found = routes(model, IDS)
    torch.testing.assert_close(found.residual, torch.ones_like(found.residual))
    kinds = {edge.kind for edge in kept_edges(found, 0.02)}
    assert kinds == {"residual", "pooling"}


COPIED = 5  # the token id the copying head attends to
POSITION = 3  # where it sits in ``COPY_IDS``
COPY_IDS = torch.tensor([[8, 12, 17, COPIED, 21, 26, 30]])


def copying_model() -> torch.nn.Module:
    """One layer of two heads: head 1 attends from every query to token ``COPIED`` and copies its value, loudly;
    head 2, W_o's bias and the feed-forward add nothing."""
    model = tiny_model(seed=4, num_layers=1, use_positional_encoding=False)
    block, width = model.layers[0], model.d_model // model.num_heads
    with torch.no_grad():
        model.embedding.weight[COPIED] = 0.0
        model.embedding.weight[COPIED, :2] = torch.tensor([3.0, -3.0])  # after LayerNorm: (√D/2)·(1, −1, 0, ...)
        block.norm1.weight.fill_(1.0)
        block.norm1.bias.zero_()
        attention = block.attention
        for linear in (attention.W_q, attention.W_k, attention.W_v, attention.W_o, block.feed_forward.linear2):
            linear.weight.zero_()
            linear.bias.zero_()
        attention.W_q.bias[0] = 20.0  # head 1's every query: (20, 0, ...)
        attention.W_k.weight[0, :2] = torch.tensor([1.0, -1.0])  # its key: large for COPIED only
        attention.W_v.weight[:width, :width] = torch.eye(width)
        attention.W_o.weight[:width, :width] = 10 * torch.eye(width)
    return model


def test_a_head_built_to_copy_a_token_carries_the_route():
    model = copying_model()
    _, attentions = model(COPY_IDS, output_attentions=True)
    assert attentions[0][0, 0, :, POSITION].min() > 0.99  # it does copy: every query reads the token
    found = routes(model, COPY_IDS)
    assert found.head_share[0, 0] > 0.3 and found.head_share[0, 1] == 0
    assert int(found.flow[0].argmax()) == POSITION  # the most route starts at the copied token
    heads = [edge for edge in kept_edges(found, 0.05) if edge.kind == "head"]
    assert heads and {(edge.head, edge.source) for edge in heads} == {(0, POSITION)}


def test_kept_edges_reach_down_from_the_class_and_pass_the_threshold():
    found = routes(tiny_model(seed=1), IDS)
    edges = kept_edges(found, 0.05)
    assert edges and min(edge.importance for edge in edges) >= 0.05
    reached = {(found.residual.size(0), edge.source) for edge in edges if edge.kind == "pooling"}
    for edge in sorted((e for e in edges if e.kind != "pooling"), key=lambda e: -e.layer):
        assert (edge.layer + 1, edge.target) in reached  # into a position some kept edge leaves from above
        reached.add((edge.layer, edge.source))
    assert len(kept_edges(found, 0.2)) < len(edges)


def test_the_flow_is_the_importances_composed_from_the_class_down():
    found = routes(tiny_model(seed=1), IDS)
    torch.testing.assert_close(found.flow[-1], found.pooling)
    torch.testing.assert_close(found.pooling.sum(), torch.tensor(1.0))
    last = found.residual.size(0) - 1
    through = found.heads[last] * found.pooling[None, :, None]  # (H, N, N)
    torch.testing.assert_close(found.head_share[last], through.sum(dim=(1, 2)))
    expected = found.pooling * (found.residual[last] + found.feed_forward[last]) + through.sum(dim=(0, 1))
    torch.testing.assert_close(found.flow[last], expected)


def test_a_model_that_reads_its_first_token_gives_that_token_the_whole_pooling(hub_model_dirs):
    loaded = load_model(hub_model_dirs["bert"], device="cpu")
    found = routes(loaded.model, torch.tensor([loaded.tokenizer.encode(HUB_SENTENCE).ids]))
    assert found.pooling[0] == 1 and found.pooling[1:].abs().max() == 0


def test_an_unknown_norm_is_refused():
    with pytest.raises(ValueError, match="norm must be one of l2, l1"):
        routes(tiny_model(), IDS, norm="l3")
