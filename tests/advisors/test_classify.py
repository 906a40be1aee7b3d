"""Profiles from the measured mix (one table-driven case each, its wording asserted), and the\nfeatures they rest on."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from advisors.classify import describe, latency_for_tier, profile_of
from advisors.features import GB, ObjectInfo, ObjectWindow, Usage, compute_features
from tests.fixture_policy import reference_policy

POLICY = reference_policy()  # hand arithmetic on its tier figures (tests/reference-policy.yaml)
HOUR = 3600.0


@dataclass
class Case:
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
    "hot random reads": Case("random_read", reads_s=2140, writes_s=100, read_ms=17, reason="random reads"),
    "busy log": Case(
        "log_write", kind="log_file", writes_s=800, write_kb=30, write_ms=1.2, reason="transaction log"
    ),
    "tempdb": Case("tempdb", kind="tempdb", reads_s=200, writes_s=200, read_ms=4, reason="tempdb: 400 I/O/s"),
    "idle archive": Case("cold", reads_s=0.5, writes_s=0.1, size_gb=900, reason="cold: 0.6 I/O/s"),
    "relatively cold (heat ratio)": Case(
        "cold", reads_s=20, size_gb=500, db_heat=10_000.0, reason="0.01x the database average"
    ),
    "write-heavy staging": Case(
        "write_heavy", reads_s=50, writes_s=600, reason="92 % of requests and 92 % of bytes"
    ),
    # flash wears by the byte: bulk 256 KB writes under small reads are write-heavy
    "bulk-loaded staging": Case(
        "write_heavy", reads_s=185, writes_s=60, write_kb=256, reason="24 % of requests and 91 % of bytes"
    ),
    # TPC-C (tests/advisors/scenarios/README.md): 64 % reads of 8 KB is OLTP, not write-heavy
    "TPC-C mix": Case("random_mixed", reads_s=640, writes_s=360, reason="64 % of requests are reads"),
    "scans": Case("sequential_read", reads_s=300, read_kb=256, reason="256 KB average read"),
    "DB2 prefetch-heavy": Case(
        "sequential_read",
        engine="db2",
        kind="tablespace",
        reads_s=300,
        extra={
            "pool_data_l_reads": 10_000_000,
            "pool_data_p_reads": 1_000_000,
            "pool_async_data_reads": 800_000,
        },
        reason="80 % of physical reads are prefetch",
    ),
    "mixed sizes": Case("random_mixed", reads_s=300, read_kb=40, reason="mixed read sizes: 40.0 KB"),
    # a high buffer-pool hit ratio names nothing: the physical reads are what they are
    "DB2 high buffer-pool hit ratio": Case(
        "random_read",
        engine="db2",
        kind="tablespace",
        reads_s=820,
        read_ms=10,
        extra={"pool_data_l_reads": 100_000_000, "pool_data_p_reads": 4_000_000, "pool_async_data_reads": 0},
        reason="random reads",
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_profile_from_the_measured_mix(name: str) -> None:
    c = CASES[name]
    w = window(c)
    profile, text = profile_of(w.info, compute_features(w, db_heat=c.db_heat), POLICY)
    assert profile == c.profile
    assert c.reason in text, text


def test_profiles_never_change_with_the_tiers() -> None:
    """A profile describes the workload: the same counters give the same profile whatever the
    tiers' limits, write budget or capacity."""
    c = CASES["write-heavy staging"]
    w = window(c)
    f = compute_features(w, db_heat=None)
    tiny = POLICY.model_copy(
        update={"tiers": [t.model_copy(update={"capacity_gb": 1.0}) for t in POLICY.tiers]}
    )
    assert profile_of(w.info, f, POLICY) == profile_of(w.info, f, tiny)


def test_reason_numbers_format() -> None:
    c = CASES["hot random reads"]
    w = window(c)
    assert describe(compute_features(w, db_heat=None)).startswith(
        "8.0 KB average read, 2,140 reads/s, 17.0 ms average read latency"
    )


def test_every_figure_reads_as_its_quantity() -> None:
    """The reasons read each figure as the pages do (advisors.quantities): rates with one decimal
    below 100 and thousands separators, sizes in binary units, latencies in ms (whole from 100),
    the heat ratio with two decimals; the policy's band as the policy writes it."""
    c = Case("random_read", reads_s=2140, writes_s=100.4, read_ms=17, size_gb=50, db_heat=107_520.0)
    w = window(c)
    f = compute_features(w, db_heat=c.db_heat)
    # heat: 2,240.4 I/O/s x 3,600 s / 50 GB = 161,308.8 I/O per GB-hour, 1.5003x the 107,520 average
    assert describe(f) == (
        "8.0 KB average read, 2,140 reads/s, 17.0 ms average read latency, 100 writes/s, "
        "heat 161,309 I/O per GB-hour (1.50x the database average)"
    )
    assert latency_for_tier(w.info, f, POLICY) == (
        "slow for its tier: 17.0 ms per read (normal on fc: 5-8 ms); 2.0 ms per write (normal on fc: 0-10 ms)",
        True,
    )
    # a trickle of writes is not 0, 1 MB reads are not "1,024.0 KB", 120 ms is whole
    c = Case("sequential_read", reads_s=2.54, writes_s=0.04, read_kb=1024, read_ms=120, db_heat=0.24)
    f = compute_features(window(c), db_heat=c.db_heat)
    assert describe(f) == (
        "1.0 MB average read, 2.5 reads/s, 120 ms average read latency, <0.1 writes/s, "
        "heat 186 I/O per GB-hour (774x the database average)"
    )
    c = CASES["busy log"]
    w = window(c)
    assert profile_of(w.info, compute_features(w, db_heat=None), POLICY) == (
        "log_write",
        "transaction log: 800 writes/s of 30.0 KB at 1.2 ms",
    )


def test_db2_read_miss_ignores_prefetch() -> None:
    extra = {"pool_data_l_reads": 1000, "pool_data_p_reads": 500, "pool_async_data_reads": 400}
    w = ObjectWindow(
        ObjectInfo("k", "db2", "S", "D", "tablespace", "TS", size_bytes=GB),
        Usage(HOUR, {"reads": 100}, extra),
    )
    f = compute_features(w, db_heat=None)
    assert f.read_miss_ratio == pytest.approx(0.1)  # (500 - 400) / 1000
    assert f.prefetch_share == pytest.approx(0.8)


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
    ("tier", "read_ms", "slow", "finding"),
    [
        ("flash", 15.0, True, "slow for its tier: 15.0 ms per read (normal on flash: 0-2 ms)"),
        ("flash", 0.8, False, "normal for its tier: 0.8 ms per read (normal on flash: 0-2 ms)"),
        ("fc", 6.5, False, "normal for its tier: 6.5 ms per read (normal on fc: 5-8 ms)"),
        ("fc", 17.0, True, "slow for its tier: 17.0 ms per read (normal on fc: 5-8 ms)"),
    ],
)
def test_latency_is_judged_against_the_tier(tier: str, read_ms: float, slow: bool, finding: str) -> None:
    c = Case("random_read", reads_s=2000, read_ms=read_ms, write_ms=1.0)
    w = window(c)
    info = ObjectInfo(**{**{f: getattr(w.info, f) for f in w.info.__slots__}, "current_tier": tier})
    text, is_slow = latency_for_tier(info, compute_features(w, db_heat=None), POLICY)
    assert is_slow == slow and text is not None and finding in text
