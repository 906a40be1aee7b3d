"""No import cycle among the modules of migrations/, lazy imports included.

A cycle hid behind imports inside functions before (tsql.render imported the writers that
imported tsql back; db2_partition took `s: object` to import db2 lazily): this walks the whole
syntax tree of every module, so an import at any depth counts.
"""

from __future__ import annotations

import ast
from pathlib import Path

import migrations

PACKAGE = Path(migrations.__file__).parent


def _module(path: Path) -> str:
    return "migrations" if path.name == "__init__.py" else f"migrations.{path.stem}"


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the migrations modules it imports anywhere in its body. `from migrations import x`
    names the submodule x when there is one, else the package itself; the package a submodule
    belongs to is not counted (Python imports it first whatever the importer)."""
    modules = {_module(p): p for p in sorted(root.glob("*.py"))}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from the package (every module here is at its top level)
                    base = "migrations" + (f".{base}" if base else "")
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    targets.append(sub if sub in modules else base)
            graph[name] |= {t for t in targets if t in modules and t != name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle as a path that starts and ends at the same module, or None."""
    done: set[str] = set()
    stack: list[str] = []
    on_stack: set[str] = set()

    def visit(node: str) -> list[str] | None:
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt in on_stack:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in done:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        on_stack.discard(node)
        done.add(node)
        return None

    for start in sorted(graph):
        if start not in done:
            found = visit(start)
            if found:
                return found
    return None


def test_migrations_modules_import_without_cycles() -> None:
    graph = import_graph()
    assert len(graph) > 20  # every module was read
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_frames_import_no_writer() -> None:
    """The frames import only the plan, the quoting and the header (and the T-SQL checks the T-SQL
    frame): never a writer or a dispatcher, which was the cycle."""
    graph = import_graph()
    base = {"migrations.plan", "migrations.quoting", "migrations.header"}
    assert graph["migrations.tsql_frame"] <= base
    assert graph["migrations.tsql_checks"] <= base | {"migrations.tsql_frame"}
    assert graph["migrations.db2_frame"] <= base
    assert "migrations.tsql_online" in graph["migrations.tsql"]
    assert "migrations.db2_partition" in graph["migrations.db2"]


def test_a_lazy_import_cycle_is_found(tmp_path: Path) -> None:
    """The check itself: a cycle made only of an import inside a function is reported."""
    (tmp_path / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "a.py").write_text("from migrations.b import x\n", encoding="utf-8")
    (tmp_path / "b.py").write_text("def x():\n    from migrations import a\n    return a\n", encoding="utf-8")
    graph = import_graph(tmp_path)
    assert graph["migrations.a"] == {"migrations.b"}
    assert graph["migrations.b"] == {"migrations.a"}
    assert find_cycle(graph) == ["migrations.a", "migrations.b", "migrations.a"]
