"""Advice from the store: the last window of intervals per object -> advisors -> recommendations."""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from advisors.advise import AdviceReport, DatabaseCurve, advise, database_curves
from advisors.features import ObjectInfo, ObjectWindow, Usage
from app.advice import INFO_FIELDS, report_json
from app.ilm import make_plan, plan_changes, plan_json
from app.store.db import Store
from app.store.models import COUNTER_COLUMNS, AdviceSnapshot, DbObject, IlmPlanRecord, IoInterval, Target
from app.store.recommendations import SyncResult, sync_recommendations
from policies.model import Policy

log = logging.getLogger("tierwise.evaluate")


_Acc = tuple[float, dict[str, int | None], dict[str, int]]


def _accumulate(acc: _Acc | None, iv: IoInterval) -> _Acc:
    secs, counters, extra = acc if acc is not None else (0.0, {}, {})
    for c in COUNTER_COLUMNS:
        v = getattr(iv, c)
        if v is None:
            counters.setdefault(c, None)
        else:
            counters[c] = (counters.get(c) or 0) + v
    for k, v in (iv.extra or {}).items():
        extra[k] = extra.get(k, 0) + v
    return secs + iv.seconds, counters, extra


def windows_from_store(
    session: Session, policy: Policy, *, now: datetime
) -> tuple[list[ObjectWindow], dict[tuple[str, str], int]]:
    """One window per object over the policy's window, with hourly buckets (by interval end)."""
    since = now - timedelta(days=policy.window_days)
    objects = {
        o.id: o for o in session.scalars(select(DbObject).join(Target).where(Target.enabled.is_(True)))
    }
    totals: dict[int, _Acc] = {}
    hours: dict[int, dict[datetime, _Acc]] = defaultdict(dict)
    rows = session.scalars(
        select(IoInterval)
        .where(IoInterval.end_time > since, IoInterval.end_time <= now)
        .order_by(IoInterval.id)
    )
    for iv in rows:
        if iv.object_id not in objects:
            continue
        hour = iv.end_time.replace(minute=0, second=0, microsecond=0)
        totals[iv.object_id] = _accumulate(totals.get(iv.object_id), iv)
        hours[iv.object_id][hour] = _accumulate(hours[iv.object_id].get(hour), iv)
    windows: list[ObjectWindow] = []
    target_by_server: dict[tuple[str, str], int] = {}
    for oid, (secs, counters, extra) in totals.items():
        o = objects[oid]
        target_by_server[(o.engine, o.server)] = o.target_id
        info = ObjectInfo(
            key=o.key,
            engine=o.engine,
            server=o.server,
            database=o.database,
            kind=o.kind,
            name=o.name,
            size_bytes=o.size_bytes,
            current_tier=policy.tier_of_location(
                engine=o.engine, physical_name=o.physical_name, storage_group=o.storage_group
            ),
            location_since=o.location_since,
            **{f: getattr(o, f) for f in INFO_FIELDS},
        )
        by_hour = tuple((h, Usage(s, c, x)) for h, (s, c, x) in sorted(hours[oid].items()))
        windows.append(ObjectWindow(info, Usage(secs, counters, extra), by_hour))
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
) -> int:
    """One AdviceSnapshot per target (replaced every run): every object's advice JSON, moved or
    not, and the flash curve of each of its databases."""
    by_target: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for o in objects:
        tid = target_by_server.get((o["engine"], o["server"]))
        if tid is not None:
            by_target[tid].append(o)
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
        snap.notes = list(notes)
    return len(by_target)


def evaluate(store: Store, policy: Policy, *, now: datetime, time_limit_s: float = 10.0) -> SyncResult:
    """Re-run the advice over every enabled target, update the stored recommendations and keep
    each target's evidence and flash curves (AdviceSnapshot)."""
    with store.session() as s:
        windows, target_by_server = windows_from_store(s, policy, now=now)
    if not windows:
        return SyncResult(0, 0, 0, 0)
    report = advise(windows, policy, now=now, time_limit_s=time_limit_s, curve_points=0)
    doc = report_json(report, policy)
    t0 = time.perf_counter()
    curves = database_curves(report, policy, points=CURVE_POINTS, time_limit_s=CURVE_POINT_TIME_LIMIT_S)
    curve_s = time.perf_counter() - t0
    with store.session() as s:
        result = sync_recommendations(s, target_by_server, doc["objects"], now)
        store_snapshots(s, target_by_server, doc["objects"], curves, list(report.notes), now)
        _refresh_ilm(s, report, policy, now)
    log.info("flash curves: %d databases in %.2f s", len(curves), curve_s)
    log.info(
        "advice evaluated: %d created, %d updated, %d superseded, %d withdrawn",
        result.created,
        result.updated,
        result.superseded,
        result.withdrawn,
    )
    return result
