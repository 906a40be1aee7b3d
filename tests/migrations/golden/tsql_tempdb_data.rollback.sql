-- ================================================================================================
-- tierwise T-SQL migration script: ROLLBACK
-- ================================================================================================
-- Moves:      the tempdb files [tempdev]
-- Server:     SQLPROD01
-- Database:   tempdb
-- From:       tier fc: F:\fc\SQLPROD01\tempdb\
-- To:         tier flash: T:\tempdb\
-- Undoes:     the forward move of tempdb/data (tier flash -> fc)
-- Object:     tempdb tempdb (key tempdb/data)
-- Why:        tempdb (TW302)
--             - TW302 tempdb: no evidence for flash (18 I/O per second, worst 2.0 ms; needs 1,000/s and 10.0 ms)
--             - 64.0 KB average read, 6 reads/s, 0.8 ms average read latency, 11 writes/s, heat 8,020.4 I/O per GB-hour (0.37x the database average)
-- Predicted:  I/O wait 28.0 ms/s now -> 61.0 ms/s on tier fc
-- Size:       8.0 GB
-- Method:
--   restart: MODIFY FILE for each tempdb file. TAKES EFFECT AT THE NEXT RESTART of the SQL Server
--   service; until then tempdb keeps using its current files. Nothing is copied (tempdb is rebuilt at start).
--   Files:
--     [tempdev]: F:\fc\SQLPROD01\tempdb\tempdb.mdf -> T:\tempdb\tempdb.mdf
-- Limits and notes:
--   - RESTART REQUIRED. If the target directory is missing at restart, SQL Server does not start: the pre-check verifies it now; keep it in place.
--   - If the instance does not start after the restart, the script's last lines say how to recover (start it with -f -T3608, MODIFY FILE back).
--   - The plan must name every tempdb file of the kind it moves (data or log): the script stops when sys.master_files lists another one, which would stay on the old tier.
--   - Permissions: ALTER on tempdb (MODIFY FILE) and VIEW SERVER STATE (sys.dm_os_volume_stats: an error without it); the directory probe before SQL Server 2017 uses xp_fileexist (undocumented): run as sysadmin there. Restarting the service needs Windows (or Linux) service rights.
-- Operations:
--   Duration:    Seconds now (catalog changes). The move happens at the next restart of the SQL Server service, which recreates these tempdb files (8.0 GB) at their configured size: data files in seconds with instant file initialization, a log file is zeroed (minutes for a large one).
--   Log volume:  Next to none: MODIFY FILE changes the catalog in master.
--   Blocking:    None now. The restart disconnects every session of the instance: plan it in a change window.
--   Backups:     tempdb is never backed up. Backup and other Agent jobs running at the restart fail: restart outside their windows.
--   To abort:    Cancel at any point: each MODIFY FILE is checked first, so the script is safe to run again; before the restart the rollback script sets the old paths back and nothing else happened.
--   To recover:  If the instance does not start after the restart, start it with NET START MSSQLSERVER /f /T3608, MODIFY FILE tempdb back to the old paths and restart: the script's last lines print the exact statements (Microsoft Learn: Move system databases, failure recovery).
-- Generator:  tierwise (golden files) (migrations/1)
-- Generated:  2024-05-02T06:00:00Z
-- Plan:       sha256 7850268ecf80ebdf5b0240e57ce6730fbe49736f5c3d7bdd95387c0a578f8edf (the forward plan; the rollback shows the same)
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
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'rollback: the tempdb files [tempdev]: tier fc -> flash';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'RESTART REQUIRED: the new locations take effect at the next restart of the SQL Server service.';
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
IF DB_ID(N'tempdb') IS NULL
BEGIN
    SET @msg = N'tierwise: pre-check failed: database [tempdb] does not exist. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF NOT (EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID(N'tempdb') AND name = N'tempdev' AND LOWER(physical_name) = LOWER(N'F:\fc\SQLPROD01\tempdb\tempdb.mdf')) OR EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID(N'tempdb') AND name = N'tempdev' AND LOWER(physical_name) = LOWER(N'T:\tempdb\tempdb.mdf')))
BEGIN
    SET @msg = N'tierwise: pre-check failed: tempdb file [tempdev] is neither configured at F:\fc\SQLPROD01\tempdb\tempdb.mdf nor at T:\tempdb\tempdb.mdf; the advice is out of date. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
DECLARE @missed nvarchar(1024);
SET @missed = N'';
-- the planned files' kinds (0 data, 1 log): every tempdb file of those kinds must be in the plan
SELECT @missed = @missed + N' ' + QUOTENAME(mf.name) + N' (' + mf.type_desc + N') at ' + mf.physical_name + N';'
FROM sys.master_files AS mf
WHERE mf.database_id = DB_ID(N'tempdb') AND mf.name NOT IN (N'tempdev')
    AND mf.type IN (SELECT p.type FROM sys.master_files AS p WHERE p.database_id = DB_ID(N'tempdb') AND p.name IN (N'tempdev'));
IF @missed <> N''
BEGIN
    SET @msg = N'tierwise: pre-check failed: the plan does not move every tempdb file of its kind; these would stay where they are:' + @missed + N' Regenerate the advice and this script (or move them by hand with the same ALTER DATABASE [tempdb] MODIFY FILE). Nothing was changed.';
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
        N'@p nvarchar(4000), @d bit OUTPUT', @p = N'T:\tempdb', @d = @dir_is_directory OUTPUT;
END
ELSE
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'directory check with xp_fileexist (SQL Server before 2017)';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    DECLARE @dir_probe TABLE (file_exists int, is_directory int, parent_exists int);
    INSERT INTO @dir_probe EXEC master.dbo.xp_fileexist N'T:\tempdb';
    SELECT @dir_is_directory = CAST(MAX(is_directory) AS bit) FROM @dir_probe;
END;
IF COALESCE(@dir_is_directory, 0) = 0
BEGIN
    SET @msg = N'tierwise: pre-check failed: the target directory T:\tempdb\ does not exist, or the SQL Server service account cannot see it. Create it and grant the service account full control. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF CAST(SERVERPROPERTY('IsClustered') AS int) = 1
BEGIN
    DECLARE @nodes nvarchar(2048), @shared bit;
    SET @nodes = N'';
    SELECT @nodes = @nodes + CASE WHEN @nodes = N'' THEN N'' ELSE N', ' END + NodeName + N' (' + status_description + CASE WHEN is_current_owner = 1 THEN N', runs the instance now' ELSE N'' END + N')' FROM sys.dm_os_cluster_nodes;
    IF CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) >= 12
        EXEC sys.sp_executesql N'SELECT @s = CASE WHEN EXISTS (SELECT 1 FROM sys.dm_io_cluster_valid_path_names WHERE LEFT(LOWER(@t), LEN(path_name)) = LOWER(path_name)) THEN 1 ELSE 0 END;',
            N'@t nvarchar(4000), @s bit OUTPUT', @t = N'T:\tempdb\', @s = @shared OUTPUT;
    ELSE
        EXEC sys.sp_executesql N'SELECT @s = CASE WHEN EXISTS (SELECT 1 FROM sys.dm_io_cluster_shared_drives WHERE UPPER(LEFT(@t, 1)) = UPPER(LEFT(DriveName, 1))) THEN 1 ELSE 0 END;',
            N'@t nvarchar(4000), @s bit OUTPUT', @t = N'T:\tempdb\', @s = @shared OUTPUT;
    IF @shared = 1
    BEGIN
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'failover cluster instance (nodes: ' + @nodes + N'): T:\tempdb\ is on a shared disk of its resource group, which moves with the instance.';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    END
    ELSE
    BEGIN
        SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'warning: failover cluster instance (nodes: ' + @nodes + N'): T:\tempdb\ is not on a shared disk of this instance (sys.dm_io_cluster_valid_path_names), so it is a local disk of each node. tempdb may live there only if the same directory exists, with full control for the SQL Server service account, on EVERY node: this script can check only the node it runs on. Create T:\tempdb\ on each node listed before the restart, or the instance does not start on a node that lacks it after a failover.';
        RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    END;
END;
DECLARE @fe_probe TABLE (file_exists int, is_directory int, parent_exists int), @target_exists bit;
SET @target_exists = NULL;
IF CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) >= 14
    EXEC sys.sp_executesql N'SELECT @e = CAST(file_exists AS bit) FROM sys.dm_os_file_exists(@p);',
        N'@p nvarchar(4000), @e bit OUTPUT', @p = N'T:\tempdb\tempdb.mdf', @e = @target_exists OUTPUT;
ELSE
BEGIN
    DELETE FROM @fe_probe;
    INSERT INTO @fe_probe EXEC master.dbo.xp_fileexist N'T:\tempdb\tempdb.mdf';
    SELECT @target_exists = CAST(MAX(file_exists) AS bit) FROM @fe_probe;
END;
IF @target_exists = 1 AND NOT EXISTS (SELECT 1 FROM tempdb.sys.database_files WHERE name = N'tempdev' AND LOWER(physical_name) = LOWER(N'T:\tempdb\tempdb.mdf'))
BEGIN
    SET @msg = N'tierwise: pre-check failed: a file already exists at T:\tempdb\tempdb.mdf and this instance''s tempdb does not run from it: another instance''s tempdb file (instances must not share one tempdb directory: give each its own, e.g. <tier directory>\<instance>\tempdb\) or a leftover. At the restart SQL Server would take it over, or fail to start while another instance holds it. If it is a leftover of this instance, delete it; otherwise choose another directory. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.master_files WHERE database_id <> DB_ID(N'tempdb') AND LOWER(physical_name) = LOWER(N'T:\tempdb\tempdb.mdf'))
BEGIN
    SET @msg = N'tierwise: pre-check failed: T:\tempdb\tempdb.mdf is a file of another database of this instance (sys.master_files). Nothing was changed.';
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
IF NOT (NOT EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID(N'tempdb') AND name = N'tempdev' AND LOWER(physical_name) = LOWER(N'T:\tempdb\tempdb.mdf')))
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'every file is configured at the target already: no free-space check needed';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RETURN;
END;
DECLARE @free_mb bigint, @need_mb bigint;
SET @need_mb = CEILING((8192) * 1.10);
SELECT TOP (1) @free_mb = vs.available_bytes / 1048576
FROM sys.master_files AS mf
JOIN sys.databases AS d ON d.database_id = mf.database_id AND d.state = 0
CROSS APPLY sys.dm_os_volume_stats(mf.database_id, mf.file_id) AS vs
WHERE LEFT(LOWER(N'T:\tempdb\'), LEN(vs.volume_mount_point)) = LOWER(vs.volume_mount_point)
ORDER BY LEN(vs.volume_mount_point) DESC;
IF @free_mb IS NULL AND CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) >= 15
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'free space from sys.dm_os_enumerate_fixed_drives';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    EXEC sys.sp_executesql N'SELECT @f = free_space_in_bytes / 1048576 FROM sys.dm_os_enumerate_fixed_drives WHERE UPPER(LEFT(fixed_drive_path, 1)) = UPPER(@d);',
        N'@d nchar(1), @f bigint OUTPUT', @d = N'T', @f = @free_mb OUTPUT;
END
ELSE IF @free_mb IS NULL
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'free space from xp_fixeddrives (SQL Server before 2019)';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    DECLARE @drives TABLE (drive nvarchar(5), mb_free bigint);
    INSERT INTO @drives EXEC master.dbo.xp_fixeddrives;
    SELECT @free_mb = mb_free FROM @drives WHERE UPPER(drive) = UPPER(N'T');
END;
IF @free_mb IS NULL
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'warning: cannot measure the free space under T:\tempdb\ (no database file on that volume yet); tempdb (recreated at its configured size at start) needs about ' + CAST(@need_mb AS nvarchar(20)) + N' MB there.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
END;
IF @free_mb < @need_mb
BEGIN
    SET @msg = N'tierwise: pre-check failed: tempdb (recreated at its configured size at start) needs ' + CAST(@need_mb AS nvarchar(20)) + N' MB under ' + N'T:\tempdb\' + N' (10 % headroom included), but only ' + CAST(@free_mb AS nvarchar(20)) + N' MB are free. Nothing was changed.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
GO
DECLARE @tw_say nvarchar(2048);
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'plan: Moves: the tempdb files [tempdev]';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'plan: Server: SQLPROD01';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'plan: Database: tempdb';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'plan: From: tier fc: F:\fc\SQLPROD01\tempdb\';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'plan: To: tier flash: T:\tempdb\';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'plan: method: restart: MODIFY FILE for each tempdb file. TAKES EFFECT AT THE NEXT RESTART of the SQL Server service; until then tempdb keeps using its current files. Nothing is copied (tempdb is rebuilt at start).';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'plan: file [tempdev]: F:\fc\SQLPROD01\tempdb\tempdb.mdf -> T:\tempdb\tempdb.mdf';
RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'estimated duration: Seconds now (catalog changes). The move happens at the next restart of the SQL Server service, which recreates these tempdb files (8.0 GB) at their configured size: data files in seconds with instant file initialization, a log file is zeroed (minutes for a large one).';
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
IF EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID(N'tempdb') AND name = N'tempdev' AND LOWER(physical_name) = LOWER(N'T:\tempdb\tempdb.mdf'))
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'step 1: already done: [tempdev] is configured at T:\tempdb\tempdb.mdf';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
END
ELSE
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'step 1: configuring [tempdev] at T:\tempdb\tempdb.mdf (used after the restart)';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    ALTER DATABASE [tempdb] MODIFY FILE (NAME = N'tempdev', FILENAME = N'T:\tempdb\tempdb.mdf');
END;
GO
DECLARE @tw_say nvarchar(2048);
USE [master];
DECLARE @msg nvarchar(2048);
IF NOT (EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID(N'tempdb') AND name = N'tempdev' AND LOWER(physical_name) = LOWER(N'T:\tempdb\tempdb.mdf')))
BEGIN
    SET @msg = N'tierwise: post-check failed: tempdb is not configured at T:\tempdb\.';
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'STOPPED: the error below stopped the script; the later steps do not run. Every step checks first, so run the script again once the cause is fixed.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM tempdb.sys.database_files WHERE name = N'tempdev' AND LOWER(physical_name) = LOWER(N'T:\tempdb\tempdb.mdf'))
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'post-check passed: tempdb is configured at and already running from T:\tempdb\.';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
END
ELSE
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'post-check passed: tempdb is configured at T:\tempdb\. RESTART the SQL Server service in the change';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'window for it to take effect; after the restart delete the old files: F:\fc\SQLPROD01\tempdb\tempdb.mdf';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'IF THE INSTANCE DOES NOT START after the restart (target directory missing or not writable by the service account; see the error log): start it with NET START MSSQLSERVER /f /T3608 (a named instance: NET START MSSQL$<instance> /f /T3608; the parameters are case sensitive),';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'  connect (single-user: stop SQL Server Agent first) with sqlcmd -S SQLPROD01 -E and run:';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'      ALTER DATABASE [tempdb] MODIFY FILE (NAME = N''tempdev'', FILENAME = N''F:\fc\SQLPROD01\tempdb\tempdb.mdf'');';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'  then NET STOP MSSQLSERVER, then NET START MSSQLSERVER. Fix the target and run this script again later (Microsoft Learn: Move system databases, failure recovery procedure).';
    RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;
END;
GO
DECLARE @tw_say nvarchar(2048);
DECLARE @tw_finished bit;
SET @tw_finished = 1;  -- not executed when a check stopped the script (NOEXEC)
SET NOEXEC OFF;
IF @tw_finished = 1
BEGIN
    SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z ' + N'finished: tempdb is configured on tier flash (takes effect at restart).';
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
