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
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, Select, func, or_, select, union_all
from sqlalchemy.orm import Session

from advisors.features import GB
from app.store.anchor import Window, aware, window_start
from app.store.anchor import anchors as anchor_of
from app.store.dialect import dialect_of, window_bounds
from app.store.io_window import NOT_STORAGE, heat, heat_of_row, usage
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
    cells: list[float | None]  # heat per hour of HeatMap.hours (None: no data that hour)
    window: int = 0  # its target's window: an index in HeatMap.windows


@dataclass(frozen=True)
class SkewPoint:
    capacity_share: float  # 0..1, cumulative, hottest objects first
    io_share: float  # 0..1, cumulative


@dataclass(frozen=True)
class HeatWindow:
    """The hours of the targets whose windows start at the same hour: one grid on the page. A
    fleet of polled targets is one window; each collection imported weeks after it ended adds one."""

    since: datetime
    until: datetime
    hours: list[datetime]
    targets: list[str]
    object_ids: list[int]
    data_end: datetime | None  # the newest sample of its targets
    old: bool  # some of its targets' data is over a day old (app/store/anchor.OLD_AFTER)


@dataclass(frozen=True)
class HeatMap:
    target: str | None
    target_id: int | None
    since: datetime
    until: datetime
    hours: list[datetime]  # every window's hours, in order
    rows: list[HeatRow]
    objects: int  # objects with file-level I/O in the window
    skew: list[SkewPoint]
    knee: SkewPoint | None  # farthest above the diagonal
    capacity_for_80: float | None  # capacity share holding 80 % of the I/O
    ranked_at: datetime  # when the ranking and the skew were read (the cells at every call)
    savings: Savings
    targets: list[str] = field(default_factory=list)
    windows: list[HeatWindow] = field(default_factory=list)


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


@dataclass(frozen=True, slots=True)
class IoTotal:
    id: int
    size_bytes: int | None
    io: float
    seconds: float


@dataclass(frozen=True)
class IoTotals:
    """Every storage object's I/O over its target's window: what the heat map ranks and the skew
    curve sums. The one expensive read of the heat map (all objects, all hours), so callers may
    keep it a while. Each target is read over the days ending at its newest sample
    (app/store/anchor.py): `windows` groups the targets whose windows start at the same hour."""

    target_id: int | None
    since: datetime
    until: datetime
    items: list[IoTotal]
    read_at: datetime
    windows: list[Window] = field(default_factory=list)
    window_of: dict[int, int] = field(default_factory=dict)  # object id -> index in windows


def io_totals(*, session: Session, target: str | None, now: datetime, days: int = 7) -> IoTotals:
    t = target_named(session, target) if target else None
    groups = anchor_of(session, now, None if t is None else [t.id], enabled_only=False).groups(24 * days)
    mark = rolled_up_mark(session)
    items: list[IoTotal] = []
    window_of: dict[int, int] = {}
    for i, g in enumerate(groups):
        # one window over the whole fleet is read without a list of targets
        tids = None if t is None and len(groups) == 1 else list(g.target_ids)
        for item in _totals(session, g.since, g.until, tids, mark):
            items.append(item)
            window_of[item.id] = i
    since = min((g.since for g in groups), default=window_start(now, 24 * days))
    until = max((g.until for g in groups), default=now)
    return IoTotals(t.id if t is not None else None, since, until, items, now, groups, window_of)


def _totals(
    session: Session, since: datetime, until: datetime, tids: list[int] | None, mark: int
) -> list[IoTotal]:
    # Only requests and seconds, summed per object before the join with the objects (the week is
    # every object's every hour: a join per row and five unused sums doubled the time).
    mine = None if tids is None else select(DbObject.id).where(DbObject.target_id.in_(tids))
    lo, hi = window_bounds(session, since, until)

    def branch(src: Any, at: Any, *window: ColumnElement[bool]) -> Select[Any]:
        io = func.coalesce(src.reads, 0) + func.coalesce(src.writes, 0)
        q = select(src.object_id.label("object_id"), io.label("io"), src.seconds.label("seconds")).where(
            at >= lo, at <= hi, or_(src.reads.is_not(None), src.writes.is_not(None)), *window
        )
        return q if mine is None else q.where(src.object_id.in_(mine))

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
    return [IoTotal(i, size, float(v), float(secs or 0.0)) for i, size, v, secs in session.execute(q)]


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
    """The `top` objects by I/O over their targets' windows (the `days` ending at each target's
    newest sample), hour by hour; the skew curve of every object with file-level I/O; and the
    predicted effect of the open and approved recommendations. `totals` (from io_totals, possibly a
    few minutes old) saves re-reading every object's week; the cells are read at every call."""
    dialect = dialect_of(session)
    t = target_named(session, target) if target else None
    if totals is None:
        totals = io_totals(session=session, target=target, now=now, days=days)
    items = totals.items
    skew = _skew([(max((r.size_bytes or 0) / GB, 1 / 1024), r.io) for r in items])
    knee = max(skew, key=lambda p: p.io_share - p.capacity_share) if skew else None
    chosen = sorted(items, key=lambda r: (-r.io, r.id))[:top]
    meta = {
        r.id: r
        for r in session.execute(
            select(DbObject.id, DbObject.target_id, DbObject.database, DbObject.kind, DbObject.name,
                   Target.name.label("target"))
            .join(Target, Target.id == DbObject.target_id)
            .where(DbObject.id.in_([r.id for r in chosen]))
        )
    }  # fmt: skip
    chosen = [r for r in chosen if r.id in meta]  # (an object dropped since the totals were read)
    fresh = anchor_of(session, now, {meta[r.id].target_id for r in chosen}, enabled_only=False)
    cells: dict[int, dict[datetime, float | None]] = defaultdict(dict)
    windows: list[HeatWindow] = []
    mark = rolled_up_mark(session)
    size = {r.id: r.size_bytes for r in chosen}
    for i, g in enumerate(totals.windows):
        ids = [r.id for r in chosen if totals.window_of.get(r.id) == i]
        if not ids:
            continue
        tids = sorted({meta[oid].target_id for oid in ids})
        until = max(fresh.end(tid) for tid in tids)
        hours_seen: set[datetime] = set()
        for row in session.execute(
            usage(dialect, since=g.since, until=until, object_ids=ids, by_hour=True, mark=mark)
        ):
            h = aware(row.hour)
            hours_seen.add(h)
            cells[row.object_id][h] = heat_of_row(row, size[row.object_id])
        hours = _hour_range(hours_seen)
        names = sorted({meta[oid].target for oid in ids})
        newest = {fresh.newest[tid] for tid in tids if tid in fresh.newest}
        windows.append(HeatWindow(g.since, until, hours, names, ids, max(newest, default=None),
                                  any(tid in fresh.old() for tid in tids)))  # fmt: skip
    hours = sorted({h for w in windows for h in w.hours})
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
            window=next(i for i, w in enumerate(windows) if r.id in w.object_ids),
        )
        for r in chosen
    ]
    return HeatMap(
        target=t.name if t is not None else None,
        target_id=t.id if t is not None else None,
        since=min((w.since for w in windows), default=totals.since),
        until=max((w.until for w in windows), default=totals.until),
        hours=hours,
        rows=rows,
        objects=len(items),
        ranked_at=totals.read_at,
        skew=skew,
        knee=knee,
        capacity_for_80=_share_for(skew, 0.8),
        savings=predicted_savings(session, t.id if t is not None else None, policy),
        targets=list(session.scalars(select(Target.name).order_by(Target.name))),
        windows=windows,
    )


def _hour_range(seen: set[datetime]) -> list[datetime]:
    """Every hour from the first seen to the last (an hour without data is a gap in the grid)."""
    hours: list[datetime] = []
    if seen:
        h, end = min(seen), max(seen)
        while h <= end:
            hours.append(h)
            h += timedelta(hours=1)
    return hours
