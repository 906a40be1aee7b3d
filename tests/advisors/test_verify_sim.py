"""Simulated days for the verify tests (the band checks, the noisy demotion, seeded placebos): a
moved object (412 reads/s and 40 writes/s of 8 KB, busier by day than by night), unmoved objects on
the source tier one by one (the controls) and the other objects on the destination tier, each day
with its own log-normal noise. The error rates of the whole procedure are bench/verify_power.py's;
this is the older, simpler simulation the unit tests seed (independent days, steady controls)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from statistics import NormalDist

import numpy as np

from advisors.verify import (
    IMPROVED,
    OUTSIDE_BAND,
    REGRESSED,
    Change,
    HourTotals,
)
from bench.verify_power import _hours as bench_hours

CHANGE = datetime(2026, 11, 21, 0, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)
CONTROL_OBJECTS = 8  # controls given to the verifier one by one (the week-level variance)


@dataclass(frozen=True)
class Scenario:
    """One simulated move. Latencies in ms; factors multiply the before levels after the change."""

    name: str
    sigma: float = 0.1
    before_ms: float = 17.0
    after_ms: float = 17.0  # the object's level after (its own; the array factor comes on top)
    array_after: float = 1.0  # the source tier's level after ÷ before (object while there, controls)
    load_after: float = 1.0  # the object's I/O after ÷ before
    moved: bool = False  # on the destination after: the array factor no longer applies to it
    batch_before: bool = False
    batch_after: bool = False
    week_shock: float = 0.0  # sigma of one factor on the object's whole after-window (all its days)
    to_tier: str = "flash"
    promotion: bool = True
    band: tuple[float, float] | None = None  # the destination's band tops (read, write)
    want: str = ""  # the verdict a correct verifier gives ("" : anything but improved / regressed)


def _hours(
    rng: np.random.Generator,
    start: datetime,
    days: int,
    *,
    iops: float,
    ms: float,
    day_factor: np.ndarray,
    load: np.ndarray,
) -> dict[datetime, HourTotals]:
    """Hour counters as bench.verify_power writes them, the day's level `ms` x `day_factor`."""
    return bench_hours(rng, start, days, iops=iops, ms=ms * day_factor, load=load)


def simulate(s: Scenario, rng: np.random.Generator, window_days: int) -> Change:
    """The moved object, the controls and the destination tier's other objects on both sides."""
    n = window_days
    lag = timedelta(days=7 * math.ceil(window_days / 7))
    b_start, a_start = CHANGE - lag, CHANGE

    def noise(sigma: float, k: int) -> np.ndarray:
        return np.exp(rng.normal(0, sigma, k))

    lag_days = lag.days
    array_b, array_a = noise(0.05, lag_days), noise(0.05, n) * s.array_after
    obj_b, obj_a = noise(s.sigma, lag_days), noise(s.sigma, n)
    if s.week_shock:  # common to all the after days, independent of the controls
        obj_a = obj_a * float(np.exp(rng.normal(0, s.week_shock)))
    load_b, load_a = np.ones(lag_days), np.full(n, s.load_after)
    tier_b, tier_a = noise(s.sigma / 2, lag_days), noise(s.sigma / 2, n)
    tload_b, tload_a = np.ones(lag_days), np.ones(n)
    if s.batch_before:
        i = int(rng.integers(lag_days))
        load_b[i], obj_b[i], tload_b[i], tier_b[i] = 2.5, obj_b[i] * 2, 2.5, tier_b[i] * 2
    if s.batch_after:
        i = int(rng.integers(n))
        load_a[i], obj_a[i], tload_a[i], tier_a[i] = 2.5, obj_a[i] * 2, 2.5, tier_a[i] * 2
    # a load drop lowers the object's own latency too (less queueing): the placebo that flatters
    after_level = s.after_ms * (s.load_after**0.5 if not s.moved else 1.0)
    before = _hours(rng, b_start, lag_days, iops=452, ms=s.before_ms, day_factor=array_b * obj_b, load=load_b)
    after = _hours(rng, a_start, n, iops=452 * 1.0, ms=after_level,
                   day_factor=(obj_a if s.moved else array_a * obj_a), load=load_a)  # fmt: skip
    ctrl_b = _hours(rng, b_start, lag_days, iops=2000, ms=15.0, day_factor=array_b * noise(s.sigma / 2, lag_days),
                    load=np.ones(lag_days))  # fmt: skip
    ctrl_a = _hours(
        rng, a_start, n, iops=2000, ms=15.0, day_factor=array_a * noise(s.sigma / 2, n), load=np.ones(n)
    )
    # a few of the controls on their own: each has the object's day noise and week-level shock, so
    # their spread from week to week is the unit's when nothing moved (the interval's week variance)
    objects = []
    for _ in range(CONTROL_OBJECTS):
        shock = float(np.exp(rng.normal(0, s.week_shock))) if s.week_shock else 1.0
        ob = _hours(rng, b_start, lag_days, iops=100, ms=15.0, day_factor=array_b * noise(s.sigma, lag_days),
                    load=np.ones(lag_days))  # fmt: skip
        oa = _hours(rng, a_start, n, iops=100, ms=15.0, day_factor=array_a * noise(s.sigma, n) * shock,
                    load=np.ones(n))  # fmt: skip
        objects.append((ob, oa))
    others_ms = 1.0 if s.to_tier == "flash" else 14.0
    tb = _hours(rng, b_start, lag_days, iops=2500, ms=others_ms, day_factor=tier_b, load=tload_b)
    ta = _hours(rng, a_start, n, iops=2500, ms=others_ms, day_factor=tier_a, load=tload_a)
    return Change(before=before, after=after, start=a_start, end=a_start + timedelta(days=n), lag=lag,
                  predicted_gain_ms_per_s=4600.0 if s.promotion else -40.0, from_tier="fc",
                  to_tier=s.to_tier, promotion=s.promotion, controls_before=ctrl_b, controls_after=ctrl_a,
                  controls=20, tier_before=tb, tier_after=ta, band_read_ms=s.band[0] if s.band else None,
                  band_write_ms=s.band[1] if s.band else None, window_days=n,
                  control_objects=tuple(objects))  # fmt: skip


PLACEBO = [
    Scenario("no move"),
    Scenario("quieter array 17 -> 9 ms", array_after=9 / 17),
    Scenario("busier array 17 -> 30 ms", array_after=30 / 17),
    Scenario("object's load -45 %", load_after=0.55),
    Scenario("fc relieved by a 49 % load drop", array_after=0.51**0.9),
    Scenario("noisy days sigma 0.1", sigma=0.1),
    Scenario("noisy days sigma 0.2", sigma=0.2),
    Scenario("noisy days sigma 0.3", sigma=0.3),
    Scenario("batch day before, sigma 0.2", sigma=0.2, batch_before=True),
    Scenario("batch day after, sigma 0.2", sigma=0.2, batch_after=True),
    Scenario("week-level shock sigma 0.1", week_shock=0.1),
    # a demotion that lands exactly at the top of sata's band plus the margin: not a regression
    Scenario(
        "demotion 6 -> 21 ms (band top), sigma 0.2",
        sigma=0.2,
        before_ms=6.0,
        after_ms=21.0,
        moved=True,
        to_tier="sata",
        promotion=False,
        band=(20.0, 20.0),
    ),
]


def power_scenarios() -> list[Scenario]:
    out = []
    for sigma in (0.1, 0.2, 0.3):
        out.append(Scenario(f"promotion 17 -> 1.5 ms, sigma {sigma}", sigma=sigma, after_ms=1.5, moved=True,
                            band=(2.0, 3.0), want=IMPROVED))  # fmt: skip
        out.append(Scenario(f"demotion 6 -> 26 ms, sigma {sigma}", sigma=sigma, before_ms=6.0, after_ms=26.0,
                            moved=True, to_tier="sata", promotion=False, band=(20.0, 20.0), want=REGRESSED))  # fmt: skip
    out.append(Scenario("promotion 17 -> 1.5 ms, quieter array, sigma 0.2", sigma=0.2, after_ms=1.5, moved=True,
                        array_after=9 / 17, band=(2.0, 3.0), want=IMPROVED))  # fmt: skip
    out.append(Scenario("promotion 6 -> 7.1 ms on flash, sigma 0.1", before_ms=6.0, after_ms=7.1, moved=True,
                        band=(2.0, 3.0), want=OUTSIDE_BAND))  # fmt: skip
    return out


def bound(s: Scenario, days: int, margin_ms: float = 1.0, level: float = 0.95) -> float | None:
    """The best power any test of "above the band" has for a demotion scenario: the read latency's
    day noise known exactly (no variance to estimate, no week term), one-sided at the verdict's
    level. None for a scenario not judged against a band from above."""
    if s.promotion or s.band is None:
        return None
    gap = math.log(s.after_ms / (s.band[0] + margin_ms))
    z = NormalDist().inv_cdf(0.5 + level / 2)
    return NormalDist().cdf(gap * math.sqrt(days) / s.sigma - z)


def test_a_placebo_moves_nothing() -> None:
    """The simulation itself: with nothing moved, the object's mean level after is its level before."""
    rng = np.random.default_rng(5)
    c = simulate(Scenario("no move", sigma=0.01), rng, 7)
    b = sum(h.read_time_ms for h in c.before.values()) / sum(h.reads for h in c.before.values())
    a = sum(h.read_time_ms for h in c.after.values()) / sum(h.reads for h in c.after.values())
    assert abs(a / b - 1) < 0.05
