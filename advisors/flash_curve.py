"""The flash curve: how much I/O wait each size of flash would save, one optimal placement per
size (advisors.placement's model and search, with the flash tier's capacity varied)."""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Mapping
from dataclasses import replace

import numpy as np

from advisors.placement import (
    _RESOURCES,
    Floats,
    Ints,
    PlacementObject,
    PlacementTier,
    _build,
    _check_budget,
    _Model,
    _num,
    _solve,
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
    for g in grid:
        limit = m.limit.copy()
        limit[f, _RESOURCES.index("capacity_gb")] = g
        point = replace(m, limit=limit)
        if previous is None and (cheapest := _unique_cheapest(point)) is not None:
            previous = cheapest  # what the search would find: skip it
        else:
            # the previous point's answer fits in more flash too: it starts the search, so the
            # objective never rises from one point to the next
            r = _solve(point, time.monotonic(), time_limit_s, 50_000, gap_tolerance, previous)
            if r.status == "infeasible":
                continue
            previous = np.array([index[r.assignment[i]] for i in m.ids], dtype=np.intp)
        spent = float(measure[np.arange(len(m.ids)), previous].sum())
        best = max(best, (base - spent) / base if base > 0 else 0.0)
        out.append((float(g), best))
    return out


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
