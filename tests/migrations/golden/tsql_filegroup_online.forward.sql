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
--   online: for each file, ADD FILE on the target to the same filegroup, DBCC SHRINKFILE (EMPTYFILE)
--   moves its pages to the filegroup's other files, then REMOVE FILE. The database stays online.
--   Files:
--     [Orders, 2024 "hot"]: E:\data\Sales_Orders_2024.ndf -> F:\fc\Sales_Orders_2024.ndf (new logical name [Orders, 2024 "hot"_fc])
-- Limits and notes:
--   - EMPTYFILE is fully logged, slow on large files and fragments indexes: take log backups while it runs.
--   - With several old files some pages move more than once (proportional fill).
--   - Files cannot be added or removed while a BACKUP runs; run again after it.
--   - The new files get new logical names (the rollback restores the original names and paths).
-- Generator:  tierwise (golden files) (migrations/1)
-- Generated:  2024-05-02T06:00:00Z
-- Plan:       sha256 242d5e3971f645e680fd57772782b6c1ee7d58ab41672671ea2b03009941d44d (the forward plan; the rollback shows the same)
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
PRINT N'tierwise: forward: filegroup [FG_ORDERS_2024] of database [Sales] (1 file(s)): tier flash -> fc';
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
IF EXISTS (SELECT 1 FROM sys.databases WHERE name = N'Sales' AND replica_id IS NOT NULL)
BEGIN
    SET @msg = N'tierwise: pre-check failed: [Sales] is in an availability group; the file added on the primary is replayed on the secondaries, where the path must exist. Move it per replica by hand (docs/running-scripts.md). Nothing was changed.';
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.database_mirroring WHERE database_id = DB_ID(N'Sales') AND mirroring_guid IS NOT NULL)
BEGIN
    SET @msg = N'tierwise: pre-check failed: [Sales] is mirrored; the file added on the primary is replayed on the secondaries, where the path must exist. Nothing was changed.';
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF OBJECT_ID(N'msdb.dbo.log_shipping_primary_databases') IS NOT NULL
    AND EXISTS (SELECT 1 FROM msdb.dbo.log_shipping_primary_databases WHERE primary_database = N'Sales')
BEGIN
    PRINT N'tierwise: warning: [Sales] is a log shipping primary; restores on the secondary need the new paths (RESTORE ... WITH MOVE) after this change.';
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
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
SELECT TOP (1) @msg = N'tierwise: pre-check failed: file ' + QUOTENAME(p.from_name) + N' is not in the database; the advice is out of date. Nothing was changed.'
FROM #tw_files AS p
WHERE NOT EXISTS (SELECT 1 FROM sys.database_files AS df WHERE df.name IN (p.from_name, p.to_name));
IF @msg IS NOT NULL
BEGIN
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
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF NOT EXISTS (SELECT 1 FROM #tw_files AS p JOIN sys.database_files AS df ON df.name = p.from_name)
BEGIN
    PRINT N'tierwise: already done: every file of [FG_ORDERS_2024] of [Sales] is on tier fc; the steps below change nothing.';
END;
GO
USE [Sales];
DECLARE @msg nvarchar(2048);
IF NOT EXISTS (SELECT 1 FROM #tw_files AS p WHERE NOT EXISTS (SELECT 1 FROM sys.database_files AS df WHERE df.name = p.to_name))
BEGIN
    PRINT N'tierwise: every new file exists: no directory or free-space check needed';
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
    PRINT N'tierwise: warning: cannot measure the free space under F:\fc\ (no database file on that volume yet); the new files of [FG_ORDERS_2024] of [Sales] needs about ' + CAST(@need_mb AS nvarchar(20)) + N' MB there.';
END;
IF @free_mb < @need_mb
BEGIN
    SET @msg = N'tierwise: pre-check failed: the new files of [FG_ORDERS_2024] of [Sales] needs ' + CAST(@need_mb AS nvarchar(20)) + N' MB under ' + N'F:\fc\' + N' (10 % headroom included), but only ' + CAST(@free_mb AS nvarchar(20)) + N' MB are free. Nothing was changed.';
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
GO
USE [Sales];
IF EXISTS (SELECT 1 FROM sys.database_files WHERE name = N'Orders, 2024 "hot"_fc')
BEGIN
    PRINT N'tierwise: step 1a: already done: file [Orders, 2024 "hot"_fc] exists at F:\fc\Sales_Orders_2024.ndf';
END
ELSE
BEGIN
    PRINT N'tierwise: step 1a: adding file [Orders, 2024 "hot"_fc] at F:\fc\Sales_Orders_2024.ndf to filegroup [FG_ORDERS_2024]';
    ALTER DATABASE [Sales] ADD FILE (NAME = N'Orders, 2024 "hot"_fc', FILENAME = N'F:\fc\Sales_Orders_2024.ndf', SIZE = 102400MB, FILEGROWTH = 1024MB) TO FILEGROUP [FG_ORDERS_2024];
END;
GO
USE [Sales];
IF EXISTS (SELECT 1 FROM sys.database_files WHERE name = N'Orders, 2024 "hot"')
BEGIN
    PRINT N'tierwise: step 1b: emptying file [Orders, 2024 "hot"] into the other files of [FG_ORDERS_2024] (DBCC SHRINKFILE EMPTYFILE; progress in sys.dm_exec_requests.percent_complete)';
    DBCC SHRINKFILE (N'Orders, 2024 "hot"', EMPTYFILE) WITH NO_INFOMSGS;
END
ELSE
BEGIN
    PRINT N'tierwise: step 1b: already done: file [Orders, 2024 "hot"] is no longer in the database';
END;
GO
USE [Sales];
IF EXISTS (SELECT 1 FROM sys.database_files WHERE name = N'Orders, 2024 "hot"')
BEGIN
    PRINT N'tierwise: step 1c: removing the empty file [Orders, 2024 "hot"] (E:\data\Sales_Orders_2024.ndf)';
    ALTER DATABASE [Sales] REMOVE FILE [Orders, 2024 "hot"];
END
ELSE
BEGIN
    PRINT N'tierwise: step 1c: already done: file [Orders, 2024 "hot"] is no longer in the database';
END;
GO
USE [Sales];
DECLARE @msg nvarchar(2048);
SELECT TOP (1) @msg = N'tierwise: post-check failed: file ' + QUOTENAME(df.name) + N' of filegroup '
    + N'[FG_ORDERS_2024]' + N' is at ' + df.physical_name + N', which is not a planned new file.'
FROM sys.database_files AS df
WHERE df.data_space_id = FILEGROUP_ID(N'FG_ORDERS_2024')
    AND NOT EXISTS (SELECT 1 FROM #tw_files AS p WHERE p.to_name = df.name AND LOWER(df.physical_name) = LOWER(p.to_path));
IF @msg IS NOT NULL
BEGIN
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
SELECT TOP (1) @msg = N'tierwise: post-check failed: the planned file ' + QUOTENAME(p.to_name) + N' is missing.'
FROM #tw_files AS p WHERE NOT EXISTS (SELECT 1 FROM sys.database_files AS df WHERE df.name = p.to_name);
IF @msg IS NOT NULL
BEGIN
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF @msg IS NULL
BEGIN
    PRINT N'tierwise: post-check passed: every file of [FG_ORDERS_2024] of [Sales] is in F:\fc\ (tier fc).';
END;
GO
DECLARE @tw_finished bit;
SET @tw_finished = 1;  -- not executed when a check stopped the script (NOEXEC)
SET NOEXEC OFF;
IF @tw_finished = 1
BEGIN
    PRINT N'tierwise: finished: filegroup [FG_ORDERS_2024] of database [Sales] (1 file(s)) is on tier fc.';
END
ELSE
BEGIN
    PRINT N'tierwise: STOPPED: a check or step above failed or asked for a manual step; later steps did not run.';
    IF OBJECT_ID(N'tempdb..#tierwise_stopped') IS NULL CREATE TABLE #tierwise_stopped (stopped bit);
END;
GO
