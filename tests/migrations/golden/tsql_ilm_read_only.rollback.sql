-- ================================================================================================
-- tierwise T-SQL migration script: ROLLBACK
-- ================================================================================================
-- Moves:      filegroup [FG_ORDERS_2024_sata] of [Sales]: mark READ_WRITE
-- Server:     SQLPROD01
-- Database:   Sales
-- From:       tier sata: (in place)
-- To:         tier sata: (in place)
-- Undoes:     the forward move of Sales/filegroup/FG_ORDERS_2024_sata (tier sata -> sata)
-- Object:     filegroup FG_ORDERS_2024_sata (key Sales/filegroup/FG_ORDERS_2024_sata)
-- Why:        ilm (read-only)
--             - older than 8 months: sata and read-only
-- Predicted:  I/O wait n/a now -> n/a on tier sata
-- Size:       0.8 GB
-- Method:
--   ALTER DATABASE ... MODIFY FILEGROUP ... READ_WRITE; needs exclusive access to the database.
-- Limits and notes:
--   - The script refuses to run while other sessions use the database (it does not disconnect them).
--   - A READ_ONLY filegroup rejects every write: only for data that no longer changes.
--   - ILM read-only mark: the filegroup may hold only [dbo].[Orders] partition 3 (all indexes); the script checks that and stops when anything else is in it. Moving data into or out of it later needs READ_WRITE first (the rollback).
--   - ILM: the plan freezes these partitions after their move; READ_ONLY needs exclusive access to the database (the script stops while other sessions use it)
-- Operations:
--   Duration:    Seconds: one ALTER DATABASE ... MODIFY FILEGROUP, a metadata change whatever the filegroup's size.
--   Log volume:  A few log records.
--   Blocking:    Needs exclusive access to [Sales]: the script stops while any other session uses it (it never disconnects them); run it in a window where the applications are stopped.
--   Backups:     Run it between backup jobs: a BACKUP of [Sales] competes for the exclusive access the change needs. The filegroup is read-write again: a partial-backup schedule (READ_WRITE_FILEGROUPS) includes it from now on; take a full backup so every restore path has it.
--   To abort:    Cancel the query: the change is one statement, done or not done; the script checks first and is safe to run again.
--   To recover:  Nothing is half-done: run this script again, or the forward script (MODIFY FILEGROUP READ_ONLY) to go back.
-- Generator:  tierwise (golden files) (migrations/1)
-- Generated:  2024-05-02T06:00:00Z
-- Plan:       sha256 bad727f899494b207452ecda16e316ac74ef6f3fd9c4c9b9a0fdf286bf4919af (the forward plan; the rollback shows the same)
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
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'rollback: filegroup [FG_ORDERS_2024_sata] of [Sales] -> READ_WRITE';
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
IF (SELECT is_read_only FROM [Sales].sys.filegroups WHERE name = N'FG_ORDERS_2024_sata') IS NULL
BEGIN
    SET @msg = N'tierwise: pre-check failed: filegroup [FG_ORDERS_2024_sata] of [Sales] does not exist. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM [Sales].sys.filegroups WHERE name = N'FG_ORDERS_2024_sata' AND (data_space_id = 1 OR is_default = 1))
BEGIN
    SET @msg = N'tierwise: pre-check failed: filegroup [FG_ORDERS_2024_sata] of [Sales] is PRIMARY or the default filegroup, which cannot be read-only. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
GO
DECLARE @tw_say nvarchar(2048);
USE [master];
DECLARE @msg nvarchar(2048), @others int;
IF (SELECT is_read_only FROM [Sales].sys.filegroups WHERE name = N'FG_ORDERS_2024_sata') = 0
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'already done: filegroup [FG_ORDERS_2024_sata] of [Sales] is READ_WRITE.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
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
SELECT @others = COUNT(*) FROM (
    SELECT session_id FROM sys.dm_exec_sessions WHERE database_id = DB_ID(N'Sales')
    UNION
    SELECT request_session_id FROM sys.dm_tran_locks WHERE resource_type = N'DATABASE' AND resource_database_id = DB_ID(N'Sales')
) AS u (session_id) WHERE session_id <> @@SPID;
IF @others > 0
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'warning: READ_WRITE needs exclusive access; ' + CAST(@others AS nvarchar(10)) + N' other session(s) use the database now. Step 1 refuses while any does: stop the applications (and let backups finish) before the window.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
END;
GO
DECLARE @tw_say nvarchar(2048);
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'plan: Moves: filegroup [FG_ORDERS_2024_sata] of [Sales]: mark READ_WRITE';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'plan: Server: SQLPROD01';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'plan: Database: Sales';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'plan: From: tier sata: (in place)';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'plan: To: tier sata: (in place)';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'plan: method: ALTER DATABASE ... MODIFY FILEGROUP ... READ_WRITE; needs exclusive access to the database.';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'estimated duration: Seconds: one ALTER DATABASE ... MODIFY FILEGROUP, a metadata change whatever the filegroup''s size.';
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
DECLARE @msg nvarchar(2048), @others int;
IF (SELECT is_read_only FROM [Sales].sys.filegroups WHERE name = N'FG_ORDERS_2024_sata') = 0
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'already done: filegroup [FG_ORDERS_2024_sata] of [Sales] is READ_WRITE.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
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
SELECT @others = COUNT(*) FROM (
    SELECT session_id FROM sys.dm_exec_sessions WHERE database_id = DB_ID(N'Sales')
    UNION
    SELECT request_session_id FROM sys.dm_tran_locks WHERE resource_type = N'DATABASE' AND resource_database_id = DB_ID(N'Sales')
) AS u (session_id) WHERE session_id <> @@SPID;
IF @others > 0
BEGIN
    SET @msg = N'tierwise: pre-check failed: READ_WRITE needs exclusive access, but ' + CAST(@others AS nvarchar(10)) + N' other session(s) use the database (a BACKUP or DBCC of it counts, even one started from master); stop them or let the backup finish, and run again. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'step 1: marking filegroup [FG_ORDERS_2024_sata] of [Sales] READ_WRITE';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
IF (SELECT is_read_only FROM [Sales].sys.filegroups WHERE name = N'FG_ORDERS_2024_sata') <> 0
    ALTER DATABASE [Sales] MODIFY FILEGROUP [FG_ORDERS_2024_sata] READ_WRITE;
GO
DECLARE @tw_say nvarchar(2048);
USE [master];
DECLARE @msg nvarchar(2048);
IF (SELECT is_read_only FROM [Sales].sys.filegroups WHERE name = N'FG_ORDERS_2024_sata') <> 0
BEGIN
    SET @msg = N'tierwise: post-check failed: filegroup [FG_ORDERS_2024_sata] of [Sales] is not READ_WRITE.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'post-check passed: filegroup [FG_ORDERS_2024_sata] of [Sales] is READ_WRITE.';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
GO
DECLARE @tw_say nvarchar(2048);
DECLARE @tw_finished bit;
SET @tw_finished = 1;  -- not executed when a check stopped the script (NOEXEC)
SET NOEXEC OFF;
IF @tw_finished = 1
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'finished: filegroup [FG_ORDERS_2024_sata] of [Sales] is READ_WRITE.';
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
