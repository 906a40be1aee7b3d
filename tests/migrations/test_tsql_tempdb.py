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


# -- issue #30, N3: clusters, foreign files, a directory per instance ------------------------------


def _barrier(batches: list[str]) -> int:
    return next(i for i, b in enumerate(batches) if "check-only run: every pre-check above passed" in b)


def test_failover_cluster_instance_is_checked_before_anything_changes() -> None:
    """N3: tempdb moves never looked at SERVERPROPERTY('IsClustered'). On a failover cluster
    instance the instance starts on whichever node owns it; Microsoft Learn,
    sys.dm_io_cluster_valid_path_names: data and log files must be on "the disks that are in the
    cluster resource group associated with the instance"; tempdb alone may be on a local disk of
    every node (SQL Server 2012+), and then the directory must exist on each. The pre-check says
    whether the target is such a shared disk, and otherwise warns naming every node
    (sys.dm_os_cluster_nodes). 2012 has sys.dm_io_cluster_shared_drives instead."""
    for text in _texts(TWO):
        batches = tsql_batches(text)
        i = next(i for i, b in enumerate(batches) if "SERVERPROPERTY('IsClustered')" in b)
        assert i < _barrier(batches)
        b = batches[i]
        block = b[b.index("IF CAST(SERVERPROPERTY('IsClustered') AS int) = 1") :]
        assert "FROM sys.dm_os_cluster_nodes;" in block
        assert "NodeName" in block and "is_current_owner" in block
        assert "FROM sys.dm_io_cluster_valid_path_names" in block
        assert "FROM sys.dm_io_cluster_shared_drives" in block  # SQL Server 2012
        assert block.index(">= 12") < block.index("dm_io_cluster_valid_path_names")
        assert "on EVERY node" in block and "does not start on a node" in block
    assert (
        "SERVERPROPERTY('IsClustered')"
        not in _texts(TWO)[0]
        .split(":on error exit")[1]
        .split("check-only run: every pre-check above passed")[1]
    )


def test_a_file_at_the_target_that_is_not_this_tempdbs_own_stops_the_script() -> None:
    """N3: a file already at a target path (another instance's tempdb in a shared tier directory, a
    leftover) was taken over silently at the restart. Now each target path is probed (as the
    service account) and refused unless this instance's tempdb already runs from it (a re-run
    after the restart); a file of another database of this instance at the path is refused too."""
    for base, text in zip(("F:\\fc\\", "T:\\t\\"), _texts(TWO), strict=True):
        batches = tsql_batches(text)
        i = next(i for i, b in enumerate(batches) if "@target_exists" in b)
        assert i < _barrier(batches)
        b = batches[i]
        for name, path in (("tempdev", "tempdb.mdf"), ("temp2", "temp2.ndf")):
            full = base + path
            probe = b.index(f"@p = N'{full}', @e = @target_exists OUTPUT")
            stop = b.index(
                f"IF @target_exists = 1 AND NOT EXISTS (SELECT 1 FROM tempdb.sys.database_files WHERE name = N'{name}' "
                f"AND LOWER(physical_name) = LOWER(N'{full}'))",
                probe,
            )
            refusal = b[stop : b.index("END;", stop)]
            assert "another instance''s tempdb file" in refusal and "Nothing was changed." in refusal
            assert "RAISERROR(N'%s', 16, 1, @msg);" in refusal
            other_db = b.index(
                f"WHERE database_id <> DB_ID(N'tempdb') AND LOWER(physical_name) = LOWER(N'{full}'))", stop
            )
            assert other_db > stop


def test_tempdb_goes_to_a_directory_of_its_own_instance_on_the_tier() -> None:
    """N3: the demo put temp2.ndf straight into the tier's root (E:\\flash\\), which several
    instances of an array share. The target is now <tier directory><instance>\\tempdb\\, the
    instance written as a file stem (a named instance HOST\\INST as HOST_INST)."""
    move = case_move(next(c for c in CASES if c.name == "tsql_tempdb_data"))
    assert all(f.to_path.startswith("F:\\fc\\SQLPROD01\\tempdb\\") for f in move.action.files)  # type: ignore[union-attr]
    log = case_move(next(c for c in CASES if c.name == "tsql_tempdb_log"))
    assert log.action.files[0].to_path.startswith("F:\\fc\\SQLPROD01\\tempdb\\")  # type: ignore[union-attr]
    from migrations import TierSpot, select_moves

    doc = {
        "objects": [
            {
                "engine": "sqlserver",
                "server": "HOST7\\SALES",
                "database": "tempdb",
                "kind": "tempdb",
                "name": "tempdb",
                "key": "tempdb/data",
                "placement_unit": "tempdb/data",
                "current_tier": "fc",
                "recommended_tier": "flash",
                "files": [
                    {"logical_name": "temp2", "physical_name": "F:\\fc\\temp2.ndf", "size_bytes": 1024**3}
                ],
            }
        ]
    }
    tiers = [TierSpot("flash", "E:\\flash\\"), TierSpot("fc", "F:\\fc\\")]
    (moved,) = select_moves(doc, source="t", tiers=tiers, dialect="tsql").moves
    assert moved.action.files[0].to_path == "E:\\flash\\HOST7_SALES\\tempdb\\temp2.ndf"  # type: ignore[union-attr]
    linux = [TierSpot("flash", "/var/opt/mssql/flash/"), TierSpot("fc", "/var/opt/mssql/fc/")]
    doc["objects"][0]["files"][0]["physical_name"] = "/var/opt/mssql/fc/temp2.ndf"  # type: ignore[index]
    (moved,) = select_moves(doc, source="t", tiers=linux, dialect="tsql").moves
    assert moved.action.files[0].to_path == "/var/opt/mssql/flash/HOST7_SALES/tempdb/temp2.ndf"  # type: ignore[union-attr]
