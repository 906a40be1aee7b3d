"""Hourly roll-ups (incremental, exact) and retention of raw data."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from app.store.models import COUNTER_COLUMNS, HourlyRollup, IoInterval, Sample


def _hour(t: datetime) -> datetime:
    return t.replace(minute=0, second=0, microsecond=0)


def _add(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def roll_up(session: Session, *, batch: int = 50_000) -> int:
    """Add not-yet-rolled intervals into their hour (by interval end) and mark them rolled.

    Each interval is added exactly once: the sums and the marks change in one transaction.
    Returns the number of intervals rolled up.
    """
    done = 0
    while True:
        rows = session.scalars(
            select(IoInterval).where(IoInterval.rolled_up.is_(False)).order_by(IoInterval.id).limit(batch)
        ).all()
        if not rows:
            return done
        sums: dict[tuple[int, datetime], dict[str, Any]] = defaultdict(
            lambda: {"intervals": 0, "seconds": 0.0, "extra": {}, **dict.fromkeys(COUNTER_COLUMNS)}
        )
        for iv in rows:
            acc = sums[(iv.object_id, _hour(iv.end_time))]
            acc["intervals"] += 1
            acc["seconds"] += iv.seconds
            for c in COUNTER_COLUMNS:
                acc[c] = _add(acc[c], getattr(iv, c))
            for k, v in (iv.extra or {}).items():
                acc["extra"][k] = acc["extra"].get(k, 0) + v
        existing = {
            (r.object_id, r.hour): r
            for r in session.scalars(
                select(HourlyRollup).where(
                    HourlyRollup.object_id.in_({k[0] for k in sums}),
                    HourlyRollup.hour.in_({k[1] for k in sums}),
                )
            )
        }
        for (object_id, hour), acc in sums.items():
            row = existing.get((object_id, hour))
            if row is None:
                session.add(HourlyRollup(object_id=object_id, hour=hour, **acc))
                continue
            row.intervals += acc["intervals"]
            row.seconds += acc["seconds"]
            for c in COUNTER_COLUMNS:
                setattr(row, c, _add(getattr(row, c), acc[c]))
            merged = dict(row.extra or {})
            for k, v in acc["extra"].items():
                merged[k] = merged.get(k, 0) + v
            row.extra = merged
        ids = [iv.id for iv in rows]
        for i in range(0, len(ids), 5000):
            session.execute(
                update(IoInterval).where(IoInterval.id.in_(ids[i : i + 5000])).values(rolled_up=True)
            )
        session.flush()
        done += len(rows)


@dataclass(frozen=True)
class RetentionResult:
    samples: int
    intervals: int
    rollups: int


def apply_retention(
    session: Session, *, now: datetime, sample_days: int, rollup_days: int
) -> RetentionResult:
    """Drop raw samples/intervals older than sample_days and roll-ups older than rollup_days.

    Intervals not yet rolled up are kept whatever their age, so nothing leaves the store uncounted.
    """
    raw_cut = now - timedelta(days=sample_days)
    s = session.execute(delete(Sample).where(Sample.sample_time < raw_cut))
    i = session.execute(
        delete(IoInterval).where(IoInterval.end_time < raw_cut, IoInterval.rolled_up.is_(True))
    )
    r = session.execute(delete(HourlyRollup).where(HourlyRollup.hour < now - timedelta(days=rollup_days)))
    return RetentionResult(s.rowcount or 0, i.rowcount or 0, r.rowcount or 0)  # type: ignore[attr-defined]
