-- tierwise collection script: Db2 LUW table space, table partition, log, buffer pool and
-- container I/O, one sample
-- (run by db2_collect.sh once per sample; statements end with an at sign, the terminator that
-- the wrapper sets with the CLP option -td followed by that character)
--
-- WHAT IT READS (read only, WITH UR; the same queries and rules as tierwise's live Db2 connector)
--   MON_GET_TABLESPACE(NULL, -2)      cumulative buffer pool and direct I/O per table space,
--                                     summed over all members
--   SYSCAT.TABLESPACES                storage group (SGNAME; empty for table spaces that do not
--                                     use automatic storage), page size
--   SYSCAT.DATAPARTITIONS             every visible data partition (STATUS '') of every
--                                     range-partitioned table (SYSCAT.DATAPARTITIONEXPRESSION):
--                                     name, boundaries, table space, cardinality
--   MON_GET_TABLE(NULL, NULL, -2)     cumulative activity per data partition, summed over
--                                     members. A partition not touched since activation has no
--                                     row there: it is still written, with 0 activity and its
--                                     size from SYSCAT.DATAPARTITIONS.FPAGES (empty before
--                                     RUNSTATS)
--   MON_GET_TRANSACTION_LOG(-2)       cumulative log reads and writes, summed over members
--   SYSIBMADM.DBPATHS                 the primary log path (TYPE 'LOGPATH')
--   MON_GET_BUFFERPOOL(NULL, -2)      cumulative logical/physical/prefetch page reads, local
--                                     pages found, read/write times and unread prefetch pages
--                                     per buffer pool, and its current size in pages, summed
--                                     over members; the hidden IBMSYSTEMBP* pools are left out
--   SYSCAT.BUFFERPOOLS                buffer pool page size
--   MON_GET_CONTAINER(NULL, -2)       every table space container: path, id, storage path id,
--                                     its file system (id, total and used bytes), total and
--                                     usable pages (once, not summed), and its cumulative
--                                     page reads/writes, direct I/O and read/write times
--                                     (summed over members)
--   MON_GET_DATABASE(-2)              DB_CONN_TIME, the activation time the counters start from
--                                     (the latest over members, so any member restart shows)
--   ENV_GET_SYSTEM_RESOURCES, SYSIBMADM.ENV_INST_INFO
--                                     host and instance name: server_name is "host/instance"
--   Needs Db2 10.5 or later (MON_GET_DATABASE, column-organized POOL_COL_* elements).
--
-- LEAST PRIVILEGES (for a user id used only for this)
--   CONNECT on the database, and
--   GRANT EXECUTE ON FUNCTION SYSPROC.MON_GET_TABLESPACE, SYSPROC.MON_GET_TABLE,
--         SYSPROC.MON_GET_TRANSACTION_LOG, SYSPROC.MON_GET_DATABASE,
--         SYSPROC.MON_GET_BUFFERPOOL, SYSPROC.MON_GET_CONTAINER,
--         SYSPROC.ENV_GET_SYSTEM_RESOURCES   (none has a PUBLIC default; SQLADM covers them)
--   SELECT on SYSCAT.TABLESPACES, SYSCAT.DATAPARTITIONS, SYSCAT.DATAPARTITIONEXPRESSION,
--   SYSCAT.BUFFERPOOLS, SYSIBMADM.DBPATHS and SYSIBMADM.ENV_INST_INFO (granted to PUBLIC in a
--   non-restrictive database; grant them explicitly in a RESTRICTIVE one).
--   Object metrics must be collected (database configuration MON_OBJ_METRICS, on by default).
--
-- HOW TO RUN
--   Use the wrapper: sh db2_collect.sh DATABASE SAMPLES INTERVAL_SECONDS OUTPUT_DIR
--   By hand: connect, change to an empty directory, then run the CLP with options -s, -f with
--   this file, and -td followed by the at sign (exactly as db2_collect.sh does)
--
-- WHAT IT WRITES (in the current directory; the wrapper appends them to its CSV files)
--   tablespaces.del, table_partitions.del, transaction_log.del, bufferpools.del,
--   containers.del: EXPORT ... OF DEL in UTF-8 (CODEPAGE=1208): comma separated, text in double
--   quotes with any double quote doubled.
--   Whole numbers are cast to BIGINT so that none is written as a signed DECIMAL.
--   sample_time (CURRENT TIMESTAMP) and db_conn_time are converted from server local time to
--   UTC by subtracting CURRENT TIMEZONE, the server's UTC offset now, and written as ISO-8601
--   ("2024-05-01T13:45:00Z").

EXPORT TO tablespaces.del OF DEL MODIFIED BY CODEPAGE=1208 MESSAGES tablespaces.msg
SELECT
    REPLACE(VARCHAR_FORMAT(ctx.sample_time, 'YYYY-MM-DD HH24:MI:SS'), ' ', 'T') || 'Z' AS sample_time,
    srv.server_name AS server_name,
    ctx.db_name AS db_name,
    REPLACE(VARCHAR_FORMAT(ctx.db_conn_time, 'YYYY-MM-DD HH24:MI:SS'), ' ', 'T') || 'Z' AS db_conn_time,
    m.tbsp_name AS tbsp_name,
    m.tbsp_id AS tbsp_id,
    m.tbsp_type AS tbsp_type,
    m.tbsp_content_type AS tbsp_content_type,
    ts.sgname AS storage_group_name,
    m.tbsp_page_size AS tbsp_page_size,
    m.tbsp_used_pages AS tbsp_used_pages,
    m.tbsp_total_pages AS tbsp_total_pages,
    m.pool_data_l_reads AS pool_data_l_reads,
    m.pool_data_p_reads AS pool_data_p_reads,
    m.pool_async_data_reads AS pool_async_data_reads,
    m.pool_index_l_reads AS pool_index_l_reads,
    m.pool_index_p_reads AS pool_index_p_reads,
    m.pool_async_index_reads AS pool_async_index_reads,
    m.pool_temp_data_l_reads AS pool_temp_data_l_reads,
    m.pool_temp_data_p_reads AS pool_temp_data_p_reads,
    m.pool_temp_index_l_reads AS pool_temp_index_l_reads,
    m.pool_temp_index_p_reads AS pool_temp_index_p_reads,
    m.pool_xda_l_reads AS pool_xda_l_reads,
    m.pool_xda_p_reads AS pool_xda_p_reads,
    m.pool_async_xda_reads AS pool_async_xda_reads,
    m.pool_col_l_reads AS pool_col_l_reads,
    m.pool_col_p_reads AS pool_col_p_reads,
    m.pool_async_col_reads AS pool_async_col_reads,
    m.pool_read_time AS pool_read_time,
    m.pool_async_read_time AS pool_async_read_time,
    m.pool_data_writes AS pool_data_writes,
    m.pool_index_writes AS pool_index_writes,
    m.pool_xda_writes AS pool_xda_writes,
    m.pool_col_writes AS pool_col_writes,
    m.pool_write_time AS pool_write_time,
    m.vectored_ios AS vectored_ios,
    m.pages_from_vectored_ios AS pages_from_vectored_ios,
    m.block_ios AS block_ios,
    m.pages_from_block_ios AS pages_from_block_ios,
    m.direct_reads AS direct_reads,
    m.direct_read_reqs AS direct_read_reqs,
    m.direct_read_time AS direct_read_time,
    m.direct_writes AS direct_writes,
    m.direct_write_reqs AS direct_write_reqs,
    m.direct_write_time AS direct_write_time
FROM (
    SELECT
        t.tbsp_name,
        MAX(t.tbsp_id) AS tbsp_id,
        MAX(t.tbsp_type) AS tbsp_type,
        MAX(t.tbsp_content_type) AS tbsp_content_type,
        BIGINT(MAX(t.tbsp_page_size)) AS tbsp_page_size,
        BIGINT(SUM(t.tbsp_used_pages)) AS tbsp_used_pages,
        BIGINT(SUM(t.tbsp_total_pages)) AS tbsp_total_pages,
        BIGINT(SUM(t.pool_data_l_reads)) AS pool_data_l_reads,
        BIGINT(SUM(t.pool_data_p_reads)) AS pool_data_p_reads,
        BIGINT(SUM(t.pool_async_data_reads)) AS pool_async_data_reads,
        BIGINT(SUM(t.pool_index_l_reads)) AS pool_index_l_reads,
        BIGINT(SUM(t.pool_index_p_reads)) AS pool_index_p_reads,
        BIGINT(SUM(t.pool_async_index_reads)) AS pool_async_index_reads,
        BIGINT(SUM(t.pool_temp_data_l_reads)) AS pool_temp_data_l_reads,
        BIGINT(SUM(t.pool_temp_data_p_reads)) AS pool_temp_data_p_reads,
        BIGINT(SUM(t.pool_temp_index_l_reads)) AS pool_temp_index_l_reads,
        BIGINT(SUM(t.pool_temp_index_p_reads)) AS pool_temp_index_p_reads,
        BIGINT(SUM(t.pool_xda_l_reads)) AS pool_xda_l_reads,
        BIGINT(SUM(t.pool_xda_p_reads)) AS pool_xda_p_reads,
        BIGINT(SUM(t.pool_async_xda_reads)) AS pool_async_xda_reads,
        BIGINT(SUM(t.pool_col_l_reads)) AS pool_col_l_reads,
        BIGINT(SUM(t.pool_col_p_reads)) AS pool_col_p_reads,
        BIGINT(SUM(t.pool_async_col_reads)) AS pool_async_col_reads,
        BIGINT(SUM(t.pool_read_time)) AS pool_read_time,
        BIGINT(SUM(t.pool_async_read_time)) AS pool_async_read_time,
        BIGINT(SUM(t.pool_data_writes)) AS pool_data_writes,
        BIGINT(SUM(t.pool_index_writes)) AS pool_index_writes,
        BIGINT(SUM(t.pool_xda_writes)) AS pool_xda_writes,
        BIGINT(SUM(t.pool_col_writes)) AS pool_col_writes,
        BIGINT(SUM(t.pool_write_time)) AS pool_write_time,
        BIGINT(SUM(t.vectored_ios)) AS vectored_ios,
        BIGINT(SUM(t.pages_from_vectored_ios)) AS pages_from_vectored_ios,
        BIGINT(SUM(t.block_ios)) AS block_ios,
        BIGINT(SUM(t.pages_from_block_ios)) AS pages_from_block_ios,
        BIGINT(SUM(t.direct_reads)) AS direct_reads,
        BIGINT(SUM(t.direct_read_reqs)) AS direct_read_reqs,
        BIGINT(SUM(t.direct_read_time)) AS direct_read_time,
        BIGINT(SUM(t.direct_writes)) AS direct_writes,
        BIGINT(SUM(t.direct_write_reqs)) AS direct_write_reqs,
        BIGINT(SUM(t.direct_write_time)) AS direct_write_time
    FROM TABLE(MON_GET_TABLESPACE(NULL, -2)) AS t
    GROUP BY t.tbsp_name
) AS m
LEFT OUTER JOIN SYSCAT.TABLESPACES AS ts ON ts.tbspace = m.tbsp_name
INNER JOIN (
    -- begin fragment db2_context (generated from connectors/queries/fragments/db2_context.sql)
    SELECT
        CURRENT TIMESTAMP - CURRENT TIMEZONE AS sample_time,
        CAST(CURRENT SERVER AS VARCHAR(128)) AS db_name,
        MAX(d.db_conn_time) - CURRENT TIMEZONE AS db_conn_time
    FROM TABLE(MON_GET_DATABASE(-2)) AS d
    -- end fragment db2_context
) AS ctx ON 1 = 1
INNER JOIN (
    SELECT RTRIM(h.host_name) || '/' || RTRIM(i.inst_name) AS server_name
    FROM (
        SELECT MIN(r.host_name) AS host_name FROM TABLE(SYSPROC.ENV_GET_SYSTEM_RESOURCES()) AS r
    ) AS h
    INNER JOIN SYSIBMADM.ENV_INST_INFO AS i ON 1 = 1
) AS srv ON 1 = 1
ORDER BY m.tbsp_id
WITH UR
@

EXPORT TO table_partitions.del OF DEL MODIFIED BY CODEPAGE=1208 MESSAGES table_partitions.msg
SELECT
    REPLACE(VARCHAR_FORMAT(ctx.sample_time, 'YYYY-MM-DD HH24:MI:SS'), ' ', 'T') || 'Z' AS sample_time,
    srv.server_name AS server_name,
    ctx.db_name AS db_name,
    REPLACE(VARCHAR_FORMAT(ctx.db_conn_time, 'YYYY-MM-DD HH24:MI:SS'), ' ', 'T') || 'Z' AS db_conn_time,
    dp.tabschema AS tabschema,
    dp.tabname AS tabname,
    dp.datapartitionid AS data_partition_id,
    dp.datapartitionname AS datapartitionname,
    ts.tbspace AS tbsp_name,
    ts.sgname AS storage_group_name,
    ts.pagesize AS tbsp_page_size,
    dp.lowvalue AS lowvalue,
    dp.lowinclusive AS lowinclusive,
    dp.highvalue AS highvalue,
    dp.highinclusive AS highinclusive,
    CASE WHEN dp.card >= 0 THEN BIGINT(dp.card) END AS card,
    COALESCE(m.data_object_l_pages, CASE WHEN dp.fpages >= 0 THEN BIGINT(dp.fpages) END) AS data_object_l_pages,
    m.index_object_l_pages AS index_object_l_pages,
    COALESCE(m.table_scans, 0) AS table_scans,
    COALESCE(m.rows_read, 0) AS rows_read,
    COALESCE(m.rows_inserted, 0) AS rows_inserted,
    COALESCE(m.rows_updated, 0) AS rows_updated,
    COALESCE(m.rows_deleted, 0) AS rows_deleted,
    COALESCE(m.object_data_l_reads, 0) AS object_data_l_reads,
    COALESCE(m.object_data_p_reads, 0) AS object_data_p_reads,
    COALESCE(m.object_data_gbp_l_reads, 0) AS object_data_gbp_l_reads,
    COALESCE(m.direct_read_reqs, 0) AS direct_read_reqs,
    COALESCE(m.direct_write_reqs, 0) AS direct_write_reqs
FROM SYSCAT.DATAPARTITIONS AS dp
INNER JOIN SYSCAT.TABLESPACES AS ts ON ts.tbspaceid = dp.tbspaceid
LEFT OUTER JOIN (
    SELECT
        t.tabschema,
        t.tabname,
        t.data_partition_id,
        BIGINT(SUM(t.data_object_l_pages)) AS data_object_l_pages,
        BIGINT(SUM(t.index_object_l_pages)) AS index_object_l_pages,
        BIGINT(SUM(t.table_scans)) AS table_scans,
        BIGINT(SUM(t.rows_read)) AS rows_read,
        BIGINT(SUM(t.rows_inserted)) AS rows_inserted,
        BIGINT(SUM(t.rows_updated)) AS rows_updated,
        BIGINT(SUM(t.rows_deleted)) AS rows_deleted,
        BIGINT(SUM(t.object_data_l_reads)) AS object_data_l_reads,
        BIGINT(SUM(t.object_data_p_reads)) AS object_data_p_reads,
        BIGINT(SUM(t.object_data_gbp_l_reads)) AS object_data_gbp_l_reads,
        BIGINT(SUM(t.direct_read_reqs)) AS direct_read_reqs,
        BIGINT(SUM(t.direct_write_reqs)) AS direct_write_reqs
    FROM TABLE(MON_GET_TABLE(NULL, NULL, -2)) AS t
    GROUP BY t.tabschema, t.tabname, t.data_partition_id
) AS m
    ON m.tabschema = dp.tabschema AND m.tabname = dp.tabname AND m.data_partition_id = dp.datapartitionid
INNER JOIN (
    -- begin fragment db2_context (generated from connectors/queries/fragments/db2_context.sql)
    SELECT
        CURRENT TIMESTAMP - CURRENT TIMEZONE AS sample_time,
        CAST(CURRENT SERVER AS VARCHAR(128)) AS db_name,
        MAX(d.db_conn_time) - CURRENT TIMEZONE AS db_conn_time
    FROM TABLE(MON_GET_DATABASE(-2)) AS d
    -- end fragment db2_context
) AS ctx ON 1 = 1
INNER JOIN (
    SELECT RTRIM(h.host_name) || '/' || RTRIM(i.inst_name) AS server_name
    FROM (
        SELECT MIN(r.host_name) AS host_name FROM TABLE(SYSPROC.ENV_GET_SYSTEM_RESOURCES()) AS r
    ) AS h
    INNER JOIN SYSIBMADM.ENV_INST_INFO AS i ON 1 = 1
) AS srv ON 1 = 1
WHERE dp.status = ''
    AND EXISTS (
        SELECT 1 FROM SYSCAT.DATAPARTITIONEXPRESSION AS e
        WHERE e.tabschema = dp.tabschema AND e.tabname = dp.tabname
    )
ORDER BY dp.tabschema, dp.tabname, dp.seqno
WITH UR
@

EXPORT TO transaction_log.del OF DEL MODIFIED BY CODEPAGE=1208 MESSAGES transaction_log.msg
SELECT
    REPLACE(VARCHAR_FORMAT(ctx.sample_time, 'YYYY-MM-DD HH24:MI:SS'), ' ', 'T') || 'Z' AS sample_time,
    srv.server_name AS server_name,
    ctx.db_name AS db_name,
    REPLACE(VARCHAR_FORMAT(ctx.db_conn_time, 'YYYY-MM-DD HH24:MI:SS'), ' ', 'T') || 'Z' AS db_conn_time,
    lp.log_path AS log_path,
    l.log_size_bytes AS log_size_bytes,
    l.log_writes AS log_writes,
    l.log_write_time AS log_write_time,
    l.num_log_write_io AS num_log_write_io,
    l.log_reads AS log_reads,
    l.log_read_time AS log_read_time,
    l.num_log_read_io AS num_log_read_io
FROM (
    SELECT
        BIGINT(CASE WHEN MIN(t.total_log_available) >= 0
            THEN SUM(t.total_log_used) + SUM(t.total_log_available) END) AS log_size_bytes,
        BIGINT(SUM(t.log_writes)) AS log_writes,
        BIGINT(SUM(t.log_write_time)) AS log_write_time,
        BIGINT(SUM(t.num_log_write_io)) AS num_log_write_io,
        BIGINT(SUM(t.log_reads)) AS log_reads,
        BIGINT(SUM(t.log_read_time)) AS log_read_time,
        BIGINT(SUM(t.num_log_read_io)) AS num_log_read_io
    FROM TABLE(MON_GET_TRANSACTION_LOG(-2)) AS t
) AS l
INNER JOIN (
    SELECT MIN(p.path) AS log_path FROM SYSIBMADM.DBPATHS AS p WHERE p.type = 'LOGPATH'
) AS lp ON 1 = 1
INNER JOIN (
    -- begin fragment db2_context (generated from connectors/queries/fragments/db2_context.sql)
    SELECT
        CURRENT TIMESTAMP - CURRENT TIMEZONE AS sample_time,
        CAST(CURRENT SERVER AS VARCHAR(128)) AS db_name,
        MAX(d.db_conn_time) - CURRENT TIMEZONE AS db_conn_time
    FROM TABLE(MON_GET_DATABASE(-2)) AS d
    -- end fragment db2_context
) AS ctx ON 1 = 1
INNER JOIN (
    SELECT RTRIM(h.host_name) || '/' || RTRIM(i.inst_name) AS server_name
    FROM (
        SELECT MIN(r.host_name) AS host_name FROM TABLE(SYSPROC.ENV_GET_SYSTEM_RESOURCES()) AS r
    ) AS h
    INNER JOIN SYSIBMADM.ENV_INST_INFO AS i ON 1 = 1
) AS srv ON 1 = 1
WITH UR
@

EXPORT TO bufferpools.del OF DEL MODIFIED BY CODEPAGE=1208 MESSAGES bufferpools.msg
SELECT
    REPLACE(VARCHAR_FORMAT(ctx.sample_time, 'YYYY-MM-DD HH24:MI:SS'), ' ', 'T') || 'Z' AS sample_time,
    srv.server_name AS server_name,
    ctx.db_name AS db_name,
    REPLACE(VARCHAR_FORMAT(ctx.db_conn_time, 'YYYY-MM-DD HH24:MI:SS'), ' ', 'T') || 'Z' AS db_conn_time,
    m.bp_name AS bp_name,
    bpc.pagesize AS bp_page_size,
    m.bp_cur_buffsz AS bp_cur_buffsz,
    m.pool_data_l_reads AS pool_data_l_reads,
    m.pool_data_p_reads AS pool_data_p_reads,
    m.pool_async_data_reads AS pool_async_data_reads,
    m.pool_index_l_reads AS pool_index_l_reads,
    m.pool_index_p_reads AS pool_index_p_reads,
    m.pool_async_index_reads AS pool_async_index_reads,
    m.pool_temp_data_l_reads AS pool_temp_data_l_reads,
    m.pool_temp_data_p_reads AS pool_temp_data_p_reads,
    m.pool_temp_index_l_reads AS pool_temp_index_l_reads,
    m.pool_temp_index_p_reads AS pool_temp_index_p_reads,
    m.pool_data_lbp_pages_found AS pool_data_lbp_pages_found,
    m.pool_async_data_lbp_pages_found AS pool_async_data_lbp_pages_found,
    m.pool_read_time AS pool_read_time,
    m.pool_async_read_time AS pool_async_read_time,
    m.pool_data_writes AS pool_data_writes,
    m.pool_index_writes AS pool_index_writes,
    m.pool_write_time AS pool_write_time,
    m.unread_prefetch_pages AS unread_prefetch_pages
FROM (
    SELECT
        t.bp_name,
        BIGINT(SUM(t.bp_cur_buffsz)) AS bp_cur_buffsz,
        BIGINT(SUM(t.pool_data_l_reads)) AS pool_data_l_reads,
        BIGINT(SUM(t.pool_data_p_reads)) AS pool_data_p_reads,
        BIGINT(SUM(t.pool_async_data_reads)) AS pool_async_data_reads,
        BIGINT(SUM(t.pool_index_l_reads)) AS pool_index_l_reads,
        BIGINT(SUM(t.pool_index_p_reads)) AS pool_index_p_reads,
        BIGINT(SUM(t.pool_async_index_reads)) AS pool_async_index_reads,
        BIGINT(SUM(t.pool_temp_data_l_reads)) AS pool_temp_data_l_reads,
        BIGINT(SUM(t.pool_temp_data_p_reads)) AS pool_temp_data_p_reads,
        BIGINT(SUM(t.pool_temp_index_l_reads)) AS pool_temp_index_l_reads,
        BIGINT(SUM(t.pool_temp_index_p_reads)) AS pool_temp_index_p_reads,
        BIGINT(SUM(t.pool_data_lbp_pages_found)) AS pool_data_lbp_pages_found,
        BIGINT(SUM(t.pool_async_data_lbp_pages_found)) AS pool_async_data_lbp_pages_found,
        BIGINT(SUM(t.pool_read_time)) AS pool_read_time,
        BIGINT(SUM(t.pool_async_read_time)) AS pool_async_read_time,
        BIGINT(SUM(t.pool_data_writes)) AS pool_data_writes,
        BIGINT(SUM(t.pool_index_writes)) AS pool_index_writes,
        BIGINT(SUM(t.pool_write_time)) AS pool_write_time,
        BIGINT(SUM(t.unread_prefetch_pages)) AS unread_prefetch_pages
    FROM TABLE(MON_GET_BUFFERPOOL(NULL, -2)) AS t
    WHERE t.bp_name NOT LIKE 'IBMSYSTEMBP%'
    GROUP BY t.bp_name
) AS m
LEFT OUTER JOIN SYSCAT.BUFFERPOOLS AS bpc ON bpc.bpname = m.bp_name
INNER JOIN (
    -- begin fragment db2_context (generated from connectors/queries/fragments/db2_context.sql)
    SELECT
        CURRENT TIMESTAMP - CURRENT TIMEZONE AS sample_time,
        CAST(CURRENT SERVER AS VARCHAR(128)) AS db_name,
        MAX(d.db_conn_time) - CURRENT TIMEZONE AS db_conn_time
    FROM TABLE(MON_GET_DATABASE(-2)) AS d
    -- end fragment db2_context
) AS ctx ON 1 = 1
INNER JOIN (
    SELECT RTRIM(h.host_name) || '/' || RTRIM(i.inst_name) AS server_name
    FROM (
        SELECT MIN(r.host_name) AS host_name FROM TABLE(SYSPROC.ENV_GET_SYSTEM_RESOURCES()) AS r
    ) AS h
    INNER JOIN SYSIBMADM.ENV_INST_INFO AS i ON 1 = 1
) AS srv ON 1 = 1
ORDER BY m.bp_name
WITH UR
@

EXPORT TO containers.del OF DEL MODIFIED BY CODEPAGE=1208 MESSAGES containers.msg
SELECT
    REPLACE(VARCHAR_FORMAT(ctx.sample_time, 'YYYY-MM-DD HH24:MI:SS'), ' ', 'T') || 'Z' AS sample_time,
    srv.server_name AS server_name,
    ctx.db_name AS db_name,
    REPLACE(VARCHAR_FORMAT(ctx.db_conn_time, 'YYYY-MM-DD HH24:MI:SS'), ' ', 'T') || 'Z' AS db_conn_time,
    m.tbsp_name AS tbsp_name,
    m.container_name AS container_name,
    m.container_id AS container_id,
    m.db_storage_path_id AS db_storage_path_id,
    m.fs_id AS fs_id,
    m.fs_total_size AS fs_total_size,
    m.fs_used_size AS fs_used_size,
    ts.pagesize AS tbsp_page_size,
    m.total_pages AS total_pages,
    m.usable_pages AS usable_pages,
    m.pages_read AS pages_read,
    m.pages_written AS pages_written,
    m.direct_reads AS direct_reads,
    m.direct_writes AS direct_writes,
    m.pool_read_time AS pool_read_time,
    m.direct_read_time AS direct_read_time,
    m.direct_write_time AS direct_write_time
FROM (
    SELECT
        t.tbsp_name,
        t.container_name,
        BIGINT(MIN(t.container_id)) AS container_id,
        BIGINT(MIN(t.db_storage_path_id)) AS db_storage_path_id,
        CAST(MIN(t.fs_id) AS VARCHAR(64)) AS fs_id,
        BIGINT(MAX(t.fs_total_size)) AS fs_total_size,
        BIGINT(MAX(t.fs_used_size)) AS fs_used_size,
        BIGINT(MAX(t.total_pages)) AS total_pages,
        BIGINT(MAX(t.usable_pages)) AS usable_pages,
        BIGINT(SUM(t.pages_read)) AS pages_read,
        BIGINT(SUM(t.pages_written)) AS pages_written,
        BIGINT(SUM(t.direct_reads)) AS direct_reads,
        BIGINT(SUM(t.direct_writes)) AS direct_writes,
        BIGINT(SUM(t.pool_read_time)) AS pool_read_time,
        BIGINT(SUM(t.direct_read_time)) AS direct_read_time,
        BIGINT(SUM(t.direct_write_time)) AS direct_write_time
    FROM TABLE(MON_GET_CONTAINER(NULL, -2)) AS t
    GROUP BY t.tbsp_name, t.container_name
) AS m
LEFT OUTER JOIN SYSCAT.TABLESPACES AS ts ON ts.tbspace = m.tbsp_name
INNER JOIN (
    -- begin fragment db2_context (generated from connectors/queries/fragments/db2_context.sql)
    SELECT
        CURRENT TIMESTAMP - CURRENT TIMEZONE AS sample_time,
        CAST(CURRENT SERVER AS VARCHAR(128)) AS db_name,
        MAX(d.db_conn_time) - CURRENT TIMEZONE AS db_conn_time
    FROM TABLE(MON_GET_DATABASE(-2)) AS d
    -- end fragment db2_context
) AS ctx ON 1 = 1
INNER JOIN (
    SELECT RTRIM(h.host_name) || '/' || RTRIM(i.inst_name) AS server_name
    FROM (
        SELECT MIN(r.host_name) AS host_name FROM TABLE(SYSPROC.ENV_GET_SYSTEM_RESOURCES()) AS r
    ) AS h
    INNER JOIN SYSIBMADM.ENV_INST_INFO AS i ON 1 = 1
) AS srv ON 1 = 1
ORDER BY m.tbsp_name, m.container_id
WITH UR
@
