"""The codebase stays one a newcomer changes in an afternoon: short functions in the page's code, a short app.py,
JavaScript in .js files, few entry points at the package's top, a README for its readers, and a CHANGELOG whose
dated releases agree with pyproject's version."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import tomllib
from datetime import date
from pathlib import Path

from marker_scan import unmarked

from transformer.explorer.inputs import parse_heads

ROOT = Path(__file__).resolve().parents[2]
EXPLORER = ROOT / "transformer" / "explorer"
MAX_FUNCTION_LINES = 60
MAX_APP_LINES = 200
MAX_README_BYTES = 20 * 1024
ENTRY_POINTS = {"train.py", "evaluate.py", "probe.py", "artifacts.py"}  # the commands at transformer/'s top level
MODEL_MODULES = {
    "__init__.py",
    "attention.py",
    "positional_encoding.py",
    "feed_forward.py",
    "encoder_block.py",
    "classifier.py",
    "interface.py",
    "tokenizer.py",
    "loading.py",
    "checkpoints.py",
}
JS_SIGNS = ("=>", "document.", "querySelector", "window.")


def page_sources() -> list[Path]:
    return [ROOT / "app.py", *sorted(EXPLORER.rglob("*.py"))]


def long_functions(path: Path, root: Path = ROOT) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    functions = (node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef))
    return [
        f"{path.relative_to(root)}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for node in functions
        if node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]


def test_no_function_of_the_page_is_longer_than_a_screen():
    assert [found for path in page_sources() for found in long_functions(path)] == []


def test_the_size_check_finds_a_long_function(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    (tmp_path / "long.py").write_text(f"def long():\n{body}\n", encoding="utf-8")
    assert long_functions(tmp_path / "long.py", tmp_path) == [f"long.py:1 long ({MAX_FUNCTION_LINES + 1} lines)"]


def test_app_py_only_lays_out_the_page():
    assert len((ROOT / "app.py").read_text(encoding="utf-8").splitlines()) <= MAX_APP_LINES


def string_literals(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]


def test_no_javascript_in_python_strings():
    """The page's JavaScript is in its .js files (``scripts.SCRIPTS``); Python passes data (``scripts.call``'s one-line
    call)."""
    found = [
        f"{path.relative_to(ROOT)}: {text[:60]!r}"
        for path in page_sources()
        if path.name != "scripts.py"
        for text in string_literals(path)
        if any(sign in text for sign in JS_SIGNS)
    ]
    assert found == []
    page_py = string_literals(EXPLORER / "page" / "page.py")
    assert not [text for text in page_py if "=>" in text or "function" in text]


def test_the_packages_top_holds_the_model_and_its_entry_points():
    top = {path.name for path in (ROOT / "transformer").glob("*.py")}
    assert top - MODEL_MODULES == ENTRY_POINTS
    for name in ENTRY_POINTS:  # each is a command: ``python -m transformer.<name>``
        assert 'if __name__ == "__main__":' in (ROOT / "transformer" / name).read_text(encoding="utf-8")


def test_the_readme_is_short_enough_to_read():
    assert len((ROOT / "README.md").read_bytes()) <= MAX_README_BYTES


def make_dry_run(*args: str) -> str:
    """What ``make`` would run for ``args``, every target taken as out of date (``-n -B``: nothing runs)."""
    return subprocess.run(["make", "-n", "-B", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout


def test_make_run_installs_only_what_running_needs_and_passes_its_args():
    run = make_dry_run("run", "ARGS=--port 8123 --share")
    assert "-r requirements.txt" in run and "requirements-dev" not in run and "requirements-hub" not in run
    assert "app.py --port 8123 --share" in run
    install = make_dry_run("test")  # the suite (and .ci/run, which calls it) still gets every extra
    assert "requirements-dev.txt" in install and "requirements-hub.txt" in install


def test_the_readme_knockout_example_names_heads_of_the_bundled_model():
    config = json.loads((ROOT / "assets" / "model" / "config.json").read_text())
    readme = (ROOT / "README.md").read_text()
    examples = [ast.literal_eval(heads) for heads in re.findall(r'", (\[.*?\]), api_name="/knockout"\)', readme)]
    examples += [heads.split(",") for heads in re.findall(r"heads_off=(L[^`&]+)", readme)]
    assert len(examples) == 2
    for heads in examples:  # parse_heads raises InputError for a head the model lacks
        assert len(parse_heads(heads, config["num_layers"], config["num_heads"])) == len(heads), heads


def test_only_inputs_py_turns_a_layer_or_head_counted_from_1_into_an_index():
    """Layers and heads count from 0 in the model and from 1 for people; ``explorer/inputs.py`` is the one place
    that converts (``model_index``), so no other module subtracts 1 from a layer or a head (a count of them aside)."""
    converting = re.compile(r"\b(?!num_)\w*(?:layer|head)\w*\s*-\s*1\b")
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in sorted((ROOT / "transformer").rglob("*.py"))
        if path != EXPLORER / "inputs.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if converting.search(line)
    ]
    assert not found, "convert with explorer.inputs instead:\n" + "\n".join(found)
    assert converting.search("attentions[layer - 1, head - 1]") and not converting.search("num_layers - 1")


def changelog_sections(text: str) -> list[tuple[str, str | None]]:
    """(version, date or None) of every ``## [...]`` heading of a Keep a Changelog file, newest first."""
    headings = re.findall(r"^## (.*)$", text, re.M)
    found = [re.fullmatch(r"\[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?", heading) for heading in headings]
    assert all(found), f"headings not of the form '[version] - YYYY-MM-DD': {headings}"
    return [(match[1], match[2]) for match in found]


def test_pyproject_has_the_changelogs_newest_release_and_every_release_has_a_date():
    sections = changelog_sections((ROOT / "CHANGELOG.md").read_text(encoding="utf-8"))
    released = [(version, day) for version, day in sections if version != "Unreleased"]
    assert released and all(day for _, day in released), f"a released section without a date: {released}"
    days = [date.fromisoformat(day) for _, day in released]
    assert days == sorted(days, reverse=True), "releases are listed newest first"
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["version"] == released[0][0]


def test_every_test_that_starts_chromium_or_a_server_carries_its_marker():
    """``make test-fast`` leaves out the ``browser`` and ``served`` tests: one without its marker would slip in."""
    tests = ROOT / "tests"
    conftests = sorted(tests.rglob("conftest.py"))
    found = [line for path in sorted(tests.rglob("test_*.py")) for line in unmarked(path, conftests)]
    assert not found, "mark these (pytestmark or a decorator):\n" + "\n".join(found)


MARKER_CONFTEST = """
import pytest
from app_fixtures import serving
from benchmarks.chromium import launch_chromium

@pytest.fixture
def browser():
    yield launch_chromium(None)

def serving_app(app):
    return serving(app.demo)

@pytest.fixture
def url(app):
    yield serving_app(app)

@pytest.fixture
def page(browser, url):
    return browser, url
"""
MARKER_MODULE = """
import subprocess, sys
import pytest
from app_fixtures import serving

pytestmark = pytest.mark.slow

def start(demo):
    with serving(demo) as url:
        return url

@pytest.fixture
def url(url):
    return url + "?view=errors"

def test_page(page): ...

@pytest.mark.browser
def test_marked_browser_with_a_server(page): ...

@pytest.mark.browser
@pytest.mark.served
def test_both_marked(page): ...

def test_figure_only(browser): ...

def test_a_helper_serves(app):
    start(app.demo)

def test_the_command(tmp_path):
    subprocess.run([sys.executable, "app.py", "--port", "1"])

def test_reads_a_file_named_app_py():
    open("app.py").read()

def test_unit(app, tmp_path): ...
"""


def test_the_marker_check_follows_fixtures_and_helpers_to_chromium_and_servers(tmp_path):
    (tmp_path / "conftest.py").write_text(MARKER_CONFTEST, encoding="utf-8")
    (tmp_path / "test_sample.py").write_text(MARKER_MODULE, encoding="utf-8")
    assert unmarked(tmp_path / "test_sample.py", [tmp_path / "conftest.py"]) == [
        "test_sample.py::test_page: browser",
        "test_sample.py::test_page: served",
        "test_sample.py::test_marked_browser_with_a_server: served",
        "test_sample.py::test_figure_only: browser",
        "test_sample.py::test_a_helper_serves: served",
        "test_sample.py::test_the_command: served",
    ]


TUTORIAL_ONLY = {"walkthrough.py:_watch", "walkthrough.py:walk_through"}  # read the tutorial's own blocks, not the
# interface (``capabilities``' ``tutorial_blocks``): annotated ``Classifier`` they would fail the type check
TYPED_PATHS = ["transformer/interface.py", "transformer/explain", "transformer/hub"]  # and the explorer's top modules


def model_annotations() -> dict[str, str | None]:
    """``module.py:function`` -> the annotation of its ``model`` parameter (None: none), for every function of
    ``transformer/explain`` and the explorer's core (its top-level modules) that takes one."""
    found = {}
    for path in [*sorted((ROOT / "transformer" / "explain").glob("*.py")), *sorted(EXPLORER.glob("*.py"))]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                for arg in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]:
                    if arg.arg == "model":
                        annotation = ast.unparse(arg.annotation) if arg.annotation else None
                        found[f"{path.name}:{node.name}"] = annotation
    return found


def test_every_function_that_takes_a_model_in_explain_and_the_explorers_core_types_it_as_the_interface():
    """``model: Classifier`` wherever a model is taken (issue 55's target: at least 90 %), which ``make lint``'s mypy
    then holds each body to; the Walkthrough's maths alone reads the tutorial's blocks."""
    found = model_annotations()
    typed = [name for name, annotation in found.items() if annotation == "Classifier"]
    assert {name for name in found if name not in typed} == TUTORIAL_ONLY
    assert len(typed) / len(found) >= 0.9 and len(found) > 50


def test_make_lint_type_checks_the_interface_the_explanations_the_hub_and_the_explorers_core():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    core = {f"transformer/explorer/{path.name}" for path in EXPLORER.glob("*.py") if path.name != "__init__.py"}
    assert set(TYPED_PATHS) | core <= set(config["files"])
    lint = (ROOT / "Makefile").read_text(encoding="utf-8").split("\nlint:", 1)[1].split("\n\n", 1)[0]
    assert "$(BIN)/mypy" in lint
    assert re.search(r"^mypy==[\d.]+$", (ROOT / "requirements-dev.txt").read_text(encoding="utf-8"), re.M)


GRADIO_PRIVATE = [  # Gradio's internals: its queue's and blocks' records, and modules outside its documented API
    *["._queue", "event_ids_to_events", "state_holder", "_api_info", "router.routes", "queue.push"],
    *["pending_event_ids_session", "pending_messages_per_session", "event_queue_per_concurrency_id", "active_jobs"],
    *["send_message", "preprocess_data", "temp_file_sets", "server.config", "LocalContext", "stop_event"],
    *["gradio.utils", "gradio.context", "gradio.queueing", "gradio.data_classes", "gradio.server_messages"],
]
SEAM = EXPLORER / "serving" / "gradio_seam.py"


def private_gradio_names(path: Path) -> list[str]:
    """``path:line name`` for each private Gradio name (``GRADIO_PRIVATE``) in ``path``."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [f"{path.name}:{i} {name}" for i, line in enumerate(lines, 1) for name in GRADIO_PRIVATE if name in line]


def test_private_gradio_names_appear_only_in_the_seam(tmp_path):
    """Every private Gradio name the product uses goes through ``serving/gradio_seam.py``, where its contract test
    (``tests/explorer/serving/test_gradio_seam.py``) holds it to the installed Gradio."""
    sources = [ROOT / "app.py", *sorted((ROOT / "transformer").rglob("*.py"))]
    assert [found for path in sources if path != SEAM for found in private_gradio_names(path)] == []
    assert private_gradio_names(SEAM)  # the grep reads what it should
    planted = tmp_path / "planted.py"
    planted.write_text("queue = demo._queue\n", encoding="utf-8")
    assert private_gradio_names(planted) == ["planted.py:1 ._queue"]


MAX_MODULE_LINES = 450


def test_no_module_of_the_package_is_longer_than_450_lines():
    """A module past this does more than one job: split it by what it does (``drawing/figures.py`` was 594 lines)."""
    sizes = {path: len(path.read_text(encoding="utf-8").splitlines()) for path in (ROOT / "transformer").rglob("*.py")}
    assert {str(path.relative_to(ROOT)): n for path, n in sizes.items() if n > MAX_MODULE_LINES} == {}
