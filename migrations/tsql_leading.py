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

Rollback: MERGE RANGE of the same boundary, refused while the new partition holds rows.
"""

from __future__ import annotations

from datetime import datetime

from migrations.plan import AddPartition, Move, MovePartition, Options
from migrations.quoting import tsql_ident, tsql_str
from migrations.tsql import Batches, backup_check, fail, finish, gate, identity_checks, make_header, say
from migrations.tsql_partition import create_filegroup
from migrations.tsql_partition_sql import TYPE_AND_STYLE

LOCK_TIMEOUT_MS = 30000


def render_add_partition(
    move: Move, a: AddPartition, direction: str, forward: Move, options: Options, at: datetime
) -> str:
    db = move.target.database
    qdb = tsql_ident(db)
    table = f"{tsql_ident(a.schema)}.{tsql_ident(a.table)}"
    scheme, function = tsql_ident(a.scheme), tsql_ident(a.function)
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
        limits=[
            "RANGE RIGHT functions only; the function and scheme must serve this table alone.",
            "Run it before the period starts: while no row has reached the boundary the split is metadata-only;",
            "the script refuses to split when rows at or above the boundary exist (they would move, fully logged).",
            f"Sch-M lock on the table for the split/merge; waits at most {LOCK_TIMEOUT_MS // 1000} s.",
        ],
    )
    script = Batches(header)
    script.add(gate())
    script.add(
        "USE [master];",
        "SET NOCOUNT ON;",
        "DECLARE @msg nvarchar(2048);",
        say(f"{direction}: {what}"),
        identity_checks(move),
        *fail(
            f"DATABASEPROPERTYEX({tsql_str(db)}, 'Status') <> N'ONLINE'",
            tsql_str(f"tierwise: pre-check failed: database {qdb} is not ONLINE. Nothing was changed."),
        ),
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
    pre = [
        f"USE {qdb};",
        "SET NOCOUNT ON;",
        "DECLARE @msg nvarchar(2048);",
        f"DECLARE @schema sysname = {tsql_str(a.schema)}, @table sysname = {tsql_str(a.table)},",
        f"    @scheme sysname = {tsql_str(a.scheme)}, @function sysname = {tsql_str(a.function)},",
        f"    @fg sysname = {tsql_str(a.filegroup)}, @boundary_text nvarchar(4000) = {tsql_str(a.boundary)};",
        "DECLARE @object_id int = OBJECT_ID(QUOTENAME(@schema) + N'.' + QUOTENAME(@table), N'U');",
        "DECLARE @scheme_id int, @function_id int, @right bit, @type nvarchar(200), @style int, @sql nvarchar(max);",
        "DECLARE @exists bit, @above bit, @rows bigint;",
        "SELECT @scheme_id = ps.data_space_id, @function_id = pf.function_id, @right = CAST(pf.boundary_value_on_right AS bit)",
        "FROM sys.partition_schemes AS ps JOIN sys.partition_functions AS pf ON pf.function_id = ps.function_id",
        "WHERE ps.name = @scheme AND pf.name = @function;",
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
            "WHERE ps.function_id = @function_id AND i.object_id <> @object_id)",
            tsql_str(
                f"tierwise: pre-check failed: function {function} also partitions other tables; a split changes them "
                "all: unsupported here: review. Nothing was changed."
            ),
        ),
        *fail(
            "@right = 0",
            tsql_str(
                f"tierwise: pre-check failed: {function} is RANGE LEFT; the split would move the current period's rows "
                "to the new filegroup: unsupported here: add the boundary by hand. Nothing was changed."
            ),
        ),
        TYPE_AND_STYLE,
        *fail(
            "@type IS NULL",
            "N'tierwise: pre-check failed: the partitioning column''s type is not one this script handles; "
            "unsupported here: review. Nothing was changed.'",
        ),
        "SET @sql = N'DECLARE @v ' + @type + N' = TRY_CONVERT(' + @type + N', @t, ' + CAST(@style AS nvarchar(5)) + N');"
        " SELECT @exists = CASE WHEN @v IS NULL THEN NULL WHEN EXISTS (SELECT 1 FROM sys.partition_range_values"
        " WHERE function_id = @f AND value = @v) THEN 1 ELSE 0 END,"
        " @above = CASE WHEN EXISTS (SELECT 1 FROM sys.partition_range_values WHERE function_id = @f AND value > @v)"
        " THEN 1 ELSE 0 END;';",
        "EXEC sys.sp_executesql @sql, N'@t nvarchar(4000), @f int, @exists bit OUTPUT, @above bit OUTPUT',",
        "    @t = @boundary_text, @f = @function_id, @exists = @exists OUTPUT, @above = @above OUTPUT;",
        *fail(
            "@exists IS NULL",
            tsql_str(
                f"tierwise: pre-check failed: {a.boundary} cannot be converted to the type of {function}; "
                "the plan is out of date. Nothing was changed."
            ),
        ),
    ]
    if not a.remove:
        pre += fail(
            "@exists = 0 AND @above = 1",
            tsql_str(
                f"tierwise: pre-check failed: {function} already has boundaries above {a.boundary}; this is not the "
                "leading edge: review. Nothing was changed."
            ),
        )
    script.add(*pre)
    step = [
        f"USE {qdb};",
        "SET NOCOUNT ON;",
        "DECLARE @msg nvarchar(2048);",
        f"DECLARE @schema sysname = {tsql_str(a.schema)}, @table sysname = {tsql_str(a.table)},",
        f"    @scheme sysname = {tsql_str(a.scheme)}, @function sysname = {tsql_str(a.function)},",
        f"    @fg sysname = {tsql_str(a.filegroup)}, @boundary_text nvarchar(4000) = {tsql_str(a.boundary)};",
        "DECLARE @object_id int = OBJECT_ID(QUOTENAME(@schema) + N'.' + QUOTENAME(@table), N'U');",
        "DECLARE @function_id int = (SELECT function_id FROM sys.partition_functions WHERE name = @function);",
        "DECLARE @type nvarchar(200), @style int, @sql nvarchar(max), @exists bit, @rows bigint;",
        TYPE_AND_STYLE,
        "SET @sql = N'DECLARE @v ' + @type + N' = CONVERT(' + @type + N', @t, ' + CAST(@style AS nvarchar(5)) + N');"
        " SET @exists = CASE WHEN EXISTS (SELECT 1 FROM sys.partition_range_values WHERE function_id = @f AND value = @v)"
        " THEN 1 ELSE 0 END;';",
        "EXEC sys.sp_executesql @sql, N'@t nvarchar(4000), @f int, @exists bit OUTPUT', @t = @boundary_text,",
        "    @f = @function_id, @exists = @exists OUTPUT;",
    ]
    if not a.remove:
        step += [
            "IF @exists = 1",
            "BEGIN",
            say(f"step 2: already done: {function} has the boundary {a.boundary}", "    "),
            "END",
            "ELSE",
            "BEGIN",
            "    SET @sql = N'DECLARE @v ' + @type + N' = CONVERT(' + @type + N', @t, ' + CAST(@style AS nvarchar(5)) + N');"
            " SELECT @rows = COUNT_BIG(*) FROM ' + QUOTENAME(@schema) + N'.' + QUOTENAME(@table) + N' WHERE '"
            " + (SELECT QUOTENAME(c.name) FROM sys.index_columns AS ic JOIN sys.columns AS c ON c.object_id = ic.object_id"
            " AND c.column_id = ic.column_id WHERE ic.object_id = @object_id AND ic.index_id IN (0, 1)"
            " AND ic.partition_ordinal = 1) + N' >= @v;';",
            "    EXEC sys.sp_executesql @sql, N'@t nvarchar(4000), @rows bigint OUTPUT', @t = @boundary_text, @rows = @rows OUTPUT;",
            *fail(
                "@rows IS NULL OR @rows > 0",
                f"{tsql_str('tierwise: pre-check failed: ')} + COALESCE(CAST(@rows AS nvarchar(20)), N'an unknown number of') + "
                f"{tsql_str(f' rows are already at or above {a.boundary}; the split would move them: run it before the period starts, or review. Nothing was changed.')}",
                "    ",
            ),
            f"    SET LOCK_TIMEOUT {LOCK_TIMEOUT_MS};",
            "    SET XACT_ABORT ON;",
            say(
                f"step 2: NEXT USED {tsql_ident(a.filegroup)} on {scheme}, SPLIT RANGE at {a.boundary}",
                "    ",
            ),
            "    BEGIN TRANSACTION;",
            "    SET @sql = N'ALTER PARTITION SCHEME ' + QUOTENAME(@scheme) + N' NEXT USED ' + QUOTENAME(@fg) + N';"
            " DECLARE @v ' + @type + N' = CONVERT(' + @type + N', @t, ' + CAST(@style AS nvarchar(5)) + N');"
            " ALTER PARTITION FUNCTION ' + QUOTENAME(@function) + N'() SPLIT RANGE (@v);';",
            "    EXEC sys.sp_executesql @sql, N'@t nvarchar(4000)', @t = @boundary_text;",
            "    COMMIT TRANSACTION;",
            "END;",
        ]
    else:
        step += [
            "IF @exists = 0",
            "BEGIN",
            say(f"step 2: already done: {function} has no boundary {a.boundary}", "    "),
            "END",
            "ELSE",
            "BEGIN",
            "    SET @sql = N'DECLARE @v ' + @type + N' = CONVERT(' + @type + N', @t, ' + CAST(@style AS nvarchar(5)) + N');"
            " SELECT @rows = COALESCE(SUM(p.rows), 0) FROM sys.partitions AS p WHERE p.object_id = @o"
            " AND p.index_id IN (0, 1) AND p.partition_number = $PARTITION.' + QUOTENAME(@function) + N'(@v);';",
            "    EXEC sys.sp_executesql @sql, N'@t nvarchar(4000), @o int, @rows bigint OUTPUT', @t = @boundary_text,",
            "        @o = @object_id, @rows = @rows OUTPUT;",
            *fail(
                "@rows > 0",
                f"{tsql_str(f'tierwise: pre-check failed: the partition starting at {a.boundary} holds ')} + "
                "CAST(@rows AS nvarchar(20)) + N' rows; MERGE would move them: review. Nothing was changed.'",
                "    ",
            ),
            f"    SET LOCK_TIMEOUT {LOCK_TIMEOUT_MS};",
            say(f"step 2: MERGE RANGE at {a.boundary} of {function}", "    "),
            "    SET @sql = N'DECLARE @v ' + @type + N' = CONVERT(' + @type + N', @t, ' + CAST(@style AS nvarchar(5)) + N');"
            " ALTER PARTITION FUNCTION ' + QUOTENAME(@function) + N'() MERGE RANGE (@v);';",
            "    EXEC sys.sp_executesql @sql, N'@t nvarchar(4000)', @t = @boundary_text;",
            "END;",
        ]
    script.add(*step)
    want = 1 if not a.remove else 0
    script.add(
        f"USE {qdb};",
        "SET NOCOUNT ON;",
        "DECLARE @msg nvarchar(2048);",
        f"DECLARE @function sysname = {tsql_str(a.function)}, @boundary_text nvarchar(4000) = {tsql_str(a.boundary)};",
        "DECLARE @function_id int = (SELECT function_id FROM sys.partition_functions WHERE name = @function);",
        "DECLARE @type nvarchar(200), @style int, @sql nvarchar(max), @exists bit;",
        TYPE_AND_STYLE,
        "SET @sql = N'DECLARE @v ' + @type + N' = CONVERT(' + @type + N', @t, ' + CAST(@style AS nvarchar(5)) + N');"
        " SET @exists = CASE WHEN EXISTS (SELECT 1 FROM sys.partition_range_values WHERE function_id = @f AND value = @v)"
        " THEN 1 ELSE 0 END;';",
        "EXEC sys.sp_executesql @sql, N'@t nvarchar(4000), @f int, @exists bit OUTPUT', @t = @boundary_text,",
        "    @f = @function_id, @exists = @exists OUTPUT;",
        *fail(
            f"@exists <> {want}",
            tsql_str(
                f"tierwise: post-check failed: {function} {'has no' if want else 'still has the'} boundary {a.boundary}."
            ),
        ),
        say(f"post-check passed: {function} {'has' if want else 'no longer has'} the boundary {a.boundary}."),
    )
    done = (
        f"finished: {table} has a partition from {a.boundary} on {tsql_ident(a.filegroup)}."
        if not a.remove
        else f"finished: the boundary {a.boundary} of {function} is merged away."
    )
    script.add(finish(done))
    return script.text()
