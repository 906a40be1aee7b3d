-- tierwise: cumulative buffer-pool and direct I/O counters per table space, summed over all
-- members (shape db2_tablespaces). Storage group from SYSCAT.TABLESPACES.SGNAME (NULL for
-- table spaces that do not use automatic storage). Needs Db2 10.5 or later (MON_GET_DATABASE,
-- POOL_*_COL_* columns).
-- Permissions: EXECUTE on SYSPROC.MON_GET_TABLESPACE, SYSPROC.MON_GET_DATABASE,
-- SYSPROC.ENV_GET_SYSTEM_RESOURCES; SELECT on SYSCAT.TABLESPACES and SYSIBMADM.ENV_INST_INFO.
WITH ctx AS (
    -- one row: the poll time and the activation time in UTC. Db2 timestamps are server-local; they
    -- are shifted by CURRENT TIMEZONE (the offset now), so a daylight-saving change moves
    -- db_conn_time by the DST shift once (see docs/connect-db2.md). Latest activation of any member.
    -- begin fragment db2_context (generated from connectors/queries/fragments/db2_context.sql)
    SELECT
        CURRENT TIMESTAMP - CURRENT TIMEZONE AS sample_time,
        CAST(CURRENT SERVER AS VARCHAR(128)) AS db_name,
        MAX(d.db_conn_time) - CURRENT TIMEZONE AS db_conn_time
    FROM TABLE(MON_GET_DATABASE(-2)) AS d
    -- end fragment db2_context
),

srv AS (
    -- "host/instance": stable across polls and unique in a fleet where instance names repeat.
    SELECT RTRIM(h.host_name) || '/' || RTRIM(i.inst_name) AS server_name
    FROM (
        SELECT MIN(r.host_name) AS host_name
        FROM TABLE(SYSPROC.ENV_GET_SYSTEM_RESOURCES()) AS r
    ) AS h
    CROSS JOIN SYSIBMADM.ENV_INST_INFO AS i
),

ts AS (
    SELECT
        t.tbsp_name,
        MIN(t.tbsp_id) AS tbsp_id,
        MIN(t.tbsp_type) AS tbsp_type,
        MIN(t.tbsp_content_type) AS tbsp_content_type,
        MIN(t.tbsp_page_size) AS tbsp_page_size,
        SUM(t.tbsp_used_pages) AS tbsp_used_pages,
        SUM(t.tbsp_total_pages) AS tbsp_total_pages,
        SUM(t.pool_data_l_reads) AS pool_data_l_reads,
        SUM(t.pool_data_p_reads) AS pool_data_p_reads,
        SUM(t.pool_async_data_reads) AS pool_async_data_reads,
        SUM(t.pool_index_l_reads) AS pool_index_l_reads,
        SUM(t.pool_index_p_reads) AS pool_index_p_reads,
        SUM(t.pool_async_index_reads) AS pool_async_index_reads,
        SUM(t.pool_temp_data_l_reads) AS pool_temp_data_l_reads,
        SUM(t.pool_temp_data_p_reads) AS pool_temp_data_p_reads,
        SUM(t.pool_temp_index_l_reads) AS pool_temp_index_l_reads,
        SUM(t.pool_temp_index_p_reads) AS pool_temp_index_p_reads,
        SUM(t.pool_xda_l_reads) AS pool_xda_l_reads,
        SUM(t.pool_xda_p_reads) AS pool_xda_p_reads,
        SUM(t.pool_async_xda_reads) AS pool_async_xda_reads,
        SUM(t.pool_col_l_reads) AS pool_col_l_reads,
        SUM(t.pool_col_p_reads) AS pool_col_p_reads,
        SUM(t.pool_async_col_reads) AS pool_async_col_reads,
        SUM(t.pool_read_time) AS pool_read_time,
        SUM(t.pool_async_read_time) AS pool_async_read_time,
        SUM(t.pool_data_writes) AS pool_data_writes,
        SUM(t.pool_index_writes) AS pool_index_writes,
        SUM(t.pool_xda_writes) AS pool_xda_writes,
        SUM(t.pool_col_writes) AS pool_col_writes,
        SUM(t.pool_write_time) AS pool_write_time,
        SUM(t.vectored_ios) AS vectored_ios,
        SUM(t.pages_from_vectored_ios) AS pages_from_vectored_ios,
        SUM(t.block_ios) AS block_ios,
        SUM(t.pages_from_block_ios) AS pages_from_block_ios,
        SUM(t.direct_reads) AS direct_reads,
        SUM(t.direct_read_reqs) AS direct_read_reqs,
        SUM(t.direct_read_time) AS direct_read_time,
        SUM(t.direct_writes) AS direct_writes,
        SUM(t.direct_write_reqs) AS direct_write_reqs,
        SUM(t.direct_write_time) AS direct_write_time
    FROM TABLE(MON_GET_TABLESPACE(NULL, -2)) AS t
    GROUP BY t.tbsp_name
)

SELECT
    ctx.sample_time,
    srv.server_name,
    ctx.db_name,
    ctx.db_conn_time,
    ts.tbsp_name,
    ts.tbsp_id,
    ts.tbsp_type,
    ts.tbsp_content_type,
    c.sgname AS storage_group_name,
    ts.tbsp_page_size,
    ts.tbsp_used_pages,
    ts.tbsp_total_pages,
    ts.pool_data_l_reads,
    ts.pool_data_p_reads,
    ts.pool_async_data_reads,
    ts.pool_index_l_reads,
    ts.pool_index_p_reads,
    ts.pool_async_index_reads,
    ts.pool_temp_data_l_reads,
    ts.pool_temp_data_p_reads,
    ts.pool_temp_index_l_reads,
    ts.pool_temp_index_p_reads,
    ts.pool_xda_l_reads,
    ts.pool_xda_p_reads,
    ts.pool_async_xda_reads,
    ts.pool_col_l_reads,
    ts.pool_col_p_reads,
    ts.pool_async_col_reads,
    ts.pool_read_time,
    ts.pool_async_read_time,
    ts.pool_data_writes,
    ts.pool_index_writes,
    ts.pool_xda_writes,
    ts.pool_col_writes,
    ts.pool_write_time,
    ts.vectored_ios,
    ts.pages_from_vectored_ios,
    ts.block_ios,
    ts.pages_from_block_ios,
    ts.direct_reads,
    ts.direct_read_reqs,
    ts.direct_read_time,
    ts.direct_writes,
    ts.direct_write_reqs,
    ts.direct_write_time
FROM ts
LEFT JOIN SYSCAT.TABLESPACES AS c
    ON c.tbspace = ts.tbsp_name
CROSS JOIN ctx
CROSS JOIN srv
ORDER BY ts.tbsp_id
WITH UR
