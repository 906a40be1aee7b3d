-- ================================================================================================
-- tierwise T-SQL migration script: FORWARD
-- ================================================================================================
-- Moves:      log file [Sales_log] of database [Sales]
-- Server:     SQLPROD01
-- Database:   Sales
-- From:       tier flash: L:\log\
-- To:         tier fc: F:\fc\
-- Object:     log_file Sales_log (key Sales/file/2)
-- Why:        log_write (TW202)
--             - TW202 transaction log: sequential writes that array cache absorbs (0.5 ms per write); flash only above 3,000 writes/s and 5.0 ms
--             - n/a average read, 0 reads/s, n/a average read latency, 485 writes/s, heat 174,549.1 I/O per GB-hour (8.29x the database average)
-- Predicted:  I/O wait 242.4 ms/s now -> 969.7 ms/s on tier fc
-- Size:       10.0 GB
-- Method:
--   offline, in two runs of this same script:
--     run 1: pre-checks, SET OFFLINE WITH ROLLBACK IMMEDIATE, prints what to copy where, stops.
--     MANUAL STEP: copy (do not move) the files, then run the script again.
--     run 2: checks the copies exist, MODIFY FILE (catalog), SET ONLINE, post-check.
--   Files:
--     [Sales_log]: L:\log\Sales_log.ldf -> F:\fc\Sales_log.ldf
-- Limits and notes:
--   - DOWNTIME: the database is offline from run 1 until run 2 brings it online.
--   - The primary data file and log files can never be removed (errors 5020/2555), so they are copied.
--   - Not for availability-group or mirrored databases (they cannot be taken offline).
--   - The SQL Server service account needs full control of the copies; delete the originals only after the post-check passed.
-- Generator:  tierwise (golden files) (migrations/1)
-- Generated:  2024-05-02T06:00:00Z
-- Plan:       sha256 2be42b579116d4c6852296dddcfcd7879829575c4862b1b7b2d48ca05d530506 (the forward plan; the rollback shows the same)
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
PRINT N'tierwise: forward: log file [Sales_log] of database [Sales]: tier flash -> fc (offline)';
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
IF EXISTS (SELECT 1 FROM sys.databases WHERE name = N'Sales' AND replica_id IS NOT NULL)
BEGIN
    SET @msg = N'tierwise: pre-check failed: [Sales] is in an availability group; a database in one cannot be taken offline. Move it per replica by hand (docs/running-scripts.md). Nothing was changed.';
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.database_mirroring WHERE database_id = DB_ID(N'Sales') AND mirroring_guid IS NOT NULL)
BEGIN
    SET @msg = N'tierwise: pre-check failed: [Sales] is mirrored; a database in one cannot be taken offline. Nothing was changed.';
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF OBJECT_ID(N'msdb.dbo.log_shipping_primary_databases') IS NOT NULL
    AND EXISTS (SELECT 1 FROM msdb.dbo.log_shipping_primary_databases WHERE primary_database = N'Sales')
BEGIN
    PRINT N'tierwise: warning: [Sales] is a log shipping primary; restores on the secondary need the new paths (RESTORE ... WITH MOVE) after this change.';
END;
-- every planned file is where the plan says: old place, or new place after an earlier run
IF NOT (EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID(N'Sales') AND name = N'Sales_log' AND LOWER(physical_name) = LOWER(N'L:\log\Sales_log.ldf')) OR EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID(N'Sales') AND name = N'Sales_log' AND LOWER(physical_name) = LOWER(N'F:\fc\Sales_log.ldf')))
BEGIN
    SET @msg = N'tierwise: pre-check failed: file [Sales_log] of [Sales] is neither at L:\log\Sales_log.ldf nor at F:\fc\Sales_log.ldf; the advice is out of date. Nothing was changed.';
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF (SELECT state_desc FROM sys.databases WHERE name = N'Sales') NOT IN (N'ONLINE', N'OFFLINE', N'RECOVERY_PENDING')
BEGIN
    SET @msg = N'tierwise: pre-check failed: database [Sales] is ' + (SELECT state_desc FROM sys.databases WHERE name = N'Sales') + N'; review it by hand. Nothing was changed.';
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF (SELECT state_desc FROM sys.databases WHERE name = N'Sales') = N'ONLINE' AND EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID(N'Sales') AND name = N'Sales_log' AND LOWER(physical_name) = LOWER(N'F:\fc\Sales_log.ldf'))
BEGIN
    PRINT N'tierwise: already done: [Sales] is online from F:\fc\; the steps below change nothing.';
END;
GO
USE [master];
DECLARE @msg nvarchar(2048);
IF NOT ((SELECT state_desc FROM sys.databases WHERE name = N'Sales') = N'ONLINE' AND (EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID(N'Sales') AND name = N'Sales_log' AND LOWER(physical_name) = LOWER(N'L:\log\Sales_log.ldf'))))
BEGIN
    PRINT N'tierwise: the database is not online on its old files: no run-1 checks';
    RETURN;
END;
PRINT N'tierwise: run 1: checking backups, the target directory, stale copies and free space';
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
DECLARE @dir_is_directory bit;
IF CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) >= 14
BEGIN
    PRINT N'tierwise: directory check with sys.dm_os_file_exists';
    EXEC sys.sp_executesql N'SELECT @d = CAST(file_is_a_directory AS bit) FROM sys.dm_os_file_exists(@p);',
        N'@p nvarchar(4000), @d bit OUTPUT', @p = N'F:\fc', @d = @dir_is_directory OUTPUT;
END
ELSE
BEGIN
    PRINT N'tierwise: directory check with xp_fileexist (SQL Server before 2017)';
    DECLARE @dir_probe TABLE (file_exists int, is_directory int, parent_exists int);
    INSERT INTO @dir_probe EXEC master.dbo.xp_fileexist N'F:\fc';
    SELECT @dir_is_directory = CAST(MAX(is_directory) AS bit) FROM @dir_probe;
END;
IF COALESCE(@dir_is_directory, 0) = 0
BEGIN
    SET @msg = N'tierwise: pre-check failed: the target directory F:\fc\ does not exist, or the SQL Server service account cannot see it. Create it and grant the service account full control. Nothing was changed.';
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
DECLARE @fe_probe TABLE (file_exists int, is_directory int, parent_exists int), @file_exists bit;
SET @file_exists = NULL;
IF CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) >= 14
    EXEC sys.sp_executesql N'SELECT @e = CAST(file_exists AS bit) FROM sys.dm_os_file_exists(@p);',
        N'@p nvarchar(4000), @e bit OUTPUT', @p = N'F:\fc\Sales_log.ldf', @e = @file_exists OUTPUT;
ELSE
BEGIN
    DELETE FROM @fe_probe;
    INSERT INTO @fe_probe EXEC master.dbo.xp_fileexist N'F:\fc\Sales_log.ldf';
    SELECT @file_exists = CAST(MAX(file_exists) AS bit) FROM @fe_probe;
END;
IF @file_exists = 1
BEGIN
    SET @msg = N'tierwise: pre-check failed: F:\fc\Sales_log.ldf already exists. A file there now is not a copy of the database as it is (it is still online); if it is the original from before an earlier move, it is out of date. Rename or delete it, then run again. Nothing was changed.';
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
WHERE LEFT(LOWER(N'F:\fc\'), LEN(vs.volume_mount_point)) = LOWER(vs.volume_mount_point)
ORDER BY LEN(vs.volume_mount_point) DESC;
IF @free_mb IS NULL AND CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) >= 15
BEGIN
    PRINT N'tierwise: free space from sys.dm_os_enumerate_fixed_drives';
    EXEC sys.sp_executesql N'SELECT @f = free_space_in_bytes / 1048576 FROM sys.dm_os_enumerate_fixed_drives WHERE UPPER(LEFT(fixed_drive_path, 1)) = UPPER(@d);',
        N'@d nchar(1), @f bigint OUTPUT', @d = N'F', @f = @free_mb OUTPUT;
END
ELSE IF @free_mb IS NULL
BEGIN
    PRINT N'tierwise: free space from xp_fixeddrives (SQL Server before 2019)';
    DECLARE @drives TABLE (drive nvarchar(5), mb_free bigint);
    INSERT INTO @drives EXEC master.dbo.xp_fixeddrives;
    SELECT @free_mb = mb_free FROM @drives WHERE UPPER(drive) = UPPER(N'F');
END;
IF @free_mb IS NULL
BEGIN
    PRINT N'tierwise: warning: cannot measure the free space under F:\fc\ (no database file on that volume yet); the copies of the files of [Sales] needs about ' + CAST(@need_mb AS nvarchar(20)) + N' MB there.';
END;
IF @free_mb < @need_mb
BEGIN
    SET @msg = N'tierwise: pre-check failed: the copies of the files of [Sales] needs ' + CAST(@need_mb AS nvarchar(20)) + N' MB under ' + N'F:\fc\' + N' (10 % headroom included), but only ' + CAST(@free_mb AS nvarchar(20)) + N' MB are free. Nothing was changed.';
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
GO
USE [master];
IF (SELECT state_desc FROM sys.databases WHERE name = N'Sales') = N'ONLINE' AND (EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID(N'Sales') AND name = N'Sales_log' AND LOWER(physical_name) = LOWER(N'L:\log\Sales_log.ldf')))
BEGIN
    PRINT N'tierwise: step 1: taking [Sales] offline (open transactions are rolled back)';
    ALTER DATABASE [Sales] SET OFFLINE WITH ROLLBACK IMMEDIATE;
END;
GO
USE [master];
DECLARE @msg nvarchar(2048), @missing int = 0;
DECLARE @fe_probe TABLE (file_exists int, is_directory int, parent_exists int), @copy_exists bit;
SET @copy_exists = NULL;
IF CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) >= 14
    EXEC sys.sp_executesql N'SELECT @e = CAST(file_exists AS bit) FROM sys.dm_os_file_exists(@p);',
        N'@p nvarchar(4000), @e bit OUTPUT', @p = N'F:\fc\Sales_log.ldf', @e = @copy_exists OUTPUT;
ELSE
BEGIN
    DELETE FROM @fe_probe;
    INSERT INTO @fe_probe EXEC master.dbo.xp_fileexist N'F:\fc\Sales_log.ldf';
    SELECT @copy_exists = CAST(MAX(file_exists) AS bit) FROM @fe_probe;
END;
IF COALESCE(@copy_exists, 0) = 0 SET @missing = @missing + 1;
IF (SELECT state_desc FROM sys.databases WHERE name = N'Sales') <> N'ONLINE' AND @missing > 0
BEGIN
    PRINT N'tierwise: ======================== MANUAL STEP ========================';
    PRINT N'tierwise: [Sales] is offline. Copy (do not move) these files; the SQL Server service account needs full control of the copies:';
    PRINT N'tierwise:     copy  L:\log\Sales_log.ldf';
    PRINT N'tierwise:       to  F:\fc\Sales_log.ldf';
    PRINT N'tierwise:       PowerShell: Copy-Item -LiteralPath ''L:\log\Sales_log.ldf'' -Destination ''F:\fc\Sales_log.ldf''';
    PRINT N'tierwise: Then run this same script again. To give up instead, run the rollback script.';
    PRINT N'tierwise: =============================================================';
    RAISERROR(N'%s', 16, 1, N'tierwise: MANUAL STEP: [Sales] is offline; copy the files listed above to F:\fc\, then run this script again.');
    SET NOEXEC ON;
    RETURN;
END;
GO
USE [master];
IF (SELECT state_desc FROM sys.databases WHERE name = N'Sales') IN (N'OFFLINE', N'RECOVERY_PENDING')
BEGIN
    IF NOT EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID(N'Sales') AND name = N'Sales_log' AND LOWER(physical_name) = LOWER(N'F:\fc\Sales_log.ldf'))
    BEGIN
        PRINT N'tierwise: step 2.1: pointing [Sales_log] at F:\fc\Sales_log.ldf';
        ALTER DATABASE [Sales] MODIFY FILE (NAME = N'Sales_log', FILENAME = N'F:\fc\Sales_log.ldf');
    END;
END;
GO
USE [master];
IF (SELECT state_desc FROM sys.databases WHERE name = N'Sales') IN (N'OFFLINE', N'RECOVERY_PENDING')
BEGIN
    PRINT N'tierwise: step 3: bringing [Sales] online from F:\fc\ (if this fails, fix the copies'' permissions and run again, or run the rollback script)';
    ALTER DATABASE [Sales] SET ONLINE;
END;
GO
USE [master];
DECLARE @msg nvarchar(2048);
IF NOT ((SELECT state_desc FROM sys.databases WHERE name = N'Sales') = N'ONLINE' AND EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID(N'Sales') AND name = N'Sales_log' AND LOWER(physical_name) = LOWER(N'F:\fc\Sales_log.ldf')))
BEGIN
    SET @msg = N'tierwise: post-check failed: [Sales] is not online from F:\fc\.';
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
PRINT N'tierwise: post-check passed: [Sales] is online and its moved files are in F:\fc\ (tier fc).';
PRINT N'tierwise: once the application is checked, delete the old copies: L:\log\Sales_log.ldf';
GO
DECLARE @tw_finished bit;
SET @tw_finished = 1;  -- not executed when a check stopped the script (NOEXEC)
SET NOEXEC OFF;
IF @tw_finished = 1
BEGIN
    PRINT N'tierwise: finished: log file [Sales_log] of database [Sales] is on tier fc.';
END
ELSE
BEGIN
    PRINT N'tierwise: STOPPED: a check or step above failed or asked for a manual step; later steps did not run.';
    IF OBJECT_ID(N'tempdb..#tierwise_stopped') IS NULL CREATE TABLE #tierwise_stopped (stopped bit);
END;
GO
