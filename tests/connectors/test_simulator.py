"""The simulated fleet: deterministic, monotone, restarts where it says, and its counters tell the truth."""

from __future__ import annotations

import math
import ntpath
from collections.abc import Mapping
from datetime import UTC, date, datetime, timedelta
from itertools import pairwise

import pytest

from connectors.db2 import with_container_locations
from connectors.records import CORE_COUNTERS, MONITOR_ONLY_KINDS, Engine, ObjectKind, ObjectSample, Snapshot
from connectors.shapes import (
    DB2_BUFFERPOOLS,
    DB2_CONTAINERS,
    DB2_TABLE_PARTITIONS,
    DB2_TABLESPACES,
    SQLSERVER_BUFFER_MANAGER,
    SQLSERVER_PARTITIONS,
    ColumnType,
    Shape,
)
from connectors.simulator import ObjectTruth, SimulatedFleet, SimulatedInstance, demo_fleet
from connectors.simulator_workload import SHIPPED_POLICY
from policies.loader import DEFAULT_POLICY, load_policy

ORIGIN = datetime(2025, 6, 12, 8, 30, tzinfo=UTC)
RESTART = ORIGIN + timedelta(hours=30)
FIVE_MIN = timedelta(minutes=5)
SHIPPED = load_policy()  # policies/default.yaml: the policy the demo ships with


@pytest.fixture(scope="module")
def fleet() -> SimulatedFleet:
    return demo_fleet(ORIGIN)


@pytest.fixture(scope="module")
def sql(fleet: SimulatedFleet) -> SimulatedInstance:
    return fleet.instance("SQLPROD01")


@pytest.fixture(scope="module")
def db2(fleet: SimulatedFleet) -> SimulatedInstance:
    return fleet.instance("DB2PROD01")


def by_key(snapshot: Snapshot) -> dict[str, ObjectSample]:
    return {s.ref.key: s for s in snapshot.samples}


def values(sample: ObjectSample) -> dict[str, int]:
    """Every non-None counter of a sample, core and extra."""
    out = {k: v for k, v in sample.counters.items() if v is not None}
    return out | {f"extra.{k}": v for k, v in sample.extra.items()}


def day_rates(instance: SimulatedInstance, start: datetime) -> tuple[dict[str, dict[str, int]], float]:
    """Per-object counter deltas over exactly one day (the diurnal sine integrates to zero)."""
    a, b = by_key(instance.snapshot(start)), by_key(instance.snapshot(start + timedelta(days=1)))
    assert a.keys() == b.keys()
    return {k: {n: values(b[k])[n] - v for n, v in values(a[k]).items()} for k in a}, 86_400.0


def monitor_only_keys(instance: SimulatedInstance) -> set[str]:
    return {s.ref.key for s in instance.snapshot(ORIGIN).samples if s.ref.kind in MONITOR_ONLY_KINDS}


def close(measured: float, truth: float, *, rel: float, events: float) -> bool:
    """Equal within `rel`, allowing the ±1 of flooring each cumulative counter to `events` counts."""
    return math.isclose(measured, truth, rel_tol=rel + 2 / max(events, 1), abs_tol=1e-9)


# --- determinism ------------------------------------------------------------------------------


def test_same_seed_and_origin_give_identical_snapshots_in_any_call_order() -> None:
    times = [ORIGIN, ORIGIN + timedelta(hours=7, minutes=13), RESTART + timedelta(hours=5)]
    first = demo_fleet(ORIGIN)
    second = demo_fleet(ORIGIN)
    forward = [first.snapshots(t) for t in times]
    backward = [second.snapshots(t) for t in reversed(times)][::-1]
    assert forward == backward
    assert first.instances[0].truth() == second.instances[0].truth()


def test_different_seeds_differ() -> None:
    at = ORIGIN + timedelta(hours=3)
    a = SimulatedFleet(seed=7, origin=ORIGIN).snapshots(at)
    b = SimulatedFleet(seed=8, origin=ORIGIN).snapshots(at)
    assert [s.ref.key for s in a[0].samples] == [s.ref.key for s in b[0].samples]
    assert a != b


# --- monotone counters and the restart --------------------------------------------------------


@pytest.mark.parametrize("name", ["SQLPROD01", "DB2PROD01"])
def test_counters_never_decrease_between_restarts_over_three_days(fleet: SimulatedFleet, name: str) -> None:
    instance = fleet.instance(name)
    previous: dict[str, dict[str, int]] | None = None
    start: datetime | None = None
    at, checked = ORIGIN, 0
    while at <= ORIGIN + timedelta(days=3):
        snap = instance.snapshot(at)
        current = {s.ref.key: values(s) for s in snap.samples}
        if previous is not None and snap.instance_start == start:
            for key, counters in current.items():
                for counter, value in counters.items():
                    assert isinstance(value, int)
                    assert value >= previous[key][counter], (at, key, counter)
                    checked += 1
        previous, start, at = current, snap.instance_start, at + FIVE_MIN
    assert checked > 100_000


def test_sql_server_restarts_once_at_origin_plus_30h_and_counters_restart_from_zero(
    sql: SimulatedInstance, db2: SimulatedInstance
) -> None:
    assert sql.restarts() == [RESTART]
    starts: dict[datetime, datetime | None] = {}
    at = ORIGIN
    while at <= ORIGIN + timedelta(days=3):
        starts[at] = sql.snapshot(at).instance_start
        at += FIVE_MIN
    changes = [t for t in starts if t > ORIGIN and starts[t] != starts[t - FIVE_MIN]]
    assert changes == [RESTART]
    boot = starts[ORIGIN]
    assert boot is not None and boot < ORIGIN
    assert starts[RESTART] == RESTART

    before, after = by_key(sql.snapshot(RESTART - FIVE_MIN)), by_key(sql.snapshot(RESTART))
    assert all(v == 0 for s in after.values() for v in values(s).values())
    assert (before["Sales/file/3"].counters["reads"] or 0) > 1_000_000  # a drop, not a standstill
    assert db2.restarts() == []
    assert db2.snapshot(ORIGIN).instance_start == db2.snapshot(ORIGIN + timedelta(days=3)).instance_start


def test_times_before_origin_or_without_zone_are_refused(fleet: SimulatedFleet) -> None:
    with pytest.raises(ValueError, match="before"):
        fleet.snapshots(ORIGIN - timedelta(seconds=1))
    with pytest.raises(ValueError, match="time zone"):
        fleet.snapshots(datetime(2025, 6, 13, 0, 0))
    with pytest.raises(ValueError):
        SimulatedFleet(origin=datetime(2025, 6, 12))


# --- rates recovered from two snapshots equal the truth ---------------------------------------


@pytest.mark.parametrize("name", ["SQLPROD01", "DB2PROD01"])
def test_rates_over_a_day_equal_the_ground_truth(fleet: SimulatedFleet, name: str) -> None:
    instance = fleet.instance(name)
    deltas, seconds = day_rates(instance, ORIGIN + timedelta(minutes=20))  # ends before the restart
    truth = instance.truth()
    files = 0
    for key, d in deltas.items():
        if key not in truth:
            assert key in monitor_only_keys(instance), key
            continue  # buffer pools, Buffer Manager, containers: checked below
        t = truth[key]
        if "reads" not in d:
            continue  # partitions: checked below
        files += 1
        reads, writes = d["reads"], d["writes"]
        # a whole day holds one nightly backup: the truth's rates are the workload's without it
        assert close(reads / seconds, t.read_iops + t.maintenance_read_iops, rel=1e-4, events=reads), key
        assert close(writes / seconds, t.write_iops, rel=1e-4, events=writes), key
        if reads > 1000 and t.maintenance is None:
            assert close(d["bytes_read"] / reads, t.avg_read_bytes, rel=1e-3, events=reads), key
            assert close(d["read_time_ms"] / reads, t.read_ms, rel=1e-3, events=reads), key
        if writes > 1000:
            assert close(d["bytes_written"] / writes, t.avg_write_bytes, rel=1e-3, events=writes), key
            assert close(d["write_time_ms"] / writes, t.write_ms, rel=1e-3, events=writes), key
    assert files >= 10


def test_sql_server_partition_counters_show_the_truth(sql: SimulatedInstance) -> None:
    deltas, seconds = day_rates(sql, ORIGIN)
    truth = sql.truth()
    orders = [k for k in deltas if k.startswith("Sales/partition/dbo.Orders/")]
    assert len(orders) == 24
    for key in orders:
        d, t = deltas[key], truth[key]
        waits = d["extra.page_io_latch_wait_count"]
        lookups = d["extra.singleton_lookup_count"] + d["extra.range_scan_count"]
        assert close(waits / seconds, t.read_iops, rel=1e-4, events=waits), key
        assert t.read_miss_ratio is not None
        assert close(waits / lookups, t.read_miss_ratio, rel=1e-3, events=waits), key
        assert close(d["extra.page_io_latch_wait_in_ms"] / waits, t.read_ms, rel=1e-3, events=waits), key


def test_db2_ratios_show_the_truth(db2: SimulatedInstance) -> None:
    deltas, _ = day_rates(db2, ORIGIN)
    truth = db2.truth()
    for key, d in deltas.items():
        if key in monitor_only_keys(db2):
            continue
        t = truth[key]
        if "/tablespace/" in key:
            logical = sum(v for k, v in d.items() if k.endswith("_l_reads"))
            physical = sum(v for k, v in d.items() if k.endswith("_p_reads"))
            prefetched = sum(
                v for k, v in d.items() if k.startswith("extra.pool_async_") and k.endswith("_reads")
            )
            assert t.read_miss_ratio is not None
            assert close((physical - prefetched) / logical, t.read_miss_ratio, rel=1e-3, events=physical), key
            if t.prefetch_share is not None:
                assert close(prefetched / physical, t.prefetch_share, rel=1e-3, events=prefetched), key
        elif "/partition/" in key:
            p, lr = d["extra.object_data_p_reads"], d["extra.object_data_l_reads"]
            assert t.read_miss_ratio is not None
            assert close(p / lr, t.read_miss_ratio, rel=1e-3, events=p), key


# --- DB2 counters are consistent --------------------------------------------------------------


def db2_core(extra: Mapping[str, int], page_size: int) -> dict[str, int]:
    """The core-counter formula of records.py, written out independently of the simulator."""
    p = sum(v for k, v in extra.items() if k.endswith("_p_reads"))
    asyn = sum(v for k, v in extra.items() if k.startswith("pool_async_") and k.endswith("_reads"))
    pool_writes = sum(v for k, v in extra.items() if k.startswith("pool_") and k.endswith("_writes"))
    return {
        "reads": p - asyn + extra["vectored_ios"] + extra["block_ios"] + extra["direct_read_reqs"],
        "bytes_read": p * page_size + extra["direct_reads"] * 512,
        "read_time_ms": extra["pool_read_time"] + extra["direct_read_time"],
        "writes": pool_writes + extra["direct_write_reqs"],
        "bytes_written": pool_writes * page_size + extra["direct_writes"] * 512,
        "write_time_ms": extra["pool_write_time"] + extra["direct_write_time"],
    }


PAGE_SIZES = {"TEMPSPACE1": 16_384, "TS_HOT_IDX": 8192, "TS_SCAN": 16_384, "TS_CUR": 16_384}


@pytest.mark.parametrize("hours", [0, 0.1, 7.3, 31, 71.9])
def test_db2_table_space_counters_are_consistent(db2: SimulatedInstance, hours: float) -> None:
    spaces = [s for s in db2.snapshot(ORIGIN + timedelta(hours=hours)).samples if s.ref.tablespace]
    spaces = [s for s in spaces if s.ref.kind in (ObjectKind.TABLESPACE, ObjectKind.TEMPDB)]
    assert len(spaces) == 9
    for s in spaces:
        x = s.extra
        for kind in ("data", "index"):
            assert x[f"pool_async_{kind}_reads"] <= x[f"pool_{kind}_p_reads"] <= x[f"pool_{kind}_l_reads"]
        assert x["pool_temp_data_p_reads"] <= x["pool_temp_data_l_reads"]
        assert x["pool_async_read_time"] <= x["pool_read_time"]
        page = PAGE_SIZES.get(s.ref.name, 16_384)
        assert dict(s.counters) == db2_core(x, page), s.ref.key
    hot = next(s for s in spaces if s.ref.name == "TS_HOT_IDX")
    assert hours == 0 or hot.extra["pool_index_p_reads"] > 0


def counter_columns(shape: Shape, *, required_only: bool = False) -> set[str]:
    return {
        c.name for c in shape.columns if c.type is ColumnType.COUNTER and (c.required or not required_only)
    }


def test_extras_use_the_column_names_of_the_shapes(sql: SimulatedInstance, db2: SimulatedInstance) -> None:
    at = ORIGIN + timedelta(hours=2)
    for s in [*sql.snapshot(at).samples, *db2.snapshot(at).samples]:
        sizes: set[str]
        if s.ref.kind is ObjectKind.INSTANCE:
            shape, sizes = SQLSERVER_BUFFER_MANAGER, set()
        elif s.ref.kind is ObjectKind.BUFFER_POOL:
            shape, sizes = DB2_BUFFERPOOLS, set()
        elif s.ref.kind is ObjectKind.CONTAINER:
            shape, sizes = DB2_CONTAINERS, set()
        elif s.ref.kind is ObjectKind.PARTITION and s.ref.engine is Engine.SQLSERVER:
            shape, sizes = SQLSERVER_PARTITIONS, {"rows", "used_pages"}
        elif s.ref.kind is ObjectKind.PARTITION:
            shape, sizes = DB2_TABLE_PARTITIONS, {"data_object_l_pages", "index_object_l_pages"}
        elif s.ref.engine is Engine.DB2 and s.ref.kind is not ObjectKind.LOG_FILE:
            shape, sizes = DB2_TABLESPACES, {"tbsp_used_pages", "tbsp_total_pages"}
        else:  # files and the DB2 log: the six core counters, nothing else
            assert s.extra == {} and set(s.counters) == set(CORE_COUNTERS)
            assert all(v is not None for v in s.counters.values())
            continue
        assert set(s.extra) <= counter_columns(shape) - sizes, s.ref.key
        assert counter_columns(shape, required_only=True) - sizes <= set(s.extra), s.ref.key
        if s.ref.kind is ObjectKind.PARTITION or s.ref.kind in MONITOR_ONLY_KINDS:
            assert set(s.counters) == set(CORE_COUNTERS) and all(v is None for v in s.counters.values())


# --- the partitioned Orders table -------------------------------------------------------------


@pytest.mark.parametrize(
    ("origin", "first_month", "last_month"),
    [
        (ORIGIN, date(2023, 7, 1), date(2025, 6, 1)),
        (datetime(2026, 1, 3, tzinfo=UTC), date(2024, 2, 1), date(2026, 1, 1)),
    ],
)
def test_orders_has_24_monthly_range_right_partitions_ending_at_the_origin_month(
    origin: datetime, first_month: date, last_month: date
) -> None:
    sql = demo_fleet(origin).instance("SQLPROD01")
    snap = sql.snapshot(origin)
    parts = sorted(
        (s.ref for s in snap.samples if s.ref.table_name == "dbo.Orders"),
        key=lambda r: r.partition_number or 0,
    )
    files = {s.ref.filegroup: s.ref for s in snap.samples if s.ref.kind is ObjectKind.DATA_FILE}
    assert [p.partition_number for p in parts] == list(range(1, 25))
    months = [
        date(first_month.year + (first_month.month - 1 + i) // 12, (first_month.month - 1 + i) % 12 + 1, 1)
        for i in range(25)
    ]
    assert months[23] == last_month
    for i, p in enumerate(parts):
        assert p.kind is ObjectKind.PARTITION and p.key == f"Sales/partition/dbo.Orders/1/{i + 1}"
        assert (p.partition_scheme, p.partition_function, p.range_right) == (
            "ps_OrderMonth",
            "pf_OrderMonth",
            True,
        )
        assert p.range_low == (None if i == 0 else months[i].isoformat())
        assert p.range_high == (None if i == 23 else months[i + 1].isoformat())
        assert p.filegroup == f"FG_ORD_{months[i]:%Y%m}"
        assert files[p.filegroup].physical_name is not None  # one data file per monthly filegroup
        assert p.rows and p.size_bytes and p.size_bytes > 10**9
    # the newest 11 months save more than flash's price per GB (docs/demo-fleet.md), the rest are cold
    assert [t.intended_tier for t in (sql.truth()[p.key] for p in parts)] == ["sata"] * 13 + ["flash"] * 11


def test_orders_heat_strictly_decreases_with_age(sql: SimulatedInstance) -> None:
    deltas, seconds = day_rates(sql, ORIGIN)
    refs = {s.ref.key: s.ref for s in sql.snapshot(ORIGIN).samples}
    newest_first = [f"Sales/partition/dbo.Orders/1/{n}" for n in range(24, 0, -1)]
    rates = [deltas[k]["extra.page_io_latch_wait_count"] / seconds for k in newest_first]
    heat = [r * 3600 / ((refs[k].size_bytes or 1) / 2**30) for r, k in zip(rates, newest_first, strict=True)]
    assert all(a > b for a, b in pairwise(rates))
    assert all(a > b for a, b in pairwise(heat))
    assert rates[0] > 50 * rates[-1]


# --- the demo's story -------------------------------------------------------------------------


def test_demo_ground_truth_matches_the_story(sql: SimulatedInstance, db2: SimulatedInstance) -> None:
    t = sql.truth() | db2.truth()
    hot = [t["Sales/file/3"], t["Sales/file/4"]]
    assert 1400 <= sum(h.read_iops for h in hot) <= 1600
    assert all(12 <= h.read_ms <= 17 and h.avg_read_bytes == 8192 for h in hot)
    expected = {
        "Sales/file/3": ("random_read", "flash", "fc"),
        "Sales/file/5": ("random_mixed", "flash", "fc"),
        "Sales/file/6": ("cold", "sata", "sata"),
        "Sales/file/7": ("sequential_read", "sata", "fc"),  # NL-SAS streams its scans almost as fast
        "Sales/file/2": ("log_write", "fc", "fc"),
        "tempdb/file/1": ("tempdb", "flash", "fc"),
        "tempdb/file/2": ("tempdb", "fc", "fc"),  # templog: its writes gain nothing on flash
        "Staging/file/1": ("write_heavy", "fc", "fc"),  # flash's write budget goes to better savers
        "ORDERS/tablespace/TS_HOT_IDX": ("random_read", "flash", "fc"),
        "ORDERS/tablespace/TS_SCAN": ("sequential_read", "flash", "fc"),  # 1.8 s/s of prefetch wait saved
        "ORDERS/tablespace/TEMPSPACE1": ("tempdb", "flash", "fc"),
        "ORDERS/tablespace/TS_CUR": ("random_mixed", "flash", "fc"),
        "ORDERS/tablespace/TS_HIST_2019": ("cold", "sata", "sata"),
        "ORDERS/tablespace/TS_HIST_2020": ("cold", "sata", "fc"),
        "ORDERS/log": ("log_write", "fc", "fc"),
    }
    for key, (profile, intended, current) in expected.items():
        assert (t[key].profile, t[key].intended_tier, t[key].current_tier) == (profile, intended, current), (
            key
        )
    assert 1 <= t["Sales/file/2"].write_ms <= 2 and 4096 <= t["Sales/file/2"].avg_write_bytes <= 61_440
    assert t["Sales/file/7"].avg_read_bytes == 262_144
    scan, hot_idx = t["ORDERS/tablespace/TS_SCAN"], t["ORDERS/tablespace/TS_HOT_IDX"]
    assert (scan.prefetch_share or 0) > 0.9 > 0.1 > (hot_idx.prefetch_share or 1)


def test_locations_name_the_current_tier(sql: SimulatedInstance, db2: SimulatedInstance) -> None:
    truth = sql.truth() | db2.truth()
    # the demo sits where the shipped policy's tiers are, so every object is advised
    assert DEFAULT_POLICY.resolve() == SHIPPED_POLICY  # the simulator reads the file the loader ships
    sql_prefix = {t.name: t.locations.sqlserver_directory or "?" for t in SHIPPED.tiers}
    groups = {t.name: t.locations.db2_storage_group for t in SHIPPED.tiers}
    db2_prefix = {t.name: tuple(t.locations.db2_path_prefixes) or ("?",) for t in SHIPPED.tiers}
    kinds = {}
    for s in [*sql.snapshot(ORIGIN).samples, *db2.snapshot(ORIGIN).samples]:
        if s.ref.kind in MONITOR_ONLY_KINDS:
            continue  # not placement objects: no tier of their own
        t: ObjectTruth = truth[s.ref.key]
        kinds[s.ref.key] = s.ref.kind
        assert s.ref.server in ("SQLPROD01", "DB2PROD01") and s.ref.size_bytes
        if s.ref.engine is Engine.SQLSERVER and s.ref.kind is not ObjectKind.PARTITION:
            assert (s.ref.physical_name or "").startswith(sql_prefix[t.current_tier]), s.ref.key
        if s.ref.engine is Engine.DB2 and s.ref.kind is not ObjectKind.LOG_FILE:
            assert s.ref.storage_group == groups[t.current_tier], s.ref.key
        if s.ref.engine is Engine.DB2 and s.ref.kind is ObjectKind.LOG_FILE:
            assert (s.ref.physical_name or "").startswith(db2_prefix[t.current_tier]), s.ref.key
    assert kinds["Sales/file/2"] is ObjectKind.LOG_FILE and kinds["tempdb/file/2"] is ObjectKind.LOG_FILE
    assert (
        kinds["tempdb/file/3"] is ObjectKind.TEMPDB
        and kinds["ORDERS/tablespace/TEMPSPACE1"] is ObjectKind.TEMPDB
    )
    assert kinds["ORDERS/partition/ORDERS.ORDER_HIST/0"] is ObjectKind.PARTITION
    assert kinds["ORDERS/log"] is ObjectKind.LOG_FILE
    current = [t.current_tier for t in truth.values()]
    assert current.count("fc") > 0.8 * len(current)


# --- what a live poll also reports: Buffer Manager, buffer pools, containers, volumes ----------

INSTANTS = [ORIGIN + timedelta(hours=h) for h in (0, 0.1, 7.3, 29.9, 31, 71.9)]


@pytest.mark.parametrize("at", INSTANTS)
def test_sql_server_buffer_manager_agrees_with_the_files(sql: SimulatedInstance, at: datetime) -> None:
    samples = sql.snapshot(at).samples
    (bm,) = [s for s in samples if s.ref.kind is ObjectKind.INSTANCE]
    assert (bm.ref.key, bm.ref.database, bm.ref.engine) == ("instance/buffer_manager", "", Engine.SQLSERVER)
    data = [s for s in samples if s.ref.kind in (ObjectKind.DATA_FILE, ObjectKind.TEMPDB)]
    assert len(data) > 30
    pages = sum((s.counters["bytes_read"] or 0) // 8192 for s in data)
    assert bm.extra["page_reads"] == pages  # log reads do not go through the buffer pool
    assert bm.extra["page_writes"] == sum((s.counters["bytes_written"] or 0) // 8192 for s in data)
    multi = [
        s
        for s in data
        if (s.counters["reads"] or 0) and (s.counters["bytes_read"] or 0) > 8192 * (s.counters["reads"] or 0)
    ]
    assert bm.extra["readahead_pages"] == sum((s.counters["bytes_read"] or 0) // 8192 for s in multi)
    assert bm.extra["page_lookups"] >= bm.extra["page_reads"]
    if pages > 10_000:
        assert bm.extra["page_lookups"] > 10 * bm.extra["page_reads"]  # lookups >> physical reads


def test_sql_server_buffer_manager_ratios_show_the_truth(sql: SimulatedInstance) -> None:
    deltas, _ = day_rates(sql, ORIGIN + timedelta(minutes=20))
    d = deltas["instance/buffer_manager"]
    t = sql.cache_truth()["instance/buffer_manager"]
    reads = d["extra.page_reads"]
    assert close(reads / d["extra.page_lookups"], t.read_miss_ratio, rel=1e-3, events=reads)
    assert close(d["extra.readahead_pages"] / reads, t.prefetch_share, rel=1e-3, events=reads)
    assert 0.02 <= t.read_miss_ratio <= 0.05 and 0.3 <= t.prefetch_share <= 0.8


@pytest.mark.parametrize("at", INSTANTS)
def test_db2_buffer_pools_are_the_sums_of_their_table_spaces(db2: SimulatedInstance, at: datetime) -> None:
    samples = db2.snapshot(at).samples
    pools = {s.ref.name: s for s in samples if s.ref.kind is ObjectKind.BUFFER_POOL}
    spaces = [s for s in samples if s.ref.kind in (ObjectKind.TABLESPACE, ObjectKind.TEMPDB)]
    assert sorted(pools) == ["BP16K", "BP8K", "BPTEMP16K"]
    member_of = {
        s.ref.name: "BPTEMP16K"
        if s.ref.kind is ObjectKind.TEMPDB
        else f"BP{PAGE_SIZES.get(s.ref.name, 16384) // 1024}K"
        for s in spaces
    }
    summed = {c.name for c in DB2_BUFFERPOOLS.columns} & {c.name for c in DB2_TABLESPACES.columns}
    for name, pool in pools.items():
        members = [s for s in spaces if member_of[s.ref.name] == name]
        assert members
        for column in summed - {"sample_time", "server_name", "db_name", "db_conn_time"}:
            if column in pool.extra:
                assert pool.extra[column] == sum(m.extra.get(column, 0) for m in members), (name, column)
        x = pool.extra
        logical = x["pool_data_l_reads"] + x.get("pool_temp_data_l_reads", 0)
        physical = x["pool_data_p_reads"] + x.get("pool_temp_data_p_reads", 0)
        # db2mon's local hit ratio and data hit ratio agree by construction
        assert x["pool_data_lbp_pages_found"] - x["pool_async_data_lbp_pages_found"] == (
            logical - (physical - x["pool_async_data_reads"])
        )
        assert x["unread_prefetch_pages"] <= x["pool_async_data_reads"] + x["pool_async_index_reads"]
        assert pool.ref.size_bytes and pool.ref.database == "ORDERS"


def test_db2_buffer_pool_ratios_show_the_truth(db2: SimulatedInstance) -> None:
    deltas, _ = day_rates(db2, ORIGIN)
    truth = db2.cache_truth()
    assert set(truth) == {f"ORDERS/bufferpool/{n}" for n in ("BP8K", "BP16K", "BPTEMP16K")}
    for key, t in truth.items():
        d = deltas[key]
        logical = sum(v for k, v in d.items() if k.endswith("_l_reads"))
        physical = sum(v for k, v in d.items() if k.endswith("_p_reads"))
        prefetched = d["extra.pool_async_data_reads"] + d["extra.pool_async_index_reads"]
        assert close((physical - prefetched) / logical, t.read_miss_ratio, rel=1e-3, events=physical), key
        if prefetched:
            assert close(prefetched / physical, t.prefetch_share, rel=1e-3, events=prefetched), key
    assert (
        truth["ORDERS/bufferpool/BP16K"].prefetch_share > 0.5 > truth["ORDERS/bufferpool/BP8K"].prefetch_share
    )


@pytest.mark.parametrize("at", INSTANTS[:3])
def test_db2_containers_and_table_space_locations(db2: SimulatedInstance, at: datetime) -> None:
    samples = db2.snapshot(at).samples
    spaces = [s for s in samples if s.ref.kind in (ObjectKind.TABLESPACE, ObjectKind.TEMPDB)]
    every = [s for s in samples if s.ref.kind is ObjectKind.CONTAINER]
    containers: dict[str | None, list[ObjectSample]] = {}
    for c in every:
        containers.setdefault(c.ref.tablespace, []).append(c)
    assert len(containers) == len(spaces) == 9
    # the table spaces carry exactly what the live connector's rule derives from the containers
    assert with_container_locations(spaces, every) == tuple(spaces)
    storage = {t.name: [p.rstrip("/") for p in t.locations.db2_paths] for t in SHIPPED.tiers}
    for s in spaces:
        cs = sorted(containers[s.ref.tablespace], key=lambda c: c.ref.file_id or 0)
        tier = next(t.name for t in SHIPPED.tiers if s.ref.storage_group in t.locations.db2_storage_groups)
        # automatic storage: a container on each storage path of its group, C0000000, C0000001, ...
        assert [c.ref.physical_name for c in cs] == [
            f"{root}{(s.ref.physical_name or '?').removeprefix(storage[tier][0])}C{i:07d}."
            f"{'TMP' if s.ref.kind is ObjectKind.TEMPDB else 'LRG'}"
            for i, root in enumerate(storage[tier])
        ]
        assert s.ref.paths == tuple(c.ref.physical_name for c in cs)
        # the containers' shares add up to the table space's counters exactly
        assert sum(c.extra["pages_read"] for c in cs) == sum(
            v for k, v in s.extra.items() if k.endswith("_p_reads")
        )
        assert (
            sum(c.extra["pages_written"] for c in cs)
            == s.extra["pool_data_writes"] + s.extra["pool_index_writes"]
        )
        assert sum(c.extra["pool_read_time"] for c in cs) == s.extra["pool_read_time"]
        assert sum(c.ref.size_bytes or 0 for c in cs) >= (s.ref.size_bytes or 0)
    # one file system per tier: what the containers on it leave free, the same for all of them
    by_fs: dict[str, set[tuple[int | None, int | None]]] = {}
    for c in every:
        by_fs.setdefault(c.ref.volume or "?", set()).add(
            (c.ref.volume_total_bytes, c.ref.volume_available_bytes)
        )
    assert sorted(by_fs) == ["64770", "64771"]  # fc and sata (nothing is on flash yet)
    for fs, figures in by_fs.items():
        ((total, free),) = figures
        on_it = sum(c.ref.size_bytes or 0 for c in every if c.ref.volume == fs)
        assert total is not None and free == int(total * 0.75) - on_it


def test_sql_server_files_carry_their_volume(sql: SimulatedInstance) -> None:
    files = [s.ref for s in sql.snapshot(ORIGIN).samples if s.ref.file_id is not None]
    directories = [t.locations.sqlserver_directory or "?" for t in SHIPPED.tiers]
    drives = {ntpath.splitdrive(d)[0] + "\\": d for d in directories}  # E:\ -> E:\MSSQL\FLASH\
    for ref in files:
        assert ref.volume in drives and (ref.physical_name or "").startswith(drives[ref.volume]), ref.key
    for volume in {r.volume for r in files}:
        on_it = [r for r in files if r.volume == volume]
        ((total, free),) = {(r.volume_total_bytes, r.volume_available_bytes) for r in on_it}
        assert total is not None and free == int(total * 0.75) - sum(r.size_bytes or 0 for r in on_it)


# Two ground-truth rates of the demo fleet as they were before the monitor objects were added.
TRUTH_SALES_FILE_3_READ_IOPS = 703.7495658441985
TRUTH_TS_CUR_READ_IOPS = 293.9776695007325


def test_monitor_objects_change_nothing_else() -> None:
    """They draw nothing from the random generator: every placement object, and the truth, is
    what it was before they existed (the demo's advice depends on that)."""
    sql = demo_fleet(ORIGIN).instance("SQLPROD01")
    truth = sql.truth()
    assert truth["Sales/file/3"].read_iops == TRUTH_SALES_FILE_3_READ_IOPS
    db2 = demo_fleet(ORIGIN).instance("DB2PROD01")
    assert db2.truth()["ORDERS/tablespace/TS_CUR"].read_iops == TRUTH_TS_CUR_READ_IOPS


# --- the big synthetic fleet ------------------------------------------------------------------


def test_big_fleet_has_instances_times_files() -> None:
    # its speed is measured by bench/poll_cycle.py and bench/collectors.py, not asserted here
    big = SimulatedFleet(origin=ORIGIN, instances=200, files_per_instance=50)
    snaps = big.snapshots(ORIGIN + timedelta(days=2))
    assert len(snaps) == 200 and len({s.server for s in snaps}) == 200
    assert all(len(s.samples) == 50 and len({x.ref.key for x in s.samples}) == 50 for s in snaps)
    assert all(s.engine is Engine.SQLSERVER for s in snaps)
    assert set(big.instances[0].truth()) == {x.ref.key for x in snaps[0].samples}


def test_big_fleet_size_is_validated() -> None:
    small = SimulatedFleet(origin=ORIGIN, instances=3, files_per_instance=1)
    assert [len(s.samples) for s in small.snapshots(ORIGIN)] == [1, 1, 1]
    with pytest.raises(ValueError):
        SimulatedFleet(origin=ORIGIN, instances=0, files_per_instance=5)


# --- issue #9: a nightly backup, a month-end re-read, a write-hot staging table ---------------


def _delta(instance: SimulatedInstance, key: str, a: datetime, b: datetime) -> dict[str, int]:
    first, second = by_key(instance.snapshot(a))[key], by_key(instance.snapshot(b))[key]
    return {n: values(second)[n] - v for n, v in values(first).items()}


def test_nightly_backup_reads_fg_archive_in_1_mb_requests_between_01_and_02_utc(
    sql: SimulatedInstance,
) -> None:
    t = sql.truth()["Sales/file/6"]
    assert t.maintenance == "nightly backup 01:00-02:00 UTC, 1 MB reads"
    day = datetime(2025, 6, 14, tzinfo=UTC)
    backup = _delta(sql, "Sales/file/6", day + timedelta(hours=1), day + timedelta(hours=2))
    before = _delta(sql, "Sales/file/6", day, day + timedelta(hours=1))
    assert 150 * 3600 <= backup["reads"] <= 150 * 3600 + 3600  # the backup plus the cold trickle
    assert backup["bytes_read"] / backup["reads"] > 1000 * 1024
    assert before["reads"] < 3600 and before["bytes_read"] / max(before["reads"], 1) == 65_536
    # half an hour of backup is half of it: the window is a flat rate, closed-form
    half = _delta(sql, "Sales/file/6", day + timedelta(hours=1), day + timedelta(hours=1, minutes=30))
    assert abs(half["reads"] - backup["reads"] / 2) < 100


def test_month_end_reread_of_an_old_orders_month(sql: SimulatedInstance) -> None:
    truth = sql.truth()
    file_key, part_key = "Sales/file/16", "Sales/partition/dbo.Orders/1/9"
    assert (
        sql.snapshot(ORIGIN).samples
        and by_key(sql.snapshot(ORIGIN))[part_key].ref.filegroup == "FG_ORD_202403"
    )
    for key in (file_key, part_key):
        assert (truth[key].profile, truth[key].intended_tier, truth[key].period_tier) == (
            "cold",
            "sata",
            "fc",
        )
    mid = _delta(sql, file_key, datetime(2025, 6, 20, tzinfo=UTC), datetime(2025, 6, 21, tzinfo=UTC))
    close_day = _delta(sql, file_key, datetime(2025, 6, 29, tzinfo=UTC), datetime(2025, 6, 30, tzinfo=UTC))
    first_day = _delta(sql, file_key, datetime(2025, 7, 1, tzinfo=UTC), datetime(2025, 7, 2, tzinfo=UTC))
    after = _delta(sql, file_key, datetime(2025, 7, 2, tzinfo=UTC), datetime(2025, 7, 3, tzinfo=UTC))
    extra = 120 * 86_400
    assert close_day["reads"] - mid["reads"] == pytest.approx(extra, abs=5)
    assert first_day["reads"] - mid["reads"] == pytest.approx(extra, abs=5)
    assert after["reads"] == pytest.approx(mid["reads"], abs=5)
    # 8 KB lookups: the month-end close day's average read is far below the month's 64 KB scans
    assert close_day["bytes_read"] / close_day["reads"] < 16 * 1024 < mid["bytes_read"] / mid["reads"]
    waits = _delta(sql, part_key, datetime(2025, 6, 29, tzinfo=UTC), datetime(2025, 6, 30, tzinfo=UTC))
    assert waits["extra.page_io_latch_wait_count"] == pytest.approx(close_day["reads"], abs=5)


def test_write_hot_staging_table(sql: SimulatedInstance) -> None:
    t = sql.truth()["Staging/file/3"]
    assert (t.profile, t.intended_tier, t.current_tier) == ("write_heavy", "flash", "fc")
    assert (t.read_iops, t.write_iops, t.avg_read_bytes, t.avg_write_bytes) == (185.0, 60.0, 8192, 262_144)
    written_gb_per_day = t.write_iops * t.avg_write_bytes * 86_400 / 2**30
    budget = SHIPPED.tier("flash").write_budget_gb_day  # 1 DWPD x 8 x 960 GB / 2 on RAID 5
    assert budget == 3840 and 0.3 < written_gb_per_day / budget < 0.4  # a third of flash's daily budget
    ref = by_key(sql.snapshot(ORIGIN))["Staging/file/3"].ref
    fc_dir = SHIPPED.tier("fc").locations.sqlserver_directory
    assert (ref.filegroup, ref.physical_name) == ("FG_LOAD", f"{fc_dir}Staging\\Staging_Load1.ndf")
    # the writer the budget leaves out: Staging's PRIMARY, which saves far less per GB written
    primary = sql.truth()["Staging/file/1"]
    assert (primary.intended_tier, primary.current_tier) == ("fc", "fc")
    assert primary.endurance and "3,840 GB" in primary.endurance


def test_truth_profiles_are_the_advisors_vocabulary(fleet: SimulatedFleet) -> None:
    """The simulator names its objects' profiles with advisors.classify.PROFILES, the one list."""
    from advisors.classify import PROFILES

    generic = SimulatedFleet(seed=3, origin=ORIGIN, instances=2, files_per_instance=12)
    profiles = {t.profile for f in (fleet, generic) for i in f.instances for t in i.truth().values()}
    assert profiles <= set(PROFILES)
    assert {"random_read", "cold", "log_write", "tempdb"} <= profiles
