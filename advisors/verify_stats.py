"""Verify after change, the interval arithmetic: day-level log ratios (after ÷ before) to a t
interval that allows for week-level drift (docs/verification.md, step 6), and the effect shown
beside it, the Hodges–Lehmann estimate with its Wilcoxon signed-rank interval. Plain numbers in
and out."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from statistics import fmean, stdev
from typing import Any

import numpy as np
from scipy import stats

from advisors import quantities as q


def pct_change(before: float, after: float) -> float | None:
    return (after / before - 1) * 100 if before > 0 else None


def pct(log_ratio: float) -> float:
    """A log ratio as a percentage change: ln(0.5) is -50 %."""
    return (math.exp(log_ratio) - 1) * 100


# ---- the interval ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Interval:
    """A t interval on day-level log ratios (after ÷ before; negative is faster)."""

    estimate: float
    low: float
    high: float
    days: int
    level: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "estimate_pct": round(pct(self.estimate), 1),
            "low_pct": round(pct(self.low), 1),
            "high_pct": round(pct(self.high), 1),
            "days": self.days,
            "level": self.level,
        }

    def text(self) -> str:
        """ "+12 % (95 % interval +3 % to +21 %, 7 days)": the changes as advisors.quantities reads
        them, the level as the policy writes it."""
        level = f"{self.level * 100:g} %"  # echo: the policy's interval_level
        return (
            f"{q.change_pct(pct(self.estimate))} ({level} interval {q.change_pct(pct(self.low))} to "
            f"{q.change_pct(pct(self.high))}, {self.days} days)"
        )


@lru_cache(maxsize=256)
def _t_quantile(level: float, df: int) -> float:
    return float(stats.t.ppf(0.5 + level / 2, df))


def t_quantile(level: float, df: int) -> float:
    """The two-sided t quantile of `level` at `df` degrees of freedom."""
    return _t_quantile(level, max(1, df))


def t_interval(
    values: Sequence[float], level: float, week_var: float = 0.0, week_df: int | None = None
) -> Interval | None:
    """Mean ± t quantile x standard error; None with fewer than two values. The days share one
    before week and one set of controls, so they are not independent: `week_var`, the variance of
    a whole week's level that unmoved objects show (`week_variance`), is added to the variance of
    the mean (a shift of the whole after-week is no evidence of the move). `week_df`: the degrees
    of freedom that variance was estimated with (objects - 1); the quantile then takes the
    Welch-Satterthwaite degrees of freedom of the sum, so three controls cannot pass for thirty."""
    n = len(values)
    if n < 2:
        return None
    mean = fmean(values)
    own = stdev(values) ** 2 / n
    df = n - 1
    if week_df is not None and week_var > 0:
        df = max(1, int((own + week_var) ** 2 / (own**2 / (n - 1) + week_var**2 / max(week_df, 1))))
    half = _t_quantile(level, df) * math.sqrt(own + week_var)
    return Interval(mean, mean - half, mean + half, n, level)


@dataclass(frozen=True, slots=True)
class RankInterval(Interval):
    """The Hodges–Lehmann estimate (median of the Walsh averages) of day-level log ratios, with the
    interval the Wilcoxon signed-rank test gives. `level` is the coverage actually reached: with
    few days the exact distribution cannot reach the asked level (at 95 %, fewer than 6 days), and
    the interval is then the widest there is (smallest to largest day), at its lower level."""

    def as_dict(self) -> dict[str, Any]:
        return {**Interval.as_dict(self), "level": round(self.level, 4), "method": "hodges-lehmann"}

    def text(self) -> str:
        """The level reached is a figure with one decimal ("Wilcoxon 87.5 % interval"): whole
        percent would hide that it is not the asked 95 %."""
        return (
            f"{q.change_pct(pct(self.estimate))} (Hodges–Lehmann; Wilcoxon {q.figure(self.level * 100)} % interval "
            f"{q.change_pct(pct(self.low))} to {q.change_pct(pct(self.high))}, {self.days} days)"
        )


@lru_cache(maxsize=128)
def _signed_rank_cdf(n: int) -> tuple[float, ...]:
    """P(T <= k) for k = 0 .. n(n+1)/2 of the Wilcoxon signed-rank statistic T of n values without
    ties, exactly (each rank's sign is a fair coin under the null): counts of subsets of 1..n."""
    top = n * (n + 1) // 2
    counts = [1] + [0] * top
    for r in range(1, n + 1):
        for k in range(top, r - 1, -1):
            counts[k] += counts[k - r]
    total = 2**n
    out, run = [], 0
    for c in counts:
        run += c
        out.append(run / total)
    return tuple(out)


def hodges_lehmann(values: Sequence[float], level: float) -> RankInterval | None:
    """The Hodges–Lehmann estimate and Wilcoxon interval of `values` (None with fewer than two).
    The interval runs from the k-th smallest to the k-th largest of the n(n+1)/2 Walsh averages
    (x_i + x_j) / 2, i <= j, with k the largest for which P(T < k) <= (1 - level) / 2 under the
    exact signed-rank distribution (Hollander & Wolfe, ch. 3). It has no week-level term: it is the
    effect shown, the verdicts rest on the t interval (`t_interval`) that has one."""
    n = len(values)
    if n < 2:
        return None
    xs = np.asarray(values, dtype=float)
    i, j = np.triu_indices(n)
    walsh = np.sort((xs[i] + xs[j]) / 2)
    m = len(walsh)
    cdf = _signed_rank_cdf(n)
    alpha = (1 - level) / 2
    k = 0  # P(T < k) = cdf[k - 1] for k >= 1
    while k + 1 <= m // 2 and cdf[k] <= alpha:
        k += 1
    reached = 1 - 2 * (cdf[k - 1] if k >= 1 else 0.0)
    if k == 0:  # too few days for any exclusion: the widest interval, which covers 1 - 2 / 2^n
        k, reached = 1, 1 - 2 * cdf[0]
    return RankInterval(float(np.median(walsh)), float(walsh[k - 1]), float(walsh[m - k]), n, reached)


def week_variance(per_object: Sequence[Sequence[float]]) -> float | None:
    """The week-level variance component of unmoved objects, from each control object's own day
    log ratios (after ÷ before, the same paired days): the variance across objects of their weekly
    means, less what their day-to-day noise alone explains (method of moments, floored at 0). The
    array's shift is common to all of them and drops out. None with fewer than 3 objects."""
    rows = [list(v) for v in per_object if len(v) >= 2]
    if len(rows) < 3:
        return None
    means = [fmean(v) for v in rows]
    within = fmean(stdev(v) ** 2 / len(v) for v in rows)
    return max(0.0, stdev(means) ** 2 - within)


def wilson(successes: int, n: int, level: float) -> tuple[float, float]:
    """The Wilson score interval of a share (successes of n, n > 0): honest at 0 of 3 or 3 of 3,
    where the plain p ± z·se interval collapses to a point."""
    z = float(stats.norm.ppf(0.5 + level / 2))
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)
