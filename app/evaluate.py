"""Advice from the store: the last window of intervals per object -> advisors -> recommendations."""

from __future__ import annotations

import logging
from collections import defaultdict
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from advisors.advise import AdviceReport, advise
from advisors.features import ObjectInfo, ObjectWindow, Usage
from app.advice import INFO_FIELDS, report_json
from app.ilm import make_plan, plan_changes, plan_json
from app.store.db import Store
from app.store.models import COUNTER_COLUMNS, DbObject, IlmPlanRecord, IoInterval, Target
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


def evaluate(store: Store, policy: Policy, *, now: datetime, time_limit_s: float = 10.0) -> SyncResult:
    """Re-run the advice over every enabled target and update the stored recommendations."""
    with store.session() as s:
        windows, target_by_server = windows_from_store(s, policy, now=now)
    if not windows:
        return SyncResult(0, 0, 0, 0)
    report = advise(windows, policy, now=now, time_limit_s=time_limit_s, curve_points=0)
    doc = report_json(report, policy)
    with store.session() as s:
        result = sync_recommendations(s, target_by_server, doc["objects"], now)
        _refresh_ilm(s, report, policy, now)
    log.info(
        "advice evaluated: %d created, %d updated, %d superseded, %d withdrawn",
        result.created,
        result.updated,
        result.superseded,
        result.withdrawn,
    )
    return result
