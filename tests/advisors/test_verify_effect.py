"""Verify after change, the effect shown (Hodges–Lehmann with its Wilcoxon interval) and a noisy
demotion's open verdict, which says what the band check found and asks for more days."""

from __future__ import annotations

import math
import re
from statistics import median

import numpy as np
import pytest
from scipy import stats

from advisors.verify import verify
from advisors.verify_stats import hodges_lehmann
from policies.model import VerificationPolicy
from tests.advisors.test_verify import BEFORE, FLASH, after, before, change
from tests.advisors.test_verify_sim import Scenario, bound, simulate

POLICY = VerificationPolicy()
DAYS = [-2.31, -2.40, -2.28, -2.45, -2.36, -2.29, -1.10]  # one odd day (a batch the guards let in)


def test_hodges_lehmann_is_the_median_of_the_walsh_averages() -> None:
    walsh = [(a + b) / 2 for i, a in enumerate(DAYS) for b in DAYS[i:]]
    hl = hodges_lehmann(DAYS, 0.95)
    assert hl is not None
    assert hl.estimate == pytest.approx(median(walsh))
    # one odd day moves the mean by a sixth of its distance, the HL estimate far less
    assert abs(hl.estimate - median(DAYS)) < abs(float(np.mean(DAYS)) - median(DAYS))


@pytest.mark.parametrize("n", [6, 7, 10, 14])
def test_the_wilcoxon_interval_is_where_the_signed_rank_test_stops_rejecting(n: int) -> None:
    """The interval's ends are the shifts at which scipy's exact two-sided signed-rank test of the
    shifted days crosses 5 %: just inside it does not reject, just outside it does."""
    x = np.random.default_rng(n).normal(0.3, 0.2, n)
    hl = hodges_lehmann(list(x), 0.95)
    assert hl is not None and hl.low < hl.estimate < hl.high
    assert hl.level >= 0.95

    def p(shift: float) -> float:
        return float(stats.wilcoxon(x - shift, method="exact").pvalue)

    eps = 1e-9
    assert p(hl.low + eps) > 0.05 and p(hl.high - eps) > 0.05
    assert p(hl.low - eps) <= 0.05 and p(hl.high + eps) <= 0.05


def test_too_few_days_for_the_level_give_the_widest_interval_at_its_own_level() -> None:
    """Four days cannot reach 95 % (every sign the same has probability 2 / 16): the interval is
    smallest to largest day and says it covers 87.5 %."""
    hl = hodges_lehmann([0.1, 0.3, 0.2, 0.4], 0.95)
    assert hl is not None
    assert (hl.low, hl.high) == pytest.approx((0.1, 0.4))
    assert hl.level == pytest.approx(1 - 2 / 16)
    assert "Wilcoxon 87.5 % interval" in hl.text()
    assert hodges_lehmann([0.2], 0.95) is None


def test_the_verdict_shows_the_hodges_lehmann_effect_over_its_own_days() -> None:
    out = verify(change(BEFORE, after(412, 0.9, 40, 2.0), **FLASH), POLICY)
    assert out.status == "improved" and out.effect is not None and out.interval is not None
    assert out.effect.days == out.interval.days == 7
    assert out.effect.low <= out.effect.estimate <= out.effect.high < 0
    shown = [r for r in out.reasons if r.startswith("effect ")]
    assert shown == [f"effect {out.effect.text()}"] and "Hodges–Lehmann; Wilcoxon 95.3 % interval" in shown[0]
    assert out.reasons[-1] == out.verdict  # the effect comes just before the verdict
    assert out.effect.as_dict()["method"] == "hodges-lehmann"


def test_an_outside_band_promotion_slower_than_before_is_flagged_slower() -> None:
    slower = verify(change(before(300, 6.0), after(300, 7.5), **FLASH), POLICY)
    assert (slower.status, slower.slower) == ("outside_band", True), slower.reasons
    faster = verify(change(before(300, 17.0), after(300, 7.1), **FLASH), POLICY)
    assert (faster.status, faster.slower) == ("outside_band", False), faster.reasons


def test_a_noisy_demotion_asks_for_more_days_and_says_what_the_band_check_found() -> None:
    """6 -> 26 ms on sata with days at sigma 0.3: above the band on average, not on every day's
    interval. The verdict gives the band interval and asks for 14 days, never a guess."""
    s = Scenario("demotion", sigma=0.3, before_ms=6.0, after_ms=26.0, moved=True, to_tier="sata",
                 promotion=False, band=(20.0, 20.0))  # fmt: skip
    seen = []
    for seed in range(12):
        out = verify(simulate(s, np.random.default_rng(seed), 7), POLICY)
        if out.status == "inconclusive":
            seen.append(out.verdict)
    assert seen, "every seeded run was decided"
    for verdict in seen:
        assert re.fullmatch(
            r"cannot yet tell whether it stays within sata's band \(reads [-+]\d+ % \([-+]\d+ % to \+\d+ %\) "
            r"against 21 ms; writes .* against 21 ms, top plus the margin\): extend to 14 days",
            verdict,
        ), verdict


def test_the_bound_is_what_a_known_noise_one_sided_test_finds() -> None:
    """The bench's bound for 6 -> 26 ms against 20 + 1 ms: ln(26/21) = 0.214 over sigma / sqrt(n)."""
    s = Scenario("d", sigma=0.3, after_ms=26.0, promotion=False, band=(20.0, 20.0))
    got = bound(s, 7)
    assert got is not None
    assert got == pytest.approx(stats.norm.cdf(math.log(26 / 21) * math.sqrt(7) / 0.3 - 1.959964), abs=1e-6)
    assert got < 0.5  # out of reach of any test in 7 days
    assert bound(Scenario("p", band=(2.0, 3.0)), 7) is None  # promotions are judged against their before days
