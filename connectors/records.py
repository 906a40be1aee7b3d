"""Typed snapshot records: the one shape every source (SQL Server, DB2, import files, simulator) yields.

A snapshot is what one poll of one server saw at one instant: cumulative counters per object, plus
the object's identity and location. Counters stay cumulative here; interval deltas are computed
later (advisors/deltas.py) so that restarts and resets are judged in one place.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from datetime import datetime
from enum import StrEnum


class Engine(StrEnum):
    SQLSERVER = "sqlserver"
    DB2 = "db2"


class ObjectKind(StrEnum):
    DATA_FILE = "data_file"
    LOG_FILE = "log_file"
    FILEGROUP = "filegroup"
    PARTITION = "partition"
    TABLESPACE = "tablespace"
    TEMPDB = "tempdb"
    # Monitored for context, never placed on a tier (see MONITOR_ONLY_KINDS):
    BUFFER_POOL = "buffer_pool"  # a DB2 buffer pool (MON_GET_BUFFERPOOL)
    INSTANCE = "instance"  # instance-wide counters (SQL Server Buffer Manager)
    CONTAINER = "container"  # a DB2 table space container (MON_GET_CONTAINER)


# Kinds that describe memory or the storage layout rather than data that can move between tiers:
# their samples flow through the same ingest and delta path (cumulative counters in `extra`, core
# counters None), but they are not placement units. A buffer pool or the SQL Server instance
# gives the read-miss and read-ahead ratios the engine only exposes at that level (domain.md §2,
# §4.8); a container tells which paths and file systems a table space uses.
MONITOR_ONLY_KINDS: frozenset[ObjectKind] = frozenset(
    {ObjectKind.BUFFER_POOL, ObjectKind.INSTANCE, ObjectKind.CONTAINER}
)


# The engine-neutral cumulative counters. A source that cannot provide one leaves it None
# (e.g. SQL Server partitions have no file-level byte counts) rather than inventing a value.
CORE_COUNTERS: tuple[str, ...] = (
    "reads",  # read requests (SQL Server num_of_reads; DB2 sync page reads + vectored/block + direct)
    "bytes_read",
    "read_time_ms",  # total wait on reads (SQL Server io_stall_read_ms; DB2 pool + direct read time)
    "writes",
    "bytes_written",
    "write_time_ms",
)


# Marks ObjectRef's location fields (dataclasses.field metadata), from which LOCATION_FIELDS is derived.
_LOCATION: Mapping[str, bool] = {"location": True}


@dataclass(frozen=True, slots=True)
class ObjectRef:
    """Identity and location of one monitored object.

    `key` is stable for the object's life on its server (file_id, table space name, partition
    number), so a move to another path or storage group is the same object in a new location.

    Keys per kind: "{db}/file/{file_id}" (SQL Server files), "{db}/partition/...",
    "{db}/tablespace/{name}", "{db}/log" (DB2), "{db}/bufferpool/{name}" (DB2 buffer pool),
    "{db}/container/{tablespace}/{container path}" (DB2 container) and "instance/buffer_manager"
    (the SQL Server instance's Buffer Manager counters; `database` is "" for instance-wide objects).

    The volume fields describe the file system the object lives on, for capacity pre-checks:
    - SQL Server files: sys.dm_os_volume_stats (volume_mount_point, total_bytes, available_bytes);
      None on builds without it.
    - DB2 containers: their file system (MON_GET_CONTAINER FS_ID, FS_TOTAL_SIZE and
      FS_TOTAL_SIZE - FS_USED_SIZE).
    - DB2 table spaces: the file system with the least free space among those holding the table
      space's containers (a striped table space stops growing when its fullest file system is full,
      so this is the conservative number); `paths` lists every container, by container id.
    `size_bytes` of a DB2 buffer pool is its current memory (BP_CUR_BUFFSZ pages x page size).
    """

    engine: Engine
    server: str
    database: str
    kind: ObjectKind
    key: str
    name: str
    size_bytes: int | None = None
    # Where the object lives: the object vocabulary's location fields (LOCATION_FIELDS, below),
    # which the store's objects, the advisors' ObjectInfo and the advice document repeat
    # (tests/advisors/test_vocabulary.py holds them to this list).
    physical_name: str | None = field(default=None, metadata=_LOCATION)
    logical_name: str | None = field(default=None, metadata=_LOCATION)
    file_id: int | None = field(default=None, metadata=_LOCATION)
    filegroup: str | None = field(default=None, metadata=_LOCATION)
    storage_group: str | None = field(default=None, metadata=_LOCATION)
    tablespace: str | None = field(default=None, metadata=_LOCATION)
    # schema-qualified, e.g. "dbo.Orders"
    table_name: str | None = field(default=None, metadata=_LOCATION)
    # the schema on its own (SQL Server sys.schemas.name, DB2 TABSCHEMA), so "schema.table" need
    # not be split: a schema or table name may itself contain "." (None: the source did not say)
    schema_name: str | None = field(default=None, metadata=_LOCATION)
    partition_number: int | None = field(default=None, metadata=_LOCATION)
    partition_scheme: str | None = field(default=None, metadata=_LOCATION)
    partition_function: str | None = field(default=None, metadata=_LOCATION)
    range_low: str | None = field(default=None, metadata=_LOCATION)
    range_high: str | None = field(default=None, metadata=_LOCATION)
    # SQL Server boundary_value_on_right; None for DB2
    range_right: bool | None = field(default=None, metadata=_LOCATION)
    low_inclusive: bool | None = field(default=None, metadata=_LOCATION)
    high_inclusive: bool | None = field(default=None, metadata=_LOCATION)
    rows: int | None = None
    volume: str | None = None  # mount point (SQL Server) or file system id (DB2 FS_ID)
    volume_total_bytes: int | None = None
    volume_available_bytes: int | None = None
    paths: tuple[str, ...] = ()  # DB2 table space: its container paths


# The object vocabulary, defined once (ObjectRef above owns it): the fields that say where an
# object lives, in the order the advice JSON lists them. Everything that copies a location derives
# its list from this (the advice, the store's ingest); the typed declarations that
# repeat them (app.store.models.DbObject, advisors.features.ObjectInfo, advisors.document) are
# checked against it by tests/advisors/test_vocabulary.py.
LOCATION_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(ObjectRef) if f.metadata.get("location"))


@dataclass(frozen=True, slots=True)
class ObjectSample:
    """One object's cumulative counters at the snapshot's instant."""

    ref: ObjectRef
    counters: Mapping[str, int | None]
    # Engine-specific cumulative counters kept as the engine names them in lower case
    # (pool_data_l_reads, singleton_lookup_count, ...); deltas are taken of these too.
    extra: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Everything one poll of one server returned.

    `instance_start` is when the counters started from zero (SQL Server sqlserver_start_time,
    DB2 database activation time); a change of it between two snapshots means a restart.
    """

    engine: Engine
    server: str
    sample_time: datetime
    instance_start: datetime | None
    samples: tuple[ObjectSample, ...]


# Characters no object name may carry: C0 controls (CR, LF, NUL, TAB, ...), DEL, C1 controls and
# the Unicode line and paragraph separators. A name is data that ends up in mail headers, logs,
# CSV exports and scripts, where a line break in it splits a line; SQL Server and Db2 allow them
# in delimited identifiers, but no real server, database, file or table space is named so.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_ESCAPES = {"\r": "\\r", "\n": "\\n", "\t": "\\t", "\x00": "\\0"}


def control_character(text: str) -> tuple[int, str] | None:
    """The first control character in `text` (its 0-based position and a DBA-readable name, e.g.
    "carriage return (U+000D)"), or None for a name that may be kept as it is."""
    m = _CONTROL.search(text)
    if m is None:
        return None
    ch = m.group()
    name = {"\r": "carriage return", "\n": "line feed", "\t": "tab", "\x00": "NUL", "\x7f": "DEL"}.get(ch)
    name = name or unicodedata.name(ch, "control character").lower()
    return m.start(), f"{name} (U+{ord(ch):04X})"


def escape_controls(text: str) -> str:
    """`text` with each control character written visibly (\\r, \\n, \\t, \\0, \\xNN, \\uNNNN):
    for a name read before names were checked, where it must not break a line (a mail header)."""
    return _CONTROL.sub(
        lambda m: (
            _ESCAPES.get(m.group())
            or (f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}")
        ),
        text,
    )


class SourceError(Exception):
    """A source could not be read. The message never contains a connection string or secret."""


class ImportFileError(SourceError):
    """A malformed import file, with the place named so a DBA can fix it."""

    def __init__(self, path: str, line: int | None, column: str | None, message: str) -> None:
        self.path = path
        self.line = line
        self.column = column
        self.message = message
        where = path
        if line is not None:
            where += f", line {line}"
        if column is not None:
            where += f", column {column!r}"
        super().__init__(f"{where}: {message}")
