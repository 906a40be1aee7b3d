"""T-SQL: online move of a filegroup's secondary data files (domain.md §3.2).

For each file: ADD FILE on the target directory to the same filegroup (with the old file's growth
and maximum size, read at run time), DBCC SHRINKFILE EMPTYFILE (its pages move to the filegroup's
other files), REMOVE FILE. Every step re-reads sys.database_files first, so a second run (or a
run after an interruption, in either direction) does only what is left.

"Online" with limits, said in the header's Operations block (DBCC SHRINKFILE page, "Understand
concurrency issues"): moving a table's IAM pages takes a Sch-M lock, which waits for running
queries and makes new ones queue behind it. SQL Server 2022+ runs EMPTYFILE WITH
WAIT_AT_LOW_PRIORITY (ABORT_AFTER_WAIT = SELF): the shrink waits behind the queries instead, and
gives up after a minute (error 49516), so the next run continues. The syntax allows the option
with EMPTYFILE; it goes through sp_executesql so that older versions never compile it.

A file emptied by a completed EMPTYFILE accepts no new pages until its size is changed with ALTER
DATABASE (DBCC SHRINKFILE page: "If you use the ALTER DATABASE statement to change file size, the
read-only flag is reset, and data can be added"; a cancelled EMPTYFILE leaves no mark). A run that
stopped between EMPTYFILE and REMOVE FILE leaves the old file emptied and marked; the rollback
(and a forward run after a stopped rollback) must move pages back into such a file, so before
each EMPTYFILE every receiving file of the plan gets MODIFY FILE (SIZE = current + 1 MB).
"""

from __future__ import annotations

from datetime import datetime

from migrations.header import Operations
from migrations.plan import Move, MoveFiles, Options
from migrations.quoting import path_separator, tsql_ident, tsql_str
from migrations.tsql_checks import (
    backup_check,
    busy_checks,
    columnstore_check,
    directory_check,
    free_space_check,
    ha_checks,
    ifi_note,
    log_backup_next_step,
    log_room_check,
    opening_checks,
    server_state_check,
    snapshot_check,
    volume_of_directory,
)
from migrations.tsql_files import describe, plan_table, size_mb, start, target_dir
from migrations.tsql_frame import MAJOR_VERSION, fail, fail_if_msg, finish, say, say_expr, step

FAST_MB_PER_S = 200  # planning figures for EMPTYFILE: an idle server between arrays ...
SLOW_MB_PER_S = 50  # ... and a busy one (page by page, fully logged, behind Sch-M waits)
LATER = "The steps before this one are kept; run the script again afterwards."


def _minutes(mb: float, mb_per_s: float) -> int:
    return max(1, round(mb / mb_per_s / 60))


def operations(move: Move, action: MoveFiles, direction: str) -> Operations:
    """The Operations block, from the plan's file sizes (allocated size: the used part, which is
    what moves and what is logged, is at most that)."""
    known = [f.size_bytes for f in action.files if f.size_bytes is not None]
    total_mb = sum(known) / 1024**2 if known else None
    if total_mb is None:
        duration = "unknown: the plan has no file sizes; EMPTYFILE moves roughly 50-200 MB/s of used pages."
        log = "about the used size of the files (fully logged); the script measures it and checks the log has room."
    else:
        gb = f"{total_mb / 1024:,.1f} GB"
        duration = (
            f"about {_minutes(total_mb, FAST_MB_PER_S)} min at ~{FAST_MB_PER_S} MB/s for {gb} of files, up to "
            f"{_minutes(total_mb, SLOW_MB_PER_S)} min at ~{SLOW_MB_PER_S} MB/s on a busy server (EMPTYFILE speed varies; "
            "only used pages move), plus zeroing the new files when instant file initialization is off "
            "(the script says which)."
        )
        log = (
            f"up to about {gb} (the used part of the files; EMPTYFILE is fully logged). In FULL recovery it stays in the log "
            "until the next log backup, with the log the database's other work writes meanwhile (log backups are paused): "
            "the script measures both (the used pages; the database's log rate now times the run's estimated length) and "
            "stops first when the log cannot hold them."
        )
    other = "forward script" if direction == "rollback" else "rollback script"
    return Operations(
        duration=duration,
        log_volume=log,
        blocking=(
            "moving a table's IAM pages takes a schema-modification (Sch-M) lock on it: it waits for running queries on "
            "that table and new queries queue behind it. SQL Server 2022+: WAIT_AT_LOW_PRIORITY (ABORT_AFTER_WAIT = SELF), "
            "the shrink waits behind the queries instead and gives up after 1 minute (error 49516; run again). "
            "ADD FILE and REMOVE FILE are short."
        ),
        backups=(
            "PAUSE this database's backup jobs, log backups especially, for the whole run: ADD FILE, EMPTYFILE and REMOVE "
            "FILE cannot run during a database or log backup (each waits for the other, then one fails). Every step checks "
            "first and stops while a BACKUP runs. Take a log backup right after the run."
        ),
        abort=(
            "cancel the query (sqlcmd: Ctrl+C; SSMS: Cancel). EMPTYFILE stops at a page and keeps the pages moved so "
            "far, and leaves the file usable; the script is safe to run again: every step checks first."
        ),
        recover=(
            "run this script again to finish, or run the "
            f"{other}: before moving pages back it re-enables a file that a completed EMPTYFILE left closed to new "
            "pages (MODIFY FILE SIZE = current + 1 MB)."
        ),
    )


# ---------------------------------------------------------------------------------------------
# online: ADD FILE / EMPTYFILE / REMOVE FILE


def render_online(
    move: Move, action: MoveFiles, direction: str, forward: Move, options: Options, at: datetime
) -> str:
    script = start(move, action, direction, forward, options, at, operations(move, action, direction))
    script.check(*_server_checks(move, action, direction, options))
    script.check(*_file_checks(move, action, options))
    script.check(*_target_checks(move, action, options))
    fg = action.filegroup or "PRIMARY"
    total = 3 * len(action.files)
    for i, f in enumerate(action.files, start=1):
        script.add(
            _add_file(
                move,
                fg,
                i,
                total,
                f.from_name,
                f.to_name,
                f.to_path,
                size_mb(f, options),
                options.file_growth_mb,
            )
        )
    for i, f in enumerate(action.files, start=1):
        n = len(action.files) + 2 * i - 1
        script.add(_empty_file(move, action, fg, n, total, f.from_name))
        script.add(_remove_file(move, n + 1, total, f.from_name, f.from_path))
    script.add(*_post_check(move, action))
    script.add(finish(f"finished: {describe(move, action)} is on tier {move.to_tier}."))
    return script.text()


def _server_checks(move: Move, action: MoveFiles, direction: str, options: Options) -> list[str]:
    """In master: the server, the database online and writable, no availability group or
    mirroring, a recent backup, no BACKUP, DBCC or snapshot in the way."""
    db = move.target.database
    ldb = tsql_str(db)
    qdb = tsql_ident(db)
    return [
        *opening_checks(
            move,
            f"{direction}: {describe(move, action)}: tier {move.from_tier or 'unknown'} -> {move.to_tier}",
        ),
        *fail(
            f"DATABASEPROPERTYEX({ldb}, 'Updateability') <> N'READ_WRITE'",
            tsql_str(f"tierwise: pre-check failed: database {qdb} is READ_ONLY. Nothing was changed."),
        ),
        *ha_checks(
            move, "the file added on the primary is replayed on the secondaries, where the path must exist."
        ),
        *backup_check(move, options),
        *server_state_check(),
        *busy_checks(move),
        *snapshot_check(move),
    ]


def _file_checks(move: Move, action: MoveFiles, options: Options) -> list[str]:
    """In the database: every planned file where the plan says, no file the plan does not know, no
    path taken; while pages remain to move: the filegroup writable, no columnstore, room in the log."""
    db = move.target.database
    fg = action.filegroup or "PRIMARY"
    ldb = tsql_str(db)
    lfg = tsql_str(fg)
    qdb = tsql_ident(db)
    target = target_dir(action.files)
    label = f"{tsql_ident(fg)} of {qdb}"
    exact_to = _exact_to(target)
    exact_from = exact_to.replace("p.to_path", "p.from_path")
    return [
        f"USE {tsql_ident(db)};",
        "DECLARE @msg nvarchar(2048);",
        *plan_table(action, options),
        *fail(
            f"FILEGROUP_ID({lfg}) IS NULL",
            tsql_str(
                f"tierwise: pre-check failed: filegroup {label} does not exist; the advice is out of date. Nothing was changed."
            ),
        ),
        "-- every planned file is where the plan says (old place or, after an earlier run, new place)",
        "SELECT TOP (1) @msg = N'tierwise: pre-check failed: file ' + QUOTENAME(df.name) + N' is at ' + df.physical_name",
        "    + N' in filegroup ' + COALESCE(QUOTENAME(FILEGROUP_NAME(df.data_space_id)), N'(log)') + N', not where the plan has it; the advice is out of date. Nothing was changed.'",
        "FROM sys.database_files AS df",
        "JOIN #tw_files AS p ON df.name = p.from_name OR df.name = p.to_name",
        f"WHERE df.data_space_id <> FILEGROUP_ID({lfg})",
        f"    OR (df.name = p.from_name AND NOT ({exact_from}))",
        f"    OR (df.name = p.to_name AND NOT ({exact_to}));",
        *fail_if_msg(),
        "SELECT TOP (1) @msg = N'tierwise: pre-check failed: file ' + QUOTENAME(p.from_name) + N' is not in the database; the advice is out of date. Nothing was changed.'",
        "FROM #tw_files AS p",
        "WHERE NOT EXISTS (SELECT 1 FROM sys.database_files AS df WHERE df.name IN (p.from_name, p.to_name));",
        *fail_if_msg(),
        "SELECT TOP (1) @msg = N'tierwise: pre-check failed: filegroup ' + QUOTENAME(FILEGROUP_NAME(df.data_space_id)) + N' has file '",
        "    + QUOTENAME(df.name) + N' that the plan does not know; the advice is out of date. Nothing was changed.'",
        "FROM sys.database_files AS df",
        f"WHERE df.data_space_id = FILEGROUP_ID({lfg})",
        "    AND NOT EXISTS (SELECT 1 FROM #tw_files AS p WHERE df.name IN (p.from_name, p.to_name));",
        *fail_if_msg(),
        "SELECT TOP (1) @msg = N'tierwise: pre-check failed: ' + mf.physical_name + N' is already used by file '",
        "    + QUOTENAME(mf.name) + N' of database ' + QUOTENAME(DB_NAME(mf.database_id)) + N'. Nothing was changed.'",
        "FROM sys.master_files AS mf",
        "JOIN #tw_files AS p ON "
        + exact_to.replace("df.physical_name", "mf.physical_name COLLATE DATABASE_DEFAULT"),
        f"WHERE NOT (mf.database_id = DB_ID({ldb}) AND mf.name COLLATE DATABASE_DEFAULT = p.to_name);",
        *fail_if_msg(),
        "IF NOT EXISTS (SELECT 1 FROM #tw_files AS p JOIN sys.database_files AS df ON df.name = p.from_name)",
        "BEGIN",
        say(
            f"already done: every file of {label} is on tier {move.to_tier}; the steps below change nothing.",
            "    ",
        ),
        "    RETURN;",
        "END;",
        # the checks below only matter while pages remain to move
        *fail(
            f"EXISTS (SELECT 1 FROM sys.filegroups WHERE name = {lfg} AND is_read_only = 1)",
            # Refused rather than wrapped in READ_WRITE ... READ_ONLY: changing a filegroup's
            # state needs exclusive access to the database (ALTER DATABASE File and Filegroup
            # Options, READ_ONLY / READ_WRITE; domain.md §3.4), which would end this move's
            # "online" promise; tierwise's ILM marks cold filegroups READ_ONLY.
            tsql_str(
                f"tierwise: pre-check failed: filegroup {label} is READ_ONLY (tierwise's ILM marks cold filegroups "
                "read-only). ADD FILE and EMPTYFILE must write to it, and making it READ_WRITE needs exclusive access to "
                "the database. In a maintenance window make it READ_WRITE (the read-only rollback script), run this "
                "script, then mark it READ_ONLY again. Nothing was changed."
            ),
        ),
        *columnstore_check(
            fg,
            "EMPTYFILE cannot move columnstore pages before SQL Server 2025. Move the table (rebuild it on "
            "another filegroup) or move this filegroup offline.",
        ),
        *log_room_check(
            "SELECT COALESCE(SUM(CAST(FILEPROPERTY(df.name, 'SpaceUsed') AS bigint)), 0) / 128 "
            "FROM #tw_files AS p JOIN sys.database_files AS df ON df.name = p.from_name",
            f"emptying the files of {label}",
            options.headroom_pct,
            # the new files land on the target volume first: the log cannot grow into that room too
            shared=(volume_of_directory(target), MISSING_MB),
            # the run's estimated length at the slow planning rate (the Operations' "up to")
            run_seconds=f"CEILING(@log_move_mb / {SLOW_MB_PER_S}.0)",
        ),
    ]


def _target_checks(move: Move, action: MoveFiles, options: Options) -> list[str]:
    """While files remain to be added: the target directory, its free space, and whether new
    files are zeroed first."""
    db = move.target.database
    fg = action.filegroup or "PRIMARY"
    qdb = tsql_ident(db)
    target = target_dir(action.files)
    label = f"{tsql_ident(fg)} of {qdb}"
    return [
        f"USE {qdb};",
        "DECLARE @msg nvarchar(2048);",
        "IF NOT EXISTS (SELECT 1 FROM #tw_files AS p WHERE NOT EXISTS (SELECT 1 FROM sys.database_files AS df WHERE df.name = p.to_name))",
        "BEGIN",
        say("every new file exists: no directory or free-space check needed", "    "),
        "    RETURN;",
        "END;",
        *directory_check(target, "target"),
        *free_space_check(target, MISSING_MB, options.headroom_pct, f"the new files of {label}"),
        *ifi_note(f"({MISSING_MB})"),
    ]


def _post_check(move: Move, action: MoveFiles) -> list[str]:
    """Every file of the filegroup is a planned new one, and each planned new file is there."""
    db = move.target.database
    fg = action.filegroup or "PRIMARY"
    lfg = tsql_str(fg)
    qdb = tsql_ident(db)
    target = target_dir(action.files)
    label = f"{tsql_ident(fg)} of {qdb}"
    exact_to = _exact_to(target)
    return [
        f"USE {qdb};",
        "DECLARE @msg nvarchar(2048);",
        "SELECT TOP (1) @msg = N'tierwise: post-check failed: file ' + QUOTENAME(df.name) + N' of filegroup '",
        f"    + {tsql_str(tsql_ident(fg))} + N' is at ' + df.physical_name + N', which is not a planned new file.'",
        "FROM sys.database_files AS df",
        f"WHERE df.data_space_id = FILEGROUP_ID({lfg})",
        f"    AND NOT EXISTS (SELECT 1 FROM #tw_files AS p WHERE p.to_name = df.name AND {exact_to});",
        *fail_if_msg(),
        "SELECT TOP (1) @msg = N'tierwise: post-check failed: the planned file ' + QUOTENAME(p.to_name) + N' is missing.'",
        "FROM #tw_files AS p WHERE NOT EXISTS (SELECT 1 FROM sys.database_files AS df WHERE df.name = p.to_name);",
        *fail_if_msg(),
        "IF @msg IS NULL",
        "BEGIN",
        say(f"post-check passed: every file of {label} is in {target} (tier {move.to_tier}).", "    "),
        "END;",
        *log_backup_next_step(move, f"emptying the old files of {label}"),
    ]


def _exact_to(target: str) -> str:
    """A catalog file (df) at its planned new path (p.to_path): Windows paths compare
    case-insensitively."""
    return (
        "LOWER(df.physical_name) = LOWER(p.to_path)"
        if path_separator(target) == "\\"
        else "df.physical_name = p.to_path"
    )


# capacity, directory and zeroing only matter while files remain to be added: the MB still to add
MISSING_MB = (
    "SELECT COALESCE(SUM(p.size_mb), 0) FROM #tw_files AS p WHERE NOT EXISTS "
    "(SELECT 1 FROM sys.database_files AS df WHERE df.name = p.to_name)"
)


def _add_file(
    move: Move,
    fg: str,
    n: int,
    total: int,
    from_name: str,
    to_name: str,
    to_path: str,
    size: int,
    growth_mb: int,
) -> list[str]:
    """ADD FILE, then give the new file the old file's growth and maximum size (sys.database_files,
    read at run time: the plan does not carry them) with MODIFY FILE, so it grows like the old one;
    the rollback does the same from the new file, which restores them. The MODIFY runs whenever
    both files exist, so a run that stopped between the two statements completes it."""
    qdb = tsql_ident(move.target.database)
    lto, lfrom = tsql_str(to_name), tsql_str(from_name)
    modify = f"ALTER DATABASE {qdb} MODIFY FILE (NAME = {tsql_str(to_name)}, "
    title = f"adding file {tsql_ident(to_name)} at {to_path} to filegroup {tsql_ident(fg)}"
    return [
        f"USE {qdb};",
        "DECLARE @msg nvarchar(2048), @growth nvarchar(40), @maxsize nvarchar(40), @sql nvarchar(max);",
        f"IF NOT EXISTS (SELECT 1 FROM sys.database_files WHERE name = {lfrom})",
        "BEGIN",
        say(f"step {n}/{total} done: already done: file {tsql_ident(to_name)} exists at {to_path}", "    "),
        "    RETURN;",
        "END;",
        *busy_checks(move, LATER),
        *step(
            n,
            total,
            title,
            [
                f"    IF NOT EXISTS (SELECT 1 FROM sys.database_files WHERE name = {lto})",
                f"        ALTER DATABASE {qdb} ADD FILE (NAME = {lto}, FILENAME = {tsql_str(to_path)}, "
                f"SIZE = {size}MB, FILEGROWTH = {growth_mb}MB) TO FILEGROUP {tsql_ident(fg)};",
                "    -- the old file's growth and maximum size (never below the new file's size)",
                "    SELECT @growth = CASE WHEN o.growth = 0 THEN N'0' WHEN o.is_percent_growth = 1 THEN CAST(o.growth AS nvarchar(10)) + N'%'",
                "            ELSE CAST(CAST(o.growth AS bigint) * 8 AS nvarchar(20)) + N'KB' END,",
                "        @maxsize = CASE WHEN o.max_size = -1 THEN N'UNLIMITED'",
                "            WHEN o.max_size < t.size THEN CAST(CAST(t.size AS bigint) * 8 AS nvarchar(20)) + N'KB'",
                "            ELSE CAST(CAST(o.max_size AS bigint) * 8 AS nvarchar(20)) + N'KB' END",
                f"    FROM sys.database_files AS o JOIN sys.database_files AS t ON t.name = {lto}",
                f"    WHERE o.name = {lfrom};",
                # one property per MODIFY FILE (ALTER DATABASE File and Filegroup Options, MODIFY FILE)
                f"    SET @sql = {tsql_str(modify + 'FILEGROWTH = ')} + @growth + N');';",
                "    EXEC sys.sp_executesql @sql;",
                f"    SET @sql = {tsql_str(modify + 'MAXSIZE = ')} + @maxsize + N');';",
                say_expr(
                    "N'growth ' + @growth + N', maximum size ' + @maxsize + N' (as the old file)'",
                    "    ",
                ),
                "    EXEC sys.sp_executesql @sql;",
            ],
            LATER,
        ),
    ]


# What an emptied data file still holds (Microsoft Learn, "Pages and extents architecture guide"):
# its allocation pages - the first extent (file header, PFS, GAM, SGAM, DCM, BCM), a PFS page every
# 8,088 pages and a GAM, SGAM, DCM and BCM page every 511,232 pages (63,904 extents), each such
# page in an extent of its own - and nothing of a table or index. Two counts, per file:
# - pages of tables and indexes in uniform extents, exact: sys.dm_db_file_space_usage
#   (user_object_reserved_page_count, internal_object_reserved_page_count,
#   version_store_reserved_page_count; every database from SQL Server 2012): must be 0;
# - FILEPROPERTY(name, 'SpaceUsed'), which counts whole extents: at most the extents that hold the
#   allocation pages, 8 * (PFS intervals + GAM intervals - 1) (the first GAM interval's pages share
#   the first extent). The old bound, 8 per PFS interval, left out the GAM intervals and was the
#   only count: it let a file with data in uniform extents pass as empty while those extents fit
#   in the slack (issue #30, N10). What the two counts cannot see is a few pages of small objects
#   in mixed extents; REMOVE FILE itself refuses those (error 5042), and the messages say "not
#   fully emptied" rather than "empty".
ALLOCATION_PAGES = "8 * (CEILING(df.size / 8088.0) + CEILING(df.size / 511232.0) - 1)"
OBJECT_PAGES = (
    "(SELECT COALESCE(SUM(su.user_object_reserved_page_count + su.internal_object_reserved_page_count "
    "+ su.version_store_reserved_page_count), 0) FROM sys.dm_db_file_space_usage AS su WHERE su.file_id = df.file_id)"
)


def not_emptied(from_name: str) -> str:
    """The planned old file still holds pages of tables or indexes (run in the database)."""
    return (
        f"EXISTS (SELECT 1 FROM sys.database_files AS df WHERE df.name = {tsql_str(from_name)} "
        f"AND ({OBJECT_PAGES} > 0 OR FILEPROPERTY(df.name, 'SpaceUsed') > {ALLOCATION_PAGES}))"
    )


def _still_used(from_name: str) -> list[str]:
    """After EMPTYFILE: fail the step unless the file is emptied. A WAIT_AT_LOW_PRIORITY shrink
    that times out with ABORT_AFTER_WAIT = SELF exits without an error (Microsoft Learn, DBCC
    SHRINKFILE, "WAIT_AT_LOW_PRIORITY with shrink operations"), so "done" would be false.
    FILEPROPERTY and sys.dm_db_file_space_usage read the current database (this batch's USE)."""
    return [
        "    -- the shrink may have given way to other sessions without an error: is the file emptied?",
        f"    IF {not_emptied(from_name)}",
        "        RAISERROR(N'%s', 16, 1, "
        + tsql_str(
            f"file {tsql_ident(from_name)} not fully emptied yet: pages of tables or indexes are still in it "
            "(the shrink gave way to other sessions): run the script again"
        )
        + ");",
    ]


def _done_if_gone(from_name: str, n: int, total: int) -> list[str]:
    """A step on the old file ends at once, saying so, when an earlier run removed the file."""
    return [
        f"IF NOT EXISTS (SELECT 1 FROM sys.database_files WHERE name = {tsql_str(from_name)})",
        "BEGIN",
        say(
            f"step {n}/{total} done: already done: file {tsql_ident(from_name)} is no longer in the database",
            "    ",
        ),
        "    RETURN;",
        "END;",
    ]


def _empty_file(move: Move, action: MoveFiles, fg: str, n: int, total: int, from_name: str) -> list[str]:
    """Re-open every receiving file of the plan (an earlier, stopped run in either direction may
    have emptied it), then EMPTYFILE; right before it, no BACKUP or DBCC may run."""
    db = move.target.database
    qdb = tsql_ident(db)
    lname = tsql_str(from_name)
    reopen: list[str] = []
    for f in action.files:
        reopen += [
            f"    IF EXISTS (SELECT 1 FROM sys.database_files WHERE name = {tsql_str(f.to_name)} AND (max_size = -1 OR max_size >= size + 128))",
            "    BEGIN",
            f"        SELECT @sql = {tsql_str(f'ALTER DATABASE {qdb} MODIFY FILE (NAME = {tsql_str(f.to_name)}, SIZE = ')}"
            " + CAST(CEILING(size / 128.0) + 1 AS nvarchar(20)) + N'MB);'",
            f"        FROM sys.database_files WHERE name = {tsql_str(f.to_name)};",
            "        EXEC sys.sp_executesql @sql;",
            "    END;",
        ]
    shrink = f"DBCC SHRINKFILE ({lname}, EMPTYFILE)"
    title = f"emptying file {tsql_ident(from_name)} into the other files of {tsql_ident(fg)} (progress: sys.dm_exec_requests.percent_complete)"
    return [
        f"USE {qdb};",
        "DECLARE @msg nvarchar(2048), @sql nvarchar(max);",
        *_done_if_gone(from_name, n, total),
        *busy_checks(move, LATER),
        *step(
            n,
            total,
            title,
            [
                "    -- a file emptied by a completed EMPTYFILE takes no new pages until its size changes",
                *reopen,
                f"    IF {MAJOR_VERSION} >= 16",
                f"        EXEC sys.sp_executesql {tsql_str(f'{shrink} WITH WAIT_AT_LOW_PRIORITY (ABORT_AFTER_WAIT = SELF), NO_INFOMSGS;')};",
                "    ELSE",
                f"        {shrink} WITH NO_INFOMSGS;",
                *_still_used(from_name),
            ],
            LATER,
        ),
    ]


def _remove_file(move: Move, n: int, total: int, from_name: str, from_path: str) -> list[str]:
    """REMOVE FILE, only once the file holds nothing but its allocation pages: a file must be
    empty to be removed (error 5042 otherwise; "Delete data or log files from a database"). No
    log backup is needed first (see tsql_checks.log_backup_next_step); the post-check batch
    prints it as the next step."""
    db = move.target.database
    qdb = tsql_ident(db)
    qname = tsql_ident(from_name)
    return [
        f"USE {qdb};",
        "DECLARE @msg nvarchar(2048);",
        *_done_if_gone(from_name, n, total),
        *busy_checks(move, LATER),
        *fail(
            not_emptied(from_name),
            tsql_str(
                f"tierwise: pre-check failed: file {qname} of {qdb} is not fully emptied: pages of tables or indexes "
                "are still in it (sys.dm_db_file_space_usage, or more used extents than its allocation pages), so "
                "REMOVE FILE would fail with error 5042 (not empty): the EMPTYFILE before this step did not finish "
                f"(cancelled, or it gave way at low priority, error 49516). Run the script again: it empties the file first. {LATER}"
            ),
        ),
        *step(
            n,
            total,
            f"removing the empty file {qname} ({from_path})",
            [f"    ALTER DATABASE {qdb} REMOVE FILE {qname};"],
            "If that is error 5042 (not empty): pages reached the file after the check above; run the script again "
            "(EMPTYFILE runs first). No log backup is needed before REMOVE FILE.",
        ),
    ]
