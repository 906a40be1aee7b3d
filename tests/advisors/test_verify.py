"""Verify after change (advisors/verify.py): table-driven verdicts with their reasons in numbers."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace

import pytest

from advisors.verify import ByHour, Change, HourTotals, figures, verify, wait
from policies.model import VerificationPolicy

POLICY = VerificationPolicy()


def side(
    read_iops: float,
    read_ms: float,
    write_iops: float = 0.0,
    write_ms: float = 2.0,
    *,
    hours: Iterable[int] = range(24),
    days: float = 7,
    read_kb: float = 8,
    write_kb: float = 8,
) -> ByHour:
    """Per hour of day, `days` hours of steady I/O at the given rates and latencies."""
    s = days * 3600
    out = {}
    for h in hours:
        reads, writes = round(read_iops * s), round(write_iops * s)
        out[h] = HourTotals(
            seconds=s,
            reads=reads,
            bytes_read=round(reads * read_kb * 1024),
            read_time_ms=round(reads * read_ms),
            writes=writes,
            bytes_written=round(writes * write_kb * 1024),
            write_time_ms=round(writes * write_ms),
        )
    return out


@dataclass
class Case:
    name: str
    change: Change
    status: str
    regression: str | None = None
    reasons: list[str] = field(default_factory=list)
    achieved: bool | None = None


# an fc file of 412 random 8 KB reads/s at 11.8 ms (and 40 writes/s at 2 ms) predicted to save 4.6 s/s on flash
BEFORE = side(412, 11.8, 40, 2.0)
FLASH_OTHERS = side(2000, 1.0, 500, 1.5)

CASES = [
    Case(
        "success",
        Change(
            BEFORE, side(430, 0.9, 40, 2.0), 4600, "flash", FLASH_OTHERS, side(2000, 1.05, 500, 1.5), 2.0, 3.0
        ),
        "verified",
        reasons=[
            "compared 24 hours of day present on both sides (00–23 UTC): 168 h before, 168 h after",
            "read latency 11.8 → 0.9 ms",
            "write latency 2.0 → 2.0 ms",
            "IOPS 452 → 470 (+4 %)",
            "average I/O size 8.0 → 8.0 KB",
            "tier flash: load 2,500 → 2,970 IOPS with this object; its other objects' average latency 1.1 → 1.1 ms",
            "achieved 98 % of the predicted 4.6 s/s saved",
        ],
        achieved=True,
    ),
    Case(
        "short of the prediction",
        Change(BEFORE, side(412, 6.0, 40, 2.0), 4600, "flash", None, None, 2.0, 3.0),
        "verified",
        reasons=["achieved 52 % of the predicted 4.6 s/s saved (a successful move reaches 80 %)"],
        achieved=False,
    ),
    Case(
        "regression on the object",
        Change(side(300, 5.0, 30, 2.0), side(300, 8.0, 30, 2.0), 900, "flash", None, None, 2.0, 3.0),
        "regressed",
        "object",
        [
            "read latency 5.0 → 8.0 ms",
            "regression: read latency 5.0 → 8.0 ms: +3.0 ms (+60 %) over before, beyond the 20 % and 1 ms "
            "allowed",
            "achieved -100 % of the predicted 900 ms/s saved (a successful move reaches 80 %)",
        ],
        achieved=False,
    ),
    Case(
        "regression on the joined tier",
        Change(
            BEFORE, side(412, 1.0, 40, 2.0), 4600, "flash", FLASH_OTHERS, side(2000, 3.0, 500, 3.0), 2.0, 3.0
        ),
        "regressed",
        "tier",
        [
            "regression: tier flash it joined got slower: its other objects' average latency 1.1 → 3.0 ms, "
            "beyond the 20 % and 1 ms allowed",
            "achieved 97 % of the predicted 4.6 s/s saved",
        ],
        achieved=True,
    ),
    Case(
        "demotion slower but within the slower tier's norm",
        Change(side(3, 0.8, 1, 1.0), side(3, 14.0, 1, 3.0), -40, "sata", None, None, 20.0, 20.0),
        "verified",
        reasons=["read latency 0.8 → 14.0 ms", "cost 42 ms/s of I/O wait at the before workload"],
    ),
    Case(
        "demotion beyond the slower tier's norm",
        Change(side(3, 0.8, 1, 1.0), side(3, 30.0, 1, 3.0), -40, "sata", None, None, 20.0, 20.0),
        "regressed",
        "object",
        ["regression: read latency 0.8 → 30.0 ms: +10.0 ms (+50 %) over 20.0 ms normal for sata"],
    ),
    Case(
        "inconclusive: volume changed",
        Change(BEFORE, side(1100, 0.9, 100, 2.0), 4600, "flash"),
        "inconclusive",
        reasons=[
            "IOPS 452 → 1,200 (+165 %)",
            "I/O volume changed +165 % (limit ±50 %): the workload changed too much to credit or blame the move",
        ],
    ),
    Case(
        "inconclusive: I/O size changed",
        Change(BEFORE, side(412, 0.9, 40, 2.0, read_kb=64), 4600, "flash"),
        "inconclusive",
        reasons=["average I/O size 8.0 → 59.0 KB", "average I/O size changed +638 % (limit ±30 %)"],
    ),
    Case(
        "inconclusive: latency up while I/O volume tripled",
        Change(side(300, 5.0, 30, 2.0), side(900, 9.0, 90, 2.0), 900, "flash"),
        "inconclusive",
        reasons=["latency rose, but the workload changed too: read latency 5.0 → 9.0 ms"],
    ),
    Case(
        "inconclusive: too little data after",
        Change(BEFORE, side(430, 0.9, 40, 2.0, hours=range(10), days=1), 4600, "flash"),
        "inconclusive",
        reasons=[
            "compared 10 hours of day present on both sides (00–09 UTC): 70 h before, 10 h after; hours 10–23 "
            "on one side only are left out",
            "too little data: 70 h before and 10 h after in the compared hours (needs 24 h on each side)",
        ],
    ),
    Case(
        "inconclusive: too few I/Os",
        Change(side(0.001, 12.0), side(0.001, 1.0), 10, "flash"),
        "inconclusive",
        reasons=["too few I/Os to judge: 600 before, 600 after (needs 1,000 on each side)"],
    ),
    Case(
        "only the hours of day on both sides are compared",
        Change(
            {**side(412, 11.8, 40, 2.0, hours=range(12)), **side(5000, 40.0, hours=range(12, 24))},
            side(430, 0.9, 40, 2.0, hours=range(12)),
            4600,
            "flash",
        ),
        "verified",
        reasons=[
            "compared 12 hours of day present on both sides (00–11 UTC): 84 h before, 84 h after; hours 12–23 on "
            "one side only are left out",
            "read latency 11.8 → 0.9 ms",
            "IOPS 452 → 470 (+4 %)",
        ],
        achieved=True,
    ),
    Case(
        "no hour in common",
        Change(side(412, 11.8, hours=range(12)), side(430, 0.9, hours=range(12, 24)), 4600, "flash"),
        "inconclusive",
        reasons=["no hour of day has data on both sides of the change"],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_verdicts(case: Case) -> None:
    out = verify(case.change, POLICY)
    assert out.status == case.status, out.reasons
    assert out.regression == case.regression
    for reason in case.reasons:
        assert reason in out.reasons or any(reason in r for r in out.reasons), (reason, out.reasons)
    assert out.achieved == case.achieved


def test_success_numbers_and_confidence() -> None:
    out = verify(CASES[0].change, POLICY)
    # achieved at the before workload: 412 reads/s x (11.8 - 0.9) ms + 40 writes/s x 0 ms
    assert out.achieved_gain_ms_per_s == pytest.approx(412 * 10.9, rel=1e-3)
    assert out.share_of_prediction == pytest.approx(412 * 10.9 / 4600, rel=1e-3)
    assert 0.95 <= out.confidence <= 1.0
    assert out.hours_compared == tuple(range(24))
    assert out.before is not None and out.before.as_dict()["avg_read_ms"] == pytest.approx(11.8)


def test_confidence_drops_with_workload_change_and_thin_data() -> None:
    steady = verify(CASES[0].change, POLICY).confidence
    busier = verify(replace(CASES[0].change, after=side(560, 0.9, 50, 2.0)), POLICY).confidence
    thin = verify(replace(CASES[0].change, after=side(430, 0.9, 40, 2.0, days=2)), POLICY)
    assert thin.status == "verified"  # 48 h on each hour side: enough, but less sure
    assert steady > busier > 0.5
    assert steady > thin.confidence


def test_each_hour_counts_equally() -> None:
    # two days of 02:00 at 10 ms, one day of 14:00 at 2 ms: the mean of the hours, not of the I/Os
    data = {**side(100, 10.0, hours=[2], days=2), **side(100, 2.0, hours=[14], days=1)}
    f = figures(data, [2, 14])
    assert f.avg_read_ms == pytest.approx(6.0)
    assert f.read_iops == pytest.approx(100)


def test_thresholds_come_from_the_policy() -> None:
    change = Change(side(300, 5.0, 30, 2.0), side(300, 5.8, 30, 2.0), 900, "flash")
    assert verify(change, POLICY).status == "verified"  # +16 %: under 20 %
    strict = VerificationPolicy(regression_pct=10, regression_ms=0.5)
    assert verify(change, strict).status == "regressed"


def test_wait_is_readable() -> None:
    assert wait(4600) == "4.6 s/s"
    assert wait(42.4) == "42 ms/s"
