"""Every endpoint on a CUDA GPU (marked ``cuda``; issue 37): the app on the tutorial's tiny model and on a tiny BERT,
each in a process of its own, puts its model on the GPU (``runner.on_device``) and every endpoint answers, the
tensors each view makes beside the model's (masks, baselines, index grids) on the model's device. Skipped, saying
so, on a machine without a GPU: ``pytest -m cuda`` runs them where there is one."""

import pytest
import torch
from app_fixtures import probe_endpoints, write_model_dir
from tiny import write_dev_sets

pytestmark = [
    pytest.mark.cuda,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU on this machine: the cuda tests need one"),
]


@pytest.mark.parametrize("family", ["tutorial", "bert"])
def test_every_endpoint_answers_on_the_gpu(family, hub_model_dirs, tmp_path):
    model_dir = write_model_dir(tmp_path / "model") if family == "tutorial" else hub_model_dirs[family]
    env = {
        "MODEL_ID": str(model_dir),
        "MODEL_ID_B": str(hub_model_dirs["distilbert"]),  # Compare's second model, on the GPU too
        "SENTIMENT_DATA_DIR": str(write_dev_sets(tmp_path / "data")),  # the corpus views compute on first use
        "ATTENTION_EXPLORER_CACHE": str(tmp_path / "cache"),
    }
    answers, _, device = probe_endpoints(env)
    assert device.startswith("cuda")
    refused = {name: said for name, said in answers.items() if said != "ok"}
    # the Walkthrough reads the tutorial's blocks; the tiny BERT kept no training checkpoints (each one line)
    assert refused.keys() <= ({"walkthrough", "training"} if family == "bert" else set()), refused
