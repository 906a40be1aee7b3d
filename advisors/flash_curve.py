"""The flash curve: how much I/O wait each size of flash would save, one optimal placement per
size (advisors.placement's model and search, with the flash tier's capacity varied)."""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

import numpy as np

from advisors.placement import (
    _RESOURCES,
    Bools,
    Floats,
    Ints,
    PlacementObject,
    PlacementTier,
    _build,
    _check_budget,
    _Model,
    _num,
    _objective,
    _solve,
    _trivial_bound,
    _usage,
)


def flash_curve(
    objects: Iterable[PlacementObject],
    tiers: Iterable[PlacementTier],
    *,
    flash_tier: str,
    points: int = 20,
    time_limit_s: float = 1.0,
    gap_tolerance: float = 5e-3,
    waits: Mapping[str, Mapping[str, float]] | None = None,
    baseline: float | None = None,
) -> list[tuple[float, float]]:
    """(flash GB, share of the I/O wait saved) for flash capacities from 0 to all eligible data.

    Each point is an optimal (within ``gap_tolerance``, or the best found within
    ``time_limit_s``) placement with the flash tier's capacity set to that many GB and everything
    else as given, every other limit (flash's IOPS and write budget too) included. The last point
    is the size of all objects allowed on flash, so it shows the saving of putting everything that
    fits on flash. Points where the other tiers cannot hold the rest are left out.

    What a point reports: without ``waits``, the placement's objective; with ``waits`` (per
    object id, its I/O wait in ms/s on each tier it may go to), the sum of the waits where the
    placement puts the objects, while the placement still minimises the objective. The share is
    ``(baseline - that) / baseline``, against ``baseline`` (e.g. the I/O wait of today's
    placement) or, when it is None, every object on its slowest allowed tier (in the same
    measure). Against today's placement a share can be negative (less flash than is used today);
    it is kept as it is. A placement that fits in fewer GB also fits in more: each point starts
    from the previous point's answer, and the curve carries the best share so far, so it never
    drops. Budget: up to ``points x time_limit_s`` seconds.
    """
    return _flash_curve(
        objects,
        tiers,
        flash_tier=flash_tier,
        points=points,
        time_limit_s=time_limit_s,
        gap_tolerance=gap_tolerance,
        waits=waits,
        baseline=baseline,
    )


def _flash_curve(
    objects: Iterable[PlacementObject],
    tiers: Iterable[PlacementTier],
    *,
    flash_tier: str,
    points: int,
    time_limit_s: float,
    gap_tolerance: float,
    waits: Mapping[str, Mapping[str, float]] | None,
    baseline: float | None,
    shortcuts: bool = True,
) -> list[tuple[float, float]]:
    """``flash_curve``; ``shortcuts=False``: the reference, a solve at every point (no point left
    out as surely infeasible, none taken as settled), which tests/advisors/test_fast_place_curve.py
    holds the shortcuts to."""
    _check_budget(time_limit_s, gap_tolerance)
    m = _build(list(objects), list(tiers))
    if flash_tier not in m.tiers:
        raise ValueError(f"flash_tier {flash_tier!r} is not one of the tiers {list(m.tiers)}")
    if isinstance(points, bool) or not isinstance(points, int) or points < 2:
        raise ValueError(f"points must be an integer >= 2, got {points!r}")
    f = m.tiers.index(flash_tier)
    measure = m.cost if waits is None else _waits(m, waits)
    if baseline is None:
        base = float(np.where(m.allowed, measure, -np.inf).max(axis=1).sum()) if m.ids else 0.0
    else:
        base = _num("flash_curve", "baseline", baseline)
    g_max = float(m.size[m.allowed[:, f]].sum())
    grid = np.linspace(0.0, g_max, points).tolist() if g_max > 0 else [0.0]
    out: list[tuple[float, float]] = []
    best = -math.inf
    previous: Ints | None = None
    index = {name: k for k, name in enumerate(m.tiers)}
    trivial = _trivial_bound(m)
    needs = _needs(m) if shortcuts else None
    settled = False  # `previous` costs no more than every object on its cheapest tier
    for g in grid:
        if settled:
            # `_solve` would return `previous` as it is (it fits in more flash too, and nothing is
            # cheaper): the same share, without the solve
            out.append((float(g), best))
            continue
        limit = m.limit.copy()
        limit[f, _RESOURCES.index("capacity_gb")] = g
        point = replace(m, limit=limit)
        if shortcuts and previous is None and needs is not None and _surely_infeasible(point, needs):
            continue  # what `_solve` would find (no assignment fits), without the LP
        if previous is None and (cheapest := _unique_cheapest(point)) is not None:
            previous = cheapest  # what the search would find: skip it
        else:
            # the previous point's answer fits in more flash too: it starts the search, so the
            # objective never rises from one point to the next
            r = _solve(point, time.monotonic(), time_limit_s, 50_000, gap_tolerance, previous)
            if r.status == "infeasible":
                continue
            previous = np.array([index[r.assignment[i]] for i in m.ids], dtype=np.intp)
        settled = shortcuts and _objective(m, previous) <= trivial
        spent = float(measure[np.arange(len(m.ids)), previous].sum())
        best = max(best, (base - spent) / base if base > 0 else 0.0)
        out.append((float(g), best))
    return out


MAX_SUBSET_TIERS = 6  # _surely_infeasible looks at every subset of up to this many tiers


@dataclass(frozen=True, slots=True)
class _Needs:
    """For each set of tiers (a row of ``inside``, one per non-empty subset) and resource: what
    the objects that may only go to those tiers need of it at least (``need``), each on its least
    demanding tier of the set; ``some``: whether the set has such objects at all."""

    inside: Floats  # (S, T) 1.0 where the tier is in the set
    need: Floats  # (S, R)
    some: Bools  # (S,)


def _needs(m: _Model) -> _Needs | None:
    """``_Needs`` of a model; the limits play no part, so a curve works it out once for all its
    points. None when there are no objects or tiers, or too many tiers to look at every subset."""
    n, nt = m.allowed.shape
    if n == 0 or nt == 0 or nt > MAX_SUBSET_TIERS:
        return None
    subsets = np.arange(1, 2**nt)
    inside = (subsets[:, None] >> np.arange(nt)[None, :]) & 1 == 1  # (S, T)
    only = ~(m.allowed[None, :, :] & ~inside[:, None, :]).any(axis=2)  # (S, n): allowed nowhere else
    where = m.allowed[None, :, :] & inside[:, None, :]  # (S, n, T)
    least = np.where(where[..., None], m.load[None, :, :, :], np.inf).min(axis=2)  # (S, n, R)
    need = np.where(only[..., None], least, 0.0).sum(axis=1)  # (S, R)
    return _Needs(inside.astype(np.float64), need, only.any(axis=1))


def _surely_infeasible(m: _Model, needs: _Needs | None = None) -> bool:
    """True when no assignment can meet the limits (with the checking slack), by a clear margin:
    for some set of tiers and one resource, the objects that may only go to those tiers need more
    of it (``_needs``; ``needs`` is ``_needs(m)`` worked out before) than those tiers' limits add
    up to. Then `_solve` answers 'infeasible' whatever its LP says, since it never returns an
    assignment that breaks a limit. False when unsure."""
    if needs is None:
        needs = _needs(m)
        if needs is None:
            return False
    ceiling = m.ceiling
    finite = np.isfinite(ceiling)
    room = needs.inside @ np.where(finite, ceiling, 0.0)  # (S, R)
    limited = (needs.inside @ (~finite).astype(np.float64)) == 0  # every tier of the set limits r
    need = needs.need
    short = need > room + 1e-6 * np.maximum(np.maximum(room, need), 1.0)
    return bool((short & limited & needs.some[:, None]).any())


def _unique_cheapest(m: _Model) -> Ints | None:
    """Every object on its cheapest tier, when that is each object's only cheapest tier (by a
    clear margin) and the whole fits every limit exactly (not just within the checking slack):
    then it is the only optimal placement, and the one `_solve` returns (greedy finds it, nothing
    can be cheaper, and any other answer costs more). None otherwise."""
    n, nt = m.cost.shape
    if n == 0 or nt == 0 or not m.allowed.any(axis=1).all():
        return None
    order = np.sort(m.cost, axis=1)
    best = order[:, 0]
    if nt > 1:
        runner_up = order[:, 1]
        margin = 1e-6 * np.maximum(1.0, np.abs(best))
        if not np.all(~np.isfinite(runner_up) | (runner_up - best > margin)):
            return None
    assign: Ints = np.argmin(m.cost, axis=1).astype(np.intp)
    if not np.all(_usage(m, assign) <= m.limit):
        return None
    return assign


def _waits(m: _Model, waits: Mapping[str, Mapping[str, float]]) -> Floats:
    """(n, T): ``waits`` as an array, inf where the object may not go; every allowed tier needs one."""
    out = np.full(m.cost.shape, np.inf)
    for i, k in zip(*np.nonzero(m.allowed), strict=True):
        oid, tier = m.ids[i], m.tiers[k]
        w = f"object {oid!r}"
        mine = waits.get(oid, {})
        if tier not in mine:
            raise ValueError(f"{w}: waits has no entry for its allowed tier {tier!r}")
        out[i, k] = _num(w, f"waits[{tier!r}]", mine[tier])
    return out
