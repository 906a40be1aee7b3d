"""Placement: hand-checkable cases, infeasibility notes, and properties on random small instances
(write budgets and caller-given costs per tier included)."""

from __future__ import annotations

import itertools
import math
import random
import re
import time
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from advisors.flash_curve import flash_curve
from advisors.placement import (
    PlacementObject,
    PlacementResult,
    PlacementTier,
    _build,
    _is_feasible,
    _milp,
    _polish,
    _repair,
    greedy_heat_density,
    place,
    polish,
)

FLASH = PlacementTier(
    "flash", capacity_gb=100, max_iops=50_000, raid_factor=4, read_latency_ms=0.5, write_latency_ms=0.5
)
FC = PlacementTier(
    "fc", capacity_gb=1_000, max_iops=5_000, raid_factor=2, read_latency_ms=6, write_latency_ms=2
)
SATA = PlacementTier(
    "sata", capacity_gb=10_000, max_iops=2_000, raid_factor=6, read_latency_ms=12, write_latency_ms=4
)
TIERS = [FLASH, FC, SATA]


def obj(oid: str, size: float, reads: float, writes: float = 0.0, **kw: object) -> PlacementObject:
    return PlacementObject(oid, size, reads, writes, **kw)  # type: ignore[arg-type]


def cost(o: PlacementObject, t: PlacementTier) -> float:
    if o.cost_by_tier is not None:
        return o.cost_by_tier[t.name]
    return o.read_iops * t.read_latency_ms + o.write_iops * t.write_latency_ms


def phys(o: PlacementObject, t: PlacementTier) -> float:
    return o.read_iops * (1 - o.read_hit_ratio) + o.write_iops * t.raid_factor


def may_go(o: PlacementObject, t: PlacementTier) -> bool:
    return (
        o.pinned_tier in (None, t.name)
        and (o.allowed_tiers is None or t.name in o.allowed_tiers)
        and (o.cost_by_tier is None or t.name in o.cost_by_tier)
    )


def within_limits(on: list[PlacementObject], t: PlacementTier) -> bool:
    """The objects ``on`` fit the tier, with the solver's 1e-9 relative slack on each limit."""

    def fits(used: float, limit: float) -> bool:
        return used <= limit + 1e-9 * max(1.0, limit)

    return (
        fits(sum(o.size_gb for o in on), t.capacity_gb)
        and fits(sum(phys(o, t) for o in on), t.max_iops)
        and (t.max_write_gb_day is None or fits(sum(o.write_gb_day for o in on), t.max_write_gb_day))
    )


def written(objects: list[PlacementObject], r: PlacementResult, tier: str) -> float:
    return sum(o.write_gb_day for o in objects if r.assignment[o.id] == tier)


def assert_valid(objects: list[PlacementObject], tiers: list[PlacementTier], r: PlacementResult) -> None:
    """Every object on one allowed tier, every limit respected, objective and gap consistent."""
    if r.status == "infeasible":
        assert r.assignment == {} and r.notes and math.isinf(r.objective)
        return
    by_name = {t.name: t for t in tiers}
    assert set(r.assignment) == {o.id for o in objects}
    for o in objects:
        assert may_go(o, by_name[r.assignment[o.id]])
    for t in tiers:
        assert within_limits([o for o in objects if r.assignment[o.id] == t.name], t)
    total = sum(cost(o, by_name[r.assignment[o.id]]) for o in objects)
    assert r.objective == pytest.approx(total, rel=1e-9, abs=1e-9)
    assert r.objective >= r.lower_bound - 1e-6 * max(1.0, abs(r.objective))
    assert r.status in ("optimal", "feasible") and r.method in ("milp", "heuristic", "greedy")
    assert r.gap >= 0.0
    if r.lower_bound >= 0:  # costs may be negative; with none, the gap is a share of the objective
        assert r.gap <= 1.0 + 1e-12


# -------------------------------------------------------------------------------------------
# Hand-checkable cases


def test_a_hot_small_object_goes_to_flash() -> None:
    hot, cold = obj("hot", 10, 2_000, 100), obj("cold", 500, 10, 5)
    r = place([hot, cold], TIERS)
    assert_valid([hot, cold], TIERS, r)
    assert r.assignment == {"hot": "flash", "cold": "fc"}
    assert r.objective == pytest.approx(2_000 * 0.5 + 100 * 0.5 + 10 * 6 + 5 * 2)
    assert r.status == "optimal" and r.lower_bound == pytest.approx(r.objective, rel=1e-4)


def test_capacity_forces_the_second_hottest_off_flash() -> None:
    # flash holds 100 GB: A (60) + C (30) save 5.5 x (3000 + 500); A + B would need 120 GB
    a, b, c = obj("A", 60, 3_000), obj("B", 60, 2_000), obj("C", 30, 500)
    r = place([a, b, c], TIERS)
    assert_valid([a, b, c], TIERS, r)
    assert r.assignment == {"A": "flash", "B": "fc", "C": "flash"}


def test_the_optimiser_beats_heat_density_when_the_densest_object_blocks_a_bigger_win() -> None:
    small, big = obj("small", 10, 1_000), obj("big", 100, 5_000)  # 100 vs 50 I/O per GB
    greedy = greedy_heat_density([small, big], TIERS)
    assert greedy.assignment == {"small": "flash", "big": "fc"}
    r = place([small, big], TIERS)
    assert r.assignment == {"small": "fc", "big": "flash"}
    assert r.objective == pytest.approx(1_000 * 6 + 5_000 * 0.5)
    assert r.objective < greedy.objective


def test_iops_limit_with_raid_5_write_penalty_binds() -> None:
    flash = replace(FLASH, max_iops=4_000)  # RAID 5: every write costs 4 back-end I/Os
    writer = obj("writer", 10, 500, 1_000)  # 500 + 4 x 1,000 = 4,500 physical on flash
    reader = obj("reader", 10, 3_000)  # 3,000 physical
    r = place([writer, reader], [flash, FC, SATA])
    assert_valid([writer, reader], [flash, FC, SATA], r)
    assert r.assignment == {"writer": "fc", "reader": "flash"}
    # the same writer fits on a RAID 10 flash tier (500 + 2 x 1,000 = 2,500)
    r10 = place([writer], [replace(flash, raid_factor=2), FC, SATA])
    assert r10.assignment == {"writer": "flash"}


def test_array_read_hits_lower_the_physical_load() -> None:
    flash = replace(FLASH, max_iops=4_000)
    misses = obj("x", 10, 5_000)
    assert place([misses], [flash, FC]).assignment == {"x": "fc"}
    hits = replace(misses, read_hit_ratio=0.5)  # 2,500 physical reads
    assert place([hits], [flash, FC]).assignment == {"x": "flash"}


def test_pins_are_honoured() -> None:
    hot = obj("hot", 10, 2_000, pinned_tier="sata")
    cold = obj("cold", 50, 1, pinned_tier="flash")
    r = place([hot, cold], TIERS)
    assert_valid([hot, cold], TIERS, r)
    assert r.assignment == {"hot": "sata", "cold": "flash"}


def test_allowed_tiers_are_honoured_and_unknown_names_ignored() -> None:
    hot = obj("hot", 10, 2_000, allowed_tiers=frozenset({"fc", "sata", "nvme"}))
    r = place([hot], TIERS)
    assert r.assignment == {"hot": "fc"}


def test_empty_input_is_trivially_optimal() -> None:
    r = place([], TIERS)
    assert (r.assignment, r.objective, r.status, r.gap) == ({}, 0.0, "optimal", 0.0)


@pytest.mark.parametrize(
    ("objects", "tiers", "expected"),
    [
        (
            [obj("a", 6_000, 1), obj("b", 6_000, 1)],
            TIERS,
            "total size 11.7 TB > total capacity 10.8 TB",  # 12,000 GB > 11,100 GB, in TB from 1,024 GB
        ),
        (
            [obj("a", 80, 1, pinned_tier="flash"), obj("b", 30, 1, pinned_tier="flash")],
            TIERS,
            "tier 'flash': objects that can only go there need 110 GB > capacity 100 GB",
        ),
        ([obj("a", 1, 1, allowed_tiers=frozenset({"nvme"}))], TIERS, "object 'a' has no allowed tier"),
        (
            [obj("a", 1, 1, pinned_tier="flash", allowed_tiers=frozenset({"fc"}))],
            TIERS,
            "object 'a' has no allowed tier",
        ),
        # 40,000 reads + 10,000 writes x 2 (RAID 10 on fc, the cheaper) > 5,000 + 2,000
        (
            [obj("a", 1, 40_000, 10_000)],
            [FC, SATA],
            "physical IOPS at least 60,000 (RAID write factors included) > total max_iops 7,000 of all tiers",
        ),
        ([obj("a", 1, 1)], [], "no allowed tier"),
    ],
)
def test_infeasible_is_reported_with_a_note(
    objects: list[PlacementObject], tiers: list[PlacementTier], expected: str
) -> None:
    r = place(objects, tiers)
    assert r.status == "infeasible" and r.assignment == {}
    assert any(expected in note for note in r.notes), r.notes


def test_infeasible_by_combination_is_still_reported() -> None:
    # each tier could hold any one object, but not the three 60 GB objects on two 100 GB tiers
    tiers = [replace(FLASH, capacity_gb=100), replace(FC, capacity_gb=100)]
    objects = [obj(f"o{i}", 60, 10) for i in range(3)]
    r = place(objects, tiers)
    assert r.status == "infeasible" and r.notes


@pytest.mark.parametrize(
    ("objects", "message"),
    [
        ([obj("a", 1, 1), obj("a", 2, 2)], "duplicate id"),
        ([obj("a", -1, 1)], "size_gb"),
        ([obj("a", 1, math.nan)], "read_iops"),
        ([obj("a", 1, 1, read_hit_ratio=1.5)], "read_hit_ratio"),
        ([obj("a", 1, 1, pinned_tier="nvme")], "pinned_tier 'nvme'"),
    ],
)
def test_invalid_objects_raise_naming_the_field(objects: list[PlacementObject], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        place(objects, TIERS)


def test_invalid_tiers_raise() -> None:
    with pytest.raises(ValueError, match="duplicate tier name"):
        place([obj("a", 1, 1)], [FLASH, FLASH])
    with pytest.raises(ValueError, match="raid_factor"):
        place([obj("a", 1, 1)], [replace(FLASH, raid_factor=0)])
    with pytest.raises(ValueError, match="time_limit_s"):
        place([obj("a", 1, 1)], TIERS, time_limit_s=0)


def test_the_heuristic_is_used_above_exact_max_objects() -> None:
    tiers = [FLASH, replace(FC, max_iops=20_000), replace(SATA, max_iops=20_000)]
    objects = [obj(f"o{i}", 5 + i, 100 * (i % 7) + 1, 10 * (i % 3)) for i in range(40)]
    r = place(objects, tiers, exact_max_objects=10)
    assert_valid(objects, tiers, r)
    assert r.method in ("heuristic", "greedy")
    assert any("exact_max_objects" in n for n in r.notes)
    exact = place(objects, tiers)
    assert exact.status == "optimal"
    assert r.objective <= exact.objective * (1 + 0.01)


# -------------------------------------------------------------------------------------------
# Costs given per tier by the caller


def test_cost_by_tier_overrides_the_latency_model() -> None:
    # by latency, the hot object belongs on flash; its own costs make SATA the cheapest (its
    # 1,500 + 6 x 50 = 1,800 physical IOPS fit SATA's 2,000)
    hot = obj("hot", 10, 1_500, 50, cost_by_tier={"flash": 900.0, "fc": 500.0, "sata": 100.0})
    other = obj("other", 10, 50)
    r = place([hot, other], TIERS)
    assert_valid([hot, other], TIERS, r)
    assert r.assignment == {"hot": "sata", "other": "flash"}
    assert r.objective == pytest.approx(100.0 + 50 * 0.5)
    assert greedy_heat_density([hot, other], TIERS).assignment["hot"] == "sata"


def test_cost_by_tier_may_be_negative() -> None:
    # a bonus for staying where it is today (fc) beats flash's lower I/O time
    o = obj("o", 10, 100, cost_by_tier={"flash": 50.0, "fc": -20.0, "sata": 1_200.0})
    r = place([o], TIERS)
    assert (r.assignment, r.objective, r.status) == ({"o": "fc"}, -20.0, "optimal")


def test_a_tier_missing_from_cost_by_tier_is_not_allowed() -> None:
    hot = obj("hot", 10, 2_000, cost_by_tier={"fc": 12_000.0, "sata": 24_000.0, "nvme": 0.0})
    r = place([hot], TIERS)
    assert r.assignment == {"hot": "fc"}  # not flash (missing), not nvme (not a tier)
    pinned = replace(hot, pinned_tier="flash")
    r = place([pinned], TIERS)
    assert r.status == "infeasible" and "object 'hot' has no allowed tier" in r.notes[0]


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, "12", True])
def test_a_non_finite_cost_raises_naming_object_and_tier(bad: object) -> None:
    o = obj("a", 1, 1, cost_by_tier={"flash": 1.0, "fc": bad})
    with pytest.raises(ValueError, match=r"object 'a': cost_by_tier\['fc'\] must be a finite number"):
        place([o], TIERS)
    with pytest.raises(ValueError, match=r"object 'a': cost_by_tier\['fc'\]"):
        greedy_heat_density([o], TIERS)


# -------------------------------------------------------------------------------------------
# Write budgets (flash endurance)


def write_budget_pair() -> tuple[list[PlacementObject], list[PlacementTier]]:
    """A and B each fit flash's capacity, IOPS and write budget, but not both its write budget.

    A is hotter per GB (greedy takes it first) but saves 5.5 ms x 2,000 = 11,000 for 80 GB/day
    written (137.5 per GB/day); B saves 5.5 x 3,000 = 16,500 for 60 GB/day (275 per GB/day).
    """
    a = obj("A", 10, 2_000, write_gb_day=80.0)
    b = obj("B", 40, 3_000, write_gb_day=60.0)
    tiers = [replace(FLASH, max_write_gb_day=100.0), replace(FC, max_iops=10_000), SATA]
    return [a, b], tiers


def test_the_write_budget_binds() -> None:
    objects, tiers = write_budget_pair()
    unlimited = [replace(tiers[0], max_write_gb_day=None), *tiers[1:]]
    assert place(objects, unlimited).assignment == {"A": "flash", "B": "flash"}
    r = place(objects, tiers)
    assert_valid(objects, tiers, r)
    assert r.assignment == {"A": "fc", "B": "flash"}
    assert r.objective == pytest.approx(2_000 * 6 + 3_000 * 0.5)
    assert r.status == "optimal"


def test_greedy_respects_the_write_budget() -> None:
    objects, tiers = write_budget_pair()
    greedy = greedy_heat_density(objects, tiers)
    assert_valid(objects, tiers, greedy)
    assert greedy.assignment == {"A": "flash", "B": "fc"}  # hottest per GB first; B no longer fits
    assert place(objects, tiers).objective < greedy.objective


def test_the_heuristic_respects_the_write_budget() -> None:
    objects, tiers = random_fleet(120, seed=4)
    objects = [replace(o, write_gb_day=o.write_iops * 32 * 86_400 / 2**20) for o in objects]
    free = place(objects, tiers, time_limit_s=20)
    budget = 0.6 * written(objects, free, "flash")  # 60 % of what flash takes without a budget
    tiers = [replace(tiers[0], max_write_gb_day=budget), *tiers[1:]]
    r = place(objects, tiers, time_limit_s=20, exact_max_objects=10)
    assert_valid(objects, tiers, r)
    assert r.method in ("heuristic", "greedy") and any("exact_max_objects" in n for n in r.notes)
    assert written(objects, r, "flash") <= budget * (1 + 1e-9)
    exact = place(objects, tiers, time_limit_s=20)
    assert exact.status == "optimal" and r.objective <= exact.objective * 1.01
    assert exact.objective > free.objective  # the budget costs something


def test_the_moves_and_checks_count_the_write_budget() -> None:
    # below place(): the feasibility check, the polishing moves and the repair of an overfull tier
    objects, tiers = write_budget_pair()
    m = _build(objects, tiers)
    both = np.array([0, 0], dtype=np.intp)  # both on flash: 140 GB/day > 100
    assert not _is_feasible(m, both)
    a_off = np.array([1, 0], dtype=np.intp)
    assert _is_feasible(m, a_off)
    polished = a_off.copy()
    _polish(m, polished, time.monotonic() + 5)  # A would save 11,000 on flash, but may not go
    assert polished.tolist() == [1, 0]
    repaired = _repair(m, both, time.monotonic() + 5)
    assert repaired is not None and _is_feasible(m, repaired)
    assert repaired.tolist() == [1, 0]  # moving A off costs least per unit of overflow removed
    # a neighbourhood sub-MILP re-deciding A alone, B kept on flash: B's writes leave A no room
    code, sub, _ = _milp(m, both, np.array([0], dtype=np.intp), 5.0, 1e-4)
    assert code == 0 and sub is not None and sub.tolist() == [1, 0]


@pytest.mark.parametrize(
    ("objects", "tiers", "expected"),
    [
        (
            [
                obj("a", 1, 1, pinned_tier="flash", write_gb_day=500),
                obj("b", 1, 1, write_gb_day=400),
                obj("c", 1, 1, allowed_tiers=frozenset({"flash"}), write_gb_day=400),
            ],
            [replace(FLASH, max_write_gb_day=400), FC],
            "tier 'flash': objects that can only go there write 900 GB a day > max_write_gb_day 400 GB",
        ),
        (
            [obj(f"o{i}", 1, 1, write_gb_day=300) for i in range(3)],
            [replace(FLASH, max_write_gb_day=400), replace(FC, max_write_gb_day=400)],
            "objects that can only go to write-limited tiers write 900 GB a day > their total "
            "max_write_gb_day 800 GB",
        ),
    ],
)
def test_infeasible_by_write_budget_is_named(
    objects: list[PlacementObject], tiers: list[PlacementTier], expected: str
) -> None:
    r = place(objects, tiers)
    assert r.status == "infeasible" and r.assignment == {}
    assert expected in r.notes, r.notes


def test_an_unlimited_tier_takes_what_the_budgets_cannot() -> None:
    # the same writes as above fit once one tier has no write budget: no total-level note
    objects = [obj(f"o{i}", 1, 1, write_gb_day=300) for i in range(3)]
    tiers = [replace(FLASH, max_write_gb_day=400), FC]
    r = place(objects, tiers)
    assert_valid(objects, tiers, r)
    assert written(objects, r, "flash") == 300


@pytest.mark.parametrize(
    ("objects", "tiers", "message"),
    [
        ([obj("a", 1, 1, write_gb_day=-1)], TIERS, "object 'a': write_gb_day must be a number >= 0"),
        ([obj("a", 1, 1, write_gb_day=math.inf)], TIERS, "write_gb_day"),
        ([obj("a", 1, 1)], [replace(FLASH, max_write_gb_day=-5)], "tier 'flash': max_write_gb_day"),
        ([obj("a", 1, 1)], [replace(FLASH, max_write_gb_day=math.nan)], "max_write_gb_day"),
    ],
)
def test_invalid_write_figures_raise(
    objects: list[PlacementObject], tiers: list[PlacementTier], message: str
) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        place(objects, tiers)


def random_fleet(n: int, seed: int) -> tuple[list[PlacementObject], list[PlacementTier]]:
    """A capacity-tight fleet: flash holds ~8 % of the data, flash IOPS bind."""
    rng = random.Random(seed)
    objects = []
    for i in range(n):
        size = rng.lognormvariate(2.0, 1.0)
        io = size * min(rng.paretovariate(1.4), 40.0)
        share = rng.uniform(0.5, 0.95)
        objects.append(obj(f"o{i}", size, io * share, io * (1 - share), read_hit_ratio=rng.uniform(0, 0.4)))
    total_gb = sum(o.size_gb for o in objects)
    total_io = sum(o.read_iops + o.write_iops for o in objects)
    tiers = [
        replace(FLASH, capacity_gb=0.08 * total_gb, max_iops=1.2 * total_io),
        replace(FC, capacity_gb=0.4 * total_gb, max_iops=2.0 * total_io),
        replace(SATA, capacity_gb=total_gb, max_iops=3.0 * total_io),
    ]
    return objects, tiers


def test_the_neighbourhood_search_is_close_to_the_exact_answer() -> None:
    objects, tiers = random_fleet(300, seed=11)
    heuristic = place(objects, tiers, time_limit_s=20, exact_max_objects=0)
    exact = place(objects, tiers, time_limit_s=20)
    assert_valid(objects, tiers, heuristic)
    assert_valid(objects, tiers, exact)
    assert heuristic.method in ("heuristic", "greedy")
    assert heuristic.objective <= exact.objective * 1.01
    assert heuristic.objective <= greedy_heat_density(objects, tiers).objective


def test_a_tiny_time_limit_still_gives_a_valid_answer_no_worse_than_greedy() -> None:
    objects, tiers = random_fleet(3_000, seed=5)
    r = place(objects, tiers, time_limit_s=0.01)
    assert_valid(objects, tiers, r)
    greedy = greedy_heat_density(objects, tiers)
    assert greedy.status == "feasible"
    assert r.status != "infeasible" and r.objective <= greedy.objective


def test_greedy_reports_when_it_runs_out_of_room() -> None:
    tiers = [replace(FLASH, capacity_gb=100), replace(FC, capacity_gb=100)]
    r = greedy_heat_density([obj(f"o{i}", 60, 10) for i in range(3)], tiers)
    assert r.status == "infeasible" and r.method == "greedy" and "no tier with room" in r.notes[0]


# -------------------------------------------------------------------------------------------
# Properties on random small instances


@st.composite
def instances(
    draw: st.DrawFn, max_objects: int = 8, negative_costs: bool = True
) -> tuple[list[PlacementObject], list[PlacementTier]]:
    """Up to three tiers, some with a write budget; objects sometimes pinned, restricted, or with
    their own cost per tier (a subset of the tiers plus maybe an unknown name; maybe negative)."""
    names = ["flash", "fc", "sata"][: draw(st.integers(1, 3))]
    tiers = [
        PlacementTier(
            name,
            capacity_gb=draw(st.floats(0, 300, allow_nan=False)),
            max_iops=draw(st.floats(0, 20_000, allow_nan=False)),
            raid_factor=draw(st.sampled_from([1, 2, 4, 6])),
            read_latency_ms=draw(st.floats(0, 15, allow_nan=False)),
            write_latency_ms=draw(st.floats(0, 10, allow_nan=False)),
            max_write_gb_day=draw(st.none() | st.floats(0, 300, allow_nan=False)),
        )
        for name in names
    ]
    low = -5_000.0 if negative_costs else 0.0
    objects = []
    for i in range(draw(st.integers(0, max_objects))):
        pinned = draw(st.none() | st.sampled_from(names)) if draw(st.integers(0, 5)) == 0 else None
        allowed = (
            frozenset(draw(st.lists(st.sampled_from(names), min_size=1, unique=True)))
            if draw(st.integers(0, 5)) == 0
            else None
        )
        costs = (
            draw(
                st.dictionaries(
                    st.sampled_from([*names, "nvme"]), st.floats(low, 50_000, allow_nan=False), min_size=1
                )
            )
            if draw(st.integers(0, 3)) == 0
            else None
        )
        objects.append(
            PlacementObject(
                f"o{i}",
                size_gb=draw(st.floats(0, 120, allow_nan=False)),
                read_iops=draw(st.floats(0, 5_000, allow_nan=False)),
                write_iops=draw(st.floats(0, 2_000, allow_nan=False)),
                pinned_tier=pinned,
                allowed_tiers=allowed,
                read_hit_ratio=draw(st.floats(0, 1)),
                cost_by_tier=costs,
                write_gb_day=draw(st.sampled_from([0.0]) | st.floats(0, 200, allow_nan=False)),
            )
        )
    return objects, tiers


def brute_force(objects: list[PlacementObject], tiers: list[PlacementTier]) -> float | None:
    """The best objective over every assignment, with the solver's 1e-9 relative slack on limits."""
    best: float | None = None
    for combo in itertools.product(tiers, repeat=len(objects)):
        ok = all(may_go(o, t) for o, t in zip(objects, combo, strict=True))
        ok = ok and all(
            within_limits([o for o, u in zip(objects, combo, strict=True) if u is t], t) for t in tiers
        )
        if ok:
            total = sum(cost(o, t) for o, t in zip(objects, combo, strict=True))
            best = total if best is None else min(best, total)
    return best


SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(instances())
def test_feasible_bounded_and_never_worse_than_greedy(
    inst: tuple[list[PlacementObject], list[PlacementTier]],
) -> None:
    objects, tiers = inst
    r = place(objects, tiers, time_limit_s=5)
    assert_valid(objects, tiers, r)
    greedy = greedy_heat_density(objects, tiers)
    assert_valid(objects, tiers, greedy)
    if greedy.status != "infeasible":
        assert r.status != "infeasible"
        assert r.objective <= greedy.objective + 1e-9 * max(1.0, abs(greedy.objective))


@SETTINGS
@given(instances(max_objects=5))
def test_matches_brute_force_on_tiny_instances(
    inst: tuple[list[PlacementObject], list[PlacementTier]],
) -> None:
    objects, tiers = inst
    best = brute_force(objects, tiers)
    r = place(objects, tiers, time_limit_s=5)
    assert_valid(objects, tiers, r)
    if best is None:
        assert r.status == "infeasible"
        return
    assert r.status == "optimal"
    assert r.objective <= best + 1e-4 * abs(best) + 1e-6
    assert r.lower_bound <= best + 1e-6 * max(1.0, abs(best))


@SETTINGS
@given(instances(max_objects=25))
def test_the_heuristic_alone_respects_every_limit(
    inst: tuple[list[PlacementObject], list[PlacementTier]],
) -> None:
    objects, tiers = inst
    r = place(objects, tiers, time_limit_s=5, exact_max_objects=0)
    assert_valid(objects, tiers, r)
    assert r.method in ("heuristic", "greedy") or r.status == "infeasible" or not objects


# -------------------------------------------------------------------------------------------
# Flash curve


def test_flash_curve_rises_and_ends_with_everything_that_fits_on_flash() -> None:
    flash = replace(FLASH, capacity_gb=1, max_iops=1e9)
    fc = replace(FC, capacity_gb=1_000, max_iops=1e9)
    objects = [obj(f"o{i}", 10 * (i + 1), 1_000 / (i + 1), 50) for i in range(8)]
    curve = flash_curve(objects, [flash, fc], flash_tier="flash", points=9)
    gbs = [g for g, _ in curve]
    shares = [s for _, s in curve]
    assert gbs[0] == 0 and gbs[-1] == pytest.approx(sum(o.size_gb for o in objects))
    assert gbs == sorted(gbs) and shares == sorted(shares)
    assert shares[0] == pytest.approx(0.0)  # nothing on flash: everything on the slowest tier
    slowest = sum(cost(o, fc) for o in objects)
    all_flash = sum(cost(o, flash) for o in objects)
    assert shares[-1] == pytest.approx((slowest - all_flash) / slowest, rel=1e-3)


def test_flash_curve_end_respects_flash_iops() -> None:
    flash = replace(FLASH, capacity_gb=1, max_iops=1_000, raid_factor=1)
    objects = [obj("a", 10, 800), obj("b", 10, 700)]  # only one of them fits flash's IOPS
    curve = flash_curve(objects, [flash, FC], flash_tier="flash", points=3)
    slowest = sum(cost(o, FC) for o in objects)
    best_one = max(cost(o, FC) - cost(o, flash) for o in objects)
    assert curve[-1][1] == pytest.approx(best_one / slowest)


def test_flash_curve_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="flash_tier"):
        flash_curve([obj("a", 1, 1)], TIERS, flash_tier="nvme")
    with pytest.raises(ValueError, match="points"):
        flash_curve([obj("a", 1, 1)], TIERS, flash_tier="flash", points=1)


def test_flash_curve_end_respects_the_write_budget() -> None:
    flash = replace(FLASH, capacity_gb=1, max_iops=1e9, max_write_gb_day=400)
    objects = [obj("a", 10, 800, write_gb_day=300), obj("b", 10, 700, write_gb_day=300)]
    curve = flash_curve(objects, [flash, FC], flash_tier="flash", points=3)
    slowest = sum(cost(o, FC) for o in objects)
    best_one = max(cost(o, FC) - cost(o, flash) for o in objects)
    assert curve[-1] == (20.0, pytest.approx(best_one / slowest))


def waits_case() -> tuple[list[PlacementObject], list[PlacementTier], dict[str, dict[str, float]]]:
    """The placement minimises cost (I/O wait plus a price), the curve reports I/O wait.

    o1: flash saves 900 of cost and of wait. o2: flash is 50 cheaper by cost (a discount) but
    100 ms/s slower by wait. With 10 GB of flash only o1 goes there (the bigger cost saving), with
    20 GB both do, which costs less but waits more (100 + 400 = 500 against 100 + 300 = 400).
    """
    flash = replace(FLASH, capacity_gb=1, max_iops=1e9, raid_factor=1)
    fc = replace(FC, capacity_gb=1_000, max_iops=1e9)
    o1 = obj("o1", 10, 1, cost_by_tier={"flash": 100.0, "fc": 1_000.0})
    o2 = obj("o2", 10, 1, cost_by_tier={"flash": -50.0, "fc": 0.0})
    waits = {"o1": {"flash": 100.0, "fc": 1_000.0}, "o2": {"flash": 400.0, "fc": 300.0, "nvme": 1.0}}
    return [o1, o2], [flash, fc], waits


def test_flash_curve_reports_waits_against_the_baseline_and_never_drops() -> None:
    objects, tiers, waits = waits_case()
    # today: both on fc, 1,300 ms/s; the 20 GB point waits 500 (a share of 800/1,300), but the
    # 10 GB answer (400) still fits there, so the curve keeps 900/1,300
    curve = flash_curve(objects, tiers, flash_tier="flash", points=3, waits=waits, baseline=1_300)
    assert curve == [(0.0, 0.0), (10.0, pytest.approx(900 / 1_300)), (20.0, pytest.approx(900 / 1_300))]


def test_flash_curve_keeps_negative_shares_against_today() -> None:
    objects, tiers, waits = waits_case()
    # today: o1 on flash, o2 on fc, 400 ms/s; no flash at all waits 1,300
    curve = flash_curve(objects, tiers, flash_tier="flash", points=3, waits=waits, baseline=400)
    assert curve == [(0.0, pytest.approx(-900 / 400)), (10.0, 0.0), (20.0, 0.0)]


def test_flash_curve_waits_without_baseline_start_from_the_slowest_tiers() -> None:
    objects, tiers, waits = waits_case()
    curve = flash_curve(objects, tiers, flash_tier="flash", points=3, waits=waits)
    slowest = 1_000 + 400  # by wait: o1 on fc, o2 on flash
    expected = [(1_400 - 1_300) / slowest, (1_400 - 400) / slowest, (1_400 - 400) / slowest]
    assert [s for _, s in curve] == pytest.approx(expected)
    # without waits the share is of the objective, as before (slowest by cost: 1,000 + 0)
    by_cost = flash_curve(objects, tiers, flash_tier="flash", points=3)
    assert [s for _, s in by_cost] == pytest.approx([0.0, 0.9, 0.95])


@pytest.mark.parametrize(
    ("waits", "baseline", "message"),
    [
        ({"o1": {"flash": 1.0, "fc": 2.0}}, None, "object 'o2': waits has no entry for its allowed tier"),
        ({"o1": {"flash": 1.0, "fc": math.inf}, "o2": {"flash": 1.0, "fc": 1.0}}, None, "waits['fc']"),
        ({"o1": {"flash": 1.0, "fc": 2.0}, "o2": {"flash": 1.0, "fc": 1.0}}, -1.0, "baseline"),
    ],
)
def test_flash_curve_rejects_bad_waits(
    waits: dict[str, dict[str, float]], baseline: float | None, message: str
) -> None:
    objects, tiers, _ = waits_case()
    with pytest.raises(ValueError, match=re.escape(message)):
        flash_curve(objects, tiers, flash_tier="flash", waits=waits, baseline=baseline)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances(max_objects=6, negative_costs=False))
def test_flash_curve_is_non_decreasing(inst: tuple[list[PlacementObject], list[PlacementTier]]) -> None:
    objects, tiers = inst
    curve = flash_curve(objects, tiers, flash_tier=tiers[0].name, points=4, time_limit_s=2)
    assert [g for g, _ in curve] == sorted(g for g, _ in curve)
    assert [s for _, s in curve] == sorted(s for _, s in curve)
    assert all(-1e-9 <= s <= 1 + 1e-9 for _, s in curve)


def test_polish_moves_single_objects_into_free_room_only() -> None:
    """An answer found under other costs: each object moves to a cheaper tier that has room left
    in every limit, the biggest gain first; nothing moves into a full tier."""
    hot = obj("hot", 60, 2000)  # flash 1,000 vs fc 12,000 ms/s
    warm = obj("warm", 60, 1000)  # flash 500 vs fc 6,000: the smaller gain
    cold = obj("cold", 500, 1)
    given = {"hot": "fc", "warm": "fc", "cold": "fc"}
    out = polish([hot, warm, cold], TIERS, given)
    assert out == {"hot": "flash", "warm": "fc", "cold": "fc"}  # flash holds 100 GB: one of the two
    assert within_limits([hot], FLASH) and not within_limits([hot, warm], FLASH)
    assert polish([hot, warm, cold], TIERS, out) == out  # nothing left to gain
    with pytest.raises(ValueError, match="'cold'"):
        polish([hot, warm, cold], TIERS, {"hot": "fc", "warm": "fc"})
    with pytest.raises(ValueError, match="may not use"):
        polish([obj("x", 1, 1, allowed_tiers=frozenset({"fc"}))], TIERS, {"x": "sata"})
