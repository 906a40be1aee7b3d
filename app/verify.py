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
import math
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime, timedelta
from fnmatch import fnmatchcase
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from advisors.advise import PLACEABLE, unit_key
from advisors.features import ObjectInfo
from advisors.maintenance import applies_to, in_window, occurrence
from advisors.verify import (
    IMPROVED,
    INCONCLUSIVE,
    LABELS,
    NO_EFFECT,
    NOT_MOVED,
    OUTSIDE_BAND,
    REGRESSED,
    UNCONTROLLED,
    VERIFIED,
    WITHIN_BAND,
    Candidate,
    Change,
    HourTotals,
    Outcome,
    Placement,
    Slots,
    figures,
    harm_alarm,
    kind_class,
    not_moved,
    pick_controls,
    seen_moved,
    verify,
)
from advisors.verify_stats import wilson
from advisors.verify_windows import burst_hours, is_burst_hour
from app.store.db import Store
from app.store.models import DbObject, IoInterval, Recommendation, ScriptRecord, Target, Verification
from app.store.recommendations import Status
from app.timefmt import iso
from connectors.records import CORE_COUNTERS
from policies.model import DEFAULT_POOL, Policy, PoolConflict, VerificationPolicy

log = logging.getLogger("tierwise.verify")

WAITING = "waiting"
STATUSES = (WAITING, IMPROVED, NO_EFFECT, WITHIN_BAND, OUTSIDE_BAND, REGRESSED, UNCONTROLLED, INCONCLUSIVE,
            NOT_MOVED)  # fmt: skip
# the verdicts the track record counts: every final one on a move that happened ("verified" is the
# verdict of rows written before intervals); a success is only "improved" with its prediction
# delivered at the interval's slow end (docs/verification.md, "The track record")
JUDGED = (IMPROVED, NO_EFFECT, WITHIN_BAND, OUTSIDE_BAND, REGRESSED, UNCONTROLLED, INCONCLUSIVE, VERIFIED)
# a relocation seen by ingest within this long of an executed move is that move, not another one
SAME_CHANGE = timedelta(days=2)
_FIELDS = ("seconds", *CORE_COUNTERS)
CONTROLS_EACH = 20  # unmoved objects kept one by one (the synthetic control), the busiest first
# a target with fewer unmoved objects on the source tier borrows its pool's other targets' (up to this)
CONTROLS_ENOUGH = CONTROLS_EACH
_FILE_KINDS = ("filegroup", "partition")  # units whose location is their files'


# ---- which objects a verification is about --------------------------------------------------


def _info(o: DbObject) -> ObjectInfo:
    return ObjectInfo(key=o.key, engine=o.engine, server=o.server, database=o.database, kind=o.kind,
                      name=o.name, filegroup=o.filegroup, tablespace=o.tablespace,
                      table_name=o.table_name)  # fmt: skip


def unit_of(o: DbObject) -> str:
    """The placement unit an object is verified as (advisors.units.unit_key): a partition or DB2
    container is verified as itself, a loose object too."""
    return unit_key(_info(o), held_alone=True) or o.key


def _unit_name(o: DbObject, key: str) -> str:
    if key == o.key:
        return o.name
    return "tempdb" if o.kind == "tempdb" else (o.filegroup or key)


def members(session: Session, target_id: int, key: str) -> list[DbObject]:
    """The objects whose I/O is the unit's: the object itself, or a filegroup's (tempdb's) files."""
    objs = session.scalars(select(DbObject).where(DbObject.target_id == target_id))
    return [o for o in objs if o.key == key or (o.kind != "partition" and unit_of(o) == key)]


def _tier(policy: Policy, o: DbObject, loc: dict[str, Any] | None = None) -> str | None:
    """The tier of an object's location (`loc`: an earlier one), among the tiers of its pool. Two
    pools taking it raise PoolConflict: the policy must say which array it is on."""
    path, group = (o.physical_name, o.storage_group) if loc is None else (
        loc.get("physical_name"), loc.get("storage_group"))  # fmt: skip
    pool = policy.pool_of(server=o.server, engine=o.engine, physical_name=path, storage_group=group)
    return policy.tier_of_location(engine=o.engine, physical_name=path, storage_group=group, pool=pool)


def _tier_or_none(policy: Policy, o: DbObject, loc: dict[str, Any] | None = None) -> str | None:
    """`_tier`, with a pool conflict read as an unknown tier (not a control, not a tier's object)."""
    try:
        return _tier(policy, o, loc)
    except PoolConflict:
        return None


def _unit_policy(policy: Policy, objs: Sequence[DbObject]) -> Policy:
    """The policy as the unit's pool sees it (its tiers' bands and service latencies), from where
    its files are now; the whole policy when that cannot be told."""
    for o in objs:
        if o.physical_name or o.storage_group:
            try:
                pool = policy.pool_of(server=o.server, engine=o.engine, physical_name=o.physical_name,
                                      storage_group=o.storage_group)  # fmt: skip
            except PoolConflict:
                return policy
            return policy.for_pool(pool)
    return policy


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
        v.recommendation_id, v.trigger = rec.id, Status.EXECUTED.value
        v.before = {k: x for k, x in (v.before or {}).items() if k != "extended_to_days"}
        v.from_tier, v.to_tier = rec.from_tier, rec.to_tier
        v.predicted_gain_ms_per_s = _predicted(rec)
        v.status = WAITING  # judged again (at the next run) against the recommendation's prediction
        return v
    v = Verification(target_id=rec.target_id, recommendation_id=rec.id, key=rec.key, name=rec.name,
                     trigger=Status.EXECUTED.value, changed_at=when, from_tier=rec.from_tier, to_tier=rec.to_tier,
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
                         changed_at=o.location_since, from_tier=_tier_or_none(policy, o, prev),
                         to_tier=_tier_or_none(policy, o), window_days=policy.verification.window_days,
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


Skip = Callable[[int, datetime, HourTotals], bool]  # (object id, hour, its counters): leave it out


def hour_slots(
    session: Session, object_ids: Sequence[int], start: datetime, end: datetime, skip: Skip | None = None
) -> dict[datetime, HourTotals]:
    """Counters of intervals wholly inside [start, end], per clock hour (UTC) they start in;
    the objects' counters add up, their covered seconds do not (they run side by side). An
    object's hour that `skip` names (its maintenance) is left out of the sum."""
    per_object: dict[tuple[int, datetime], list[float]] = {}
    parts = [func.extract(f, IoInterval.start_time) for f in ("year", "month", "day", "hour")]
    sums = [func.coalesce(func.sum(getattr(IoInterval, f)), 0) for f in _FIELDS]
    for chunk in _chunks(list(object_ids)):
        rows = session.execute(
            select(IoInterval.object_id, *parts, *sums)
            .where(
                IoInterval.object_id.in_(chunk), IoInterval.start_time >= start, IoInterval.end_time <= end
            )
            .group_by(IoInterval.object_id, *parts)
        )
        for oid, y, mo, d, h, *values in rows:
            t = datetime(int(y), int(mo), int(d), int(h), tzinfo=UTC)
            per_object[(oid, t)] = [float(v) for v in values]
    out: dict[datetime, HourTotals] = {}
    for (oid, t), (secs, *counters) in per_object.items():
        old = out.get(t, HourTotals())
        c = [int(x) for x in counters]
        if skip is not None and skip(oid, t, HourTotals(secs, *c)):
            continue
        out[t] = HourTotals(max(old.seconds, secs), old.reads + c[0], old.bytes_read + c[1],
                            old.read_time_ms + c[2], old.writes + c[3], old.bytes_written + c[4],
                            old.write_time_ms + c[5])  # fmt: skip
    return out


def _to_json(side: Slots) -> dict[str, list[float]]:
    return {t.isoformat(): [getattr(v, f) for f in _FIELDS] for t, v in sorted(side.items())}


def _from_json(data: dict[str, list[float]] | None) -> dict[datetime, HourTotals]:
    out = {}
    for t, v in (data or {}).items():
        out[datetime.fromisoformat(t)] = HourTotals(float(v[0]), *(int(x) for x in v[1:]))
    return out


def _pool_or_none(policy: Policy, o: DbObject) -> str | None:
    """The pool (array) of an object's location now; None when two pools take it."""
    try:
        return policy.pool_of(server=o.server, engine=o.engine, physical_name=o.physical_name,
                              storage_group=o.storage_group)  # fmt: skip
    except PoolConflict:
        return None


def unit_pool(policy: Policy, objs: Sequence[DbObject]) -> str:
    """The pool of the unit's files (a move stays within its array); the implicit pool when that
    cannot be told."""
    for o in objs:
        if o.physical_name or o.storage_group:
            return _pool_or_none(policy, o) or DEFAULT_POOL
    return DEFAULT_POOL


def _candidates(
    policy: Policy, rows: Iterable[DbObject], exclude: set[int], since: datetime
) -> list[Candidate]:
    """Objects that have not moved since `since` (files, logs, table spaces: their location now is
    their location all along), with their pool and tier."""
    return [
        Candidate(
            o.id,
            o.target_id,
            _pool_or_none(policy, o),
            _tier_or_none(policy, o),
            o.engine,
            kind_class(o.kind),
        )
        for o in rows
        if o.id not in exclude
        and o.kind in PLACEABLE
        and o.kind not in _FILE_KINDS
        and (o.location_since is None or o.location_since < since)
    ]


def _pool_servers_elsewhere(session: Session, policy: Policy, pool: str, target_id: int) -> list[int]:
    """The other enabled targets with a server the declared pool names."""
    declared = next((p for p in policy.pools if p.name == pool), None)
    if declared is None:
        return []
    rows = session.execute(
        select(DbObject.target_id, DbObject.server)
        .join(Target, Target.id == DbObject.target_id)
        .where(Target.enabled.is_(True), DbObject.target_id != target_id)
        .distinct()
    ).all()
    return sorted({tid for tid, server in rows if any(fnmatchcase(server.lower(), p.lower())
                                                      for p in declared.servers)})  # fmt: skip


def tier_others(
    session: Session,
    policy: Policy,
    target_id: int,
    tier: str,
    exclude: set[int],
    since: datetime,
    *,
    pool: str = DEFAULT_POOL,
    enough: int = 0,
    engine: str | None = None,
    kind: str | None = None,
) -> list[int]:
    """Ids of the other objects on `tier` of `pool` (the same array) that have not moved since
    `since` (advisors.verify.pick_controls decides). The target's own first; a target with fewer
    than `enough` borrows the declared pool's other targets' (the controls: unmoved objects on the
    same array, whichever server they belong to). Another array's tier of the same name never
    counts, nor, in the implicit pool, another server's (tierwise does not know it is the same
    array). `engine` and `kind` (advisors.verify.kind_class) match the controls to the unit."""
    own = _candidates(policy, session.scalars(select(DbObject).where(DbObject.target_id == target_id)),
                      exclude, since)  # fmt: skip
    match: dict[str, Any] = {"engine": engine, "kind": kind}
    picked = pick_controls(
        own, target_id=target_id, pool=pool, tier=tier, enough=enough, shared=False, **match
    )
    if len(picked) >= enough or pool == DEFAULT_POOL:
        return picked
    elsewhere = _pool_servers_elsewhere(session, policy, pool, target_id)
    if not elsewhere:
        return picked
    rows = [
        o
        for ids in _chunks(elsewhere)
        for o in session.scalars(select(DbObject).where(DbObject.target_id.in_(ids)))
    ]
    return pick_controls([*own, *_candidates(policy, rows, exclude, since)], target_id=target_id, pool=pool,
                         tier=tier, enough=enough, shared=True, **match)  # fmt: skip


def busiest(session: Session, ids: Sequence[int], start: datetime, end: datetime, n: int) -> list[int]:
    """The `n` objects of `ids` with the most I/O in [start, end], busiest first; an object without
    any I/O there is no control at all (it would only leave hours unpaired)."""
    totals: dict[int, int] = {}
    for chunk in _chunks(list(ids)):
        rows = session.execute(
            select(IoInterval.object_id, func.coalesce(func.sum(IoInterval.reads + IoInterval.writes), 0))
            .where(
                IoInterval.object_id.in_(chunk), IoInterval.start_time >= start, IoInterval.end_time <= end
            )
            .group_by(IoInterval.object_id)
        )
        for oid, ios in rows:
            totals[int(oid)] = int(ios or 0)
    return sorted((i for i in ids if totals.get(i, 0) > 0), key=lambda i: (-totals[i], i))[:n]


def unit_match(objs: Sequence[DbObject]) -> dict[str, Any]:
    """What a control shares with the unit: its engine and kind of file (data, log, tempdb)."""
    files = [o for o in objs if o.kind not in _FILE_KINDS] or list(objs)
    return {"engine": files[0].engine, "kind": kind_class(files[0].kind)} if files else {}


def _predict_from_tiers(policy: Policy, v: Verification, before: Slots) -> float | None:
    """For a relocation nobody recommended: what the joined tier's service latencies predict."""
    if v.from_tier is None or v.to_tier is None or v.from_tier == v.to_tier:
        return None
    try:
        tier = policy.tier(v.to_tier)
    except KeyError:
        return None
    f = figures(before.values())
    return f.io_ms_per_s - (f.read_iops * tier.read_latency_ms + f.write_iops * tier.write_latency_ms)


def _band(policy: Policy, name: str | None) -> tuple[float | None, float | None]:
    """The top of a tier's normal band (its service latency where no band is given)."""
    if name is None:
        return None, None
    try:
        t = policy.tier(name)
    except KeyError:
        return None, None
    r = t.read_latency_band_ms[1] if t.read_latency_band_ms else t.read_latency_ms
    w = t.write_latency_band_ms[1] if t.write_latency_band_ms else t.write_latency_ms
    return r, w


def _promotion(policy: Policy, v: Verification) -> bool | None:
    """To a faster tier (by the policy's read service latencies); unknown tiers: by the prediction."""
    try:
        return policy.tier(v.to_tier or "").read_latency_ms < policy.tier(v.from_tier or "").read_latency_ms
    except KeyError:
        g = v.predicted_gain_ms_per_s
        return None if g is None else g > 0


def placements(session: Session, policy: Policy, objs: Sequence[DbObject]) -> list[Placement]:
    """Where each file of the unit is. A filegroup's files carry the location; a partition is on
    the tier of its filegroup's files (SQL Server) or of its table space (DB2)."""
    files = [o for o in objs if o.kind not in _FILE_KINDS]
    out = []
    for o in files or objs:
        tier = _tier(policy, o)
        if tier is None and o.kind == "partition":
            tier = _partition_tier(session, policy, o)
        prev = o.previous_location or {}
        out.append(Placement(name=o.name, location=o.physical_name or o.storage_group or o.filegroup or o.tablespace,
                             tier=tier, since=o.location_since,
                             previous_tier=_tier_or_none(policy, o, prev) if prev else None,
                             first_seen=o.first_seen, last_seen=o.last_seen))  # fmt: skip
    return out


def _partition_tier(session: Session, policy: Policy, o: DbObject) -> str | None:
    q = select(DbObject).where(DbObject.target_id == o.target_id, DbObject.database == o.database,
                               DbObject.kind != "partition")  # fmt: skip
    if o.engine == "db2" and o.tablespace:
        q = q.where(DbObject.tablespace == o.tablespace)
    elif o.filegroup:
        q = q.where(DbObject.filegroup == o.filegroup)
    else:
        return None
    tiers = {_tier(policy, x) for x in session.scalars(q)} - {None}
    return tiers.pop() if len(tiers) == 1 else None


def excluded_hours(
    policy: Policy, start: datetime, end: datetime, lag: timedelta, objs: Sequence[DbObject] = ()
) -> frozenset[datetime]:
    """Hours of the maintenance windows that name the unit (any of its objects) and of declared
    business periods, on both sides of the change: neither is the workload the move is judged on.
    A window that names other databases or objects leaves the unit's hours in."""
    windows = [w for w in policy.maintenance_windows if any(applies_to(w, _info(o)) for o in objs)]
    out = set()
    t = (start - lag).replace(minute=0, second=0, microsecond=0)
    while t < end:
        mid = t + timedelta(minutes=30)
        if any(in_window(w, t) for w in windows) or any(
            occurrence(p, mid.astimezone(ZoneInfo(p.time_zone)).date()) is not None
            for p in policy.business_calendar
        ):
            out.add(t)
        t += timedelta(hours=1)
    return frozenset(out)


def maintenance_skip(session: Session, policy: Policy, ids: Sequence[int]) -> Skip:
    """For the controls and the joined tier's other objects: each object's hours in a maintenance
    window that names it, or a detected burst of its own, are left out of their sums (so one
    control's backup does not make the source tier look busy)."""
    windows: dict[int, list[Any]] = {}
    if policy.maintenance_windows:
        for chunk in _chunks(list(ids)):
            for o in session.scalars(select(DbObject).where(DbObject.id.in_(chunk))):
                windows[o.id] = [w for w in policy.maintenance_windows if applies_to(w, _info(o))]
    rules = policy.burst_detection

    def skip(oid: int, t: datetime, h: HourTotals) -> bool:
        return any(in_window(w, t) for w in windows.get(oid, ())) or is_burst_hour(h, rules)

    return skip


def evaluate_one(session: Session, v: Verification, policy: Policy, *, now: datetime) -> Outcome | None:
    vp = policy.verification
    if v.status == WAITING:  # the policy's window, or the longer one an inconclusive result asked for
        v.window_days = max(vp.window_days, int((v.before or {}).get("extended_to_days") or 0))
    window = timedelta(days=v.window_days)
    lag = timedelta(days=7 * math.ceil(v.window_days / 7))  # whole weeks: same weekday, same hour
    # the before side is kept long enough for the extended window too (it may be gone by then)
    keep = timedelta(days=7 * math.ceil(max(v.window_days, vp.extend_to_days) / 7))
    end = v.changed_at + window
    objs = members(session, v.target_id, v.key)
    ids = [o.id for o in objs]
    final = now >= end
    if not ids:
        v.reasons = ["the moved object is no longer monitored"]
        v.status, v.evaluated_at = (INCONCLUSIVE if final else WAITING), now
        return None
    try:
        where = placements(session, policy, objs)
    except PoolConflict as e:  # the policy must say which array the unit is on before it is judged
        v.reasons = [f"not verified: pool conflict: {e}"]
        v.after = {"placement": list(v.reasons)}
        v.status, v.evaluated_at = (INCONCLUSIVE if final else WAITING), now
        return None
    moved = seen_moved(where, v.to_tier, v.changed_at, settle=SAME_CHANGE)
    before = dict(v.before or {})
    after: dict[str, Any] = {"placement": list(moved.reasons)}
    v.evaluated_at = now
    v.confidence = None  # an interval now says how sure the verdict is
    if not moved.moved:
        out = not_moved(moved)
        v.after, v.achieved_gain_ms_per_s, v.share_of_prediction = after, None, None
        # before the settle time has passed the files may still be on their way
        if final or now >= v.changed_at + SAME_CHANGE:
            v.status, v.reasons = out.status, list(out.reasons)
        else:
            v.status = WAITING
            v.reasons = [
                f"not yet seen on {v.to_tier}; after-window ends {end:%Y-%m-%d %H:%M} UTC",
                *out.reasons,
            ]
        return out
    # the before-window ends when the first file left, the after-window starts once the last arrived
    before_end = min(v.changed_at, moved.first_arrival or v.changed_at)
    start = max(v.changed_at, moved.last_arrival or v.changed_at) + timedelta(hours=vp.warmup_hours)
    start = start.replace(minute=0, second=0, microsecond=0) + (
        timedelta(hours=1) if start.minute or start.second else timedelta()
    )
    if "slots" not in before:  # the before-window is complete: keep it, whatever retention does later
        # a relocation is seen at the first poll after it: the interval ending there straddles the move
        b_start, b_end = before_end - keep, before_end - timedelta(seconds=1)
        before["slots"] = _to_json(hour_slots(session, ids, b_start, b_end))
        if v.from_tier is not None:
            pool = unit_pool(policy, objs)
            matched = tier_others(session, policy, v.target_id, v.from_tier, set(ids), b_start, pool=pool,
                                  enough=CONTROLS_ENOUGH, **unit_match(objs))  # fmt: skip
            # the busiest with I/O before the move (weighted by it); a file without any is dropped
            controls = busiest(session, matched, b_start, b_end, CONTROLS_EACH)
            skip = maintenance_skip(session, policy, controls)
            before["control_objects"] = controls
            before["control_slots"] = _to_json(hour_slots(session, controls, b_start, b_end, skip))
            # one by one: the synthetic control, and their week-to-week spread widens the interval
            before["control_each"] = {
                str(c): _to_json(hour_slots(session, [c], b_start, b_end, skip))
                for c in controls[:CONTROLS_EACH]
            }
        if v.to_tier is not None:
            others = tier_others(session, policy, v.target_id, v.to_tier, set(ids), b_start,
                                 pool=unit_pool(policy, objs))  # fmt: skip
            before["tier_objects"] = others
            skip = maintenance_skip(session, policy, others)
            before["tier_slots"] = _to_json(hour_slots(session, others, b_start, b_end, skip))
        if v.recommendation_id is None and v.predicted_gain_ms_per_s is None:
            v.predicted_gain_ms_per_s = _predict_from_tiers(_unit_policy(policy, objs), v,
                                                            _from_json(before["slots"]))  # fmt: skip
    after_end = min(now, end)
    after_slots = hour_slots(session, ids, start, after_end)
    controls_after = tier_after = None
    control_ids = before.get("control_objects") or []
    control_skip = maintenance_skip(session, policy, control_ids)
    if "control_slots" in before:
        controls_after = hour_slots(session, control_ids, start, after_end, control_skip)
    if "tier_slots" in before:
        tier_ids = before.get("tier_objects") or []
        tier_after = hour_slots(
            session, tier_ids, start, after_end, maintenance_skip(session, policy, tier_ids)
        )
    each = tuple(
        (_from_json(slots), hour_slots(session, [int(c)], start, after_end, control_skip))
        for c, slots in (before.get("control_each") or {}).items()
    )
    before_slots = _from_json(before["slots"])
    # the unit's own maintenance: windows that name it, and its detected bursts on either side
    excluded = excluded_hours(policy, start, after_end, lag, objs) | burst_hours(
        before_slots, after_slots, policy.burst_detection
    )
    unit_policy = _unit_policy(policy, objs)
    band_r, band_w = _band(unit_policy, v.to_tier)
    change = Change(before=before_slots, after=after_slots, start=start, end=after_end, lag=lag,
                    predicted_gain_ms_per_s=v.predicted_gain_ms_per_s, from_tier=v.from_tier, to_tier=v.to_tier,
                    promotion=_promotion(unit_policy, v),
                    controls_before=_from_json(before.get("control_slots")) if controls_after is not None else None,
                    controls_after=controls_after, controls=len(before.get("control_objects") or []),
                    tier_before=_from_json(before.get("tier_slots")) if tier_after is not None else None,
                    tier_after=tier_after, band_read_ms=band_r, band_write_ms=band_w,
                    excluded=excluded, window_days=v.window_days,
                    control_objects=each)  # fmt: skip
    out = verify(change, vp)
    # the early harm alarm: between the looks, a unit far slower than before is flagged now
    harm = None if final else harm_alarm(change, vp)
    before["figures"] = out.before.as_dict() if out.before else None
    before["tier_figures"] = out.tier_before.as_dict() if out.tier_before else None
    v.before = before
    after.update({
        "figures": out.after.as_dict() if out.after else None,
        "tier_figures": out.tier_after.as_dict() if out.tier_after else None,
        "measured_from": start.isoformat(),
        "interval": out.interval.as_dict() if out.interval else None,
        "effect": out.effect.as_dict() if out.effect else None,  # Hodges–Lehmann, the effect shown
        "slower": out.slower,  # outside band and slower than before too
        "controlled": out.controlled,
        "days": [d.as_dict() for d in out.days],
        "verdict": out.verdict,
        "regression": out.regression,
        "achieved": out.achieved,
        "tier_share": out.tier_share,
        "tier_intervals": {k: iv.as_dict() for k, iv in out.tier_intervals.items()},
        "excluded_hours": len(excluded),
    })  # fmt: skip
    v.after = after
    v.achieved_gain_ms_per_s = out.achieved_gain_ms_per_s
    v.share_of_prediction = out.share_of_prediction
    if final and out.status == INCONCLUSIVE and v.window_days < vp.extend_to_days:
        # not final yet: the after-window can still grow, so measure on and judge again then
        until = v.changed_at + timedelta(days=vp.extend_to_days)
        before["extended_to_days"] = vp.extend_to_days
        v.before = before
        v.window_days = vp.extend_to_days
        after["extended_until"] = until.isoformat()
        v.status = WAITING
        v.reasons = [
            f"inconclusive so far: measuring until {until:%Y-%m-%d %H:%M} UTC ({vp.extend_to_days} days)",
            *moved.reasons,
            *out.reasons,
        ]
    elif final:
        v.status = out.status
        v.reasons = [*moved.reasons, *out.reasons]
    elif harm is not None:
        text = harm.text(v.to_tier)
        v.status = REGRESSED
        after.update({"verdict": text, "regression": "object", "early": True, "achieved": False})
        v.reasons = [text, *moved.reasons, *out.reasons]
    else:
        v.status = WAITING
        first = f"after-window ends {end:%Y-%m-%d %H:%M} UTC; figures so far"
        if before.get("extended_to_days"):  # still measuring on after an inconclusive first week
            after["extended_until"] = end.isoformat()
            first = f"inconclusive at {vp.window_days} days: measuring to {v.window_days} days, until {end:%Y-%m-%d %H:%M} UTC"
        v.reasons = [first, *moved.reasons, *out.reasons]
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
        "label": LABELS.get(v.status, v.status),
        "achieved_gain_ms_per_s": v.achieved_gain_ms_per_s,
        "share_of_prediction": v.share_of_prediction,
        "achieved": after.get("achieved"),
        "interval": after.get("interval"),
        "effect": after.get("effect"),  # Hodges–Lehmann estimate with its Wilcoxon interval
        "confidence": v.confidence,  # None since intervals: kept for clients that read it
        "verdict": after.get("verdict"),
        "controlled": after.get("controlled"),
        "early": after.get("early") is True,  # regressed by the early harm alarm, before the window's end
        "measured_from": after.get("measured_from"),
        "extended_until": after.get("extended_until"),  # inconclusive so far: measuring until then
        "days": after.get("days") or [],
        "placement": after.get("placement") or [],
        "regression": after.get("regression"),
        "tier_share": after.get("tier_share"),  # the moved unit's share of the joined tier's I/O after
        "tier_intervals": after.get("tier_intervals") or {},  # the joined tier's check, per I/O class
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
    """The advisor's record: of every final verdict on a move with a predicted gain (inconclusive
    and uncontrolled ones included, only "not moved" left out: nothing was tried), how many
    delivered their prediction, decided by the interval (its least-gain end saves at least the
    success share, 80 %, against a fair control), with a Wilson interval on that share; and how
    many verifications are in each state."""
    counts = dict.fromkeys(STATUSES, 0)
    for status, n in session.execute(select(Verification.status, func.count()).group_by(Verification.status)):
        counts[status] = int(n)  # "verified" (before intervals) shows only where such rows remain
    rows = session.execute(
        select(Verification.status, Verification.after).where(
            Verification.status.in_(JUDGED), Verification.predicted_gain_ms_per_s > 0
        )
    ).all()
    by_status = dict.fromkeys(JUDGED, 0)
    achieved = 0
    for status, after in rows:
        by_status[status] += 1
        achieved += (after or {}).get("achieved") is True
    judged = len(rows)
    low, high = wilson(achieved, judged, policy.interval_level) if judged else (None, None)
    return {
        "counts": counts,
        "success_share": policy.success_share,
        "judged": judged,
        "judged_by_status": {k: n for k, n in by_status.items() if n},
        "achieved": achieved,
        "share_achieved": achieved / judged if judged else None,
        "share_interval": None if low is None else {"low": low, "high": high, "level": policy.interval_level},
    }


def pending_regressions(session: Session, target_names: set[str] | None = None) -> list[Verification]:
    """Moves that made things worse no report has announced yet (optionally only those of some
    targets): regressions, and promotions that landed outside the destination's band and are
    slower than before on the old tier too (the array, not the move, is the suspect; still worse),
    and every uncontrolled verdict (no fair control told the array's change from the move's: the
    report says so, rather than let it pass for a success)."""
    q = select(Verification).where(
        Verification.status.in_((REGRESSED, OUTSIDE_BAND, UNCONTROLLED)), Verification.notified_at.is_(None)
    )
    if target_names is not None:
        q = q.join(Target, Target.id == Verification.target_id).where(Target.name.in_(target_names))
    rows = session.scalars(q.order_by(Verification.id))
    return [v for v in rows if v.status in (REGRESSED, UNCONTROLLED) or (v.after or {}).get("slower") is True]


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
