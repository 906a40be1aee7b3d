-- tierwise: the instance's Buffer Manager counters, one row (shape sqlserver_buffer_manager).
-- sys.dm_os_performance_counters names the object "SQLServer:Buffer Manager" on a default
-- instance and "MSSQL$<instance>:Buffer Manager" on a named one, so it is matched by its suffix.
-- The "/sec" counters (cntr_type 272696576) are cumulative since the service started; Page life
-- expectancy (cntr_type 65792) is an instantaneous value. A counter with another type is left
-- NULL rather than misread. No row at all when the instance publishes no Buffer Manager counters
-- (performance counters disabled or not loaded).
-- Permissions: VIEW SERVER STATE (2019 and older) or VIEW SERVER PERFORMANCE STATE (2022+).
-- All times are UTC (see file_stats.sql for how sqlserver_start_time is converted).
SELECT
    SYSUTCDATETIME() AS sample_time,
    CAST(COALESCE(@@SERVERNAME, SERVERPROPERTY('ServerName')) AS nvarchar(256)) AS server_name,
    si.sqlserver_start_time,
    bm.page_reads,
    bm.page_lookups,
    bm.readahead_pages,
    bm.page_writes,
    bm.page_life_expectancy
FROM (
    SELECT
        MAX(CASE
            WHEN RTRIM(pc.counter_name) = N'Page reads/sec' AND pc.cntr_type = 272696576
                THEN pc.cntr_value
        END) AS page_reads,
        MAX(CASE
            WHEN RTRIM(pc.counter_name) = N'Page lookups/sec' AND pc.cntr_type = 272696576
                THEN pc.cntr_value
        END) AS page_lookups,
        MAX(CASE
            WHEN RTRIM(pc.counter_name) = N'Readahead pages/sec' AND pc.cntr_type = 272696576
                THEN pc.cntr_value
        END) AS readahead_pages,
        MAX(CASE
            WHEN RTRIM(pc.counter_name) = N'Page writes/sec' AND pc.cntr_type = 272696576
                THEN pc.cntr_value
        END) AS page_writes,
        MAX(CASE
            WHEN RTRIM(pc.counter_name) = N'Page life expectancy' AND pc.cntr_type = 65792
                THEN pc.cntr_value
        END) AS page_life_expectancy
    FROM sys.dm_os_performance_counters AS pc
    WHERE pc.object_name LIKE N'%:Buffer Manager%'
    HAVING COUNT(*) > 0
) AS bm
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
