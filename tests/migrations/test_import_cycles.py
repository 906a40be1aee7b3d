"""The script frames of migrations/ stay at the bottom of its imports.

A cycle hid behind imports inside functions before (tsql.render imported the writers that
imported tsql back; db2_partition took `s: object` to import db2 lazily). Cycles anywhere in the
project, lazy imports included, are tests/test_import_cycles.py's; this keeps only what is
particular to migrations/: which modules the frames may import.
"""

from __future__ import annotations

from tests.test_import_cycles import ROOT, cycles, import_graph


def _migrations_graph() -> dict[str, set[str]]:
    """The import graph of migrations/ alone (its imports of policies/ and the standard library
    left out: only the order among the script modules matters here)."""
    return import_graph(ROOT, ("migrations",))


def test_migrations_modules_import_without_cycles() -> None:
    graph = _migrations_graph()
    assert len(graph) > 20  # every module was read
    assert cycles(graph) == []


def test_the_frames_import_no_writer() -> None:
    """The frames import only the plan, the quoting and the header (and the T-SQL checks the T-SQL
    frame): never a writer or a dispatcher, which was the cycle."""
    graph = _migrations_graph()
    base = {"migrations.plan", "migrations.quoting", "migrations.header"}
    assert graph["migrations.tsql_frame"] <= base
    assert graph["migrations.tsql_checks"] <= base | {"migrations.tsql_frame"}
    assert graph["migrations.db2_frame"] <= base
    assert "migrations.tsql_online" in graph["migrations.tsql"]
    assert "migrations.db2_partition" in graph["migrations.db2"]
