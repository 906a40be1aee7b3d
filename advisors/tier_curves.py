"""Each tier's service times measured from the objects on it, and how far the advice trusts them.

The benefit model's tier figures come from the policy, typed in by an admin; real arrays drift
from them (a flash tier shared with other hosts, a RAID group rebuilding, a controller cache
smaller than assumed). Every object on a tier already reports, hour by hour, its reads, writes,
sizes and stalls: what the tier answered, at the load it had. This module reads that back.

Per tier of a pool, over the advice window (maintenance hours already out: `prepare_window`):

- one observation per object-hour with enough I/O: the average read (write) latency storage
  answered in, with Resource Governor's queueing taken out first (`benefit.io_mix`'s rule,
  `features.governor_per_io`), the average request size, and the tier's load that hour (the
  back-end IOPS of every unit on it, as `benefit.backend_iops` counts them, over its devices'
  IOPS: the `utilisation` the benefit model queues by);
- left out: units the advice reads as mostly array-cache hits (`benefit.array_cache_hits` of half
  their random reads or more: their latency is the cache's, not the tier's) and units Resource
  Governor holds back (`classify.governor_notes`: the pool's cap, not the storage);
- a robust regression (Huber) of latency on request size and on the load's queueing term
  U / (1 - U), each only where it varies; the figure in the policy's own terms: a read of 8 KB at
  light load (`read_latency_ms`, which the model queues itself), a write of 8 KB at the tier's load
  (`write_latency_ms`, which the model does not queue);
- an interval from a bootstrap over objects (an object's hours move together), none below
  `MIN_OBJECTS`: one slow unit is a finding about that unit, not about the tier.

`blend` then weighs measured against policy on the log scale: the weight grows with the
object-hours (up to `benefit.learn_min_object_hours`) and with the interval's narrowness against
the policy's own spread (a factor of about `POLICY_SPREAD`), a shrinkage, not a switch.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import numpy.typing as npt

from advisors.benefit import PAGE, TierPhysics, array_cache_hits, io_mix, physics, write_factor
from advisors.classify import governor_notes
from advisors.features import (
    GOVERNOR_READ,
    GOVERNOR_WRITE,
    Features,
    ObjectWindow,
    compute_features,
    database_heat,
    governor_per_io,
    hour_columns,
    hour_extras,
    hour_seconds,
    hour_times,
    instance_read_miss,
)
from advisors.maintenance import prepare_window
from advisors.pools import split_by_pool
from advisors.quantities import count, latency, pct
from advisors.units import build_units
from policies.model import DEFAULT_POOL, Policy

MIN_IOS_PER_HOUR = 100  # an object-hour with fewer reads (writes) says little about their latency
MIN_OBJECTS = 3  # fewer objects give no interval: the figure would be one unit's, not the tier's
CACHE_FRIENDLY_SHARE = 0.5  # of random reads the array cache serves: the cache's latency, not the tier's
POLICY_SPREAD = math.log(2.0)  # the policy's figure is trusted to within about a factor of 2
# the queueing law's own uncertainty, per unit of ln(1 / (1 - U)) it is asked to take out
EXTRAPOLATION = 0.5
HUBER_K = 1.345  # residuals beyond 1.345 robust standard deviations count less (95 % efficiency)
HUBER_STEPS = 30
BOOTSTRAP = 30  # resamples of the objects for the interval
MAX_ROWS = 1500  # object-hours per fit (evenly taken): enough for three coefficients, and cheap
INTERVAL = (5.0, 95.0)  # percentiles of the bootstrap: a 90 % interval
KB = 1024.0
Floats = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Fit:
    """One direction's (reads or writes) measured service time on a tier."""

    what: str  # "read" or "write"
    ms: float  # 8 KB, in the policy's terms: reads at light load, writes at the tier's load
    low: float | None  # the 90 % interval of `ms` (None: too few objects for one)
    high: float | None
    ms_at_load: float  # 8 KB at the tier's average load over the object-hours
    load: float  # that average load (back-end IOPS / the devices' IOPS)
    object_hours: int
    objects: int
    r2: float | None  # the fit's weighted R² (None: nothing varied)
    ms_per_kb: float | None  # latency per KB of request size (None: sizes did not vary)
    # reads whose load did not vary: the light-load figure rests on the model's queueing law
    # 1 / (1 - U) alone, uncertain by this much on the log scale (0: the load was measured)
    extrapolation: float = 0.0
    # every object-hour at or beyond `benefit.max_queue_utilisation`, where 1 / (1 - U) is capped
    # and says nothing of the light-load time (hours there are left out when others remain)
    saturated: bool = False


@dataclass(frozen=True, slots=True)
class TierCurve:
    """A tier's measured reads and writes (None: nothing measured), and what was left out."""

    pool: str
    tier: str
    read: Fit | None
    write: Fit | None
    cache_friendly: int = 0  # units left out as mostly array-cache hits
    governed: int = 0  # units left out as held back by Resource Governor


@dataclass(frozen=True, slots=True)
class Figure:
    """One tier direction as the benefit model uses it: the policy's figure, the measured one, the
    weight the evidence earns the measurement (0-1) and the figure used."""

    pool: str
    tier: str
    what: str  # "read" or "write"
    policy_ms: float
    measured: Fit | None
    weight: float
    used_ms: float
    why: str  # why the weight is what it is, in words
    raised: bool = False  # taken at the faster tier's figure before it (`_in_order`)

    @property
    def ratio(self) -> float | None:
        """Measured / policy (None: nothing measured)."""
        if self.measured is None or self.policy_ms <= 0:
            return None
        return self.measured.ms / self.policy_ms

    def text(self) -> str:
        """e.g. "flash reads measured 1.9 ms at 40 % load on ARR_A (312 object-hours); the policy says 0.5 ms"."""
        where = f" on {self.pool}" if self.pool != DEFAULT_POOL else ""
        noun = f"{self.tier} {self.what}s"
        says = f"the policy says {latency(self.policy_ms)}"
        m = self.measured
        if m is None and self.raised:
            return f"{noun}: {latency(self.used_ms)}, not the policy's {latency(self.policy_ms)} ({self.why})"
        if m is None:
            return f"{noun}: the policy's {latency(self.policy_ms)} ({self.why})"
        head = (
            f"{noun} measured {latency(m.ms_at_load)} at {pct(m.load)} load{where} "
            f"({count(m.object_hours)} object-hours)"
        )
        if self.what == "read" and abs(m.ms - m.ms_at_load) > 0.05 * max(m.ms, 1e-9):
            head += f", {latency(m.ms)} at light load"
        if self.raised:  # the tier before it is slower: taken at that tier's figure
            return f"{head}; {says}: used {latency(self.used_ms)} ({self.why})"
        if self.weight >= 0.95:
            return f"{head}; {says}: used the measured figure"
        if self.weight <= 0.05:
            return f"{head}; {says}: used the policy's ({self.why})"
        return f"{head}; {says}: used {latency(self.used_ms)}, {pct(self.weight)} of the way to the measurement ({self.why})"


@dataclass(frozen=True, slots=True)
class TierFigures:
    """A pool's tiers as the benefit model uses them: by tier, its read and write figures."""

    pool: str
    read: Mapping[str, Figure]
    write: Mapping[str, Figure]
    curves: Mapping[str, TierCurve] = field(default_factory=dict)
    learned: bool = True  # benefit.learn_tiers

    def used(self) -> dict[str, tuple[float, float]]:
        """tier -> (read ms, write ms) the benefit model takes (`benefit.physics`)."""
        return {t: (self.read[t].used_ms, self.write[t].used_ms) for t in self.read}

    def text(self, tiers: Sequence[str]) -> str:
        """One sentence on the figures of these tiers (each once), for an explanation: a measured
        figure with its evidence, the tiers on the policy's figures together by reason."""
        if not self.learned:
            return ""
        parts: list[str] = []
        policy_only: dict[str, list[str]] = {}
        for t in dict.fromkeys(t for t in tiers if t in self.read):
            r, w = self.read[t], self.write[t]
            if r.measured is None and w.measured is None and not r.raised and not w.raised:
                policy_only.setdefault(r.why, []).append(t)
                continue
            if r.measured is not None or r.raised:
                parts.append(r.text())
            moved = (
                w.measured is not None
                and w.weight > 0.05
                and abs(w.used_ms - w.policy_ms) > 0.1 * w.policy_ms
            )
            if w.raised or moved:
                parts.append(w.text())
        parts += [f"the policy's for {', '.join(names)} ({why})" for why, names in policy_only.items()]
        return "Tier figures: " + "; ".join(parts) + "." if parts else ""


def _cache_friendly(w: ObjectWindow, tier: TierPhysics, policy: Policy) -> bool:
    mix = io_mix(w.total, policy.classification, log=w.info.kind == "log_file")
    return (
        mix is not None
        and array_cache_hits(mix, tier, policy.benefit.array_cache_hit_ms) >= CACHE_FRIENDLY_SHARE
    )


@dataclass(slots=True)
class _Rows:
    """The object-hours of one tier direction, column by column."""

    y: list[float] = field(default_factory=list)  # ms per I/O storage answered in
    size_kb: list[float] = field(default_factory=list)
    hour: list[object] = field(default_factory=list)  # the hour's time, for its load
    weight: list[float] = field(default_factory=list)  # I/Os in the hour
    group: list[int] = field(default_factory=list)  # the object, for the bootstrap


def _hourly(w: ObjectWindow, what: str) -> tuple[list[float], list[float], list[float]]:
    """(I/Os, bytes, ms per I/O storage answered in: the stall less the governor's queue) of each
    hour; no I/O and NaN where the hour has too few I/Os or no stall."""
    ios_name, bytes_name, stall_name, gov_name = (
        ("reads", "bytes_read", "read_time_ms", GOVERNOR_READ)
        if what == "read"
        else ("writes", "bytes_written", "write_time_ms", GOVERNOR_WRITE)
    )
    ios, nbytes, stall = hour_columns(w.by_hour, ios_name, bytes_name, stall_name)
    extras = hour_extras(w.by_hour)
    out_ios: list[float] = []
    out_bytes: list[float] = []
    out_ms: list[float] = []
    for n, b, s, x in zip(ios, nbytes, stall, extras, strict=True):
        n = n or 0
        if s is None or n < MIN_IOS_PER_HOUR:
            out_ios.append(0.0)
            out_bytes.append(0.0)
            out_ms.append(math.nan)
            continue
        queued = governor_per_io(x.get(gov_name), s, n) or 0.0
        out_ios.append(float(n))
        out_bytes.append(float(b) if b else n * float(PAGE))
        out_ms.append((s - queued * n) / n)
    return out_ios, out_bytes, out_ms


def _backend_by_hour(w: ObjectWindow, tier: TierPhysics, policy: Policy) -> dict[object, float]:
    """The unit's back-end IOPS each hour on its tier, as `benefit.backend_iops` counts them, with
    the whole window's random share, array-cache hits and write pattern."""
    mix = io_mix(w.total, policy.classification, log=w.info.kind == "log_file")
    if mix is None:
        return {}
    hits = array_cache_hits(mix, tier, policy.benefit.array_cache_hit_ms)
    random_share = mix.random_reads / mix.reads if mix.reads else 0.0
    wf = write_factor(mix, tier)
    reads, writes = hour_columns(w.by_hour, "reads", "writes")
    out: dict[object, float] = {}
    for t, r, wr, s in zip(hour_times(w.by_hour), reads, writes, hour_seconds(w.by_hour), strict=True):
        if s > 0:
            out[t] = out.get(t, 0.0) + ((r or 0) * (1 - random_share * hits) + (wr or 0) * wf) / s
    return out


def _design(size_kb: Floats, q: Floats) -> tuple[Floats, list[str]]:
    cols, names = [], []
    if np.ptp(size_kb) > 1.0:
        cols.append(size_kb)
        names.append("size")
    if np.ptp(q) > 0.05:
        cols.append(q)
        names.append("load")
    if not cols:
        return np.zeros((len(size_kb), 0)), names
    return np.column_stack(cols), names


def _huber(x: Floats, y: Floats, wt: Floats) -> tuple[float, Floats, Floats]:
    """(intercept, coefficients, fitted values) of a Huber M-estimate (tuning constant 1.345, scale
    from the residuals' median absolute deviation), by iteratively reweighted least squares: the
    estimator scikit-learn's HuberRegressor fits, in plain numpy (its L-BFGS took ~0.2 s a fit, and
    the interval needs dozens). A weighted median where nothing varies."""
    if x.shape[1] == 0 or np.ptp(y) < 1e-9:  # nothing to regress on, or nothing varies
        order = np.argsort(y)
        cum = np.cumsum(wt[order])
        med = float(y[order][np.searchsorted(cum, cum[-1] / 2)])
        return med, np.zeros(x.shape[1]), np.full_like(y, med)
    a = np.column_stack([np.ones(len(y)), x])
    robust = np.ones(len(y))
    beta = np.zeros(a.shape[1])
    for _ in range(HUBER_STEPS):
        w = np.sqrt(wt * robust)
        beta = np.linalg.lstsq(a * w[:, None], y * w, rcond=None)[0]
        resid = y - a @ beta
        scale = float(np.median(np.abs(resid - np.median(resid)))) / 0.6745
        if scale <= 1e-12:
            break
        r = np.abs(resid) / (HUBER_K * scale)
        new = np.where(r <= 1.0, 1.0, 1.0 / np.maximum(r, 1e-12))
        if np.max(np.abs(new - robust)) < 1e-4:
            break
        robust = new
    return float(beta[0]), beta[1:], a @ beta


def _reference(
    what: str, intercept: float, coef: Floats, names: list[str], load: float, cap: float
) -> tuple[float, float]:
    """(the figure in the policy's terms, 8 KB at the average load) from a fit."""
    u = min(max(load, 0.0), cap)
    q = u / (1 - u)
    at = {"size": 8.0, "load": q}
    at_load = intercept + sum(c * at[n] for c, n in zip(coef, names, strict=True))
    if what == "write":
        return at_load, at_load
    if "load" in names:
        light = intercept + sum(c * 8.0 for c, n in zip(coef, names, strict=True) if n == "size")
    else:  # the load did not vary: take the model's own queueing out, 1 / (1 - U)
        light = at_load * (1 - u)
    return max(light, 0.0), at_load


def _fit(what: str, rows: _Rows, load_of: Mapping[object, float], policy: Policy) -> Fit | None:
    if not rows.y:
        return None
    cap = policy.benefit.max_queue_utilisation
    y = np.array(rows.y)
    size_kb = np.array(rows.size_kb)
    raw = np.array([load_of.get(h, 0.0) for h in rows.hour])
    wt = np.sqrt(np.array(rows.weight))  # more I/Os, steadier average: but no single hour rules
    group = np.array(rows.group)
    saturated = False
    below = raw < cap  # the queueing law cannot be read back where it is capped, nor a write
    saturated = not below.any()  # measured there stand for a tier the placement will unload
    if below.any() and not below.all():
        y, size_kb, raw, wt, group = y[below], size_kb[below], raw[below], wt[below], group[below]
    u = np.clip(raw, 0.0, cap)
    q = u / (1 - u)
    step = max(1, math.ceil(len(y) / MAX_ROWS))
    take = np.arange(0, len(y), step)
    x, names = _design(size_kb[take], q[take])
    load = float(np.average(u, weights=wt))
    b0, coef, fitted = _huber(x, y[take], wt[take])
    ms, at_load = _reference(what, b0, coef, names, load, cap)
    yt, wtt = y[take], wt[take]
    mean = np.average(yt, weights=wtt)
    total = float(np.sum(wtt * (yt - mean) ** 2))
    r2 = 1 - float(np.sum(wtt * (yt - fitted) ** 2)) / total if names and total > 0 else None
    objects = np.unique(group)
    low = high = None
    if len(objects) >= MIN_OBJECTS:
        rng = np.random.default_rng(29)
        members = {g: np.flatnonzero(group[take] == g) for g in objects}
        found = []
        for _ in range(BOOTSTRAP):
            pick = np.concatenate([members[g] for g in rng.choice(objects, size=len(objects))])
            xb, nb = _design(size_kb[take][pick], q[take][pick])
            bb0, bcoef, _f = _huber(xb, yt[pick], wtt[pick])
            found.append(
                _reference(what, bb0, bcoef, nb, float(np.average(u[take][pick], weights=wtt[pick])), cap)[0]
            )
        low, high = (float(v) for v in np.percentile(found, INTERVAL))
    slope = float(coef[names.index("size")]) if "size" in names else None
    lifted = what == "read" and "load" not in names
    extrapolation = EXTRAPOLATION * -math.log(1 - min(load, cap)) if lifted else 0.0
    return Fit(what, float(ms), low, high, float(at_load), load, len(y), len(objects), r2, slope, extrapolation,
               saturated)  # fmt: skip


def tier_curves(
    units: Sequence[ObjectWindow],
    features: Sequence[Features],
    policy: Policy,
    physics: Mapping[str, TierPhysics],
    *,
    pool: str = DEFAULT_POOL,
    collected: Sequence[ObjectWindow] | None = None,
) -> dict[str, TierCurve]:
    """Each tier's measured curve from the placement units on it (`units`: prepared windows, with
    their `features`, in the same order), on one pool's `policy` and its policy `physics`.
    `collected`: the same units before `prepare_window`, whose every hour (a backup's too) loaded
    the tier; without them the load counts the prepared hours only."""
    load_by_tier: dict[str, dict[object, float]] = {t: defaultdict(float) for t in physics}
    rows = {t: {"read": _Rows(), "write": _Rows()} for t in physics}
    left_out = {t: [0, 0] for t in physics}
    for w in collected if collected is not None else units:
        tier = physics.get(w.info.current_tier or "")
        if tier is not None and w.by_hour:
            for h, iops in _backend_by_hour(w, tier, policy).items():
                load_by_tier[tier.name][h] += iops
    for i, (w, f) in enumerate(zip(units, features, strict=True)):
        tier = physics.get(w.info.current_tier or "")
        if tier is None or not w.by_hour:
            continue
        if governor_notes(f):
            left_out[tier.name][1] += 1
            continue
        if _cache_friendly(w, tier, policy):
            left_out[tier.name][0] += 1
            continue
        times = hour_times(w.by_hour)
        for what in ("read", "write"):
            ios, nbytes, ms = _hourly(w, what)
            r = rows[tier.name][what]
            for at, n, b, v in zip(times, ios, nbytes, ms, strict=True):
                if n and math.isfinite(v) and v >= 0:
                    r.y.append(v)
                    r.size_kb.append(b / n / KB)
                    r.hour.append(at)
                    r.weight.append(n)
                    r.group.append(i)
    out: dict[str, TierCurve] = {}
    for name, tp in physics.items():
        util = {h: v / tp.max_iops if tp.max_iops > 0 else 0.0 for h, v in load_by_tier[name].items()}
        out[name] = TierCurve(
            pool,
            name,
            _fit("read", rows[name]["read"], util, policy),
            _fit("write", rows[name]["write"], util, policy),
            *left_out[name],
        )
    return out


def _weight(fit: Fit | None, policy: Policy) -> tuple[float, str]:
    """How far the measured figure is taken (0-1), and why, in words."""
    if fit is None:
        return 0.0, "nothing measured there yet"
    if fit.low is None or fit.high is None:
        return 0.0, f"measured on {count(fit.objects)} object(s), fewer than {MIN_OBJECTS}"
    if fit.saturated:
        cap = policy.benefit.max_queue_utilisation
        return (
            0.0,
            f"measured only at {pct(cap)} load or more, where the queueing law cannot tell the tier's own time",
        )
    need = policy.benefit.learn_min_object_hours
    evidence = min(1.0, fit.object_hours / need) if need > 0 else 1.0
    spread = math.log(max(fit.high, 1e-6) / max(fit.low, 1e-6)) / (2 * 1.645)  # log-scale sd
    spread = math.hypot(spread, fit.extrapolation)
    precision = POLICY_SPREAD**2 / (POLICY_SPREAD**2 + spread**2)
    weight = evidence * precision
    reasons = []
    if evidence < 1:
        reasons.append(f"{count(fit.object_hours)} of the {count(need)} object-hours wanted")
    reasons.append(f"90 % interval {latency(fit.low)}-{latency(fit.high)}")
    if fit.extrapolation > 0.1:
        reasons.append(f"light load inferred from {pct(fit.load)} load by the queueing law")
    return weight, ", ".join(reasons)


def blend(curves: Mapping[str, TierCurve], policy: Policy, *, pool: str = DEFAULT_POOL) -> TierFigures:
    """The figures the benefit model takes for each tier of a pool (`policy`: the pool's view):
    the measured one weighed against the policy's on the log scale; with `benefit.learn_tiers`
    off, the policy's alone."""
    learn = policy.benefit.learn_tiers
    read: dict[str, Figure] = {}
    write: dict[str, Figure] = {}
    for t in policy.tiers:
        c = curves.get(t.name)
        for what, target, policy_ms in (
            ("read", read, t.read_latency_ms),
            ("write", write, t.write_latency_ms),
        ):
            fit = None if c is None else (c.read if what == "read" else c.write)
            w, why = _weight(fit, policy) if learn else (0.0, "benefit.learn_tiers is off")
            if fit is not None and w > 0 and not (fit.ms > 0 and policy_ms > 0):
                # a fit whose light-load figure reads 0 (load from outside the fleet the fit cannot
                # see drove its intercept below zero) gives nothing to weigh: say so, use the policy's
                w, why = 0.0, f"the fit reads {latency(fit.ms)} at light load, which no storage answers"
            used = policy_ms
            if fit is not None and w > 0:
                used = math.exp(w * math.log(fit.ms) + (1 - w) * math.log(policy_ms))
            target[t.name] = Figure(pool, t.name, what, policy_ms, fit, w, used, why)
    return TierFigures(pool, _in_order(read), _in_order(write), dict(curves), learn)


def _in_order(figures: dict[str, Figure]) -> dict[str, Figure]:
    """A slower tier (later in the policy) is not taken as faster than a faster one: where a tier's
    figure is below the one before it (a measured fc slower than the policy's sata), it is raised
    to it, and says so. The policy orders its tiers; one measured tier does not reorder them."""
    out: dict[str, Figure] = {}
    floor: Figure | None = None
    for name, f in figures.items():
        if floor is not None and f.used_ms < floor.used_ms:
            why = f"{f.why}; raised to {floor.tier}'s {latency(floor.used_ms)}: a slower tier is not taken as faster"
            f = replace(f, used_ms=floor.used_ms, why=why, raised=True)
        out[name] = f
        floor = f
    return out


def measure_pools(windows: Sequence[ObjectWindow], policy: Policy) -> list[TierFigures]:
    """Each pool's tiers, policy against measured, from the objects' windows: the placement units
    and maintenance rules the advice uses (`advise_pool`), without placing anything. Objects on
    locations no pool's tier matches are not measured."""
    out = []
    split = split_by_pool(windows, policy.pool_names())
    for pool in policy.pool_names():
        view = policy.for_pool(pool)
        collected = build_units(split.by_pool.get(pool, []))[0]
        units = [prepare_window(u, view) for u in collected]
        heat = database_heat(units)
        miss = instance_read_miss(split.by_pool.get(pool, []))
        feats = [
            compute_features(
                u, db_heat=heat.get((u.info.server, u.info.database)), instance_miss=miss.get(u.info.server)
            )
            for u in units
        ]
        curves = tier_curves(units, feats, view, physics(view), pool=pool, collected=collected)
        out.append(blend(curves, view, pool=pool))
    return out
