"""SQL Server source: DMV/catalog rows -> snapshot records, and the live pyodbc collector.

The pure parts (typed rows, mappers, snapshot assembly, connection-string redaction) are shared
with the import-file reader and the DB2 connector, so they never touch a driver. pyodbc is only
imported inside `collect` / `test_connection`: the service must start on a machine without an
ODBC driver manager.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from connectors import connstr, queries
from connectors.records import (
    CORE_COUNTERS,
    Engine,
    ObjectKind,
    ObjectRef,
    ObjectSample,
    Snapshot,
    SourceError,
    control_character,
    escape_controls,
)
from connectors.shapes import (
    SQLSERVER_BUFFER_MANAGER,
    SQLSERVER_FILE_STATS,
    SQLSERVER_PARTITIONS,
    ColumnType,
    Shape,
)

log = logging.getLogger(__name__)

Row = Mapping[str, object]
Mapper = Callable[[Row], ObjectSample]
PAGE_BYTES = 8192  # SQL Server page size; used_pages are 8 KB pages
NO_COUNTERS: dict[str, int | None] = dict.fromkeys(CORE_COUNTERS)

# ---------------------------------------------------------------------------------------------
# Connection strings: the grammar, which values are secrets and their redaction live in
# connectors.connstr (ibm_db takes the same syntax); db2.py imports these names from here.

redact_text = connstr.redact_text
scrub = connstr.scrub


def parse_connection_string(connection_string: str) -> list[tuple[str, str]]:
    """(key, value) pairs in order, read as drivers read them (a repeated key or text after a
    brace passes: targets stored before strings were checked). Raises ValueError
    (connstr.ConnectionStringError) on what no driver can read, naming the problem and its
    position, never a value."""
    return [(a.key, a.value) for a in connstr.parse(connection_string, strict=False)]


def attribute(connection_string: str, *names: str) -> str | None:
    """The value of the first of `names` (case-insensitive) present, or None."""
    try:
        pairs = parse_connection_string(connection_string)
    except ValueError:
        return None
    wanted = [n.lower() for n in names]
    for name in wanted:
        for k, v in pairs:
            if k.lower() == name and v:
                return v
    return None


def sqlserver_target(connection_string: str) -> str:
    """ "host:port" (or host\\instance) named in the string, for messages; no secrets."""
    server = attribute(connection_string, "server", "address", "addr", "data source") or "(no SERVER)"
    server = re.sub(r"(?i)^(tcp|np|lpc):", "", server).replace(",", ":")
    port = attribute(connection_string, "port")
    return f"{server}:{port}" if port and ":" not in server else server


# ---------------------------------------------------------------------------------------------
# Typed rows: driver values (or JSON fixture values) -> the shape's Python types.

_DB2_TS = re.compile(r"^(\d{4}-\d{2}-\d{2})-(\d{2})\.(\d{2})\.(\d{2})(\.\d+)?$")


def _to_int(value: object) -> int:
    if isinstance(value, bool):
        raise TypeError("expected a whole number, got a boolean")
    if isinstance(value, int):
        return value
    if isinstance(value, Decimal | float):
        if value != int(value):
            raise ValueError("expected a whole number")
        return int(value)
    if isinstance(value, str):
        return int(value.strip())
    raise TypeError(f"expected a whole number, got {type(value).__name__}")


def _to_timestamp(value: object) -> datetime:
    if isinstance(value, str):
        text = value.strip()
        m = _DB2_TS.match(text)
        if m:
            text = f"{m[1]}T{m[2]}:{m[3]}:{m[4]}{m[5] or ''}"
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if not isinstance(value, datetime):
        raise TypeError(f"expected a timestamp, got {type(value).__name__}")
    # Our queries return UTC; a naive value is UTC by contract (shapes.ColumnType.TIMESTAMP).
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _to_bool(value: object) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("1", "0", "y", "n", "true", "false", "yes", "no"):
        return value.strip().lower() in ("1", "y", "true", "yes")
    raise ValueError("expected a boolean (0/1, Y/N, true/false)")


def convert(column_type: ColumnType, value: object) -> object:
    """One value converted to the column type; None and empty text mean absent."""
    if value is None:
        return None
    if column_type is ColumnType.TEXT:
        text = value.decode() if isinstance(value, bytes) else str(value)
        return text if text != "" else None
    if column_type is ColumnType.TIMESTAMP:
        return _to_timestamp(value)
    if column_type is ColumnType.BOOL:
        return _to_bool(value)
    if isinstance(value, str) and value.strip() == "":
        return None
    number = _to_int(value)
    # Db2 reports -1 for "not collected" in a few places; a counter cannot be negative.
    return None if column_type in (ColumnType.COUNTER, ColumnType.GAUGE) and number < 0 else number


def typed_row(shape: Shape, raw: Mapping[str, object]) -> dict[str, object]:
    """A result row keyed by the shape's lower-case names with typed values (extra keys dropped)."""
    lowered = {str(k).lower(): v for k, v in raw.items()}
    out: dict[str, object] = {}
    for col in shape.columns:
        if col.name not in lowered:
            if col.required:
                raise SourceError(f"{shape.name}: result has no column {col.name!r}")
            out[col.name] = None
            continue
        try:
            out[col.name] = convert(col.type, lowered[col.name])
        except (TypeError, ValueError, ArithmeticError) as exc:
            raise SourceError(f"{shape.name}: column {col.name!r}: {exc}") from None
    return out


def text(row: Row, key: str) -> str | None:
    value = row.get(key)
    return value if isinstance(value, str) else None


def req_text(row: Row, key: str) -> str:
    value = row.get(key)
    if not isinstance(value, str):
        raise SourceError(f"column {key!r} is missing or empty")
    return value


def num(row: Row, key: str) -> int | None:
    value = row.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def flag(row: Row, key: str) -> bool | None:
    value = row.get(key)
    return value if isinstance(value, bool) else None


def present(row: Row, keys: Sequence[str]) -> dict[str, int]:
    """The given counters that have a value (absent stays absent, never 0)."""
    return {k: v for k in keys if (v := num(row, k)) is not None}


# ---------------------------------------------------------------------------------------------
# Mappers (shape rows -> records). Also used by connectors/files.py for import files.


def file_sample(row: Row) -> ObjectSample:
    """One database file (SQLSERVER_FILE_STATS row): its location and vfs counters."""
    database = req_text(row, "database_name")
    file_id = num(row, "file_id")
    is_log = text(row, "type_desc") == "LOG"
    kind = (
        ObjectKind.LOG_FILE if is_log else ObjectKind.TEMPDB if database == "tempdb" else ObjectKind.DATA_FILE
    )
    name = req_text(row, "file_name")
    ref = ObjectRef(
        engine=Engine.SQLSERVER,
        server=req_text(row, "server_name"),
        database=database,
        kind=kind,
        key=f"{database}/file/{file_id}",
        name=name,
        size_bytes=num(row, "size_on_disk_bytes"),
        logical_name=name,
        physical_name=text(row, "physical_name"),
        file_id=file_id,
        filegroup=None if is_log else text(row, "filegroup_name"),
        volume=text(row, "volume_mount_point"),
        volume_total_bytes=num(row, "volume_total_bytes"),
        volume_available_bytes=num(row, "volume_available_bytes"),
    )
    counters = {
        "reads": num(row, "num_of_reads"),
        "bytes_read": num(row, "num_of_bytes_read"),
        "read_time_ms": num(row, "io_stall_read_ms"),
        "writes": num(row, "num_of_writes"),
        "bytes_written": num(row, "num_of_bytes_written"),
        "write_time_ms": num(row, "io_stall_write_ms"),
    }
    extra = present(row, ("io_stall_queued_read_ms", "io_stall_queued_write_ms"))
    return ObjectSample(ref=ref, counters=counters, extra=extra)


PARTITION_EXTRAS = (
    "range_scan_count",
    "singleton_lookup_count",
    "page_io_latch_wait_count",
    "page_io_latch_wait_in_ms",
    "leaf_insert_count",
    "leaf_update_count",
    "leaf_delete_count",
)


def partition_sample(row: Row) -> ObjectSample:
    """One partition of an index/heap (SQLSERVER_PARTITIONS row).

    A partition has no file-level counters, so the core counters are all None; its activity is in
    `extra` (operational stats, absent when SQL Server had not cached the partition's metadata).
    RANGE RIGHT: lower bound inclusive, upper exclusive; RANGE LEFT the reverse; open ends None.
    """
    database = req_text(row, "database_name")
    schema, table = req_text(row, "schema_name"), req_text(row, "table_name")
    index_id, number = num(row, "index_id"), num(row, "partition_number")
    low, high = text(row, "range_low"), text(row, "range_high")
    right = flag(row, "boundary_value_on_right")
    low_inc = high_inc = None
    if right is not None:
        low_inc = right if low is not None else None
        high_inc = (not right) if high is not None else None
    label = f"{schema}.{table}"
    if index_id is not None and index_id > 1:
        label += f" {text(row, 'index_name') or f'index {index_id}'}"
    used = num(row, "used_pages")
    ref = ObjectRef(
        engine=Engine.SQLSERVER,
        server=req_text(row, "server_name"),
        database=database,
        kind=ObjectKind.PARTITION,
        key=f"{database}/partition/{schema}.{table}/{index_id}/{number}",
        name=f"{label} p{number}",
        size_bytes=None if used is None else used * PAGE_BYTES,
        filegroup=text(row, "filegroup_name"),
        table_name=f"{schema}.{table}",
        schema_name=schema,
        partition_number=number,
        partition_scheme=text(row, "partition_scheme"),
        partition_function=text(row, "partition_function"),
        range_low=low,
        range_high=high,
        range_right=right,
        low_inclusive=low_inc,
        high_inclusive=high_inc,
        rows=num(row, "rows"),
    )
    return ObjectSample(ref=ref, counters=dict(NO_COUNTERS), extra=present(row, PARTITION_EXTRAS))


BUFFER_MANAGER_KEY = "instance/buffer_manager"
BUFFER_MANAGER_EXTRAS = ("page_reads", "page_lookups", "readahead_pages", "page_writes")


def buffer_manager_sample(row: Row) -> ObjectSample:
    """The instance's Buffer Manager counters (SQLSERVER_BUFFER_MANAGER row) as one INSTANCE object.

    Instance-wide, so `database` is "" and the key is fixed. The counters are pages, not I/O
    requests, so the core counters are None and the cumulative ones go to `extra` (page_reads,
    page_lookups, readahead_pages, page_writes): read-miss ratio = Δpage_reads / Δpage_lookups,
    read-ahead share = Δreadahead_pages / Δpage_reads (domain.md §2). Page life expectancy is an
    instantaneous gauge: it is in the shape (and the CSV) but not in the record, since `extra`
    holds only counters that are differenced (a falling gauge there would read as a reset).
    """
    ref = ObjectRef(
        engine=Engine.SQLSERVER,
        server=req_text(row, "server_name"),
        database="",
        kind=ObjectKind.INSTANCE,
        key=BUFFER_MANAGER_KEY,
        name="Buffer Manager",
    )
    return ObjectSample(ref=ref, counters=dict(NO_COUNTERS), extra=present(row, BUFFER_MANAGER_EXTRAS))


# ---------------------------------------------------------------------------------------------
# Snapshot assembly (pure; shared with db2.py).


def build_snapshot(
    engine: Engine,
    results: Mapping[str, Sequence[Mapping[str, object]]],
    handlers: Mapping[str, tuple[Shape, Mapper]],
    *,
    sample_time: datetime,
) -> Snapshot:
    """Type, map and check every result row; one server, unique keys, latest counter epoch."""
    if sample_time.tzinfo is None:
        raise ValueError("sample_time must be timezone-aware")
    unknown = set(results) - set(handlers)
    if unknown:
        raise ValueError(f"unknown result sets: {sorted(unknown)}")
    samples: list[ObjectSample] = []
    servers: set[str] = set()
    starts: list[datetime] = []
    refused: list[str] = []
    for name, (shape, mapper) in handlers.items():
        for raw in results.get(name, ()):
            row = typed_row(shape, raw)
            if (bad := _control_in_names(shape, row)) is not None:
                refused.append(bad)  # a name that would break lines downstream: never stored
                continue
            start = row.get(shape.start_column)
            if isinstance(start, datetime):
                starts.append(start)
            sample = mapper(row)
            servers.add(sample.ref.server)
            samples.append(sample)
    if refused:
        log.error(
            "%s: %d row(s) refused, their names hold control characters (line breaks, ...): %s",
            escape_controls(next(iter(servers), "") or "a server"),
            len(refused),
            "; ".join(refused[:5]) + ("; ..." if len(refused) > 5 else ""),
        )
    if not samples and refused:
        raise SourceError(
            f"every row was refused: names hold control characters (line breaks, ...), e.g. {refused[0]}"
        )
    if not samples:
        raise SourceError("the server returned no rows at all (check the permissions in the connect guide)")
    if len(servers) > 1:
        raise SourceError(f"rows name more than one server: {sorted(servers)}")
    seen: set[str] = set()
    for s in samples:
        if s.ref.key in seen:
            raise SourceError(f"object {s.ref.key!r} appears twice in one snapshot")
        seen.add(s.ref.key)
    return Snapshot(
        engine=engine,
        server=servers.pop(),
        sample_time=sample_time.astimezone(UTC),
        instance_start=max(starts) if starts else None,
        samples=tuple(samples),
    )


def _control_in_names(shape: Shape, row: Row) -> str | None:
    """Where a polled row's name holds a control character ("file_stats column 'file_name' =
    'Sa\\r\\nles': carriage return (U+000D)", escaped), or None. Such a row is refused, as an import
    file with it is: a name that breaks lines would break mail headers, logs, exports and scripts."""
    for col in shape.columns:
        value = row.get(col.name)
        if col.type is ColumnType.TEXT and isinstance(value, str) and (bad := control_character(value)):
            return f"{shape.name} column {col.name!r} = '{escape_controls(value)[:80]}': {bad[1]}"
    return None


HANDLERS: dict[str, tuple[Shape, Mapper]] = {
    "file_stats": (SQLSERVER_FILE_STATS, file_sample),
    "partitions": (SQLSERVER_PARTITIONS, partition_sample),
    "buffer_manager": (SQLSERVER_BUFFER_MANAGER, buffer_manager_sample),
}


def snapshot_from_results(
    results: Mapping[str, Sequence[Mapping[str, object]]], *, sample_time: datetime
) -> Snapshot:
    """Recorded or live result rows ("file_stats", "partitions", "buffer_manager") -> one Snapshot."""
    return build_snapshot(Engine.SQLSERVER, results, HANDLERS, sample_time=sample_time)


# ---------------------------------------------------------------------------------------------
# Live collection (pyodbc).


def quote_name(name: str) -> str:
    """T-SQL bracket quoting (QUOTENAME): ']' doubled. Rejects what QUOTENAME would."""
    if not name or len(name) > 128 or "\x00" in name:
        raise SourceError("database name is empty, longer than 128 characters or contains NUL")
    return "[" + name.replace("]", "]]") + "]"


def for_database(sql: str, database: str) -> tuple[str, list[str]]:
    """A per-database query: {db} -> the quoted name (three-part names, no USE); one parameter per ?."""
    return sql.replace("{db}", quote_name(database)), [database] * sql.count("?")


def _import_pyodbc() -> Any:
    try:
        import pyodbc
    except ImportError as exc:
        raise SourceError(
            f"pyodbc cannot be loaded ({exc.__class__.__name__}); install unixODBC and an ODBC driver "
            "for SQL Server (see docs/connect-sqlserver.md)"
        ) from None
    return pyodbc


_REASONS = {
    "08001": "server unreachable (connection refused, timed out, or wrong host/port/instance)",
    "08S01": "server unreachable (connection refused, timed out, or wrong host/port/instance)",
    "HYT00": "timed out",
    "28000": "login failed (check the user name and password)",
    "42000": "permission denied or invalid statement (see docs/connect-sqlserver.md for the grants)",
}


def _error(pyodbc: Any, exc: BaseException, connection_string: str, doing: str) -> SourceError:
    """A SourceError naming the target and the problem, scrubbed of secrets."""
    state = str(exc.args[0]) if isinstance(exc, pyodbc.Error) and exc.args else ""
    detail = scrub(str(exc.args[-1]) if exc.args else str(exc), connection_string)
    lowered = detail.lower()
    if state == "IM002" or "can't open lib" in lowered or "data source name not found" in lowered:
        reason = f"ODBC driver not found; installed: {', '.join(pyodbc.drivers()) or 'none'}"
    else:
        reason = _REASONS.get(state, "driver error")
    return SourceError(f"{doing} {sqlserver_target(connection_string)}: {reason} ({detail})")


def _connect(pyodbc: Any, connection_string: str, timeout_s: int) -> Any:
    try:
        conn = pyodbc.connect(connection_string, autocommit=True, timeout=timeout_s)
        conn.timeout = timeout_s  # query timeout for every statement on this connection
        return conn
    except pyodbc.Error as exc:
        raise _error(pyodbc, exc, connection_string, "cannot connect to SQL Server at") from None


def _fetch(pyodbc: Any, cur: Any, cs: str, name: str, sql: str, params: Sequence[object] = ()) -> list[Row]:
    """Run one statement; its rows keyed by lower-case column name ([] if it returns none)."""
    try:
        cur.execute(sql, *params)
        if cur.description is None:
            return []
        columns = [d[0].lower() for d in cur.description]
        return [dict(zip(columns, r, strict=True)) for r in cur.fetchall()]
    except pyodbc.Error as exc:
        raise _error(pyodbc, exc, cs, f"query {name} failed on") from None


def _close(pyodbc: Any, conn: Any) -> None:
    try:
        conn.close()
    except pyodbc.Error:  # closing a broken connection must not hide the real error
        log.debug("closing the connection failed", exc_info=True)


def collect(connection_string: str, *, sample_time: datetime, timeout_s: int = 30) -> Snapshot:
    """Poll one instance: its Buffer Manager counters, and the file stats and partition map of
    every online database we can enter."""
    pyodbc = _import_pyodbc()
    cs = connection_string
    conn = _connect(pyodbc, cs, timeout_s)
    try:
        cur = conn.cursor()
        # DMVs and catalog views only; dirty reads avoid blocking behind DDL (as FRK does).
        _fetch(pyodbc, cur, cs, "session", "SET TRANSACTION ISOLATION LEVEL READ UNCOMMITTED")
        probe = _fetch(pyodbc, cur, cs, "probe", queries.load("sqlserver", "probe"))[0]
        modern = bool(probe["has_volume_stats"]) and bool(probe["has_queued_io_stats"])
        variants = () if modern else ("pre2014",)
        buffers = _fetch(pyodbc, cur, cs, "buffer_manager", queries.load("sqlserver", "buffer_manager"))
        list_sql = queries.load("sqlserver", "databases")
        files: list[Row] = []
        parts: list[Row] = []
        for db in _fetch(pyodbc, cur, cs, "databases", list_sql):
            name = str(db["database_name"])
            if not db["has_access"]:
                log.warning(
                    "skipping database %s on %s: this login has no user in it", name, sqlserver_target(cs)
                )
                continue
            try:
                sql, params = for_database(queries.load("sqlserver", "file_stats", variants), name)
                db_files = _fetch(pyodbc, cur, cs, f"file_stats ({name})", sql, params)
                sql, params = for_database(queries.load("sqlserver", "partitions"), name)
                db_parts = _fetch(pyodbc, cur, cs, f"partitions ({name})", sql, params)
            except SourceError:
                still = {str(r["database_name"]): r for r in _fetch(pyodbc, cur, cs, "databases", list_sql)}
                if name in still and still[name]["has_access"]:
                    raise
                log.warning("database %s went offline or inaccessible during the poll; skipped", name)
                continue
            files.extend(db_files)
            parts.extend(db_parts)
    finally:
        _close(pyodbc, conn)
    if not files:
        raise SourceError(
            f"{sqlserver_target(cs)} returned no database files: grant VIEW ANY DEFINITION, "
            "VIEW SERVER STATE (VIEW SERVER PERFORMANCE STATE on 2022+) and a user in each database "
            "(see docs/connect-sqlserver.md)"
        )
    results = {"file_stats": files, "partitions": parts, "buffer_manager": buffers}
    return snapshot_from_results(results, sample_time=sample_time)


def test_connection(connection_string: str, *, timeout_s: int = 15) -> str:
    """Connect and describe the server, e.g. "Microsoft SQL Server 2019 (RTM-CU22) ... (SQL01)"."""
    pyodbc = _import_pyodbc()
    conn = _connect(pyodbc, connection_string, timeout_s)
    try:
        sql = queries.load("sqlserver", "version")
        row = _fetch(pyodbc, conn.cursor(), connection_string, "version", sql)[0]
    finally:
        _close(pyodbc, conn)
    first_line = str(row["version"]).strip().splitlines()[0].strip()
    return f"{first_line} ({row['server_name']})"
