"""load_model on transformers checkpoints: from a folder, from an offline Hugging Face cache, the one-line errors."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import transformers
from hub_checkpoints import COMMIT, family_tokenizer, hub_classifier, lay_out_hub_cache, write_hub_checkpoint

from transformer.hub.adapter import HubClassifier
from transformer.loading import ModelLoadError, load_model

pytestmark = pytest.mark.slow  # many seconds: left out of make test-fast

REPO_ROOT = Path(__file__).resolve().parents[2]
SENTENCE = "a wonderful film"
FILES = ["config.json", "model.safetensors", "tokenizer.json"]


def one_line_error(source, **kwargs) -> str:
    """The ModelLoadError ``load_model(source)`` raises, checked to be one line."""
    with pytest.raises(ModelLoadError) as caught:
        load_model(source, device="cpu", **kwargs)
    message = str(caught.value)
    assert "\n" not in message and str(source).split("/")[-1] in message
    return message


def copy_checkpoint(source: Path, folder: Path) -> Path:
    return Path(shutil.copytree(source, folder))


@pytest.mark.parametrize("family", ["bert", "distilbert", "roberta"])
def test_loads_a_folder(hub_model_dirs, family):
    folder = hub_model_dirs[family]
    loaded = load_model(folder, device="cpu")
    assert isinstance(loaded.model, HubClassifier) and not loaded.model.training
    assert loaded.folder == folder and loaded.metrics == {} and loaded.source == str(folder)
    assert loaded.model.hf_model.config.model_type == family
    assert loaded.model.hf_model.config._attn_implementation == "eager"
    ids = torch.tensor([loaded.tokenizer.encode(SENTENCE).ids])
    assert loaded.model(ids).shape == (1, 2)


HUB_SCRIPT = r"""
import json, sys
import torch
from transformer.loading import ModelLoadError, load_model

results = {}
for family in sys.argv[1].split(","):
    loaded = load_model(f"owner/tiny-{family}", device="cpu")
    ids = torch.tensor([loaded.tokenizer.encode(sys.argv[2]).ids])
    results[family] = [type(loaded.model).__name__, loaded.source, loaded.model(ids)[0].tolist()]
for name in ("owner/pickle-only", "owner/tiny-gpt2"):
    try:
        load_model(name, device="cpu")
        results[name] = "loaded"
    except ModelLoadError as error:
        results[name] = str(error)
print(json.dumps(results))
"""


def test_loads_hub_ids_from_an_offline_cache(hub_model_dirs, tmp_path, gpt2_dir):
    hf_home = tmp_path / "hf-home"
    for family, folder in hub_model_dirs.items():
        lay_out_hub_cache(hf_home / "hub", f"owner/tiny-{family}", [folder / name for name in FILES])
    pickle_dir = pickle_only(hub_model_dirs["bert"], tmp_path / "pickle")
    lay_out_hub_cache(hf_home / "hub", "owner/pickle-only", sorted(pickle_dir.iterdir()))
    lay_out_hub_cache(hf_home / "hub", "owner/tiny-gpt2", [gpt2_dir / "config.json"])  # refused before weights
    env = {**os.environ, "HF_HOME": str(hf_home), "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO_ROOT)}
    env.pop("HF_HUB_CACHE", None)
    completed = subprocess.run(
        [sys.executable, "-c", HUB_SCRIPT, ",".join(hub_model_dirs), SENTENCE],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr
    results = json.loads(completed.stdout.strip().splitlines()[-1])
    for family, folder in hub_model_dirs.items():
        loaded = load_model(folder, device="cpu")
        ids = torch.tensor([loaded.tokenizer.encode(SENTENCE).ids])
        name, source, logits = results[family]
        assert (name, source) == ("HubClassifier", f"owner/tiny-{family}")
        torch.testing.assert_close(torch.tensor(logits), loaded.model(ids)[0])
    assert "owner/pickle-only" in results["owner/pickle-only"] and "only pickle weights" in results["owner/pickle-only"]
    assert "'gpt2'" in results["owner/tiny-gpt2"] and "bert, distilbert, roberta" in results["owner/tiny-gpt2"]
    assert (hf_home / "hub" / "models--owner--tiny-bert" / "snapshots" / COMMIT).is_dir()


@pytest.fixture
def gpt2_dir(tmp_path) -> Path:
    """A tiny random GPT2ForSequenceClassification saved with safetensors and a tokenizer: a family not supported."""
    torch.manual_seed(0)
    tokenizer = family_tokenizer("roberta")
    config = transformers.GPT2Config(
        vocab_size=tokenizer.get_vocab_size(), n_embd=16, n_layer=2, n_head=2, n_positions=64
    )
    folder = tmp_path / "gpt2"
    transformers.GPT2ForSequenceClassification(config).save_pretrained(folder)
    tokenizer.save(str(folder / "tokenizer.json"))
    return folder


def pickle_only(source: Path, folder: Path) -> Path:
    """``source``'s checkpoint with its weights as pytorch_model.bin (a pickle) instead of model.safetensors."""
    folder = copy_checkpoint(source, folder)
    (folder / "model.safetensors").unlink()
    torch.save({"bert.embeddings.word_embeddings.weight": torch.zeros(2, 2)}, folder / "pytorch_model.bin")
    return folder


def test_another_family_names_the_ones_that_work(gpt2_dir):
    message = one_line_error(gpt2_dir)
    assert "model_type 'gpt2'" in message and "bert, distilbert, roberta" in message


def test_without_the_extra_it_says_what_to_install(hub_model_dirs, monkeypatch):
    monkeypatch.setitem(sys.modules, "transformers", None)  # ``import transformers`` now fails
    with pytest.raises(ImportError):
        import transformers  # noqa: F401
    message = one_line_error(hub_model_dirs["distilbert"])
    assert "needs the transformers extra: pip install -r requirements-hub.txt" in message


def test_pickle_weights_are_never_loaded(hub_model_dirs, tmp_path, monkeypatch):
    folder = pickle_only(hub_model_dirs["bert"], tmp_path / "pickle")
    monkeypatch.setattr(torch, "load", lambda *a, **k: pytest.fail("torch.load was called"))
    assert "missing model.safetensors: only pickle weights (pytorch_model.bin)" in one_line_error(folder)


def test_weights_that_do_not_fit_the_config(hub_model_dirs, tmp_path):
    folder = copy_checkpoint(hub_model_dirs["roberta"], tmp_path / "three-layers")
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "num_hidden_layers": 3}))
    assert "does not hold every tensor of a RobertaForSequenceClassification" in one_line_error(folder)


def test_a_base_model_without_its_classification_head(tmp_path):
    tokenizer = family_tokenizer("bert")
    classifier = hub_classifier("bert", tokenizer.get_vocab_size())
    folder = tmp_path / "base"
    classifier.bert.save_pretrained(folder)  # a BertModel: config.json says bert, no classifier.* tensors
    tokenizer.save(str(folder / "tokenizer.json"))
    assert "is it a sequence-classification checkpoint?" in one_line_error(folder)


def test_a_tokenizer_that_adds_no_cls_or_sep(tmp_path):
    folder = write_hub_checkpoint(tmp_path / "no-template", "distilbert")
    tokenizer = json.loads((folder / "tokenizer.json").read_text())
    (folder / "tokenizer.json").write_text(json.dumps({**tokenizer, "post_processor": None}))
    assert "no post-processor" in one_line_error(folder)


def test_a_tokenizer_with_more_tokens_than_the_model(tmp_path):
    tokenizer = family_tokenizer("bert")
    folder = tmp_path / "small-vocab"
    hub_classifier("bert", vocab_size=20).save_pretrained(folder)  # 20 embedding rows, config and weights agree
    tokenizer.save(str(folder / "tokenizer.json"))
    assert f"has {tokenizer.get_vocab_size()} tokens but the model's embedding has 20 rows" in one_line_error(folder)


def test_our_own_format_still_loads(tiny_model_dir):
    assert type(load_model(tiny_model_dir, device="cpu").model).__name__ == "TransformerClassifier"


# Sharded checkpoints: model.safetensors.index.json and the shards it names, as save_pretrained(max_shard_size=...)
# writes them for larger models.

INDEX = "model.safetensors.index.json"


def shard_checkpoint(source: Path, folder: Path) -> Path:
    """``source``'s checkpoint saved again in shards of 20 KB (two or three for these tiny models)."""
    model = transformers.AutoModelForSequenceClassification.from_pretrained(source, use_safetensors=True)
    model.save_pretrained(folder, max_shard_size="20KB")
    shutil.copyfile(source / "tokenizer.json", folder / "tokenizer.json")
    assert not (folder / "model.safetensors").exists() and len(shards_of(folder)) >= 2
    return folder


def shards_of(folder: Path) -> list[str]:
    return sorted(set(json.loads((folder / INDEX).read_text())["weight_map"].values()))


@pytest.fixture(scope="module")
def sharded_dirs(hub_model_dirs, tmp_path_factory) -> dict[str, Path]:
    """{family: the ``hub_model_dirs`` checkpoint in shards}; shared by the module, so copy before changing."""
    root = tmp_path_factory.mktemp("sharded")
    return {family: shard_checkpoint(folder, root / family) for family, folder in hub_model_dirs.items()}


def logits(loaded) -> torch.Tensor:
    return loaded.model(torch.tensor([loaded.tokenizer.encode(SENTENCE).ids]))[0]


@pytest.mark.parametrize("family", ["bert", "distilbert", "roberta"])
def test_a_sharded_folder_loads_as_the_single_file_does(hub_model_dirs, sharded_dirs, family):
    loaded = load_model(sharded_dirs[family], device="cpu")
    assert isinstance(loaded.model, HubClassifier) and loaded.folder == sharded_dirs[family]
    torch.testing.assert_close(logits(loaded), logits(load_model(hub_model_dirs[family], device="cpu")))


SHARDED_HUB_SCRIPT = r"""
import json, sys
import torch
from transformer.loading import ModelLoadError, load_model

results = {}
for name in sys.argv[1].split(","):
    try:
        loaded = load_model(name, device="cpu")
        ids = torch.tensor([loaded.tokenizer.encode(sys.argv[2]).ids])
        results[name] = [loaded.source, str(loaded.folder), loaded.model(ids)[0].tolist()]
    except ModelLoadError as error:
        results[name] = str(error)
print(json.dumps(results))
"""


def test_sharded_hub_ids_load_from_an_offline_cache(hub_model_dirs, sharded_dirs, tmp_path):
    hub = tmp_path / "hf-home" / "hub"
    for family, folder in sharded_dirs.items():
        lay_out_hub_cache(hub, f"owner/sharded-{family}", sorted(folder.iterdir()))
    bert = sorted(sharded_dirs["bert"].iterdir())
    lay_out_hub_cache(hub, "owner/missing-shard", [path for path in bert if not path.name.startswith("model-00002")])
    escaping = copy_checkpoint(sharded_dirs["bert"], tmp_path / "escaping")
    point_a_shard_at(escaping, "../model-00002-of-00002.safetensors")
    lay_out_hub_cache(hub, "owner/escaping-shard", sorted(escaping.iterdir()))
    env = {**os.environ, "HF_HOME": str(hub.parent), "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO_ROOT)}
    env.pop("HF_HUB_CACHE", None)
    names = [*(f"owner/sharded-{family}" for family in sharded_dirs), "owner/missing-shard", "owner/escaping-shard"]
    completed = subprocess.run(
        [sys.executable, "-c", SHARDED_HUB_SCRIPT, ",".join(names), SENTENCE],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr
    results = json.loads(completed.stdout.strip().splitlines()[-1])
    for family, folder in hub_model_dirs.items():
        source, snapshot, hub_logits = results[f"owner/sharded-{family}"]
        assert source == f"owner/sharded-{family}" and Path(snapshot).name == COMMIT
        assert (Path(snapshot) / INDEX).is_file() and not (Path(snapshot) / "model.safetensors").exists()
        torch.testing.assert_close(torch.tensor(hub_logits), logits(load_model(folder, device="cpu")))
    missing = results["owner/missing-shard"]
    assert "\n" not in missing and "owner/missing-shard" in missing
    assert "model-00002-of-00002.safetensors is not in the Hugging Face cache" in missing
    escaped = results["owner/escaping-shard"]
    assert "\n" not in escaped and "'../model-00002-of-00002.safetensors'" in escaped and "plain file name" in escaped


def test_a_hub_repo_is_asked_for_each_shard_by_name(sharded_dirs, monkeypatch):
    """Online, a repo without model.safetensors: the index, then each shard it names; never a pickle or a pattern."""
    from huggingface_hub.errors import EntryNotFoundError

    from transformer import loading

    folder, asked = sharded_dirs["distilbert"], []

    def hf_hub_download(repo_id, filename, revision=None):
        asked.append(filename)
        if not (folder / filename).is_file():
            raise EntryNotFoundError(f"{repo_id} has no {filename}")
        return str(folder / filename)

    monkeypatch.setattr(loading, "hf_hub_download", hf_hub_download)
    loaded = load_model("owner/sharded", device="cpu")
    assert loaded.folder == folder and isinstance(loaded.model, HubClassifier)
    assert asked == ["config.json", "model.safetensors", INDEX, *shards_of(folder), "tokenizer.json"]


def test_a_missing_shard_is_named(sharded_dirs, tmp_path):
    folder = copy_checkpoint(sharded_dirs["roberta"], tmp_path / "missing-shard")
    shards = shards_of(folder)
    (folder / shards[1]).unlink()
    message = one_line_error(folder)
    assert f"missing the shard {shards[1]} of the {len(shards)} that {INDEX} names" in message


def point_a_shard_at(folder: Path, name: str) -> None:
    """Rewrite ``folder``'s index so that the tensors of its last shard are said to be in ``name``."""
    index = json.loads((folder / INDEX).read_text())
    last = shards_of(folder)[-1]
    index["weight_map"] = {key: name if shard == last else shard for key, shard in index["weight_map"].items()}
    (folder / INDEX).write_text(json.dumps(index))


@pytest.mark.parametrize("where", ["parent", "absolute", "subfolder"])
def test_a_shard_outside_the_folder_is_refused(sharded_dirs, tmp_path, where):
    folder = copy_checkpoint(sharded_dirs["bert"], tmp_path / "model")
    last = folder / shards_of(folder)[-1]
    target = {"parent": tmp_path / "x.safetensors", "absolute": tmp_path / "abs.safetensors"}.get(where)
    target = target or folder / "sub" / "x.safetensors"
    target.parent.mkdir(exist_ok=True)
    shutil.move(last, target)  # the shard is there: only the name's place in the index refuses it
    name = {"parent": "../x.safetensors", "absolute": str(target), "subfolder": "sub/x.safetensors"}[where]
    point_a_shard_at(folder, name)
    message = one_line_error(folder)
    assert f"{INDEX} names the shard {name!r}" in message and "plain file name" in message


def test_an_index_that_is_not_one(sharded_dirs, tmp_path):
    folder = copy_checkpoint(sharded_dirs["bert"], tmp_path / "no-map")
    (folder / INDEX).write_text(json.dumps({"metadata": {}}))
    assert f"{INDEX} is not a safetensors index" in one_line_error(folder)


def test_sharded_weights_that_do_not_fit_the_config(sharded_dirs, tmp_path):
    folder = copy_checkpoint(sharded_dirs["roberta"], tmp_path / "three-layers")
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "num_hidden_layers": 3}))
    message = one_line_error(folder)
    assert f"{INDEX} (with its shards) does not hold every tensor of a RobertaForSequenceClassification" in message


def test_a_tensor_left_out_of_its_shard(sharded_dirs, tmp_path):
    import safetensors.torch

    folder = copy_checkpoint(sharded_dirs["bert"], tmp_path / "no-classifier")
    shard = folder / json.loads((folder / INDEX).read_text())["weight_map"]["classifier.weight"]
    tensors = safetensors.torch.load_file(shard)
    del tensors["classifier.weight"]
    safetensors.torch.save_file(tensors, shard, metadata={"format": "pt"})
    assert "(1 missing, 0 of other shapes, e.g. classifier.weight)" in one_line_error(folder)


def test_the_tutorial_format_has_no_shards(tiny_model_dir):
    (tiny_model_dir / "model.safetensors").rename(tiny_model_dir / "model-00001-of-00001.safetensors")
    index = {"metadata": {}, "weight_map": {"embedding.weight": "model-00001-of-00001.safetensors"}}
    (tiny_model_dir / INDEX).write_text(json.dumps(index))
    message = one_line_error(tiny_model_dir)
    assert "tutorial's TransformerClassifier" in message and "single model.safetensors" in message


def test_pickle_shards_are_never_loaded(hub_model_dirs, tmp_path, monkeypatch):
    folder = pickle_only(hub_model_dirs["bert"], tmp_path / "pickle-shards")
    (folder / "pytorch_model.bin").rename(folder / "pytorch_model-00001-of-00001.bin")
    index = {
        "metadata": {},
        "weight_map": {"bert.embeddings.word_embeddings.weight": "pytorch_model-00001-of-00001.bin"},
    }
    (folder / "pytorch_model.bin.index.json").write_text(json.dumps(index))
    monkeypatch.setattr(torch, "load", lambda *a, **k: pytest.fail("torch.load was called"))
    assert "missing model.safetensors (a model folder needs" in one_line_error(folder)


def test_config_cannot_point_transformers_at_other_weights(hub_model_dirs, tmp_path, monkeypatch):
    folder = pickle_only(hub_model_dirs["bert"], tmp_path / "explicit")
    shutil.copyfile(hub_model_dirs["bert"] / "model.safetensors", folder / "model.safetensors")
    (folder / "pytorch_model.bin").rename(folder / "adapter_model.bin")  # the one pickle transformers would name
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "transformers_weights": "adapter_model.bin"}))
    monkeypatch.setattr(torch, "load", lambda *a, **k: pytest.fail("torch.load was called"))
    assert "sets transformers_weights to 'adapter_model.bin'" in one_line_error(folder)


def test_the_artifact_hash_follows_every_shard(hub_model_dirs, sharded_dirs, tmp_path, monkeypatch):
    import hashlib
    from types import SimpleNamespace

    import safetensors.torch

    from transformer.explorer.corpus import model_files as artifacts
    from transformer.explorer.corpus import on_demand as model_artifacts

    single = hub_model_dirs["bert"]
    assert artifacts.model_hash(single) == hashlib.sha256((single / "model.safetensors").read_bytes()).hexdigest()
    folder = copy_checkpoint(sharded_dirs["bert"], tmp_path / "sharded")
    before = artifacts.model_hash(folder)
    assert before == artifacts.model_hash(sharded_dirs["bert"]) and before != artifacts.model_hash(single)
    monkeypatch.setattr(model_artifacts.runner, "get_model", lambda: (SimpleNamespace(folder=folder),))
    model_artifacts.model_identity.cache_clear()
    try:
        assert model_artifacts.model_identity() == (folder, before)
    finally:
        model_artifacts.model_identity.cache_clear()
    shard = folder / shards_of(folder)[-1]
    tensors = safetensors.torch.load_file(shard)
    name = sorted(tensors)[0]
    tensors[name] = tensors[name] + 1
    safetensors.torch.save_file(tensors, shard, metadata={"format": "pt"})
    changed = artifacts.model_hash(folder)
    assert changed != before
    index = json.loads((folder / INDEX).read_text())
    (folder / INDEX).write_text(json.dumps({**index, "metadata": {**index["metadata"], "note": "edited"}}))
    assert artifacts.model_hash(folder) not in (before, changed)
