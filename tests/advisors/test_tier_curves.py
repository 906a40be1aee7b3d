"""Tier service times measured from the objects on each tier (advisors/tier_curves.py), and how the
advice weighs them against the policy's figures (`benefit.learn_tiers`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from advisors.advise import advise
from advisors.benefit import physics
from advisors.features import GOVERNOR_READ, ObjectInfo, ObjectWindow, Usage, compute_features
from advisors.maintenance import prepare_window, sum_usage
from advisors.quantities import latency
from advisors.tier_curves import MIN_OBJECTS, blend, tier_curves
from policies.model import Policy
from tests.fixture_policy import reference_policy

POLICY = reference_policy()  # flash 1.0 ms reads, fc 6.0 ms, sata 14 ms; 20,000 / 8,640 / 1,280 IOPS
START = datetime(2026, 11, 1, tzinfo=UTC)
KB = 1024


def hour(reads: float, read_kb: float, read_ms: float, *, writes: float = 0.0, write_ms: float = 2.0,
         queued_read_ms: float | None = None) -> Usage:  # fmt: skip
    """One hour of an object at these rates per second."""
    r, w = int(reads * 3600), int(writes * 3600)
    extra = {} if queued_read_ms is None else {GOVERNOR_READ: int(r * queued_read_ms)}
    counters: dict[str, int | None] = {
        "reads": r,
        "bytes_read": int(r * read_kb * KB),
        "read_time_ms": int(r * read_ms),
        "writes": w,
        "bytes_written": w * 8 * KB,
        "write_time_ms": int(w * write_ms),
    }
    return Usage(3600.0, counters, extra)


def unit(name: str, tier: str, hours: Sequence[Usage], size_gb: float = 50) -> ObjectWindow:
    info = ObjectInfo(key=f"Shop/filegroup/{name}", engine="sqlserver", server="SQL01", database="Shop",
                      kind="filegroup", name=name, size_bytes=int(size_gb * 2**30), current_tier=tier,
                      filegroup=name)  # fmt: skip
    by_hour = [(START + timedelta(hours=i), u) for i, u in enumerate(hours)]
    return ObjectWindow(info, sum_usage(list(hours)), by_hour)


def curves(units: Sequence[ObjectWindow], policy: Policy = POLICY):  # type: ignore[no-untyped-def]
    prepared = [prepare_window(u, policy) for u in units]
    feats = [compute_features(u, db_heat=None) for u in prepared]
    return tier_curves(prepared, feats, policy, physics(policy))


def test_flash_slower_than_the_policy_is_measured_with_its_evidence() -> None:
    units = [unit(f"FG_{i}", "flash", [hour(200 + 50 * i, 8, 4.0) for _ in range(24)]) for i in range(4)]
    read = curves(units)["flash"].read
    assert read is not None
    assert (read.object_hours, read.objects) == (96, 4)
    # 4.0 ms at the tier's load; the policy's terms (light load) take the model's 1 / (1 - U) out
    assert read.ms_at_load == pytest.approx(4.0, abs=0.01)
    load = (200 + 250 + 300 + 350) / 20_000
    assert read.load == pytest.approx(load, rel=0.01)
    assert read.ms == pytest.approx(4.0 * (1 - load), rel=0.01)
    assert read.low is not None and read.high is not None and read.low <= read.ms <= read.high
    figures = blend(curves(units), POLICY)
    flash = figures.read["flash"]
    assert flash.weight > 0.95 and flash.used_ms == pytest.approx(read.ms, rel=0.02)
    assert figures.read["fc"].measured is None and figures.read["fc"].used_ms == 6.0  # empty: the policy's
    text = figures.text(["flash", "fc"])
    assert "flash reads measured 4.0 ms at 5.5 % load (96 object-hours)" in text
    assert "the policy says 1.0 ms" in text and "used the measured figure" in text
    assert "the policy's for fc (nothing measured there yet)" in text


def test_latency_against_size_is_robust_to_a_few_wild_hours() -> None:
    # 2 ms + 0.05 ms per KB, sizes 8 to 64 KB; one hour in twelve at 80 ms (a stall elsewhere)
    def h(i: int, j: int) -> Usage:
        size = 8 + 8 * ((i + j) % 8)
        return hour(300, size, 80.0 if j % 12 == 5 else 2 + 0.05 * size)

    units = [unit(f"FG_{i}", "fc", [h(i, j) for j in range(48)]) for i in range(5)]
    read = curves(units)["fc"].read
    assert read is not None and read.ms_per_kb is not None
    assert read.ms_per_kb == pytest.approx(0.05, abs=0.01)
    assert read.ms_at_load == pytest.approx(2.4, abs=0.15)  # 8 KB, not dragged up by the 80 ms hours
    assert read.r2 is not None


def test_the_load_is_fitted_where_it_varies() -> None:
    # fc service 5 ms at light load, queued 1 / (1 - U): busy hours at ~58 % of 8,640, quiet at ~12 %
    def h(i: int, j: int) -> Usage:
        reads = 1000 if j % 2 else 200
        u = (5 * (reads + 0.0)) / 8640
        return hour(reads, 8, 5.0 / (1 - u))

    units = [unit(f"FG_{i}", "fc", [h(i, j) for j in range(48)]) for i in range(5)]
    read = curves(units)["fc"].read
    assert read is not None
    assert read.extrapolation == 0.0  # measured at both loads: no queueing law assumed
    assert read.ms == pytest.approx(5.0, rel=0.1)


def test_governed_and_cache_friendly_units_are_left_out_and_small_queues_taken_out() -> None:
    plain = [
        unit(f"FG_{i}", "fc", [hour(300, 8, 9.2, queued_read_ms=0.2) for _ in range(24)]) for i in range(3)
    ]
    governed = unit("FG_CAPPED", "fc", [hour(300, 8, 30.0, queued_read_ms=28.8) for _ in range(24)])
    cached = unit("FG_LOOKUP", "fc", [hour(300, 8, 1.5) for _ in range(24)])  # ~78 % array-cache hits
    c = curves([*plain, governed, cached])["fc"]
    assert (c.governed, c.cache_friendly) == (1, 1)
    assert c.read is not None and c.read.objects == 3
    assert c.read.ms_at_load == pytest.approx(9.0, abs=0.01)  # 9.2 less the governor's 0.2


def test_maintenance_hours_are_not_measured() -> None:
    # the burst rule (policy.burst_detection) takes hours of very large reads out, as the advice does
    backup = hour(2000, 1024, 30.0)
    units = [
        unit(f"FG_{i}", "fc", [backup if j in (2, 3) else hour(300, 8, 7.0) for j in range(24)])
        for i in range(3)
    ]
    read = curves(units)["fc"].read
    assert read is not None and read.object_hours == 3 * 22
    assert read.ms_at_load == pytest.approx(7.0, abs=0.01)


def test_too_few_objects_or_hours_earn_less_weight_not_a_switch() -> None:
    few = [unit(f"FG_{i}", "flash", [hour(300, 8, 4.0) for _ in range(24)]) for i in range(MIN_OBJECTS - 1)]
    f = blend(curves(few), POLICY).read["flash"]
    assert f.measured is not None and f.weight == 0.0 and f.used_ms == 1.0
    assert "fewer than 3" in f.text()
    short = [unit(f"FG_{i}", "flash", [hour(300, 8, 4.0) for _ in range(8)]) for i in range(3)]  # 24 of 48
    g = blend(curves(short), POLICY).read["flash"]
    assert 0.4 < g.weight < 0.6
    assert 1.0 < g.used_ms < g.measured.ms  # type: ignore[union-attr]
    assert "24 of the 48 object-hours wanted" in g.text()


def test_learning_off_keeps_the_policy_and_says_nothing() -> None:
    off = POLICY.model_copy(update={"benefit": POLICY.benefit.model_copy(update={"learn_tiers": False})})
    units = [unit(f"FG_{i}", "flash", [hour(300, 8, 4.0) for _ in range(24)]) for i in range(3)]
    figures = blend(curves(units, off), off)
    assert figures.read["flash"].measured is not None  # still measured, for `tierwise tiers`
    assert figures.used()["flash"] == (1.0, 1.5) and figures.text(["flash"]) == ""


def test_the_advice_prices_flash_as_measured() -> None:
    """An fc unit that the policy's flash would promote stays when flash measures 4x slower."""
    flash = [unit(f"FG_F{i}", "flash", [hour(250, 8, 4.0, writes=20, write_ms=1.5) for _ in range(48)])
             for i in range(3)]  # fmt: skip
    candidate = unit("FG_CANDIDATE", "fc", [hour(400, 8, 4.8) for _ in range(48)], size_gb=100)
    learned = advise([*flash, candidate], POLICY, time_limit_s=2, curve_points=0)
    off = POLICY.model_copy(update={"benefit": POLICY.benefit.model_copy(update={"learn_tiers": False})})
    policy_only = advise([*flash, candidate], off, time_limit_s=2, curve_points=0)

    def of(report):  # type: ignore[no-untyped-def]
        return next(a for a in report.objects if a.info.name == "FG_CANDIDATE")

    assert of(policy_only).recommended_tier == "flash"
    assert of(learned).recommended_tier == "fc"
    assert of(learned).decision.stage == "minimum_benefit"
    assert "flash reads measured 4.0 ms" in of(learned).explanation
    assert "Tier figures" not in of(policy_only).explanation
    assert learned.pools[0].tier_figures is not None


def test_a_named_pool_is_named_and_a_backup_still_loads_the_tier() -> None:
    # FG_0's backup hours are not measured, but they load fc while FG_1 and FG_2 are measured
    backup = hour(2000, 1024, 30.0)
    collected = [unit("FG_0", "fc", [backup if j in (2, 3) else hour(300, 8, 7.0) for j in range(24)])]
    collected += [unit(f"FG_{i}", "fc", [hour(300, 8, 7.0) for _ in range(24)]) for i in (1, 2)]
    prepared = [prepare_window(u, POLICY) for u in collected]
    feats = [compute_features(u, db_heat=None) for u in prepared]
    phys = physics(POLICY)
    quiet = tier_curves(prepared, feats, POLICY, phys, pool="ARR_A")["fc"].read
    loaded = tier_curves(prepared, feats, POLICY, phys, pool="ARR_A", collected=collected)["fc"].read
    assert quiet is not None and loaded is not None
    assert quiet.object_hours == loaded.object_hours == 22 + 24 + 24
    # rows in hours 2 and 3 (FG_1, FG_2): 600 back-end IOPS without the backup, 2,600 with it
    assert quiet.load == pytest.approx((66 * 900 + 4 * 600) / 70 / 8640, rel=0.01)
    assert loaded.load == pytest.approx((66 * 900 + 4 * 2600) / 70 / 8640, rel=0.01)
    figures = blend(tier_curves(prepared, feats, POLICY, phys, pool="ARR_A", collected=collected), POLICY,
                    pool="ARR_A")  # fmt: skip
    assert "fc reads measured 7.0 ms at 12 % load on ARR_A (70 object-hours)" in figures.text(["fc"])


def test_a_slower_tier_is_not_taken_as_faster_than_the_one_before() -> None:
    # fc measured at 16 ms (light load), above the policy's 14 ms sata: sata is raised to it
    units = [unit(f"FG_{i}", "fc", [hour(300, 8, 16.0) for _ in range(48)]) for i in range(3)]
    figures = blend(curves(units), POLICY)
    fc, sata = figures.read["fc"], figures.read["sata"]
    assert fc.weight > 0.95 and fc.used_ms > 14.0
    assert sata.measured is None and sata.used_ms == fc.used_ms
    assert "raised to fc's" in sata.why
    text = figures.text(["fc", "sata"])
    assert (
        f"sata reads: {latency(sata.used_ms)}, not the policy's 14.0 ms (nothing measured there yet; raised"
        in text
    )


@pytest.mark.parametrize("seed", range(4))
def test_the_huber_fit_agrees_with_scikit_learns(seed: int) -> None:
    """The numpy Huber estimate (for speed: dozens of fits per tier) is scikit-learn's
    HuberRegressor's answer: on data with 10 % gross outliers both land within 3 % of each other's
    coefficients (and far from least squares, which the outliers drag)."""
    from sklearn.linear_model import HuberRegressor

    from advisors.tier_curves import _huber

    rng = np.random.default_rng(seed)
    n = 300
    x = np.column_stack([rng.uniform(4, 64, n), rng.uniform(0, 3, n)])
    y = 0.5 + 0.02 * x[:, 0] + 1.5 * x[:, 1] + rng.normal(0, 0.3, n)
    outliers = rng.random(n) < 0.1
    y[outliers] += rng.uniform(5, 20, int(outliers.sum()))
    intercept, coef, _ = _huber(x, y, np.ones(n))
    ref = HuberRegressor(epsilon=1.345, alpha=0.0, max_iter=1000).fit(x, y)
    assert intercept == pytest.approx(ref.intercept_, rel=0.05, abs=0.03)
    assert coef == pytest.approx(ref.coef_, rel=0.03)
    ols = np.linalg.lstsq(np.column_stack([np.ones(n), x]), y, rcond=None)[0]
    assert abs(ols[0] - ref.intercept_) > 0.3  # the outliers do move least squares


def test_a_fit_reading_zero_at_light_load_is_not_used_and_says_so() -> None:
    """Load from outside the fleet (other hosts on fc's disks) can drive the fit's light-load
    intercept below zero, clamped to 0 ms: nothing to weigh. The policy's figure is used and the
    explanation says why, never "used the measured figure" (bench.calibration's fc-saturated)."""
    from advisors.tier_curves import Fit, TierCurve

    fit = Fit("read", 0.0, 0.0, 0.0, 46.8, 0.48, 500, 12, 0.9, None)
    figures = blend({"fc": TierCurve("default", "fc", fit, None)}, POLICY)
    fc = figures.read["fc"]
    assert fc.weight == 0 and fc.used_ms == POLICY.tier("fc").read_latency_ms
    assert "used the measured figure" not in fc.text()
    assert "which no storage answers" in fc.text() and "used the policy's" in fc.text()
