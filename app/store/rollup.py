"""Hourly roll-ups (incremental, exact) and retention of raw data.

Progress is a high-water mark, not a flag on every interval: `rollup_progress.last_interval_id` is
the id of the last interval added into its hour. Interval ids only grow (a PostgreSQL sequence;
AUTOINCREMENT on SQLite), so the intervals not rolled up yet are exactly those with a higher id —
including intervals stored late for old hours (an import of older files): they get new, higher
ids and are added by the next roll-up. The roll-up writes only hourly_rollup and one progress row;
io_interval rows are never updated.

The scheduled roll-up works in short transactions (`roll_up_in_batches`): each adds at most
ROLLUP_BATCH intervals and moves the mark past exactly those, in the same transaction, so each
interval is still added once, and a login or a poll waits for one batch at most, never for the
whole backlog a large import left (on SQLite one writer holds the database at a time: 23-35 s
for one transaction after a large import, issue #33). On SQLite a batch is read and added up
before the write lock is taken, which is then held only to write the sums and the mark.
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
from sqlalchemy.engine import Row
from sqlalchemy.orm import Session

from app.store.db import Store
from app.store.models import (
    COUNTER_COLUMNS,
    HourlyRollup,
    IoInterval,
    RollupProgress,
    Sample,
)

HOURLY = "hourly"
# intervals per transaction of the scheduled roll-up: about 0.2 s of work on SQLite, of which the
# write lock is held for the writes only (bench/sqlite_load.py measures what a login waits)
ROLLUP_BATCH = 10_000


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


def _read_batch(session: Session, mark: int, limit: int) -> list[Row[Any]]:
    """The next `limit` intervals above `mark`, in id order (one statement: one snapshot)."""
    cols = [getattr(IoInterval, c) for c in COUNTER_COLUMNS]
    return list(
        session.execute(
            select(IoInterval.id, IoInterval.object_id, IoInterval.end_time, IoInterval.seconds, IoInterval.extra, *cols)
            .where(IoInterval.id > mark)
            .order_by(IoInterval.id)
            .limit(limit)
        ).all()
    )  # fmt: skip


Sums = dict[tuple[int, datetime], dict[str, Any]]


def _sums(rows: list[Row[Any]]) -> Sums:
    """The intervals added up per object and hour of their end."""
    sums: Sums = defaultdict(
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
    return sums


def _add(session: Session, sums: Sums) -> None:
    """Add the sums into their hourly rows (new rows for new hours), in the caller's transaction."""
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
    session.flush()


def _move_mark(session: Session, mark: int) -> None:
    session.execute(update(RollupProgress).where(RollupProgress.name == HOURLY).values(last_interval_id=mark))


def roll_up(session: Session, *, batch: int = 50_000) -> int:
    """Add the intervals stored since the last roll-up into their hour (by interval end) and move
    the mark past them, in the caller's transaction: the sums and the mark change together, so
    each interval is added exactly once. Returns the number of intervals rolled up. One
    transaction for the whole backlog: the scheduler uses roll_up_in_batches."""
    mark = _claim_progress(session, datetime.now(UTC))
    done = 0
    while rows := _read_batch(session, mark, batch):
        _add(session, _sums(rows))
        mark = rows[-1].id
        done += len(rows)
    if done:
        _move_mark(session, mark)
    return done


def roll_up_batch(store: Store, *, limit: int = ROLLUP_BATCH) -> int | None:
    """One short transaction: at most `limit` intervals added and the mark moved past exactly them.
    Returns how many, or None when another roll-up moved the mark meanwhile (nothing written:
    read again). PostgreSQL: as roll_up (progress row locked, io_interval in SHARE mode, then
    read). SQLite: read and added up first, outside the write lock (a WAL reader waits for
    nobody, and every interval a writer still has in flight gets an id above those read), then
    the write lock is taken (BEGIN IMMEDIATE) to check the mark and write."""
    now = datetime.now(UTC)
    if store.is_postgres:
        with store.session() as s:
            mark = _claim_progress(s, now)
            rows = _read_batch(s, mark, limit)
            if rows:
                _add(s, _sums(rows))
                _move_mark(s, rows[-1].id)
            return len(rows)
    with store.session() as s:  # reads only: SQLite takes no lock for them
        mark = rolled_up_mark(s)
        rows = _read_batch(s, mark, limit)
    if not rows:
        return 0
    sums = _sums(rows)
    with store.write_session() as s:
        if _claim_progress(s, now) != mark:
            return None  # nothing added; the claim only stamped the progress row
        _add(s, sums)
        _move_mark(s, rows[-1].id)
    return len(rows)


def roll_up_in_batches(store: Store, *, batch: int = ROLLUP_BATCH) -> int:
    """The whole backlog, `batch` intervals per transaction (roll_up_batch); a failure keeps what
    the batches before it committed, and the next run goes on from their mark."""
    done = 0
    while True:
        n = roll_up_batch(store, limit=batch)
        if n is None:
            continue  # another roll-up ran: read from its mark
        done += n
        if n < batch:
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
