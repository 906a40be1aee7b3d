"""T-SQL: online move of a filegroup's secondary data files (domain.md §3.2).

For each file: ADD FILE on the target directory to the same filegroup, DBCC SHRINKFILE EMPTYFILE
(its pages move to the filegroup's other files), REMOVE FILE. The database stays online; every
step re-reads sys.database_files first, so a second run (or a run after an interruption) does
only what is left.
"""

from __future__ import annotations

from datetime import datetime

from migrations.plan import Move, MoveFiles, Options
from migrations.quoting import path_separator, tsql_ident, tsql_str
from migrations.tsql import (
    backup_check,
    directory_check,
    fail,
    fail_if_msg,
    finish,
    free_space_check,
    ha_checks,
    identity_checks,
    say,
)
from migrations.tsql_files import describe, plan_table, size_mb, start, target_dir

# ---------------------------------------------------------------------------------------------
# online: ADD FILE / EMPTYFILE / REMOVE FILE


def render_online(
    move: Move, action: MoveFiles, direction: str, forward: Move, options: Options, at: datetime
) -> str:
    script = start(move, action, direction, forward, options, at)
    db, fg = move.target.database, action.filegroup or "PRIMARY"
    ldb, lfg = tsql_str(db), tsql_str(fg)
    target = target_dir(action.files)
    label = f"{tsql_ident(fg)} of {tsql_ident(db)}"
    script.add(
        "USE [master];",
        "SET NOCOUNT ON;",
        "DECLARE @msg nvarchar(2048);",
        say(f"{direction}: {describe(move, action)}: tier {move.from_tier or 'unknown'} -> {move.to_tier}"),
        identity_checks(move),
        *fail(
            f"DATABASEPROPERTYEX({ldb}, 'Status') <> N'ONLINE'",
            tsql_str(
                f"tierwise: pre-check failed: database {tsql_ident(db)} is not ONLINE. Nothing was changed."
            ),
        ),
        ha_checks(
            move, "the file added on the primary is replayed on the secondaries, where the path must exist."
        ),
        backup_check(move, options),
    )
    exact_to = (
        "LOWER(df.physical_name) = LOWER(p.to_path)"
        if path_separator(target) == "\\"
        else "df.physical_name = p.to_path"
    )
    exact_from = exact_to.replace("p.to_path", "p.from_path")
    script.add(
        f"USE {tsql_ident(db)};",
        "DECLARE @msg nvarchar(2048);",
        plan_table(action, options),
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
        fail_if_msg(),
        "SELECT TOP (1) @msg = N'tierwise: pre-check failed: file ' + QUOTENAME(p.from_name) + N' is not in the database; the advice is out of date. Nothing was changed.'",
        "FROM #tw_files AS p",
        "WHERE NOT EXISTS (SELECT 1 FROM sys.database_files AS df WHERE df.name IN (p.from_name, p.to_name));",
        fail_if_msg(),
        "SELECT TOP (1) @msg = N'tierwise: pre-check failed: filegroup ' + QUOTENAME(FILEGROUP_NAME(df.data_space_id)) + N' has file '",
        "    + QUOTENAME(df.name) + N' that the plan does not know; the advice is out of date. Nothing was changed.'",
        "FROM sys.database_files AS df",
        f"WHERE df.data_space_id = FILEGROUP_ID({lfg})",
        "    AND NOT EXISTS (SELECT 1 FROM #tw_files AS p WHERE df.name IN (p.from_name, p.to_name));",
        fail_if_msg(),
        "SELECT TOP (1) @msg = N'tierwise: pre-check failed: ' + mf.physical_name + N' is already used by file '",
        "    + QUOTENAME(mf.name) + N' of database ' + QUOTENAME(DB_NAME(mf.database_id)) + N'. Nothing was changed.'",
        "FROM sys.master_files AS mf",
        "JOIN #tw_files AS p ON "
        + exact_to.replace("df.physical_name", "mf.physical_name COLLATE DATABASE_DEFAULT"),
        f"WHERE NOT (mf.database_id = DB_ID({ldb}) AND mf.name COLLATE DATABASE_DEFAULT = p.to_name);",
        fail_if_msg(),
        "IF NOT EXISTS (SELECT 1 FROM #tw_files AS p JOIN sys.database_files AS df ON df.name = p.from_name)",
        "BEGIN",
        say(
            f"already done: every file of {label} is on tier {move.to_tier}; the steps below change nothing.",
            "    ",
        ),
        "END;",
    )
    # capacity and directory only matter while files remain to be added
    script.add(
        f"USE {tsql_ident(db)};",
        "DECLARE @msg nvarchar(2048);",
        "IF NOT EXISTS (SELECT 1 FROM #tw_files AS p WHERE NOT EXISTS (SELECT 1 FROM sys.database_files AS df WHERE df.name = p.to_name))",
        "BEGIN",
        say("every new file exists: no directory or free-space check needed", "    "),
        "    RETURN;",
        "END;",
        *directory_check(target, "target"),
        *free_space_check(
            target,
            "SELECT COALESCE(SUM(p.size_mb), 0) FROM #tw_files AS p WHERE NOT EXISTS "
            "(SELECT 1 FROM sys.database_files AS df WHERE df.name = p.to_name)",
            options.headroom_pct,
            f"the new files of {label}",
        ),
    )
    for i, f in enumerate(action.files, start=1):
        script.add(
            f"USE {tsql_ident(db)};",
            f"IF EXISTS (SELECT 1 FROM sys.database_files WHERE name = {tsql_str(f.to_name)})",
            "BEGIN",
            say(f"step {i}a: already done: file {tsql_ident(f.to_name)} exists at {f.to_path}", "    "),
            "END",
            "ELSE",
            "BEGIN",
            say(
                f"step {i}a: adding file {tsql_ident(f.to_name)} at {f.to_path} to filegroup {tsql_ident(fg)}",
                "    ",
            ),
            f"    ALTER DATABASE {tsql_ident(db)} ADD FILE (NAME = {tsql_str(f.to_name)}, FILENAME = {tsql_str(f.to_path)}, "
            f"SIZE = {size_mb(f, options)}MB, FILEGROWTH = {options.file_growth_mb}MB) TO FILEGROUP {tsql_ident(fg)};",
            "END;",
        )
    for i, f in enumerate(action.files, start=1):
        exists = f"EXISTS (SELECT 1 FROM sys.database_files WHERE name = {tsql_str(f.from_name)})"
        gone = say(
            f"step {i}b: already done: file {tsql_ident(f.from_name)} is no longer in the database", "    "
        )
        script.add(
            f"USE {tsql_ident(db)};",
            f"IF {exists}",
            "BEGIN",
            say(
                f"step {i}b: emptying file {tsql_ident(f.from_name)} into the other files of {tsql_ident(fg)} "
                "(DBCC SHRINKFILE EMPTYFILE; progress in sys.dm_exec_requests.percent_complete)",
                "    ",
            ),
            f"    DBCC SHRINKFILE ({tsql_str(f.from_name)}, EMPTYFILE) WITH NO_INFOMSGS;",
            "END",
            "ELSE",
            "BEGIN",
            gone,
            "END;",
        )
        script.add(
            f"USE {tsql_ident(db)};",
            f"IF {exists}",
            "BEGIN",
            say(f"step {i}c: removing the empty file {tsql_ident(f.from_name)} ({f.from_path})", "    "),
            f"    ALTER DATABASE {tsql_ident(db)} REMOVE FILE {tsql_ident(f.from_name)};",
            "END",
            "ELSE",
            "BEGIN",
            gone.replace(f"step {i}b", f"step {i}c"),
            "END;",
        )
    script.add(
        f"USE {tsql_ident(db)};",
        "DECLARE @msg nvarchar(2048);",
        "SELECT TOP (1) @msg = N'tierwise: post-check failed: file ' + QUOTENAME(df.name) + N' of filegroup '",
        f"    + {tsql_str(tsql_ident(fg))} + N' is at ' + df.physical_name + N', which is not a planned new file.'",
        "FROM sys.database_files AS df",
        f"WHERE df.data_space_id = FILEGROUP_ID({lfg})",
        f"    AND NOT EXISTS (SELECT 1 FROM #tw_files AS p WHERE p.to_name = df.name AND {exact_to});",
        fail_if_msg(),
        "SELECT TOP (1) @msg = N'tierwise: post-check failed: the planned file ' + QUOTENAME(p.to_name) + N' is missing.'",
        "FROM #tw_files AS p WHERE NOT EXISTS (SELECT 1 FROM sys.database_files AS df WHERE df.name = p.to_name);",
        fail_if_msg(),
        "IF @msg IS NULL",
        "BEGIN",
        say(f"post-check passed: every file of {label} is in {target} (tier {move.to_tier}).", "    "),
        "END;",
    )
    script.add(finish(f"finished: {describe(move, action)} is on tier {move.to_tier}."))
    return script.text()
