"""The tempdb move (MODIFY FILE, takes effect at restart), issue #15 B: every tempdb file of the
moved kind is in the plan, and the script says how to get the instance up if it does not start."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from migrations import FileMove, Move, MoveFiles, Options, Target, render_pair
from tests.migrations.golden_cases import CASES, case_move
from tests.migrations.sqltokens import tsql_batches

AT = datetime(2024, 5, 2, 6, 0, tzinfo=UTC)
OPTIONS = Options(generator="t")


def _move(files: list[tuple[str, str, str]]) -> Move:
    return Move(
        "tempdb/data",
        Target("sqlserver", "SQL1", "tempdb"),
        "tempdb",
        "tempdb",
        "flash",
        "fc",
        MoveFiles("tempdb", "restart", tuple(FileMove(n, a, n, b, 8 * 1024**3) for n, a, b in files)),
    )


def _texts(move: Move) -> tuple[str, str]:
    forward, rollback = render_pair(move, "tsql", OPTIONS, AT)
    return forward.text, rollback.text


TWO = _move(
    [
        ("tempdev", "T:\\t\\tempdb.mdf", "F:\\fc\\tempdb.mdf"),
        ("temp2", "T:\\t\\temp2.ndf", "F:\\fc\\temp2.ndf"),
    ]
)


def test_every_tempdb_file_of_the_moved_kind_must_be_in_the_plan() -> None:
    """A tempdb data file the plan does not name would stay on the old tier: stop before any
    MODIFY FILE, listing it. Only the kinds (data / log) of the planned files count, so a plan
    that moves the data files alone stays possible."""
    for text in _texts(TWO):
        batches = tsql_batches(text)
        check = next(i for i, b in enumerate(batches) if "@missed" in b)
        first_modify = next(
            i for i, b in enumerate(batches) if "MODIFY FILE (NAME" in b and "ALTER DATABASE [tempdb]" in b
        )
        assert check < first_modify
        b = batches[check]
        assert "WHERE mf.database_id = DB_ID(N'tempdb') AND mf.name NOT IN (N'temp2', N'tempdev')" in b
        assert (
            "AND mf.type IN (SELECT p.type FROM sys.master_files AS p WHERE p.database_id = DB_ID(N'tempdb') "
            "AND p.name IN (N'temp2', N'tempdev'))"
        ) in b
        lines = b.split("\n")
        stop = lines.index("IF @missed <> N''")
        assert (
            "would stay where they are:' + @missed" in lines[stop + 2]
            and "Nothing was changed." in lines[stop + 2]
        )


def test_the_golden_cases_check_coverage_too() -> None:
    for name in ("tsql_tempdb_data", "tsql_tempdb_log"):
        move = case_move(next(c for c in CASES if c.name == name))
        for text in _texts(move):
            assert "IF @missed <> N''" in text, name


def test_recovery_path_when_the_instance_does_not_start() -> None:
    """Microsoft Learn, Move system databases, failure recovery: NET START ... /f /T3608, MODIFY
    FILE back to the old path, restart. Printed with the restart reminder, per file."""
    fwd, back = _texts(TWO)
    for text, olds in (
        (fwd, ("T:\\t\\tempdb.mdf", "T:\\t\\temp2.ndf")),
        (back, ("F:\\fc\\tempdb.mdf", "F:\\fc\\temp2.ndf")),
    ):
        last = tsql_batches(text)[-2]
        restart = last.index("RESTART the SQL Server service")
        recover = last.index("NET START MSSQLSERVER /f /T3608")
        assert restart < recover
        assert "NET START MSSQL$<instance> /f /T3608" in last
        for name, old in zip(("tempdev", "temp2"), olds, strict=True):
            assert f"ALTER DATABASE [tempdb] MODIFY FILE (NAME = N''{name}'', FILENAME = N''{old}'');" in last
        assert last.index("NET STOP MSSQLSERVER") > recover
    linux = _texts(_move([("tempdev", "/var/opt/mssql/data/tempdb.mdf", "/mnt/fc/tempdb.mdf")]))[0]
    assert "sudo -u mssql /opt/mssql/bin/sqlservr -f -T3608" in linux and "NET START" not in linux


def test_tempdb_operations_block() -> None:
    head = _texts(TWO)[0].split(":on error exit")[0]
    block = head[head.index("-- Operations:") :].split("\n")[1:7]
    fields = [re.match(r"--   ([A-Za-z ]+):", line).group(1) for line in block]  # type: ignore[union-attr]
    assert fields == ["Duration", "Log volume", "Blocking", "Backups", "To abort", "To recover"]
    ops = "\n".join(block)
    assert "next restart" in ops and "(16.0 GB)" in ops
    assert "/f /T3608" in ops and "Move system databases" in ops
