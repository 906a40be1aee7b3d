"""Maintenance kept out of heat (issue #9): declared windows and detected bursts, table-driven,
with the reason text asserted."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta

import pytest

from advisors.advise import Advice, advise
from advisors.features import GB, ObjectInfo, ObjectWindow, Usage, compute_features
from advisors.maintenance import BURST, in_window, prepare_window, split_maintenance
from policies.loader import load_policy
from policies.model import Policy
from policies.workload import MaintenanceWindow

POLICY = load_policy()
DAY0 = datetime(2026, 3, 2, tzinfo=UTC)  # a Monday
HOUR = 3600.0


def usage(reads: float, read_kb: float, writes: float = 0.0, read_ms: float = 14.0) -> Usage:
    r, w = int(reads * HOUR), int(writes * HOUR)
    return Usage(
        HOUR,
        {
            "reads": r,
            "bytes_read": int(r * read_kb * 1024),
            "read_time_ms": int(r * read_ms),
            "writes": w,
            "bytes_written": w * 8192,
            "write_time_ms": w * 4,
        },
    )


def week(
    special_hours: set[int], special: Usage, normal: Usage, days: int = 7
) -> list[tuple[datetime, Usage]]:
    """Hourly buckets over `days` days; UTC hours in `special_hours` get `special`."""
    out = []
    for h in range(days * 24):
        t = DAY0 + timedelta(hours=h)
        out.append((t, special if t.hour in special_hours else normal))
    return out


def window_of(
    buckets: list[tuple[datetime, Usage]], *, name: str = "FG_ARCHIVE", database: str = "Sales"
) -> ObjectWindow:
    total = Usage(0.0, {})
    counters: dict[str, int | None] = {}
    for _, u in buckets:
        for k, v in u.counters.items():
            counters[k] = (counters.get(k) or 0) + (v or 0)
    total = Usage(sum(u.seconds for _, u in buckets), counters)
    info = ObjectInfo(key=f"{database}/filegroup/{name}", engine="sqlserver", server="S", database=database,
                      kind="filegroup", name=name, size_bytes=1600 * GB, current_tier="sata")  # fmt: skip
    return ObjectWindow(info, total, tuple(buckets))


def advised(w: ObjectWindow, policy: Policy) -> Advice:
    """The whole pipeline on one unit (it leaves maintenance out itself)."""
    [a] = advise([w], policy, now=DAY0 + timedelta(days=7), curve_points=0).objects
    return a


def with_windows(*windows: MaintenanceWindow) -> Policy:
    return POLICY.model_copy(update={"maintenance_windows": list(windows)})


BACKUP = MaintenanceWindow(name="nightly backup", kind="backup", start=time(1), end=time(3))


@dataclass
class Case:
    policy: Policy
    special_hours: set[int]
    special: Usage
    rule: str
    reason: str
    left_out_hours: float
    normal_read_kb: float = 64
    extra: dict[str, float] = field(default_factory=dict)


CASES = {
    "detected backup burst (1 MB reads) -> TW102": Case(
        POLICY, {2}, usage(150, 1024), "TW102",
        "96 % of this filegroup's reads fell in hours of large sequential reads (7 h, avg 1.0 MB per read",
        7,
    ),
    "declared backup window -> TW101, named": Case(
        with_windows(BACKUP), {2}, usage(150, 1024), "TW101",
        "of this filegroup's reads fell in the 'nightly backup' backup window (",
        # buckets 01, 02 and 03 may hold I/O of 01:00-03:00 (labelled by their intervals' end)
        7 * 3,
    ),
    "declared DBCC window with ordinary-sized reads (no burst) -> TW101": Case(
        with_windows(MaintenanceWindow(name="nightly checkdb", kind="dbcc", start=time(22), end=time(2))),
        {23}, usage(400, 256), "TW101", "fell in the 'nightly checkdb' dbcc window", 7 * 5,
    ),
    "window for another database -> no exclusion of its hours": Case(
        with_windows(BACKUP.model_copy(update={"database": ["Other*"]})), {2}, usage(150, 256), "", "", 0,
    ),
    "burst detection off and no window -> nothing left out": Case(
        POLICY.model_copy(update={"burst_detection": POLICY.burst_detection.model_copy(update={"enabled": False})}),
        {2}, usage(150, 1024), "", "", 0,
    ),
    "large reads but too few of them (a trickle) -> not a burst": Case(POLICY, {2}, usage(0.02, 1024), "", "", 0),
}  # fmt: skip


@pytest.mark.parametrize("name", list(CASES))
def test_maintenance_is_left_out_of_heat(name: str) -> None:
    c = CASES[name]
    w = window_of(week(c.special_hours, c.special, usage(0.3, c.normal_read_kb)))
    split = split_maintenance(w, c.policy)
    a = advised(w, c.policy)
    f = a.features
    if not c.rule:
        assert split.maintenance is None and split is w
        assert not any(r.startswith("TW10") for r in a.reasons)
        return
    assert split.maintenance is not None
    assert split.maintenance.hours == pytest.approx(c.left_out_hours)
    note = next(r for r in a.reasons if r.startswith(c.rule))
    assert c.reason in note and "were left out of its heat and rates" in note, note
    # the figures are the workload's: 0.3 reads/s of 64 KB, cold, whatever the backup read
    assert f.read_iops == pytest.approx(0.3, rel=0.01)
    assert f.avg_read_bytes == pytest.approx(64 * 1024, rel=0.01)
    assert a.verdict.profile == "cold" and a.recommended_tier == "sata"
    assert len(split.by_hour) == 7 * 24 - c.left_out_hours


def test_without_the_split_the_backup_would_dominate_the_figures() -> None:
    w = window_of(week({2}, usage(150, 1024), usage(0.3, 64)))
    f = compute_features(w, db_heat=5000.0)
    assert f.read_iops > 6 and f.avg_read_bytes is not None and f.avg_read_bytes > 900 * 1024


def test_every_hour_maintenance_leaves_the_figures_alone_and_says_so() -> None:
    w = window_of(week(set(range(24)), usage(150, 1024), usage(150, 1024)))
    split = split_maintenance(w, POLICY)
    assert split.total == w.total and split.maintenance is not None
    a = advised(w, POLICY)
    assert any("TW101 every hour of the window is maintenance: nothing was left out" in r for r in a.reasons)


def test_db2_burst_needs_prefetch_where_the_counters_show_it() -> None:
    big = usage(150, 1024)
    sync_reads = Usage(HOUR, big.counters, {"pool_data_p_reads": 1000, "pool_async_data_reads": 100})
    prefetched = Usage(HOUR, big.counters, {"pool_data_p_reads": 1000, "pool_async_data_reads": 950})
    for u, left_out in ((sync_reads, False), (prefetched, True)):
        w = window_of(week({2}, u, usage(0.3, 64)))
        w = ObjectWindow(
            ObjectInfo("ORDERS/tablespace/TS", "db2", "D", "ORDERS", "tablespace", "TS", size_bytes=100 * GB),
            w.total, w.by_hour,
        )  # fmt: skip
        assert (split_maintenance(w, POLICY).maintenance is not None) is left_out


WINDOW_CASES = [
    # (window, bucket label (UTC), in the window?)
    (BACKUP, datetime(2026, 3, 2, 2, tzinfo=UTC), True),
    (BACKUP, datetime(2026, 3, 2, 1, tzinfo=UTC), True),  # may hold 00:00-02:00: overlaps
    (BACKUP, datetime(2026, 3, 2, 0, tzinfo=UTC), False),  # 23:00-01:00 at most
    (BACKUP, datetime(2026, 3, 2, 4, tzinfo=UTC), False),  # 03:00-05:00 at the earliest
    (BACKUP, datetime(2026, 3, 2, 12, tzinfo=UTC), False),
    # crossing midnight, Sundays only: Sunday 22:00 to Monday 02:00
    (MaintenanceWindow(name="x", kind="index", days=["sun"], start=time(22), end=time(2)),
     datetime(2026, 3, 2, 1, tzinfo=UTC), True),  # Monday 01:00 belongs to Sunday's window
    (MaintenanceWindow(name="x", kind="index", days=["sun"], start=time(22), end=time(2)),
     datetime(2026, 3, 3, 1, tzinfo=UTC), False),  # Tuesday 01:00: Monday has no window
    # time zone: 01:00-02:00 in New York (EST, UTC-5) is 06:00-07:00 UTC
    (MaintenanceWindow(name="x", kind="etl", start=time(1), end=time(2), time_zone="America/New_York"),
     datetime(2026, 3, 2, 6, tzinfo=UTC), True),
    (MaintenanceWindow(name="x", kind="etl", start=time(1), end=time(2), time_zone="America/New_York"),
     datetime(2026, 3, 2, 2, tzinfo=UTC), False),
]  # fmt: skip


@pytest.mark.parametrize(("w", "hour", "expected"), WINDOW_CASES)
def test_declared_windows_by_day_time_and_zone(w: MaintenanceWindow, hour: datetime, expected: bool) -> None:
    assert in_window(w, hour) is expected


def test_prepare_window_is_a_no_op_without_hourly_data() -> None:
    w = window_of([])
    assert prepare_window(w, POLICY) is w
    assert BURST == "large sequential reads"
