"""No import cycle between the project's modules, lazy imports included.

Cycles hid behind imports inside functions before (tsql.render imported the writers that imported
tsql back; app.scripts imported cli_script, app.api and app.web imported each other): this walks
the whole syntax tree of every module of the project's packages, so an import at any depth counts.
Imports under `if TYPE_CHECKING:` do not: they never run, and they are how a module names a type
without importing its module.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("app", "advisors", "connectors", "migrations", "policies")

# Cycles known today, each as the set of modules it joins, with why it is left for now. A cycle
# not listed here fails the test; one listed here that is gone fails it too (take it off the list).
KNOWN: dict[frozenset[str], str] = {}


def module_files(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> dict[str, Path]:
    """Module name -> its file, for every .py file under the packages (subpackages included)."""
    out: dict[str, Path] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            rel = path.relative_to(root).with_suffix("")
            parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
            if any(p.startswith(".") or p == "__pycache__" for p in parts):
                continue
            out[".".join(parts)] = path
    return out


def _type_checking_only(tree: ast.AST) -> set[ast.AST]:
    """The nodes inside `if TYPE_CHECKING:` (or `typing.TYPE_CHECKING`) blocks."""
    skipped: set[ast.AST] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = (
                test.id
                if isinstance(test, ast.Name)
                else test.attr
                if isinstance(test, ast.Attribute)
                else ""
            )
            if name == "TYPE_CHECKING":
                for child in node.body:
                    skipped.update(ast.walk(child))
    return skipped


def import_graph(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> dict[str, set[str]]:
    """Module -> the project modules it imports anywhere in its body. `from a.b import x` names the
    submodule a.b.x when there is one, else a.b; the packages above the imported module are not
    counted (Python imports them first whatever the importer)."""
    modules = module_files(root, packages)
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        skipped = _type_checking_only(tree)
        is_package = path.name == "__init__.py"
        for node in ast.walk(tree):
            if node in skipped:
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from this module's package, `level` - 1 packages up
                    here = name.split(".") if is_package else name.split(".")[:-1]
                    up = here[: len(here) - (node.level - 1)]
                    base = ".".join([*up, base] if base else up)
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    targets.append(sub if sub in modules else base)
            graph[name] |= {t for t in targets if t in modules and t != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The groups of modules that import one another, directly or around a loop (the strongly
    connected components of more than one module, Tarjan's algorithm), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = set()
            while True:
                top = stack.pop()
                on_stack.discard(top)
                group.add(top)
                if top == node:
                    break
            if len(group) > 1:
                found.append(frozenset(group))

    for start in sorted(graph):
        if start not in index:
            visit(start)
    return sorted(found, key=sorted)


def path_through(graph: dict[str, set[str]], group: frozenset[str]) -> list[str]:
    """One loop through a cycle's modules, for the failure message: a -> b -> a."""
    start = min(group)
    seen = {start: [start]}
    todo = [start]
    while todo:
        node = todo.pop(0)
        for nxt in sorted(graph[node] & group):
            if nxt == start:
                return [*seen[node], start]
            if nxt not in seen:
                seen[nxt] = [*seen[node], nxt]
                todo.append(nxt)
    return sorted(group)


def test_the_project_has_no_import_cycle_but_the_known_ones() -> None:
    graph = import_graph()
    assert len(graph) > 150 and "app.main" in graph and "migrations.tsql" in graph  # every package was read
    found = cycles(graph)
    new = [" -> ".join(path_through(graph, c)) for c in found if c not in KNOWN]
    assert not new, "import cycles:\n" + "\n".join(new)
    gone = [sorted(c) for c in KNOWN if c not in found]
    assert not gone, f"no longer a cycle, take it off KNOWN: {gone}"


def test_a_lazy_import_cycle_is_found(tmp_path: Path) -> None:
    """The check itself: a cycle made only of an import inside a function is reported, through a
    relative import and a subpackage; an import under TYPE_CHECKING is not one."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "sub" / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "a.py").write_text("from pkg.sub.b import x\n", encoding="utf-8")
    (pkg / "sub" / "b.py").write_text("def x():\n    from .. import a\n    return a\n", encoding="utf-8")
    (pkg / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.a import x\n", encoding="utf-8"
    )
    (pkg / "sub" / "d.py").write_text("import pkg.c\n", encoding="utf-8")
    graph = import_graph(tmp_path, ("pkg",))
    assert graph["pkg.a"] == {"pkg.sub.b"}
    assert graph["pkg.sub.b"] == {"pkg.a"}
    assert graph["pkg.c"] == set()
    assert graph["pkg.sub.d"] == {"pkg.c"}
    assert cycles(graph) == [frozenset({"pkg.a", "pkg.sub.b"})]
    assert path_through(graph, cycles(graph)[0]) == ["pkg.a", "pkg.sub.b", "pkg.a"]
