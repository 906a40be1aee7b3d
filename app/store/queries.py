"""Read queries for the object pages (target, object, heat map): one question per function.

Every function takes keyword-only arguments (`session` first) and returns plain dataclasses.
Sums are computed in SQL (grouped by object, by hour or by time bucket); the policy's tier of a
location and the ordering of a page are applied in Python over one row per object.

Where the I/O comes from: the target page (24 h) and the heat map (7 days) read the hourly roll-ups
plus the intervals not rolled up yet (ids above the roll-up's mark, read in the same statement;
the mark moves in the same transaction that adds an interval to its hour, so each interval counts
exactly once); the object page reads io_interval
alone (raw intervals are kept sample_retention_days, 14 by default). Windows start on an hour
boundary, so the last 24 h are the current hour and the 23 before it, and an hour holds the
intervals that ended in it, as in the roll-ups and the advice.

Objects without file-level counters (partitions, DB2 containers, buffer pools, the instance) have
None for every rate: their I/O is already counted in the file or table space that holds them.
"""

from __future__ import annotations

import itertools
import math
import threading
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from functools import lru_cache
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Integer,
    Select,
    case,
    cast,
    func,
    literal_column,
    or_,
    select,
    type_coerce,
    union_all,
)
from sqlalchemy.orm import Session

from advisors.advise import unit_key as advisor_unit_key
from advisors.features import GB, ObjectInfo
from app.store.models import DbObject, HourlyRollup, IoInterval, Recommendation, Target, UTCDateTime
from app.store.rollup import not_rolled_up, rolled_up_mark
from policies.model import Policy

# Kinds whose capacity and I/O are already counted in another object (partition -> filegroup /
# table space, container -> table space) or that hold no capacity (buffer pool, instance).
NOT_STORAGE = frozenset({"partition", "container", "buffer_pool", "instance"})
# Stored recommendations that are still an answer (superseded / withdrawn ones are history).
CURRENT = ("open", "approved", "deferred", "rejected", "executed")
SAVING = ("open", "approved")
PAGE_SIZE = 50
MAX_POINTS = 300


class NotFound(LookupError):
    pass


# --- dialect helpers: the one place where SQLite and PostgreSQL differ ---------------------------


def hour_bucket(col: Any, dialect: str) -> ColumnElement[datetime]:
    """The hour an instant falls in (UTC), as an aware datetime: strftime on SQLite, date_trunc
    on PostgreSQL."""
    if dialect == "sqlite":
        return type_coerce(func.strftime("%Y-%m-%d %H:00:00", col), UTCDateTime())
    return type_coerce(func.date_trunc("hour", col), UTCDateTime())


def hour_of_day(col: Any, dialect: str) -> ColumnElement[int]:
    if dialect == "sqlite":
        return cast(func.strftime("%H", col), Integer)
    return cast(func.extract("hour", col), Integer)


def epoch_bucket(col: Any, seconds: int, dialect: str) -> ColumnElement[int]:
    """floor(unix time / seconds): buckets of any width aligned to the Unix epoch."""
    if dialect == "sqlite":
        return cast(cast(func.strftime("%s", col), Integer) / seconds, Integer)
    return cast(func.floor(func.extract("epoch", col) / seconds), Integer)


def _dialect(session: Session) -> str:
    return session.get_bind().dialect.name


# --- shared pieces -------------------------------------------------------------------------------


SUM_COLUMNS = ("seconds", "reads", "bytes_read", "read_time_ms", "writes", "bytes_written", "write_time_ms")


def window_start(now: datetime, hours: int) -> datetime:
    """The start of the last `hours` hours: the current hour and the hours - 1 before it."""
    return now.replace(minute=0, second=0, microsecond=0) - timedelta(hours=hours - 1)


def _sums() -> list[ColumnElement[Any]]:
    """Summed deltas of a group of intervals (SUM of only NULLs stays NULL: counter unknown)."""
    return [func.sum(getattr(IoInterval, c)).label(c) for c in SUM_COLUMNS]


def usage(
    dialect: str,
    *,
    since: datetime,
    until: datetime,
    objects: Sequence[ColumnElement[bool]] = (),
    object_ids: Sequence[int] | Select[Any] | None = None,
    by_hour: bool = False,
    file_io_only: bool = False,
    mark: int | None = None,
) -> Select[Any]:
    """Summed deltas per object (and per hour, when `by_hour`) in [since, until] from the hourly
    roll-ups and the intervals not rolled up yet. `objects` filters on DbObject columns (a join),
    `object_ids` on the ids themselves (an index range per object) or a select of ids (no join per
    row: much cheaper over many rows). `mark`: the roll-up mark read before (rolled_up_mark), so
    the intervals not rolled up are found by a primary-key range."""

    def branch(src: Any, at: Any, window: list[ColumnElement[bool]]) -> Select[Any]:
        cols: list[Any] = [src.object_id.label("object_id")]
        if by_hour:
            cols.append(hour_bucket(at, dialect).label("hour"))
        cols += [getattr(src, c).label(c) for c in SUM_COLUMNS]
        q = select(*cols).where(*window)
        if isinstance(object_ids, Select):
            q = q.where(src.object_id.in_(object_ids))
        elif object_ids is not None:
            q = q.where(src.object_id.in_(list(object_ids)))
        if objects:
            q = q.join(DbObject, DbObject.id == src.object_id).where(*objects)
        if file_io_only:
            q = q.where(or_(src.reads.is_not(None), src.writes.is_not(None)))
        return q

    raw = branch(
        IoInterval,
        IoInterval.end_time,
        [not_rolled_up(mark), IoInterval.end_time >= since, IoInterval.end_time <= until],
    )
    rolled = branch(HourlyRollup, HourlyRollup.hour, [HourlyRollup.hour >= since, HourlyRollup.hour <= until])
    u = union_all(raw, rolled).subquery()
    keys = [u.c.object_id, *([u.c.hour] if by_hour else [])]
    return select(*keys, *[func.sum(u.c[c]).label(c) for c in SUM_COLUMNS]).group_by(*keys)


@dataclass(slots=True)
class Metrics:
    """Rates over summed interval deltas (advisors.deltas.rates) plus heat."""

    seconds: float
    read_iops: float | None
    write_iops: float | None
    avg_read_kb: float | None
    avg_write_kb: float | None
    avg_read_ms: float | None
    avg_write_ms: float | None
    io: float | None  # requests in the window (reads + writes)
    heat: float | None  # I/O per GB per hour

    @property
    def iops(self) -> float | None:
        if self.read_iops is None and self.write_iops is None:
            return None
        return (self.read_iops or 0.0) + (self.write_iops or 0.0)


def heat(io: float, size_bytes: int | None, seconds: float) -> float | None:
    """I/O per GB per hour, as advisors.features.heat_of (a zero-size object counts as 1 MB)."""
    if seconds <= 0:
        return None
    return io / max((size_bytes or 0) / GB, 1 / 1024) / (seconds / 3600)


def _per(num: Any, den: Any) -> float | None:
    return None if num is None or not den else num / den


def metrics_from(sums: Sequence[Any], size_bytes: int | None) -> Metrics:
    """Metrics of summed deltas in SUM_COLUMNS order (the arithmetic of advisors.deltas.rates);
    None everywhere when there are no file-level counters."""
    seconds, reads, bytes_read, read_ms, writes, bytes_written, write_ms = sums
    if type(reads) is Decimal or type(writes) is Decimal:  # PostgreSQL's SUM of a BIGINT
        reads, bytes_read, read_ms, writes, bytes_written, write_ms = (
            None if v is None else int(v) for v in sums[1:]
        )
    seconds = float(seconds or 0.0)
    if seconds <= 0 or (reads is None and writes is None):
        return Metrics(seconds, None, None, None, None, None, None, None, None)
    io = float((reads or 0) + (writes or 0))
    read_b, write_b = _per(bytes_read, reads), _per(bytes_written, writes)
    return Metrics(
        seconds=seconds,
        read_iops=_per(reads, seconds),
        write_iops=_per(writes, seconds),
        avg_read_kb=None if read_b is None else read_b / 1024,
        avg_write_kb=None if write_b is None else write_b / 1024,
        avg_read_ms=_per(read_ms, reads),
        avg_write_ms=_per(write_ms, writes),
        io=io,
        heat=heat(io, size_bytes, seconds),
    )


def metrics_of(row: Any, size_bytes: int | None) -> Metrics:
    """Metrics of a row carrying the SUM_COLUMNS by name."""
    return metrics_from([getattr(row, c) for c in SUM_COLUMNS], size_bytes)


@lru_cache(maxsize=4096)
def _unit_of(
    engine: str, kind: str, database: str, filegroup: str | None, tablespace: str | None
) -> str | None:
    info = ObjectInfo(
        key="",
        engine=engine,
        server="",
        database=database,
        kind=kind,
        name="",
        filegroup=filegroup,
        tablespace=tablespace,
    )
    uk = advisor_unit_key(info)
    if uk is None and engine == "db2" and kind == "container" and tablespace:
        uk = f"{database}/tablespace/{tablespace}"
    return uk


def unit_key(
    *, engine: str, kind: str, database: str, key: str, filegroup: str | None, tablespace: str | None
) -> str:
    """The placement unit an object moves with (the advisor's rule; a DB2 container moves with
    its table space)."""
    return _unit_of(engine, kind, database, filegroup, tablespace) or key


def unit_key_of(o: Any) -> str:
    """`unit_key` of an object row (a DbObject or a selected row with the same columns)."""
    return unit_key(engine=o.engine, kind=o.kind, database=o.database, key=o.key,
                    filegroup=o.filegroup, tablespace=o.tablespace)  # fmt: skip


@dataclass(frozen=True)
class RecSummary:
    id: int
    key: str
    kind: str
    name: str
    from_tier: str | None
    to_tier: str
    profile: str
    rule: str
    status: str
    io_ms_per_s_now: float | None
    io_ms_per_s_after: float | None
    reasons: tuple[str, ...] = ()
    metrics: dict[str, Any] = field(default_factory=dict)


REC_COLUMNS = (
    Recommendation.id,
    Recommendation.key,
    Recommendation.kind,
    Recommendation.name,
    Recommendation.from_tier,
    Recommendation.to_tier,
    Recommendation.profile,
    Recommendation.rule,
    Recommendation.status,
    Recommendation.io_ms_per_s_now,
    Recommendation.io_ms_per_s_after,
)


def _current_recs(
    session: Session, target_id: int, keys: Sequence[str] | None = None, *, full: bool = False
) -> dict[str, RecSummary]:
    """The current recommendation per placement-unit key of a target (the newest wins); with
    `full`, its reasons and measured numbers too."""
    cols = (*REC_COLUMNS, Recommendation.evidence) if full else REC_COLUMNS
    q = select(*cols).where(Recommendation.target_id == target_id, Recommendation.status.in_(CURRENT))
    if keys is not None:
        q = q.where(Recommendation.key.in_(list(keys)))
    newest: dict[str, Any] = {}
    for r in session.execute(q.order_by(Recommendation.updated_at, Recommendation.id)):
        newest[r.key] = r
    out: dict[str, RecSummary] = {}
    for key, r in newest.items():
        ev = (r.evidence or {}) if full else {}
        metrics = {k: v for k, v in ev.get("metrics", {}).items() if k != "io_per_s_by_hour_of_day"}
        out[key] = RecSummary(
            r.id, r.key, r.kind, r.name, r.from_tier, r.to_tier, r.profile, r.rule, r.status,
            r.io_ms_per_s_now, r.io_ms_per_s_after, tuple(ev.get("reasons", [])), metrics,
        )  # fmt: skip
    return out


def _target(session: Session, ref: str) -> Target:
    """By id or name (app.store.targets.find_target)."""
    from app.store.targets import find_target

    t = find_target(session, ref)
    if t is None:
        raise NotFound(f"no target named {ref[:200]!r}")
    return t


# --- target / database page ----------------------------------------------------------------------


@dataclass(slots=True)
class ObjectRow:
    id: int
    database: str
    kind: str
    name: str
    key: str
    size_bytes: int | None
    location: str | None  # physical name or storage group
    current_tier: str | None
    unit_key: str
    recommendation: RecSummary | None
    m: Metrics

    @property
    def recommended_tier(self) -> str | None:
        return None if self.recommendation is None else self.recommendation.to_tier

    @property
    def profile(self) -> str | None:
        return None if self.recommendation is None else self.recommendation.profile


@dataclass(frozen=True)
class DatabaseSummary:
    name: str
    objects: int
    size_bytes: int | None  # None: no object that holds capacity (e.g. only the instance)
    iops: float | None
    heat: float | None


@dataclass(frozen=True)
class ObjectFilter:
    kind: str | None = None
    tier: str | None = None  # a tier name, or "unknown"
    name: str | None = None  # contains, case-insensitive
    sort: str = "heat"
    descending: bool = True
    offset: int = 0
    limit: int = PAGE_SIZE
    clamp: bool = False  # an offset past the end shows the last page (pages) or nothing (API)


def _tier_rank(policy: Policy) -> Callable[[ObjectRow], int | None]:
    order = {t.name: i for i, t in enumerate(policy.tiers)}
    return lambda r: None if r.current_tier is None else order.get(r.current_tier, len(order))


def sort_keys(policy: Policy) -> dict[str, Callable[[ObjectRow], Any]]:
    """The whitelisted sort keys of the objects table (query string `sort=`)."""
    order = {t.name: i for i, t in enumerate(policy.tiers)}
    return {
        "name": lambda r: r.name.lower(),
        "database": lambda r: r.database.lower(),
        "kind": lambda r: r.kind,
        "tier": _tier_rank(policy),
        "recommended": lambda r: None if r.recommended_tier is None else order.get(r.recommended_tier, 99),
        "size": lambda r: r.size_bytes,
        "read_iops": lambda r: r.m.read_iops,
        "write_iops": lambda r: r.m.write_iops,
        "iops": lambda r: r.m.iops,
        "avg_read_kb": lambda r: r.m.avg_read_kb,
        "avg_read_ms": lambda r: r.m.avg_read_ms,
        "avg_write_ms": lambda r: r.m.avg_write_ms,
        "heat": lambda r: r.m.heat,
    }


SORT_KEYS = (
    "name",
    "database",
    "kind",
    "tier",
    "recommended",
    "size",
    "read_iops",
    "write_iops",
    "iops",
    "avg_read_kb",
    "avg_read_ms",
    "avg_write_ms",
    "heat",
)


def order_rows(
    rows: Sequence[ObjectRow], key: Callable[[ObjectRow], Any], *, descending: bool
) -> list[ObjectRow]:
    """Sorted by `key`; rows without a value come last in either direction, by name."""
    base = sorted(rows, key=lambda r: (r.name.lower(), r.id))
    known = [r for r in base if key(r) is not None]
    unknown = [r for r in base if key(r) is None]
    return sorted(known, key=key, reverse=descending) + unknown


@dataclass(frozen=True)
class ObjectList:
    target: str
    target_id: int
    engine: str
    database: str | None
    since: datetime
    until: datetime
    rows: list[ObjectRow]  # the page
    total: int  # rows matching the filter
    offset: int
    limit: int
    kinds: list[str]  # present in the target / database, for the filter
    databases: list[DatabaseSummary]

    @property
    def page(self) -> int:
        return self.offset // self.limit + 1

    @property
    def pages(self) -> int:
        return max(1, math.ceil(self.total / self.limit))


OBJECT_COLUMNS = (
    DbObject.id,
    DbObject.engine,
    DbObject.database,
    DbObject.kind,
    DbObject.name,
    DbObject.key,
    DbObject.size_bytes,
    DbObject.physical_name,
    DbObject.storage_group,
    DbObject.filegroup,
    DbObject.tablespace,
)


def _object_rows(
    session: Session, target: Target, database: str | None, since: datetime, until: datetime, policy: Policy
) -> list[ObjectRow]:
    where = [DbObject.target_id == target.id]
    if database is not None:
        where.append(DbObject.database == database)
    ids = select(DbObject.id).where(*where)
    sub = usage(
        _dialect(session), since=since, until=until, object_ids=ids, mark=rolled_up_mark(session)
    ).subquery()
    q = select(*OBJECT_COLUMNS, *[sub.c[c] for c in SUM_COLUMNS]).outerjoin(
        sub, sub.c.object_id == DbObject.id
    )
    raw = [tuple(r) for r in session.execute(q.where(*where))]
    recs = _current_recs(session, target.id)
    tier_of, unit_of = [], []
    by_key: dict[str, str | None] = {}
    unit_tiers: dict[str, set[str | None]] = defaultdict(set)
    location = policy.tier_of_location
    for _id, engine, database, kind, _name, key, _size, physical, group, fg, ts, *_ in raw:
        tier = location(engine=engine, physical_name=physical, storage_group=group)
        uk = _unit_of(engine, kind, database, fg, ts) or key
        tier_of.append(tier)
        unit_of.append(uk)
        by_key[key] = tier
        if kind not in NOT_STORAGE:
            unit_tiers[uk].add(tier)
    out: list[ObjectRow] = []
    for r, tier, uk in zip(raw, tier_of, unit_of, strict=True):
        oid, _engine, database, kind, name, key, size, physical, group = r[:9]
        if tier is None:  # a partition or container: where its filegroup / table space is
            members = unit_tiers.get(uk, set())
            tier = by_key.get(uk) or (next(iter(members)) if len(members) == 1 else None)
        m = metrics_from(r[11:], size)
        out.append(
            ObjectRow(oid, database, kind, name, key, size, physical or group, tier, uk, recs.get(uk), m)
        )
    return out


def _databases(rows: Sequence[ObjectRow]) -> list[DatabaseSummary]:
    groups: dict[str, list[ObjectRow]] = defaultdict(list)
    for r in rows:
        groups[r.database].append(r)
    out = []
    for name, members in sorted(groups.items()):
        storage = [r for r in members if r.kind not in NOT_STORAGE]
        size = sum(r.size_bytes or 0 for r in storage) if storage else None
        with_io = [r for r in storage if r.m.iops is not None]
        iops = sum(r.m.iops or 0.0 for r in with_io) if with_io else None
        io = sum(r.m.io or 0.0 for r in with_io)
        hours = max((r.m.seconds for r in with_io), default=0.0) / 3600
        gb = sum(max((r.size_bytes or 0) / GB, 1 / 1024) for r in with_io)
        heat = io / gb / hours if with_io and hours and gb else None
        out.append(DatabaseSummary(name, len(members), size, iops, heat))
    return out


@dataclass
class CachedRows:
    """One version of a target's rows, with what does not depend on the filters."""

    rows: list[ObjectRow]
    kinds: list[str]
    databases: list[DatabaseSummary]
    orders: dict[tuple[str, bool], list[ObjectRow]] = field(default_factory=dict)  # by (sort, desc)

    def ordered(self, sort: str, descending: bool, policy: Policy) -> list[ObjectRow]:
        hit = self.orders.get((sort, descending))
        if hit is None:
            hit = order_rows(self.rows, sort_keys(policy)[sort], descending=descending)
            self.orders[(sort, descending)] = hit
        return hit


class RowsCache:
    """A target's (or database's) rows per data version: building them reads every object's 24 h
    of I/O (one row per interval and roll-up hour) and takes most of a big target's page time.
    The version is the newest io_interval id (every poll adds intervals; roll-ups move interval
    sums, never change them), the target's objects (count, newest id, newest last_seen: a poll
    that changes an object's location sees it), its recommendations (newest update, count, newest
    id: reviews and advice runs set updated_at), the window start and the policy; filters, sort
    and paging run over the cached rows."""

    def __init__(self, size: int = 32) -> None:
        self.size = size
        self._items: dict[tuple[Any, ...], CachedRows] = {}
        self._lock = threading.Lock()

    def get(self, key: tuple[Any, ...]) -> CachedRows | None:
        with self._lock:
            return self._items.get(key)

    def put(self, key: tuple[Any, ...], rows: CachedRows) -> None:
        with self._lock:
            for old in [k for k in self._items if k[:3] == key[:3]]:
                del self._items[old]  # an older version of the same target / database
            if len(self._items) >= self.size:
                self._items.pop(next(iter(self._items)))
            self._items[key] = rows

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


object_rows_cache = RowsCache()


def _data_version(session: Session, target_id: int) -> tuple[Any, ...]:
    newest_interval = session.scalar(select(func.max(IoInterval.id)))
    recs = session.execute(
        select(
            func.max(Recommendation.updated_at), func.count(Recommendation.id), func.max(Recommendation.id)
        ).where(Recommendation.target_id == target_id)
    ).one()
    objects = session.execute(
        select(func.count(DbObject.id), func.max(DbObject.id), func.max(DbObject.last_seen)).where(
            DbObject.target_id == target_id
        )
    ).one()
    return (newest_interval, *recs, *objects)


def _rows(
    session: Session, target: Target, database: str | None, since: datetime, until: datetime, policy: Policy
) -> CachedRows:
    url = str(session.get_bind().engine.url)
    key = (url, target.id, database, since, policy.model_dump_json(), _data_version(session, target.id))
    cached = object_rows_cache.get(key)
    if cached is None:
        rows = _object_rows(session, target, database, since, until, policy)
        cached = CachedRows(rows, sorted({r.kind for r in rows}), _databases(rows))
        object_rows_cache.put(key, cached)
    return cached


def list_objects(
    *,
    session: Session,
    target: str,
    database: str | None,
    policy: Policy,
    now: datetime,
    filters: ObjectFilter,
    hours: int = 24,
) -> ObjectList:
    """A target's (or one database's) objects with their last `hours` of I/O, filtered, sorted and
    paged. An unknown sort key must be rejected by the caller (see SORT_KEYS)."""
    t = _target(session, target)
    if database is not None and "\x00" in database:  # PostgreSQL text cannot hold it: no such database
        raise NotFound(f"target {target!r} has no database {database!r}")
    since = window_start(now, hours)
    cached = _rows(session, t, database, since, now, policy)
    if database is not None and not cached.rows:
        raise NotFound(f"target {target!r} has no database {database!r}")
    # ordering is total (ties by name, then id), so filtering the ordered rows orders the subset
    chosen = cached.ordered(filters.sort, filters.descending, policy)
    if filters.kind:
        chosen = [r for r in chosen if r.kind == filters.kind]
    if filters.tier:
        want = None if filters.tier == "unknown" else filters.tier
        chosen = [r for r in chosen if r.current_tier == want]
    if filters.name:
        needle = filters.name.casefold()
        chosen = [r for r in chosen if needle in r.name.casefold()]
    ordered = chosen
    start = max(filters.offset, 0)
    if filters.clamp and start >= len(ordered):
        start = max(0, (len(ordered) - 1) // filters.limit * filters.limit)
    return ObjectList(
        target=t.name,
        target_id=t.id,
        engine=t.engine,
        database=database,
        since=since,
        until=now,
        rows=ordered[start : start + filters.limit],
        total=len(ordered),
        offset=start,
        limit=filters.limit,
        kinds=cached.kinds,
        databases=cached.databases,
    )


# --- object page ---------------------------------------------------------------------------------


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


NICE_WIDTHS = (60, 120, 300, 600, 900, 1200, 1800, 3600, 7200, 10800, 14400, 21600, 43200, 86400)


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


def _unit_members(session: Session, o: DbObject, uk: str) -> list[UnitMember]:
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
    dialect = _dialect(session)
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
        for row in session.execute(select(bucket, *_sums()).where(*window).group_by(bucket).order_by(bucket))
    ]
    hod = hour_of_day(IoInterval.end_time, dialect).label("hod")
    heat_by_hour: list[float | None] = [None] * 24
    for row in session.execute(select(hod, *_sums()).where(*window).group_by(hod)):
        heat_by_hour[int(row.hod)] = metrics_of(row, o.size_bytes).heat
    total = metrics_of(session.execute(select(*_sums()).where(*window)).one(), o.size_bytes)
    uk = unit_key_of(o)
    members = _unit_members(session, o, uk)
    tier = policy.tier_of_location(
        engine=o.engine, physical_name=o.physical_name, storage_group=o.storage_group
    )
    rec = _current_recs(session, o.target_id, [uk], full=True).get(uk)
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


def _aware(t: datetime | None) -> datetime | None:
    if t is None:
        return None
    return t if t.tzinfo is not None else t.replace(tzinfo=UTC)


# --- heat map ------------------------------------------------------------------------------------


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
    cells: list[float | None]  # heat per hour column (None: no data that hour)


@dataclass(frozen=True)
class SkewPoint:
    capacity_share: float  # 0..1, cumulative, hottest objects first
    io_share: float  # 0..1, cumulative


@dataclass(frozen=True)
class Savings:
    recommendations: int
    io_ms_per_s_now: float
    io_ms_per_s_after: float
    saved_ms_per_s: float  # where the move is predicted to reduce I/O wait
    added_ms_per_s: float  # where it adds wait (moves to slower tiers, to free fast capacity)
    flash_tier: str
    flash_gb: float  # capacity the moves onto the flash tier would use

    @property
    def net_ms_per_s(self) -> float:
        return self.io_ms_per_s_now - self.io_ms_per_s_after


@dataclass(frozen=True)
class HeatMap:
    target: str | None
    target_id: int | None
    since: datetime
    until: datetime
    hours: list[datetime]
    rows: list[HeatRow]
    objects: int  # objects with file-level I/O in the window
    skew: list[SkewPoint]
    knee: SkewPoint | None  # farthest above the diagonal
    capacity_for_80: float | None  # capacity share holding 80 % of the I/O
    ranked_at: datetime  # when the ranking and the skew were read (the cells are read at `until`)
    savings: Savings
    targets: list[str] = field(default_factory=list)


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


def _savings(session: Session, target_id: int | None, policy: Policy) -> Savings:
    flash = policy.tiers[0].name
    now_ms = func.coalesce(Recommendation.io_ms_per_s_now, 0.0)
    after_ms = func.coalesce(Recommendation.io_ms_per_s_after, 0.0)
    q = select(
        Recommendation.to_tier,
        func.count().label("n"),
        func.sum(now_ms).label("now"),
        func.sum(after_ms).label("after"),
        func.sum(case((now_ms > after_ms, now_ms - after_ms), else_=0.0)).label("gain"),
        func.sum(case((after_ms > now_ms, after_ms - now_ms), else_=0.0)).label("loss"),
        func.sum(Recommendation.size_bytes).label("size"),
    ).where(Recommendation.status.in_(SAVING))
    if target_id is not None:
        q = q.where(Recommendation.target_id == target_id)
    n, total_now, total_after, gain, loss, flash_bytes = 0, 0.0, 0.0, 0.0, 0.0, 0
    for row in session.execute(q.group_by(Recommendation.to_tier)):
        n += int(row.n)
        total_now += float(row.now or 0.0)
        total_after += float(row.after or 0.0)
        gain += float(row.gain or 0.0)
        loss += float(row.loss or 0.0)
        if row.to_tier == flash:
            flash_bytes += int(row.size or 0)
    return Savings(n, total_now, total_after, gain, loss, flash, flash_bytes / GB)


@dataclass(frozen=True, slots=True)
class IoTotal:
    id: int
    size_bytes: int | None
    io: float
    seconds: float


@dataclass(frozen=True)
class IoTotals:
    """Every storage object's I/O over a window: what the heat map ranks and the skew curve sums.
    The one expensive read of the heat map (all objects, all hours), so callers may keep it a while."""

    target_id: int | None
    since: datetime
    until: datetime
    items: list[IoTotal]


def _instants(session: Session, *instants: datetime) -> list[Any]:
    """Window bounds for a statement run many times. On PostgreSQL they are written into the SQL
    as literals: with bound parameters, psycopg prepares the statement after 5 runs and the server
    then switches to a generic plan that took 5-8 s instead of 70 ms for io_totals (measured on
    10,000 objects). The values are our own datetimes, formatted here: nothing from a request."""
    if _dialect(session) != "postgresql":
        return list(instants)
    return [
        literal_column(f"TIMESTAMP '{t.astimezone(UTC).replace(tzinfo=None).isoformat(sep=' ')}'")
        for t in instants
    ]


def io_totals(*, session: Session, target: str | None, now: datetime, days: int = 7) -> IoTotals:
    since = window_start(now, 24 * days)
    t = _target(session, target) if target else None
    # Only requests and seconds, summed per object before the join with the objects (the week is
    # every object's every hour: a join per row and five unused sums doubled the time).
    mine = None if t is None else select(DbObject.id).where(DbObject.target_id == t.id)
    lo, hi = _instants(session, since, now)

    def branch(src: Any, at: Any, *window: ColumnElement[bool]) -> Select[Any]:
        io = func.coalesce(src.reads, 0) + func.coalesce(src.writes, 0)
        q = select(src.object_id.label("object_id"), io.label("io"), src.seconds.label("seconds")).where(
            at >= lo, at <= hi, or_(src.reads.is_not(None), src.writes.is_not(None)), *window
        )
        return q if mine is None else q.where(src.object_id.in_(mine))

    mark = rolled_up_mark(session)
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
    items = [IoTotal(i, size, float(v), float(secs or 0.0)) for i, size, v, secs in session.execute(q)]
    return IoTotals(t.id if t is not None else None, since, now, items)


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
    """The `top` objects by I/O over the last `days`, hour by hour; the skew curve of every object
    with file-level I/O; and the predicted effect of the open and approved recommendations.
    `totals` (from io_totals, possibly a few minutes old) saves re-reading every object's week."""
    dialect = _dialect(session)
    t = _target(session, target) if target else None
    if totals is None:
        totals = io_totals(session=session, target=target, now=now, days=days)
    since = totals.since
    items = totals.items
    skew = _skew([(max((r.size_bytes or 0) / GB, 1 / 1024), r.io) for r in items])
    knee = max(skew, key=lambda p: p.io_share - p.capacity_share) if skew else None
    chosen = sorted(items, key=lambda r: (-r.io, r.id))[:top]
    ids = [r.id for r in chosen]
    meta = {
        r.id: r
        for r in session.execute(
            select(DbObject.id, DbObject.database, DbObject.kind, DbObject.name, Target.name.label("target"))
            .join(Target, Target.id == DbObject.target_id)
            .where(DbObject.id.in_(ids))
        )
    }
    cells: dict[int, dict[datetime, float | None]] = defaultdict(dict)
    hours_seen: set[datetime] = set()
    if ids:
        grid = usage(
            dialect, since=since, until=now, object_ids=ids, by_hour=True, mark=rolled_up_mark(session)
        )
        size = {r.id: r.size_bytes for r in chosen}
        for row in session.execute(grid):
            h = _aware(row.hour)
            assert h is not None
            hours_seen.add(h)
            cells[row.object_id][h] = metrics_of(row, size[row.object_id]).heat
    hours: list[datetime] = []
    if hours_seen:
        h, end = min(hours_seen), max(hours_seen)
        while h <= end:
            hours.append(h)
            h += timedelta(hours=1)
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
        )
        for r in chosen
        if r.id in meta  # (an object dropped since the totals were read)
    ]
    return HeatMap(
        target=t.name if t is not None else None,
        target_id=t.id if t is not None else None,
        since=since,
        until=now,
        hours=hours,
        rows=rows,
        objects=len(items),
        ranked_at=totals.until,
        skew=skew,
        knee=knee,
        capacity_for_80=_share_for(skew, 0.8),
        savings=_savings(session, t.id if t is not None else None, policy),
        targets=list(session.scalars(select(Target.name).order_by(Target.name))),
    )
