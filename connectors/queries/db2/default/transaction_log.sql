-- tierwise: the database's transaction log as one object, summed over members (shape
-- db2_transaction_log). LOG_READS/LOG_WRITES are 4 KB pages. log_size_bytes = used + available
-- log space (NULL with infinite logging). log_path = the primary log path from SYSIBMADM.DBPATHS.
-- Permissions: EXECUTE on SYSPROC.MON_GET_TRANSACTION_LOG, SYSPROC.MON_GET_DATABASE,
-- SYSPROC.ENV_GET_SYSTEM_RESOURCES; SELECT on SYSIBMADM.DBPATHS and SYSIBMADM.ENV_INST_INFO.
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

lg AS (
    SELECT
        CASE
            WHEN MIN(l.total_log_available) >= 0
                THEN SUM(l.total_log_used + l.total_log_available)
        END AS log_size_bytes,
        SUM(l.log_writes) AS log_writes,
        SUM(l.log_write_time) AS log_write_time,
        SUM(l.num_log_write_io) AS num_log_write_io,
        SUM(l.log_reads) AS log_reads,
        SUM(l.log_read_time) AS log_read_time,
        SUM(l.num_log_read_io) AS num_log_read_io
    FROM TABLE(MON_GET_TRANSACTION_LOG(-2)) AS l
),

lp AS (
    SELECT MIN(p.path) AS log_path
    FROM SYSIBMADM.DBPATHS AS p
    WHERE p.type = 'LOGPATH'
)

SELECT
    ctx.sample_time,
    srv.server_name,
    ctx.db_name,
    ctx.db_conn_time,
    lp.log_path,
    lg.log_size_bytes,
    lg.log_writes,
    lg.log_write_time,
    lg.num_log_write_io,
    lg.log_reads,
    lg.log_read_time,
    lg.num_log_read_io
FROM lg
CROSS JOIN lp
CROSS JOIN ctx
CROSS JOIN srv
WITH UR
