"""Advice from the store: the last window of intervals per object -> advisors -> recommendations."""

from __future__ import annotations

import gc
import logging
import math
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import BigInteger, ColumnElement, Select, Text, and_, cast, func, or_, select, union_all
from sqlalchemy.orm import Session

from advisors.advise import AdviceReport, DatabaseCurve, advise_pool, database_curves, join_reports
from advisors.features import ObjectInfo, ObjectWindow, Usage
from advisors.pools import split_by_pool
from app.advice import INFO_FIELDS, PastOccurrence, in_history, period_history, report_json
from app.ilm import make_plan, plan_changes, plan_json
from app.store.db import Store
from app.store.models import (
    COUNTER_COLUMNS,
    AdviceSnapshot,
    DbObject,
    HourlyRollup,
    IlmPlanRecord,
    IoInterval,
    Target,
)
from app.store.queries import _instants, window_start
from app.store.recommendations import SyncResult, sync_recommendations
from app.store.rollup import not_rolled_up, rolled_up_mark
from app.store.watermarks import data_versions, mark_advised
from policies.model import Policy

log = logging.getLogger("tierwise.evaluate")


_Bucket = tuple[float, dict[str, int | None], dict[str, int]]


def _json_pairs(col: Any, dialect: str) -> Any:
    """(key, value) rows of a JSON object column, for a FROM list: json_each on SQLite,
    json_each_text on PostgreSQL (both implicitly lateral in a FROM list)."""
    fn = func.json_each if dialect == "sqlite" else func.json_each_text
    return fn(col).table_valued("key", "value", joins_implicitly=True)


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


def _bucket_sums(
    session: Session,
    *,
    since: datetime,
    until: datetime,
    history: list[tuple[datetime, datetime]],
    targets: list[int] | None = None,
) -> dict[int, dict[datetime, _Bucket]]:
    """Per enabled object and hour (by interval end): the hourly roll-ups plus the intervals not
    rolled up yet (ids above the mark, read in the same statement), summed in SQL. Hours from
    `since` to `until`, plus the `history` ranges [lo, hi). Counters in one statement, the extra
    counters (JSON) in a second one, over the rows that have any. Only the objects of `targets`
    when given."""
    dialect = session.get_bind().dialect.name
    mark = rolled_up_mark(session)
    enabled = (
        select(DbObject.id).join(Target, Target.id == DbObject.target_id).where(Target.enabled.is_(True))
    )
    if targets is not None:
        enabled = enabled.where(Target.id.in_(targets))
    lo, hi, *edges = _instants(session, since, until, *(t for r in history for t in r))
    ranges = list(zip(edges[::2], edges[1::2], strict=True))

    def where(src: Any, at: Any) -> list[ColumnElement[bool]]:
        window = or_(and_(at >= lo, at <= hi), *(and_(at >= a, at < b) for a, b in ranges))
        w = [window, src.object_id.in_(enabled)]
        return [not_rolled_up(mark), *w] if src is IoInterval else w

    def branch(src: Any, at: Any) -> Select[Any]:
        cols = [getattr(src, c).label(c) for c in ("seconds", *COUNTER_COLUMNS)]
        hour = _hour_of(src, at, dialect).label("hour")
        return select(src.object_id.label("object_id"), hour, *cols).where(*where(src, at))

    u = union_all(branch(IoInterval, IoInterval.end_time), branch(HourlyRollup, HourlyRollup.hour)).subquery()
    keys = [u.c.object_id, u.c.hour]
    # SUM of BIGINT is NUMERIC on PostgreSQL (Decimal in Python): back to BIGINT in SQL
    sums = [func.sum(u.c.seconds), *(cast(func.sum(u.c[c]), BigInteger) for c in COUNTER_COLUMNS)]
    hours = _Hours()
    out: dict[int, dict[datetime, _Bucket]] = defaultdict(dict)
    for oid, raw, secs, *vals in session.execute(select(*keys, *sums).group_by(*keys)):
        out[oid][hours[raw]] = (secs or 0.0, dict(zip(COUNTER_COLUMNS, vals, strict=True)), {})

    def extra_branch(src: Any, at: Any) -> Select[Any]:
        kv = _json_pairs(src.extra, dialect)
        return (
            select(
                src.object_id.label("object_id"),
                _hour_of(src, at, dialect).label("hour"),
                kv.c.key.label("name"),
                cast(kv.c.value, BigInteger).label("value"),
            )
            .select_from(src, kv)
            # most rows have none ("{}" as stored): not parsed at all
            .where(cast(src.extra, Text) != "{}", *where(src, at))
        )

    x = union_all(
        extra_branch(IoInterval, IoInterval.end_time), extra_branch(HourlyRollup, HourlyRollup.hour)
    ).subquery()
    xkeys = [x.c.object_id, x.c.hour, x.c.name]
    total = cast(func.sum(x.c.value), BigInteger)
    for row in session.execute(select(*xkeys, total.label("value")).group_by(*xkeys)):
        bucket = out.get(row.object_id, {}).get(hours[row.hour])
        if bucket is not None:  # (an interval stored between the two statements)
            bucket[2][row.name] = row.value
    return out


def _total(buckets: list[_Bucket]) -> _Bucket:
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


@dataclass(frozen=True)
class DataEnd:
    """A target whose newest sample is older than the everyday window: it is judged on the window
    that ends at its newest sample, and every figure says so."""

    target_id: int
    newest: datetime

    def note(self, now: datetime, window_days: float) -> str:
        age = now - self.newest
        days = age.total_seconds() / 86400
        old = f"{days:.0f} days old" if days >= 2 else f"{age.total_seconds() / 3600:.0f} hours old"
        return (
            f"data up to {self.newest:%Y-%m-%d %H:%M} UTC, {old}: judged on the {window_days:g}-day "
            "window ending at the newest sample, not on the last days"
        )


def newest_samples(session: Session) -> dict[int, datetime]:
    """Each enabled target's newest interval end, from the raw intervals and the hourly roll-ups
    (raw intervals may be past retention), one index lookup per object."""
    out: dict[int, datetime] = {}
    for src, at, pad in ((IoInterval, IoInterval.end_time, timedelta(0)), (HourlyRollup, HourlyRollup.hour,
                                                                           timedelta(hours=1))):  # fmt: skip
        latest = (
            select(func.max(at)).where(src.object_id == DbObject.id).correlate(DbObject).scalar_subquery()
        )
        rows = session.execute(
            select(DbObject.target_id, func.max(latest))
            .join(Target, Target.id == DbObject.target_id)
            .where(Target.enabled.is_(True))
            .group_by(DbObject.target_id)
        )
        for tid, raw in rows:
            if raw is None:
                continue
            t = (datetime.fromisoformat(raw) if isinstance(raw, str) else raw).replace(tzinfo=UTC) + pad
            out[tid] = max(out.get(tid, t), t)
    return out


def server_owners(session: Session, newest: dict[int, datetime]) -> dict[tuple[str, str], int]:
    """The one target whose objects the advice reads, for each server that more than one enabled
    target holds (files imported before the server was polled, or an old import target): a polled
    target before an import target, then the one with the newest data. Both would otherwise count
    the same files' I/O and GB twice."""
    rows = session.execute(
        select(DbObject.engine, DbObject.server, Target.id, Target.source)
        .join(Target, Target.id == DbObject.target_id)
        .where(Target.enabled.is_(True))
        .distinct()
    ).all()
    by_server: dict[tuple[str, str], list[tuple[int, str]]] = defaultdict(list)
    for engine, server, tid, source in rows:
        by_server[(engine, server)].append((tid, source))
    floor = datetime.min.replace(tzinfo=UTC)
    return {
        key: max(ts, key=lambda t: (t[1] != "import", newest.get(t[0], floor), t[0]))[0]
        for key, ts in by_server.items()
        if len(ts) > 1
    }


def everyday_start(policy: Policy, now: datetime) -> datetime:
    return window_start(now, max(math.ceil(24 * policy.window_days), 1))


def stale_targets(newest: dict[int, datetime], policy: Policy, now: datetime) -> list[DataEnd]:
    since = everyday_start(policy, now)
    return [DataEnd(tid, t) for tid, t in sorted(newest.items()) if t < since]


def windows_from_store(
    session: Session, policy: Policy, *, now: datetime, newest: dict[int, datetime] | None = None
) -> tuple[list[ObjectWindow], dict[tuple[str, str], int]]:
    """One window per object with hourly buckets (labelled by the hour the intervals ended in),
    summed in SQL from the hourly roll-ups and the intervals not rolled up yet.

    The everyday window is the last `window_days` × 24 hours: the current hour and the ones before
    it (whole hours, as the roll-ups are). A target whose newest sample is older than that (files
    collected weeks ago and imported now) is judged on the window of the same length that ends at
    its newest sample (returned as a DataEnd), never on nothing. When the policy declares business
    periods, the buckets of each period's last completed occurrence are added even when it is
    older (roll-ups are kept 400 days): only those hours, so advisors.maintenance.split_period
    judges the period on them while every other figure still comes from the everyday window. An
    object needs at least one bucket in its everyday window to be advised."""
    hours = max(math.ceil(24 * policy.window_days), 1)
    since = everyday_start(policy, now)
    newest = newest_samples(session) if newest is None else newest
    stale = stale_targets(newest, policy, now)
    owners = server_owners(session, newest)
    groups: list[tuple[datetime, list[int] | None]] = []
    if stale:
        groups.append((now, [tid for tid, t in newest.items() if t >= since]))
        by_end: dict[datetime, list[int]] = defaultdict(list)
        for d in stale:
            by_end[d.newest].append(d.target_id)
        groups.extend(sorted(by_end.items()))
    else:
        groups.append((now, None))
    windows: list[ObjectWindow] = []
    target_by_server: dict[tuple[str, str], int] = {}
    # hundreds of thousands of small dicts and tuples, none cyclic: the cyclic collector's passes
    # over them were a third of the time (measured); it runs again when done
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for end, targets in groups:
            if targets is not None and not targets:
                continue
            start = window_start(end, hours)
            history = [o for o in period_history(policy, end) if o.start < start]
            # a bucket is labelled with its hour and judged by its middle: read an hour more each side
            ranges = [(o.start - timedelta(hours=1), o.end + timedelta(hours=1)) for o in history]
            w, t = _windows(session, policy, now=end, since=start, history=history, ranges=ranges,
                            targets=targets, owners=owners)  # fmt: skip
            windows.extend(w)
            target_by_server.update(t)
    finally:
        if gc_was_enabled:
            gc.enable()
    return windows, target_by_server


def _windows(
    session: Session,
    policy: Policy,
    *,
    now: datetime,
    since: datetime,
    history: list[PastOccurrence],
    ranges: list[tuple[datetime, datetime]],
    targets: list[int] | None,
    owners: dict[tuple[str, str], int],
) -> tuple[list[ObjectWindow], dict[tuple[str, str], int]]:
    sums = _bucket_sums(session, since=since, until=now, history=ranges, targets=targets)
    objects = {
        o.id: o for o in session.scalars(select(DbObject).join(Target).where(Target.enabled.is_(True)))
    }
    # the few distinct hours, ranked once (one datetime object per hour: _Hours)
    rank = {h: i for i, h in enumerate(sorted({h for hours in sums.values() for h in hours}))}
    everyday = {h for h in rank if since <= h <= now}
    period_hours = {h for h in rank if h not in everyday and in_history(history, h)}
    windows: list[ObjectWindow] = []
    target_by_server: dict[tuple[str, str], int] = {}
    for oid, hours in sums.items():
        o = objects.get(oid)
        if o is None or owners.get((o.engine, o.server), o.target_id) != o.target_id:
            continue  # gone, or a server that another target holds (one target per server)
        kept = sorted(hours.items(), key=lambda hb: rank[hb[0]])
        if history:
            if not any(h in everyday for h in hours):
                continue  # only older history: not in the window
            kept = [(h, b) for h, b in kept if h in everyday or h in period_hours]
        target_by_server[(o.engine, o.server)] = o.target_id
        where = {"physical_name": o.physical_name, "storage_group": o.storage_group}
        pool = policy.pool_of(server=o.server, engine=o.engine, **where)
        info = ObjectInfo(
            key=o.key,
            engine=o.engine,
            server=o.server,
            database=o.database,
            kind=o.kind,
            name=o.name,
            size_bytes=o.size_bytes,
            current_tier=policy.tier_of_location(engine=o.engine, pool=pool, **where),
            location_since=o.location_since,
            pool=pool,
            **{f: getattr(o, f) for f in INFO_FIELDS},
        )
        secs, counters, x = _total([b for _, b in kept])
        by_hour = tuple((h, Usage(s, c, xx)) for h, (s, c, xx) in kept)
        windows.append(ObjectWindow(info, Usage(secs, counters, x), by_hour))
    return windows, target_by_server


def _refresh_ilm(session: Session, report: AdviceReport, policy: Policy, now: datetime) -> None:
    """Re-plan partition lifecycles once a day and record what changed since the last plan."""
    latest = session.scalar(select(IlmPlanRecord).order_by(IlmPlanRecord.id.desc()).limit(1))
    if latest is not None and now - latest.created_at < timedelta(hours=20):
        return
    doc = plan_json(make_plan(report, policy, now=now, months=None))
    if not doc["tables"] and latest is None:
        return
    changes = plan_changes(latest.plan if latest is not None else None, doc)
    session.add(IlmPlanRecord(created_at=now, plan=doc, changes=changes))
    if changes:
        log.info("ILM plan re-evaluated: %d partitions' next move changed", len(changes))


# The flash curve per database: points x the solver's time limit per point bounds its cost
# (measured: docs/web-ui.md, "How much flash").
CURVE_POINTS = 8
CURVE_POINT_TIME_LIMIT_S = 0.25


def curve_json(c: DatabaseCurve) -> dict[str, Any]:
    return {
        "engine": c.engine,
        "server": c.server,
        "database": c.database,
        "points": [[round(g, 2), round(v, 4)] for g, v in c.points],
        "units": c.units,
        "note": c.note,
        "pool": c.pool,
        "flash_tier": c.flash_tier,
        "savings": {
            "flash_gb_recommended": round(c.flash_gb_recommended, 2),
            "io_ms_per_s_now": round(c.io_ms_per_s_now, 1),
            "io_ms_per_s_after": round(c.io_ms_per_s_after, 1),
            "io_ms_per_s_saved": round(c.io_ms_per_s_now - c.io_ms_per_s_after, 1),
        },
    }


def store_snapshots(
    session: Session,
    target_by_server: dict[tuple[str, str], int],
    objects: list[dict[str, Any]],
    curves: list[DatabaseCurve],
    notes: list[str],
    now: datetime,
    target_notes: dict[int, list[str]] | None = None,
    unknown: list[dict[str, Any]] | None = None,
) -> int:
    """One AdviceSnapshot per target (replaced every run): every object's advice JSON, moved or
    not, the flash curve of each of its databases, and the locations that match no tier of their
    pool (advice JSON's unknown_locations)."""
    by_target: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for o in objects:
        tid = target_by_server.get((o["engine"], o["server"]))
        if tid is not None:
            by_target[tid].append(o)
    unknown_by_target: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for u in unknown or []:
        tid = target_by_server.get((u["engine"], u["server"]))
        if tid is not None:
            unknown_by_target[tid].append(u)
            by_target.setdefault(tid, [])
    curves_by_target: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for c in curves:
        tid = target_by_server.get((c.engine, c.server))
        if tid is not None:
            curves_by_target[tid].append(curve_json(c))
    for tid, objs in by_target.items():
        snap = session.get(AdviceSnapshot, tid)
        if snap is None:
            snap = AdviceSnapshot(target_id=tid, evaluated_at=now)
            session.add(snap)
        snap.evaluated_at = now
        snap.objects = objs
        snap.flash_curve = curves_by_target.get(tid, [])
        snap.notes = [*(target_notes or {}).get(tid, []), *notes]
        snap.unknown_locations = unknown_by_target.get(tid, [])
    return len(by_target)


@dataclass(frozen=True)
class Evaluation:
    """What one advice run found, for `tierwise evaluate` and the logs."""

    sync: SyncResult
    objects: int = 0
    moves: int = 0
    io_ms_per_s_now: float = 0.0
    io_ms_per_s_after: float = 0.0
    # per target name: objects whose location matches no tier of their pool (left out of the placement)
    unknown_locations: dict[str, int] = field(default_factory=dict)
    # per target name: those locations, as the advice JSON's unknown_locations entries
    unknown_detail: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    # per target name: the data-end note of a target judged on an older window
    data_ends: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class PoolEvaluation:
    """One storage pool's advice and flash curves per database."""

    report: AdviceReport
    curves: list[DatabaseCurve]
    curve_seconds: float


def evaluate_pool(
    windows: list[ObjectWindow], policy: Policy, pool: str, *, now: datetime, time_limit_s: float = 10.0
) -> PoolEvaluation:
    """The advice of one pool (its windows from advisors.pools.split_by_pool): a unit of work on
    its own, touching no store, so pools can be evaluated one by one or apart."""
    report = advise_pool(windows, policy, pool=pool, now=now, time_limit_s=time_limit_s, curve_points=0)
    t0 = time.perf_counter()
    curves = database_curves(report, policy, points=CURVE_POINTS, time_limit_s=CURVE_POINT_TIME_LIMIT_S)
    return PoolEvaluation(report, curves, time.perf_counter() - t0)


def evaluate(store: Store, policy: Policy, *, now: datetime, time_limit_s: float = 10.0) -> Evaluation:
    """Re-run the advice over every enabled target, update the stored recommendations and keep
    each target's evidence and flash curves (AdviceSnapshot)."""
    with store.session() as s:
        seen = data_versions(s)  # before the data: what changes meanwhile is advised next time
        newest = newest_samples(s)
        windows, target_by_server = windows_from_store(s, policy, now=now, newest=newest)
        names = {tid: name for tid, name in s.execute(select(Target.id, Target.name))}
    stale = stale_targets(newest, policy, now)
    target_notes = {d.target_id: [d.note(now, policy.window_days)] for d in stale}
    if not windows:
        with store.session() as s:
            mark_advised(s, seen, now)
        return Evaluation(SyncResult(0, 0, 0, 0))
    split = split_by_pool(windows, policy.pool_names())
    parts = [
        evaluate_pool(ws, policy, pool, now=now, time_limit_s=time_limit_s)
        for pool, ws in split.by_pool.items()
    ]
    report = join_reports([p.report for p in parts], policy, split.unknown)
    doc = report_json(report, policy)
    curves = [c for p in parts for c in p.curves]
    curve_s = sum(p.curve_seconds for p in parts)
    with store.session() as s:
        result = sync_recommendations(s, target_by_server, doc["objects"], now)
        store_snapshots(s, target_by_server, doc["objects"], curves, list(report.notes), now, target_notes,
                        doc["unknown_locations"])  # fmt: skip
        _refresh_ilm(s, report, policy, now)
        mark_advised(s, seen, now)
    log.info("flash curves: %d databases in %.2f s", len(curves), curve_s)
    log.info(
        "advice evaluated: %d created, %d updated, %d superseded, %d withdrawn",
        result.created,
        result.updated,
        result.superseded,
        result.withdrawn,
    )
    unknown: dict[str, int] = defaultdict(int)
    detail: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for u in doc["unknown_locations"]:
        tid = target_by_server.get((u["engine"], u["server"]))
        if tid is not None:
            unknown[names[tid]] += u["objects"]
            detail[names[tid]].append(u)
    summary = doc["summary"]
    return Evaluation(
        sync=result,
        objects=summary["objects"],
        moves=summary["moves"],
        io_ms_per_s_now=summary["io_ms_per_s_now"],
        io_ms_per_s_after=summary["io_ms_per_s_after"],
        unknown_locations=dict(sorted(unknown.items())),
        unknown_detail=dict(sorted(detail.items())),
        data_ends={names[d.target_id]: target_notes[d.target_id][0] for d in stale if d.target_id in names},
    )
