"""Column contracts shared by the live connectors and the import files.

A live query and the CSV that the shipped collection script writes have the same columns with
the same names (lower case), so one mapper turns either into snapshot records. Each shape lists
its columns, their types and whether they are required; the import reader validates against it
and the connector queries select exactly these names.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from connectors.records import Engine


class ColumnType(StrEnum):
    TEXT = "text"
    INT = "int"  # a whole number; counters must also be >= 0
    COUNTER = "counter"  # a cumulative, non-negative whole number (deltas are taken of it)
    GAUGE = "gauge"  # a non-negative size or level that may go down (pages used, bytes on disk)
    TIMESTAMP = "timestamp"  # ISO-8601; UTC when no offset is given
    BOOL = "bool"  # 0/1, true/false, Y/N


@dataclass(frozen=True, slots=True)
class Column:
    """`required`: the column must be in the header / result. `nullable`: it may still be empty,
    because the source legitimately returns NULL (a log file has no filegroup; a table space
    without automatic storage has no storage group; sys.dm_db_index_operational_stats has no row
    for a partition whose metadata is not cached -- absent, not 0)."""

    name: str
    type: ColumnType
    required: bool = True
    nullable: bool = False


@dataclass(frozen=True, slots=True)
class Shape:
    """One result/file shape: which engine it belongs to and its columns."""

    name: str
    engine: Engine
    columns: tuple[Column, ...]
    # columns whose presence in a header identifies this shape
    signature: frozenset[str]
    # the column holding the counters' epoch (restart detection)
    start_column: str
    # the columns that identify one object on one server (checks that a file does not contradict
    # itself); the mappers decide the ObjectRef.key itself
    object_key: tuple[str, ...]

    def column(self, name: str) -> Column | None:
        for col in self.columns:
            if col.name == name:
                return col
        return None


def _c(name: str, type_: ColumnType, required: bool = True, nullable: bool = False) -> Column:
    return Column(name, type_, required, nullable or not required)


T, N, C, G, TS, B = (
    ColumnType.TEXT,
    ColumnType.INT,
    ColumnType.COUNTER,
    ColumnType.GAUGE,
    ColumnType.TIMESTAMP,
    ColumnType.BOOL,
)

# sys.dm_io_virtual_file_stats joined with sys.master_files, sys.filegroups (per database) and
# sys.dm_os_sys_info.sqlserver_start_time. The contract is fixed by issue #2; column meanings in
# domain.md §1.1-1.2.
SQLSERVER_FILE_STATS = Shape(
    name="sqlserver_file_stats",
    engine=Engine.SQLSERVER,
    columns=(
        _c("sample_time", TS),
        _c("server_name", T),
        _c("sqlserver_start_time", TS),
        _c("database_name", T),
        _c("file_id", N),
        _c("file_name", T),
        _c("type_desc", T),
        _c("filegroup_name", T, nullable=True),  # present in the header; empty for LOG
        _c("physical_name", T),
        _c("size_on_disk_bytes", G),
        _c("num_of_reads", C),
        _c("num_of_bytes_read", C),
        _c("io_stall_read_ms", C),
        _c("num_of_writes", C),
        _c("num_of_bytes_written", C),
        _c("io_stall_write_ms", C),
        # optional extras (2014+: Resource Governor queueing)
        _c("io_stall_queued_read_ms", C, required=False),
        _c("io_stall_queued_write_ms", C, required=False),
        _c("volume_mount_point", T, required=False),
        _c("volume_total_bytes", G, required=False),
        _c("volume_available_bytes", G, required=False),
    ),
    signature=frozenset({"num_of_reads", "io_stall_read_ms", "file_id"}),
    start_column="sqlserver_start_time",
    object_key=("database_name", "file_id"),
)

# One row per partition of each index/heap: sys.partitions + partition function/scheme/boundaries
# (sys.partition_functions, sys.partition_range_values, sys.destination_data_spaces) +
# sys.allocation_units.used_pages + sys.dm_db_index_operational_stats counters (domain.md §1.4-1.5).
SQLSERVER_PARTITIONS = Shape(
    name="sqlserver_partitions",
    engine=Engine.SQLSERVER,
    columns=(
        _c("sample_time", TS),
        _c("server_name", T),
        _c("sqlserver_start_time", TS),
        _c("database_name", T),
        _c("schema_name", T),
        _c("table_name", T),
        _c("index_id", N),
        _c("index_name", T, required=False),
        _c("partition_number", N),
        _c("partition_scheme", T, required=False),
        _c("partition_function", T, required=False),
        _c("boundary_value_on_right", B, required=False),
        _c("range_low", T, required=False),
        _c("range_high", T, required=False),
        _c("filegroup_name", T),
        _c("rows", G),
        _c("used_pages", G, nullable=True),
        _c("range_scan_count", C, nullable=True),
        _c("singleton_lookup_count", C, nullable=True),
        _c("page_io_latch_wait_count", C, nullable=True),
        _c("page_io_latch_wait_in_ms", C, nullable=True),
        _c("leaf_insert_count", C, required=False),
        _c("leaf_update_count", C, required=False),
        _c("leaf_delete_count", C, required=False),
    ),
    signature=frozenset({"partition_number", "singleton_lookup_count"}),
    start_column="sqlserver_start_time",
    object_key=("database_name", "schema_name", "table_name", "index_id", "partition_number"),
)

# MON_GET_TABLESPACE(NULL, -2) aggregated over members, element names in lower case, plus the
# storage group from SYSCAT.TABLESPACES.SGNAME and the activation time from
# MON_GET_DATABASE.DB_CONN_TIME (domain.md §4.2, §4.6).
DB2_TABLESPACES = Shape(
    name="db2_tablespaces",
    engine=Engine.DB2,
    columns=(
        _c("sample_time", TS),
        _c("server_name", T),
        _c("db_name", T),
        _c("db_conn_time", TS),
        _c("tbsp_name", T),
        _c("tbsp_id", N),
        _c("tbsp_type", T),
        _c("tbsp_content_type", T),
        _c("storage_group_name", T, nullable=True),
        _c("tbsp_page_size", N),
        _c("tbsp_used_pages", G),
        _c("tbsp_total_pages", G, required=False),
        _c("pool_data_l_reads", C),
        _c("pool_data_p_reads", C),
        _c("pool_async_data_reads", C),
        _c("pool_index_l_reads", C),
        _c("pool_index_p_reads", C),
        _c("pool_async_index_reads", C),
        _c("pool_temp_data_l_reads", C, required=False),
        _c("pool_temp_data_p_reads", C, required=False),
        _c("pool_temp_index_l_reads", C, required=False),
        _c("pool_temp_index_p_reads", C, required=False),
        _c("pool_xda_l_reads", C, required=False),
        _c("pool_xda_p_reads", C, required=False),
        _c("pool_async_xda_reads", C, required=False),
        _c("pool_col_l_reads", C, required=False),
        _c("pool_col_p_reads", C, required=False),
        _c("pool_async_col_reads", C, required=False),
        _c("pool_read_time", C),
        _c("pool_async_read_time", C),
        _c("pool_data_writes", C),
        _c("pool_index_writes", C),
        _c("pool_xda_writes", C, required=False),
        _c("pool_col_writes", C, required=False),
        _c("pool_write_time", C),
        _c("vectored_ios", C),
        _c("pages_from_vectored_ios", C),
        _c("block_ios", C),
        _c("pages_from_block_ios", C),
        _c("direct_reads", C),
        _c("direct_read_reqs", C),
        _c("direct_read_time", C),
        _c("direct_writes", C),
        _c("direct_write_reqs", C),
        _c("direct_write_time", C),
    ),
    signature=frozenset({"tbsp_name", "pool_data_l_reads"}),
    start_column="db_conn_time",
    object_key=("db_name", "tbsp_name"),
)

# MON_GET_TABLE(NULL, NULL, -2) per data partition, aggregated over members, joined to
# SYSCAT.DATAPARTITIONS (ranges) and SYSCAT.TABLESPACES (table space, storage group, page size)
# (domain.md §4.4, §4.6).
DB2_TABLE_PARTITIONS = Shape(
    name="db2_table_partitions",
    engine=Engine.DB2,
    columns=(
        _c("sample_time", TS),
        _c("server_name", T),
        _c("db_name", T),
        _c("db_conn_time", TS),
        _c("tabschema", T),
        _c("tabname", T),
        _c("data_partition_id", N),
        _c("datapartitionname", T, required=False),
        _c("tbsp_name", T),
        _c("storage_group_name", T, nullable=True),
        _c("tbsp_page_size", N),
        _c("lowvalue", T, required=False),
        _c("lowinclusive", B, required=False),
        _c("highvalue", T, required=False),
        _c("highinclusive", B, required=False),
        _c("card", N, required=False),
        _c("data_object_l_pages", G, nullable=True),
        _c("index_object_l_pages", G, required=False),
        _c("table_scans", C),
        _c("rows_read", C),
        _c("rows_inserted", C),
        _c("rows_updated", C),
        _c("rows_deleted", C),
        _c("object_data_l_reads", C),
        _c("object_data_p_reads", C),
        _c("object_data_gbp_l_reads", C, required=False),
        _c("direct_read_reqs", C, required=False),
        _c("direct_write_reqs", C, required=False),
    ),
    signature=frozenset({"tabname", "data_partition_id", "object_data_l_reads"}),
    start_column="db_conn_time",
    object_key=("db_name", "tabschema", "tabname", "data_partition_id"),
)

# MON_GET_TRANSACTION_LOG(-2): the database's log as one object (domain.md §4.5).
DB2_TRANSACTION_LOG = Shape(
    name="db2_transaction_log",
    engine=Engine.DB2,
    columns=(
        _c("sample_time", TS),
        _c("server_name", T),
        _c("db_name", T),
        _c("db_conn_time", TS),
        _c("log_path", T, required=False),
        _c("log_size_bytes", G, required=False),
        _c("log_writes", C),  # 4 KB pages
        _c("log_write_time", C),
        _c("num_log_write_io", C),
        _c("log_reads", C),
        _c("log_read_time", C),
        _c("num_log_read_io", C),
    ),
    signature=frozenset({"num_log_write_io", "log_write_time"}),
    start_column="db_conn_time",
    object_key=("db_name",),
)

# sys.dm_os_performance_counters, object "<prefix>:Buffer Manager" (SQLServer: for a default
# instance, MSSQL$<name>: for a named one), one row per poll with one column per counter
# (domain.md §1.7). The "/sec" counters (cntr_type 272696576) are cumulative since the service
# started despite their names; Page life expectancy (65792) is an instantaneous gauge. They give
# the instance-wide read-miss ratio (page reads / page lookups) and read-ahead share (readahead
# pages / page reads) that no per-file DMV has (domain.md §2).
SQLSERVER_BUFFER_MANAGER = Shape(
    name="sqlserver_buffer_manager",
    engine=Engine.SQLSERVER,
    columns=(
        _c("sample_time", TS),
        _c("server_name", T),
        _c("sqlserver_start_time", TS),
        _c("page_reads", C, nullable=True),  # 'Page reads/sec': physical pages read
        _c("page_lookups", C, nullable=True),  # 'Page lookups/sec': pages requested from the pool
        _c("readahead_pages", C, nullable=True),  # 'Readahead pages/sec'
        _c("page_writes", C, nullable=True),  # 'Page writes/sec'
        _c("page_life_expectancy", G, nullable=True),  # seconds, instantaneous
    ),
    signature=frozenset({"page_lookups", "page_reads"}),
    start_column="sqlserver_start_time",
    object_key=("server_name",),
)

# MON_GET_BUFFERPOOL(NULL, -2) aggregated per BP_NAME (counters and BP_CUR_BUFFSZ summed over
# members, each member has its own pool memory), hidden IBMSYSTEMBP* pools left out, page size
# from SYSCAT.BUFFERPOOLS (domain.md §4.5, hit ratio formulas §4.8).
DB2_BUFFERPOOLS = Shape(
    name="db2_bufferpools",
    engine=Engine.DB2,
    columns=(
        _c("sample_time", TS),
        _c("server_name", T),
        _c("db_name", T),
        _c("db_conn_time", TS),
        _c("bp_name", T),
        _c("bp_page_size", N, required=False),
        _c("bp_cur_buffsz", G),  # pages
        _c("pool_data_l_reads", C),
        _c("pool_data_p_reads", C),
        _c("pool_async_data_reads", C),
        _c("pool_index_l_reads", C),
        _c("pool_index_p_reads", C),
        _c("pool_async_index_reads", C),
        _c("pool_temp_data_l_reads", C, required=False),
        _c("pool_temp_data_p_reads", C, required=False),
        _c("pool_temp_index_l_reads", C, required=False),
        _c("pool_temp_index_p_reads", C, required=False),
        _c("pool_data_lbp_pages_found", C),
        _c("pool_async_data_lbp_pages_found", C),
        _c("pool_read_time", C),
        _c("pool_async_read_time", C),
        _c("pool_data_writes", C),
        _c("pool_index_writes", C),
        _c("pool_write_time", C),
        _c("unread_prefetch_pages", C),
    ),
    signature=frozenset({"bp_name", "pool_data_l_reads"}),
    start_column="db_conn_time",
    object_key=("db_name", "bp_name"),
)

# MON_GET_CONTAINER(NULL, -2) aggregated per (TBSP_NAME, CONTAINER_NAME): counters summed over
# members, sizes (the same container and file system seen by each member) taken once with MAX
# (domain.md §4.3). FS_TOTAL_SIZE / FS_USED_SIZE are bytes of the container's file system; they
# are NULL (or -1, read as absent) where Db2 cannot tell, e.g. raw devices.
DB2_CONTAINERS = Shape(
    name="db2_containers",
    engine=Engine.DB2,
    columns=(
        _c("sample_time", TS),
        _c("server_name", T),
        _c("db_name", T),
        _c("db_conn_time", TS),
        _c("tbsp_name", T),
        _c("container_name", T),
        _c("container_id", N),
        _c("db_storage_path_id", N, nullable=True),  # NULL without automatic storage
        _c("fs_id", T, required=False),
        _c("fs_total_size", G, nullable=True),
        _c("fs_used_size", G, nullable=True),
        _c("tbsp_page_size", N, required=False),
        _c("total_pages", G),
        _c("usable_pages", G),
        _c("pages_read", C),
        _c("pages_written", C),
        _c("direct_reads", C),
        _c("direct_writes", C),
        _c("pool_read_time", C),
        _c("direct_read_time", C),
        _c("direct_write_time", C),
    ),
    signature=frozenset({"container_name", "pages_read"}),
    start_column="db_conn_time",
    object_key=("db_name", "tbsp_name", "container_name"),
)

ALL_SHAPES: tuple[Shape, ...] = (
    SQLSERVER_FILE_STATS,
    SQLSERVER_PARTITIONS,
    SQLSERVER_BUFFER_MANAGER,
    DB2_TABLESPACES,
    DB2_TABLE_PARTITIONS,
    DB2_TRANSACTION_LOG,
    DB2_BUFFERPOOLS,
    DB2_CONTAINERS,
)


def shape_for_header(header: list[str]) -> Shape | None:
    """The shape whose signature columns all appear in the (lower-cased) header."""
    cols = {h.strip().lower() for h in header}
    matches = [s for s in ALL_SHAPES if s.signature <= cols]
    # the most specific signature wins (partition shapes also carry file-like names)
    matches.sort(key=lambda s: len(s.signature), reverse=True)
    return matches[0] if matches else None
