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
--   - Sch-M lock on the table for the split/merge; waits at most 30 s.
--   - the ILM leading edge: the next period's partition, created empty on the hot tier
-- Generator:  tierwise (golden files) (migrations/1)
-- Generated:  2024-05-02T06:00:00Z
-- Plan:       sha256 afe2cd138bb02c6dc0cbbb1968d74a1b0ef9907000035a6de0947bfb431338d4 (the forward plan; the rollback shows the same)
-- Run:
--   sqlcmd -S SQLPROD01 -E -b -f 65001 -i <this file>   (or SSMS: Query > SQLCMD Mode)
--   Never run it with sqlcmd -x. Read docs/running-scripts.md first.
--   File-system checks use sys.dm_os_file_exists (SQL Server 2017+) and sys.dm_os_volume_stats / sys.dm_os_enumerate_fixed_drives (2019+); xp_fileexist / xp_fixeddrives only on older versions. The script prints which one it used.
-- Safe to run twice: every step checks first and says 'already done' when there is nothing to do.
-- ================================================================================================
:on error exit
:setvar TierwiseSqlcmdMode "on"
GO
IF N'$(TierwiseSqlcmdMode)' <> N'on'
BEGIN
    RAISERROR(N'%s', 16, 1, N'tierwise: run this script with sqlcmd -b, or in SSMS with Query > SQLCMD Mode switched on; never with sqlcmd -x. Nothing was changed.');
    SET NOEXEC ON;
    RETURN;
END;
GO
USE [master];
SET NOCOUNT ON;
DECLARE @msg nvarchar(2048);
PRINT N'tierwise: forward: [dbo].[Orders] in database [Sales]: create the partition starting at 2024-07-01 (function [pf_OrderDate], scheme [ps_OrderDate])';
IF UPPER(CAST(SERVERPROPERTY('ServerName') AS nvarchar(256))) <> UPPER(N'SQLPROD01')
BEGIN
    SET @msg = N'tierwise: pre-check failed: this script is for server SQLPROD01, but the connection is to ' + CAST(SERVERPROPERTY('ServerName') AS nvarchar(256)) + N'. Nothing was changed.';
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) < 11
BEGIN
    SET @msg = N'tierwise: pre-check failed: SQL Server 2012 or later is needed. Nothing was changed.';
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF CAST(SERVERPROPERTY('EngineEdition') AS int) IN (5, 6, 8, 9, 11)
BEGIN
    SET @msg = N'tierwise: pre-check failed: this is a managed cloud service; its files are not moved with ALTER DATABASE. Nothing was changed.';
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF DB_ID(N'Sales') IS NULL
BEGIN
    SET @msg = N'tierwise: pre-check failed: database [Sales] does not exist. Nothing was changed.';
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF DATABASEPROPERTYEX(N'Sales', 'Status') <> N'ONLINE'
BEGIN
    SET @msg = N'tierwise: pre-check failed: database [Sales] is not ONLINE. Nothing was changed.';
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
DECLARE @last_full datetime;
SELECT @last_full = MAX(backup_finish_date) FROM msdb.dbo.backupset
WHERE database_name = N'Sales' AND type = 'D';
IF @last_full IS NULL OR @last_full < DATEADD(MINUTE, -1440, GETDATE())
BEGIN
    SET @msg = N'tierwise: pre-check failed: no full backup of [Sales] finished in the last 24 hours (last: ' + COALESCE(CONVERT(nvarchar(30), @last_full, 120), N'never') + N'). Take one first. Nothing was changed.';
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
GO
USE [Sales];
SET NOCOUNT ON;
DECLARE @msg nvarchar(2048);
DECLARE @schema sysname = N'dbo', @table sysname = N'Orders',
    @scheme sysname = N'ps_OrderDate', @function sysname = N'pf_OrderDate',
    @fg sysname = N'FG_ORDERS_2024', @boundary_text nvarchar(4000) = N'2024-07-01';
DECLARE @object_id int = OBJECT_ID(QUOTENAME(@schema) + N'.' + QUOTENAME(@table), N'U');
DECLARE @scheme_id int, @function_id int, @right bit, @type nvarchar(200), @style int, @sql nvarchar(max);
DECLARE @exists bit, @above bit, @rows bigint;
SELECT @scheme_id = ps.data_space_id, @function_id = pf.function_id, @right = CAST(pf.boundary_value_on_right AS bit)
FROM sys.partition_schemes AS ps JOIN sys.partition_functions AS pf ON pf.function_id = ps.function_id
WHERE ps.name = @scheme AND pf.name = @function;
IF @object_id IS NULL OR @scheme_id IS NULL
BEGIN
    SET @msg = N'tierwise: pre-check failed: table [dbo].[Orders] or scheme [ps_OrderDate] on function [pf_OrderDate] does not exist; the plan is out of date. Nothing was changed.';
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE object_id = @object_id AND index_id IN (0, 1) AND data_space_id = @scheme_id)
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders] is not on scheme [ps_OrderDate]. Nothing was changed.';
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.indexes AS i JOIN sys.partition_schemes AS ps ON ps.data_space_id = i.data_space_id WHERE ps.function_id = @function_id AND i.object_id <> @object_id)
BEGIN
    SET @msg = N'tierwise: pre-check failed: function [pf_OrderDate] also partitions other tables; a split changes them all: unsupported here: review. Nothing was changed.';
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF @right = 0
BEGIN
    SET @msg = N'tierwise: pre-check failed: [pf_OrderDate] is RANGE LEFT; the split would move the current period''s rows to the new filegroup: unsupported here: add the boundary by hand. Nothing was changed.';
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
        WHEN t.name IN (N'real', N'float') THEN 3
        WHEN t.name IN (N'money', N'smallmoney') THEN 2
        WHEN t.name IN (N'binary', N'varbinary') THEN 1
        ELSE 0
    END
FROM sys.partition_parameters AS pp
JOIN sys.types AS t ON t.user_type_id = pp.system_type_id
WHERE pp.function_id = @function_id AND pp.parameter_id = 1;
IF @type IS NULL
BEGIN
    SET @msg = N'tierwise: pre-check failed: the partitioning column''s type is not one this script handles; unsupported here: review. Nothing was changed.';
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
SET @sql = N'DECLARE @v ' + @type + N' = TRY_CONVERT(' + @type + N', @t, ' + CAST(@style AS nvarchar(5)) + N'); SELECT @exists = CASE WHEN @v IS NULL THEN NULL WHEN EXISTS (SELECT 1 FROM sys.partition_range_values WHERE function_id = @f AND value = @v) THEN 1 ELSE 0 END, @above = CASE WHEN EXISTS (SELECT 1 FROM sys.partition_range_values WHERE function_id = @f AND value > @v) THEN 1 ELSE 0 END;';
EXEC sys.sp_executesql @sql, N'@t nvarchar(4000), @f int, @exists bit OUTPUT, @above bit OUTPUT',
    @t = @boundary_text, @f = @function_id, @exists = @exists OUTPUT, @above = @above OUTPUT;
IF @exists IS NULL
BEGIN
    SET @msg = N'tierwise: pre-check failed: 2024-07-01 cannot be converted to the type of [pf_OrderDate]; the plan is out of date. Nothing was changed.';
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF @exists = 0 AND @above = 1
BEGIN
    SET @msg = N'tierwise: pre-check failed: [pf_OrderDate] already has boundaries above 2024-07-01; this is not the leading edge: review. Nothing was changed.';
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
GO
USE [Sales];
SET NOCOUNT ON;
DECLARE @msg nvarchar(2048);
DECLARE @schema sysname = N'dbo', @table sysname = N'Orders',
    @scheme sysname = N'ps_OrderDate', @function sysname = N'pf_OrderDate',
    @fg sysname = N'FG_ORDERS_2024', @boundary_text nvarchar(4000) = N'2024-07-01';
DECLARE @object_id int = OBJECT_ID(QUOTENAME(@schema) + N'.' + QUOTENAME(@table), N'U');
DECLARE @function_id int = (SELECT function_id FROM sys.partition_functions WHERE name = @function);
DECLARE @type nvarchar(200), @style int, @sql nvarchar(max), @exists bit, @rows bigint;
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
        WHEN t.name IN (N'real', N'float') THEN 3
        WHEN t.name IN (N'money', N'smallmoney') THEN 2
        WHEN t.name IN (N'binary', N'varbinary') THEN 1
        ELSE 0
    END
FROM sys.partition_parameters AS pp
JOIN sys.types AS t ON t.user_type_id = pp.system_type_id
WHERE pp.function_id = @function_id AND pp.parameter_id = 1;
SET @sql = N'DECLARE @v ' + @type + N' = CONVERT(' + @type + N', @t, ' + CAST(@style AS nvarchar(5)) + N'); SET @exists = CASE WHEN EXISTS (SELECT 1 FROM sys.partition_range_values WHERE function_id = @f AND value = @v) THEN 1 ELSE 0 END;';
EXEC sys.sp_executesql @sql, N'@t nvarchar(4000), @f int, @exists bit OUTPUT', @t = @boundary_text,
    @f = @function_id, @exists = @exists OUTPUT;
IF @exists = 1
BEGIN
    PRINT N'tierwise: step 2: already done: [pf_OrderDate] has the boundary 2024-07-01';
END
ELSE
BEGIN
    SET @sql = N'DECLARE @v ' + @type + N' = CONVERT(' + @type + N', @t, ' + CAST(@style AS nvarchar(5)) + N'); SELECT @rows = COUNT_BIG(*) FROM ' + QUOTENAME(@schema) + N'.' + QUOTENAME(@table) + N' WHERE ' + (SELECT QUOTENAME(c.name) FROM sys.index_columns AS ic JOIN sys.columns AS c ON c.object_id = ic.object_id AND c.column_id = ic.column_id WHERE ic.object_id = @object_id AND ic.index_id IN (0, 1) AND ic.partition_ordinal = 1) + N' >= @v;';
    EXEC sys.sp_executesql @sql, N'@t nvarchar(4000), @rows bigint OUTPUT', @t = @boundary_text, @rows = @rows OUTPUT;
    IF @rows IS NULL OR @rows > 0
    BEGIN
        SET @msg = N'tierwise: pre-check failed: ' + COALESCE(CAST(@rows AS nvarchar(20)), N'an unknown number of') + N' rows are already at or above 2024-07-01; the split would move them: run it before the period starts, or review. Nothing was changed.';
        RAISERROR(N'%s', 16, 1, @msg);
        SET NOEXEC ON;
        RETURN;
    END;
    SET LOCK_TIMEOUT 30000;
    SET XACT_ABORT ON;
    PRINT N'tierwise: step 2: NEXT USED [FG_ORDERS_2024] on [ps_OrderDate], SPLIT RANGE at 2024-07-01';
    BEGIN TRANSACTION;
    SET @sql = N'ALTER PARTITION SCHEME ' + QUOTENAME(@scheme) + N' NEXT USED ' + QUOTENAME(@fg) + N'; DECLARE @v ' + @type + N' = CONVERT(' + @type + N', @t, ' + CAST(@style AS nvarchar(5)) + N'); ALTER PARTITION FUNCTION ' + QUOTENAME(@function) + N'() SPLIT RANGE (@v);';
    EXEC sys.sp_executesql @sql, N'@t nvarchar(4000)', @t = @boundary_text;
    COMMIT TRANSACTION;
END;
GO
USE [Sales];
SET NOCOUNT ON;
DECLARE @msg nvarchar(2048);
DECLARE @function sysname = N'pf_OrderDate', @boundary_text nvarchar(4000) = N'2024-07-01';
DECLARE @function_id int = (SELECT function_id FROM sys.partition_functions WHERE name = @function);
DECLARE @type nvarchar(200), @style int, @sql nvarchar(max), @exists bit;
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
        WHEN t.name IN (N'real', N'float') THEN 3
        WHEN t.name IN (N'money', N'smallmoney') THEN 2
        WHEN t.name IN (N'binary', N'varbinary') THEN 1
        ELSE 0
    END
FROM sys.partition_parameters AS pp
JOIN sys.types AS t ON t.user_type_id = pp.system_type_id
WHERE pp.function_id = @function_id AND pp.parameter_id = 1;
SET @sql = N'DECLARE @v ' + @type + N' = CONVERT(' + @type + N', @t, ' + CAST(@style AS nvarchar(5)) + N'); SET @exists = CASE WHEN EXISTS (SELECT 1 FROM sys.partition_range_values WHERE function_id = @f AND value = @v) THEN 1 ELSE 0 END;';
EXEC sys.sp_executesql @sql, N'@t nvarchar(4000), @f int, @exists bit OUTPUT', @t = @boundary_text,
    @f = @function_id, @exists = @exists OUTPUT;
IF @exists <> 1
BEGIN
    SET @msg = N'tierwise: post-check failed: [pf_OrderDate] has no boundary 2024-07-01.';
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
PRINT N'tierwise: post-check passed: [pf_OrderDate] has the boundary 2024-07-01.';
GO
DECLARE @tw_finished bit;
SET @tw_finished = 1;  -- not executed when a check stopped the script (NOEXEC)
SET NOEXEC OFF;
IF @tw_finished = 1
BEGIN
    PRINT N'tierwise: finished: [dbo].[Orders] has a partition from 2024-07-01 on [FG_ORDERS_2024].';
END
ELSE
BEGIN
    PRINT N'tierwise: STOPPED: a check or step above failed or asked for a manual step; later steps did not run.';
    IF OBJECT_ID(N'tempdb..#tierwise_stopped') IS NULL CREATE TABLE #tierwise_stopped (stopped bit);
END;
GO
