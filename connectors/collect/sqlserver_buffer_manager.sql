/*
tierwise collection script: SQL Server Buffer Manager counters  ->  buffer_manager.csv
(file shape "sqlserver_buffer_manager"; import it with `tierwise import buffer_manager.csv`)

WHAT IT READS (read only; it creates nothing but a session temp table)
  sys.dm_os_performance_counters            the instance's Buffer Manager object, named
                                            "SQLServer:Buffer Manager" on a default instance and
                                            "MSSQL$<instance>:Buffer Manager" on a named one:
                                            Page reads/sec, Page lookups/sec, Readahead pages/sec
                                            and Page writes/sec (cumulative since the service
                                            started, despite "/sec"), and Page life expectancy
                                            (an instantaneous value in seconds)
  sys.dm_os_sys_info.sqlserver_start_time   when the counters started (restart detection)
  These are instance-wide: they give the physical-read fraction (page reads / page lookups) and
  the read-ahead share (readahead pages / page reads), which no per-file view has.

LEAST PRIVILEGES (for a login used only for this; no database access is needed)
  SQL Server 2008-2019:  GRANT VIEW SERVER STATE
  SQL Server 2022+:      GRANT VIEW SERVER PERFORMANCE STATE

HOW TO RUN (ODBC sqlcmd, one command line; -E = Windows login, or -U login with SQLCMDPASSWORD)
  sqlcmd -S myserver\myinstance -E -b -f o:65001 -y 0 -h -1 -i sqlserver_buffer_manager.sql
         -v Samples=12 IntervalSeconds=300 -o buffer_manager.csv
  Start it together with sqlserver_file_stats.sql (e.g. in a second window) with the same
  Samples and IntervalSeconds, so the instance ratios cover the same intervals as the files.
  Samples          how many samples to take (1 or more)
  IntervalSeconds  seconds to wait between samples (1 to 86399)
  -f o:65001       write UTF-8;  -y 0  never cut a line short (do not add -W: not allowed with -y)
  -h -1            no column headings: the script prints its own header line
  -b               stop at the first error with ERRORLEVEL 1 (the error text ends up in the -o
                   file, and tierwise refuses the file and shows that line)

WHAT IT WRITES
  One header line, then one line per sample. CSV: comma separated; the server name in double
  quotes with any double quote doubled. Times are ISO-8601 UTC; sqlserver_start_time is
  converted from server local time with the UTC offset at service start-up (the same rule as
  sqlserver_file_stats.sql). A counter the instance does not publish with the expected type is
  left empty; an instance that publishes no Buffer Manager counters at all (performance
  counters disabled) gives no line for that sample.
*/
SET NOCOUNT ON;

DECLARE @samples int = $(Samples);
DECLARE @interval_s int = $(IntervalSeconds);

IF @samples IS NULL OR @samples < 1 OR @interval_s IS NULL OR @interval_s < 1 OR @interval_s > 86399
BEGIN
    RAISERROR (N'tierwise: Samples must be 1 or more and IntervalSeconds between 1 and 86399.', 16, 1);
    RETURN;
END;

DECLARE @delay char(8) = CONVERT(char(8), DATEADD(SECOND, @interval_s, CONVERT(datetime, 0)), 108);
DECLARE @server_name nvarchar(256) = CONVERT(nvarchar(256), COALESCE(@@SERVERNAME, SERVERPROPERTY('ServerName')));

CREATE TABLE #bm (
    page_reads bigint NULL,
    page_lookups bigint NULL,
    readahead_pages bigint NULL,
    page_writes bigint NULL,
    page_life_expectancy bigint NULL
);

DECLARE @sample int = 1;
DECLARE @now datetime2(3);
DECLARE @start_utc datetime2(3);

SELECT N'sample_time,server_name,sqlserver_start_time,page_reads,page_lookups,readahead_pages,page_writes,page_life_expectancy';

WHILE @sample <= @samples
BEGIN
    TRUNCATE TABLE #bm;
    SET @now = SYSUTCDATETIME();
    -- one statement, one instant; "/sec" counters must have the cumulative type 272696576 and
    -- Page life expectancy the instantaneous type 65792, anything else is left NULL
    INSERT INTO #bm (page_reads, page_lookups, readahead_pages, page_writes, page_life_expectancy)
    SELECT
        MAX(CASE WHEN RTRIM(pc.counter_name) = N'Page reads/sec' AND pc.cntr_type = 272696576
            THEN pc.cntr_value END),
        MAX(CASE WHEN RTRIM(pc.counter_name) = N'Page lookups/sec' AND pc.cntr_type = 272696576
            THEN pc.cntr_value END),
        MAX(CASE WHEN RTRIM(pc.counter_name) = N'Readahead pages/sec' AND pc.cntr_type = 272696576
            THEN pc.cntr_value END),
        MAX(CASE WHEN RTRIM(pc.counter_name) = N'Page writes/sec' AND pc.cntr_type = 272696576
            THEN pc.cntr_value END),
        MAX(CASE WHEN RTRIM(pc.counter_name) = N'Page life expectancy' AND pc.cntr_type = 65792
            THEN pc.cntr_value END)
    FROM sys.dm_os_performance_counters AS pc
    WHERE pc.object_name LIKE N'%:Buffer Manager%'
    HAVING COUNT(*) > 0;
    -- sqlserver_start_time is server-local; shift it by the UTC offset that applied at start-up
    -- (local start minus an approximate UTC start from ms_ticks, rounded to 15 minutes), so it
    -- stays the same across daylight-saving changes: the same text as the live queries.
    SELECT @start_utc = si.sqlserver_start_time
    FROM (
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
    ) AS si;

    SELECT CONVERT(nvarchar(max), CONVERT(nvarchar(30), @now, 126) + N'Z') + N','
        + N'"' + REPLACE(@server_name, N'"', N'""') + N'",'
        + CONVERT(nvarchar(30), @start_utc, 126) + N'Z,'
        + ISNULL(CONVERT(nvarchar(20), b.page_reads), N'') + N','
        + ISNULL(CONVERT(nvarchar(20), b.page_lookups), N'') + N','
        + ISNULL(CONVERT(nvarchar(20), b.readahead_pages), N'') + N','
        + ISNULL(CONVERT(nvarchar(20), b.page_writes), N'') + N','
        + ISNULL(CONVERT(nvarchar(20), b.page_life_expectancy), N'')
    FROM #bm AS b;

    IF @sample < @samples WAITFOR DELAY @delay;
    SET @sample += 1;
END;
