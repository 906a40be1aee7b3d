-- ================================================================================================
-- tierwise T-SQL migration script: FORWARD
-- ================================================================================================
-- Moves:      filegroup [FG_ORDERS_2024] of database [Sales] (1 file(s))
-- Server:     SQLPROD01
-- Database:   Sales
-- From:       tier flash: E:\data\
-- To:         tier fc: F:\fc\
-- Object:     filegroup FG_ORDERS_2024 (key Sales/filegroup/FG_ORDERS_2024)
-- Why:        random_read (TW703)
--             - TW703 random but only 120 reads/s (flash from 180/s)
--             - 8.0 KB average read, 120 reads/s, 12.0 ms average read latency, 8 writes/s, 1 % read-miss, heat 4,615.6 I/O per GB-hour (0.22x the database average)
-- Predicted:  I/O wait 1,465.2 ms/s now -> 736.7 ms/s on tier fc
-- Size:       100.0 GB
-- Method:
--   online: for each file, ADD FILE on the target to the same filegroup (same growth and maximum size
--   as the old file), DBCC SHRINKFILE (EMPTYFILE) moves its pages to the filegroup's other files, then
--   REMOVE FILE. The database stays online, but NOT without blocking: see Operations.
--   Files:
--     [Orders, 2024 "hot"]: E:\data\Sales_Orders_2024.ndf -> F:\fc\Sales_Orders_2024.ndf (new logical name [Orders, 2024 "hot"_fc])
-- Limits and notes:
--   - PAUSE the backup jobs of this database (log backups especially) while it runs: ADD FILE, EMPTYFILE and REMOVE FILE cannot run during a database or log backup (each waits for the other, then one fails). Every step checks first and stops while a BACKUP or a DBCC (CHECKDB) of the database runs.
--   - EMPTYFILE is fully logged (about the used size of the file) and fragments indexes; in FULL recovery the log keeps all of it until the next log backup: the script checks the log has room first.
--   - With several old files some pages move more than once (proportional fill).
--   - Refused while the filegroup is READ_ONLY, while database snapshots exist, and before SQL Server 2025 when the filegroup holds columnstore data.
--   - The new files get new logical names (the rollback restores the original names, paths, growth and maximum size).
--   - Permissions: sysadmin covers all. Without it: ALTER on the database (ADD / MODIFY / REMOVE FILE), db_owner (DBCC SHRINKFILE), VIEW SERVER STATE (the checks for a running BACKUP or DBCC, free space, instant file initialization: the script stops without it), SELECT on msdb.dbo.backupset and backupmediafamily (the backup check); before SQL Server 2017 / 2019 the directory and free-space probes use xp_fileexist / xp_fixeddrives (undocumented): run as sysadmin there.
-- Operations:
--   Duration:    about 9 min at ~200 MB/s for 100.0 GB of files, up to 34 min at ~50 MB/s on a busy server (EMPTYFILE speed varies; only used pages move), plus zeroing the new files when instant file initialization is off (the script says which).
--   Log volume:  up to about 100.0 GB (the used part of the files; EMPTYFILE is fully logged). In FULL recovery it stays in the log until the next log backup, with the log the database's other work writes meanwhile (log backups are paused): the script measures both (the used pages; the database's log rate now times the run's estimated length) and stops first when the log cannot hold them.
--   Blocking:    moving a table's IAM pages takes a schema-modification (Sch-M) lock on it: it waits for running queries on that table and new queries queue behind it. SQL Server 2022+: WAIT_AT_LOW_PRIORITY (ABORT_AFTER_WAIT = SELF), the shrink waits behind the queries instead and gives up after 1 minute (error 49516; run again). ADD FILE and REMOVE FILE are short.
--   Backups:     PAUSE this database's backup jobs, log backups especially, for the whole run: ADD FILE, EMPTYFILE and REMOVE FILE cannot run during a database or log backup (each waits for the other, then one fails). Every step checks first and stops while a BACKUP runs. Take a log backup right after the run.
--   To abort:    cancel the query (sqlcmd: Ctrl+C; SSMS: Cancel). EMPTYFILE stops at a page and keeps the pages moved so far, and leaves the file usable; the script is safe to run again: every step checks first.
--   To recover:  run this script again to finish, or run the rollback script: before moving pages back it re-enables a file that a completed EMPTYFILE left closed to new pages (MODIFY FILE SIZE = current + 1 MB).
-- Generator:  tierwise (golden files) (migrations/1)
-- Generated:  2024-05-02T06:00:00Z
-- Plan:       sha256 242d5e3971f645e680fd57772782b6c1ee7d58ab41672671ea2b03009941d44d (the forward plan; the rollback shows the same)
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
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'forward: filegroup [FG_ORDERS_2024] of database [Sales] (1 file(s)): tier flash -> fc';
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
IF DATABASEPROPERTYEX(N'Sales', 'Updateability') <> N'READ_WRITE'
BEGIN
    SET @msg = N'tierwise: pre-check failed: database [Sales] is READ_ONLY. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
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
SELECT TOP (1) @msg = N'tierwise: pre-check failed: database snapshot ' + QUOTENAME(s.name)
    + N' of [Sales] exists; files cannot be removed from a database that has snapshots, and every moved page would be copied into them. Drop the snapshots first. Nothing was changed.'
FROM sys.databases AS s WHERE s.source_database_id = DB_ID(N'Sales');
IF @msg IS NOT NULL
BEGIN
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
IF OBJECT_ID(N'tempdb..#tw_files') IS NOT NULL DROP TABLE #tw_files;
-- the plan's files; DATABASE_DEFAULT: compared with this database's catalog, whatever tempdb's collation
CREATE TABLE #tw_files (step int NOT NULL, from_name sysname COLLATE DATABASE_DEFAULT NOT NULL,
    from_path nvarchar(260) COLLATE DATABASE_DEFAULT NOT NULL, to_name sysname COLLATE DATABASE_DEFAULT NOT NULL,
    to_path nvarchar(260) COLLATE DATABASE_DEFAULT NOT NULL, size_mb bigint NOT NULL);
INSERT INTO #tw_files (step, from_name, from_path, to_name, to_path, size_mb) VALUES
    (1, N'Orders, 2024 "hot"', N'E:\data\Sales_Orders_2024.ndf', N'Orders, 2024 "hot"_fc', N'F:\fc\Sales_Orders_2024.ndf', 102400);
IF FILEGROUP_ID(N'FG_ORDERS_2024') IS NULL
BEGIN
    SET @msg = N'tierwise: pre-check failed: filegroup [FG_ORDERS_2024] of [Sales] does not exist; the advice is out of date. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
-- every planned file is where the plan says (old place or, after an earlier run, new place)
SELECT TOP (1) @msg = N'tierwise: pre-check failed: file ' + QUOTENAME(df.name) + N' is at ' + df.physical_name
    + N' in filegroup ' + COALESCE(QUOTENAME(FILEGROUP_NAME(df.data_space_id)), N'(log)') + N', not where the plan has it; the advice is out of date. Nothing was changed.'
FROM sys.database_files AS df
JOIN #tw_files AS p ON df.name = p.from_name OR df.name = p.to_name
WHERE df.data_space_id <> FILEGROUP_ID(N'FG_ORDERS_2024')
    OR (df.name = p.from_name AND NOT (LOWER(df.physical_name) = LOWER(p.from_path)))
    OR (df.name = p.to_name AND NOT (LOWER(df.physical_name) = LOWER(p.to_path)));
IF @msg IS NOT NULL
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
SELECT TOP (1) @msg = N'tierwise: pre-check failed: file ' + QUOTENAME(p.from_name) + N' is not in the database; the advice is out of date. Nothing was changed.'
FROM #tw_files AS p
WHERE NOT EXISTS (SELECT 1 FROM sys.database_files AS df WHERE df.name IN (p.from_name, p.to_name));
IF @msg IS NOT NULL
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
SELECT TOP (1) @msg = N'tierwise: pre-check failed: filegroup ' + QUOTENAME(FILEGROUP_NAME(df.data_space_id)) + N' has file '
    + QUOTENAME(df.name) + N' that the plan does not know; the advice is out of date. Nothing was changed.'
FROM sys.database_files AS df
WHERE df.data_space_id = FILEGROUP_ID(N'FG_ORDERS_2024')
    AND NOT EXISTS (SELECT 1 FROM #tw_files AS p WHERE df.name IN (p.from_name, p.to_name));
IF @msg IS NOT NULL
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
SELECT TOP (1) @msg = N'tierwise: pre-check failed: ' + mf.physical_name + N' is already used by file '
    + QUOTENAME(mf.name) + N' of database ' + QUOTENAME(DB_NAME(mf.database_id)) + N'. Nothing was changed.'
FROM sys.master_files AS mf
JOIN #tw_files AS p ON LOWER(mf.physical_name COLLATE DATABASE_DEFAULT) = LOWER(p.to_path)
WHERE NOT (mf.database_id = DB_ID(N'Sales') AND mf.name COLLATE DATABASE_DEFAULT = p.to_name);
IF @msg IS NOT NULL
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF NOT EXISTS (SELECT 1 FROM #tw_files AS p JOIN sys.database_files AS df ON df.name = p.from_name)
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'already done: every file of [FG_ORDERS_2024] of [Sales] is on tier fc; the steps below change nothing.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.filegroups WHERE name = N'FG_ORDERS_2024' AND is_read_only = 1)
BEGIN
    SET @msg = N'tierwise: pre-check failed: filegroup [FG_ORDERS_2024] of [Sales] is READ_ONLY (tierwise''s ILM marks cold filegroups read-only). ADD FILE and EMPTYFILE must write to it, and making it READ_WRITE needs exclusive access to the database. In a maintenance window make it READ_WRITE (the read-only rollback script), run this script, then mark it READ_ONLY again. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) < 17
BEGIN
    SELECT TOP (1) @msg = N'tierwise: pre-check failed: columnstore index ' + QUOTENAME(i.name) + N' on '
        + QUOTENAME(OBJECT_SCHEMA_NAME(i.object_id)) + N'.' + QUOTENAME(OBJECT_NAME(i.object_id))
        + N' has data in filegroup [FG_ORDERS_2024]; EMPTYFILE cannot move columnstore pages before SQL Server 2025. Move the table (rebuild it on another filegroup) or move this filegroup offline. Nothing was changed.'
    FROM sys.indexes AS i
    JOIN sys.partitions AS p ON p.object_id = i.object_id AND p.index_id = i.index_id
    JOIN sys.allocation_units AS au ON au.container_id = p.partition_id
    WHERE i.type IN (5, 6) AND au.data_space_id = FILEGROUP_ID(N'FG_ORDERS_2024');
    IF @msg IS NOT NULL
    BEGIN
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        RAISERROR(N'%s', 16, 1, @msg);
        SET NOEXEC ON;
        RETURN;
    END;
END;
DECLARE @log_need_mb bigint, @log_move_mb bigint, @log_during_mb bigint, @log_run_s bigint,
    @log_free_mb bigint, @log_grow_mb bigint, @recovery nvarchar(60);
SET @log_move_mb = CEILING((SELECT COALESCE(SUM(CAST(FILEPROPERTY(df.name, 'SpaceUsed') AS bigint)), 0) / 128 FROM #tw_files AS p JOIN sys.database_files AS df ON df.name = p.from_name) * 1.10);
SELECT @recovery = recovery_model_desc FROM sys.databases WHERE database_id = DB_ID();
DECLARE @log_flushed0 bigint, @log_flushed1 bigint, @log_t0 datetime2(3), @log_rate_mb_s decimal(19, 3);
SELECT @log_flushed0 = cntr_value FROM sys.dm_os_performance_counters WHERE counter_name = N'Log Bytes Flushed/sec' AND object_name LIKE N'%:Databases%' AND instance_name = DB_NAME();
SET @log_t0 = SYSUTCDATETIME();
WAITFOR DELAY '00:00:05';
SELECT @log_flushed1 = cntr_value FROM sys.dm_os_performance_counters WHERE counter_name = N'Log Bytes Flushed/sec' AND object_name LIKE N'%:Databases%' AND instance_name = DB_NAME();
SET @log_rate_mb_s = (@log_flushed1 - @log_flushed0) / 1048576.0 / NULLIF(DATEDIFF(MILLISECOND, @log_t0, SYSUTCDATETIME()) / 1000.0, 0);
SET @log_run_s = CEILING(@log_move_mb / 50.0);
SET @log_during_mb = CEILING(@log_rate_mb_s * @log_run_s);
SET @log_need_mb = @log_move_mb + COALESCE(@log_during_mb, 0);
SELECT @log_free_mb = (total_log_size_in_bytes - used_log_space_in_bytes) / 1048576 FROM sys.dm_db_log_space_usage;
DECLARE @log_shared_volume nvarchar(256), @log_reserved_mb bigint;
SET @log_reserved_mb = CEILING((SELECT COALESCE(SUM(p.size_mb), 0) FROM #tw_files AS p WHERE NOT EXISTS (SELECT 1 FROM sys.database_files AS df WHERE df.name = p.to_name)) * 1.10);
SELECT TOP (1) @log_shared_volume = vs.volume_id
FROM sys.master_files AS mf
JOIN sys.databases AS d ON d.database_id = mf.database_id AND d.state = 0
CROSS APPLY sys.dm_os_volume_stats(mf.database_id, mf.file_id) AS vs
WHERE LEFT(LOWER(N'F:\fc\'), LEN(vs.volume_mount_point)) = LOWER(vs.volume_mount_point)
ORDER BY LEN(vs.volume_mount_point) DESC;
-- per volume: what its log files may still grow by, at most the volume's free space (counted once)
SELECT @log_grow_mb = COALESCE(SUM(CASE WHEN v.free_mb - CASE WHEN v.volume_id = @log_shared_volume THEN @log_reserved_mb ELSE 0 END < 0 THEN 0
    WHEN v.grow_mb < v.free_mb - CASE WHEN v.volume_id = @log_shared_volume THEN @log_reserved_mb ELSE 0 END THEN v.grow_mb
    ELSE v.free_mb - CASE WHEN v.volume_id = @log_shared_volume THEN @log_reserved_mb ELSE 0 END END), 0)
FROM (SELECT vs.volume_id, MIN(vs.available_bytes) / 1048576 AS free_mb,
        SUM(CASE WHEN df.growth = 0 THEN 0 WHEN df.max_size = -1 THEN vs.available_bytes / 1048576
            ELSE (CAST(df.max_size AS bigint) - df.size) / 128 END) AS grow_mb
    FROM sys.database_files AS df CROSS APPLY sys.dm_os_volume_stats(DB_ID(), df.file_id) AS vs
    WHERE df.type = 1 GROUP BY vs.volume_id) AS v;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'log: emptying the files of [FG_ORDERS_2024] of [Sales] writes about ' + CAST(@log_move_mb AS nvarchar(20)) + N' MB of log' + CASE WHEN @log_rate_mb_s IS NULL THEN N' (the database''s log generation rate could not be read: this check covers the move''s own log only)' ELSE N', and the database''s other work writes ' + CAST(@log_rate_mb_s AS nvarchar(30)) + N' MB/s now (measured over 5 s), about ' + CAST(@log_during_mb AS nvarchar(20)) + N' MB more over the estimated ' + CAST(@log_run_s / 60 + 1 AS nvarchar(20)) + N' min of the run' END + N'; recovery model ' + @recovery + N', ' + CAST(@log_free_mb AS nvarchar(20)) + N' MB free in the log, which can grow by ' + CAST(@log_grow_mb AS nvarchar(20)) + N' MB.';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
IF @recovery <> N'SIMPLE' AND @log_free_mb + @log_grow_mb < @log_need_mb
BEGIN
    SET @msg = N'tierwise: pre-check failed: emptying the files of [FG_ORDERS_2024] of [Sales] is fully logged: about ' + CAST(@log_move_mb AS nvarchar(20)) + N' MB of log (10 % headroom included)' + CASE WHEN @log_during_mb IS NULL THEN N'' ELSE N' plus about ' + CAST(@log_during_mb AS nvarchar(20)) + N' MB the database''s other work writes during the run (' + CAST(@log_rate_mb_s AS nvarchar(30)) + N' MB/s now)' END + N', which stays in the log until the next log backup (' + @recovery + N' recovery, log backups paused for the move), but the log has ' + CAST(@log_free_mb AS nvarchar(20)) + N' MB free and can grow by only ' + CAST(@log_grow_mb AS nvarchar(20)) + N' MB (set aside: the room the moved data needs on a volume it shares with the log). Grow the log first, or run in a quieter hour. Nothing was changed.';
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
IF NOT EXISTS (SELECT 1 FROM #tw_files AS p WHERE NOT EXISTS (SELECT 1 FROM sys.database_files AS df WHERE df.name = p.to_name))
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'every new file exists: no directory or free-space check needed';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
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
SET @need_mb = CEILING((SELECT COALESCE(SUM(p.size_mb), 0) FROM #tw_files AS p WHERE NOT EXISTS (SELECT 1 FROM sys.database_files AS df WHERE df.name = p.to_name)) * 1.10);
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
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'warning: cannot measure the free space under F:\fc\ (no database file on that volume yet); the new files of [FG_ORDERS_2024] of [Sales] needs about ' + CAST(@need_mb AS nvarchar(20)) + N' MB there.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
END;
IF @free_mb < @need_mb
BEGIN
    SET @msg = N'tierwise: pre-check failed: the new files of [FG_ORDERS_2024] of [Sales] needs ' + CAST(@need_mb AS nvarchar(20)) + N' MB under ' + N'F:\fc\' + N' (10 % headroom included), but only ' + CAST(@free_mb AS nvarchar(20)) + N' MB are free. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
DECLARE @ifi nvarchar(1);
IF COL_LENGTH(N'sys.dm_server_services', N'instant_file_initialization_enabled') IS NOT NULL
    EXEC sys.sp_executesql N'SELECT TOP (1) @i = instant_file_initialization_enabled FROM sys.dm_server_services WHERE servicename LIKE N''SQL Server (%'';', N'@i nvarchar(1) OUTPUT', @i = @ifi OUTPUT;
IF @ifi = N'Y'
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'instant file initialization is on: new data files are not zeroed first.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
END
ELSE
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'warning: instant file initialization is ' + CASE WHEN @ifi = N'N' THEN N'off' ELSE N'unknown' END + N': ADD FILE first writes zeros over ' + CAST(((SELECT COALESCE(SUM(p.size_mb), 0) FROM #tw_files AS p WHERE NOT EXISTS (SELECT 1 FROM sys.database_files AS df WHERE df.name = p.to_name))) AS nvarchar(20)) + N' MB, about ' + CAST(((SELECT COALESCE(SUM(p.size_mb), 0) FROM #tw_files AS p WHERE NOT EXISTS (SELECT 1 FROM sys.database_files AS df WHERE df.name = p.to_name))) / 200 / 60 + 1 AS nvarchar(20)) + N' min at ~200 MB/s. Grant the service account Perform volume maintenance tasks to avoid it.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
END;
GO
DECLARE @tw_say nvarchar(2048);
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'plan: Moves: filegroup [FG_ORDERS_2024] of database [Sales] (1 file(s))';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'plan: Server: SQLPROD01';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'plan: Database: Sales';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'plan: From: tier flash: E:\data\';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'plan: To: tier fc: F:\fc\';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'plan: method: online: for each file, ADD FILE on the target to the same filegroup (same growth and maximum size as the old file), DBCC SHRINKFILE (EMPTYFILE) moves its pages to the filegroup''s other files, then REMOVE FILE. The database stays online, but NOT without blocking: see Operations.';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'plan: file [Orders, 2024 "hot"]: E:\data\Sales_Orders_2024.ndf -> F:\fc\Sales_Orders_2024.ndf (new logical name [Orders, 2024 "hot"_fc])';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'estimated duration: about 9 min at ~200 MB/s for 100.0 GB of files, up to 34 min at ~50 MB/s on a busy server (EMPTYFILE speed varies; only used pages move), plus zeroing the new files when instant file initialization is off (the script says which).';
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
DECLARE @tw_say nvarchar(2048), @tw_t0 datetime2(3), @tw_err nvarchar(2048);
USE [Sales];
DECLARE @msg nvarchar(2048), @growth nvarchar(40), @maxsize nvarchar(40), @sql nvarchar(max);
IF NOT EXISTS (SELECT 1 FROM sys.database_files WHERE name = N'Orders, 2024 "hot"')
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'step 1/3 done: already done: file [Orders, 2024 "hot"_fc] exists at F:\fc\Sales_Orders_2024.ndf';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RETURN;
END;
SELECT TOP (1) @msg = N'tierwise: pre-check failed: ' + r.command + N' (session ' + CAST(r.session_id AS nvarchar(10))
    + N') is running on [Sales]. ADD FILE, DBCC SHRINKFILE and REMOVE FILE cannot run during a database or log backup (each waits for the other, then one fails). Pause the backup jobs of [Sales] (log backups too) while this script runs, and run it again after the backup. The steps before this one are kept; run the script again afterwards.'
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
    + N') is running on [Sales]: a DBCC CHECKDB or another shrink competes with this move for the same pages and locks. Run this script after it finished. The steps before this one are kept; run the script again afterwards.'
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
BEGIN TRY
    SET @tw_t0 = SYSUTCDATETIME();
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'step 1/3 start: adding file [Orders, 2024 "hot"_fc] at F:\fc\Sales_Orders_2024.ndf to filegroup [FG_ORDERS_2024]';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    IF NOT EXISTS (SELECT 1 FROM sys.database_files WHERE name = N'Orders, 2024 "hot"_fc')
        ALTER DATABASE [Sales] ADD FILE (NAME = N'Orders, 2024 "hot"_fc', FILENAME = N'F:\fc\Sales_Orders_2024.ndf', SIZE = 102400MB, FILEGROWTH = 1024MB) TO FILEGROUP [FG_ORDERS_2024];
    -- the old file's growth and maximum size (never below the new file's size)
    SELECT @growth = CASE WHEN o.growth = 0 THEN N'0' WHEN o.is_percent_growth = 1 THEN CAST(o.growth AS nvarchar(10)) + N'%'
            ELSE CAST(CAST(o.growth AS bigint) * 8 AS nvarchar(20)) + N'KB' END,
        @maxsize = CASE WHEN o.max_size = -1 THEN N'UNLIMITED'
            WHEN o.max_size < t.size THEN CAST(CAST(t.size AS bigint) * 8 AS nvarchar(20)) + N'KB'
            ELSE CAST(CAST(o.max_size AS bigint) * 8 AS nvarchar(20)) + N'KB' END
    FROM sys.database_files AS o JOIN sys.database_files AS t ON t.name = N'Orders, 2024 "hot"_fc'
    WHERE o.name = N'Orders, 2024 "hot"';
    SET @sql = N'ALTER DATABASE [Sales] MODIFY FILE (NAME = N''Orders, 2024 "hot"_fc'', FILEGROWTH = ' + @growth + N');';
    EXEC sys.sp_executesql @sql;
    SET @sql = N'ALTER DATABASE [Sales] MODIFY FILE (NAME = N''Orders, 2024 "hot"_fc'', MAXSIZE = ' + @maxsize + N');';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'growth ' + @growth + N', maximum size ' + @maxsize + N' (as the old file)';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    EXEC sys.sp_executesql @sql;
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'step 1/3 done: adding file [Orders, 2024 "hot"_fc] at F:\fc\Sales_Orders_2024.ndf to filegroup [FG_ORDERS_2024] (' + CAST(DATEDIFF(SECOND, @tw_t0, SYSUTCDATETIME()) AS nvarchar(20)) + N' s)';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
END TRY
BEGIN CATCH
    SET @tw_err = N'step 1/3 error: adding file [Orders, 2024 "hot"_fc] at F:\fc\Sales_Orders_2024.ndf to filegroup [FG_ORDERS_2024]: error ' + CAST(ERROR_NUMBER() AS nvarchar(10)) + N': ' + ERROR_MESSAGE() + N' The steps before this one are kept; run the script again afterwards.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + @tw_err;
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    SET @tw_err = N'tierwise: ' + @tw_err;
    RAISERROR(N'%s', 16, 1, @tw_err);
    SET NOEXEC ON;
    RETURN;
END CATCH;
GO
DECLARE @tw_say nvarchar(2048), @tw_t0 datetime2(3), @tw_err nvarchar(2048);
USE [Sales];
DECLARE @msg nvarchar(2048), @sql nvarchar(max);
IF NOT EXISTS (SELECT 1 FROM sys.database_files WHERE name = N'Orders, 2024 "hot"')
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'step 2/3 done: already done: file [Orders, 2024 "hot"] is no longer in the database';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RETURN;
END;
SELECT TOP (1) @msg = N'tierwise: pre-check failed: ' + r.command + N' (session ' + CAST(r.session_id AS nvarchar(10))
    + N') is running on [Sales]. ADD FILE, DBCC SHRINKFILE and REMOVE FILE cannot run during a database or log backup (each waits for the other, then one fails). Pause the backup jobs of [Sales] (log backups too) while this script runs, and run it again after the backup. The steps before this one are kept; run the script again afterwards.'
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
    + N') is running on [Sales]: a DBCC CHECKDB or another shrink competes with this move for the same pages and locks. Run this script after it finished. The steps before this one are kept; run the script again afterwards.'
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
BEGIN TRY
    SET @tw_t0 = SYSUTCDATETIME();
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'step 2/3 start: emptying file [Orders, 2024 "hot"] into the other files of [FG_ORDERS_2024] (progress: sys.dm_exec_requests.percent_complete)';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    -- a file emptied by a completed EMPTYFILE takes no new pages until its size changes
    IF EXISTS (SELECT 1 FROM sys.database_files WHERE name = N'Orders, 2024 "hot"_fc' AND (max_size = -1 OR max_size >= size + 128))
    BEGIN
        SELECT @sql = N'ALTER DATABASE [Sales] MODIFY FILE (NAME = N''Orders, 2024 "hot"_fc'', SIZE = ' + CAST(CEILING(size / 128.0) + 1 AS nvarchar(20)) + N'MB);'
        FROM sys.database_files WHERE name = N'Orders, 2024 "hot"_fc';
        EXEC sys.sp_executesql @sql;
    END;
    IF CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) >= 16
        EXEC sys.sp_executesql N'DBCC SHRINKFILE (N''Orders, 2024 "hot"'', EMPTYFILE) WITH WAIT_AT_LOW_PRIORITY (ABORT_AFTER_WAIT = SELF), NO_INFOMSGS;';
    ELSE
        DBCC SHRINKFILE (N'Orders, 2024 "hot"', EMPTYFILE) WITH NO_INFOMSGS;
    -- the shrink may have given way to other sessions without an error: is the file emptied?
    IF EXISTS (SELECT 1 FROM sys.database_files AS df WHERE df.name = N'Orders, 2024 "hot"' AND ((SELECT COALESCE(SUM(su.user_object_reserved_page_count + su.internal_object_reserved_page_count + su.version_store_reserved_page_count), 0) FROM sys.dm_db_file_space_usage AS su WHERE su.file_id = df.file_id) > 0 OR FILEPROPERTY(df.name, 'SpaceUsed') > 8 * (CEILING(df.size / 8088.0) + CEILING(df.size / 511232.0) - 1)))
        RAISERROR(N'%s', 16, 1, N'file [Orders, 2024 "hot"] not fully emptied yet: pages of tables or indexes are still in it (the shrink gave way to other sessions): run the script again');
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'step 2/3 done: emptying file [Orders, 2024 "hot"] into the other files of [FG_ORDERS_2024] (progress: sys.dm_exec_requests.percent_complete) (' + CAST(DATEDIFF(SECOND, @tw_t0, SYSUTCDATETIME()) AS nvarchar(20)) + N' s)';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
END TRY
BEGIN CATCH
    SET @tw_err = N'step 2/3 error: emptying file [Orders, 2024 "hot"] into the other files of [FG_ORDERS_2024] (progress: sys.dm_exec_requests.percent_complete): error ' + CAST(ERROR_NUMBER() AS nvarchar(10)) + N': ' + ERROR_MESSAGE() + N' The steps before this one are kept; run the script again afterwards.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + @tw_err;
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    SET @tw_err = N'tierwise: ' + @tw_err;
    RAISERROR(N'%s', 16, 1, @tw_err);
    SET NOEXEC ON;
    RETURN;
END CATCH;
GO
DECLARE @tw_say nvarchar(2048), @tw_t0 datetime2(3), @tw_err nvarchar(2048);
USE [Sales];
DECLARE @msg nvarchar(2048);
IF NOT EXISTS (SELECT 1 FROM sys.database_files WHERE name = N'Orders, 2024 "hot"')
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'step 3/3 done: already done: file [Orders, 2024 "hot"] is no longer in the database';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RETURN;
END;
SELECT TOP (1) @msg = N'tierwise: pre-check failed: ' + r.command + N' (session ' + CAST(r.session_id AS nvarchar(10))
    + N') is running on [Sales]. ADD FILE, DBCC SHRINKFILE and REMOVE FILE cannot run during a database or log backup (each waits for the other, then one fails). Pause the backup jobs of [Sales] (log backups too) while this script runs, and run it again after the backup. The steps before this one are kept; run the script again afterwards.'
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
    + N') is running on [Sales]: a DBCC CHECKDB or another shrink competes with this move for the same pages and locks. Run this script after it finished. The steps before this one are kept; run the script again afterwards.'
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
IF EXISTS (SELECT 1 FROM sys.database_files AS df WHERE df.name = N'Orders, 2024 "hot"' AND ((SELECT COALESCE(SUM(su.user_object_reserved_page_count + su.internal_object_reserved_page_count + su.version_store_reserved_page_count), 0) FROM sys.dm_db_file_space_usage AS su WHERE su.file_id = df.file_id) > 0 OR FILEPROPERTY(df.name, 'SpaceUsed') > 8 * (CEILING(df.size / 8088.0) + CEILING(df.size / 511232.0) - 1)))
BEGIN
    SET @msg = N'tierwise: pre-check failed: file [Orders, 2024 "hot"] of [Sales] is not fully emptied: pages of tables or indexes are still in it (sys.dm_db_file_space_usage, or more used extents than its allocation pages), so REMOVE FILE would fail with error 5042 (not empty): the EMPTYFILE before this step did not finish (cancelled, or it gave way at low priority, error 49516). Run the script again: it empties the file first. The steps before this one are kept; run the script again afterwards.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
BEGIN TRY
    SET @tw_t0 = SYSUTCDATETIME();
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'step 3/3 start: removing the empty file [Orders, 2024 "hot"] (E:\data\Sales_Orders_2024.ndf)';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    ALTER DATABASE [Sales] REMOVE FILE [Orders, 2024 "hot"];
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'step 3/3 done: removing the empty file [Orders, 2024 "hot"] (E:\data\Sales_Orders_2024.ndf) (' + CAST(DATEDIFF(SECOND, @tw_t0, SYSUTCDATETIME()) AS nvarchar(20)) + N' s)';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
END TRY
BEGIN CATCH
    SET @tw_err = N'step 3/3 error: removing the empty file [Orders, 2024 "hot"] (E:\data\Sales_Orders_2024.ndf): error ' + CAST(ERROR_NUMBER() AS nvarchar(10)) + N': ' + ERROR_MESSAGE() + N' If that is error 5042 (not empty): pages reached the file after the check above; run the script again (EMPTYFILE runs first). No log backup is needed before REMOVE FILE.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + @tw_err;
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    SET @tw_err = N'tierwise: ' + @tw_err;
    RAISERROR(N'%s', 16, 1, @tw_err);
    SET NOEXEC ON;
    RETURN;
END CATCH;
GO
DECLARE @tw_say nvarchar(2048);
USE [Sales];
DECLARE @msg nvarchar(2048);
SELECT TOP (1) @msg = N'tierwise: post-check failed: file ' + QUOTENAME(df.name) + N' of filegroup '
    + N'[FG_ORDERS_2024]' + N' is at ' + df.physical_name + N', which is not a planned new file.'
FROM sys.database_files AS df
WHERE df.data_space_id = FILEGROUP_ID(N'FG_ORDERS_2024')
    AND NOT EXISTS (SELECT 1 FROM #tw_files AS p WHERE p.to_name = df.name AND LOWER(df.physical_name) = LOWER(p.to_path));
IF @msg IS NOT NULL
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
SELECT TOP (1) @msg = N'tierwise: post-check failed: the planned file ' + QUOTENAME(p.to_name) + N' is missing.'
FROM #tw_files AS p WHERE NOT EXISTS (SELECT 1 FROM sys.database_files AS df WHERE df.name = p.to_name);
IF @msg IS NOT NULL
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF @msg IS NULL
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'post-check passed: every file of [FG_ORDERS_2024] of [Sales] is in F:\fc\ (tier fc).';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
END;
IF EXISTS (SELECT 1 FROM sys.databases WHERE database_id = DB_ID() AND recovery_model_desc <> N'SIMPLE')
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'next step: resume the log backup jobs of [Sales] and take a log backup now (BACKUP LOG [Sales] TO <your backup destination>, or start the log backup job): emptying the old files of [FG_ORDERS_2024] of [Sales] is fully logged and stays in the log until then. This script never takes a backup itself.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
END;
GO
DECLARE @tw_say nvarchar(2048);
DECLARE @tw_finished bit;
SET @tw_finished = 1;  -- not executed when a check stopped the script (NOEXEC)
SET NOEXEC OFF;
IF @tw_finished = 1
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'finished: filegroup [FG_ORDERS_2024] of database [Sales] (1 file(s)) is on tier fc.';
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
