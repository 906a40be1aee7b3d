"""Snapshots into the store: objects upserted, raw samples kept, interval deltas computed.

Delta rules live in advisors/deltas.py; this module only feeds it the previous stored sample of
each series, so series survive service restarts.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Table, func, insert, select
from sqlalchemy.orm import Session

from advisors.deltas import CounterPoint, Outcome, interval_between
from app.store.models import COUNTER_COLUMNS, DbObject, IoInterval, Sample, Target
from connectors.records import ObjectRef, Snapshot

_LOCATION_FIELDS = (
    "name",
    "size_bytes",
    "logical_name",
    "physical_name",
    "file_id",
    "filegroup",
    "storage_group",
    "tablespace",
    "table_name",
    "partition_number",
    "partition_scheme",
    "partition_function",
    "range_low",
    "range_high",
    "range_right",
    "low_inclusive",
    "high_inclusive",
    "rows",
)


@dataclass
class IngestResult:
    snapshots: int = 0
    samples: int = 0
    intervals: int = 0
    duplicates: int = 0
    out_of_order: int = 0
    new_series: int = 0
    notes: list[str] = field(default_factory=list)

    def add(self, other: IngestResult) -> None:
        self.snapshots += other.snapshots
        self.samples += other.samples
        self.intervals += other.intervals
        self.duplicates += other.duplicates
        self.out_of_order += other.out_of_order
        self.new_series += other.new_series
        self.notes.extend(other.notes)


def _point(row: Sample) -> CounterPoint:
    return CounterPoint(
        sample_time=row.sample_time,
        instance_start=row.instance_start,
        counters={c: getattr(row, c) for c in COUNTER_COLUMNS},
        extra=dict(row.extra or {}),
    )


class SeriesCache:
    """Objects and the latest sample per object of one target, loaded once per ingest."""

    def __init__(self, session: Session, target: Target) -> None:
        self.session = session
        self.target = target
        self.objects: dict[str, DbObject] = {
            o.key: o for o in session.scalars(select(DbObject).where(DbObject.target_id == target.id))
        }
        self.latest: dict[int, CounterPoint] = {}
        ids = [o.id for o in self.objects.values()]
        if ids:
            newest = (
                select(Sample.object_id, func.max(Sample.sample_time).label("t"))
                .where(Sample.object_id.in_(ids))
                .group_by(Sample.object_id)
                .subquery()
            )
            rows = session.scalars(
                select(Sample).join(
                    newest, (Sample.object_id == newest.c.object_id) & (Sample.sample_time == newest.c.t)
                )
            )
            self.latest = {r.object_id: _point(r) for r in rows}

    def object_for(self, ref: ObjectRef, seen: datetime) -> DbObject:
        obj = self.objects.get(ref.key)
        location = {f: getattr(ref, f) for f in _LOCATION_FIELDS}
        if obj is None:
            obj = DbObject(
                target_id=self.target.id,
                engine=str(ref.engine),
                server=ref.server,
                database=ref.database,
                kind=str(ref.kind),
                key=ref.key,
                first_seen=seen,
                last_seen=seen,
                **location,
            )
            self.session.add(obj)
            self.session.flush()
            self.objects[ref.key] = obj
            return obj
        if seen >= obj.last_seen:
            # the newest sample describes where the object lives now (a move shows up here)
            for name, value in location.items():
                if value is not None and getattr(obj, name) != value:
                    setattr(obj, name, value)
            obj.server, obj.kind = ref.server, str(ref.kind)
            obj.last_seen = seen
        return obj


def ingest_snapshot(cache: SeriesCache, snapshot: Snapshot) -> IngestResult:
    """Store one snapshot. Duplicates are ignored; restarts and resets start a new series."""
    result = IngestResult(snapshots=1)
    samples: list[dict[str, Any]] = []
    intervals: list[dict[str, Any]] = []
    for item in snapshot.samples:
        obj = cache.object_for(item.ref, snapshot.sample_time)
        point = CounterPoint(
            sample_time=snapshot.sample_time,
            instance_start=snapshot.instance_start,
            counters={c: item.counters.get(c) for c in COUNTER_COLUMNS},
            extra=dict(item.extra),
        )
        judged = interval_between(cache.latest.get(obj.id), point)
        if judged.outcome is Outcome.DUPLICATE:
            result.duplicates += 1
            continue
        if judged.outcome is Outcome.OUT_OF_ORDER:
            # older than the series' newest sample: a re-import of a stored sample is a duplicate
            stored = cache.session.scalar(
                select(Sample.id).where(
                    Sample.object_id == obj.id, Sample.sample_time == snapshot.sample_time
                )
            )
            if stored is not None:
                result.duplicates += 1
            else:
                result.out_of_order += 1
            continue
        if judged.outcome in (Outcome.RESTART, Outcome.RESET):
            result.new_series += 1
            if judged.outcome is Outcome.RESET:
                result.notes.append(f"{item.ref.key}: counters reset ({judged.detail})")
        samples.append(
            {
                "object_id": obj.id,
                "sample_time": snapshot.sample_time,
                "instance_start": snapshot.instance_start,
                "size_bytes": item.ref.size_bytes,
                "extra": dict(item.extra),
                **point.counters,
            }
        )
        if judged.interval is not None:
            iv = judged.interval
            intervals.append(
                {
                    "object_id": obj.id,
                    "start_time": iv.start,
                    "end_time": iv.end,
                    "seconds": iv.seconds,
                    "extra": iv.extra,
                    "rolled_up": False,
                    **iv.counters,
                }
            )
        cache.latest[obj.id] = point
    if samples:
        cache.session.execute(insert(cast(Table, Sample.__table__)), samples)
    if intervals:
        cache.session.execute(insert(cast(Table, IoInterval.__table__)), intervals)
    result.samples, result.intervals = len(samples), len(intervals)
    return result


def ingest_snapshots(session: Session, target: Target, snapshots: Iterable[Snapshot]) -> IngestResult:
    """Store snapshots of one target in time order, in the caller's transaction."""
    cache = SeriesCache(session, target)
    total = IngestResult()
    for snap in sorted(snapshots, key=lambda s: s.sample_time):
        total.add(ingest_snapshot(cache, snap))
    return total
