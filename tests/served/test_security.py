"""Security review as tests: weights, model source, page address and deep links, error messages, markup.

- Loading reads model.safetensors only: pickle files (which run code when read) are refused when they are all
  there is, and never opened when they sit beside the safetensors, in a folder or a Hub snapshot.
- The model source is fixed when the app starts: nothing a page or an API caller sends can name another one.
- The page address and deep links carry the view's inputs only; unknown keys change nothing.
- Errors reach a client without stack traces or paths; markup typed in, or put in a link, stays text.
"""

import os

os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
os.environ["HF_HUB_OFFLINE"] = "1"

import ast
import inspect
import pickle
import re
from pathlib import Path
from urllib.parse import quote

import gradio as gr
import huggingface_hub
import pytest
import torch
from app_fixtures import ROOT, build_tokenizer, write_model_dir
from fuzz_helpers import NORMAL_TEXT, QueueCaller, injected_markup, leaks
from gradio_client.exceptions import AppError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transformer import TransformerClassifier
from transformer.explorer import runner
from transformer.explorer.page import address, restore, scripts
from transformer.explorer.registry import Registry
from transformer.explorer.serving import link_store
from transformer.explorer.views import VIEWS
from transformer.loading import ModelLoadError, load_model

REGISTRY = Registry(VIEWS)  # the page's views, as app.py registers them


PAGE_JS = (Path(scripts.__file__).parent / "page.js").read_text()

PICKLE_NAMES = ["pytorch_model.bin", "model.bin", "pytorch_model.pt", "model.pkl", "model.ckpt", "training_args.bin"]
COMMIT = "0123456789abcdef0123456789abcdef01234567"
MODEL_WORDS = re.compile(r"(^|_)(model|source|checkpoint|weights?|revision|repo|path|url|file|dir)s?($|_)", re.I)
# A link that puts markup where a selector's value belongs: every tag carries the marker "pwned"
EVIL = '<a id="pwned-link" href="https://example.com/">Log in again</a><img id="pwned-img" src=x onerror="__pwned=1">'
# gradio's queue summarises its events with pandas after each one; pandas 3 warns about the options it uses
pytestmark = [
    pytest.mark.filterwarnings("ignore:'future.no_silent_downcasting' is deprecated"),
    pytest.mark.filterwarnings("ignore:The copy keyword is deprecated"),
]


class Trap:
    """Unpickling this creates ``marker``: the proof that a pickle was read (and code ran)."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


def plant_pickles(folder: Path, marker: Path) -> None:
    for name in PICKLE_NAMES:
        (folder / name).write_bytes(pickle.dumps(Trap(marker)))


@pytest.fixture
def no_torch_load(monkeypatch):
    """Fail the test if anything calls torch.load (pickle-based) while it runs."""

    def refuse(*args, **kwargs):
        raise AssertionError(f"torch.load was called: {args!r:.200}")

    monkeypatch.setattr(torch, "load", refuse)


def test_the_pickle_trap_springs_when_read(tmp_path):
    marker = tmp_path / "sprung"
    pickle.loads(pickle.dumps(Trap(marker))).close()
    assert marker.exists()  # so its absence below means no pickle was read


def test_a_folder_with_only_pickle_weights_is_refused_unread(tmp_path, no_torch_load):
    folder, marker = write_model_dir(tmp_path / "model"), tmp_path / "sprung"
    (folder / "model.safetensors").unlink()
    plant_pickles(folder, marker)
    with pytest.raises(ModelLoadError, match=r"missing model\.safetensors"):
        load_model(folder, device="cpu")
    with pytest.raises(FileNotFoundError, match=r"no model\.safetensors"):
        TransformerClassifier.from_pretrained(folder)  # the Hub mixin's default would fall back to the .bin
    assert not marker.exists()


def test_pickle_files_beside_the_safetensors_are_never_opened(tmp_path, no_torch_load):
    folder, marker = write_model_dir(tmp_path / "model"), tmp_path / "sprung"
    plant_pickles(folder, marker)
    loaded = load_model(folder, device="cpu")
    assert loaded.model.label_names == ["negative", "positive"]
    assert not marker.exists()


def hub_snapshot(hub_cache: Path, repo_id: str, files: dict[str, bytes]) -> None:
    """A repo in the Hugging Face cache layout: blobs, one snapshot, refs/main."""
    repo = hub_cache / f"models--{repo_id.replace('/', '--')}"
    snapshot = repo / "snapshots" / COMMIT
    snapshot.mkdir(parents=True)
    (repo / "blobs").mkdir()
    for name, content in files.items():
        (repo / "blobs" / f"blob-{name}").write_bytes(content)
        (snapshot / name).symlink_to(os.path.relpath(repo / "blobs" / f"blob-{name}", snapshot))
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(COMMIT)


def test_a_hub_snapshot_with_only_pickle_weights_is_refused_unread(tmp_path, monkeypatch, no_torch_load):
    model, marker, hub = write_model_dir(tmp_path / "model"), tmp_path / "sprung", tmp_path / "hub"
    files = {name: (model / name).read_bytes() for name in ("config.json", "tokenizer.json", "metrics.json")}
    files |= {name: pickle.dumps(Trap(marker)) for name in PICKLE_NAMES}
    hub_snapshot(hub, "someone/pickled", files)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(hub))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.chdir(tmp_path)  # "someone/pickled" names no folder here
    with pytest.raises(ModelLoadError, match=r"someone/pickled.*model\.safetensors"):
        load_model("someone/pickled", device="cpu")
    with pytest.raises(Exception, match=r"model\.safetensors|cache"):
        TransformerClassifier.from_pretrained("someone/pickled")
    assert not marker.exists()


# --- The served app --------------------------------------------------------------------------------------------


@pytest.fixture
def caller(url):
    caller = QueueCaller(url)
    yield caller
    caller.close()


@pytest.mark.served
def test_nothing_a_page_or_api_caller_sends_names_a_model(app, client):
    """No event input and no API parameter is a model id, path, file or revision; nothing is uploaded."""
    for fn in app.demo.fns.values():
        for block in fn.inputs:
            assert not isinstance(block, gr.File | gr.UploadButton), f"{fn.name} takes a file"
            for name in (getattr(block, "label", None), getattr(block, "elem_id", None)):
                words = re.split(r"[\s\-]+", str(name or ""))
                assert not any(MODEL_WORDS.search(word) for word in words), f"{fn.name} input {name!r}"
    for endpoint, spec in client.view_api(print_info=False, return_format="dict")["named_endpoints"].items():
        for parameter in spec["parameters"]:
            assert not MODEL_WORDS.search(parameter["parameter_name"]), f"{endpoint} {parameter['parameter_name']}"


def callers_of(tree: ast.AST, name: str) -> set[str]:
    """The functions of ``tree`` that call ``name`` by that name."""
    return {
        function.name
        for function in ast.walk(tree)
        if isinstance(function, ast.FunctionDef)
        for node in ast.walk(function)
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == name
    }


def test_only_get_model_loads_a_model_and_it_takes_no_arguments(app):
    """The calls to load_model are in get_model and get_second_model, which read the environment once (cached)
    and take nothing, and in load_checkpoints, which only get_checkpoints calls, on get_model's model."""
    sources = [Path(app.__file__), *Path(runner.__file__).parent.rglob("*.py")]  # the app and all of the explorer
    tree = ast.Module(body=[ast.parse(path.read_text(encoding="utf-8")) for path in sources], type_ignores=[])
    assert callers_of(tree, "load_model") == {"get_model", "get_second_model", "load_checkpoints"}
    handlers = {inspect.unwrap(fn.fn) for fn in app.demo.fns.values()}
    for loader in (runner.get_model, runner.get_second_model):
        assert not inspect.signature(loader).parameters and loader.cache_info().maxsize == 1
        assert loader not in handlers
    assert app.get_model is runner.get_model and runner.load_model not in handlers
    # the training checkpoints: those of the model get_model loaded, listed from its own source, never a caller's
    assert callers_of(tree, "load_checkpoints") == {"get_checkpoints"}
    assert not inspect.signature(runner.get_checkpoints).parameters
    assert "get_model()" in inspect.getsource(runner.get_checkpoints)
    assert {runner.get_checkpoints, runner.load_checkpoints}.isdisjoint(handlers)


@pytest.mark.served
def test_no_request_loads_a_model_and_the_address_cannot_name_one(app, client, caller, monkeypatch):
    loaded = app.get_model()[0]
    runner.get_checkpoints()  # as the page's start-up does (app.build_demo): with the model, never on a request
    calls = []
    monkeypatch.setattr(runner, "load_model", lambda *args, **kwargs: calls.append(args) or load_model(*args, **kwargs))
    for endpoint, spec in client.view_api(print_info=False, return_format="dict")["named_endpoints"].items():
        parameters = spec["parameters"]
        args = [p["parameter_default"] if p["parameter_has_default"] else NORMAL_TEXT for p in parameters]
        if endpoint == "/compare_models":  # this app has no second model, and loads none for a caller
            with pytest.raises(AppError, match="start the explorer with MODEL_ID_B"):
                client.predict(*args, api_name=endpoint)
            continue
        if endpoint == "/patching":  # one sentence twice: nothing to restore, which it says
            with pytest.raises(AppError, match="nothing to restore"):
                client.predict(*args, api_name=endpoint)
            continue
        client.predict(*args, api_name=endpoint)
    address = {"text": NORMAL_TEXT, "model": "evil/model", "MODEL_ID": "/tmp", "model_id": "x", "revision": "main"}
    for index, fn in app.demo.fns.items():
        if any(trigger == "load" for _, trigger in fn.targets):
            outcome = caller.call(index, [block.value for block in fn.inputs], params=address)
            assert outcome.success, outcome.error
    assert not calls
    assert app.get_model()[0] is loaded


@pytest.mark.served
def test_changing_MODEL_ID_after_start_changes_no_answer(app, client, tmp_path, monkeypatch):
    other = tmp_path / "other-model"
    tokenizer = build_tokenizer()
    size = {"d_model": 16, "num_heads": 2, "num_layers": 1, "d_ff": 32, "max_len": 32}
    TransformerClassifier(tokenizer.get_vocab_size(), 2, **size, label_names=["evil", "other"]).save_pretrained(other)
    tokenizer.save(str(other / "tokenizer.json"))
    assert load_model(other, device="cpu").model.label_names == ["evil", "other"]  # a model that would load
    monkeypatch.setenv("MODEL_ID", str(other))
    answer = client.predict(NORMAL_TEXT, api_name="/predict")
    assert {entry["label"] for entry in answer["confidences"]} == {"negative", "positive"}


# --- The page address and deep links ---------------------------------------------------------------------------


def test_the_address_keys_are_a_short_allow_list_of_view_inputs(app):
    keys = REGISTRY.url_params
    # 34 since the Errors tab's three filters joined (issue 53); then Training's point, Routes' two, Errors' fourth
    assert len(keys) == len(set(keys)) <= 40
    assert "text" in keys and "layer" in keys and "head" in keys
    assert not [key for key in keys if MODEL_WORDS.search(key)]
    writers = [fn.js for fn in app.demo.fns.values() if fn.js and "Address(" in fn.js]
    assert writers  # the page rewrites its address after each view...
    assert (
        address.script_config(REGISTRY)["urlParams"] == keys
    )  # ...from the allow-list only, and drops a deep link's key
    set_address = PAGE_JS[PAGE_JS.index("function setAddress") :]
    assert "for (const name of urlParams)" in set_address and 'searchParams.delete("deep_link")' in set_address


@settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    extra=st.dictionaries(
        st.text(min_size=1, max_size=12) | st.sampled_from(["model", "MODEL_ID", "model_id", "revision", "deep_link"]),
        st.text(max_size=30) | st.sampled_from(["evil/model", "/etc", "../assets/model", "1", "mean"]),
        min_size=1,
        max_size=5,
    )
)
def test_unknown_address_keys_change_nothing(app, extra):
    extra = {key: value for key, value in extra.items() if key not in REGISTRY.url_params}
    known = {"text": "a charming journey", "layer": "2", "head": "mean", "view": "rollout"}
    defaults = ["", 1, "1", None]  # the page's text, layer, head and dimensions: the address's win
    plain = restore.restore_view(REGISTRY, *defaults, request=gr.Request(query_params=known))
    noisy = restore.restore_view(REGISTRY, *defaults, request=gr.Request(query_params={**known, **extra}))
    assert plain[:5] == noisy[:5]
    assert plain[5].tokens == noisy[5].tokens and plain[5].probabilities == noisy[5].probabilities
    controls = restore.restore_controls(REGISTRY, plain[5], gr.Request(query_params=known))
    assert restore.restore_controls(REGISTRY, noisy[5], gr.Request(query_params={**known, **extra})) == controls


SELECTORS = (gr.Radio, gr.Dropdown, gr.CheckboxGroup)


def poisoned(fn, position: int) -> list:
    """The page's values for ``fn``'s inputs, the one at ``position`` replaced by markup."""
    values = [block.value for block in fn.inputs]
    values[position] = [EVIL] if isinstance(values[position], list) else EVIL
    return values


@pytest.mark.served
def test_selector_values_a_deep_linked_page_sends_on_load_are_never_echoed(app, caller):
    """What the page sends on load comes from the deep-linked state, unchecked: no message may echo it as markup."""
    echoed = []
    for index, fn in app.demo.fns.items():
        if not any(trigger == "load" for _, trigger in fn.targets):
            continue
        for position, block in enumerate(fn.inputs):
            if isinstance(block, SELECTORS):
                error = caller.call(index, poisoned(fn, position)).error or ""
                if injected_markup(error) or leaks(error, EVIL):
                    echoed.append(f"{fn.name} {block.label}: {error[:120]}")
    assert not echoed, echoed


# --- Errors --------------------------------------------------------------------------------------------------


def test_the_app_serves_with_gradios_quiet_errors(app, monkeypatch):
    launched = {}
    monkeypatch.setattr(app.demo, "launch", lambda **kwargs: launched.update(kwargs))
    monkeypatch.setattr(app.demo, "block_thread", lambda: None)
    app.main(["--host", "127.0.0.1", "--port", "7999"])
    assert launched and not launched.get("show_error", False)  # only gr.Error messages reach a client


@pytest.mark.served
def test_an_unexpected_error_reaches_the_client_without_its_trace(app, client, monkeypatch):
    def broken(text):
        raise RuntimeError(f'secret: File "{ROOT}/transformer/explorer/runner.py", line 1, in run_model')

    monkeypatch.setattr(runner, "run_model", broken)
    for endpoint in ("/predict", "/attention"):
        with pytest.raises(AppError) as raised:
            client.predict(NORMAL_TEXT, api_name=endpoint)
        message = raised.value.message
        assert "secret" not in message and not leaks(message), message
    monkeypatch.undo()
    assert client.predict(NORMAL_TEXT, api_name="/predict")["label"] in {"negative", "positive"}


# --- Markup in the browser -------------------------------------------------------------------------------------

INJECTED_JS = """() => ({
    ran: typeof window.__pwned,
    elements: [...document.querySelectorAll('[id*=pwned], [class*=pwned], a[href^="javascript"]')].map(
        (e) => e.outerHTML.slice(0, 120)),
    scripts: [...document.querySelectorAll('script')].filter(
        // gradio's own config script carries a deep link's values as JSON, "<" escaped as \\u003c: data, not code
        (e) => e.textContent.includes('pwned') && !e.textContent.startsWith('window.gradio_config =')).length,
})"""
CLEAN = {"ran": "undefined", "elements": [], "scripts": 0}
SHARED_TEXT = "<script>window.__pwned=1</script> <i class=pwned>a</i> charming " + EVIL
SHORT_TEXT = "<script>__pwned=1</script> <i class=pwned>a</i> charming"  # 31 tokens: the whole of it is read


@pytest.mark.served
@pytest.mark.browser
@pytest.mark.parametrize(
    ("view", "text", "controls", "drawn"),
    [
        ("compare", SHARED_TEXT, {"compare": "<b class=pwned>B</b> " + EVIL}, "#compare-heatmap-b svg.main-svg"),
        ("word-order", SHORT_TEXT, {"order": "yours", "reordered": SHORT_TEXT}, "#order-summary p"),
        ("perturb", SHARED_TEXT, {"position": "1", "mode": "remove"}, "#perturb-summary p"),
        ("attributions", SHARED_TEXT, {"target": "predicted"}, "#attribution-summary p"),
    ],
)
def test_markup_in_a_shared_address_stays_text_in_every_view(page, url, view, text, controls, drawn):
    """Someone opens a link whose sentence (and compare or reordering text) is markup: it shows as typed."""
    query = "&".join(f"{key}={quote(value)}" for key, value in {"text": text, "view": view, **controls}.items())
    page.goto(f"{url}?{query}")
    page.locator(drawn).first.wait_for()
    page.wait_for_function("() => document.querySelector('#tokens').textContent.includes('<')")
    assert page.locator("#sentence textarea").input_value() == text
    assert "<" in page.locator("#tokens").text_content()  # the markup is on the page, as text
    assert page.evaluate(INJECTED_JS) == CLEAN


@pytest.mark.served
@pytest.mark.browser
def test_a_crafted_link_puts_no_markup_on_the_page(app, url, page, tmp_path, monkeypatch):
    """A link whose every kept input is markup (as a crafted call to the share event could keep): it shows as text."""
    monkeypatch.setattr(link_store, "LINK_DIR", tmp_path)
    crafted = {name: f"{EVIL} <b class=pwned>x</b>" for name in REGISTRY.url_params}
    key = link_store.save_link(crafted | {"text": SHARED_TEXT})
    page.goto(f"{url}?link={key}")
    page.wait_for_function(
        "() => document.querySelector('#attention-heatmap svg.main-svg') "
        "|| document.querySelector('[data-testid=toast-body]')"
    )
    page.wait_for_timeout(500)
    assert page.locator("#sentence textarea").input_value() == SHARED_TEXT
    assert page.evaluate(INJECTED_JS) == CLEAN
