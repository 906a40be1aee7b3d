"""The heat map's question: which objects carry the I/O, hour by hour, how skewed the I/O is over
the capacity, and what the pending moves are predicted to save.

Reads the hourly roll-ups plus the intervals not rolled up yet over the last week (io_totals, the
one expensive read: every object's every hour, so callers may keep it a few minutes).
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, Select, func, or_, select, union_all
from sqlalchemy.orm import Session

from advisors.features import GB
from app.store.dialect import dialect_of, window_bounds
from app.store.io_window import NOT_STORAGE, heat, heat_of_row, usage, window_start
from app.store.lookup import target_named
from app.store.models import DbObject, HourlyRollup, IoInterval, Target
from app.store.rollup import not_rolled_up, rolled_up_mark
from app.store.savings import Savings, predicted_savings
from policies.model import Policy


@dataclass(frozen=True)
class HeatRow:
    id: int
    target: str
    database: str
    kind: str
    name: str
    size_bytes: int | None
    io: float
    heat: float | None  # over the whole window
    cells: list[float | None]  # heat per hour column (None: no data that hour)


@dataclass(frozen=True)
class SkewPoint:
    capacity_share: float  # 0..1, cumulative, hottest objects first
    io_share: float  # 0..1, cumulative


@dataclass(frozen=True)
class HeatMap:
    target: str | None
    target_id: int | None
    since: datetime
    until: datetime
    hours: list[datetime]
    rows: list[HeatRow]
    objects: int  # objects with file-level I/O in the window
    skew: list[SkewPoint]
    knee: SkewPoint | None  # farthest above the diagonal
    capacity_for_80: float | None  # capacity share holding 80 % of the I/O
    ranked_at: datetime  # when the ranking and the skew were read (the cells are read at `until`)
    savings: Savings
    targets: list[str] = field(default_factory=list)


def _skew(items: Sequence[tuple[float, float]], max_points: int = 200) -> list[SkewPoint]:
    """Cumulative (capacity, I/O) shares with objects sorted by heat density, hottest first."""
    items = sorted(items, key=lambda x: x[1] / x[0] if x[0] else math.inf, reverse=True)
    cap = sum(c for c, _ in items)
    io = sum(i for _, i in items)
    if not items or cap <= 0 or io <= 0:
        return []
    points = [SkewPoint(0.0, 0.0)]
    c_acc = i_acc = 0.0
    for c, i in items:
        c_acc, i_acc = c_acc + c, i_acc + i
        points.append(SkewPoint(c_acc / cap, i_acc / io))
    if len(points) > max_points:
        step = (len(points) - 1) / (max_points - 1)
        points = [points[round(k * step)] for k in range(max_points)]
    return points


def _share_for(points: Sequence[SkewPoint], io_share: float) -> float | None:
    for a, b in itertools.pairwise(points):
        if b.io_share >= io_share:
            if b.io_share == a.io_share:
                return b.capacity_share
            f = (io_share - a.io_share) / (b.io_share - a.io_share)
            return a.capacity_share + f * (b.capacity_share - a.capacity_share)
    return None


def _aware(t: datetime | None) -> datetime | None:
    if t is None:
        return None
    return t if t.tzinfo is not None else t.replace(tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class IoTotal:
    id: int
    size_bytes: int | None
    io: float
    seconds: float


@dataclass(frozen=True)
class IoTotals:
    """Every storage object's I/O over a window: what the heat map ranks and the skew curve sums.
    The one expensive read of the heat map (all objects, all hours), so callers may keep it a while."""

    target_id: int | None
    since: datetime
    until: datetime
    items: list[IoTotal]


def io_totals(*, session: Session, target: str | None, now: datetime, days: int = 7) -> IoTotals:
    since = window_start(now, 24 * days)
    t = target_named(session, target) if target else None
    # Only requests and seconds, summed per object before the join with the objects (the week is
    # every object's every hour: a join per row and five unused sums doubled the time).
    mine = None if t is None else select(DbObject.id).where(DbObject.target_id == t.id)
    lo, hi = window_bounds(session, since, now)

    def branch(src: Any, at: Any, *window: ColumnElement[bool]) -> Select[Any]:
        io = func.coalesce(src.reads, 0) + func.coalesce(src.writes, 0)
        q = select(src.object_id.label("object_id"), io.label("io"), src.seconds.label("seconds")).where(
            at >= lo, at <= hi, or_(src.reads.is_not(None), src.writes.is_not(None)), *window
        )
        return q if mine is None else q.where(src.object_id.in_(mine))

    mark = rolled_up_mark(session)
    u = union_all(
        branch(IoInterval, IoInterval.end_time, not_rolled_up(mark)),
        branch(HourlyRollup, HourlyRollup.hour),
    ).subquery()
    per_object = (
        select(u.c.object_id, func.sum(u.c.io).label("io"), func.sum(u.c.seconds).label("seconds"))
        .group_by(u.c.object_id)
        .subquery()
    )
    q = (
        select(DbObject.id, DbObject.size_bytes, per_object.c.io, per_object.c.seconds)
        .join(per_object, per_object.c.object_id == DbObject.id)
        .where(DbObject.kind.not_in(NOT_STORAGE))
    )
    items = [IoTotal(i, size, float(v), float(secs or 0.0)) for i, size, v, secs in session.execute(q)]
    return IoTotals(t.id if t is not None else None, since, now, items)


def heat_map(
    *,
    session: Session,
    target: str | None,
    policy: Policy,
    now: datetime,
    days: int = 7,
    top: int = 40,
    totals: IoTotals | None = None,
) -> HeatMap:
    """The `top` objects by I/O over the last `days`, hour by hour; the skew curve of every object
    with file-level I/O; and the predicted effect of the open and approved recommendations.
    `totals` (from io_totals, possibly a few minutes old) saves re-reading every object's week."""
    dialect = dialect_of(session)
    t = target_named(session, target) if target else None
    if totals is None:
        totals = io_totals(session=session, target=target, now=now, days=days)
    since = totals.since
    items = totals.items
    skew = _skew([(max((r.size_bytes or 0) / GB, 1 / 1024), r.io) for r in items])
    knee = max(skew, key=lambda p: p.io_share - p.capacity_share) if skew else None
    chosen = sorted(items, key=lambda r: (-r.io, r.id))[:top]
    ids = [r.id for r in chosen]
    meta = {
        r.id: r
        for r in session.execute(
            select(DbObject.id, DbObject.database, DbObject.kind, DbObject.name, Target.name.label("target"))
            .join(Target, Target.id == DbObject.target_id)
            .where(DbObject.id.in_(ids))
        )
    }
    cells: dict[int, dict[datetime, float | None]] = defaultdict(dict)
    hours_seen: set[datetime] = set()
    if ids:
        grid = usage(
            dialect, since=since, until=now, object_ids=ids, by_hour=True, mark=rolled_up_mark(session)
        )
        size = {r.id: r.size_bytes for r in chosen}
        for row in session.execute(grid):
            h = _aware(row.hour)
            assert h is not None
            hours_seen.add(h)
            cells[row.object_id][h] = heat_of_row(row, size[row.object_id])
    hours: list[datetime] = []
    if hours_seen:
        h, end = min(hours_seen), max(hours_seen)
        while h <= end:
            hours.append(h)
            h += timedelta(hours=1)
    rows = [
        HeatRow(
            id=r.id,
            target=meta[r.id].target,
            database=meta[r.id].database,
            kind=meta[r.id].kind,
            name=meta[r.id].name,
            size_bytes=r.size_bytes,
            io=r.io,
            heat=heat(r.io, r.size_bytes, r.seconds),
            cells=[cells[r.id].get(h) for h in hours],
        )
        for r in chosen
        if r.id in meta  # (an object dropped since the totals were read)
    ]
    return HeatMap(
        target=t.name if t is not None else None,
        target_id=t.id if t is not None else None,
        since=since,
        until=now,
        hours=hours,
        rows=rows,
        objects=len(items),
        ranked_at=totals.until,
        skew=skew,
        knee=knee,
        capacity_for_80=_share_for(skew, 0.8),
        savings=predicted_savings(session, t.id if t is not None else None, policy),
        targets=list(session.scalars(select(Target.name).order_by(Target.name))),
    )
