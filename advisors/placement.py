"""Objects -> storage tiers under capacity and RAID-adjusted IOPS limits.

Minimise the total I/O time per second, sum over objects of
``read_iops x read_latency_ms(tier) + write_iops x write_latency_ms(tier)``, subject to, per tier,
``sum size_gb <= capacity_gb`` and ``sum physical IOPS <= max_iops``, where an object's physical
IOPS on tier t are ``read_iops x (1 - read_hit_ratio) + write_iops x raid_factor(t)``. Each object
goes to exactly one tier; ``pinned_tier`` forces it, ``allowed_tiers`` restricts it (names that are
not among the tiers are ignored; an unknown ``pinned_tier`` is a ``ValueError``).

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
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import sparse
from scipy.optimize import Bounds, LinearConstraint, linprog, milp

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.intp]
Bools = npt.NDArray[np.bool_]

TOL = 1e-9  # relative slack when checking a limit (floating-point dust only)
MIP_REL_GAP = 1e-4  # HiGHS's default: "optimal" means within 0.01 % of the proven bound
HEURISTIC_SHARE = 0.25  # share of the time limit for the heuristic when the whole MILP follows
_MILP_STATUS = {1: "time limit", 3: "unbounded", 4: "solver error"}


@dataclass(frozen=True)
class PlacementObject:
    id: str
    size_gb: float
    read_iops: float
    write_iops: float
    pinned_tier: str | None = None
    allowed_tiers: frozenset[str] | None = None
    read_hit_ratio: float = 0.0  # share of reads served by the array cache (0-1)


@dataclass(frozen=True)
class PlacementTier:
    name: str
    capacity_gb: float
    max_iops: float
    raid_factor: int
    read_latency_ms: float
    write_latency_ms: float


@dataclass(frozen=True)
class PlacementResult:
    assignment: dict[str, str]
    objective: float  # total I/O time, ms per second; inf when infeasible
    lower_bound: float  # no assignment can do better than this
    status: str  # 'optimal' | 'feasible' | 'infeasible'
    gap: float  # (objective - lower_bound) / objective
    method: str  # 'milp' | 'heuristic' | 'greedy'
    seconds: float
    notes: tuple[str, ...] = ()


# --------------------------------------------------------------------------------------------
# The model as arrays


@dataclass(frozen=True)
class _Model:
    ids: tuple[str, ...]
    tiers: tuple[str, ...]
    size: Floats  # (n,)
    heat: Floats  # (n,) host I/O per GB
    cost: Floats  # (n, T) I/O time on each tier, inf where not allowed
    phys: Floats  # (n, T) physical IOPS on each tier
    allowed: Bools  # (n, T)
    cap: Floats  # (T,)
    iops: Floats  # (T,)

    @property
    def cap_tol(self) -> Floats:
        return TOL * np.maximum(1.0, self.cap)

    @property
    def iops_tol(self) -> Floats:
        return TOL * np.maximum(1.0, self.iops)


def _num(where: str, name: str, value: object, high: float | None = None) -> float:
    v = float(value) if isinstance(value, int | float) and not isinstance(value, bool) else math.nan
    if not math.isfinite(v) or v < 0.0 or (high is not None and v > high):
        rng = ">= 0" if high is None else f"between 0 and {high:g}"
        raise ValueError(f"{where}: {name} must be a number {rng}, got {value!r}")
    return v


def _build(objects: list[PlacementObject], tiers: list[PlacementTier]) -> _Model:
    names = [t.name for t in tiers]
    if len(set(names)) != len(names):
        raise ValueError(f"tiers: duplicate tier name in {names}")
    tidx = {name: k for k, name in enumerate(names)}
    n, nt = len(objects), len(tiers)
    rf = np.zeros(nt)
    rl, wl, cap, iops = (np.zeros(nt) for _ in range(4))
    for k, t in enumerate(tiers):
        w = f"tier {t.name!r}"
        if isinstance(t.raid_factor, bool) or not isinstance(t.raid_factor, int) or t.raid_factor < 1:
            raise ValueError(f"{w}: raid_factor must be an integer >= 1, got {t.raid_factor!r}")
        rf[k] = t.raid_factor
        cap[k] = _num(w, "capacity_gb", t.capacity_gb)
        iops[k] = _num(w, "max_iops", t.max_iops)
        rl[k] = _num(w, "read_latency_ms", t.read_latency_ms)
        wl[k] = _num(w, "write_latency_ms", t.write_latency_ms)
    size, reads, writes, hit = (np.zeros(n) for _ in range(4))
    allowed = np.ones((n, nt), dtype=bool)
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
        if o.allowed_tiers is not None:
            allowed[i] = [name in o.allowed_tiers for name in names]
        if o.pinned_tier is not None:
            if o.pinned_tier not in tidx:
                raise ValueError(f"{w}: pinned_tier {o.pinned_tier!r} is not one of the tiers {names}")
            only = np.zeros(nt, dtype=bool)
            only[tidx[o.pinned_tier]] = True
            allowed[i] &= only
    cost = np.where(allowed, reads[:, None] * rl[None, :] + writes[:, None] * wl[None, :], np.inf)
    phys = (reads * (1.0 - hit))[:, None] + writes[:, None] * rf[None, :]
    io = reads + writes
    with np.errstate(over="ignore"):  # a hot object of a few bytes is simply the hottest
        heat = np.divide(io, size, out=np.where(io > 0, np.inf, 0.0), where=size > 0)
    return _Model(tuple(o.id for o in objects), tuple(names), size, heat, cost, phys, allowed, cap, iops)


def _usage(m: _Model, assign: Ints) -> tuple[Floats, Floats]:
    nt = len(m.tiers)
    used_cap = np.bincount(assign, weights=m.size, minlength=nt).astype(np.float64)
    used_iops = np.bincount(assign, weights=m.phys[np.arange(len(assign)), assign], minlength=nt)
    return used_cap, used_iops.astype(np.float64)


def _objective(m: _Model, assign: Ints) -> float:
    return float(m.cost[np.arange(len(assign)), assign].sum())


def _is_feasible(m: _Model, assign: Ints) -> bool:
    if not m.allowed[np.arange(len(assign)), assign].all():
        return False
    used_cap, used_iops = _usage(m, assign)
    return bool(np.all(used_cap <= m.cap + m.cap_tol) and np.all(used_iops <= m.iops + m.iops_tol))


def _diagnose(m: _Model) -> list[str]:
    """Why there is no feasible assignment, as specifically as cheap checks allow."""
    homeless = np.nonzero(~m.allowed.any(axis=1))[0].tolist()
    if homeless:
        notes: list[str] = [f"object {m.ids[i]!r} has no allowed tier" for i in homeless[:5]]
        if len(homeless) > 5:
            notes.append(f"... and {len(homeless) - 5} more objects with no allowed tier")
        return notes
    notes = []
    forced = m.allowed.sum(axis=1) == 1
    for k, name in enumerate(m.tiers):
        only = forced & m.allowed[:, k]
        need_gb, need_io = float(m.size[only].sum()), float(m.phys[only, k].sum())
        if need_gb > m.cap[k] + m.cap_tol[k]:
            notes.append(
                f"tier {name!r}: objects that can only go there need {need_gb:,.1f} GB > capacity "
                f"{m.cap[k]:,.1f} GB"
            )
        if need_io > m.iops[k] + m.iops_tol[k]:
            notes.append(
                f"tier {name!r}: objects that can only go there need {need_io:,.0f} physical IOPS "
                f"> max_iops {m.iops[k]:,.0f}"
            )
    total_gb, total_cap = float(m.size.sum()), float(m.cap.sum())
    if total_gb > total_cap * (1 + TOL) + TOL:
        notes.append(f"total size {total_gb:,.1f} GB > total capacity {total_cap:,.1f} GB of all tiers")
    least_io = float(np.where(m.allowed, m.phys, np.inf).min(axis=1).sum())
    if least_io > float(m.iops.sum()) * (1 + TOL) + TOL:
        notes.append(
            f"physical IOPS at least {least_io:,.0f} (RAID write factors included) > total max_iops "
            f"{float(m.iops.sum()):,.0f} of all tiers"
        )
    return notes or ["no assignment meets every tier's capacity and IOPS limits at the same time"]


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
    gap = (obj - lower) / obj if obj > 0 else 0.0
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
    pref = np.argsort(m.cost, axis=1, kind="stable")  # per object: fastest tier first
    left_cap, left_io = m.cap + m.cap_tol, m.iops + m.iops_tol
    assign = np.full(n, -1, dtype=np.intp)
    for i in order.tolist():
        for k in pref[i].tolist():
            if not m.allowed[i, k]:
                continue
            if m.size[i] <= left_cap[k] and m.phys[i, k] <= left_io[k]:
                assign[i] = k
                left_cap[k] -= m.size[i]
                left_io[k] -= m.phys[i, k]
                break
        else:
            return None, f"greedy found no tier with room for object {m.ids[i]!r}"
    return assign, ""


def greedy_heat_density(
    objects: Iterable[PlacementObject], tiers: Iterable[PlacementTier]
) -> PlacementResult:
    """Hottest I/O per GB first, each into the fastest allowed tier that still has room.

    Pinned (or single-tier) objects go first. ``lower_bound`` is the trivial bound (every object
    on its fastest allowed tier, ignoring limits).
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


@dataclass(frozen=True)
class _Lp:
    state: str  # 'ok' | 'infeasible' | 'unknown' (time limit)
    bound: float
    x: Floats  # (n, T) fractional assignment
    duals: Floats  # (2T,) >= 0: objective cost of one more GB / IOPS on each tier


def _matrices(m: _Model, rows: Ints) -> tuple[Ints, Ints, Any, Any]:
    """Variables (object row, tier) over the given objects, and their sparse constraint rows."""
    nt = len(m.tiers)
    oi, ti = np.nonzero(m.allowed[rows])
    v = np.arange(len(oi))
    obj = rows[oi]
    a_eq = sparse.csr_array((np.ones(len(oi)), (oi, v)), shape=(len(rows), len(oi)))
    vals = np.concatenate([m.size[obj], m.phys[obj, ti]])
    a_ub = sparse.csr_array(
        (vals, (np.concatenate([ti, ti + nt]), np.concatenate([v, v]))), shape=(2 * nt, len(oi))
    )
    return oi.astype(np.intp), ti.astype(np.intp), a_eq, a_ub


def _lp(m: _Model, seconds: float) -> _Lp:
    n, nt = m.allowed.shape
    oi, ti, a_eq, a_ub = _matrices(m, np.arange(n, dtype=np.intp))
    res = linprog(
        m.cost[oi, ti],
        A_ub=a_ub,
        b_ub=np.concatenate([m.cap, m.iops]),
        A_eq=a_eq,
        b_eq=np.ones(n),
        bounds=(0.0, 1.0),
        method="highs",
        options={"time_limit": max(seconds, 0.05)},
    )
    x = np.zeros((n, nt))
    if res.status != 0:
        return _Lp("infeasible" if res.status == 2 else "unknown", math.nan, x, np.zeros(2 * nt))
    x[oi, ti] = res.x
    duals = np.maximum(-np.asarray(res.ineqlin.marginals, dtype=np.float64), 0.0)
    return _Lp("ok", float(res.fun), x, duals)


def _milp(
    m: _Model, assign: Ints, free: Ints, seconds: float, rel_gap: float
) -> tuple[int, Ints | None, float]:
    """HiGHS on the ``free`` objects, the others kept where ``assign`` has them.

    Returns (HiGHS status, the completed assignment or None, dual bound of the sub-problem or nan).
    """
    nt = len(m.tiers)
    fixed = np.ones(len(assign), dtype=bool)
    fixed[free] = False
    used_cap = np.bincount(assign[fixed], weights=m.size[fixed], minlength=nt)
    used_io = np.bincount(assign[fixed], weights=m.phys[fixed, assign[fixed]], minlength=nt)
    oi, ti, a_eq, a_ub = _matrices(m, free)
    res = milp(
        m.cost[free[oi], ti],
        integrality=np.ones(len(oi)),
        bounds=Bounds(0.0, 1.0),
        constraints=[
            LinearConstraint(a_eq, 1.0, 1.0),
            LinearConstraint(a_ub, -np.inf, np.concatenate([m.cap - used_cap, m.iops - used_io])),
        ],
        options={"time_limit": max(seconds, 0.05), "mip_rel_gap": rel_gap},
    )
    bound = getattr(res, "mip_dual_bound", None)
    dual = float(bound) if bound is not None and math.isfinite(float(bound)) else math.nan
    if res.x is None:
        return int(res.status), None, dual
    x = np.full((len(free), nt), -1.0)
    x[oi, ti] = np.asarray(res.x, dtype=np.float64)
    out = assign.copy()
    out[free] = np.argmax(x, axis=1)
    return int(res.status), out, dual


def _neighbourhood(m: _Model, lp: _Lp, assign: Ints, k: int) -> Ints:
    """Objects worth re-deciding: the LP's fractional ones, and on each tier the k/T whose
    Lagrangian regret (LP reduced-cost margin to their next-best tier) per unit of capacity/IOPS
    they hold is smallest - the objects that sit at the edge of their tier."""
    n, nt = m.allowed.shape
    lam_cap, lam_io = lp.duals[:nt], lp.duals[nt:]
    reduced = np.where(m.allowed, m.cost + lam_cap * m.size[:, None] + lam_io * m.phys, np.inf)
    two = np.sort(reduced, axis=1)[:, :2] if nt > 1 else np.zeros((n, 2))
    regret = np.where(np.isfinite(two[:, 1]), two[:, 1] - two[:, 0], np.inf)
    held = m.size / max(float(m.cap.max()), 1.0) + m.phys[np.arange(n), assign] / max(
        float(m.iops.max()), 1.0
    )
    score = regret / np.maximum(held, 1e-12)
    free = lp.x.max(axis=1) < 1.0 - 1e-6
    for t in range(nt):
        members = np.nonzero((assign == t) & np.isfinite(score))[0]
        free[members[np.argsort(score[members], kind="stable")[: max(1, k // nt)]]] = True
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
    tier; repeat around the incumbent with a neighbourhood that doubles (quadruples after an infeasible one)
    until within ``gap_tol`` of the LP bound, time is up, or the neighbourhood would be everything
    (then, unless ``whole``, stop: the caller runs the whole MILP). At least one round runs even
    when the LP used up the time. Without any answer, start from greedy's. Then polish by moves.
    """
    n = len(m.ids)
    best: Ints | None = None if start is None else start.copy()

    def good_enough(a: Ints | None) -> bool:
        return a is not None and _objective(m, a) - lp.bound <= gap_tol * _objective(m, a)

    if lp.state == "ok":
        rounded = np.argmax(np.where(m.allowed, lp.x, -1.0), axis=1).astype(np.intp)
        repaired = _repair(m, rounded, deadline + 0.5)  # quick: the LP has few fractional objects
        if repaired is not None and (best is None or _objective(m, repaired) < _objective(m, best)):
            best = repaired
        base, k = rounded, max(60, int(3 * math.sqrt(n)))  # first round: around the LP's answer
        rounds = 0
        while (rounds == 0 or time.monotonic() < deadline) and (k < n or whole) and not good_enough(best):
            rounds += 1
            free = np.arange(n, dtype=np.intp) if k >= n else _neighbourhood(m, lp, base, k)
            sub_cost = float(m.cost[free, base[free]].sum())
            rel = min(0.05, gap_tol * max(lp.bound, 1.0) / max(sub_cost, 1e-9))  # same absolute gap
            share = 0.5 if best is not None else 0.8
            code, sol, _ = _milp(m, base, free, share * (deadline - time.monotonic()), rel)
            if sol is not None and _is_feasible(m, sol):
                if best is None or _objective(m, sol) < _objective(m, best):
                    best = sol
                base = best
            elif code != 2:  # out of time without a solution
                break
            if k >= n:
                break
            k *= 2 if code != 2 else 4
    if best is None and greedy is not None:
        best = greedy.copy()
    if best is not None:
        _polish(m, best, deadline)
    return best


def _overflow(m: _Model, used_cap: Floats, used_io: Floats) -> Floats:
    """Per tier: capacity and IOPS overflow, each relative to the tier's limit (0 when within)."""
    oc = np.maximum(used_cap - m.cap - m.cap_tol, 0.0) / np.maximum(m.cap, 1.0)
    oi = np.maximum(used_io - m.iops - m.iops_tol, 0.0) / np.maximum(m.iops, 1.0)
    out: Floats = oc + oi
    return out


def _repair(m: _Model, assign: Ints, deadline: float) -> Ints | None:
    """Move objects until no tier is over a limit; None if stuck.

    Each step makes the move that reduces the total relative overflow, preferring the smallest
    objective loss per unit of overflow removed (a move may push an over-full tier's excess into
    a roomier tier, which a later step then relieves).
    """
    assign = assign.copy()
    used_cap, used_io = _usage(m, assign)
    nt = len(m.tiers)
    for _ in range(4 * len(assign) + 10):
        over = _overflow(m, used_cap, used_io)
        if not over.any():
            return assign
        if time.monotonic() > deadline:
            return None
        mem = np.nonzero(over[assign] > 0)[0]  # objects on an over-full tier
        t = assign[mem]
        left_c, left_i = used_cap[t] - m.size[mem], used_io[t] - m.phys[mem, t]
        after_t = np.maximum(left_c - m.cap[t] - m.cap_tol[t], 0.0) / np.maximum(m.cap[t], 1.0)
        after_t += np.maximum(left_i - m.iops[t] - m.iops_tol[t], 0.0) / np.maximum(m.iops[t], 1.0)
        best = (math.inf, -1, -1)
        for u in range(nt):
            add_c, add_i = used_cap[u] + m.size[mem], used_io[u] + m.phys[mem, u]
            after_u = np.maximum(add_c - m.cap[u] - m.cap_tol[u], 0.0) / max(m.cap[u], 1.0)
            after_u += np.maximum(add_i - m.iops[u] - m.iops_tol[u], 0.0) / max(m.iops[u], 1.0)
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
        _move(m, assign, used_cap, used_io, best[1], best[2])
    return None


def _move(m: _Model, assign: Ints, used_cap: Floats, used_io: Floats, i: int, u: int) -> None:
    t = int(assign[i])
    used_cap[t] -= m.size[i]
    used_io[t] -= m.phys[i, t]
    used_cap[u] += m.size[i]
    used_io[u] += m.phys[i, u]
    assign[i] = u


def _polish(m: _Model, assign: Ints, deadline: float) -> None:
    """Single moves into free room, biggest gain first, until none is left or time is up."""
    n = len(assign)
    if n == 0:
        return
    used_cap, used_io = _usage(m, assign)
    eps = 1e-9 * max(1.0, _objective(m, assign) / n)
    changed = True
    while changed and time.monotonic() < deadline:
        changed = False
        gain = np.where(m.allowed, m.cost[np.arange(n), assign][:, None] - m.cost, -np.inf)
        room = (m.size[:, None] <= (m.cap + m.cap_tol - used_cap)[None, :]) & (
            m.phys <= (m.iops + m.iops_tol - used_io)[None, :]
        )
        ii, uu = np.nonzero((gain > eps) & room)
        for k in np.argsort(-gain[ii, uu], kind="stable").tolist():
            i, u = int(ii[k]), int(uu[k])
            t = int(assign[i])
            fits = used_cap[u] + m.size[i] <= m.cap[u] + m.cap_tol[u]
            fits = fits and used_io[u] + m.phys[i, u] <= m.iops[u] + m.iops_tol[u]
            if m.cost[i, t] - m.cost[i, u] > eps and fits:
                _move(m, assign, used_cap, used_io, i, u)
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
    return _result(m, assign, lower, "optimal" if proven else "feasible", method, t0, notes)


def flash_curve(
    objects: Iterable[PlacementObject],
    tiers: Iterable[PlacementTier],
    *,
    flash_tier: str,
    points: int = 20,
    time_limit_s: float = 1.0,
    gap_tolerance: float = 5e-3,
) -> list[tuple[float, float]]:
    """(flash GB, share of total I/O time saved) for flash capacities from 0 to all eligible data.

    The share saved is against every object on its slowest allowed tier. Each point is an
    optimal (within ``gap_tolerance``, or the best found within ``time_limit_s``) placement with
    the flash tier's capacity set to that many GB and everything else as given. The last point is
    the size of all objects allowed on flash, so it shows the saving of putting everything that
    fits (within flash's IOPS limit) on flash. Points where the other tiers cannot hold the rest
    are left out. A placement that fits in fewer GB also fits in more: each point starts from
    the previous point's answer, and the curve carries the best so far, so it never drops.
    Budget: up to ``points x time_limit_s`` seconds.
    """
    _check_budget(time_limit_s, gap_tolerance)
    objs, tier_list = list(objects), list(tiers)
    m = _build(objs, tier_list)
    if flash_tier not in m.tiers:
        raise ValueError(f"flash_tier {flash_tier!r} is not one of the tiers {list(m.tiers)}")
    if isinstance(points, bool) or not isinstance(points, int) or points < 2:
        raise ValueError(f"points must be an integer >= 2, got {points!r}")
    f = m.tiers.index(flash_tier)
    baseline = float(np.where(m.allowed, m.cost, -np.inf).max(axis=1).sum()) if objs else 0.0
    g_max = float(m.size[m.allowed[:, f]].sum())
    grid = np.linspace(0.0, g_max, points).tolist() if g_max > 0 else [0.0]
    out: list[tuple[float, float]] = []
    best = 0.0
    previous: Ints | None = None
    for g in grid:
        cap = m.cap.copy()
        cap[f] = g
        sized = replace(m, cap=cap)
        # the previous point's answer fits in more flash too: it starts the search, so the
        # curve never drops
        r = _solve(sized, time.monotonic(), time_limit_s, 50_000, gap_tolerance, previous)
        if r.status == "infeasible":
            continue
        index = {name: k for k, name in enumerate(m.tiers)}
        previous = np.array([index[r.assignment[i]] for i in m.ids], dtype=np.intp)
        share = (baseline - r.objective) / baseline if baseline > 0 else 0.0
        best = max(best, share)
        out.append((float(g), best))
    return out
