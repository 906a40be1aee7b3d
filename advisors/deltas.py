"""Cumulative counters -> interval deltas.

Engines count I/O since they started. Between two consecutive samples of one object the
difference is the interval's I/O, unless the engine restarted or reset the counters in between:
then the later sample starts a new series, the interval is dropped (the gap stays a gap) and
nothing is counted twice or goes negative. This is the one place those rules live.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum


class Outcome(StrEnum):
    INTERVAL = "interval"  # a valid interval was produced
    DUPLICATE = "duplicate"  # same instant as the previous sample: ignored idempotently
    OUT_OF_ORDER = "out_of_order"  # older than the previous sample: ignored
    RESTART = "restart"  # the engine's start time changed: new series
    RESET = "reset"  # a counter went down without a restart: new series


@dataclass(frozen=True, slots=True)
class CounterPoint:
    """One cumulative sample of one object, as plain values."""

    sample_time: datetime
    instance_start: datetime | None
    counters: Mapping[str, int | None]
    extra: Mapping[str, int]


@dataclass(frozen=True, slots=True)
class IntervalDelta:
    start: datetime
    end: datetime
    seconds: float
    counters: dict[str, int | None]
    extra: dict[str, int]


@dataclass(frozen=True, slots=True)
class DeltaResult:
    outcome: Outcome
    interval: IntervalDelta | None = None
    detail: str = ""


def _diff(
    prev: Mapping[str, int | None], cur: Mapping[str, int | None]
) -> tuple[dict[str, int | None], str | None]:
    out: dict[str, int | None] = {}
    for name, value in cur.items():
        before = prev.get(name)
        if value is None or before is None:
            out[name] = None
            continue
        if value < before:
            return out, f"{name} went down from {before} to {value}"
        out[name] = value - before
    return out, None


def _clock_shift(prev: CounterPoint, cur: CounterPoint) -> bool:
    """A start time that moved by a time-zone step (15-minute multiple up to 2 h) while every
    counter kept growing is the same run seen through a daylight-saving change (DB2 reports the
    activation time in local time), not a restart."""
    assert prev.instance_start is not None and cur.instance_start is not None
    shift = abs((cur.instance_start - prev.instance_start).total_seconds())
    return shift <= 7200 and shift % 900 == 0 and cur.instance_start < cur.sample_time


def interval_between(prev: CounterPoint | None, cur: CounterPoint) -> DeltaResult:
    """Judge `cur` against the previous sample of the same object.

    A counter present in only one of the two samples gives None for that counter, not a guess.
    """
    if prev is None:
        return DeltaResult(Outcome.RESTART, detail="first sample of a series")
    if cur.sample_time == prev.sample_time:
        return DeltaResult(Outcome.DUPLICATE, detail="sample already seen")
    if cur.sample_time < prev.sample_time:
        return DeltaResult(
            Outcome.OUT_OF_ORDER,
            detail=f"sample at {cur.sample_time.isoformat()} is older than {prev.sample_time.isoformat()}",
        )
    counters, problem = _diff(prev.counters, cur.counters)
    extra_raw: dict[str, int | None] = {}
    if problem is None:
        extra_raw, problem = _diff(dict(prev.extra), dict(cur.extra))
    moved = (
        cur.instance_start is not None
        and prev.instance_start is not None
        and cur.instance_start != prev.instance_start
    )
    if moved and not (problem is None and _clock_shift(prev, cur)):
        assert cur.instance_start is not None and prev.instance_start is not None
        return DeltaResult(
            Outcome.RESTART,
            detail=f"instance started at {cur.instance_start.isoformat()} "
            f"(was {prev.instance_start.isoformat()})",
        )
    if problem is not None:
        return DeltaResult(Outcome.RESET, detail=problem)
    extra = {k: v for k, v in extra_raw.items() if v is not None}
    seconds = (cur.sample_time - prev.sample_time).total_seconds()
    return DeltaResult(
        Outcome.INTERVAL,
        IntervalDelta(prev.sample_time, cur.sample_time, seconds, counters, extra),
    )


@dataclass(frozen=True, slots=True)
class Rates:
    """What a DBA reads off an interval (domain.md §1.1 interval math)."""

    read_iops: float | None
    write_iops: float | None
    read_mb_s: float | None
    write_mb_s: float | None
    avg_read_bytes: float | None
    avg_write_bytes: float | None
    avg_read_ms: float | None
    avg_write_ms: float | None


def _per(num: int | None, den: float | int | None) -> float | None:
    if num is None or den is None or den == 0:
        return None
    return num / den


def rates(counters: Mapping[str, int | None], seconds: float) -> Rates:
    """Rates for summed deltas over `seconds`; per-request averages are None when there was no I/O."""
    reads, writes = counters.get("reads"), counters.get("writes")
    bytes_read, bytes_written = counters.get("bytes_read"), counters.get("bytes_written")
    mb = 1024 * 1024
    return Rates(
        read_iops=_per(reads, seconds),
        write_iops=_per(writes, seconds),
        read_mb_s=None if bytes_read is None or not seconds else bytes_read / mb / seconds,
        write_mb_s=None if bytes_written is None or not seconds else bytes_written / mb / seconds,
        avg_read_bytes=_per(bytes_read, reads),
        avg_write_bytes=_per(bytes_written, writes),
        avg_read_ms=_per(counters.get("read_time_ms"), reads),
        avg_write_ms=_per(counters.get("write_time_ms"), writes),
    )
