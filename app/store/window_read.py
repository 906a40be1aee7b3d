"""The advice's window read: per enabled object, its hours' usage and their total, from the hourly
roll-ups plus the intervals not rolled up yet (app/store/rollup.py keeps both).

A pool's window is every object's every hour (840,000 rows for a 5,000-object pool over a week).
The rows go from the driver into arrays a chunk at a time and are grouped, sorted and summed in
numpy, so Python works once per object, not once per object-hour; each object's hours stay by
column (advisors.features.Hours). _usage_merged, row by row, is the reference the columns are
held to (tests/store/test_window_read_paths.py), and still builds the few windows the columns do
not hold (extra counters, values no int64 or float64 holds).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import astuple, dataclass, replace
from datetime import UTC, datetime
from itertools import islice
from operator import itemgetter
from typing import Any

import numpy as np
import numpy.typing as npt
import psycopg
from sqlalchemy import (
    ColumnElement,
    CompoundSelect,
    Integer,
    Select,
    Text,
    and_,
    any_,
    bindparam,
    case,
    cast,
    func,
    or_,
    select,
    text,
    union_all,
)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.orm import Session

from advisors.features import NO_EXTRA, Hours, Usage
from app.store.dialect import window_bounds
from app.store.models import COUNTER_COLUMNS, DbObject, HourlyRollup, IoInterval, Target
from app.store.rollup import add_known, not_rolled_up, rolled_up_mark

# the counters spelled out where each hour's dict is built: a dict display is three times as fast
# as dict(zip(COUNTER_COLUMNS, ...)) over a fleet's hundreds of thousands of hours (measured)
_COUNTERS = ("reads", "bytes_read", "read_time_ms", "writes", "bytes_written", "write_time_ms")
if COUNTER_COLUMNS != _COUNTERS:  # pragma: no cover - a new counter must be added below too
    raise RuntimeError(f"window_read._usage_merged spells out {_COUNTERS}, the store has {COUNTER_COLUMNS}")

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
    return windows_by_column(rows, _Hours(keep))


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


# --- rows to windows by column -------------------------------------------------------------------

_CHUNK = 5000  # rows turned into arrays at a time (bounds the Python objects alive at once)
_I64 = np.dtype(np.int64)
_F64 = np.dtype(np.float64)
_FLOAT_OR_NONE = frozenset((float, type(None)))
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


class _HourKeys(dict[Any, int]):
    """A driver's raw hour value as a number, memoised, in the order first seen; `ranked` then
    orders the values as _usage_merged does (by the raw values themselves, each distinct value its
    own hour), and gives each rank its raw value and its hour (_Hours: None when `keep` leaves it
    out)."""

    def __missing__(self, raw: Any) -> int:
        self[raw] = n = len(self)
        return n

    def ranked(self, hours: _Hours) -> tuple[IntArray, list[Any], list[datetime | None]]:
        """Each number's rank, and per rank its raw value and its hour."""
        raws = sorted(self)
        rank = np.empty(len(raws), np.int64)
        rank[[self[r] for r in raws]] = np.arange(len(raws))
        return rank, raws, [hours[r] for r in raws]


def _exact(values: Sequence[Any], dtype: np.dtype[Any]) -> tuple[npt.NDArray[Any], BoolArray | None] | None:
    """A column as an array of `dtype` (0 where None) and its None mask (None when it has none);
    None when a value is neither None nor held exactly (another type, too large). numpy makes
    float64 of ints mixed with floats: a float column's types are checked (an int column with a
    float in it is float64, and refused)."""
    if dtype == _F64 and not set(map(type, values)) <= _FLOAT_OR_NONE:
        return None
    try:
        arr = np.array(values)
        if arr.dtype == dtype:
            return arr, None
        if arr.dtype != object:
            return None
        mask = np.array([v is None for v in values], dtype=np.bool_)
        filled = np.array([0 if v is None else v for v in values])
        # the values besides None must make `dtype` themselves (all None: int zeros, for any dtype)
        if not mask.any() or (filled.dtype != dtype and not (mask.all() and filled.dtype == _I64)):
            return None
        return filled.astype(dtype), mask
    except (OverflowError, TypeError, ValueError):
        return None


@dataclass(frozen=True, slots=True)
class _Rows:
    """Rows of the read by column: each row's place in the statement, object, hour key, seconds
    (0.0 where None), six counters (0 where None) and the None masks (seconds' first)."""

    seq: IntArray
    oid: IntArray
    key: IntArray
    secs: npt.NDArray[np.float64]
    counters: IntArray  # (6, rows)
    nulls: BoolArray  # (7, rows)

    def __getitem__(self, at: Any) -> _Rows:
        return _Rows(
            self.seq[at], self.oid[at], self.key[at], self.secs[at], self.counters[:, at], self.nulls[:, at]
        )

    @staticmethod
    def joined(parts: Sequence[_Rows]) -> _Rows:
        if not parts:
            empty = np.zeros(0, np.int64)
            return _Rows(
                empty, empty, empty, np.zeros(0), np.zeros((6, 0), np.int64), np.zeros((7, 0), np.bool_)
            )
        return _Rows(*(np.concatenate(column, axis=-1) for column in zip(*map(astuple, parts), strict=True)))


class _Columns:
    """The read's rows as arrays, chunk by chunk, each row with its place in the statement (`seq`);
    rows of a chunk the arrays cannot hold exactly are kept as they are (`odd`)."""

    def __init__(self) -> None:
        self.keys = _HourKeys()
        self.parts: list[_Rows] = []
        self.odd: list[tuple[int, Sequence[Any]]] = []
        self.extra: dict[int, str] = {}  # seq -> the extra counters' text, for the rows with some
        self.rows = 0

    def add(self, batch: list[Sequence[Any]]) -> None:
        seq0, n = self.rows, len(batch)
        self.rows += n
        oid, raw, secs, *counters, extra = zip(*batch, strict=True)
        ids, seconds = _exact(oid, _I64), _exact(secs, _F64)
        values = [_exact(c, _I64) for c in counters]
        if ids is None or ids[1] is not None or seconds is None or None in values:
            self.odd.extend(zip(range(seq0, seq0 + n), batch, strict=True))
            return
        if extra.count(None) != n:
            self.extra.update((seq0 + i, x) for i, x in enumerate(extra) if x)
        nulls = [np.zeros(n, np.bool_) if mask is None else mask for _, mask in (seconds, *values)]  # type: ignore[misc]
        self.parts.append(
            _Rows(
                np.arange(seq0, seq0 + n, dtype=np.int64),
                ids[0],
                np.fromiter(map(self.keys.__getitem__, raw), dtype=np.int64, count=n),
                seconds[0],
                np.array([v[0] for v in values]),  # type: ignore[index]
                np.array(nulls),
            )
        )


def windows_by_column(rows: Iterable[Sequence[Any]], hours: _Hours) -> dict[int, WindowUsage]:
    """Every object's window from the read's rows (object, raw hour, seconds, six counters, extra
    counters' text) in the statement's order, equal to what _usage_merged makes of each object's
    rows: an hour's rows summed in the statement's order (a counter None only when it is None in
    every row, seconds `or 0.0`), hours `keep` leaves out dropped, no entry for an object left
    with none. Objects with extra counters, or with a row the arrays cannot hold exactly, are
    built by _usage_merged itself."""
    cols = _Columns()
    it = iter(rows)
    while batch := list(islice(it, _CHUNK)):
        cols.add(batch)
    read = _Rows.joined(cols.parts)
    cols.parts.clear()
    rank, raws, when = cols.keys.ranked(hours)
    read = replace(read, key=rank[read.key])
    # by _usage_merged: objects with extra counters or odd rows, and those whose sums might not
    # fit an int64 (from the store, none: its counters are bigint deltas)
    by_merged = np.isin(read.seq, np.fromiter(cols.extra, np.int64, len(cols.extra)))
    odd = {row[0] for _, row in cols.odd}
    if odd:
        by_merged |= np.isin(
            read.oid, np.array([o for o in odd if type(o) is int and -(2**63) <= o < 2**63], np.int64)
        )
    by_merged |= _may_overflow(read)
    by_merged = np.isin(read.oid, read.oid[by_merged])  # every row of those objects
    out = _merged_windows(cols, hours, raws, read[by_merged])
    read = read[~by_merged]
    if hours.drops and read.key.size:
        read = read[np.array([h is not None for h in when], dtype=np.bool_)[read.key]]
    out.update(_column_windows(when, read))
    return out


def _may_overflow(read: _Rows) -> BoolArray:
    """The rows of objects some of whose sums an int64 might not hold (their largest counter times
    their rows); the whole read is checked first, objects one by one only when it might."""
    magnitude = np.maximum(read.counters.max(axis=0, initial=0), -read.counters.min(axis=0, initial=0))
    if int(magnitude.max(initial=0)) * read.oid.size < 2**63:
        return np.zeros(read.oid.size, np.bool_)
    ids, at, rows = np.unique(read.oid, return_inverse=True, return_counts=True)
    largest = np.zeros(ids.size, np.int64)
    np.maximum.at(largest, at, magnitude)
    risky = [int(m) * int(n) >= 2**63 for m, n in zip(largest.tolist(), rows.tolist(), strict=True)]
    return np.array(risky, np.bool_)[at]


def _column_windows(when: list[datetime | None], read: _Rows) -> dict[int, WindowUsage]:
    """The windows of these objects' rows, summed by column: per hour, then per object."""
    if not read.oid.size:
        return {}
    # by object, hour, then the statement's order
    read = read[np.lexsort((read.seq, read.key, read.oid))]
    oid, key, counters, n = read.oid, read.key, read.counters, read.oid.size
    # each row's seconds as its hour's Usage has them (`secs or 0.0`: None and -0.0 are 0.0)
    secs = np.where(read.nulls[0] | (read.secs == 0.0), 0.0, read.secs)
    unknown = read.nulls[1:]
    new_hour = np.ones(n, np.bool_)
    new_hour[1:] = (oid[1:] != oid[:-1]) | (key[1:] != key[:-1])
    starts = np.flatnonzero(new_hour)
    if starts.size < n:  # hours of several rows (the current hour's intervals): summed
        sizes = np.diff(starts, append=n)
        summed = secs[starts]
        for h in np.flatnonzero(sizes > 1).tolist():
            a = int(starts[h])
            acc = 0.0
            for v in secs[a : a + int(sizes[h])].tolist():  # in the statement's order, as _usage_merged
                acc += v
            summed[h] = acc
        secs = summed
        counters = np.add.reduceat(np.where(unknown, 0, counters), starts, axis=1)
        unknown = np.add.reduceat(~unknown, starts, axis=1) == 0
        oid, key = oid[starts], key[starts]
    else:
        counters = np.where(unknown, 0, counters)
    first = np.flatnonzero(np.r_[True, oid[1:] != oid[:-1]])
    last = np.r_[first[1:], oid.size]
    totals = np.add.reduceat(counters, first, axis=1).T.tolist()
    known = (np.add.reduceat(~unknown, first, axis=1) > 0).T.tolist()
    some_unknown = np.logical_or.reduceat(unknown, first, axis=1).T.tolist()
    times_of: dict[bytes, tuple[datetime, ...]] = {}  # objects with the same hours share them
    out: dict[int, WindowUsage] = {}
    for i, (a, b) in enumerate(zip(first.tolist(), last.tolist(), strict=True)):
        hour_keys = key[a:b]
        packed = hour_keys.tobytes()
        times = times_of.get(packed)
        if times is None:
            times = times_of[packed] = tuple(when[k] for k in hour_keys.tolist())
        seconds = secs[a:b]
        total = Usage(
            sum(seconds.tolist()),
            {c: v if k else None for c, v, k in zip(COUNTER_COLUMNS, totals[i], known[i], strict=True)},
            {},
        )
        by_hour = Hours(
            times,
            seconds,
            {c: counters[j, a:b] for j, c in enumerate(COUNTER_COLUMNS)},
            {c: unknown[j, a:b] for j, c in enumerate(COUNTER_COLUMNS) if some_unknown[i][j]},
        )
        out[int(oid[a])] = (total, by_hour)
    return out


def _merged_windows(cols: _Columns, hours: _Hours, raws: list[Any], read: _Rows) -> dict[int, WindowUsage]:
    """The windows of these objects by _usage_merged, from their rows as the statement gave them."""
    by_object: dict[int, list[tuple[int, Sequence[Any]]]] = {}
    values = zip(
        read.seq.tolist(),
        read.oid.tolist(),
        read.key.tolist(),
        read.secs.tolist(),
        read.nulls[0].tolist(),
        read.counters.T.tolist(),
        read.nulls[1:].T.tolist(),
        strict=True,
    )
    for s, o, k, sec, no_sec, cs, ns in values:
        row: Sequence[Any] = (o, raws[k], None if no_sec else sec,
               *(None if n else c for c, n in zip(cs, ns, strict=True)), cols.extra.get(s))  # fmt: skip
        by_object.setdefault(o, []).append((s, row))
    for s, row in cols.odd:
        by_object.setdefault(row[0], []).append((s, row))
    out: dict[int, WindowUsage] = {}
    for o, rows in by_object.items():
        rows.sort(key=itemgetter(0))  # the statement's order
        w = _usage_merged([r for _, r in rows], hours)
        if w is not None:
            out[o] = w
    return out


_RAW_HOUR = itemgetter(1)
_NO_HOUR = object()  # before an object's first row: unequal to every hour


def _usage_merged(rows: list[Any], hours: _Hours) -> WindowUsage | None:
    """One object's window from its rows, row by row (the reference windows_by_column is held to):
    the rows of one hour summed (a counter is None only when it is None in every row), each hour's
    Usage built once. The total sums the kept hours'
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
        counters = {c: add_known(b.counters[c], v) for c, v in zip(COUNTER_COLUMNS, vals, strict=True)}
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
