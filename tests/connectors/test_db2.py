"""Db2 connector: recorded MON_GET_* rows -> exact records, query column contracts, real ibm_db driver."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from connectors import db2, queries
from connectors.records import Engine, ObjectKind, ObjectRef, ObjectSample, SourceError
from connectors.shapes import (
    DB2_BUFFERPOOLS,
    DB2_CONTAINERS,
    DB2_TABLE_PARTITIONS,
    DB2_TABLESPACES,
    DB2_TRANSACTION_LOG,
    ColumnType,
    shape_for_header,
)
from tests.conftest import free_port
from tests.connectors.test_sqlserver import load_fixture, select_columns

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "db2"
SAMPLE_TIME = datetime(2024, 5, 20, 10, 0, 1, tzinfo=UTC)
SERVER = "db2host01/db2inst1"
SHAPES = {
    "tablespaces": DB2_TABLESPACES,
    "table_partitions": DB2_TABLE_PARTITIONS,
    "transaction_log": DB2_TRANSACTION_LOG,
    "bufferpools": DB2_BUFFERPOOLS,
    "containers": DB2_CONTAINERS,
}
NO_CORE = dict.fromkeys(("reads", "bytes_read", "read_time_ms", "writes", "bytes_written", "write_time_ms"))


def snapshot() -> Any:
    results = {name: load_fixture(FIXTURES / f"{name}.json", shape) for name, shape in SHAPES.items()}
    return db2.snapshot_from_results(results, sample_time=SAMPLE_TIME)


def by_key(samples: tuple[ObjectSample, ...]) -> dict[str, ObjectSample]:
    return {s.ref.key: s for s in samples}


def test_snapshot_header() -> None:
    snap = snapshot()
    assert snap.engine is Engine.DB2
    assert snap.server == SERVER
    assert snap.instance_start == datetime(2024, 5, 12, 3, 0, 5, tzinfo=UTC)
    assert len(snap.samples) == 3 + 3 + 1 + 3 + 5


def test_random_oltp_tablespace_exact_record() -> None:
    sample = by_key(snapshot().samples)["SALESDB/tablespace/TS_ORDERS"]
    assert sample.ref == ObjectRef(
        engine=Engine.DB2,
        server=SERVER,
        database="SALESDB",
        kind=ObjectKind.TABLESPACE,
        key="SALESDB/tablespace/TS_ORDERS",
        name="TS_ORDERS",
        size_bytes=3_276_800 * 8192,
        storage_group="SG_HOT",
        tablespace="TS_ORDERS",
        volume="64768",  # completed from its container (containers.json)
        volume_total_bytes=1_099_511_627_776,
        volume_available_bytes=1_099_511_627_776 - 659_706_976_665,
        paths=("/db2/sg_hot/path1/db2inst1/NODE0000/SALESDB/T0000005/C0000000.LRG",),
    )
    p_reads = 61_000_000 + 38_000_000  # data + index physical pages (temp/xda/col are 0)
    sync_pages = p_reads - (4_000_000 + 1_000_000)
    assert sample.counters == {
        "reads": sync_pages + 310_000 + 0 + 16,  # + vectored + block + direct requests
        "bytes_read": p_reads * 8192 + 1024 * 512,
        "read_time_ms": 420_000_000 + 40,
        "writes": 7_000_000 + 5_500_000 + 32,
        "bytes_written": (7_000_000 + 5_500_000) * 8192 + 2048 * 512,
        "write_time_ms": 65_000_000 + 90,
    }
    assert sample.extra["pool_data_l_reads"] == 9_800_000_000
    assert sample.extra["pages_from_vectored_ios"] == 4_960_000
    # sizes are gauges, not counters: they are kept out of extra
    assert "tbsp_used_pages" not in sample.extra and "tbsp_total_pages" not in sample.extra
    counters = {c.name for c in DB2_TABLESPACES.columns if c.type is ColumnType.COUNTER}
    assert set(sample.extra) == counters - {"tbsp_used_pages", "tbsp_total_pages"}
    assert len(sample.extra) == 33


def test_scan_heavy_tablespace_counts_prefetch_requests_not_pages() -> None:
    sample = by_key(snapshot().samples)["SALESDB/tablespace/TS_HISTORY"]
    p_reads = 1_950_000_000 + 200_000
    assert sample.counters["reads"] == (p_reads - 1_940_150_000) + 60_000_000 + 600_000
    assert sample.counters["bytes_read"] == p_reads * 32768
    assert sample.counters["writes"] == 12_300
    assert sample.counters["bytes_written"] == 12_300 * 32768
    assert sample.ref.storage_group == "SG_COLD"
    assert sample.ref.size_bytes == 6_553_600 * 32768


def test_temporary_tablespace_is_tempdb_and_absent_counters_stay_absent() -> None:
    sample = by_key(snapshot().samples)["SALESDB/tablespace/TEMPSPACE1"]
    assert sample.ref.kind is ObjectKind.TEMPDB
    assert sample.counters["reads"] == 400_000
    assert sample.counters["bytes_read"] == 400_000 * 8192
    assert sample.counters["writes"] == 420_000
    assert not {k for k in sample.extra if k.startswith(("pool_xda", "pool_col", "pool_async_xda"))}
    assert sample.extra["pool_temp_data_p_reads"] == 400_000


def test_range_partitions_exact_and_open_ends() -> None:
    samples = by_key(snapshot().samples)
    first = samples["SALESDB/partition/SALES.ORDERS/0"]
    assert first.ref == ObjectRef(
        engine=Engine.DB2,
        server=SERVER,
        database="SALESDB",
        kind=ObjectKind.PARTITION,
        key="SALESDB/partition/SALES.ORDERS/0",
        name="SALES.ORDERS P2023",
        size_bytes=(1_200_000 + 300_000) * 8192,
        storage_group="SG_COLD",
        tablespace="TS_ORD_2023",
        table_name="SALES.ORDERS",
        schema_name="SALES",
        partition_number=0,
        range_low=None,  # MINVALUE
        range_high="2024-01-01",
        low_inclusive=None,
        high_inclusive=False,
        rows=52_000_000,
    )
    assert first.counters == dict.fromkeys(
        ("reads", "bytes_read", "read_time_ms", "writes", "bytes_written", "write_time_ms")
    )
    assert first.extra == {
        "table_scans": 14,
        "rows_read": 730_000_000,
        "rows_inserted": 0,
        "rows_updated": 0,
        "rows_deleted": 0,
        "object_data_l_reads": 2_400_000,
        "object_data_p_reads": 2_100_000,
        "object_data_gbp_l_reads": 0,
        "direct_read_reqs": 0,
        "direct_write_reqs": 0,
    }
    middle = samples["SALESDB/partition/SALES.ORDERS/1"].ref
    assert (middle.range_low, middle.low_inclusive, middle.range_high, middle.high_inclusive) == (
        "2024-01-01",
        True,
        "2025-01-01",
        False,
    )
    last = samples["SALESDB/partition/SALES.ORDERS/2"].ref
    assert (last.range_low, last.low_inclusive, last.range_high, last.high_inclusive) == (
        "2025-01-01",
        True,
        None,  # MAXVALUE
        None,
    )
    assert last.rows is None  # no RUNSTATS yet
    assert last.size_bytes == 400_000 * 8192  # no index pages reported
    assert last.range_right is None


def test_transaction_log_exact_record() -> None:
    sample = by_key(snapshot().samples)["SALESDB/log"]
    assert sample.ref.kind is ObjectKind.LOG_FILE
    assert sample.ref.physical_name == "/db2/log/SALESDB/NODE0000/LOGSTREAM0000/"
    assert sample.ref.size_bytes == 10_737_418_240
    assert sample.counters == {
        "reads": 8192,
        "bytes_read": 1_048_576 * 4096,
        "read_time_ms": 21_000,
        "writes": 12_000_000,
        "bytes_written": 52_428_800 * 4096,
        "write_time_ms": 3_100_000,
    }


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("MINVALUE", None),
        ("MAXVALUE", None),
        ("'2024-01-01'", "2024-01-01"),
        ("'O''Brien'", "O'Brien"),
        ("100", "100"),
        ("'2024-01-01',5", "'2024-01-01',5"),  # multi-column keys stay verbatim
        ("'a','b'", "'a','b'"),
    ],
)
def test_partition_bounds_are_normalised(raw: str, expected: str | None) -> None:
    assert db2._bound(raw) == expected


# --- buffer pools and containers --------------------------------------------------------------


def test_buffer_pool_exact_record_and_ratios() -> None:
    sample = by_key(snapshot().samples)["SALESDB/bufferpool/BP8K"]
    assert sample.ref == ObjectRef(
        engine=Engine.DB2,
        server=SERVER,
        database="SALESDB",
        kind=ObjectKind.BUFFER_POOL,
        key="SALESDB/bufferpool/BP8K",
        name="BP8K",
        size_bytes=1_048_576 * 8192,  # BP_CUR_BUFFSZ pages x page size: memory
    )
    assert sample.counters == NO_CORE  # pages, not I/O requests
    counters = {c.name for c in DB2_BUFFERPOOLS.columns if c.type is ColumnType.COUNTER}
    assert set(sample.extra) == counters  # bp_cur_buffsz (a gauge) and the page size stay out
    x = sample.extra
    logical = x["pool_data_l_reads"] + x["pool_temp_data_l_reads"]
    physical = x["pool_data_p_reads"] + x["pool_temp_data_p_reads"]
    # domain.md §4.8 (db2mon): data hit ratio, and the local buffer pool hit ratio
    assert (logical - (physical - x["pool_async_data_reads"])) / logical == pytest.approx(0.99414, abs=1e-5)
    lbp = (x["pool_data_lbp_pages_found"] - x["pool_async_data_lbp_pages_found"]) / logical
    assert lbp == pytest.approx(0.99384, abs=1e-5)
    assert x["pool_async_data_reads"] / x["pool_data_p_reads"] == pytest.approx(4 / 61)  # prefetch share


def test_buffer_pool_without_page_size_or_temp_counters() -> None:
    default = by_key(snapshot().samples)["SALESDB/bufferpool/IBMDEFAULTBP"]
    assert not {k for k in default.extra if k.startswith("pool_temp_")}  # NULL: absent, not 0
    row = dict(load_fixture(FIXTURES / "bufferpools.json", DB2_BUFFERPOOLS)[0], bp_page_size=None)
    snap = db2.snapshot_from_results({"bufferpools": [row]}, sample_time=SAMPLE_TIME)
    assert snap.samples[0].ref.size_bytes is None


def test_containers_are_objects_with_their_file_system() -> None:
    samples = by_key(snapshot().samples)
    path = "/db2/sg_cold/path2/db2inst1/NODE0000/SALESDB/T0000009/C0000001.LRG"
    sample = samples[f"SALESDB/container/TS_HISTORY/{path}"]
    assert sample.ref == ObjectRef(
        engine=Engine.DB2,
        server=SERVER,
        database="SALESDB",
        kind=ObjectKind.CONTAINER,
        key=f"SALESDB/container/TS_HISTORY/{path}",
        name=path,
        size_bytes=3_300_000 * 32768,
        physical_name=path,
        file_id=1,  # CONTAINER_ID
        tablespace="TS_HISTORY",
        volume="64801",
        volume_total_bytes=17_592_186_044_416,
        volume_available_bytes=17_592_186_044_416 - 16_492_674_416_640,
    )
    assert sample.counters == NO_CORE
    assert sample.extra == {
        "pages_read": 975_100_000,
        "pages_written": 6150,
        "direct_reads": 0,
        "direct_writes": 0,
        "pool_read_time": 305_000_000,
        "direct_read_time": 0,
        "direct_write_time": 0,
    }
    raw = samples["SALESDB/container/TS_RAW//dev/rdsk/c0t1d0s4"].ref
    assert (raw.volume, raw.volume_total_bytes, raw.volume_available_bytes) == (None, None, None)


def test_table_space_on_two_file_systems_reports_the_fuller_one() -> None:
    history = by_key(snapshot().samples)["SALESDB/tablespace/TS_HISTORY"].ref
    assert history.paths == (
        "/db2/sg_cold/path1/db2inst1/NODE0000/SALESDB/T0000009/C0000000.LRG",
        "/db2/sg_cold/path2/db2inst1/NODE0000/SALESDB/T0000009/C0000001.LRG",
    )
    # striped growth stops when the fullest file system is full: its numbers, not the sum
    assert (history.volume, history.volume_total_bytes, history.volume_available_bytes) == (
        "64801",
        17_592_186_044_416,
        1_099_511_627_776,
    )
    temp = by_key(snapshot().samples)["SALESDB/tablespace/TEMPSPACE1"].ref
    assert temp.paths == ("/db2/sg_hot/path1/db2inst1/NODE0000/SALESDB/T0000001/C0000000.TMP",)


def test_container_locations_rule() -> None:
    samples = snapshot().samples
    spaces = [s for s in samples if s.ref.kind in (ObjectKind.TABLESPACE, ObjectKind.TEMPDB)]
    unlocated = {"paths": (), "volume": None, "volume_total_bytes": None, "volume_available_bytes": None}
    bare = [replace(s, ref=replace(s.ref, **unlocated)) for s in spaces]
    assert all(b.ref != s.ref for b, s in zip(bare, spaces, strict=True))
    containers = [s for s in samples if s.ref.kind is ObjectKind.CONTAINER]
    # the rule is a pure function of the two lists, and order-independent in the containers
    assert db2.with_container_locations(bare, containers[::-1]) == tuple(spaces)
    # containers without file-system figures give paths but no volume
    unsized = [replace(c, ref=replace(c.ref, volume_available_bytes=None)) for c in containers]
    located = by_key(db2.with_container_locations(bare, unsized))
    orders = located["SALESDB/tablespace/TS_ORDERS"].ref
    assert orders.paths and orders.volume is None and orders.volume_total_bytes is None
    # without containers nothing changes; other kinds are never touched
    assert db2.with_container_locations(bare, []) == tuple(bare)
    others = [s for s in samples if s.ref.kind not in (ObjectKind.TABLESPACE, ObjectKind.TEMPDB)]
    assert db2.with_container_locations(others, containers) == tuple(others)


def test_fixture_headers_pick_their_shape() -> None:
    for path in sorted(FIXTURES.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        shape = shape_for_header(list(data["rows"][0]))
        assert shape is not None and shape.name == data["shape"], path.name


# --- the .sql files ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_queries_select_exactly_the_shape(name: str) -> None:
    columns = select_columns(queries.load("db2", name), "db2")
    assert columns == [c.name for c in SHAPES[name].columns]


def test_every_query_file_is_covered() -> None:
    assert queries.names("db2") == sorted(SHAPES) == sorted(db2.QUERY_NAMES)


def test_monitor_queries_aggregate_members_the_right_way() -> None:
    pools = queries.load("db2", "bufferpools")
    assert "MON_GET_BUFFERPOOL(NULL, -2)" in pools and "NOT LIKE 'IBMSYSTEMBP%'" in pools
    assert "SUM(b.bp_cur_buffsz)" in pools  # each member has its own pool memory
    containers = queries.load("db2", "containers")
    assert "MON_GET_CONTAINER(NULL, -2)" in containers
    assert "GROUP BY m.tbsp_name, m.container_name" in containers
    for gauge in ("fs_total_size", "fs_used_size", "total_pages", "usable_pages"):
        assert f"MAX(m.{gauge})" in containers  # one container seen by every member: once
    for counter in ("pages_read", "pages_written", "direct_reads", "pool_read_time"):
        assert f"SUM(m.{counter})" in containers


# --- live collection wiring (a stand-in ibm_db answering the shipped queries) ----------------


class _FakeIbmDb:
    """Just enough of ibm_db for collect(): each query is answered from its fixture rows."""

    SQL_ATTR_QUERY_TIMEOUT = 0

    def __init__(self) -> None:
        self.prepared: list[str] = []
        self.answers = {
            queries.load("db2", name): load_fixture(FIXTURES / f"{name}.json", shape)
            for name, shape in SHAPES.items()
        }

    def connect(self, cs: str, user: str, pwd: str) -> object:
        return object()

    def prepare(self, conn: object, sql: str) -> list[dict[str, Any]]:
        self.prepared.append(sql)
        return [{k.upper(): v for k, v in row.items()} for row in self.answers[sql]]  # Db2 names

    def set_option(self, stmt: object, options: object, kind: int) -> None:
        pass

    def execute(self, stmt: object) -> None:
        pass

    def fetch_assoc(self, stmt: list[dict[str, Any]]) -> dict[str, Any] | bool:
        return stmt.pop(0) if stmt else False

    def close(self, conn: object) -> None:
        pass


def test_collect_reads_buffer_pools_and_containers(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _FakeIbmDb()
    monkeypatch.setattr(db2, "_import_ibm_db", lambda: fake)
    snap = db2.collect("DATABASE=SALESDB;HOSTNAME=h;PORT=50000;", sample_time=SAMPLE_TIME)
    assert sorted(fake.prepared) == sorted(queries.load("db2", n) for n in db2.QUERY_NAMES)
    assert snap == snapshot()  # the same records as the recorded rows, containers applied


# --- connection strings and the real driver ---------------------------------------------------

PASSWORD = "Sup3rS3cret!x"
USER = "tierwise_probe"


def test_connect_timeout_is_added_once() -> None:
    cs = "DATABASE=SAMPLE;HOSTNAME=db2.corp;PORT=50000;PROTOCOL=TCPIP;UID=u;PWD=p;"
    assert db2.with_connect_timeout(cs, 7).endswith(";CONNECTTIMEOUT=7;")
    assert db2.with_connect_timeout(cs + "ConnectTimeout=3;", 7).count("=3;") == 1
    assert db2.db2_target(cs) == "db2.corp:50000/SAMPLE"
    with pytest.raises(SourceError, match="malformed"):
        db2.with_connect_timeout("DATABASE=X;PWD={oops", 7)


def test_collect_unreachable_server_fails_without_secrets() -> None:
    port = free_port()
    cs = f"DATABASE=SAMPLE;HOSTNAME=127.0.0.1;PORT={port};PROTOCOL=TCPIP;UID={USER};PWD={PASSWORD};"
    started = time.monotonic()
    with pytest.raises(SourceError) as caught:
        db2.collect(cs, sample_time=SAMPLE_TIME, timeout_s=2)
    # the CLI driver retries a refused connection once after ~5 s; bounded well below a poll
    assert time.monotonic() - started < 20
    message = str(caught.value)
    assert f"cannot connect to Db2 at 127.0.0.1:{port}/SAMPLE" in message
    assert "unreachable" in message and "SQL30081N" in message
    for secret in (PASSWORD, USER, cs):
        assert secret not in message
    assert caught.value.__cause__ is None


def test_partition_schema_is_its_own_field_even_with_dots_and_quotes() -> None:
    # a recorded DB2_TABLE_PARTITIONS row (table_partitions.json, shape and source named there)
    # with delimited names Db2 allows: "." and '"' / "]" inside TABSCHEMA and TABNAME
    row = dict(load_fixture(FIXTURES / "table_partitions.json", DB2_TABLE_PARTITIONS)[0])
    row.update(tabschema='SALES.EU"X', tabname="ORDERS.2024]")
    assert list(row) == [c.name for c in DB2_TABLE_PARTITIONS.columns]
    ref = db2.table_partition_sample(row).ref
    assert ref.schema_name == 'SALES.EU"X'
    assert ref.table_name == 'SALES.EU"X.ORDERS.2024]'
    assert ref.key == 'SALESDB/partition/SALES.EU"X.ORDERS.2024]/0'


def test_every_recorded_partition_has_its_schema() -> None:
    refs = [s.ref for s in snapshot().samples]
    assert {r.schema_name for r in refs if r.kind is ObjectKind.PARTITION} == {"SALES"}
    assert {r.schema_name for r in refs if r.kind is not ObjectKind.PARTITION} == {None}
