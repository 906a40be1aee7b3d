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
from app.store.dialect import dialect_of, epoch_bucket, hour_of_day
from app.store.io_window import Metrics, heat_of_row, metrics_of, sums, window_start
from app.store.models import DbObject, IoInterval, Target
from app.store.placement import tier_of_object, unit_key_of
from app.store.rec_list import RecSummary, current_recs
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


def _point(t: datetime, row: Any) -> SeriesPoint:
    m = metrics_of(row, None)
    return SeriesPoint(
        t, m.seconds, m.read_iops, m.write_iops, m.avg_read_ms, m.avg_write_ms, m.avg_read_kb, m.avg_write_kb
    )


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
    """One object's metadata, its I/O over the last `days` averaged into at most `max_points`
    time buckets, its heat by hour of day, and its placement unit's current recommendation."""
    o = session.get(DbObject, object_id)
    if o is None:
        raise NotFound(f"no object #{object_id}")
    target = session.get(Target, o.target_id)
    assert target is not None
    dialect = dialect_of(session)
    since, until = window_start(now, 24 * days), now
    window = (IoInterval.object_id == o.id, IoInterval.end_time >= since, IoInterval.end_time <= until)
    first, last, step = session.execute(
        select(
            func.min(IoInterval.end_time), func.max(IoInterval.end_time), func.avg(IoInterval.seconds)
        ).where(*window)
    ).one()
    span = (last - first).total_seconds() if first is not None and last is not None else 0.0
    width = bucket_width(span, max_points, float(step or 0.0))
    bucket = epoch_bucket(IoInterval.end_time, width, dialect).label("bucket")
    series = [
        _point(datetime.fromtimestamp(int(row.bucket) * width, UTC), row)
        for row in session.execute(select(bucket, *sums()).where(*window).group_by(bucket).order_by(bucket))
    ]
    hod = hour_of_day(IoInterval.end_time, dialect).label("hod")
    heat_by_hour: list[float | None] = [None] * 24
    for row in session.execute(select(hod, *sums()).where(*window).group_by(hod)):
        heat_by_hour[int(row.hod)] = heat_of_row(row, o.size_bytes)
    total = metrics_of(session.execute(select(*sums()).where(*window)).one(), o.size_bytes)
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
