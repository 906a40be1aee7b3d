"""DB2: the active log to another path (NEWLOGPATH through SYSPROC.ADMIN_CMD); DB2 moves it at
the next activation of the database (domain.md §4.9)."""

from __future__ import annotations

from datetime import datetime

from migrations.db2_frame import BACKUP_LOG, ROUTINES, Db2Script, start
from migrations.header import Operations
from migrations.plan import Move, MoveDb2Log, Options
from migrations.quoting import db2_str

AUTHORITIES = (
    "Needs SYSADM, SYSCTRL or SYSMAINT (UPDATE DB CFG through SYSPROC.ADMIN_CMD, EXECUTE on ADMIN_CMD), "
    "SELECT on SYSIBMADM.DBCFG " + ROUTINES.format(extra="")
)
OPERATIONS = Operations(
    duration="seconds now; the log moves at the next activation of the database",
    log_volume="next to none: one configuration update",
    blocking="none now; the reactivation needs every application disconnected",
    backups=(
        "the script stops before any change while a BACKUP of the database runs (run it again afterwards); take a full database backup after the reactivation (the log path changed)"
    ),
    abort="nothing to abort: one configuration update",
    recover="run the rollback script to record the old path again before the reactivation",
)


def render_log(
    move: Move, a: MoveDb2Log, direction: str, forward: Move, options: Options, at: datetime
) -> str:
    what = f"the active log of database {move.target.database}"
    method = [
        f"CALL SYSPROC.ADMIN_CMD('UPDATE DB CFG USING NEWLOGPATH \"{a.to_path}\"') (IBM Db2 docs: UPDATE DATABASE",
        "CONFIGURATION command using the ADMIN_CMD procedure). It only records the new path: DB2 creates the",
        "log files there (under NODE0000/LOGSTREAM0000/) when the database is next activated.",
    ]
    limits = [
        "RESTART NEEDED: takes effect at the next activation of the database (all applications disconnected, "
        "then ACTIVATE DATABASE or the first connection); until then the log stays where it is.",
        AUTHORITIES,
        "The directory must exist and belong to the instance owner.",
    ]
    s = start(
        move,
        direction,
        forward,
        options,
        at,
        what=what,
        source=f"log path {a.from_path}",
        destination=f"log path {a.to_path}",
        method=method,
        limits=limits,
        operations=OPERATIONS,
        backup=BACKUP_LOG,
        then=(
            "Then, in a change window: db2 deactivate db <db> (all applications disconnected), db2 activate db <db>.",
        ),
    )
    _log_steps(s, a)
    return s.text()


def under(column: str, path: str) -> str:
    """`column` (a SYSIBMADM.DBCFG VALUE) is `path` or a directory under it, compared as text with
    the trailing separator trimmed (not LIKE: a `_` or `%` in a path is no wildcard)."""
    p = path.rstrip("/\\") or path
    return (
        f"(RTRIM({column}) = {db2_str(p)} OR LEFT({column}, {len(p) + 1}) IN ({db2_str(p + '/')}, "
        # CHR(92): a Windows path's backslash
        f"{db2_str(p)} || CHR(92)))"
    )


def in_place_sql(path: str) -> str:
    """The active log is under `path` already and no other path is pending (SYSIBMADM.DBCFG:
    `logpath` is where the log is, `newlogpath` what the next activation moves it to, empty when
    nothing is pending; IBM Db2 docs, "newlogpath - Change the database log path configuration
    parameter")."""
    return (
        f"EXISTS (SELECT 1 FROM SYSIBMADM.DBCFG WHERE NAME = 'logpath' AND {under('VALUE', path)}) "
        "AND NOT EXISTS (SELECT 1 FROM SYSIBMADM.DBCFG WHERE NAME = 'newlogpath' AND COALESCE(VALUE, '') <> '' "
        f"AND NOT {under('VALUE', path)})"
    )


def _log_steps(s: Db2Script, a: MoveDb2Log) -> None:
    """NEWLOGPATH through ADMIN_CMD, only when the log is not under the new path already (N12 of
    issue #30: setting it again when `logpath` is there asks for a move to where the log is);
    post-check in SYSIBMADM.DBCFG (the pending `newlogpath`, or `logpath` once a reactivation
    has moved the log)."""
    pending = (
        f"EXISTS (SELECT 1 FROM SYSIBMADM.DBCFG WHERE NAME = 'newlogpath' AND {under('VALUE', a.to_path)})"
    )
    s.check(
        f"the log is under {a.from_path} today, or already set to move to / moved to {a.to_path}",
        "SYSIBM.SYSDUMMY1",
        "log path not as planned: advice out of date",
        where=(
            "NOT EXISTS (SELECT 1 FROM SYSIBMADM.DBCFG WHERE NAME = 'logpath' AND "
            f"({under('VALUE', a.from_path)} OR {under('VALUE', a.to_path)})) AND NOT {pending}"
        ),
    )
    command = f'UPDATE DB CFG USING NEWLOGPATH "{a.to_path}"'
    s.change(
        f"step 1: record the new log path {a.to_path}, unless the log is there already (SYSIBMADM.DBCFG logpath) "
        "or the move there is pending (newlogpath)",
        "BEGIN\n"
        f"  IF {in_place_sql(a.to_path)} THEN\n"
        f"    {s.say(f'step 1: already done: the active log is under {a.to_path} (logpath); NEWLOGPATH not set again')}\n"
        f"  ELSEIF {pending} THEN\n"
        f"    {s.say(f'step 1: already done: NEWLOGPATH is {a.to_path}, pending until the next activation')}\n"
        "  ELSE\n"
        f"    {s.say(f'step 1: recording NEWLOGPATH {a.to_path}')}\n"
        f"    CALL SYSPROC.ADMIN_CMD({db2_str(command)});\n"
        "  END IF;\n"
        "END",
    )
    s.check(
        f"post-check: SYSIBMADM.DBCFG shows newlogpath (pending) under {a.to_path}, or logpath under it with nothing "
        "else pending",
        "SYSIBM.SYSDUMMY1",
        "post-check: new log path not recorded",
        where=f"NOT {pending} AND NOT ({in_place_sql(a.to_path)})",
        post=True,
    )
    s.window(
        "BEGIN\n"
        f"  {s.say(f'finished: the log is (or moves at the next activation of the database) under {a.to_path}')}\n"
        "END"
    )
