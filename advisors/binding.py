"""The binding reason of each placement decision, in numbers.

A unit lands where the placement puts it; this says which consideration made the difference,
read off what the pipeline produced (its costs, the tiers' use, the pins), never changing it:

- ``pinned`` (TW740): pins and kind rules leave one tier;
- ``residency`` (TW730): it moved less than the minimum residency ago;
- ``storage_problem`` (TW801): it is slow even on the fastest tier: investigate, do not move;
- ``capacity`` / ``iops`` / ``write_budget`` (TW720 / TW721 / TW722): the tier it would be best on
  has no room, back-end IOPS or daily write budget left for it: it is the marginal unit;
- ``minimum_benefit`` (TW705): a faster tier would save less than `min_saving_ms_per_io` per I/O;
- ``period`` (TW901): a business period's latest occurrence keeps it off a slower tier;
- ``price`` (TW710): the tier with the least I/O wait is not worth its price for this unit, or
  a cheaper tier frees more (in I/O-wait terms) than it costs;
- ``benefit`` (TW700): it is on the tier with the least I/O wait, and that tier is worth its price.

The sentences read every figure through advisors.quantities, and say a tier's price as a DBA
would: "a GB on flash costs 1.50 ms/s per GB over fc" (cost_per_gb x benefit.price_weight).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from advisors.benefit import TierPhysics, write_factor
from advisors.quantities import gb, io_wait, io_wait_per, latency, pct, rate, ratio
from advisors.units import WHOLE, Case, Costs
from policies.model import Policy

CODES = {
    "benefit": "TW700",
    "minimum_benefit": "TW705",
    "price": "TW710",
    "capacity": "TW720",
    "iops": "TW721",
    "write_budget": "TW722",
    "residency": "TW730",
    "storage_problem": "TW801",
    "pinned": "TW740",
    "not_placed": "TW750",
    "period": "TW901",
}
RESOURCES = ("capacity", "iops", "write_budget")


@dataclass(frozen=True, slots=True)
class Binding:
    stage: str
    preferred: str  # the best tier for the unit alone, ignoring the tiers' limits
    detail: str  # the reason, one clause with its numbers

    @property
    def rule(self) -> str:
        return CODES[self.stage]


@dataclass(frozen=True, slots=True)
class Placed:
    case: Case
    costs: Costs
    tier: str


def resource_use(p: Placed, resource: str) -> float:
    """What a placed unit takes of one of its tier's limits (GB, back-end IOPS, GB written a day)."""
    if resource == "capacity":
        return p.case.size_gb
    if resource == "iops":
        return p.costs.wait(p.tier).backend_iops if p.tier in p.costs.waits[WHOLE] else 0.0
    return p.case.whole.write_gb_day


@dataclass(frozen=True, slots=True)
class TierUse:
    """What the placement puts on one tier, and the least a unit there gains per unit of each
    resource over its next best tier (the marginal unit)."""

    used: Mapping[str, float]
    limit: Mapping[str, float | None]
    marginal: Mapping[str, float | None]


def _gain(p: Placed, tier: str) -> float:
    """What being on `tier` saves the unit over its best other allowed tier (objective terms)."""
    others = [c for t, c in p.costs.cost.items() if t != tier and t in p.costs.allowed]
    return (min(others) if others else p.costs.cost[tier]) - p.costs.cost[tier]


def tier_use(placed: Sequence[Placed], policy: Policy) -> dict[str, TierUse]:
    out: dict[str, TierUse] = {}
    share = policy.endurance.tier_max_budget_share
    for t in policy.tiers:
        here = [p for p in placed if p.tier == t.name]
        budget = t.write_budget_gb_day
        used = {r: sum(resource_use(p, r) for p in here) for r in RESOURCES}
        limit = {
            "capacity": t.capacity_gb,
            "iops": t.max_iops * policy.benefit.max_planned_utilisation,
            "write_budget": None if budget is None else budget * share,
        }
        marginal: dict[str, float | None] = {}
        for r in RESOURCES:
            per = [_gain(p, t.name) / resource_use(p, r) for p in here if resource_use(p, r) > 0]
            marginal[r] = min(per) if per else None
        out[t.name] = TierUse(used, limit, marginal)
    return out


def _costs_over(dearer: str, cheaper: str, dprice: float) -> str:
    """What a GB on one tier costs over another, in the I/O-wait terms the advice weighs money in
    (cost_per_gb x benefit.price_weight): "a GB on flash costs 1.50 ms/s per GB over fc"."""
    if dprice >= 0:
        return f"a GB on {dearer} costs {io_wait_per(dprice)} over {cheaper}"
    return f"a GB on {dearer} costs {io_wait_per(-dprice)} less than on {cheaper}"


def _the_gap(dearer: str, cheaper: str, dprice: float) -> str:
    """The same as the object of a comparison: "the 1.50 ms/s per GB that a GB on flash costs over fc"."""
    return f"the {io_wait_per(dprice)} that a GB on {dearer} costs over {cheaper}"


def _limit_detail(
    case: Case, costs: Costs, tier: TierPhysics, assigned: str, use: TierUse, resource: str
) -> str:
    mine = costs.cost[assigned] - costs.cost[tier.name]  # what this unit would gain there
    used, limit, marginal = use.used[resource], use.limit[resource] or 0.0, use.marginal[resource]
    if resource == "capacity":
        size = case.size_gb
        last = "" if marginal is None else f": the last unit placed there saves {io_wait_per(marginal)}"
        this = f", this one {io_wait_per(mine / size)}" if size > 0 and marginal is not None else ""
        return f"{tier.name} is full ({gb(used)} of {gb(limit)} used, this unit needs {gb(size)}){last}{this}"
    if resource == "iops":
        need = costs.wait(tier.name).backend_iops
        last = (
            ""
            if marginal is None
            else f"; the last unit placed there saves {io_wait_per(marginal, 'back-end I/O')}"
        )
        raid = ""
        if case.whole.writes:  # random writes pay the RAID penalty, full-stripe ones data + parity
            raid = f" (writes count {ratio(write_factor(case.whole, tier))})"
        return (f"{tier.name}'s back-end IOPS are {pct(used / limit) if limit else 'all'} used ({rate(used, '')} of "
                f"the {rate(limit, 'IOPS')} planned); this unit needs {rate(need, 'IOPS')} there{raid}{last}")  # fmt: skip
    wgb = case.whole.write_gb_day
    last = (
        ""
        if marginal is None
        else f"; the last unit placed there saves {io_wait_per(marginal, 'GB written a day')}"
    )
    this = (
        f", this one {io_wait_per(mine / wgb, 'GB written a day')}"
        if wgb > 0 and marginal is not None
        else ""
    )
    return (f"{tier.name}'s daily write budget is {pct(used / limit) if limit else 'all'} used by the units placed "
            f"({gb(used)} of {gb(limit)} a day); this unit writes {gb(wgb)} a day{last}{this}")  # fmt: skip


def _which_limit(case: Case, costs: Costs, tier: str, use: TierUse) -> str:
    """The limit this unit would overrun most on `tier`, relative to what is left of it."""
    need = {r: resource_use(Placed(case, costs, tier), r) for r in RESOURCES}
    over: list[tuple[float, str]] = []
    for r in RESOURCES:
        limit = use.limit[r]
        if limit is None:
            continue
        ratio = (use.used[r] + need[r]) / limit if limit > 0 else float("inf")
        over.append((ratio, r))
    return max(over)[1] if over else "capacity"


def binding(
    case: Case,
    costs: Costs,
    assigned: str,
    use: Mapping[str, TierUse],
    policy: Policy,
    physics: Mapping[str, TierPhysics],
    *,
    pinned: str | None,
) -> Binding:
    current = case.current if case.current in physics else None
    allowed = [t for t in costs.allowed if t in costs.cost]
    preferred = min(allowed, key=lambda t: (costs.cost[t], t != current, physics[t].rank))
    if pinned is not None:
        return Binding("pinned", preferred, pinned)
    if case.hold is not None and assigned == current:
        return Binding(case.hold[0], preferred, case.hold[1])
    if assigned != preferred:
        resource = _which_limit(case, costs, preferred, use[preferred])
        detail = _limit_detail(case, costs, physics[preferred], assigned, use[preferred], resource)
        return Binding(resource, preferred, detail)
    blocked = [g for g, _ in costs.gated.items() if costs.cost[g] < costs.cost[assigned]]
    if blocked:
        g = min(blocked, key=lambda t: physics[t].rank)
        return Binding("minimum_benefit", preferred, _gate_detail(case, costs, g, policy))
    small = [t for t in costs.small if costs.cost[t] < costs.cost[assigned]]
    if small:
        t = min(small, key=lambda t: costs.cost[t])
        return Binding("minimum_benefit", preferred, _small_detail(costs, t, policy))
    period = _period_detail(case, costs, assigned, physics)
    if period is not None:
        return Binding("period", preferred, period)
    # the tier with the least I/O wait among all the pins allow (a faster one may also be short of
    # the minimum saving per I/O: if it is not worth its price either, the price is what binds)
    open_tiers = [t for t in case.pin_allowed if t in costs.cost]
    least_wait = min(open_tiers, key=lambda t: (costs.change[t], t != current, physics[t].rank))
    if least_wait != assigned:
        return Binding("price", preferred, _price_detail(case, costs, assigned, least_wait, physics, policy))
    return Binding("benefit", preferred, _benefit_detail(case, costs, assigned, allowed, physics, policy))


def _gate_detail(case: Case, costs: Costs, tier: str, policy: Policy) -> str:
    per_io, than = costs.gated[tier]  # compared with where it is, or with the next slower tier
    saved = costs.wait(than).wait_ms_per_s - costs.wait(tier).wait_ms_per_s
    versus = "" if than == case.current else f" over {than}"
    if per_io <= 0:
        return (f"{tier} would not cut its I/O wait{versus} ({io_wait(costs.wait(than).wait_ms_per_s)} -> "
                f"{io_wait(costs.wait(tier).wait_ms_per_s)})")  # fmt: skip
    return (f"{tier} would save {latency(per_io)} per I/O{versus} ({io_wait(saved)}), below the policy's "
            f"minimum of {latency(policy.benefit.min_saving_ms_per_io)} per I/O")  # fmt: skip


def _small_detail(costs: Costs, tier: str, policy: Policy) -> str:
    """A promotion that saves less than the policy's minimum per move: not worth the change."""
    saved = costs.small[tier]
    least = f"{policy.benefit.min_saving_ms_per_s_per_move:g} ms/s"  # echo: the policy's minimum per move
    return (f"{tier} would save {io_wait(saved)} of I/O wait on {costs.deciding[tier]}, below the policy's "
            f"minimum of {least} per move: not worth the change it costs")  # fmt: skip


def _period_detail(case: Case, costs: Costs, assigned: str, physics: Mapping[str, TierPhysics]) -> str | None:
    periods = [w for w in case.mixes if w.startswith("the '")]
    current = case.current
    if not periods or current is None or assigned != current:
        return None
    for t in costs.allowed:
        if physics[t].rank <= physics[assigned].rank or costs.deciding.get(t) != periods[0]:
            continue
        others = [w for w in case.mixes if w != periods[0]]
        change = max(costs.waits[w][t].wait_ms_per_s - costs.waits[w][current].wait_ms_per_s for w in others)
        if costs.cost[t] - costs.change[t] + change < costs.cost[assigned]:
            more = costs.change[t]
            return (f"in {periods[0]} it would wait {io_wait(more)} more on {t}: kept on {assigned} "
                    f"between periods")  # fmt: skip
    return None


def _move_net(dearer: str, cheaper: str, dprice: float, policy: Policy) -> tuple[str, str]:
    """What a move to a cheaper tier frees per GB net of the move cost, and how that is made up."""
    move = policy.benefit.move_cost_ms_per_s_per_gb
    parts = (
        f" ({_costs_over(dearer, cheaper, dprice)}, minus {io_wait_per(move)} for the move)"
        if move > 0
        else ""
    )
    return io_wait_per(dprice - move), parts


def _price_detail(
    case: Case, costs: Costs, assigned: str, faster: str, physics: Mapping[str, TierPhysics], policy: Policy
) -> str:
    size = max(case.size_gb, 1e-9)
    dprice = physics[faster].price_ms_per_gb - physics[assigned].price_ms_per_gb
    saved = costs.change[assigned] - costs.change[faster]
    if case.current is not None and case.current != assigned:  # a demotion for its price
        saved = costs.change[assigned]  # more wait than staying where it is
        net, parts = _move_net(
            case.current,
            assigned,
            physics[case.current].price_ms_per_gb - physics[assigned].price_ms_per_gb,
            policy,
        )
        return (f"frees {gb(case.size_gb)} of {case.current} for {io_wait(saved)} more I/O wait "
                f"({io_wait_per(saved / size)}), less than the {net} it frees{parts}")  # fmt: skip
    clause = (f"{faster} would save {io_wait(saved)} of I/O wait ({io_wait_per(saved / size)}), "
              f"less than {_the_gap(faster, assigned, dprice)}")  # fmt: skip
    below = _slower_clause(case, costs, assigned, physics, policy)
    return clause if below is None else f"{clause}; {below}"


def _slower_clause(
    case: Case, costs: Costs, assigned: str, physics: Mapping[str, TierPhysics], policy: Policy
) -> str | None:
    """Why a unit that stays does not go to the next slower tier it may use (None: there is none)."""
    slower = [t for t in costs.allowed if physics[t].rank > physics[assigned].rank]
    if case.current != assigned or not slower:
        return None
    size = max(case.size_gb, 1e-9)
    s = slower[0]
    more = costs.change[s]
    dprice = physics[assigned].price_ms_per_gb - physics[s].price_ms_per_gb
    net, parts = _move_net(assigned, s, dprice, policy)
    return (f"on {s} it would wait {io_wait(more)} more ({io_wait_per(more / size)}, on "
            f"{costs.deciding[s]}), more than the {net} a move to {s} would free{parts}")  # fmt: skip


def _benefit_detail(
    case: Case,
    costs: Costs,
    assigned: str,
    allowed: Sequence[str],
    physics: Mapping[str, TierPhysics],
    policy: Policy,
) -> str:
    size = max(case.size_gb, 1e-9)
    there = costs.wait(assigned)
    current = case.current if case.current in physics else None
    if current is None:
        return (f"predicted {io_wait(there.wait_ms_per_s)} of I/O wait on {assigned}: the least I/O wait, "
                f"counting what a GB costs, among {', '.join(allowed)}")  # fmt: skip
    if assigned != current:
        now = costs.wait(current)
        saved = -costs.change[assigned]  # on the window least in the move's favour
        whole = now.wait_ms_per_s - there.wait_ms_per_s
        dprice = physics[assigned].price_ms_per_gb - physics[current].price_ms_per_gb
        reads = ""
        if now.read_ms is not None and there.read_ms is not None:
            reads = f"; {latency(now.read_ms)} -> {latency(there.read_ms)} per read"
        if costs.deciding[assigned] != WHOLE:
            reads += f"; {io_wait(whole)} on {WHOLE}"
        worth = f", more than {_the_gap(assigned, current, dprice)}" if dprice > 0 else ""
        return (f"saves {io_wait(saved)} of I/O wait on {costs.deciding[assigned]} "
                f"({io_wait_per(saved / size)}{reads}){worth}")  # fmt: skip
    if case.size_gb <= 0:
        return "it holds no data (0 GB): nothing to gain by moving it"
    below = _slower_clause(case, costs, assigned, physics, policy)
    return below or f"no tier it may use would cut its I/O wait ({io_wait(there.wait_ms_per_s)} now)"
