"""`tierwise advise --explain OBJECT`: the evidence block for one object; ambiguous and unknown names."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli import app
from tests.conftest import FIXTURES
from tests.fixture_policy import ROOT, mapped_policy

runner = CliRunner()
IMPORT = FIXTURES / "import"
FILES = [str(IMPORT / "sqlserver_file_stats.csv"), str(IMPORT / "sqlserver_partitions.csv")]


_MAPPED: list[Path] = []  # the fixture's drives, mapped to tiers as an admin would (one file per module)


@pytest.fixture(scope="module", autouse=True)
def _mapped_policy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    _MAPPED.append(mapped_policy(tmp_path_factory.mktemp("explain") / "policy.yaml"))
    yield
    _MAPPED.clear()


def _explain(query: str, *policy: str):  # type: ignore[no-untyped-def]
    if not policy:
        policy = ("--policy", str(_MAPPED[0]))
    return runner.invoke(app, ["advise", "--input", *FILES, "--explain", query, *policy])


def test_explain_by_server_database_name() -> None:
    r = _explain("SQLPROD01/master/PRIMARY")
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0] == "SQLPROD01/master filegroup PRIMARY  [master/filegroup/PRIMARY]"
    assert "pinned to fc by the policy (system databases are moved only with the instance)" in lines[1]
    assert lines[2].startswith("  decided by: pinned (rule ")
    assert any(line.startswith("  numbers: read_iops=") for line in lines)
    assert [line.split(":")[0] for line in lines if line.startswith("  on ")] == [
        "  on flash",
        "  on fc",
        "  on sata",
    ]


def test_explain_by_key_is_case_insensitive() -> None:
    r = _explain("sales/filegroup/primary")
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("SQLPROD01/Sales filegroup PRIMARY  [Sales/filegroup/PRIMARY]")


def test_explain_ambiguous_lists_the_candidates() -> None:
    r = _explain("PRIMARY")
    assert r.exit_code == 2
    assert "'PRIMARY' matches 4 objects" in r.stderr
    for candidate in ("SQLPROD01/master/PRIMARY", "SQLPROD01/Sales/PRIMARY", "SQLPROD02\\OLTP/OLTP/PRIMARY"):
        assert candidate in r.stderr
    assert r.stdout == ""


def test_explain_unknown_object() -> None:
    r = _explain("FG_NOPE")
    assert r.exit_code == 2
    assert "error: no object matches 'FG_NOPE'" in r.stderr


def test_explain_an_object_on_an_unmapped_drive_says_where_it_is() -> None:
    """The shipped policy names none of the fixture's drives: the object is left out, and the error
    says which locations to map."""
    r = _explain("sales/filegroup/primary", "--policy", str(ROOT / "policies" / "default.yaml"))
    assert r.exit_code == 2
    assert "no object matches 'sales/filegroup/primary'" in r.stderr
    assert "E:\\data\\ matches no tier of the policy" in r.stderr
