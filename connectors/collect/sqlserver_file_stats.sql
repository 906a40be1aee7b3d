/*
tierwise collection script: SQL Server data and log file I/O  ->  file_stats.csv
(file shape "sqlserver_file_stats"; import it with `tierwise import file_stats.csv`)

WHAT IT READS (read only; it creates nothing but session temp tables)
  sys.dm_io_virtual_file_stats(NULL, NULL)  cumulative I/O of every database file since the
                                            service started
  sys.master_files, sys.databases           file names, types, paths; database names
  <database>.sys.filegroups                 filegroup names, one query per online database
                                            (names are QUOTENAME-quoted)
  sys.dm_os_volume_stats                    volume of each file (2008 R2 SP1 and later)
  sys.dm_os_sys_info.sqlserver_start_time   when the counters started (restart detection)

LEAST PRIVILEGES (for a login used only for this)
  SQL Server 2014-2019:  GRANT VIEW SERVER STATE, VIEW ANY DEFINITION, CONNECT ANY DATABASE
  SQL Server 2022+:      GRANT VIEW SERVER PERFORMANCE STATE, VIEW ANY DEFINITION,
                         CONNECT ANY DATABASE
  SQL Server 2008-2012:  VIEW SERVER STATE and VIEW ANY DEFINITION, plus a user in each database
                         (CONNECT ANY DATABASE does not exist before 2014)
  A database the login cannot enter still has its files and counters in the output, with an
  empty filegroup_name.

HOW TO RUN (ODBC sqlcmd, one command line; -E = Windows login, or -U login with SQLCMDPASSWORD)
  sqlcmd -S myserver\myinstance -E -b -f o:65001 -y 0 -h -1 -i sqlserver_file_stats.sql
         -v Samples=12 IntervalSeconds=300 -o file_stats.csv
  Samples          how many samples to take (1 or more)
  IntervalSeconds  seconds to wait between samples (1 to 86399); 12 x 300 s = one hour
  -f o:65001       write UTF-8, so names in any language survive
  -y 0             never cut a line short (the default cuts long values at 256 characters);
                   do not add -W, sqlcmd refuses -W together with -y
  -h -1            no column headings: the script prints its own header line
  -b               stop at the first error with ERRORLEVEL 1. sqlcmd writes the error text into
                   the -o file; tierwise then refuses the file and shows that line.

WHAT IT WRITES
  One header line, then for each sample one line per database file (tempdb included). CSV:
  comma separated; text in double quotes with any double quote doubled, so names with commas,
  quotes or line breaks survive. Times are ISO-8601 in UTC ("2024-05-01T13:45:00.123Z").
  sample_time is the server's UTC clock (SYSUTCDATETIME) at the sample. sqlserver_start_time is
  reported by SQL Server in local time; the script converts it to UTC with the UTC offset that
  applied when the service started (the local start time compared with the uptime in ms_ticks,
  rounded to 15 minutes), so a daylight-saving change does not move it: only a real restart
  changes it. This is the same rule tierwise's live connector uses.
  Files of database snapshots are left out (as in the live connector).
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
DECLARE @has_volume_stats bit = CASE
    WHEN EXISTS (
        SELECT 1 FROM sys.all_objects AS ao
        WHERE ao.name = N'dm_os_volume_stats' AND ao.schema_id = SCHEMA_ID(N'sys')
    ) THEN 1 ELSE 0 END;
DECLARE @has_queued_io bit = CASE
    WHEN EXISTS (
        SELECT 1 FROM sys.all_columns AS ac
        WHERE ac.object_id = OBJECT_ID(N'sys.dm_io_virtual_file_stats') AND ac.name = N'io_stall_queued_read_ms'
    ) THEN 1 ELSE 0 END;

CREATE TABLE #vfs (
    database_id int NOT NULL,
    file_id int NOT NULL,
    size_on_disk_bytes bigint NOT NULL,
    num_of_reads bigint NOT NULL,
    num_of_bytes_read bigint NOT NULL,
    io_stall_read_ms bigint NOT NULL,
    num_of_writes bigint NOT NULL,
    num_of_bytes_written bigint NOT NULL,
    io_stall_write_ms bigint NOT NULL,
    io_stall_queued_read_ms bigint NULL,
    io_stall_queued_write_ms bigint NULL,
    volume_mount_point nvarchar(512) NULL,
    volume_total_bytes bigint NULL,
    volume_available_bytes bigint NULL
);
-- One row per file and sample, all text in one collation (tempdb's): names from master and from
-- each database may have different collations, and concatenating those would fail (Msg 468).
CREATE TABLE #out (
    database_id int NOT NULL,
    file_id int NOT NULL,
    database_name nvarchar(128) NOT NULL,
    file_name nvarchar(128) NOT NULL,
    type_desc nvarchar(60) NOT NULL,
    filegroup_name nvarchar(128) NULL,
    physical_name nvarchar(260) NOT NULL
);
CREATE TABLE #fg (
    database_id int NOT NULL,
    data_space_id int NOT NULL,
    filegroup_name sysname NOT NULL
);

-- Optional columns exist only on some builds, so the capture statement is assembled once from
-- fixed text (no names go into it) and reads the DMVs in one statement, at one instant.
DECLARE @capture nvarchar(max) = N'INSERT INTO #vfs (database_id, file_id, size_on_disk_bytes, num_of_reads,
    num_of_bytes_read, io_stall_read_ms, num_of_writes, num_of_bytes_written, io_stall_write_ms,
    io_stall_queued_read_ms, io_stall_queued_write_ms, volume_mount_point, volume_total_bytes,
    volume_available_bytes)
SELECT vfs.database_id, vfs.file_id, vfs.size_on_disk_bytes, vfs.num_of_reads, vfs.num_of_bytes_read,
    vfs.io_stall_read_ms, vfs.num_of_writes, vfs.num_of_bytes_written, vfs.io_stall_write_ms, '
    + CASE WHEN @has_queued_io = 1
        THEN N'vfs.io_stall_queued_read_ms, vfs.io_stall_queued_write_ms, '
        ELSE N'NULL, NULL, ' END
    + CASE WHEN @has_volume_stats = 1
        THEN N'vol.volume_mount_point, vol.total_bytes, vol.available_bytes
FROM sys.dm_io_virtual_file_stats(NULL, NULL) AS vfs
OUTER APPLY sys.dm_os_volume_stats(vfs.database_id, vfs.file_id) AS vol;'
        ELSE N'NULL, NULL, NULL
FROM sys.dm_io_virtual_file_stats(NULL, NULL) AS vfs;' END;

DECLARE @sample int = 1;
DECLARE @now datetime2(3);
DECLARE @start_utc datetime2(3);
DECLARE @db_id int;
DECLARE @db_name sysname;
DECLARE @error nvarchar(2048);
DECLARE @fg_sql nvarchar(max);

SELECT N'sample_time,server_name,sqlserver_start_time,database_name,file_id,file_name,type_desc,filegroup_name,physical_name,size_on_disk_bytes,num_of_reads,num_of_bytes_read,io_stall_read_ms,num_of_writes,num_of_bytes_written,io_stall_write_ms,io_stall_queued_read_ms,io_stall_queued_write_ms,volume_mount_point,volume_total_bytes,volume_available_bytes';

WHILE @sample <= @samples
BEGIN
    -- filegroup names, per sample because filegroups can be added during a long run
    TRUNCATE TABLE #fg;
    SET @db_id = 0;
    WHILE 1 = 1
    BEGIN
        SELECT TOP (1) @db_id = d.database_id, @db_name = d.name
        FROM sys.databases AS d
        WHERE d.database_id > @db_id AND d.state = 0 AND d.source_database_id IS NULL AND HAS_DBACCESS(d.name) = 1
        ORDER BY d.database_id;
        IF @@ROWCOUNT = 0 BREAK;
        SET @fg_sql = N'SELECT @id, fg.data_space_id, fg.name FROM ' + QUOTENAME(@db_name) + N'.sys.filegroups AS fg;';
        BEGIN TRY
            INSERT INTO #fg (database_id, data_space_id, filegroup_name)
            EXEC sys.sp_executesql @fg_sql, N'@id int', @id = @db_id;
        END TRY
        BEGIN CATCH
            -- A database that became unavailable after the listing (offline, restoring, single
            -- user, not readable on this replica) is left out of this sample. Any other error,
            -- such as a missing permission, stops the collection so it is not silently incomplete.
            IF ERROR_NUMBER() NOT IN (911, 922, 924, 927, 942, 943, 945, 952, 976, 978, 979, 983)
            BEGIN
                SET @error = ERROR_MESSAGE();
                RAISERROR (N'tierwise: reading the filegroups of database %s failed: %s', 16, 1, @db_name, @error);
                RETURN;
            END;
        END CATCH;
    END;

    TRUNCATE TABLE #vfs;
    SET @now = SYSUTCDATETIME();
    EXEC sys.sp_executesql @capture;
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

    TRUNCATE TABLE #out;
    INSERT INTO #out (database_id, file_id, database_name, file_name, type_desc, filegroup_name, physical_name)
    SELECT v.database_id, v.file_id, d.name, mf.name, mf.type_desc, fg.filegroup_name, mf.physical_name
    FROM #vfs AS v
    INNER JOIN sys.master_files AS mf ON mf.database_id = v.database_id AND mf.file_id = v.file_id
    INNER JOIN sys.databases AS d ON d.database_id = v.database_id AND d.source_database_id IS NULL
    LEFT JOIN #fg AS fg ON fg.database_id = v.database_id AND fg.data_space_id = mf.data_space_id;

    SELECT CONVERT(nvarchar(max), CONVERT(nvarchar(30), @now, 126) + N'Z') + N','
        + N'"' + REPLACE(@server_name, N'"', N'""') + N'",'
        + CONVERT(nvarchar(30), @start_utc, 126) + N'Z,'
        + N'"' + REPLACE(o.database_name, N'"', N'""') + N'",'
        + CONVERT(nvarchar(11), o.file_id) + N','
        + N'"' + REPLACE(o.file_name, N'"', N'""') + N'",'
        + N'"' + REPLACE(o.type_desc, N'"', N'""') + N'",'
        + ISNULL(N'"' + REPLACE(o.filegroup_name, N'"', N'""') + N'"', N'') + N','
        + N'"' + REPLACE(o.physical_name, N'"', N'""') + N'",'
        + CONVERT(nvarchar(20), v.size_on_disk_bytes) + N','
        + CONVERT(nvarchar(20), v.num_of_reads) + N','
        + CONVERT(nvarchar(20), v.num_of_bytes_read) + N','
        + CONVERT(nvarchar(20), v.io_stall_read_ms) + N','
        + CONVERT(nvarchar(20), v.num_of_writes) + N','
        + CONVERT(nvarchar(20), v.num_of_bytes_written) + N','
        + CONVERT(nvarchar(20), v.io_stall_write_ms) + N','
        + ISNULL(CONVERT(nvarchar(20), v.io_stall_queued_read_ms), N'') + N','
        + ISNULL(CONVERT(nvarchar(20), v.io_stall_queued_write_ms), N'') + N','
        + ISNULL(N'"' + REPLACE(v.volume_mount_point, N'"', N'""') + N'"', N'') + N','
        + ISNULL(CONVERT(nvarchar(20), v.volume_total_bytes), N'') + N','
        + ISNULL(CONVERT(nvarchar(20), v.volume_available_bytes), N'')
    FROM #out AS o
    INNER JOIN #vfs AS v ON v.database_id = o.database_id AND v.file_id = o.file_id
    ORDER BY o.database_id, o.file_id;

    IF @sample < @samples WAITFOR DELAY @delay;
    SET @sample += 1;
END;
