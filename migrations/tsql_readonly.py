"""T-SQL: mark a filegroup READ_ONLY (or READ_WRITE again), domain.md §3.4 "Freezing old data"."""

from __future__ import annotations

from datetime import datetime

from migrations.plan import Move, Options, SetReadOnly
from migrations.quoting import tsql_ident, tsql_str
from migrations.tsql import Batches, fail, finish, gate, identity_checks, make_header, say


def render_read_only(
    move: Move, action: SetReadOnly, direction: str, forward: Move, options: Options, at: datetime
) -> str:
    db, fg = move.target.database, action.filegroup
    qdb, lfg = tsql_ident(db), tsql_str(fg)
    mode = "READ_ONLY" if action.read_only else "READ_WRITE"
    flag = 1 if action.read_only else 0
    label = f"filegroup {tsql_ident(fg)} of {qdb}"
    header = make_header(
        move,
        direction,
        forward,
        options,
        at,
        what=f"{label}: mark {mode}",
        source="(in place)",
        destination="(in place)",
        method=[f"ALTER DATABASE ... MODIFY FILEGROUP ... {mode}; needs exclusive access to the database."],
        limits=[
            "The script refuses to run while other sessions use the database (it does not disconnect them).",
            "A READ_ONLY filegroup rejects every write: only for data that no longer changes.",
        ],
    )
    script = Batches(header)
    script.add(gate())
    fg_flag = f"(SELECT is_read_only FROM {qdb}.sys.filegroups WHERE name = {lfg})"
    script.add(
        "USE [master];",
        "SET NOCOUNT ON;",
        "DECLARE @msg nvarchar(2048);",
        say(f"{direction}: {label} -> {mode}"),
        identity_checks(move),
        *fail(
            f"DATABASEPROPERTYEX({tsql_str(db)}, 'Status') <> N'ONLINE'",
            tsql_str(f"tierwise: pre-check failed: database {qdb} is not ONLINE. Nothing was changed."),
        ),
        *fail(
            f"{fg_flag} IS NULL",
            tsql_str(f"tierwise: pre-check failed: {label} does not exist. Nothing was changed."),
        ),
        *fail(
            f"EXISTS (SELECT 1 FROM {qdb}.sys.filegroups WHERE name = {lfg} AND (data_space_id = 1 OR is_default = 1))",
            tsql_str(
                f"tierwise: pre-check failed: {label} is PRIMARY or the default filegroup, which cannot be "
                "read-only. Nothing was changed."
            ),
        ),
    )
    script.add(
        "USE [master];",
        "DECLARE @msg nvarchar(2048), @others int;",
        f"IF {fg_flag} = {flag}",
        "BEGIN",
        say(f"already done: {label} is {mode}.", "    "),
        "END",
        "ELSE",
        "BEGIN",
        f"    SELECT @others = COUNT(*) FROM sys.dm_exec_sessions WHERE database_id = DB_ID({tsql_str(db)}) AND session_id <> @@SPID;",
        *fail(
            "@others > 0",
            f"{tsql_str(f'tierwise: pre-check failed: {mode} needs exclusive access, but ')} + CAST(@others AS nvarchar(10)) + "
            "N' other session(s) use the database; stop them and run again. Nothing was changed.'",
            "    ",
        ),
        say(f"step 1: marking {label} {mode}", "    "),
        f"    ALTER DATABASE {qdb} MODIFY FILEGROUP {tsql_ident(fg)} {mode};",
        "END;",
    )
    script.add(
        "USE [master];",
        "DECLARE @msg nvarchar(2048);",
        *fail(f"{fg_flag} <> {flag}", tsql_str(f"tierwise: post-check failed: {label} is not {mode}.")),
        say(f"post-check passed: {label} is {mode}."),
    )
    script.add(finish(f"finished: {label} is {mode}."))
    return script.text()
