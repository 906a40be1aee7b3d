-- ================================================================================================
-- tierwise T-SQL migration script: FORWARD
-- ================================================================================================
-- Moves:      filegroup [FG]]'x /<U+002A> y] of database [Sales]]; DROP DATABASE x; --] (2 file(s))
-- Server:     SQLPROD01
-- Database:   Sales]; DROP DATABASE x; --
-- From:       tier flash: E:\data\
-- To:         tier sata: S:\sata\
-- Object:     filegroup FG]'x /<U+002A> y (key Sales]; DROP DATABASE x; --/filegroup/FG]'x /<U+002A> y)
-- Why:        cold (TW401)
--             - TW401 cold: 0.1 I/O per second; the cheapest tier serves it
--             - (test fixture: names that try to break out of their quoting: ]; ' -- /<U+002A> GO %s $ {})
-- Predicted:  I/O wait 1.0 ms/s now -> 3.0 ms/s on tier sata
-- Size:       1.0 GB
-- Method:
--   online: for each file, ADD FILE on the target to the same filegroup, DBCC SHRINKFILE (EMPTYFILE)
--   moves its pages to the filegroup's other files, then REMOVE FILE. The database stays online.
--   Files:
--     [GO]: E:\data\it's [odd]; --x.ndf -> S:\sata\it's [odd]; --x.ndf (new logical name [GO_sata])
--     [Ünïcödé 日本 %d%s]: E:\data\ünï 日本.ndf -> S:\sata\ünï 日本.ndf (new logical name [Ünïcödé 日本 %d%s_sata])
-- Limits and notes:
--   - EMPTYFILE is fully logged, slow on large files and fragments indexes: take log backups while it runs.
--   - With several old files some pages move more than once (proportional fill).
--   - Files cannot be added or removed while a BACKUP runs; run again after it.
--   - The new files get new logical names (the rollback restores the original names and paths).
-- Generator:  tierwise (golden files) (migrations/1)
-- Generated:  2024-05-02T06:00:00Z
-- Plan:       sha256 bb5881a9fe98b48afaaeddb747a975e827be1d1adc9a0792e293b44b072f66a7 (the forward plan; the rollback shows the same)
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
PRINT N'tierwise: forward: filegroup [FG]]''x /* y] of database [Sales]]; DROP DATABASE x; --] (2 file(s)): tier flash -> sata';
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
IF DB_ID(N'Sales]; DROP DATABASE x; --') IS NULL
BEGIN
    SET @msg = N'tierwise: pre-check failed: database [Sales]]; DROP DATABASE x; --] does not exist. Nothing was changed.';
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF DATABASEPROPERTYEX(N'Sales]; DROP DATABASE x; --', 'Status') <> N'ONLINE'
BEGIN
    SET @msg = N'tierwise: pre-check failed: database [Sales]]; DROP DATABASE x; --] is not ONLINE. Nothing was changed.';
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.databases WHERE name = N'Sales]; DROP DATABASE x; --' AND replica_id IS NOT NULL)
BEGIN
    SET @msg = N'tierwise: pre-check failed: [Sales]]; DROP DATABASE x; --] is in an availability group; the file added on the primary is replayed on the secondaries, where the path must exist. Move it per replica by hand (docs/running-scripts.md). Nothing was changed.';
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF EXISTS (SELECT 1 FROM sys.database_mirroring WHERE database_id = DB_ID(N'Sales]; DROP DATABASE x; --') AND mirroring_guid IS NOT NULL)
BEGIN
    SET @msg = N'tierwise: pre-check failed: [Sales]]; DROP DATABASE x; --] is mirrored; the file added on the primary is replayed on the secondaries, where the path must exist. Nothing was changed.';
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF OBJECT_ID(N'msdb.dbo.log_shipping_primary_databases') IS NOT NULL
    AND EXISTS (SELECT 1 FROM msdb.dbo.log_shipping_primary_databases WHERE primary_database = N'Sales]; DROP DATABASE x; --')
BEGIN
    PRINT N'tierwise: warning: [Sales]]; DROP DATABASE x; --] is a log shipping primary; restores on the secondary need the new paths (RESTORE ... WITH MOVE) after this change.';
END;
DECLARE @last_full datetime;
SELECT @last_full = MAX(backup_finish_date) FROM msdb.dbo.backupset
WHERE database_name = N'Sales]; DROP DATABASE x; --' AND type = 'D';
IF @last_full IS NULL OR @last_full < DATEADD(MINUTE, -1440, GETDATE())
BEGIN
    SET @msg = N'tierwise: pre-check failed: no full backup of [Sales]]; DROP DATABASE x; --] finished in the last 24 hours (last: ' + COALESCE(CONVERT(nvarchar(30), @last_full, 120), N'never') + N'). Take one first. Nothing was changed.';
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
GO
USE [Sales]]; DROP DATABASE x; --];
DECLARE @msg nvarchar(2048);
IF OBJECT_ID(N'tempdb..#tw_files') IS NOT NULL DROP TABLE #tw_files;
-- the plan's files; DATABASE_DEFAULT: compared with this database's catalog, whatever tempdb's collation
CREATE TABLE #tw_files (step int NOT NULL, from_name sysname COLLATE DATABASE_DEFAULT NOT NULL,
    from_path nvarchar(260) COLLATE DATABASE_DEFAULT NOT NULL, to_name sysname COLLATE DATABASE_DEFAULT NOT NULL,
    to_path nvarchar(260) COLLATE DATABASE_DEFAULT NOT NULL, size_mb bigint NOT NULL);
INSERT INTO #tw_files (step, from_name, from_path, to_name, to_path, size_mb) VALUES
    (1, N'GO', N'E:\data\it''s [odd]; --x.ndf', N'GO_sata', N'S:\sata\it''s [odd]; --x.ndf', 1024),
    (2, N'Ünïcödé 日本 %d%s', N'E:\data\ünï 日本.ndf', N'Ünïcödé 日本 %d%s_sata', N'S:\sata\ünï 日本.ndf', 512);
IF FILEGROUP_ID(N'FG]''x /* y') IS NULL
BEGIN
    SET @msg = N'tierwise: pre-check failed: filegroup [FG]]''x /* y] of [Sales]]; DROP DATABASE x; --] does not exist; the advice is out of date. Nothing was changed.';
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
-- every planned file is where the plan says (old place or, after an earlier run, new place)
SELECT TOP (1) @msg = N'tierwise: pre-check failed: file ' + QUOTENAME(df.name) + N' is at ' + df.physical_name
    + N' in filegroup ' + COALESCE(QUOTENAME(FILEGROUP_NAME(df.data_space_id)), N'(log)') + N', not where the plan has it; the advice is out of date. Nothing was changed.'
FROM sys.database_files AS df
JOIN #tw_files AS p ON df.name = p.from_name OR df.name = p.to_name
WHERE df.data_space_id <> FILEGROUP_ID(N'FG]''x /* y')
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
WHERE df.data_space_id = FILEGROUP_ID(N'FG]''x /* y')
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
WHERE NOT (mf.database_id = DB_ID(N'Sales]; DROP DATABASE x; --') AND mf.name COLLATE DATABASE_DEFAULT = p.to_name);
IF @msg IS NOT NULL
BEGIN
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
IF NOT EXISTS (SELECT 1 FROM #tw_files AS p JOIN sys.database_files AS df ON df.name = p.from_name)
BEGIN
    PRINT N'tierwise: already done: every file of [FG]]''x /* y] of [Sales]]; DROP DATABASE x; --] is on tier sata; the steps below change nothing.';
END;
GO
USE [Sales]]; DROP DATABASE x; --];
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
        N'@p nvarchar(4000), @d bit OUTPUT', @p = N'S:\sata', @d = @dir_is_directory OUTPUT;
END
ELSE
BEGIN
    PRINT N'tierwise: directory check with xp_fileexist (SQL Server before 2017)';
    DECLARE @dir_probe TABLE (file_exists int, is_directory int, parent_exists int);
    INSERT INTO @dir_probe EXEC master.dbo.xp_fileexist N'S:\sata';
    SELECT @dir_is_directory = CAST(MAX(is_directory) AS bit) FROM @dir_probe;
END;
IF COALESCE(@dir_is_directory, 0) = 0
BEGIN
    SET @msg = N'tierwise: pre-check failed: the target directory S:\sata\ does not exist, or the SQL Server service account cannot see it. Create it and grant the service account full control. Nothing was changed.';
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
WHERE LEFT(LOWER(N'S:\sata\'), LEN(vs.volume_mount_point)) = LOWER(vs.volume_mount_point)
ORDER BY LEN(vs.volume_mount_point) DESC;
IF @free_mb IS NULL AND CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) >= 15
BEGIN
    PRINT N'tierwise: free space from sys.dm_os_enumerate_fixed_drives';
    EXEC sys.sp_executesql N'SELECT @f = free_space_in_bytes / 1048576 FROM sys.dm_os_enumerate_fixed_drives WHERE UPPER(LEFT(fixed_drive_path, 1)) = UPPER(@d);',
        N'@d nchar(1), @f bigint OUTPUT', @d = N'S', @f = @free_mb OUTPUT;
END
ELSE IF @free_mb IS NULL
BEGIN
    PRINT N'tierwise: free space from xp_fixeddrives (SQL Server before 2019)';
    DECLARE @drives TABLE (drive nvarchar(5), mb_free bigint);
    INSERT INTO @drives EXEC master.dbo.xp_fixeddrives;
    SELECT @free_mb = mb_free FROM @drives WHERE UPPER(drive) = UPPER(N'S');
END;
IF @free_mb IS NULL
BEGIN
    PRINT N'tierwise: warning: cannot measure the free space under S:\sata\ (no database file on that volume yet); the new files of [FG]]''x /* y] of [Sales]]; DROP DATABASE x; --] needs about ' + CAST(@need_mb AS nvarchar(20)) + N' MB there.';
END;
IF @free_mb < @need_mb
BEGIN
    SET @msg = N'tierwise: pre-check failed: the new files of [FG]]''x /* y] of [Sales]]; DROP DATABASE x; --] needs ' + CAST(@need_mb AS nvarchar(20)) + N' MB under ' + N'S:\sata\' + N' (10 % headroom included), but only ' + CAST(@free_mb AS nvarchar(20)) + N' MB are free. Nothing was changed.';
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;
GO
USE [Sales]]; DROP DATABASE x; --];
IF EXISTS (SELECT 1 FROM sys.database_files WHERE name = N'GO_sata')
BEGIN
    PRINT N'tierwise: step 1a: already done: file [GO_sata] exists at S:\sata\it''s [odd]; --x.ndf';
END
ELSE
BEGIN
    PRINT N'tierwise: step 1a: adding file [GO_sata] at S:\sata\it''s [odd]; --x.ndf to filegroup [FG]]''x /* y]';
    ALTER DATABASE [Sales]]; DROP DATABASE x; --] ADD FILE (NAME = N'GO_sata', FILENAME = N'S:\sata\it''s [odd]; --x.ndf', SIZE = 1024MB, FILEGROWTH = 1024MB) TO FILEGROUP [FG]]'x /* y];
END;
GO
USE [Sales]]; DROP DATABASE x; --];
IF EXISTS (SELECT 1 FROM sys.database_files WHERE name = N'Ünïcödé 日本 %d%s_sata')
BEGIN
    PRINT N'tierwise: step 2a: already done: file [Ünïcödé 日本 %d%s_sata] exists at S:\sata\ünï 日本.ndf';
END
ELSE
BEGIN
    PRINT N'tierwise: step 2a: adding file [Ünïcödé 日本 %d%s_sata] at S:\sata\ünï 日本.ndf to filegroup [FG]]''x /* y]';
    ALTER DATABASE [Sales]]; DROP DATABASE x; --] ADD FILE (NAME = N'Ünïcödé 日本 %d%s_sata', FILENAME = N'S:\sata\ünï 日本.ndf', SIZE = 512MB, FILEGROWTH = 1024MB) TO FILEGROUP [FG]]'x /* y];
END;
GO
USE [Sales]]; DROP DATABASE x; --];
IF EXISTS (SELECT 1 FROM sys.database_files WHERE name = N'GO')
BEGIN
    PRINT N'tierwise: step 1b: emptying file [GO] into the other files of [FG]]''x /* y] (DBCC SHRINKFILE EMPTYFILE; progress in sys.dm_exec_requests.percent_complete)';
    DBCC SHRINKFILE (N'GO', EMPTYFILE) WITH NO_INFOMSGS;
END
ELSE
BEGIN
    PRINT N'tierwise: step 1b: already done: file [GO] is no longer in the database';
END;
GO
USE [Sales]]; DROP DATABASE x; --];
IF EXISTS (SELECT 1 FROM sys.database_files WHERE name = N'GO')
BEGIN
    PRINT N'tierwise: step 1c: removing the empty file [GO] (E:\data\it''s [odd]; --x.ndf)';
    ALTER DATABASE [Sales]]; DROP DATABASE x; --] REMOVE FILE [GO];
END
ELSE
BEGIN
    PRINT N'tierwise: step 1c: already done: file [GO] is no longer in the database';
END;
GO
USE [Sales]]; DROP DATABASE x; --];
IF EXISTS (SELECT 1 FROM sys.database_files WHERE name = N'Ünïcödé 日本 %d%s')
BEGIN
    PRINT N'tierwise: step 2b: emptying file [Ünïcödé 日本 %d%s] into the other files of [FG]]''x /* y] (DBCC SHRINKFILE EMPTYFILE; progress in sys.dm_exec_requests.percent_complete)';
    DBCC SHRINKFILE (N'Ünïcödé 日本 %d%s', EMPTYFILE) WITH NO_INFOMSGS;
END
ELSE
BEGIN
    PRINT N'tierwise: step 2b: already done: file [Ünïcödé 日本 %d%s] is no longer in the database';
END;
GO
USE [Sales]]; DROP DATABASE x; --];
IF EXISTS (SELECT 1 FROM sys.database_files WHERE name = N'Ünïcödé 日本 %d%s')
BEGIN
    PRINT N'tierwise: step 2c: removing the empty file [Ünïcödé 日本 %d%s] (E:\data\ünï 日本.ndf)';
    ALTER DATABASE [Sales]]; DROP DATABASE x; --] REMOVE FILE [Ünïcödé 日本 %d%s];
END
ELSE
BEGIN
    PRINT N'tierwise: step 2c: already done: file [Ünïcödé 日本 %d%s] is no longer in the database';
END;
GO
USE [Sales]]; DROP DATABASE x; --];
DECLARE @msg nvarchar(2048);
SELECT TOP (1) @msg = N'tierwise: post-check failed: file ' + QUOTENAME(df.name) + N' of filegroup '
    + N'[FG]]''x /* y]' + N' is at ' + df.physical_name + N', which is not a planned new file.'
FROM sys.database_files AS df
WHERE df.data_space_id = FILEGROUP_ID(N'FG]''x /* y')
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
    PRINT N'tierwise: post-check passed: every file of [FG]]''x /* y] of [Sales]]; DROP DATABASE x; --] is in S:\sata\ (tier sata).';
END;
GO
DECLARE @tw_finished bit;
SET @tw_finished = 1;  -- not executed when a check stopped the script (NOEXEC)
SET NOEXEC OFF;
IF @tw_finished = 1
BEGIN
    PRINT N'tierwise: finished: filegroup [FG]]''x /* y] of database [Sales]]; DROP DATABASE x; --] (2 file(s)) is on tier sata.';
END
ELSE
BEGIN
    PRINT N'tierwise: STOPPED: a check or step above failed or asked for a manual step; later steps did not run.';
    IF OBJECT_ID(N'tempdb..#tierwise_stopped') IS NULL CREATE TABLE #tierwise_stopped (stopped bit);
END;
GO
