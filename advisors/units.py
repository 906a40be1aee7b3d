"""Placement units: what moves together, and what each unit's I/O would cost on every tier.

SQL Server places data by filegroup (proportional fill spreads a filegroup over all its files,
domain.md §1.4), tempdb's data files move together, DB2 places by table space. Partitions are
reported too, but they move with the filegroup or table space that holds them.

For each unit and each tier it may use, the objective the placement minimises is its I/O wait
(benefit.py) plus the tier's price for the unit's GB plus, off its current tier, a move cost.
Stability without relative heat: the change in I/O wait a move brings is taken on the window
least in its favour (the whole window, the last `short_window_hours`, and a declared business
period's latest occurrence), and a promotion must save `min_saving_ms_per_io` on every one.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from operator import lt

from advisors.benefit import IoMix, TierPhysics, TierWait, array_cache_hits, io_mix, wait_on
from advisors.classify import latency_for_tier, profile_of
from advisors.features import GB, Features, ObjectInfo, ObjectWindow, Usage, combine, hour_times
from advisors.maintenance import sum_usage
from policies.model import Policy

PLACEABLE = frozenset({"data_file", "log_file", "filegroup", "partition", "tablespace", "tempdb"})
WHOLE = "the whole window"
TIE = 1e-6  # ms/s added to every move, so that an exact tie (an empty unit) stays where it is


# Objects held inside another whose counters already include their I/O: a partition (in its
# filegroup's files / its table space) and a DB2 container (in its table space).
HELD = frozenset({"partition", "container"})


def unit_key(info: ObjectInfo, *, held_alone: bool = False) -> str | None:
    """Key of the placement unit an object moves with (None: it is its own unit), the one rule for
    every kind the store holds. SQL Server: a data file and a partition move with their filegroup,
    tempdb's data files together; DB2: a partition and a container move with their table space.
    Logs, table spaces, buffer pools and the instance are their own unit.

    `held_alone`: a partition or container counts as its own unit, as verification judges one (its
    I/O is already in the unit's files, so it is never summed into the unit)."""
    if held_alone and info.kind in HELD:
        return None
    if info.engine == "sqlserver":
        if info.kind in ("data_file", "partition") and info.filegroup:
            return f"{info.database}/filegroup/{info.filegroup}"
        if info.kind == "tempdb":
            return "tempdb/data"
    if info.engine == "db2" and info.kind in HELD and info.tablespace:
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
            pool=first.pool,
            # the unit last moved when its most recently moved file did
            location_since=max(
                (m.info.location_since for m in members if m.info.location_since), default=None
            ),
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


@dataclass(frozen=True, slots=True)
class Case:
    """One placement unit as the placement sees it, before costs."""

    window: ObjectWindow
    features: Features
    profile: tuple[str, str]  # the profile and the figures that name it (classify.profile_of)
    mixes: Mapping[str, IoMix]  # by window label; WHOLE first
    hit_share: float  # random reads the array cache serves
    pin_allowed: tuple[str, ...]  # the tiers pins and kinds allow, fastest first
    hold: tuple[str, str] | None  # (stage, why) the unit stays where it is: residency, storage problem

    @property
    def info(self) -> ObjectInfo:
        return self.window.info

    @property
    def current(self) -> str | None:
        return self.info.current_tier

    @property
    def whole(self) -> IoMix:
        return self.mixes[WHOLE]

    @property
    def size_gb(self) -> float:
        return (self.info.size_bytes or 0) / GB


def window_mixes(unit: ObjectWindow, policy: Policy, *, hot_period: bool = True) -> dict[str, IoMix]:
    """The unit's mix over the whole window, the last `short_window_hours`, and the latest
    occurrence of a declared business period in which it is busy (`hot_period`: busier then than
    the period's `hot_min_ratio` times its other days)."""
    rules = policy.classification
    log = unit.info.kind == "log_file"  # appends: full-stripe writes (benefit.write_factor)
    whole = io_mix(unit.total, rules, log=log)
    out: dict[str, IoMix] = {}
    if whole is None:
        return out
    out[WHOLE] = whole
    hours = policy.hysteresis.short_window_hours
    if unit.by_hour:
        times = hour_times(unit.by_hour)
        if all(map(lt, times, times[1:])):  # in order (as `combine` leaves them): no scan
            since = times[-1] + timedelta(hours=1) - timedelta(hours=hours)
            recent = [u for _, u in unit.by_hour[bisect_left(times, since) :]]
        else:
            since = max(times) + timedelta(hours=1) - timedelta(hours=hours)
            recent = [u for t, u in unit.by_hour if t >= since]
        covered = sum(u.seconds for u in recent)
        if recent and covered < unit.total.seconds * 0.95:
            short = io_mix(sum_usage(recent), rules, log=log)
            if short is not None:
                out[f"the last {hours:g} h"] = short
    p = unit.period
    if p is not None and hot_period:
        mix = io_mix(p.window.total, rules, log=log)
        if mix is not None and mix.io > whole.io:
            out[f"the '{p.name}' period ({p.occurrence.isoformat()})"] = mix
    return out


def make_case(
    unit: ObjectWindow,
    features: Features,
    policy: Policy,
    physics: Mapping[str, TierPhysics],
    *,
    now: datetime | None,
) -> Case | None:
    mixes = window_mixes(unit, policy, hot_period=features.period is not None and features.period.hot)
    if not mixes:
        return None
    info = unit.info
    tier = physics.get(info.current_tier or "")
    hit = array_cache_hits(mixes[WHOLE], tier, policy.benefit.array_cache_hit_ms) if tier else 0.0
    allowed = tuple(policy.allowed_tiers(info.kind, info.engine, database=info.database, name=info.name))
    profile = profile_of(info, features, policy)
    hold = _hold(info, features, profile[0], allowed, policy, now)
    features = replace(features, est_cache_hit_share=hit if tier else None)
    return Case(unit, features, profile, mixes, hit, allowed, hold)


def _hold(
    info: ObjectInfo,
    f: Features,
    profile: str,
    allowed: tuple[str, ...],
    policy: Policy,
    now: datetime | None,
) -> tuple[str, str] | None:
    """Why a unit must stay where it is: it moved too recently, or it is slow even on the fastest
    tier (TW801: a storage problem to investigate; the model would read it as a reason to move)."""
    if info.current_tier not in allowed:
        return None
    since, days = info.location_since, policy.hysteresis.min_residency_days
    if now is not None and since is not None and now - since < timedelta(days=days):
        moved = (now - since).total_seconds() / 86400
        return (
            "residency",
            f"moved to {info.current_tier} {moved:,.1f} days ago; the minimum residency is {days:g} days",
        )
    finding, slow = latency_for_tier(info, f, policy)
    # a cold unit may still go down for its price: its latency is not what it is judged on
    if slow and info.current_tier == policy.tiers[0].name and profile != "cold":
        return "storage_problem", (f"{finding}: on the fastest tier already, so this is a storage problem to "
                                   f"investigate (queueing, path, array), not a placement to change")  # fmt: skip
    return None


@dataclass(frozen=True, slots=True)
class Costs:
    """What each tier would cost a unit, and why some are closed to it."""

    waits: Mapping[str, Mapping[str, TierWait]]  # window label -> tier -> wait
    change: Mapping[str, float]  # tier -> I/O wait change vs staying, on the window least in its
    # favour (the I/O wait itself when the current tier is unknown)
    deciding: Mapping[str, str]  # tier -> that window's label
    cost: Mapping[str, float]  # tier -> objective, for every tier the pins allow
    # faster tier -> (its saving per I/O, below the minimum; the tier it was compared with)
    gated: Mapping[str, tuple[float, str]]
    allowed: tuple[str, ...]  # after residency and the minimum savings
    # tier -> what a move there is worth in all (ms/s), below the policy's minimum per move
    small: Mapping[str, float] = field(default_factory=dict)

    def wait(self, tier: str) -> TierWait:
        return self.waits[WHOLE][tier]


def unit_costs(
    case: Case, physics: Mapping[str, TierPhysics], utilisation: Mapping[str, float], policy: Policy
) -> Costs:
    b = policy.benefit
    current = case.current if case.current in physics else None
    here = physics[current] if current is not None else None
    waits = {
        label: {
            t: wait_on(mix, physics[t], current=here, hit_share=case.hit_share,
                       utilisation=utilisation.get(t, 0.0), policy=policy)
            for t in physics  # every tier, for the evidence; costs only where pins allow
        }
        for label, mix in case.mixes.items()
    }  # fmt: skip
    change: dict[str, float] = {}
    deciding: dict[str, str] = {}
    cost: dict[str, float] = {}
    gated: dict[str, tuple[float, str]] = {}
    mixes, pin_allowed, size_gb = case.mixes, case.pin_allowed, case.size_gb
    whole = waits[WHOLE]
    base = 0.0 if current is None else whole[current].wait_ms_per_s  # totals stay I/O wait
    move = b.move_cost_ms_per_s_per_gb * size_gb + TIE

    def saving_per_io(faster: str, than: str) -> float:
        """The least saving per I/O over the windows (0 with no I/O at all: nothing to gain)."""
        return min(
            (
                (waits[w][than].wait_ms_per_s - waits[w][faster].wait_ms_per_s) / m.io
                for w, m in mixes.items()
                if m.io > 0
            ),
            default=0.0,
        )

    for i, t in enumerate(pin_allowed):
        if current is None:
            change[t], deciding[t] = whole[t].wait_ms_per_s, WHOLE
        else:
            label = max(mixes, key=lambda w: waits[w][t].wait_ms_per_s - waits[w][current].wait_ms_per_s)
            change[t] = waits[label][t].wait_ms_per_s - waits[label][current].wait_ms_per_s
            deciding[t] = label
        if current is not None and current in pin_allowed:
            than: str | None = current if physics[t].rank < physics[current].rank else None
        else:  # where it is now is unknown, or a tier it must leave: tier over the next slower one
            slower = pin_allowed[i + 1 :]
            than = slower[0] if slower else None
        if than is not None and (per_io := saving_per_io(t, than)) < b.min_saving_ms_per_io:
            gated[t] = (per_io, than)
        moving = current is not None and t != current
        cost[t] = base + change[t] + physics[t].price_ms_per_gb * size_gb + (move if moving else 0.0)
    small = _small_moves(case, physics, change, cost, gated, b.min_saving_ms_per_s_per_move)
    allowed = tuple(t for t in pin_allowed if t not in gated and t not in small)
    if case.hold is not None and current is not None:
        allowed = (current,)
    return Costs(waits, change, deciding, cost, gated, allowed, small)


def _small_moves(
    case: Case,
    physics: Mapping[str, TierPhysics],
    change: Mapping[str, float],
    cost: Mapping[str, float],
    gated: Mapping[str, tuple[float, str]],
    least: float,
) -> dict[str, float]:
    """Faster tiers a promotion to which saves less than `least` ms/s of I/O wait on the window
    least in its favour: not worth the change it costs (a ticket, a copy, a window). Moves down
    are judged by the price and capacity they free (another unit may need the room), not here;
    nor is a unit that must leave its tier (its current one unknown or not allowed)."""
    current = case.current
    if least <= 0 or current is None or current not in cost or current not in case.pin_allowed:
        return {}
    return {
        t: -change[t]
        for t in case.pin_allowed
        if physics[t].rank < physics[current].rank
        and t not in gated
        and cost[t] < cost[current]  # else the objective keeps it where it is, for its own reason
        and -change[t] < least
    }
