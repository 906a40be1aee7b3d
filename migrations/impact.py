"""What a move costs the applications, before anyone approves it: online (short blocking spans),
an offline copy (downtime, estimated from the size and the copy rate) or a restart.

Read off the neutral plan's action, the same `Move` the script is written from (advice_build
decides online / offline / restart; nothing here decides it again), with the figures the script
writers use (their planning rates, durations.copy_minutes), so that a page and the script can
never tell a DBA two different stories. Plain data in, plain data out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from advisors.quantities import rate as rate_text
from advisors.quantities import size
from migrations.db2_frame import duration_text
from migrations.db2_partition import COPY_MB_S as DB2_COPY_MB_S
from migrations.db2_tablespace import REBALANCE_MB_S
from migrations.durations import copy_minutes, minutes_text
from migrations.plan import (
    AddDataPartition,
    AddPartition,
    Move,
    MoveDataPartition,
    MoveDb2Log,
    MoveFiles,
    MovePartition,
    MoveTablespace,
    MoveTempTablespace,
    Options,
    SetReadOnly,
)
from migrations.tsql_online import operations as online_operations

ImpactKind = Literal["online", "offline", "restart", "no_script"]


@dataclass(frozen=True, slots=True)
class Impact:
    """`kind`: online (the data stays in use), offline (something is unavailable for a while:
    `downtime_minutes` when the plan knows the size), restart (takes effect at the next restart
    or activation) or no_script (no safe script can be written: the move is by hand). `summary`
    is a few words for a list, `detail` the sentences for a page."""

    kind: ImpactKind
    summary: str
    detail: str
    downtime_minutes: int | None = None
    copy_bytes: int | None = None  # what an offline copy copies (the files' sizes the plan knows)
    copy_rate_mb_s: float | None = None  # the rate the downtime estimate assumed

    def to_json(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "summary": self.summary,
            "detail": self.detail,
            "downtime_minutes": self.downtime_minutes,
            "copy_bytes": self.copy_bytes,
            "copy_rate_mb_s": self.copy_rate_mb_s,
        }


def no_script(reason: str) -> Impact:
    """No safe script can be written (the generators' own reason): nobody can say what the move
    costs until it is planned by hand."""
    return Impact("no_script", "no script", f"No script can be written, so this move is by hand: {reason}.")


def impact_of(move: Move, options: Options) -> Impact:
    """The impact of carrying out `move` with the scripts `options` write (its copy rate)."""
    a = move.action
    db = move.target.database
    if isinstance(a, MoveFiles):
        return _files(move, a, options)
    if isinstance(a, MovePartition):
        return Impact(
            "offline",
            "table blocked",
            f"Table {a.schema}.{a.table} is blocked for the whole move: partition {a.partition_number} is "
            f"switched out, rebuilt onto filegroup {a.target_filegroup} and switched back in one transaction, and "
            "every query on the table (any partition) waits meanwhile; the script's header estimates how long "
            "from the partition's size.",
        )
    if isinstance(a, SetReadOnly):
        mark = "READ_ONLY" if a.read_only else "READ_WRITE"
        return Impact(
            "offline",
            "exclusive access",
            f"Marking filegroup {a.filegroup} {mark} needs exclusive access to database {db} for seconds: "
            "the script stops while any other session uses it, so stop the applications first.",
        )
    if isinstance(a, MoveTablespace):
        dms = (
            " It is DMS today: it is converted to automatic storage first, which cannot be undone."
            if a.source is None
            else ""
        )
        return _rebalance(a.tablespace, a.target.name, move.why.size_bytes, dms)
    if isinstance(a, MoveDataPartition):
        if a.route == "tablespace":
            return _rebalance(a.tablespace, a.target.name, move.why.size_bytes, "")
        size = move.why.size_bytes
        return Impact(
            "offline",
            "partition offline",
            f"Partition {a.partition_name or a.partition_id} of {a.schema}.{a.table} is detached, copied into table "
            f"space {a.target_tablespace} and attached back: its rows are invisible from the DETACH until the ATTACH "
            f"and SET INTEGRITY end, {duration_text(size, DB2_COPY_MB_S, 'one logged INSERT ... SELECT')}. The "
            "other partitions stay readable and writable.",
        )
    if isinstance(a, MoveTempTablespace):
        return Impact(
            "online",
            "online",
            f"Online: a new temporary table space {a.new_tablespace} is created on storage group {a.target.name} "
            f"and {a.tablespace} is dropped; new work uses the new one at once, no restart. The DROP waits until no "
            "query uses the old one (the script stops then; run it again later).",
        )
    if isinstance(a, MoveDb2Log):
        return Impact(
            "restart",
            "at reactivation",
            f"Restart: nothing moves now; the new log path takes effect when database {db} is next activated "
            "(every application disconnected, then ACTIVATE DATABASE or the first connection). Until then the log "
            "stays where it is.",
        )
    if isinstance(a, AddPartition | AddDataPartition):
        return Impact(
            "online",
            "online",
            "Online: a new, empty partition is added on the hot tier (a catalog change); nothing is copied.",
        )
    raise TypeError(f"no impact for {type(a).__name__}")


def _files(move: Move, a: MoveFiles, options: Options) -> Impact:
    db, server = move.target.database, move.target.server
    known = sum(f.size_bytes or 0 for f in a.files)
    unknown = sum(1 for f in a.files if f.size_bytes is None)
    if a.mode == "online":
        return Impact(
            "online",
            "online",
            f"Online: new files for filegroup {a.filegroup or move.name} are added on tier {move.to_tier}, the old "
            "ones emptied with DBCC SHRINKFILE EMPTYFILE and removed; database "
            f"{db} stays online. Blocking spans while pages move: each table whose pages move is held by a "
            "schema-modification lock for a moment and its queries wait. How long: "
            f"{online_operations(move, a, 'forward').duration}",
        )
    if a.mode == "restart":
        return Impact(
            "restart",
            "at restart",
            f"Restart: nothing is copied now; tempdb's new file locations take effect at the next restart of the "
            f"SQL Server service on {server}, which disconnects every session of the instance: plan it in a change "
            "window.",
        )
    why = {
        "log": "a log file cannot be emptied and removed online",
        "filegroup": "the filegroup holds the primary data file, which cannot be emptied and removed online",
        "data_file": "the primary data file cannot be emptied and removed online",
    }.get(a.what, "the files cannot be moved online")
    rate = options.copy_rate_mb_s
    files, are = ("file", "is") if len(a.files) == 1 else (f"{len(a.files)} files", "are")
    extra = f" (and {unknown} of a size the plan does not know)" if unknown else ""
    if not known:
        return Impact(
            "offline",
            "offline copy",
            f"Offline copy ({why}): database {db} is offline while its {files} {are} copied by hand; the plan has "
            "no file sizes, so the downtime cannot be estimated (the size divided by the policy's copy rate of "
            f"{rate_text(rate, 'MB/s')}).",
            copy_rate_mb_s=rate,
        )
    minutes = copy_minutes(known, rate)
    return Impact(
        "offline",
        f"offline ≈ {minutes_text(minutes)}",
        f"Offline copy ({why}): database {db} is offline while its {files} ({size(known)}){extra} {are} copied by "
        f"hand: about {minutes_text(minutes)}, an estimate from the size at the policy's copy rate of {rate_text(rate, 'MB/s')}, "
        "plus a minute for the checks and the recovery when it comes back online. Every session of "
        f"{db} is disconnected when it goes offline.",
        minutes,
        known,
        rate,
    )


def _rebalance(ts: str, group: str, size: int | None, note: str) -> Impact:
    return Impact(
        "online",
        "online",
        f"Online: table space {ts} is re-pointed at storage group {group} and stays readable and writable; an "
        f"asynchronous rebalance then moves its extents in the background, "
        f"{duration_text(size, REBALANCE_MB_S, 'rebalance')}, competing with applications for I/O.{note}",
    )
