"""Verify after change, at the store's edge: open a verification when a move is marked executed or
when ingest sees an object's location change, and judge it once the after-window has passed.

The comparison itself is advisors/verify.py. This module gathers, per hour of day, the interval
counters of the moved placement unit (a filegroup's files summed, a log, a table space) and of the
other objects on the tier it joined, for the window before the change and the window after it.
Intervals that straddle the change are left out. The before side is stored at the first
evaluation, so raw-interval retention cannot take it away before the after-window is complete.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from advisors.advise import PLACEABLE, unit_key
from advisors.features import ObjectInfo
from advisors.verify import INCONCLUSIVE, REGRESSED, VERIFIED, ByHour, Change, HourTotals, Outcome, verify
from app.store.db import Store
from app.store.models import DbObject, IoInterval, Recommendation, ScriptRecord, Target, Verification
from policies.model import Policy, VerificationPolicy

log = logging.getLogger("tierwise.verify")

WAITING = "waiting"
STATUSES = (WAITING, VERIFIED, REGRESSED, INCONCLUSIVE)
# a relocation seen by ingest within this long of an executed move is that move, not another one
SAME_CHANGE = timedelta(days=2)
_FIELDS = ("seconds", "reads", "bytes_read", "read_time_ms", "writes", "bytes_written", "write_time_ms")


# ---- which objects a verification is about --------------------------------------------------


def unit_of(o: DbObject) -> str:
    """The placement unit an object moves with (its own key for partitions and loose objects)."""
    if o.kind == "partition":
        return o.key
    info = ObjectInfo(key=o.key, engine=o.engine, server=o.server, database=o.database, kind=o.kind,
                      name=o.name, filegroup=o.filegroup, tablespace=o.tablespace)  # fmt: skip
    return unit_key(info) or o.key


def _unit_name(o: DbObject, key: str) -> str:
    if key == o.key:
        return o.name
    return "tempdb" if o.kind == "tempdb" else (o.filegroup or key)


def members(session: Session, target_id: int, key: str) -> list[DbObject]:
    """The objects whose I/O is the unit's: the object itself, or a filegroup's (tempdb's) files."""
    objs = session.scalars(select(DbObject).where(DbObject.target_id == target_id))
    return [o for o in objs if o.key == key or (o.kind != "partition" and unit_of(o) == key)]


def _tier(policy: Policy, engine: str, loc: dict[str, Any] | DbObject) -> str | None:
    get = loc.get if isinstance(loc, dict) else (lambda f: getattr(loc, f))
    return policy.tier_of_location(engine=engine, physical_name=get("physical_name"),
                                   storage_group=get("storage_group"))  # fmt: skip


# ---- opening verifications --------------------------------------------------------------------


def _near(session: Session, target_id: int, key: str, when: datetime) -> Verification | None:
    return session.scalar(
        select(Verification)
        .where(
            Verification.target_id == target_id,
            Verification.key == key,
            Verification.changed_at >= when - SAME_CHANGE,
            Verification.changed_at <= when + SAME_CHANGE,
        )
        .order_by(Verification.id)
        .limit(1)
    )


def _predicted(rec: Recommendation) -> float | None:
    if rec.io_ms_per_s_now is None or rec.io_ms_per_s_after is None:
        return None
    return rec.io_ms_per_s_now - rec.io_ms_per_s_after


def open_for_executed(
    session: Session, rec: Recommendation, *, when: datetime, now: datetime
) -> Verification:
    """A waiting verification for a move marked executed. A relocation tierwise already saw within
    two days of it is the same change: it is linked to the recommendation (and keeps the time the
    move was observed) rather than counted twice."""
    v = _near(session, rec.target_id, rec.key, when)
    if v is not None and v.recommendation_id in (None, rec.id):
        v.recommendation_id, v.trigger = rec.id, "executed"
        v.from_tier, v.to_tier = rec.from_tier, rec.to_tier
        v.predicted_gain_ms_per_s = _predicted(rec)
        v.status = WAITING  # judged again (at the next run) against the recommendation's prediction
        return v
    v = Verification(target_id=rec.target_id, recommendation_id=rec.id, key=rec.key, name=rec.name,
                     trigger="executed", changed_at=when, from_tier=rec.from_tier, to_tier=rec.to_tier,
                     window_days=VerificationPolicy().window_days, status=WAITING,
                     predicted_gain_ms_per_s=_predicted(rec), before={}, after={}, reasons=[], created_at=now)  # fmt: skip
    session.add(v)
    session.flush()
    return v


def scan_relocations(session: Session, policy: Policy, *, now: datetime) -> list[Verification]:
    """A waiting verification for every relocation ingest recorded (`location_since`) that has none."""
    moved = session.scalars(
        select(DbObject)
        .join(Target)
        .where(Target.enabled.is_(True), DbObject.location_since.is_not(None))
        .order_by(DbObject.location_since, DbObject.id)
    )
    created: list[Verification] = []
    for o in moved:
        if o.kind not in PLACEABLE or o.location_since is None or o.location_since > now:
            continue
        key = unit_of(o)
        if _near(session, o.target_id, key, o.location_since) is not None:
            continue  # already verified, or another file of the same filegroup moved with it
        prev = o.previous_location or {}
        v = Verification(target_id=o.target_id, key=key, name=_unit_name(o, key), trigger="location_change",
                         changed_at=o.location_since, from_tier=_tier(policy, o.engine, prev),
                         to_tier=_tier(policy, o.engine, o), window_days=policy.verification.window_days,
                         status=WAITING, before={"previous_location": prev}, after={}, reasons=[],
                         created_at=now)  # fmt: skip
        session.add(v)
        session.flush()
        created.append(v)
    return created


# ---- gathering the two sides ------------------------------------------------------------------


def _chunks(ids: Sequence[int], n: int = 900) -> Iterable[Sequence[int]]:
    for i in range(0, len(ids), n):
        yield ids[i : i + n]


def hour_totals(session: Session, object_ids: Sequence[int], start: datetime, end: datetime) -> ByHour:
    """Counters of intervals wholly inside [start, end], per hour of day (by interval end), summed
    over days; the objects' counters add up, their covered seconds do not (they run side by side)."""
    per_object: dict[int, dict[int, list[float]]] = {}
    hour = func.extract("hour", IoInterval.end_time)
    sums = [func.coalesce(func.sum(getattr(IoInterval, f)), 0) for f in _FIELDS]
    for chunk in _chunks(list(object_ids)):
        rows = session.execute(
            select(IoInterval.object_id, hour, *sums)
            .where(
                IoInterval.object_id.in_(chunk),
                IoInterval.start_time >= start,
                IoInterval.end_time <= end,
            )
            .group_by(IoInterval.object_id, hour)
        )
        for oid, h, *values in rows:
            per_object.setdefault(oid, {})[int(h)] = [float(v) for v in values]
    out: dict[int, HourTotals] = {}
    for hours in per_object.values():
        for h, (secs, *counters) in hours.items():
            old = out.get(h, HourTotals())
            c = [int(x) for x in counters]
            out[h] = HourTotals(max(old.seconds, secs), old.reads + c[0], old.bytes_read + c[1],
                                old.read_time_ms + c[2], old.writes + c[3], old.bytes_written + c[4],
                                old.write_time_ms + c[5])  # fmt: skip
    return out


def _to_json(side: ByHour) -> dict[str, list[float]]:
    return {str(h): [getattr(t, f) for f in _FIELDS] for h, t in sorted(side.items())}


def _from_json(data: dict[str, list[float]] | None) -> ByHour:
    out = {}
    for h, v in (data or {}).items():
        out[int(h)] = HourTotals(float(v[0]), *(int(x) for x in v[1:]))
    return out


def tier_others(session: Session, policy: Policy, tier: str, exclude: set[int], since: datetime) -> list[int]:
    """Ids of the other objects now on a tier (files, logs, table spaces; not moved since `since`)."""
    rows = session.scalars(select(DbObject).join(Target).where(Target.enabled.is_(True)))
    return [
        o.id
        for o in rows
        if o.id not in exclude
        and o.kind in PLACEABLE
        and o.kind not in ("partition", "filegroup")
        and (o.location_since is None or o.location_since < since)
        and _tier(policy, o.engine, o) == tier
    ]


def _predict_from_tiers(policy: Policy, v: Verification, before: ByHour) -> float | None:
    """For a relocation nobody recommended: what the joined tier's service latencies predict."""
    from advisors.verify import figures

    if v.from_tier is None or v.to_tier is None or v.from_tier == v.to_tier:
        return None
    try:
        tier = policy.tier(v.to_tier)
    except KeyError:
        return None
    f = figures(before, range(24))
    return f.io_ms_per_s - (f.read_iops * tier.read_latency_ms + f.write_iops * tier.write_latency_ms)


def _expected(policy: Policy, name: str | None) -> tuple[float | None, float | None]:
    if name is None:
        return None, None
    try:
        t = policy.tier(name)
    except KeyError:
        return None, None
    r = t.read_latency_band_ms[1] if t.read_latency_band_ms else t.read_latency_ms
    w = t.write_latency_band_ms[1] if t.write_latency_band_ms else t.write_latency_ms
    return r, w


def evaluate_one(session: Session, v: Verification, policy: Policy, *, now: datetime) -> Outcome | None:
    vp = policy.verification
    if v.status == WAITING:
        v.window_days = vp.window_days
    window = timedelta(days=v.window_days)
    end = v.changed_at + window
    ids = [o.id for o in members(session, v.target_id, v.key)]
    if not ids:
        v.reasons = ["the moved object is no longer monitored"]
        v.status, v.evaluated_at = (INCONCLUSIVE if now >= end else WAITING), now
        return None
    before = dict(v.before or {})
    # a relocation is seen at the first poll after it: the interval ending there straddles the move
    before_end = v.changed_at - timedelta(seconds=1)
    if "hours" not in before:  # the before-window is complete: keep it, whatever retention does later
        before["hours"] = _to_json(hour_totals(session, ids, v.changed_at - window, before_end))
        if v.to_tier is not None:
            others = tier_others(session, policy, v.to_tier, set(ids), v.changed_at - window)
            before["tier_hours"] = _to_json(hour_totals(session, others, v.changed_at - window, before_end))
            before["tier_objects"] = others
        if v.recommendation_id is None and v.predicted_gain_ms_per_s is None:
            v.predicted_gain_ms_per_s = _predict_from_tiers(policy, v, _from_json(before["hours"]))
    after_end = min(now, end)
    after_hours = hour_totals(session, ids, v.changed_at, after_end)
    tier_after: ByHour | None = None
    if "tier_hours" in before:
        tier_after = hour_totals(session, before.get("tier_objects") or [], v.changed_at, after_end)
    exp_r, exp_w = _expected(policy, v.to_tier)
    change = Change(before=_from_json(before["hours"]), after=after_hours,
                    predicted_gain_ms_per_s=v.predicted_gain_ms_per_s, to_tier=v.to_tier,
                    tier_before=_from_json(before.get("tier_hours")) if "tier_hours" in before else None,
                    tier_after=tier_after, expected_read_ms=exp_r, expected_write_ms=exp_w,
                    window_days=v.window_days)  # fmt: skip
    out = verify(change, vp)
    before["figures"] = out.before.as_dict() if out.before else None
    before["tier_figures"] = out.tier_before.as_dict() if out.tier_before else None
    v.before = before
    v.after = {
        "hours": _to_json(after_hours),
        "figures": out.after.as_dict() if out.after else None,
        "tier_figures": out.tier_after.as_dict() if out.tier_after else None,
        "hours_compared": list(out.hours_compared),
        "regression": out.regression,
        "achieved": out.achieved,
    }
    v.achieved_gain_ms_per_s = out.achieved_gain_ms_per_s
    v.share_of_prediction = out.share_of_prediction
    v.confidence = out.confidence
    v.evaluated_at = now
    if now >= end:
        v.status = out.status
        v.reasons = list(out.reasons)
    else:
        v.status = WAITING
        v.reasons = [f"after-window ends {end:%Y-%m-%d %H:%M} UTC; figures so far", *out.reasons]
    return out


def run_verification(store: Store, policy: Policy, *, now: datetime) -> list[int]:
    """Open verifications for new relocations, then (re-)evaluate every waiting one. Returns the ids
    of the verifications evaluated."""
    with store.session() as s:
        for opened in scan_relocations(s, policy, now=now):
            log.info("relocation of %s seen at %s: verification #%d opened", opened.key, opened.changed_at,
                     opened.id)  # fmt: skip
        waiting = list(s.scalars(select(Verification.id).where(Verification.status == WAITING)))
    done = []
    for vid in waiting:
        with store.session() as s:
            v = s.get(Verification, vid)
            if v is None or v.changed_at > now:
                continue
            evaluate_one(s, v, policy, now=now)
            if v.status != WAITING:
                log.info("verification #%d %s: %s", v.id, v.key, v.status)
        done.append(vid)
    return done


# ---- reading them back ------------------------------------------------------------------------


def rollback_scripts(session: Session, rec_ids: Iterable[int]) -> dict[int, int]:
    """Recommendation id -> its rollback script's id (written at approval)."""
    ids = list(set(rec_ids))
    if not ids:
        return {}
    rows = session.execute(
        select(ScriptRecord.recommendation_id, ScriptRecord.id).where(
            ScriptRecord.recommendation_id.in_(ids), ScriptRecord.direction == "rollback"
        )
    )
    return {rid: sid for rid, sid in rows}


def by_recommendation(session: Session, rec_ids: Iterable[int]) -> dict[int, Verification]:
    """The newest verification of each recommendation."""
    ids = list(set(rec_ids))
    out: dict[int, Verification] = {}
    if not ids:
        return out
    for v in session.scalars(
        select(Verification).where(Verification.recommendation_id.in_(ids)).order_by(Verification.id)
    ):
        assert v.recommendation_id is not None
        out[v.recommendation_id] = v
    return out


def verification_json(v: Verification, rollback_script_id: int | None = None) -> dict[str, Any]:
    def iso(t: datetime | None) -> str | None:
        return None if t is None else t.isoformat()

    after = v.after or {}
    before = v.before or {}
    return {
        "id": v.id,
        "recommendation_id": v.recommendation_id,
        "target_id": v.target_id,
        "key": v.key,
        "name": v.name,
        "trigger": v.trigger,
        "changed_at": iso(v.changed_at),
        "from_tier": v.from_tier,
        "to_tier": v.to_tier,
        "window_days": v.window_days,
        "status": v.status,
        "predicted_gain_ms_per_s": v.predicted_gain_ms_per_s,
        "achieved_gain_ms_per_s": v.achieved_gain_ms_per_s,
        "share_of_prediction": v.share_of_prediction,
        "achieved": after.get("achieved"),
        "confidence": v.confidence,
        "regression": after.get("regression"),
        "before": before.get("figures"),
        "after": after.get("figures"),
        "tier_before": before.get("tier_figures"),
        "tier_after": after.get("tier_figures"),
        "previous_location": before.get("previous_location"),
        "reasons": list(v.reasons or []),
        "evaluated_at": iso(v.evaluated_at),
        "notified_at": iso(v.notified_at),
        "rollback_script": None
        if rollback_script_id is None
        else {
            "id": rollback_script_id,
            "preview": f"/scripts/{rollback_script_id}",
            "download": f"/scripts/{rollback_script_id}/download",
        },
    }


def list_verifications(session: Session, *, status: str | None = None, limit: int = 100,
                       offset: int = 0) -> list[Verification]:  # fmt: skip
    q = select(Verification)
    if status:
        q = q.where(Verification.status == status)
    return list(session.scalars(q.order_by(Verification.changed_at.desc(), Verification.id.desc())
                                .limit(limit).offset(offset)))  # fmt: skip


def track_record(session: Session, policy: VerificationPolicy) -> dict[str, Any]:
    """The advisor's record: of the judged moves with a predicted gain, how many achieved at least
    the success share (80 %) of it; and how many verifications are in each state."""
    counts = dict.fromkeys(STATUSES, 0)
    for status, n in session.execute(select(Verification.status, func.count()).group_by(Verification.status)):
        counts[status] = int(n)
    judged = list(
        session.scalars(
            select(Verification.share_of_prediction).where(
                Verification.status.in_((VERIFIED, REGRESSED)),
                Verification.share_of_prediction.is_not(None),
                Verification.predicted_gain_ms_per_s > 0,
            )
        )
    )
    achieved = sum(1 for s in judged if s is not None and s >= policy.success_share)
    return {
        "counts": counts,
        "success_share": policy.success_share,
        "judged": len(judged),
        "achieved": achieved,
        "share_achieved": achieved / len(judged) if judged else None,
    }


def pending_regressions(session: Session, target_names: set[str] | None = None) -> list[Verification]:
    """Regressions no report has announced yet (optionally only those of some targets)."""
    q = select(Verification).where(Verification.status == REGRESSED, Verification.notified_at.is_(None))
    if target_names is not None:
        q = q.join(Target, Target.id == Verification.target_id).where(Target.name.in_(target_names))
    return list(session.scalars(q.order_by(Verification.id)))


def mark_notified(store: Store, ids: Iterable[int], *, now: datetime) -> None:
    ids = list(ids)
    if not ids:
        return
    with store.session() as s:
        for v in s.scalars(select(Verification).where(Verification.id.in_(ids))):
            if v.notified_at is None:
                v.notified_at = now


def add_verifications(session: Session, items: list[dict[str, Any]]) -> None:
    """Set `verification` on recommendation JSON items: the newest verification of each (or None),
    with the rollback script's links when one was written."""
    ids = [int(i["id"]) for i in items]
    found = by_recommendation(session, ids)
    scripts = rollback_scripts(session, found)
    for item in items:
        v = found.get(int(item["id"]))
        item["verification"] = None if v is None else verification_json(v, scripts.get(int(item["id"])))


def page_context(
    session: Session, recs: Sequence[Recommendation], policy: VerificationPolicy
) -> dict[str, Any]:
    """What the Recommendations page shows: each row's verification and the fleet track record."""
    items = [{"id": r.id} for r in recs]
    add_verifications(session, items)
    recent = [verification_json(v) for v in list_verifications(session, limit=10)]
    return {
        "by_rec": {i["id"]: i["verification"] for i in items if i["verification"] is not None},
        "record": track_record(session, policy),
        "recent": recent,
    }
