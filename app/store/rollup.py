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
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from operator import eq, ge, itemgetter
from typing import Any

import psycopg
from sqlalchemy import (
    ColumnElement,
    CompoundSelect,
    Integer,
    ScalarSelect,
    Select,
    Text,
    and_,
    any_,
    bindparam,
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
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.orm import Session

from advisors.features import NO_EXTRA, Hours, Usage
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


# --- the window read: per object, its hours' usage and their total ---------------------


# the counters spelled out where each hour's dict is built: a dict display is three times as fast
# as dict(zip(COUNTER_COLUMNS, ...)) over a fleet's hundreds of thousands of hours (measured)
_COUNTERS = ("reads", "bytes_read", "read_time_ms", "writes", "bytes_written", "write_time_ms")
if COUNTER_COLUMNS != _COUNTERS:  # pragma: no cover - a new counter must be added below too
    raise RuntimeError(f"rollup._usage_of spells out {_COUNTERS}, the store has {COUNTER_COLUMNS}")

HourUsage = tuple[datetime, Usage]
WindowUsage = tuple[Usage, Sequence[HourUsage]]


def _hour_of(src: Any, at: Any, dialect: str) -> Any:
    """The hour a row belongs to, as the driver returns it (converted once per distinct value by
    _Hours, not once per row): a roll-up's own hour on PostgreSQL, date_trunc of an interval's end;
    on SQLite strftime of either (stored text may differ in its fraction digits). Either way the
    values of one hour are equal and sort as their hours do."""
    if dialect == "sqlite":
        return func.strftime("%Y-%m-%d %H:00:00", at)
    return at if src is HourlyRollup else func.date_trunc("hour", at)


class _Hours(dict[Any, datetime | None]):
    """Aware UTC hours from the driver's values (naive datetimes, or text on SQLite), memoised; None
    for an hour `keep` leaves out."""

    def __init__(self, keep: Callable[[datetime], bool] | None) -> None:
        super().__init__()
        self._keep = keep
        self.drops = keep is not None  # whether any hour can be None

    def __missing__(self, raw: Any) -> datetime | None:
        t = datetime.fromisoformat(raw) if isinstance(raw, str) else raw
        h = t.replace(tzinfo=UTC)
        self[raw] = kept = h if self._keep is None or self._keep(h) else None
        return kept


def window_usage(
    session: Session,
    *,
    since: datetime,
    until: datetime,
    history: list[tuple[datetime, datetime]],
    targets: list[int] | None = None,
    keep: Callable[[datetime], bool] | None = None,
) -> dict[int, WindowUsage]:
    """Per enabled object: its total and its hours' usage in hour order (by interval end), from
    the hourly roll-ups plus the intervals not rolled up yet (ids above the mark, read in the same
    statement, so a roll-up committed meanwhile is neither missed nor counted twice). Hours from
    `since` to `until`, plus the `history` ranges [lo, hi); only the hours `keep` accepts when
    given (the total is theirs), and no entry for an object left with none. Only the objects of
    `targets` when given (one pool's): the roll-ups are then read by their primary key (object,
    hour), never scanned whole."""
    dialect = session.get_bind().dialect.name
    mark = rolled_up_mark(session)
    enabled = (
        select(DbObject.id).join(Target, Target.id == DbObject.target_id).where(Target.enabled.is_(True))
    )
    if targets is not None:
        enabled = enabled.where(Target.id.in_(targets))
    lo, hi, *edges = window_bounds(session, since, until, *(t for r in history for t in r))
    ranges = list(zip(edges[::2], edges[1::2], strict=True))
    members = _members(session, enabled, dialect, targets is not None)

    def where(src: Any, at: Any) -> list[ColumnElement[bool]]:
        window = or_(and_(at >= lo, at <= hi), *(and_(at >= a, at < b) for a, b in ranges))
        w = [window, members(src)]
        return [not_rolled_up(mark), *w] if src is IoInterval else w

    def branch(src: Any, at: Any) -> Select[Any]:
        cols = [getattr(src, c).label(c) for c in ("seconds", *COUNTER_COLUMNS)]
        hour = _hour_of(src, at, dialect).label("hour")
        # the extra counters as text, and none for the many rows without: the driver's JSON parse
        # of "{}" on every row was most of the read (measured)
        extra = case((cast(src.extra, Text) == "{}", None), else_=cast(src.extra, Text)).label("extra")
        return select(src.object_id.label("object_id"), hour, *cols, extra).where(*where(src, at))

    if dialect == "postgresql":
        # JIT-compiling this plan took longer than running it (measured: 1-2 s); and no parallel
        # plan, whose Parallel Append could interleave the branches (an hour's intervals are added
        # before its roll-up, in the statement's order)
        session.execute(text("SET LOCAL jit = off"))
        session.execute(text("SET LOCAL max_parallel_workers_per_gather = 0"))
    # the roll-ups are one row per object and hour already: no GROUP BY and no ORDER BY (their sort
    # was most of the statement's time); the intervals come first, so an hour's intervals are
    # added before its roll-up, and rows are grouped by object here
    stmt = union_all(branch(IoInterval, IoInterval.end_time), branch(HourlyRollup, HourlyRollup.hour))
    rows: Iterable[Any] = (
        _binary_rows(session, stmt) if dialect == "postgresql" else session.execute(stmt).all()
    )
    by_object: dict[int, list[Any]] = defaultdict(list)
    for row in rows:
        by_object[row[0]].append(row)
    hours = _Hours(keep)
    out: dict[int, WindowUsage] = {}
    for oid in list(by_object):
        # each object's rows freed once read, while still in the cache: freed all at the end,
        # scattered in memory as they arrive (hour by hour), they took 0.1 s more (measured)
        w = _usage_of(by_object.pop(oid), hours)
        if w is not None:
            out[oid] = w
    return out


def _members(
    session: Session, enabled: Select[Any], dialect: str, one_pool: bool
) -> Callable[[Any], ColumnElement[bool]]:
    """The condition that keeps a row of the window's objects. One pool's objects on PostgreSQL as
    an array of their ids, read first: the planner then knows how many rows the window holds and
    reads the roll-ups by a bitmap of their primary key, each heap page once (roll-ups are stored
    hour by hour, so an object's hours are each on their own page, shared with other objects'),
    where with the subquery it walked the primary key object by object and visited a page per row
    (measured on bench.evaluate_fleet's 5,000-object pool: the statement 3-4 s -> 0.3-0.4 s in
    EXPLAIN ANALYZE, the server process's CPU for the read 1.3 s -> 0.5 s).
    The ids are read in their own statement: an object added or disabled meanwhile is one the
    caller's own object list does not match anyway, and the roll-up mark is still read in the
    same statement as the rows it filters."""
    if dialect != "postgresql" or not one_pool:
        return lambda src: src.object_id.in_(enabled)
    ids = bindparam("object_ids", list(session.scalars(enabled)), type_=ARRAY(Integer))
    return lambda src: src.object_id == any_(ids)


def _binary_rows(session: Session, stmt: CompoundSelect[Any]) -> Iterator[tuple[Any, ...]]:
    """Every row of the statement as plain tuples, through psycopg's binary protocol, in the
    session's transaction: without the text protocol's parsing and SQLAlchemy's Row objects the
    fetch takes half the CPU (measured: 1.0 s -> 0.55 s for 840,000 rows). Streamed in chunks
    (libpq 17 or later), so the caller groups rows while the server is still sending them (0.3 s
    of a 5 s read, measured) and the whole result is never held twice. The statement's values need
    no conversion (integers, text and a list of ids, which psycopg sends as an array; the window
    bounds are literals: window_bounds)."""
    conn = session.connection()
    compiled = stmt.compile(dialect=conn.dialect, compile_kwargs={"render_postcompile": True})
    raw = conn.connection.driver_connection
    assert raw is not None
    with raw.cursor(binary=True) as cur:
        if psycopg.capabilities.has_stream_chunked():
            yield from cur.stream(str(compiled), compiled.params, binary=True, size=5000)
        else:
            cur.execute(str(compiled), compiled.params)
            yield from cur.fetchall()


_RAW_HOUR = itemgetter(1)
_NO_HOUR = object()  # before an object's first row: unequal to every hour


def _usage_of(rows: list[Any], hours: _Hours) -> WindowUsage | None:
    """One object's rows (object, raw hour, seconds, counters…, extra text) as its total and its
    hours' usage in hour order, as _usage_merged makes them. Most objects have one row an hour
    (their roll-ups, and one interval in the current hour), no extra counters and no hour without
    seconds: their hours are kept by column (advisors.features.Hours) straight from the rows'
    columns, no Usage built an hour; any other object goes through _usage_merged whole."""
    raws = list(map(_RAW_HOUR, rows))
    if any(map(ge, raws, raws[1:])):  # out of hour order (the current hour's intervals come first)
        rows.sort(key=_RAW_HOUR)  # stable: an hour's rows keep the statement's order
        raws.sort()
        if any(map(eq, raws, raws[1:])):  # an hour of several rows (adjacent now): summed
            return _usage_merged(rows, hours)
    _, _, seconds, *columns, extras = zip(*rows, strict=True)
    if (
        any(extras)  # extra counters: merged key by key
        or None in seconds  # Usage has `seconds or 0.0`; the rows' own values in the total
        or 0.0 in seconds  # -0.0 too (equal to 0.0), which `or 0.0` makes 0.0
    ):
        return _usage_merged(rows, hours)
    hs: list[Any] = list(map(hours.__getitem__, raws))
    if hours.drops and None in hs:  # hours `keep` leaves out: the same rows without them
        rows = [row for row, h in zip(rows, hs, strict=True) if h is not None]
        if not rows:
            return None
        _, _, seconds, *columns, extras = zip(*rows, strict=True)
        hs = [h for h in hs if h is not None]
    by_column = Hours.by_column(tuple(hs), seconds, dict(zip(COUNTER_COLUMNS, columns, strict=True)))
    if by_column is None:  # values the columns cannot hold exactly (never from the store's types)
        return _usage_merged(rows, hours)
    return Usage(sum(seconds), _column_sums(columns), {}), by_column


def _usage_merged(rows: list[Any], hours: _Hours) -> WindowUsage | None:
    """_usage_of for any rows (the reference): the rows of one hour summed (a counter is None only
    when it is None in every row), each hour's Usage built once. The total sums the kept hours'
    seconds in hour order and their counters by column."""
    rows.sort(key=_RAW_HOUR)  # stable: an hour's rows keep the statement's order
    by_hour: list[HourUsage] = []
    sums: list[Any] = []  # per kept hour, a row of its summed values (the row itself, unmerged)
    last: Any = _NO_HOUR
    with_extra = False
    for row in rows:
        _, raw, secs, reads, bytes_read, read_time_ms, writes, bytes_written, write_time_ms, text_extra = row
        h = hours[raw]
        if h is None:
            continue
        extra: Mapping[str, int] = NO_EXTRA
        if text_extra:
            extra = json.loads(text_extra)
            with_extra = True
        if raw != last:
            by_hour.append(
                (
                    h,
                    Usage(
                        secs or 0.0,
                        {
                            "reads": reads,
                            "bytes_read": bytes_read,
                            "read_time_ms": read_time_ms,
                            "writes": writes,
                            "bytes_written": bytes_written,
                            "write_time_ms": write_time_ms,
                        },
                        extra,
                    ),
                )
            )
            sums.append(row)
            last = raw
            continue
        # another row of the same hour (intervals not rolled up yet: mostly the current hour)
        b = by_hour[-1][1]
        merged = b.extra
        if extra:  # else the hour keeps its mapping (the shared empty one, when it has none)
            merged = dict(b.extra)
            for k, v in extra.items():
                merged[k] = merged.get(k, 0) + v
        vals = (reads, bytes_read, read_time_ms, writes, bytes_written, write_time_ms)
        counters = {c: _add(b.counters[c], v) for c, v in zip(COUNTER_COLUMNS, vals, strict=True)}
        u = Usage(b.seconds + (secs or 0.0), counters, merged)
        by_hour[-1] = (h, u)
        sums[-1] = (None, raw, u.seconds, *counters.values(), None)
    if not by_hour:
        return None
    return _total(sums, by_hour, with_extra), Hours.of(by_hour) or tuple(by_hour)


def _total(sums: list[Any], by_hour: list[HourUsage], with_extra: bool) -> Usage:
    """The kept hours' total: their columns summed in C (`sums`: a row per hour, in hour order),
    seconds in hour order; a counter is None only when it is None in every hour."""
    _, _, seconds, *columns, _ = zip(*sums, strict=True)
    try:
        secs = sum(seconds)
    except TypeError:  # a None among them (`None in` compares every float: slower when there is none)
        secs = sum(s or 0.0 for s in seconds)
    counters = _column_sums(columns)
    extra: dict[str, int] = {}
    if with_extra:
        for _, u in by_hour:
            for k, v in u.extra.items():
                extra[k] = extra.get(k, 0) + v
    return Usage(secs, counters, extra)


def _column_sums(columns: Iterable[Iterable[int | None]]) -> dict[str, int | None]:
    """Each counter's column summed in C; None only when it is None in every hour."""
    counters: dict[str, int | None] = {}
    for c, col in zip(COUNTER_COLUMNS, columns, strict=True):
        try:
            counters[c] = sum(col)  # type: ignore[arg-type]
        except TypeError:  # a None among them
            known = [v for v in col if v is not None]
            counters[c] = sum(known) if known else None
    return counters
