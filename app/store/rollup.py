"""Hourly roll-ups (incremental, exact) and retention of raw data.

Progress is a high-water mark, not a flag on every interval: `rollup_progress.last_interval_id` is
the id of the last interval added into its hour. Interval ids only grow (a PostgreSQL sequence;
AUTOINCREMENT on SQLite), so the intervals not rolled up yet are exactly those with a higher id —
including intervals stored late for old hours (an import of older files): they get new, higher
ids and are added by the next roll-up. The roll-up writes only hourly_rollup and one progress row;
io_interval rows are never updated.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import (
    ColumnElement,
    ScalarSelect,
    and_,
    delete,
    func,
    select,
    text,
    tuple_,
    update,
)
from sqlalchemy.orm import Session

from app.store.models import (
    COUNTER_COLUMNS,
    HourlyRollup,
    IoInterval,
    RollupProgress,
    Sample,
)

HOURLY = "hourly"


def rolled_up_through() -> ScalarSelect[Any]:
    """The id of the last interval added into the hourly roll-ups (0 before the first roll-up),
    as a scalar subquery: read in the same statement (and snapshot) as the data it filters."""
    return (
        select(func.coalesce(func.max(RollupProgress.last_interval_id), 0))
        .where(RollupProgress.name == HOURLY)
        .scalar_subquery()
    )


def rolled_up_mark(session: Session) -> int:
    """The mark now (for not_rolled_up's `known`)."""
    return int(session.scalar(select(rolled_up_through())) or 0)


def not_rolled_up(known: int | None = None) -> ColumnElement[bool]:
    """Intervals not in the hourly roll-ups yet (a range of the primary key).

    `known`, a mark read earlier (rolled_up_mark), lets PostgreSQL plan that range from the
    primary key: the subquery's value is unknown when the statement is planned, and over a day of
    raw intervals it would rather scan them all by time. The mark in the statement's own snapshot
    still decides (marks only grow, so `known` is never above it)."""
    current = IoInterval.id > rolled_up_through()
    return current if known is None else and_(IoInterval.id > known, current)


def is_rolled_up() -> ColumnElement[bool]:
    return IoInterval.id <= rolled_up_through()


def _hour(t: datetime) -> datetime:
    return t.replace(minute=0, second=0, microsecond=0)


def add_known(a: int | None, b: int | None) -> int | None:
    """A sum of two counters where None is unknown, not zero (SUM over only NULLs stays NULL)."""
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def _claim_progress(session: Session, now: datetime) -> int:
    """Lock the progress row (so two roll-ups never add the same intervals) and return it.

    The first statement writes, so on SQLite the transaction holds the write lock from here on.
    On PostgreSQL, io_interval is then locked in SHARE mode for the rest of the transaction: it
    waits for the transactions writing intervals to finish and holds off new ones, so every id up
    to the highest one visible is final — an id taken by a transaction still in flight would
    otherwise commit below the new mark and never be rolled up. Ingest waits for the roll-up
    (seconds every 10 minutes), never the other way round.
    """
    claimed = session.execute(
        update(RollupProgress).where(RollupProgress.name == HOURLY).values(updated_at=now)
    )
    if not claimed.rowcount:  # type: ignore[attr-defined]
        session.add(RollupProgress(name=HOURLY, last_interval_id=0, updated_at=now))
        session.flush()
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text("LOCK TABLE io_interval IN SHARE MODE"))
    mark = session.scalar(select(RollupProgress.last_interval_id).where(RollupProgress.name == HOURLY))
    return int(mark or 0)


def _existing(session: Session, keys: list[tuple[int, datetime]]) -> dict[tuple[int, datetime], HourlyRollup]:
    found: dict[tuple[int, datetime], HourlyRollup] = {}
    for i in range(0, len(keys), 2000):
        part = keys[i : i + 2000]
        ids = {k[0] for k in part}
        hours = {k[1] for k in part}
        cond: list[ColumnElement[bool]]
        if len(hours) == 1:  # the usual case: one hour of new intervals
            cond = [HourlyRollup.object_id.in_(ids), HourlyRollup.hour == next(iter(hours))]
        else:
            cond = [tuple_(HourlyRollup.object_id, HourlyRollup.hour).in_(part)]
        for r in session.scalars(select(HourlyRollup).where(*cond)):
            found[(r.object_id, r.hour)] = r
    return found


def roll_up(session: Session, *, batch: int = 50_000) -> int:
    """Add the intervals stored since the last roll-up into their hour (by interval end) and move
    the mark past them, in the caller's transaction: the sums and the mark change together, so
    each interval is added exactly once. Returns the number of intervals rolled up."""
    mark = _claim_progress(session, datetime.now(UTC))
    cols = [getattr(IoInterval, c) for c in COUNTER_COLUMNS]
    done = 0
    while True:
        rows = session.execute(
            select(
                IoInterval.id,
                IoInterval.object_id,
                IoInterval.end_time,
                IoInterval.seconds,
                IoInterval.extra,
                *cols,
            )
            .where(IoInterval.id > mark)
            .order_by(IoInterval.id)
            .limit(batch)
        ).all()
        if not rows:
            break
        sums: dict[tuple[int, datetime], dict[str, Any]] = defaultdict(
            lambda: {"intervals": 0, "seconds": 0.0, "extra": {}, **dict.fromkeys(COUNTER_COLUMNS)}
        )
        for iv in rows:
            acc = sums[(iv.object_id, _hour(iv.end_time))]
            acc["intervals"] += 1
            acc["seconds"] += iv.seconds
            for c in COUNTER_COLUMNS:
                acc[c] = add_known(acc[c], getattr(iv, c))
            for k, v in (iv.extra or {}).items():
                acc["extra"][k] = acc["extra"].get(k, 0) + v
        existing = _existing(session, list(sums))
        for (object_id, hour), acc in sums.items():
            row = existing.get((object_id, hour))
            if row is None:
                session.add(HourlyRollup(object_id=object_id, hour=hour, **acc))
                continue
            row.intervals += acc["intervals"]
            row.seconds += acc["seconds"]
            for c in COUNTER_COLUMNS:
                setattr(row, c, add_known(getattr(row, c), acc[c]))
            merged = dict(row.extra or {})
            for k, v in acc["extra"].items():
                merged[k] = merged.get(k, 0) + v
            row.extra = merged
        mark = rows[-1].id
        session.flush()
        done += len(rows)
    if done:
        session.execute(
            update(RollupProgress).where(RollupProgress.name == HOURLY).values(last_interval_id=mark)
        )
    return done


@dataclass(frozen=True)
class RetentionResult:
    samples: int
    intervals: int
    rollups: int


def apply_retention(
    session: Session, *, now: datetime, sample_days: int, rollup_days: int
) -> RetentionResult:
    """Drop raw samples/intervals older than sample_days and roll-ups older than rollup_days.

    Intervals not yet rolled up (above the roll-up's mark) are kept whatever their age, so nothing
    leaves the store uncounted.
    """
    raw_cut = now - timedelta(days=sample_days)
    s = session.execute(delete(Sample).where(Sample.sample_time < raw_cut))
    i = session.execute(delete(IoInterval).where(IoInterval.end_time < raw_cut, is_rolled_up()))
    r = session.execute(delete(HourlyRollup).where(HourlyRollup.hour < now - timedelta(days=rollup_days)))
    return RetentionResult(s.rowcount or 0, i.rowcount or 0, r.rowcount or 0)  # type: ignore[attr-defined]
