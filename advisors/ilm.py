"""Information lifecycle plans: when each date partition should move to which tier.

EMC's ILM appendix puts the current partitions of an orders table on flash, recent ones on FC and
the oldest on SATA. tierwise plans the same from measurements: it fits how a table's partition heat
decays with age (robust to a few outliers, e.g. a month re-read for an audit), projects each
partition's own heat forward, places the partitions on tiers month by month within capacity, and
never demotes a partition that is still hot, whatever its age.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from itertools import pairwise

import numpy as np
from sklearn.linear_model import HuberRegressor

from advisors.benefit import physics
from advisors.quantities import count, figure, gb, io_wait_per, pct, rate, ratio
from policies.model import Policy

_ISO = re.compile(r"^'?(\d{4})-(\d{2})-(\d{2})(?:[T ][\d:.]+)?(?:Z|[+-]\d{2}:?\d{2})?'?$")
_YYYYMM = re.compile(r"^'?(\d{4})(\d{2})(\d{2})?'?$")


def parse_boundary(text: str | None) -> date | None:
    """A date from a partition boundary: ISO date/datetime, or an int key yyyymm / yyyymmdd."""
    if text is None:
        return None
    t = text.strip()
    m = _ISO.match(t)
    if m:
        y, mo, d = (int(g) for g in m.groups())
    else:
        m = _YYYYMM.match(t)
        if not m:
            return None
        y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3) or 1)
    try:
        return date(y, mo, d)
    except ValueError:
        return None


def months_between(a: date, b: date) -> float:
    return (b.year - a.year) * 12 + (b.month - a.month) + (b.day - a.day) / 30.0


def add_months(d: date, n: int) -> date:
    """The same day n months later, clamped to the month's end (a RANGE LEFT boundary on the 31st
    stays a month-end boundary)."""
    y, m = divmod(d.month - 1 + n, 12)
    year, month = d.year + y, m + 1
    last = (date(year + month // 12, month % 12 + 1, 1) - date(year, month, 1)).days
    day = last if d.day >= _month_days(d) else min(d.day, last)
    return date(year, month, day)


def _month_days(d: date) -> int:
    nxt = date(d.year + d.month // 12, d.month % 12 + 1, 1)
    return (nxt - date(d.year, d.month, 1)).days


@dataclass(frozen=True, slots=True)
class PartitionInput:
    engine: str
    server: str
    database: str
    table: str
    partition: int
    key: str
    range_low: str | None
    range_high: str | None
    size_gb: float
    heat: float  # I/O per GB-hour, measured (the partition's own counters or proxy)
    read_share: float  # for physical IOPS in the forecast
    current_tier: str | None
    location: str | None = None  # filegroup or table space
    # heat in the latest occurrence of a declared business period (month-end...) in which the
    # partition is hot (Features.period): it recurs, so the plan never projects it below that
    period_heat: float | None = None
    period: str | None = None
    # the advice for the filegroup / table space holding it: month 0 of the plan is that answer
    advised_tier: str | None = None
    # I/O wait per I/O (ms) of the holding unit on each tier it may use (the benefit model): later
    # months place the partition where its projected I/O wait plus the tier's price is least
    ms_per_io: Mapping[str, float] | None = None


@dataclass(frozen=True, slots=True)
class HeatFit:
    """How a table's heat falls with age. `huber`: an exponential decay that explains the data
    (`fit_heat`'s tests); `median by age`: the measured heat per age in months, when no decay does;
    `policy default`: the policy's half-life, when too few partitions are measured to judge."""

    method: str  # "huber", "median by age" or "policy default"
    decay_per_month: float  # heat multiplies by this each month of age (huber, policy default)
    # huber / policy default: the half-life; median by age: the age at which the measured heat first
    # falls to half the youngest partitions' (the oldest age measured when it never does)
    half_life_months: float
    r2: float | None  # of the Huber line, accepted or not
    mae_log: float | None
    points: int
    # median by age: (age in whole months, median heat), never rising with age
    profile: tuple[tuple[int, float], ...] = ()
    why: str = ""  # the verdict, with its figures: why this method

    def heat_at(self, heat_now: float, months: float, age: float = 0.0) -> float:
        """A partition `age` months old today with `heat_now`, `months` later: the decay, or its
        own heat scaled by how the measured median falls from its age to the later one (so an old
        month re-read for an audit keeps its own heat)."""
        if not self.profile:
            return float(heat_now * self.decay_per_month**months)
        before, after = _median_at(self.profile, age), _median_at(self.profile, age + months)
        return float(heat_now * (after / before if before > 0 else 1.0))


def _age_bucket(age: float) -> int:
    """Whole months of age: 0 for a partition still open, 1 for one closed within the last month..."""
    return max(0, math.ceil(age - 1e-9))


def _median_at(profile: Sequence[tuple[int, float]], age: float) -> float:
    """The measured median heat at `age`: its bucket's, else the nearest younger bucket's (the
    youngest's below the first; the oldest's beyond the last, no decay is assumed past the data)."""
    bucket = _age_bucket(age)
    value = profile[0][1]
    for b, heat in profile:
        if b > bucket:
            break
        value = heat
    return value


@dataclass(frozen=True, slots=True)
class Move:
    date: date
    to_tier: str
    reason: str
    read_only: bool = False


@dataclass(frozen=True, slots=True)
class PartitionPlan:
    partition: int
    key: str
    range_start: date | None
    range_end: date | None
    current_tier: str | None
    age_months: float
    heat: float
    size_gb: float
    location: str | None
    moves: tuple[Move, ...]
    new: bool = False


@dataclass(frozen=True, slots=True)
class TablePlan:
    engine: str
    server: str
    database: str
    table: str
    period_months: int
    fit: HeatFit
    partitions: tuple[PartitionPlan, ...]


@dataclass(frozen=True, slots=True)
class IlmPlan:
    tables: tuple[TablePlan, ...]
    not_date_partitioned: tuple[str, ...]
    forecast: dict[str, list[dict[str, float | str]]]  # tier -> per month {month, gb, physical_iops}
    notes: tuple[str, ...] = field(default_factory=tuple)


# What an exponential decay must show before the plan projects heat with it (docs/ilm.md):
MIN_FIT_POINTS = 4  # measured partitions with heat; fewer: the policy's half-life
MIN_R2 = 0.5  # age explains at least half the spread of log(heat) around its mean
# the two youngest partitions, those the plan puts on the fastest tier, within 2x of the line: a hot
# current month above cold older ones is a step the robust line treats as an outlier
MAX_YOUNG_MISS = 2.0
# ages are known to about a month (the partition's end against today), so a faster "decay" is a
# step between neighbouring months, which the medians by age describe exactly
MIN_HALF_LIFE_MONTHS = 0.5
# heat must at least fall by 1/sqrt(2) across the measured ages: a slower line is not measured,
# it extrapolates (the 125,133-month half-life of issue #32 on 24 months of partitions)
MAX_HALF_LIFE_SPANS = 2.0


def fit_heat(ages: Sequence[float], heats: Sequence[float], *, default_half_life: float) -> HeatFit:
    """log(heat) = a + b * age, fitted with Huber loss so that one audited old month does not
    bend the line, and accepted only when it explains the data: R² at least MIN_R2, the youngest
    partitions within MAX_YOUNG_MISS of it, a half-life between MIN_HALF_LIFE_MONTHS and
    MAX_HALF_LIFE_SPANS times the measured ages' span. Otherwise the measured median heat per age
    in months (`median by age`); the policy's half-life when too few partitions are measured.

    The shape a decay misses is the one partition-ageing benchmarks write: TPC-H's refresh
    functions insert new orders and delete the oldest (RF1/RF2, after TPC-D's UF1/UF2,
    https://www.tpc.org/information/sessions/sigmod/tsld037.htm) and TPC-DS's data maintenance
    loads the newest sales and deletes a date range of the oldest (DF_SS/DF_CS/DF_WS, clause 5.3
    of its specification): the current month hot, the older months cold, a step and no curve."""
    pts = [(a, math.log(h)) for a, h in zip(ages, heats, strict=True) if h > 0]
    default = 0.5 ** (1 / default_half_life)
    if len(pts) < MIN_FIT_POINTS:
        why = (
            f"{count(len(pts))} partition{'' if len(pts) == 1 else 's'} measured with heat, {MIN_FIT_POINTS} needed "
            f"to judge a decay: "
            f"the policy's half-life of {default_half_life:g} months"
        )  # echo: ilm.default_half_life_months
        return HeatFit("policy default", default, default_half_life, None, None, len(pts), why=why)  # fmt: skip
    x = np.array([[a] for a, _ in pts])
    y = np.array([v for _, v in pts])
    model = HuberRegressor(epsilon=1.35, max_iter=500).fit(x, y)
    slope = float(model.coef_[0])
    pred = model.predict(x)
    resid = y - pred
    ss_res = float(np.sum(resid**2))
    ss_tot = float(np.sum((y - y.mean()) ** 2))
    r2 = 1 - ss_res / ss_tot if ss_tot > 0 else None
    mae = float(np.mean(np.abs(resid)))
    span = max(a for a, _ in pts) - min(a for a, _ in pts)
    half_life = math.log(0.5) / slope if slope < 0 else math.inf
    youngest = sorted(range(len(pts)), key=lambda i: pts[i][0])[:2]
    miss = max((float(resid[i]) for i in youngest), key=abs)
    misses: list[str] = []
    if slope >= 0:
        misses.append("heat does not fall with age")
    else:
        if half_life < MIN_HALF_LIFE_MONTHS:
            misses.append(f"a half-life of {figure(half_life)} months is a step, under {MIN_HALF_LIFE_MONTHS:g} "
                          f"months")  # fmt: skip
        if half_life > MAX_HALF_LIFE_SPANS * span:
            misses.append(f"a half-life of {figure(half_life)} months is more than {MAX_HALF_LIFE_SPANS:g} times "
                          f"the {figure(span)} months of ages measured")  # fmt: skip
    if r2 is None or r2 < MIN_R2:
        misses.append(f"R² {figure(r2)} of log heat, {MIN_R2:g} needed")
    if abs(miss) > math.log(MAX_YOUNG_MISS):
        misses.append(f"the youngest partitions measure {ratio(math.exp(miss))} the line's heat, "
                      f"{MAX_YOUNG_MISS:g}x allowed")  # fmt: skip
    if not misses:
        why = (f"heat halves every {figure(half_life)} months of age (R² {figure(r2)}, the youngest partitions "
               f"within {ratio(math.exp(abs(miss)))} of the line)")  # fmt: skip
        return HeatFit("huber", math.exp(slope), half_life, r2, mae, len(pts), why=why)
    profile = _medians_by_age(ages, heats)
    rejected = "; ".join(misses)
    if len(profile) < 2:
        why = (
            f"no exponential decay explains the heat ({rejected}) and all measured partitions are of one "
            f"age: the policy's half-life of {default_half_life:g} months"
        )  # echo: ilm.default_half_life_months
        return HeatFit("policy default", default, default_half_life, r2, mae, len(pts), why=why)  # fmt: skip
    top = profile[0][1]
    halved = next(((b, h) for b, h in profile if h <= top / 2), None)
    first = halved[0] if halved is not None else profile[-1][0]
    if halved is not None:
        fall = f"{pct(halved[1] / top if top > 0 else 0.0)} of that at age {halved[0]}"
    else:
        fall = f"never below half of that up to age {profile[-1][0]}"
    why = (f"no exponential decay explains the heat ({rejected}): the measured median heat by age in months "
           f"is used, {rate(top, 'I/O per GB-hour')} at age {profile[0][0]}, {fall}")  # fmt: skip
    return HeatFit("median by age", 0.5 ** (1 / max(first, MIN_HALF_LIFE_MONTHS)), float(first), r2, mae, len(pts),
                   profile=profile, why=why)  # fmt: skip


def _medians_by_age(ages: Sequence[float], heats: Sequence[float]) -> tuple[tuple[int, float], ...]:
    """The median heat per whole month of age (never-read partitions count, at 0), never rising
    with age: each age keeps the lowest median of any younger one, so an old month re-read for an
    audit does not make its younger neighbours look hotter as they age (its own heat stays its own)."""
    by_age: dict[int, list[float]] = defaultdict(list)
    for a, h in zip(ages, heats, strict=True):
        by_age[_age_bucket(a)].append(max(0.0, h))
    out: list[tuple[int, float]] = []
    for b in sorted(by_age):
        median = float(np.median(by_age[b]))
        out.append((b, min(median, out[-1][1]) if out else median))
    return tuple(out)


@dataclass
class _Track:
    p: PartitionInput | None
    key: str
    partition: int
    start: date | None
    end: date | None
    heat_now: float
    born: int  # month index at which it exists (0 for existing)
    size_gb: float
    read_share: float
    tier: str | None
    location: str | None
    last_move: int = -10_000
    moves: list[Move] = field(default_factory=list)
    floor: float = 0.0  # recurring period heat: projections never fall below it
    period: str | None = None
    ms_per_io: Mapping[str, float] | None = None
    age: float = 0.0  # months of age today (0 for a partition still open or not created yet)


@dataclass(frozen=True, slots=True)
class _Want:
    tier: str
    read_only: bool
    why: str


def _by_benefit(t: _Track, heat: float, prices: Mapping[str, float]) -> _Want | None:
    """The tier where the partition's projected I/O wait plus the tier's price, per GB, is least:
    the advice's own benefit model (advisors/benefit.py) applied to the projected heat. None when
    the unit holding it gave no latencies per tier."""
    if not t.ms_per_io:
        return None
    per_s = heat / 3600  # I/O per second per GB
    cost = {tier: per_s * ms + prices[tier] for tier, ms in t.ms_per_io.items() if tier in prices}
    if not cost:
        return None
    best = min(cost, key=lambda k: (cost[k], list(prices).index(k)))
    return _Want(best, False, f"projected {rate(heat, 'I/O per GB-hour')}: least I/O wait plus price on {best} "
                 f"({io_wait_per(cost[best])})")  # fmt: skip


def _wants(
    live: list[tuple[_Track, float]],
    month: date,
    policy: Policy,
    fast: str,
    middle: str,
    slow: str,
) -> dict[int, _Want]:
    """The tier each partition wants: by the benefit model where its unit's latencies are known,
    otherwise by its share of the table's projected I/O, hottest first (the partitions that carry
    the first `flash_io_share` of it on the fastest tier, those up to `middle_io_share` on the
    middle one, the cold tail on the slowest). Either way an old partition that is read again (an
    audit) is judged by its own heat, so it is not demoted."""
    ilm = policy.ilm
    prices = {name: tier.price_ms_per_gb for name, tier in physics(policy).items()}
    total = sum(h * t.size_gb for t, h in live) or 1.0
    out: dict[int, _Want] = {}
    before = 0.0
    for t, h in sorted(live, key=lambda x: x[1] * x[0].size_gb, reverse=True):
        share = before / total
        before += h * t.size_gb
        benefit = _by_benefit(t, h, prices)
        if benefit is not None:
            want = benefit
        elif share < ilm.flash_io_share:
            want = _Want(
                fast,
                False,
                f"among the partitions carrying the first {pct(ilm.flash_io_share)} of the table's projected I/O",
            )
        elif share < ilm.middle_io_share:
            want = _Want(middle, False, f"{pct(share)} of the table's projected I/O is in hotter partitions")
        else:
            want = _Want(
                slow, False, f"cold tail: {pct(share)} of the table's projected I/O is in hotter partitions"
            )
        age = max(0.0, months_between(t.end, month)) if t.end else 0.0
        if t.floor > 0 and h <= t.floor and want.tier != slow:  # recurring heat: no age rule
            want = _Want(want.tier, False, f"{want.why}; hot in every '{t.period}' period "
                         f"({rate(t.floor, 'per GB-hour')} then): not demoted between periods")  # fmt: skip
            out[id(t)] = want
            continue
        for rule in ilm.age_rules:
            if age < rule.older_than_months:
                continue
            if want.tier == fast:
                want = _Want(
                    fast,
                    False,
                    f"{want.why}; older than {rule.older_than_months:g} months but still hot: not demoted",
                )
            else:
                want = _Want(
                    rule.tier, rule.read_only, f"older than {rule.older_than_months:g} months ({age:,.0f})"
                )
        out[id(t)] = want
    return out


def _fit_heats(tracks: Sequence[_Track], today: date) -> list[float]:
    """The heats the fit judges: a partition still open and smaller than the last closed ones is
    still filling, so its heat per GB overstates it; it counts with its I/O rate spread over their
    average size, as a new partition starts (a filling month is not a step above the closed ones)."""
    closed = sorted(
        (t for t in tracks if t.end is not None and t.end <= today), key=lambda t: t.end or today
    )[-3:]
    typical = sum(t.size_gb for t in closed) / len(closed) if closed else 0.0
    out = []
    for t in tracks:
        filling = t.end is not None and t.end > today and 0 < t.size_gb < typical
        out.append(t.heat_now * t.size_gb / typical if filling else t.heat_now)
    return out


def _limit_notes(
    limited: Mapping[tuple[str, str], list[str]],
    tiers: list[str],
    capacity: Mapping[str, float],
    planned_iops: Mapping[str, float],
    planned: float,
    months: int,
) -> list[str]:
    """When the plan, not the heat, decides: the months in which a tier's capacity or planned IOPS
    sent partitions that wanted it to the next slower tier."""
    out = []
    for (tier, resource), labels in limited.items():
        below = tiers[tiers.index(tier) + 1]
        distinct = sorted(set(labels))
        when = distinct[0] if len(distinct) == 1 else f"{distinct[0]} to {distinct[-1]}"
        if resource == "capacity":
            limit = f"its {gb(capacity[tier])}"
        else:
            limit = (
                f"its planned {rate(planned_iops[tier], 'IOPS')} ({pct(planned)} of what its devices serve)"
            )
        out.append(f"the plan is the limit on {tier}, not the heat: {limit} is used up in {count(len(distinct))} "
                   f"of {count(months)} months ({when}); {count(len(labels))} monthly placements that wanted {tier} "
                   f"go to {below}{'' if below == tiers[-1] else ' or slower'}")  # fmt: skip
    return out


def _period(bounds: list[date]) -> int:
    if len(bounds) < 2:
        return 1
    gaps = sorted(round(months_between(a, b)) for a, b in pairwise(bounds))
    return max(1, gaps[len(gaps) // 2])


def plan_ilm(
    partitions: Sequence[PartitionInput], policy: Policy, *, now: datetime, months: int | None = None
) -> IlmPlan:
    ilm = policy.ilm
    horizon = months if months is not None else ilm.months
    today = now.date()
    by_table: dict[tuple[str, str, str, str], list[PartitionInput]] = defaultdict(list)
    for p in partitions:
        by_table[(p.engine, p.server, p.database, p.table)].append(p)
    tiers = [t.name for t in policy.tiers]
    fast, slow = tiers[0], tiers[-1]
    middle = tiers[1] if len(tiers) > 2 else slow
    not_dated: list[str] = []
    notes: list[str] = []
    plans: list[tuple[tuple[str, str, str, str], int, HeatFit, list[_Track]]] = []
    for tkey, parts in sorted(by_table.items()):
        parts = sorted(parts, key=lambda p: p.partition)
        lows = [parse_boundary(p.range_low) for p in parts]
        highs = [parse_boundary(p.range_high) for p in parts]
        if not any(lows) and not any(highs):
            not_dated.append(f"{tkey[1]}/{tkey[2]}/{tkey[3]}")
            continue
        bounds = sorted({d for d in (*lows, *highs) if d is not None})
        period = _period(bounds)
        tracks: list[_Track] = []
        for p, lo, hi in zip(parts, lows, highs, strict=True):
            start = lo or (add_months(hi, -period) if hi else None)
            end = hi or (add_months(lo, period) if lo else None)
            tracks.append(_Track(p, p.key, p.partition, start, end, p.heat, 0, p.size_gb, p.read_share,
                                 p.current_tier, p.location, floor=p.period_heat or 0.0,
                                 period=p.period, ms_per_io=p.ms_per_io))  # fmt: skip
        ages = [max(0.0, months_between(t.end, today)) if t.end else 0.0 for t in tracks]
        for t, age in zip(tracks, ages, strict=True):
            t.age = age
        fit = fit_heat(ages, _fit_heats(tracks, today), default_half_life=ilm.default_half_life_months)
        if fit.method == "median by age":  # the plan does not age this table as the line would: say why
            notes.append(f"{tkey[1]}/{tkey[2]}/{tkey[3]}: {fit.why}")
        # the leading edge: partitions that will be created during the horizon, on the hot tier
        newest = [t for t in tracks if t.end is not None]
        if newest:
            last_end = max(t.end for t in newest if t.end is not None)
            recent = sorted(newest, key=lambda t: t.end or today)[-3:]
            size = sum(t.size_gb for t in recent) / len(recent)
            # a new partition starts with the I/O rate of the newest one (heat x size), spread over the
            # average size: the current partition is still filling, so its heat per GB overstates it
            hot = recent[-1].heat_now * recent[-1].size_gb / max(size, 1e-6)
            k = 0
            while last_end <= add_months(today, horizon):
                k += 1
                start, last_end = last_end, add_months(last_end, period)
                born = max(0, math.ceil(months_between(today, start)))
                tracks.append(_Track(None, f"{tkey[2]}/{tkey[3]}/new/{start.isoformat()}", parts[-1].partition + k,
                                     start, last_end, hot, born, size, recent[-1].read_share, None, None,
                                     ms_per_io=recent[-1].ms_per_io))  # fmt: skip
        plans.append((tkey, period, fit, tracks))

    # month by month over all tables: shared tier capacity and back-end IOPS, both as the advice
    # plans them (IOPS to benefit.max_planned_utilisation of what the devices serve)
    capacity = {t.name: t.capacity_gb * ilm.capacity_share for t in policy.tiers}
    planned = policy.benefit.max_planned_utilisation
    planned_iops = {t.name: t.max_iops * planned * ilm.capacity_share for t in policy.tiers}
    raid = {t.name: t.raid_factor for t in policy.tiers}
    forecast: dict[str, list[dict[str, float | str]]] = {t: [] for t in tiers}
    # (tier, "capacity" | "iops") -> the months in which it sent a partition that wanted it further down
    limited: dict[tuple[str, str], list[str]] = defaultdict(list)
    residency_months = math.ceil(policy.hysteresis.min_residency_days / 30)
    for m in range(horizon + 1):
        month = add_months(today.replace(day=1), m) if m else today  # moves on the 1st of each month
        wanted: list[tuple[float, _Track, _Want]] = []
        for _tkey, _period_m, fit, tracks in plans:
            live = [
                (t, max(fit.heat_at(t.heat_now, m - t.born, t.age), t.floor)) for t in tracks if t.born <= m
            ]
            wants = _wants(live, month, policy, fast, middle, slow)
            if m and fit.profile:  # the heat the share is of comes from the medians by age: say it
                for t, h in live:
                    w = wants[id(t)]
                    if not w.why.startswith("projected "):
                        age = _age_bucket(t.age + m - t.born)
                        wants[id(t)] = _Want(w.tier, w.read_only, f"{w.why}; projected {rate(h, 'I/O per GB-hour')} "
                                             f"at age {age} from the median heat by age")  # fmt: skip
            if m == 0:  # one answer per object: this month is what the advice recommends today
                for t, _ in live:
                    if t.p is not None and t.p.advised_tier is not None:
                        wants[id(t)] = _Want(t.p.advised_tier, False, f"recommended for {t.location or 'its unit'} "
                                             f"by the advice")  # fmt: skip
            wanted.extend((h, t, wants[id(t)]) for t, h in live)
        # the plan: densest heat first into each wanted tier, overflowing to the next slower tier when
        # its capacity or its planned IOPS is used up
        used = dict.fromkeys(tiers, 0.0)
        iops = dict.fromkeys(tiers, 0.0)
        label = month.isoformat()[:7]
        for projected, t, w in sorted(wanted, key=lambda x: x[0], reverse=True):
            idx, why = tiers.index(w.tier), w.why
            # projections only cool down: a planned promotion would be a rank tie, not heat
            if m and t.tier is not None:
                idx = max(idx, tiers.index(t.tier))
            io = projected * t.size_gb / 3600

            def physical(tier: str, io: float = io, t: _Track = t) -> float:
                return io * t.read_share + io * (1 - t.read_share) * raid[tier]

            while idx < len(tiers) - 1:
                here = tiers[idx]
                if used[here] + t.size_gb > capacity[here] + 1e-9:
                    why += f"; {here} full"
                    limited[(here, "capacity")].append(label)
                elif iops[here] + physical(here) > planned_iops[here] + 1e-9:
                    why += f"; {here} at its planned {rate(planned_iops[here], 'IOPS')}"
                    limited[(here, "iops")].append(label)
                else:
                    break
                idx += 1
            tier = tiers[idx]
            if (
                t.p is not None
                and t.tier is not None
                and tier != t.tier
                and m - t.last_move < residency_months
            ):
                tier, why = t.tier, f"held on {t.tier}: minimum residency"
            used[tier] += t.size_gb
            iops[tier] += physical(tier)
            if t.tier != tier:
                if t.p is None and t.tier is None:
                    why = f"new partition created on {tier} ahead of time"
                t.moves.append(Move(month, tier, why, w.read_only))
                t.tier, t.last_move = tier, m
        for tier in tiers:
            forecast[tier].append({"month": label, "gb": round(used[tier], 2), "physical_iops": round(iops[tier], 1),
                                   "capacity_gb": round(capacity[tier], 2),
                                   "planned_iops": round(planned_iops[tier], 1)})  # fmt: skip
            if used[tier] > capacity[tier] + 1e-6:
                notes.append(f"{tier} needs {gb(used[tier])} in {label}, more than its {gb(capacity[tier])}")
            if iops[tier] > planned_iops[tier] + 1e-6:
                notes.append(f"{tier} needs {rate(iops[tier], 'IOPS')} in {label}, more than its planned "
                             f"{rate(planned_iops[tier], 'IOPS')}")  # fmt: skip
    notes.extend(_limit_notes(limited, tiers, capacity, planned_iops, planned, horizon + 1))

    tables = []
    for (engine, server, database, table), period, fit, tracks in plans:
        out = []
        for t in tracks:
            age = max(0.0, months_between(t.end, today)) if t.end else 0.0
            current = t.p.current_tier if t.p is not None else None
            out.append(PartitionPlan(t.partition, t.key, t.start, t.end, current, round(age, 2), t.heat_now, t.size_gb,
                                     t.location, tuple(t.moves), new=t.p is None))  # fmt: skip
        tables.append(TablePlan(engine, server, database, table, period, fit, tuple(out)))
    return IlmPlan(tuple(tables), tuple(not_dated), forecast, tuple(dict.fromkeys(notes)))
