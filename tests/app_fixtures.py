"""Shared helpers for the explorer's tests: a tiny model folder, the app on it, a server on a free port.

Import them explicitly (``from app_fixtures import ...``). Tests stay offline: the tiny model is a
local folder, and Gradio analytics and Hub access are switched off here, before either library is
imported.
"""

import base64
import contextlib
import importlib
import json
import os
import socket
import subprocess
import sys
import types
from collections.abc import Iterator
from pathlib import Path

os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
os.environ["HF_HUB_OFFLINE"] = "1"
ROOT = Path(__file__).resolve().parents[1]
# The app under test never reads the shared data folder (the head atlas computes from it on first use):
# tests that need a corpus write a tiny one and point here. The data folder as the caller set it (or the
# default beside the repository) stays at hand for the tests of the bundled model's accuracy.
# pytest-xdist's workers inherit this process's environment, so the caller's folder is kept under a name of its own.
USER_DATA_DIR = Path(
    os.environ.get("EXPLORER_TESTS_USER_DATA_DIR")
    or os.environ.get("SENTIMENT_DATA_DIR", str(ROOT.parent / "shared" / "data"))
)
os.environ["EXPLORER_TESTS_USER_DATA_DIR"] = str(USER_DATA_DIR)
os.environ["SENTIMENT_DATA_DIR"] = str(ROOT / "tests" / "no-data-folder")
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # `transformer` and `app` import however pytest was started

import numpy as np  # noqa: E402
import torch  # noqa: E402
from tiny import tiny_model  # noqa: E402
from tokenizers import Tokenizer  # noqa: E402

from transformer import TransformerClassifier  # noqa: E402
from transformer.explorer.serving import gradio_seam  # noqa: E402
from transformer.tokenizer import train_tokenizer  # noqa: E402

if "OMP_NUM_THREADS" not in os.environ:
    # What app.py does on import, done here for the whole test session: every test runs the model on one
    # thread, as the app does, whether or not ``app`` is imported yet (a second thread on two busy cores is
    # many times slower for these small matrices).
    torch.set_num_threads(1)

TINY_MAX_LEN = 32
# Set to a Hub family ("bert", "distilbert", "roberta"), the ``app`` fixture imports the app on that family's tiny
# checkpoint instead of the tutorial's tiny model (``write_app_model_dir``), for any test module. Unset, nothing
# changes. (tests/served/test_fuzz_api.py and tests/hub/test_hub_endpoints.py build the page on Hub models
# in-process instead: ``page_on``.)
TEST_MODEL_VARIABLE = "EXPLORER_TEST_MODEL"
LABELS = ["negative", "positive"]
MARKUP = '<b>bold</b> <script>window.__x=1</script> <a href="https://example.com">link</a>'
CORPUS = [
    "a charming and often affecting journey .",
    "the movie is n't funny , and it does n't try hard enough",
    "a wonderful film that i did n't like , the acting was dull",
    MARKUP,
    "שלום world 😀 漢字 — café",
]


SENTENCE = "a wonderful film , the acting was dull"  # the sentence the ``result`` fixture reads (tests/conftest.py)


def ids_of(result) -> torch.Tensor:
    """``result``'s token ids as a batch of one, (1, N)."""
    return torch.tensor([result.token_ids])


def shown_bars(prediction) -> dict[str, float]:
    """{class: probability} of the page's prediction as ``gr.Label`` shows it, under any heading."""
    from transformer.explorer.page.page import prediction_box  # imported once the model's settings are made

    return {bar.label: bar.confidence for bar in prediction_box().postprocess(prediction).confidences}


def close(values, expected, atol=2e-6):
    """API numbers are rounded to 6 decimals."""
    np.testing.assert_allclose(np.array(values, dtype=np.float64), np.asarray(expected, dtype=np.float64), atol=atol)


def decoded(array: dict) -> np.ndarray:
    """An array of ``/export``'s answer, as its docstring says to read it."""
    assert array["dtype"] == "float32"
    return np.frombuffer(base64.b64decode(array["base64"]), "<f4").reshape(array["shape"])


def build_tokenizer() -> Tokenizer:
    """The project's WordPiece tokenizer trained on ``CORPUS``: it knows markup characters and a few scripts."""
    return train_tokenizer(CORPUS * 3, vocab_size=200)


def build_model(tokenizer: Tokenizer, max_len: int = TINY_MAX_LEN) -> TransformerClassifier:
    """The seeded, untrained tiny classifier (``tiny.tiny_model``) for ``tokenizer``, built in milliseconds."""
    return tiny_model(vocab_size=tokenizer.get_vocab_size(), max_len=max_len, label_names=LABELS)


def write_model_dir(directory: Path) -> Path:
    """Save a tiny model (``build_model``), its tokenizer and metrics as a folder ``load_model`` accepts, with three
    training checkpoints (``tiny.write_checkpointed_model``: steps 0, 4 and 9, the last the model itself)."""
    from tiny import write_checkpointed_model

    write_checkpointed_model(directory, build_tokenizer(), max_len=TINY_MAX_LEN, label_names=LABELS)
    (directory / "metrics.json").write_text(json.dumps({"dev": {"sst2": 0.5, "mean": 0.5}, "test": {"sst2": 0.5}}))
    return directory


def write_hub_app_dir(directory: Path, family: str) -> Path:
    """The tiny Hub checkpoint of ``family`` (``hub_checkpoints``) saved in ``directory/model``; ``directory/model``.

    A data folder of the four dev sets (``tiny.write_dev_sets``) is written beside it and becomes the app's
    ``SENTIMENT_DATA_DIR`` for the session: a Hub model has no artifacts, so the corpus views compute theirs from
    it on first use (the tutorial model's views say instead that the data folder is missing).
    """
    from hub_checkpoints import HUB_FAMILIES, write_hub_checkpoint  # imports transformers, the extra
    from tiny import write_dev_sets

    if family not in HUB_FAMILIES:
        raise ValueError(f"{TEST_MODEL_VARIABLE}={family!r}: expected one of {', '.join(HUB_FAMILIES)}")
    os.environ["SENTIMENT_DATA_DIR"] = str(write_dev_sets(directory / "data"))
    return write_hub_checkpoint(directory / "model", family)


def write_app_model_dir(directory: Path) -> Path:
    """The ``app`` fixture's model folder in ``directory``: the tiny tutorial model (``write_model_dir``), or the tiny
    checkpoint of the Hub family ``$EXPLORER_TEST_MODEL`` names (``write_hub_app_dir``)."""
    family = os.environ.get(TEST_MODEL_VARIABLE)
    return write_hub_app_dir(directory, family) if family else write_model_dir(directory)


def import_app(model_dir: Path):
    """Import ``app`` on the tiny model; later calls reuse the module.

    ``MODEL_ID`` stays set for the session, because ``app.get_model`` reads it again whenever its cache is
    cleared. The runner reads it once and keeps its model (a change after start changes no answer), so on the first
    import a model it loaded before, for a test that ran it without the app (``tests/explorer/test_runner.py``: the
    bundled model), is dropped: the app is laid out on, and serves, this one. Importing ``app`` sets torch to one
    thread, as this module already has for the whole session.
    """
    os.environ["MODEL_ID"] = str(model_dir)
    os.environ.pop("MODEL_REVISION", None)
    if "app" not in sys.modules:
        forget_the_models()
    return importlib.import_module("app")


def forget_the_models() -> None:
    """Drop the loaded models and everything computed for them: the next call loads ``MODEL_ID`` (and
    ``MODEL_ID_B``) again."""
    from transformer.explorer import runner, views
    from transformer.explorer.corpus import on_demand as model_artifacts

    runner.get_model.cache_clear()
    runner.get_second_model.cache_clear()
    modules = [value for value in vars(views).values() if isinstance(value, types.ModuleType)]
    for value in [value for module in modules for value in vars(module).values()]:
        if isinstance(value, model_artifacts.ModelArtifact):  # head atlas, errors, behaviour, corpus faithfulness
            value.forget()  # the model's identity too


@contextlib.contextmanager
def page_on(app, model_dir: Path, folder: Path, second: Path | None = None) -> Iterator[types.SimpleNamespace]:
    """The page built again in this process on the model in ``model_dir`` (``second`` as ``MODEL_ID_B``), as the
    Space builds it: the ``app`` module's ``demo``, ``get_model`` and ``launch_settings``, for ``serving_app``.

    A data folder of dev sets in ``folder`` is the explorer's, so the corpus views compute theirs on first use, into
    a cache folder of their own there. Afterwards the session's model loads again, with nothing kept of these.
    """
    import pytest
    from tiny import write_dev_sets

    from transformer.explorer import runner
    from transformer.explorer.corpus import model_files as artifacts

    with contextlib.ExitStack() as stack:
        stack.callback(forget_the_models)  # after the variables below are restored
        patch = stack.enter_context(pytest.MonkeyPatch.context())
        patch.setenv("MODEL_ID", str(model_dir))
        if second is None:
            patch.delenv("MODEL_ID_B", raising=False)
        else:
            patch.setenv("MODEL_ID_B", str(second))
        patch.setenv("SENTIMENT_DATA_DIR", str(write_dev_sets(folder / "data")))
        patch.setenv(artifacts.CACHE_VARIABLE, str(folder / "cache"))
        forget_the_models()
        yield types.SimpleNamespace(
            demo=app.build_demo(), get_model=runner.get_model, launch_settings=app.launch_settings
        )


def probe_endpoints(env: dict[str, str], timeout: int = 600) -> tuple[dict[str, str], dict[str, int], str]:
    """Every endpoint called with its defaults by ``tests/hub_probe.py`` in a process of its own, the app on
    ``env``'s ``MODEL_ID`` (it loads its model once); ({endpoint: "ok" or its error}, {endpoint: answer bytes}, the
    device its model ran on, e.g. "cpu")."""
    env = os.environ | {"HF_HUB_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False"} | env
    run = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "hub_probe.py")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    keys = ("ANSWERS", "SIZES", "DEVICE")
    said = {key: line.removeprefix(key + " ") for line in run.stdout.splitlines() for key in keys
            if line.startswith(key + " ")}  # fmt: skip
    assert run.returncode == 0 and said.keys() == set(keys), run.stderr[-3000:]
    return json.loads(said["ANSWERS"]), json.loads(said["SIZES"]), json.loads(said["DEVICE"])


def free_port() -> int:
    """A TCP port nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def serving(demo, **settings) -> Iterator[str]:
    """Launch ``demo`` in this process on a free port with ``settings`` (launch arguments); yield its URL; close it.

    Gradio's own check that the page answers is skipped (``_frontend=False``): it gives up after one HEAD request of
    3 s, which a first render can take on a loaded 2-core runner (``make test`` runs two workers); the tests' own
    requests wait longer, and fail if it never answers."""
    demo.launch(
        server_name="127.0.0.1",
        server_port=free_port(),
        prevent_thread_lock=True,
        quiet=True,
        _frontend=False,
        **settings,
    )
    try:
        yield demo.local_url
    finally:
        gradio_seam.close_served(demo)  # not demo.close(): a closing page's heartbeat races it


@contextlib.contextmanager
def desktop_page(browser, address: str, timeout_ms: int = 30_000):
    """A fresh desktop-sized page (1280 × 900) at ``address``, its context closed after."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.set_default_timeout(timeout_ms)
        page.goto(address)
        yield page
    finally:
        context.close()
