"""Placement: hand-checkable cases, infeasibility notes, and properties on random small instances."""

from __future__ import annotations

import itertools
import math
import random
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from advisors.placement import (
    PlacementObject,
    PlacementResult,
    PlacementTier,
    flash_curve,
    greedy_heat_density,
    place,
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
    return o.read_iops * t.read_latency_ms + o.write_iops * t.write_latency_ms


def phys(o: PlacementObject, t: PlacementTier) -> float:
    return o.read_iops * (1 - o.read_hit_ratio) + o.write_iops * t.raid_factor


def assert_valid(objects: list[PlacementObject], tiers: list[PlacementTier], r: PlacementResult) -> None:
    """Every object on one allowed tier, every limit respected, objective and gap consistent."""
    if r.status == "infeasible":
        assert r.assignment == {} and r.notes and math.isinf(r.objective)
        return
    by_name = {t.name: t for t in tiers}
    assert set(r.assignment) == {o.id for o in objects}
    for o in objects:
        tier = r.assignment[o.id]
        if o.pinned_tier is not None:
            assert tier == o.pinned_tier
        if o.allowed_tiers is not None:
            assert tier in o.allowed_tiers
    for t in tiers:
        on = [o for o in objects if r.assignment[o.id] == t.name]
        assert sum(o.size_gb for o in on) <= t.capacity_gb * (1 + 1e-9) + 1e-9
        assert sum(phys(o, t) for o in on) <= t.max_iops * (1 + 1e-9) + 1e-9
    total = sum(cost(o, by_name[r.assignment[o.id]]) for o in objects)
    assert r.objective == pytest.approx(total, rel=1e-9, abs=1e-9)
    assert r.objective >= r.lower_bound - 1e-6
    assert r.status in ("optimal", "feasible") and r.method in ("milp", "heuristic", "greedy")
    assert 0.0 <= r.gap <= 1.0 + 1e-12


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
            "total size 12,000.0 GB > total capacity 11,100.0 GB",
        ),
        ([obj("a", 80, 1, pinned_tier="flash"), obj("b", 30, 1, pinned_tier="flash")], TIERS, "tier 'flash'"),
        ([obj("a", 1, 1, allowed_tiers=frozenset({"nvme"}))], TIERS, "object 'a' has no allowed tier"),
        (
            [obj("a", 1, 1, pinned_tier="flash", allowed_tiers=frozenset({"fc"}))],
            TIERS,
            "object 'a' has no allowed tier",
        ),
        ([obj("a", 1, 40_000, 10_000)], [FC, SATA], "physical IOPS"),
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
def instances(draw: st.DrawFn, max_objects: int = 8) -> tuple[list[PlacementObject], list[PlacementTier]]:
    names = ["flash", "fc", "sata"][: draw(st.integers(1, 3))]
    tiers = [
        PlacementTier(
            name,
            capacity_gb=draw(st.floats(0, 300, allow_nan=False)),
            max_iops=draw(st.floats(0, 20_000, allow_nan=False)),
            raid_factor=draw(st.sampled_from([1, 2, 4, 6])),
            read_latency_ms=draw(st.floats(0, 15, allow_nan=False)),
            write_latency_ms=draw(st.floats(0, 10, allow_nan=False)),
        )
        for name in names
    ]
    objects = []
    for i in range(draw(st.integers(0, max_objects))):
        pinned = draw(st.none() | st.sampled_from(names)) if draw(st.integers(0, 5)) == 0 else None
        allowed = (
            frozenset(draw(st.lists(st.sampled_from(names), min_size=1, unique=True)))
            if draw(st.integers(0, 5)) == 0
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
            )
        )
    return objects, tiers


def brute_force(objects: list[PlacementObject], tiers: list[PlacementTier]) -> float | None:
    """The best objective over every assignment, with the solver's 1e-9 relative slack on limits."""
    best: float | None = None
    for combo in itertools.product(tiers, repeat=len(objects)):
        ok = all(
            (o.pinned_tier in (None, t.name)) and (o.allowed_tiers is None or t.name in o.allowed_tiers)
            for o, t in zip(objects, combo, strict=True)
        )
        for t in tiers:
            on = [o for o, u in zip(objects, combo, strict=True) if u is t]
            ok = ok and sum(o.size_gb for o in on) <= t.capacity_gb * (1 + 1e-9) + 1e-9
            ok = ok and sum(phys(o, t) for o in on) <= t.max_iops * (1 + 1e-9) + 1e-9
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
        assert r.objective <= greedy.objective + 1e-9 * max(1.0, greedy.objective)


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
    assert r.objective <= best * (1 + 1e-4) + 1e-6
    assert r.lower_bound <= best + 1e-6 * max(1.0, best)


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


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances(max_objects=6))
def test_flash_curve_is_non_decreasing(inst: tuple[list[PlacementObject], list[PlacementTier]]) -> None:
    objects, tiers = inst
    curve = flash_curve(objects, tiers, flash_tier=tiers[0].name, points=4, time_limit_s=2)
    assert [g for g, _ in curve] == sorted(g for g, _ in curve)
    assert [s for _, s in curve] == sorted(s for _, s in curve)
    assert all(-1e-9 <= s <= 1 + 1e-9 for _, s in curve)
