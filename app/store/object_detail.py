"""The object page's question: one object's I/O over the last days, time-bucketed and by hour of
day, the unit it moves with and that unit's current recommendation.

Reads io_interval alone (raw intervals are kept sample_retention_days, 14 by default), so the
series has the polling interval's resolution rather than the roll-ups' hours.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session

from app.errors import NotFound
from app.store.anchor import aware, hour_of, target_end, window_start
from app.store.dialect import dialect_of, epoch_bucket
from app.store.io_window import NO_IO, SUM_COLUMNS, Metrics, metrics_from, metrics_of, summed, sums, usage
from app.store.models import DbObject, IoInterval, Target
from app.store.placement import tier_of_object, unit_key_of
from app.store.rec_list import RecSummary, current_recs
from app.store.rollup import rolled_up_mark
from policies.model import Policy

MAX_POINTS = 300
NICE_WIDTHS = (60, 120, 300, 600, 900, 1200, 1800, 3600, 7200, 10800, 14400, 21600, 43200, 86400)


@dataclass(frozen=True)
class SeriesPoint:
    t: datetime  # start of the bucket
    seconds: float  # covered time in the bucket
    read_iops: float | None
    write_iops: float | None
    avg_read_ms: float | None
    avg_write_ms: float | None
    avg_read_kb: float | None
    avg_write_kb: float | None


@dataclass(frozen=True)
class UnitMember:
    id: int
    kind: str
    name: str


@dataclass(frozen=True)
class ObjectDetail:
    id: int
    target: str
    target_id: int
    engine: str
    server: str
    database: str
    kind: str
    name: str
    key: str
    size_bytes: int | None
    physical_name: str | None
    storage_group: str | None
    filegroup: str | None
    tablespace: str | None
    table_name: str | None
    partition_number: int | None
    range_low: str | None
    range_high: str | None
    current_tier: str | None
    unit_key: str
    unit_members: list[UnitMember]
    since: datetime
    until: datetime
    bucket_seconds: int
    series: list[SeriesPoint]
    heat_by_hour: list[float | None]  # I/O per GB-hour by UTC hour of day (24 values)
    total: Metrics
    recommendation: RecSummary | None


def bucket_width(span_s: float, max_points: int = MAX_POINTS, interval_s: float = 0.0) -> int:
    """The smallest round bucket width that keeps an epoch-aligned span within max_points buckets
    and is no shorter than the polling interval (a bucket then holds at least one interval)."""
    need = max(span_s / max(max_points - 1, 1), interval_s)
    for w in NICE_WIDTHS:
        if w >= need:
            return w
    return int(math.ceil(need / 86400) * 86400)


def _point(t: datetime, m: Metrics) -> SeriesPoint:
    return SeriesPoint(
        t, m.seconds, m.read_iops, m.write_iops, m.avg_read_ms, m.avg_write_ms, m.avg_read_kb, m.avg_write_kb
    )


def _io(
    session: Session, o: DbObject, since: datetime, until: datetime, max_points: int
) -> tuple[list[SeriesPoint], int, list[float | None], Metrics]:
    """The object's series, bucket width, heat by hour of day and totals over [since, until].

    Totals and heat come from the hourly roll-ups plus the intervals not rolled up yet, as the
    advice reads them (io_window.usage), so the page shows the advice's figures even once the raw
    intervals are past retention. The series keeps the polling interval's resolution while the raw
    intervals cover the window, and falls back to the roll-ups' hours where they do not (an import
    weeks old)."""
    dialect = dialect_of(session)
    mark = rolled_up_mark(session)
    total_row = session.execute(
        usage(dialect, since=since, until=until, object_ids=[o.id], mark=mark)
    ).first()
    total = (
        metrics_of(total_row, o.size_bytes) if total_row is not None else metrics_from(NO_IO, o.size_bytes)
    )
    hourly = sorted(
        ((aware(r.hour), [getattr(r, c) for c in SUM_COLUMNS]) for r in session.execute(
            usage(dialect, since=since, until=until, object_ids=[o.id], by_hour=True, mark=mark))),
        key=lambda x: x[0],
    )  # fmt: skip
    by_hod: dict[int, list[Any]] = {}
    for h, values in hourly:
        by_hod[h.hour] = summed(by_hod.get(h.hour, NO_IO), values)
    heat_by_hour: list[float | None] = [None] * 24
    for hod, values in by_hod.items():
        heat_by_hour[hod] = metrics_from(values, o.size_bytes).heat
    window = (IoInterval.object_id == o.id, IoInterval.end_time >= since, IoInterval.end_time <= until)
    first, last, step = session.execute(
        select(
            func.min(IoInterval.end_time), func.max(IoInterval.end_time), func.avg(IoInterval.seconds)
        ).where(*window)
    ).one()
    if first is not None and (not hourly or hour_of(aware(first)) <= hourly[0][0]):
        span = (last - first).total_seconds()
        width = bucket_width(span, max_points, float(step or 0.0))
        bucket = epoch_bucket(IoInterval.end_time, width, dialect).label("bucket")
        rows = session.execute(select(bucket, *sums()).where(*window).group_by(bucket).order_by(bucket))
        series = [
            _point(datetime.fromtimestamp(int(r.bucket) * width, UTC), metrics_of(r, None)) for r in rows
        ]
        return series, width, heat_by_hour, total
    if not hourly:
        return [], bucket_width(0.0, max_points), heat_by_hour, total
    span = (hourly[-1][0] - hourly[0][0]).total_seconds()
    width = bucket_width(span, max_points, 3600.0)
    buckets: dict[int, list[Any]] = {}
    for h, values in hourly:
        b = int(h.timestamp()) // width
        buckets[b] = summed(buckets.get(b, NO_IO), values)
    series = [
        _point(datetime.fromtimestamp(b * width, UTC), metrics_from(v, None))
        for b, v in sorted(buckets.items())
    ]
    return series, width, heat_by_hour, total


def unit_members(session: Session, o: DbObject, uk: str) -> list[UnitMember]:
    """The other objects of the placement unit `uk` (files of a filegroup, its partitions, ...)."""
    near = []
    if o.filegroup:
        near.append(DbObject.filegroup == o.filegroup)
    if o.tablespace:
        near.append(DbObject.tablespace == o.tablespace)
    if o.kind == "tempdb":
        near.append(DbObject.kind == "tempdb")
    if not near:
        return []
    q = select(
        DbObject.id,
        DbObject.engine,
        DbObject.kind,
        DbObject.database,
        DbObject.name,
        DbObject.key,
        DbObject.filegroup,
        DbObject.tablespace,
    ).where(
        DbObject.target_id == o.target_id, DbObject.database == o.database, DbObject.id != o.id, or_(*near)
    )
    return [
        UnitMember(r.id, r.kind, r.name)
        for r in session.execute(q.order_by(DbObject.kind, DbObject.name))
        if r.key == uk or unit_key_of(r) == uk
    ]


def object_detail(
    *,
    session: Session,
    object_id: int,
    policy: Policy,
    now: datetime,
    days: int = 7,
    max_points: int = MAX_POINTS,
) -> ObjectDetail:
    """One object's metadata, its I/O over the `days` ending at its target's newest sample
    (app/store/anchor.py) averaged into at most `max_points` time buckets, its heat by hour of
    day, and its placement unit's current recommendation."""
    o = session.get(DbObject, object_id)
    if o is None:
        raise NotFound(f"no object #{object_id}")
    target = session.get(Target, o.target_id)
    assert target is not None
    until = target_end(session, o.target_id, now)
    since = window_start(until, 24 * days)
    series, width, heat_by_hour, total = _io(session, o, since, until, max_points)
    uk = unit_key_of(o)
    members = unit_members(session, o, uk)
    tier = tier_of_object(policy, server=o.server, engine=o.engine, physical_name=o.physical_name,
                          storage_group=o.storage_group)  # fmt: skip
    rec = current_recs(session, o.target_id, [uk], full=True).get(uk)
    if tier is None and rec is not None:
        tier = rec.from_tier  # a partition / container: where its unit is
    return ObjectDetail(
        id=o.id,
        target=target.name,
        target_id=target.id,
        engine=o.engine,
        server=o.server,
        database=o.database,
        kind=o.kind,
        name=o.name,
        key=o.key,
        size_bytes=o.size_bytes,
        physical_name=o.physical_name,
        storage_group=o.storage_group,
        filegroup=o.filegroup,
        tablespace=o.tablespace,
        table_name=o.table_name,
        partition_number=o.partition_number,
        range_low=o.range_low,
        range_high=o.range_high,
        current_tier=tier,
        unit_key=uk,
        unit_members=members,
        since=since,
        until=until,
        bucket_seconds=width,
        series=series,
        heat_by_hour=heat_by_hour,
        total=total,
        recommendation=rec,
    )
