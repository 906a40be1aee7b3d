"""T-SQL: the ILM leading edge - create the next period's partition, empty, on the hot filegroup.

domain.md §3.4 (MS docs ALTER PARTITION SCHEME / ALTER PARTITION FUNCTION): every scheme on the
function needs a NEXT USED filegroup before a SPLIT; "of the two ranges, the one where the new
boundary value resides is the new partition" and gets the NEXT USED filegroup. With RANGE RIGHT
the boundary belongs to the partition above it, so splitting the open last partition at the next
period's first value creates that period's partition on the NEXT USED filegroup, and it is
metadata-only while no row has reached the new period. RANGE LEFT is refused at run time (the
new partition would be the one below the boundary: the current period's rows would move).

The boundary reaches the server as an N'…' literal and is converted at run time to the
function's parameter type (sys.partition_parameters, same type/style table as the partition
move), so no generation-time value is spliced into dynamic SQL.

Rollback: MERGE RANGE of the same boundary, refused while the new partition holds rows. The
rows are counted again inside the MERGE's transaction after an exclusive table lock (TABLOCKX,
HOLDLOCK), so a row that arrives after the first count stops the MERGE instead of being moved.
"""

from __future__ import annotations

from datetime import datetime

from migrations.header import Operations
from migrations.plan import AddPartition, Move, MovePartition, Options
from migrations.quoting import tsql_ident, tsql_str
from migrations.tsql_checks import backup_check, opening_checks
from migrations.tsql_frame import Batches, fail, finish, make_header, say
from migrations.tsql_partition import create_filegroup
from migrations.tsql_partition_sql import TYPE_AND_STYLE

LOCK_TIMEOUT_MS = (
    5000  # SPLIT/MERGE have no WAIT_AT_LOW_PRIORITY: others queue behind the Sch-M request this long
)


def _declare(a: AddPartition) -> list[str]:
    """The names as N'' values, and what every batch derives from them (the partitioning column
    from the clustered index or heap, the function's id and partition count)."""
    return [
        f"DECLARE @schema sysname = {tsql_str(a.schema)}, @table sysname = {tsql_str(a.table)},",
        f"    @scheme sysname = {tsql_str(a.scheme)}, @function sysname = {tsql_str(a.function)},",
        f"    @fg sysname = {tsql_str(a.filegroup)}, @boundary_text nvarchar(4000) = {tsql_str(a.boundary)};",
        "DECLARE @object_id int = OBJECT_ID(QUOTENAME(@schema) + N'.' + QUOTENAME(@table), N'U');",
        "DECLARE @function_id int, @fanout int, @column sysname, @type nvarchar(200), @style int, @sql nvarchar(max);",
        "SELECT @function_id = function_id, @fanout = fanout FROM sys.partition_functions WHERE name = @function;",
        "SELECT @column = c.name FROM sys.index_columns AS ic",
        "JOIN sys.columns AS c ON c.object_id = ic.object_id AND c.column_id = ic.column_id",
        "WHERE ic.object_id = @object_id AND ic.index_id IN (0, 1) AND ic.partition_ordinal = 1;",
    ]


def _operations(a: AddPartition) -> Operations:
    """The Operations block of the leading-edge scripts: metadata only while the range is empty."""
    verb = "MERGE" if a.remove else "NEXT USED + SPLIT"
    counted = (
        "the new partition's rows (it should hold none)"
        if a.remove
        else "the rows at or above the boundary (an index seek when the partitioning column leads an index, else a "
        "scan of the last partition, without holding locks)"
    )
    return Operations(
        duration=f"seconds: {verb} of an empty range is metadata only; before it the script counts {counted}.",
        log_volume=(
            "a few KB (catalog changes only). Rows in the re-mapped range would be moved fully logged (about four "
            "times their size): the script refuses when there are any, and rolls back if one arrives meanwhile."
        ),
        blocking=(
            (
                f"an exclusive table lock (TABLOCKX) on {tsql_ident(a.schema)}.{tsql_ident(a.table)} from the "
                "recount of the partition to the commit, then Sch-M for the MERGE (milliseconds once granted); "
                if a.remove
                else f"Sch-M on {tsql_ident(a.schema)}.{tsql_ident(a.table)} for the {verb} (milliseconds once granted); "
            )
            + f"while it waits (at most {LOCK_TIMEOUT_MS // 1000} s, SPLIT/MERGE have no WAIT_AT_LOW_PRIORITY) new "
            "queries on the table queue behind it."
        ),
        backups="no effect on backup jobs; a recent full backup is checked first. No need to pause log backups.",
        abort=(
            f"cancel the query: the {'merge' if a.remove else 'split'} is one transaction and rolls back at once; "
            "the script is safe to run again: every step checks first."
        ),
        recover=(
            "nothing is half-done: the boundary is either there on the planned filegroup or not; a filegroup the "
            "script created stays and is reused by the next run. Run the script again, or the rollback script to "
            "merge an empty new partition away."
        ),
    )


def _limits(a: AddPartition) -> list[str]:
    """The header's Limits: the split's (forward) or the merge's (rollback); they share little."""
    wait = f"waits at most {LOCK_TIMEOUT_MS // 1000} s (SPLIT/MERGE have no WAIT_AT_LOW_PRIORITY), then stops without a change."
    if a.remove:
        return [
            "RANGE RIGHT functions only; the function and scheme must serve this table alone.",
            "Removes the partition only while it is empty: MERGE would move its rows into the partition below, "
            "fully logged. Rows there: refused, nothing changed; move or delete them first, or keep the partition.",
            "The rows are counted, then counted again exactly inside the MERGE's transaction after an exclusive "
            "table lock (TABLOCKX, HOLDLOCK): no row can arrive between that count and the MERGE.",
            f"The exclusive lock (then Sch-M) holds the table from the recount to the commit; the lock request {wait}",
            "Checks: the boundary converts to the function's type (absent already: nothing to do); after the MERGE, "
            "the boundary is gone.",
        ]
    return [
        "RANGE RIGHT functions only; the function and scheme must serve this table alone.",
        "Run it before the period starts: while no row has reached the boundary the split is metadata-only;",
        "the script refuses to split when rows at or above the boundary exist (they would move, fully logged).",
        f"Sch-M lock on the table for the split; {wait}",
        "Checks: the boundary converts to the function's type, is not already there on another filegroup, has no "
        "boundary above it; the filegroup exists, has files and is writable; after the split, in the same "
        "transaction, the new partition is on the planned filegroup and empty.",
    ]


def _names(move: Move, a: AddPartition) -> tuple[str, str, str, str]:
    """The database, table, scheme and function, quoted."""
    table = f"{tsql_ident(a.schema)}.{tsql_ident(a.table)}"
    return tsql_ident(move.target.database), table, tsql_ident(a.scheme), tsql_ident(a.function)


def render_add_partition(
    move: Move, a: AddPartition, direction: str, forward: Move, options: Options, at: datetime
) -> str:
    qdb, table, scheme, function = _names(move, a)
    verb = "remove the empty partition starting at" if a.remove else "create the partition starting at"
    what = f"{table} in database {qdb}: {verb} {a.boundary} (function {function}, scheme {scheme})"
    header = make_header(
        move,
        direction,
        forward,
        options,
        at,
        what=what,
        source="(the open last partition)" if not a.remove else f"filegroup {tsql_ident(a.filegroup)}",
        destination=f"filegroup {tsql_ident(a.filegroup)}"
        + (f" (created if missing, file {a.create_filegroup.path})" if a.create_filegroup else "")
        if not a.remove
        else "(merged into the partition below)",
        method=[
            f"ALTER PARTITION SCHEME {scheme} NEXT USED {tsql_ident(a.filegroup)};",
            f"ALTER PARTITION FUNCTION {function}() SPLIT RANGE (<{a.boundary} as the function's type>);",
        ]
        if not a.remove
        else [f"ALTER PARTITION FUNCTION {function}() MERGE RANGE (<{a.boundary} as the function's type>);"],
        limits=_limits(a),
        operations=_operations(a),
    )
    script = Batches(header)
    script.check(
        *opening_checks(move, f"{direction}: {what}"),
        backup_check(move, options),
    )
    if a.create_filegroup is not None and not a.remove:
        holder = MovePartition(
            a.schema,
            a.table,
            0,
            a.scheme,
            a.function,
            a.filegroup,
            a.filegroup,
            create_target=a.create_filegroup,
        )
        create_filegroup(script, move, holder, options)
    script.check(*_pre_checks(move, a, creating=a.create_filegroup is not None and not a.remove))
    script.add(*(_merge(move, a) if a.remove else _split(move, a)))
    script.add(*_post_checks(move, a))
    done = (
        f"finished: {table} has a partition from {a.boundary} on {tsql_ident(a.filegroup)}."
        if not a.remove
        else f"finished: the boundary {a.boundary} of {function} is merged away."
    )
    script.add(finish(done))
    return script.text()


def _pre_checks(move: Move, a: AddPartition, *, creating: bool = False) -> list[str]:
    """Before anything changes: the table on the scheme, the function serving it alone and RANGE
    RIGHT, the boundary convertible; for the split, the leading edge and a writable filegroup
    (`creating`: step 1 creates it, after these checks), and no row in the range it re-maps."""
    qdb, table, scheme, function = _names(move, a)
    pre = [
        f"USE {qdb};",
        "SET NOCOUNT ON;",
        "DECLARE @msg nvarchar(2048);",
        *_declare(a),
        "DECLARE @scheme_id int, @right bit, @next_used sysname, @partition int, @partition_fg sysname;",
        "DECLARE @exists bit, @above bit;",
        "SELECT @scheme_id = ps.data_space_id, @right = CAST(pf.boundary_value_on_right AS bit)",
        "FROM sys.partition_schemes AS ps JOIN sys.partition_functions AS pf ON pf.function_id = ps.function_id",
        "WHERE ps.name = @scheme AND pf.function_id = @function_id;",
        *fail(
            "@object_id IS NULL OR @scheme_id IS NULL",
            tsql_str(
                f"tierwise: pre-check failed: table {table} or scheme {scheme} on function {function} does not exist; "
                "the plan is out of date. Nothing was changed."
            ),
        ),
        *fail(
            "NOT EXISTS (SELECT 1 FROM sys.indexes WHERE object_id = @object_id AND index_id IN (0, 1) AND data_space_id = @scheme_id)",
            tsql_str(f"tierwise: pre-check failed: {table} is not on scheme {scheme}. Nothing was changed."),
        ),
        *fail(
            "EXISTS (SELECT 1 FROM sys.indexes AS i JOIN sys.partition_schemes AS ps ON ps.data_space_id = i.data_space_id "
            "WHERE ps.function_id = @function_id AND i.object_id <> @object_id) "
            "OR EXISTS (SELECT 1 FROM sys.partition_schemes WHERE function_id = @function_id AND data_space_id <> @scheme_id)",
            tsql_str(
                f"tierwise: pre-check failed: function {function} also partitions other tables or schemes; a split "
                "changes them all and needs a NEXT USED filegroup on every scheme: unsupported here: review. "
                "Nothing was changed."
            ),
        ),
        *fail(
            "@right = 0",
            tsql_str(
                f"tierwise: pre-check failed: {function} is RANGE LEFT; the split would move the current period's rows "
                "to the new filegroup: unsupported here: add the boundary by hand. Nothing was changed."
            ),
        ),
        *fail(
            "@column IS NULL",
            tsql_str(
                f"tierwise: pre-check failed: the partitioning column of {table} cannot be found: unsupported here: "
                "review. Nothing was changed."
            ),
        ),
        TYPE_AND_STYLE,
        *fail(
            "@type IS NULL",
            "N'tierwise: pre-check failed: the partitioning column''s type is not one this script handles; "
            "unsupported here: review. Nothing was changed.'",
        ),
        # the boundary: convertible, already there or not, any boundary above it (not the leading edge)
        "SET @sql = N'DECLARE @v ' + @type + N' = TRY_CONVERT(' + @type + N', @t, ' + CAST(@style AS nvarchar(5)) + N');"
        " SELECT @exists = CASE WHEN @v IS NULL THEN NULL WHEN EXISTS (SELECT 1 FROM sys.partition_range_values"
        " WHERE function_id = @f AND value = @v) THEN 1 ELSE 0 END,"
        " @above = CASE WHEN EXISTS (SELECT 1 FROM sys.partition_range_values WHERE function_id = @f AND value > @v)"
        " THEN 1 ELSE 0 END,"
        " @partition = CASE WHEN @v IS NOT NULL THEN $PARTITION.' + QUOTENAME(@function) + N'(@v) END;';",
        "EXEC sys.sp_executesql @sql, N'@t nvarchar(4000), @f int, @exists bit OUTPUT, @above bit OUTPUT, @partition int OUTPUT',",
        "    @t = @boundary_text, @f = @function_id, @exists = @exists OUTPUT, @above = @above OUTPUT, @partition = @partition OUTPUT;",
        *fail(
            "@exists IS NULL",
            tsql_str(
                f"tierwise: pre-check failed: {a.boundary} cannot be converted to the type of {function}; "
                "the plan is out of date. Nothing was changed."
            ),
        ),
        # the filegroup of the partition that holds the boundary value (the new one once it exists)
        "SELECT @partition_fg = fg.name FROM sys.destination_data_spaces AS dds",
        "JOIN sys.filegroups AS fg ON fg.data_space_id = dds.data_space_id",
        "WHERE dds.partition_scheme_id = @scheme_id AND dds.destination_id = @partition;",
    ]
    if not a.remove:
        pre += _leading_edge_checks(a, creating)
    return pre + _rows_pre_check(a)


def _rows_pre_check(a: AddPartition) -> list[str]:
    """The step's row count as a pre-check (the step counts again, then once more inside its
    transaction): the split needs no row at or above the boundary, the merge an empty partition."""
    if a.remove:
        return [
            "DECLARE @rows bigint;",
            "IF @exists = 1",
            "BEGIN",
            COUNT_PARTITION,
            COUNT_ARGS,
            *fail(
                "@rows IS NULL OR @rows > 0",
                f"{tsql_str(f'tierwise: pre-check failed: the partition starting at {a.boundary} holds ')} + "
                "COALESCE(CAST(@rows AS nvarchar(20)), N'an unknown number of') + N' rows; MERGE would move them: review. "
                "Nothing was changed.'",
                "    ",
            ),
            "END;",
        ]
    return [
        "DECLARE @rows bigint;",
        "IF @exists = 0",
        "BEGIN",
        COUNT_RANGE,
        "    EXEC sys.sp_executesql @sql, N'@t nvarchar(4000), @rows bigint OUTPUT', @t = @boundary_text, @rows = @rows OUTPUT;",
        *fail(
            "@rows IS NULL OR @rows > 0",
            f"{tsql_str('tierwise: pre-check failed: ')} + COALESCE(CAST(@rows AS nvarchar(20)), N'an unknown number of') + "
            f"{tsql_str(f' rows are already at or above {a.boundary}; the split would move them: run it before the period starts, or review. Nothing was changed.')}",
            "    ",
        ),
        "END;",
    ]


def _leading_edge_checks(a: AddPartition, creating: bool = False) -> list[str]:
    """The split only: no boundary above the new one, an existing boundary on the planned
    filegroup, the filegroup with files and writable; a NEXT USED set by someone else is said."""
    function = tsql_ident(a.function)
    return [
        *fail(
            "@exists = 0 AND @above = 1",
            tsql_str(
                f"tierwise: pre-check failed: {function} already has boundaries above {a.boundary}; this is not "
                "the leading edge: review. Nothing was changed."
            ),
        ),
        *fail(
            "@exists = 1 AND @partition_fg <> @fg",
            f"{tsql_str(f'tierwise: pre-check failed: {function} already has the boundary {a.boundary}, but its partition is on ')}"
            f" + QUOTENAME(@partition_fg) + {tsql_str(f', not on {tsql_ident(a.filegroup)}: review. Nothing was changed.')}",
        ),
        *fail(
            (
                "@exists = 0 AND FILEGROUP_ID(@fg) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM sys.database_files "
                "WHERE data_space_id = FILEGROUP_ID(@fg))"
                if creating  # step 1 creates the filegroup with its file after these checks
                else "@exists = 0 AND (FILEGROUP_ID(@fg) IS NULL OR NOT EXISTS (SELECT 1 FROM sys.database_files "
                "WHERE data_space_id = FILEGROUP_ID(@fg)))"
            ),
            tsql_str(
                f"tierwise: pre-check failed: filegroup {tsql_ident(a.filegroup)} does not exist or has no files. "
                "Nothing was changed."
            ),
        ),
        *fail(
            "@exists = 0 AND EXISTS (SELECT 1 FROM sys.filegroups WHERE name = @fg AND is_read_only = 1)",
            tsql_str(
                f"tierwise: pre-check failed: filegroup {tsql_ident(a.filegroup)} is READ_ONLY; the new period's "
                "rows could not be written. Nothing was changed."
            ),
        ),
        # a NEXT USED filegroup someone else set (sys.destination_data_spaces lists it after the partitions)
        "SELECT @next_used = fg.name FROM sys.destination_data_spaces AS dds",
        "JOIN sys.filegroups AS fg ON fg.data_space_id = dds.data_space_id",
        "WHERE dds.partition_scheme_id = @scheme_id AND dds.destination_id = @fanout + 1;",
        "IF @exists = 0 AND @next_used <> @fg",
        "BEGIN",
        "    SET @msg = N'tierwise: warning: the scheme''s NEXT USED filegroup is ' + QUOTENAME(@next_used)"
        f" + {tsql_str(f'; this script sets it to {tsql_ident(a.filegroup)}.')};",
        "    RAISERROR(N'%s', 0, 1, @msg) WITH NOWAIT;",
        "END;",
    ]


def _step_start(move: Move, a: AddPartition) -> list[str]:
    """The step batch's start: the names, the column's type, and whether the boundary exists."""
    qdb = tsql_ident(move.target.database)
    return [
        f"USE {qdb};",
        "SET NOCOUNT ON;",
        "SET XACT_ABORT ON;",
        "DECLARE @msg nvarchar(2048);",
        *_declare(a),
        "DECLARE @scheme_id int = (SELECT data_space_id FROM sys.partition_schemes WHERE name = @scheme AND function_id = @function_id);",
        "DECLARE @exists bit, @partition int, @partition_fg sysname, @rows bigint;",
        TYPE_AND_STYLE,
        "SET @sql = N'DECLARE @v ' + @type + N' = CONVERT(' + @type + N', @t, ' + CAST(@style AS nvarchar(5)) + N');"
        " SET @exists = CASE WHEN EXISTS (SELECT 1 FROM sys.partition_range_values WHERE function_id = @f AND value = @v)"
        " THEN 1 ELSE 0 END;';",
        "EXEC sys.sp_executesql @sql, N'@t nvarchar(4000), @f int, @exists bit OUTPUT', @t = @boundary_text,",
        "    @f = @function_id, @exists = @exists OUTPUT;",
    ]


# the rows of the range the split or merge re-maps: exact (COUNT_BIG), with partition elimination
COUNT_RANGE = (
    "    SET @sql = N'DECLARE @v ' + @type + N' = CONVERT(' + @type + N', @t, ' + CAST(@style AS nvarchar(5)) + N');"
    " SELECT @rows = COUNT_BIG(*) FROM ' + QUOTENAME(@schema) + N'.' + QUOTENAME(@table) + N' WHERE '"
    " + QUOTENAME(@column) + N' >= @v;';"
)
COUNT_PARTITION = (
    "    SET @sql = N'DECLARE @v ' + @type + N' = CONVERT(' + @type + N', @t, ' + CAST(@style AS nvarchar(5)) + N');"
    " SELECT @p = $PARTITION.' + QUOTENAME(@function) + N'(@v); SELECT @rows = COUNT_BIG(*) FROM '"
    " + QUOTENAME(@schema) + N'.' + QUOTENAME(@table) + N' WHERE $PARTITION.' + QUOTENAME(@function) + N'('"
    " + QUOTENAME(@column) + N') = @p;';"
)
COUNT_ARGS = (
    "    EXEC sys.sp_executesql @sql, N'@t nvarchar(4000), @rows bigint OUTPUT, @p int OUTPUT', @t = @boundary_text,"
    " @rows = @rows OUTPUT, @p = @partition OUTPUT;"
)


def _split(move: Move, a: AddPartition) -> list[str]:
    """Step 2 forward: count the rows at or above the boundary (none may be there), then NEXT USED
    and SPLIT in one transaction that checks the new partition's filegroup and emptiness."""
    function = tsql_ident(a.function)
    scheme = tsql_ident(a.scheme)
    return [
        *_step_start(move, a),
        "IF @exists = 1",
        "BEGIN",
        say(f"step 2: already done: {function} has the boundary {a.boundary}", "    "),
        "END",
        "ELSE",
        "BEGIN",
        COUNT_RANGE,
        "    EXEC sys.sp_executesql @sql, N'@t nvarchar(4000), @rows bigint OUTPUT', @t = @boundary_text, @rows = @rows OUTPUT;",
        *fail(
            "@rows IS NULL OR @rows > 0",
            f"{tsql_str('tierwise: pre-check failed: ')} + COALESCE(CAST(@rows AS nvarchar(20)), N'an unknown number of') + "
            f"{tsql_str(f' rows are already at or above {a.boundary}; the split would move them: run it before the period starts, or review. Nothing was changed.')}",
            "    ",
        ),
        f"    SET LOCK_TIMEOUT {LOCK_TIMEOUT_MS};",
        say(
            f"step 2: NEXT USED {tsql_ident(a.filegroup)} on {scheme}, SPLIT RANGE at {a.boundary}",
            "    ",
        ),
        "    BEGIN TRY",
        "        BEGIN TRANSACTION;",
        "        SET @sql = N'ALTER PARTITION SCHEME ' + QUOTENAME(@scheme) + N' NEXT USED ' + QUOTENAME(@fg) + N';"
        " DECLARE @v ' + @type + N' = CONVERT(' + @type + N', @t, ' + CAST(@style AS nvarchar(5)) + N');"
        " ALTER PARTITION FUNCTION ' + QUOTENAME(@function) + N'() SPLIT RANGE (@v);';",
        "        EXEC sys.sp_executesql @sql, N'@t nvarchar(4000)', @t = @boundary_text;",
        # in the same transaction (the table is locked): the new partition is on @fg and empty,
        # so a row that arrived between the count and the split rolls the split back
        "    " + COUNT_PARTITION,
        "    " + COUNT_ARGS,
        "        SELECT @partition_fg = fg.name FROM sys.destination_data_spaces AS dds",
        "        JOIN sys.filegroups AS fg ON fg.data_space_id = dds.data_space_id",
        "        WHERE dds.partition_scheme_id = @scheme_id AND dds.destination_id = @partition;",
        "        IF @partition_fg IS NULL OR @partition_fg <> @fg",
        "            RAISERROR(N'%s', 16, 1, N'after the SPLIT the new partition is not on the planned filegroup');",
        "        IF @rows <> 0",
        "            RAISERROR(N'%s', 16, 1, N'rows reached the new partition during the split');",
        "        COMMIT TRANSACTION;",
        *_rolled_back("the split failed and was rolled back"),
        "END;",
    ]


def _merge(move: Move, a: AddPartition) -> list[str]:
    """Step 2 of the rollback: MERGE the boundary away while the new partition is empty, recounted
    under an exclusive table lock inside the MERGE's transaction."""
    function = tsql_ident(a.function)
    return [
        *_step_start(move, a),
        "IF @exists = 0",
        "BEGIN",
        say(f"step 2: already done: {function} has no boundary {a.boundary}", "    "),
        "END",
        "ELSE",
        "BEGIN",
        COUNT_PARTITION,
        COUNT_ARGS,
        *fail(
            "@rows IS NULL OR @rows > 0",
            f"{tsql_str(f'tierwise: pre-check failed: the partition starting at {a.boundary} holds ')} + "
            "COALESCE(CAST(@rows AS nvarchar(20)), N'an unknown number of') + N' rows; MERGE would move them: review. "
            "Nothing was changed.'",
            "    ",
        ),
        f"    SET LOCK_TIMEOUT {LOCK_TIMEOUT_MS};",
        say(f"step 2: MERGE RANGE at {a.boundary} of {function}", "    "),
        "    BEGIN TRY",
        "        BEGIN TRANSACTION;",
        # the table first, exclusively, until the commit: no row can arrive after the recount
        "        SET @sql = N'SELECT TOP (0) 1 FROM ' + QUOTENAME(@schema) + N'.' + QUOTENAME(@table)"
        " + N' WITH (TABLOCKX, HOLDLOCK);';",
        "        EXEC sys.sp_executesql @sql;",
        "    " + COUNT_PARTITION,
        "    " + COUNT_ARGS,
        "        IF @rows IS NULL OR @rows <> 0",
        "        BEGIN",
        f"            SET @msg = {tsql_str(f'the partition starting at {a.boundary} now holds ')} + "
        "COALESCE(CAST(@rows AS nvarchar(20)), N'an unknown number of') + N' rows; MERGE would move them: review';",
        "            RAISERROR(N'%s', 16, 1, @msg);",
        "        END;",
        "        SET @sql = N'DECLARE @v ' + @type + N' = CONVERT(' + @type + N', @t, ' + CAST(@style AS nvarchar(5)) + N');"
        " ALTER PARTITION FUNCTION ' + QUOTENAME(@function) + N'() MERGE RANGE (@v);';",
        "        EXEC sys.sp_executesql @sql, N'@t nvarchar(4000)', @t = @boundary_text;",
        "        COMMIT TRANSACTION;",
        *_rolled_back("the merge was not done and was rolled back"),
        "END;",
    ]


def _post_checks(move: Move, a: AddPartition) -> list[str]:
    """The boundary there (or gone), and the new partition on the planned filegroup."""
    qdb, _, _, function = _names(move, a)
    want = 1 if not a.remove else 0
    post = [
        f"USE {qdb};",
        "SET NOCOUNT ON;",
        "DECLARE @msg nvarchar(2048);",
        *_declare(a),
        "DECLARE @scheme_id int = (SELECT data_space_id FROM sys.partition_schemes WHERE name = @scheme AND function_id = @function_id);",
        "DECLARE @exists bit, @partition int, @partition_fg sysname;",
        TYPE_AND_STYLE,
        "SET @sql = N'DECLARE @v ' + @type + N' = CONVERT(' + @type + N', @t, ' + CAST(@style AS nvarchar(5)) + N');"
        " SET @exists = CASE WHEN EXISTS (SELECT 1 FROM sys.partition_range_values WHERE function_id = @f AND value = @v)"
        " THEN 1 ELSE 0 END; SET @p = $PARTITION.' + QUOTENAME(@function) + N'(@v);';",
        "EXEC sys.sp_executesql @sql, N'@t nvarchar(4000), @f int, @exists bit OUTPUT, @p int OUTPUT', @t = @boundary_text,",
        "    @f = @function_id, @exists = @exists OUTPUT, @p = @partition OUTPUT;",
        *fail(
            f"@exists <> {want}",
            tsql_str(
                f"tierwise: post-check failed: {function} {'has no' if want else 'still has the'} boundary {a.boundary}."
            ),
        ),
    ]
    if not a.remove:
        post += [
            "SELECT @partition_fg = fg.name FROM sys.destination_data_spaces AS dds",
            "JOIN sys.filegroups AS fg ON fg.data_space_id = dds.data_space_id",
            "WHERE dds.partition_scheme_id = @scheme_id AND dds.destination_id = @partition;",
            *fail(
                "@partition_fg IS NULL OR @partition_fg <> @fg",
                tsql_str(
                    f"tierwise: post-check failed: the partition starting at {a.boundary} is not on "
                    f"{tsql_ident(a.filegroup)}."
                ),
            ),
        ]
    post.append(
        say(
            f"post-check passed: {function} {'has' if want else 'no longer has'} the boundary {a.boundary}"
            + (f", its partition on {tsql_ident(a.filegroup)}." if want else ".")
        )
    )
    return post


def _rolled_back(what: str) -> list[str]:
    """The end of the step's TRY and its CATCH: roll back, say `what` with the error, stop every
    later batch."""
    return [
        "    END TRY",
        "    BEGIN CATCH",
        "        IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION;",
        f"        SET @msg = N'tierwise: {what}, nothing changed: ' + ERROR_MESSAGE();",
        "        RAISERROR(N'%s', 16, 1, @msg);",
        "        SET NOEXEC ON;",
        "        RETURN;",
        "    END CATCH;",
    ]
