"""An object's I/O over a window: summed interval deltas and the rates a DBA reads off them.

Where the I/O comes from: the hourly roll-ups plus the intervals not rolled up yet (ids above the
roll-up's mark, read in the same statement; the mark moves in the same transaction that adds an
interval to its hour, so each interval counts exactly once). Windows start on an hour boundary,
so the last 24 h are the current hour and the 23 before it, and an hour holds the intervals that
ended in it, as in the roll-ups and the advice.

The arithmetic is the advisors' (advisors.deltas.rates, advisors.features.heat_of), so a page
shows the figures the advice was judged on. Objects without file-level counters (partitions, DB2
containers, buffer pools, the instance) have None for every rate: their I/O is already counted in
the file or table space that holds them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from functools import lru_cache
from typing import Any

from sqlalchemy import ColumnElement, Select, func, or_, select, union_all

from advisors.deltas import rates
from advisors.features import ObjectInfo, Usage, heat_of
from app.store.dialect import hour_bucket
from app.store.models import DbObject, HourlyRollup, IoInterval
from app.store.rollup import add_known, not_rolled_up
from connectors.records import CORE_COUNTERS

# Kinds whose capacity and I/O are already counted in another object (partition -> filegroup /
# table space, container -> table space) or that hold no capacity (buffer pool, instance).
NOT_STORAGE = frozenset({"partition", "container", "buffer_pool", "instance"})
SUM_COLUMNS = ("seconds", *CORE_COUNTERS)
NO_IO: tuple[None, ...] = (None,) * len(SUM_COLUMNS)  # summed deltas of no interval at all


def sums() -> list[ColumnElement[Any]]:
    """Summed deltas of a group of raw intervals (SUM of only NULLs stays NULL: counter unknown)."""
    return [func.sum(getattr(IoInterval, c)).label(c) for c in SUM_COLUMNS]


def usage(
    dialect: str,
    *,
    since: datetime,
    until: datetime,
    objects: Sequence[ColumnElement[bool]] = (),
    object_ids: Sequence[int] | Select[Any] | None = None,
    by_hour: bool = False,
    file_io_only: bool = False,
    mark: int | None = None,
) -> Select[Any]:
    """Summed deltas per object (and per hour, when `by_hour`) in [since, until] from the hourly
    roll-ups and the intervals not rolled up yet. `objects` filters on DbObject columns (a join),
    `object_ids` on the ids themselves (an index range per object) or a select of ids (no join per
    row: much cheaper over many rows). `mark`: the roll-up mark read before (rolled_up_mark), so
    the intervals not rolled up are found by a primary-key range."""

    def branch(src: Any, at: Any, window: list[ColumnElement[bool]]) -> Select[Any]:
        cols: list[Any] = [src.object_id.label("object_id")]
        if by_hour:
            cols.append(hour_bucket(at, dialect).label("hour"))
        cols += [getattr(src, c).label(c) for c in SUM_COLUMNS]
        q = select(*cols).where(*window)
        if isinstance(object_ids, Select):
            q = q.where(src.object_id.in_(object_ids))
        elif object_ids is not None:
            q = q.where(src.object_id.in_(list(object_ids)))
        if objects:
            q = q.join(DbObject, DbObject.id == src.object_id).where(*objects)
        if file_io_only:
            q = q.where(or_(src.reads.is_not(None), src.writes.is_not(None)))
        return q

    raw = branch(
        IoInterval,
        IoInterval.end_time,
        [not_rolled_up(mark), IoInterval.end_time >= since, IoInterval.end_time <= until],
    )
    rolled = branch(HourlyRollup, HourlyRollup.hour, [HourlyRollup.hour >= since, HourlyRollup.hour <= until])
    u = union_all(raw, rolled).subquery()
    keys = [u.c.object_id, *([u.c.hour] if by_hour else [])]
    return select(*keys, *[func.sum(u.c[c]).label(c) for c in SUM_COLUMNS]).group_by(*keys)


def summed(a: Sequence[Any], b: Sequence[Any]) -> list[Any]:
    """Two rows of SUM_COLUMNS added, as SQL's SUM adds them: None (unknown) only where both are."""
    return [add_known(x, y) for x, y in zip(a, b, strict=True)]


@dataclass(slots=True)
class Metrics:
    """Rates over summed interval deltas (advisors.deltas.rates) plus heat."""

    seconds: float
    read_iops: float | None
    write_iops: float | None
    avg_read_kb: float | None
    avg_write_kb: float | None
    avg_read_ms: float | None
    avg_write_ms: float | None
    io: float | None  # requests in the window (reads + writes)
    heat: float | None  # I/O per GB per hour

    @property
    def iops(self) -> float | None:
        if self.read_iops is None and self.write_iops is None:
            return None
        return (self.read_iops or 0.0) + (self.write_iops or 0.0)


@lru_cache(maxsize=16384)
def _sized(size_bytes: int | None) -> ObjectInfo:
    """An object of that size, for heat_of (which reads nothing else off it); cached because
    building a 30-field ObjectInfo per row cost more than the rest of a row's metrics."""
    return ObjectInfo(key="", engine="", server="", database="", kind="", name="", size_bytes=size_bytes)


def heat(io: float, size_bytes: int | None, seconds: float) -> float | None:
    """I/O per GB per hour: advisors.features.heat_of of `io` requests (a zero-size object counts
    as 1 MB); None without covered time."""
    if seconds <= 0:
        return None
    return heat_of(_sized(size_bytes), Usage(seconds, {"reads": int(io)}))


def _kb(b: float | None) -> float | None:
    return None if b is None else b / 1024


def metrics_from(values: Sequence[Any], size_bytes: int | None) -> Metrics:
    """Metrics of summed deltas in SUM_COLUMNS order (advisors.deltas.rates); None everywhere when
    there are no file-level counters."""
    seconds, reads, bytes_read, read_ms, writes, bytes_written, write_ms = values
    if type(reads) is Decimal or type(writes) is Decimal:  # PostgreSQL's SUM of a BIGINT
        reads, bytes_read, read_ms, writes, bytes_written, write_ms = (
            None if v is None else int(v) for v in values[1:]
        )
    seconds = float(seconds or 0.0)
    if seconds <= 0 or (reads is None and writes is None):
        return Metrics(seconds, None, None, None, None, None, None, None, None)
    counters = {"reads": reads, "bytes_read": bytes_read, "read_time_ms": read_ms, "writes": writes,
                "bytes_written": bytes_written, "write_time_ms": write_ms}  # fmt: skip
    r = rates(counters, seconds)
    io = float((reads or 0) + (writes or 0))
    return Metrics(
        seconds=seconds,
        read_iops=r.read_iops,
        write_iops=r.write_iops,
        avg_read_kb=_kb(r.avg_read_bytes),
        avg_write_kb=_kb(r.avg_write_bytes),
        avg_read_ms=r.avg_read_ms,
        avg_write_ms=r.avg_write_ms,
        io=io,
        heat=heat(io, size_bytes, seconds),
    )


def heat_of_row(row: Any, size_bytes: int | None) -> float | None:
    """`metrics_of(row, size_bytes).heat` without the other rates: the heat map asks it of every
    hour of its top objects."""
    reads, writes = row.reads, row.writes
    if reads is None and writes is None:
        return None
    return heat(float((reads or 0) + (writes or 0)), size_bytes, float(row.seconds or 0.0))


def metrics_of(row: Any, size_bytes: int | None) -> Metrics:
    """Metrics of a row carrying the SUM_COLUMNS by name."""
    return metrics_from([getattr(row, c) for c in SUM_COLUMNS], size_bytes)
