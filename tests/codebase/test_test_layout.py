"""The tests laid out like the code: each test module in the folder of the code it tests (what it imports says so),
each view's tests in a module named after it, the Chromium and started-server tests in folders of their own."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import transformer

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
VIEWS = ROOT / "transformer" / "explorer" / "views"
MODEL_MODULES = ("attention", "positional_encoding", "feed_forward", "encoder_block", "classifier", "tokenizer")
MODEL_MODULES += ("loading", "interface", *transformer.__all__)
# {folder under tests/: what a module there imports or asks for (a fixture) when it tests that folder's code}
CODE = {
    "model": rf"transformer\.({'|'.join(MODEL_MODULES)})",
    "explain": r"transformer\.explain",
    "training": r"transformer\.(training|train|evaluate)",
    "behaviour": r"transformer\.behaviour",
    "hub": r"transformer\.hub|hub_checkpoints|hub_model_dirs",
    "explorer": r"transformer\.explorer|app|probe_endpoints",  # the core, and tests of the explorer as a whole
    **{
        f"explorer/{kind}": rf"transformer\.explorer\.{kind}"
        for kind in ("page", "drawing", "serving", "corpus", "views")
    },
    "browser": r"browser|page",  # drives Chromium (tests/conftest.py's fixtures)
    "served": r"url|client|serving",  # starts a server (tests/conftest.py's fixtures, app_fixtures.serving)
    "benchmarks": r"benchmarks",  # the measuring tools themselves (benchmarks/*.py), not what they measure
    "codebase": r".+",  # reads the repository's files and docs
}
# Views whose tests still live in modules of several views (test_views, explorer/test_every_view, test_patching):
# give one a module of its own, then take it off this list.
VIEWS_WITHOUT_A_MODULE = {"all_heads", "attention", "positional_encoding"}


def all_test_modules() -> list[Path]:
    return sorted(TESTS.rglob("test_*.py"))


def used_names(path: Path) -> set[str]:
    """What a module imports (``a.b`` and ``a.b.name`` for ``from a.b import name``), the functions it calls by
    name, and the fixtures its tests and fixtures ask for."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
        elif isinstance(node, ast.FunctionDef) and (node.name.startswith("test_") or node.decorator_list):
            names |= {argument.arg for argument in node.args.args}  # the fixtures a test or a fixture asks for
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            names.add(node.func.id)
    return names


def test_every_test_module_sits_in_the_folder_of_the_code_it_tests():
    misplaced = {}
    for path in all_test_modules():
        folder = path.parent.relative_to(TESTS).as_posix()
        pattern = CODE.get(folder)
        if pattern is None or not any(re.fullmatch(rf"(?:{pattern})(?:\..+)?", name) for name in used_names(path)):
            misplaced[path.relative_to(TESTS).as_posix()] = (
                "no such folder" if pattern is None else "tests no code there"
            )
    assert not misplaced, misplaced


def test_each_view_s_tests_sit_in_a_module_named_after_it():
    views = {path.stem for path in VIEWS.glob("*.py")} - {"__init__"}
    named = {path.stem.removeprefix("test_") for path in (TESTS / "explorer" / "views").glob("test_*.py")}
    assert named - views == {"views"}  # test_views.py: the views package itself (views/__init__.py and what they share)
    assert views - named == VIEWS_WITHOUT_A_MODULE


def test_the_chromium_tests_are_named_for_it_and_sit_together():
    named = {path.relative_to(TESTS).as_posix() for path in all_test_modules() if path.stem.endswith("browser")}
    assert named == {path.relative_to(TESTS).as_posix() for path in (TESTS / "browser").glob("test_*.py")}


def test_no_two_test_modules_share_a_name():
    """pytest imports each module under its file name (no __init__.py in tests/): two alike would collide."""
    names = [path.name for path in all_test_modules()]
    assert len(names) == len(set(names)), sorted(name for name in names if names.count(name) > 1)
