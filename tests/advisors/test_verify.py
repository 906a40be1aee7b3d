"""Verify after change (advisors/verify.py): day-level pairs, controls, load guards, the band, and
"was it moved?" - each verdict with its reasons in numbers."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from scipy import stats

from advisors.verify import (
    Change,
    HourTotals,
    Placement,
    Slots,
    figures,
    not_moved,
    pair_days,
    seen_moved,
    t_interval,
    verify,
    week_variance,
)
from policies.model import VerificationPolicy
from tests.advisors.test_verify_sim import PLACEBO, Scenario, simulate

POLICY = VerificationPolicy()
CHANGE = datetime(2026, 11, 21, tzinfo=UTC)
WEEK = timedelta(days=7)
# day-to-day wobble of a steady system: a real interval, not a zero-width one
WOBBLE = (1.0, 1.04, 0.97, 1.02, 0.98, 1.03, 0.96)


def side(
    start: datetime,
    read_iops: float,
    read_ms: float,
    write_iops: float = 0.0,
    write_ms: float = 2.0,
    *,
    days: int = 7,
    factors: Sequence[float] = WOBBLE,
    load: Sequence[float] | None = None,
    read_kb: float = 8,
) -> dict[datetime, HourTotals]:
    """Every hour of `days` days from `start`: steady I/O, each day's latency times its factor."""
    out = {}
    for d in range(days):
        f = factors[d % len(factors)]
        lf = load[d % len(load)] if load else 1.0
        for h in range(24):
            reads, writes = round(read_iops * lf * 3600), round(write_iops * lf * 3600)
            out[CHANGE + timedelta(hours=h, days=d) + (start - CHANGE)] = HourTotals(
                3600.0, reads, round(reads * read_kb * 1024), round(reads * read_ms * f), writes,
                writes * 8192, round(writes * write_ms * f),
            )  # fmt: skip
    return out


def before(*a: float, **kw: object) -> dict[datetime, HourTotals]:
    return side(CHANGE - WEEK, *a, **kw)  # type: ignore[arg-type]


def after(*a: float, **kw: object) -> dict[datetime, HourTotals]:
    return side(CHANGE, *a, factors=kw.pop("factors", WOBBLE[::-1]), **kw)  # type: ignore[arg-type]


def change(b: dict[datetime, HourTotals], a: dict[datetime, HourTotals], **kw: object) -> Change:
    """The move judged against STEADY controls unless `control_objects` says otherwise."""
    base = Change(before=b, after=a, start=CHANGE, end=CHANGE + WEEK, lag=WEEK, predicted_gain_ms_per_s=4600,
                  from_tier="fc", to_tier="flash", promotion=True, control_objects=steady())  # fmt: skip
    return replace(base, **kw)  # type: ignore[arg-type]


def steady(n: int = 4, ms: float = 15.0, factor: float = 1.0) -> tuple[tuple[Slots, Slots], ...]:
    """`n` unmoved fc files of 100 reads/s and 10 writes/s, their latency times `factor` after."""
    return tuple(
        (before(100, ms, 10, 1.0, factors=(1.0,)), after(100, ms * factor, 10, 1.0 * factor, factors=(1.0,)))
        for _ in range(n)
    )


# an fc file of 412 random 8 KB reads/s at 11.8 ms (and 40 writes/s at 2 ms) predicted to save 4.6 s/s on flash
BEFORE = before(412, 11.8, 40, 2.0)
FLASH = {"band_read_ms": 2.0, "band_write_ms": 3.0}


def test_a_real_promotion_is_improved_with_its_interval() -> None:
    out = verify(change(BEFORE, after(412, 0.9, 40, 2.0), **FLASH), POLICY)
    assert out.status == "improved", out.reasons
    assert out.interval is not None and out.interval.days == 7
    assert out.interval.high < 0  # even the slow end is faster
    # achieved at the before workload: 412 reads/s x (11.8 - 0.9) ms, writes unchanged
    assert out.achieved_gain_ms_per_s == pytest.approx(412 * 10.9, rel=0.02)
    assert out.achieved is True
    assert "achieved 98 % of the predicted 4.6 s/s saved" in out.reasons
    assert "read latency 11.8 ms → 0.9 ms" in out.reasons
    assert any(
        r.startswith("compared 7 days after the move with the same weekdays 1 week earlier")
        for r in out.reasons
    )
    assert out.verdict.startswith("improved: even the slow end of the interval is faster (-91 %")


def test_a_quieter_array_is_not_credited_to_the_move() -> None:
    """Nothing moved; the fc array got quieter (17 -> 9 ms) for the object and the controls alike."""
    b, a = before(412, 17.0), after(412, 9.0)
    uncontrolled = verify(change(b, a, control_objects=()), POLICY)
    # without controls the quieter array would look like a gain: the verdict says it cannot tell
    assert uncontrolled.status == "uncontrolled" and not uncontrolled.controlled, uncontrolled.reasons
    assert uncontrolled.achieved is False
    assert uncontrolled.verdict.startswith("uncontrolled: latency at the before mix -47 %")
    controlled = verify(change(b, a, control_objects=steady(12, factor=9 / 17)), POLICY)
    assert controlled.status != "improved", controlled.reasons  # with them it is not a gain
    assert controlled.controlled
    assert any(
        r.startswith(
            "controls: 12 unmoved objects on fc weighted by their I/O (as many as 12.0 equal ones) changed -47 %"
        )
        for r in controlled.reasons
    ), controlled.reasons


def test_a_load_drop_is_not_credited() -> None:
    """The object's own I/O fell 45 % and its latency with it: no day may credit a gain."""
    out = verify(change(before(412, 17.0), after(412, 12.0, load=(0.55,))), POLICY)
    assert out.status != "improved", out.reasons
    assert "7 days with less than 0.8x the before day's I/O are not credited with a gain" in out.reasons


def test_a_busier_day_is_not_blamed() -> None:
    """Slower only on days with far more I/O (batch days): not a regression."""
    out = verify(change(before(300, 5.0), after(300, 9.0, load=(1.6,))), POLICY)
    assert out.status != "regressed", out.reasons


def test_a_regression_needs_the_whole_interval_past_the_margins() -> None:
    out = verify(
        change(before(300, 5.0, 30, 2.0), after(300, 8.0, 30, 2.0), predicted_gain_ms_per_s=900), POLICY
    )
    assert (out.status, out.regression) == ("regressed", "object"), out.reasons
    assert out.verdict.startswith(
        "regression: latency +58 % (97.5 % interval +53 % to +62 %, 7 days), all beyond the 20 % and 1 ms"
    )
    assert out.achieved is False
    slight = verify(change(before(300, 5.0), after(300, 5.8)), POLICY)  # +16 %: within 20 %
    assert slight.status != "regressed"
    strict = VerificationPolicy(regression_pct=10, regression_ms=0.5)
    assert verify(change(before(300, 5.0), after(300, 5.8)), strict).status == "regressed"


def test_no_measurable_effect_and_inconclusive() -> None:
    same = verify(change(before(300, 5.0), after(300, 5.05)), POLICY)
    assert same.status == "no_effect", same.reasons
    assert same.verdict.startswith("no measurable effect: the interval lies within ±10 %")
    noisy = (1.0, 1.5, 0.7, 1.3, 0.8, 1.4, 0.75)
    unsure = verify(change(before(300, 5.0, factors=noisy), after(300, 4.5, factors=noisy[::-1])), POLICY)
    assert unsure.status == "inconclusive", unsure.reasons
    assert unsure.verdict.endswith(": extend to 14 days")


def test_a_promotion_outside_the_destination_band_is_not_improved() -> None:
    """fc -> flash landing at 7.1 ms against flash's 0-2 ms band."""
    out = verify(change(before(300, 17.0), after(300, 7.1), **FLASH), POLICY)
    assert out.status == "outside_band", out.reasons
    assert "read latency 7.1 ms is above flash's normal band (up to 2 ms, +1 ms allowed)" in out.verdict
    assert verify(change(before(300, 17.0), after(300, 7.1)), POLICY).status == "improved"  # no band known


def test_demotions_are_judged_against_the_slower_band() -> None:
    sata = {"to_tier": "sata", "promotion": False, "band_read_ms": 20.0, "band_write_ms": 20.0,
            "predicted_gain_ms_per_s": -40}  # fmt: skip
    worse = verify(change(before(300, 6.0), after(300, 26.0), **sata), POLICY)
    assert (worse.status, worse.regression) == ("regressed", "object"), worse.reasons
    assert "read latency 26.0 ms is above sata's normal band (up to 20 ms" in worse.verdict
    fine = verify(change(before(3, 0.8, 1, 1.0), after(3, 14.0, 1, 3.0), **sata), POLICY)
    assert fine.status == "within_band", fine.reasons
    assert "cost 41.6 ms/s of I/O wait at the before workload (no predicted gain to compare)" in fine.reasons


def test_the_joined_tier_is_blamed_only_when_its_own_load_allows() -> None:
    others_before = before(2000, 1.0, 500, 1.5)
    slower = verify(change(BEFORE, after(412, 1.0, 40, 2.0), tier_before=others_before,
                           tier_after=after(2000, 3.0, 500, 3.0)), POLICY)  # fmt: skip
    assert (slower.status, slower.regression) == ("regressed", "tier"), slower.reasons
    assert slower.verdict.startswith("regression: tier flash it joined got slower")
    assert slower.achieved is True  # the object itself gained
    busier = verify(change(BEFORE, after(412, 1.0, 40, 2.0), tier_before=others_before,
                           tier_after=after(2000, 3.0, 500, 3.0, load=(1.5,))), POLICY)  # fmt: skip
    assert busier.status == "improved", busier.reasons


def test_too_little_data() -> None:
    out = verify(change(BEFORE, after(412, 0.9, 40, 2.0, days=3)), POLICY)
    assert out.status == "inconclusive"
    assert (
        out.verdict
        == "too little data: 3 paired days, 72 paired hours (needs 4 days and 24 hours): extend to 14 days"
    )
    few = verify(change(before(0.001, 12.0), after(0.001, 1.0)), POLICY)
    assert few.status == "inconclusive" and few.verdict.startswith("too few I/Os to judge")


def test_days_pair_by_hour_of_week_and_excluded_hours_are_left_out() -> None:
    b, a = before(100, 10.0, factors=(1.0,)), after(100, 10.0, factors=(1.0,))
    # a batch at 02:00-04:00 after the move only: left out as a maintenance window, the days are equal
    for d in range(7):
        for h in (2, 3):
            t = CHANGE + timedelta(days=d, hours=h)
            a[t] = replace(a[t], read_time_ms=a[t].read_time_ms * 5)
    excluded = frozenset(CHANGE + timedelta(days=d, hours=h) for d in range(7) for h in (2, 3))
    days = pair_days(b, a, start=CHANGE, end=CHANGE + WEEK, lag=WEEK, min_hours=12, excluded=excluded)
    assert [d.hours for d in days] == [22] * 7
    assert all(d.raw == pytest.approx(0.0) for d in days)
    slower = pair_days(b, a, start=CHANGE, end=CHANGE + WEEK, lag=WEEK, min_hours=12)
    assert all(d.raw > 0.2 for d in slower)


def test_the_interval_is_a_t_interval() -> None:
    values = [-0.1, 0.05, 0.2, -0.02, 0.12]
    iv = t_interval(values, 0.95)
    assert iv is not None
    ref = stats.t.interval(0.95, len(values) - 1, loc=np.mean(values), scale=stats.sem(values))
    assert (iv.low, iv.high) == pytest.approx(ref)
    assert t_interval([0.1], 0.95) is None


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("scenario", [s for s in PLACEBO if "quieter" in s.name or "load" in s.name],
                         ids=lambda s: s.name)  # fmt: skip
def test_seeded_placebos_are_not_improved(scenario: Scenario, seed: int) -> None:
    out = verify(simulate(scenario, np.random.default_rng(seed), 7), POLICY)
    assert out.status not in ("improved", "regressed"), out.reasons


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_seeded_promotion_is_found(seed: int) -> None:
    s = Scenario("promotion", sigma=0.2, after_ms=1.5, moved=True, band=(2.0, 3.0))
    assert verify(simulate(s, np.random.default_rng(seed), 7), POLICY).status == "improved"


T0 = CHANGE - timedelta(days=30)


def _file(name: str, tier: str | None, *, since: datetime | None = None, prev: str | None = None,
          last_seen: datetime = CHANGE + WEEK, first_seen: datetime = T0) -> Placement:  # fmt: skip
    return Placement(name, f"X:\\{tier}\\{name}.ndf", tier, since, prev, first_seen, last_seen)


def test_the_move_must_be_seen() -> None:
    settle = timedelta(days=2)
    stayed = seen_moved([_file("hot1", "fc")], "flash", CHANGE, settle=settle)
    assert not stayed.moved
    assert stayed.reasons == ("not moved: hot1 (X:\\fc\\hot1.ndf) is on fc, not flash",)
    half = seen_moved([_file("hot1", "flash", since=CHANGE, prev="fc"), _file("hot2", "fc")], "flash", CHANGE,
                      settle=settle)  # fmt: skip
    assert not half.moved
    ok = seen_moved([_file("hot1", "flash", since=CHANGE + timedelta(hours=1), prev="fc"),
                     _file("hot2", "flash", since=CHANGE + timedelta(hours=5), prev="fc")], "flash", CHANGE,
                    settle=settle)  # fmt: skip
    assert ok.moved and ok.last_arrival == CHANGE + timedelta(hours=5)
    assert ok.first_arrival == CHANGE + timedelta(hours=1)
    # the online way: a new file on flash, the old one emptied and removed during the move
    online = seen_moved([_file("hot1", "fc", last_seen=CHANGE + timedelta(hours=3)),
                         _file("hot1_new", "flash", first_seen=CHANGE + timedelta(minutes=10))], "flash", CHANGE,
                        settle=settle)  # fmt: skip
    assert online.moved and "removed with the move: hot1" in online.reasons
    late = seen_moved([_file("hot1", "flash", since=CHANGE + timedelta(days=3), prev="fc")], "flash", CHANGE,
                      settle=settle)  # fmt: skip
    assert not late.moved and "more than 2 days after it" in late.reasons[0]


def test_figures() -> None:
    f = figures([HourTotals(3600, 360_000, 0, 3_600_000), HourTotals(7200, 360_000, 0, 720_000)])
    assert f.read_iops == pytest.approx(75)  # each hour's rate counts equally: (100 + 50) / 2
    assert f.avg_read_ms == pytest.approx((1000 + 100) / 75 / 2 * 1)  # mean ms/s over mean reads/s
    assert math.isclose(f.io_ms_per_s, (1000 + 100) / 2)


def test_an_unknown_destination_gives_no_verdict() -> None:
    """Where the unit should be is unknown: the move was not seen, so neither a gain nor "not moved"."""
    m = seen_moved([_file("hot1", "flash", since=CHANGE, prev="fc")], None, CHANGE, settle=timedelta(days=2))
    assert not m.moved and not m.checked
    out = not_moved(m)
    assert out.status == "inconclusive"
    assert out.verdict.startswith("cannot tell whether it moved: the destination is on no tier")


def test_a_unit_already_on_the_destination_is_not_moved() -> None:
    """Files on flash long before the change (never relocated, or relocated weeks earlier) did not
    arrive with it: no verdict from a quieter array, and no older move measured instead."""
    settle = timedelta(days=2)
    always = seen_moved([_file("hot1", "flash")], "flash", CHANGE, settle=settle)
    assert not always.moved and always.checked
    assert always.reasons == (
        "not moved: already on flash before the change: hot1 (X:\\flash\\hot1.ndf, since 2026-10-22 00:00 UTC)",
    )
    early = seen_moved([_file("hot1", "flash", since=CHANGE - timedelta(days=10), prev="fc")], "flash", CHANGE,
                       settle=settle)  # fmt: skip
    assert not early.moved and "already on flash before the change" in early.reasons[0]
    assert "since 2026-11-11 00:00 UTC" in early.reasons[0]
    # one file moved at the change, the other was there all along: the unit did not move as a whole
    part = seen_moved([_file("hot1", "flash", since=CHANGE, prev="fc"), _file("hot2", "flash")], "flash", CHANGE,
                      settle=settle)  # fmt: skip
    assert not part.moved and "hot2" in part.reasons[0] and "hot1" not in part.reasons[0]
    # a day early is still this change (the mark came after the move): the before-window ends there
    ok = seen_moved([_file("hot1", "flash", since=CHANGE - timedelta(days=1), prev="fc")], "flash", CHANGE,
                    settle=settle)  # fmt: skip
    assert ok.moved and ok.first_arrival == CHANGE - timedelta(days=1)


def test_the_band_check_survives_a_zero_band_and_zero_margin() -> None:
    """A band top of 0 ms and a regression margin of 0 ms: no division by zero."""
    p = POLICY.model_copy(update={"regression_ms": 0.0})
    out = verify(change(BEFORE, after(412, 0.9, 40, 2.0), band_read_ms=0.0, band_write_ms=0.0), p)
    assert out.status == "outside_band", out.reasons
    assert "read latency 0.9 ms is above flash's normal band (up to 0 ms, +0 ms allowed)" in out.verdict


def test_the_shown_band_latency_leaves_out_days_without_that_class() -> None:
    """Three before days had no reads: the shown read latency after is that of the days with reads
    (3 ms), not their average with zeros for the others (1.7 ms)."""
    b = dict(before(412, 11.8, 40, 2.0))
    for t in list(b):
        if t >= CHANGE - WEEK + timedelta(days=4):
            h = b[t]
            b[t] = HourTotals(h.seconds, 0, 0, 0, h.writes, h.bytes_written, h.write_time_ms)
    out = verify(change(b, after(412, 3.0, 40, 2.0), **FLASH), POLICY)
    text = next(r for r in out.reasons if r.startswith("at the before mix, read"))
    assert text.startswith("at the before mix, read 3.0 ms against 2 ms, write 2.0 ms against 3 ms,"), text


def test_a_whole_week_shift_that_unmoved_objects_also_show_is_not_credited() -> None:
    """The unit's after-week is 15 % faster on every day, but unmoved objects on fc drift by that
    much from week to week on their own: the days share that shift, so it is not a gain."""
    drift = (0.85, 1.15, 0.9, 1.1, 1.0)
    objs = tuple((before(100, 15.0), after(100, 15.0 * f)) for f in drift)
    assert week_variance([[math.log(f)] * 3 for f in drift]) == pytest.approx(
        float(np.var([math.log(f) for f in drift], ddof=1))
    )
    faster = change(before(412, 17.0), after(412, 17.0 * 0.85))
    assert verify(faster, POLICY).status == "improved"  # with nothing to say weeks drift
    out = verify(replace(faster, control_objects=objs), POLICY)
    assert out.status == "inconclusive", out.reasons
    assert (
        "5 unmoved objects vary ±17 % from week to week on their own: the intervals allow for that"
        in out.reasons
    )
    assert "placebo in space: each control judged as if it had moved comes out -18 % to +20 %" in out.reasons
