-- tierwise: one row per data partition of every range-partitioned table (a table with a row in
-- SYSCAT.DATAPARTITIONEXPRESSION), visible partitions only (STATUS = ''), shape
-- db2_table_partitions. Driven by the catalog so that partitions not touched since activation are
-- listed too: MON_GET_TABLE has no row for them, their activity counters are 0 and their size
-- falls back to SYSCAT.DATAPARTITIONS.FPAGES (RUNSTATS; NULL if never collected).
-- Counters from MON_GET_TABLE(NULL, NULL, -2), summed over members.
-- Permissions: EXECUTE on SYSPROC.MON_GET_TABLE, SYSPROC.MON_GET_DATABASE,
-- SYSPROC.ENV_GET_SYSTEM_RESOURCES; SELECT on SYSCAT.DATAPARTITIONS,
-- SYSCAT.DATAPARTITIONEXPRESSION, SYSCAT.TABLESPACES and SYSIBMADM.ENV_INST_INFO.
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

mt AS (
    SELECT
        t.tabschema,
        t.tabname,
        t.data_partition_id,
        SUM(t.data_object_l_pages) AS data_object_l_pages,
        SUM(t.index_object_l_pages) AS index_object_l_pages,
        SUM(t.table_scans) AS table_scans,
        SUM(t.rows_read) AS rows_read,
        SUM(t.rows_inserted) AS rows_inserted,
        SUM(t.rows_updated) AS rows_updated,
        SUM(t.rows_deleted) AS rows_deleted,
        SUM(t.object_data_l_reads) AS object_data_l_reads,
        SUM(t.object_data_p_reads) AS object_data_p_reads,
        SUM(t.object_data_gbp_l_reads) AS object_data_gbp_l_reads,
        SUM(t.direct_read_reqs) AS direct_read_reqs,
        SUM(t.direct_write_reqs) AS direct_write_reqs
    FROM TABLE(MON_GET_TABLE(NULL, NULL, -2)) AS t
    GROUP BY t.tabschema, t.tabname, t.data_partition_id
)

SELECT
    ctx.sample_time,
    srv.server_name,
    ctx.db_name,
    ctx.db_conn_time,
    dp.tabschema,
    dp.tabname,
    dp.datapartitionid AS data_partition_id,
    dp.datapartitionname,
    ts.tbspace AS tbsp_name,
    ts.sgname AS storage_group_name,
    ts.pagesize AS tbsp_page_size,
    dp.lowvalue,
    dp.lowinclusive,
    dp.highvalue,
    dp.highinclusive,
    CASE WHEN dp.card >= 0 THEN dp.card END AS card,
    COALESCE(mt.data_object_l_pages, CASE WHEN dp.fpages >= 0 THEN dp.fpages END) AS data_object_l_pages,
    mt.index_object_l_pages,
    COALESCE(mt.table_scans, 0) AS table_scans,
    COALESCE(mt.rows_read, 0) AS rows_read,
    COALESCE(mt.rows_inserted, 0) AS rows_inserted,
    COALESCE(mt.rows_updated, 0) AS rows_updated,
    COALESCE(mt.rows_deleted, 0) AS rows_deleted,
    COALESCE(mt.object_data_l_reads, 0) AS object_data_l_reads,
    COALESCE(mt.object_data_p_reads, 0) AS object_data_p_reads,
    COALESCE(mt.object_data_gbp_l_reads, 0) AS object_data_gbp_l_reads,
    COALESCE(mt.direct_read_reqs, 0) AS direct_read_reqs,
    COALESCE(mt.direct_write_reqs, 0) AS direct_write_reqs
FROM SYSCAT.DATAPARTITIONS AS dp
INNER JOIN SYSCAT.TABLESPACES AS ts
    ON ts.tbspaceid = dp.tbspaceid
LEFT JOIN mt
    ON
        mt.tabschema = dp.tabschema
        AND mt.tabname = dp.tabname
        AND mt.data_partition_id = dp.datapartitionid
CROSS JOIN ctx
CROSS JOIN srv
WHERE
    dp.status = ''
    AND EXISTS (
        SELECT 1
        FROM SYSCAT.DATAPARTITIONEXPRESSION AS e
        WHERE e.tabschema = dp.tabschema AND e.tabname = dp.tabname
    )
ORDER BY dp.tabschema, dp.tabname, dp.seqno
WITH UR
