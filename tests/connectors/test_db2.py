"""Db2 connector: recorded MON_GET_* rows -> exact records, query column contracts, real ibm_db driver."""

from __future__ import annotations

import socket
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from connectors import db2, queries
from connectors.records import Engine, ObjectKind, ObjectRef, ObjectSample, SourceError
from connectors.shapes import DB2_TABLE_PARTITIONS, DB2_TABLESPACES, DB2_TRANSACTION_LOG, ColumnType
from tests.connectors.test_sqlserver import load_fixture, select_columns

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "db2"
SAMPLE_TIME = datetime(2024, 5, 20, 10, 0, 1, tzinfo=UTC)
SERVER = "db2host01/db2inst1"
SHAPES = {
    "tablespaces": DB2_TABLESPACES,
    "table_partitions": DB2_TABLE_PARTITIONS,
    "transaction_log": DB2_TRANSACTION_LOG,
}


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
    assert len(snap.samples) == 3 + 3 + 1


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


# --- the .sql files ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_queries_select_exactly_the_shape(name: str) -> None:
    columns = select_columns(queries.load("db2", name), "db2")
    assert columns == [c.name for c in SHAPES[name].columns]


def test_every_query_file_is_covered() -> None:
    assert queries.names("db2") == sorted(SHAPES) == sorted(db2.QUERY_NAMES)


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
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
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
