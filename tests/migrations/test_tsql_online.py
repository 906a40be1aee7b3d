"""The online filegroup move (migrations/tsql_online.py): each guard exists, in the right batch,
before the change it protects; the rollback re-opens an emptied file before moving pages back."""

from __future__ import annotations

import math
import re

import pytest

from tests.migrations.golden_cases import CASES, render_case
from tests.migrations.sqltokens import tsql_batches

CASE = next(c for c in CASES if c.name == "tsql_filegroup_online")
HOSTILE = next(c for c in CASES if c.name == "tsql_hostile_names")


@pytest.fixture(scope="module")
def scripts() -> dict[str, str]:
    return render_case(CASE)


def _batches(text: str) -> list[str]:
    return tsql_batches(text)


def _first(batches: list[str], needle: str) -> int:
    return next(i for i, b in enumerate(batches) if needle in b)


def _both(scripts: dict[str, str]) -> list[tuple[str, str]]:
    return sorted(scripts.items())


def test_header_tells_ops_to_pause_backups_and_warns_about_blocking(scripts: dict[str, str]) -> None:
    for name, text in _both(scripts):
        header = text.split(":on error exit")[0]
        assert "take log backups while it runs" not in header, name
        assert "PAUSE the backup jobs" in header, name
        assert "The database stays online." not in header, name
        assert "Sch-M" in header and "WAIT_AT_LOW_PRIORITY" in header, name
        ops = header[header.index("-- Operations:") :]
        for field in ("Duration:", "Log volume:", "Blocking:", "Backups:", "To abort:", "To recover:"):
            assert re.search(rf"--   {field}\s+\S", ops), (name, field)
        assert "about 9 min at ~200 MB/s for 100.0 GB" in ops, name


def test_no_backup_or_dbcc_may_run_before_any_change(scripts: dict[str, str]) -> None:
    for name, text in _both(scripts):
        batches = _batches(text)
        first = batches[_first(batches, "USE [master]")]
        assert "HAS_PERMS_BY_NAME(NULL, NULL, N'VIEW SERVER STATE')" in first, name
        assert "UPPER(r.command) LIKE N'BACKUP%'" in first and "UPPER(r.command) LIKE N'DBCC%'" in first, name
        assert "l.resource_database_id = DB_ID(N'Sales')" in first, name  # a BACKUP started from master
        for change in ("ADD FILE (", "EMPTYFILE) WITH", "REMOVE FILE ["):
            b = batches[_first(batches, change)]
            assert b.index("LIKE N'BACKUP%'") < b.index(change), (name, change)
            assert b.index("LIKE N'DBCC%'") < b.index(change), (name, change)


def test_log_room_is_checked_in_the_database_before_emptyfile(scripts: dict[str, str]) -> None:
    for name, text in _both(scripts):
        batches = _batches(text)
        i = _first(batches, "sys.dm_db_log_space_usage")
        assert batches[i].lstrip().split("\n")[1] == "USE [Sales];", name  # a per-database DMV
        assert "FILEPROPERTY(df.name, 'SpaceUsed')" in batches[i], name
        assert "recovery_model_desc" in batches[i] and "@recovery <> N'SIMPLE'" in batches[i], name
        assert i < _first(batches, "EMPTYFILE) WITH"), name


def test_read_only_filegroup_snapshots_and_columnstore_refused_before_any_change(
    scripts: dict[str, str],
) -> None:
    for name, text in _both(scripts):
        batches = _batches(text)
        add = _first(batches, "ADD FILE (")
        ro = _first(batches, "is_read_only = 1")
        assert ro < add, name
        assert "FROM sys.filegroups WHERE name = N'FG_ORDERS_2024' AND is_read_only = 1" in batches[ro], name
        assert _first(batches, "s.source_database_id = DB_ID(N'Sales')") < add, name
        cs = _first(batches, "i.type IN (5, 6)")
        assert cs < add, name
        assert "AS int) < 17" in batches[cs], name


def test_emptyfile_waits_at_low_priority_on_2022_and_later_only(scripts: dict[str, str]) -> None:
    for name, text in _both(scripts):
        b = _batches(text)[_first(_batches(text), "EMPTYFILE) WITH")]
        m = re.search(
            r"IF CAST\(PARSENAME\(CAST\(SERVERPROPERTY\('ProductVersion'\) AS nvarchar\(128\)\), 4\) AS int\) >= 16\n"
            r"\s+EXEC sys\.sp_executesql N'DBCC SHRINKFILE \(N''[^\n]*'', EMPTYFILE\) WITH WAIT_AT_LOW_PRIORITY "
            r"\(ABORT_AFTER_WAIT = SELF\), NO_INFOMSGS;';\n\s+ELSE\n\s+DBCC SHRINKFILE \(N'[^\n]*', EMPTYFILE\) WITH NO_INFOMSGS;",
            b,
        )
        assert m, name


def test_rollback_reopens_the_emptied_original_before_moving_pages_back(scripts: dict[str, str]) -> None:
    back = scripts["tsql_filegroup_online.rollback.sql"]
    b = _batches(back)[_first(_batches(back), "EMPTYFILE) WITH")]
    reopen = b.index(
        "N'ALTER DATABASE [Sales] MODIFY FILE (NAME = N''Orders, 2024 \"hot\"'', SIZE = ' + CAST(CEILING(size / 128.0) + 1"
    )
    assert reopen < b.index("DBCC SHRINKFILE (N''Orders, 2024 \"hot\"_fc'', EMPTYFILE)")
    assert b.index("EXEC sys.sp_executesql @sql;", reopen) < b.index("EMPTYFILE) WITH")
    # and a forward run after a stopped rollback re-opens the new file the same way
    fwd = scripts["tsql_filegroup_online.forward.sql"]
    fb = _batches(fwd)[_first(_batches(fwd), "EMPTYFILE) WITH")]
    assert fb.index("MODIFY FILE (NAME = N''Orders, 2024 \"hot\"_fc'', SIZE = ") < fb.index(
        "DBCC SHRINKFILE ("
    )


def test_new_file_takes_the_old_files_growth_and_max_size(scripts: dict[str, str]) -> None:
    for name, text in _both(scripts):
        b = _batches(text)[_first(_batches(text), "ADD FILE (")]
        add = b.index("ADD FILE (")
        assert "CAST(CAST(o.growth AS bigint) * 8 AS nvarchar(20)) + N'KB'" in b, name
        assert "o.is_percent_growth = 1" in b and "o.max_size = -1 THEN N'UNLIMITED'" in b, name
        growth = b.index("FILEGROWTH = ' + @growth")
        maxsize = b.index("MAXSIZE = ' + @maxsize")
        assert add < growth < maxsize, name
        # the MODIFY runs whenever both files exist: a run stopped after ADD FILE completes it
        assert re.search(
            r"IF NOT EXISTS \(SELECT 1 FROM sys\.database_files WHERE name = N'[^\n]*'\)\n\s+ALTER DATABASE",
            b,
        )


def test_steps_are_numbered_with_start_done_error(scripts: dict[str, str]) -> None:
    for name, text in _both(scripts):
        for n in (1, 2, 3):
            assert f"N'step {n}/3 start: " in text, (name, n)
            assert f"N'step {n}/3 done: " in text, (name, n)
            assert f"N'step {n}/3 error: " in text, (name, n)
        assert "PRINT " not in text.split(":on error exit")[1], name


def test_hostile_names_stay_quoted_in_the_dynamic_sql() -> None:
    for name, text in render_case(HOSTILE).items():
        for m in re.finditer(r"SET @sql = (N'(?:[^']|'')*')", text):
            inner = m.group(1)[2:-1].replace("''", "'")
            assert inner.startswith("ALTER DATABASE ["), (name, inner[:80])


def test_emptyfile_step_is_done_only_when_the_file_is_empty(scripts: dict[str, str]) -> None:
    """DBA review (#15): a WAIT_AT_LOW_PRIORITY shrink that gives way exits without an error, and
    the step printed "done" on a file still full. After the shrink, inside the step (so its CATCH
    prints the error line and stops), the file must hold no page of a table or index, else the
    step fails with "not fully emptied yet"."""
    for name, text in _both(scripts):
        batches = _batches(text)
        for b in [x for x in batches if "EMPTYFILE) WITH" in x]:
            shrink = b.index("EMPTYFILE) WITH NO_INFOMSGS;")
            check = b.index(
                "FROM sys.dm_db_file_space_usage AS su WHERE su.file_id = df.file_id) > 0", shrink
            )
            refuse = b.index("not fully emptied yet: pages of tables or indexes are still in it", check)
            done = b.index(" done: emptying file", refuse)
            assert b.index("BEGIN TRY") < shrink < check < refuse < done < b.index("BEGIN CATCH"), name
            assert b.startswith("USE [") or "\nUSE [" in b[:shrink]  # both counts read this database


def _allocation_extent_pages(size: int) -> int:
    """Independent model of an emptied data file's allocation pages (Microsoft Learn, "Pages and
    extents architecture guide"): the file header, PFS, GAM, SGAM, DCM and BCM pages of the first
    extent, a PFS page every 8,088 pages, a GAM/SGAM/DCM/BCM page every 511,232 pages (at +0, +1,
    +6, +7), each counted as the whole extent (8 pages) that holds it."""
    pages = {0, 1, 2, 3, 6, 7}
    pages |= set(range(8088, size, 8088))
    for start in range(511232, size, 511232):
        pages |= {start, start + 1, start + 6, start + 7}
    return 8 * len({p // 8 for p in pages})


def test_emptied_means_no_table_pages_and_no_extent_beyond_the_allocation_pages(
    scripts: dict[str, str],
) -> None:
    """N10 (issue #30): `SpaceUsed > 8 * CEILING(size / 8088.0)` was the only test of "empty": it
    left out the GAM intervals, and counted by extent it let about 101 MB of a 100 GB file's data
    pass. Now: no page of a table or index in a uniform extent of the file (sys.dm_db_file_space_usage:
    user_object_reserved_page_count, "pages allocated from uniform extents for user objects", plus
    the internal-object and version-store counts), and no used extent beyond the exact count of the
    extents that hold the allocation pages. Both the step after EMPTYFILE and the check before
    REMOVE FILE use it, and both say "not fully emptied" (5042 is "not empty")."""
    from migrations.tsql_online import ALLOCATION_PAGES

    for size in (1024, 8088, 8089, 511232, 511233, 100 * 1024**3 // 8192, 400 * 1024**3 // 8192):
        expr = ALLOCATION_PAGES.replace("CEILING(", "math.ceil(").replace("df.size", str(size))
        assert eval(expr, {"math": math}) == _allocation_extent_pages(size), size
    for name, text in _both(scripts):
        for b in [x for x in _batches(text) if "EMPTYFILE) WITH" in x or "REMOVE FILE [" in x]:
            assert "su.user_object_reserved_page_count + su.internal_object_reserved_page_count" in b, name
            assert "+ su.version_store_reserved_page_count" in b, name
            assert f"FILEPROPERTY(df.name, 'SpaceUsed') > {ALLOCATION_PAGES}" in b, name
            assert "8 * CEILING(size / 8088.0)" not in b, name
        remove = next(x for x in _batches(text) if "REMOVE FILE [" in x)
        assert "is not fully emptied: pages of tables or indexes are still in it" in remove, name
        assert remove.index("is not fully emptied") < remove.index("REMOVE FILE ["), name


def test_log_growth_counts_each_volume_once_and_sets_aside_the_new_files(scripts: dict[str, str]) -> None:
    """H7 #3: the log's growth room summed each log file's volume free space, so two log files on
    one volume counted that volume twice, and a log on the destination's volume counted the room
    the new data files are about to take as well. Now the log files are grouped per volume, each
    volume's free space counts once, and on the destination's volume the new files' size (with
    headroom) is set aside first."""
    for name, text in _both(scripts):
        batches = _batches(text)
        b = batches[_first(batches, "sys.dm_db_log_space_usage")]
        grow = b[b.index("SELECT @log_grow_mb") :]
        grow = grow[: grow.index(") AS v;")]
        outer, inner = grow.split("FROM (SELECT", 1)
        assert "GROUP BY vs.volume_id" in inner and "MIN(vs.available_bytes) / 1048576 AS free_mb" in inner, (
            name
        )
        # the outer sum adds volumes, each capped at its own free space: no per-file free space there
        assert "available_bytes" not in outer, name
        assert "WHEN v.grow_mb < v.free_mb - " in outer, name
        assert "CASE WHEN v.volume_id = @log_shared_volume THEN @log_reserved_mb ELSE 0 END" in outer, name
        reserve = b[b.index("SET @log_reserved_mb") : b.index("SELECT @log_grow_mb")]
        assert (
            "FROM #tw_files AS p WHERE NOT EXISTS (SELECT 1 FROM sys.database_files AS df WHERE df.name = p.to_name)"
            in reserve
        )
        assert ") * 1.10);" in reserve, name
        target = re.search(r"WHERE LEFT\(LOWER\((N'[^']*')\), LEN\(vs.volume_mount_point\)\)", reserve)
        assert target is not None, name
        # the same directory the new files' free-space check measures
        space = batches[_first(batches, "SET @need_mb = CEILING(")]
        assert f"LEFT(LOWER({target.group(1)})" in space, name


def test_log_room_counts_the_log_written_meanwhile_not_only_the_moved_pages(scripts: dict[str, str]) -> None:
    """N9 (issue #30): the header asks for log backups to be paused for the whole run, but the log
    check counted only the moved pages. Now the database's log generation rate is measured
    (sys.dm_os_performance_counters, 'Log Bytes Flushed/sec' of this database: a cumulative count,
    read twice 5 s apart) and its rate times the run's estimated length (the used MB at the slow
    planning rate, 50 MB/s) is added to what the log must hold; when the counter cannot be read
    the output says the check covers the move only."""
    for name, text in _both(scripts):
        b = _batches(text)[_first(_batches(text), "sys.dm_db_log_space_usage")]
        first = b.index("SELECT @log_flushed0 = cntr_value FROM sys.dm_os_performance_counters")
        wait = b.index("WAITFOR DELAY '00:00:05';")
        second = b.index("SELECT @log_flushed1 = cntr_value FROM sys.dm_os_performance_counters")
        assert first < wait < second, name
        assert "counter_name = N'Log Bytes Flushed/sec'" in b and "instance_name = DB_NAME()" in b, name
        assert "SET @log_run_s = CEILING(@log_move_mb / 50.0);" in b, name
        assert "SET @log_during_mb = CEILING(@log_rate_mb_s * @log_run_s);" in b, name
        assert "SET @log_need_mb = @log_move_mb + COALESCE(@log_during_mb, 0);" in b, name
        assert b.index("SET @log_need_mb") < b.index(
            "IF @recovery <> N'SIMPLE' AND @log_free_mb + @log_grow_mb < @log_need_mb"
        )
        assert "this check covers the move''s own log only" in b, name
