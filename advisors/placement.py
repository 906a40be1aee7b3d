"""Objects -> storage tiers under capacity, RAID-adjusted IOPS and write-endurance limits.

Minimise the total cost, by default the I/O time per second, sum over objects of
``read_iops x read_latency_ms(tier) + write_iops x write_latency_ms(tier)``. An object's
``cost_by_tier`` replaces that with the caller's own cost per tier (I/O wait plus, e.g., a price
or a move cost; any finite number, negative too); tiers missing from it are not allowed for the
object. Each tier has three limits, one per resource the objects on it use:

- ``sum size_gb <= capacity_gb``;
- ``sum physical IOPS <= max_iops``, where an object's physical IOPS on tier t are
  ``read_iops x (1 - read_hit_ratio) + write_iops x raid_factor(t)``, or the caller's own
  ``backend_iops_by_tier[t]`` (e.g. sequential writes priced as full stripes);
- ``sum write_gb_day <= max_write_gb_day`` (flash endurance; ``None``: no limit).

Each object goes to exactly one tier; ``pinned_tier`` forces it, ``allowed_tiers`` restricts it
(names that are not among the tiers are ignored; an unknown ``pinned_tier`` is a ``ValueError``).

``place`` solves the LP relaxation (a lower bound), builds a near-optimal answer from it by
large-neighbourhood search (HiGHS re-deciding the objects at the edge of their tier, the rest kept
where the LP puts them), and then, for up to ``exact_max_objects`` objects and unless that answer
is already proven good enough, runs HiGHS's MILP (``scipy.optimize.milp``) on the whole problem
in the remaining time. It never returns an assignment that breaks a limit unless the status is
``infeasible`` (then the assignment is empty and ``objective`` is ``inf``), and never one worse
than ``greedy_heat_density`` (what array auto-tiering does) when greedy finds one.

Limits are checked with a relative slack of 1e-9 (floating-point dust, nothing more).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import sparse

from advisors.highs import highs, linprog, scipy_status
from advisors.quantities import gb, rate

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.intp]
Bools = npt.NDArray[np.bool_]

TOL = 1e-9  # relative slack when checking a limit (floating-point dust only)
MIP_REL_GAP = 1e-4  # HiGHS's default: "optimal" means within 0.01 % of the proven bound
HEURISTIC_SHARE = 0.25  # share of the time limit for the heuristic when the whole MILP follows
_MILP_STATUS = {1: "time limit", 3: "unbounded", 4: "solver error"}

# The limited resources, in the order of the last axis of _Model.load and _Model.limit, and how
# _diagnose words a shortfall of each: on one tier, then over all the tiers that limit it.
_RESOURCES = ("capacity_gb", "max_iops", "max_write_gb_day")
# (the figures read as advisors.quantities says: sizes and GB a day in the size rule, IOPS as rates)
_ONE_TIER: tuple[Callable[[float, float], str], ...] = (
    lambda need, limit: f"need {gb(need)} > capacity {gb(limit)}",
    lambda need, limit: f"need {rate(need, 'physical IOPS')} > max_iops {rate(limit, '')}",
    lambda need, limit: f"write {gb(need)} a day > max_write_gb_day {gb(limit)}",
)
_ALL_TIERS: tuple[Callable[[float, float], str], ...] = (
    lambda need, limit: f"total size {gb(need)} > total capacity {gb(limit)} of all tiers",
    lambda need, limit: (
        f"physical IOPS at least {rate(need, '')} (RAID write factors included) > total "
        f"max_iops {rate(limit, '')} of all tiers"
    ),
    lambda need, limit: (
        f"objects that can only go to write-limited tiers write {gb(need)} a day > their "
        f"total max_write_gb_day {gb(limit)}"
    ),
)


@dataclass(frozen=True, slots=True)
class PlacementObject:
    id: str
    size_gb: float
    read_iops: float
    write_iops: float
    pinned_tier: str | None = None
    allowed_tiers: frozenset[str] | None = None
    read_hit_ratio: float = 0.0  # share of reads served by the array cache (0-1)
    # objective cost on each tier (replaces the latency model); tiers missing are not allowed
    cost_by_tier: Mapping[str, float] | None = field(default=None, hash=False)
    write_gb_day: float = 0.0  # host writes, GB per day (counts against max_write_gb_day)
    # back-end IOPS on each tier (replaces the RAID-factor formula where given)
    backend_iops_by_tier: Mapping[str, float] | None = field(default=None, hash=False)


@dataclass(frozen=True, slots=True)
class PlacementTier:
    name: str
    capacity_gb: float
    max_iops: float
    raid_factor: int
    read_latency_ms: float
    write_latency_ms: float
    max_write_gb_day: float | None = None  # daily write budget (flash endurance); None: no limit


@dataclass(frozen=True, slots=True)
class PlacementResult:
    assignment: dict[str, str]
    objective: float  # total cost (by default I/O time, ms per second); inf when infeasible
    lower_bound: float  # no assignment can do better than this
    status: str  # 'optimal' | 'feasible' | 'infeasible'
    gap: float  # (objective - lower_bound) / |objective|
    method: str  # 'milp' | 'heuristic' | 'greedy'
    seconds: float
    notes: tuple[str, ...] = ()


# --------------------------------------------------------------------------------------------
# The model as arrays


@dataclass(frozen=True, slots=True)
class _Model:
    ids: tuple[str, ...]
    tiers: tuple[str, ...]
    size: Floats  # (n,)
    heat: Floats  # (n,) host I/O per GB
    cost: Floats  # (n, T) objective cost on each tier, inf where not allowed
    load: Floats  # (n, T, R) what the object uses of each resource on each tier (_RESOURCES)
    allowed: Bools  # (n, T)
    limit: Floats  # (T, R) each tier's limit on each resource, inf where not limited
    # the LP's constraint matrix by which limits are finite: models that differ only in the
    # limits' values (a flash curve's points, dataclasses.replace) share it
    matrices: dict[bytes, tuple[Ints, Ints, Any, Ints]] = field(
        default_factory=dict, compare=False, repr=False
    )

    @property
    def ceiling(self) -> Floats:
        """The limits with the checking slack added."""
        out: Floats = self.limit + TOL * np.maximum(1.0, self.limit)
        return out


def _num(
    where: str, name: str, value: object, high: float | None = None, *, low: float | None = 0.0
) -> float:
    """``value`` as a finite float in [low, high] (``low=None``: any finite number), else ValueError."""
    v = float(value) if isinstance(value, int | float) and not isinstance(value, bool) else math.nan
    if not math.isfinite(v) or (low is not None and v < low) or (high is not None and v > high):
        if low is None:
            rule = "a finite number"
        elif high is None:
            rule = f"a number >= {low:g}"
        else:
            rule = f"a number between {low:g} and {high:g}"
        raise ValueError(f"{where}: {name} must be {rule}, got {value!r}")
    return v


def _tier_arrays(tiers: list[PlacementTier]) -> tuple[Floats, Floats, Floats, Floats]:
    """Per tier: RAID write factor, read and write latency, and the (T, R) limits."""
    nt = len(tiers)
    rf, rl, wl = np.zeros(nt), np.zeros(nt), np.zeros(nt)
    limit = np.full((nt, len(_RESOURCES)), np.inf)
    for k, t in enumerate(tiers):
        w = f"tier {t.name!r}"
        if isinstance(t.raid_factor, bool) or not isinstance(t.raid_factor, int) or t.raid_factor < 1:
            raise ValueError(f"{w}: raid_factor must be an integer >= 1, got {t.raid_factor!r}")
        rf[k] = t.raid_factor
        rl[k] = _num(w, "read_latency_ms", t.read_latency_ms)
        wl[k] = _num(w, "write_latency_ms", t.write_latency_ms)
        for r, name in enumerate(_RESOURCES):
            value = getattr(t, name)
            if value is None and name == "max_write_gb_day":
                continue  # the only optional limit: inf, not limited
            limit[k, r] = _num(w, name, value)
    return rf, rl, wl, limit


def _build(objects: list[PlacementObject], tiers: list[PlacementTier]) -> _Model:
    names = [t.name for t in tiers]
    if len(set(names)) != len(names):
        raise ValueError(f"tiers: duplicate tier name in {names}")
    tidx = {name: k for k, name in enumerate(names)}
    n, nt = len(objects), len(tiers)
    rf, rl, wl, limit = _tier_arrays(tiers)
    size, reads, writes, hit, wday = (np.zeros(n) for _ in range(5))
    allowed = np.ones((n, nt), dtype=bool)
    cost = np.full((n, nt), np.nan)  # nan: the latency model
    seen: set[str] = set()
    for i, o in enumerate(objects):
        w = f"object {o.id!r}"
        if o.id in seen:
            raise ValueError(f"{w}: duplicate id")
        seen.add(o.id)
        size[i] = _num(w, "size_gb", o.size_gb)
        reads[i] = _num(w, "read_iops", o.read_iops)
        writes[i] = _num(w, "write_iops", o.write_iops)
        hit[i] = _num(w, "read_hit_ratio", o.read_hit_ratio, high=1.0)
        wday[i] = _num(w, "write_gb_day", o.write_gb_day)
        if o.allowed_tiers is not None:
            allowed[i] = [name in o.allowed_tiers for name in names]
        if o.cost_by_tier is not None:
            allowed[i] &= [name in o.cost_by_tier for name in names]
            for k, name in enumerate(names):
                if name in o.cost_by_tier:
                    cost[i, k] = _num(w, f"cost_by_tier[{name!r}]", o.cost_by_tier[name], low=None)
        if o.pinned_tier is not None:
            if o.pinned_tier not in tidx:
                raise ValueError(f"{w}: pinned_tier {o.pinned_tier!r} is not one of the tiers {names}")
            only = np.zeros(nt, dtype=bool)
            only[tidx[o.pinned_tier]] = True
            allowed[i] &= only
    latency = reads[:, None] * rl[None, :] + writes[:, None] * wl[None, :]
    cost = np.where(allowed, np.where(np.isnan(cost), latency, cost), np.inf)
    phys = (reads * (1.0 - hit))[:, None] + writes[:, None] * rf[None, :]
    for i, o in enumerate(objects):
        if o.backend_iops_by_tier is not None:
            for k, name in enumerate(names):
                if name in o.backend_iops_by_tier:
                    phys[i, k] = _num(
                        f"object {o.id!r}", f"backend_iops_by_tier[{name!r}]", o.backend_iops_by_tier[name]
                    )
    load = np.stack(
        [np.broadcast_to(size[:, None], (n, nt)), phys, np.broadcast_to(wday[:, None], (n, nt))], axis=2
    )
    io = reads + writes
    with np.errstate(over="ignore"):  # a hot object of a few bytes is simply the hottest
        heat = np.divide(io, size, out=np.where(io > 0, np.inf, 0.0), where=size > 0)
    return _Model(tuple(o.id for o in objects), tuple(names), size, heat, cost, load, allowed, limit)


def _usage(m: _Model, assign: Ints, rows: Ints | None = None) -> Floats:
    """(T, R): what the objects ``rows`` (default: all) use of each tier where ``assign`` puts them."""
    rows = np.arange(len(assign), dtype=np.intp) if rows is None else rows
    on = assign[rows]
    load = m.load[rows, on]
    nt, nr = m.limit.shape
    used = [np.bincount(on, weights=load[:, r], minlength=nt) for r in range(nr)]
    return np.stack(used, axis=1).astype(np.float64)


def _objective(m: _Model, assign: Ints) -> float:
    return float(m.cost[np.arange(len(assign)), assign].sum())


def _is_feasible(m: _Model, assign: Ints) -> bool:
    if not m.allowed[np.arange(len(assign)), assign].all():
        return False
    return bool(np.all(_usage(m, assign) <= m.ceiling))


def _diagnose(m: _Model) -> list[str]:
    """Why there is no feasible assignment, as specifically as cheap checks allow."""
    homeless = np.nonzero(~m.allowed.any(axis=1))[0].tolist()
    if homeless:
        notes: list[str] = [f"object {m.ids[i]!r} has no allowed tier" for i in homeless[:5]]
        if len(homeless) > 5:
            notes.append(f"... and {len(homeless) - 5} more objects with no allowed tier")
        return notes
    notes = []
    ceiling = m.ceiling
    forced = m.allowed.sum(axis=1) == 1
    for k, name in enumerate(m.tiers):
        need = m.load[forced & m.allowed[:, k], k].sum(axis=0)
        for r in np.nonzero(need > ceiling[k])[0].tolist():
            why = _ONE_TIER[r](float(need[r]), float(m.limit[k, r]))
            notes.append(f"tier {name!r}: objects that can only go there {why}")
    for r, words in enumerate(_ALL_TIERS):
        limited = np.isfinite(m.limit[:, r])
        bound = ~(m.allowed & ~limited).any(axis=1)  # objects whose every allowed tier limits r
        least = float(np.where(m.allowed, m.load[:, :, r], np.inf).min(axis=1)[bound].sum())
        total = float(m.limit[limited, r].sum())
        if least > total + TOL * max(1.0, total):
            notes.append(words(least, total))
    return notes or ["no assignment meets every tier's capacity, IOPS and write limits at the same time"]


def _result(
    m: _Model,
    assign: Ints | None,
    lower: float,
    status: str,
    method: str,
    t0: float,
    notes: Iterable[str] = (),
) -> PlacementResult:
    if assign is None:
        return PlacementResult({}, math.inf, lower, "infeasible", math.inf, method, _since(t0), tuple(notes))
    obj = _objective(m, assign)
    lower = min(lower, obj)  # solver tolerances can put a bound a hair above the incumbent
    span = obj - lower
    gap = span / abs(obj) if obj != 0 else (0.0 if span <= 1e-9 else math.inf)
    mapping = {m.ids[i]: m.tiers[k] for i, k in enumerate(assign.tolist())}
    return PlacementResult(mapping, obj, lower, status, gap, method, _since(t0), tuple(notes))


def _since(t0: float) -> float:
    return time.monotonic() - t0


# --------------------------------------------------------------------------------------------
# Greedy heat density (the auto-tiering baseline)


def _greedy(m: _Model) -> tuple[Ints | None, str]:
    n = len(m.ids)
    forced = m.allowed.sum(axis=1) == 1
    order = np.lexsort((-m.heat, ~forced))  # pinned/forced first, then hottest I/O per GB
    pref = np.argsort(m.cost, axis=1, kind="stable")  # per object: cheapest tier first
    left = m.ceiling.tolist()  # (T, R) room left; plain lists: this loop is per object
    load = m.load.tolist()
    allowed = m.allowed.tolist()
    prefs = pref.tolist()
    assign = [-1] * n  # the loop below spells the three resources (_RESOURCES) out
    for i in order.tolist():
        for k in prefs[i]:
            if not allowed[i][k]:
                continue
            a0, a1, a2 = load[i][k]
            b0, b1, b2 = left[k]
            if a0 <= b0 and a1 <= b1 and a2 <= b2:
                assign[i] = k
                left[k] = [b0 - a0, b1 - a1, b2 - a2]
                break
        else:
            return None, f"greedy found no tier with room for object {m.ids[i]!r}"
    return np.array(assign, dtype=np.intp), ""


def greedy_heat_density(
    objects: Iterable[PlacementObject], tiers: Iterable[PlacementTier]
) -> PlacementResult:
    """Hottest I/O per GB first, each into the cheapest allowed tier that still has room.

    Pinned (or single-tier) objects go first. ``lower_bound`` is the trivial bound (every object
    on its cheapest allowed tier, ignoring limits).
    """
    t0 = time.monotonic()
    m = _build(list(objects), list(tiers))
    assign, why = _greedy(m)
    status = "feasible" if assign is not None else "infeasible"
    return _result(m, assign, _trivial_bound(m), status, "greedy", t0, [why] if why else [])


def _trivial_bound(m: _Model) -> float:
    if len(m.ids) == 0:
        return 0.0
    if len(m.tiers) == 0:
        return math.inf
    best = m.cost.min(axis=1)
    return float(best.sum()) if np.all(np.isfinite(best)) else math.inf


# --------------------------------------------------------------------------------------------
# Exact (MILP) and LP relaxation


@dataclass(frozen=True, slots=True)
class _Lp:
    state: str  # 'ok' | 'infeasible' | 'unknown' (time limit)
    bound: float
    x: Floats  # (n, T) fractional assignment
    duals: Floats  # (T, R) >= 0: objective cost of one more unit of each resource on each tier


def _matrices(m: _Model, rows: Ints) -> tuple[Ints, Ints, Any, Any, Ints]:
    """Variables (object row, tier) over the given objects, their sparse constraint rows, and
    which limit (flat index into ``m.limit``) each inequality row is: only the finite ones."""
    nt, nr = m.limit.shape
    oi, ti = np.nonzero(m.allowed[rows])
    v = np.arange(len(oi))
    a_eq = sparse.csr_array((np.ones(len(oi)), (oi, v)), shape=(len(rows), len(oi)))
    limited = np.flatnonzero(np.isfinite(m.limit))
    row_of = np.full(nt * nr, -1)
    row_of[limited] = np.arange(len(limited))
    row = row_of[ti[:, None] * nr + np.arange(nr)[None, :]]  # (variables, R)
    keep = row >= 0
    col = np.broadcast_to(v[:, None], row.shape)
    vals = m.load[rows[oi], ti]
    a_ub = sparse.csr_array((vals[keep], (row[keep], col[keep])), shape=(len(limited), len(oi)))
    return oi.astype(np.intp), ti.astype(np.intp), a_eq, a_ub, limited.astype(np.intp)


def _lp(m: _Model, seconds: float) -> _Lp:
    n, nt = m.allowed.shape
    key = np.isfinite(m.limit).tobytes()
    if key not in m.matrices:
        oi, ti, a_eq, a_ub, limited = _matrices(m, np.arange(n, dtype=np.intp))
        m.matrices[key] = (oi, ti, sparse.csc_array(sparse.vstack((a_ub, a_eq))), limited)
    oi, ti, a, limited = m.matrices[key]
    status, sol, fun, marginals = linprog(
        np.asarray(m.cost[oi, ti], dtype=np.float64),
        a,
        np.asarray(m.limit.ravel()[limited], dtype=np.float64),
        np.ones(n),
        max(seconds, 0.05),
    )
    x = np.zeros((n, nt))
    duals = np.zeros(m.limit.size)
    if status != 0 or sol is None or fun is None or marginals is None:
        state = "infeasible" if status == 2 else "unknown"
        return _Lp(state, math.nan, x, duals.reshape(m.limit.shape))
    x[oi, ti] = sol
    duals[limited] = np.maximum(-np.asarray(marginals, dtype=np.float64), 0.0)
    return _Lp("ok", float(fun), x, duals.reshape(m.limit.shape))


def _milp(
    m: _Model, assign: Ints, free: Ints, seconds: float, rel_gap: float
) -> tuple[int, Ints | None, float]:
    """HiGHS on the ``free`` objects, the others kept where ``assign`` has them (what
    ``scipy.optimize.milp`` would pass it, without its input checks).

    Returns (HiGHS status, the completed assignment or None, dual bound of the sub-problem or nan).
    """
    nt = len(m.tiers)
    fixed = np.ones(len(assign), dtype=bool)
    fixed[free] = False
    used = _usage(m, assign, np.flatnonzero(fixed).astype(np.intp))
    oi, ti, a_eq, a_ub, limited = _matrices(m, free)
    c = np.atleast_1d(m.cost[free[oi], ti]).astype(np.float64)
    a = sparse.vstack([sparse.csc_array(a_eq), sparse.csc_array(a_ub)], format="csc")
    b_ub = np.atleast_1d((m.limit - used).ravel()[limited]).astype(np.float64)
    b_l = np.concatenate([np.ones(a_eq.shape[0]), np.full(b_ub.shape, -np.inf)])
    b_u = np.concatenate([np.ones(a_eq.shape[0]), b_ub])
    options = {"log_to_console": False, "time_limit": max(seconds, 0.05), "mip_rel_gap": rel_gap}
    a.data = a.data.astype(np.float64)
    res = highs(c, a, b_l, b_u, np.zeros(c.size), np.ones(c.size), True, options)
    status = scipy_status(res)
    bound = res.get("mip_dual_bound", None)
    dual = float(bound) if bound is not None and math.isfinite(float(bound)) else math.nan
    if res.get("x", None) is None:
        return int(status), None, dual
    x = np.full((len(free), nt), -1.0)
    x[oi, ti] = np.asarray(res["x"], dtype=np.float64)
    out = assign.copy()
    out[free] = np.argmax(x, axis=1)
    return int(status), out, dual


def _neighbourhood(m: _Model, lp: _Lp, assign: Ints, k: int, rng: np.random.Generator | None) -> Ints:
    """About k objects worth re-deciding: the LP's fractional ones, and on each tier those whose
    Lagrangian regret (LP reduced-cost margin to their next-best tier, every limit priced at its
    dual) per unit of the limited resources they hold is smallest - the objects that sit at the
    edge of their tier. Tiers get a share of k by the square root of how many objects they hold
    (a small, full flash tier is all edge). With ``rng``, each tier's share is drawn at random
    from twice as many of its best-scored objects, so that repeated rounds look at different
    combinations."""
    n, nt = m.allowed.shape
    priced = m.cost + np.einsum("ntr,tr->nt", m.load, lp.duals)
    reduced = np.where(m.allowed, priced, np.inf)
    two = np.sort(reduced, axis=1)[:, :2] if nt > 1 else np.zeros((n, 2))
    regret = np.where(np.isfinite(two[:, 1]), two[:, 1] - two[:, 0], np.inf)
    finite = np.isfinite(m.limit)
    scale = np.where(finite, m.limit, 0.0).max(axis=0)  # (R,) the largest finite limit
    weight = np.where(finite.any(axis=0), 1.0 / np.maximum(scale, 1.0), 0.0)
    held = m.load[np.arange(n), assign] @ weight
    score = regret / np.maximum(held, 1e-12)
    free = lp.x.max(axis=1) < 1.0 - 1e-6
    spread = np.sqrt(np.bincount(assign, minlength=nt))
    quota = np.ceil(k * spread / max(float(spread.sum()), 1.0)).astype(np.intp)
    for t in range(nt):
        members = np.nonzero((assign == t) & np.isfinite(score))[0]
        ranked = members[np.argsort(score[members], kind="stable")]
        pool = ranked[: 2 * quota[t]]
        if rng is None or len(pool) <= quota[t]:
            free[pool[: quota[t]]] = True
        else:
            free[rng.choice(pool, size=quota[t], replace=False)] = True
    return np.nonzero(free)[0].astype(np.intp)


def _heuristic(
    m: _Model,
    lp: _Lp,
    greedy: Ints | None,
    deadline: float,
    gap_tol: float,
    *,
    whole: bool,
    start: Ints | None = None,
) -> Ints | None:
    """LP-guided large-neighbourhood search.

    First incumbent: the LP rounding repaired (or ``start``, a known feasible answer, if better).
    Then keep the LP's clear choices and let HiGHS re-decide the objects at the edge of their
    tier (each sub-MILP to within half the absolute slack ``gap_tol`` allows on the whole, or,
    while there is no feasible answer yet, to its first feasible one),
    around the incumbent, round after round: after an improvement with a fresh draw of the same
    size, after a round that found nothing better with twice as many objects (four times after an
    infeasible one), after one that ran out of time with a third fewer. Stop when within
    ``gap_tol`` of the LP bound, when time is up, or when the neighbourhood would be everything
    (then, unless ``whole``, stop: the caller runs the whole MILP). At least one round runs even
    when the LP used up the time. Without any answer, start from greedy's. Then polish by moves.
    """
    n = len(m.ids)
    best: Ints | None = None if start is None else start.copy()

    def better(a: Ints | None, than: Ints | None) -> bool:
        return a is not None and (than is None or _objective(m, a) < _objective(m, than))

    def good_enough(a: Ints | None) -> bool:
        return a is not None and _objective(m, a) - lp.bound <= gap_tol * abs(_objective(m, a))

    if lp.state == "ok":
        rounded = np.argmax(np.where(m.allowed, lp.x, -1.0), axis=1).astype(np.intp)
        repaired = _repair(m, rounded, deadline + 0.5)  # quick: the LP has few fractional objects
        if better(repaired, best):
            best = repaired
        k0 = max(60, int(3 * math.sqrt(n)))
        base, k = rounded, k0  # first round: around the LP's answer
        rng = np.random.default_rng(0)  # reproducible draws
        rounds = 0
        while (rounds == 0 or time.monotonic() < deadline) and (k < n or whole) and not good_enough(best):
            draw = rng if rounds else None  # first round: the best-scored objects, no draw
            free = np.arange(n, dtype=np.intp) if k >= n else _neighbourhood(m, lp, base, k, draw)
            rounds += 1
            sub_cost = abs(float(m.cost[free, base[free]].sum()))
            rel = min(0.05, 0.5 * gap_tol * max(abs(lp.bound), 1.0) / max(sub_cost, 1e-9))
            if best is None:  # nothing to improve on yet: the first feasible answer will do
                rel = 1.0
            share = 0.5 if best is not None else 0.8
            code, sol, _ = _milp(m, base, free, share * (deadline - time.monotonic()), rel)
            improved = sol is not None and _is_feasible(m, sol) and better(sol, best)
            if improved:
                best = sol
            if sol is None and code != 2:  # out of time without a solution
                break
            base = best if best is not None else base
            if k >= n:
                break
            if code == 2:
                k *= 4
            elif code != 0:
                k = max(k0, 2 * k // 3)
            elif not improved:
                k *= 2
    if best is None and greedy is not None:
        best = greedy.copy()
    if best is not None:
        _polish(m, best, deadline)
    return best


def _excess(m: _Model, used: Floats, tiers: Ints | int) -> Floats:
    """Per row of ``used`` (.., R), on the matching tier of ``tiers``: the overflow of every limit,
    each relative to the limit, summed (0 when within)."""
    over = np.maximum(used - m.ceiling[tiers], 0.0) / np.maximum(m.limit[tiers], 1.0)
    out: Floats = over.sum(axis=-1)
    return out


def _repair(m: _Model, assign: Ints, deadline: float) -> Ints | None:
    """Move objects until no tier is over a limit; None if stuck.

    Each step makes the move that reduces the total relative overflow, preferring the smallest
    objective loss per unit of overflow removed (a move may push an over-full tier's excess into
    a roomier tier, which a later step then relieves).
    """
    assign = assign.copy()
    used = _usage(m, assign)
    nt = len(m.tiers)
    for _ in range(4 * len(assign) + 10):
        over = _excess(m, used, np.arange(nt))
        if not over.any():
            return assign
        if time.monotonic() > deadline:
            return None
        mem = np.nonzero(over[assign] > 0)[0]  # objects on an over-full tier
        t = assign[mem]
        after_t = _excess(m, used[t] - m.load[mem, t], t)
        best = (math.inf, -1, -1)
        for u in range(nt):
            after_u = _excess(m, used[u] + m.load[mem, u], u)
            gain = (over[t] - after_t) + (over[u] - after_u)
            ok = m.allowed[mem, u] & (t != u) & (gain > 1e-12)
            if not ok.any():
                continue
            score = np.where(ok, (m.cost[mem, u] - m.cost[mem, t]) / np.where(ok, gain, 1.0), np.inf)
            j = int(np.argmin(score))
            if score[j] < best[0]:
                best = (float(score[j]), int(mem[j]), u)
        if best[1] < 0:
            return None
        _move(m, assign, used, best[1], best[2])
    return None


def _move(m: _Model, assign: Ints, used: Floats, i: int, u: int) -> None:
    t = int(assign[i])
    used[t] -= m.load[i, t]
    used[u] += m.load[i, u]
    assign[i] = u


def _polish(m: _Model, assign: Ints, deadline: float) -> None:
    """Single moves into free room, biggest gain first, until none is left or time is up."""
    n = len(assign)
    if n == 0:
        return
    used = _usage(m, assign)
    ceiling = m.ceiling
    eps = 1e-9 * max(1.0, abs(_objective(m, assign)) / n)
    changed = True
    while changed and time.monotonic() < deadline:
        changed = False
        gain = np.where(m.allowed, m.cost[np.arange(n), assign][:, None] - m.cost, -np.inf)
        room = np.all(m.load <= (ceiling - used)[None, :, :], axis=2)
        ii, uu = np.nonzero((gain > eps) & room)
        for k in np.argsort(-gain[ii, uu], kind="stable").tolist():
            i, u = int(ii[k]), int(uu[k])
            t = int(assign[i])
            fits = bool(np.all(used[u] + m.load[i, u] <= ceiling[u]))
            if m.cost[i, t] - m.cost[i, u] > eps and fits:
                _move(m, assign, used, i, u)
                changed = True


# --------------------------------------------------------------------------------------------
# Public entry points


def place(
    objects: Iterable[PlacementObject],
    tiers: Iterable[PlacementTier],
    *,
    time_limit_s: float = 10.0,
    exact_max_objects: int = 50_000,
    gap_tolerance: float = MIP_REL_GAP,
) -> PlacementResult:
    """Best assignment of objects to tiers (see the module docstring for the model).

    Steps: the LP relaxation (the first lower bound); an LP-guided heuristic (keep the LP's clear
    choices, let HiGHS re-decide the objects at the edge of their tier; ``method='heuristic'``);
    then, unless that is already within ``gap_tolerance`` of the bound or there are more than
    ``exact_max_objects`` objects, HiGHS's MILP on the whole problem in the remaining time
    (``method='milp'``; its dual bound tightens ``lower_bound``). The best answer wins, greedy
    heat-density's included (``method='greedy'``). ``status`` is ``optimal`` when the answer is
    proven within ``gap_tolerance`` of the bound (HiGHS's own criterion, 0.01 % by default).
    """
    t0 = time.monotonic()
    _check_budget(time_limit_s, gap_tolerance)
    m = _build(list(objects), list(tiers))
    return _solve(m, t0, float(time_limit_s), exact_max_objects, gap_tolerance)


def polish(
    objects: Iterable[PlacementObject],
    tiers: Iterable[PlacementTier],
    assignment: Mapping[str, str],
    *,
    time_limit_s: float = 0.5,
) -> dict[str, str]:
    """``assignment`` after single moves into free room that lower the objective, biggest gain
    first: for an answer found under other costs or within a gap tolerance, so that no object
    could do better alone. Every object must be assigned to a tier it may use."""
    m = _build(list(objects), list(tiers))
    index = {name: k for k, name in enumerate(m.tiers)}
    try:
        assign = np.array([index[assignment[i]] for i in m.ids], dtype=np.intp)
    except KeyError as exc:
        raise ValueError(f"assignment: no tier, or an unknown one, for {exc.args[0]!r}") from None
    if not m.allowed[np.arange(len(assign)), assign].all():
        raise ValueError("assignment: an object is on a tier it may not use")
    _polish(m, assign, time.monotonic() + time_limit_s)
    return {i: m.tiers[int(t)] for i, t in zip(m.ids, assign.tolist(), strict=True)}


def _check_budget(time_limit_s: float, gap_tolerance: float) -> None:
    if not (isinstance(time_limit_s, int | float) and math.isfinite(time_limit_s) and time_limit_s > 0):
        raise ValueError(f"time_limit_s must be a number > 0, got {time_limit_s!r}")
    if not (isinstance(gap_tolerance, int | float) and 0 <= gap_tolerance < 1):
        raise ValueError(f"gap_tolerance must be a number in [0, 1), got {gap_tolerance!r}")


def _solve(
    m: _Model,
    t0: float,
    time_limit_s: float,
    exact_max_objects: int,
    gap_tolerance: float,
    incumbent: Ints | None = None,
) -> PlacementResult:
    """``place`` on a built model; ``incumbent`` is a known feasible assignment to start from."""
    deadline = t0 + time_limit_s
    if len(m.ids) == 0:
        return _result(m, np.zeros(0, dtype=np.intp), 0.0, "optimal", "milp", t0)
    if len(m.tiers) == 0 or not m.allowed.any(axis=1).all():
        return _result(m, None, math.inf, "infeasible", "milp", t0, _diagnose(m))

    exact = len(m.ids) <= exact_max_objects
    notes: list[str] = []
    if not exact:
        notes.append(f"{len(m.ids)} objects > exact_max_objects={exact_max_objects}: no whole-problem MILP")
    if incumbent is not None and _is_feasible(m, incumbent):
        trivial = _trivial_bound(m)
        if _objective(m, incumbent) <= trivial:
            # every object already on its cheapest tier within every limit: nothing can beat it,
            # and the search below would keep it (it replaces an answer only by a strictly better
            # one, and prefers it to greedy's on a tie), so skip the LP and the searches
            return _result(m, incumbent.copy(), trivial, "optimal", "heuristic", t0, notes)
    t_lp = time.monotonic()
    lp = _lp(m, deadline - t_lp)
    t_lp = time.monotonic() - t_lp
    if lp.state == "infeasible":
        return _result(m, None, math.inf, "infeasible", "milp", t0, _diagnose(m))
    lower = lp.bound if lp.state == "ok" else _trivial_bound(m)

    def within(obj: float, bound: float) -> bool:
        return obj - bound <= gap_tolerance * abs(obj) + 1e-9 * max(1.0, abs(obj))

    found: list[tuple[float, Ints, str, bool]] = []  # (objective, assignment, method, proven)
    greedy, _ = _greedy(m)
    if greedy is not None:
        found.append((_objective(m, greedy), greedy, "greedy", False))
    if incumbent is not None and _is_feasible(m, incumbent):
        found.append((_objective(m, incumbent), incumbent, "heuristic", False))
    else:
        incumbent = None
    heur_deadline = t0 + HEURISTIC_SHARE * time_limit_s if exact else deadline
    heur = _heuristic(m, lp, greedy, heur_deadline, gap_tolerance, whole=not exact, start=incumbent)
    if heur is not None:
        found.append((_objective(m, heur), heur, "heuristic", False))

    if exact and not (found and within(min(f[0] for f in found), lower)):
        every = np.arange(len(m.ids), dtype=np.intp)
        # HiGHS checks its clock between LP solves, so on a big model it overruns by several of
        # them (measured: 14.5 s for a 7.4 s limit at 20,000 objects): keep that margin
        left = deadline - time.monotonic()
        seconds = left - min(left / 2, 8 * t_lp + 0.02)
        code, sol, dual = _milp(m, np.zeros_like(every), every, seconds, gap_tolerance)
        if code == 2:
            return _result(m, None, math.inf, "infeasible", "milp", t0, _diagnose(m))
        lower = max(lower, dual) if not math.isnan(dual) else lower
        proven = code == 0
        if sol is not None and not _is_feasible(m, sol):  # HiGHS's tolerances let a limit slip
            sol, proven = _repair(m, sol, deadline + 1.0), False
        if sol is not None:
            found.append((_objective(m, sol), sol, "milp", proven))
        else:
            notes.append(f"the MILP found no solution ({_MILP_STATUS.get(code, code)})")

    if not found:
        notes.append("no feasible assignment found within the time limit (not proven infeasible)")
        return _result(m, None, lower, "infeasible", "heuristic", t0, notes)
    lower = max(lower, _trivial_bound(m))
    rank = {"milp": 0, "heuristic": 1, "greedy": 2}  # on a tie, prefer the exact answer
    obj, assign, method, _ = min(found, key=lambda f: (f[0], rank[f[2]]))
    proven = any(f[3] for f in found) or within(obj, lower)
    if method == "greedy" and len(found) > 1:
        others = min(f[0] for f in found if f[2] != "greedy")
        notes.append(f"the optimiser's best ({others:,.3f}) was worse than greedy heat-density's")
    if not _is_feasible(m, assign):  # cannot happen; never hand out an assignment that breaks a limit
        raise AssertionError("placement produced an assignment that breaks a limit")
    # within the gap tolerance a small object's choice is arbitrary: no single move into free room
    # may still improve the answer (each object's explanation compares it with its alternatives)
    assign = assign.copy()
    _polish(m, assign, time.monotonic() + 0.5)
    return _result(m, assign, lower, "optimal" if proven else "feasible", method, t0, notes)
