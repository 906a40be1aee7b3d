-- ================================================================================================
-- tierwise T-SQL migration script: ROLLBACK
-- ================================================================================================
-- Moves:      the tempdb files [templog]
-- Server:     SQLPROD01
-- Database:   tempdb
-- From:       tier fc: F:\fc\
-- To:         tier flash: T:\tempdb\
-- Undoes:     the forward move of tempdb/file/2 (tier flash -> fc)
-- Object:     log_file templog (key tempdb/file/2)
-- Why:        tempdb (TW302)
--             - TW302 tempdb: no evidence for flash (43 I/O per second, worst 0.8 ms; needs 1,000/s and 10.0 ms)
--             - 64.0 KB average read, 0 reads/s, 0.8 ms average read latency, 43 writes/s, heat 76,757.2 I/O per GB-hour (3.53x the database average)
-- Predicted:  I/O wait 34.1 ms/s now -> 85.4 ms/s on tier fc
-- Size:       2.0 GB
-- Method:
--   restart: MODIFY FILE for each tempdb file. TAKES EFFECT AT THE NEXT RESTART of the SQL Server
--   service; until then tempdb keeps using its current files. Nothing is copied (tempdb is rebuilt at start).
--   Files:
--     [templog]: F:\fc\templog.ldf -> T:\tempdb\templog.ldf
-- Limits and notes:
--   - RESTART REQUIRED. If the target directory is missing at restart, SQL Server does not start: the
--   - pre-check verifies it now; keep it in place.
-- Generator:  tierwise (golden files) (migrations/1)
-- Generated:  2024-05-02T06:00:00Z
-- Plan:       sha256 26641aae4b9e3c74f627321aed71352c17219723a6e2ec61608ddd95ebfb82aa (the forward plan; the rollback shows the same)
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
PRINT N'tierwise: rollback: the tempdb files [templog]: tier fc -> flash';
PRINT N'tierwise: RESTART REQUIRED: the new locations take effect at the next restart of the SQL Server service.';
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
IF DB_ID(N'tempdb') IS NULL
BEGIN
    SET @msg = N'tierwise: pre-check failed: database [tempdb] does not exist. Nothing was changed.';
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF NOT (EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID(N'tempdb') AND name = N'templog' AND LOWER(physical_name) = LOWER(N'F:\fc\templog.ldf')) OR EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID(N'tempdb') AND name = N'templog' AND LOWER(physical_name) = LOWER(N'T:\tempdb\templog.ldf')))
BEGIN
    SET @msg = N'tierwise: pre-check failed: tempdb file [templog] is neither configured at F:\fc\templog.ldf nor at T:\tempdb\templog.ldf; the advice is out of date. Nothing was changed.';
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
DECLARE @dir_is_directory bit;
IF CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) >= 14
BEGIN
    PRINT N'tierwise: directory check with sys.dm_os_file_exists';
    EXEC sys.sp_executesql N'SELECT @d = CAST(file_is_a_directory AS bit) FROM sys.dm_os_file_exists(@p);',
        N'@p nvarchar(4000), @d bit OUTPUT', @p = N'T:\tempdb', @d = @dir_is_directory OUTPUT;
END
ELSE
BEGIN
    PRINT N'tierwise: directory check with xp_fileexist (SQL Server before 2017)';
    DECLARE @dir_probe TABLE (file_exists int, is_directory int, parent_exists int);
    INSERT INTO @dir_probe EXEC master.dbo.xp_fileexist N'T:\tempdb';
    SELECT @dir_is_directory = CAST(MAX(is_directory) AS bit) FROM @dir_probe;
END;
IF COALESCE(@dir_is_directory, 0) = 0
BEGIN
    SET @msg = N'tierwise: pre-check failed: the target directory T:\tempdb\ does not exist, or the SQL Server service account cannot see it. Create it and grant the service account full control. Nothing was changed.';
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
GO
USE [master];
DECLARE @msg nvarchar(2048);
IF NOT (NOT EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID(N'tempdb') AND name = N'templog' AND LOWER(physical_name) = LOWER(N'T:\tempdb\templog.ldf')))
BEGIN
    PRINT N'tierwise: every file is configured at the target already: no free-space check needed';
    RETURN;
END;
DECLARE @free_mb bigint, @need_mb bigint;
SET @need_mb = CEILING((2048) * 1.10);
SELECT TOP (1) @free_mb = vs.available_bytes / 1048576
FROM sys.master_files AS mf
JOIN sys.databases AS d ON d.database_id = mf.database_id AND d.state = 0
CROSS APPLY sys.dm_os_volume_stats(mf.database_id, mf.file_id) AS vs
WHERE LEFT(LOWER(N'T:\tempdb\'), LEN(vs.volume_mount_point)) = LOWER(vs.volume_mount_point)
ORDER BY LEN(vs.volume_mount_point) DESC;
IF @free_mb IS NULL AND CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) >= 15
BEGIN
    PRINT N'tierwise: free space from sys.dm_os_enumerate_fixed_drives';
    EXEC sys.sp_executesql N'SELECT @f = free_space_in_bytes / 1048576 FROM sys.dm_os_enumerate_fixed_drives WHERE UPPER(LEFT(fixed_drive_path, 1)) = UPPER(@d);',
        N'@d nchar(1), @f bigint OUTPUT', @d = N'T', @f = @free_mb OUTPUT;
END
ELSE IF @free_mb IS NULL
BEGIN
    PRINT N'tierwise: free space from xp_fixeddrives (SQL Server before 2019)';
    DECLARE @drives TABLE (drive nvarchar(5), mb_free bigint);
    INSERT INTO @drives EXEC master.dbo.xp_fixeddrives;
    SELECT @free_mb = mb_free FROM @drives WHERE UPPER(drive) = UPPER(N'T');
END;
IF @free_mb IS NULL
BEGIN
    PRINT N'tierwise: warning: cannot measure the free space under T:\tempdb\ (no database file on that volume yet); tempdb (recreated at its configured size at start) needs about ' + CAST(@need_mb AS nvarchar(20)) + N' MB there.';
END;
IF @free_mb < @need_mb
BEGIN
    SET @msg = N'tierwise: pre-check failed: tempdb (recreated at its configured size at start) needs ' + CAST(@need_mb AS nvarchar(20)) + N' MB under ' + N'T:\tempdb\' + N' (10 % headroom included), but only ' + CAST(@free_mb AS nvarchar(20)) + N' MB are free. Nothing was changed.';
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
GO
USE [master];
IF EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID(N'tempdb') AND name = N'templog' AND LOWER(physical_name) = LOWER(N'T:\tempdb\templog.ldf'))
BEGIN
    PRINT N'tierwise: step 1: already done: [templog] is configured at T:\tempdb\templog.ldf';
END
ELSE
BEGIN
    PRINT N'tierwise: step 1: configuring [templog] at T:\tempdb\templog.ldf (used after the restart)';
    ALTER DATABASE [tempdb] MODIFY FILE (NAME = N'templog', FILENAME = N'T:\tempdb\templog.ldf');
END;
GO
USE [master];
DECLARE @msg nvarchar(2048);
IF NOT (EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID(N'tempdb') AND name = N'templog' AND LOWER(physical_name) = LOWER(N'T:\tempdb\templog.ldf')))
BEGIN
    SET @msg = N'tierwise: post-check failed: tempdb is not configured at T:\tempdb\.';
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM tempdb.sys.database_files WHERE name = N'templog' AND LOWER(physical_name) = LOWER(N'T:\tempdb\templog.ldf'))
BEGIN
    PRINT N'tierwise: post-check passed: tempdb is configured at and already running from T:\tempdb\.';
END
ELSE
BEGIN
    PRINT N'tierwise: post-check passed: tempdb is configured at T:\tempdb\. RESTART the SQL Server service in the change';
    PRINT N'tierwise: window for it to take effect; after the restart delete the old files: F:\fc\templog.ldf';
END;
GO
DECLARE @tw_finished bit;
SET @tw_finished = 1;  -- not executed when a check stopped the script (NOEXEC)
SET NOEXEC OFF;
IF @tw_finished = 1
BEGIN
    PRINT N'tierwise: finished: tempdb is configured on tier flash (takes effect at restart).';
END
ELSE
BEGIN
    PRINT N'tierwise: STOPPED: a check or step above failed or asked for a manual step; later steps did not run.';
    IF OBJECT_ID(N'tempdb..#tierwise_stopped') IS NULL CREATE TABLE #tierwise_stopped (stopped bit);
END;
GO
