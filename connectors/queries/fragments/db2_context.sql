-- tierwise: one row for every Db2 monitor query and collection export, the one definition:
-- the poll time, the database name and the activation time the counters start from, in UTC.
-- Every file that reports sample_time / db_conn_time embeds this text between "begin fragment" /
-- "end fragment" comments; edit it here, then run: python -m connectors.queries.fragments.
-- Db2 timestamps are server-local; they are shifted by CURRENT TIMEZONE (the offset now), so a
-- daylight-saving change moves db_conn_time by the DST shift once (docs/connect-db2.md). The
-- latest activation of any member (MON_GET_DATABASE(-2)).
SELECT
    CURRENT TIMESTAMP - CURRENT TIMEZONE AS sample_time,
    CAST(CURRENT SERVER AS VARCHAR(128)) AS db_name,
    MAX(d.db_conn_time) - CURRENT TIMEZONE AS db_conn_time
FROM TABLE(MON_GET_DATABASE(-2)) AS d
