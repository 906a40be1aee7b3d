"""Advice from the store: the last window of intervals per object -> advisors -> recommendations."""

from __future__ import annotations

import gc
import logging
import math
import time
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from advisors.advise import AdviceReport, DatabaseCurve, advise_pool, database_curves, join_reports
from advisors.features import ObjectInfo, ObjectWindow, hour_times
from advisors.pools import CONFLICT_SEP, placed, split_by_pool
from advisors.units import PLACEABLE
from app.advice import PastOccurrence, in_history, period_history, report_json, unknown_json
from app.ilm import make_plan, plan_changes, plan_json
from app.store.anchor import Anchors, age
from app.store.anchor import anchors as anchor_of
from app.store.db import Store
from app.store.models import (
    AdviceSnapshot,
    DbObject,
    IlmPlanRecord,
    Target,
)
from app.store.recommendations import SyncResult, sync_recommendations
from app.store.watermarks import (
    data_versions,
    mark_advised,
    mark_pools_advised,
)
from app.store.window_read import window_usage
from connectors.records import LOCATION_FIELDS
from policies.model import DEFAULT_POOL, Policy

log = logging.getLogger("tierwise.evaluate")


@dataclass(frozen=True)
class DataEnd:
    """A target whose newest sample is over a day old (app/store/anchor.OLD_AFTER): it is judged,
    as every target is, on the window that ends at its newest sample, and every figure says how old."""

    target_id: int
    newest: datetime

    def note(self, now: datetime, window_days: float) -> str:
        return (
            f"data up to {self.newest:%Y-%m-%d %H:%M} UTC, {age(self.newest, now)}: judged on the {window_days:g}-day "
            "window ending at the newest sample, not on the last days"
        )


@contextmanager
def without_cyclic_gc() -> Iterator[None]:
    """The cyclic garbage collector off while a window is read and advised: the window is millions
    of small dicts and tuples, none of them cyclic, and each full pass of the collector walks them
    all (measured on bench.evaluate_fleet: a sixth of a pool's evaluation, 36 s -> 30 s). Objects
    are still freed by reference counting; the collector runs again on exit. Nested uses leave it
    to the outermost."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def server_owners(
    session: Session, newest: dict[int, datetime], targets: list[int] | None = None
) -> dict[tuple[str, str], int]:
    """The one target whose objects the advice reads, for each server that more than one enabled
    target holds (files imported before the server was polled, or an old import target): a polled
    target before an import target, then the one with the newest data. Both would otherwise count
    the same files' I/O and GB twice. Only the servers of `targets` when given (`newest` must then
    hold every target of those servers)."""
    q = (
        select(DbObject.engine, DbObject.server, Target.id, Target.source)
        .join(Target, Target.id == DbObject.target_id)
        .where(Target.enabled.is_(True))
        .distinct()
    )
    if targets is not None:
        q = q.where(DbObject.server.in_(select(DbObject.server).where(DbObject.target_id.in_(targets))))
    rows = session.execute(q).all()
    by_server: dict[tuple[str, str], list[tuple[int, str]]] = defaultdict(list)
    for engine, server, tid, source in rows:
        by_server[(engine, server)].append((tid, source))
    floor = datetime.min.replace(tzinfo=UTC)
    return {
        key: max(ts, key=lambda t: (t[1] != "import", newest.get(t[0], floor), t[0]))[0]
        for key, ts in by_server.items()
        if len(ts) > 1
    }


def old_data(anchors: Anchors) -> list[DataEnd]:
    """The targets whose newest sample is over a day old: their figures say how old."""
    return [DataEnd(tid, t) for tid, t in anchors.old().items()]


def windows_from_store(
    session: Session,
    policy: Policy,
    *,
    now: datetime,
    anchors: Anchors | None = None,
    targets: list[int] | None = None,
) -> tuple[list[ObjectWindow], dict[tuple[str, str], int]]:
    """One window per object with hourly buckets (labelled by the hour the intervals ended in),
    summed in SQL from the hourly roll-ups and the intervals not rolled up yet.

    A target's window is the `window_days` × 24 whole hours ending with the hour of its newest
    sample (app/store/anchor.py): a polled target's ends now, files collected weeks ago and
    imported now are judged on the window that ends at their newest sample (old_data says so),
    never on nothing. When the policy declares business periods, the buckets of each period's last
    completed occurrence are added even when it is older (roll-ups are kept 400 days): only those
    hours, so advisors.maintenance.split_period judges the period on them while every other figure
    still comes from the everyday window. An object needs at least one bucket in its everyday
    window to be advised.

    Only the objects of `targets` when given (one storage pool's targets: app/pool_runs)."""
    hours = max(math.ceil(24 * policy.window_days), 1)
    if anchors is None:
        anchors = anchor_of(session, now)
    owners = server_owners(session, dict(anchors.newest), targets)
    groups = anchors.groups(hours, targets)
    windows: list[ObjectWindow] = []
    target_by_server: dict[tuple[str, str], int] = {}
    with without_cyclic_gc():
        for g in groups:
            # one group holding every target with data is read without a list of targets
            ids = None if targets is None and len(groups) == 1 else list(g.target_ids)
            history = [o for o in period_history(policy, g.until) if o.start < g.since]
            # a bucket is labelled with its hour and judged by its middle: read an hour more each side
            ranges = [(o.start - timedelta(hours=1), o.end + timedelta(hours=1)) for o in history]
            w, t = _windows(session, policy, now=g.until, since=g.since, history=history, ranges=ranges,
                            targets=ids, owners=owners)  # fmt: skip
            windows.extend(w)
            target_by_server.update(t)
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
    def keep(h: datetime) -> bool:
        """An hour of the everyday window, or of a business period's occurrence (asked once per
        distinct hour)."""
        return since <= h <= now or in_history(history, h)

    usage = window_usage(session, since=since, until=now, history=ranges, targets=targets,
                         keep=keep if history else None)  # fmt: skip
    mine = select(DbObject).join(Target).where(Target.enabled.is_(True))
    if targets is not None:
        mine = mine.where(Target.id.in_(targets))
    objects = {o.id: o for o in session.scalars(mine)}
    windows: list[ObjectWindow] = []
    target_by_server: dict[tuple[str, str], int] = {}
    # a server's pool, matched once per server (per location only when a pool splits servers):
    # 100 pools' glob patterns per object were seconds on a large fleet
    by_location = any(p.splits for p in policy.pools)
    pools: dict[tuple[str | None, ...], str] = {}
    # by object id: the placement's answer may depend on the windows' order (ties), which must not
    # follow the order the read's plan happens to return rows in
    for oid in sorted(usage):
        total, by_hour = usage[oid]
        o = objects.get(oid)
        if o is None or owners.get((o.engine, o.server), o.target_id) != o.target_id:
            continue  # gone, or a server that another target holds (one target per server)
        if history:
            times = hour_times(by_hour)
            first = bisect_left(times, since)  # hours are in order
            if first == len(times) or times[first] > now:
                continue  # only older history: not in the window
        target_by_server[(o.engine, o.server)] = o.target_id
        where = {"physical_name": o.physical_name, "storage_group": o.storage_group}
        spot = (o.engine, o.server, o.physical_name, o.storage_group) if by_location else (o.engine, o.server)
        pool = pools.get(spot)
        if pool is None:
            pool = pools[spot] = placed(policy, server=o.server, engine=o.engine, **where)[0]
        info = ObjectInfo(
            key=o.key,
            engine=o.engine,
            server=o.server,
            database=o.database,
            kind=o.kind,
            name=o.name,
            size_bytes=o.size_bytes,
            # an object two pools take has no tier: split_by_pool leaves it out and lists it
            current_tier=None
            if CONFLICT_SEP in pool
            else policy.tier_of_location(engine=o.engine, pool=pool, **where),
            location_since=o.location_since,
            pool=pool,
            **{f: getattr(o, f) for f in LOCATION_FIELDS},
        )
        windows.append(ObjectWindow(info, total, by_hour))
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


@without_cyclic_gc()
def evaluate(store: Store, policy: Policy, *, now: datetime, time_limit_s: float = 10.0) -> Evaluation:
    """Re-run the advice over every enabled target, update the stored recommendations and keep
    each target's evidence and flash curves (AdviceSnapshot)."""
    with store.session() as s:
        seen = data_versions(s)  # before the data: what changes meanwhile is advised next time
        anchors = anchor_of(s, now)
        windows, target_by_server = windows_from_store(s, policy, now=now, anchors=anchors)
        names = {tid: name for tid, name in s.execute(select(Target.id, Target.name))}
    stale = old_data(anchors)
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
        mark_pools_advised(s, policy, seen, now)
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


# --- one storage pool at a time (the hourly job and the collector workers) ---------------------


def store_pool_snapshots(
    session: Session,
    pool: str,
    target_by_server: dict[tuple[str, str], int],
    doc: dict[str, Any],
    curves: list[DatabaseCurve],
    notes: list[str],
    now: datetime,
    target_notes: dict[int, list[str]],
) -> None:
    """store_snapshots within one pool: each target's objects, curves and unknown locations of
    `pool` are replaced, those of its other pools kept (a server split across arrays)."""
    mine = set(target_by_server.values())
    fresh: dict[int, dict[str, list[Any]]] = {t: {"objects": [], "curves": [], "unknown": []} for t in mine}
    for name, items in (("objects", doc["objects"]), ("unknown", doc["unknown_locations"])):
        for o in items:
            tid = target_by_server.get((o["engine"], o["server"]))
            if tid is not None:
                fresh[tid][name].append(o)
    for c in curves:
        tid = target_by_server.get((c.engine, c.server))
        if tid is not None:
            fresh[tid]["curves"].append(curve_json(c))

    def others(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [i for i in items if (i.get("pool") or DEFAULT_POOL) != pool]

    prefix = f"pool {pool}: "
    for tid in sorted(mine):
        snap = session.get(AdviceSnapshot, tid)
        if snap is None:
            snap = AdviceSnapshot(target_id=tid, evaluated_at=now, objects=[], flash_curve=[], notes=[],
                                  unknown_locations=[])  # fmt: skip
            session.add(snap)
        kept_notes = [n for n in snap.notes or [] if n.startswith("pool ") and not n.startswith(prefix)]
        snap.evaluated_at = now
        snap.objects = [*others(snap.objects or []), *fresh[tid]["objects"]]
        snap.flash_curve = [*others(snap.flash_curve or []), *fresh[tid]["curves"]]
        snap.unknown_locations = [*others(snap.unknown_locations or []), *fresh[tid]["unknown"]]
        snap.notes = [*target_notes.get(tid, []), *kept_notes, *notes]


@dataclass(frozen=True)
class PoolRun:
    """One pool's evaluation: its figures, or the error that stopped it."""

    pool: str
    sync: SyncResult = field(default_factory=lambda: SyncResult(0, 0, 0, 0))
    objects: int = 0
    moves: int = 0
    seconds: float = 0.0
    error: str | None = None
    # where `seconds` went: reading the windows, advising (placement, curves, the evidence
    # documents), storing (recommendations, snapshots, the commit)
    read_s: float = 0.0
    advise_s: float = 0.0
    store_s: float = 0.0


@without_cyclic_gc()
def advise_pool_in_store(
    store: Store,
    policy: Policy,
    pool: str,
    targets: list[int],
    *,
    now: datetime,
    time_limit_s: float = 10.0,
    before_store: Callable[[Session, dict[int, int]], None] | None = None,
) -> PoolRun:
    """Evaluate one pool and store its advice: read the windows of its targets only, place its
    units (split_by_pool keeps a unit split across pools out, as the whole-fleet run does), and
    sync its recommendations and snapshot entries only. `before_store` runs first in the storing
    transaction (the lease check: it may raise to drop the result)."""
    t0 = time.perf_counter()
    with store.session() as s:
        seen = {t: v for t, v in data_versions(s).items() if t in set(targets)}
        anchors = anchor_of(s, now, targets)
        windows, target_by_server = windows_from_store(s, policy, now=now, anchors=anchors, targets=targets)
    t_read = time.perf_counter()
    stale = old_data(anchors)
    target_notes = {d.target_id: [d.note(now, policy.window_days)] for d in stale}
    split = split_by_pool(windows, policy.pool_names())
    unknown = tuple(u for u in split.unknown if u.pool == pool)
    ws = split.by_pool.get(pool)
    curves: list[DatabaseCurve] = []
    notes: list[str] = []
    if ws and any(w.info.kind in PLACEABLE for w in ws):
        part = evaluate_pool(ws, policy, pool, now=now, time_limit_s=time_limit_s)
        report = join_reports([part.report], policy, unknown)
        doc = report_json(report, policy)
        curves = part.curves
        notes = [f"pool {pool}: {n}" if policy.pools else n for n in report.notes]
    else:
        doc = {
            "objects": [],
            "unknown_locations": [unknown_json(u) for u in unknown],
            "summary": {"moves": 0},
        }
    t_advise = time.perf_counter()
    with store.session() as s:
        if before_store is not None:
            before_store(s, seen)
        result = sync_recommendations(s, target_by_server, doc["objects"], now, pool=pool)
        store_pool_snapshots(s, pool, target_by_server, doc, curves, notes, now, target_notes)
        mark_advised(s, seen, now)
    t_end = time.perf_counter()
    read_s, advise_s, store_s = t_read - t0, t_advise - t_read, t_end - t_advise
    log.info("pool %s evaluated: %d objects, %d created, %d updated, %d superseded, %d withdrawn, "
             "in %.1f s (read %.1f s, advise %.1f s, store %.1f s)",
             pool, len(doc["objects"]), result.created, result.updated, result.superseded, result.withdrawn,
             t_end - t0, read_s, advise_s, store_s)  # fmt: skip
    return PoolRun(pool, result, len(doc["objects"]), int(doc["summary"]["moves"]), t_end - t0,
                   read_s=read_s, advise_s=advise_s, store_s=store_s)  # fmt: skip
