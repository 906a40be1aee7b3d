"""The advice pipeline: objects -> placement units -> features -> verdicts -> placement -> advice.

SQL Server places data by filegroup (proportional fill spreads a filegroup over all its files,
domain.md §1.4), tempdb's data files move together, DB2 places by table space. Partitions are
reported too, but they move with the filegroup or table space that holds them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from advisors.classify import Verdict, classify, describe_partition
from advisors.endurance import endurance_note
from advisors.explain import Decision, decide, decide_member
from advisors.features import (
    GB,
    Features,
    ObjectInfo,
    ObjectWindow,
    Usage,
    combine,
    compute_features,
    database_heat,
    instance_read_miss,
)
from advisors.hysteresis import holds
from advisors.maintenance import prepare_window
from advisors.placement import PlacementObject, PlacementResult, PlacementTier, flash_curve, place
from policies.model import Policy


@dataclass(frozen=True, slots=True)
class Advice:
    info: ObjectInfo
    features: Features
    verdict: Verdict
    recommended_tier: str
    placement_unit: str
    reasons: tuple[str, ...]
    io_ms_per_s_now: float | None  # measured I/O wait per second where it is now
    io_ms_per_s_after: float  # predicted on the recommended tier (service latencies)
    decision: Decision | None = None  # which stage decided, with the numbers it used
    explanation: str = ""  # one sentence, moved or not


@dataclass(frozen=True, slots=True)
class AdviceReport:
    objects: tuple[Advice, ...]
    placement: PlacementResult
    flash_curve: tuple[tuple[float, float], ...]
    flash_tier: str
    notes: tuple[str, ...]
    flash_curve_by_database: dict[tuple[str, str], tuple[tuple[float, float], ...]]


PLACEABLE = frozenset({"data_file", "log_file", "filegroup", "partition", "tablespace", "tempdb"})


def unit_key(info: ObjectInfo) -> str | None:
    """Key of the placement unit an object belongs to (None: it is its own unit)."""
    if info.engine == "sqlserver":
        if info.kind == "data_file" and info.filegroup:
            return f"{info.database}/filegroup/{info.filegroup}"
        if info.kind == "tempdb":
            return "tempdb/data"
        if info.kind == "partition" and info.filegroup:
            return f"{info.database}/filegroup/{info.filegroup}"
    if info.engine == "db2" and info.kind == "partition" and info.tablespace:
        return f"{info.database}/tablespace/{info.tablespace}"
    return None


def uid(info: ObjectInfo) -> str:
    """Object keys are unique per server; several servers are advised together."""
    return f"{info.server}|{info.key}"


def _group_tier(members: Sequence[ObjectWindow]) -> str | None:
    tiers = {m.info.current_tier for m in members}
    return tiers.pop() if len(tiers) == 1 else None


def build_units(windows: Sequence[ObjectWindow]) -> tuple[list[ObjectWindow], dict[str, str]]:
    """Placement units, and for every object (by uid) the uid of the unit it moves with."""
    grouped: dict[tuple[str, str], list[ObjectWindow]] = defaultdict(list)
    partitions: dict[tuple[str, str], list[ObjectWindow]] = defaultdict(list)
    units: dict[tuple[str, str], ObjectWindow] = {}
    member_of: dict[str, str] = {}
    for w in windows:
        if w.info.kind not in PLACEABLE:
            continue  # buffer pools, instance counters: context for the features, not storage to place
        uk = unit_key(w.info)
        if w.info.kind == "partition":
            if uk is not None:
                partitions[(w.info.server, uk)].append(w)
            continue
        if uk is None:
            units[(w.info.server, w.info.key)] = w
            member_of[uid(w.info)] = uid(w.info)
        else:
            grouped[(w.info.server, uk)].append(w)
    for (server, uk), members in grouped.items():
        first = members[0].info
        kind = "tempdb" if first.kind == "tempdb" else "filegroup"
        info = ObjectInfo(
            key=uk,
            engine=first.engine,
            server=server,
            database=first.database,
            kind=kind,
            name="tempdb" if kind == "tempdb" else (first.filegroup or uk),
            current_tier=_group_tier(members),
            filegroup=first.filegroup,
            physical_name=first.physical_name,
            files=tuple(m.info for m in members),
        )
        units[(server, uk)] = combine(members, info)
        for m in members:
            member_of[uid(m.info)] = uid(info)
    for (server, uk), parts in partitions.items():
        unit = units.get((server, uk))
        for p in parts:
            member_of[uid(p.info)] = uid(unit.info) if unit is not None else uid(p.info)
        if unit is None:
            continue
        extra = dict(unit.total.extra)
        for p in parts:
            for k, v in p.total.extra.items():
                extra[k] = extra.get(k, 0) + v
        units[(server, uk)] = replace(unit, total=Usage(unit.total.seconds, unit.total.counters, extra))
    return list(units.values()), member_of


def _io_ms(f: Features, read_ms: float | None, write_ms: float | None) -> float | None:
    if read_ms is None and f.read_iops:
        return None
    return f.read_iops * (read_ms or 0.0) + f.write_iops * (write_ms or 0.0)


def _partition_advice(
    w: ObjectWindow,
    unit: Advice | None,
    heat: dict[tuple[str, str], float],
    policy: Policy,
) -> Advice:
    """A partition follows the filegroup / table space that holds it: its verdict is the unit's,
    its numbers are its own (ILM plans use them to tell hot months from cold ones)."""
    f = compute_features(prepare_window(w, policy), db_heat=heat.get((w.info.server, w.info.database)))
    own = describe_partition(f)
    if unit is None:
        v = classify(w.info, f, policy)
        why = "no filegroup / table space holding this partition is in the input: judged on its own counters"
        d, text = decide(w.info, f, v, policy, recommended=v.preferred_tier)
        reasons = (*v.reasons[:-1], own, why)
        return Advice(w.info, f, v, v.preferred_tier, w.info.key, reasons, None, 0.0, d, text)
    uv, target = unit.verdict, unit.recommended_tier
    v = replace(uv, reasons=(f"{unit.info.kind} {unit.info.name}: {uv.reasons[0]}", own))
    why = f"moves with {unit.info.kind} {unit.info.name} (recommended: {target})"
    info = replace(w.info, current_tier=w.info.current_tier or unit.info.current_tier)
    assert unit.decision is not None
    d, text = decide_member(
        info,
        f,
        policy,
        unit=unit.info,
        unit_decision=unit.decision,
        unit_explanation=unit.explanation,
        own=own,
    )
    return Advice(info, f, v, target, unit.info.key, (*v.reasons, why), None, 0.0, d, text)


def _place_within_limits(
    objects: list[PlacementObject], tiers: list[PlacementTier], time_limit_s: float
) -> tuple[PlacementResult, list[str]]:
    """Place within every limit; when the load is already more than the tiers' devices can serve
    (an overloaded array is often why a DBA asks), place within capacity alone and say by how
    much each tier's IOPS limit is exceeded rather than giving no answer."""
    result = place(objects, tiers, time_limit_s=time_limit_s)
    notes = list(result.notes)
    if result.status != "infeasible":
        return result, notes
    unlimited = 1.0 + sum(o.read_iops + o.write_iops * max(t.raid_factor for t in tiers) for o in objects)
    relaxed = [replace(t, max_iops=unlimited) for t in tiers]
    capacity_only = place(objects, relaxed, time_limit_s=time_limit_s)
    if capacity_only.status == "infeasible":
        notes.append("no placement fits the tiers' capacity: showing each object's preferred tier")
        return capacity_only, notes
    by_id = {o.id: o for o in objects}
    for t in tiers:
        load = sum(
            by_id[i].read_iops * (1 - by_id[i].read_hit_ratio) + by_id[i].write_iops * t.raid_factor
            for i, name in capacity_only.assignment.items()
            if name == t.name
        )
        if load > t.max_iops:
            notes.append(
                f"tier {t.name} would need {load:,.0f} physical IOPS but its devices serve {t.max_iops:,.0f}: "
                f"add devices (see `tierwise size`) or move load elsewhere; placed within capacity only"
            )
    return replace(capacity_only, notes=(*capacity_only.notes, *notes)), notes


def _server_key(placement_id: str) -> tuple[str, str]:
    server, _, key = placement_id.partition("|")
    return server, key


def advise(
    windows: Sequence[ObjectWindow],
    policy: Policy,
    *,
    now: datetime | None = None,
    time_limit_s: float = 10.0,
    curve_points: int = 10,
) -> AdviceReport:
    """`now` is the data's clock (e.g. the newest sample), used for minimum residency."""
    units, member_of = build_units(windows)
    units = [prepare_window(u, policy) for u in units]  # maintenance out, business periods apart
    heat = database_heat(units)
    inst_miss = instance_read_miss(windows)
    tiers = {t.name: t for t in policy.tiers}
    feats: dict[str, Features] = {}
    verdicts: dict[str, Verdict] = {}
    for u in units:
        tier = tiers.get(u.info.current_tier or "")
        feats[uid(u.info)] = compute_features(
            u,
            db_heat=heat.get((u.info.server, u.info.database)),
            tier_read_ms=tier.read_latency_ms if tier else None,
            instance_miss=inst_miss.get(u.info.server),
        )
        verdicts[uid(u.info)] = classify(u.info, feats[uid(u.info)], policy)
    objects = [
        PlacementObject(
            id=uid(u.info),
            size_gb=(u.info.size_bytes or 0) / GB,
            read_iops=feats[uid(u.info)].read_iops,
            write_iops=feats[uid(u.info)].write_iops,
            allowed_tiers=frozenset(verdicts[uid(u.info)].allowed_tiers),
            read_hit_ratio=feats[uid(u.info)].est_cache_hit_share or 0.0,
        )
        for u in units
    ]
    ptiers = [
        PlacementTier(t.name, t.capacity_gb, t.max_iops, t.raid_factor, t.read_latency_ms, t.write_latency_ms)
        for t in policy.tiers
    ]
    result, notes = _place_within_limits(objects, ptiers, time_limit_s)
    chosen = {
        uid(u.info): result.assignment.get(uid(u.info), verdicts[uid(u.info)].preferred_tier) for u in units
    }
    proposed = dict(chosen)
    held = holds(
        units,
        {(u.info.server, u.info.key): chosen[uid(u.info)] for u in units},
        {(u.info.server, u.info.key): verdicts[uid(u.info)].allowed_tiers for u in units},
        policy,
        now=now,
    )
    if held:
        pinned = [
            replace(o, allowed_tiers=frozenset({held[k].tier})) if (k := _server_key(o.id)) in held else o
            for o in objects
        ]
        again, again_notes = _place_within_limits(pinned, ptiers, time_limit_s)
        if again.status != "infeasible":
            result, notes, objects = again, again_notes, pinned
            chosen = {uid(u.info): again.assignment[uid(u.info)] for u in units}
        else:
            notes.append(
                "hysteresis holds could not all be kept within the tier limits: moves shown without them"
            )
            held = {}
    flash = policy.tiers[0].name
    curve: tuple[tuple[float, float], ...] = ()
    by_db: dict[tuple[str, str], tuple[tuple[float, float], ...]] = {}
    if len(ptiers) > 1 and curve_points:
        curve = tuple(flash_curve(objects, ptiers, flash_tier=flash, points=curve_points))
        databases = {(u.info.server, u.info.database) for u in units}
        if len(databases) > 1:
            for server, database in sorted(databases):
                subset = [
                    o
                    for o, u in zip(objects, units, strict=True)
                    if (u.info.server, u.info.database) == (server, database)
                ]
                by_db[(server, database)] = tuple(
                    flash_curve(subset, ptiers, flash_tier=flash, points=curve_points)
                )
    out: list[Advice] = []
    by_unit: dict[str, Advice] = {}
    for u in units:
        f, v, target = feats[uid(u.info)], verdicts[uid(u.info)], chosen[uid(u.info)]
        reasons = list(v.reasons)
        hold = held.get((u.info.server, u.info.key))
        if hold is not None:
            reasons.append(hold.reason)
        elif target != v.preferred_tier:
            reasons.append(
                f"placed on {target} rather than {v.preferred_tier}: tier capacity or IOPS limits "
                f"leave more I/O time saved elsewhere"
            )
        t = tiers[target]
        now_ms = _io_ms(f, f.avg_read_ms, f.avg_write_ms)
        after_ms = f.read_iops * t.read_latency_ms + f.write_iops * t.write_latency_ms
        if now_ms is not None and target == (u.info.current_tier or target):
            after_ms = now_ms  # not moving (or location unknown): no change predicted
        d, text = decide(
            u.info,
            f,
            v,
            policy,
            recommended=target,
            hold=None if hold is None else hold.reason,
            proposed=proposed.get(uid(u.info)),
            io_now=now_ms,
            io_after=after_ms,
        )
        advice = Advice(u.info, f, v, target, u.info.key, tuple(reasons), now_ms, after_ms, d, text)
        out.append(advice)
        by_unit[uid(u.info)] = advice
    for w in windows:
        if w.info.kind == "partition":
            unit_uid = member_of.get(uid(w.info), "")
            unit = by_unit.get(unit_uid) if unit_uid != uid(w.info) else None
            out.append(_partition_advice(w, unit, heat, policy))
    wear = endurance_note(
        ((u.info.name, feats[uid(u.info)]) for u in units if chosen[uid(u.info)] == flash), policy
    )
    if wear is not None:
        notes.append(wear)
    return AdviceReport(tuple(out), result, curve, flash, tuple(notes), by_db)


@dataclass(frozen=True, slots=True)
class DatabaseCurve:
    """How much flash one database could use: (flash GB, share of I/O wait saved) against every
    placement unit on its slowest allowed tier, and what the recommended placement predicts."""

    engine: str
    server: str
    database: str
    points: tuple[tuple[float, float], ...]
    flash_gb_recommended: float
    io_ms_per_s_now: float
    io_ms_per_s_after: float
    units: int
    note: str = ""  # e.g. the tiers' IOPS limits were left out because the load exceeds them


def database_curves(
    report: AdviceReport, policy: Policy, *, points: int = 8, time_limit_s: float = 0.25
) -> list[DatabaseCurve]:
    """The flash curve per database from a report's placement units (hysteresis holds left out:
    the curve is about how much flash is worth having, not about this hour's moves). Budget: up to
    `points x time_limit_s` seconds per database."""
    ptiers = [
        PlacementTier(t.name, t.capacity_gb, t.max_iops, t.raid_factor, t.read_latency_ms, t.write_latency_ms)
        for t in policy.tiers
    ]
    groups: dict[tuple[str, str, str], list[Advice]] = defaultdict(list)
    for a in report.objects:
        if a.placement_unit == a.info.key:
            groups[(a.info.engine, a.info.server, a.info.database)].append(a)
    out: list[DatabaseCurve] = []
    for (engine, server, database), units in sorted(groups.items()):
        objects = [
            PlacementObject(
                id=uid(a.info),
                size_gb=(a.info.size_bytes or 0) / GB,
                read_iops=a.features.read_iops,
                write_iops=a.features.write_iops,
                allowed_tiers=frozenset(a.verdict.allowed_tiers),
                read_hit_ratio=a.features.est_cache_hit_share or 0.0,
            )
            for a in units
        ]
        curve: tuple[tuple[float, float], ...] = ()
        note = ""
        if len(ptiers) > 1 and points >= 2:
            curve = tuple(
                flash_curve(
                    objects, ptiers, flash_tier=report.flash_tier, points=points, time_limit_s=time_limit_s
                )
            )
            if not curve and objects:
                # more load than the devices serve at any amount of flash (as in the placement):
                # the curve within capacity alone, said so
                unlimited = 1.0 + sum(
                    o.read_iops + o.write_iops * max(t.raid_factor for t in ptiers) for o in objects
                )
                relaxed = [replace(t, max_iops=unlimited) for t in ptiers]
                curve = tuple(
                    flash_curve(
                        objects,
                        relaxed,
                        flash_tier=report.flash_tier,
                        points=points,
                        time_limit_s=time_limit_s,
                    )
                )
                note = "the load exceeds the tiers' IOPS limits at every amount of flash: curve within capacity only"
                if not curve:
                    note = "the tiers' capacity cannot hold this database at any amount of flash: no curve"
        out.append(
            DatabaseCurve(
                engine,
                server,
                database,
                curve,
                sum((a.info.size_bytes or 0) / GB for a in units if a.recommended_tier == report.flash_tier),
                sum(a.io_ms_per_s_now or 0.0 for a in units),
                sum(a.io_ms_per_s_after for a in units),
                len(units),
                note,
            )
        )
    return out
