"""Which tests start Chromium or a server, read from their source without importing them: the fixtures a test asks
for, what those fixtures and the module's own helpers call, followed through every conftest.py.
tests/codebase/test_codebase.py checks that each such test carries the marker ``make test-fast`` leaves out."""

import ast
from pathlib import Path

# What starts each thing, by the name a test module calls it by (app_fixtures.serving and conftest.serving_app launch
# the page on a free port), or a command line in a list that holds "app.py" (a subprocess running the app).
STARTS = {
    "browser": {"launch_chromium", "sync_playwright", "async_playwright"},
    "served": {"serving", "serving_app", "app.py"},
}


def functions(tree: ast.Module) -> dict[str, ast.FunctionDef]:
    """A module's top-level functions (tests, fixtures and helpers) by name."""
    return {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}


def names_in(function: ast.FunctionDef) -> set[str]:
    """The names a function's body and decorators use, and the words of the command lines it writes as lists."""
    nodes = list(ast.walk(function))
    words = (item for node in nodes if isinstance(node, ast.List) for item in node.elts)
    return {node.id for node in nodes if isinstance(node, ast.Name)} | {
        word.value for word in words if isinstance(word, ast.Constant) and isinstance(word.value, str)
    }


def marks(node: ast.AST) -> set[str]:
    """The ``pytest.mark.<name>`` names written in ``node`` (a decorator list's items, or ``pytestmark``'s value)."""
    return {
        found.attr
        for found in ast.walk(node)
        if isinstance(found, ast.Attribute) and isinstance(found.value, ast.Attribute) and found.value.attr == "mark"
    }


def module_marks(tree: ast.Module) -> set[str]:
    """The markers ``pytestmark = ...`` gives every test of the module."""
    assigned = (node for node in tree.body if isinstance(node, ast.Assign))
    return {mark for node in assigned if any(getattr(t, "id", "") == "pytestmark" for t in node.targets)
            for mark in marks(node.value)}  # fmt: skip


def is_fixture(function: ast.FunctionDef) -> bool:
    return any("fixture" in ast.unparse(decorator) for decorator in function.decorator_list)


class Scope:
    """A test module's functions, then the conftest functions they fall back to; what each one starts."""

    def __init__(self, module: ast.Module, conftests: list[ast.Module]):
        self.local = functions(module)
        self.shared = {name: node for tree in conftests for name, node in functions(tree).items()}
        self.found: dict[int, set[str]] = {}

    def fixture(self, name: str, asker: ast.FunctionDef) -> ast.FunctionDef | None:
        """The fixture ``name`` as pytest finds it for ``asker``: the module's own, else conftest's (a fixture asking
        for its own name gets conftest's)."""
        return self.shared.get(name) if name == asker.name else self.local.get(name, self.shared.get(name))

    def callees(self, function: ast.FunctionDef) -> list[ast.FunctionDef]:
        """The fixtures a test or fixture asks for, and the helpers its body names (the module's own functions,
        conftest's that are not fixtures)."""
        asks = function.args.args if function.name.startswith("test_") or is_fixture(function) else []
        fixtures = [self.fixture(arg.arg, function) for arg in asks]
        helpers = [self.local.get(name) or self.shared.get(name) for name in names_in(function)]
        helpers = [helper for helper in helpers if helper is not None and not is_fixture(helper)]
        return [callee for callee in [*fixtures, *helpers] if callee is not None and callee is not function]

    def starts(self, function: ast.FunctionDef) -> set[str]:
        """What ``function`` starts (``STARTS``'s keys), itself or through what it calls."""
        if id(function) not in self.found:
            self.found[id(function)] = set()  # a cycle adds nothing
            outside = names_in(function) - self.local.keys()  # a module's own function of that name is followed
            started = {thing for thing, signs in STARTS.items() if outside & signs}
            self.found[id(function)] = started.union(*(self.starts(callee) for callee in self.callees(function)))
        return self.found[id(function)]


def unmarked(path: Path, conftests: list[Path]) -> list[str]:
    """Each test in the module at ``path`` that starts Chromium or a server without its marker: "name: marker"."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    scope = Scope(tree, [ast.parse(conftest.read_text(encoding="utf-8")) for conftest in conftests])
    everywhere = module_marks(tree)
    return [
        f"{path.name}::{name}: {thing}"
        for name, test in scope.local.items()
        if name.startswith("test_")
        for thing in sorted(scope.starts(test) - everywhere - set().union(*map(marks, test.decorator_list)))
    ]
