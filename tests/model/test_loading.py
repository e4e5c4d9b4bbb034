"""load_model: from a folder, from a Hub id through a real (temporary, offline) Hugging Face cache, and every error."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import safetensors.torch
import torch
from hub_checkpoints import COMMIT, lay_out_hub_cache

from transformer.loading import DEFAULT_MODEL_DIR, LoadedModel, ModelLoadError, load_model
from transformer.tokenizer import encode_batch

pytestmark = pytest.mark.slow  # many seconds: left out of make test-fast

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_default_model_dir_is_the_bundled_folder():
    assert REPO_ROOT / "assets" / "model" == DEFAULT_MODEL_DIR


def test_loads_a_folder(tiny_model_dir):
    loaded = load_model(tiny_model_dir, device="cpu")
    assert isinstance(loaded, LoadedModel)
    assert not loaded.model.training
    assert loaded.device == torch.device("cpu") and next(loaded.model.parameters()).device.type == "cpu"
    assert loaded.source == str(tiny_model_dir) and loaded.revision is None
    assert loaded.metrics == {"seed": 0, "note": "untrained test model"}
    assert loaded.model.label_names == ["negative", "positive"]
    saved = safetensors.torch.load_file(tiny_model_dir / "model.safetensors")
    assert all(torch.equal(saved[name], value) for name, value in loaded.model.state_dict().items() if name in saved)
    input_ids, attention_mask = encode_batch(loaded.tokenizer, ["it 's charming"], loaded.model.max_len)
    assert loaded.model(input_ids, attention_mask).shape == (1, 2)


def test_folder_given_as_string_and_without_metrics(tiny_model_dir):
    (tiny_model_dir / "metrics.json").unlink()
    loaded = load_model(str(tiny_model_dir), device=torch.device("cpu"))
    assert loaded.metrics == {}


@pytest.mark.parametrize("missing", ["config.json", "model.safetensors", "tokenizer.json"])
def test_missing_file_is_named(tiny_model_dir, missing):
    (tiny_model_dir / missing).unlink()
    with pytest.raises(ModelLoadError, match=rf"{tiny_model_dir}: missing {missing}"):
        load_model(tiny_model_dir, device="cpu")


def test_missing_folder(tmp_path):
    with pytest.raises(ModelLoadError, match="no such model folder"):
        load_model(tmp_path / "nothing-here", device="cpu")
    with pytest.raises(ModelLoadError, match="no such model folder"):
        load_model("./nothing/here/either", device="cpu")


def test_corrupt_weights(tiny_model_dir):
    (tiny_model_dir / "model.safetensors").write_bytes(b"\x00 this is not a safetensors file")
    with pytest.raises(ModelLoadError, match=f"{tiny_model_dir}.*not a readable safetensors file"):
        load_model(tiny_model_dir, device="cpu")


def test_weights_that_do_not_match_the_config(tiny_model_dir):
    config = json.loads((tiny_model_dir / "config.json").read_text())
    (tiny_model_dir / "config.json").write_text(json.dumps({**config, "num_layers": config["num_layers"] + 1}))
    with pytest.raises(ModelLoadError, match=r"do not match config\.json"):
        load_model(tiny_model_dir, device="cpu")


@pytest.mark.parametrize(
    ("content", "message"),
    [("{not json", "config.json is not valid JSON"), ('{"d_model": 16}', "lacks vocab_size"), ("[]", "lacks vocab")],
)
def test_bad_config(tiny_model_dir, content, message):
    (tiny_model_dir / "config.json").write_text(content)
    with pytest.raises(ModelLoadError, match=message):
        load_model(tiny_model_dir, device="cpu")


@pytest.mark.parametrize("change", [{"d_model": 17}, {"num_layers": "two"}])
def test_config_the_classifier_rejects(tiny_model_dir, change):
    config = json.loads((tiny_model_dir / "config.json").read_text())
    (tiny_model_dir / "config.json").write_text(json.dumps({**config, **change}))
    with pytest.raises(ModelLoadError, match=str(tiny_model_dir)):
        load_model(tiny_model_dir, device="cpu")


def test_corrupt_tokenizer(tiny_model_dir):
    (tiny_model_dir / "tokenizer.json").write_text('{"model": "nonsense"}')
    with pytest.raises(ModelLoadError, match=r"tokenizer\.json is not a valid tokenizer file"):
        load_model(tiny_model_dir, device="cpu")


def test_tokenizer_from_another_model(tiny_model_dir):
    tokenizer = json.loads((tiny_model_dir / "tokenizer.json").read_text())
    tokenizer["model"]["vocab"]["brand-new-token"] = len(tokenizer["model"]["vocab"])
    (tiny_model_dir / "tokenizer.json").write_text(json.dumps(tokenizer))
    with pytest.raises(ModelLoadError, match="come from different models"):
        load_model(tiny_model_dir, device="cpu")


def test_corrupt_metrics(tiny_model_dir):
    (tiny_model_dir / "metrics.json").write_text("{")
    with pytest.raises(ModelLoadError, match=r"metrics\.json is not valid JSON"):
        load_model(tiny_model_dir, device="cpu")


def test_revision_for_a_folder_is_an_error(tiny_model_dir):
    with pytest.raises(ModelLoadError, match="local folder has no revisions"):
        load_model(tiny_model_dir, revision="main", device="cpu")


HUB_SCRIPT = r"""
import json, sys
from transformer.loading import ModelLoadError, load_model

results = {}
loaded = load_model("owner/tiny", device="cpu")
results["main"] = [loaded.source, loaded.revision, loaded.metrics, loaded.model.training]
results["commit"] = load_model("owner/tiny", revision=sys.argv[1], device="cpu").source
for name, source, revision in [("bad_revision", "owner/tiny", "v9"), ("not_cached", "owner/absent", None),
                               ("no_weights", "owner/incomplete", None)]:
    try:
        load_model(source, revision=revision, device="cpu")
        results[name] = "loaded"
    except ModelLoadError as error:
        results[name] = str(error)
print(json.dumps(results))
"""


def test_loads_a_hub_id_from_an_offline_cache(tiny_model_dir, tmp_path):
    hf_home = tmp_path / "hf-home"
    all_files = [
        tiny_model_dir / name for name in ("config.json", "model.safetensors", "tokenizer.json", "metrics.json")
    ]
    lay_out_hub_cache(hf_home / "hub", "owner/tiny", all_files)
    lay_out_hub_cache(hf_home / "hub", "owner/incomplete", [tiny_model_dir / "config.json"])
    env = {**os.environ, "HF_HOME": str(hf_home), "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO_ROOT)}
    env.pop("HF_HUB_CACHE", None)
    completed = subprocess.run(
        [sys.executable, "-c", HUB_SCRIPT, COMMIT], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert completed.returncode == 0, completed.stderr
    results = json.loads(completed.stdout.strip().splitlines()[-1])
    assert results["main"] == ["owner/tiny", None, {"seed": 0, "note": "untrained test model"}, False]
    assert results["commit"] == "owner/tiny"
    assert "owner/tiny (revision v9)" in results["bad_revision"] and "HF_HUB_OFFLINE" in results["bad_revision"]
    assert "owner/absent" in results["not_cached"] and "not in the Hugging Face cache" in results["not_cached"]
    assert "owner/incomplete" in results["no_weights"] and "model.safetensors" in results["no_weights"]
