"""DB2: the active log to another path (NEWLOGPATH through SYSPROC.ADMIN_CMD); DB2 moves it at
the next activation of the database (domain.md §4.9)."""

from __future__ import annotations

from datetime import datetime

from migrations.db2_frame import ROUTINES, Db2Script, start
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
        then=(
            "Then, in a change window: db2 deactivate db <db> (all applications disconnected), db2 activate db <db>.",
        ),
    )
    _log_steps(s, a)
    return s.text()


def _log_steps(s: Db2Script, a: MoveDb2Log) -> None:
    """NEWLOGPATH through ADMIN_CMD; post-check in SYSIBMADM.DBCFG (the pending `newlogpath`, or
    `logpath` once a reactivation has moved the log)."""
    target = db2_str(a.to_path + "%")
    s.check(
        f"the log is under {a.from_path} today, or already set to move to / moved to {a.to_path}",
        "SYSIBM.SYSDUMMY1",
        "log path not as planned: advice out of date",
        where=(
            "NOT EXISTS (SELECT 1 FROM SYSIBMADM.DBCFG WHERE (NAME = 'logpath' AND (VALUE LIKE "
            f"{db2_str(a.from_path + '%')} OR VALUE LIKE {target})) OR (NAME = 'newlogpath' AND VALUE LIKE {target}))"
        ),
    )
    command = f'UPDATE DB CFG USING NEWLOGPATH "{a.to_path}"'
    s.comment(f"step 1: record the new log path {a.to_path} (running it again sets the same value again)")
    s.statement(f"CALL SYSPROC.ADMIN_CMD({db2_str(command)})")
    s.check(
        f"post-check: SYSIBMADM.DBCFG shows newlogpath (pending) or logpath under {a.to_path}",
        "SYSIBM.SYSDUMMY1",
        "post-check: new log path not recorded",
        where=(
            f"NOT EXISTS (SELECT 1 FROM SYSIBMADM.DBCFG WHERE NAME IN ('newlogpath', 'logpath') AND VALUE LIKE {target})"
        ),
    )
    s.statement(
        "BEGIN\n"
        f"  {s.say(f'finished: the log moves to {a.to_path} at the next activation of the database (RESTART NEEDED)')}\n"
        "END"
    )
