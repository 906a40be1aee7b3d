-- tierwise: SQL Server's start time in UTC, the one definition (a derived table with one row and
-- one column, sqlserver_start_time). Every query and collection script that reports
-- sqlserver_start_time embeds this text between "begin fragment" / "end fragment" comments;
-- edit it here, then run: python -m connectors.queries.fragments (tests fail until you do).
-- sys.dm_os_sys_info.sqlserver_start_time is server-local. It is shifted by the UTC offset that
-- applied at start-up: local start minus an approximate UTC start (now minus the uptime in
-- ms_ticks), rounded to 15 minutes. Stable across daylight-saving changes: only a real restart
-- changes it. Permission: VIEW SERVER STATE (2019 and older) or VIEW SERVER PERFORMANCE STATE.
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
