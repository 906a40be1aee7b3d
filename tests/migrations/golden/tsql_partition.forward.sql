-- ================================================================================================
-- tierwise T-SQL migration script: FORWARD
-- ================================================================================================
-- Moves:      partition 3 of [dbo].[Orders] in database [Sales] (all its aligned indexes), range 2024-01-01 .. 2024-04-01
-- Server:     SQLPROD01
-- Database:   Sales
-- From:       tier flash: filegroup [FG_ORDERS_2024]
-- To:         tier fc: filegroup [FG_ORDERS_2024_fc] (created if missing, file F:\fc\Sales_FG_ORDERS_2024_fc.ndf)
-- Object:     partition dbo.Orders p3 (key Sales/partition/dbo.Orders/1/3)
-- Why:        random_read (TW703)
--             - filegroup FG_ORDERS_2024: TW703 random but only 120 reads/s (flash from 180/s)
--             - 0.3 page I/O latch waits (physical-read proxy) per second, 88 % of accesses are singleton lookups, 1 % read-miss, heat 2,016.5 per GB-hour (0.10x the database average)
--             - moves with filegroup FG_ORDERS_2024 (recommended: fc)
-- Predicted:  I/O wait n/a now -> 0.0 ms/s on tier fc
-- Size:       0.8 GB
-- Method:
--   switch the partition out to a staging table, rebuild it onto the target filegroup, MERGE/NEXT USED/SPLIT
--   the empty range onto the target, CHECK constraint, switch back - in ONE transaction (all or nothing);
--   the exact row count is checked after the commit, when the table is no longer locked.
--   Index definitions, the partitioning column and boundary values are read from the catalog at run time.
-- Limits and notes:
--   - OFFLINE for this table: it is locked (Sch-M) from the switch-out until the commit. On SQL Server 2014+ the switch-out waits at low priority (WAIT_AT_LOW_PRIORITY, blocking no one) for at most 5 min, then rolls back; on 2012 it waits at most 5 s.
--   - The rebuild is fully logged inside the transaction (FULL recovery): the log needs room for about the partition's size; checked first under FULL / BULK_LOGGED (free log space plus what the log files can still grow, against the partition's used pages plus headroom, plus the log the database's other work writes during the transaction: its rate now times the move's estimated length).
--   - No ONLINE rebuild (Enterprise only, and pointless on a staging table).
--   - Each index's data compression is kept: after MERGE/SPLIT the empty partition is rebuilt to it before the switch-in.
--   - Refused (unsupported here: review): heaps, columnstore/XML/spatial/filtered indexes, computed, sparse, ROWGUIDCOL or LOB columns, foreign keys, schema-bound views, schemes/functions shared with other tables, the first (RANGE RIGHT) or last (RANGE LEFT) partition, temporal, CDC, change-tracked, replicated or full-text indexed tables, tables created with ANSI_NULLS OFF or with columns created with ANSI_PADDING OFF.
--   - A table created with QUOTED_IDENTIFIER OFF is moved: its staging table is created under the same setting (SWITCH needs both tables' ANSI_NULLS and QUOTED_IDENTIFIER settings equal).
-- Operations:
--   Duration:    under a minute for 0.8 GB at ~100 MB/s (offline rebuild of the partition and each nonclustered index onto the target; copy speed varies), plus up to 5 min waiting for the lock.
--   Log volume:  about 0.8 GB plus its nonclustered indexes, in ONE transaction: under FULL recovery the rebuild is fully logged and the log cannot be truncated until the commit (under SIMPLE or BULK_LOGGED the index builds are minimally logged); SWITCH, MERGE and SPLIT of the empty range are metadata only.
--   Blocking:    Sch-M on [dbo].[Orders] from the switch-out to the commit: every query on the table, any partition, waits for the whole rebuild. SQL Server 2014+: the switch-out waits at low priority (WAIT_AT_LOW_PRIORITY, ABORT_AFTER_WAIT = SELF) for at most 5 min and blocks no one while waiting; 2012: new readers queue behind it for at most 5 s.
--   Backups:     a full backup must be recent (checked); log backups may run but cannot free the log this transaction uses until it commits, and the next one carries the whole rebuild; do not run index maintenance or DBCC CHECKDB on this table at the same time.
--   To abort:    cancel the query (sqlcmd: Ctrl+C; SSMS: Cancel): the one transaction rolls back, which takes about as long as the work done so far; the script is safe to run again: every step checks first.
--   To recover:  the partition is either moved or untouched (one transaction); a post-check that failed after the commit says so (COMMITTED) and what to check before running the script again; a filegroup or file the forward script created stays (the next run reuses it; the rollback script removes it once empty); if the session died mid-transaction, wait until SQL Server has rolled it back (the table is usable again), then run the script again.
-- Generator:  tierwise (golden files) (migrations/1)
-- Generated:  2024-05-02T06:00:00Z
-- Plan:       sha256 bd5b979cffd0226984058abbfebee86ffd1cb4503cb8041b6848987832352372 (the forward plan; the rollback shows the same)
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
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'forward: partition 3 of [dbo].[Orders] in database [Sales] (all its aligned indexes): tier flash -> fc';
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
    @source_fg sysname = N'FG_ORDERS_2024', @target_fg sysname = N'FG_ORDERS_2024_fc',
    @n int = 3;
DECLARE @qtable nvarchar(300) = QUOTENAME(@schema) + N'.' + QUOTENAME(@table);
DECLARE @object_id int = OBJECT_ID(@qtable, N'U');
DECLARE @scheme_id int, @function_id int, @fanout int, @right bit, @current_fg sysname;
DECLARE @boundary_id int, @low_id int, @high_id int, @column sysname, @nullable bit;
SELECT @scheme_id = ps.data_space_id, @function_id = pf.function_id, @fanout = pf.fanout,
    @right = CAST(pf.boundary_value_on_right AS bit)
FROM sys.partition_schemes AS ps
JOIN sys.partition_functions AS pf ON pf.function_id = ps.function_id
WHERE ps.name = @scheme AND pf.name = @function;
SELECT @current_fg = fg.name
FROM sys.destination_data_spaces AS dds
JOIN sys.filegroups AS fg ON fg.data_space_id = dds.data_space_id
WHERE dds.partition_scheme_id = @scheme_id AND dds.destination_id = @n;
SET @low_id = CASE WHEN @n > 1 THEN @n - 1 END;
SET @high_id = CASE WHEN @n < @fanout THEN @n END;
SET @boundary_id = CASE WHEN @right = 1 THEN @low_id ELSE @high_id END;
SELECT @column = c.name, @nullable = c.is_nullable
FROM sys.index_columns AS ic
JOIN sys.columns AS c ON c.object_id = ic.object_id AND c.column_id = ic.column_id
WHERE ic.object_id = @object_id AND ic.index_id = 1 AND ic.partition_ordinal = 1;
IF @object_id IS NULL
BEGIN
    SET @msg = N'tierwise: pre-check failed: table [dbo].[Orders] does not exist; the advice is out of date. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF @scheme_id IS NULL
BEGIN
    SET @msg = N'tierwise: pre-check failed: partition scheme [ps_OrderDate] on function [pf_OrderDate] does not exist; the advice is out of date. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF @n > @fanout
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders] has no partition 3; the advice is out of date. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF @current_fg NOT IN (@source_fg, @target_fg)
BEGIN
    SET @msg = N'tierwise: pre-check failed: partition 3 of [dbo].[Orders] is on filegroup ' + QUOTENAME(@current_fg) + N', not on ' + QUOTENAME(@source_fg) + N' as planned; the advice is out of date. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF @current_fg = @target_fg
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'already done: partition 3 of [dbo].[Orders] is on [FG_ORDERS_2024_fc]; the steps below change nothing.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RETURN;
END;
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE object_id = @object_id AND index_id = 1 AND type = 1 AND data_space_id = @scheme_id)
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: it is a heap or its clustered index is not a rowstore index on [ps_OrderDate]; unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.indexes WHERE object_id = @object_id AND index_id > 0 AND (type NOT IN (1, 2) OR data_space_id <> @scheme_id OR has_filter = 1 OR is_disabled = 1 OR is_hypothetical = 1))
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: it has a columnstore, XML, spatial, filtered, disabled or non-aligned index; unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.columns WHERE object_id = @object_id AND (is_computed = 1 OR is_sparse = 1 OR is_column_set = 1 OR is_filestream = 1 OR is_rowguidcol = 1))
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: it has computed, sparse, FILESTREAM or ROWGUIDCOL columns (SELECT INTO does not copy these column properties to the staging table, and the switch requires them on both sides); unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.foreign_keys WHERE parent_object_id = @object_id OR referenced_object_id = @object_id)
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: it has or is referenced by foreign keys; unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.sql_expression_dependencies WHERE referenced_id = @object_id AND is_schema_bound_reference = 1)
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: schema-bound views or functions reference it; unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.indexes WHERE data_space_id = @scheme_id AND object_id <> @object_id) OR EXISTS (SELECT 1 FROM sys.partition_schemes WHERE function_id = @function_id AND data_space_id <> @scheme_id)
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: the scheme [ps_OrderDate] or function [pf_OrderDate] is shared with other tables, whose data a MERGE/SPLIT would move; unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF @boundary_id IS NULL
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: partition 3 is the first partition of a RANGE RIGHT function or the last of a RANGE LEFT one; re-mapping it would move a neighbouring partition''s data; unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF @column IS NULL
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: the partitioning column cannot be found on the clustered index; unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF COALESCE(OBJECTPROPERTY(@object_id, 'TableTemporalType'), 0) <> 0
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: it is a system-versioned temporal table or its history table, where SWITCH is restricted; unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.tables WHERE object_id = @object_id AND is_tracked_by_cdc = 1)
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: change data capture tracks it: the switch is refused (@allow_partition_switch = 0) or its rows are not captured; unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.change_tracking_tables WHERE object_id = @object_id)
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: change tracking is enabled on it, and SWITCH is refused on such tables; unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.tables WHERE object_id = @object_id AND (is_replicated = 1 OR is_merge_published = 1 OR is_sync_tran_subscribed = 1))
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: it is published or subscribed for replication, which does not carry ALTER PARTITION FUNCTION/SCHEME to subscribers; unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.fulltext_indexes WHERE object_id = @object_id)
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: it has a full-text index, which is not partitioned and would have to follow the switched rows; unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.columns AS c JOIN sys.types AS t ON t.user_type_id = c.system_type_id WHERE c.object_id = @object_id AND (c.max_length = -1 OR t.name IN (N'text', N'ntext', N'image')))
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: it has LOB columns (max types, xml, text, ntext, image), whose data SELECT INTO and a rebuild onto a filegroup leave on the default filegroup, so the switch would fail; unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.tables WHERE object_id = @object_id AND uses_ansi_nulls = 0)
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: it was created with ANSI_NULLS OFF; the staging table would not match it; unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.columns WHERE object_id = @object_id AND is_ansi_padded = 0 AND system_type_id IN (165, 167, 173, 175))
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: a char, varchar, binary or varbinary column was created with ANSI_PADDING OFF (sys.columns.is_ansi_padded = 0); the staging table''s columns would be padded and the switch would refuse them; unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.filegroups WHERE name IN (@source_fg, @target_fg) AND is_read_only = 1)
BEGIN
    SET @msg = N'tierwise: pre-check failed: [FG_ORDERS_2024] or [FG_ORDERS_2024_fc] is READ_ONLY; make it READ_WRITE first. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
GO
DECLARE @tw_say nvarchar(2048);
USE [Sales];
DECLARE @msg nvarchar(2048);
IF EXISTS (SELECT 1 FROM sys.database_files WHERE data_space_id = FILEGROUP_ID(N'FG_ORDERS_2024_fc'))
BEGIN
    SELECT TOP (1) @msg = N'tierwise: pre-check failed: filegroup ' + QUOTENAME(FILEGROUP_NAME(data_space_id)) + N' exists, but its file '
        + QUOTENAME(name) + N' is at ' + physical_name + N', not under ' + N'F:\fc\' + N'. Nothing was changed.'
    FROM sys.database_files
    WHERE data_space_id = FILEGROUP_ID(N'FG_ORDERS_2024_fc') AND LEFT(LOWER(physical_name), LEN(N'F:\fc\')) <> LOWER(N'F:\fc\');
    IF @msg IS NOT NULL
    BEGIN
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        RAISERROR(N'%s', 16, 1, @msg);
        SET NOEXEC ON;
        RETURN;
    END;
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'step 1: already done: filegroup [FG_ORDERS_2024_fc] exists on tier fc';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.databases WHERE name = N'Sales' AND replica_id IS NOT NULL)
BEGIN
    SET @msg = N'tierwise: pre-check failed: [Sales] is in an availability group; the file added on the primary is replayed on the secondaries, where the path must exist. Move it per replica by hand (docs/running-scripts.md). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.database_mirroring WHERE database_id = DB_ID(N'Sales') AND mirroring_guid IS NOT NULL)
BEGIN
    SET @msg = N'tierwise: pre-check failed: [Sales] is mirrored; the file added on the primary is replayed on the secondaries, where the path must exist. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF OBJECT_ID(N'msdb.dbo.log_shipping_primary_databases') IS NOT NULL
    AND EXISTS (SELECT 1 FROM msdb.dbo.log_shipping_primary_databases WHERE primary_database = N'Sales')
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'warning: [Sales] is a log shipping primary; restores on the secondary need the new paths (RESTORE ... WITH MOVE) after this change.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
END;
IF HAS_PERMS_BY_NAME(NULL, NULL, N'VIEW SERVER STATE') = 0
BEGIN
    SET @msg = N'tierwise: pre-check failed: this login lacks VIEW SERVER STATE, so the script cannot see a running BACKUP or DBCC of the database. Grant it or run as sysadmin. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
SELECT TOP (1) @msg = N'tierwise: pre-check failed: ' + r.command + N' (session ' + CAST(r.session_id AS nvarchar(10))
    + N') is running on [Sales]. ADD FILE, DBCC SHRINKFILE and REMOVE FILE cannot run during a database or log backup (each waits for the other, then one fails). Pause the backup jobs of [Sales] (log backups too) while this script runs, and run it again after the backup. Nothing was changed.'
FROM sys.dm_exec_requests AS r
WHERE UPPER(r.command) LIKE N'BACKUP%' AND (r.database_id = DB_ID(N'Sales') OR EXISTS (SELECT 1 FROM sys.dm_tran_locks AS l WHERE l.request_session_id = r.session_id AND l.resource_type = N'DATABASE' AND l.resource_database_id = DB_ID(N'Sales')));
IF @msg IS NOT NULL
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
SELECT TOP (1) @msg = N'tierwise: pre-check failed: ' + r.command + N' (session ' + CAST(r.session_id AS nvarchar(10))
    + N') is running on [Sales]: a DBCC CHECKDB or another shrink competes with this move for the same pages and locks. Run this script after it finished. Nothing was changed.'
FROM sys.dm_exec_requests AS r
WHERE UPPER(r.command) LIKE N'DBCC%' AND r.session_id <> @@SPID AND (r.database_id = DB_ID(N'Sales') OR EXISTS (SELECT 1 FROM sys.dm_tran_locks AS l WHERE l.request_session_id = r.session_id AND l.resource_type = N'DATABASE' AND l.resource_database_id = DB_ID(N'Sales')));
IF @msg IS NOT NULL
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
DECLARE @dir_is_directory bit;
IF CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) >= 14
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'directory check with sys.dm_os_file_exists';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    EXEC sys.sp_executesql N'SELECT @d = CAST(file_is_a_directory AS bit) FROM sys.dm_os_file_exists(@p);',
        N'@p nvarchar(4000), @d bit OUTPUT', @p = N'F:\fc', @d = @dir_is_directory OUTPUT;
END
ELSE
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'directory check with xp_fileexist (SQL Server before 2017)';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    DECLARE @dir_probe TABLE (file_exists int, is_directory int, parent_exists int);
    INSERT INTO @dir_probe EXEC master.dbo.xp_fileexist N'F:\fc';
    SELECT @dir_is_directory = CAST(MAX(is_directory) AS bit) FROM @dir_probe;
END;
IF COALESCE(@dir_is_directory, 0) = 0
BEGIN
    SET @msg = N'tierwise: pre-check failed: the target directory F:\fc\ does not exist, or the SQL Server service account cannot see it. Create it and grant the service account full control. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
DECLARE @free_mb bigint, @need_mb bigint;
SET @need_mb = CEILING((813) * 1.10);
SELECT TOP (1) @free_mb = vs.available_bytes / 1048576
FROM sys.master_files AS mf
JOIN sys.databases AS d ON d.database_id = mf.database_id AND d.state = 0
CROSS APPLY sys.dm_os_volume_stats(mf.database_id, mf.file_id) AS vs
WHERE LEFT(LOWER(N'F:\fc\'), LEN(vs.volume_mount_point)) = LOWER(vs.volume_mount_point)
ORDER BY LEN(vs.volume_mount_point) DESC;
IF @free_mb IS NULL AND CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) >= 15
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'free space from sys.dm_os_enumerate_fixed_drives';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    EXEC sys.sp_executesql N'SELECT @f = free_space_in_bytes / 1048576 FROM sys.dm_os_enumerate_fixed_drives WHERE UPPER(LEFT(fixed_drive_path, 1)) = UPPER(@d);',
        N'@d nchar(1), @f bigint OUTPUT', @d = N'F', @f = @free_mb OUTPUT;
END
ELSE IF @free_mb IS NULL
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'free space from xp_fixeddrives (SQL Server before 2019)';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    DECLARE @drives TABLE (drive nvarchar(5), mb_free bigint);
    INSERT INTO @drives EXEC master.dbo.xp_fixeddrives;
    SELECT @free_mb = mb_free FROM @drives WHERE UPPER(drive) = UPPER(N'F');
END;
IF @free_mb IS NULL
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'warning: cannot measure the free space under F:\fc\ (no database file on that volume yet); the new file of [FG_ORDERS_2024_fc] needs about ' + CAST(@need_mb AS nvarchar(20)) + N' MB there.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
END;
IF @free_mb < @need_mb
BEGIN
    SET @msg = N'tierwise: pre-check failed: the new file of [FG_ORDERS_2024_fc] needs ' + CAST(@need_mb AS nvarchar(20)) + N' MB under ' + N'F:\fc\' + N' (10 % headroom included), but only ' + CAST(@free_mb AS nvarchar(20)) + N' MB are free. Nothing was changed.';
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
SET XACT_ABORT ON;
SET LOCK_TIMEOUT 30000;
DECLARE @msg nvarchar(2048);
DECLARE @schema sysname = N'dbo', @table sysname = N'Orders',
    @scheme sysname = N'ps_OrderDate', @function sysname = N'pf_OrderDate',
    @source_fg sysname = N'FG_ORDERS_2024', @target_fg sysname = N'FG_ORDERS_2024_fc',
    @n int = 3;
DECLARE @qtable nvarchar(300) = QUOTENAME(@schema) + N'.' + QUOTENAME(@table);
DECLARE @object_id int = OBJECT_ID(@qtable, N'U');
DECLARE @scheme_id int, @function_id int, @fanout int, @right bit, @current_fg sysname;
DECLARE @boundary_id int, @low_id int, @high_id int, @column sysname, @nullable bit;
SELECT @scheme_id = ps.data_space_id, @function_id = pf.function_id, @fanout = pf.fanout,
    @right = CAST(pf.boundary_value_on_right AS bit)
FROM sys.partition_schemes AS ps
JOIN sys.partition_functions AS pf ON pf.function_id = ps.function_id
WHERE ps.name = @scheme AND pf.name = @function;
SELECT @current_fg = fg.name
FROM sys.destination_data_spaces AS dds
JOIN sys.filegroups AS fg ON fg.data_space_id = dds.data_space_id
WHERE dds.partition_scheme_id = @scheme_id AND dds.destination_id = @n;
SET @low_id = CASE WHEN @n > 1 THEN @n - 1 END;
SET @high_id = CASE WHEN @n < @fanout THEN @n END;
SET @boundary_id = CASE WHEN @right = 1 THEN @low_id ELSE @high_id END;
SELECT @column = c.name, @nullable = c.is_nullable
FROM sys.index_columns AS ic
JOIN sys.columns AS c ON c.object_id = ic.object_id AND c.column_id = ic.column_id
WHERE ic.object_id = @object_id AND ic.index_id = 1 AND ic.partition_ordinal = 1;
IF @object_id IS NULL
BEGIN
    SET @msg = N'tierwise: pre-check failed: table [dbo].[Orders] does not exist; the advice is out of date. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF @scheme_id IS NULL
BEGIN
    SET @msg = N'tierwise: pre-check failed: partition scheme [ps_OrderDate] on function [pf_OrderDate] does not exist; the advice is out of date. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF @n > @fanout
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders] has no partition 3; the advice is out of date. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF @current_fg NOT IN (@source_fg, @target_fg)
BEGIN
    SET @msg = N'tierwise: pre-check failed: partition 3 of [dbo].[Orders] is on filegroup ' + QUOTENAME(@current_fg) + N', not on ' + QUOTENAME(@source_fg) + N' as planned; the advice is out of date. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF @current_fg = @target_fg
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'step 2: already done: partition 3 is on [FG_ORDERS_2024_fc]';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RETURN;
END;
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE object_id = @object_id AND index_id = 1 AND type = 1 AND data_space_id = @scheme_id)
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: it is a heap or its clustered index is not a rowstore index on [ps_OrderDate]; unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.indexes WHERE object_id = @object_id AND index_id > 0 AND (type NOT IN (1, 2) OR data_space_id <> @scheme_id OR has_filter = 1 OR is_disabled = 1 OR is_hypothetical = 1))
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: it has a columnstore, XML, spatial, filtered, disabled or non-aligned index; unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.columns WHERE object_id = @object_id AND (is_computed = 1 OR is_sparse = 1 OR is_column_set = 1 OR is_filestream = 1 OR is_rowguidcol = 1))
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: it has computed, sparse, FILESTREAM or ROWGUIDCOL columns (SELECT INTO does not copy these column properties to the staging table, and the switch requires them on both sides); unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.foreign_keys WHERE parent_object_id = @object_id OR referenced_object_id = @object_id)
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: it has or is referenced by foreign keys; unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.sql_expression_dependencies WHERE referenced_id = @object_id AND is_schema_bound_reference = 1)
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: schema-bound views or functions reference it; unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.indexes WHERE data_space_id = @scheme_id AND object_id <> @object_id) OR EXISTS (SELECT 1 FROM sys.partition_schemes WHERE function_id = @function_id AND data_space_id <> @scheme_id)
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: the scheme [ps_OrderDate] or function [pf_OrderDate] is shared with other tables, whose data a MERGE/SPLIT would move; unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF @boundary_id IS NULL
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: partition 3 is the first partition of a RANGE RIGHT function or the last of a RANGE LEFT one; re-mapping it would move a neighbouring partition''s data; unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF @column IS NULL
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: the partitioning column cannot be found on the clustered index; unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF COALESCE(OBJECTPROPERTY(@object_id, 'TableTemporalType'), 0) <> 0
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: it is a system-versioned temporal table or its history table, where SWITCH is restricted; unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.tables WHERE object_id = @object_id AND is_tracked_by_cdc = 1)
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: change data capture tracks it: the switch is refused (@allow_partition_switch = 0) or its rows are not captured; unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.change_tracking_tables WHERE object_id = @object_id)
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: change tracking is enabled on it, and SWITCH is refused on such tables; unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.tables WHERE object_id = @object_id AND (is_replicated = 1 OR is_merge_published = 1 OR is_sync_tran_subscribed = 1))
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: it is published or subscribed for replication, which does not carry ALTER PARTITION FUNCTION/SCHEME to subscribers; unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.fulltext_indexes WHERE object_id = @object_id)
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: it has a full-text index, which is not partitioned and would have to follow the switched rows; unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.columns AS c JOIN sys.types AS t ON t.user_type_id = c.system_type_id WHERE c.object_id = @object_id AND (c.max_length = -1 OR t.name IN (N'text', N'ntext', N'image')))
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: it has LOB columns (max types, xml, text, ntext, image), whose data SELECT INTO and a rebuild onto a filegroup leave on the default filegroup, so the switch would fail; unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.tables WHERE object_id = @object_id AND uses_ansi_nulls = 0)
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: it was created with ANSI_NULLS OFF; the staging table would not match it; unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.columns WHERE object_id = @object_id AND is_ansi_padded = 0 AND system_type_id IN (165, 167, 173, 175))
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: a char, varchar, binary or varbinary column was created with ANSI_PADDING OFF (sys.columns.is_ansi_padded = 0); the staging table''s columns would be padded and the switch would refuse them; unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.filegroups WHERE name IN (@source_fg, @target_fg) AND is_read_only = 1)
BEGIN
    SET @msg = N'tierwise: pre-check failed: [FG_ORDERS_2024] or [FG_ORDERS_2024_fc] is READ_ONLY; make it READ_WRITE first. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF FILEGROUP_ID(@target_fg) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM sys.database_files WHERE data_space_id = FILEGROUP_ID(@target_fg))
BEGIN
    SET @msg = N'tierwise: pre-check failed: filegroup [FG_ORDERS_2024_fc] does not exist or has no files. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
DECLARE @need_mb bigint, @room_mb bigint, @fg_free_mb bigint;
SELECT @need_mb = COALESCE(SUM(au.total_pages), 0) / 128 FROM sys.partitions AS p
JOIN sys.allocation_units AS au ON au.container_id = CASE WHEN au.type = 2 THEN p.partition_id ELSE p.hobt_id END
WHERE p.object_id = @object_id AND p.partition_number = @n;
SELECT @fg_free_mb = SUM(CAST(df.size AS bigint) - COALESCE(FILEPROPERTY(df.name, 'SpaceUsed'), 0)) / 128,
    @room_mb = SUM(CAST(df.size AS bigint) - COALESCE(FILEPROPERTY(df.name, 'SpaceUsed'), 0)) / 128
    + MIN(vs.available_bytes) / 1048576
FROM sys.database_files AS df
CROSS APPLY sys.dm_os_volume_stats(DB_ID(), df.file_id) AS vs
WHERE df.data_space_id = FILEGROUP_ID(@target_fg);
IF @room_mb < @need_mb
BEGIN
    SET @msg = N'tierwise: pre-check failed: the partition needs ' + CAST(@need_mb AS nvarchar(20)) + N' MB but filegroup ' + QUOTENAME(@target_fg) + N' and its volume have ' + CAST(@room_mb AS nvarchar(20)) + N' MB. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
DECLARE @log_need_mb bigint, @log_move_mb bigint, @log_during_mb bigint, @log_run_s bigint,
    @log_free_mb bigint, @log_grow_mb bigint, @recovery nvarchar(60);
SET @log_move_mb = CEILING((SELECT COALESCE(SUM(au.used_pages), 0) / 128 FROM sys.partitions AS p JOIN sys.allocation_units AS au ON au.container_id = CASE WHEN au.type = 2 THEN p.partition_id ELSE p.hobt_id END WHERE p.object_id = @object_id AND p.partition_number = @n) * 1.10);
SELECT @recovery = recovery_model_desc FROM sys.databases WHERE database_id = DB_ID();
DECLARE @log_flushed0 bigint, @log_flushed1 bigint, @log_t0 datetime2(3), @log_rate_mb_s decimal(19, 3);
SELECT @log_flushed0 = cntr_value FROM sys.dm_os_performance_counters WHERE counter_name = N'Log Bytes Flushed/sec' AND object_name LIKE N'%:Databases%' AND instance_name = DB_NAME();
SET @log_t0 = SYSUTCDATETIME();
WAITFOR DELAY '00:00:05';
SELECT @log_flushed1 = cntr_value FROM sys.dm_os_performance_counters WHERE counter_name = N'Log Bytes Flushed/sec' AND object_name LIKE N'%:Databases%' AND instance_name = DB_NAME();
SET @log_rate_mb_s = (@log_flushed1 - @log_flushed0) / 1048576.0 / NULLIF(DATEDIFF(MILLISECOND, @log_t0, SYSUTCDATETIME()) / 1000.0, 0);
SET @log_run_s = CEILING(@log_move_mb / 100.0) + 300;
SET @log_during_mb = CEILING(@log_rate_mb_s * @log_run_s);
SET @log_need_mb = @log_move_mb + COALESCE(@log_during_mb, 0);
SELECT @log_free_mb = (total_log_size_in_bytes - used_log_space_in_bytes) / 1048576 FROM sys.dm_db_log_space_usage;
DECLARE @log_shared_volume nvarchar(256), @log_reserved_mb bigint;
SET @log_reserved_mb = CEILING((CASE WHEN @need_mb > @fg_free_mb THEN @need_mb - @fg_free_mb ELSE 0 END) * 1.10);
SELECT TOP (1) @log_shared_volume = vs.volume_id
FROM sys.database_files AS df CROSS APPLY sys.dm_os_volume_stats(DB_ID(), df.file_id) AS vs
WHERE df.data_space_id = FILEGROUP_ID(@target_fg) ORDER BY df.file_id;
-- per volume: what its log files may still grow by, at most the volume's free space (counted once)
SELECT @log_grow_mb = COALESCE(SUM(CASE WHEN v.free_mb - CASE WHEN v.volume_id = @log_shared_volume THEN @log_reserved_mb ELSE 0 END < 0 THEN 0
    WHEN v.grow_mb < v.free_mb - CASE WHEN v.volume_id = @log_shared_volume THEN @log_reserved_mb ELSE 0 END THEN v.grow_mb
    ELSE v.free_mb - CASE WHEN v.volume_id = @log_shared_volume THEN @log_reserved_mb ELSE 0 END END), 0)
FROM (SELECT vs.volume_id, MIN(vs.available_bytes) / 1048576 AS free_mb,
        SUM(CASE WHEN df.growth = 0 THEN 0 WHEN df.max_size = -1 THEN vs.available_bytes / 1048576
            ELSE (CAST(df.max_size AS bigint) - df.size) / 128 END) AS grow_mb
    FROM sys.database_files AS df CROSS APPLY sys.dm_os_volume_stats(DB_ID(), df.file_id) AS vs
    WHERE df.type = 1 GROUP BY vs.volume_id) AS v;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'log: moving partition 3 of [dbo].[Orders] writes about ' + CAST(@log_move_mb AS nvarchar(20)) + N' MB of log' + CASE WHEN @log_rate_mb_s IS NULL THEN N' (the database''s log generation rate could not be read: this check covers the move''s own log only)' ELSE N', and the database''s other work writes ' + CAST(@log_rate_mb_s AS nvarchar(30)) + N' MB/s now (measured over 5 s), about ' + CAST(@log_during_mb AS nvarchar(20)) + N' MB more over the estimated ' + CAST(@log_run_s / 60 + 1 AS nvarchar(20)) + N' min of the run' END + N'; recovery model ' + @recovery + N', ' + CAST(@log_free_mb AS nvarchar(20)) + N' MB free in the log, which can grow by ' + CAST(@log_grow_mb AS nvarchar(20)) + N' MB.';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
IF @recovery <> N'SIMPLE' AND @log_free_mb + @log_grow_mb < @log_need_mb
BEGIN
    SET @msg = N'tierwise: pre-check failed: moving partition 3 of [dbo].[Orders] is fully logged: about ' + CAST(@log_move_mb AS nvarchar(20)) + N' MB of log (10 % headroom included)' + CASE WHEN @log_during_mb IS NULL THEN N'' ELSE N' plus about ' + CAST(@log_during_mb AS nvarchar(20)) + N' MB the database''s other work writes during the run (' + CAST(@log_rate_mb_s AS nvarchar(30)) + N' MB/s now)' END + N', which stays in the log until the next log backup (' + @recovery + N' recovery, log backups paused for the move), but the log has ' + CAST(@log_free_mb AS nvarchar(20)) + N' MB free and can grow by only ' + CAST(@log_grow_mb AS nvarchar(20)) + N' MB (set aside: the room the moved data needs on a volume it shares with the log). Grow the log first, or run in a quieter hour. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
GO
DECLARE @tw_say nvarchar(2048);
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'plan: Moves: partition 3 of [dbo].[Orders] in database [Sales] (all its aligned indexes), range 2024-01-01 .. 2024-04-01';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'plan: Server: SQLPROD01';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'plan: Database: Sales';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'plan: From: tier flash: filegroup [FG_ORDERS_2024]';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'plan: To: tier fc: filegroup [FG_ORDERS_2024_fc] (created if missing, file F:\fc\Sales_FG_ORDERS_2024_fc.ndf)';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'plan: method: switch the partition out to a staging table, rebuild it onto the target filegroup, MERGE/NEXT USED/SPLIT the empty range onto the target, CHECK constraint, switch back - in ONE transaction (all or nothing); the exact row count is checked after the commit, when the table is no longer locked. Index definitions, the partitioning column and boundary values are read from the catalog at run time.';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'estimated duration: under a minute for 0.8 GB at ~100 MB/s (offline rebuild of the partition and each nonclustered index onto the target; copy speed varies), plus up to 5 min waiting for the lock.';
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
DECLARE @msg nvarchar(2048);
IF EXISTS (SELECT 1 FROM sys.database_files WHERE data_space_id = FILEGROUP_ID(N'FG_ORDERS_2024_fc'))
    RETURN;
IF HAS_PERMS_BY_NAME(NULL, NULL, N'VIEW SERVER STATE') = 0
BEGIN
    SET @msg = N'tierwise: pre-check failed: this login lacks VIEW SERVER STATE, so the script cannot see a running BACKUP or DBCC of the database. Grant it or run as sysadmin. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
SELECT TOP (1) @msg = N'tierwise: pre-check failed: ' + r.command + N' (session ' + CAST(r.session_id AS nvarchar(10))
    + N') is running on [Sales]. ADD FILE, DBCC SHRINKFILE and REMOVE FILE cannot run during a database or log backup (each waits for the other, then one fails). Pause the backup jobs of [Sales] (log backups too) while this script runs, and run it again after the backup. Nothing was changed.'
FROM sys.dm_exec_requests AS r
WHERE UPPER(r.command) LIKE N'BACKUP%' AND (r.database_id = DB_ID(N'Sales') OR EXISTS (SELECT 1 FROM sys.dm_tran_locks AS l WHERE l.request_session_id = r.session_id AND l.resource_type = N'DATABASE' AND l.resource_database_id = DB_ID(N'Sales')));
IF @msg IS NOT NULL
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
SELECT TOP (1) @msg = N'tierwise: pre-check failed: ' + r.command + N' (session ' + CAST(r.session_id AS nvarchar(10))
    + N') is running on [Sales]: a DBCC CHECKDB or another shrink competes with this move for the same pages and locks. Run this script after it finished. Nothing was changed.'
FROM sys.dm_exec_requests AS r
WHERE UPPER(r.command) LIKE N'DBCC%' AND r.session_id <> @@SPID AND (r.database_id = DB_ID(N'Sales') OR EXISTS (SELECT 1 FROM sys.dm_tran_locks AS l WHERE l.request_session_id = r.session_id AND l.resource_type = N'DATABASE' AND l.resource_database_id = DB_ID(N'Sales')));
IF @msg IS NOT NULL
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'step 1: creating filegroup [FG_ORDERS_2024_fc] with file F:\fc\Sales_FG_ORDERS_2024_fc.ndf';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
IF FILEGROUP_ID(N'FG_ORDERS_2024_fc') IS NULL
BEGIN
    ALTER DATABASE [Sales] ADD FILEGROUP [FG_ORDERS_2024_fc];
END;
GO
USE [Sales];
IF NOT EXISTS (SELECT 1 FROM sys.database_files WHERE data_space_id = FILEGROUP_ID(N'FG_ORDERS_2024_fc'))
BEGIN
    ALTER DATABASE [Sales] ADD FILE (NAME = N'FG_ORDERS_2024_fc_1', FILENAME = N'F:\fc\Sales_FG_ORDERS_2024_fc.ndf', SIZE = 813MB, FILEGROWTH = 1024MB) TO FILEGROUP [FG_ORDERS_2024_fc];
END;
GO
DECLARE @tw_say nvarchar(2048);
USE [Sales];
SET NOCOUNT ON;
SET XACT_ABORT ON;
SET LOCK_TIMEOUT 30000;
DECLARE @msg nvarchar(2048);
DECLARE @schema sysname = N'dbo', @table sysname = N'Orders',
    @scheme sysname = N'ps_OrderDate', @function sysname = N'pf_OrderDate',
    @source_fg sysname = N'FG_ORDERS_2024', @target_fg sysname = N'FG_ORDERS_2024_fc',
    @n int = 3;
DECLARE @qtable nvarchar(300) = QUOTENAME(@schema) + N'.' + QUOTENAME(@table);
DECLARE @object_id int = OBJECT_ID(@qtable, N'U');
DECLARE @scheme_id int, @function_id int, @fanout int, @right bit, @current_fg sysname;
DECLARE @boundary_id int, @low_id int, @high_id int, @column sysname, @nullable bit;
SELECT @scheme_id = ps.data_space_id, @function_id = pf.function_id, @fanout = pf.fanout,
    @right = CAST(pf.boundary_value_on_right AS bit)
FROM sys.partition_schemes AS ps
JOIN sys.partition_functions AS pf ON pf.function_id = ps.function_id
WHERE ps.name = @scheme AND pf.name = @function;
SELECT @current_fg = fg.name
FROM sys.destination_data_spaces AS dds
JOIN sys.filegroups AS fg ON fg.data_space_id = dds.data_space_id
WHERE dds.partition_scheme_id = @scheme_id AND dds.destination_id = @n;
SET @low_id = CASE WHEN @n > 1 THEN @n - 1 END;
SET @high_id = CASE WHEN @n < @fanout THEN @n END;
SET @boundary_id = CASE WHEN @right = 1 THEN @low_id ELSE @high_id END;
SELECT @column = c.name, @nullable = c.is_nullable
FROM sys.index_columns AS ic
JOIN sys.columns AS c ON c.object_id = ic.object_id AND c.column_id = ic.column_id
WHERE ic.object_id = @object_id AND ic.index_id = 1 AND ic.partition_ordinal = 1;
IF @object_id IS NULL
BEGIN
    SET @msg = N'tierwise: pre-check failed: table [dbo].[Orders] does not exist; the advice is out of date. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF @scheme_id IS NULL
BEGIN
    SET @msg = N'tierwise: pre-check failed: partition scheme [ps_OrderDate] on function [pf_OrderDate] does not exist; the advice is out of date. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF @n > @fanout
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders] has no partition 3; the advice is out of date. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF @current_fg NOT IN (@source_fg, @target_fg)
BEGIN
    SET @msg = N'tierwise: pre-check failed: partition 3 of [dbo].[Orders] is on filegroup ' + QUOTENAME(@current_fg) + N', not on ' + QUOTENAME(@source_fg) + N' as planned; the advice is out of date. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF @current_fg = @target_fg
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'step 2: already done: partition 3 is on [FG_ORDERS_2024_fc]';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RETURN;
END;
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE object_id = @object_id AND index_id = 1 AND type = 1 AND data_space_id = @scheme_id)
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: it is a heap or its clustered index is not a rowstore index on [ps_OrderDate]; unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.indexes WHERE object_id = @object_id AND index_id > 0 AND (type NOT IN (1, 2) OR data_space_id <> @scheme_id OR has_filter = 1 OR is_disabled = 1 OR is_hypothetical = 1))
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: it has a columnstore, XML, spatial, filtered, disabled or non-aligned index; unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.columns WHERE object_id = @object_id AND (is_computed = 1 OR is_sparse = 1 OR is_column_set = 1 OR is_filestream = 1 OR is_rowguidcol = 1))
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: it has computed, sparse, FILESTREAM or ROWGUIDCOL columns (SELECT INTO does not copy these column properties to the staging table, and the switch requires them on both sides); unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.foreign_keys WHERE parent_object_id = @object_id OR referenced_object_id = @object_id)
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: it has or is referenced by foreign keys; unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.sql_expression_dependencies WHERE referenced_id = @object_id AND is_schema_bound_reference = 1)
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: schema-bound views or functions reference it; unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.indexes WHERE data_space_id = @scheme_id AND object_id <> @object_id) OR EXISTS (SELECT 1 FROM sys.partition_schemes WHERE function_id = @function_id AND data_space_id <> @scheme_id)
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: the scheme [ps_OrderDate] or function [pf_OrderDate] is shared with other tables, whose data a MERGE/SPLIT would move; unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF @boundary_id IS NULL
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: partition 3 is the first partition of a RANGE RIGHT function or the last of a RANGE LEFT one; re-mapping it would move a neighbouring partition''s data; unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF @column IS NULL
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: the partitioning column cannot be found on the clustered index; unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF COALESCE(OBJECTPROPERTY(@object_id, 'TableTemporalType'), 0) <> 0
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: it is a system-versioned temporal table or its history table, where SWITCH is restricted; unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.tables WHERE object_id = @object_id AND is_tracked_by_cdc = 1)
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: change data capture tracks it: the switch is refused (@allow_partition_switch = 0) or its rows are not captured; unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.change_tracking_tables WHERE object_id = @object_id)
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: change tracking is enabled on it, and SWITCH is refused on such tables; unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.tables WHERE object_id = @object_id AND (is_replicated = 1 OR is_merge_published = 1 OR is_sync_tran_subscribed = 1))
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: it is published or subscribed for replication, which does not carry ALTER PARTITION FUNCTION/SCHEME to subscribers; unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.fulltext_indexes WHERE object_id = @object_id)
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: it has a full-text index, which is not partitioned and would have to follow the switched rows; unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.columns AS c JOIN sys.types AS t ON t.user_type_id = c.system_type_id WHERE c.object_id = @object_id AND (c.max_length = -1 OR t.name IN (N'text', N'ntext', N'image')))
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: it has LOB columns (max types, xml, text, ntext, image), whose data SELECT INTO and a rebuild onto a filegroup leave on the default filegroup, so the switch would fail; unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.tables WHERE object_id = @object_id AND uses_ansi_nulls = 0)
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: it was created with ANSI_NULLS OFF; the staging table would not match it; unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.columns WHERE object_id = @object_id AND is_ansi_padded = 0 AND system_type_id IN (165, 167, 173, 175))
BEGIN
    SET @msg = N'tierwise: pre-check failed: [dbo].[Orders]: a char, varchar, binary or varbinary column was created with ANSI_PADDING OFF (sys.columns.is_ansi_padded = 0); the staging table''s columns would be padded and the switch would refuse them; unsupported here: review (move this partition by hand). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.filegroups WHERE name IN (@source_fg, @target_fg) AND is_read_only = 1)
BEGIN
    SET @msg = N'tierwise: pre-check failed: [FG_ORDERS_2024] or [FG_ORDERS_2024_fc] is READ_ONLY; make it READ_WRITE first. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF FILEGROUP_ID(@target_fg) IS NULL OR NOT EXISTS (SELECT 1 FROM sys.database_files WHERE data_space_id = FILEGROUP_ID(@target_fg))
BEGIN
    SET @msg = N'tierwise: pre-check failed: filegroup [FG_ORDERS_2024_fc] does not exist or has no files. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
DECLARE @need_mb bigint, @room_mb bigint, @fg_free_mb bigint;
SELECT @need_mb = COALESCE(SUM(au.total_pages), 0) / 128 FROM sys.partitions AS p
JOIN sys.allocation_units AS au ON au.container_id = CASE WHEN au.type = 2 THEN p.partition_id ELSE p.hobt_id END
WHERE p.object_id = @object_id AND p.partition_number = @n;
SELECT @fg_free_mb = SUM(CAST(df.size AS bigint) - COALESCE(FILEPROPERTY(df.name, 'SpaceUsed'), 0)) / 128,
    @room_mb = SUM(CAST(df.size AS bigint) - COALESCE(FILEPROPERTY(df.name, 'SpaceUsed'), 0)) / 128
    + MIN(vs.available_bytes) / 1048576
FROM sys.database_files AS df
CROSS APPLY sys.dm_os_volume_stats(DB_ID(), df.file_id) AS vs
WHERE df.data_space_id = FILEGROUP_ID(@target_fg);
IF @room_mb < @need_mb
BEGIN
    SET @msg = N'tierwise: pre-check failed: the partition needs ' + CAST(@need_mb AS nvarchar(20)) + N' MB but filegroup ' + QUOTENAME(@target_fg) + N' and its volume have ' + CAST(@room_mb AS nvarchar(20)) + N' MB. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
DECLARE @log_need_mb bigint, @log_move_mb bigint, @log_during_mb bigint, @log_run_s bigint,
    @log_free_mb bigint, @log_grow_mb bigint, @recovery nvarchar(60);
SET @log_move_mb = CEILING((SELECT COALESCE(SUM(au.used_pages), 0) / 128 FROM sys.partitions AS p JOIN sys.allocation_units AS au ON au.container_id = CASE WHEN au.type = 2 THEN p.partition_id ELSE p.hobt_id END WHERE p.object_id = @object_id AND p.partition_number = @n) * 1.10);
SELECT @recovery = recovery_model_desc FROM sys.databases WHERE database_id = DB_ID();
DECLARE @log_flushed0 bigint, @log_flushed1 bigint, @log_t0 datetime2(3), @log_rate_mb_s decimal(19, 3);
SELECT @log_flushed0 = cntr_value FROM sys.dm_os_performance_counters WHERE counter_name = N'Log Bytes Flushed/sec' AND object_name LIKE N'%:Databases%' AND instance_name = DB_NAME();
SET @log_t0 = SYSUTCDATETIME();
WAITFOR DELAY '00:00:05';
SELECT @log_flushed1 = cntr_value FROM sys.dm_os_performance_counters WHERE counter_name = N'Log Bytes Flushed/sec' AND object_name LIKE N'%:Databases%' AND instance_name = DB_NAME();
SET @log_rate_mb_s = (@log_flushed1 - @log_flushed0) / 1048576.0 / NULLIF(DATEDIFF(MILLISECOND, @log_t0, SYSUTCDATETIME()) / 1000.0, 0);
SET @log_run_s = CEILING(@log_move_mb / 100.0) + 300;
SET @log_during_mb = CEILING(@log_rate_mb_s * @log_run_s);
SET @log_need_mb = @log_move_mb + COALESCE(@log_during_mb, 0);
SELECT @log_free_mb = (total_log_size_in_bytes - used_log_space_in_bytes) / 1048576 FROM sys.dm_db_log_space_usage;
DECLARE @log_shared_volume nvarchar(256), @log_reserved_mb bigint;
SET @log_reserved_mb = CEILING((CASE WHEN @need_mb > @fg_free_mb THEN @need_mb - @fg_free_mb ELSE 0 END) * 1.10);
SELECT TOP (1) @log_shared_volume = vs.volume_id
FROM sys.database_files AS df CROSS APPLY sys.dm_os_volume_stats(DB_ID(), df.file_id) AS vs
WHERE df.data_space_id = FILEGROUP_ID(@target_fg) ORDER BY df.file_id;
-- per volume: what its log files may still grow by, at most the volume's free space (counted once)
SELECT @log_grow_mb = COALESCE(SUM(CASE WHEN v.free_mb - CASE WHEN v.volume_id = @log_shared_volume THEN @log_reserved_mb ELSE 0 END < 0 THEN 0
    WHEN v.grow_mb < v.free_mb - CASE WHEN v.volume_id = @log_shared_volume THEN @log_reserved_mb ELSE 0 END THEN v.grow_mb
    ELSE v.free_mb - CASE WHEN v.volume_id = @log_shared_volume THEN @log_reserved_mb ELSE 0 END END), 0)
FROM (SELECT vs.volume_id, MIN(vs.available_bytes) / 1048576 AS free_mb,
        SUM(CASE WHEN df.growth = 0 THEN 0 WHEN df.max_size = -1 THEN vs.available_bytes / 1048576
            ELSE (CAST(df.max_size AS bigint) - df.size) / 128 END) AS grow_mb
    FROM sys.database_files AS df CROSS APPLY sys.dm_os_volume_stats(DB_ID(), df.file_id) AS vs
    WHERE df.type = 1 GROUP BY vs.volume_id) AS v;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'log: moving partition 3 of [dbo].[Orders] writes about ' + CAST(@log_move_mb AS nvarchar(20)) + N' MB of log' + CASE WHEN @log_rate_mb_s IS NULL THEN N' (the database''s log generation rate could not be read: this check covers the move''s own log only)' ELSE N', and the database''s other work writes ' + CAST(@log_rate_mb_s AS nvarchar(30)) + N' MB/s now (measured over 5 s), about ' + CAST(@log_during_mb AS nvarchar(20)) + N' MB more over the estimated ' + CAST(@log_run_s / 60 + 1 AS nvarchar(20)) + N' min of the run' END + N'; recovery model ' + @recovery + N', ' + CAST(@log_free_mb AS nvarchar(20)) + N' MB free in the log, which can grow by ' + CAST(@log_grow_mb AS nvarchar(20)) + N' MB.';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
IF @recovery <> N'SIMPLE' AND @log_free_mb + @log_grow_mb < @log_need_mb
BEGIN
    SET @msg = N'tierwise: pre-check failed: moving partition 3 of [dbo].[Orders] is fully logged: about ' + CAST(@log_move_mb AS nvarchar(20)) + N' MB of log (10 % headroom included)' + CASE WHEN @log_during_mb IS NULL THEN N'' ELSE N' plus about ' + CAST(@log_during_mb AS nvarchar(20)) + N' MB the database''s other work writes during the run (' + CAST(@log_rate_mb_s AS nvarchar(30)) + N' MB/s now)' END + N', which stays in the log until the next log backup (' + @recovery + N' recovery, log backups paused for the move), but the log has ' + CAST(@log_free_mb AS nvarchar(20)) + N' MB free and can grow by only ' + CAST(@log_grow_mb AS nvarchar(20)) + N' MB (set aside: the room the moved data needs on a volume it shares with the log). Grow the log first, or run in a quieter hour. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
DECLARE @type nvarchar(200), @style int, @sql nvarchar(max), @stage sysname, @qstage nvarchar(300);
DECLARE @boundary sql_variant, @low sql_variant, @high sql_variant, @low_text nvarchar(4000), @high_text nvarchar(4000);
DECLARE @check nvarchar(max), @rows_about bigint, @rows_moved bigint, @rows_in bigint, @rows_after bigint, @index_id int, @ddl nvarchar(max);
DECLARE @want nvarchar(60), @switch_option nvarchar(200);
DECLARE @ix TABLE (index_id int PRIMARY KEY, compression nvarchar(60) NOT NULL, create_sql nvarchar(max) NOT NULL,
    rebuild_sql nvarchar(max) NOT NULL, compress_sql nvarchar(max) NOT NULL);
-- SQL Server 2014+: the switch-out waits at low priority (blocks no one) for at most 5 min, then gives up;
-- 2012: no WAIT_AT_LOW_PRIORITY, so others queue behind the Sch-M request for at most 5 s
IF CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) >= 12
BEGIN
    SET @switch_option = N' WITH (WAIT_AT_LOW_PRIORITY (MAX_DURATION = 5 MINUTES, ABORT_AFTER_WAIT = SELF))';
    SET LOCK_TIMEOUT 360000;
END
ELSE
BEGIN
    SET @switch_option = N'';
    SET LOCK_TIMEOUT 5000;
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
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
SET @stage = N'tw_stage_' + CAST(@object_id AS nvarchar(12)) + N'_p' + CAST(@n AS nvarchar(10));
SET @qstage = QUOTENAME(@schema) + N'.' + QUOTENAME(@stage);
IF OBJECT_ID(@qstage, N'U') IS NOT NULL
BEGIN
    SET @msg = N'tierwise: pre-check failed: the staging table ' + @qstage + N' already exists; it is not one this script left (the move is one transaction): review and drop it. Nothing was changed.';
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
SELECT @boundary = value FROM sys.partition_range_values WHERE function_id = @function_id AND boundary_id = @boundary_id;
SELECT @low = value FROM sys.partition_range_values WHERE function_id = @function_id AND boundary_id = @low_id;
SELECT @high = value FROM sys.partition_range_values WHERE function_id = @function_id AND boundary_id = @high_id;
SET @sql = N'DECLARE @v ' + @type + N' = CONVERT(' + @type + N', @b); SET @t = CONVERT(nvarchar(4000), @v, ' + CAST(@style AS nvarchar(5)) + N');';
IF @low IS NOT NULL EXEC sys.sp_executesql @sql, N'@b sql_variant, @t nvarchar(4000) OUTPUT', @b = @low, @t = @low_text OUTPUT;
IF @high IS NOT NULL EXEC sys.sp_executesql @sql, N'@b sql_variant, @t nvarchar(4000) OUTPUT', @b = @high, @t = @high_text OUTPUT;
-- CHECK constraint proving the partition's range (NULLs live in partition 1)
SET @check = CASE WHEN @n > 1 THEN QUOTENAME(@column) + N' IS NOT NULL' ELSE N'1 = 1' END
    + COALESCE(N' AND ' + QUOTENAME(@column) + CASE WHEN @right = 1 THEN N' >= ' ELSE N' > ' END
        + N'CONVERT(' + @type + N', N''' + REPLACE(@low_text, N'''', N'''''') + N''', ' + CAST(@style AS nvarchar(5)) + N')', N'')
    + COALESCE(N' AND (' + QUOTENAME(@column) + CASE WHEN @right = 1 THEN N' < ' ELSE N' <= ' END
        + N'CONVERT(' + @type + N', N''' + REPLACE(@high_text, N'''', N'''''') + N''', ' + CAST(@style AS nvarchar(5)) + N')'
        + CASE WHEN @n = 1 THEN N' OR ' + QUOTENAME(@column) + N' IS NULL' ELSE N'' END + N')', N'');
-- the table's indexes, for the staging table: created on the partition's filegroup, rebuilt onto the target
-- and the statement that gives the empty, re-split partition n of the table back its compression
INSERT INTO @ix (index_id, compression, create_sql, rebuild_sql, compress_sql)
SELECT i.index_id, p.data_compression_desc,
    CASE WHEN i.is_primary_key = 1 OR i.is_unique_constraint = 1
        THEN N'ALTER TABLE ' + @qstage + N' ADD CONSTRAINT ' + QUOTENAME(@stage + N'_' + CAST(i.index_id AS nvarchar(10)))
            + CASE WHEN i.is_primary_key = 1 THEN N' PRIMARY KEY ' ELSE N' UNIQUE ' END + i.type_desc + N' (' + k.keys + N')'
        ELSE N'CREATE ' + CASE WHEN i.is_unique = 1 THEN N'UNIQUE ' ELSE N'' END + i.type_desc + N' INDEX ' + QUOTENAME(i.name)
            + N' ON ' + @qstage + N' (' + k.keys + N')' + COALESCE(N' INCLUDE (' + k.includes + N')', N'')
    END + N' WITH (DATA_COMPRESSION = ' + p.data_compression_desc
        + CASE WHEN i.ignore_dup_key = 1 THEN N', IGNORE_DUP_KEY = ON' ELSE N'' END + N') ON ' + QUOTENAME(@current_fg) + N';',
    N'CREATE ' + CASE WHEN i.is_unique = 1 THEN N'UNIQUE ' ELSE N'' END + i.type_desc + N' INDEX '
        + QUOTENAME(CASE WHEN i.is_primary_key = 1 OR i.is_unique_constraint = 1 THEN @stage + N'_' + CAST(i.index_id AS nvarchar(10)) ELSE i.name END)
        + N' ON ' + @qstage + N' (' + k.keys + N')' + COALESCE(N' INCLUDE (' + k.includes + N')', N'')
        + N' WITH (DROP_EXISTING = ON, DATA_COMPRESSION = ' + p.data_compression_desc
        + CASE WHEN i.ignore_dup_key = 1 THEN N', IGNORE_DUP_KEY = ON' ELSE N'' END + N') ON ' + QUOTENAME(@target_fg) + N';',
    CASE WHEN i.index_id = 1 THEN N'ALTER TABLE ' + @qtable ELSE N'ALTER INDEX ' + QUOTENAME(i.name) + N' ON ' + @qtable END
        + N' REBUILD PARTITION = ' + CAST(@n AS nvarchar(10)) + N' WITH (DATA_COMPRESSION = ' + p.data_compression_desc + N');'
FROM sys.indexes AS i
JOIN sys.partitions AS p ON p.object_id = i.object_id AND p.index_id = i.index_id AND p.partition_number = @n
CROSS APPLY (
    SELECT keys = STUFF((
            SELECT N', ' + QUOTENAME(c.name) + CASE WHEN ic.is_descending_key = 1 THEN N' DESC' ELSE N' ASC' END
            FROM sys.index_columns AS ic
            JOIN sys.columns AS c ON c.object_id = ic.object_id AND c.column_id = ic.column_id
            WHERE ic.object_id = i.object_id AND ic.index_id = i.index_id AND ic.key_ordinal > 0
            ORDER BY ic.key_ordinal
            FOR XML PATH(''), TYPE).value('.', 'nvarchar(max)'), 1, 2, N''),
        includes = STUFF((
            SELECT N', ' + QUOTENAME(c.name)
            FROM sys.index_columns AS ic
            JOIN sys.columns AS c ON c.object_id = ic.object_id AND c.column_id = ic.column_id
            WHERE ic.object_id = i.object_id AND ic.index_id = i.index_id AND ic.is_included_column = 1
            ORDER BY ic.index_column_id
            FOR XML PATH(''), TYPE).value('.', 'nvarchar(max)'), 1, 2, N'')
) AS k
WHERE i.object_id = @object_id AND i.index_id > 0;
SELECT @rows_about = SUM(rows) FROM sys.partitions WHERE object_id = @object_id AND index_id = 1 AND partition_number = @n;
SET @msg = N'tierwise: step 2: moving partition ' + CAST(@n AS nvarchar(10)) + N' of ' + @qtable + N' (about ' + CAST(@rows_about AS nvarchar(20))
    + N' rows) from ' + QUOTENAME(@current_fg) + N' to ' + QUOTENAME(@target_fg) + N' in one transaction; the table is locked from the switch-out until it commits';
RAISERROR(N'%s', 0, 1, @msg) WITH NOWAIT;
BEGIN TRY
    BEGIN TRANSACTION;
    -- the staging table is created under the table's own QUOTED_IDENTIFIER setting (SWITCH needs the
    -- same on both tables; a table records the setting it was created with): a SET in the dynamic
    -- batch lasts for that batch only
    SET @sql = CASE WHEN OBJECTPROPERTY(@object_id, 'IsQuotedIdentOn') = 0 THEN N'SET QUOTED_IDENTIFIER OFF; ' ELSE N'' END
        + N'SELECT TOP (0) * INTO ' + @qstage + N' FROM ' + @qtable + N';';
    EXEC sys.sp_executesql @sql;
    SET @index_id = 0;
    WHILE 1 = 1
    BEGIN
        SELECT TOP (1) @index_id = index_id, @ddl = create_sql FROM @ix WHERE index_id > @index_id ORDER BY index_id;
        IF @@ROWCOUNT = 0 BREAK;
        EXEC sys.sp_executesql @ddl;
    END;
    SET @sql = N'ALTER TABLE ' + @qtable + N' SWITCH PARTITION ' + CAST(@n AS nvarchar(10)) + N' TO ' + @qstage + @switch_option + N';';
    EXEC sys.sp_executesql @sql;
    -- no row count (a scan) while the table is locked (Sch-M blocks every reader): the progress line and the
    -- checks below read sys.partitions (metadata); the exact count runs after the commit
    SET @msg = N'tierwise: step 2: switched out partition ' + CAST(@n AS nvarchar(10)) + N' (about ' + CAST(@rows_about AS nvarchar(20))
        + N' rows); rebuilding it onto ' + QUOTENAME(@target_fg);
    RAISERROR(N'%s', 0, 1, @msg) WITH NOWAIT;
    SET @index_id = 0;
    WHILE 1 = 1
    BEGIN
        SELECT TOP (1) @index_id = index_id, @ddl = rebuild_sql FROM @ix WHERE index_id > @index_id ORDER BY index_id;
        IF @@ROWCOUNT = 0 BREAK;
        EXEC sys.sp_executesql @ddl;
    END;
    -- the rows the rebuild wrote (the index build counts them into the staging table's metadata)
    SELECT @rows_moved = SUM(rows) FROM sys.partitions WHERE object_id = OBJECT_ID(@qstage, N'U') AND index_id = 1;
    SET @sql = N'DECLARE @v ' + @type + N' = CONVERT(' + @type + N', @b); ALTER PARTITION FUNCTION ' + QUOTENAME(@function) + N'() MERGE RANGE (@v);';
    EXEC sys.sp_executesql @sql, N'@b sql_variant', @b = @boundary;
    SET @sql = N'ALTER PARTITION SCHEME ' + QUOTENAME(@scheme) + N' NEXT USED ' + QUOTENAME(@target_fg) + N';';
    EXEC sys.sp_executesql @sql;
    SET @sql = N'DECLARE @v ' + @type + N' = CONVERT(' + @type + N', @b); ALTER PARTITION FUNCTION ' + QUOTENAME(@function) + N'() SPLIT RANGE (@v);';
    EXEC sys.sp_executesql @sql, N'@b sql_variant', @b = @boundary;
    IF NOT EXISTS (SELECT 1 FROM sys.destination_data_spaces AS dds JOIN sys.filegroups AS fg ON fg.data_space_id = dds.data_space_id
                   WHERE dds.partition_scheme_id = @scheme_id AND dds.destination_id = @n AND fg.name = @target_fg)
        RAISERROR(N'%s', 16, 1, N'after MERGE/SPLIT the partition does not map to the target filegroup');
    -- MERGE/SPLIT gave the empty partition n its neighbour's compression: give the table's and each index's
    -- partition n back the compression it had (rebuilding an empty partition), so the switch-in matches
    SET @index_id = 0;
    WHILE 1 = 1
    BEGIN
        SELECT TOP (1) @index_id = index_id, @want = compression, @ddl = compress_sql FROM @ix WHERE index_id > @index_id ORDER BY index_id;
        IF @@ROWCOUNT = 0 BREAK;
        IF EXISTS (SELECT 1 FROM sys.partitions WHERE object_id = @object_id AND index_id = @index_id AND partition_number = @n
                   AND data_compression_desc <> @want)
            EXEC sys.sp_executesql @ddl;
    END;
    SET @sql = N'ALTER TABLE ' + @qstage + N' WITH CHECK ADD CONSTRAINT ' + QUOTENAME(@stage + N'_range') + N' CHECK (' + @check + N');';
    EXEC sys.sp_executesql @sql;
    SET @sql = N'ALTER TABLE ' + @qstage + N' SWITCH TO ' + @qtable + N' PARTITION ' + CAST(@n AS nvarchar(10)) + N';';
    EXEC sys.sp_executesql @sql;
    -- metadata-only checks while the lock is held: the switched-in rows are partition n's, with its compression
    SELECT @rows_in = SUM(rows) FROM sys.partitions WHERE object_id = @object_id AND index_id = 1 AND partition_number = @n;
    IF @rows_in IS NULL OR @rows_in <> @rows_moved
        RAISERROR(N'%s', 16, 1, N'after the switch-in partition n does not hold the rebuilt rows (sys.partitions)');
    IF EXISTS (SELECT 1 FROM @ix AS x JOIN sys.partitions AS p ON p.object_id = @object_id AND p.index_id = x.index_id
               AND p.partition_number = @n WHERE p.data_compression_desc <> x.compression)
        RAISERROR(N'%s', 16, 1, N'the partition''s data compression changed during the move');
    SET @sql = N'DROP TABLE ' + @qstage + N';';
    EXEC sys.sp_executesql @sql;
    COMMIT TRANSACTION;
END TRY
BEGIN CATCH
    IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION;
    SET @msg = N'tierwise: the partition move failed and was rolled back, nothing changed: ' + ERROR_MESSAGE();
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END CATCH;
-- after the commit the table is usable again: the exact count reads partition n like any query (shared
-- locks, no Sch-M), against the rows the rebuild wrote. A difference is reported, never rolled back: the
-- move is committed, and rows written by other sessions since the commit are one explanation.
SET LOCK_TIMEOUT 30000;
SET @msg = N'tierwise: step 2: committed: partition ' + CAST(@n AS nvarchar(10)) + N' of ' + @qtable + N' is on ' + QUOTENAME(@target_fg)
    + N' and the table is usable again; counting its rows (' + CAST(@rows_moved AS nvarchar(20)) + N' moved)';
RAISERROR(N'%s', 0, 1, @msg) WITH NOWAIT;
SET @sql = N'SELECT @c = COUNT_BIG(*) FROM ' + @qtable + N' WHERE $PARTITION.' + QUOTENAME(@function) + N'(' + QUOTENAME(@column) + N') = @p;';
SET @check = N'SELECT COUNT_BIG(*) FROM ' + @qtable + N' WHERE $PARTITION.' + QUOTENAME(@function) + N'(' + QUOTENAME(@column) + N') = '
    + CAST(@n AS nvarchar(10)) + N';';
BEGIN TRY
    EXEC sys.sp_executesql @sql, N'@c bigint OUTPUT, @p int', @c = @rows_after OUTPUT, @p = @n;
END TRY
BEGIN CATCH
    SET @msg = N'tierwise: post-check failed: the move of partition ' + CAST(@n AS nvarchar(10)) + N' of ' + @qtable + N' to '
        + QUOTENAME(@target_fg) + N' is COMMITTED, but its row count could not be read (' + ERROR_MESSAGE() + N'). Run ' + @check
        + N' when the table is quiet: it must return ' + CAST(@rows_moved AS nvarchar(20)) + N' plus or minus the rows written since. Then run this script again (the move says already done).';
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END CATCH;
IF @rows_after <> @rows_moved
BEGIN
    SET @msg = N'tierwise: post-check failed: the move of partition ' + CAST(@n AS nvarchar(10)) + N' of ' + @qtable + N' to '
        + QUOTENAME(@target_fg) + N' is COMMITTED (nothing was rolled back), but an exact count finds ' + CAST(@rows_after AS nvarchar(20))
        + N' rows where the rebuild wrote ' + CAST(@rows_moved AS nvarchar(20)) + N'. If the application wrote to this range since the commit, '
        + N'that explains it: run ' + @check + N' again when it is quiet. If it still differs, do not run the rollback script: run DBCC CHECKTABLE ('
        + N'N''' + REPLACE(@qtable, N'''', N'''''') + N''') WITH NO_INFOMSGS, compare the rows with the last backup, and escalate. Later steps did not run; run this script again once resolved.';
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
SET @msg = N'tierwise: step 2: verified: ' + CAST(@rows_after AS nvarchar(20)) + N' rows in partition ' + CAST(@n AS nvarchar(10)) + N' of ' + @qtable;
RAISERROR(N'%s', 0, 1, @msg) WITH NOWAIT;
GO
DECLARE @tw_say nvarchar(2048);
USE [Sales];
DECLARE @msg nvarchar(2048);
DECLARE @schema sysname = N'dbo', @table sysname = N'Orders',
    @scheme sysname = N'ps_OrderDate', @function sysname = N'pf_OrderDate',
    @source_fg sysname = N'FG_ORDERS_2024', @target_fg sysname = N'FG_ORDERS_2024_fc',
    @n int = 3;
DECLARE @qtable nvarchar(300) = QUOTENAME(@schema) + N'.' + QUOTENAME(@table);
DECLARE @object_id int = OBJECT_ID(@qtable, N'U');
DECLARE @scheme_id int, @function_id int, @fanout int, @right bit, @current_fg sysname;
DECLARE @boundary_id int, @low_id int, @high_id int, @column sysname, @nullable bit;
SELECT @scheme_id = ps.data_space_id, @function_id = pf.function_id, @fanout = pf.fanout,
    @right = CAST(pf.boundary_value_on_right AS bit)
FROM sys.partition_schemes AS ps
JOIN sys.partition_functions AS pf ON pf.function_id = ps.function_id
WHERE ps.name = @scheme AND pf.name = @function;
SELECT @current_fg = fg.name
FROM sys.destination_data_spaces AS dds
JOIN sys.filegroups AS fg ON fg.data_space_id = dds.data_space_id
WHERE dds.partition_scheme_id = @scheme_id AND dds.destination_id = @n;
SET @low_id = CASE WHEN @n > 1 THEN @n - 1 END;
SET @high_id = CASE WHEN @n < @fanout THEN @n END;
SET @boundary_id = CASE WHEN @right = 1 THEN @low_id ELSE @high_id END;
SELECT @column = c.name, @nullable = c.is_nullable
FROM sys.index_columns AS ic
JOIN sys.columns AS c ON c.object_id = ic.object_id AND c.column_id = ic.column_id
WHERE ic.object_id = @object_id AND ic.index_id = 1 AND ic.partition_ordinal = 1;
IF @current_fg IS NULL OR @current_fg <> @target_fg
BEGIN
    SET @msg = N'tierwise: post-check failed: partition 3 of [dbo].[Orders] is not on [FG_ORDERS_2024_fc].';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.partitions AS p JOIN sys.allocation_units AS au ON au.container_id = CASE WHEN au.type = 2 THEN p.partition_id ELSE p.hobt_id END WHERE p.object_id = @object_id AND p.partition_number = @n AND au.data_space_id <> FILEGROUP_ID(@target_fg))
BEGIN
    SET @msg = N'tierwise: post-check failed: some pages of partition 3 of [dbo].[Orders] are outside [FG_ORDERS_2024_fc].';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'post-check passed: partition 3 of [dbo].[Orders] is on [FG_ORDERS_2024_fc] (tier fc).';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
GO
DECLARE @tw_say nvarchar(2048);
DECLARE @tw_finished bit;
SET @tw_finished = 1;  -- not executed when a check stopped the script (NOEXEC)
SET NOEXEC OFF;
IF @tw_finished = 1
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'finished: partition 3 of [dbo].[Orders] is on tier fc.';
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
