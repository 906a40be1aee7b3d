-- tierwise: cumulative I/O counters of every file of ONE database (shape sqlserver_file_stats).
-- Needs: SQL Server 2014+ (io_stall_queued_*) and sys.dm_os_volume_stats; older builds use
-- ../pre2014/file_stats.sql. Permissions: VIEW SERVER STATE (2019 and older) or
-- VIEW SERVER PERFORMANCE STATE (2022+), VIEW ANY DEFINITION (sys.master_files), and a user in
-- the database (its sys.filegroups gives the filegroup names).
-- The database placeholder (db in braces) becomes the bracket-quoted name; each parameter marker
-- is bound to the plain name.
-- All times are UTC. sqlserver_start_time is server-local in sys.dm_os_sys_info; it is turned into
-- UTC with the UTC offset that applied at start-up (rounded to 15 minutes), found by comparing the
-- local start time with an approximate UTC start derived from ms_ticks. This stays stable across
-- daylight-saving changes, so only a real restart changes it.
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
    vfs.io_stall_queued_read_ms,
    vfs.io_stall_queued_write_ms,
    vs.volume_mount_point,
    vs.total_bytes AS volume_total_bytes,
    vs.available_bytes AS volume_available_bytes
FROM sys.master_files AS mf
INNER JOIN sys.dm_io_virtual_file_stats(DB_ID(?), NULL) AS vfs
    ON vfs.database_id = mf.database_id AND vfs.file_id = mf.file_id
LEFT JOIN {db}.sys.filegroups AS fg
    ON fg.data_space_id = mf.data_space_id
OUTER APPLY sys.dm_os_volume_stats(mf.database_id, mf.file_id) AS vs
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
