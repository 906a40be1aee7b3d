"""Verify after change, the interval arithmetic: day-level log ratios (after ÷ before) to a t
interval that allows for week-level drift (docs/verification.md, step 6). Plain numbers in and out."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from statistics import fmean, stdev
from typing import Any

from scipy import stats


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
        return (
            f"{pct(self.estimate):+,.0f} % ({self.level * 100:g} % interval {pct(self.low):+,.0f} % to "
            f"{pct(self.high):+,.0f} %, {self.days} days)"
        )


@lru_cache(maxsize=256)
def _t_quantile(level: float, df: int) -> float:
    return float(stats.t.ppf(0.5 + level / 2, df))


def t_interval(values: Sequence[float], level: float, week_var: float = 0.0) -> Interval | None:
    """Mean ± t quantile x standard error; None with fewer than two values. The days share one
    before week and one set of controls, so they are not independent: `week_var`, the variance of
    a whole week's level that unmoved objects show (`week_variance`), is added to the variance of
    the mean (a shift of the whole after-week is no evidence of the move)."""
    n = len(values)
    if n < 2:
        return None
    mean = fmean(values)
    half = _t_quantile(level, n - 1) * math.sqrt(stdev(values) ** 2 / n + week_var)
    return Interval(mean, mean - half, mean + half, n, level)


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
