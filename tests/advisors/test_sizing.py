"""The back-end I/O formula and device counts, checked against EMC's published arithmetic."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from advisors.sizing import RAID_FACTORS, devices_needed, physical_iops, raid_factor


@pytest.mark.parametrize(("level", "factor"), [(0, 1), (1, 2), (10, 2), (5, 4), (6, 6)])
def test_raid_factors(level: int, factor: int) -> None:
    assert raid_factor(level) == factor


@pytest.mark.parametrize("level", [2, 3, 4, 50, 60, -1, 7])
def test_other_raid_levels_are_rejected_naming_the_value(level: int) -> None:
    with pytest.raises(ValueError, match=rf"raid_level.*{level}"):
        raid_factor(level)


def test_emc_sql_server_flash_paper_arithmetic() -> None:
    # 11,700 host IOPS, 80 % reads: 9,360 reads + 2,340 writes x RAID factor
    assert physical_iops(11_700, 80, raid_level=5) == 18_720
    assert physical_iops(11_700, 80, raid_level=1) == 14_040
    assert physical_iops(11_700, 80, raid_level=10) == 14_040
    # 14,040 / 180 IOPS per fully stroked 15K drive = 78 drives
    assert devices_needed(14_040, device_iops=180) == 78
    # log (310 IOPS) removed, 25 % of reads served by the array cache: 6,834 + 4,556 = 11,390
    assert physical_iops(11_700 - 310, 80, raid_level=1, read_hit_pct=25) == pytest.approx(11_390)


def test_read_hits_reduce_reads_only() -> None:
    base = physical_iops(1_000, 60, raid_level=5)
    assert base == 600 + 400 * 4
    assert physical_iops(1_000, 60, raid_level=5, read_hit_pct=50) == 300 + 400 * 4
    assert physical_iops(1_000, 60, raid_level=5, read_hit_pct=100) == 400 * 4
    # all writes: read hits change nothing
    assert physical_iops(1_000, 0, raid_level=6, read_hit_pct=90) == 6_000


def test_raid_0_has_no_write_penalty() -> None:
    assert physical_iops(500, 30, raid_level=0) == 500


def test_devices_take_the_larger_of_performance_and_capacity() -> None:
    assert devices_needed(1_000, device_iops=180, capacity_gb=10_000, device_gb=300) == 34  # capacity
    assert devices_needed(20_000, device_iops=180, capacity_gb=1_000, device_gb=300) == 112  # IOPS
    assert devices_needed(0, capacity_gb=600, device_gb=300) == 2
    assert devices_needed(14_040) is None


def test_max_utilisation_sizes_for_headroom() -> None:
    # ISM: plan spindles at <= 70 % busy; 14,040 / (180 x 0.7) = 111.4 -> 112
    assert devices_needed(14_040, device_iops=180, max_utilisation=0.7) == 112


def test_exact_multiples_do_not_round_up_on_float_dust() -> None:
    assert devices_needed(0.1 + 0.2, device_iops=0.3) == 1
    assert devices_needed(physical_iops(11_700, 80, raid_level=10), device_iops=180) == 78


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: physical_iops(-1, 50, raid_level=5), "host_iops"),
        (lambda: physical_iops(100, 101, raid_level=5), "read_pct"),
        (lambda: physical_iops(100, -0.5, raid_level=5), "read_pct"),
        (lambda: physical_iops(100, 50, raid_level=5, read_hit_pct=120), "read_hit_pct"),
        (lambda: physical_iops(math.nan, 50, raid_level=5), "host_iops"),
        (lambda: physical_iops(100, 50, raid_level=3), "raid_level"),
        (lambda: devices_needed(-5, device_iops=180), "physical_iops"),
        (lambda: devices_needed(100, device_iops=0), "device_iops"),
        (lambda: devices_needed(100, device_iops=-3), "device_iops"),
        (lambda: devices_needed(100, capacity_gb=500), "device_gb"),
        (lambda: devices_needed(100, device_gb=500), "capacity_gb"),
        (lambda: devices_needed(100, capacity_gb=500, device_gb=0), "device_gb"),
        (lambda: devices_needed(100, device_iops=180, max_utilisation=0), "max_utilisation"),
        (lambda: devices_needed(100, device_iops=180, max_utilisation=1.5), "max_utilisation"),
    ],
)
def test_invalid_input_names_the_field(call: object, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        call()  # type: ignore[operator]


@given(
    host=st.floats(0, 1e6),
    read_pct=st.floats(0, 100),
    hit_pct=st.floats(0, 100),
)
def test_physical_io_is_bounded_by_the_write_penalty(host: float, read_pct: float, hit_pct: float) -> None:
    values = {
        lvl: physical_iops(host, read_pct, raid_level=lvl, read_hit_pct=hit_pct) for lvl in RAID_FACTORS
    }
    for v in values.values():
        assert v >= -1e-9
    # a higher write factor never lowers the back-end load
    assert values[0] <= values[1] + 1e-6 <= values[5] + 2e-6 <= values[6] + 3e-6
    assert values[1] == values[10]
    # never more than every host I/O times the worst factor
    assert values[6] <= host * 6 + 1e-6
