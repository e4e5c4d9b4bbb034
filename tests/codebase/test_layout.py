"""The explorer by kind: a small core, a short chain of imports, folders that say what they hold, CONTRIBUTING's table
true to them, and the page's numbering converted in one module."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[2]
EXPLORER = ROOT / "transformer" / "explorer"
GUIDE = ROOT / "CONTRIBUTING.md"
MAX_CORE_MODULES = 12  # the explorer's top level, __init__.py included
FOLDERS = ("page", "drawing", "serving", "corpus")  # views/ lists its modules in ``VIEWS`` instead
MAX_CHAIN = 6  # modules in the explorer's deepest chain of imports


def module_names(folder: Path) -> set[str]:
    """The file names of a folder's modules and scripts, its ``__init__.py`` aside."""
    return {path.name for path in folder.iterdir() if path.suffix in (".py", ".js") and path.name != "__init__.py"}


def table_rows(guide: str) -> list[str]:
    """The first cell of each row of CONTRIBUTING's table of where the page's pieces are."""
    section = guide[guide.index("## Where the page's pieces are") :]
    section = section[: section.index("\n## ", 1)]
    return [line.split(" | ")[0] for line in section.splitlines() if line.startswith("| `")]


def listed(guide: str) -> dict[str, set[str]]:
    """{folder ("" for the top level): the file names the table lists in it}; a folder's row names it first."""
    found: dict[str, set[str]] = {}
    for cell in table_rows(guide):
        names = re.findall(r"`([^`]+)`", cell)
        folder = names[0].removesuffix("/") if names[0].endswith("/") else ""
        found.setdefault(folder, set()).update(name for name in names if not name.endswith("/"))
        if folder:
            found.setdefault("", set()).add(folder + "/")
    return found


def test_the_explorers_top_level_is_a_small_core():
    core = [path.name for path in EXPLORER.glob("*.py")]
    assert "__init__.py" in core and len(core) <= MAX_CORE_MODULES, sorted(core)


def test_each_folder_says_what_it_holds():
    for folder in FOLDERS:
        docstring = ast.get_docstring(ast.parse((EXPLORER / folder / "__init__.py").read_text(encoding="utf-8")))
        named = set(re.findall(r"``([\w.]+)``", docstring or ""))
        stems = {name.removesuffix(".py") for name in module_names(EXPLORER / folder)}
        assert named == stems, (folder, named ^ stems)


def test_contributing_lists_every_module_of_the_explorer_and_nothing_else():
    table = listed(GUIDE.read_text(encoding="utf-8"))
    top = {path.name for path in EXPLORER.glob("*.py")} - {"__init__.py"}
    folders = {path.name + "/" for path in EXPLORER.iterdir() if (path / "__init__.py").is_file()}
    assert table[""] - {"app.py"} == top | folders
    assert (ROOT / "app.py").is_file() and "app.py" in table[""]
    for folder in FOLDERS:
        assert table[folder] == module_names(EXPLORER / folder), folder


def test_the_table_check_finds_a_module_missing_from_the_table():
    guide = "## Where the page's pieces are\n\n| `serving/`: `guard.py` | x |\n| `inputs.py` | y |\n\n## Next\n"
    assert listed(guide) == {"serving": {"guard.py"}, "": {"inputs.py", "serving/"}}
    assert listed(guide)["serving"] != module_names(EXPLORER / "serving")


def converts_numbering(node: ast.AST) -> bool:
    """``layer - 1``, ``head - 1`` (a count such as ``num_layers - 1`` aside), or ``range(1, n + 1)``."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub) and ast.unparse(node.right) == "1":
        return re.search(r"\b(?!num_)\w*(layer|head)", ast.unparse(node.left)) is not None
    if isinstance(node, ast.Call) and ast.unparse(node.func) == "range" and len(node.args) == 2:
        first, last = node.args
        return ast.unparse(first) == "1" and isinstance(last, ast.BinOp) and ast.unparse(last.right) == "1"
    return False


def conversions(path: Path, root: Path = ROOT) -> list[str]:
    """Each ``converts_numbering`` in ``path``, in line order: "file:line code"."""
    nodes = sorted((node for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if converts_numbering(node)),
                   key=lambda node: (node.lineno, node.col_offset))  # fmt: skip
    return [f"{path.relative_to(root)}:{node.lineno} {ast.unparse(node)}" for node in nodes]


def test_only_inputs_converts_the_pages_numbering_of_layers_and_heads():
    """Layers and heads count from 1 for people and from 0 in the model; ``inputs.py`` converts both ways and lists
    the page's numbers (``numbers``), so no other module of the explorer subtracts 1 or counts from 1 itself."""
    found = [hit for path in sorted(EXPLORER.rglob("*.py")) if path.name != "inputs.py" for hit in conversions(path)]
    assert found == []
    assert conversions(EXPLORER / "inputs.py")  # the check sees inputs.py's own conversions


def test_the_numbering_check_finds_each_kind_of_conversion(tmp_path):
    source = "a = attentions[layer - 1]\nb = range(1, model.num_heads + 1)\nc = num_layers - 1\nd = range(1, stages)\n"
    (tmp_path / "mod.py").write_text(source, encoding="utf-8")
    assert conversions(tmp_path / "mod.py", tmp_path) == [
        "mod.py:1 layer - 1",
        "mod.py:2 range(1, model.num_heads + 1)",
    ]


def deepest_chain(imports: dict[str, list[str]]) -> list[str]:
    """The longest chain ``a -> b -> ...`` of ``imports`` ({module: the modules it imports}), as modules."""

    @functools.cache
    def longest(module: str) -> tuple[str, ...]:
        return (module, *max((longest(imported) for imported in imports.get(module, [])), key=len, default=()))

    return list(max((longest(module) for module in imports), key=len, default=()))


def test_the_explorers_deepest_chain_of_imports_is_short():
    """The page code is handed the ``Registry`` instead of importing the views, so the page sits beside the views
    on the core rather than on top of them."""
    graph = grimp.build_graph("transformer")
    explorer = [module for module in graph.modules if module.startswith("transformer.explorer")]
    imports = {m: [i for i in graph.find_modules_directly_imported_by(m) if i in explorer] for m in explorer}
    chain = deepest_chain(imports)
    assert len(chain) <= MAX_CHAIN, " -> ".join(chain)


def test_the_chain_check_counts_modules_along_the_longest_path():
    imports = {"a": ["b", "c"], "b": ["c"], "c": ["d"], "d": [], "e": ["d"]}
    assert deepest_chain(imports) == ["a", "b", "c", "d"]
