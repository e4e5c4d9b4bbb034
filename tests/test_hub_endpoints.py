"""The explorer on each Hub family (tiny random BERT, DistilBERT and RoBERTa checkpoints): the app starts on it
(``MODEL_ID`` = its folder, in a fresh process, since the app loads its model once), every endpoint answers, and
the views that read the tutorial's architecture say in one line that they do not apply; the endpoint fuzz cases
run on one of them too."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hub_checkpoints import HUB_FAMILIES
from tiny import write_dev_sets

ROOT = Path(__file__).resolve().parents[1]
TUTORIAL_ONLY = {"walkthrough"}  # its maths reads the tutorial's embedding, encoding and blocks


@pytest.fixture(scope="module")
def answers(hub_model_dirs, tmp_path_factory) -> dict[str, dict[str, str]]:
    """{family: {endpoint: "ok" or its error}}, each family's app in a process of its own."""
    data = write_dev_sets(tmp_path_factory.mktemp("hub-data") / "data")
    found = {}
    for family in HUB_FAMILIES:
        env = os.environ | {
            "MODEL_ID": str(hub_model_dirs[family]),
            "SENTIMENT_DATA_DIR": str(data),  # the corpus views compute for this model on first use
            "ATTENTION_EXPLORER_CACHE": str(tmp_path_factory.mktemp(f"cache-{family}")),
            "HF_HUB_OFFLINE": "1",
            "GRADIO_ANALYTICS_ENABLED": "False",
        }
        run = subprocess.run(
            [sys.executable, str(ROOT / "tests" / "hub_probe.py")],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        lines = [line for line in run.stdout.splitlines() if line.startswith("ANSWERS ")]
        assert run.returncode == 0 and lines, run.stderr[-3000:]
        found[family] = json.loads(lines[-1].removeprefix("ANSWERS "))
    return found


@pytest.mark.parametrize("family", HUB_FAMILIES)
def test_every_endpoint_answers_on_each_family(answers, family):
    answered = answers[family]
    assert {"predict", "attention", "attributions", "faithfulness", "knockout", "head_internals"} <= set(answered)
    broken = {name: said for name, said in answered.items() if name not in TUTORIAL_ONLY and said != "ok"}
    assert not broken, broken
    for name in TUTORIAL_ONLY:
        said = answers[family][name]
        assert "does not apply to this" in said and "\n" not in said, said  # one line, not a stack trace
