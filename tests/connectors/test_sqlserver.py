"""SQL Server connector: recorded DMV rows -> exact records, query column contracts, secrets, real driver."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from sqlfluff.core import FluffConfig, Linter

from connectors import queries, sqlserver
from connectors.records import Engine, ObjectKind, ObjectRef, ObjectSample, SourceError
from connectors.shapes import (
    SQLSERVER_BUFFER_MANAGER,
    SQLSERVER_FILE_STATS,
    SQLSERVER_PARTITIONS,
    ColumnType,
    Shape,
    shape_for_header,
)
from tests.conftest import free_port

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sqlserver"
SAMPLE_TIME = datetime(2024, 5, 20, 10, 0, 5, tzinfo=UTC)
SERVER = "SQLPROD01\\OLTP"
START = datetime(2024, 5, 1, 6, 12, 40, 120000, tzinfo=UTC)


def load_fixture(path: Path, shape: Shape) -> list[dict[str, Any]]:
    """A fixture's rows, checked to be in the shape's exact columns and to name their source."""
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["source"].strip(), f"{path.name} must say where its column shape comes from"
    assert data["shape"] == shape.name
    names = [c.name for c in shape.columns]
    for row in data["rows"]:
        assert list(row) == names, f"{path.name}: row columns differ from {shape.name}"
    return list(data["rows"])


def select_columns(sql: str, dialect: str) -> list[str]:
    """Output column names of the outermost SELECT, from sqlfluff's parse tree (no regex)."""
    parsed = Linter(config=FluffConfig(overrides={"dialect": dialect})).parse_string(sql)
    assert not parsed.violations, parsed.violations
    tree = parsed.tree
    assert tree is not None
    assert not any(seg.is_type("unparsable") for seg in tree.recursive_crawl_all())
    with_stmt = next(tree.recursive_crawl("with_compound_statement"), None)
    if with_stmt is not None:
        select = with_stmt.get_child("select_statement")
    else:
        select = next(tree.recursive_crawl("select_statement"), None)
    assert select is not None
    clause = select.get_child("select_clause")
    assert clause is not None
    names: list[str] = []
    for element in clause.get_children("select_clause_element"):
        alias = element.get_child("alias_expression")
        holder = alias if alias is not None else element.get_child("column_reference")
        assert holder is not None, f"select item without a name: {element.raw!r}"
        idents = [s for s in holder.segments if s.is_type("naked_identifier", "quoted_identifier")]
        assert idents, f"select item without a name: {element.raw!r}"
        names.append(idents[-1].raw.strip('[]"').lower())
    return names


def tsql_for_parsing(sql: str) -> str:
    # {db} becomes a bracket-quoted name; sqlfluff's tsql dialect has no ODBC '?' marker, so each
    # marker becomes the literal it will be bound to.
    return sql.replace("{db}", "[Sales]").replace("?", "N'Sales'")


def snapshot() -> Any:
    results = {
        "file_stats": load_fixture(FIXTURES / "file_stats.json", SQLSERVER_FILE_STATS),
        "partitions": load_fixture(FIXTURES / "partitions.json", SQLSERVER_PARTITIONS),
        "buffer_manager": load_fixture(FIXTURES / "buffer_manager.json", SQLSERVER_BUFFER_MANAGER),
    }
    return sqlserver.snapshot_from_results(results, sample_time=SAMPLE_TIME)


def by_key(samples: tuple[ObjectSample, ...]) -> dict[str, ObjectSample]:
    return {s.ref.key: s for s in samples}


# --- snapshot assembly from recorded rows -----------------------------------------------------


def test_snapshot_header() -> None:
    snap = snapshot()
    assert snap.engine is Engine.SQLSERVER
    assert snap.server == SERVER
    assert snap.sample_time == SAMPLE_TIME
    assert snap.instance_start == START  # naive UTC text from the query -> aware UTC
    assert len(snap.samples) == 6 + 8 + 1


def test_oltp_data_file_exact_record() -> None:
    sample = by_key(snapshot().samples)["Sales/file/1"]
    assert sample.ref == ObjectRef(
        engine=Engine.SQLSERVER,
        server=SERVER,
        database="Sales",
        kind=ObjectKind.DATA_FILE,
        key="Sales/file/1",
        name="Sales",
        size_bytes=53687091200,
        logical_name="Sales",
        physical_name="D:\\MSSQL\\Data\\Sales.mdf",
        file_id=1,
        filegroup="PRIMARY",
        volume="D:\\",  # sys.dm_os_volume_stats, kept for capacity pre-checks
        volume_total_bytes=2_199_023_255_552,
        volume_available_bytes=879_609_302_220,
    )
    assert sample.counters == {
        "reads": 48_213_507,
        "bytes_read": 48_213_507 * 8192,
        "read_time_ms": 241_067_535,
        "writes": 9_876_543,
        "bytes_written": 9_876_543 * 16384,
        "write_time_ms": 29_629_629,
    }
    assert sample.extra == {"io_stall_queued_read_ms": 0, "io_stall_queued_write_ms": 0}


def test_log_and_tempdb_kinds() -> None:
    samples = by_key(snapshot().samples)
    log_file = samples["Sales/file/2"].ref
    assert log_file.kind is ObjectKind.LOG_FILE
    assert log_file.filegroup is None  # empty filegroup_name text for LOG
    assert samples["Sales/file/2"].counters["bytes_written"] == 31_457_280 * 6144
    assert samples["Sales/file/3"].ref.filegroup == "FG_ORDERS_2024"
    assert samples["Sales/file/3"].extra == {"io_stall_queued_read_ms": 12_500, "io_stall_queued_write_ms": 0}
    assert samples["tempdb/file/1"].ref.kind is ObjectKind.TEMPDB
    assert samples["tempdb/file/3"].ref.kind is ObjectKind.TEMPDB
    assert samples["tempdb/file/2"].ref.kind is ObjectKind.LOG_FILE  # tempdb's log is a log


def test_pre2014_rows_have_no_queue_extras() -> None:
    rows = load_fixture(FIXTURES / "file_stats_2012.json", SQLSERVER_FILE_STATS)
    snap = sqlserver.snapshot_from_results({"file_stats": rows}, sample_time=SAMPLE_TIME)
    (sample,) = snap.samples
    assert snap.server == "SQL2012\\LEGACY"
    assert sample.extra == {}
    assert sample.counters["read_time_ms"] == 12_000_000
    # no sys.dm_os_volume_stats: the volume is unknown, not zero
    assert (sample.ref.volume, sample.ref.volume_total_bytes, sample.ref.volume_available_bytes) == (
        None,
        None,
        None,
    )


def test_every_file_keeps_its_volume() -> None:
    samples = by_key(snapshot().samples)
    log = samples["Sales/file/2"].ref
    assert (log.volume, log.volume_total_bytes, log.volume_available_bytes) == (
        "L:\\",
        549_755_813_888,
        274_877_906_944,
    )
    files = [s.ref for s in samples.values() if s.ref.kind is not ObjectKind.PARTITION and s.ref.file_id]
    assert files and all(r.volume and r.volume_total_bytes and r.volume_available_bytes for r in files)


# --- the instance's Buffer Manager counters ---------------------------------------------------


def test_buffer_manager_is_one_instance_object_with_page_counters_in_extra() -> None:
    sample = by_key(snapshot().samples)["instance/buffer_manager"]
    assert sample.ref == ObjectRef(
        engine=Engine.SQLSERVER,
        server=SERVER,
        database="",
        kind=ObjectKind.INSTANCE,
        key="instance/buffer_manager",
        name="Buffer Manager",
    )
    assert sample.counters == dict.fromkeys(
        ("reads", "bytes_read", "read_time_ms", "writes", "bytes_written", "write_time_ms")
    )
    # cumulative counters only: Page life expectancy is a gauge and stays out of extra
    assert sample.extra == {
        "page_reads": 61_200_000,
        "page_lookups": 3_060_000_000,
        "readahead_pages": 20_400_000,
        "page_writes": 14_800_000,
    }
    x = sample.extra
    assert x["page_reads"] / x["page_lookups"] == pytest.approx(0.02)  # physical-read fraction
    assert x["readahead_pages"] / x["page_reads"] == pytest.approx(1 / 3)  # read-ahead share


def test_buffer_manager_counters_may_be_absent() -> None:
    row = load_fixture(FIXTURES / "buffer_manager.json", SQLSERVER_BUFFER_MANAGER)[0]
    row = dict(row, readahead_pages=None, page_life_expectancy=None)
    snap = sqlserver.snapshot_from_results({"buffer_manager": [row]}, sample_time=SAMPLE_TIME)
    assert "readahead_pages" not in snap.samples[0].extra  # NULL (other counter type): absent, not 0
    assert snap.instance_start == START
    # an instance without Buffer Manager counters returns no row: the poll still has its files
    files = load_fixture(FIXTURES / "file_stats.json", SQLSERVER_FILE_STATS)
    snap = sqlserver.snapshot_from_results(
        {"file_stats": files, "buffer_manager": []}, sample_time=SAMPLE_TIME
    )
    assert all(s.ref.kind is not ObjectKind.INSTANCE for s in snap.samples)


def test_buffer_manager_query_matches_default_and_named_instances() -> None:
    sql = queries.load("sqlserver", "buffer_manager")
    assert "LIKE N'%:Buffer Manager%'" in sql  # SQLServer:Buffer Manager and MSSQL$NAME:Buffer Manager
    for counter in ("Page reads/sec", "Page lookups/sec", "Readahead pages/sec", "Page writes/sec"):
        assert f"N'{counter}' AND pc.cntr_type = 272696576" in sql
    assert "N'Page life expectancy' AND pc.cntr_type = 65792" in sql


def test_fixture_headers_pick_their_shape() -> None:
    for path in sorted(FIXTURES.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        shape = shape_for_header(list(data["rows"][0]))
        assert shape is not None and shape.name == data["shape"], path.name


def test_range_right_partitions_with_open_ends() -> None:
    samples = by_key(snapshot().samples)
    first = samples["Sales/partition/dbo.Orders/1/1"]
    assert first.ref == ObjectRef(
        engine=Engine.SQLSERVER,
        server=SERVER,
        database="Sales",
        kind=ObjectKind.PARTITION,
        key="Sales/partition/dbo.Orders/1/1",
        name="dbo.Orders p1",
        size_bytes=7_340_032 * 8192,
        filegroup="FG_ORDERS_OLD",
        table_name="dbo.Orders",
        schema_name="dbo",
        partition_number=1,
        partition_scheme="ps_OrdersByYear",
        partition_function="pf_OrdersByYear",
        range_low=None,
        range_high="2023-01-01T00:00:00",
        range_right=True,
        low_inclusive=None,
        high_inclusive=False,
        rows=61_200_000,
    )
    middle = samples["Sales/partition/dbo.Orders/1/3"].ref
    assert (middle.range_low, middle.low_inclusive) == ("2024-01-01T00:00:00", True)
    assert (middle.range_high, middle.high_inclusive) == ("2025-01-01T00:00:00", False)
    last = samples["Sales/partition/dbo.Orders/1/4"].ref
    assert (last.range_low, last.low_inclusive, last.range_high, last.high_inclusive) == (
        "2025-01-01T00:00:00",
        True,
        None,
        None,
    )


def test_range_left_partitions() -> None:
    samples = by_key(snapshot().samples)
    refs = [samples[f"Sales/partition/dbo.Invoices/0/{n}"].ref for n in (1, 2, 3)]
    assert [(r.range_low, r.low_inclusive, r.range_high, r.high_inclusive) for r in refs] == [
        (None, None, "100000", True),
        ("100000", False, "200000", True),
        ("200000", False, None, None),
    ]
    assert all(r.range_right is False for r in refs)
    assert refs[0].name == "dbo.Invoices p1"  # a heap: no index name


def test_partition_counters_never_invented() -> None:
    samples = by_key(snapshot().samples)
    hot = samples["Sales/partition/dbo.Orders/1/3"]
    assert hot.counters == dict.fromkeys(
        ("reads", "bytes_read", "read_time_ms", "writes", "bytes_written", "write_time_ms")
    )
    assert hot.extra == {
        "range_scan_count": 15_400,
        "singleton_lookup_count": 48_200_000,
        "page_io_latch_wait_count": 2_950_000,
        "page_io_latch_wait_in_ms": 17_700_000,
        "leaf_insert_count": 19_900_000,
        "leaf_update_count": 4_100_000,
        "leaf_delete_count": 0,
    }
    # metadata not cached: the counters are absent, not zero
    assert samples["Sales/partition/dbo.Orders/1/4"].extra == {}


def test_nonclustered_index_partition_is_named_with_its_index() -> None:
    sample = by_key(snapshot().samples)["Sales/partition/dbo.Orders/2/3"]
    assert sample.ref.name == "dbo.Orders IX_Orders_CustomerID p3"
    assert sample.ref.size_bytes == 65_536 * 8192


def test_rows_from_two_servers_are_rejected() -> None:
    rows = load_fixture(FIXTURES / "file_stats.json", SQLSERVER_FILE_STATS)
    other = dict(rows[0], server_name="OTHER", file_id=99)
    with pytest.raises(SourceError, match="more than one server"):
        sqlserver.snapshot_from_results({"file_stats": [*rows, other]}, sample_time=SAMPLE_TIME)


def test_duplicate_objects_are_rejected() -> None:
    rows = load_fixture(FIXTURES / "file_stats.json", SQLSERVER_FILE_STATS)
    with pytest.raises(SourceError, match="appears twice"):
        sqlserver.snapshot_from_results({"file_stats": [rows[0], rows[0]]}, sample_time=SAMPLE_TIME)


def test_missing_required_column_is_named() -> None:
    row = load_fixture(FIXTURES / "file_stats.json", SQLSERVER_FILE_STATS)[0]
    del row["num_of_reads"]
    with pytest.raises(SourceError, match="num_of_reads"):
        sqlserver.snapshot_from_results({"file_stats": [row]}, sample_time=SAMPLE_TIME)


def test_naive_sample_time_and_unknown_result_set_are_errors() -> None:
    with pytest.raises(ValueError, match="timezone"):
        sqlserver.snapshot_from_results({}, sample_time=datetime(2024, 1, 1))
    with pytest.raises(ValueError, match="unknown result sets"):
        sqlserver.snapshot_from_results({"volumes": []}, sample_time=SAMPLE_TIME)


# --- live collection wiring (a stand-in pyodbc answering the shipped queries) ----------------


class _FakePyodbc:
    """Just enough of pyodbc for collect(): each statement is answered from recorded rows."""

    class Error(Exception):
        pass

    def __init__(self, answers: dict[str, list[dict[str, Any]]]) -> None:
        self.answers = answers
        self.executed: list[str] = []

    def connect(self, connection_string: str, autocommit: bool, timeout: int) -> Any:
        fake = self

        class Cursor:
            def __init__(self) -> None:
                self.description: list[tuple[str]] | None = None
                self.rows: list[tuple[Any, ...]] = []

            def execute(self, sql: str, *params: object) -> None:
                fake.executed.append(sql)
                if sql.startswith("SET "):
                    self.description = None
                    return
                answer = fake.answers[sql]
                names = list(answer[0]) if answer else ["x"]
                self.description = [(n,) for n in names]
                self.rows = [tuple(r[n] for n in names) for r in answer]

            def fetchall(self) -> list[tuple[Any, ...]]:
                return self.rows

        class Connection:
            timeout = 0

            def cursor(self) -> Cursor:
                return Cursor()

            def close(self) -> None:
                pass

        return Connection()


def test_collect_reads_the_buffer_manager_once_per_poll(monkeypatch: pytest.MonkeyPatch) -> None:
    files = [
        r
        for r in load_fixture(FIXTURES / "file_stats.json", SQLSERVER_FILE_STATS)
        if r["database_name"] == "Sales"
    ]
    buffers = load_fixture(FIXTURES / "buffer_manager.json", SQLSERVER_BUFFER_MANAGER)
    answers = {
        queries.load("sqlserver", "probe"): [{"has_volume_stats": 1, "has_queued_io_stats": 1}],
        queries.load("sqlserver", "buffer_manager"): buffers,
        queries.load("sqlserver", "databases"): [
            {"database_name": "Sales", "database_id": 5, "has_access": 1}
        ],
        sqlserver.for_database(queries.load("sqlserver", "file_stats"), "Sales")[0]: files,
        sqlserver.for_database(queries.load("sqlserver", "partitions"), "Sales")[0]: [],
    }
    fake = _FakePyodbc(answers)
    monkeypatch.setattr(sqlserver, "_import_pyodbc", lambda: fake)
    snap = sqlserver.collect("Driver={x};Server=db1", sample_time=SAMPLE_TIME)
    assert fake.executed.count(queries.load("sqlserver", "buffer_manager")) == 1
    samples = by_key(snap.samples)
    assert samples["instance/buffer_manager"].extra["page_lookups"] == 3_060_000_000
    assert samples["Sales/file/1"].ref.volume == "D:\\"
    assert len(snap.samples) == len(files) + 1


# --- driver values -> typed rows --------------------------------------------------------------


def test_driver_values_are_typed() -> None:
    assert sqlserver.convert(ColumnType.COUNTER, Decimal("123")) == 123
    assert sqlserver.convert(ColumnType.INT, "42") == 42
    assert sqlserver.convert(ColumnType.COUNTER, -1) is None  # "not collected", never a counter
    assert sqlserver.convert(ColumnType.TEXT, "") is None
    assert sqlserver.convert(ColumnType.BOOL, 1) is True
    assert sqlserver.convert(ColumnType.BOOL, "N") is False
    naive = datetime(2024, 5, 1, 6, 12, 40)
    assert sqlserver.convert(ColumnType.TIMESTAMP, naive) == naive.replace(tzinfo=UTC)
    assert sqlserver.convert(ColumnType.TIMESTAMP, "2024-05-12-03.00.05.000000") == datetime(
        2024, 5, 12, 3, 0, 5, tzinfo=UTC
    )
    assert sqlserver.convert(ColumnType.TIMESTAMP, "2024-05-12T05:00:05+02:00") == datetime(
        2024, 5, 12, 3, 0, 5, tzinfo=UTC
    )
    with pytest.raises(ValueError):
        sqlserver.convert(ColumnType.COUNTER, Decimal("1.5"))
    with pytest.raises(TypeError):
        sqlserver.convert(ColumnType.INT, True)


# --- the .sql files ---------------------------------------------------------------------------

SHAPED = {
    "file_stats": SQLSERVER_FILE_STATS,
    "partitions": SQLSERVER_PARTITIONS,
    "buffer_manager": SQLSERVER_BUFFER_MANAGER,
}
HELPERS = {
    "probe": ["has_volume_stats", "has_queued_io_stats"],
    "databases": ["database_name", "database_id", "has_access"],
    "version": ["version", "server_name"],
}


@pytest.mark.parametrize("variant", ["default", "pre2014"])
@pytest.mark.parametrize("name", sorted(SHAPED))
def test_shaped_queries_select_exactly_the_shape(variant: str, name: str) -> None:
    sql = queries.load("sqlserver", name, () if variant == "default" else (variant,))
    assert select_columns(tsql_for_parsing(sql), "tsql") == [c.name for c in SHAPED[name].columns]


@pytest.mark.parametrize("name", sorted(HELPERS))
def test_helper_queries_select_what_the_code_reads(name: str) -> None:
    assert select_columns(queries.load("sqlserver", name), "tsql") == HELPERS[name]


def test_every_query_file_is_covered() -> None:
    assert queries.names("sqlserver") == sorted([*SHAPED, *HELPERS])
    assert queries.names("sqlserver", "pre2014") == ["file_stats"]


def test_pre2014_variant_falls_back_to_default() -> None:
    assert queries.query_path("sqlserver", "partitions", ("pre2014",)).parent.name == "default"
    assert queries.query_path("sqlserver", "file_stats", ("pre2014",)).parent.name == "pre2014"
    with pytest.raises(ValueError):
        queries.load("sqlserver", "../secrets")


def test_placeholders_only_in_code_never_in_comments() -> None:
    # A database name may contain a newline: substituted into a -- comment it would escape it.
    for path in sorted(queries.QUERY_ROOT.rglob("*.sql")):
        for line in path.read_text(encoding="utf-8").splitlines():
            _, sep, comment = line.partition("--")
            if sep:
                assert "{db}" not in comment and "?" not in comment, f"{path.name}: {line!r}"


def test_per_database_queries_quote_the_name_and_bind_parameters() -> None:
    sql, params = sqlserver.for_database(queries.load("sqlserver", "partitions"), "we]ird {db}")
    assert "[we]]ird {db}].sys.partitions" in sql
    assert "{db}.sys" not in sql
    assert params == ["we]ird {db}", "we]ird {db}"]
    for bad in ("", "x" * 129, "a\x00b"):
        with pytest.raises(SourceError):
            sqlserver.quote_name(bad)


# --- secrets ----------------------------------------------------------------------------------

CS = "Driver={ODBC Driver 18 for SQL Server};Server=tcp:db1.corp,1433;UID=tw_reader;PWD={p;a}}ss};Encrypt=yes"


def test_redact_masks_user_and_password_and_keeps_the_rest() -> None:
    assert sqlserver.redact_text(CS) == (
        "Driver={ODBC Driver 18 for SQL Server};Server=tcp:db1.corp,1433;UID=***;PWD=***;Encrypt=yes"
    )
    assert sqlserver.parse_connection_string(CS)[3] == ("PWD", "p;a}ss")
    assert sqlserver.redact_text("server=x;Password=hunter2") == "server=x;Password=***"
    # malformed (unterminated brace): still masked, never echoed
    assert "s3cr3t" not in sqlserver.redact_text("Server=x;PWD={s3cr3t;UID=u")


def test_scrub_removes_secrets_from_driver_messages() -> None:
    message = "[Microsoft][ODBC Driver 18]Login failed for user 'TW_READER'. (p;a}ss)"
    assert sqlserver.scrub(message, CS) == "[Microsoft][ODBC Driver 18]Login failed for user '***'. (***)"
    assert sqlserver.scrub(f"bad string {CS}", CS).count("***") == 2
    # a short secret is masked where it stands alone, not inside other words
    assert sqlserver.scrub("does not exist for x", "PWD=x") == "does not exist for ***"


def test_target_is_named_without_secrets() -> None:
    assert sqlserver.sqlserver_target(CS) == "db1.corp:1433"
    assert sqlserver.sqlserver_target("DRIVER={FreeTDS};SERVER=10.0.0.5;PORT=1433") == "10.0.0.5:1433"


# --- the real driver (pyodbc + FreeTDS) against a closed port ---------------------------------

PASSWORD = "Sup3r;S3cret}x"
USER = "tierwise_probe"


def freetds_cs(port: int) -> str:
    pwd = "{" + PASSWORD.replace("}", "}}") + "}"
    return (
        f"DRIVER={{FreeTDS}};SERVER=127.0.0.1;PORT={port};DATABASE=master;"
        f"UID={USER};PWD={pwd};TDS_Version=7.4"
    )


def assert_clean(message: str, cs: str) -> None:
    for secret in (PASSWORD, "S3cret", USER, cs):
        assert secret not in message


def test_collect_unreachable_server_fails_fast_without_secrets() -> None:
    import pyodbc

    assert "FreeTDS" in pyodbc.drivers()
    port = free_port()
    cs = freetds_cs(port)
    started = time.monotonic()
    with pytest.raises(SourceError) as caught:
        sqlserver.collect(cs, sample_time=SAMPLE_TIME, timeout_s=3)
    assert time.monotonic() - started < 10
    message = str(caught.value)
    assert f"cannot connect to SQL Server at 127.0.0.1:{port}" in message
    assert "unreachable" in message
    assert_clean(message, cs)
    assert caught.value.__cause__ is None


def test_test_connection_unreachable_and_missing_driver() -> None:
    port = free_port()
    cs = freetds_cs(port)
    with pytest.raises(SourceError) as caught:
        sqlserver.test_connection(cs, timeout_s=3)
    assert_clean(str(caught.value), cs)
    bad = cs.replace("{FreeTDS}", "{No Such Driver 99}")
    with pytest.raises(SourceError, match=r"ODBC driver not found.*FreeTDS") as caught:
        sqlserver.test_connection(bad, timeout_s=3)
    assert_clean(str(caught.value), bad)


def test_partition_schema_is_its_own_field_even_with_dots_and_brackets() -> None:
    # a recorded SQLSERVER_PARTITIONS row (partitions.json, shape and source named there) with
    # names SQL Server allows: "." and "]" / '"' inside a schema and a table name
    row = dict(load_fixture(FIXTURES / "partitions.json", SQLSERVER_PARTITIONS)[0])
    row.update(schema_name='sales.eu]"x', table_name="Orders.2024]")
    assert list(row) == [c.name for c in SQLSERVER_PARTITIONS.columns]
    ref = (
        sqlserver.snapshot_from_results(
            {"file_stats": [], "partitions": [row], "buffer_manager": []}, sample_time=SAMPLE_TIME
        )
        .samples[0]
        .ref
    )
    assert ref.schema_name == 'sales.eu]"x'
    assert ref.table_name == 'sales.eu]"x.Orders.2024]'
    assert ref.key == 'Sales/partition/sales.eu]"x.Orders.2024]/1/1'


def test_every_recorded_partition_has_its_schema() -> None:
    parts = [s.ref for s in snapshot().samples if s.ref.kind is ObjectKind.PARTITION]
    assert parts and {r.schema_name for r in parts} == {"dbo"}
    assert all(r.table_name is not None and r.table_name.startswith("dbo.") for r in parts)
    # files and the instance have no schema
    others = [s.ref for s in snapshot().samples if s.ref.kind is not ObjectKind.PARTITION]
    assert {r.schema_name for r in others} == {None}
