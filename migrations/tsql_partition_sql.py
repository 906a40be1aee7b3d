"""The run-time T-SQL of the partition move (see tsql_partition.py): fixed text, no names.

Every name reaches these batches as a variable declared by tsql_partition._params (an N'…'
literal) and is quoted at run time with QUOTENAME, so nothing here depends on the plan.
"""

# run-time type of the partitioning column -> declared type text, and the CONVERT style that
# round-trips a value through nvarchar exactly (ISO 8601 for date/time, lossless for float, hex
# for binary); NULL type: unsupported
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
        WHEN t.name IN (N'real', N'float') THEN 3
        WHEN t.name IN (N'money', N'smallmoney') THEN 2
        WHEN t.name IN (N'binary', N'varbinary') THEN 1
        ELSE 0
    END
FROM sys.partition_parameters AS pp
JOIN sys.types AS t ON t.user_type_id = pp.system_type_id
WHERE pp.function_id = @function_id AND pp.parameter_id = 1;"""


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
DECLARE @check nvarchar(max), @rows_before bigint, @rows_after bigint, @index_id int, @ddl nvarchar(max);
DECLARE @ix TABLE (index_id int PRIMARY KEY, create_sql nvarchar(max) NOT NULL, rebuild_sql nvarchar(max) NOT NULL);
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
INSERT INTO @ix (index_id, create_sql, rebuild_sql)
SELECT i.index_id,
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
        + CASE WHEN i.ignore_dup_key = 1 THEN N', IGNORE_DUP_KEY = ON' ELSE N'' END + N') ON ' + QUOTENAME(@target_fg) + N';'
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
SELECT @rows_before = SUM(rows) FROM sys.partitions WHERE object_id = @object_id AND index_id = 1 AND partition_number = @n;
PRINT N'tierwise: step 2: moving partition ' + CAST(@n AS nvarchar(10)) + N' of ' + @qtable + N' (' + CAST(@rows_before AS nvarchar(20))
    + N' rows) from ' + QUOTENAME(@current_fg) + N' to ' + QUOTENAME(@target_fg) + N' in one transaction; the table is locked until it commits';
BEGIN TRY
    BEGIN TRANSACTION;
    SET @sql = N'SELECT TOP (0) * INTO ' + @qstage + N' FROM ' + @qtable + N';';
    EXEC sys.sp_executesql @sql;
    SET @index_id = 0;
    WHILE 1 = 1
    BEGIN
        SELECT TOP (1) @index_id = index_id, @ddl = create_sql FROM @ix WHERE index_id > @index_id ORDER BY index_id;
        IF @@ROWCOUNT = 0 BREAK;
        EXEC sys.sp_executesql @ddl;
    END;
    SET @sql = N'ALTER TABLE ' + @qtable + N' SWITCH PARTITION ' + CAST(@n AS nvarchar(10)) + N' TO ' + @qstage + N';';
    EXEC sys.sp_executesql @sql;
    SET @index_id = 0;
    WHILE 1 = 1
    BEGIN
        SELECT TOP (1) @index_id = index_id, @ddl = rebuild_sql FROM @ix WHERE index_id > @index_id ORDER BY index_id;
        IF @@ROWCOUNT = 0 BREAK;
        EXEC sys.sp_executesql @ddl;
    END;
    SET @sql = N'DECLARE @v ' + @type + N' = CONVERT(' + @type + N', @b); ALTER PARTITION FUNCTION ' + QUOTENAME(@function) + N'() MERGE RANGE (@v);';
    EXEC sys.sp_executesql @sql, N'@b sql_variant', @b = @boundary;
    SET @sql = N'ALTER PARTITION SCHEME ' + QUOTENAME(@scheme) + N' NEXT USED ' + QUOTENAME(@target_fg) + N';';
    EXEC sys.sp_executesql @sql;
    SET @sql = N'DECLARE @v ' + @type + N' = CONVERT(' + @type + N', @b); ALTER PARTITION FUNCTION ' + QUOTENAME(@function) + N'() SPLIT RANGE (@v);';
    EXEC sys.sp_executesql @sql, N'@b sql_variant', @b = @boundary;
    IF NOT EXISTS (SELECT 1 FROM sys.destination_data_spaces AS dds JOIN sys.filegroups AS fg ON fg.data_space_id = dds.data_space_id
                   WHERE dds.partition_scheme_id = @scheme_id AND dds.destination_id = @n AND fg.name = @target_fg)
        RAISERROR(N'%s', 16, 1, N'after MERGE/SPLIT the partition does not map to the target filegroup');
    SET @sql = N'ALTER TABLE ' + @qstage + N' WITH CHECK ADD CONSTRAINT ' + QUOTENAME(@stage + N'_range') + N' CHECK (' + @check + N');';
    EXEC sys.sp_executesql @sql;
    SET @sql = N'ALTER TABLE ' + @qstage + N' SWITCH TO ' + @qtable + N' PARTITION ' + CAST(@n AS nvarchar(10)) + N';';
    EXEC sys.sp_executesql @sql;
    SELECT @rows_after = SUM(rows) FROM sys.partitions WHERE object_id = @object_id AND index_id = 1 AND partition_number = @n;
    IF COALESCE(@rows_after, -1) <> COALESCE(@rows_before, -1)
        RAISERROR(N'%s', 16, 1, N'the row count of the partition changed during the move');
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
END CATCH;"""
