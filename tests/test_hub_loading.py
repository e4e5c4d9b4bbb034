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
from hub_checkpoints import family_tokenizer, hub_classifier, write_hub_checkpoint
from test_loading import COMMIT, REPO_ROOT, lay_out_hub_cache

from transformer.hub.adapter import HubClassifier
from transformer.loading import ModelLoadError, load_model

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
