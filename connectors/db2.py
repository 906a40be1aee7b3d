"""Db2 LUW source: MON_GET_* / SYSCAT rows -> snapshot records, and the live ibm_db collector.

The mappers are pure and shared with the import-file reader. ibm_db is imported only inside
`collect` / `test_connection`, so the service starts without the Db2 CLI driver. Connection-string
parsing, redaction, typed rows and snapshot assembly are shared with connectors/sqlserver.py.
"""

from __future__ import annotations

import logging
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from connectors import queries
from connectors.records import Engine, ObjectKind, ObjectRef, ObjectSample, Snapshot, SourceError
from connectors.shapes import (
    DB2_BUFFERPOOLS,
    DB2_CONTAINERS,
    DB2_TABLE_PARTITIONS,
    DB2_TABLESPACES,
    DB2_TRANSACTION_LOG,
    ColumnType,
    Shape,
)
from connectors.sqlserver import (
    NO_COUNTERS,
    Mapper,
    Row,
    attribute,
    build_snapshot,
    flag,
    num,
    parse_connection_string,
    present,
    req_text,
    scrub,
    text,
)

__all__ = [
    "bufferpool_sample",
    "collect",
    "container_sample",
    "snapshot_from_results",
    "table_partition_sample",
    "tablespace_sample",
    "test_connection",
    "transaction_log_sample",
    "with_container_locations",
]

log = logging.getLogger(__name__)

LOG_PAGE_BYTES = 4096  # LOG_READS / LOG_WRITES count 4 KB pages (db2mon multiplies by 4096)
SECTOR_BYTES = 512  # DIRECT_READS / DIRECT_WRITES count 512-byte sectors
QUERY_NAMES = ("tablespaces", "table_partitions", "transaction_log", "bufferpools", "containers")

P_READS = (
    "pool_data_p_reads",
    "pool_index_p_reads",
    "pool_temp_data_p_reads",
    "pool_temp_index_p_reads",
    "pool_xda_p_reads",
    "pool_col_p_reads",
)
ASYNC_READS = (
    "pool_async_data_reads",
    "pool_async_index_reads",
    "pool_async_xda_reads",
    "pool_async_col_reads",
)
POOL_WRITES = ("pool_data_writes", "pool_index_writes", "pool_xda_writes", "pool_col_writes")


def _counter_columns(shape: Shape) -> tuple[str, ...]:
    """Cumulative counters only: page counts are gauges (they go down after a reorg) and stay out of
    `extra`, so a shrink is never read as a counter reset."""
    return tuple(c.name for c in shape.columns if c.type is ColumnType.COUNTER)


def _sum(row: Row, keys: Sequence[str]) -> int:
    return sum(num(row, k) or 0 for k in keys)


def _times(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a * b


def tablespace_sample(row: Row) -> ObjectSample:
    """One table space (DB2_TABLESPACES row), counters summed over members by the query.

    Db2 counts pages, not requests, so the core counters are approximations (docs/connect-db2.md):
    - p_reads = sum of the POOL_*_P_READS present; async = sum of the POOL_ASYNC_*_READS present;
    - reads = max(p_reads - async, 0) (synchronous page reads, one I/O each) + VECTORED_IOS +
      BLOCK_IOS (prefetch requests) + DIRECT_READ_REQS;
    - bytes_read = p_reads * page size + DIRECT_READS * 512; read_time_ms = POOL_READ_TIME +
      DIRECT_READ_TIME;
    - writes = sum of POOL_*_WRITES present + DIRECT_WRITE_REQS; bytes_written = pool writes *
      page size + DIRECT_WRITES * 512; write_time_ms = POOL_WRITE_TIME + DIRECT_WRITE_TIME.
    Every counter column present is also kept in `extra` under its own name.
    """
    db, tbsp = req_text(row, "db_name"), req_text(row, "tbsp_name")
    page = num(row, "tbsp_page_size")
    p_reads = _sum(row, P_READS)
    sync_pages = max(p_reads - _sum(row, ASYNC_READS), 0)
    pool_writes = _sum(row, POOL_WRITES)
    page_bytes = page or 0
    content = text(row, "tbsp_content_type")
    ref = ObjectRef(
        engine=Engine.DB2,
        server=req_text(row, "server_name"),
        database=db,
        kind=ObjectKind.TEMPDB if content in ("SYSTEMP", "USRTEMP") else ObjectKind.TABLESPACE,
        key=f"{db}/tablespace/{tbsp}",
        name=tbsp,
        size_bytes=_times(num(row, "tbsp_used_pages"), page),
        storage_group=text(row, "storage_group_name"),
        tablespace=tbsp,
    )
    counters = {
        "reads": sync_pages + _sum(row, ("vectored_ios", "block_ios", "direct_read_reqs")),
        "bytes_read": p_reads * page_bytes + _sum(row, ("direct_reads",)) * SECTOR_BYTES,
        "read_time_ms": _sum(row, ("pool_read_time", "direct_read_time")),
        "writes": pool_writes + _sum(row, ("direct_write_reqs",)),
        "bytes_written": pool_writes * page_bytes + _sum(row, ("direct_writes",)) * SECTOR_BYTES,
        "write_time_ms": _sum(row, ("pool_write_time", "direct_write_time")),
    }
    return ObjectSample(ref=ref, counters=counters, extra=present(row, _counter_columns(DB2_TABLESPACES)))


_QUOTED = re.compile(r"^'((?:[^']|'')*)'$")


def _bound(value: str | None) -> str | None:
    """LOWVALUE/HIGHVALUE text: MINVALUE/MAXVALUE (open end) -> None; one quoted literal unquoted."""
    if value is None or value.strip().upper() in ("MINVALUE", "MAXVALUE", ""):
        return None
    m = _QUOTED.match(value.strip())
    return m[1].replace("''", "'") if m else value.strip()


def table_partition_sample(row: Row) -> ObjectSample:
    """One data partition of a range-partitioned table (DB2_TABLE_PARTITIONS row).

    No file-level counters (core counters None); MON_GET_TABLE activity is in `extra`. Size =
    (DATA_OBJECT_L_PAGES + INDEX_OBJECT_L_PAGES) * the data table space's page size (partitioned
    indexes in a table space with another page size make this approximate). MINVALUE/MAXVALUE
    ends become None (open), like SQL Server's open ends.
    """
    db = req_text(row, "db_name")
    schema, table = req_text(row, "tabschema"), req_text(row, "tabname")
    pid = num(row, "data_partition_id")
    low, high = _bound(text(row, "lowvalue")), _bound(text(row, "highvalue"))
    data_pages, index_pages = num(row, "data_object_l_pages"), num(row, "index_object_l_pages")
    pages = None if data_pages is None else data_pages + (index_pages or 0)
    part_name = text(row, "datapartitionname")
    ref = ObjectRef(
        engine=Engine.DB2,
        server=req_text(row, "server_name"),
        database=db,
        kind=ObjectKind.PARTITION,
        key=f"{db}/partition/{schema}.{table}/{pid}",
        name=f"{schema}.{table} {part_name}" if part_name else f"{schema}.{table} p{pid}",
        size_bytes=_times(pages, num(row, "tbsp_page_size")),
        storage_group=text(row, "storage_group_name"),
        tablespace=text(row, "tbsp_name"),
        table_name=f"{schema}.{table}",
        schema_name=schema,
        partition_number=pid,
        range_low=low,
        range_high=high,
        low_inclusive=flag(row, "lowinclusive") if low is not None else None,
        high_inclusive=flag(row, "highinclusive") if high is not None else None,
        rows=num(row, "card"),
    )
    extra = present(row, _counter_columns(DB2_TABLE_PARTITIONS))
    return ObjectSample(ref=ref, counters=dict(NO_COUNTERS), extra=extra)


def transaction_log_sample(row: Row) -> ObjectSample:
    """The database's transaction log (DB2_TRANSACTION_LOG row): log pages are 4 KB."""
    db = req_text(row, "db_name")
    ref = ObjectRef(
        engine=Engine.DB2,
        server=req_text(row, "server_name"),
        database=db,
        kind=ObjectKind.LOG_FILE,
        key=f"{db}/log",
        name=f"{db} transaction log",
        size_bytes=num(row, "log_size_bytes"),
        physical_name=text(row, "log_path"),
    )
    counters = {
        "reads": num(row, "num_log_read_io"),
        "bytes_read": _times(num(row, "log_reads"), LOG_PAGE_BYTES),
        "read_time_ms": num(row, "log_read_time"),
        "writes": num(row, "num_log_write_io"),
        "bytes_written": _times(num(row, "log_writes"), LOG_PAGE_BYTES),
        "write_time_ms": num(row, "log_write_time"),
    }
    return ObjectSample(ref=ref, counters=counters)


def bufferpool_sample(row: Row) -> ObjectSample:
    """One buffer pool (DB2_BUFFERPOOLS row), counters summed over members by the query.

    Pages, not I/O requests: the core counters are None and every counter column present is kept
    in `extra` for the pool-level ratios of domain.md §4.8 (hit ratio from the LBP pages found,
    prefetch share, sync read latency). size_bytes = BP_CUR_BUFFSZ x page size (memory, not
    storage); None when the page size is not in the row.
    """
    db, bp = req_text(row, "db_name"), req_text(row, "bp_name")
    ref = ObjectRef(
        engine=Engine.DB2,
        server=req_text(row, "server_name"),
        database=db,
        kind=ObjectKind.BUFFER_POOL,
        key=f"{db}/bufferpool/{bp}",
        name=bp,
        size_bytes=_times(num(row, "bp_cur_buffsz"), num(row, "bp_page_size")),
    )
    extra = present(row, _counter_columns(DB2_BUFFERPOOLS))
    return ObjectSample(ref=ref, counters=dict(NO_COUNTERS), extra=extra)


def container_sample(row: Row) -> ObjectSample:
    """One table space container (DB2_CONTAINERS row): where the table space's data lives.

    Not a placement unit (the table space is); kept as its own object so the container paths and
    their file systems reach the store and the import path, and its cumulative page counters
    (pages_read, pages_written, direct_*, *_time) show how I/O spreads over the paths. Core
    counters None. physical_name = the container path, file_id = CONTAINER_ID (its number within
    the table space), size_bytes = TOTAL_PAGES x page size when the page size is in the row; the
    volume fields are its file system (FS_ID, FS_TOTAL_SIZE, FS_TOTAL_SIZE - FS_USED_SIZE).
    """
    db, tbsp, name = req_text(row, "db_name"), req_text(row, "tbsp_name"), req_text(row, "container_name")
    total, used = num(row, "fs_total_size"), num(row, "fs_used_size")
    ref = ObjectRef(
        engine=Engine.DB2,
        server=req_text(row, "server_name"),
        database=db,
        kind=ObjectKind.CONTAINER,
        key=f"{db}/container/{tbsp}/{name}",
        name=name,
        size_bytes=_times(num(row, "total_pages"), num(row, "tbsp_page_size")),
        physical_name=name,
        file_id=num(row, "container_id"),
        tablespace=tbsp,
        volume=text(row, "fs_id"),
        volume_total_bytes=total,
        volume_available_bytes=None if total is None or used is None else max(total - used, 0),
    )
    extra = present(row, _counter_columns(DB2_CONTAINERS))
    return ObjectSample(ref=ref, counters=dict(NO_COUNTERS), extra=extra)


_LOCATED_KINDS = (ObjectKind.TABLESPACE, ObjectKind.TEMPDB)


def with_container_locations(
    samples: Iterable[ObjectSample], containers: Iterable[ObjectSample]
) -> tuple[ObjectSample, ...]:
    """`samples` with each table space's ref completed from its containers (same server, database
    and table space name): `paths` = the container paths by container id, and the volume fields
    = the file system with the least free space among the table space's containers (ties: the
    lowest container id). Other samples, and table spaces without containers, are unchanged."""
    by_space: dict[tuple[str, str, str], list[ObjectSample]] = defaultdict(list)
    for c in containers:
        if c.ref.kind is ObjectKind.CONTAINER and c.ref.tablespace is not None:
            by_space[(c.ref.server, c.ref.database, c.ref.tablespace)].append(c)
    out: list[ObjectSample] = []
    for s in samples:
        found = by_space.get((s.ref.server, s.ref.database, s.ref.tablespace or ""))
        if s.ref.kind not in _LOCATED_KINDS or not found:
            out.append(s)
            continue
        refs = sorted((c.ref for c in found), key=lambda r: (r.file_id is None, r.file_id or 0, r.name))
        sized = [r for r in refs if r.volume_available_bytes is not None]
        fullest = min(sized, key=lambda r: r.volume_available_bytes or 0) if sized else None
        ref = replace(
            s.ref,
            paths=tuple(r.name for r in refs),
            volume=fullest.volume if fullest else None,
            volume_total_bytes=fullest.volume_total_bytes if fullest else None,
            volume_available_bytes=fullest.volume_available_bytes if fullest else None,
        )
        out.append(replace(s, ref=ref))
    return tuple(out)


HANDLERS: dict[str, tuple[Shape, Mapper]] = {
    "tablespaces": (DB2_TABLESPACES, tablespace_sample),
    "table_partitions": (DB2_TABLE_PARTITIONS, table_partition_sample),
    "transaction_log": (DB2_TRANSACTION_LOG, transaction_log_sample),
    "bufferpools": (DB2_BUFFERPOOLS, bufferpool_sample),
    "containers": (DB2_CONTAINERS, container_sample),
}


def snapshot_from_results(
    results: Mapping[str, Sequence[Mapping[str, object]]], *, sample_time: datetime
) -> Snapshot:
    """Recorded or live result rows ("tablespaces", "table_partitions", "transaction_log",
    "bufferpools", "containers"); the containers also complete their table spaces' refs
    (`with_container_locations`)."""
    snap = build_snapshot(Engine.DB2, results, HANDLERS, sample_time=sample_time)
    return replace(snap, samples=with_container_locations(snap.samples, snap.samples))


# ---------------------------------------------------------------------------------------------
# Live collection (ibm_db).


def db2_target(connection_string: str) -> str:
    """ "host:port/DATABASE" for messages; no secrets."""
    host = attribute(connection_string, "hostname", "host") or "(no HOSTNAME)"
    port = attribute(connection_string, "port", "servicename")
    database = attribute(connection_string, "database", "dbalias", "dsn") or "(no DATABASE)"
    return f"{host}:{port}/{database}" if port else f"{host}/{database}"


def with_connect_timeout(connection_string: str, timeout_s: int) -> str:
    """Add CONNECTTIMEOUT (CLI keyword ConnectTimeout, seconds) unless the DBA set one."""
    try:
        keys = {k.lower() for k, _ in parse_connection_string(connection_string)}
    except ValueError:
        raise SourceError(
            "the Db2 connection string is malformed (unbalanced braces or a missing '=')"
        ) from None
    if "connecttimeout" in keys:
        return connection_string
    return f"{connection_string.rstrip().rstrip(';')};CONNECTTIMEOUT={int(timeout_s)};"


_SQLCODE = re.compile(r"SQL(\d{4,5})N")
_REASONS = {
    "30081": "server unreachable (connection refused, timed out, or wrong host/port)",
    "30082": "login failed (check the user name and password)",
    "1336": "host name not found",
    "1013": "database not found on that server",
    "30061": "database not found on that server",
    "551": "missing privilege (see docs/connect-db2.md for the grants)",
    "440": "routine not found or not executable (see docs/connect-db2.md; Db2 10.5+ needed)",
    "952": "query timed out (cancelled by the query timeout)",
    "204": "object not found (Db2 10.5 or later needed; see docs/connect-db2.md)",
    "206": "column not found (Db2 10.5 or later needed; see docs/connect-db2.md)",
}


def _error(message: str, connection_string: str, doing: str) -> SourceError:
    detail = scrub(message.strip(), connection_string)
    m = _SQLCODE.search(detail)
    reason = _REASONS.get(m[1] if m else "", "driver error")
    return SourceError(f"{doing} {db2_target(connection_string)}: {reason}: {detail}")


def _import_ibm_db() -> Any:
    try:
        import ibm_db
    except ImportError as exc:
        raise SourceError(
            f"ibm_db cannot be loaded ({exc.__class__.__name__}); install the ibm_db package and its "
            "CLI driver (see docs/connect-db2.md)"
        ) from None
    return ibm_db


def _connect(ibm_db: Any, connection_string: str, timeout_s: int) -> Any:
    try:
        return ibm_db.connect(with_connect_timeout(connection_string, timeout_s), "", "")
    except Exception as exc:  # ibm_db raises plain Exception
        message = str(exc) or (ibm_db.conn_errormsg() or "")
        raise _error(message, connection_string, "cannot connect to Db2 at") from None


def _fetch(ibm_db: Any, conn: Any, cs: str, name: str, timeout_s: int) -> list[Row]:
    sql = queries.load("db2", name)
    try:
        stmt = ibm_db.prepare(conn, sql)
        if not stmt:
            raise RuntimeError(ibm_db.stmt_errormsg() or "prepare failed")
        # statement option 0 = statement level; the pattern of ibm_db's own test_setgetOption.py
        ibm_db.set_option(stmt, {ibm_db.SQL_ATTR_QUERY_TIMEOUT: int(timeout_s)}, 0)
        ibm_db.execute(stmt)
        rows: list[Row] = []
        while (r := ibm_db.fetch_assoc(stmt)) is not False:
            rows.append({str(k).lower(): v for k, v in r.items()})
        return rows
    except Exception as exc:
        message = str(exc) or (ibm_db.stmt_errormsg() or "")
        raise _error(message, cs, f"query {name} failed on") from None


def _close(ibm_db: Any, conn: Any) -> None:
    try:
        ibm_db.close(conn)
    except Exception:  # closing a broken connection must not hide the real error
        log.debug("closing the Db2 connection failed", exc_info=True)


def collect(connection_string: str, *, sample_time: datetime, timeout_s: int = 30) -> Snapshot:
    """Poll one database: table spaces, range partitions, the transaction log, buffer pools and
    table space containers."""
    ibm_db = _import_ibm_db()
    conn = _connect(ibm_db, connection_string, timeout_s)
    try:
        results = {name: _fetch(ibm_db, conn, connection_string, name, timeout_s) for name in QUERY_NAMES}
    finally:
        _close(ibm_db, conn)
    return snapshot_from_results(results, sample_time=sample_time)


def test_connection(connection_string: str, *, timeout_s: int = 15) -> str:
    """Connect and describe the server, e.g. "DB2/LINUXX8664 11.05.0900 (database SAMPLE)"."""
    ibm_db = _import_ibm_db()
    conn = _connect(ibm_db, connection_string, timeout_s)
    try:
        info = ibm_db.server_info(conn)
        name, version = getattr(info, "DBMS_NAME", "Db2"), getattr(info, "DBMS_VER", "?")
    except Exception as exc:
        raise _error(str(exc), connection_string, "cannot read the server description of") from None
    finally:
        _close(ibm_db, conn)
    return f"{name} {version} (database {attribute(connection_string, 'database', 'dbalias') or '?'})"
