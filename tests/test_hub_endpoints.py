"""The explorer on each Hub family (tiny random BERT, DistilBERT and RoBERTa checkpoints): the app starts on it
(``MODEL_ID`` = its folder, in a fresh process, since the app loads its model once; another family as its second
model), every endpoint answers, and the views that read the tutorial's architecture say in one line that they do
not apply; the endpoint fuzz tests (tests/test_fuzz_api.py) run on one of them too, all of them, in a process of
their own."""

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from app_fixtures import TEST_MODEL_VARIABLE, probe_endpoints
from hub_checkpoints import HUB_FAMILIES
from tiny import write_dev_sets

ROOT = Path(__file__).resolve().parents[1]
TUTORIAL_ONLY = {"walkthrough"}  # its maths reads the tutorial's embedding, encoding and blocks
FUZZ_TESTS = ROOT / "tests" / "test_fuzz_api.py"
# Byte-level BPE turns any Unicode into tokens (no [UNK] to hide behind), and positions start at 2: hostile and
# over-long texts reach the most of the adapter's tokenizer and position code on RoBERTa.
FUZZ_FAMILY = "roberta"
FUZZ_TIMEOUT = 1200  # seconds; about 95 s alone on two cores, several times that beside the rest of the suite


@pytest.fixture(scope="module")
def answers(hub_model_dirs, tmp_path_factory) -> dict[str, dict[str, str]]:
    """{family: {endpoint: "ok" or its error}}, each family's app in a process of its own, with the next family as
    its second model (``MODEL_ID_B``, which Compare reads the same sentence with)."""
    data = write_dev_sets(tmp_path_factory.mktemp("hub-data") / "data")
    found = {}
    for i, family in enumerate(HUB_FAMILIES):
        env = {
            "MODEL_ID": str(hub_model_dirs[family]),
            "MODEL_ID_B": str(hub_model_dirs[HUB_FAMILIES[(i + 1) % len(HUB_FAMILIES)]]),
            "SENTIMENT_DATA_DIR": str(data),  # the corpus views compute for this model on first use
            "ATTENTION_EXPLORER_CACHE": str(tmp_path_factory.mktemp(f"cache-{family}")),
        }
        found[family] = probe_endpoints(env)[0]
    return found


@pytest.mark.parametrize("family", HUB_FAMILIES)
def test_every_endpoint_answers_on_each_family(answers, family):
    answered = answers[family]
    assert {"predict", "attention", "attributions", "faithfulness", "knockout", "compare_models"} <= set(answered)
    broken = {name: said for name, said in answered.items() if name not in TUTORIAL_ONLY and said != "ok"}
    assert not broken, broken
    for name in TUTORIAL_ONLY:
        said = answers[family][name]
        assert "does not apply to this" in said and "\n" not in said, said  # one line, not a stack trace


def names_of_tests(path: Path) -> set[str]:
    """The names of the module-level test functions in ``path``: what pytest collects from it (parametrized or not)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")}


def outcomes(summary: str) -> dict[str, int]:
    """pytest's last line ("10 passed, 2 warnings in 80.1s") as {"passed": 10, "warnings": 2}."""
    return {kind: int(count) for count, kind in re.findall(r"(\d+) (\w+)", summary.rsplit(" in ", 1)[0])}


def test_the_endpoint_fuzz_tests_pass_on_a_hub_model(tmp_path):
    """Every test of tests/test_fuzz_api.py runs and passes with the app on a tiny Hub checkpoint: a collection error,
    a skip or a test that never ran fails here as a failing one does."""
    env = os.environ | {TEST_MODEL_VARIABLE: FUZZ_FAMILY, "HF_HUB_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False"}
    env.pop("PYTEST_ADDOPTS", None)  # a -k or -x meant for this run would leave fuzz tests out of that one
    command = [sys.executable, "-m", "pytest", str(FUZZ_TESTS), "-q", "-rap", "-p", "no:cacheprovider"]
    run = subprocess.run(
        [*command, f"--basetemp={tmp_path / 'fuzz'}"],  # not beside this session's temporary folders
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=FUZZ_TIMEOUT,
    )
    said = f"{TEST_MODEL_VARIABLE}={FUZZ_FAMILY} {' '.join(command[1:])}:\n{(run.stdout + run.stderr)[-8000:]}"
    returncode = run.returncode  # not run itself: its repr would repeat the output, cut short
    assert returncode == 0, said
    passed = re.findall(r"^PASSED \S+::(test_\w+)", run.stdout, re.MULTILINE)
    assert set(passed) == names_of_tests(FUZZ_TESTS), said
    lines = run.stdout.strip().splitlines()
    assert lines and outcomes(lines[-1]).keys() <= {"passed", "warnings"}, said
    assert outcomes(lines[-1])["passed"] == len(passed), said
