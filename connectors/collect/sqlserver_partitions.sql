/*
tierwise collection script: SQL Server partition activity  ->  partitions.csv
(file shape "sqlserver_partitions"; import it with `tierwise import partitions.csv`)

WHAT IT READS (read only; it creates nothing but session temp tables)
  In every online user database this login can enter (not database snapshots), for every index
  or heap of a user table (or indexed view) that sits on a partition scheme, one row per
  partition, with the same query as tierwise's live connector:
  sys.partitions, sys.objects, sys.schemas, sys.indexes   the partition and its table/index
  sys.partition_schemes, sys.partition_functions,
  sys.partition_range_values                              scheme, function, boundaries
  sys.destination_data_spaces, sys.filegroups             the partition's filegroup
  sys.allocation_units.used_pages                         its size (in-row + LOB + row-overflow)
  sys.dm_db_index_operational_stats(DB_ID(), NULL, NULL, NULL)
                                                          cumulative scans, lookups, page I/O
                                                          latch waits, leaf writes
  sys.dm_os_sys_info.sqlserver_start_time                 when the counters started
  Each database is read with dynamic SQL run inside it; the database name is QUOTENAME-quoted.

  Note: sys.dm_db_index_operational_stats only has a row while the partition's metadata is
  cached. For a partition without a row the activity columns are left empty ("not known", not
  0); tierwise skips those counters for the intervals around it instead of inventing activity.

LEAST PRIVILEGES (for a login used only for this)
  SQL Server 2014-2019:  GRANT VIEW SERVER STATE, VIEW ANY DEFINITION, CONNECT ANY DATABASE
  SQL Server 2022+:      GRANT VIEW SERVER PERFORMANCE STATE, VIEW ANY DEFINITION,
                         CONNECT ANY DATABASE
  SQL Server 2008-2012:  VIEW SERVER STATE and VIEW ANY DEFINITION, plus a user in each database
  Databases the login cannot enter are left out. (Partitioning needs Enterprise edition before
  SQL Server 2016 SP1.)

HOW TO RUN (ODBC sqlcmd, one command line; -E = Windows login, or -U login with SQLCMDPASSWORD)
  sqlcmd -S myserver\myinstance -E -b -f o:65001 -y 0 -h -1 -i sqlserver_partitions.sql
         -v Samples=12 IntervalSeconds=300 -o partitions.csv
  Samples          how many samples to take (1 or more)
  IntervalSeconds  seconds to wait between samples (1 to 86399)
  -f o:65001       write UTF-8;  -y 0  never cut a line short (do not add -W: not allowed with -y)
  -h -1            no column headings: the script prints its own header line
  -b               stop at the first error with ERRORLEVEL 1 (the error text ends up in the -o
                   file, and tierwise refuses the file and shows that line)

WHAT IT WRITES
  One header line, then for each sample one line per partition. CSV: comma separated; text in
  double quotes with any double quote doubled. range_low / range_high are the partition's
  boundary values as text (dates and times in ISO-8601, style 126; binary as 0x...); empty for
  the open-ended first/last partition. Times are ISO-8601 UTC; sqlserver_start_time is converted
  from server local time with the UTC offset at service start-up (see sqlserver_file_stats.sql).
  A server without partitioned tables gives a file with only the header line, which imports as
  nothing.
*/
SET NOCOUNT ON;
-- never wait behind DDL on the catalog (as the live connector and First Responder Kit do)
SET TRANSACTION ISOLATION LEVEL READ UNCOMMITTED;

DECLARE @samples int = $(Samples);
DECLARE @interval_s int = $(IntervalSeconds);

IF @samples IS NULL OR @samples < 1 OR @interval_s IS NULL OR @interval_s < 1 OR @interval_s > 86399
BEGIN
    RAISERROR (N'tierwise: Samples must be 1 or more and IntervalSeconds between 1 and 86399.', 16, 1);
    RETURN;
END;

DECLARE @delay char(8) = CONVERT(char(8), DATEADD(SECOND, @interval_s, CONVERT(datetime, 0)), 108);
DECLARE @server_name nvarchar(256) = CONVERT(nvarchar(256), COALESCE(@@SERVERNAME, SERVERPROPERTY('ServerName')));

CREATE TABLE #parts (
    database_name sysname NOT NULL,
    schema_name sysname NOT NULL,
    table_name sysname NOT NULL,
    index_id int NOT NULL,
    index_name sysname NULL,
    partition_number int NOT NULL,
    partition_scheme sysname NULL,
    partition_function sysname NULL,
    boundary_value_on_right bit NULL,
    range_low nvarchar(4000) NULL,
    range_high nvarchar(4000) NULL,
    filegroup_name sysname NOT NULL,
    row_count bigint NOT NULL,
    used_pages bigint NULL,
    range_scan_count bigint NULL,
    singleton_lookup_count bigint NULL,
    page_io_latch_wait_count bigint NULL,
    page_io_latch_wait_in_ms bigint NULL,
    leaf_insert_count bigint NULL,
    leaf_update_count bigint NULL,
    leaf_delete_count bigint NULL
);

-- Runs inside each database (through <database>.sys.sp_executesql), so DB_ID(), DB_NAME() and
-- the catalog views refer to that database. Fixed text: no names are pasted into it.
DECLARE @per_database nvarchar(max) = N'
INSERT INTO #parts (database_name, schema_name, table_name, index_id, index_name, partition_number,
    partition_scheme, partition_function, boundary_value_on_right, range_low, range_high,
    filegroup_name, row_count, used_pages, range_scan_count, singleton_lookup_count,
    page_io_latch_wait_count, page_io_latch_wait_in_ms, leaf_insert_count, leaf_update_count,
    leaf_delete_count)
SELECT
    DB_NAME(),
    s.name,
    t.name,
    i.index_id,
    i.name,
    p.partition_number,
    ps.name,
    pf.name,
    pf.boundary_value_on_right,
    CASE
        WHEN lo.value IS NULL THEN NULL
        WHEN CONVERT(sysname, SQL_VARIANT_PROPERTY(lo.value, ''BaseType'')) = N''date''
            THEN CONVERT(nvarchar(4000), CONVERT(date, lo.value), 126)
        WHEN CONVERT(sysname, SQL_VARIANT_PROPERTY(lo.value, ''BaseType'')) IN (N''datetime'', N''smalldatetime'', N''datetime2'')
            THEN CONVERT(nvarchar(4000), CONVERT(datetime2(7), lo.value), 126)
        WHEN CONVERT(sysname, SQL_VARIANT_PROPERTY(lo.value, ''BaseType'')) = N''datetimeoffset''
            THEN CONVERT(nvarchar(4000), CONVERT(datetimeoffset(7), lo.value), 126)
        WHEN CONVERT(sysname, SQL_VARIANT_PROPERTY(lo.value, ''BaseType'')) IN (N''binary'', N''varbinary'')
            THEN CONVERT(nvarchar(4000), CONVERT(varbinary(4000), lo.value), 1)
        WHEN CONVERT(sysname, SQL_VARIANT_PROPERTY(lo.value, ''BaseType'')) IN (N''float'', N''real'')
            THEN CONVERT(nvarchar(4000), CONVERT(float, lo.value), 2)
        WHEN CONVERT(sysname, SQL_VARIANT_PROPERTY(lo.value, ''BaseType'')) IN (N''money'', N''smallmoney'')
            THEN CONVERT(nvarchar(4000), CONVERT(money, lo.value), 2)
        ELSE CONVERT(nvarchar(4000), lo.value)
    END,
    CASE
        WHEN hi.value IS NULL THEN NULL
        WHEN CONVERT(sysname, SQL_VARIANT_PROPERTY(hi.value, ''BaseType'')) = N''date''
            THEN CONVERT(nvarchar(4000), CONVERT(date, hi.value), 126)
        WHEN CONVERT(sysname, SQL_VARIANT_PROPERTY(hi.value, ''BaseType'')) IN (N''datetime'', N''smalldatetime'', N''datetime2'')
            THEN CONVERT(nvarchar(4000), CONVERT(datetime2(7), hi.value), 126)
        WHEN CONVERT(sysname, SQL_VARIANT_PROPERTY(hi.value, ''BaseType'')) = N''datetimeoffset''
            THEN CONVERT(nvarchar(4000), CONVERT(datetimeoffset(7), hi.value), 126)
        WHEN CONVERT(sysname, SQL_VARIANT_PROPERTY(hi.value, ''BaseType'')) IN (N''binary'', N''varbinary'')
            THEN CONVERT(nvarchar(4000), CONVERT(varbinary(4000), hi.value), 1)
        WHEN CONVERT(sysname, SQL_VARIANT_PROPERTY(hi.value, ''BaseType'')) IN (N''float'', N''real'')
            THEN CONVERT(nvarchar(4000), CONVERT(float, hi.value), 2)
        WHEN CONVERT(sysname, SQL_VARIANT_PROPERTY(hi.value, ''BaseType'')) IN (N''money'', N''smallmoney'')
            THEN CONVERT(nvarchar(4000), CONVERT(money, hi.value), 2)
        ELSE CONVERT(nvarchar(4000), hi.value)
    END,
    fg.name,
    p.rows,
    au.used_pages,
    os.range_scan_count,
    os.singleton_lookup_count,
    os.page_io_latch_wait_count,
    os.page_io_latch_wait_in_ms,
    os.leaf_insert_count,
    os.leaf_update_count,
    os.leaf_delete_count
FROM sys.partitions AS p
INNER JOIN sys.objects AS t ON t.object_id = p.object_id
INNER JOIN sys.schemas AS s ON s.schema_id = t.schema_id
INNER JOIN sys.indexes AS i ON i.object_id = p.object_id AND i.index_id = p.index_id
INNER JOIN sys.partition_schemes AS ps ON ps.data_space_id = i.data_space_id
INNER JOIN sys.partition_functions AS pf ON pf.function_id = ps.function_id
INNER JOIN sys.destination_data_spaces AS dds
    ON dds.partition_scheme_id = ps.data_space_id AND dds.destination_id = p.partition_number
INNER JOIN sys.filegroups AS fg ON fg.data_space_id = dds.data_space_id
LEFT JOIN sys.partition_range_values AS lo
    ON lo.function_id = pf.function_id AND lo.parameter_id = 1 AND lo.boundary_id = p.partition_number - 1
LEFT JOIN sys.partition_range_values AS hi
    ON hi.function_id = pf.function_id AND hi.parameter_id = 1 AND hi.boundary_id = p.partition_number
OUTER APPLY (
    SELECT SUM(a.used_pages) AS used_pages
    FROM sys.allocation_units AS a
    WHERE (a.type IN (1, 3) AND a.container_id = p.hobt_id)
        OR (a.type = 2 AND a.container_id = p.partition_id)
) AS au
LEFT JOIN sys.dm_db_index_operational_stats(DB_ID(), NULL, NULL, NULL) AS os
    ON os.object_id = p.object_id AND os.index_id = p.index_id AND os.partition_number = p.partition_number
WHERE t.is_ms_shipped = 0;';

DECLARE @sample int = 1;
DECLARE @now datetime2(3);
DECLARE @start_utc datetime2(3);
DECLARE @db_id int;
DECLARE @db_name sysname;
DECLARE @error nvarchar(2048);
DECLARE @run_in nvarchar(300);

SELECT N'sample_time,server_name,sqlserver_start_time,database_name,schema_name,table_name,index_id,index_name,partition_number,partition_scheme,partition_function,boundary_value_on_right,range_low,range_high,filegroup_name,rows,used_pages,range_scan_count,singleton_lookup_count,page_io_latch_wait_count,page_io_latch_wait_in_ms,leaf_insert_count,leaf_update_count,leaf_delete_count';

WHILE @sample <= @samples
BEGIN
    TRUNCATE TABLE #parts;
    SET @now = SYSUTCDATETIME();
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

    SET @db_id = 4;  -- user databases only: master, tempdb, model, msdb are 1-4
    WHILE 1 = 1
    BEGIN
        SELECT TOP (1) @db_id = d.database_id, @db_name = d.name
        FROM sys.databases AS d
        WHERE d.database_id > @db_id AND d.state = 0 AND d.source_database_id IS NULL
            AND HAS_DBACCESS(d.name) = 1
        ORDER BY d.database_id;
        IF @@ROWCOUNT = 0 BREAK;
        SET @run_in = QUOTENAME(@db_name) + N'.sys.sp_executesql';
        BEGIN TRY
            EXEC @run_in @per_database;
        END TRY
        BEGIN CATCH
            -- A database that became unavailable after the listing (offline, restoring, single
            -- user, not readable on this replica) is left out of this sample. Any other error,
            -- such as a missing permission, stops the collection so it is not silently incomplete.
            IF ERROR_NUMBER() NOT IN (911, 922, 924, 927, 942, 943, 945, 952, 976, 978, 979, 983)
            BEGIN
                SET @error = ERROR_MESSAGE();
                RAISERROR (N'tierwise: reading the partitions of database %s failed: %s', 16, 1, @db_name, @error);
                RETURN;
            END;
        END CATCH;
    END;

    SELECT CONVERT(nvarchar(max), CONVERT(nvarchar(30), @now, 126) + N'Z') + N','
        + N'"' + REPLACE(@server_name, N'"', N'""') + N'",'
        + CONVERT(nvarchar(30), @start_utc, 126) + N'Z,'
        + N'"' + REPLACE(pt.database_name, N'"', N'""') + N'",'
        + N'"' + REPLACE(pt.schema_name, N'"', N'""') + N'",'
        + N'"' + REPLACE(pt.table_name, N'"', N'""') + N'",'
        + CONVERT(nvarchar(11), pt.index_id) + N','
        + ISNULL(N'"' + REPLACE(pt.index_name, N'"', N'""') + N'"', N'') + N','
        + CONVERT(nvarchar(11), pt.partition_number) + N','
        + ISNULL(N'"' + REPLACE(pt.partition_scheme, N'"', N'""') + N'"', N'') + N','
        + ISNULL(N'"' + REPLACE(pt.partition_function, N'"', N'""') + N'"', N'') + N','
        + ISNULL(CONVERT(nvarchar(1), pt.boundary_value_on_right), N'') + N','
        + ISNULL(N'"' + REPLACE(pt.range_low, N'"', N'""') + N'"', N'') + N','
        + ISNULL(N'"' + REPLACE(pt.range_high, N'"', N'""') + N'"', N'') + N','
        + N'"' + REPLACE(pt.filegroup_name, N'"', N'""') + N'",'
        + CONVERT(nvarchar(20), pt.row_count) + N','
        + ISNULL(CONVERT(nvarchar(20), pt.used_pages), N'') + N','
        + ISNULL(CONVERT(nvarchar(20), pt.range_scan_count), N'') + N','
        + ISNULL(CONVERT(nvarchar(20), pt.singleton_lookup_count), N'') + N','
        + ISNULL(CONVERT(nvarchar(20), pt.page_io_latch_wait_count), N'') + N','
        + ISNULL(CONVERT(nvarchar(20), pt.page_io_latch_wait_in_ms), N'') + N','
        + ISNULL(CONVERT(nvarchar(20), pt.leaf_insert_count), N'') + N','
        + ISNULL(CONVERT(nvarchar(20), pt.leaf_update_count), N'') + N','
        + ISNULL(CONVERT(nvarchar(20), pt.leaf_delete_count), N'')
    FROM #parts AS pt
    ORDER BY pt.database_name, pt.schema_name, pt.table_name, pt.index_id, pt.partition_number;

    IF @sample < @samples WAITFOR DELAY @delay;
    SET @sample += 1;
END;
