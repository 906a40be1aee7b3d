"""One table-driven case per classification rule, with its reason text asserted."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from advisors.classify import classify
from advisors.features import GB, ObjectInfo, ObjectWindow, Usage, compute_features, est_cache_hit_share
from policies.loader import load_policy

POLICY = load_policy()
HOUR = 3600.0


@dataclass
class Case:
    rule: str
    profile: str
    kind: str = "filegroup"
    engine: str = "sqlserver"
    reads_s: float = 0
    writes_s: float = 0
    read_kb: float = 8
    write_kb: float = 8
    read_ms: float = 12
    write_ms: float = 2
    size_gb: float = 50
    db_heat: float | None = None
    extra: dict[str, int] = field(default_factory=dict)
    reason: str = ""
    allowed: tuple[str, ...] = ("flash", "fc", "sata")


def window(c: Case) -> ObjectWindow:
    reads, writes = int(c.reads_s * HOUR), int(c.writes_s * HOUR)
    counters = {
        "reads": reads,
        "bytes_read": int(reads * c.read_kb * 1024),
        "read_time_ms": int(reads * c.read_ms),
        "writes": writes,
        "bytes_written": int(writes * c.write_kb * 1024),
        "write_time_ms": int(writes * c.write_ms),
    }
    info = ObjectInfo(
        key="k",
        engine=c.engine,
        server="S",
        database="D",
        kind=c.kind,
        name="obj",
        size_bytes=int(c.size_gb * GB),
        current_tier="fc",
    )
    return ObjectWindow(info, Usage(HOUR, counters, c.extra))


CASES = {
    "hot random reads that miss cache -> flash": Case(
        "TW701", "random_read", reads_s=2140, writes_s=100, read_ms=17, reason="flash candidate"
    ),
    "busy log -> stays on fc": Case(
        "TW202",
        "log_write",
        kind="log_file",
        writes_s=800,
        write_kb=30,
        write_ms=1.2,
        reason="array cache absorbs",
        allowed=("fc",),
    ),
    "log with sustained slow writes -> flash allowed": Case(
        "TW201",
        "log_write",
        kind="log_file",
        writes_s=5000,
        write_ms=7,
        reason="not absorbing",
        allowed=("flash", "fc"),
    ),
    "quiet tempdb -> fc": Case(
        "TW302",
        "tempdb",
        kind="tempdb",
        reads_s=200,
        writes_s=200,
        read_ms=4,
        reason="no evidence for flash",
        allowed=("fc",),
    ),
    "tempdb under load -> flash allowed": Case(
        "TW301",
        "tempdb",
        kind="tempdb",
        reads_s=900,
        writes_s=900,
        read_ms=14,
        reason="tempdb under load",
        allowed=("flash", "fc"),
    ),
    "idle archive -> sata": Case(
        "TW401", "cold", reads_s=0.5, writes_s=0.1, size_gb=900, reason="cold", allowed=("sata",)
    ),
    "relatively cold (heat ratio) -> sata": Case(
        "TW401",
        "cold",
        reads_s=20,
        size_gb=500,
        db_heat=10_000.0,
        reason="0.01x the database average",
        allowed=("sata",),
    ),
    "write-heavy staging -> fc": Case(
        "TW501", "write_heavy", reads_s=50, writes_s=600, reason="write-heavy", allowed=("fc", "sata")
    ),
    "scans -> not flash": Case(
        "TW601",
        "sequential_read",
        reads_s=300,
        read_kb=256,
        reason="256.0 KB average read",
        allowed=("fc", "sata"),
    ),
    "DB2 prefetch-heavy -> not flash": Case(
        "TW601",
        "sequential_read",
        engine="db2",
        kind="tablespace",
        reads_s=300,
        read_kb=8,
        extra={
            "pool_data_l_reads": 10_000_000,
            "pool_data_p_reads": 1_000_000,
            "pool_async_data_reads": 800_000,
        },
        reason="80 % of physical reads are prefetch",
        allowed=("fc", "sata"),
    ),
    "mixed sizes": Case(
        "TW702", "random_mixed", reads_s=300, read_kb=40, reason="mixed I/O sizes", allowed=("fc", "sata")
    ),
    "random but slow rate": Case(
        "TW703", "random_read", reads_s=20, size_gb=1, reason="only 20 reads/s", allowed=("fc", "sata")
    ),
    "buffer pool hits -> no flash": Case(
        "TW704",
        "random_read",
        engine="db2",
        kind="tablespace",
        reads_s=500,
        extra={"pool_data_l_reads": 100_000_000, "pool_data_p_reads": 1_800_000, "pool_async_data_reads": 0},
        reason="already serves 98 % of reads",
        allowed=("fc", "sata"),
    ),
    "already fast (array cache) -> small benefit": Case(
        "TW705",
        "random_read",
        reads_s=1000,
        read_ms=1.5,
        reason="below the 2.0 ms minimum benefit",
        allowed=("fc", "sata"),
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_rule(name: str) -> None:
    c = CASES[name]
    w = window(c)
    f = compute_features(w, db_heat=c.db_heat, tier_read_ms=6.0)
    v = classify(w.info, f, POLICY)
    assert (v.rule, v.profile) == (c.rule, c.profile)
    assert v.allowed_tiers == c.allowed
    assert v.preferred_tier in v.allowed_tiers
    assert any(c.reason in r for r in v.reasons), v.reasons
    # every verdict carries the numbers a DBA checks
    assert any("average read" in r and "reads/s" in r for r in v.reasons)


def test_reason_numbers_format() -> None:
    c = CASES["hot random reads that miss cache -> flash"]
    w = window(c)
    v = classify(w.info, compute_features(w, db_heat=None), POLICY)
    assert "8.0 KB average read, 2,140 reads/s, 17.0 ms average read latency" in v.reasons[-1]


def test_db2_read_miss_ignores_prefetch() -> None:
    extra = {"pool_data_l_reads": 1000, "pool_data_p_reads": 500, "pool_async_data_reads": 400}
    w = ObjectWindow(
        ObjectInfo("k", "db2", "S", "D", "tablespace", "TS", size_bytes=GB),
        Usage(HOUR, {"reads": 100}, extra),
    )
    f = compute_features(w, db_heat=None)
    assert f.read_miss_ratio == pytest.approx(0.1)  # (500 - 400) / 1000
    assert f.prefetch_share == pytest.approx(0.8)


def test_cache_hit_estimate_from_latency() -> None:
    assert est_cache_hit_share(6.0, 6.0) == 0
    assert est_cache_hit_share(0.2, 6.0) == 1
    assert est_cache_hit_share(3.1, 6.0) == pytest.approx(0.5)
    assert est_cache_hit_share(None, 6.0) is None


def test_trend_ignores_partial_days_and_sees_growth() -> None:
    from datetime import UTC, datetime, timedelta

    def hourly(rates: list[float], start: datetime) -> tuple[tuple[datetime, Usage], ...]:
        return tuple(
            (start + timedelta(hours=h), Usage(HOUR, {"reads": int(r * HOUR), "writes": 0}))
            for h, r in enumerate(rates)
        )

    info = ObjectInfo("k", "sqlserver", "S", "D", "filegroup", "FG", size_bytes=GB)
    start = datetime(2026, 11, 1, 18, tzinfo=UTC)  # 6 hours of one day, 3 hours of the next
    partial = ObjectWindow(
        info, Usage(9 * HOUR, {"reads": 9 * 3600 * 100}), hourly([200] * 6 + [10] * 3, start)
    )
    assert compute_features(partial, db_heat=None).trend_pct_per_day is None
    days = [100.0] * 24 + [110.0] * 24 + [121.0] * 24  # +10 % a day
    growing = ObjectWindow(
        info, Usage(72 * HOUR, {"reads": 0}), hourly(days, datetime(2026, 11, 1, tzinfo=UTC))
    )
    trend = compute_features(growing, db_heat=None).trend_pct_per_day
    assert trend is not None and trend == pytest.approx(100 * 10.5 / 110.33, rel=0.01)


@pytest.mark.parametrize(
    ("tier", "read_ms", "rule", "finding"),
    [
        ("flash", 15.0, "TW801", "slow for its tier: 15.0 ms per read (normal on flash: 0-2 ms)"),
        ("flash", 0.8, "TW705", "normal for its tier: 0.8 ms per read (normal on flash: 0-2 ms)"),
        ("fc", 6.5, "TW701", "normal for its tier: 6.5 ms per read (normal on fc: 5-8 ms)"),
        ("fc", 17.0, "TW701", "slow for its tier: 17.0 ms per read (normal on fc: 5-8 ms)"),
    ],
)
def test_latency_is_judged_against_the_tier(tier: str, read_ms: float, rule: str, finding: str) -> None:
    c = Case(rule, "random_read", reads_s=2000, read_ms=read_ms, write_ms=1.0)
    w = window(c)
    w = ObjectWindow(ObjectInfo(**{**{f: getattr(w.info, f) for f in w.info.__slots__}, "current_tier": tier}),
                     w.total)  # fmt: skip
    v = classify(w.info, compute_features(w, db_heat=None), POLICY)
    assert v.rule == rule
    assert any(finding in r for r in v.reasons), v.reasons
    if rule == "TW801":
        assert v.allowed_tiers == ("flash",) and "storage problem" in v.reasons[0]
