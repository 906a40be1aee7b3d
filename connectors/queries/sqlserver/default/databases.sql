-- tierwise: the databases to read file and partition data from.
-- ONLINE (state 0) databases that are not database snapshots; has_access = 0 means this login
-- has no user in the database (it is skipped and reported in the log).
SELECT
    d.name AS database_name,
    d.database_id,
    CAST(HAS_DBACCESS(d.name) AS int) AS has_access
FROM sys.databases AS d
WHERE d.state = 0 AND d.source_database_id IS NULL
ORDER BY d.database_id
