"""Import files: the fixtures turn into the expected snapshots, bad files are refused with the place
named, header quirks of real tools are tolerated, and names of any kind survive a round trip."""

from __future__ import annotations

import codecs
import csv
import io
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from connectors.files import join_container_locations, parse_value, read_import_file
from connectors.records import Engine, ImportFileError, ObjectKind, ObjectSample, Snapshot
from connectors.shapes import ALL_SHAPES, SQLSERVER_FILE_STATS, ColumnType, shape_for_header

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "import"
FILE_STATS = FIXTURES / "sqlserver_file_stats.csv"
PARTITIONS = FIXTURES / "sqlserver_partitions.csv"
TABLESPACES = FIXTURES / "db2_tablespaces.csv"
TABLE_PARTITIONS = FIXTURES / "db2_table_partitions.csv"
TRANSACTION_LOG = FIXTURES / "db2_transaction_log.csv"
BUFFER_MANAGER = FIXTURES / "sqlserver_buffer_manager.csv"
BUFFERPOOLS = FIXTURES / "db2_bufferpools.csv"
CONTAINERS = FIXTURES / "db2_containers.csv"

FS_HEADER = [c.name for c in SQLSERVER_FILE_STATS.columns]


def utc(year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, second, tzinfo=UTC)


def by_key(snapshot: Snapshot) -> dict[str, ObjectSample]:
    return {s.ref.key: s for s in snapshot.samples}


def fs_row(**values: object) -> list[str]:
    """One valid file-stats row (a Sales data file) with some fields replaced."""
    base: dict[str, object] = {
        "sample_time": "2024-05-01T10:00:00Z",
        "server_name": "SQL01",
        "sqlserver_start_time": "2024-04-28T03:12:45Z",
        "database_name": "Sales",
        "file_id": 1,
        "file_name": "Sales",
        "type_desc": "ROWS",
        "filegroup_name": "PRIMARY",
        "physical_name": r"E:\data\Sales.mdf",
        "size_on_disk_bytes": 1048576,
        "num_of_reads": 100,
        "num_of_bytes_read": 819200,
        "io_stall_read_ms": 250,
        "num_of_writes": 10,
        "num_of_bytes_written": 81920,
        "io_stall_write_ms": 30,
        "io_stall_queued_read_ms": 0,
        "io_stall_queued_write_ms": 0,
        "volume_mount_point": "E:\\",
        "volume_total_bytes": 2199023255552,
        "volume_available_bytes": 879609302220,
    }
    base.update(values)
    return ["" if base[c] is None else str(base[c]) for c in FS_HEADER]


def write_csv(path: Path, rows: Sequence[Sequence[object]], header: Sequence[str] = FS_HEADER) -> Path:
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh, lineterminator="\r\n")
        writer.writerow(header)
        writer.writerows(rows)
    return path


def refused(path: Path) -> ImportFileError:
    with pytest.raises(ImportFileError) as info:
        read_import_file(path)
    return info.value


def assert_place(err: ImportFileError, path: Path, line: int | None, column: str | None) -> None:
    """The error names the file, line and column, both as attributes and in the message."""
    text = str(err)
    assert err.path == str(path)
    assert text.startswith(str(path))
    assert err.line == line
    if line is not None:
        assert f"line {line}" in text
    assert err.column == column
    if column is not None:
        assert repr(column) in text


# ---------------------------------------------------------------------------------------------
# The fixtures and the records they produce


def test_file_stats_fixture_two_servers_ordered_by_time_then_server() -> None:
    snaps = read_import_file(FILE_STATS)
    assert [(s.server, s.sample_time) for s in snaps] == [
        ("SQLPROD01", utc(2024, 5, 1, 10, 0, 0)),
        ("SQLPROD02\\OLTP", utc(2024, 5, 1, 10, 0, 0)),  # written as 12:00:00+02:00
        ("SQLPROD02\\OLTP", utc(2024, 5, 1, 10, 5, 0)),  # written as "2024-05-01 12:05:00.000+02:00"
        ("SQLPROD01", datetime(2024, 5, 1, 10, 5, 0, 3000, tzinfo=UTC)),
        ("SQLPROD01", utc(2024, 5, 1, 10, 10, 0)),
    ]
    assert [len(s.samples) for s in snaps] == [6, 3, 3, 6, 6]
    assert {s.engine for s in snaps} == {Engine.SQLSERVER}
    for snap in snaps:
        assert snap.sample_time.tzinfo is UTC
        assert {s.ref.server for s in snap.samples} == {snap.server}


def test_file_stats_fixture_offsets_and_naive_times_become_utc() -> None:
    snaps = read_import_file(FILE_STATS)
    oltp = [s for s in snaps if s.server == "SQLPROD02\\OLTP"]
    # "2024-04-20 06:00:00" has no offset: UTC by contract
    assert {s.instance_start for s in oltp} == {utc(2024, 4, 20, 6, 0, 0)}
    assert all(s.instance_start is not None and s.instance_start.tzinfo is UTC for s in snaps)


def test_file_stats_fixture_restart_changes_start_and_counters_drop() -> None:
    p01 = [s for s in read_import_file(FILE_STATS) if s.server == "SQLPROD01"]
    assert [s.instance_start for s in p01] == [
        datetime(2024, 4, 28, 3, 12, 45, 270000, tzinfo=UTC),
        datetime(2024, 4, 28, 3, 12, 45, 270000, tzinfo=UTC),
        datetime(2024, 5, 1, 10, 7, 31, 113000, tzinfo=UTC),
    ]
    reads = [by_key(s)["Sales/file/1"].counters["reads"] for s in p01]
    assert reads == [5120344, 5203876, 44120]
    assert [by_key(s)["tempdb/file/2"].counters["bytes_written"] for s in p01] == [
        41953280000,
        42790912000,
        347340800,
    ]


def test_file_stats_fixture_values_and_locations() -> None:
    first = read_import_file(FILE_STATS)[0]
    samples = by_key(first)
    assert set(samples) == {
        "master/file/1",
        "tempdb/file/1",
        "tempdb/file/2",
        "Sales/file/1",
        "Sales/file/2",
        "Sales/file/3",
    }
    orders = samples["Sales/file/3"]
    assert orders.ref.name == 'Orders, 2024 "hot"'  # comma and doubled quotes in the CSV
    assert orders.ref.filegroup == "FG_ORDERS_2024"
    assert orders.ref.physical_name == r"E:\data\Sales_Orders_2024.ndf"
    assert orders.ref.size_bytes == 107374182400
    assert orders.counters == {
        "reads": 2250981,
        "bytes_read": 18440036352,
        "read_time_ms": 27011772,
        "writes": 140533,
        "bytes_written": 1151246336,
        "write_time_ms": 421599,
    }
    assert samples["Sales/file/1"].extra == {"io_stall_queued_read_ms": 15, "io_stall_queued_write_ms": 3}
    log = samples["Sales/file/2"]
    assert log.ref.kind is ObjectKind.LOG_FILE and log.ref.filegroup is None  # empty filegroup_name
    assert samples["tempdb/file/1"].ref.kind is ObjectKind.TEMPDB


def test_file_stats_fixture_empty_optional_columns_are_absent_not_zero() -> None:
    oltp = next(s for s in read_import_file(FILE_STATS) if s.server == "SQLPROD02\\OLTP")
    data = by_key(oltp)["OLTP/file/1"]
    assert data.extra == {}  # io_stall_queued_* empty (pre-2014 server)
    assert data.counters["reads"] == 990112


def test_partitions_fixture() -> None:
    snaps = read_import_file(PARTITIONS)
    assert [s.sample_time for s in snaps] == [
        datetime(2024, 5, 1, 10, 0, 0, 20000, tzinfo=UTC),
        datetime(2024, 5, 1, 10, 5, 0, 17000, tzinfo=UTC),
        datetime(2024, 5, 1, 10, 10, 0, 11000, tzinfo=UTC),
    ]
    assert [len(s.samples) for s in snaps] == [8, 8, 8]
    assert {s.instance_start for s in snaps} == {datetime(2024, 4, 28, 3, 12, 45, 270000, tzinfo=UTC)}
    first = by_key(snaps[0])
    p1 = first["Sales/partition/dbo.Orders/1/1"].ref
    assert (p1.range_low, p1.range_high, p1.range_right) == (None, "2023-01-01", True)
    assert p1.filegroup == "FG_ARCHIVE" and p1.rows == 48000000
    p4 = first["Sales/partition/dbo.Orders/1/4"]
    assert (p4.ref.range_low, p4.ref.range_high) == ("2024-04-01", None)
    assert p4.extra["singleton_lookup_count"] == 2000000
    assert p4.ref.size_bytes == 26400 * 8192
    # index 2, partition 1 had no operational stats row in the second sample: absent, not 0
    second = by_key(snaps[1])
    assert second["Sales/partition/dbo.Orders/2/1"].extra == {}
    assert second["Sales/partition/dbo.Orders/1/1"].extra["page_io_latch_wait_count"] == 5000


def test_db2_tablespaces_fixture_with_reactivation() -> None:
    snaps = read_import_file(TABLESPACES)
    assert [len(s.samples) for s in snaps] == [5, 5, 5]
    assert {s.engine for s in snaps} == {Engine.DB2}
    assert {s.server for s in snaps} == {"db2host01/db2inst1"}
    assert [s.instance_start for s in snaps] == [
        utc(2024, 4, 29, 22, 15, 3),
        utc(2024, 4, 29, 22, 15, 3),
        utc(2024, 5, 1, 10, 6, 40),
    ]
    hot = [by_key(s)["SALESDB/tablespace/TS_ORDERS_2024"] for s in snaps]
    assert [h.extra["pool_data_l_reads"] for h in hot] == [45000000, 45225000, 45000]
    assert hot[0].ref.storage_group == "SG_HOT"
    temp = by_key(snaps[0])["SALESDB/tablespace/TEMPSPACE1"]
    assert temp.ref.storage_group is None  # SMS: SGNAME is NULL, written empty


def test_db2_table_partitions_fixture() -> None:
    snaps = read_import_file(TABLE_PARTITIONS)
    assert [len(s.samples) for s in snaps] == [3, 3]
    parts = by_key(snaps[1])
    q1 = parts["SALESDB/partition/SALES.ORDERS/1"]
    assert q1.ref.tablespace == "TS_ORDERS_2024" and q1.ref.storage_group == "SG_HOT"
    assert (q1.ref.low_inclusive, q1.ref.high_inclusive) == (True, False)  # "Y" / "N"
    assert q1.extra["object_data_l_reads"] == 16800
    assert "object_data_gbp_l_reads" not in q1.extra  # empty outside pureScale
    q2 = parts["SALESDB/partition/SALES.ORDERS/2"]
    assert q2.ref.size_bytes is None  # no MON_GET_TABLE row and no RUNSTATS: page count empty


def test_db2_transaction_log_fixture() -> None:
    snaps = read_import_file(TRANSACTION_LOG)
    assert len(snaps) == 3 and all(len(s.samples) == 1 for s in snaps)
    log = snaps[0].samples[0]
    assert log.ref.kind is ObjectKind.LOG_FILE
    assert log.ref.physical_name == "/db2/log/SALESDB/NODE0000/LOGSTREAM0000/"
    assert log.ref.size_bytes == 1073741824
    assert [s.samples[0].counters["writes"] for s in snaps] == [2950100, 2954700, 41]
    assert snaps[2].instance_start == utc(2024, 5, 1, 10, 6, 40)


def test_sqlserver_buffer_manager_fixture() -> None:
    snaps = read_import_file(BUFFER_MANAGER)
    assert [(s.server, len(s.samples)) for s in snaps] == [
        ("SQLPROD01", 1),
        ("SQLPROD02\\OLTP", 1),
        ("SQLPROD02\\OLTP", 1),
        ("SQLPROD01", 1),
        ("SQLPROD01", 1),
    ]
    p01 = [s for s in snaps if s.server == "SQLPROD01"]
    assert [s.instance_start for s in p01][-1] == datetime(2024, 5, 1, 10, 7, 31, 113000, tzinfo=UTC)
    first, second = (s.samples[0] for s in p01[:2])
    assert first.ref.kind is ObjectKind.INSTANCE and first.ref.key == "instance/buffer_manager"
    assert first.ref.database == ""
    reads = second.extra["page_reads"] - first.extra["page_reads"]
    lookups = second.extra["page_lookups"] - first.extra["page_lookups"]
    assert reads / lookups == pytest.approx(0.02)  # the interval's physical-read fraction
    ahead = second.extra["readahead_pages"] - first.extra["readahead_pages"]
    assert ahead / reads == pytest.approx(1 / 3, abs=1e-4)
    assert "page_life_expectancy" not in first.extra  # a gauge: in the file, not a counter
    oltp = next(s for s in snaps if s.server == "SQLPROD02\\OLTP").samples[0]
    assert set(oltp.extra) == {"page_reads", "page_lookups", "page_writes"}  # empty = absent


def test_db2_bufferpools_fixture() -> None:
    snaps = read_import_file(BUFFERPOOLS)
    assert [len(s.samples) for s in snaps] == [2, 2, 2]
    assert snaps[2].instance_start == utc(2024, 5, 1, 10, 6, 40)
    pool = by_key(snaps[0])["SALESDB/bufferpool/BP8K"]
    assert pool.ref.kind is ObjectKind.BUFFER_POOL and pool.ref.size_bytes == 524288 * 8192
    assert pool.extra["pool_data_lbp_pages_found"] == 57600000
    assert "bp_cur_buffsz" not in pool.extra


def test_db2_containers_fixture_and_joining_them_to_table_spaces() -> None:
    containers = read_import_file(CONTAINERS)
    assert [len(s.samples) for s in containers] == [6, 6, 6]
    cold = [s.ref for s in containers[0].samples if s.ref.tablespace == "TS_ORDERS_2023"]
    assert [(r.file_id, r.volume, r.volume_available_bytes) for r in cold] == [
        (0, "64801", 8796093022208 - 4398046511104),
        (1, "64802", 8796093022208 - 7696581394432),
    ]
    spaces = read_import_file(TABLESPACES)
    assert all(not s.ref.paths for snap in spaces for s in snap.samples)  # one file: no containers
    joined = join_container_locations([*spaces, *containers])
    assert joined[3:] == containers  # the containers' own snapshots are unchanged
    for snap in joined[:3]:  # each tablespaces sample took the containers written seconds later
        located = by_key(snap)["SALESDB/tablespace/TS_ORDERS_2023"].ref
        assert located.paths == tuple(r.name for r in cold)
        assert (located.volume, located.volume_available_bytes) == ("64802", 8796093022208 - 7696581394432)
        assert by_key(snap)["SALESDB/tablespace/TEMPSPACE1"].ref.volume == "64768"
    # a containers file from another time (more than `within` away) is not used
    far = join_container_locations([*spaces, containers[0]], within=timedelta(seconds=2))
    assert far[:3] == spaces  # 10:00:00 vs 10:00:03 is 3 s; the later samples are minutes away
    near = join_container_locations([*spaces, containers[0]], within=timedelta(seconds=3))
    assert by_key(near[0])["SALESDB/tablespace/SYSCATSPACE"].ref.paths and near[1:3] == spaces[1:]
    # a snapshot with containers of its own (a live poll) keeps what it has
    from tests.connectors.test_db2 import snapshot as live_db2_snapshot

    live = live_db2_snapshot()
    moved = replace(live, sample_time=containers[0].sample_time)
    assert join_container_locations([moved, containers[0]]) == [moved, containers[0]]
    # SQL Server snapshots pass through untouched
    files = read_import_file(FILE_STATS)
    assert join_container_locations([*files, *containers]) == [*files, *containers]


def test_every_import_fixture_header_picks_its_shape() -> None:
    for path in sorted(FIXTURES.glob("*.csv")):
        header = next(csv.reader(path.open(encoding="utf-8", newline="")))
        shape = shape_for_header(header)
        assert shape is not None and shape.name == path.stem, path.name
    for shape in ALL_SHAPES:  # every shape's own header picks it, and so does its required part
        assert shape_for_header([c.name for c in shape.columns]) is shape
        assert shape_for_header([c.name for c in shape.columns if c.required]) is shape


def test_bad_values_in_the_new_files_name_file_line_and_column(tmp_path: Path) -> None:
    lines = BUFFER_MANAGER.read_bytes().decode("utf-8").split("\r\n")
    lines[4] = lines[4].replace(",990950,", ",99x,", 1)
    path = tmp_path / "buffer_manager.csv"
    path.write_bytes("\r\n".join(lines).encode("utf-8"))
    assert_place(refused(path), path, 5, "page_reads")

    lines = BUFFERPOOLS.read_text(encoding="utf-8").split("\n")
    lines[2] = lines[2].replace('"IBMDEFAULTBP",4096,250000,', '"IBMDEFAULTBP",4096,,', 1)
    path = tmp_path / "bufferpools.csv"
    path.write_text("\n".join(lines), encoding="utf-8")
    err = refused(path)
    assert_place(err, path, 3, "bp_cur_buffsz")
    assert "must have one" in str(err)

    lines = CONTAINERS.read_text(encoding="utf-8").split("\n")
    lines[8] = lines[8].replace(",1,1,181800,", ",1,1,-181800,", 1)
    path = tmp_path / "containers.csv"
    path.write_text("\n".join(lines), encoding="utf-8")
    err = refused(path)
    assert_place(err, path, 9, "pages_read")
    assert "negative" in str(err)

    # a counter going down without a new db_conn_time is the deltas' business, but a second,
    # different reading of the same container at the same time is refused here
    lines = CONTAINERS.read_text(encoding="utf-8").split("\n")
    path = tmp_path / "twice.csv"
    path.write_text(
        "\n".join([*lines[:3], lines[2].replace(",1,1,180000,", ",1,1,180001,")]), encoding="utf-8"
    )
    assert_place(refused(path), path, 4, "pages_read")

    header = [c.name for c in ALL_SHAPES[-1].columns if c.name != "container_id"]
    path = write_csv(tmp_path / "no_id.csv", [], header=header)
    assert_place(refused(path), path, 1, "container_id")


# ---------------------------------------------------------------------------------------------
# Header quirks of real tools


def test_upper_case_reordered_and_extra_columns_read_the_same(tmp_path: Path) -> None:
    rows = list(csv.reader(FILE_STATS.open(encoding="utf-8", newline="")))
    order = list(reversed(range(len(rows[0]))))
    shuffled = tmp_path / "shuffled.csv"
    with shuffled.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["Comment"] + [rows[0][i].upper() for i in order] + ["EXTRA_COL"])
        for row in rows[1:]:
            writer.writerow(["ignored"] + [row[i] for i in order] + ["x"])
    assert read_import_file(shuffled) == read_import_file(FILE_STATS)


def test_sqlcmd_underline_padding_and_blank_lines_are_tolerated(tmp_path: Path) -> None:
    header = ",".join(FS_HEADER)
    underline = ",".join("-" * len(name) for name in FS_HEADER)
    row1 = ",".join(fs_row()) + "      "  # sqlcmd pads the last (numeric) column
    row2 = ",".join(fs_row(sample_time="2024-05-01T10:05:00Z", num_of_reads=150))
    path = tmp_path / "sqlcmd.csv"
    path.write_text(f"{header}\r\n{underline}\r\n{row1}\r\n\r\n{row2}\r\n\r\n", encoding="utf-8")
    snaps = read_import_file(path)
    assert [s.samples[0].counters["reads"] for s in snaps] == [100, 150]
    assert snaps[0].samples[0].ref.size_bytes == 1048576


def test_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "bom.csv", [fs_row()])
    path.write_bytes(codecs.BOM_UTF8 + path.read_bytes())
    snaps = read_import_file(path)
    assert len(snaps) == 1 and snaps[0].samples[0].ref.key == "Sales/file/1"


def test_header_only_file_imports_nothing(tmp_path: Path) -> None:
    path = tmp_path / "no_partitioned_tables.csv"
    path.write_text(",".join(c.name for c in ALL_SHAPES[1].columns) + "\r\n", encoding="utf-8")
    assert read_import_file(path) == []


def test_optional_columns_may_be_left_out(tmp_path: Path) -> None:
    required = [c.name for c in SQLSERVER_FILE_STATS.columns if c.required]
    full = dict(zip(FS_HEADER, fs_row(), strict=True))
    path = write_csv(tmp_path / "minimal.csv", [[full[c] for c in required]], header=required)
    sample = read_import_file(path)[0].samples[0]
    assert sample.extra == {}
    assert sample.counters["write_time_ms"] == 30


def test_identical_duplicate_rows_are_counted_once(tmp_path: Path) -> None:
    row = fs_row()
    later = fs_row(sample_time="2024-05-01T10:05:00Z", num_of_reads=200)
    # a file concatenated with itself repeats earlier samples after later ones: still idempotent
    path = write_csv(tmp_path / "dup.csv", [row, later, row, later])
    snaps = read_import_file(path)
    assert [len(s.samples) for s in snaps] == [1, 1]


def test_progress_reports_bytes_while_streaming(tmp_path: Path) -> None:
    rows = [fs_row(file_id=i, file_name=f"file{i}") for i in range(1, 1500)]
    path = write_csv(tmp_path / "big.csv", rows)
    seen: list[int] = []
    snaps = read_import_file(path, progress=seen.append)
    size = path.stat().st_size
    assert size > 3 * 65536
    assert len(seen) >= 3 and seen == sorted(seen)
    assert seen[0] < size and seen[-1] == size
    assert len(snaps[0].samples) == 1499


# ---------------------------------------------------------------------------------------------
# Bad input: refused with file, line and column, nothing returned


def test_missing_required_column(tmp_path: Path) -> None:
    header = [c for c in FS_HEADER if c != "io_stall_write_ms"]
    full = dict(zip(FS_HEADER, fs_row(), strict=True))
    path = write_csv(tmp_path / "missing.csv", [[full[c] for c in header]], header=header)
    err = refused(path)
    assert_place(err, path, 1, "io_stall_write_ms")
    assert "sqlserver_file_stats" in str(err)


def test_wrong_type(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "type.csv", [fs_row(), fs_row(file_id=2, num_of_reads="12x")])
    err = refused(path)
    assert_place(err, path, 3, "num_of_reads")
    assert "'12x'" in str(err) and "whole number" in str(err)


def test_error_after_a_multi_line_value_names_the_physical_line(tmp_path: Path) -> None:
    # names may not break lines (test_control_names.py); an extra column's value still may
    header = [*FS_HEADER[:5], "note", *FS_HEADER[5:]]
    good, bad = fs_row(), fs_row(file_id=2, num_of_reads="many")
    rows = [[*good[:5], "", *good[5:]], [*bad[:5], "two\nline note", *bad[5:]]]
    path = write_csv(tmp_path / "multiline.csv", rows, header)
    assert_place(refused(path), path, 4, "num_of_reads")  # the record starts on line 3


def test_negative_counter(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "negative.csv", [fs_row(io_stall_read_ms=-5)])
    err = refused(path)
    assert_place(err, path, 2, "io_stall_read_ms")
    assert "negative" in str(err)


def test_bad_timestamp(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "ts.csv", [fs_row(sqlserver_start_time="2024-13-01T00:00:00Z")])
    assert_place(refused(path), path, 2, "sqlserver_start_time")
    path = write_csv(tmp_path / "ts2.csv", [fs_row(sample_time="01/05/2024 10:00")])
    err = refused(path)
    assert_place(err, path, 2, "sample_time")
    assert "ISO-8601" in str(err)


def test_empty_value_in_a_column_that_needs_one(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "empty.csv", [fs_row(num_of_writes="")])
    err = refused(path)
    assert_place(err, path, 2, "num_of_writes")
    assert "empty" in str(err)


def test_non_utf8_bytes_name_the_line(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "latin1.csv", [fs_row(), fs_row(file_id=2), fs_row(file_id=3)])
    lines = path.read_bytes().split(b"\r\n")
    lines[3] = lines[3].replace(b",Sales,", b",Ventes \xe9t\xe9,", 1)  # Latin-1, not UTF-8
    path.write_bytes(b"\r\n".join(lines))
    err = refused(path)
    assert_place(err, path, 4, None)
    assert "UTF-8" in str(err) and "0xe9" in str(err)


def test_utf16_with_bom_is_read_like_utf8(tmp_path: Path) -> None:
    """sqlcmd -u and PowerShell 5.1 `>` / Out-File write UTF-16 LE with a byte-order mark."""
    text = ",".join(FS_HEADER) + "\r\n" + ",".join(fs_row(database_name="Ventes_été_販売")) + "\r\n"
    utf8 = tmp_path / "utf8.csv"
    utf8.write_bytes(text.encode("utf-8"))
    for bom, codec in ((codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be")):
        path = tmp_path / f"{codec}.csv"
        path.write_bytes(bom + text.encode(codec))
        snaps = read_import_file(path)
        assert snaps == read_import_file(utf8)
        assert snaps[0].samples[0].ref.database == "Ventes_été_販売"


def test_utf16_cut_in_the_middle_of_a_character_names_the_line(tmp_path: Path) -> None:
    text = ",".join(FS_HEADER) + "\r\n" + ",".join(fs_row()) + "\r\n"
    path = tmp_path / "cut.csv"
    path.write_bytes(codecs.BOM_UTF16_LE + text.encode("utf-16-le") + b"2")
    err = refused(path)
    assert err.line == 3 and "UTF-16" in str(err)


def test_truncated_last_line_with_fewer_fields(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "cut.csv", [fs_row(), fs_row(file_id=2)])
    data = path.read_bytes()
    cut = data.rstrip(b"\r\n")
    cut = cut[: cut.rindex(b",E:\\data")]  # the last line stops after filegroup_name
    path.write_bytes(cut)
    err = refused(path)
    assert_place(err, path, 3, "physical_name")
    assert "truncated" in str(err)


def test_truncated_inside_a_quoted_value(tmp_path: Path) -> None:
    path = write_csv(
        tmp_path / "quote.csv", [fs_row(), fs_row(file_id=2, physical_name="E:\\data, new\\x.ndf")]
    )
    data = path.read_bytes()
    path.write_bytes(data[: data.rindex(b", new")])  # the file ends inside "E:\data, new..."
    err = refused(path)
    assert_place(err, path, 3, "physical_name")
    assert "never closed" in str(err)


def test_more_fields_than_the_header(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "extra.csv", [fs_row(), [*fs_row(file_id=2), "surplus"]])
    err = refused(path)
    assert_place(err, path, 3, None)
    assert f"{len(FS_HEADER) + 1} fields" in str(err)


def test_time_going_backwards_names_both_times(tmp_path: Path) -> None:
    rows = [
        fs_row(sample_time="2024-05-01T10:05:00Z"),
        fs_row(sample_time="2024-05-01T10:05:00Z", file_id=2),
        fs_row(sample_time="2024-05-01T10:00:00Z", file_id=2),
    ]
    path = write_csv(tmp_path / "backwards.csv", rows)
    err = refused(path)
    assert_place(err, path, 4, "sample_time")
    assert "2024-05-01T10:00:00+00:00" in str(err) and "2024-05-01T10:05:00+00:00" in str(err)
    assert "line 3" in str(err)


def test_other_server_may_have_earlier_times(tmp_path: Path) -> None:
    rows = [
        fs_row(sample_time="2024-05-01T10:05:00Z"),
        fs_row(sample_time="2024-05-01T10:00:00Z", server_name="SQL02"),
    ]
    assert len(read_import_file(write_csv(tmp_path / "two.csv", rows))) == 2


def test_same_object_and_time_with_different_counters(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "conflict.csv", [fs_row(), fs_row(file_id=2), fs_row(num_of_bytes_read=999)])
    err = refused(path)
    assert_place(err, path, 4, "num_of_bytes_read")
    assert "line 2" in str(err) and "999" in str(err)


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.csv"
    path.write_bytes(b"")
    err = refused(path)
    assert_place(err, path, 1, None)
    assert "empty" in str(err)
    blank = tmp_path / "blank.csv"
    blank.write_bytes(b"\r\n\r\n")
    assert_place(refused(blank), blank, 1, None)


def test_unknown_shape_lists_the_known_ones(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "other.csv", [["1", "2"]], header=["name", "value"])
    err = refused(path)
    assert_place(err, path, 1, None)
    for shape in ALL_SHAPES:
        assert shape.name in str(err)
        assert all(col in str(err) for col in shape.signature)


def test_duplicate_header_column(tmp_path: Path) -> None:
    header = [*FS_HEADER, "num_of_reads"]
    path = write_csv(tmp_path / "dupcol.csv", [[*fs_row(), "1"]], header=header)
    assert_place(refused(path), path, 1, "num_of_reads")


def test_one_sample_of_one_server_has_one_start_time(tmp_path: Path) -> None:
    rows = [fs_row(), fs_row(file_id=2, sqlserver_start_time="2024-04-29T00:00:00Z")]
    path = write_csv(tmp_path / "starts.csv", rows)
    err = refused(path)
    assert_place(err, path, 3, "sqlserver_start_time")
    assert "line 2" in str(err)


def test_bad_boolean(tmp_path: Path) -> None:
    text = PARTITIONS.read_bytes().decode("utf-8").split("\r\n")
    text[2] = text[2].replace('"pf_OrderDate",1,', '"pf_OrderDate",maybe,', 1)
    path = tmp_path / "bool.csv"
    path.write_text("\r\n".join(text), encoding="utf-8")
    err = refused(path)
    assert_place(err, path, 3, "boundary_value_on_right")


def test_sqlcmd_error_text_in_the_file_is_explained(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "failed.csv", [fs_row()])
    with path.open("a", encoding="utf-8", newline="") as fh:
        fh.write("Msg 297, Level 16, State 1, Server SQL01, Line 1\r\n")
        fh.write("The user does not have permission to perform this action.\r\n")
    err = refused(path)
    assert_place(err, path, 3, "file_name")  # "Msg 297, Level 16, ..." splits into 5 fields
    assert "collection failed" in str(err) and "Msg 297" in str(err)


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nowhere.csv"
    err = refused(path)
    assert_place(err, path, None, None)


def test_a_bad_row_anywhere_means_nothing_is_returned(tmp_path: Path) -> None:
    rows = [fs_row(sample_time=f"2024-05-01T10:{m:02d}:00Z") for m in range(0, 50, 5)]
    rows.append(fs_row(sample_time="2024-05-01T11:00:00Z", num_of_reads="-1"))
    path = write_csv(tmp_path / "late.csv", rows)
    assert_place(refused(path), path, 12, "num_of_reads")


# ---------------------------------------------------------------------------------------------
# Values and the round trip of names


@pytest.mark.parametrize(
    ("text", "ctype", "expected"),
    [
        (" 42 ", ColumnType.COUNTER, 42),
        ("-1", ColumnType.INT, -1),
        ("Y", ColumnType.BOOL, True),
        ("false", ColumnType.BOOL, False),
        ("0", ColumnType.BOOL, False),
        (
            "2024-05-01T12:00:00.1234567+02:00",
            ColumnType.TIMESTAMP,
            datetime(2024, 5, 1, 10, 0, 0, 123456, tzinfo=UTC),
        ),
        ("2024-05-01 10:00", ColumnType.TIMESTAMP, utc(2024, 5, 1, 10, 0, 0)),
        ("2024-05-01T10:00:00-0530", ColumnType.TIMESTAMP, utc(2024, 5, 1, 15, 30, 0)),
        ("", ColumnType.TEXT, None),
        ("  spaced  ", ColumnType.TEXT, "  spaced  "),
    ],
)
def test_parse_value(text: str, ctype: ColumnType, expected: object) -> None:
    assert parse_value(text, ctype) == expected


def test_every_shape_has_an_object_key_of_its_columns() -> None:
    for shape in ALL_SHAPES:
        names = {c.name for c in shape.columns}
        assert shape.object_key and set(shape.object_key) <= names


_special = st.sampled_from([",", '"', " ", "'", ";", "é", "日本", "\U0001f4be", "---", "[x]"])
_names = (
    st.lists(
        st.one_of(
            _special,
            st.text(
                alphabet=st.characters(exclude_categories=["Cs", "Cc"], exclude_characters="\u2028\u2029"),
                min_size=1,
                max_size=8,
            ),
        ),
        min_size=1,
        max_size=6,
    )
    .map("".join)
    .filter(lambda n: n != "NULL")
)  # control characters (test_control_names.py) and a bare NULL are refused


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(server=_names.filter(str.strip), database=_names, file_name=_names, filegroup=_names, physical=_names)
def test_any_names_survive_the_round_trip(
    tmp_path: Path, server: str, database: str, file_name: str, filegroup: str, physical: str
) -> None:
    buf = io.StringIO(newline="")
    writer = csv.writer(buf, lineterminator="\r\n")
    writer.writerow(FS_HEADER)
    writer.writerow(
        fs_row(
            server_name=server,
            database_name=database,
            file_name=file_name,
            filegroup_name=filegroup,
            physical_name=physical,
        )
    )
    path = tmp_path / "names.csv"
    path.write_bytes(buf.getvalue().encode("utf-8"))
    [snap] = read_import_file(path)
    ref = snap.samples[0].ref
    assert (snap.server, ref.server, ref.database, ref.name, ref.filegroup, ref.physical_name) == (
        server,
        server,
        database,
        file_name,
        filegroup,
        physical,
    )


def _renamed(src: Path, dest: Path, schema_col: str, table_col: str, schema: str, table: str) -> Path:
    rows = list(csv.reader(src.open(encoding="utf-8", newline="")))
    s, t = rows[0].index(schema_col), rows[0].index(table_col)
    with dest.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(rows[0])
        for row in rows[1:]:
            writer.writerow([schema if i == s else table if i == t else v for i, v in enumerate(row)])
    return dest


def test_import_partitions_carry_the_schema_on_its_own() -> None:
    # the shipped collection scripts always wrote schema_name / tabschema as a column of its own:
    # files written before ObjectRef.schema_name existed import with it filled in
    sql = [s.ref for snap in read_import_file(PARTITIONS) for s in snap.samples]
    assert {r.schema_name for r in sql} == {"dbo"}
    db2 = [s.ref for snap in read_import_file(TABLE_PARTITIONS) for s in snap.samples]
    assert {r.schema_name for r in db2} == {"SALES"}


@pytest.mark.parametrize(
    ("fixture", "schema_col", "table_col"),
    [(PARTITIONS, "schema_name", "table_name"), (TABLE_PARTITIONS, "tabschema", "tabname")],
)
def test_import_schema_and_table_names_with_dots_quotes_and_brackets(
    tmp_path: Path, fixture: Path, schema_col: str, table_col: str
) -> None:
    schema, table = 'a.b]"c', 'd."e]].f'
    path = _renamed(fixture, tmp_path / "hostile.csv", schema_col, table_col, schema, table)
    refs = [s.ref for snap in read_import_file(path) for s in snap.samples]
    assert refs and {(r.schema_name, r.table_name) for r in refs} == {(schema, f"{schema}.{table}")}


# ---------------------------------------------------------------------------------------------
# What real tools write (issue #16)


def test_sqlcmd_blank_heading_rows_affected_and_a_repeated_header_are_skipped(tmp_path: Path) -> None:
    """sqlcmd without -h -1 prints a blank padded heading and dashes; without SET NOCOUNT ON a
    `(N rows affected)` footer; a file appended to itself repeats the header."""
    header = ",".join(FS_HEADER)
    row1 = ",".join(fs_row())
    row2 = ",".join(fs_row(sample_time="2024-05-01T10:05:00Z", num_of_reads=150))
    text = f"{' ' * 60}\r\n{'-' * 60}\r\n{header}\r\n{row1}\r\n\r\n(1 rows affected)\r\n{row2}\r\n"
    path = tmp_path / "sqlcmd_h.csv"
    path.write_text(text + header + "\r\n" + row1 + "\r\n" + row2 + "\r\n", encoding="utf-8")
    snaps = read_import_file(path)
    assert [s.samples[0].counters["reads"] for s in snaps] == [100, 150]


@pytest.mark.parametrize(
    ("line1", "expect"),
    [
        (
            "Sqlcmd: Error: Microsoft ODBC Driver 18 for SQL Server : Login failed for user 'x'.",
            "collection failed",
        ),
        ("Msg 297, Level 16, State 1, Server SQL01, Line 1", "collection failed"),
        (
            'SQL30082N  Security processing failed with reason "24" ("USERNAME AND/OR PASSWORD INVALID").',
            "collection failed",
        ),
        (";".join(FS_HEADER), "separated by ';'"),
        (",".join(fs_row()), "Db2 `EXPORT"),
    ],
)
def test_line_1_problems_get_a_specific_hint(tmp_path: Path, line1: str, expect: str) -> None:
    path = tmp_path / "first.csv"
    path.write_text(line1 + "\r\n" + ",".join(fs_row()) + "\r\n", encoding="utf-8")
    err = refused(path)
    assert_place(err, path, 1, None)
    assert expect in str(err)


def test_partial_keeps_the_complete_samples_before_a_communication_failure(tmp_path: Path) -> None:
    rows = [fs_row(sample_time=f"2024-05-01T10:{m:02d}:00Z", file_id=f) for m in (0, 5, 10) for f in (1, 2)]
    path = write_csv(tmp_path / "cut.csv", rows[:5])  # the 10:10 sample has one of its two rows
    with path.open("a", encoding="utf-8", newline="") as fh:
        fh.write(",".join(fs_row(sample_time="2024-05-01T10:10:00Z", file_id=2))[:40] + "\r\n")
        fh.write("Sqlcmd: Error: Microsoft ODBC Driver 18 for SQL Server : Communication link failure.\r\n")
    err = refused(path)
    assert err.line == 7 and "--partial" in str(err)
    snaps = read_import_file(path, partial=True)
    assert [(s.sample_time.minute, len(s.samples)) for s in snaps] == [(0, 2), (5, 2)]


def test_partial_does_not_hide_a_bad_line_in_the_middle(tmp_path: Path) -> None:
    rows = [fs_row(), fs_row()[:5], fs_row(sample_time="2024-05-01T10:05:00Z")]
    path = write_csv(tmp_path / "middle.csv", rows)
    with pytest.raises(ImportFileError) as err:
        read_import_file(path, partial=True)
    assert err.value.line == 3


def test_future_sample_and_start_after_sample_are_refused_with_their_place(tmp_path: Path) -> None:
    now = utc(2024, 5, 1, 10, 0)
    soon = write_csv(tmp_path / "skew.csv", [fs_row(sample_time="2024-05-01T10:04:00Z")])
    assert len(read_import_file(soon, now=now)) == 1  # within the tolerated clock skew
    future = write_csv(tmp_path / "future.csv", [fs_row(), fs_row(sample_time="2099-01-01T00:00:00Z")])
    with pytest.raises(ImportFileError) as err:
        read_import_file(future, now=now)
    assert_place(err.value, future, 3, "sample_time")
    start = write_csv(tmp_path / "start.csv", [fs_row(sqlserver_start_time="2024-05-02T00:00:00Z")])
    with pytest.raises(ImportFileError) as err:
        read_import_file(start, now=now)
    assert_place(err.value, start, 2, "sqlserver_start_time")


def test_rows_of_one_sample_apart_are_streamed_as_parts_and_merged_by_read_import_file(
    tmp_path: Path,
) -> None:
    from connectors.files import iter_import_file

    rows = [
        fs_row(file_id=1),
        fs_row(sample_time="2024-05-01T10:05:00Z", file_id=1),
        fs_row(file_id=2),  # 10:00 again, after the server moved on: a second part
        fs_row(sample_time="2024-05-01T10:05:00Z", file_id=2),
    ]
    path = write_csv(tmp_path / "apart.csv", rows)
    parts = [(p.snapshot.sample_time.minute, p.lines) for p in iter_import_file(path)]
    assert parts == [(0, (2,)), (0, (4,)), (5, (3, 5))]
    assert [len(s.samples) for s in read_import_file(path)] == [2, 2]
