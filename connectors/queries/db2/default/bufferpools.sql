-- tierwise: cumulative page counters per buffer pool, summed over all members (shape
-- db2_bufferpools). BP_CUR_BUFFSZ (pages) is summed too: each member has its own pool memory.
-- The hidden system pools (IBMSYSTEMBP4K ... 32K, used only when a pool cannot be allocated) are
-- left out, as db2mon-style reports do. Page size from SYSCAT.BUFFERPOOLS.
-- Permissions: EXECUTE on SYSPROC.MON_GET_BUFFERPOOL, SYSPROC.MON_GET_DATABASE,
-- SYSPROC.ENV_GET_SYSTEM_RESOURCES; SELECT on SYSCAT.BUFFERPOOLS and SYSIBMADM.ENV_INST_INFO.
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

bp AS (
    SELECT
        b.bp_name,
        SUM(b.bp_cur_buffsz) AS bp_cur_buffsz,
        SUM(b.pool_data_l_reads) AS pool_data_l_reads,
        SUM(b.pool_data_p_reads) AS pool_data_p_reads,
        SUM(b.pool_async_data_reads) AS pool_async_data_reads,
        SUM(b.pool_index_l_reads) AS pool_index_l_reads,
        SUM(b.pool_index_p_reads) AS pool_index_p_reads,
        SUM(b.pool_async_index_reads) AS pool_async_index_reads,
        SUM(b.pool_temp_data_l_reads) AS pool_temp_data_l_reads,
        SUM(b.pool_temp_data_p_reads) AS pool_temp_data_p_reads,
        SUM(b.pool_temp_index_l_reads) AS pool_temp_index_l_reads,
        SUM(b.pool_temp_index_p_reads) AS pool_temp_index_p_reads,
        SUM(b.pool_data_lbp_pages_found) AS pool_data_lbp_pages_found,
        SUM(b.pool_async_data_lbp_pages_found) AS pool_async_data_lbp_pages_found,
        SUM(b.pool_read_time) AS pool_read_time,
        SUM(b.pool_async_read_time) AS pool_async_read_time,
        SUM(b.pool_data_writes) AS pool_data_writes,
        SUM(b.pool_index_writes) AS pool_index_writes,
        SUM(b.pool_write_time) AS pool_write_time,
        SUM(b.unread_prefetch_pages) AS unread_prefetch_pages
    FROM TABLE(MON_GET_BUFFERPOOL(NULL, -2)) AS b
    WHERE b.bp_name NOT LIKE 'IBMSYSTEMBP%'
    GROUP BY b.bp_name
)

SELECT
    ctx.sample_time,
    srv.server_name,
    ctx.db_name,
    ctx.db_conn_time,
    bp.bp_name,
    c.pagesize AS bp_page_size,
    bp.bp_cur_buffsz,
    bp.pool_data_l_reads,
    bp.pool_data_p_reads,
    bp.pool_async_data_reads,
    bp.pool_index_l_reads,
    bp.pool_index_p_reads,
    bp.pool_async_index_reads,
    bp.pool_temp_data_l_reads,
    bp.pool_temp_data_p_reads,
    bp.pool_temp_index_l_reads,
    bp.pool_temp_index_p_reads,
    bp.pool_data_lbp_pages_found,
    bp.pool_async_data_lbp_pages_found,
    bp.pool_read_time,
    bp.pool_async_read_time,
    bp.pool_data_writes,
    bp.pool_index_writes,
    bp.pool_write_time,
    bp.unread_prefetch_pages
FROM bp
LEFT JOIN SYSCAT.BUFFERPOOLS AS c
    ON c.bpname = bp.bp_name
CROSS JOIN ctx
CROSS JOIN srv
ORDER BY bp.bp_name
WITH UR
