"""T-SQL: mark a filegroup READ_ONLY (or READ_WRITE again), domain.md §3.4 "Freezing old data"."""

from __future__ import annotations

from datetime import datetime

from migrations.header import Operations
from migrations.plan import Move, Options, SetReadOnly
from migrations.quoting import tsql_ident, tsql_str
from migrations.tsql_checks import opening_checks, server_state_check
from migrations.tsql_frame import Batches, fail, finish, make_header, say, say_expr


def render_read_only(
    move: Move, action: SetReadOnly, direction: str, forward: Move, options: Options, at: datetime
) -> str:
    qdb = tsql_ident(move.target.database)
    mode = "READ_ONLY" if action.read_only else "READ_WRITE"
    label = f"filegroup {tsql_ident(action.filegroup)} of {qdb}"
    limits = [
        "The script refuses to run while other sessions use the database (it does not disconnect them).",
        "A READ_ONLY filegroup rejects every write: only for data that no longer changes.",
    ]
    if action.partitions:
        listed = ", ".join(f"{tsql_ident(s)}.{tsql_ident(t)} partition {n}" for s, t, n in action.partitions)
        limits.append(
            f"ILM read-only mark: the filegroup may hold only {listed} (all indexes); the script checks that "
            "and stops when anything else is in it. Moving data into or out of it later needs READ_WRITE first "
            "(the rollback)."
        )
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
        limits=limits,
        operations=_operations(qdb, label, action, direction),
    )
    script = Batches(header)
    script.check(*_pre_checks(move, action, direction))
    # with a check-only run days before the window, "no other session" is worth knowing early too
    script.check(*_exclusive_access(move, action, warn=True))
    script.add(*_mark(move, action))
    script.add(*_post_check(move, action))
    script.add(finish(f"finished: {label} is {mode}."))
    return script.text()


def _names(move: Move, action: SetReadOnly) -> tuple[str, str, str, int, str, str]:
    """The database quoted, the filegroup as a literal, the mode, its is_read_only flag, the label,
    and the expression that reads the flag."""
    qdb, fg = tsql_ident(move.target.database), action.filegroup
    lfg = tsql_str(fg)
    mode, flag = ("READ_ONLY", 1) if action.read_only else ("READ_WRITE", 0)
    fg_flag = f"(SELECT is_read_only FROM {qdb}.sys.filegroups WHERE name = {lfg})"
    return qdb, lfg, mode, flag, f"filegroup {tsql_ident(fg)} of {qdb}", fg_flag


def _pre_checks(move: Move, action: SetReadOnly, direction: str) -> list[str]:
    """The right server, the database online, the filegroup there, not PRIMARY or the default, and
    (for an ILM mark) holding only the partitions the plan froze."""
    qdb, lfg, mode, _, label, fg_flag = _names(move, action)
    return [
        *opening_checks(move, f"{direction}: {label} -> {mode}"),
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
        *_holds_check(qdb, lfg, label, action),
    ]


def _exclusive_access(move: Move, action: SetReadOnly, *, warn: bool = False) -> list[str]:
    """No other session uses the database, unless the filegroup is in the planned mode already.
    `warn`: the pre-check version, which says how many use it now and goes on (a check-only run
    in daylight finds the applications connected; the step itself refuses while they are).

    "Other sessions" are those whose current database it is and those holding a DATABASE lock on
    it (sys.dm_tran_locks): a BACKUP or DBCC CHECKDB of it started from master runs in master and
    is found only by its lock. Both DMVs show only this session without VIEW SERVER STATE, so
    that is checked first (server_state_check), or the count would pass blind."""
    _, _, mode, flag, label, fg_flag = _names(move, action)
    ldb = tsql_str(move.target.database)
    return [
        "USE [master];",
        "DECLARE @msg nvarchar(2048), @others int;",
        f"IF {fg_flag} = {flag}",
        "BEGIN",
        say(f"already done: {label} is {mode}.", "    "),
        "    RETURN;",
        "END;",
        *server_state_check(),
        "SELECT @others = COUNT(*) FROM (",
        f"    SELECT session_id FROM sys.dm_exec_sessions WHERE database_id = DB_ID({ldb})",
        "    UNION",
        f"    SELECT request_session_id FROM sys.dm_tran_locks WHERE resource_type = N'DATABASE' AND resource_database_id = DB_ID({ldb})",
        ") AS u (session_id) WHERE session_id <> @@SPID;",
        *(
            [
                "IF @others > 0",
                "BEGIN",
                say_expr(
                    f"{tsql_str(f'warning: {mode} needs exclusive access; ')} + CAST(@others AS nvarchar(10)) + "
                    "N' other session(s) use the database now. Step 1 refuses while any does: stop the applications "
                    "(and let backups finish) before the window.'",
                    "    ",
                ),
                "END;",
            ]
            if warn
            else fail(
                "@others > 0",
                f"{tsql_str(f'tierwise: pre-check failed: {mode} needs exclusive access, but ')} + CAST(@others AS nvarchar(10)) + "
                "N' other session(s) use the database (a BACKUP or DBCC of it counts, even one started from master); "
                "stop them or let the backup finish, and run again. Nothing was changed.'",
            )
        ),
    ]


def _mark(move: Move, action: SetReadOnly) -> list[str]:
    """Step 1: MODIFY FILEGROUP, only while no other session uses the database (checked again
    right before it: the pre-check ran earlier, a check-only run days earlier)."""
    qdb, _, mode, flag, label, fg_flag = _names(move, action)
    return [
        *_exclusive_access(move, action),
        say(f"step 1: marking {label} {mode}"),
        f"IF {fg_flag} <> {flag}",
        f"    ALTER DATABASE {qdb} MODIFY FILEGROUP {tsql_ident(action.filegroup)} {mode};",
    ]


def _post_check(move: Move, action: SetReadOnly) -> list[str]:
    """The filegroup is in the planned mode."""
    _, _, mode, flag, label, fg_flag = _names(move, action)
    return [
        "USE [master];",
        "DECLARE @msg nvarchar(2048);",
        *fail(f"{fg_flag} <> {flag}", tsql_str(f"tierwise: post-check failed: {label} is not {mode}.")),
        say(f"post-check passed: {label} is {mode}."),
    ]


def _holds_check(qdb: str, lfg: str, label: str, action: SetReadOnly) -> list[str]:
    """READ_ONLY only when the filegroup holds nothing but the listed partitions (every index and
    allocation unit of them): a table or partition of anything else would stop taking writes."""
    if not action.read_only or not action.partitions:
        return []
    allowed = " OR ".join(
        f"(p.object_id = OBJECT_ID({tsql_str(f'{qdb}.{tsql_ident(s)}.{tsql_ident(t)}')}) AND p.partition_number = {n})"
        for s, t, n in action.partitions
    )
    others = (
        f"EXISTS (SELECT 1 FROM {qdb}.sys.allocation_units AS au "
        f"INNER JOIN {qdb}.sys.partitions AS p ON au.container_id = "
        "CASE WHEN au.type IN (1, 3) THEN p.hobt_id ELSE p.partition_id END "
        f"INNER JOIN {qdb}.sys.filegroups AS f ON f.data_space_id = au.data_space_id "
        f"WHERE f.name = {lfg} AND f.is_read_only = 0 AND NOT ({allowed}))"
    )
    return fail(
        others,
        tsql_str(
            f"tierwise: pre-check failed: {label} holds data other than the partitions this plan froze; "
            "it stays READ_WRITE (mark it by hand once that data is elsewhere). Nothing was changed."
        ),
    )


def _operations(qdb: str, label: str, action: SetReadOnly, direction: str) -> Operations:
    """READ_ONLY / READ_WRITE is one metadata change, but it needs the database to itself
    (Microsoft Learn, ALTER DATABASE File and Filegroup options: "requires exclusive access")."""
    if action.read_only:
        backups = (
            f"Run it between backup jobs: a BACKUP of {qdb} competes for the exclusive access the change needs. "
            f"Afterwards take one backup of {label} (or a full backup): partial backups "
            "(READ_WRITE_FILEGROUPS) skip it from then on, and piecemeal restores need that copy."
        )
    else:
        backups = (
            f"Run it between backup jobs: a BACKUP of {qdb} competes for the exclusive access the change needs. "
            "The filegroup is read-write again: a partial-backup schedule (READ_WRITE_FILEGROUPS) includes it "
            "from now on; take a full backup so every restore path has it."
        )
    return Operations(
        duration="Seconds: one ALTER DATABASE ... MODIFY FILEGROUP, a metadata change whatever the filegroup's size.",
        log_volume="A few log records.",
        blocking=(
            f"Needs exclusive access to {qdb}: the script stops while any other session uses it (it never "
            "disconnects them); run it in a window where the applications are stopped."
        ),
        backups=backups,
        abort="Cancel the query: the change is one statement, done or not done; the script checks first and is safe to run again.",
        recover=(
            f"Nothing is half-done: run this script again, or the {'rollback' if direction == 'forward' else 'forward'} "
            f"script (MODIFY FILEGROUP {'READ_WRITE' if action.read_only else 'READ_ONLY'}) to go back."
        ),
    )
