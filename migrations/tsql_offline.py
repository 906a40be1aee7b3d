"""T-SQL: offline moves (primary data file and log files) and tempdb (restart).

Offline (domain.md §3.1; errors 5020/2555 rule out the online path): one script, run twice.
Run 1 checks, takes the database offline and prints what to copy where, then stops. The operator
copies the files (the script never runs OS commands). Run 2 finds the copies, points the catalog
at them (MODIFY FILE), brings the database online and checks it. The state is re-read from
sys.master_files and sys.databases (both readable while the database is offline) every time, so
the same script also resumes after any failure, and its inverse (the rollback) undoes any stage.

tempdb (§3.3): MODIFY FILE only; it takes effect at the next restart of the instance.
"""

from __future__ import annotations

from datetime import datetime

from migrations.plan import FileMove, Move, MoveFiles, Options
from migrations.quoting import path_separator, tsql_ident, tsql_str
from migrations.tsql import (
    backup_check,
    directory_check,
    fail,
    file_exists_probe,
    finish,
    free_space_check,
    ha_checks,
    identity_checks,
    say,
)
from migrations.tsql_files import TEMPDB, describe, lower_eq, size_mb, start, target_dir

# ---------------------------------------------------------------------------------------------
# offline: SET OFFLINE / copy by hand / MODIFY FILE / SET ONLINE


def _at(db_lit: str, f: FileMove, path: str) -> str:
    return (
        f"EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID({db_lit}) "
        f"AND name = {tsql_str(f.to_name)} AND {lower_eq('physical_name', path)})"
    )


def _copy_command(f: FileMove) -> str:
    if path_separator(f.from_path) == "\\":
        src, dst = f.from_path.replace("'", "''"), f.to_path.replace("'", "''")
        return f"PowerShell: Copy-Item -LiteralPath '{src}' -Destination '{dst}'"
    src, dst = f.from_path.replace("'", "'\\''"), f.to_path.replace("'", "'\\''")
    return f"shell: cp -p --sparse=always '{src}' '{dst}' && chown mssql:mssql '{dst}'"


def render_offline(
    move: Move, action: MoveFiles, direction: str, forward: Move, options: Options, at: datetime
) -> str:
    script = start(move, action, direction, forward, options, at)
    db = move.target.database
    ldb, qdb = tsql_str(db), tsql_ident(db)
    target = target_dir(action.files)
    state = f"(SELECT state_desc FROM sys.databases WHERE name = {ldb})"
    any_from = " OR ".join(_at(ldb, f, f.from_path) for f in action.files)
    all_to = " AND ".join(_at(ldb, f, f.to_path) for f in action.files)
    script.add(
        "USE [master];",
        "SET NOCOUNT ON;",
        "DECLARE @msg nvarchar(2048);",
        say(
            f"{direction}: {describe(move, action)}: tier {move.from_tier or 'unknown'} -> {move.to_tier} (offline)"
        ),
        identity_checks(move),
        ha_checks(move, "a database in one cannot be taken offline."),
        "-- every planned file is where the plan says: old place, or new place after an earlier run",
        *[
            line
            for f in action.files
            for line in fail(
                f"NOT ({_at(ldb, f, f.from_path)} OR {_at(ldb, f, f.to_path)})",
                tsql_str(
                    f"tierwise: pre-check failed: file {tsql_ident(f.to_name)} of {qdb} is neither at {f.from_path} "
                    f"nor at {f.to_path}; the advice is out of date. Nothing was changed."
                ),
            )
        ],
        *fail(
            f"{state} NOT IN (N'ONLINE', N'OFFLINE', N'RECOVERY_PENDING')",
            f"{tsql_str(f'tierwise: pre-check failed: database {qdb} is ')} + {state} + N'; review it by hand. Nothing was changed.'",
        ),
        f"IF {state} = N'ONLINE' AND {all_to}",
        "BEGIN",
        say(f"already done: {qdb} is online from {target}; the steps below change nothing.", "    "),
        "END;",
    )
    # run 1: checks that only make sense while the database is still online on the old files
    probes: list[str] = []
    for f in action.files:
        probes += [
            *file_exists_probe(f.to_path, "@file_exists"),
            *fail(
                "@file_exists = 1",
                tsql_str(
                    f"tierwise: pre-check failed: {f.to_path} already exists. A file there now is not a copy of the "
                    "database as it is (it is still online); if it is the original from before an earlier move, it is "
                    "out of date. Rename or delete it, then run again. Nothing was changed."
                ),
            ),
        ]
    script.add(
        "USE [master];",
        "DECLARE @msg nvarchar(2048);",
        f"IF NOT ({state} = N'ONLINE' AND ({any_from}))",
        "BEGIN",
        say("the database is not online on its old files: no run-1 checks", "    "),
        "    RETURN;",
        "END;",
        say("run 1: checking backups, the target directory, stale copies and free space"),
        backup_check(move, options),
        *directory_check(target, "target"),
        "DECLARE @fe_probe TABLE (file_exists int, is_directory int, parent_exists int), @file_exists bit;",
        *probes,
        *free_space_check(
            target,
            str(sum(size_mb(f, options) for f in action.files)),
            options.headroom_pct,
            f"the copies of the files of {qdb}",
        ),
    )
    script.add(
        "USE [master];",
        f"IF {state} = N'ONLINE' AND ({any_from})",
        "BEGIN",
        say(f"step 1: taking {qdb} offline (open transactions are rolled back)", "    "),
        f"    ALTER DATABASE {qdb} SET OFFLINE WITH ROLLBACK IMMEDIATE;",
        "END;",
    )
    other = (
        "To give up instead, run the rollback script."
        if direction == "forward"
        else "To go ahead with the move instead, run the forward script."
    )
    copy_lines: list[str] = []
    for f in action.files:
        copy_lines.append(say(f"    copy  {f.from_path}", "    "))
        copy_lines.append(say(f"      to  {f.to_path}", "    "))
        copy_lines.append(say(f"      {_copy_command(f)}", "    "))
    script.add(
        "USE [master];",
        "DECLARE @msg nvarchar(2048), @missing int = 0;",
        "DECLARE @fe_probe TABLE (file_exists int, is_directory int, parent_exists int), @copy_exists bit;",
        *[
            line
            for f in action.files
            for line in [
                *file_exists_probe(f.to_path, "@copy_exists"),
                "IF COALESCE(@copy_exists, 0) = 0 SET @missing = @missing + 1;",
            ]
        ],
        f"IF {state} <> N'ONLINE' AND @missing > 0",
        "BEGIN",
        say("======================== MANUAL STEP ========================", "    "),
        say(
            f"{qdb} is offline. Copy (do not move) these files; the SQL Server service account needs full control of the copies:",
            "    ",
        ),
        *copy_lines,
        say(f"Then run this same script again. {other}", "    "),
        say("=============================================================", "    "),
        "    RAISERROR(N'%s', 16, 1, "
        + tsql_str(
            f"tierwise: MANUAL STEP: {qdb} is offline; copy the files listed above to {target}, then run "
            "this script again."
        )
        + ");",
        "    SET NOEXEC ON;",
        "    RETURN;",
        "END;",
    )
    modify: list[str] = []
    for i, f in enumerate(action.files, start=1):
        modify += [
            f"    IF NOT {_at(ldb, f, f.to_path)}",
            "    BEGIN",
            say(f"step 2.{i}: pointing {tsql_ident(f.to_name)} at {f.to_path}", "        "),
            f"        ALTER DATABASE {qdb} MODIFY FILE (NAME = {tsql_str(f.to_name)}, FILENAME = {tsql_str(f.to_path)});",
            "    END;",
        ]
    script.add(
        "USE [master];",
        f"IF {state} IN (N'OFFLINE', N'RECOVERY_PENDING')",
        "BEGIN",
        *modify,
        "END;",
    )
    script.add(
        "USE [master];",
        f"IF {state} IN (N'OFFLINE', N'RECOVERY_PENDING')",
        "BEGIN",
        say(
            f"step 3: bringing {qdb} online from {target} (if this fails, fix the copies' permissions and "
            "run again, or run the rollback script)",
            "    ",
        ),
        f"    ALTER DATABASE {qdb} SET ONLINE;",
        "END;",
    )
    olds = "; ".join(f.from_path for f in action.files)
    script.add(
        "USE [master];",
        "DECLARE @msg nvarchar(2048);",
        *fail(
            f"NOT ({state} = N'ONLINE' AND {all_to})",
            tsql_str(f"tierwise: post-check failed: {qdb} is not online from {target}."),
        ),
        say(
            f"post-check passed: {qdb} is online and its moved files are in {target} (tier {move.to_tier}).",
            "",
        ),
        say(f"once the application is checked, delete the old copies: {olds}", ""),
    )
    script.add(finish(f"finished: {describe(move, action)} is on tier {move.to_tier}."))
    return script.text()


# ---------------------------------------------------------------------------------------------
# restart: tempdb


def render_restart(
    move: Move, action: MoveFiles, direction: str, forward: Move, options: Options, at: datetime
) -> str:
    script = start(move, action, direction, forward, options, at)
    target = target_dir(action.files)
    script.add(
        "USE [master];",
        "SET NOCOUNT ON;",
        "DECLARE @msg nvarchar(2048);",
        say(f"{direction}: {describe(move, action)}: tier {move.from_tier or 'unknown'} -> {move.to_tier}"),
        say("RESTART REQUIRED: the new locations take effect at the next restart of the SQL Server service."),
        identity_checks(move),
        *[
            line
            for f in action.files
            for line in fail(
                f"NOT ({_at(TEMPDB, f, f.from_path)} OR {_at(TEMPDB, f, f.to_path)})",
                tsql_str(
                    f"tierwise: pre-check failed: tempdb file {tsql_ident(f.to_name)} is neither configured at "
                    f"{f.from_path} nor at {f.to_path}; the advice is out of date. Nothing was changed."
                ),
            )
        ],
        *directory_check(target, "target"),
    )
    pending = " OR ".join(f"NOT {_at(TEMPDB, f, f.to_path)}" for f in action.files)
    script.add(
        "USE [master];",
        "DECLARE @msg nvarchar(2048);",
        f"IF NOT ({pending})",
        "BEGIN",
        say("every file is configured at the target already: no free-space check needed", "    "),
        "    RETURN;",
        "END;",
        *free_space_check(
            target,
            str(sum(size_mb(f, options) for f in action.files)),
            options.headroom_pct,
            "tempdb (recreated at its configured size at start)",
        ),
    )
    for i, f in enumerate(action.files, start=1):
        at_target = _at(TEMPDB, f, f.to_path)
        script.add(
            "USE [master];",
            f"IF {at_target}",
            "BEGIN",
            say(f"step {i}: already done: {tsql_ident(f.to_name)} is configured at {f.to_path}", "    "),
            "END",
            "ELSE",
            "BEGIN",
            say(
                f"step {i}: configuring {tsql_ident(f.to_name)} at {f.to_path} (used after the restart)",
                "    ",
            ),
            f"    ALTER DATABASE [tempdb] MODIFY FILE (NAME = {tsql_str(f.to_name)}, FILENAME = {tsql_str(f.to_path)});",
            "END;",
        )
    all_to = " AND ".join(_at(TEMPDB, f, f.to_path) for f in action.files)
    active = " AND ".join(
        f"EXISTS (SELECT 1 FROM tempdb.sys.database_files WHERE name = {tsql_str(f.to_name)} "
        f"AND {lower_eq('physical_name', f.to_path)})"
        for f in action.files
    )
    olds = "; ".join(f.from_path for f in action.files)
    script.add(
        "USE [master];",
        "DECLARE @msg nvarchar(2048);",
        *fail(
            f"NOT ({all_to})", tsql_str(f"tierwise: post-check failed: tempdb is not configured at {target}.")
        ),
        f"IF {active}",
        "BEGIN",
        say(f"post-check passed: tempdb is configured at and already running from {target}.", "    "),
        "END",
        "ELSE",
        "BEGIN",
        say(
            f"post-check passed: tempdb is configured at {target}. RESTART the SQL Server service in the change",
            "    ",
        ),
        say(f"window for it to take effect; after the restart delete the old files: {olds}", "    "),
        "END;",
    )
    script.add(finish(f"finished: tempdb is configured on tier {move.to_tier} (takes effect at restart)."))
    return script.text()
