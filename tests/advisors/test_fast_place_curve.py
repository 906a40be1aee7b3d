"""flash_curve's shortcuts (points left out as surely infeasible, points after the answer settled
taken without a solve) against the reference: a solve at every point."""

from __future__ import annotations

import random
import time
from dataclasses import replace

import pytest

from advisors.flash_curve import (
    _flash_curve,
    _surely_infeasible,
    flash_curve,
)
from advisors.placement import PlacementObject, PlacementTier, _build, _solve


def _case(seed: int) -> tuple[list[PlacementObject], list[PlacementTier], dict[str, dict[str, float]]]:
    """A small database on three tiers: tight or roomy slower tiers (so that the first points
    cannot hold it), IOPS and write limits that bind or not, objects kept off flash or pinned,
    costs that make flash pay off for some objects only, and per-tier waits."""
    rng = random.Random(seed)
    n = rng.choice([1, 2, 5, 12, 30, 45])
    objects = []
    waits: dict[str, dict[str, float]] = {}
    for i in range(n):
        size = rng.choice([0.0, rng.uniform(1, 400)])
        reads, writes = rng.uniform(0, 3_000), rng.uniform(0, 800)
        costs = {
            "flash": reads * 0.2 + writes * 0.3 + rng.uniform(0, 50),
            "fc": reads * 5 + writes * 2,
            "sata": reads * 12 + writes * 6,
        }
        if rng.random() < 0.2:
            del costs["flash"]
        if rng.random() < 0.15:
            costs["fc"] = costs["sata"] + rng.uniform(0, 10)  # a tie-ish pair
        pinned = rng.choice(["fc", "sata"]) if rng.random() < 0.05 else None
        oid = f"d{seed}.o{i}"
        objects.append(
            PlacementObject(
                oid,
                size,
                reads,
                writes,
                pinned_tier=pinned,
                read_hit_ratio=rng.random() * 0.5,
                cost_by_tier=costs,
                write_gb_day=rng.uniform(0, 200),
            )
        )
        waits[oid] = {t: c * rng.uniform(0.5, 1.5) for t, c in costs.items()}
    total = sum(o.size_gb for o in objects)
    tight = rng.random() < 0.5
    tiers = [
        PlacementTier(
            "flash",
            0.0,
            rng.choice([1e9, rng.uniform(1e3, 3e4)]),
            2,
            0.2,
            0.3,
            max_write_gb_day=rng.choice([None, rng.uniform(100, 3_000)]),
        ),
        PlacementTier(
            "fc", total * (rng.uniform(0.1, 0.5) if tight else 2.0), rng.uniform(2e3, 1e5), 4, 5.0, 2.0
        ),
        PlacementTier("sata", total * (rng.uniform(0.1, 0.5) if tight else 2.0), 1e9, 6, 12.0, 6.0),
    ]
    return objects, tiers, waits


@pytest.mark.parametrize("seed", range(40))
def test_curve_equals_reference(seed: int) -> None:
    objects, tiers, waits = _case(seed)
    for use_waits, baseline in ((False, None), (True, None), (True, 1.0 + 1e4 * (seed % 3))):
        kwargs = dict(
            flash_tier="flash", points=8, time_limit_s=2.0, gap_tolerance=5e-3,
            waits=waits if use_waits else None, baseline=baseline,
        )  # fmt: skip
        fast = flash_curve(objects, tiers, **kwargs)  # type: ignore[arg-type]
        ref = _flash_curve(objects, tiers, shortcuts=False, **kwargs)  # type: ignore[arg-type]
        assert fast == ref


def test_shortcuts_are_taken() -> None:
    """The cases above include points left out as infeasible and curves that settle early."""
    infeasible = settled = 0
    for seed in range(40):
        objects, tiers, _ = _case(seed)
        curve = flash_curve(objects, tiers, flash_tier="flash", points=8)
        m = _build(objects, tiers)
        infeasible += _surely_infeasible(m)  # flash at 0 GB
        settled += len(curve) >= 3 and curve[-1][1] == curve[-2][1] == curve[-3][1]
    assert infeasible >= 5 and settled >= 5


@pytest.mark.parametrize("seed", range(60))
def test_surely_infeasible_is_sound(seed: int) -> None:
    """Whenever the check says no assignment fits, the solver finds none either; and when the
    limits are loose it never says so."""
    objects, tiers, _ = _case(seed)
    rng = random.Random(seed)
    total = sum(o.size_gb for o in objects)
    for share in (0.0, 0.2, 0.5, rng.random(), 1.0):
        shaped = [replace(tiers[0], capacity_gb=total * share), *tiers[1:]]
        m = _build(objects, shaped)
        if _surely_infeasible(m):
            assert _solve(m, time.monotonic(), 2.0, 50_000, 5e-3).status == "infeasible"
    roomy = [replace(t, capacity_gb=2 * total + 1, max_iops=1e12, max_write_gb_day=None) for t in tiers]
    assert not _surely_infeasible(_build([replace(o, pinned_tier=None) for o in objects], roomy))
