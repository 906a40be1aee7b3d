"""T-SQL: move one partition of a partitioned table to a filegroup on another tier (domain.md §3.4).

The advice names the table, partition number, scheme, function and filegroup — not the index
definitions, the partitioning column or the boundary values' types. The script reads those from
the catalog at run time and builds the statements with QUOTENAME, so no generation-time name
is ever spliced into dynamic SQL: names reach the server only as `N'…'` values of variables.

The move itself is one transaction (XACT_ABORT, TRY/CATCH): staging table with the table's
columns and indexes on the partition's filegroup; SWITCH the partition out; rebuild the
staging indexes onto the target filegroup (DROP_EXISTING); MERGE the now-empty range, NEXT USED
the target, SPLIT it again (metadata only, the range is empty); verify the partition now maps to
the target; CHECK constraint from the boundaries; SWITCH back; metadata-only checks (the partition
maps to the target and holds the rebuilt rows, per sys.partitions; its compression); drop the
staging table. Any error — including a table shape this recipe does not cover — rolls everything
back, so the table is either moved or untouched. The exact row count (a scan) runs after the
COMMIT, when the Sch-M lock is gone: under the lock it would block every reader for the length of
a count. A difference there is reported with what to do, never rolled back (the move committed).

What it refuses, before starting (each with "unsupported here: review"): heaps, columnstore,
XML/spatial/filtered/disabled or non-aligned indexes, computed/sparse/FILESTREAM/ROWGUIDCOL
columns, LOB columns, foreign keys, schema-bound views, a scheme or function shared with other
tables, the first partition of a RANGE RIGHT function / last of a RANGE LEFT one (re-mapping those
would move a neighbour's data), and the table features the partition-switching requirements
(Microsoft Learn "Transferring Data Efficiently by Using Partition Switching"; "Replicate
Partitioned Tables and Indexes") or this recipe do not allow: system-versioned temporal tables,
change data capture, change tracking, replication, full-text indexes, ANSI_NULLS OFF, columns
created with ANSI_PADDING OFF. A table created with QUOTED_IDENTIFIER OFF is moved: its staging
table is created under the same setting (SWITCH compares both tables' settings).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from migrations.header import Operations
from migrations.plan import Move, MovePartition, Options
from migrations.quoting import dirname, tsql_ident, tsql_str
from migrations.tsql_checks import (
    backup_check,
    busy_checks,
    directory_check,
    free_space_check,
    ha_checks,
    log_room_check,
    opening_checks,
    server_state_check,
    snapshot_check,
    volume_of_filegroup,
)
from migrations.tsql_frame import Batches, fail, fail_if_msg, finish, make_header, say
from migrations.tsql_partition_sql import DISCOVER, MOVE, TYPE_AND_STYLE

MB = 1024 * 1024
GB = 1024 * MB
LOCK_TIMEOUT_MS = 30000  # the pre-check batches and, on SQL Server 2014+, every statement but the switch-out
SWITCH_WAIT_MINUTES = (
    5  # 2014+: WAIT_AT_LOW_PRIORITY (MAX_DURATION) of the switch-out; it blocks no one meanwhile
)
OLD_LOCK_TIMEOUT_MS = 5000  # 2012: how long others may queue behind the switch-out's Sch-M request
REBUILD_MB_PER_S = 100  # planning rate of a fully logged offline index build (read + write + log)


def _params(a: MovePartition) -> list[str]:
    return [
        f"DECLARE @schema sysname = {tsql_str(a.schema)}, @table sysname = {tsql_str(a.table)},",
        f"    @scheme sysname = {tsql_str(a.scheme)}, @function sysname = {tsql_str(a.function)},",
        f"    @source_fg sysname = {tsql_str(a.source_filegroup)}, @target_fg sysname = {tsql_str(a.target_filegroup)},",
        f"    @n int = {a.partition_number};",
    ]


def _state_checks(a: MovePartition) -> list[str]:
    """The objects are where the plan says (or already where it moves them)."""
    table = f"{tsql_ident(a.schema)}.{tsql_ident(a.table)}"
    return [
        *fail(
            "@object_id IS NULL",
            tsql_str(
                f"tierwise: pre-check failed: table {table} does not exist; the advice is out of date. Nothing was changed."
            ),
        ),
        *fail(
            "@scheme_id IS NULL",
            tsql_str(
                f"tierwise: pre-check failed: partition scheme {tsql_ident(a.scheme)} on function "
                f"{tsql_ident(a.function)} does not exist; the advice is out of date. Nothing was changed."
            ),
        ),
        *fail(
            "@n > @fanout",
            tsql_str(
                f"tierwise: pre-check failed: {table} has no partition {a.partition_number}; the advice is out of date. Nothing was changed."
            ),
        ),
        *fail(
            "@current_fg NOT IN (@source_fg, @target_fg)",
            f"{tsql_str(f'tierwise: pre-check failed: partition {a.partition_number} of {table} is on filegroup ')} + "
            "QUOTENAME(@current_fg) + N', not on ' + QUOTENAME(@source_fg) + N' as planned; the advice is out of date. Nothing was changed.'",
        ),
    ]


def _shape_checks(a: MovePartition) -> list[str]:
    """Table shapes the recipe covers; anything else is refused before anything changes."""
    table = f"{tsql_ident(a.schema)}.{tsql_ident(a.table)}"
    review = "unsupported here: review (move this partition by hand). Nothing was changed."

    def unsupported(condition: str, why: str) -> list[str]:
        return fail(condition, tsql_str(f"tierwise: pre-check failed: {table}: {why}; {review}"))

    return [
        *unsupported(
            "NOT EXISTS (SELECT 1 FROM sys.indexes WHERE object_id = @object_id AND index_id = 1 AND type = 1 AND data_space_id = @scheme_id)",
            f"it is a heap or its clustered index is not a rowstore index on {tsql_ident(a.scheme)}",
        ),
        *unsupported(
            "EXISTS (SELECT 1 FROM sys.indexes WHERE object_id = @object_id AND index_id > 0 "
            "AND (type NOT IN (1, 2) OR data_space_id <> @scheme_id OR has_filter = 1 OR is_disabled = 1 OR is_hypothetical = 1))",
            "it has a columnstore, XML, spatial, filtered, disabled or non-aligned index",
        ),
        *unsupported(
            "EXISTS (SELECT 1 FROM sys.columns WHERE object_id = @object_id AND (is_computed = 1 OR is_sparse = 1 "
            "OR is_column_set = 1 OR is_filestream = 1 OR is_rowguidcol = 1))",
            "it has computed, sparse, FILESTREAM or ROWGUIDCOL columns (SELECT INTO does not copy these column "
            "properties to the staging table, and the switch requires them on both sides)",
        ),
        *unsupported(
            "EXISTS (SELECT 1 FROM sys.foreign_keys WHERE parent_object_id = @object_id OR referenced_object_id = @object_id)",
            "it has or is referenced by foreign keys",
        ),
        *unsupported(
            "EXISTS (SELECT 1 FROM sys.sql_expression_dependencies WHERE referenced_id = @object_id AND is_schema_bound_reference = 1)",
            "schema-bound views or functions reference it",
        ),
        *unsupported(
            "EXISTS (SELECT 1 FROM sys.indexes WHERE data_space_id = @scheme_id AND object_id <> @object_id) "
            "OR EXISTS (SELECT 1 FROM sys.partition_schemes WHERE function_id = @function_id AND data_space_id <> @scheme_id)",
            f"the scheme {tsql_ident(a.scheme)} or function {tsql_ident(a.function)} is shared with other "
            "tables, whose data a MERGE/SPLIT would move",
        ),
        *unsupported(
            "@boundary_id IS NULL",
            f"partition {a.partition_number} is the first partition of a RANGE RIGHT function or the last of a "
            "RANGE LEFT one; re-mapping it would move a neighbouring partition's data",
        ),
        *unsupported("@column IS NULL", "the partitioning column cannot be found on the clustered index"),
        *_feature_checks(unsupported),
        *fail(
            "EXISTS (SELECT 1 FROM sys.filegroups WHERE name IN (@source_fg, @target_fg) AND is_read_only = 1)",
            tsql_str(
                f"tierwise: pre-check failed: {tsql_ident(a.source_filegroup)} or {tsql_ident(a.target_filegroup)} "
                "is READ_ONLY; make it READ_WRITE first. Nothing was changed."
            ),
        ),
    ]


def _feature_checks(unsupported: Callable[[str, str], list[str]]) -> list[str]:
    """Table features under which SWITCH or MERGE/SPLIT is not allowed or not safe to script.

    Microsoft Learn "Transferring Data Efficiently by Using Partition Switching" (source and target
    large-value columns on the same filegroup; same ANSI_NULLS setting); "Replicate Partitioned
    Tables and Indexes" (transactional and merge replication do not support ALTER PARTITION
    FUNCTION / SCHEME; merge replication does not support SWITCH); sp_cdc_enable_table
    (@allow_partition_switch; switched rows are not captured); change tracking refuses SWITCH;
    system-versioned temporal tables restrict SWITCH (OBJECTPROPERTY TableTemporalType is NULL
    before SQL Server 2016, where no temporal table can exist). The settings SWITCH compares: the
    table's ANSI_NULLS (refused when OFF: deprecated, and it would change the range constraint's
    meaning), its QUOTED_IDENTIFIER (matched: tsql_partition_sql.MOVE creates the staging table
    under it) and each column's ANSI_PADDING (refused when OFF)."""
    return [
        *unsupported(
            "COALESCE(OBJECTPROPERTY(@object_id, 'TableTemporalType'), 0) <> 0",
            "it is a system-versioned temporal table or its history table, where SWITCH is restricted",
        ),
        *unsupported(
            "EXISTS (SELECT 1 FROM sys.tables WHERE object_id = @object_id AND is_tracked_by_cdc = 1)",
            "change data capture tracks it: the switch is refused (@allow_partition_switch = 0) or its rows are "
            "not captured",
        ),
        *unsupported(
            "EXISTS (SELECT 1 FROM sys.change_tracking_tables WHERE object_id = @object_id)",
            "change tracking is enabled on it, and SWITCH is refused on such tables",
        ),
        *unsupported(
            "EXISTS (SELECT 1 FROM sys.tables WHERE object_id = @object_id AND (is_replicated = 1 OR "
            "is_merge_published = 1 OR is_sync_tran_subscribed = 1))",
            "it is published or subscribed for replication, which does not carry ALTER PARTITION FUNCTION/SCHEME "
            "to subscribers",
        ),
        *unsupported(
            "EXISTS (SELECT 1 FROM sys.fulltext_indexes WHERE object_id = @object_id)",
            "it has a full-text index, which is not partitioned and would have to follow the switched rows",
        ),
        *unsupported(
            "EXISTS (SELECT 1 FROM sys.columns AS c JOIN sys.types AS t ON t.user_type_id = c.system_type_id "
            "WHERE c.object_id = @object_id AND (c.max_length = -1 OR t.name IN (N'text', N'ntext', N'image')))",
            "it has LOB columns (max types, xml, text, ntext, image), whose data SELECT INTO and a rebuild onto a "
            "filegroup leave on the default filegroup, so the switch would fail",
        ),
        *unsupported(
            "EXISTS (SELECT 1 FROM sys.tables WHERE object_id = @object_id AND uses_ansi_nulls = 0)",
            "it was created with ANSI_NULLS OFF; the staging table would not match it",
        ),
        # SWITCH compares each column's ANSI_PADDING ("does not have the same ANSI trimming
        # semantics"); SELECT INTO gives the staging columns this session's ON. Only char, varchar,
        # binary and varbinary carry the setting (sys.columns.is_ansi_padded).
        *unsupported(
            "EXISTS (SELECT 1 FROM sys.columns WHERE object_id = @object_id AND is_ansi_padded = 0 "
            "AND system_type_id IN (165, 167, 173, 175))",
            "a char, varchar, binary or varbinary column was created with ANSI_PADDING OFF "
            "(sys.columns.is_ansi_padded = 0); the staging table's columns would be padded and the switch "
            "would refuse them",
        ),
    ]


def render_partition(
    move: Move, a: MovePartition, direction: str, forward: Move, options: Options, at: datetime
) -> str:
    table = f"{tsql_ident(a.schema)}.{tsql_ident(a.table)}"
    script = Batches(_header(move, a, direction, forward, options, at))
    script.check(
        *opening_checks(
            move, f"{direction}: {_what(move, a)}: tier {move.from_tier or 'unknown'} -> {move.to_tier}"
        ),
        backup_check(move, options),
    )
    script.check(
        f"USE {tsql_ident(move.target.database)};",
        "SET NOCOUNT ON;",
        "DECLARE @msg nvarchar(2048);",
        *_where_now(
            a,
            f"already done: partition {a.partition_number} of {table} is on {tsql_ident(a.target_filegroup)}; the steps below change nothing.",
        ),
    )
    if a.create_target is not None:
        create_filegroup(script, move, a, options)
    # the move's own checks (room in the filegroup and in the log) as pre-checks too; the move's
    # batch repeats them right before it starts
    script.check(*_move_checks(move, a, options, creating=a.create_target is not None))
    if a.remove_source is not None:
        _remove_filegroup_checks(script, move, a)
    script.add(*_move(move, a, options))
    script.add(*_post_checks(move, a))
    if a.remove_source is not None:
        _remove_filegroup(script, move, a)
    script.add(finish(f"finished: partition {a.partition_number} of {table} is on tier {move.to_tier}."))
    return script.text()


def _what(move: Move, a: MovePartition) -> str:
    table = f"{tsql_ident(a.schema)}.{tsql_ident(a.table)}"
    return f"partition {a.partition_number} of {table} in database {tsql_ident(move.target.database)} (all its aligned indexes)"


def _header(
    move: Move, a: MovePartition, direction: str, forward: Move, options: Options, at: datetime
) -> list[str]:
    what = _what(move, a)
    rng = f"range {a.range_low or '(open)'} .. {a.range_high or '(open)'}"
    return make_header(
        move,
        direction,
        forward,
        options,
        at,
        what=f"{what}, {rng}",
        source=f"filegroup {tsql_ident(a.source_filegroup)}",
        destination=f"filegroup {tsql_ident(a.target_filegroup)}"
        + (f" (created if missing, file {a.create_target.path})" if a.create_target else ""),
        method=[
            "switch the partition out to a staging table, rebuild it onto the target filegroup, MERGE/NEXT USED/SPLIT",
            "the empty range onto the target, CHECK constraint, switch back - in ONE transaction (all or nothing);",
            "the exact row count is checked after the commit, when the table is no longer locked.",
            "Index definitions, the partitioning column and boundary values are read from the catalog at run time.",
        ],
        limits=[
            "OFFLINE for this table: it is locked (Sch-M) from the switch-out until the commit. On SQL Server 2014+ "
            f"the switch-out waits at low priority (WAIT_AT_LOW_PRIORITY, blocking no one) for at most "
            f"{SWITCH_WAIT_MINUTES} min, then rolls back; on 2012 it waits at most {OLD_LOCK_TIMEOUT_MS // 1000} s.",
            "The rebuild is fully logged inside the transaction (FULL recovery): the log needs room for about the "
            "partition's size; checked first under FULL / BULK_LOGGED (free log space plus what the log files can "
            "still grow, against the partition's used pages plus headroom, plus the log the database's other work "
            "writes during the transaction: its rate now times the move's estimated length).",
            "No ONLINE rebuild (Enterprise only, and pointless on a staging table).",
            "Each index's data compression is kept: after MERGE/SPLIT the empty partition is rebuilt to it before the "
            "switch-in.",
            "Refused (unsupported here: review): heaps, columnstore/XML/spatial/filtered indexes, computed, sparse, "
            "ROWGUIDCOL or LOB columns, foreign keys, schema-bound views, schemes/functions shared with other tables, "
            "the first (RANGE RIGHT) or last (RANGE LEFT) partition, temporal, CDC, change-tracked, replicated or "
            "full-text indexed tables, tables created with ANSI_NULLS OFF or with columns created with ANSI_PADDING OFF.",
            "A table created with QUOTED_IDENTIFIER OFF is moved: its staging table is created under the same "
            "setting (SWITCH needs both tables' ANSI_NULLS and QUOTED_IDENTIFIER settings equal).",
        ],
        operations=_operations(forward, a),
    )


def _where_now(a: MovePartition, done: str) -> list[str]:
    """Read the partition's place and the table's shape from the catalog; stop the batch, saying
    `done`, when the partition is on the target already; refuse what the recipe does not cover."""
    return [
        *_params(a),
        DISCOVER,
        *_state_checks(a),
        "IF @current_fg = @target_fg",
        "BEGIN",
        say(done, "    "),
        "    RETURN;",
        "END;",
        *_shape_checks(a),
    ]


def _move_checks(move: Move, a: MovePartition, options: Options, *, creating: bool = False) -> list[str]:
    """The move's checks: where the partition is, the table's shape, the target filegroup with
    files, room in it and in the log. `creating`: the pre-check run before step 1 creates the
    filegroup (its new file's free space is checked with the filegroup's own checks)."""
    table = f"{tsql_ident(a.schema)}.{tsql_ident(a.table)}"
    qdb = tsql_ident(move.target.database)
    missing = (
        "FILEGROUP_ID(@target_fg) IS NULL OR NOT EXISTS (SELECT 1 FROM sys.database_files "
        "WHERE data_space_id = FILEGROUP_ID(@target_fg))"
    )
    if creating:
        missing = "FILEGROUP_ID(@target_fg) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM sys.database_files WHERE data_space_id = FILEGROUP_ID(@target_fg))"
    return [
        f"USE {qdb};",
        "SET NOCOUNT ON;",
        "SET XACT_ABORT ON;",
        f"SET LOCK_TIMEOUT {LOCK_TIMEOUT_MS};",
        "DECLARE @msg nvarchar(2048);",
        *_where_now(
            a, f"step 2: already done: partition {a.partition_number} is on {tsql_ident(a.target_filegroup)}"
        ),
        *fail(
            missing,
            tsql_str(
                f"tierwise: pre-check failed: filegroup {tsql_ident(a.target_filegroup)} does not exist or has no files. Nothing was changed."
            ),
        ),
        *_capacity_check(),
        # the header's promise: the rebuild is logged in one transaction, so the log must hold it
        *log_room_check(
            PARTITION_USED_MB,
            f"moving partition {a.partition_number} of {table}",
            options.headroom_pct,
            # what the target filegroup's files must grow by lands on their volume, maybe the log's
            shared=(
                volume_of_filegroup("@target_fg"),
                "CASE WHEN @need_mb > @fg_free_mb THEN @need_mb - @fg_free_mb ELSE 0 END",
            ),
            # the transaction keeps the log active from the switch-out to the commit: the rebuild at
            # the planning rate, plus the longest wait for the switch-out's lock
            run_seconds=f"CEILING(@log_move_mb / {REBUILD_MB_PER_S}.0) + {SWITCH_WAIT_MINUTES * 60}",
        ),
    ]


def _move(move: Move, a: MovePartition, options: Options) -> list[str]:
    """Step 2: the checks again in the batch that moves, then the move in one transaction
    (tsql_partition_sql.MOVE)."""
    return [
        *_move_checks(move, a, options),
        MOVE.format(
            type_and_style=TYPE_AND_STYLE,
            switch_minutes=SWITCH_WAIT_MINUTES,
            lock_timeout_ms=(SWITCH_WAIT_MINUTES + 1) * 60000,
            old_lock_timeout_ms=OLD_LOCK_TIMEOUT_MS,
            old_timeout_s=OLD_LOCK_TIMEOUT_MS // 1000,
            post_lock_timeout_ms=LOCK_TIMEOUT_MS,
        ),
    ]


def _post_checks(move: Move, a: MovePartition) -> list[str]:
    """The partition, every page of it, on the target filegroup."""
    table = f"{tsql_ident(a.schema)}.{tsql_ident(a.table)}"
    qdb = tsql_ident(move.target.database)
    return [
        f"USE {qdb};",
        "DECLARE @msg nvarchar(2048);",
        *_params(a),
        DISCOVER,
        *fail(
            "@current_fg IS NULL OR @current_fg <> @target_fg",
            tsql_str(
                f"tierwise: post-check failed: partition {a.partition_number} of {table} is not on {tsql_ident(a.target_filegroup)}."
            ),
        ),
        *fail(
            "EXISTS (SELECT 1 FROM sys.partitions AS p JOIN sys.allocation_units AS au ON au.container_id = "
            "CASE WHEN au.type = 2 THEN p.partition_id ELSE p.hobt_id END "
            "WHERE p.object_id = @object_id AND p.partition_number = @n AND au.data_space_id <> FILEGROUP_ID(@target_fg))",
            tsql_str(
                f"tierwise: post-check failed: some pages of partition {a.partition_number} of {table} are outside {tsql_ident(a.target_filegroup)}."
            ),
        ),
        say(
            f"post-check passed: partition {a.partition_number} of {table} is on {tsql_ident(a.target_filegroup)} (tier {move.to_tier})."
        ),
    ]


def _operations(forward: Move, a: MovePartition) -> Operations:
    """The Operations block: sizes from the plan (the partition's size, the same for the rollback)."""
    size = forward.why.size_bytes
    if size is None:
        duration = (
            f"unknown size: the rebuild copies the partition at roughly {REBUILD_MB_PER_S} MB/s (offline index "
            "build, fully logged; storage speed varies); the script prints the partition's row count first."
        )
        volume = "about the partition's size"
    else:
        minutes = round(size / MB / REBUILD_MB_PER_S / 60)
        duration = (
            f"{'under a minute' if minutes < 1 else f'about {minutes} min'} for {size / GB:,.1f} GB at ~{REBUILD_MB_PER_S} MB/s (offline rebuild of the "
            "partition and each nonclustered index onto the target; copy speed varies), plus up to "
            f"{SWITCH_WAIT_MINUTES} min waiting for the lock."
        )
        volume = f"about {size / GB:,.1f} GB"
    return Operations(
        duration=duration,
        log_volume=(
            f"{volume} plus its nonclustered indexes, in ONE transaction: under FULL recovery the rebuild is fully "
            "logged and the log cannot be truncated until the commit (under SIMPLE or BULK_LOGGED the index builds "
            "are minimally logged); SWITCH, MERGE and SPLIT of the empty range are metadata only."
        ),
        blocking=(
            f"Sch-M on {tsql_ident(a.schema)}.{tsql_ident(a.table)} from the switch-out to the commit: every query "
            "on the table, any partition, waits for the whole rebuild. SQL Server 2014+: the switch-out waits at low "
            f"priority (WAIT_AT_LOW_PRIORITY, ABORT_AFTER_WAIT = SELF) for at most {SWITCH_WAIT_MINUTES} min and "
            f"blocks no one while waiting; 2012: new readers queue behind it for at most {OLD_LOCK_TIMEOUT_MS // 1000} s."
        ),
        backups=(
            "a full backup must be recent (checked); log backups may run but cannot free the log this transaction "
            "uses until it commits, and the next one carries the whole rebuild; do not run index maintenance or "
            "DBCC CHECKDB on this table at the same time."
        ),
        abort=(
            "cancel the query (sqlcmd: Ctrl+C; SSMS: Cancel): the one transaction rolls back, which takes about as "
            "long as the work done so far; the script is safe to run again: every step checks first."
        ),
        recover=(
            "the partition is either moved or untouched (one transaction); a post-check that failed after the "
            "commit says so (COMMITTED) and what to check before running the script again; a filegroup or file the forward script "
            "created stays (the next run reuses it; the rollback script removes it once empty); if the session died "
            "mid-transaction, wait until SQL Server has rolled it back (the table is usable again), then run the "
            "script again."
        ),
    )


# the pages partition @n uses now (every index, in-row, row-overflow and LOB), in MB: about what
# its rebuild writes to the log under FULL recovery
PARTITION_USED_MB = (
    "SELECT COALESCE(SUM(au.used_pages), 0) / 128 FROM sys.partitions AS p "
    "JOIN sys.allocation_units AS au ON au.container_id = CASE WHEN au.type = 2 THEN p.partition_id ELSE p.hobt_id END "
    "WHERE p.object_id = @object_id AND p.partition_number = @n"
)


def _capacity_check() -> list[str]:
    """Room for the partition's pages in the target filegroup: free space inside its files plus
    what their volumes can still grow into."""
    return [
        "DECLARE @need_mb bigint, @room_mb bigint, @fg_free_mb bigint;",
        "SELECT @need_mb = COALESCE(SUM(au.total_pages), 0) / 128 FROM sys.partitions AS p",
        "JOIN sys.allocation_units AS au ON au.container_id = CASE WHEN au.type = 2 THEN p.partition_id ELSE p.hobt_id END",
        "WHERE p.object_id = @object_id AND p.partition_number = @n;",
        "SELECT @fg_free_mb = SUM(CAST(df.size AS bigint) - COALESCE(FILEPROPERTY(df.name, 'SpaceUsed'), 0)) / 128,",
        "    @room_mb = SUM(CAST(df.size AS bigint) - COALESCE(FILEPROPERTY(df.name, 'SpaceUsed'), 0)) / 128",
        "    + MIN(vs.available_bytes) / 1048576",
        "FROM sys.database_files AS df",
        "CROSS APPLY sys.dm_os_volume_stats(DB_ID(), df.file_id) AS vs",
        "WHERE df.data_space_id = FILEGROUP_ID(@target_fg);",
        *fail(
            "@room_mb < @need_mb",
            "N'tierwise: pre-check failed: the partition needs ' + CAST(@need_mb AS nvarchar(20)) + N' MB but filegroup '"
            " + QUOTENAME(@target_fg) + N' and its volume have ' + CAST(@room_mb AS nvarchar(20)) + N' MB. Nothing was changed.'",
        ),
    ]


def create_filegroup(script: Batches, move: Move, a: MovePartition, options: Options) -> None:
    assert a.create_target is not None
    f = a.create_target
    db = move.target.database
    qdb, qfg, lfg = tsql_ident(db), tsql_ident(a.target_filegroup), tsql_str(a.target_filegroup)
    directory = dirname(f.path)
    size = max(options.min_file_mb, -(-f.size_bytes // MB))
    script.check(
        f"USE {qdb};",
        "DECLARE @msg nvarchar(2048);",
        f"IF EXISTS (SELECT 1 FROM sys.database_files WHERE data_space_id = FILEGROUP_ID({lfg}))",
        "BEGIN",
        "    SELECT TOP (1) @msg = N'tierwise: pre-check failed: filegroup ' + QUOTENAME(FILEGROUP_NAME(data_space_id)) + N' exists, but its file '",
        f"        + QUOTENAME(name) + N' is at ' + physical_name + N', not under ' + {tsql_str(directory)} + N'. Nothing was changed.'",
        "    FROM sys.database_files",
        f"    WHERE data_space_id = FILEGROUP_ID({lfg}) AND LEFT(LOWER(physical_name), LEN({tsql_str(directory)})) <> LOWER({tsql_str(directory)});",
        fail_if_msg("    "),
        say(f"step 1: already done: filegroup {qfg} exists on tier {move.to_tier}", "    "),
        "    RETURN;",
        "END;",
        ha_checks(
            move, "the file added on the primary is replayed on the secondaries, where the path must exist."
        ),
        # ADD FILE waits for a running BACKUP of the database, then one of them fails
        *server_state_check(),
        *busy_checks(move),
        *directory_check(directory, "target"),
        *free_space_check(directory, str(size), options.headroom_pct, f"the new file of {qfg}"),
    )
    script.add(
        f"USE {qdb};",
        "DECLARE @msg nvarchar(2048);",
        f"IF EXISTS (SELECT 1 FROM sys.database_files WHERE data_space_id = FILEGROUP_ID({lfg}))",
        "    RETURN;",
        # right before ADD FILE: a BACKUP started since the pre-checks would make one of them fail
        *server_state_check(),
        *busy_checks(move),
        say(f"step 1: creating filegroup {qfg} with file {f.path}"),
        f"IF FILEGROUP_ID({lfg}) IS NULL",
        "BEGIN",
        f"    ALTER DATABASE {qdb} ADD FILEGROUP {qfg};",
        "END;",
    )
    script.add(
        f"USE {qdb};",
        f"IF NOT EXISTS (SELECT 1 FROM sys.database_files WHERE data_space_id = FILEGROUP_ID({lfg}))",
        "BEGIN",
        f"    ALTER DATABASE {qdb} ADD FILE (NAME = {tsql_str(f.name)}, FILENAME = {tsql_str(f.path)}, SIZE = {size}MB, "
        f"FILEGROWTH = {options.file_growth_mb}MB) TO FILEGROUP {qfg};",
        "END;",
    )


def _remove_filegroup_checks(script: Batches, move: Move, a: MovePartition) -> None:
    """Rollback, as pre-checks: what step 3 (removing the filegroup the forward script created)
    needs, checked before the partition moves back, so a check-only run finds a missing
    permission, a snapshot or a running backup in daylight. Step 3 checks them again."""
    fg = a.source_filegroup
    lfg = tsql_str(fg)
    tail = "Nothing was changed."
    script.check(
        f"USE {tsql_ident(move.target.database)};",
        "DECLARE @msg nvarchar(2048);",
        f"IF FILEGROUP_ID({lfg}) IS NULL",
        "    RETURN;",
        *server_state_check(tail),
        *busy_checks(move, tail),
        *snapshot_check(move, tail),
    )


def _remove_filegroup(script: Batches, move: Move, a: MovePartition) -> None:
    """Rollback: remove the filegroup the forward script created, once nothing uses it.

    Before REMOVE FILE / REMOVE FILEGROUP, like every other file change here: VIEW SERVER STATE
    (else the checks see no other session), no BACKUP of the database running ("Backup Overview
    (SQL Server)": files cannot be added or removed while a backup runs; whichever comes second
    waits, then one fails), no database snapshot ("Database Snapshots (SQL Server)": files cannot
    be dropped from a database that has snapshots). REMOVE FILE needs the file empty (Microsoft
    Learn, "Delete data or log files from a database"; error 5042 otherwise): nothing may be
    allocated in the filegroup. Each part checks first, so a re-run after a stop finishes the job."""
    assert a.remove_source is not None
    f = a.remove_source
    qdb = tsql_ident(move.target.database)
    fg = a.source_filegroup
    qfg, lfg = tsql_ident(fg), tsql_str(fg)
    # sys.allocation_units lists units marked for deferred drop too (type 0, DROPPED; container_id
    # 0): after the move back commits, the partition's old pages here are freed in the background
    # (objects over 128 extents). Those are not "other data": they are waited for, not kept.
    used = (
        f"EXISTS (SELECT 1 FROM sys.destination_data_spaces WHERE data_space_id = FILEGROUP_ID({lfg})) "
        f"OR EXISTS (SELECT 1 FROM sys.allocation_units WHERE data_space_id = FILEGROUP_ID({lfg}) AND type <> 0) "
        f"OR EXISTS (SELECT 1 FROM sys.indexes WHERE data_space_id = FILEGROUP_ID({lfg})) "
        f"OR EXISTS (SELECT 1 FROM sys.database_files WHERE data_space_id = FILEGROUP_ID({lfg}) AND name <> {tsql_str(f.name)})"
    )
    freeing = (
        f"EXISTS (SELECT 1 FROM sys.allocation_units WHERE data_space_id = FILEGROUP_ID({lfg}) AND type = 0)"
    )
    again = "The partition is back on its filegroup; a re-run says so and carries on here."
    script.add(
        f"USE {qdb};",
        "DECLARE @msg nvarchar(2048);",
        f"IF FILEGROUP_ID({lfg}) IS NULL",
        "BEGIN",
        say(f"step 3: already done: filegroup {qfg} no longer exists", "    "),
        "    RETURN;",
        "END;",
        f"IF {used}",
        "BEGIN",
        say(f"step 3: keeping filegroup {qfg}: other data or files use it", "    "),
        "    RETURN;",
        "END;",
        *fail(
            freeing,
            tsql_str(
                f"tierwise: step 3: not finished: filegroup {qfg} still holds pages of the moved partition that "
                "SQL Server frees in the background after the commit (deferred drop: type DROPPED in "
                "sys.allocation_units). Nothing was removed; the partition is back on its filegroup. Run the "
                "script again in a few minutes: it says already done up to here and removes the empty filegroup."
            ),
        ),
        *server_state_check(f"Nothing was removed. {again}"),
        *busy_checks(move, f"Nothing was removed. {again}"),
        *snapshot_check(move, f"Nothing was removed. {again}"),
        say(f"step 3: removing the empty filegroup {qfg} that the forward script created"),
        "BEGIN TRY",
        f"    IF EXISTS (SELECT 1 FROM sys.database_files WHERE name = {tsql_str(f.name)})",
        f"        ALTER DATABASE {qdb} REMOVE FILE {tsql_ident(f.name)};",
        f"    IF FILEGROUP_ID({lfg}) IS NOT NULL",
        f"        ALTER DATABASE {qdb} REMOVE FILEGROUP {qfg};",
        "END TRY",
        "BEGIN CATCH",
        "    SET @msg = "
        + tsql_str(f"tierwise: step 3: error: removing file {tsql_ident(f.name)} / filegroup {qfg}: error ")
        + " + CAST(ERROR_NUMBER() AS nvarchar(10)) + N': ' + ERROR_MESSAGE() + "
        + tsql_str(
            " The partition is back on its filegroup (step 2 committed); only the empty filegroup is left. "
            "Error 5042 (the file is not empty): the moved partition's old pages may still be freed in the "
            "background after the commit (deferred drop of objects over 128 extents); wait a minute, then run "
            "the script again: it says already done up to here and carries on. No log backup is needed."
        )
        + ";",
        "    RAISERROR(N'%s', 16, 1, @msg);",
        "    SET NOEXEC ON;",
        "    RETURN;",
        "END CATCH;",
    )
