"""The offline file move (SET OFFLINE / copy by hand / MODIFY FILE / SET ONLINE), issue #15 B.

Run 2 may only use a file at the new path when run 1 of this pair of scripts took the database
offline (a run marker in msdb); everything else here is the order of the batches a DBA relies on.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from migrations import FileMove, Move, MoveFiles, Options, Target, render_pair
from migrations.plan import SetReadOnly
from tests.migrations.golden_cases import CASES, case_move
from tests.migrations.sqltokens import tsql_batches

AT = datetime(2024, 5, 2, 6, 0, tzinfo=UTC)
OPTIONS = Options(generator="t")
MARKER = "msdb.dbo.tierwise_offline_run"
GATE = "N'tierwise: MANUAL STEP: "  # the run-2 batch (the header mentions the step too)
OFFLINE_CASES = [c for c in CASES if c.name in ("tsql_filegroup_offline_primary", "tsql_log_offline")]


def _move(paths: list[tuple[str, str, str]], size: int | None = 100 * 1024**3) -> Move:
    files = tuple(FileMove(n, src, n, dst, size) for n, src, dst in paths)
    return Move(
        "Sales/file/2",
        Target("sqlserver", "SQL1", "Sales"),
        "log_file",
        "Sales_log",
        "flash",
        "fc",
        MoveFiles("log", "offline", files),
    )


def _scripts(move: Move) -> dict[str, str]:
    forward, rollback = render_pair(move, "tsql", OPTIONS, AT)
    return {"forward": forward.text, "rollback": rollback.text}


def _all_offline() -> list[tuple[str, str, Move]]:
    out = []
    for case in OFFLINE_CASES:
        move = case_move(case)
        for direction, text in _scripts(move).items():
            out.append((f"{case.name}.{direction}", text, move))
    return out


OFFLINE = _all_offline()
IDS = [n for n, _, _ in OFFLINE]


def _batch(text: str, needle: str) -> str:
    """The one batch holding `needle`; the run-2 gate is written twice, identical: as a pre-check
    (a check-only run between the runs verifies the copies) and after step 1."""
    hits = [b for b in tsql_batches(text) if needle in b]
    assert hits and all(h == hits[0] for h in hits), f"{needle!r} in {len(hits)} different batches"
    assert len(hits) <= 2
    return hits[0]


def _index(batches: list[str], needle: str) -> int:
    return next(i for i, b in enumerate(batches) if needle in b)


@pytest.mark.parametrize(("name", "text", "move"), OFFLINE, ids=IDS)
def test_run2_uses_a_copy_only_under_run1s_marker(name: str, text: str, move: Move) -> None:
    """The stale-copy bug: a database already offline (taken so by someone else) had any file at
    the new path accepted as the copy. Now the copy probe comes after a stop on a missing marker
    for this plan and database, in both directions."""
    gate = _batch(text, GATE)
    plan = move.checksum()
    lines = gate.split("\n")
    marker_read = next(i for i, ln in enumerate(lines) if f"FROM {MARKER}" in ln)
    assert (
        f"plan_sha256 = N'{plan}'" in lines[marker_read + 1]
        and "database_name = N'Sales'" in lines[marker_read + 1]
    )
    stop = next(i for i, ln in enumerate(lines) if ln.strip() == "IF @marked IS NULL")
    first_probe = next(i for i, ln in enumerate(lines) if "@copy_exists OUTPUT" in ln or "xp_fileexist" in ln)
    assert marker_read < stop < first_probe, name
    refusal = "\n".join(lines[stop : stop + 4])
    assert (
        "not taken offline by run 1" in refusal
        and "Bring it online" in refusal
        and "Nothing was changed." in refusal
    )
    # the gate applies when the database is offline on its old files, whoever took it offline
    assert "IN (N'OFFLINE', N'RECOVERY_PENDING') AND (" in gate


@pytest.mark.parametrize(("name", "text", "move"), OFFLINE, ids=IDS)
def test_run2_refuses_when_the_database_was_online_in_between(name: str, text: str, move: Move) -> None:
    gate = _batch(text, GATE)
    # every planned file recorded, none resized since (sys.master_files.size against the marker)
    assert f"@marked_files <> {len(move.action.files)} OR EXISTS" in gate  # type: ignore[union-attr]
    assert "mf.size <> m.size_pages" in gate
    # a backup after the marker means it was online
    assert "FROM msdb.dbo.backupset WHERE database_name = N'Sales' AND backup_start_date > @marked" in gate
    assert gate.index("backup_start_date > @marked") < gate.index("@copy_exists OUTPUT")


@pytest.mark.parametrize(("name", "text", "move"), OFFLINE, ids=IDS)
def test_run1_records_the_marker_after_offline_and_the_end_clears_it(
    name: str, text: str, move: Move
) -> None:
    batches = tsql_batches(text)
    create = _index(batches, f"CREATE TABLE {MARKER} (")
    step1 = _index(batches, "SET OFFLINE WITH ROLLBACK IMMEDIATE;")
    gates = [i for i, b in enumerate(batches) if GATE in b]
    online = _index(batches, "\n    ALTER DATABASE [Sales] SET ONLINE;")
    # the run-2 gate as a pre-check, then (after step 1) the one that stops run 1 at its manual step
    assert gates[0] < create < step1 < gates[1] < online
    b = batches[step1]
    direction = name.rsplit(".", 1)[1]
    # stale markers go while the database is online; the new one only once it is OFFLINE
    assert b.index(f"DELETE FROM {MARKER} WHERE database_name = N'Sales';") < b.index("SET OFFLINE WITH")
    guard = b.index("IF (SELECT state_desc FROM sys.databases WHERE name = N'Sales') = N'OFFLINE'")
    insert = b.index(f"INSERT INTO {MARKER}")
    assert b.index("SET OFFLINE WITH") < guard < insert
    assert f"N'{move.checksum()}', N'{direction}', mf.name, mf.physical_name, mf.size" in b
    # cleared after the post-check, never before it
    post = batches[_index(batches, "post-check failed:")]
    assert post.index("post-check failed:") < post.index(
        f"DELETE FROM {MARKER} WHERE database_name = N'Sales';"
    )


@pytest.mark.parametrize(("name", "text", "move"), OFFLINE, ids=IDS)
def test_run1_stops_on_snapshots_and_running_backup_or_dbcc(name: str, text: str, move: Move) -> None:
    batches = tsql_batches(text)
    run1 = batches[_index(batches, "run 1: checking snapshots")]
    snap = run1.index("WHERE source_database_id = DB_ID(N'Sales')")
    busy = run1.index("r.command LIKE N'BACKUP%' OR r.command LIKE N'DBCC%'")
    assert "resource_type = N'DATABASE' AND l.resource_database_id = DB_ID(N'Sales')" in run1
    assert snap < busy
    assert "error 5094" in run1 and "would kill it" in run1
    # run 1's checks are pre-checks; the marker table is created after them, in the change section
    assert "CREATE TABLE" not in run1
    assert (
        _index(batches, "run 1: checking snapshots")
        < _index(batches, "CREATE TABLE")
        < _index(batches, "SET OFFLINE WITH ROLLBACK IMMEDIATE;")
    )
    # availability groups and mirroring: every run, in the first batch after the gate
    assert "replica_id IS NOT NULL" in batches[2] and "sys.database_mirroring" in batches[2]


@pytest.mark.parametrize(("name", "text", "move"), OFFLINE, ids=IDS)
def test_stale_copy_probe_only_for_files_still_at_the_old_path(name: str, text: str, move: Move) -> None:
    """Run 1 refuses a file at the new path, but only for files the catalog still has at the old
    one (a half-finished earlier run may have moved some already)."""
    own = move if name.endswith(".forward") else move.inverse()
    run1 = tsql_batches(text)[_index(tsql_batches(text), "run 1: checking snapshots")]
    files = own.action.files  # type: ignore[union-attr]
    starts = [m.start() for m in re.finditer(r"already exists\. A file there now", run1)]
    assert len(starts) == len(files)
    for f, probe in zip(files, starts, strict=True):
        guard = run1.rfind("IF EXISTS (SELECT 1 FROM sys.master_files", 0, probe)
        block = run1[guard:probe]
        assert f"LOWER(N'{f.from_path}')" in block.split("\n")[0], name
        assert f"@p = N'{f.to_path}'" in block, name


def test_header_wording_and_acl_copy() -> None:
    texts = _scripts(_move([("Sales_log", "L:\\log\\Sales_log.ldf", "F:\\fc\\Sales_log.ldf")]))
    for text in texts.values():
        head = text.split(":on error exit")[0]
        assert "The primary data file and log files can never be removed" not in head
        assert "the primary data file and the primary log file can never be removed (error 5020)" in head
        assert "a secondary log file can be removed once inactive" in head
    fwd = texts["forward"]
    copy = fwd.index(
        "Copy-Item -LiteralPath ''L:\\log\\Sales_log.ldf'' -Destination ''F:\\fc\\Sales_log.ldf''"
    )
    acl = fwd.index(
        "Get-Acl -LiteralPath ''L:\\log\\Sales_log.ldf'' | Set-Acl -LiteralPath ''F:\\fc\\Sales_log.ldf''"
    )
    assert copy < acl < fwd.index(GATE)
    assert "(Get-Item -LiteralPath ''F:\\fc\\Sales_log.ldf'').Length" in fwd


def test_linux_copy_keeps_owner_and_mode() -> None:
    fwd = _scripts(_move([("Sales_log", "/var/opt/mssql/log/Sales_log.ldf", "/mnt/fc/Sales_log.ldf")]))[
        "forward"
    ]
    assert "cp -p --sparse=always ''/var/opt/mssql/log/Sales_log.ldf'' ''/mnt/fc/Sales_log.ldf''" in fwd
    assert "chown mssql:mssql ''/mnt/fc/Sales_log.ldf''" in fwd
    assert "Copy-Item" not in fwd


def _operations(text: str) -> dict[str, str]:
    head = text.split(":on error exit")[0]
    block = head[head.index("-- Operations:") :].split("\n")[1:7]
    out = {}
    for line in block:
        m = re.match(r"--   ([A-Za-z ]+):\s+(.*)$", line)
        assert m, line
        out[m.group(1)] = m.group(2)
    return out


def test_offline_operations_block_has_the_copy_time_and_the_way_back() -> None:
    move = _move(
        [
            ("Sales", "E:\\data\\Sales.mdf", "F:\\fc\\Sales.mdf"),
            ("Sales_2", "E:\\data\\Sales_2.ndf", "F:\\fc\\Sales_2.ndf"),
        ]
    )
    ops = _operations(_scripts(move)["forward"])
    assert list(ops) == ["Duration", "Log volume", "Blocking", "Backups", "To abort", "To recover"]
    # 200 GB at 200 MB/s: 1,024 s, about 18 minutes, during which the database is down
    assert "DOWN" in ops["Duration"] and "about 18 min to copy 200.0 GB at ~200 MB/s" in ops["Duration"]
    assert "ROLLBACK IMMEDIATE" in ops["Blocking"]
    assert "pause them" in ops["Backups"]
    # by hand: one ALTER DATABASE per file back to the untouched originals, then SET ONLINE
    assert (
        "ALTER DATABASE [Sales] MODIFY FILE (NAME = N'Sales', FILENAME = N'E:\\data\\Sales.mdf'); "
        "ALTER DATABASE [Sales] MODIFY FILE (NAME = N'Sales_2', FILENAME = N'E:\\data\\Sales_2.ndf'); "
        "ALTER DATABASE [Sales] SET ONLINE"
    ) in ops["To recover"]
    unknown = _operations(_scripts(_move([("L", "L:\\l.ldf", "F:\\l.ldf")], size=None))["forward"])
    assert "1 file(s) of a size the plan does not know" in unknown["Duration"]


def test_read_only_scripts_have_an_operations_block() -> None:
    move = case_move(next(c for c in CASES if c.name == "tsql_read_only"))
    assert isinstance(move.action, SetReadOnly)
    texts = _scripts(move)
    fwd, back = _operations(texts["forward"]), _operations(texts["rollback"])
    assert "exclusive access" in fwd["Blocking"] and "never disconnects" in fwd["Blocking"]
    assert "READ_WRITE_FILEGROUPS" in fwd["Backups"]
    assert "rollback script (MODIFY FILEGROUP READ_WRITE)" in fwd["To recover"]
    assert "forward script (MODIFY FILEGROUP READ_ONLY)" in back["To recover"]


@pytest.mark.parametrize(("name", "text", "move"), OFFLINE, ids=IDS)
def test_run2_needs_a_marker_of_its_own_direction_with_unchanged_paths(
    name: str, text: str, move: Move
) -> None:
    """DBA review (#15): forward and rollback share the plan checksum, and run 2 accepted any
    marker of it. A forward marker left behind (session died after SET ONLINE) let the rollback,
    after a manual SET OFFLINE, reopen the out-of-date originals. Now both the marker read and the
    size/path comparison are limited to this direction, and each file must still be at the path
    the marker recorded (or at its planned copy, pointed there by this direction's run 2)."""
    gate = _batch(text, GATE)
    direction = name.rsplit(".", 1)[1]
    other = "rollback" if direction == "forward" else "forward"
    mine = f"m.plan_sha256 = N'{move.checksum()}' AND m.direction = N'{direction}'"
    read = next(ln for ln in gate.split("\n") if "WHERE m.database_name" in ln and "@marked" not in ln)
    assert mine in read, name
    changed = next(ln for ln in gate.split("\n") if "@marked_files <>" in ln)
    assert mine in changed
    assert "mf.physical_name COLLATE DATABASE_DEFAULT = m.physical_name COLLATE DATABASE_DEFAULT" in changed
    for f in move.action.files:  # type: ignore[union-attr]
        # the rollback's targets are the forward's sources: the other way round
        to_path = f.to_path if direction == "forward" else f.from_path
        assert f"LOWER(mf.physical_name) = LOWER(N'{to_path}')" in changed
    assert f"N'{other}'" not in gate.replace(f"the {other} script", "")


@pytest.mark.parametrize(("name", "text", "move"), OFFLINE, ids=IDS)
def test_marker_is_deleted_in_the_set_online_batch(name: str, text: str, move: Move) -> None:
    """A marker must never outlive the offline period it describes: it is deleted in the batch
    of SET ONLINE, right after it and only once the database is ONLINE."""
    batches = tsql_batches(text)
    b = batches[_index(batches, "\n    ALTER DATABASE [Sales] SET ONLINE;")]
    online = b.index("ALTER DATABASE [Sales] SET ONLINE;")
    guard = b.index(
        "IF (SELECT state_desc FROM sys.databases WHERE name = N'Sales') = N'ONLINE' "
        f"AND OBJECT_ID(N'{MARKER}', N'U') IS NOT NULL"
    )
    delete = b.index(f"DELETE FROM {MARKER} WHERE database_name = N'Sales';")
    assert online < guard < delete, name


# -- issue #30, N2: run 2 verifies the copies and that the database stayed offline -----------------


@pytest.mark.parametrize(("name", "text", "move"), OFFLINE, ids=IDS)
def test_run2_refuses_a_copy_whose_size_differs_from_its_original(name: str, text: str, move: Move) -> None:
    """N2: run 2 accepted a copy because the file existed; a truncated or half-written copy went
    through. Now each copy's size (sys.dm_os_enumerate_filesystem, SQL Server 2017+, size_in_bytes)
    must equal its original's (still there, unchanged while offline) or, with the original gone,
    the size run 1 recorded in the marker; else run 2 stops before the catalog points at it."""
    gate = _batch(text, GATE)
    own = move if name.endswith(".forward") else move.inverse()
    for f in own.action.files:  # type: ignore[union-attr]
        exists = gate.index(f"@p = N'{f.to_path}', @e = @copy_exists OUTPUT")
        copy = gate.index(f"@f = N'{f.to_path.rsplit(chr(92), 1)[-1]}', @s = @copy_bytes OUTPUT", exists)
        orig = gate.index(f"@f = N'{f.from_path.rsplit(chr(92), 1)[-1]}', @s = @orig_bytes OUTPUT", copy)
        want = gate.index(f"AND m.file_name = N'{f.to_name}'));", orig)
        stop = gate.index(
            "IF @copy_bytes IS NOT NULL AND @want_bytes IS NOT NULL AND @copy_bytes <> @want_bytes", want
        )
        block = gate[stop : gate.index("END;", stop)]
        assert "the copy is incomplete or not this file" in block and "Nothing was changed." in block
        assert "RAISERROR(N'%s', 16, 1, @msg);" in block
    assert "FROM sys.dm_os_enumerate_filesystem(@d, @f) WHERE is_directory = 0 AND level = 0" in gate
    batches = tsql_batches(text)
    assert _index(batches, "@copy_bytes <> @want_bytes") < _index(
        batches, "\n        ALTER DATABASE [Sales] MODIFY FILE (NAME"
    )


@pytest.mark.parametrize(("name", "text", "move"), OFFLINE, ids=IDS)
def test_run2_refuses_when_the_error_log_shows_a_start_since_run1(name: str, text: str, move: Move) -> None:
    """N2: an ONLINE and OFFLINE by hand between the runs left the marker, the catalog sizes and the
    backup history as they were, and run 2 went on with copies made before. SQL Server logs
    "Starting up database '<name>'." at every start of a database: run 2 searches every error log
    written since run 1's marker (xp_enumerrorlogs, xp_readerrorlog with the marker's time as the
    start) and refuses on a hit, before it looks at the copies."""
    gate = _batch(text, GATE)
    logs = gate.index("INSERT INTO @logs EXEC master.sys.xp_enumerrorlogs 1;")
    read = gate.index(
        "INSERT INTO @started EXEC master.sys.xp_readerrorlog @archive, 1, N'Starting up database', N'''Sales''', @marked;"
    )
    stop = gate.index("IF @started_at IS NOT NULL")
    assert gate.index("IF @marked IS NULL") < logs < read < stop < gate.index("@copy_exists OUTPUT")
    assert "WHERE last_write >= @marked" in gate[logs:read]
    refusal = gate[stop : gate.index("END;", stop)]
    assert "it was online in between" in refusal and "Nothing was changed." in refusal
    # unreadable log: said, not silently passed
    assert "warning: the error log could not be read" in gate[logs:stop]


@pytest.mark.parametrize(("name", "text", "move"), OFFLINE, ids=IDS)
def test_run2_checks_every_page_once_the_database_is_online_from_the_copies(
    name: str, text: str, move: Move
) -> None:
    """N2: after SET ONLINE from copied data files, DBCC CHECKDB WITH PHYSICAL_ONLY reads every page
    (headers, checksums, allocation; Microsoft Learn, DBCC CHECKDB, PHYSICAL_ONLY); an error stops
    the script saying the originals are untouched and how to go back. Only when a moved file is a
    data file (type 0): a log is read by the recovery at SET ONLINE, which CHECKDB does not do."""
    batches = tsql_batches(text)
    post = batches[_index(batches, "post-check failed: [Sales] is not online")]
    assert _index(batches, "\n    ALTER DATABASE [Sales] SET ONLINE;") < _index(
        batches, "DBCC CHECKDB (N'Sales') WITH PHYSICAL_ONLY"
    )
    names = ", ".join(f"N'{f.to_name}'" for f in move.action.files)  # type: ignore[union-attr]
    guard = post.index(f"AND type = 0 AND name IN ({names}))")
    check = post.index("DBCC CHECKDB (N'Sales') WITH PHYSICAL_ONLY, NO_INFOMSGS;")
    stop = post.index("IF @checkdb_error <> 0")
    assert post.index("is not online from") < guard < check < stop < post.index("post-check passed")
    refusal = post[stop : post.index("END;", stop)]
    assert "the original files are untouched" in refusal and "do not delete them" in refusal
    assert "page_verify_option_desc" in post[guard:check]


# -- issue #30, N8: one offline script per database ------------------------------------------------


def test_a_plan_takes_a_database_offline_once_for_all_its_offline_files() -> None:
    """N8: one plan took Sales offline twice, once for its PRIMARY file and once for its log.
    Microsoft Learn, "Move user databases" (planned relocation): take the database offline, move
    every file, MODIFY FILE for each, bring it online. The selection now merges a database's
    offline moves into one, whose script has one SET OFFLINE, one copy step listing every file
    (each to its own tier's directory), one SET ONLINE, and a run marker covering every file."""
    merged = case_move(next(c for c in CASES if c.name == "tsql_offline_database"))
    assert merged.key == "Sales/file/2 + Sales/filegroup/PRIMARY"
    assert isinstance(merged.action, MoveFiles) and merged.action.mode == "offline"
    assert merged.action.what == "database"
    assert [f.to_name for f in merged.action.files] == ["Sales_log", "Sales"]
    for direction, text in _scripts(merged).items():
        batches = tsql_batches(text)
        offline = [
            b for b in batches if "\n    ALTER DATABASE [Sales] SET OFFLINE WITH ROLLBACK IMMEDIATE;" in b
        ]
        online = [b for b in batches if "\n    ALTER DATABASE [Sales] SET ONLINE;" in b]
        assert len(offline) == 1 and len(online) == 1, direction
        assert "AND mf.name IN (N'Sales_log', N'Sales');" in offline[0], direction
        gate = _batch(text, GATE)
        assert "@marked_files <> 2 OR EXISTS" in gate, direction
        for f in merged.action.files:
            src, dst = (f.from_path, f.to_path) if direction == "forward" else (f.to_path, f.from_path)
            assert f"Copy-Item -LiteralPath ''{src}'' -Destination ''{dst}''" in gate, direction
        assert "one offline period for every offline file of the database" in text.split(":on error exit")[0]


def test_offline_moves_to_two_directories_check_each_directory_and_its_own_room() -> None:
    """A merged database move may send its data file to one tier and its log to another: run 1
    checks each target directory and the free space there for the files going there."""
    from migrations.from_advice import one_offline_per_database

    data = Move(
        "Sales/filegroup/PRIMARY", Target("sqlserver", "SQL1", "Sales"), "filegroup", "PRIMARY", "fc", "flash",
        MoveFiles("filegroup", "offline", (FileMove("Sales", "F:\\fc\\Sales.mdf", "Sales", "E:\\flash\\Sales.mdf", 40 * 1024**3, 1),), "PRIMARY"),
    )  # fmt: skip
    log = _move([("Sales_log", "L:\\log\\Sales_log.ldf", "F:\\fc\\Sales_log.ldf")], size=10 * 1024**3)
    other = Move("Other/file/2", Target("sqlserver", "SQL1", "Other"), "log_file", "Other_log", "flash", "fc",
                 MoveFiles("log", "offline", (FileMove("Other_log", "L:\\o.ldf", "Other_log", "F:\\fc\\o.ldf", 1),)))  # fmt: skip
    moves = one_offline_per_database([data, other, log])
    assert [m.key for m in moves] == ["Sales/filegroup/PRIMARY + Sales/file/2", "Other/file/2"]
    merged = moves[0]
    assert merged.to_tier == "flash+fc" and merged.from_tier == "fc+flash"
    text = _scripts(merged)["forward"]
    head = text.split(":on error exit")[0]
    assert "-- To:         tier flash+fc: E:\\flash\\, F:\\fc\\" in head
    batches = tsql_batches(text)
    for directory, mb in (("E:\\flash\\", 40960), ("F:\\fc\\", 10240)):
        (b,) = [x for x in batches if f"the target directory {directory} does not exist" in x]
        assert f"SET @need_mb = CEILING(({mb}) * 1.10);" in b
