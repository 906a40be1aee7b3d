"""The run-time T-SQL of the partition move (see tsql_partition.py): fixed text, no names.

Every name reaches these batches as a variable declared by tsql_partition._params (an N'…'
literal) and is quoted at run time with QUOTENAME, so nothing here depends on the plan.

Choices that rest on Microsoft Learn pages:
- "Data compression" (relational-databases/data-compression/data-compression), "How compression
  affects partitioned tables and indexes": a SPLIT gives both partitions the original partition's
  DATA_COMPRESSION, a MERGE gives the result the destination partition's, and a partition can only
  be switched when its compression matches. So after MERGE/SPLIT the re-created (still empty)
  partition n carries its neighbour's compression; MOVE rebuilds that empty partition of the table
  and of each index back to the compression partition n had before the move (read from
  sys.partitions.data_compression_desc per index into @ix), BEFORE the switch-in, so the staging
  table (built with the same values) and the target partition match. Rebuilding the staging table
  to the neighbour's compression instead would silently change the partition's compression.
- "Transferring Data Efficiently by Using Partition Switching" (table and index structure
  requirements): both tables must have the same ANSI_NULLS and QUOTED IDENTIFIER settings. A
  table records the QUOTED_IDENTIFIER setting it was created with (OBJECTPROPERTY, IsQuotedIdentOn:
  "table ... Specifies that the quoted identifier setting for the object is ON"), and sqlcmd's
  session runs with it ON (the frame's gate), so a table created with it OFF could never be
  switched back: MOVE creates the staging table in a dynamic batch that first sets
  QUOTED_IDENTIFIER to the table's own setting (a SET in sp_executesql's batch ends with it). Its
  SELECT INTO names every object through QUOTENAME, so the setting changes nothing else there.
- "ALTER TABLE (Transact-SQL)", WAIT_AT_LOW_PRIORITY (SQL Server 2014+): the switch-out waits for
  its Sch-M lock in a low-priority queue, so readers and writers are not queued behind it;
  ABORT_AFTER_WAIT = SELF gives up after MAX_DURATION. On SQL Server 2012 (no such option) a short
  LOCK_TIMEOUT caps how long others queue behind the request.
"""

# run-time type of the partitioning column -> declared type text, and the CONVERT style that
# round-trips a value through nvarchar exactly (ISO 8601 for date/time, lossless for float, hex
# for binary); NULL type: unsupported.
# float/real: style 3 (17 digits, lossless) exists from SQL Server 2016 (major version 13) on;
# before it "other values are processed as 0" (6 digits: a boundary would be rounded), per
# Microsoft Learn, CAST and CONVERT, "float and real styles". Style 2 (16 digits) round-trips a
# real (9 significant digits suffice) but not every float (17 needed): below 13, real uses style
# 2 and float keys are refused with their own message (the batch declares @msg).
_MAJOR = "CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int)"
TYPE_AND_STYLE = """\
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
        WHEN t.name IN (N'real', N'float') AND {major} < 13 THEN 2
        WHEN t.name IN (N'real', N'float') THEN 3
        WHEN t.name IN (N'money', N'smallmoney') THEN 2
        WHEN t.name IN (N'binary', N'varbinary') THEN 1
        ELSE 0
    END
FROM sys.partition_parameters AS pp
JOIN sys.types AS t ON t.user_type_id = pp.system_type_id
WHERE pp.function_id = @function_id AND pp.parameter_id = 1;
IF @type = N'float' AND {major} < 13
BEGIN
    SET @msg = N'tierwise: pre-check failed: the partitioning column is float, and before SQL Server 2016 a float cannot be written as text exactly (CONVERT style 3 arrived in 2016; style 2 keeps 16 digits and can change a boundary value): unsupported on this version: do this step by hand. Nothing was changed.';
    RAISERROR(N'%s', 16, 1, @msg);
    SET NOEXEC ON;
    RETURN;
END;""".replace("{major}", _MAJOR)


DISCOVER = """\
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
WHERE ic.object_id = @object_id AND ic.index_id = 1 AND ic.partition_ordinal = 1;"""


MOVE = """\
DECLARE @type nvarchar(200), @style int, @sql nvarchar(max), @stage sysname, @qstage nvarchar(300);
DECLARE @boundary sql_variant, @low sql_variant, @high sql_variant, @low_text nvarchar(4000), @high_text nvarchar(4000);
DECLARE @check nvarchar(max), @rows_about bigint, @rows_moved bigint, @rows_in bigint, @rows_after bigint, @index_id int, @ddl nvarchar(max);
DECLARE @want nvarchar(60), @switch_option nvarchar(200);
DECLARE @ix TABLE (index_id int PRIMARY KEY, compression nvarchar(60) NOT NULL, create_sql nvarchar(max) NOT NULL,
    rebuild_sql nvarchar(max) NOT NULL, compress_sql nvarchar(max) NOT NULL);
-- SQL Server 2014+: the switch-out waits at low priority (blocks no one) for at most {switch_minutes} min, then gives up;
-- 2012: no WAIT_AT_LOW_PRIORITY, so others queue behind the Sch-M request for at most {old_timeout_s} s
IF CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) >= 12
BEGIN
    SET @switch_option = N' WITH (WAIT_AT_LOW_PRIORITY (MAX_DURATION = {switch_minutes} MINUTES, ABORT_AFTER_WAIT = SELF))';
    SET LOCK_TIMEOUT {lock_timeout_ms};
END
ELSE
BEGIN
    SET @switch_option = N'';
    SET LOCK_TIMEOUT {old_lock_timeout_ms};
END;
{type_and_style}
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
SET LOCK_TIMEOUT {post_lock_timeout_ms};
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
RAISERROR(N'%s', 0, 1, @msg) WITH NOWAIT;"""
