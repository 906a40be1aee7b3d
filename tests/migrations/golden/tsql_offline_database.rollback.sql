-- ================================================================================================
-- tierwise T-SQL migration script: ROLLBACK
-- ================================================================================================
-- Moves:      the offline files [Sales_log], [Sales] of database [Sales]
-- Server:     SQLPROD01
-- Database:   Sales
-- From:       tier fc: F:\fc\
-- To:         tier flash: L:\log\, E:\data\
-- Undoes:     the forward move of Sales/file/2 + Sales/filegroup/PRIMARY (tier flash -> fc)
-- Object:     offline files Sales_log, PRIMARY (key Sales/file/2 + Sales/filegroup/PRIMARY)
-- Why:        log_write+random_read (TW202+TW701)
--             - Sales/file/2: TW202 transaction log: sequential writes that array cache absorbs (0.5 ms per write); flash only above 3,000 writes/s and 5.0 ms
--             - Sales/file/2: n/a average read, 0 reads/s, n/a average read latency, 485 writes/s, heat 174,549.1 I/O per GB-hour (8.29x the database average)
--             - Sales/filegroup/PRIMARY: TW701 small random reads that miss cache at a high rate: flash candidate (would gain about 5.0 ms per read)
--             - Sales/filegroup/PRIMARY: 8.0 KB average read, 278 reads/s, 6.0 ms average read latency, 44 writes/s, heat 23,221.9 I/O per GB-hour (1.10x the database average)
--             - Sales/filegroup/PRIMARY: (test fixture: recommended_tier changed from flash to fc to exercise the offline move of a primary filegroup)
-- Predicted:  I/O wait 2,001.2 ms/s now -> 2,728.5 ms/s on tier fc
-- Size:       60.0 GB
-- Method:
--   offline, in two runs of this same script:
--     run 1: pre-checks, SET OFFLINE WITH ROLLBACK IMMEDIATE, records a run marker in msdb, prints
--            what to copy where, stops.
--     MANUAL STEP: copy (do not move) the files and their ACLs, then run the script again.
--     run 2: accepts the copies only under run 1's marker of this same direction (database offline
--            since, files where the marker recorded them), MODIFY FILE (catalog), SET ONLINE and clears
--            the marker, post-check.
--   Files:
--     [Sales_log]: F:\fc\Sales_log.ldf -> L:\log\Sales_log.ldf
--     [Sales]: F:\fc\Sales.mdf -> E:\data\Sales.mdf
-- Limits and notes:
--   - DOWNTIME: the database is offline from run 1 until run 2 brings it online.
--   - Only the primary data file and the primary log file can never be removed (error 5020), and EMPTYFILE cannot empty the primary data file (error 2555), so these are copied; a secondary log file can be removed once inactive, but this plan moves it whole.
--   - Not for availability-group or mirrored databases, nor while database snapshots exist (error 5094).
--   - The SQL Server service account needs full control of the copies: copy the ACLs with the files (the MANUAL STEP prints how); delete the originals only after the post-check passed.
--   - Run marker: table msdb.dbo.tierwise_offline_run (created if absent; the script runs as sysadmin); run 2 accepts copies only while it holds run 1's marker.
--   - Permissions: sysadmin (the run marker is a table the script creates in msdb). The statements need ALTER on the database (SET OFFLINE / ONLINE, MODIFY FILE), VIEW SERVER STATE (the checks) and SELECT on msdb.dbo.backupset and backupmediafamily (the backup check).
--   - one offline period for every offline file of the database (Microsoft Learn, "Move user databases": take the database offline once, move all its files, bring it online once)
-- Operations:
--   Duration:    [Sales] is DOWN from run 1 to the end of run 2: about 6 min to copy 60.0 GB at ~200 MB/s (copy speed varies with the storage), plus a minute for the checks and the recovery at SET ONLINE; each run itself takes seconds. After SET ONLINE run 2 reads every page once (DBCC CHECKDB WITH PHYSICAL_ONLY) while the database is already online again.
--   Log volume:  Next to none: SET OFFLINE, MODIFY FILE and SET ONLINE change the catalog in master; the copy is a file copy. Open transactions are rolled back at SET OFFLINE from log already written.
--   Blocking:    SET OFFLINE WITH ROLLBACK IMMEDIATE disconnects every session of [Sales] and rolls back its open transactions (a long one takes as long to roll back); nobody can use it until run 2 ends.
--   Backups:     Backup, CHECKDB and index jobs of [Sales] fail while it is offline: pause them for the window. Run 1 stops while a BACKUP or DBCC runs on it (ROLLBACK IMMEDIATE would kill it). The backup chain is unaffected (same files, same LSNs).
--   To abort:    Before run 1's step 1 nothing has changed: cancel. After it the database is offline: do not leave it so; finish the copy and run this script again, or run the forward script (it brings it online on the untouched original files). Every step checks first, so both are safe to repeat.
--   To recover:  The original files are never changed. If run 2 cannot bring the database online (permissions on a copy, a bad copy: errors 5120/5125/5173), fix the copies and run this script again. The forward script refuses once this run 2 has pointed a file at its copy (its run 2 needs a marker of its own direction); to go back then, and only while the database has stayed offline since run 1, by hand: ALTER DATABASE [Sales] MODIFY FILE (NAME = N'Sales_log', FILENAME = N'F:\fc\Sales_log.ldf'); ALTER DATABASE [Sales] MODIFY FILE (NAME = N'Sales', FILENAME = N'F:\fc\Sales.mdf'); ALTER DATABASE [Sales] SET ONLINE; then DELETE FROM msdb.dbo.tierwise_offline_run WHERE database_name = N'Sales'.
-- Generator:  tierwise (golden files) (migrations/1)
-- Generated:  2024-05-02T06:00:00Z
-- Plan:       sha256 b77bd1c8cbab3e6c4b7bc9d040c53adecd58cd63b8718c041ae37938aef73b55 (the forward plan; the rollback shows the same)
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
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'rollback: the offline files [Sales_log], [Sales] of database [Sales]: tier fc -> flash (offline)';
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
IF EXISTS (SELECT 1 FROM sys.databases WHERE name = N'Sales' AND replica_id IS NOT NULL)
BEGIN
    SET @msg = N'tierwise: pre-check failed: [Sales] is in an availability group; a database in one cannot be taken offline. Move it per replica by hand (docs/running-scripts.md). Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.database_mirroring WHERE database_id = DB_ID(N'Sales') AND mirroring_guid IS NOT NULL)
BEGIN
    SET @msg = N'tierwise: pre-check failed: [Sales] is mirrored; a database in one cannot be taken offline. Nothing was changed.';
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
-- every planned file is where the plan says: old place, or new place after an earlier run
IF NOT (EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID(N'Sales') AND name = N'Sales_log' AND LOWER(physical_name) = LOWER(N'F:\fc\Sales_log.ldf')) OR EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID(N'Sales') AND name = N'Sales_log' AND LOWER(physical_name) = LOWER(N'L:\log\Sales_log.ldf')))
BEGIN
    SET @msg = N'tierwise: pre-check failed: file [Sales_log] of [Sales] is neither at F:\fc\Sales_log.ldf nor at L:\log\Sales_log.ldf; the advice is out of date. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF NOT (EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID(N'Sales') AND name = N'Sales' AND LOWER(physical_name) = LOWER(N'F:\fc\Sales.mdf')) OR EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID(N'Sales') AND name = N'Sales' AND LOWER(physical_name) = LOWER(N'E:\data\Sales.mdf')))
BEGIN
    SET @msg = N'tierwise: pre-check failed: file [Sales] of [Sales] is neither at F:\fc\Sales.mdf nor at E:\data\Sales.mdf; the advice is out of date. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF (SELECT state_desc FROM sys.databases WHERE name = N'Sales') NOT IN (N'ONLINE', N'OFFLINE', N'RECOVERY_PENDING')
BEGIN
    SET @msg = N'tierwise: pre-check failed: database [Sales] is ' + (SELECT state_desc FROM sys.databases WHERE name = N'Sales') + N'; review it by hand. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF (SELECT state_desc FROM sys.databases WHERE name = N'Sales') = N'ONLINE' AND EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID(N'Sales') AND name = N'Sales_log' AND LOWER(physical_name) = LOWER(N'L:\log\Sales_log.ldf')) AND EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID(N'Sales') AND name = N'Sales' AND LOWER(physical_name) = LOWER(N'E:\data\Sales.mdf'))
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'already done: [Sales] is online from L:\log\ and E:\data\; the steps below change nothing.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
END;
GO
DECLARE @tw_say nvarchar(2048);
USE [master];
DECLARE @msg nvarchar(2048);
IF NOT ((SELECT state_desc FROM sys.databases WHERE name = N'Sales') = N'ONLINE' AND (EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID(N'Sales') AND name = N'Sales_log' AND LOWER(physical_name) = LOWER(N'F:\fc\Sales_log.ldf')) OR EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID(N'Sales') AND name = N'Sales' AND LOWER(physical_name) = LOWER(N'F:\fc\Sales.mdf'))))
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'no run-1 checks: the database is offline, or online from the new files already';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RETURN;
END;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'run 1: checking snapshots, running backups, backups, the target directory, stale copies, free space';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
IF EXISTS (SELECT 1 FROM sys.databases WHERE source_database_id = DB_ID(N'Sales'))
BEGIN
    SET @msg = N'tierwise: pre-check failed: [Sales] has database snapshots (sys.databases.source_database_id); a database with snapshots cannot be taken offline (error 5094). Drop them (DROP DATABASE <snapshot>) or move later. Nothing was changed.';
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
IF EXISTS (SELECT 1 FROM sys.dm_exec_requests AS r WHERE (r.command LIKE N'BACKUP%' OR r.command LIKE N'DBCC%' OR r.command LIKE N'RESTORE%') AND r.session_id <> @@SPID AND (r.database_id = DB_ID(N'Sales') OR EXISTS (SELECT 1 FROM sys.dm_tran_locks AS l WHERE l.request_session_id = r.session_id AND l.resource_type = N'DATABASE' AND l.resource_database_id = DB_ID(N'Sales'))))
BEGIN
    SET @msg = N'tierwise: pre-check failed: a BACKUP, RESTORE or DBCC (e.g. CHECKDB) is running on [Sales]; SET OFFLINE WITH ROLLBACK IMMEDIATE would kill it (or fail with error 5094). Let it finish and pause the backup and maintenance jobs of this database for the window, then run again. Nothing was changed.';
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
DECLARE @fe_probe TABLE (file_exists int, is_directory int, parent_exists int), @file_exists bit;
IF EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID(N'Sales') AND name = N'Sales_log' AND LOWER(physical_name) = LOWER(N'F:\fc\Sales_log.ldf'))
BEGIN
    SET @file_exists = NULL;
    IF CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) >= 14
        EXEC sys.sp_executesql N'SELECT @e = CAST(file_exists AS bit) FROM sys.dm_os_file_exists(@p);',
            N'@p nvarchar(4000), @e bit OUTPUT', @p = N'L:\log\Sales_log.ldf', @e = @file_exists OUTPUT;
    ELSE
    BEGIN
        DELETE FROM @fe_probe;
        INSERT INTO @fe_probe EXEC master.dbo.xp_fileexist N'L:\log\Sales_log.ldf';
        SELECT @file_exists = CAST(MAX(file_exists) AS bit) FROM @fe_probe;
    END;
    IF @file_exists = 1
    BEGIN
        SET @msg = N'tierwise: pre-check failed: L:\log\Sales_log.ldf already exists. A file there now is not a copy of the database as it is (it is still online); if it is the original from before an earlier move, it is out of date. Rename or delete it, then run again. Nothing was changed.';
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        RAISERROR(N'%s', 16, 1, @msg);
        SET NOEXEC ON;
        RETURN;
    END;
END;
IF EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID(N'Sales') AND name = N'Sales' AND LOWER(physical_name) = LOWER(N'F:\fc\Sales.mdf'))
BEGIN
    SET @file_exists = NULL;
    IF CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) >= 14
        EXEC sys.sp_executesql N'SELECT @e = CAST(file_exists AS bit) FROM sys.dm_os_file_exists(@p);',
            N'@p nvarchar(4000), @e bit OUTPUT', @p = N'E:\data\Sales.mdf', @e = @file_exists OUTPUT;
    ELSE
    BEGIN
        DELETE FROM @fe_probe;
        INSERT INTO @fe_probe EXEC master.dbo.xp_fileexist N'E:\data\Sales.mdf';
        SELECT @file_exists = CAST(MAX(file_exists) AS bit) FROM @fe_probe;
    END;
    IF @file_exists = 1
    BEGIN
        SET @msg = N'tierwise: pre-check failed: E:\data\Sales.mdf already exists. A file there now is not a copy of the database as it is (it is still online); if it is the original from before an earlier move, it is out of date. Rename or delete it, then run again. Nothing was changed.';
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        RAISERROR(N'%s', 16, 1, @msg);
        SET NOEXEC ON;
        RETURN;
    END;
END;
GO
DECLARE @tw_say nvarchar(2048);
USE [master];
DECLARE @msg nvarchar(2048);
IF NOT ((SELECT state_desc FROM sys.databases WHERE name = N'Sales') = N'ONLINE' AND (EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID(N'Sales') AND name = N'Sales_log' AND LOWER(physical_name) = LOWER(N'F:\fc\Sales_log.ldf')) OR EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID(N'Sales') AND name = N'Sales' AND LOWER(physical_name) = LOWER(N'F:\fc\Sales.mdf'))))
    RETURN;
DECLARE @dir_is_directory bit;
IF CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) >= 14
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'directory check with sys.dm_os_file_exists';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    EXEC sys.sp_executesql N'SELECT @d = CAST(file_is_a_directory AS bit) FROM sys.dm_os_file_exists(@p);',
        N'@p nvarchar(4000), @d bit OUTPUT', @p = N'L:\log', @d = @dir_is_directory OUTPUT;
END
ELSE
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'directory check with xp_fileexist (SQL Server before 2017)';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    DECLARE @dir_probe TABLE (file_exists int, is_directory int, parent_exists int);
    INSERT INTO @dir_probe EXEC master.dbo.xp_fileexist N'L:\log';
    SELECT @dir_is_directory = CAST(MAX(is_directory) AS bit) FROM @dir_probe;
END;
IF COALESCE(@dir_is_directory, 0) = 0
BEGIN
    SET @msg = N'tierwise: pre-check failed: the target directory L:\log\ does not exist, or the SQL Server service account cannot see it. Create it and grant the service account full control. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
DECLARE @free_mb bigint, @need_mb bigint;
SET @need_mb = CEILING((10240) * 1.10);
SELECT TOP (1) @free_mb = vs.available_bytes / 1048576
FROM sys.master_files AS mf
JOIN sys.databases AS d ON d.database_id = mf.database_id AND d.state = 0
CROSS APPLY sys.dm_os_volume_stats(mf.database_id, mf.file_id) AS vs
WHERE LEFT(LOWER(N'L:\log\'), LEN(vs.volume_mount_point)) = LOWER(vs.volume_mount_point)
ORDER BY LEN(vs.volume_mount_point) DESC;
IF @free_mb IS NULL AND CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) >= 15
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'free space from sys.dm_os_enumerate_fixed_drives';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    EXEC sys.sp_executesql N'SELECT @f = free_space_in_bytes / 1048576 FROM sys.dm_os_enumerate_fixed_drives WHERE UPPER(LEFT(fixed_drive_path, 1)) = UPPER(@d);',
        N'@d nchar(1), @f bigint OUTPUT', @d = N'L', @f = @free_mb OUTPUT;
END
ELSE IF @free_mb IS NULL
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'free space from xp_fixeddrives (SQL Server before 2019)';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    DECLARE @drives TABLE (drive nvarchar(5), mb_free bigint);
    INSERT INTO @drives EXEC master.dbo.xp_fixeddrives;
    SELECT @free_mb = mb_free FROM @drives WHERE UPPER(drive) = UPPER(N'L');
END;
IF @free_mb IS NULL
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'warning: cannot measure the free space under L:\log\ (no database file on that volume yet); the copies of the files of [Sales] going to L:\log\ needs about ' + CAST(@need_mb AS nvarchar(20)) + N' MB there.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
END;
IF @free_mb < @need_mb
BEGIN
    SET @msg = N'tierwise: pre-check failed: the copies of the files of [Sales] going to L:\log\ needs ' + CAST(@need_mb AS nvarchar(20)) + N' MB under ' + N'L:\log\' + N' (10 % headroom included), but only ' + CAST(@free_mb AS nvarchar(20)) + N' MB are free. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
GO
DECLARE @tw_say nvarchar(2048);
USE [master];
DECLARE @msg nvarchar(2048);
IF NOT ((SELECT state_desc FROM sys.databases WHERE name = N'Sales') = N'ONLINE' AND (EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID(N'Sales') AND name = N'Sales_log' AND LOWER(physical_name) = LOWER(N'F:\fc\Sales_log.ldf')) OR EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID(N'Sales') AND name = N'Sales' AND LOWER(physical_name) = LOWER(N'F:\fc\Sales.mdf'))))
    RETURN;
DECLARE @dir_is_directory bit;
IF CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) >= 14
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'directory check with sys.dm_os_file_exists';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    EXEC sys.sp_executesql N'SELECT @d = CAST(file_is_a_directory AS bit) FROM sys.dm_os_file_exists(@p);',
        N'@p nvarchar(4000), @d bit OUTPUT', @p = N'E:\data', @d = @dir_is_directory OUTPUT;
END
ELSE
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'directory check with xp_fileexist (SQL Server before 2017)';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    DECLARE @dir_probe TABLE (file_exists int, is_directory int, parent_exists int);
    INSERT INTO @dir_probe EXEC master.dbo.xp_fileexist N'E:\data';
    SELECT @dir_is_directory = CAST(MAX(is_directory) AS bit) FROM @dir_probe;
END;
IF COALESCE(@dir_is_directory, 0) = 0
BEGIN
    SET @msg = N'tierwise: pre-check failed: the target directory E:\data\ does not exist, or the SQL Server service account cannot see it. Create it and grant the service account full control. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
DECLARE @free_mb bigint, @need_mb bigint;
SET @need_mb = CEILING((51200) * 1.10);
SELECT TOP (1) @free_mb = vs.available_bytes / 1048576
FROM sys.master_files AS mf
JOIN sys.databases AS d ON d.database_id = mf.database_id AND d.state = 0
CROSS APPLY sys.dm_os_volume_stats(mf.database_id, mf.file_id) AS vs
WHERE LEFT(LOWER(N'E:\data\'), LEN(vs.volume_mount_point)) = LOWER(vs.volume_mount_point)
ORDER BY LEN(vs.volume_mount_point) DESC;
IF @free_mb IS NULL AND CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) >= 15
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'free space from sys.dm_os_enumerate_fixed_drives';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    EXEC sys.sp_executesql N'SELECT @f = free_space_in_bytes / 1048576 FROM sys.dm_os_enumerate_fixed_drives WHERE UPPER(LEFT(fixed_drive_path, 1)) = UPPER(@d);',
        N'@d nchar(1), @f bigint OUTPUT', @d = N'E', @f = @free_mb OUTPUT;
END
ELSE IF @free_mb IS NULL
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'free space from xp_fixeddrives (SQL Server before 2019)';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    DECLARE @drives TABLE (drive nvarchar(5), mb_free bigint);
    INSERT INTO @drives EXEC master.dbo.xp_fixeddrives;
    SELECT @free_mb = mb_free FROM @drives WHERE UPPER(drive) = UPPER(N'E');
END;
IF @free_mb IS NULL
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'warning: cannot measure the free space under E:\data\ (no database file on that volume yet); the copies of the files of [Sales] going to E:\data\ needs about ' + CAST(@need_mb AS nvarchar(20)) + N' MB there.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
END;
IF @free_mb < @need_mb
BEGIN
    SET @msg = N'tierwise: pre-check failed: the copies of the files of [Sales] going to E:\data\ needs ' + CAST(@need_mb AS nvarchar(20)) + N' MB under ' + N'E:\data\' + N' (10 % headroom included), but only ' + CAST(@free_mb AS nvarchar(20)) + N' MB are free. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
GO
DECLARE @tw_say nvarchar(2048);
USE [master];
DECLARE @msg nvarchar(2048), @missing int = 0, @marked datetime, @marked_files int;
DECLARE @fe_probe TABLE (file_exists int, is_directory int, parent_exists int), @copy_exists bit;
DECLARE @copy_bytes bigint, @orig_bytes bigint, @want_bytes bigint;
IF (SELECT state_desc FROM sys.databases WHERE name = N'Sales') IN (N'OFFLINE', N'RECOVERY_PENDING') AND (EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID(N'Sales') AND name = N'Sales_log' AND LOWER(physical_name) = LOWER(N'F:\fc\Sales_log.ldf')) OR EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID(N'Sales') AND name = N'Sales' AND LOWER(physical_name) = LOWER(N'F:\fc\Sales.mdf')))
BEGIN
    IF OBJECT_ID(N'msdb.dbo.tierwise_offline_run', N'U') IS NOT NULL
        SELECT @marked = MIN(m.taken_offline_at), @marked_files = COUNT(*) FROM msdb.dbo.tierwise_offline_run AS m
        WHERE m.database_name = N'Sales' AND m.plan_sha256 = N'b77bd1c8cbab3e6c4b7bc9d040c53adecd58cd63b8718c041ae37938aef73b55' AND m.direction = N'rollback';
    IF @marked IS NULL
    BEGIN
        SET @msg = N'tierwise: run 2 refused: [Sales] is ' + (SELECT state_desc FROM sys.databases WHERE name = N'Sales') + N', but not taken offline by run 1 of this rollback script (no rollback run marker for plan sha256 b77bd1c8cbab... in msdb.dbo.tierwise_offline_run): it was taken offline by someone else, or by the forward script, so a file at the new path may be a stale copy and none is used. Bring it online (ALTER DATABASE [Sales] SET ONLINE: it opens its current files) and run this script again, or finish first whatever took it offline (the forward script: run it again). Nothing was changed.';
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        RAISERROR(N'%s', 16, 1, @msg);
        SET NOEXEC ON;
        RETURN;
    END;
    IF @marked_files <> 2 OR EXISTS (SELECT 1 FROM msdb.dbo.tierwise_offline_run AS m INNER JOIN sys.master_files AS mf ON mf.database_id = DB_ID(N'Sales') AND mf.name COLLATE DATABASE_DEFAULT = m.file_name COLLATE DATABASE_DEFAULT WHERE m.database_name = N'Sales' AND m.plan_sha256 = N'b77bd1c8cbab3e6c4b7bc9d040c53adecd58cd63b8718c041ae37938aef73b55' AND m.direction = N'rollback' AND (mf.size <> m.size_pages OR NOT (mf.physical_name COLLATE DATABASE_DEFAULT = m.physical_name COLLATE DATABASE_DEFAULT OR (m.file_name = N'Sales_log' AND LOWER(mf.physical_name) = LOWER(N'L:\log\Sales_log.ldf')) OR (m.file_name = N'Sales' AND LOWER(mf.physical_name) = LOWER(N'E:\data\Sales.mdf')))))
    BEGIN
        SET @msg = N'tierwise: run 2 refused: the files of [Sales] are not as run 1 recorded them in msdb.dbo.tierwise_offline_run (a size or a path changed, or a file is missing): it was online or changed in between, and copies made before are out of date. Bring it online (ALTER DATABASE [Sales] SET ONLINE), delete the copies in L:\log\ and E:\data\ and run this script again. Nothing was changed.';
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        RAISERROR(N'%s', 16, 1, @msg);
        SET NOEXEC ON;
        RETURN;
    END;
    IF EXISTS (SELECT 1 FROM msdb.dbo.backupset WHERE database_name = N'Sales' AND backup_start_date > @marked)
    BEGIN
        SET @msg = N'tierwise: run 2 refused: a backup of [Sales] started after run 1 took it offline, so it was online in between and copies made before are out of date. Bring it online (ALTER DATABASE [Sales] SET ONLINE), delete the copies in L:\log\ and E:\data\ and run this script again. Nothing was changed.';
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        RAISERROR(N'%s', 16, 1, @msg);
        SET NOEXEC ON;
        RETURN;
    END;
    DECLARE @started TABLE (log_date datetime, process_info nvarchar(64), text nvarchar(4000));
    DECLARE @logs TABLE (archive int, last_write datetime, size_bytes bigint);
    DECLARE @archive int, @started_at datetime;
    BEGIN TRY
        INSERT INTO @logs EXEC master.sys.xp_enumerrorlogs 1;
        SELECT @archive = MIN(archive) FROM @logs WHERE last_write >= @marked;
        WHILE @archive IS NOT NULL
        BEGIN
            INSERT INTO @started EXEC master.sys.xp_readerrorlog @archive, 1, N'Starting up database', N'''Sales''', @marked;
            SELECT @archive = MIN(archive) FROM @logs WHERE archive > @archive AND last_write >= @marked;
        END;
        SELECT @started_at = MIN(log_date) FROM @started WHERE log_date > @marked;
    END TRY
    BEGIN CATCH
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'warning: the error log could not be read (' + ERROR_MESSAGE() + N'); whether the database was started since run 1 is judged by the marker, the catalog and the backup history only.';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    END CATCH;
    IF @started_at IS NOT NULL
    BEGIN
        SET @msg = N'tierwise: run 2 refused: the error log says [Sales] started (was brought online) at ' + CONVERT(nvarchar(30), @started_at, 120) + N', after run 1 of this rollback script took it offline at ' + CONVERT(nvarchar(30), @marked, 120) + N': it was online in between, so copies made before may be out of date. Bring it online (ALTER DATABASE [Sales] SET ONLINE), delete the copies and run this script again (run 1). Nothing was changed.';
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        RAISERROR(N'%s', 16, 1, @msg);
        SET NOEXEC ON;
        RETURN;
    END;
    SET @copy_exists = NULL;
    IF CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) >= 14
        EXEC sys.sp_executesql N'SELECT @e = CAST(file_exists AS bit) FROM sys.dm_os_file_exists(@p);',
            N'@p nvarchar(4000), @e bit OUTPUT', @p = N'L:\log\Sales_log.ldf', @e = @copy_exists OUTPUT;
    ELSE
    BEGIN
        DELETE FROM @fe_probe;
        INSERT INTO @fe_probe EXEC master.dbo.xp_fileexist N'L:\log\Sales_log.ldf';
        SELECT @copy_exists = CAST(MAX(file_exists) AS bit) FROM @fe_probe;
    END;
    IF COALESCE(@copy_exists, 0) = 0 SET @missing = @missing + 1;
    ELSE
    BEGIN
        SET @copy_bytes = NULL;
        IF CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) >= 14
            EXEC sys.sp_executesql N'SELECT @s = MAX(size_in_bytes) FROM sys.dm_os_enumerate_filesystem(@d, @f) WHERE is_directory = 0 AND level = 0 AND file_or_directory_name = @f;',
                N'@d nvarchar(4000), @f nvarchar(4000), @s bigint OUTPUT', @d = N'L:\log\', @f = N'Sales_log.ldf', @s = @copy_bytes OUTPUT;
        SET @orig_bytes = NULL;
        IF CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) >= 14
            EXEC sys.sp_executesql N'SELECT @s = MAX(size_in_bytes) FROM sys.dm_os_enumerate_filesystem(@d, @f) WHERE is_directory = 0 AND level = 0 AND file_or_directory_name = @f;',
                N'@d nvarchar(4000), @f nvarchar(4000), @s bigint OUTPUT', @d = N'F:\fc\', @f = N'Sales_log.ldf', @s = @orig_bytes OUTPUT;
        SELECT @want_bytes = COALESCE(@orig_bytes, (SELECT MAX(m.size_bytes) FROM msdb.dbo.tierwise_offline_run AS m WHERE m.database_name = N'Sales' AND m.plan_sha256 = N'b77bd1c8cbab3e6c4b7bc9d040c53adecd58cd63b8718c041ae37938aef73b55' AND m.direction = N'rollback' AND m.file_name = N'Sales_log'));
        IF CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) < 14
        BEGIN
            SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'warning: SQL Server before 2017 cannot read the size of the copy L:\log\Sales_log.ldf from T-SQL: compare it with F:\fc\Sales_log.ldf by hand before this run continues; SQL Server checks the copy''s size at SET ONLINE (error 5125).';
            RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        END;
        IF @copy_bytes IS NOT NULL AND @want_bytes IS NOT NULL AND @copy_bytes <> @want_bytes
        BEGIN
            SET @msg = N'tierwise: run 2 refused: the copy L:\log\Sales_log.ldf is ' + CAST(@copy_bytes AS nvarchar(20)) + N' bytes, but the file of [Sales] it copies (F:\fc\Sales_log.ldf) is ' + CAST(@want_bytes AS nvarchar(20)) + N' bytes: the copy is incomplete or not this file. Copy it again as the MANUAL STEP says, check the sizes, and run this script again. Nothing was changed.';
            SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
            RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
            RAISERROR(N'%s', 16, 1, @msg);
            SET NOEXEC ON;
            RETURN;
        END;
        IF @copy_bytes IS NULL AND CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) >= 14
        BEGIN
            SET @msg = N'tierwise: run 2 refused: L:\log\Sales_log.ldf exists, but its size cannot be read (sys.dm_os_enumerate_filesystem lists no such file: a directory of that name, or no permission for the service account). Nothing was changed.';
            SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
            RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
            RAISERROR(N'%s', 16, 1, @msg);
            SET NOEXEC ON;
            RETURN;
        END;
    END;
    SET @copy_exists = NULL;
    IF CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) >= 14
        EXEC sys.sp_executesql N'SELECT @e = CAST(file_exists AS bit) FROM sys.dm_os_file_exists(@p);',
            N'@p nvarchar(4000), @e bit OUTPUT', @p = N'E:\data\Sales.mdf', @e = @copy_exists OUTPUT;
    ELSE
    BEGIN
        DELETE FROM @fe_probe;
        INSERT INTO @fe_probe EXEC master.dbo.xp_fileexist N'E:\data\Sales.mdf';
        SELECT @copy_exists = CAST(MAX(file_exists) AS bit) FROM @fe_probe;
    END;
    IF COALESCE(@copy_exists, 0) = 0 SET @missing = @missing + 1;
    ELSE
    BEGIN
        SET @copy_bytes = NULL;
        IF CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) >= 14
            EXEC sys.sp_executesql N'SELECT @s = MAX(size_in_bytes) FROM sys.dm_os_enumerate_filesystem(@d, @f) WHERE is_directory = 0 AND level = 0 AND file_or_directory_name = @f;',
                N'@d nvarchar(4000), @f nvarchar(4000), @s bigint OUTPUT', @d = N'E:\data\', @f = N'Sales.mdf', @s = @copy_bytes OUTPUT;
        SET @orig_bytes = NULL;
        IF CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) >= 14
            EXEC sys.sp_executesql N'SELECT @s = MAX(size_in_bytes) FROM sys.dm_os_enumerate_filesystem(@d, @f) WHERE is_directory = 0 AND level = 0 AND file_or_directory_name = @f;',
                N'@d nvarchar(4000), @f nvarchar(4000), @s bigint OUTPUT', @d = N'F:\fc\', @f = N'Sales.mdf', @s = @orig_bytes OUTPUT;
        SELECT @want_bytes = COALESCE(@orig_bytes, (SELECT MAX(m.size_bytes) FROM msdb.dbo.tierwise_offline_run AS m WHERE m.database_name = N'Sales' AND m.plan_sha256 = N'b77bd1c8cbab3e6c4b7bc9d040c53adecd58cd63b8718c041ae37938aef73b55' AND m.direction = N'rollback' AND m.file_name = N'Sales'));
        IF CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) < 14
        BEGIN
            SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'warning: SQL Server before 2017 cannot read the size of the copy E:\data\Sales.mdf from T-SQL: compare it with F:\fc\Sales.mdf by hand before this run continues; SQL Server checks the copy''s size at SET ONLINE (error 5125).';
            RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        END;
        IF @copy_bytes IS NOT NULL AND @want_bytes IS NOT NULL AND @copy_bytes <> @want_bytes
        BEGIN
            SET @msg = N'tierwise: run 2 refused: the copy E:\data\Sales.mdf is ' + CAST(@copy_bytes AS nvarchar(20)) + N' bytes, but the file of [Sales] it copies (F:\fc\Sales.mdf) is ' + CAST(@want_bytes AS nvarchar(20)) + N' bytes: the copy is incomplete or not this file. Copy it again as the MANUAL STEP says, check the sizes, and run this script again. Nothing was changed.';
            SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
            RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
            RAISERROR(N'%s', 16, 1, @msg);
            SET NOEXEC ON;
            RETURN;
        END;
        IF @copy_bytes IS NULL AND CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) >= 14
        BEGIN
            SET @msg = N'tierwise: run 2 refused: E:\data\Sales.mdf exists, but its size cannot be read (sys.dm_os_enumerate_filesystem lists no such file: a directory of that name, or no permission for the service account). Nothing was changed.';
            SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
            RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
            RAISERROR(N'%s', 16, 1, @msg);
            SET NOEXEC ON;
            RETURN;
        END;
    END;
    IF @missing > 0
    BEGIN
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'======================== MANUAL STEP ========================';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'[Sales] is offline. Copy (do not move) these files with their ACLs (the SQL Server service account needs full control of the copies), and check each copy''s size:';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'    copy  F:\fc\Sales_log.ldf';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'      to  L:\log\Sales_log.ldf';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'      PowerShell: Copy-Item -LiteralPath ''F:\fc\Sales_log.ldf'' -Destination ''L:\log\Sales_log.ldf''';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'        its ACL:  Get-Acl -LiteralPath ''F:\fc\Sales_log.ldf'' | Set-Acl -LiteralPath ''L:\log\Sales_log.ldf''   (elevated PowerShell)';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'        check:    (Get-Item -LiteralPath ''F:\fc\Sales_log.ldf'').Length -eq (Get-Item -LiteralPath ''L:\log\Sales_log.ldf'').Length   -> True';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'    copy  F:\fc\Sales.mdf';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'      to  E:\data\Sales.mdf';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'      PowerShell: Copy-Item -LiteralPath ''F:\fc\Sales.mdf'' -Destination ''E:\data\Sales.mdf''';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'        its ACL:  Get-Acl -LiteralPath ''F:\fc\Sales.mdf'' | Set-Acl -LiteralPath ''E:\data\Sales.mdf''   (elevated PowerShell)';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'        check:    (Get-Item -LiteralPath ''F:\fc\Sales.mdf'').Length -eq (Get-Item -LiteralPath ''E:\data\Sales.mdf'').Length   -> True';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'Then run this same script again. To go ahead with the move instead, run the forward script.';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'=============================================================';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        RAISERROR(N'%s', 16, 1, N'tierwise: MANUAL STEP: [Sales] is offline; copy the files listed above to L:\log\ and E:\data\, then run this script again.');
        SET NOEXEC ON;
        RETURN;
    END;
END;
GO
DECLARE @tw_say nvarchar(2048);
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'plan: Moves: the offline files [Sales_log], [Sales] of database [Sales]';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'plan: Server: SQLPROD01';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'plan: Database: Sales';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'plan: From: tier fc: F:\fc\';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'plan: To: tier flash: L:\log\, E:\data\';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'plan: method: offline, in two runs of this same script: run 1: pre-checks, SET OFFLINE WITH ROLLBACK IMMEDIATE, records a run marker in msdb, prints what to copy where, stops. MANUAL STEP: copy (do not move) the files and their ACLs, then run the script again. run 2: accepts the copies only under run 1''s marker of this same direction (database offline since, files where the marker recorded them), MODIFY FILE (catalog), SET ONLINE and clears the marker, post-check.';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'plan: file [Sales_log]: F:\fc\Sales_log.ldf -> L:\log\Sales_log.ldf';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'plan: file [Sales]: F:\fc\Sales.mdf -> E:\data\Sales.mdf';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'estimated duration: [Sales] is DOWN from run 1 to the end of run 2: about 6 min to copy 60.0 GB at ~200 MB/s (copy speed varies with the storage), plus a minute for the checks and the recovery at SET ONLINE; each run itself takes seconds. After SET ONLINE run 2 reads every page once (DBCC CHECKDB WITH PHYSICAL_ONLY) while the database is already online again.';
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
USE [master];
IF (SELECT state_desc FROM sys.databases WHERE name = N'Sales') = N'ONLINE' AND (EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID(N'Sales') AND name = N'Sales_log' AND LOWER(physical_name) = LOWER(N'F:\fc\Sales_log.ldf')) OR EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID(N'Sales') AND name = N'Sales' AND LOWER(physical_name) = LOWER(N'F:\fc\Sales.mdf'))) AND OBJECT_ID(N'msdb.dbo.tierwise_offline_run', N'U') IS NULL
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'creating msdb.dbo.tierwise_offline_run (run markers of offline moves; one row per file)';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    CREATE TABLE msdb.dbo.tierwise_offline_run (
        database_name sysname NOT NULL,
        plan_sha256 char(64) NOT NULL,
        direction varchar(8) NOT NULL,
        file_name sysname NOT NULL,
        physical_name nvarchar(260) NOT NULL,
        size_pages bigint NOT NULL,
        size_bytes bigint NOT NULL,
        taken_offline_at datetime NOT NULL,
        taken_offline_by sysname NOT NULL,
        CONSTRAINT PK_tierwise_offline_run PRIMARY KEY (database_name, plan_sha256, file_name)
    );
END;
GO
DECLARE @tw_say nvarchar(2048);
USE [master];
IF (SELECT state_desc FROM sys.databases WHERE name = N'Sales') = N'ONLINE' AND (EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID(N'Sales') AND name = N'Sales_log' AND LOWER(physical_name) = LOWER(N'F:\fc\Sales_log.ldf')) OR EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID(N'Sales') AND name = N'Sales' AND LOWER(physical_name) = LOWER(N'F:\fc\Sales.mdf')))
BEGIN
    -- the database is online: any marker of it is stale (it was online after that run 1)
    DELETE FROM msdb.dbo.tierwise_offline_run WHERE database_name = N'Sales';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'step 1: taking [Sales] offline (every session of it is disconnected; open transactions are rolled back)';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    ALTER DATABASE [Sales] SET OFFLINE WITH ROLLBACK IMMEDIATE;
    IF (SELECT state_desc FROM sys.databases WHERE name = N'Sales') = N'OFFLINE'
    BEGIN
        INSERT INTO msdb.dbo.tierwise_offline_run (database_name, plan_sha256, direction, file_name, physical_name,
            size_pages, size_bytes, taken_offline_at, taken_offline_by)
        SELECT N'Sales', N'b77bd1c8cbab3e6c4b7bc9d040c53adecd58cd63b8718c041ae37938aef73b55', N'rollback', mf.name, mf.physical_name, mf.size,
            CAST(mf.size AS bigint) * 8192, GETDATE(), ORIGINAL_LOGIN()
        FROM sys.master_files AS mf WHERE mf.database_id = DB_ID(N'Sales') AND mf.name IN (N'Sales_log', N'Sales');
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'run marker recorded in msdb.dbo.tierwise_offline_run: the copies made from now on are accepted by run 2';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    END;
END;
GO
DECLARE @tw_say nvarchar(2048);
USE [master];
DECLARE @msg nvarchar(2048), @missing int = 0, @marked datetime, @marked_files int;
DECLARE @fe_probe TABLE (file_exists int, is_directory int, parent_exists int), @copy_exists bit;
DECLARE @copy_bytes bigint, @orig_bytes bigint, @want_bytes bigint;
IF (SELECT state_desc FROM sys.databases WHERE name = N'Sales') IN (N'OFFLINE', N'RECOVERY_PENDING') AND (EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID(N'Sales') AND name = N'Sales_log' AND LOWER(physical_name) = LOWER(N'F:\fc\Sales_log.ldf')) OR EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID(N'Sales') AND name = N'Sales' AND LOWER(physical_name) = LOWER(N'F:\fc\Sales.mdf')))
BEGIN
    IF OBJECT_ID(N'msdb.dbo.tierwise_offline_run', N'U') IS NOT NULL
        SELECT @marked = MIN(m.taken_offline_at), @marked_files = COUNT(*) FROM msdb.dbo.tierwise_offline_run AS m
        WHERE m.database_name = N'Sales' AND m.plan_sha256 = N'b77bd1c8cbab3e6c4b7bc9d040c53adecd58cd63b8718c041ae37938aef73b55' AND m.direction = N'rollback';
    IF @marked IS NULL
    BEGIN
        SET @msg = N'tierwise: run 2 refused: [Sales] is ' + (SELECT state_desc FROM sys.databases WHERE name = N'Sales') + N', but not taken offline by run 1 of this rollback script (no rollback run marker for plan sha256 b77bd1c8cbab... in msdb.dbo.tierwise_offline_run): it was taken offline by someone else, or by the forward script, so a file at the new path may be a stale copy and none is used. Bring it online (ALTER DATABASE [Sales] SET ONLINE: it opens its current files) and run this script again, or finish first whatever took it offline (the forward script: run it again). Nothing was changed.';
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        RAISERROR(N'%s', 16, 1, @msg);
        SET NOEXEC ON;
        RETURN;
    END;
    IF @marked_files <> 2 OR EXISTS (SELECT 1 FROM msdb.dbo.tierwise_offline_run AS m INNER JOIN sys.master_files AS mf ON mf.database_id = DB_ID(N'Sales') AND mf.name COLLATE DATABASE_DEFAULT = m.file_name COLLATE DATABASE_DEFAULT WHERE m.database_name = N'Sales' AND m.plan_sha256 = N'b77bd1c8cbab3e6c4b7bc9d040c53adecd58cd63b8718c041ae37938aef73b55' AND m.direction = N'rollback' AND (mf.size <> m.size_pages OR NOT (mf.physical_name COLLATE DATABASE_DEFAULT = m.physical_name COLLATE DATABASE_DEFAULT OR (m.file_name = N'Sales_log' AND LOWER(mf.physical_name) = LOWER(N'L:\log\Sales_log.ldf')) OR (m.file_name = N'Sales' AND LOWER(mf.physical_name) = LOWER(N'E:\data\Sales.mdf')))))
    BEGIN
        SET @msg = N'tierwise: run 2 refused: the files of [Sales] are not as run 1 recorded them in msdb.dbo.tierwise_offline_run (a size or a path changed, or a file is missing): it was online or changed in between, and copies made before are out of date. Bring it online (ALTER DATABASE [Sales] SET ONLINE), delete the copies in L:\log\ and E:\data\ and run this script again. Nothing was changed.';
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        RAISERROR(N'%s', 16, 1, @msg);
        SET NOEXEC ON;
        RETURN;
    END;
    IF EXISTS (SELECT 1 FROM msdb.dbo.backupset WHERE database_name = N'Sales' AND backup_start_date > @marked)
    BEGIN
        SET @msg = N'tierwise: run 2 refused: a backup of [Sales] started after run 1 took it offline, so it was online in between and copies made before are out of date. Bring it online (ALTER DATABASE [Sales] SET ONLINE), delete the copies in L:\log\ and E:\data\ and run this script again. Nothing was changed.';
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        RAISERROR(N'%s', 16, 1, @msg);
        SET NOEXEC ON;
        RETURN;
    END;
    DECLARE @started TABLE (log_date datetime, process_info nvarchar(64), text nvarchar(4000));
    DECLARE @logs TABLE (archive int, last_write datetime, size_bytes bigint);
    DECLARE @archive int, @started_at datetime;
    BEGIN TRY
        INSERT INTO @logs EXEC master.sys.xp_enumerrorlogs 1;
        SELECT @archive = MIN(archive) FROM @logs WHERE last_write >= @marked;
        WHILE @archive IS NOT NULL
        BEGIN
            INSERT INTO @started EXEC master.sys.xp_readerrorlog @archive, 1, N'Starting up database', N'''Sales''', @marked;
            SELECT @archive = MIN(archive) FROM @logs WHERE archive > @archive AND last_write >= @marked;
        END;
        SELECT @started_at = MIN(log_date) FROM @started WHERE log_date > @marked;
    END TRY
    BEGIN CATCH
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'warning: the error log could not be read (' + ERROR_MESSAGE() + N'); whether the database was started since run 1 is judged by the marker, the catalog and the backup history only.';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    END CATCH;
    IF @started_at IS NOT NULL
    BEGIN
        SET @msg = N'tierwise: run 2 refused: the error log says [Sales] started (was brought online) at ' + CONVERT(nvarchar(30), @started_at, 120) + N', after run 1 of this rollback script took it offline at ' + CONVERT(nvarchar(30), @marked, 120) + N': it was online in between, so copies made before may be out of date. Bring it online (ALTER DATABASE [Sales] SET ONLINE), delete the copies and run this script again (run 1). Nothing was changed.';
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        RAISERROR(N'%s', 16, 1, @msg);
        SET NOEXEC ON;
        RETURN;
    END;
    SET @copy_exists = NULL;
    IF CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) >= 14
        EXEC sys.sp_executesql N'SELECT @e = CAST(file_exists AS bit) FROM sys.dm_os_file_exists(@p);',
            N'@p nvarchar(4000), @e bit OUTPUT', @p = N'L:\log\Sales_log.ldf', @e = @copy_exists OUTPUT;
    ELSE
    BEGIN
        DELETE FROM @fe_probe;
        INSERT INTO @fe_probe EXEC master.dbo.xp_fileexist N'L:\log\Sales_log.ldf';
        SELECT @copy_exists = CAST(MAX(file_exists) AS bit) FROM @fe_probe;
    END;
    IF COALESCE(@copy_exists, 0) = 0 SET @missing = @missing + 1;
    ELSE
    BEGIN
        SET @copy_bytes = NULL;
        IF CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) >= 14
            EXEC sys.sp_executesql N'SELECT @s = MAX(size_in_bytes) FROM sys.dm_os_enumerate_filesystem(@d, @f) WHERE is_directory = 0 AND level = 0 AND file_or_directory_name = @f;',
                N'@d nvarchar(4000), @f nvarchar(4000), @s bigint OUTPUT', @d = N'L:\log\', @f = N'Sales_log.ldf', @s = @copy_bytes OUTPUT;
        SET @orig_bytes = NULL;
        IF CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) >= 14
            EXEC sys.sp_executesql N'SELECT @s = MAX(size_in_bytes) FROM sys.dm_os_enumerate_filesystem(@d, @f) WHERE is_directory = 0 AND level = 0 AND file_or_directory_name = @f;',
                N'@d nvarchar(4000), @f nvarchar(4000), @s bigint OUTPUT', @d = N'F:\fc\', @f = N'Sales_log.ldf', @s = @orig_bytes OUTPUT;
        SELECT @want_bytes = COALESCE(@orig_bytes, (SELECT MAX(m.size_bytes) FROM msdb.dbo.tierwise_offline_run AS m WHERE m.database_name = N'Sales' AND m.plan_sha256 = N'b77bd1c8cbab3e6c4b7bc9d040c53adecd58cd63b8718c041ae37938aef73b55' AND m.direction = N'rollback' AND m.file_name = N'Sales_log'));
        IF CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) < 14
        BEGIN
            SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'warning: SQL Server before 2017 cannot read the size of the copy L:\log\Sales_log.ldf from T-SQL: compare it with F:\fc\Sales_log.ldf by hand before this run continues; SQL Server checks the copy''s size at SET ONLINE (error 5125).';
            RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        END;
        IF @copy_bytes IS NOT NULL AND @want_bytes IS NOT NULL AND @copy_bytes <> @want_bytes
        BEGIN
            SET @msg = N'tierwise: run 2 refused: the copy L:\log\Sales_log.ldf is ' + CAST(@copy_bytes AS nvarchar(20)) + N' bytes, but the file of [Sales] it copies (F:\fc\Sales_log.ldf) is ' + CAST(@want_bytes AS nvarchar(20)) + N' bytes: the copy is incomplete or not this file. Copy it again as the MANUAL STEP says, check the sizes, and run this script again. Nothing was changed.';
            SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
            RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
            RAISERROR(N'%s', 16, 1, @msg);
            SET NOEXEC ON;
            RETURN;
        END;
        IF @copy_bytes IS NULL AND CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) >= 14
        BEGIN
            SET @msg = N'tierwise: run 2 refused: L:\log\Sales_log.ldf exists, but its size cannot be read (sys.dm_os_enumerate_filesystem lists no such file: a directory of that name, or no permission for the service account). Nothing was changed.';
            SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
            RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
            RAISERROR(N'%s', 16, 1, @msg);
            SET NOEXEC ON;
            RETURN;
        END;
    END;
    SET @copy_exists = NULL;
    IF CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) >= 14
        EXEC sys.sp_executesql N'SELECT @e = CAST(file_exists AS bit) FROM sys.dm_os_file_exists(@p);',
            N'@p nvarchar(4000), @e bit OUTPUT', @p = N'E:\data\Sales.mdf', @e = @copy_exists OUTPUT;
    ELSE
    BEGIN
        DELETE FROM @fe_probe;
        INSERT INTO @fe_probe EXEC master.dbo.xp_fileexist N'E:\data\Sales.mdf';
        SELECT @copy_exists = CAST(MAX(file_exists) AS bit) FROM @fe_probe;
    END;
    IF COALESCE(@copy_exists, 0) = 0 SET @missing = @missing + 1;
    ELSE
    BEGIN
        SET @copy_bytes = NULL;
        IF CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) >= 14
            EXEC sys.sp_executesql N'SELECT @s = MAX(size_in_bytes) FROM sys.dm_os_enumerate_filesystem(@d, @f) WHERE is_directory = 0 AND level = 0 AND file_or_directory_name = @f;',
                N'@d nvarchar(4000), @f nvarchar(4000), @s bigint OUTPUT', @d = N'E:\data\', @f = N'Sales.mdf', @s = @copy_bytes OUTPUT;
        SET @orig_bytes = NULL;
        IF CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) >= 14
            EXEC sys.sp_executesql N'SELECT @s = MAX(size_in_bytes) FROM sys.dm_os_enumerate_filesystem(@d, @f) WHERE is_directory = 0 AND level = 0 AND file_or_directory_name = @f;',
                N'@d nvarchar(4000), @f nvarchar(4000), @s bigint OUTPUT', @d = N'F:\fc\', @f = N'Sales.mdf', @s = @orig_bytes OUTPUT;
        SELECT @want_bytes = COALESCE(@orig_bytes, (SELECT MAX(m.size_bytes) FROM msdb.dbo.tierwise_offline_run AS m WHERE m.database_name = N'Sales' AND m.plan_sha256 = N'b77bd1c8cbab3e6c4b7bc9d040c53adecd58cd63b8718c041ae37938aef73b55' AND m.direction = N'rollback' AND m.file_name = N'Sales'));
        IF CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) < 14
        BEGIN
            SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'warning: SQL Server before 2017 cannot read the size of the copy E:\data\Sales.mdf from T-SQL: compare it with F:\fc\Sales.mdf by hand before this run continues; SQL Server checks the copy''s size at SET ONLINE (error 5125).';
            RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        END;
        IF @copy_bytes IS NOT NULL AND @want_bytes IS NOT NULL AND @copy_bytes <> @want_bytes
        BEGIN
            SET @msg = N'tierwise: run 2 refused: the copy E:\data\Sales.mdf is ' + CAST(@copy_bytes AS nvarchar(20)) + N' bytes, but the file of [Sales] it copies (F:\fc\Sales.mdf) is ' + CAST(@want_bytes AS nvarchar(20)) + N' bytes: the copy is incomplete or not this file. Copy it again as the MANUAL STEP says, check the sizes, and run this script again. Nothing was changed.';
            SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
            RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
            RAISERROR(N'%s', 16, 1, @msg);
            SET NOEXEC ON;
            RETURN;
        END;
        IF @copy_bytes IS NULL AND CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) >= 14
        BEGIN
            SET @msg = N'tierwise: run 2 refused: E:\data\Sales.mdf exists, but its size cannot be read (sys.dm_os_enumerate_filesystem lists no such file: a directory of that name, or no permission for the service account). Nothing was changed.';
            SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
            RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
            RAISERROR(N'%s', 16, 1, @msg);
            SET NOEXEC ON;
            RETURN;
        END;
    END;
    IF @missing > 0
    BEGIN
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'======================== MANUAL STEP ========================';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'[Sales] is offline. Copy (do not move) these files with their ACLs (the SQL Server service account needs full control of the copies), and check each copy''s size:';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'    copy  F:\fc\Sales_log.ldf';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'      to  L:\log\Sales_log.ldf';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'      PowerShell: Copy-Item -LiteralPath ''F:\fc\Sales_log.ldf'' -Destination ''L:\log\Sales_log.ldf''';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'        its ACL:  Get-Acl -LiteralPath ''F:\fc\Sales_log.ldf'' | Set-Acl -LiteralPath ''L:\log\Sales_log.ldf''   (elevated PowerShell)';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'        check:    (Get-Item -LiteralPath ''F:\fc\Sales_log.ldf'').Length -eq (Get-Item -LiteralPath ''L:\log\Sales_log.ldf'').Length   -> True';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'    copy  F:\fc\Sales.mdf';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'      to  E:\data\Sales.mdf';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'      PowerShell: Copy-Item -LiteralPath ''F:\fc\Sales.mdf'' -Destination ''E:\data\Sales.mdf''';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'        its ACL:  Get-Acl -LiteralPath ''F:\fc\Sales.mdf'' | Set-Acl -LiteralPath ''E:\data\Sales.mdf''   (elevated PowerShell)';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'        check:    (Get-Item -LiteralPath ''F:\fc\Sales.mdf'').Length -eq (Get-Item -LiteralPath ''E:\data\Sales.mdf'').Length   -> True';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'Then run this same script again. To go ahead with the move instead, run the forward script.';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'=============================================================';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        RAISERROR(N'%s', 16, 1, N'tierwise: MANUAL STEP: [Sales] is offline; copy the files listed above to L:\log\ and E:\data\, then run this script again.');
        SET NOEXEC ON;
        RETURN;
    END;
END;
GO
DECLARE @tw_say nvarchar(2048);
USE [master];
IF (SELECT state_desc FROM sys.databases WHERE name = N'Sales') IN (N'OFFLINE', N'RECOVERY_PENDING')
BEGIN
    IF NOT EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID(N'Sales') AND name = N'Sales_log' AND LOWER(physical_name) = LOWER(N'L:\log\Sales_log.ldf'))
    BEGIN
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'step 2.1: pointing [Sales_log] at L:\log\Sales_log.ldf';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        ALTER DATABASE [Sales] MODIFY FILE (NAME = N'Sales_log', FILENAME = N'L:\log\Sales_log.ldf');
    END;
    IF NOT EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID(N'Sales') AND name = N'Sales' AND LOWER(physical_name) = LOWER(N'E:\data\Sales.mdf'))
    BEGIN
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'step 2.2: pointing [Sales] at E:\data\Sales.mdf';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        ALTER DATABASE [Sales] MODIFY FILE (NAME = N'Sales', FILENAME = N'E:\data\Sales.mdf');
    END;
END;
GO
DECLARE @tw_say nvarchar(2048);
USE [master];
IF (SELECT state_desc FROM sys.databases WHERE name = N'Sales') IN (N'OFFLINE', N'RECOVERY_PENDING')
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'step 3: bringing [Sales] online from L:\log\ and E:\data\. If this fails (errors 5120/5125/5173: the copies'' permissions or a bad copy), fix the copies and run this script again. The original files are untouched; the forward script refuses from here (the files point at the copies): to go back, see To recover in the header.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    ALTER DATABASE [Sales] SET ONLINE;
    -- the marker describes this offline period only: it goes as soon as the database is online,
    -- so a later offline period (by hand, after a session died before the post-check) has none
    IF (SELECT state_desc FROM sys.databases WHERE name = N'Sales') = N'ONLINE' AND OBJECT_ID(N'msdb.dbo.tierwise_offline_run', N'U') IS NOT NULL
        DELETE FROM msdb.dbo.tierwise_offline_run WHERE database_name = N'Sales';
END;
GO
DECLARE @tw_say nvarchar(2048);
USE [master];
DECLARE @msg nvarchar(2048);
IF NOT ((SELECT state_desc FROM sys.databases WHERE name = N'Sales') = N'ONLINE' AND EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID(N'Sales') AND name = N'Sales_log' AND LOWER(physical_name) = LOWER(N'L:\log\Sales_log.ldf')) AND EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID(N'Sales') AND name = N'Sales' AND LOWER(physical_name) = LOWER(N'E:\data\Sales.mdf')))
BEGIN
    SET @msg = N'tierwise: post-check failed: [Sales] is not online from L:\log\ and E:\data\.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF OBJECT_ID(N'msdb.dbo.tierwise_offline_run', N'U') IS NOT NULL
    DELETE FROM msdb.dbo.tierwise_offline_run WHERE database_name = N'Sales';
DECLARE @checkdb_error int, @checkdb_text nvarchar(2048);
IF EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID(N'Sales') AND type = 0 AND name IN (N'Sales_log', N'Sales'))
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'page check: DBCC CHECKDB ([Sales]) WITH PHYSICAL_ONLY reads every page of the copies (headers, checksums, allocation); the database is online meanwhile; it takes about as long as reading the database once.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    IF (SELECT page_verify_option_desc FROM sys.databases WHERE name = N'Sales') <> N'CHECKSUM'
    BEGIN
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'warning: [Sales] has PAGE_VERIFY ' + (SELECT page_verify_option_desc FROM sys.databases WHERE name = N'Sales') + N', not CHECKSUM: pages written before checksums were on carry none, so the check sees broken page structure but not every changed byte.';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    END;
    BEGIN TRY
        DBCC CHECKDB (N'Sales') WITH PHYSICAL_ONLY, NO_INFOMSGS;
        SET @checkdb_error = @@ERROR;
    END TRY
    BEGIN CATCH
        SELECT @checkdb_error = ERROR_NUMBER(), @checkdb_text = ERROR_MESSAGE();
    END CATCH;
    IF @checkdb_error <> 0
    BEGIN
        SET @msg = N'tierwise: post-check failed: DBCC CHECKDB ([Sales]) WITH PHYSICAL_ONLY reported error ' + CAST(@checkdb_error AS nvarchar(10)) + COALESCE(N': ' + @checkdb_text, N' (see the messages above)') + N'. [Sales] runs from the copies; the original files are untouched (F:\fc\Sales_log.ldf; F:\fc\Sales.mdf): do not delete them. To go back to them, see To recover in the header (SET OFFLINE, MODIFY FILE back, SET ONLINE); then copy again and rerun this script, or investigate the copies with DBCC CHECKDB.';
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
        RAISERROR(N'%s', 16, 1, @msg);
        SET NOEXEC ON;
        RETURN;
    END;
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'page check passed: DBCC CHECKDB WITH PHYSICAL_ONLY found no damaged page.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
END;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'post-check passed: [Sales] is online and its moved files are in L:\log\ and E:\data\ (tier flash); run marker cleared.';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'once the application is checked, delete the old copies: F:\fc\Sales_log.ldf; F:\fc\Sales.mdf';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
GO
DECLARE @tw_say nvarchar(2048);
DECLARE @tw_finished bit;
SET @tw_finished = 1;  -- not executed when a check stopped the script (NOEXEC)
SET NOEXEC OFF;
IF @tw_finished = 1
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'finished: the offline files [Sales_log], [Sales] of database [Sales] is on tier flash.';
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
