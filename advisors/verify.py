"""Verify after change: a move's measured before and after windows against its prediction.

Plain data in, plain data out. The caller sums the interval counters per hour of day (UTC) over
the window before the change and the window after it, for the moved object and for the other
objects on the tier it joined. Only the hours of day present on both sides are compared, and each
compared hour counts equally on both sides, so a side with more night-time data is not favoured.

The achieved gain is measured at the *before* workload: the change in latency per read and per
write times the rates before the move. A workload that changed by itself (more I/O, other I/O
sizes, another read/write mix) makes the comparison doubtful: the verdict then says so
("inconclusive") instead of crediting or blaming the move.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from policies.model import VerificationPolicy

VERIFIED, REGRESSED, INCONCLUSIVE = "verified", "regressed", "inconclusive"


@dataclass(frozen=True, slots=True)
class HourTotals:
    """Interval counters summed over every day of a window for one hour of day."""

    seconds: float = 0.0
    reads: int = 0
    bytes_read: int = 0
    read_time_ms: int = 0
    writes: int = 0
    bytes_written: int = 0
    write_time_ms: int = 0

    def __add__(self, other: HourTotals) -> HourTotals:
        return HourTotals(
            self.seconds + other.seconds,
            self.reads + other.reads,
            self.bytes_read + other.bytes_read,
            self.read_time_ms + other.read_time_ms,
            self.writes + other.writes,
            self.bytes_written + other.bytes_written,
            self.write_time_ms + other.write_time_ms,
        )


ByHour = Mapping[int, HourTotals]  # hour of day (0-23, UTC) -> sums over the window's days


@dataclass(frozen=True, slots=True)
class Figures:
    """One side over the compared hours of day; rates are the mean of the hours' rates."""

    hours: float  # covered hours (seconds / 3600) in the compared hours of day
    reads: int
    writes: int
    read_iops: float
    write_iops: float
    avg_read_ms: float | None
    avg_write_ms: float | None
    avg_read_kb: float | None
    avg_write_kb: float | None
    io_ms_per_s: float  # I/O wait per second (read + write time)
    avg_io_kb: float | None

    @property
    def iops(self) -> float:
        return self.read_iops + self.write_iops

    @property
    def ios(self) -> int:
        return self.reads + self.writes

    @property
    def avg_ms(self) -> float | None:
        return self.io_ms_per_s / self.iops if self.iops > 0 else None

    @property
    def read_share(self) -> float | None:
        return self.read_iops / self.iops if self.iops > 0 else None

    def as_dict(self) -> dict[str, Any]:
        r = 3
        return {
            "hours": round(self.hours, 2),
            "reads": self.reads,
            "writes": self.writes,
            "iops": round(self.iops, r),
            "read_iops": round(self.read_iops, r),
            "write_iops": round(self.write_iops, r),
            "avg_read_ms": _round(self.avg_read_ms),
            "avg_write_ms": _round(self.avg_write_ms),
            "avg_ms": _round(self.avg_ms),
            "avg_read_kb": _round(self.avg_read_kb),
            "avg_write_kb": _round(self.avg_write_kb),
            "avg_io_kb": _round(self.avg_io_kb),
            "io_ms_per_s": round(self.io_ms_per_s, r),
        }


def _round(v: float | None) -> float | None:
    return None if v is None else round(v, 3)


def figures(side: ByHour, hours: Iterable[int]) -> Figures:
    """Figures over the given hours of day; each hour's rates count equally."""
    hs = [h for h in hours if h in side and side[h].seconds > 0]
    n = len(hs)
    total = HourTotals()
    rates = [0.0] * 6  # reads, bytes_read, read_ms, writes, bytes_written, write_ms per second
    for h in hs:
        t = side[h]
        total = total + t
        for i, v in enumerate(
            (t.reads, t.bytes_read, t.read_time_ms, t.writes, t.bytes_written, t.write_time_ms)
        ):
            rates[i] += v / t.seconds / n
    reads, bread, rms, writes, bwritten, wms = rates
    return Figures(
        hours=total.seconds / 3600,
        reads=total.reads,
        writes=total.writes,
        read_iops=reads,
        write_iops=writes,
        avg_read_ms=rms / reads if reads > 0 else None,
        avg_write_ms=wms / writes if writes > 0 else None,
        avg_read_kb=bread / reads / 1024 if reads > 0 else None,
        avg_write_kb=bwritten / writes / 1024 if writes > 0 else None,
        io_ms_per_s=rms + wms,
        avg_io_kb=(bread + bwritten) / (reads + writes) / 1024 if reads + writes > 0 else None,
    )


@dataclass(frozen=True, slots=True)
class Change:
    """What to verify: the moved object's two sides, its prediction, the tier it joined."""

    before: ByHour
    after: ByHour
    predicted_gain_ms_per_s: float | None  # I/O wait per second the move was predicted to save
    to_tier: str | None = None
    tier_before: ByHour | None = None  # the *other* objects on the joined tier
    tier_after: ByHour | None = None
    expected_read_ms: float | None = None  # what is normal on the joined tier (top of its band)
    expected_write_ms: float | None = None
    window_days: int = 7


@dataclass(frozen=True, slots=True)
class Outcome:
    status: str  # verified | regressed | inconclusive
    achieved_gain_ms_per_s: float | None
    share_of_prediction: float | None
    achieved: bool | None  # share of prediction reached the policy's success share
    confidence: float  # 0-1
    regression: str | None  # "object" | "tier" | None
    hours_compared: tuple[int, ...]
    before: Figures | None
    after: Figures | None
    tier_before: Figures | None
    tier_after: Figures | None
    reasons: tuple[str, ...]


def wait(ms_per_s: float) -> str:
    """I/O wait per second, readably: 4,600 ms/s is "4.6 s/s"."""
    return f"{ms_per_s / 1000:,.1f} s/s" if abs(ms_per_s) >= 1000 else f"{ms_per_s:,.0f} ms/s"


def _ms(v: float | None) -> str:
    return "n/a" if v is None else f"{v:,.1f}"


def _pct(before: float, after: float) -> float | None:
    return (after / before - 1) * 100 if before > 0 else None


def _hour_ranges(hours: Iterable[int]) -> str:
    hs = sorted(hours)
    out: list[str] = []
    i = 0
    while i < len(hs):
        j = i
        while j + 1 < len(hs) and hs[j + 1] == hs[j] + 1:
            j += 1
        out.append(f"{hs[i]:02d}" if i == j else f"{hs[i]:02d}–{hs[j]:02d}")
        i = j + 1
    return ", ".join(out)


def _common_hours(a: ByHour, b: ByHour) -> tuple[int, ...]:
    return tuple(h for h in range(24) if h in a and h in b and a[h].seconds > 0 and b[h].seconds > 0)


def _factor(change: float, limit: float) -> float:
    """1 when nothing changed, 0.5 at the limit, falling to 0 at twice the limit."""
    return max(0.0, 1.0 - 0.5 * abs(change) / limit)


def _rise(before: float, after: float, pct: float, ms: float) -> bool:
    return after - before > before * pct / 100 and after - before > ms


def _object_regressions(b: Figures, a: Figures, change: Change, p: VerificationPolicy) -> list[str]:
    found = []
    sides = (
        ("read", b.reads, a.reads, b.avg_read_ms, a.avg_read_ms, change.expected_read_ms),
        ("write", b.writes, a.writes, b.avg_write_ms, a.avg_write_ms, change.expected_write_ms),
    )
    for what, n_b, n_a, lat_b, lat_a, expected in sides:
        if lat_b is None or lat_a is None or n_b < p.min_ios or n_a < p.min_ios:
            continue
        ref, against = lat_b, "before"
        if (
            expected is not None and expected > lat_b
        ):  # a move to a slower tier may get slower, up to its norm
            ref, against = expected, f"{expected:,.1f} ms normal for {change.to_tier}"
        if _rise(ref, lat_a, p.regression_pct, p.regression_ms):
            rise = _pct(ref, lat_a)
            found.append(
                f"{what} latency {lat_b:,.1f} → {lat_a:,.1f} ms: {lat_a - ref:+,.1f} ms ({rise:+,.0f} %) over "
                f"{against}, beyond the {p.regression_pct:g} % and {p.regression_ms:g} ms allowed"
            )
    return found


def verify(change: Change, policy: VerificationPolicy) -> Outcome:
    """The verdict on one move, with its reasons in numbers."""
    p = policy
    reasons: list[str] = []
    hours = _common_hours(change.before, change.after)
    if not hours:
        return Outcome(INCONCLUSIVE, None, None, None, 0.0, None, (), None, None, None, None,
                       ("no hour of day has data on both sides of the change",))  # fmt: skip
    b, a = figures(change.before, hours), figures(change.after, hours)
    left_out = [h for h in range(24) if h not in hours and (h in change.before or h in change.after)]
    reasons.append(
        f"compared {len(hours)} hours of day present on both sides ({_hour_ranges(hours)} UTC): "
        f"{b.hours:,.0f} h before, {a.hours:,.0f} h after"
        + (f"; hours {_hour_ranges(left_out)} on one side only are left out" if left_out else "")
    )
    # the figures
    if b.avg_read_ms is not None or a.avg_read_ms is not None:
        reasons.append(f"read latency {_ms(b.avg_read_ms)} → {_ms(a.avg_read_ms)} ms")
    if b.avg_write_ms is not None or a.avg_write_ms is not None:
        reasons.append(f"write latency {_ms(b.avg_write_ms)} → {_ms(a.avg_write_ms)} ms")
    vol = _pct(b.iops, a.iops)
    reasons.append(f"IOPS {b.iops:,.0f} → {a.iops:,.0f}" + (f" ({vol:+,.0f} %)" if vol is not None else ""))
    size = _pct(b.avg_io_kb, a.avg_io_kb) if b.avg_io_kb and a.avg_io_kb is not None else None
    if b.avg_io_kb is not None and a.avg_io_kb is not None:
        reasons.append(f"average I/O size {b.avg_io_kb:,.1f} → {a.avg_io_kb:,.1f} KB")
    share_points = (
        abs(a.read_share - b.read_share) * 100
        if a.read_share is not None and b.read_share is not None
        else None
    )

    tb = ta = None
    if change.tier_before is not None and change.tier_after is not None:
        th = _common_hours(change.tier_before, change.tier_after)
        if th:
            tb, ta = figures(change.tier_before, th), figures(change.tier_after, th)
            reasons.append(
                f"tier {change.to_tier}: load {tb.iops:,.0f} → {ta.iops + a.iops:,.0f} IOPS with this object; "
                f"its other objects' average latency {_ms(tb.avg_ms)} → {_ms(ta.avg_ms)} ms"
            )

    # enough data?
    coverage = min(b.hours, a.hours) / (change.window_days * 24)
    confidence = 0.5 + 0.5 * min(1.0, coverage)
    too_little = []
    if min(b.hours, a.hours) < p.min_hours:
        too_little.append(
            f"too little data: {b.hours:,.0f} h before and {a.hours:,.0f} h after in the compared hours "
            f"(needs {p.min_hours:g} h on each side)"
        )
    if min(b.ios, a.ios) < p.min_ios:
        too_little.append(
            f"too few I/Os to judge: {b.ios:,} before, {a.ios:,} after (needs {p.min_ios:,} on each side)"
        )
    # did the workload change by itself?
    changed: list[str] = []
    volume_rose = False
    if vol is not None:
        confidence *= _factor(vol, p.max_volume_change_pct)
        if abs(vol) > p.max_volume_change_pct:
            volume_rose = vol > 0
            changed.append(f"I/O volume changed {vol:+,.0f} % (limit ±{p.max_volume_change_pct:g} %)")
    mix_changed = False
    if size is not None:
        confidence *= _factor(size, p.max_io_size_change_pct)
        if abs(size) > p.max_io_size_change_pct:
            mix_changed = True
            changed.append(f"average I/O size changed {size:+,.0f} % (limit ±{p.max_io_size_change_pct:g} %)")
    if share_points is not None:
        confidence *= _factor(share_points, p.max_read_share_change_points)
        if share_points > p.max_read_share_change_points:
            mix_changed = True
            changed.append(
                f"read share moved {share_points:,.0f} points (limit {p.max_read_share_change_points:g})"
            )
    # the gain, at the before workload
    achieved: float | None = None
    terms = [
        iops * (lb - la)
        for iops, lb, la in (
            (b.read_iops, b.avg_read_ms, a.avg_read_ms),
            (b.write_iops, b.avg_write_ms, a.avg_write_ms),
        )
        if lb is not None and la is not None
    ]
    if terms:
        achieved = sum(terms)
    predicted = change.predicted_gain_ms_per_s
    share = achieved / predicted if achieved is not None and predicted is not None and predicted > 0 else None
    # regressions
    regressions = _object_regressions(b, a, change, p)
    regression = "object" if regressions else None
    if tb is not None and ta is not None and tb.avg_ms is not None and ta.avg_ms is not None:
        judged = min(tb.ios, ta.ios) >= p.min_ios
        if judged and _rise(tb.avg_ms, ta.avg_ms, p.tier_regression_pct, p.tier_regression_ms):
            tier_vol = _pct(tb.iops, ta.iops)
            if tier_vol is not None and tier_vol > p.max_volume_change_pct:
                reasons.append(
                    f"tier {change.to_tier}'s other objects got slower ({_ms(tb.avg_ms)} → {_ms(ta.avg_ms)} ms) "
                    f"but their own I/O also rose {tier_vol:+,.0f} %: not blamed on this move"
                )
            else:
                regressions.append(
                    f"tier {change.to_tier} it joined got slower: its other objects' average latency "
                    f"{tb.avg_ms:,.1f} → {ta.avg_ms:,.1f} ms, beyond the {p.tier_regression_pct:g} % and "
                    f"{p.tier_regression_ms:g} ms allowed"
                )
                regression = regression or "tier"

    def gain_reason() -> str | None:
        if achieved is None:
            return None
        if share is not None and predicted is not None:
            text = f"achieved {share * 100:,.0f} % of the predicted {wait(predicted)} saved"
            if share < p.success_share:
                text += f" (a successful move reaches {p.success_share * 100:g} %)"
            return text
        verb = "saved" if achieved >= 0 else "cost"
        return (
            f"{verb} {wait(abs(achieved))} of I/O wait at the before workload (no predicted gain to compare)"
        )

    status = VERIFIED
    if too_little:
        status, regression = INCONCLUSIVE, None
        reasons.extend(too_little)
        confidence = min(confidence, 0.25)
    elif regressions and not (volume_rose or mix_changed):
        status = REGRESSED
        reasons.extend(f"regression: {r}" for r in regressions)
        if changed:
            reasons.append("; ".join(changed) + ", and it still got slower")
    elif changed:
        status, regression = INCONCLUSIVE, None
        if regressions:
            reasons.append("latency rose, but the workload changed too: " + "; ".join(regressions))
        reasons.append("; ".join(changed) + ": the workload changed too much to credit or blame the move")
    g = gain_reason()
    if g is not None:
        reasons.append(g)
    return Outcome(
        status=status,
        achieved_gain_ms_per_s=achieved,
        share_of_prediction=share,
        achieved=None if share is None or status == INCONCLUSIVE else share >= p.success_share,
        confidence=round(max(0.0, min(1.0, confidence)), 2),
        regression=regression if status == REGRESSED else None,
        hours_compared=hours,
        before=b,
        after=a,
        tier_before=tb,
        tier_after=ta,
        reasons=tuple(reasons),
    )
