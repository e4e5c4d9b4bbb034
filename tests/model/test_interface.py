"""The one model interface (``transformer.interface.Classifier``): both kinds of model satisfy it, call for call, and
the explanations and the views ask a model only through it: what a model can do is data, not its class."""

import ast
import inspect
import math
import re
from pathlib import Path

import pytest
import torch
from tiny import tiny_model

from transformer import interface
from transformer.hub import hooks
from transformer.interface import Classifier
from transformer.loading import load_model

ROOT = Path(__file__).resolve().parents[2]
MEMBERS = [name for name in dir(Classifier) if not name.startswith("_") or name == "__call__"]
METHODS = [name for name in MEMBERS if callable(getattr(Classifier, name))]
ATTRIBUTES = [
    *Classifier.__annotations__,
    *(name for name in MEMBERS if isinstance(getattr(Classifier, name), property)),
]


@pytest.fixture(scope="module", params=["tutorial", "bert", "distilbert", "roberta"])
def model(request, hub_model_dirs):
    if request.param == "tutorial":
        return tiny_model(seed=3)
    return load_model(hub_model_dirs[request.param], device="cpu").model


def parameters(function) -> list[tuple[str, object]]:
    """(name, kind) of each parameter but ``self``."""
    return [(p.name, p.kind) for p in inspect.signature(function).parameters.values() if p.name != "self"]


def test_each_kind_of_model_has_every_member_with_the_protocols_parameters(model):
    assert isinstance(model, Classifier)
    assert ATTRIBUTES and "capabilities" in ATTRIBUTES and "query_key" in METHODS
    for name in ATTRIBUTES:
        assert hasattr(model, name), name
    for name in METHODS:
        own = type(model).forward if name == "__call__" else getattr(type(model), name)
        assert parameters(own) == parameters(getattr(Classifier, name)), name
    assert model.capabilities <= interface.CAPABILITIES


def test_the_tutorial_model_alone_has_the_tutorials_blocks_and_sinusoids(model):
    tutorial = model.pooling == "mean"
    expected = {interface.TUTORIAL_BLOCKS, interface.SINUSOIDAL_POSITIONS} if tutorial else set()
    assert model.capabilities == expected
    assert (model.model_type == "tutorial") == tutorial  # what a view's "does not apply to this ..." names


def test_query_key_gives_the_attention_the_model_returns(model):
    ids = torch.tensor([[2, 7, 11, 19, 23, 3]])  # (1, N)
    _, attentions = model(ids, output_attentions=True)
    for layer in range(model.num_layers):
        queries, keys = model.query_key(ids, layer)  # (H, N, d_k) each
        weights = (queries @ keys.transpose(-2, -1) / math.sqrt(queries.size(-1))).softmax(-1)  # (H, N, N)
        torch.testing.assert_close(weights, attentions[layer][0], atol=1e-5, rtol=1e-4)


def test_layer_norms_are_the_norms_each_block_runs_where_norm_first_says(model):
    ids = torch.tensor([[2, 7, 11, 19, 23, 3]])  # (1, N)
    states = model.hidden_states(ids)  # (1, N, D) each
    seen: dict[torch.nn.Module, tuple[int, torch.Tensor, torch.Tensor]] = {}  # norm -> (when it ran, input, output)

    def keep(module, args, output):
        seen[module] = (len(seen), args[0], output)

    norms = [norm for layer in range(model.num_layers) for norm in model.layer_norms(layer)]
    with hooks.added([(norm, keep, "post") for norm in norms]):
        model(ids)
    assert len(seen) == 2 * model.num_layers and all(isinstance(norm, torch.nn.LayerNorm) for norm in norms)
    assert model.norm_first == (model.model_type == "tutorial")  # the tiny tutorial model is Pre-LN, BERT's Post-LN
    for layer in range(model.num_layers):
        (first_ran, first_in, _), (second_ran, _, second_out) = (seen[norm] for norm in model.layer_norms(layer))
        assert first_ran < second_ran  # the attention's, then the feed-forward's
        if model.norm_first:  # the first norm reads the block's input
            torch.testing.assert_close(first_in, states[layer])
        else:  # the second norm's output is the block's output
            torch.testing.assert_close(second_out, states[layer + 1])


def sniffs(path: Path) -> list[str]:
    """Each ``isinstance(model, ...)``, ``hasattr(model, ...)``, ``getattr(model, ...)`` and class annotation of a
    model in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        asks = isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("isinstance", "hasattr", "getattr")
        if asks and node.args and "model" in ast.unparse(node.args[0]):
            found.append(f"{path.name}:{node.lineno} {ast.unparse(node)}")
        annotation = ast.unparse(node.annotation) if isinstance(node, ast.arg) and node.annotation else ""
        if re.search(r"\b(TransformerClassifier|HubClassifier)\b", annotation):
            found.append(f"{path.name}:{node.lineno} {node.arg}: {annotation}")
    return found


def test_explanations_and_views_ask_a_model_only_through_the_interface():
    files = sorted((ROOT / "transformer" / "explain").rglob("*.py")) + sorted(
        (ROOT / "transformer" / "explorer").rglob("*.py")
    )
    assert len(files) > 40
    assert [found for path in files for found in sniffs(path)] == []


def test_contributing_names_every_member_of_the_interface():
    guide = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    section = guide[guide.index("## One interface") :]
    section = section[: section.index("\n## ", 1)]
    named = set(re.findall(r"`([a-z_]+)", section))
    assert {name for name in MEMBERS if name != "__call__"} - named == set()
