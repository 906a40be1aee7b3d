-- tierwise: one row per partition of every partitioned index or heap of ONE database
-- (shape sqlserver_partitions). Non-partitioned tables are tiered through their filegroup's files
-- and are not listed here.
-- Filegroup: the partition scheme's destination for this partition number (where the in-row data
-- lives). used_pages: all allocation units of the partition (in-row, LOB, row-overflow).
-- Ranges: lower bound = boundary partition_number - 1, upper bound = boundary partition_number;
-- open ends are NULL. Values are ISO 8601 text for date/time types.
-- Operational counters come from sys.dm_db_index_operational_stats; they are NULL when the
-- partition's metadata is not cached (absent, not zero).
-- Permissions: VIEW DATABASE STATE in the database (or VIEW SERVER STATE) and a user in it.
-- The database placeholder (db in braces) becomes the bracket-quoted name; each parameter marker
-- is bound to the plain name.
WITH rv AS (
    SELECT
        b.function_id,
        b.boundary_id,
        CASE
            WHEN b.base_type = N'date'
                THEN CONVERT(nvarchar(4000), CAST(b.value AS date), 23)
            WHEN b.base_type IN (N'datetime', N'datetime2', N'smalldatetime')
                THEN CONVERT(nvarchar(4000), CAST(b.value AS datetime2(7)), 126)
            WHEN b.base_type = N'datetimeoffset'
                THEN CONVERT(nvarchar(4000), CAST(b.value AS datetimeoffset(7)), 127)
            WHEN b.base_type IN (N'binary', N'varbinary')
                THEN CONVERT(nvarchar(4000), CAST(b.value AS varbinary(8000)), 1)
            ELSE CONVERT(nvarchar(4000), b.value)
        END AS value_text
    FROM (
        SELECT
            prv.function_id,
            prv.boundary_id,
            prv.value,
            CAST(SQL_VARIANT_PROPERTY(prv.value, 'BaseType') AS sysname) AS base_type
        FROM {db}.sys.partition_range_values AS prv
        WHERE prv.parameter_id = 1
    ) AS b
),

pages AS (
    SELECT
        p2.partition_id,
        SUM(au.used_pages) AS used_pages
    FROM {db}.sys.partitions AS p2
    INNER JOIN {db}.sys.allocation_units AS au
        ON
            (au.type IN (1, 3) AND au.container_id = p2.hobt_id)
            OR (au.type = 2 AND au.container_id = p2.partition_id)
    GROUP BY p2.partition_id
)

SELECT
    SYSUTCDATETIME() AS sample_time,
    CAST(COALESCE(@@SERVERNAME, SERVERPROPERTY('ServerName')) AS nvarchar(256)) AS server_name,
    si.sqlserver_start_time,
    DB_NAME(DB_ID(?)) AS database_name,
    s.name AS schema_name,
    o.name AS table_name,
    i.index_id,
    i.name AS index_name,
    p.partition_number,
    ps.name AS partition_scheme,
    pf.name AS partition_function,
    pf.boundary_value_on_right,
    lo.value_text AS range_low,
    hi.value_text AS range_high,
    fg.name AS filegroup_name,
    p.rows,
    pg.used_pages,
    ios.range_scan_count,
    ios.singleton_lookup_count,
    ios.page_io_latch_wait_count,
    ios.page_io_latch_wait_in_ms,
    ios.leaf_insert_count,
    ios.leaf_update_count,
    ios.leaf_delete_count
FROM {db}.sys.partitions AS p
INNER JOIN {db}.sys.indexes AS i
    ON i.object_id = p.object_id AND i.index_id = p.index_id
INNER JOIN {db}.sys.objects AS o
    ON o.object_id = p.object_id
INNER JOIN {db}.sys.schemas AS s
    ON s.schema_id = o.schema_id
INNER JOIN {db}.sys.partition_schemes AS ps
    ON ps.data_space_id = i.data_space_id
INNER JOIN {db}.sys.partition_functions AS pf
    ON pf.function_id = ps.function_id
INNER JOIN {db}.sys.destination_data_spaces AS dds
    ON dds.partition_scheme_id = ps.data_space_id AND dds.destination_id = p.partition_number
INNER JOIN {db}.sys.filegroups AS fg
    ON fg.data_space_id = dds.data_space_id
LEFT JOIN rv AS lo
    ON lo.function_id = pf.function_id AND lo.boundary_id = p.partition_number - 1
LEFT JOIN rv AS hi
    ON hi.function_id = pf.function_id AND hi.boundary_id = p.partition_number
LEFT JOIN pages AS pg
    ON pg.partition_id = p.partition_id
LEFT JOIN sys.dm_db_index_operational_stats(DB_ID(?), NULL, NULL, NULL) AS ios
    ON
        ios.object_id = p.object_id
        AND ios.index_id = p.index_id
        AND ios.partition_number = p.partition_number
CROSS JOIN (
    -- begin fragment server_start_utc (generated from connectors/queries/fragments/server_start_utc.sql)
    SELECT
        DATEADD(
            MINUTE,
            -15 * CAST(ROUND(DATEDIFF(SECOND, t.approx_utc_start, t.local_start) / 900.0, 0) AS int),
            t.local_start
        ) AS sqlserver_start_time
    FROM (
        SELECT
            CAST(osi.sqlserver_start_time AS datetime2(3)) AS local_start,
            DATEADD(
                SECOND,
                -CAST((osi.ms_ticks - osi.sqlserver_start_time_ms_ticks) / 1000 AS int),
                SYSUTCDATETIME()
            ) AS approx_utc_start
        FROM sys.dm_os_sys_info AS osi
    ) AS t
    -- end fragment server_start_utc
) AS si
WHERE o.is_ms_shipped = 0
ORDER BY s.name, o.name, i.index_id, p.partition_number
