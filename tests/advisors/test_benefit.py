"""The benefit model (advisors/benefit.py) and the per-unit costs (advisors/units.py), with numbers
worked by hand from the default policy's tiers."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from advisors.benefit import (
    PAGE,
    array_cache_hits,
    io_mix,
    physics,
    queue_factor,
    utilisation,
    wait_on,
)
from advisors.features import GB, ObjectInfo, ObjectWindow, PeriodSplit, Usage, compute_features
from advisors.units import WHOLE, make_case, unit_costs, window_mixes
from tests.fixture_policy import reference_policy

POLICY = reference_policy()  # hand arithmetic on its tier figures (tests/reference-policy.yaml)
PHYS = physics(POLICY)
RULES = POLICY.classification
HOUR = 3600.0
KB = 1024


def usage(reads_s: float, read_kb: float, read_ms: float | None, writes_s: float = 0.0, write_kb: float = 8,
          write_ms: float | None = 2.0, seconds: float = HOUR, extra: dict[str, int] | None = None) -> Usage:  # fmt: skip
    reads, writes = int(reads_s * seconds), int(writes_s * seconds)
    return Usage(
        seconds,
        {
            "reads": reads,
            "bytes_read": int(reads * read_kb * KB),
            "read_time_ms": None if read_ms is None else int(reads * read_ms),
            "writes": writes,
            "bytes_written": int(writes * write_kb * KB),
            "write_time_ms": None if write_ms is None else int(writes * write_ms),
        },
        extra or {},
    )


def test_tier_physics_from_the_policy() -> None:
    flash, fc, sata = PHYS["flash"], PHYS["fc"], PHYS["sata"]
    # read_latency_ms is for a random 8 KB read: positioning = it minus 8 KB of transfer
    assert flash.positioning_ms == pytest.approx(1.0 - 8192 / (350 * 2**20) * 1000)
    assert fc.positioning_ms == pytest.approx(6.0 - 8192 / (100 * 2**20) * 1000)
    assert fc.random_miss_ms(PAGE) == pytest.approx(6.0)
    assert (flash.seeks, fc.seeks, sata.seeks) == (False, True, True)
    # the price of a GB in I/O-wait terms: price_weight x cost_per_gb
    assert (flash.price_ms_per_gb, fc.price_ms_per_gb, sata.price_ms_per_gb) == pytest.approx(
        (2.0, 0.5, 0.05)
    )


def test_a_sequential_read_gains_little_on_flash() -> None:
    flash, fc = PHYS["flash"], PHYS["fc"]
    read = 256 * KB
    assert fc.sequential_ms(read) == pytest.approx(0.1 * fc.positioning_ms + 2.5)
    assert flash.sequential_ms(read) == pytest.approx(flash.positioning_ms + read / (350 * 2**20) * 1000)
    saving = fc.sequential_ms(read) - flash.sequential_ms(read)
    assert 1.0 < saving < POLICY.benefit.min_saving_ms_per_io  # ~1.4 ms: below the 2 ms minimum
    assert fc.random_miss_ms(PAGE) - flash.random_miss_ms(PAGE) == pytest.approx(5.0, abs=0.1)


@pytest.mark.parametrize(
    ("read_kb", "sequential_share", "random_kb", "sequential_kb"),
    [(8, 0.0, 8, None), (16, 0.0, 16, None), (40, 0.5, 16, 64), (64, 1.0, None, 64), (256, 1.0, None, 256)],
)
def test_sqlserver_reads_split_by_their_average_size(
    read_kb: float, sequential_share: float, random_kb: float | None, sequential_kb: float | None
) -> None:
    mix = io_mix(usage(100, read_kb, 5.0), RULES)
    assert mix is not None
    assert mix.sequential_share == pytest.approx(sequential_share)
    assert mix.reads == pytest.approx(100)
    if random_kb is not None:
        assert mix.random_read_bytes == pytest.approx(random_kb * KB)
    if sequential_kb is not None:
        assert mix.sequential_read_bytes == pytest.approx(sequential_kb * KB)
    # the split keeps the bytes read
    total = mix.random_reads * mix.random_read_bytes + mix.sequential_reads * mix.sequential_read_bytes
    assert total == pytest.approx(100 * read_kb * KB)


def test_db2_prefetch_requests_are_the_sequential_reads() -> None:
    # 900 sync page reads + 100 prefetch requests of 16 pages of 16 KB, per second
    extra = {
        "pool_data_p_reads": 900 * 3600 + 1600 * 3600,
        "pool_async_data_reads": 1600 * 3600,
        "vectored_ios": 100 * 3600,
        "pages_from_vectored_ios": 1600 * 3600,
    }
    u = Usage(
        HOUR,
        {
            "reads": 1000 * 3600,
            "bytes_read": 2500 * 3600 * 16 * KB,
            "read_time_ms": 1000 * 3600 * 4,
            "writes": 0,
        },
        extra,
    )
    mix = io_mix(u, RULES)
    assert mix is not None
    assert mix.sequential_reads == pytest.approx(100) and mix.random_reads == pytest.approx(900)
    assert mix.sequential_read_bytes == pytest.approx(16 * 16 * KB)
    assert mix.random_read_bytes == pytest.approx(16 * KB)


@pytest.mark.parametrize(("measured", "hits"), [(6.0, 0.0), (0.2, 1.0), (3.1, 0.5), (12.0, 0.0)])
def test_array_cache_hits_make_the_measured_latency_fit(measured: float, hits: float) -> None:
    mix = io_mix(usage(500, 8, measured), RULES)
    assert mix is not None
    assert array_cache_hits(mix, PHYS["fc"], POLICY.benefit.array_cache_hit_ms) == pytest.approx(
        hits, abs=0.01
    )


def test_measured_where_it_is_predicted_elsewhere() -> None:
    mix = io_mix(usage(1000, 8, 14.0, writes_s=100, write_ms=3.0), RULES)
    assert mix is not None
    here = wait_on(mix, PHYS["fc"], current=PHYS["fc"], hit_share=0.0, utilisation=0.5, policy=POLICY)
    assert here.measured and here.read_ms == pytest.approx(14.0)
    assert here.wait_ms_per_s == pytest.approx(1000 * 14.0 + 100 * 3.0, rel=1e-3)
    there = wait_on(mix, PHYS["flash"], current=PHYS["fc"], hit_share=0.0, utilisation=0.0, policy=POLICY)
    assert not there.measured and there.read_ms == pytest.approx(1.0) and there.write_ms == pytest.approx(1.5)
    busy = wait_on(mix, PHYS["flash"], current=PHYS["fc"], hit_share=0.0, utilisation=0.5, policy=POLICY)
    assert busy.read_ms == pytest.approx(2.0)  # 1 / (1 - 0.5)
    # RAID 5: every write costs 4 back-end I/Os
    assert there.backend_iops == pytest.approx(1000 + 100 * 4)


def test_queueing_is_capped_and_utilisation_is_load_over_iops() -> None:
    assert queue_factor(0.0, 0.9) == 1.0
    assert queue_factor(0.99, 0.9) == pytest.approx(10.0)
    u = utilisation([("fc", 4320.0), ("fc", 4320.0), ("nowhere", 1e9)], PHYS)
    assert u["fc"] == pytest.approx(1.0) and u["flash"] == 0.0


def _unit(name: str, tier: str, u: Usage, size_gb: float, by_hour: tuple[tuple[datetime, Usage], ...] = ()) -> ObjectWindow:  # fmt: skip
    path = {"flash": "E:\\flash\\", "fc": "F:\\fc\\", "sata": "S:\\sata\\"}[tier]
    info = ObjectInfo(f"DB/filegroup/{name}", "sqlserver", "S", "DB", "filegroup", name,
                      size_bytes=int(size_gb * GB), current_tier=tier, physical_name=f"{path}{name}.ndf")  # fmt: skip
    return ObjectWindow(info, u, by_hour)


def _costs(w: ObjectWindow):  # type: ignore[no-untyped-def]
    case = make_case(w, compute_features(w, db_heat=None), POLICY, PHYS, now=None)
    assert case is not None
    return case, unit_costs(case, PHYS, {}, POLICY)


def test_a_promotion_must_save_the_minimum_per_io() -> None:
    hot = _unit("HOT", "fc", usage(1000, 8, 12.0), 100)
    _, costs = _costs(hot)
    assert "flash" in costs.allowed and not costs.gated
    assert costs.change["flash"] == pytest.approx(1000 * (1.0 - 12.0), rel=0.01)
    scan = _unit("SCAN", "fc", usage(400, 256, 3.1), 100)
    _, costs = _costs(scan)
    assert "flash" not in costs.allowed
    assert 1.0 < costs.gated["flash"][0] < 2.0 and costs.gated["flash"][1] == "fc"  # ~1.4 ms per 256 KB read


def test_costs_carry_the_price_and_the_move_cost() -> None:
    w = _unit("WARM", "fc", usage(50, 8, 6.0), 200)
    case, costs = _costs(w)
    stay = costs.cost["fc"]
    assert stay == pytest.approx(costs.wait("fc").wait_ms_per_s + 0.5 * 200)
    sata = costs.cost["sata"]
    assert sata == pytest.approx(stay + costs.change["sata"] + (0.05 - 0.5) * 200 + 0.1 * 200, abs=1e-5)
    assert case.size_gb == pytest.approx(200)


def test_a_demotion_is_judged_on_the_window_least_in_its_favour() -> None:
    end = datetime(2026, 11, 20, tzinfo=UTC)
    quiet = usage(0.5, 8, 6.0, seconds=HOUR)
    hours = tuple((end - timedelta(hours=h), quiet) for h in range(48, 0, -1))
    total = Usage(48 * HOUR, {k: (v or 0) * 48 for k, v in quiet.counters.items()}, {})
    busy_period = usage(200, 8, 6.0, seconds=24 * HOUR)
    w = _unit("LEDGER", "fc", total, 20, hours)
    w = ObjectWindow(w.info, w.total, w.by_hour,
                     period=PeriodSplit("month-end", "month_end", date(2026, 10, 29), ObjectWindow(w.info, busy_period), 3.0))  # fmt: skip
    mixes = window_mixes(w, POLICY)
    assert next(iter(mixes)) == WHOLE and any(label.startswith("the 'month-end' period") for label in mixes)
    _, costs = _costs(w)
    assert costs.deciding["sata"].startswith("the 'month-end' period")
    assert costs.change["sata"] == pytest.approx(200 * (14.0 - 6.0), rel=0.05)
