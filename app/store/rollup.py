"""Hourly roll-ups (incremental, exact) and retention of raw data.

Progress is a high-water mark, not a flag on every interval: `rollup_progress.last_interval_id` is
the id of the last interval added into its hour. Interval ids only grow (a PostgreSQL sequence;
AUTOINCREMENT on SQLite), so the intervals not rolled up yet are exactly those with a higher id —
including intervals stored late for old hours (an import of older files): they get new, higher
ids and are added by the next roll-up. The roll-up writes only hourly_rollup and one progress row;
io_interval rows are never updated.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import (
    ColumnElement,
    ScalarSelect,
    Select,
    Text,
    and_,
    case,
    cast,
    delete,
    func,
    or_,
    select,
    text,
    tuple_,
    union_all,
    update,
)
from sqlalchemy.orm import Session

from app.store.dialect import window_bounds
from app.store.models import (
    COUNTER_COLUMNS,
    DbObject,
    HourlyRollup,
    IoInterval,
    RollupProgress,
    Sample,
    Target,
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


def _add(a: int | None, b: int | None) -> int | None:
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
                acc[c] = _add(acc[c], getattr(iv, c))
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
                setattr(row, c, _add(getattr(row, c), acc[c]))
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


# --- the window read: the roll-ups summed per object and hour ---------------------------


Bucket = tuple[float, dict[str, int | None], dict[str, int]]


def _hour_of(src: Any, at: Any, dialect: str) -> Any:
    """The hour a row belongs to, as the driver returns it (converted once per distinct value by
    _Hours, not once per row): a roll-up's own hour on PostgreSQL, date_trunc of an interval's end;
    on SQLite strftime of either (stored text may differ in its fraction digits)."""
    if dialect == "sqlite":
        return func.strftime("%Y-%m-%d %H:00:00", at)
    return at if src is HourlyRollup else func.date_trunc("hour", at)


class _Hours(dict[Any, datetime]):
    """Aware UTC hours from the driver's values (naive datetimes, or text on SQLite), memoised."""

    def __missing__(self, raw: Any) -> datetime:
        t = datetime.fromisoformat(raw) if isinstance(raw, str) else raw
        self[raw] = h = t.replace(tzinfo=UTC)
        return h


def bucket_sums(
    session: Session,
    *,
    since: datetime,
    until: datetime,
    history: list[tuple[datetime, datetime]],
    targets: list[int] | None = None,
) -> dict[int, dict[datetime, Bucket]]:
    """Per enabled object and hour (by interval end): the hourly roll-ups plus the intervals not
    rolled up yet (ids above the mark, read in the same statement, so a roll-up committed meanwhile
    is neither missed nor counted twice). Hours from `since` to `until`, plus the `history` ranges
    [lo, hi). Only the objects of `targets` when given (one pool's): the roll-ups are then read
    by their primary key (object, hour), never scanned whole."""
    dialect = session.get_bind().dialect.name
    mark = rolled_up_mark(session)
    enabled = (
        select(DbObject.id).join(Target, Target.id == DbObject.target_id).where(Target.enabled.is_(True))
    )
    if targets is not None:
        enabled = enabled.where(Target.id.in_(targets))
    lo, hi, *edges = window_bounds(session, since, until, *(t for r in history for t in r))
    ranges = list(zip(edges[::2], edges[1::2], strict=True))

    def where(src: Any, at: Any) -> list[ColumnElement[bool]]:
        window = or_(and_(at >= lo, at <= hi), *(and_(at >= a, at < b) for a, b in ranges))
        w = [window, src.object_id.in_(enabled)]
        return [not_rolled_up(mark), *w] if src is IoInterval else w

    def branch(src: Any, at: Any) -> Select[Any]:
        cols = [getattr(src, c).label(c) for c in ("seconds", *COUNTER_COLUMNS)]
        hour = _hour_of(src, at, dialect).label("hour")
        # the extra counters as text, and none for the many rows without: the driver's JSON parse
        # of "{}" on every row was most of the read (measured)
        extra = case((cast(src.extra, Text) == "{}", None), else_=cast(src.extra, Text)).label("extra")
        return select(src.object_id.label("object_id"), hour, *cols, extra).where(*where(src, at))

    if dialect == "postgresql":  # JIT-compiling this plan took longer than running it (measured: 1-2 s)
        session.execute(text("SET LOCAL jit = off"))
    hours = _Hours()
    out: dict[int, dict[datetime, Bucket]] = defaultdict(dict)
    # the roll-ups are one row per object and hour already: no GROUP BY (its sort was most of the
    # statement's time); an hour that intervals not rolled up yet add to is summed here
    stmt = union_all(branch(IoInterval, IoInterval.end_time), branch(HourlyRollup, HourlyRollup.hour))
    for oid, raw, secs, *vals, text_extra in session.execute(stmt).all():  # fetchall, not row by row
        extra: dict[str, int] = json.loads(text_extra) if text_extra else {}
        by_hour = out[oid]
        h = hours[raw]
        b = by_hour.get(h)
        if b is None:
            by_hour[h] = (secs or 0.0, dict(zip(COUNTER_COLUMNS, vals, strict=True)), extra)
            continue
        merged = dict(b[2])
        for k, v in extra.items():
            merged[k] = merged.get(k, 0) + v
        counters = {c: _add(b[1][c], v) for c, v in zip(COUNTER_COLUMNS, vals, strict=True)}
        by_hour[h] = (b[0] + (secs or 0.0), counters, merged)
    return out


def total_of(buckets: list[Bucket]) -> Bucket:
    """The sum of hourly buckets (a counter is None only when it is None in every bucket)."""
    counters: dict[str, int | None] = {}
    for c in COUNTER_COLUMNS:
        known = [b[1][c] for b in buckets if b[1][c] is not None]
        counters[c] = sum(known) if known else None  # type: ignore[arg-type]
    extra: dict[str, int] = {}
    for b in buckets:
        for k, v in b[2].items():
            extra[k] = extra.get(k, 0) + v
    return sum(b[0] for b in buckets), counters, extra
