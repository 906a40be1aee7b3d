"""Snapshots into the store: objects upserted, raw samples kept, interval deltas computed.

Delta rules live in advisors/deltas.py; this module only feeds it the previous stored sample of
each series, so series survive service restarts.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from operator import attrgetter
from typing import Any, cast

from sqlalchemy import JSON, Table, func, insert, select, text, update
from sqlalchemy.dialects.postgresql import distinct_on
from sqlalchemy.orm import Session

from advisors.deltas import CounterPoint, Outcome, interval_between
from app.store.models import COUNTER_COLUMNS, DbObject, IoInterval, Sample, Target
from app.store.watermarks import mark_ingested
from connectors.records import LOCATION_FIELDS, ObjectRef, Snapshot

# where an object lives: a change in any of these is a move (a file copied, a partition rebuilt
# onto another filegroup, a table space altered to another storage group)
PLACEMENT_FIELDS = ("physical_name", "filegroup", "tablespace", "storage_group")

# what an object row copies from the newest ObjectRef: its name and size, where it lives (the one
# object vocabulary, connectors.records.LOCATION_FIELDS) and its row count
_LOCATION_FIELDS = ("name", "size_bytes", *LOCATION_FIELDS, "rows")


IGNORED_LISTED = 10  # ignored samples named one by one; the rest are only counted


@dataclass(frozen=True)
class IgnoredSample:
    """A sample not stored: older than its series' newest stored sample, or its interval would
    overlap a stored one (the same I/O counted twice)."""

    server: str
    key: str
    sample_time: datetime
    reason: str


@dataclass
class IngestResult:
    snapshots: int = 0
    samples: int = 0
    intervals: int = 0
    duplicates: int = 0
    out_of_order: int = 0
    overlapping: int = 0
    new_series: int = 0
    notes: list[str] = field(default_factory=list)
    ignored: list[IgnoredSample] = field(default_factory=list)  # the first IGNORED_LISTED

    @property
    def ignored_count(self) -> int:
        return self.out_of_order + self.overlapping

    def add(self, other: IngestResult) -> None:
        self.snapshots += other.snapshots
        self.samples += other.samples
        self.intervals += other.intervals
        self.duplicates += other.duplicates
        self.out_of_order += other.out_of_order
        self.overlapping += other.overlapping
        self.new_series += other.new_series
        self.notes.extend(other.notes)
        self.ignored.extend(other.ignored[: IGNORED_LISTED - len(self.ignored)])

    def ignore(self, sample: IgnoredSample) -> None:
        if len(self.ignored) < IGNORED_LISTED:
            self.ignored.append(sample)


def bulk_insert(session: Session, table: Table, rows: list[dict[str, Any]]) -> None:
    """Insert many rows in the session's transaction: COPY on PostgreSQL (measured in
    bench/poll_cycle.py against executemany and multi-row INSERT), executemany elsewhere."""
    if not rows:
        return
    if session.bind is None or session.get_bind().dialect.name != "postgresql":
        session.execute(insert(table), rows)
        return
    from psycopg.types.json import Jsonb

    names = list(rows[0])
    json_cols = {c.name for c in table.columns if isinstance(c.type, JSON)}

    def value(name: str, v: Any) -> Any:
        if isinstance(v, datetime):
            return v.astimezone(UTC).replace(tzinfo=None)  # the store keeps naive UTC (UTCDateTime)
        if name in json_cols:
            return Jsonb(v)
        return v

    raw = session.connection().connection.driver_connection
    assert raw is not None
    columns = ", ".join(f'"{n}"' for n in names)
    with raw.cursor() as cur, cur.copy(f'COPY "{table.name}" ({columns}) FROM STDIN') as copy:
        for row in rows:
            copy.write_row([value(n, row[n]) for n in names])


def hold_targets(session: Session, target_ids: Iterable[int]) -> None:
    """Keep these targets from being deleted until the caller's transaction ends (PostgreSQL:
    `FOR KEY SHARE`, in id order). sample and io_interval have no foreign key to object (schema
    0016): this, and the objects being read or created in the same transaction, is what keeps an
    ingest from writing rows for an object a concurrent delete removes. SQLite writers are
    serialised by the database lock."""
    ids = sorted(set(target_ids))
    if ids and session.get_bind().dialect.name == "postgresql":
        session.execute(
            text("SELECT id FROM target WHERE id = ANY(CAST(:ids AS integer[])) ORDER BY id FOR KEY SHARE"),
            {"ids": ids},
        )


def _chunks(rows: list[Any], size: int) -> Iterator[list[Any]]:
    for i in range(0, len(rows), size):
        yield rows[i : i + size]


def load_series(session: Session, target_ids: list[int]) -> tuple[list[DbObject], dict[int, CounterPoint]]:
    """The objects of some targets and the latest stored sample of each (two queries)."""
    objects = list(session.scalars(select(DbObject).where(DbObject.target_id.in_(target_ids))))
    latest: dict[int, CounterPoint] = {}
    ids = [o.id for o in objects]
    if ids:
        cols = [getattr(Sample, c) for c in COUNTER_COLUMNS]
        head = select(Sample.object_id, Sample.sample_time, Sample.instance_start, Sample.extra, *cols)
        if session.get_bind().dialect.name == "postgresql":
            # one index range scan per object on (object_id, sample_time)
            query = (
                head.where(Sample.object_id.in_(ids))
                .ext(distinct_on(Sample.object_id))
                .order_by(Sample.object_id, Sample.sample_time.desc())
            )
        else:
            # one index probe per object on (object_id, sample_time); a GROUP BY over the samples
            # would read every stored sample, on each chunk of an import (quadratic)
            newest_time = (
                select(func.max(Sample.sample_time)).where(Sample.object_id == DbObject.id).scalar_subquery()
            )
            newest = (
                select(DbObject.id.label("object_id"), newest_time.label("t"))
                .where(DbObject.id.in_(ids))
                .subquery()
            )
            query = head.join(
                newest, (Sample.object_id == newest.c.object_id) & (Sample.sample_time == newest.c.t)
            )
        for r in session.execute(query):
            latest[r.object_id] = CounterPoint(
                sample_time=r.sample_time,
                instance_start=r.instance_start,
                counters={c: getattr(r, c) for c in COUNTER_COLUMNS},
                extra=dict(r.extra or {}),
            )
    return objects, latest


def interval_ends(session: Session, target_id: int) -> dict[int, datetime]:
    """The end of each object's newest stored interval (one index probe per object)."""
    newest = (
        select(func.max(IoInterval.end_time)).where(IoInterval.object_id == DbObject.id).scalar_subquery()
    )
    rows = session.execute(select(DbObject.id, newest).where(DbObject.target_id == target_id))
    return {object_id: end for object_id, end in rows if end is not None}


def _object_row(target_id: int, ref: ObjectRef, seen: datetime) -> dict[str, Any]:
    """The object table's row for an object first seen at `seen`."""
    return {
        "target_id": target_id,
        "engine": str(ref.engine),
        "server": ref.server,
        "database": ref.database,
        "kind": str(ref.kind),
        "key": ref.key,
        "first_seen": seen,
        "last_seen": seen,
        **{f: getattr(ref, f) for f in _LOCATION_FIELDS},
    }


class SeriesCache:
    """Objects and the latest sample per object of one target, loaded once per ingest (or given,
    when several targets' series are loaded together: ingest_batch)."""

    def __init__(
        self,
        session: Session,
        target: Target,
        *,
        series: tuple[list[DbObject], dict[int, CounterPoint]] | None = None,
        guard_overlap: bool = False,
    ) -> None:
        self.session = session
        self.target = target
        objects, self.latest = series if series is not None else load_series(session, [target.id])
        self.objects: dict[str, DbObject] = {o.key: o for o in objects}
        self.last_seen: dict[int, datetime] = {o.id: o.last_seen for o in self.objects.values()}
        # object id -> end of its newest stored interval: a new interval must not start before it
        self.interval_ends: dict[int, datetime] = interval_ends(session, target.id) if guard_overlap else {}

    def _new_object(self, ref: ObjectRef, seen: datetime) -> dict[str, Any]:
        return _object_row(self.target.id, ref, seen)

    def add_new_objects(self, refs: Iterable[ObjectRef], seen: datetime) -> int:
        """Create the objects not stored yet among `refs` with one multi-row INSERT … RETURNING
        (a new fleet's first cycle: thousands of objects, formerly one INSERT and flush each).
        A key given twice is created from its first ref, as object_for would. Returns how many."""
        rows: dict[str, dict[str, Any]] = {}
        for ref in refs:
            if ref.key not in self.objects and ref.key not in rows:
                rows[ref.key] = self._new_object(ref, seen)
        if not rows:
            return 0
        # Core, not ORM, bulk insert: the ORM leaves out None values and then inserts each set of
        # present columns separately (a statement per kind of object); then one SELECT loads them
        table = cast(Table, DbObject.__table__)
        ids = list(self.session.scalars(insert(table).returning(table.c.id), list(rows.values())))
        created: list[DbObject] = []
        for chunk in _chunks(ids, 5000):
            created.extend(self.session.scalars(select(DbObject).where(DbObject.id.in_(chunk))))
        for obj in created:
            self.objects[obj.key] = obj
            self.last_seen[obj.id] = seen
        return len(created)

    def object_for(self, ref: ObjectRef, seen: datetime) -> DbObject:
        obj = self.objects.get(ref.key)
        location = {f: getattr(ref, f) for f in _LOCATION_FIELDS}
        if obj is None:
            obj = DbObject(**self._new_object(ref, seen))
            self.session.add(obj)
            self.session.flush()
            self.objects[ref.key] = obj
            self.last_seen[obj.id] = seen
            return obj
        if seen >= self.last_seen[obj.id]:
            # the newest sample describes where the object lives now (a move shows up here);
            # only changes are written, last_seen is written once per snapshot (mark_seen)
            location.update(server=ref.server, kind=str(ref.kind))
            moved = {
                f: getattr(obj, f)
                for f in PLACEMENT_FIELDS
                if location[f] is not None and getattr(obj, f) is not None and getattr(obj, f) != location[f]
            }
            if moved:
                # a relocation: remember where it was, so verification can compare before and after
                obj.previous_location = {f: getattr(obj, f) for f in PLACEMENT_FIELDS}
                obj.location_since = seen
            for name, value in location.items():
                if value is not None and getattr(obj, name) != value:
                    setattr(obj, name, value)
        return obj

    def take_seen(self, object_ids: list[int], seen: datetime) -> list[int]:
        """The objects whose last_seen moves forward to `seen` (remembered; written by the caller)."""
        newer = [i for i in object_ids if seen > self.last_seen[i]]
        for i in newer:
            self.last_seen[i] = seen
        return newer

    def mark_seen(self, object_ids: list[int], seen: datetime) -> None:
        newer = self.take_seen(object_ids, seen)
        for chunk in _chunks(newer, 1000):
            self.session.execute(update(DbObject).where(DbObject.id.in_(chunk)).values(last_seen=seen))


@dataclass
class DeferredRows:
    """Rows of several snapshots, written together by ingest_batch."""

    samples: list[dict[str, Any]] = field(default_factory=list)
    intervals: list[dict[str, Any]] = field(default_factory=list)
    seen: list[tuple[int, datetime]] = field(default_factory=list)


def ingest_snapshot(
    cache: SeriesCache, snapshot: Snapshot, *, deferred: DeferredRows | None = None
) -> IngestResult:
    """Store one snapshot (or, given `deferred`, add its rows there). Duplicates are ignored;
    restarts and resets start a new series."""
    result = IngestResult(snapshots=1)
    samples: list[dict[str, Any]] = []
    intervals: list[dict[str, Any]] = []
    seen_ids: list[int] = []
    cache.add_new_objects((item.ref for item in snapshot.samples), snapshot.sample_time)
    for item in snapshot.samples:
        obj = cache.object_for(item.ref, snapshot.sample_time)
        seen_ids.append(obj.id)
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
                result.ignore(
                    IgnoredSample(
                        snapshot.server, item.ref.key, snapshot.sample_time, "older than the stored series"
                    )
                )
            continue
        interval = judged.interval
        stored_end = cache.interval_ends.get(obj.id)
        if interval is not None and stored_end is not None and interval.start < stored_end:
            # a stored interval already covers part of this one: storing it would count that I/O
            # twice. The sample is kept (later intervals start from it), the interval is not.
            result.overlapping += 1
            result.ignore(
                IgnoredSample(
                    snapshot.server,
                    item.ref.key,
                    snapshot.sample_time,
                    f"its interval from {interval.start.isoformat()} overlaps one stored up to "
                    f"{stored_end.isoformat()}; the sample is stored without it",
                )
            )
            interval = None
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
        if interval is not None:
            iv = interval
            intervals.append(
                {
                    "object_id": obj.id,
                    "start_time": iv.start,
                    "end_time": iv.end,
                    "seconds": iv.seconds,
                    "extra": iv.extra,
                    **iv.counters,
                }
            )
        cache.latest[obj.id] = point
        if interval is not None and obj.id in cache.interval_ends:
            cache.interval_ends[obj.id] = interval.end
    result.samples, result.intervals = len(samples), len(intervals)
    if deferred is not None:
        deferred.samples.extend(samples)
        deferred.intervals.extend(intervals)
        t = snapshot.sample_time
        deferred.seen.extend((i, t) for i in cache.take_seen(seen_ids, t))
        return result
    bulk_insert(cache.session, cast(Table, Sample.__table__), samples)
    bulk_insert(cache.session, cast(Table, IoInterval.__table__), intervals)
    cache.mark_seen(seen_ids, snapshot.sample_time)
    return result


def ingest_snapshots(
    session: Session,
    target: Target,
    snapshots: Iterable[Snapshot],
    *,
    guard_overlap: bool = False,
    imported: bool = False,
) -> IngestResult:
    """Store snapshots of one target in time order, in the caller's transaction. `guard_overlap`
    also refuses an interval overlapping a stored one (imports: one more query per call).
    `imported`: the samples come from a file (the scheduler advises after imports)."""
    hold_targets(session, [target.id])
    cache = SeriesCache(session, target, guard_overlap=guard_overlap)
    total = IngestResult()
    for snap in sorted(snapshots, key=lambda s: s.sample_time):
        total.add(ingest_snapshot(cache, snap))
    if total.samples:
        mark_ingested(session, [target.id], imported=imported)
    return total


def ingest_batch(
    session: Session, batch: list[tuple[Target, list[Snapshot]]], *, in_database: bool | None = None
) -> dict[int, IngestResult]:
    """Store the snapshots of several targets in the caller's transaction with a fixed number of
    statements (app/workers.py; measured in bench/collectors.py). Returns each target's result by
    target id. On PostgreSQL (`in_database` None or True) the deltas are computed in the database:
    one COPY into a staging table, one statement judging and inserting samples and intervals
    (several times faster: bench/collectors.py). Elsewhere (or `in_database=False`, kept as the
    reference the in-database path is tested against): the series of all targets loaded in two
    queries, deltas judged in Python, one COPY of samples, one of intervals, one update of
    last_seen."""
    postgres = session.get_bind().dialect.name == "postgresql"
    if in_database and not postgres:
        raise ValueError("deltas are computed in the database on PostgreSQL only")
    if in_database is None:
        in_database = postgres
    hold_targets(session, [t.id for t, _ in batch])
    if in_database:
        return _ingest_batch_in_database(session, batch)
    objects, latest = load_series(session, [t.id for t, _ in batch])
    by_target: dict[int, list[DbObject]] = {}
    for o in objects:
        by_target.setdefault(o.target_id, []).append(o)
    rows = DeferredRows()
    results: dict[int, IngestResult] = {}
    for target, snapshots in batch:
        own = by_target.get(target.id, [])
        cache = SeriesCache(
            session, target, series=(own, {o.id: latest[o.id] for o in own if o.id in latest})
        )
        total = results.setdefault(target.id, IngestResult())
        for snap in sorted(snapshots, key=lambda s: s.sample_time):
            total.add(ingest_snapshot(cache, snap, deferred=rows))
    bulk_insert(session, cast(Table, Sample.__table__), rows.samples)
    bulk_insert(session, cast(Table, IoInterval.__table__), rows.intervals)
    _write_seen(session, rows.seen)
    mark_ingested(session, [tid for tid, r in results.items() if r.samples])
    return results


def _write_seen(session: Session, seen: list[tuple[int, datetime]]) -> None:
    """object.last_seen = the given time, for many objects: one statement on PostgreSQL."""
    if not seen:
        return
    table = cast(Table, DbObject.__table__)
    if session.get_bind().dialect.name == "postgresql":
        for chunk in _chunks(seen, 10_000):
            session.execute(
                text(
                    "UPDATE object SET last_seen = v.seen FROM unnest(CAST(:ids AS integer[]), "
                    "CAST(:times AS timestamp[])) AS v(id, seen) WHERE object.id = v.id"
                ),
                {
                    "ids": [i for i, _ in chunk],
                    "times": [t.astimezone(UTC).replace(tzinfo=None) for _, t in chunk],
                },
            )
        return
    by_time: dict[datetime, list[int]] = {}
    for i, t in seen:
        by_time.setdefault(t, []).append(i)
    for t, ids in by_time.items():
        for part in _chunks(ids, 1000):
            session.execute(update(table).where(table.c.id.in_(part)).values(last_seen=t))


# --- PostgreSQL: deltas computed in the database -------------------------------------------------
#
# The Python path above judges every sample in Python (advisors/deltas.py) and loads each
# object's latest stored sample first. On PostgreSQL, ingest_batch instead COPYs the raw samples
# into a session-local staging table and lets one statement classify them (duplicate, out of
# order), pair each with the previous sample of its series (LAG over the object, ordered by
# sample time, starting from the newest stored sample) and apply the same restart / reset rules,
# inserting samples and intervals. Python only resolves objects and writes the staging rows.
# tests/store/test_ingest_paths_equal.py proves both paths store the same rows on the fault matrix.

_OBJECT_FIELDS = ("server", "kind", *_LOCATION_FIELDS)
_PLACEMENT_AT = tuple(_OBJECT_FIELDS.index(f) for f in PLACEMENT_FIELDS)
_STAGE_COLUMNS = (
    "seq",
    "object_id",
    "sample_time",
    "instance_start",
    "size_bytes",
    *COUNTER_COLUMNS,
    "extra",
)

_STAGE_DDL = (
    "CREATE TEMP TABLE IF NOT EXISTS ingest_stage (seq integer NOT NULL, object_id integer NOT NULL, "
    "sample_time timestamp NOT NULL, instance_start timestamp, size_bytes bigint, "
    + ", ".join(f"{c} bigint" for c in COUNTER_COLUMNS)
    + ", extra json NOT NULL) ON COMMIT DELETE ROWS"
)


def _down(column: str, cur: str, prev: str) -> str:
    """The reset detail advisors/deltas._diff writes, as a CASE branch."""
    return f"WHEN {cur} < {prev} THEN '{column} went down from ' || {prev} || ' to ' || {cur}"


_COUNTERS = ", ".join(COUNTER_COLUMNS)
_LAGS = ", ".join(f"lag({c}) OVER w AS p_{c}" for c in COUNTER_COLUMNS)
_DIFFS = ", ".join(f"{c} - p_{c}" for c in COUNTER_COLUMNS)
_CORE_PROBLEM = " ".join(_down(c, c, f"p_{c}") for c in COUNTER_COLUMNS)

# One statement: classify, pair, judge, insert. Mirrors advisors/deltas.interval_between and
# ingest_snapshot: a sample older than its series' newest stored sample is a duplicate if stored,
# else out of order; one at the newest stored time, or repeated in the batch, is a duplicate; the
# first sample of an object starts a series (restart); a changed instance start is a restart
# unless it is a clock shift (a 15-minute multiple up to 2 h, every counter grown, start before
# the sample); a counter (core first, then extra in the sample's order) that went down is a reset.
_IN_DATABASE_SQL = f"""
WITH latest AS (
    SELECT l.* FROM (SELECT DISTINCT object_id FROM ingest_stage) o
    CROSS JOIN LATERAL (
        SELECT s.object_id, s.sample_time, s.instance_start, {", ".join(f"s.{c}" for c in COUNTER_COLUMNS)},
               s.extra::json AS extra
        FROM sample s WHERE s.object_id = o.object_id ORDER BY s.sample_time DESC LIMIT 1
    ) l
),
classed AS (
    SELECT st.*, CASE
        WHEN lt.sample_time > st.sample_time THEN CASE WHEN EXISTS (
            SELECT 1 FROM sample x WHERE x.object_id = st.object_id AND x.sample_time = st.sample_time
        ) THEN 'duplicate' ELSE 'out_of_order' END
        WHEN lt.sample_time = st.sample_time THEN 'duplicate'
        WHEN row_number() OVER (PARTITION BY st.object_id, st.sample_time ORDER BY st.seq) > 1
            THEN 'duplicate'
        END AS skip
    FROM ingest_stage st LEFT JOIN latest lt ON lt.object_id = st.object_id
),
series AS (
    SELECT seq, object_id, sample_time, instance_start, size_bytes, {_COUNTERS}, extra
    FROM classed WHERE skip IS NULL
    UNION ALL
    SELECT -1, object_id, sample_time, instance_start, NULL, {_COUNTERS}, extra FROM latest
),
paired AS (
    SELECT *, lag(sample_time) OVER w AS p_time, lag(instance_start) OVER w AS p_start, {_LAGS},
           lag(extra) OVER w AS p_extra
    FROM series WINDOW w AS (PARTITION BY object_id ORDER BY sample_time)
),
diffed AS (
    SELECT p.*, x.extra_diff, CASE {_CORE_PROBLEM} ELSE x.extra_problem END AS problem
    FROM paired p LEFT JOIN LATERAL (
        SELECT json_object_agg(e.key, e.cur - e.prev ORDER BY e.n)
                   FILTER (WHERE e.cur IS NOT NULL AND e.prev IS NOT NULL) AS extra_diff,
               (array_agg(e.key || ' went down from ' || e.prev || ' to ' || e.cur ORDER BY e.n)
                   FILTER (WHERE e.cur < e.prev))[1] AS extra_problem
        FROM (
            SELECT j.key, j.n, (j.value #>> '{{}}')::bigint AS cur, (p.p_extra ->> j.key)::bigint AS prev
            FROM json_each(p.extra) WITH ORDINALITY AS j(key, value, n)
        ) e
    ) x ON p.p_time IS NOT NULL
    WHERE p.seq >= 0
),
judged AS (
    SELECT d.*, CASE
        WHEN p_time IS NULL THEN 'restart'
        WHEN instance_start <> p_start AND NOT (
            problem IS NULL
            AND abs(extract(epoch FROM instance_start - p_start)) <= 7200
            AND mod(abs(extract(epoch FROM instance_start - p_start)), 900) = 0
            AND instance_start < sample_time
        ) THEN 'restart'
        WHEN problem IS NOT NULL THEN 'reset'
        ELSE 'interval'
        END AS outcome
    FROM diffed d
),
stored_samples AS (
    INSERT INTO sample (object_id, sample_time, instance_start, size_bytes, {_COUNTERS}, extra)
    SELECT object_id, sample_time, instance_start, size_bytes, {_COUNTERS}, extra FROM judged
),
seen AS (
    UPDATE object o SET last_seen = m.t
    FROM (SELECT object_id, max(sample_time) AS t FROM ingest_stage GROUP BY object_id) m
    WHERE o.id = m.object_id AND m.t > o.last_seen
),
stored_intervals AS (
    INSERT INTO io_interval (object_id, start_time, end_time, seconds, {_COUNTERS}, extra)
    SELECT object_id, p_time, sample_time, extract(epoch FROM sample_time - p_time)::float8, {_DIFFS},
           COALESCE(extra_diff, '{{}}'::json)
    FROM judged WHERE outcome = 'interval'
)
SELECT seq, skip AS outcome, NULL AS detail FROM classed WHERE skip IS NOT NULL
UNION ALL
SELECT seq, outcome, problem FROM judged WHERE outcome <> 'interval'
"""


class _Obj:
    """An object as the in-database path needs it: id, last_seen and the fields a sample updates."""

    __slots__ = ("id", "last_seen", "values")

    def __init__(self, id: int, last_seen: datetime, values: tuple[Any, ...]) -> None:
        self.id = id
        self.last_seen = last_seen
        self.values = values


# an ObjectRef's values of _OBJECT_FIELDS, in one C call (kind is a StrEnum: equal to its str)
_ref_values = cast(Callable[[ObjectRef], tuple[Any, ...]], attrgetter(*_OBJECT_FIELDS))


def _load_objects(cur: Any, target_ids: list[int]) -> dict[tuple[int, str], _Obj]:
    """Id, last_seen (naive UTC) and the fields a sample updates, of the targets' objects; read on
    the driver's cursor (no ORM, no type processing: this runs on every batch)."""
    cur.execute(
        f"SELECT id, target_id, key, last_seen, {', '.join(_OBJECT_FIELDS)} FROM object "
        "WHERE target_id = ANY(%s::integer[])",
        (target_ids,),
    )
    # fetchall: one call into the driver for the whole result, not one per row
    return {(row[1], row[2]): _Obj(row[0], row[3], tuple(row[4:])) for row in cur.fetchall()}


def _naive(t: datetime | None) -> datetime | None:
    return None if t is None else t.astimezone(UTC).replace(tzinfo=None)


def _ingest_batch_in_database(
    session: Session, batch: list[tuple[Target, list[Snapshot]]]
) -> dict[int, IngestResult]:
    """ingest_batch on PostgreSQL: objects resolved here, deltas judged by _IN_DATABASE_SQL."""
    ordered = [(t, sorted(snaps, key=lambda s: s.sample_time)) for t, snaps in batch]
    table = cast(Table, DbObject.__table__)
    session.flush()  # the driver's cursor below sees only what the session has written
    raw = session.connection().connection.driver_connection
    assert raw is not None
    with raw.cursor() as cur:
        objects = _load_objects(cur, [t.id for t, _ in ordered])
    # objects not stored yet, created as of the first snapshot that names them (as add_new_objects)
    new: dict[tuple[int, str], dict[str, Any]] = {}
    for target, snaps in ordered:
        for snap in snaps:
            for item in snap.samples:
                k = (target.id, item.ref.key)
                if k not in objects and k not in new:
                    new[k] = _object_row(target.id, item.ref, snap.sample_time)
    if new:
        stmt = insert(table).returning(table.c.id, table.c.target_id, table.c.key)
        for row in session.execute(stmt, list(new.values())):
            values = new[(row[1], row[2])]
            objects[(row[1], row[2])] = _Obj(
                row[0],
                values["last_seen"].astimezone(UTC).replace(tzinfo=None),
                tuple(values[f] for f in _OBJECT_FIELDS),
            )

    rows: list[tuple[Any, ...]] = []
    described: list[tuple[int, str, str, datetime]] = []  # by seq: target, key, server, time
    moves: dict[int, dict[str, Any]] = {}
    results: dict[int, IngestResult] = {}
    for target, snaps in ordered:
        results.setdefault(target.id, IngestResult()).snapshots += len(snaps)
        for snap in snaps:
            t, start = _naive(snap.sample_time), _naive(snap.instance_start)
            assert t is not None
            for item in snap.samples:
                ref = item.ref
                obj = objects[(target.id, ref.key)]
                if t >= obj.last_seen:  # last_seen itself is written by _IN_DATABASE_SQL
                    _follow_location(obj, _ref_values(ref), snap.sample_time, moves)
                    obj.last_seen = t
                counters = item.counters
                extra = json.dumps(dict(item.extra)) if item.extra else "{}"
                rows.append(
                    (
                        len(described),
                        obj.id,
                        t,
                        start,
                        ref.size_bytes,
                        *[counters.get(c) for c in COUNTER_COLUMNS],
                        extra,
                    )
                )
                described.append((target.id, ref.key, snap.server, snap.sample_time))
    for object_id, changes in moves.items():
        session.execute(update(table).where(table.c.id == object_id).values(**changes))
    if not rows:
        return results
    with raw.cursor() as cur:
        cur.execute(_STAGE_DDL)
        with cur.copy(f"COPY ingest_stage ({', '.join(_STAGE_COLUMNS)}) FROM STDIN") as copy:
            for r in rows:
                copy.write_row(r)
        cur.execute(_IN_DATABASE_SQL)
        judged = sorted(cur.fetchall())
        cur.execute("DELETE FROM ingest_stage")  # a second batch in this transaction starts empty
    skipped = {seq: (outcome, detail) for seq, outcome, detail in judged}
    for seq, (tid, key, server, when) in enumerate(described):
        result = results[tid]
        outcome, detail = skipped.get(seq, ("interval", None))
        if outcome == "duplicate":
            result.duplicates += 1
            continue
        if outcome == "out_of_order":
            result.out_of_order += 1
            result.ignore(IgnoredSample(server, key, when, "older than the stored series"))
            continue
        result.samples += 1
        if outcome == "interval":
            result.intervals += 1
            continue
        result.new_series += 1
        if outcome == "reset":
            result.notes.append(f"{key}: counters reset ({detail})")
    mark_ingested(session, [tid for tid, r in results.items() if r.samples])
    return results


def _follow_location(
    obj: _Obj, values: tuple[Any, ...], seen: datetime, moves: dict[int, dict[str, Any]]
) -> None:
    """SeriesCache.object_for on plain values: the newest sample says where the object lives; a
    placement field that changed between two known values is a move (previous_location kept)."""
    old = obj.values
    if values == old:
        return
    changes = moves.setdefault(obj.id, {})
    if any(values[i] is not None and old[i] is not None and old[i] != values[i] for i in _PLACEMENT_AT):
        changes["previous_location"] = {
            f: old[i] for f, i in zip(PLACEMENT_FIELDS, _PLACEMENT_AT, strict=True)
        }
        changes["location_since"] = seen
    now = list(old)
    for i, (name, value) in enumerate(zip(_OBJECT_FIELDS, values, strict=True)):
        if value is not None and old[i] != value:
            changes[name] = str(value) if name == "kind" else value
            now[i] = changes[name]
    obj.values = tuple(now)
