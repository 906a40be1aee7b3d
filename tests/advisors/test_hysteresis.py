"""Hysteresis: move in on a short window at >= 1.5x, out on a long window below 0.5x, and wait
out the minimum residency (policy.hysteresis)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from advisors.advise import advise
from advisors.features import GB, ObjectInfo, ObjectWindow, Usage
from advisors.hysteresis import holds, window_heat_ratios
from policies.loader import load_policy

POLICY = load_policy()
T0 = datetime(2026, 11, 1, tzinfo=UTC)
ALL = ("flash", "fc", "sata")


def unit(
    key: str,
    hourly_reads: list[float],
    *,
    size_gb: float = 10,
    tier: str = "fc",
    since: datetime | None = None,
) -> ObjectWindow:
    by_hour = []
    total = 0
    for h, per_s in enumerate(hourly_reads):
        n = int(per_s * 3600)
        total += n
        c = {
            "reads": n,
            "bytes_read": n * 8192,
            "read_time_ms": n * 10,
            "writes": 0,
            "bytes_written": 0,
            "write_time_ms": 0,
        }
        by_hour.append((T0 + timedelta(hours=h), Usage(3600, c)))
    counters = {
        "reads": total,
        "bytes_read": total * 8192,
        "read_time_ms": total * 10,
        "writes": 0,
        "bytes_written": 0,
        "write_time_ms": 0,
    }
    info = ObjectInfo(
        key,
        "sqlserver",
        "S",
        "D",
        "filegroup",
        key,
        size_bytes=int(size_gb * GB),
        current_tier=tier,
        location_since=since,
    )
    return ObjectWindow(info, Usage(3600 * len(hourly_reads), counters), tuple(by_hour))  # fmt: skip


WEEK = 7 * 24


def test_ratios_use_the_window_only() -> None:
    a = unit("A", [100] * (WEEK - 24) + [10] * 24)
    b = unit("B", [20] * WEEK)
    short = window_heat_ratios([a, b], 24)
    long = window_heat_ratios([a, b], WEEK)
    assert short[("S", "A")] < 1 < long[("S", "A")]


def test_promotion_needs_recent_heat() -> None:
    cooling = unit("A", [300] * (WEEK - 24) + [25] * 24)  # hot all week, but not in the last day
    other = unit("B", [20] * WEEK)
    got = holds([cooling, other], {("S", "A"): "flash", ("S", "B"): "fc"}, {("S", "A"): ALL, ("S", "B"): ALL},
                POLICY, now=None)  # fmt: skip
    assert got[("S", "A")].tier == "fc"
    assert "below the 1.5x needed to move to flash" in got[("S", "A")].reason
    warming = unit("A", [25] * (WEEK - 24) + [300] * 24)
    assert holds([warming, other], {("S", "A"): "flash"}, {("S", "A"): ALL}, POLICY, now=None) == {}


def test_demotion_needs_a_long_cool_spell() -> None:
    dipped = unit("A", [40] * (WEEK - 24) + [1] * 24, tier="flash")  # quiet for a day only
    other = unit("B", [40] * WEEK)
    got = holds([dipped, other], {("S", "A"): "sata"}, {("S", "A"): ALL}, POLICY, now=None)
    assert "not below the 0.5x needed to move to sata" in got[("S", "A")].reason
    cold = unit("A", [1] * WEEK, tier="flash")
    assert holds([cold, other], {("S", "A"): "sata"}, {("S", "A"): ALL}, POLICY, now=None) == {}


def test_rules_override_hysteresis() -> None:
    # the rules no longer allow the current tier (e.g. a scan on flash): it moves whatever its heat
    hot = unit("A", [100] * WEEK, tier="flash")
    other = unit("B", [10] * WEEK)
    assert holds([hot, other], {("S", "A"): "fc"}, {("S", "A"): ("fc", "sata")}, POLICY, now=None) == {}


def test_minimum_residency_through_the_pipeline() -> None:
    now = T0 + timedelta(hours=WEEK)
    fresh = unit("HOT", [2000] * WEEK, since=now - timedelta(days=3))
    rest = [unit(f"B{i}", [30] * WEEK, size_gb=100) for i in range(3)]
    report = advise([fresh, *rest], POLICY, now=now, curve_points=0)
    a = next(x for x in report.objects if x.info.key == "HOT")
    assert a.recommended_tier == "fc"
    assert any("minimum residency is 14 days" in r for r in a.reasons)
    settled = unit("HOT", [2000] * WEEK, since=now - timedelta(days=30))
    report = advise([settled, *rest], POLICY, now=now, curve_points=0)
    assert next(x for x in report.objects if x.info.key == "HOT").recommended_tier == "flash"
