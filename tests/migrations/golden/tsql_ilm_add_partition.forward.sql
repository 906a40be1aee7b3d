-- ================================================================================================
-- tierwise T-SQL migration script: FORWARD
-- ================================================================================================
-- Moves:      [dbo].[Orders] in database [Sales]: create the partition starting at 2024-07-01 (function [pf_OrderDate], scheme [ps_OrderDate])
-- Server:     SQLPROD01
-- Database:   Sales
-- From:       tier unknown: (the open last partition)
-- To:         tier flash: filegroup [FG_ORDERS_2024]
-- Object:     partition dbo.Orders new partition from 2024-07-01 (key Sales/partition/dbo.Orders/new/2024-07-01)
-- Why:        ilm (leading edge)
--             - new partition created on flash ahead of time
-- Predicted:  I/O wait n/a now -> n/a on tier flash
-- Size:       unknown
-- Method:
--   ALTER PARTITION SCHEME [ps_OrderDate] NEXT USED [FG_ORDERS_2024];
--   ALTER PARTITION FUNCTION [pf_OrderDate]() SPLIT RANGE (<2024-07-01 as the function's type>);
-- Limits and notes:
--   - RANGE RIGHT functions only; the function and scheme must serve this table alone.
--   - Run it before the period starts: while no row has reached the boundary the split is metadata-only;
--   - the script refuses to split when rows at or above the boundary exist (they would move, fully logged).
--   - Sch-M lock on the table for the split; waits at most 5 s (SPLIT/MERGE have no WAIT_AT_LOW_PRIORITY), then stops without a change.
--   - Checks: the boundary converts to the function's type, is not already there on another filegroup, has no boundary above it; the filegroup exists, has files and is writable; after the split, in the same transaction, the new partition is on the planned filegroup and empty.
--   - the ILM leading edge: the next period's partition, created empty on the hot tier
-- Operations:
--   Duration:    seconds: NEXT USED + SPLIT of an empty range is metadata only; before it the script counts the rows at or above the boundary (an index seek when the partitioning column leads an index, else a scan of the last partition, without holding locks).
--   Log volume:  a few KB (catalog changes only). Rows in the re-mapped range would be moved fully logged (about four times their size): the script refuses when there are any, and rolls back if one arrives meanwhile.
--   Blocking:    Sch-M on [dbo].[Orders] for the NEXT USED + SPLIT (milliseconds once granted); while it waits (at most 5 s, SPLIT/MERGE have no WAIT_AT_LOW_PRIORITY) new queries on the table queue behind it.
--   Backups:     no effect on backup jobs; a recent full backup is checked first. No need to pause log backups.
--   To abort:    cancel the query: the split is one transaction and rolls back at once; the script is safe to run again: every step checks first.
--   To recover:  nothing is half-done: the boundary is either there on the planned filegroup or not; a filegroup the script created stays and is reused by the next run. Run the script again, or the rollback script to merge an empty new partition away.
-- Generator:  tierwise (golden files) (migrations/1)
-- Generated:  2024-05-02T06:00:00Z
-- Plan:       sha256 afe2cd138bb02c6dc0cbbb1968d74a1b0ef9907000035a6de0947bfb431338d4 (the forward plan; the rollback shows the same)
-- Run:
--   1. check only (days before, in daylight; changes nothing): sqlcmd -S SQLPROD01 -E -b -f 65001 -v TW_CHECK_ONLY=1 -i <this file>
--   2. in the change window: sqlcmd -S SQLPROD01 -E -b -f 65001 -v TW_CHECK_ONLY=0 -i <this file>
--      SSMS: Query > SQLCMD Mode, and a first line :setvar TW_CHECK_ONLY 1 (or 0).
--   Never run it with sqlcmd -x. Read docs/running-scripts.md first.
--   File-system checks use sys.dm_os_file_exists (SQL Server 2017+) and sys.dm_os_volume_stats / sys.dm_os_enumerate_fixed_drives (2019+); xp_fileexist / xp_fixeddrives only on older versions. The script prints which one it used.
-- Safe to run twice: every step checks first and says 'already done' when there is nothing to do.
-- ================================================================================================
:on error exit
:setvar TierwiseSqlcmdMode "on"
GO
DECLARE @tw_say nvarchar(2048);
IF N'$(TierwiseSqlcmdMode)' <> N'on'
BEGIN
    RAISERROR(N'%s', 16, 1, N'tierwise: run this script with sqlcmd -b, or in SSMS with Query > SQLCMD Mode switched on; never with sqlcmd -x. Nothing was changed.');
    SET NOEXEC ON;
    RETURN;
END;
IF N'$(TW_CHECK_ONLY)' NOT IN (N'0', N'1')
BEGIN
    RAISERROR(N'%s', 16, 1, N'tierwise: say which run this is: sqlcmd -v TW_CHECK_ONLY=1 (check only: every pre-check, the plan, no change) or -v TW_CHECK_ONLY=0 (the real run). Nothing was changed.');
    SET NOEXEC ON;
    RETURN;
END;
-- the SET options indexed views, computed-column and filtered indexes require (error 1934 otherwise);
-- sqlcmd connects with QUOTED_IDENTIFIER OFF. Set here, they last for the session.
SET ANSI_NULLS ON;
SET ANSI_PADDING ON;
SET ANSI_WARNINGS ON;
SET ARITHABORT ON;
SET CONCAT_NULL_YIELDS_NULL ON;
SET QUOTED_IDENTIFIER ON;
SET NUMERIC_ROUNDABORT OFF;
IF N'$(TW_CHECK_ONLY)' = N'1'
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'CHECK-ONLY RUN (TW_CHECK_ONLY=1): every pre-check runs against this server, then the plan is printed; nothing is changed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
END;
GO
DECLARE @tw_say nvarchar(2048);
USE [master];
SET NOCOUNT ON;
DECLARE @msg nvarchar(2048);
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'forward: [dbo].[Orders] in database [Sales]: create the partition starting at 2024-07-01 (function [pf_OrderDate], scheme [ps_OrderDate])';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
IF UPPER(CAST(SERVERPROPERTY('ServerName') AS nvarchar(256))) <> UPPER(N'SQLPROD01')
BEGIN
    SET @msg = N'tierwise: pre-check failed: this script is for server SQLPROD01, but the connection is to ' + CAST(SERVERPROPERTY('ServerName') AS nvarchar(256)) + N'. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) < 11
BEGIN
    SET @msg = N'tierwise: pre-check failed: SQL Server 2012 or later is needed. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF CAST(SERVERPROPERTY('EngineEdition') AS int) IN (5, 6, 8, 9, 11)
BEGIN
    SET @msg = N'tierwise: pre-check failed: this is a managed cloud service; its files are not moved with ALTER DATABASE. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF DB_ID(N'Sales') IS NULL
BEGIN
    SET @msg = N'tierwise: pre-check failed: database [Sales] does not exist. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF DATABASEPROPERTYEX(N'Sales', 'Status') <> N'ONLINE'
BEGIN
    SET @msg = N'tierwise: pre-check failed: database [Sales] is not ONLINE. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
DECLARE @last_full datetime;
SELECT @last_full = MAX(b.backup_finish_date)
FROM msdb.dbo.backupset AS b
WHERE b.type = 'D' AND b.is_damaged = 0
    AND b.database_guid = (SELECT rs.database_guid FROM sys.database_recovery_status AS rs
        WHERE rs.database_id = DB_ID(N'Sales'))
    AND NOT EXISTS (SELECT 1 FROM msdb.dbo.backupmediafamily AS f WHERE f.media_set_id = b.media_set_id
        AND (UPPER(f.physical_device_name) IN (N'NUL', N'NUL:') OR f.physical_device_name = N'/dev/null'));
IF @last_full IS NULL OR @last_full < DATEADD(MINUTE, -1440, GETDATE())
BEGIN
    SET @msg = N'tierwise: pre-check failed: no usable full backup of [Sales] (this database, not copied to NUL) finished in the last 24 hours (last: ' + COALESCE(CONVERT(nvarchar(30), @last_full, 120), N'never') + N'). Take one first. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
GO
DECLARE @tw_say nvarchar(2048);
USE [Sales];
SET NOCOUNT ON;
DECLARE @msg nvarchar(2048);
DECLARE @schema sysname = N'dbo', @table sysname = N'Orders',
    @scheme sysname = N'ps_OrderDate', @function sysname = N'pf_OrderDate',
    @fg sysname = N'FG_ORDERS_2024', @boundary_text nvarchar(4000) = N'2024-07-01';
DECLARE @object_id int = OBJECT_ID(QUOTENAME(@schema) + N'.' + QUOTENAME(@table), N'U');
DECLARE @function_id int, @fanout int, @column sysname, @type nvarchar(200), @style int, @sql nvarchar(max);
SELECT @function_id = function_id, @fanout = fanout FROM sys.partition_functions WHERE name = @function;
SELECT @column = c.name FROM sys.index_columns AS ic
JOIN sys.columns AS c ON c.object_id = ic.object_id AND c.column_id = ic.column_id
WHERE ic.object_id = @object_id AND ic.index_id IN (0, 1) AND ic.partition_ordinal = 1;
DECLARE @scheme_id int, @right bit, @next_used sysname, @partition int, @partition_fg sysname;
DECLARE @exists bit, @above bit;
SELECT @scheme_id = ps.data_space_id, @right = CAST(pf.boundary_value_on_right AS bit)
FROM sys.partition_schemes AS ps JOIN sys.partition_functions AS pf ON pf.function_id = ps.function_id
WHERE ps.name = @scheme AND pf.function_id = @function_id;
IF @object_id IS NULL OR @scheme_id IS NULL
BEGIN
    SET @msg = N'tierwise: pre-check failed: table [dbo].[Orders] or scheme [ps_OrderDate] on function [pf_OrderDate] does not exist; the plan is out of date. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE object_id = @object_id AND index_id IN (0, 1) AND data_space_id = @scheme_id)
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders] is not on scheme [ps_OrderDate]. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.indexes AS i JOIN sys.partition_schemes AS ps ON ps.data_space_id = i.data_space_id WHERE ps.function_id = @function_id AND i.object_id <> @object_id) OR EXISTS (SELECT 1 FROM sys.partition_schemes WHERE function_id = @function_id AND data_space_id <> @scheme_id)
BEGIN
    SET @msg = N'tierwise: pre-check failed: function [pf_OrderDate] also partitions other tables or schemes; a split changes them all and needs a NEXT USED filegroup on every scheme: unsupported here: review. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF @right = 0
BEGIN
    SET @msg = N'tierwise: pre-check failed: [pf_OrderDate] is RANGE LEFT; the split would move the current period''s rows to the new filegroup: unsupported here: add the boundary by hand. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF @column IS NULL
BEGIN
    SET @msg = N'tierwise: pre-check failed: the partitioning column of [dbo].[Orders] cannot be found: unsupported here: review. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
SELECT @type = CASE
        WHEN t.name IN (N'int', N'bigint', N'smallint', N'tinyint', N'bit', N'date', N'datetime', N'smalldatetime',
                        N'money', N'smallmoney', N'uniqueidentifier', N'real', N'float') THEN t.name
        WHEN t.name IN (N'datetime2', N'time', N'datetimeoffset') THEN t.name + N'(' + CAST(pp.scale AS nvarchar(5)) + N')'
        WHEN t.name IN (N'decimal', N'numeric') THEN t.name + N'(' + CAST(pp.[precision] AS nvarchar(5)) + N', ' + CAST(pp.scale AS nvarchar(5)) + N')'
        WHEN t.name IN (N'char', N'varchar', N'binary', N'varbinary') AND pp.max_length > 0 THEN t.name + N'(' + CAST(pp.max_length AS nvarchar(5)) + N')'
        WHEN t.name IN (N'nchar', N'nvarchar') AND pp.max_length > 0 THEN t.name + N'(' + CAST(pp.max_length / 2 AS nvarchar(5)) + N')'
    END,
    @style = CASE
        WHEN t.name = N'datetimeoffset' THEN 127
        WHEN t.name IN (N'date', N'datetime', N'smalldatetime', N'datetime2', N'time') THEN 121
        WHEN t.name IN (N'real', N'float') AND CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) < 13 THEN 2
        WHEN t.name IN (N'real', N'float') THEN 3
        WHEN t.name IN (N'money', N'smallmoney') THEN 2
        WHEN t.name IN (N'binary', N'varbinary') THEN 1
        ELSE 0
    END
FROM sys.partition_parameters AS pp
JOIN sys.types AS t ON t.user_type_id = pp.system_type_id
WHERE pp.function_id = @function_id AND pp.parameter_id = 1;
IF @type = N'float' AND CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) < 13
BEGIN
    SET @msg = N'tierwise: pre-check failed: the partitioning column is float, and before SQL Server 2016 a float cannot be written as text exactly (CONVERT style 3 arrived in 2016; style 2 keeps 16 digits and can change a boundary value): unsupported on this version: do this step by hand. Nothing was changed.';
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF @type IS NULL
BEGIN
    SET @msg = N'tierwise: pre-check failed: the partitioning column''s type is not one this script handles; unsupported here: review. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
SET @sql = N'DECLARE @v ' + @type + N' = TRY_CONVERT(' + @type + N', @t, ' + CAST(@style AS nvarchar(5)) + N'); SELECT @exists = CASE WHEN @v IS NULL THEN NULL WHEN EXISTS (SELECT 1 FROM sys.partition_range_values WHERE function_id = @f AND value = @v) THEN 1 ELSE 0 END, @above = CASE WHEN EXISTS (SELECT 1 FROM sys.partition_range_values WHERE function_id = @f AND value > @v) THEN 1 ELSE 0 END, @partition = CASE WHEN @v IS NOT NULL THEN $PARTITION.' + QUOTENAME(@function) + N'(@v) END;';
EXEC sys.sp_executesql @sql, N'@t nvarchar(4000), @f int, @exists bit OUTPUT, @above bit OUTPUT, @partition int OUTPUT',
    @t = @boundary_text, @f = @function_id, @exists = @exists OUTPUT, @above = @above OUTPUT, @partition = @partition OUTPUT;
IF @exists IS NULL
BEGIN
    SET @msg = N'tierwise: pre-check failed: 2024-07-01 cannot be converted to the type of [pf_OrderDate]; the plan is out of date. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
SELECT @partition_fg = fg.name FROM sys.destination_data_spaces AS dds
JOIN sys.filegroups AS fg ON fg.data_space_id = dds.data_space_id
WHERE dds.partition_scheme_id = @scheme_id AND dds.destination_id = @partition;
IF @exists = 0 AND @above = 1
BEGIN
    SET @msg = N'tierwise: pre-check failed: [pf_OrderDate] already has boundaries above 2024-07-01; this is not the leading edge: review. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF @exists = 1 AND @partition_fg <> @fg
BEGIN
    SET @msg = N'tierwise: pre-check failed: [pf_OrderDate] already has the boundary 2024-07-01, but its partition is on ' + QUOTENAME(@partition_fg) + N', not on [FG_ORDERS_2024]: review. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF @exists = 0 AND (FILEGROUP_ID(@fg) IS NULL OR NOT EXISTS (SELECT 1 FROM sys.database_files WHERE data_space_id = FILEGROUP_ID(@fg)))
BEGIN
    SET @msg = N'tierwise: pre-check failed: filegroup [FG_ORDERS_2024] does not exist or has no files. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF @exists = 0 AND EXISTS (SELECT 1 FROM sys.filegroups WHERE name = @fg AND is_read_only = 1)
BEGIN
    SET @msg = N'tierwise: pre-check failed: filegroup [FG_ORDERS_2024] is READ_ONLY; the new period''s rows could not be written. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
SELECT @next_used = fg.name FROM sys.destination_data_spaces AS dds
JOIN sys.filegroups AS fg ON fg.data_space_id = dds.data_space_id
WHERE dds.partition_scheme_id = @scheme_id AND dds.destination_id = @fanout + 1;
IF @exists = 0 AND @next_used <> @fg
BEGIN
    SET @msg = N'tierwise: warning: the scheme''s NEXT USED filegroup is ' + QUOTENAME(@next_used) + N'; this script sets it to [FG_ORDERS_2024].';
    RAISERROR(N'%s', 0, 1, @msg) WITH NOWAIT;
END;
DECLARE @rows bigint;
IF @exists = 0
BEGIN
    SET @sql = N'DECLARE @v ' + @type + N' = CONVERT(' + @type + N', @t, ' + CAST(@style AS nvarchar(5)) + N'); SELECT @rows = COUNT_BIG(*) FROM ' + QUOTENAME(@schema) + N'.' + QUOTENAME(@table) + N' WHERE ' + QUOTENAME(@column) + N' >= @v;';
    EXEC sys.sp_executesql @sql, N'@t nvarchar(4000), @rows bigint OUTPUT', @t = @boundary_text, @rows = @rows OUTPUT;
    IF @rows IS NULL OR @rows > 0
    BEGIN
        SET @msg = N'tierwise: pre-check failed: ' + COALESCE(CAST(@rows AS nvarchar(20)), N'an unknown number of') + N' rows are already at or above 2024-07-01; the split would move them: run it before the period starts, or review. Nothing was changed.';
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        RAISERROR(N'%s', 16, 1, @msg);
        SET NOEXEC ON;
        RETURN;
    END;
END;
GO
DECLARE @tw_say nvarchar(2048);
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'plan: Moves: [dbo].[Orders] in database [Sales]: create the partition starting at 2024-07-01 (function [pf_OrderDate], scheme [ps_OrderDate])';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'plan: Server: SQLPROD01';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'plan: Database: Sales';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'plan: From: tier unknown: (the open last partition)';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'plan: To: tier flash: filegroup [FG_ORDERS_2024]';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'plan: method: ALTER PARTITION SCHEME [ps_OrderDate] NEXT USED [FG_ORDERS_2024]; ALTER PARTITION FUNCTION [pf_OrderDate]() SPLIT RANGE (<2024-07-01 as the function''s type>);';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'estimated duration: seconds: NEXT USED + SPLIT of an empty range is metadata only; before it the script counts the rows at or above the boundary (an index seek when the partitioning column leads an index, else a scan of the last partition, without holding locks).';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
IF N'$(TW_CHECK_ONLY)' = N'1'
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'check-only run: every pre-check above passed; nothing was changed and no step below runs (TW_CHECK_ONLY=1).';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    IF OBJECT_ID(N'tempdb..#tierwise_check_only') IS NULL CREATE TABLE #tierwise_check_only (passed bit);
    SET NOEXEC ON;
    RETURN;
END;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'every pre-check passed: the changes start now.';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
GO
DECLARE @tw_say nvarchar(2048);
USE [Sales];
SET NOCOUNT ON;
SET XACT_ABORT ON;
DECLARE @msg nvarchar(2048);
DECLARE @schema sysname = N'dbo', @table sysname = N'Orders',
    @scheme sysname = N'ps_OrderDate', @function sysname = N'pf_OrderDate',
    @fg sysname = N'FG_ORDERS_2024', @boundary_text nvarchar(4000) = N'2024-07-01';
DECLARE @object_id int = OBJECT_ID(QUOTENAME(@schema) + N'.' + QUOTENAME(@table), N'U');
DECLARE @function_id int, @fanout int, @column sysname, @type nvarchar(200), @style int, @sql nvarchar(max);
SELECT @function_id = function_id, @fanout = fanout FROM sys.partition_functions WHERE name = @function;
SELECT @column = c.name FROM sys.index_columns AS ic
JOIN sys.columns AS c ON c.object_id = ic.object_id AND c.column_id = ic.column_id
WHERE ic.object_id = @object_id AND ic.index_id IN (0, 1) AND ic.partition_ordinal = 1;
DECLARE @scheme_id int = (SELECT data_space_id FROM sys.partition_schemes WHERE name = @scheme AND function_id = @function_id);
DECLARE @exists bit, @partition int, @partition_fg sysname, @rows bigint;
SELECT @type = CASE
        WHEN t.name IN (N'int', N'bigint', N'smallint', N'tinyint', N'bit', N'date', N'datetime', N'smalldatetime',
                        N'money', N'smallmoney', N'uniqueidentifier', N'real', N'float') THEN t.name
        WHEN t.name IN (N'datetime2', N'time', N'datetimeoffset') THEN t.name + N'(' + CAST(pp.scale AS nvarchar(5)) + N')'
        WHEN t.name IN (N'decimal', N'numeric') THEN t.name + N'(' + CAST(pp.[precision] AS nvarchar(5)) + N', ' + CAST(pp.scale AS nvarchar(5)) + N')'
        WHEN t.name IN (N'char', N'varchar', N'binary', N'varbinary') AND pp.max_length > 0 THEN t.name + N'(' + CAST(pp.max_length AS nvarchar(5)) + N')'
        WHEN t.name IN (N'nchar', N'nvarchar') AND pp.max_length > 0 THEN t.name + N'(' + CAST(pp.max_length / 2 AS nvarchar(5)) + N')'
    END,
    @style = CASE
        WHEN t.name = N'datetimeoffset' THEN 127
        WHEN t.name IN (N'date', N'datetime', N'smalldatetime', N'datetime2', N'time') THEN 121
        WHEN t.name IN (N'real', N'float') AND CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) < 13 THEN 2
        WHEN t.name IN (N'real', N'float') THEN 3
        WHEN t.name IN (N'money', N'smallmoney') THEN 2
        WHEN t.name IN (N'binary', N'varbinary') THEN 1
        ELSE 0
    END
FROM sys.partition_parameters AS pp
JOIN sys.types AS t ON t.user_type_id = pp.system_type_id
WHERE pp.function_id = @function_id AND pp.parameter_id = 1;
IF @type = N'float' AND CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) < 13
BEGIN
    SET @msg = N'tierwise: pre-check failed: the partitioning column is float, and before SQL Server 2016 a float cannot be written as text exactly (CONVERT style 3 arrived in 2016; style 2 keeps 16 digits and can change a boundary value): unsupported on this version: do this step by hand. Nothing was changed.';
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
SET @sql = N'DECLARE @v ' + @type + N' = CONVERT(' + @type + N', @t, ' + CAST(@style AS nvarchar(5)) + N'); SET @exists = CASE WHEN EXISTS (SELECT 1 FROM sys.partition_range_values WHERE function_id = @f AND value = @v) THEN 1 ELSE 0 END;';
EXEC sys.sp_executesql @sql, N'@t nvarchar(4000), @f int, @exists bit OUTPUT', @t = @boundary_text,
    @f = @function_id, @exists = @exists OUTPUT;
IF @exists = 1
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'step 2: already done: [pf_OrderDate] has the boundary 2024-07-01';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
END
ELSE
BEGIN
    SET @sql = N'DECLARE @v ' + @type + N' = CONVERT(' + @type + N', @t, ' + CAST(@style AS nvarchar(5)) + N'); SELECT @rows = COUNT_BIG(*) FROM ' + QUOTENAME(@schema) + N'.' + QUOTENAME(@table) + N' WHERE ' + QUOTENAME(@column) + N' >= @v;';
    EXEC sys.sp_executesql @sql, N'@t nvarchar(4000), @rows bigint OUTPUT', @t = @boundary_text, @rows = @rows OUTPUT;
    IF @rows IS NULL OR @rows > 0
    BEGIN
        SET @msg = N'tierwise: pre-check failed: ' + COALESCE(CAST(@rows AS nvarchar(20)), N'an unknown number of') + N' rows are already at or above 2024-07-01; the split would move them: run it before the period starts, or review. Nothing was changed.';
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        RAISERROR(N'%s', 16, 1, @msg);
        SET NOEXEC ON;
        RETURN;
    END;
    SET LOCK_TIMEOUT 5000;
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'step 2: NEXT USED [FG_ORDERS_2024] on [ps_OrderDate], SPLIT RANGE at 2024-07-01';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    BEGIN TRY
        BEGIN TRANSACTION;
        SET @sql = N'ALTER PARTITION SCHEME ' + QUOTENAME(@scheme) + N' NEXT USED ' + QUOTENAME(@fg) + N'; DECLARE @v ' + @type + N' = CONVERT(' + @type + N', @t, ' + CAST(@style AS nvarchar(5)) + N'); ALTER PARTITION FUNCTION ' + QUOTENAME(@function) + N'() SPLIT RANGE (@v);';
        EXEC sys.sp_executesql @sql, N'@t nvarchar(4000)', @t = @boundary_text;
        SET @sql = N'DECLARE @v ' + @type + N' = CONVERT(' + @type + N', @t, ' + CAST(@style AS nvarchar(5)) + N'); SELECT @p = $PARTITION.' + QUOTENAME(@function) + N'(@v); SELECT @rows = COUNT_BIG(*) FROM ' + QUOTENAME(@schema) + N'.' + QUOTENAME(@table) + N' WHERE $PARTITION.' + QUOTENAME(@function) + N'(' + QUOTENAME(@column) + N') = @p;';
        EXEC sys.sp_executesql @sql, N'@t nvarchar(4000), @rows bigint OUTPUT, @p int OUTPUT', @t = @boundary_text, @rows = @rows OUTPUT, @p = @partition OUTPUT;
        SELECT @partition_fg = fg.name FROM sys.destination_data_spaces AS dds
        JOIN sys.filegroups AS fg ON fg.data_space_id = dds.data_space_id
        WHERE dds.partition_scheme_id = @scheme_id AND dds.destination_id = @partition;
        IF @partition_fg IS NULL OR @partition_fg <> @fg
            RAISERROR(N'%s', 16, 1, N'after the SPLIT the new partition is not on the planned filegroup');
        IF @rows <> 0
            RAISERROR(N'%s', 16, 1, N'rows reached the new partition during the split');
        COMMIT TRANSACTION;
    END TRY
    BEGIN CATCH
        IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION;
        SET @msg = N'tierwise: the split failed and was rolled back, nothing changed: ' + ERROR_MESSAGE();
        RAISERROR(N'%s', 16, 1, @msg);
        SET NOEXEC ON;
        RETURN;
    END CATCH;
END;
GO
DECLARE @tw_say nvarchar(2048);
USE [Sales];
SET NOCOUNT ON;
DECLARE @msg nvarchar(2048);
DECLARE @schema sysname = N'dbo', @table sysname = N'Orders',
    @scheme sysname = N'ps_OrderDate', @function sysname = N'pf_OrderDate',
    @fg sysname = N'FG_ORDERS_2024', @boundary_text nvarchar(4000) = N'2024-07-01';
DECLARE @object_id int = OBJECT_ID(QUOTENAME(@schema) + N'.' + QUOTENAME(@table), N'U');
DECLARE @function_id int, @fanout int, @column sysname, @type nvarchar(200), @style int, @sql nvarchar(max);
SELECT @function_id = function_id, @fanout = fanout FROM sys.partition_functions WHERE name = @function;
SELECT @column = c.name FROM sys.index_columns AS ic
JOIN sys.columns AS c ON c.object_id = ic.object_id AND c.column_id = ic.column_id
WHERE ic.object_id = @object_id AND ic.index_id IN (0, 1) AND ic.partition_ordinal = 1;
DECLARE @scheme_id int = (SELECT data_space_id FROM sys.partition_schemes WHERE name = @scheme AND function_id = @function_id);
DECLARE @exists bit, @partition int, @partition_fg sysname;
SELECT @type = CASE
        WHEN t.name IN (N'int', N'bigint', N'smallint', N'tinyint', N'bit', N'date', N'datetime', N'smalldatetime',
                        N'money', N'smallmoney', N'uniqueidentifier', N'real', N'float') THEN t.name
        WHEN t.name IN (N'datetime2', N'time', N'datetimeoffset') THEN t.name + N'(' + CAST(pp.scale AS nvarchar(5)) + N')'
        WHEN t.name IN (N'decimal', N'numeric') THEN t.name + N'(' + CAST(pp.[precision] AS nvarchar(5)) + N', ' + CAST(pp.scale AS nvarchar(5)) + N')'
        WHEN t.name IN (N'char', N'varchar', N'binary', N'varbinary') AND pp.max_length > 0 THEN t.name + N'(' + CAST(pp.max_length AS nvarchar(5)) + N')'
        WHEN t.name IN (N'nchar', N'nvarchar') AND pp.max_length > 0 THEN t.name + N'(' + CAST(pp.max_length / 2 AS nvarchar(5)) + N')'
    END,
    @style = CASE
        WHEN t.name = N'datetimeoffset' THEN 127
        WHEN t.name IN (N'date', N'datetime', N'smalldatetime', N'datetime2', N'time') THEN 121
        WHEN t.name IN (N'real', N'float') AND CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) < 13 THEN 2
        WHEN t.name IN (N'real', N'float') THEN 3
        WHEN t.name IN (N'money', N'smallmoney') THEN 2
        WHEN t.name IN (N'binary', N'varbinary') THEN 1
        ELSE 0
    END
FROM sys.partition_parameters AS pp
JOIN sys.types AS t ON t.user_type_id = pp.system_type_id
WHERE pp.function_id = @function_id AND pp.parameter_id = 1;
IF @type = N'float' AND CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) < 13
BEGIN
    SET @msg = N'tierwise: pre-check failed: the partitioning column is float, and before SQL Server 2016 a float cannot be written as text exactly (CONVERT style 3 arrived in 2016; style 2 keeps 16 digits and can change a boundary value): unsupported on this version: do this step by hand. Nothing was changed.';
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
SET @sql = N'DECLARE @v ' + @type + N' = CONVERT(' + @type + N', @t, ' + CAST(@style AS nvarchar(5)) + N'); SET @exists = CASE WHEN EXISTS (SELECT 1 FROM sys.partition_range_values WHERE function_id = @f AND value = @v) THEN 1 ELSE 0 END; SET @p = $PARTITION.' + QUOTENAME(@function) + N'(@v);';
EXEC sys.sp_executesql @sql, N'@t nvarchar(4000), @f int, @exists bit OUTPUT, @p int OUTPUT', @t = @boundary_text,
    @f = @function_id, @exists = @exists OUTPUT, @p = @partition OUTPUT;
IF @exists <> 1
BEGIN
    SET @msg = N'tierwise: post-check failed: [pf_OrderDate] has no boundary 2024-07-01.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
SELECT @partition_fg = fg.name FROM sys.destination_data_spaces AS dds
JOIN sys.filegroups AS fg ON fg.data_space_id = dds.data_space_id
WHERE dds.partition_scheme_id = @scheme_id AND dds.destination_id = @partition;
IF @partition_fg IS NULL OR @partition_fg <> @fg
BEGIN
    SET @msg = N'tierwise: post-check failed: the partition starting at 2024-07-01 is not on [FG_ORDERS_2024].';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'post-check passed: [pf_OrderDate] has the boundary 2024-07-01, its partition on [FG_ORDERS_2024].';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
GO
DECLARE @tw_say nvarchar(2048);
DECLARE @tw_finished bit;
SET @tw_finished = 1;  -- not executed when a check stopped the script (NOEXEC)
SET NOEXEC OFF;
IF @tw_finished = 1
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'finished: [dbo].[Orders] has a partition from 2024-07-01 on [FG_ORDERS_2024].';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
END
ELSE IF OBJECT_ID(N'tempdb..#tierwise_check_only') IS NOT NULL
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'check-only run finished: every pre-check passed and nothing was changed. In the change window run this script with -v TW_CHECK_ONLY=0.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    DROP TABLE #tierwise_check_only;
END
ELSE
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: a check or step above failed or asked for a manual step; later steps did not run.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    IF OBJECT_ID(N'tempdb..#tierwise_stopped') IS NULL CREATE TABLE #tierwise_stopped (stopped bit);
END;
GO
