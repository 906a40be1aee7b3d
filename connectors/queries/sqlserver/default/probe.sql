-- tierwise: which optional DMV features does this build have (FRK-style probe, no version parsing)
-- has_volume_stats:    sys.dm_os_volume_stats exists (usable from 2008 R2 SP1)
-- has_queued_io_stats: sys.dm_io_virtual_file_stats has io_stall_queued_read_ms (2014+)
SELECT
    CASE
        WHEN EXISTS (
            SELECT 1
            FROM sys.all_objects AS ao
            WHERE ao.name = N'dm_os_volume_stats' AND ao.schema_id = SCHEMA_ID(N'sys')
        ) THEN 1
        ELSE 0
    END AS has_volume_stats,
    CASE
        WHEN EXISTS (
            SELECT 1
            FROM sys.all_columns AS ac
            WHERE
                ac.object_id = OBJECT_ID(N'sys.dm_io_virtual_file_stats')
                AND ac.name = N'io_stall_queued_read_ms'
        ) THEN 1
        ELSE 0
    END AS has_queued_io_stats
