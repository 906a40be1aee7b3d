-- tierwise: file I/O counters of ONE database for builds without io_stall_queued_* (before 2014)
-- or without sys.dm_os_volume_stats (before 2008 R2 SP1). Same shape as ../default/file_stats.sql;
-- the Resource Governor queue columns and the volume columns are NULL here.
-- The database placeholder (db in braces) becomes the bracket-quoted name; each parameter marker
-- is bound to the plain name.
-- All times are UTC (see ../default/file_stats.sql for how sqlserver_start_time is converted).
SELECT
    SYSUTCDATETIME() AS sample_time,
    CAST(COALESCE(@@SERVERNAME, SERVERPROPERTY('ServerName')) AS nvarchar(256)) AS server_name,
    si.sqlserver_start_time,
    DB_NAME(mf.database_id) AS database_name,
    mf.file_id,
    mf.name AS file_name,
    mf.type_desc,
    fg.name AS filegroup_name,
    mf.physical_name,
    vfs.size_on_disk_bytes,
    vfs.num_of_reads,
    vfs.num_of_bytes_read,
    vfs.io_stall_read_ms,
    vfs.num_of_writes,
    vfs.num_of_bytes_written,
    vfs.io_stall_write_ms,
    CAST(NULL AS bigint) AS io_stall_queued_read_ms,
    CAST(NULL AS bigint) AS io_stall_queued_write_ms,
    CAST(NULL AS nvarchar(512)) AS volume_mount_point,
    CAST(NULL AS bigint) AS volume_total_bytes,
    CAST(NULL AS bigint) AS volume_available_bytes
FROM sys.master_files AS mf
INNER JOIN sys.dm_io_virtual_file_stats(DB_ID(?), NULL) AS vfs
    ON vfs.database_id = mf.database_id AND vfs.file_id = mf.file_id
LEFT JOIN {db}.sys.filegroups AS fg
    ON fg.data_space_id = mf.data_space_id
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
WHERE mf.database_id = DB_ID(?)
ORDER BY mf.file_id
