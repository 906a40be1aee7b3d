"""Verify after change, the windows: hourly counters, the after-window cut into days, each hour
paired with the same hour of the same weekday before the change (docs/verification.md, step 3),
and the hours left out (maintenance windows, detected bursts, business periods). Plain data."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from advisors.features import ObjectInfo, Usage
from advisors.maintenance import is_burst
from advisors.verify_stats import pct, pct_change
from policies.workload import BurstDetection

HOUR = timedelta(hours=1)
DAY = timedelta(days=1)


@dataclass(frozen=True, slots=True)
class HourTotals:
    """Interval counters of one clock hour (or summed over several)."""

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

    @property
    def ios(self) -> int:
        return self.reads + self.writes


Slots = Mapping[datetime, HourTotals]  # start of a clock hour (UTC) -> its counters

# ---- day-level pairs -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Day:
    """One day after the move paired with the same weekday before it, over their paired hours."""

    start: datetime  # first hour of the after day
    hours: int
    before: HourTotals
    after: HourTotals
    before_ms: float  # ms per I/O before
    after_ms: float  # ms per I/O after, at the before hours' read and write counts
    after_read_ms: float | None  # ms per read after, weighted by the before hours' reads
    after_write_ms: float | None  # ms per write after, weighted by the before hours' writes
    control: float | None  # the controls' log ratio over the same hours (None: no controls)

    @property
    def load(self) -> float:
        """I/O per second after ÷ before."""
        b = self.before.ios / self.before.seconds
        return (self.after.ios / self.after.seconds) / b if b > 0 else math.inf

    @property
    def size_change_pct(self) -> float | None:
        b, a = self.before, self.after
        if not b.ios or not a.ios:
            return None
        return pct_change((b.bytes_read + b.bytes_written) / b.ios, (a.bytes_read + a.bytes_written) / a.ios)

    def class_size_change_pct(self, what: str) -> float | None:
        """The change of the average read (write) size, after against before."""
        b, a = self.before, self.after
        nb, na = (b.reads, a.reads) if what == "read" else (b.writes, a.writes)
        if not nb or not na:
            return None
        sb, sa = (b.bytes_read, a.bytes_read) if what == "read" else (b.bytes_written, a.bytes_written)
        return pct_change(sb / nb, sa / na)

    def before_class_ms(self, what: str) -> float | None:
        """ms per read (write) before, over the paired hours."""
        n, t = (self.before.reads, self.before.read_time_ms) if what == "read" else (
            self.before.writes, self.before.write_time_ms)  # fmt: skip
        return t / n if n else None

    def class_raw(self, what: str) -> float | None:
        """ln(after / before) of one I/O class (reads or writes), the after hours at the before
        hours' counts of that class; None when the class is missing or at 0 ms on a side."""
        b = self.before_class_ms(what)
        a = self.after_read_ms if what == "read" else self.after_write_ms
        return math.log(a / b) if a and b else None

    @property
    def raw(self) -> float:
        """ln(after / before) at the before mix, not corrected by the controls."""
        return math.log(self.after_ms / self.before_ms)

    @property
    def effect(self) -> float:
        return self.raw - (self.control or 0.0)

    def as_dict(self) -> dict[str, Any]:
        return {
            "start": self.start.isoformat(),
            "hours": self.hours,
            "before_ms": round(self.before_ms, 3),
            "after_ms": round(self.after_ms, 3),
            "load": round(self.load, 3),
            "control_pct": None if self.control is None else round(pct(self.control), 1),
            "effect_pct": round(pct(self.effect), 1),
        }


def _at_mix(before: Sequence[HourTotals], after: Sequence[HourTotals]) -> tuple[float, float, float] | None:
    """(before wait, after read wait, after write wait), the after waits at the before hours' read
    and write counts, over paired hours; an after hour without reads (writes) takes the day's
    average read (write) latency after."""
    a_reads, a_writes = sum(a.reads for a in after), sum(a.writes for a in after)
    day_r = sum(a.read_time_ms for a in after) / a_reads if a_reads else None
    day_w = sum(a.write_time_ms for a in after) / a_writes if a_writes else None
    wait_b = wait_r = wait_w = 0.0
    for b, a in zip(before, after, strict=True):
        r = a.read_time_ms / a.reads if a.reads else day_r
        w = a.write_time_ms / a.writes if a.writes else day_w
        if (b.reads and r is None) or (b.writes and w is None):
            return None  # the after day has none of a class the before day had: not comparable
        wait_b += b.read_time_ms + b.write_time_ms
        wait_r += b.reads * (r or 0.0)
        wait_w += b.writes * (w or 0.0)
    return (wait_b, wait_r, wait_w) if wait_b > 0 and wait_r + wait_w > 0 else None


def _sum(ts: Iterable[HourTotals]) -> HourTotals:
    total = HourTotals()
    for t in ts:
        total = total + t
    return total


def _live(t: HourTotals | None) -> bool:
    return t is not None and t.seconds > 0 and t.ios > 0


def pair_days(
    before: Slots,
    after: Slots,
    *,
    start: datetime,
    end: datetime,
    lag: timedelta,
    min_hours: int,
    excluded: frozenset[datetime] = frozenset(),
    controls: tuple[Slots, Slots] | None = None,
) -> list[Day]:
    """The after-window [start, end) cut into 24-hour days, each hour paired with the hour `lag`
    before it. A day counts with at least `min_hours` paired hours (both sides have I/O, neither is
    excluded); with controls, only hours the controls also have on both sides are paired."""
    days: list[Day] = []
    day_start = start
    while day_start + HOUR <= end:
        pairs: list[tuple[HourTotals, HourTotals]] = []
        cpairs: list[tuple[HourTotals, HourTotals]] = []
        t = day_start
        while t < min(day_start + DAY, end):
            b, a = before.get(t - lag), after.get(t)
            ok = _live(b) and _live(a) and t not in excluded and t - lag not in excluded
            if ok and controls is not None:
                cb, ca = controls[0].get(t - lag), controls[1].get(t)
                ok = _live(cb) and _live(ca)
                if ok:
                    assert cb is not None and ca is not None
                    cpairs.append((cb, ca))
            if ok:
                assert b is not None and a is not None
                pairs.append((b, a))
            t += HOUR
        day_start += DAY
        if len(pairs) < min_hours:
            continue
        bs, as_ = [p[0] for p in pairs], [p[1] for p in pairs]
        waits = _at_mix(bs, as_)
        if waits is None:
            continue
        control = None
        if controls is not None:
            cw = _at_mix([c[0] for c in cpairs], [c[1] for c in cpairs])
            if cw is None:
                continue
            control = math.log((cw[1] + cw[2]) / cw[0])
        b_sum, a_sum = _sum(bs), _sum(as_)
        days.append(Day(start=day_start - DAY, hours=len(pairs), before=b_sum, after=a_sum,
                        before_ms=waits[0] / b_sum.ios, after_ms=(waits[1] + waits[2]) / b_sum.ios,
                        after_read_ms=waits[1] / b_sum.reads if b_sum.reads else None,
                        after_write_ms=waits[2] / b_sum.writes if b_sum.writes else None,
                        control=control))  # fmt: skip
    return days


# ---- hours left out ----------------------------------------------------------------------------

_ANY = ObjectInfo(key="", engine="", server="", database="", kind="", name="")


def is_burst_hour(h: HourTotals, rules: BurstDetection) -> bool:
    """A detected burst (advisors.maintenance.is_burst: very large reads, a backup or DBCC
    streaming the files). The hourly counters keep no DB2 prefetch share: the read size decides."""
    return is_burst(_ANY, Usage(h.seconds, {"reads": h.reads, "bytes_read": h.bytes_read}), rules)


def burst_hours(before: Slots, after: Slots, rules: BurstDetection) -> frozenset[datetime]:
    """Hours on either side that are a detected burst, to be left out like a declared window."""
    return frozenset(t for side in (before, after) for t, h in side.items() if is_burst_hour(h, rules))
