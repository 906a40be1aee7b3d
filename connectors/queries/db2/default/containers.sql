-- tierwise: one row per table space container (shape db2_containers): its path, its file system
-- and its cumulative page I/O. Counters are summed over members; sizes are the same container
-- (and file system) seen by every member, so they are taken once (MAX). FS_TOTAL_SIZE and
-- FS_USED_SIZE are bytes of the file system holding the container (NULL where Db2 cannot tell,
-- e.g. raw devices). Page size from SYSCAT.TABLESPACES.
-- Permissions: EXECUTE on SYSPROC.MON_GET_CONTAINER, SYSPROC.MON_GET_DATABASE,
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

co AS (
    SELECT
        m.tbsp_name,
        m.container_name,
        MIN(m.container_id) AS container_id,
        MIN(m.db_storage_path_id) AS db_storage_path_id,
        MIN(m.fs_id) AS fs_id,
        MAX(m.fs_total_size) AS fs_total_size,
        MAX(m.fs_used_size) AS fs_used_size,
        MAX(m.total_pages) AS total_pages,
        MAX(m.usable_pages) AS usable_pages,
        SUM(m.pages_read) AS pages_read,
        SUM(m.pages_written) AS pages_written,
        SUM(m.direct_reads) AS direct_reads,
        SUM(m.direct_writes) AS direct_writes,
        SUM(m.pool_read_time) AS pool_read_time,
        SUM(m.direct_read_time) AS direct_read_time,
        SUM(m.direct_write_time) AS direct_write_time
    FROM TABLE(MON_GET_CONTAINER(NULL, -2)) AS m
    GROUP BY m.tbsp_name, m.container_name
)

SELECT
    ctx.sample_time,
    srv.server_name,
    ctx.db_name,
    ctx.db_conn_time,
    co.tbsp_name,
    co.container_name,
    co.container_id,
    co.db_storage_path_id,
    CAST(co.fs_id AS VARCHAR(64)) AS fs_id,
    co.fs_total_size,
    co.fs_used_size,
    t.pagesize AS tbsp_page_size,
    co.total_pages,
    co.usable_pages,
    co.pages_read,
    co.pages_written,
    co.direct_reads,
    co.direct_writes,
    co.pool_read_time,
    co.direct_read_time,
    co.direct_write_time
FROM co
LEFT JOIN SYSCAT.TABLESPACES AS t
    ON t.tbspace = co.tbsp_name
CROSS JOIN ctx
CROSS JOIN srv
ORDER BY co.tbsp_name, co.container_id
WITH UR
