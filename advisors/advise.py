"""The advice pipeline: objects -> placement units -> I/O mix per window -> I/O wait on every tier
-> one placement within every tier's limits -> each unit's decision with its binding reason.

Benefit decides, within constraints (design.md): the placement minimises the units' total I/O
wait plus the tiers' price for their GB plus a move cost, within capacity, RAID-adjusted back-end
IOPS and the fastest tier's daily write budget. Profiles describe the workload; only pins, kinds
and physics make hard limits. Queueing depends on what the placement puts on a tier (`_solve`).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from advisors.benefit import TierPhysics, TierWait, backend_iops, physics, utilisation
from advisors.binding import Binding, Placed, binding, tier_use
from advisors.classify import (
    Verdict,
    describe,
    describe_partition,
    governor_notes,
    latency_for_tier,
    maintenance_notes,
    profile_of,
)
from advisors.explain import Decision, decide, decide_member, pin_reason
from advisors.features import (
    Features,
    ObjectInfo,
    ObjectWindow,
    compute_features,
    database_heat,
    instance_read_miss,
)
from advisors.flash_curve import flash_curve
from advisors.maintenance import prepare_window
from advisors.placement import PlacementObject, PlacementResult, PlacementTier, place, polish
from advisors.pools import UnknownLocation, split_by_pool
from advisors.quantities import gb, pct, rate
from advisors.tier_curves import TierFigures, blend, tier_curves
from advisors.units import PLACEABLE, WHOLE, Case, Costs, build_units, make_case, uid, unit_costs, unit_key
from policies.model import DEFAULT_POOL, Policy

__all__ = [
    "PLACEABLE",
    "Advice",
    "AdviceReport",
    "DatabaseCurve",
    "PoolReport",
    "advise",
    "advise_pool",
    "database_curves",
    "uid",
    "unit_key",
]


@dataclass(frozen=True, slots=True)
class Advice:
    info: ObjectInfo
    features: Features
    verdict: Verdict
    recommended_tier: str
    placement_unit: str
    reasons: tuple[str, ...]
    io_ms_per_s_now: float | None  # measured I/O wait per second where it is now
    io_ms_per_s_after: float  # predicted on the recommended tier
    decision: Decision | None = None  # the binding reason, with the numbers it used
    explanation: str = ""  # one sentence, moved or not
    waits: Mapping[str, TierWait] = field(default_factory=dict)  # whole window, by tier
    placement_object: PlacementObject | None = None  # how the optimiser saw the unit


@dataclass(frozen=True, slots=True)
class PoolReport:
    """One storage pool's placement: its tiers, the solver's answer and bound, the load it puts
    on each tier and the pool's flash curve."""

    name: str
    tiers: tuple[str, ...]
    placement: PlacementResult
    flash_tier: str
    flash_curve: tuple[tuple[float, float], ...]
    utilisation: Mapping[str, float]
    notes: tuple[str, ...]
    flash_curve_by_database: dict[tuple[str, str], tuple[tuple[float, float], ...]]
    tier_figures: TierFigures | None = None  # the tiers' figures the benefit model took: policy, measured


@dataclass(frozen=True, slots=True)
class AdviceReport:
    objects: tuple[Advice, ...]
    placement: PlacementResult
    flash_curve: tuple[tuple[float, float], ...]
    flash_tier: str
    notes: tuple[str, ...]
    flash_curve_by_database: dict[tuple[str, str], tuple[tuple[float, float], ...]]
    utilisation: Mapping[str, float] = field(default_factory=dict)  # back-end load / IOPS, by tier
    pools: tuple[PoolReport, ...] = ()  # each pool's own placement (one: the policy has no pools)
    unknown_locations: tuple[UnknownLocation, ...] = ()  # left out of the placement, by location


def placement_tiers(policy: Policy) -> list[PlacementTier]:
    """The tiers as the placement sees them: back-end IOPS planned to `max_planned_utilisation` of
    what the devices serve (queueing grows without bound near 100 %; ISM plans at 70 %), and the
    daily write budget the policy allows."""
    share = policy.endurance.tier_max_budget_share
    planned = policy.benefit.max_planned_utilisation
    return [
        PlacementTier(
            t.name,
            t.capacity_gb,
            t.max_iops * planned,
            t.raid_factor,
            t.read_latency_ms,
            t.write_latency_ms,
            max_write_gb_day=None if t.write_budget_gb_day is None else t.write_budget_gb_day * share,
        )
        for t in policy.tiers
    ]


def _kept_tier(case: Case, costs: Costs, solved: str | None) -> str:
    """The solved tier, unless the costs at the utilisation the answer gives no longer allow it
    (a move that clears the minimum saving at today's load may not at the answer's): then the
    unit stays where it is when it may, else goes to its cheapest allowed tier."""
    if solved is not None and solved in costs.allowed:
        return solved
    if case.current is not None and case.current in costs.allowed:
        return case.current
    return min(costs.allowed, key=lambda t: costs.cost[t])


def _placement_object(case: Case, costs: Costs) -> PlacementObject:
    mix = case.whole
    hits = mix.random_reads * case.hit_share
    return PlacementObject(
        id=uid(case.info),
        size_gb=case.size_gb,
        read_iops=mix.reads,
        write_iops=mix.writes,
        allowed_tiers=frozenset(costs.allowed),
        read_hit_ratio=min(hits / mix.reads, 1.0) if mix.reads else 0.0,
        cost_by_tier={t: c for t, c in costs.cost.items() if t in costs.allowed},
        write_gb_day=mix.write_gb_day,
        # by access pattern: sequential writes as full stripes (benefit.write_factor)
        backend_iops_by_tier={t: w.backend_iops for t, w in costs.waits[WHOLE].items()},
    )


def _unlimited_iops(objects: Sequence[PlacementObject], tiers: Sequence[PlacementTier]) -> float:
    """More back-end IOPS than all the objects could need on any tier: an IOPS limit that never binds."""
    return 1.0 + sum(
        max(o.read_iops + o.write_iops * max(t.raid_factor for t in tiers),
            *(o.backend_iops_by_tier or {}).values())
        for o in objects
    )  # fmt: skip


def _backend(o: PlacementObject, tier: PlacementTier) -> float:
    if o.backend_iops_by_tier is not None and tier.name in o.backend_iops_by_tier:
        return o.backend_iops_by_tier[tier.name]
    return o.read_iops * (1 - o.read_hit_ratio) + o.write_iops * tier.raid_factor


def _load(objects: Sequence[PlacementObject], tier: PlacementTier) -> tuple[float, float]:
    """(back-end IOPS, GB written a day) of objects on a tier."""
    return sum(_backend(o, tier) for o in objects), sum(o.write_gb_day for o in objects)


def _place_within_limits(
    objects: list[PlacementObject],
    tiers: list[PlacementTier],
    time_limit_s: float,
    today: Mapping[str, str],
) -> tuple[PlacementResult, list[str]]:
    """Place within every limit. When there is no such placement because today's load already
    exceeds what a tier's devices serve or its write budget allows (an overloaded array is often
    why a DBA asks), that tier may keep the load it has today, no more, and the notes say by how
    much it is over; failing that, within capacity alone. `today`: object id -> its current tier."""
    result = place(objects, tiers, time_limit_s=time_limit_s)
    notes = list(result.notes)
    if result.status != "infeasible":
        return result, notes
    now = {t.name: _load([o for o in objects if today.get(o.id) == t.name], t) for t in tiers}
    as_today = [
        replace(
            t,
            max_iops=max(t.max_iops, now[t.name][0] * (1 + 1e-6)),
            max_write_gb_day=None
            if t.max_write_gb_day is None
            else max(t.max_write_gb_day, now[t.name][1] * (1 + 1e-6)),
        )
        for t in tiers
    ]
    relaxed = place(objects, as_today, time_limit_s=time_limit_s)
    how = "no tier more loaded than today"
    if relaxed.status == "infeasible":
        unlimited = [
            replace(t, max_iops=_unlimited_iops(objects, tiers), max_write_gb_day=None) for t in tiers
        ]
        relaxed = place(objects, unlimited, time_limit_s=time_limit_s)
        how = "within capacity only"
    if relaxed.status == "infeasible":
        notes.append("no placement fits the tiers' capacity: showing each unit's best tier")
        return relaxed, notes
    by_id = {o.id: o for o in objects}
    for t in tiers:
        iops, written = _load([by_id[i] for i, name in relaxed.assignment.items() if name == t.name], t)
        if iops > t.max_iops * (1 + 1e-6):
            notes.append(
                f"tier {t.name} carries {rate(iops, 'back-end IOPS')}, more than the {rate(t.max_iops, '')} planned for "
                f"its devices: add devices (see `tierwise size`) or move load elsewhere; placed with {how}"
            )
        if t.max_write_gb_day is not None and written > t.max_write_gb_day * (1 + 1e-6):
            notes.append(
                f"tier {t.name} is written {gb(written)} a day, more than its write budget of "
                f"{gb(t.max_write_gb_day)}: placed with {how}"
            )
    return replace(relaxed, notes=(*relaxed.notes, *notes)), notes


def _utilisation_of(
    cases: Sequence[Case], tier_of: Mapping[str, str], phys: Mapping[str, TierPhysics]
) -> dict[str, float]:
    """Each tier's utilisation with every unit on the tier `tier_of` gives it (by uid)."""
    on = {uid(c.info): c for c in cases}
    loads = [
        (t, backend_iops(on[i].whole, phys[t], on[i].hit_share))
        for i, t in tier_of.items()
        if i in on and t in phys
    ]
    return utilisation(loads, phys)


def _solve(
    cases: Sequence[Case], phys: Mapping[str, TierPhysics], policy: Policy, time_limit_s: float
) -> tuple[PlacementResult, list[str], list[Costs]]:
    """Queueing makes a tier's latency depend on what the placement puts there, which the linear
    placement cannot express: it is solved at a fixed utilisation per tier, starting from today's,
    then again at the (damped) utilisation its answer gives, up to three times. Each answer is then
    priced at the utilisation it really gives, and the best one is kept. Returns the placement, its
    notes and its costs (at its own utilisation)."""
    today = {uid(c.info): c.current for c in cases if c.current is not None}
    load = _utilisation_of(cases, today, phys)
    ptiers = placement_tiers(policy)
    best: tuple[float, PlacementResult, list[str], list[Costs]] | None = None
    for _ in range(3):
        costs = [unit_costs(c, phys, load, policy) for c in cases]
        objects = [_placement_object(c, k) for c, k in zip(cases, costs, strict=True)]
        result, notes = _place_within_limits(objects, ptiers, time_limit_s / 3, today)
        if result.status == "infeasible":
            if best is None:
                best = (math.inf, result, notes, costs)
            break
        placed = _utilisation_of(cases, result.assignment, phys)
        own = [unit_costs(c, phys, placed, policy) for c in cases]
        score = sum(
            k.cost.get(result.assignment[uid(c.info)], math.inf) for c, k in zip(cases, own, strict=True)
        )
        if best is None or score < best[0]:
            best = (score, result, notes, own)
        if all(abs(placed[t] - load[t]) < 0.02 for t in phys):
            break
        load = {t: (load[t] + placed[t]) / 2 for t in phys}
    assert best is not None
    _, result, notes, costs = best
    return result, notes, costs


def _unit_advice(
    case: Case,
    costs: Costs,
    assigned: str,
    bound: Binding,
    policy: Policy,
    phys: Mapping[str, TierPhysics],
    obj: PlacementObject,
    figures: TierFigures | None = None,
) -> Advice:
    info, f, profile = case.info, case.features, case.profile
    waits = costs.waits[WHOLE]
    current = case.current if case.current in waits else None
    now_ms = waits[current].wait_ms_per_s if current is not None else None
    after_ms = waits[assigned].wait_ms_per_s if assigned in waits else 0.0
    finding, _ = latency_for_tier(info, f, policy)
    governor = governor_notes(f)
    # the binding reason first: lists show the first reasons
    reasons = [
        bound.detail,
        *governor,
        profile[1],
        *maintenance_notes(info, f),
        *([finding] if finding else []),
        describe(f),
    ]
    more: dict[str, float | None] = {
        "sequential_share": case.whole.sequential_share,
        "write_gb_day": case.whole.write_gb_day,
        "backend_iops": waits[assigned].backend_iops if assigned in waits else None,
        "price_ms_per_s_per_gb": phys[assigned].price_ms_per_gb,
    }
    if now_ms is not None:
        saved = now_ms - after_ms
        more |= {
            "saving_ms_per_s_per_gb": saved / case.size_gb if case.size_gb else None,
            "saving_ms_per_io": saved / case.whole.io if case.whole.io else None,
        }
    if current is not None and phys[assigned].rank > phys[current].rank:
        cost_per_gb = {t.name: t.cost_per_gb for t in policy.tiers}
        more |= {
            "gb_freed": case.size_gb,
            "cost_freed": case.size_gb * (cost_per_gb[current] - cost_per_gb[assigned]),
        }
    d, text = decide(info, f, binding=bound, allowed=costs.allowed, recommended=assigned, waits=waits,
                     io_now=now_ms, io_after=after_ms, more=more)  # fmt: skip
    # the tier figures it was priced with (none matter to a unit without I/O or a one-tier pool)
    if figures is not None and case.whole.io > 0 and len(policy.tiers) > 1:
        text += f" {figures.text([t.name for t in policy.tiers])}".rstrip()
    if governor:  # its own finding: a cap of the pool, which the placement cannot change
        text += "".join(f" {note.split(' ', 1)[1]}." for note in governor)
    verdict = Verdict(profile[0], bound.rule, costs.allowed, bound.preferred, tuple(reasons))
    return Advice(info, f, verdict, assigned, info.key, tuple(reasons), now_ms, after_ms, d, text, waits, obj)


def _partition_advice(
    w: ObjectWindow, unit: Advice | None, heat: dict[tuple[str, str], float], policy: Policy
) -> Advice:
    """A partition follows the filegroup / table space that holds it: its verdict is the unit's,
    its numbers are its own (ILM plans use them to tell hot months from cold ones)."""
    f = compute_features(prepare_window(w, policy), db_heat=heat.get((w.info.server, w.info.database)))
    own = describe_partition(f)
    if unit is None:
        profile = profile_of(w.info, f, policy)
        tier = w.info.current_tier or policy.tiers[-1].name
        why = ("the filegroup / table space holding it is not in the input, and a partition is placed with "
               "the one that holds it: not placed")  # fmt: skip
        d = Decision("not_placed", "TW750", False, w.info.current_tier, tier, tier, (tier,), why, {}, ())
        v = Verdict(profile[0], "TW750", (tier,), tier, (profile[1], own, why))
        return Advice(
            w.info,
            f,
            v,
            tier,
            w.info.key,
            v.reasons,
            None,
            0.0,
            d,
            f"Not placed: {why}; its own figures: {own}.",
        )
    uv, target = unit.verdict, unit.recommended_tier
    v = replace(uv, reasons=(f"{unit.info.kind} {unit.info.name}: {unit.explanation}", own))
    why = f"moves with {unit.info.kind} {unit.info.name} (recommended: {target})"
    info = replace(w.info, current_tier=w.info.current_tier or unit.info.current_tier)
    assert unit.decision is not None
    d, text = decide_member(info, f, policy, unit=unit.info, unit_decision=unit.decision,
                            unit_explanation=unit.explanation, own=own)  # fmt: skip
    return Advice(info, f, v, target, unit.info.key, (*v.reasons, why), None, 0.0, d, text)


def _curve(
    advice: Sequence[Advice], tiers: list[PlacementTier], flash: str, points: int, time_limit_s: float = 1.0
) -> tuple[tuple[float, float], ...]:
    """(flash GB, share of today's I/O wait saved) from 0 GB of flash to all the units may use.
    Today's placement is the baseline: at the flash GB in use today the share is 0 by definition;
    the curve never drops (more flash can always be left unused)."""
    objects = [_curve_object(a, flash) for a in advice if a.placement_object is not None]
    if len(tiers) < 2 or points < 2 or not objects:
        return ()
    waits = {uid(a.info): {t: w.wait_ms_per_s for t, w in a.waits.items()} for a in advice}
    today = sum(a.io_ms_per_s_now if a.io_ms_per_s_now is not None else a.io_ms_per_s_after for a in advice)
    found = flash_curve(objects, tiers, flash_tier=flash, points=points, time_limit_s=time_limit_s, waits=waits,
                        baseline=today)  # fmt: skip
    in_use = sum((a.info.size_bytes or 0) / 2**30 for a in advice if a.info.current_tier == flash)
    out: list[tuple[float, float]] = []
    points_by_gb = dict(found)
    points_by_gb.setdefault(in_use, 0.0)
    for size_gb, share in sorted(points_by_gb.items()):
        out.append((size_gb, max(share, out[-1][1]) if out else share))
    return tuple(out)


def _curve_object(a: Advice, flash: str) -> PlacementObject:
    """The unit as the curve places it: units that would not take flash even without limits are
    kept off it, so the curve ends where more flash stops paying."""
    o = a.placement_object
    assert o is not None and o.cost_by_tier is not None
    wants = a.decision is not None and a.decision.preferred_tier == flash
    if wants or a.info.current_tier == flash or flash not in o.cost_by_tier or len(o.cost_by_tier) < 2:
        return o
    costs = {t: c for t, c in o.cost_by_tier.items() if t != flash}
    return replace(o, cost_by_tier=costs, allowed_tiers=frozenset(costs))


def advise(
    windows: Sequence[ObjectWindow],
    policy: Policy,
    *,
    now: datetime | None = None,
    time_limit_s: float = 10.0,
    curve_points: int = 10,
) -> AdviceReport:
    """Every storage pool placed on its own (`advise_pool`, each with `time_limit_s`), the units
    on locations that match no tier of their pool left out and listed; the reports joined.
    `now` is the data's clock (e.g. the newest sample), used for minimum residency."""
    split = split_by_pool(windows, policy.pool_names())
    parts = [
        advise_pool(ws, policy, pool=name, now=now, time_limit_s=time_limit_s, curve_points=curve_points)
        for name, ws in split.by_pool.items()
    ]
    return join_reports(parts, policy, split.unknown)


def advise_pool(
    windows: Sequence[ObjectWindow],
    policy: Policy,
    *,
    pool: str = DEFAULT_POOL,
    now: datetime | None = None,
    time_limit_s: float = 10.0,
    curve_points: int = 10,
) -> AdviceReport:
    """One pool's advice: its objects (`split_by_pool`) on its tiers, within its own capacity,
    IOPS and write budget. A unit of work of its own: pools share nothing but the policy."""
    policy = policy.for_pool(pool)
    units, member_of = build_units(windows)
    collected = units
    units = [prepare_window(u, policy) for u in units]  # maintenance out, business periods apart
    heat = database_heat(units)
    inst_miss = instance_read_miss(windows)
    phys = physics(policy)
    feats = [
        compute_features(u, db_heat=heat.get((u.info.server, u.info.database)),
                         instance_miss=inst_miss.get(u.info.server))
        for u in units
    ]  # fmt: skip
    figures = None
    if policy.benefit.learn_tiers:  # each tier as the objects on it measure it, weighed against the policy
        curves = tier_curves(units, feats, policy, phys, pool=pool, collected=collected)
        figures = blend(curves, policy, pool=pool)
        phys = physics(policy, figures.used())
    cases: list[Case] = []
    for u, f in zip(units, feats, strict=True):
        case = make_case(u, f, policy, phys, now=now)
        if case is not None:
            cases.append(case)
    result, notes, costs = _solve(cases, phys, policy, time_limit_s)
    assigned = {
        uid(c.info): _kept_tier(c, k, result.assignment.get(uid(c.info)))
        for c, k in zip(cases, costs, strict=True)
    }
    # solved at a utilisation a little off the one it gives, within a gap tolerance: no unit may
    # do better alone at its own costs (each explanation compares it with its alternatives)
    objects = [_placement_object(c, k) for c, k in zip(cases, costs, strict=True)]
    assigned = polish(objects, placement_tiers(policy), assigned)
    placed = [Placed(c, k, assigned[uid(c.info)]) for c, k in zip(cases, costs, strict=True)]
    use = tier_use(placed, policy)
    load = _utilisation_of(cases, {uid(p.case.info): p.tier for p in placed}, phys)  # as settled
    out: list[Advice] = []
    by_unit: dict[str, Advice] = {}
    for p, obj in zip(placed, objects, strict=True):
        pinned = pin_reason(p.case.info, policy)
        bound = binding(p.case, p.costs, p.tier, use, policy, phys, pinned=pinned)
        a = _unit_advice(p.case, p.costs, p.tier, bound, policy, phys, obj, figures)
        out.append(a)
        by_unit[uid(a.info)] = a
    for w in windows:
        if w.info.kind == "partition":
            unit_uid = member_of.get(uid(w.info), "")
            out.append(
                _partition_advice(w, by_unit.get(unit_uid) if unit_uid != uid(w.info) else None, heat, policy)
            )
    flash = policy.tiers[0].name
    ptiers = placement_tiers(policy)
    units_advice = list(by_unit.values())
    curve = _curve(units_advice, ptiers, flash, curve_points)
    by_db: dict[tuple[str, str], tuple[tuple[float, float], ...]] = {}
    databases = sorted({(a.info.server, a.info.database) for a in units_advice})
    if curve_points and len(databases) > 1:
        for server, database in databases:
            subset = [a for a in units_advice if (a.info.server, a.info.database) == (server, database)]
            by_db[(server, database)] = _curve(subset, ptiers, flash, curve_points)
    notes.extend(policy.retired_settings)
    budget = use[flash].limit["write_budget"]
    if budget:
        written = use[flash].used["write_budget"]
        notes.append(f"{flash}'s daily write budget: the units placed there write {gb(written)} of "
                     f"{gb(budget)} a day ({pct(written / budget)})")  # fmt: skip
    part = PoolReport(
        pool, tuple(t.name for t in policy.tiers), result, flash, curve, load, tuple(notes), by_db, figures
    )
    return AdviceReport(tuple(out), result, curve, flash, tuple(notes), by_db, load, (part,))


def join_reports(
    parts: Sequence[AdviceReport], policy: Policy, unknown: Sequence[UnknownLocation] = ()
) -> AdviceReport:
    """The pools' reports as one: one pool's report as it is; several: objects in pool order,
    the placements summed (status the weakest, gap from the sums), tier figures as "pool/tier",
    the fleet-wide flash curve left to the pools (their flash tiers differ), notes by pool."""
    if len(parts) == 1:
        return replace(parts[0], unknown_locations=tuple(unknown))
    pools = tuple(p for part in parts for p in part.pools)
    objective = sum(p.placement.objective for p in pools)
    bound = sum(p.placement.lower_bound for p in pools)
    statuses = {p.placement.status for p in pools}
    status = next((s for s in ("infeasible", "feasible") if s in statuses), "optimal")
    span = objective - bound
    gap = span / abs(objective) if objective not in (0, math.inf) else (0.0 if span <= 1e-9 else math.inf)
    methods = sorted({p.placement.method for p in pools})
    retired = list(policy.retired_settings)
    notes = [*retired, *(f"pool {p.name}: {n}" for p in pools for n in p.notes if n not in retired)]
    placement = PlacementResult(
        {k: v for p in pools for k, v in p.placement.assignment.items()},
        objective,
        bound,
        status,
        gap,
        methods[0] if len(methods) == 1 else "+".join(methods),
        sum(p.placement.seconds for p in pools),
        tuple(f"pool {p.name}: {n}" for p in pools for n in p.placement.notes),
    )
    by_db: dict[tuple[str, str], tuple[tuple[float, float], ...]] = {}
    for p in pools:
        for k, points in p.flash_curve_by_database.items():
            by_db.setdefault(k, points)
    load = {f"{p.name}/{t}": u for p in pools for t, u in p.utilisation.items()}
    objects = tuple(a for part in parts for a in part.objects)
    return AdviceReport(objects, placement, (), pools[0].flash_tier if pools else "", tuple(notes), by_db, load,
                        pools, tuple(unknown))  # fmt: skip


@dataclass(frozen=True, slots=True)
class DatabaseCurve:
    """How much flash one database could use: (flash GB, share of its I/O wait today saved), and
    what the recommended placement predicts."""

    engine: str
    server: str
    database: str
    points: tuple[tuple[float, float], ...]
    flash_gb_recommended: float
    io_ms_per_s_now: float
    io_ms_per_s_after: float
    units: int
    note: str = ""
    pool: str = DEFAULT_POOL
    flash_tier: str = ""  # the pool's fastest tier, whose GB the points count


def database_curves(
    report: AdviceReport, policy: Policy, *, points: int = 8, time_limit_s: float = 0.25
) -> list[DatabaseCurve]:
    """The flash curve per database (per pool, for a database on several) from a report's
    placement units, each database alone on its pool's tiers. Budget: up to `points x
    time_limit_s` seconds per database."""
    groups: dict[tuple[str, str, str, str], list[Advice]] = defaultdict(list)
    for a in report.objects:
        if a.placement_unit == a.info.key and a.placement_object is not None:
            groups[(a.info.pool, a.info.engine, a.info.server, a.info.database)].append(a)
    out: list[DatabaseCurve] = []
    views = {pool: policy.for_pool(pool) for pool in {k[0] for k in groups}}
    order = {name: i for i, name in enumerate(policy.pool_names())}
    for (pool, engine, server, database), units in sorted(
        groups.items(), key=lambda g: (order[g[0][0]], g[0])
    ):
        ptiers = placement_tiers(views[pool])
        flash = views[pool].tiers[0].name
        curve = _curve(units, ptiers, flash, points, time_limit_s)
        note = ""
        if len(curve) <= 1 and len(ptiers) > 1:  # no point but today's: the limits fit at no amount of flash
            objects = [a.placement_object for a in units if a.placement_object is not None]
            relaxed = [
                replace(t, max_iops=_unlimited_iops(objects, ptiers), max_write_gb_day=None) for t in ptiers
            ]
            curve = _curve(units, relaxed, flash, points, time_limit_s)
            note = (
                "the load exceeds the tiers' IOPS limits at every amount of flash: curve within capacity only"
            )
            if len(curve) <= 1:
                note = "the tiers' capacity cannot hold this database at any amount of flash: no curve"
        out.append(
            DatabaseCurve(
                engine,
                server,
                database,
                curve,
                sum((a.info.size_bytes or 0) / 2**30 for a in units if a.recommended_tier == flash),
                sum(a.io_ms_per_s_now or 0.0 for a in units),
                sum(a.io_ms_per_s_after for a in units),
                len(units),
                note,
                pool,
                flash,
            )
        )
    return out
