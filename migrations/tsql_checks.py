"""T-SQL pre-checks every kind of move shares: the right server, availability groups, backups,
sessions that compete for the same pages, the log's room, directories and free space.

Each returns lines for one batch of the frame (tsql_frame); a failed check stops the script with
`fail` before anything changed.
"""

from __future__ import annotations

from migrations.plan import Move, Options
from migrations.quoting import basename, dirname, path_separator, tsql_ident, tsql_str
from migrations.tsql_frame import (
    CLOUD_EDITIONS,
    MAJOR_VERSION,
    MIN_MAJOR_VERSION,
    fail,
    fail_if_msg,
    say,
    say_expr,
)


def identity_checks(move: Move) -> list[str]:
    """Right server, supported version, not a cloud service, database present."""
    server, db = move.target.server, move.target.database
    current = "CAST(SERVERPROPERTY('ServerName') AS nvarchar(256))"
    return [
        *fail(
            f"UPPER({current}) <> UPPER({tsql_str(server)})",
            f"{tsql_str(f'tierwise: pre-check failed: this script is for server {server}, but the connection is to ')} + "
            f"{current} + N'. Nothing was changed.'",
        ),
        *fail(
            f"CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int) < {MIN_MAJOR_VERSION}",
            "N'tierwise: pre-check failed: SQL Server 2012 or later is needed. Nothing was changed.'",
        ),
        *fail(
            f"CAST(SERVERPROPERTY('EngineEdition') AS int) IN ({CLOUD_EDITIONS})",
            "N'tierwise: pre-check failed: this is a managed cloud service; its files are not moved with "
            "ALTER DATABASE. Nothing was changed.'",
        ),
        *fail(
            f"DB_ID({tsql_str(db)}) IS NULL",
            tsql_str(
                f"tierwise: pre-check failed: database {tsql_ident(db)} does not exist. Nothing was changed."
            ),
        ),
    ]


def ha_checks(move: Move, why: str) -> list[str]:
    """Availability groups and mirroring: the move is not scripted for them (§3.5)."""
    db = move.target.database
    lit = tsql_str(db)
    return [
        *fail(
            f"EXISTS (SELECT 1 FROM sys.databases WHERE name = {lit} AND replica_id IS NOT NULL)",
            tsql_str(
                f"tierwise: pre-check failed: {tsql_ident(db)} is in an availability group; {why} "
                "Move it per replica by hand (docs/running-scripts.md). Nothing was changed."
            ),
        ),
        *fail(
            f"EXISTS (SELECT 1 FROM sys.database_mirroring WHERE database_id = DB_ID({lit}) AND mirroring_guid IS NOT NULL)",
            tsql_str(f"tierwise: pre-check failed: {tsql_ident(db)} is mirrored; {why} Nothing was changed."),
        ),
        "IF OBJECT_ID(N'msdb.dbo.log_shipping_primary_databases') IS NOT NULL",
        f"    AND EXISTS (SELECT 1 FROM msdb.dbo.log_shipping_primary_databases WHERE primary_database = {lit})",
        "BEGIN",
        say(
            f"warning: {tsql_ident(db)} is a log shipping primary; restores on the secondary need the new "
            "paths (RESTORE ... WITH MOVE) after this change.",
            "    ",
        ),
        "END;",
    ]


def backup_check(move: Move, options: Options) -> list[str]:
    """A recent full backup of THIS database that a restore can use.

    - type 'D' (full database); copy-only full backups count: a copy-only full restores on its
      own and the log chain stays intact, it only does not become the differential base
      ("Copy-Only Backups (SQL Server)"), which is not what this check is about;
    - not written to the NUL device (`BACKUP ... TO DISK = 'NUL'`, a habit to reset the log
      chain or test speed, leaves a backupset row and no backup): no media family of the media
      set is NUL or /dev/null;
    - of this incarnation of the database: backupset.database_guid ("When the database is
      restored, a new value is assigned", backupset page) = sys.database_recovery_status
      .database_guid ("RESTORE always generates a new GUID"), so neither a backup of an older
      database of the same name nor one of another database restored under this name counts;
    - not damaged (is_damaged: the backup continued despite errors)."""
    db = move.target.database
    minutes = round(options.backup_max_age_hours * 60)
    hours = f"{options.backup_max_age_hours:g}"
    text = (
        f"tierwise: pre-check failed: no usable full backup of {tsql_ident(db)} (this database, not copied to NUL) "
        f"finished in the last {hours} hours (last: "
    )
    message = (
        f"{tsql_str(text)} + COALESCE(CONVERT(nvarchar(30), @last_full, 120), N'never') + "
        "N'). Take one first. Nothing was changed.'"
    )
    lines = [
        "DECLARE @last_full datetime;",
        "SELECT @last_full = MAX(b.backup_finish_date)",
        "FROM msdb.dbo.backupset AS b",
        "WHERE b.type = 'D' AND b.is_damaged = 0",
        "    AND b.database_guid = (SELECT rs.database_guid FROM sys.database_recovery_status AS rs",
        f"        WHERE rs.database_id = DB_ID({tsql_str(db)}))",
        "    AND NOT EXISTS (SELECT 1 FROM msdb.dbo.backupmediafamily AS f WHERE f.media_set_id = b.media_set_id",
        "        AND (UPPER(f.physical_device_name) IN (N'NUL', N'NUL:') OR f.physical_device_name = N'/dev/null'));",
    ]
    cond = f"@last_full IS NULL OR @last_full < DATEADD(MINUTE, -{minutes}, GETDATE())"
    if options.backup_check == "error":
        return [*lines, *fail(cond, message)]
    return [
        *lines,
        f"IF {cond}",
        "BEGIN",
        say_expr(f"REPLACE(SUBSTRING({message}, 11, 2048), N'pre-check failed', N'warning')", "    "),
        "END;",
    ]


def _lit_db(move: Move) -> str:
    return tsql_str(move.target.database)


def server_state_check(tail: str = "Nothing was changed.") -> list[str]:
    """The checks on other sessions read sys.dm_exec_requests and sys.dm_tran_locks, which show
    only the caller's own session without VIEW SERVER STATE (DMV pages, Permissions): without
    it they would pass silently."""
    return fail(
        "HAS_PERMS_BY_NAME(NULL, NULL, N'VIEW SERVER STATE') = 0",
        tsql_str(
            "tierwise: pre-check failed: this login lacks VIEW SERVER STATE, so the script cannot see a running "
            f"BACKUP or DBCC of the database. Grant it or run as sysadmin. {tail}"
        ),
    )


def busy_checks(move: Move, tail: str = "Nothing was changed.") -> list[str]:
    """No BACKUP and no other DBCC (CHECKDB, another shrink) runs on this database now.

    "Backup Overview (SQL Server)": ADD FILE, REMOVE FILE and shrink cannot run during a
    database or log backup; whichever comes second waits for the first one's lock and then
    fails. A request belongs to this database when it runs in it or holds a DATABASE lock on it
    (a BACKUP or DBCC CHECKDB of it started from master runs in master). Needs @msg declared and
    server_state_check() before."""
    lit = _lit_db(move)
    q = tsql_ident(move.target.database)
    on_db = (
        f"(r.database_id = DB_ID({lit}) OR EXISTS (SELECT 1 FROM sys.dm_tran_locks AS l "
        f"WHERE l.request_session_id = r.session_id AND l.resource_type = N'DATABASE' AND l.resource_database_id = DB_ID({lit})))"
    )
    return [
        "SELECT TOP (1) @msg = N'tierwise: pre-check failed: ' + r.command + N' (session ' + CAST(r.session_id AS nvarchar(10))",
        f"    + {tsql_str(f') is running on {q}. ADD FILE, DBCC SHRINKFILE and REMOVE FILE cannot run during a database or log backup (each waits for the other, then one fails). Pause the backup jobs of {q} (log backups too) while this script runs, and run it again after the backup. {tail}')}",
        "FROM sys.dm_exec_requests AS r",
        f"WHERE UPPER(r.command) LIKE N'BACKUP%' AND {on_db};",
        *fail_if_msg(),
        "SELECT TOP (1) @msg = N'tierwise: pre-check failed: ' + r.command + N' (session ' + CAST(r.session_id AS nvarchar(10))",
        f"    + {tsql_str(f') is running on {q}: a DBCC CHECKDB or another shrink competes with this move for the same pages and locks. Run this script after it finished. {tail}')}",
        "FROM sys.dm_exec_requests AS r",
        f"WHERE UPPER(r.command) LIKE N'DBCC%' AND r.session_id <> @@SPID AND {on_db};",
        *fail_if_msg(),
    ]


def snapshot_check(move: Move, tail: str = "Nothing was changed.") -> list[str]:
    """No database snapshot of this database: "Files cannot be dropped from the source database
    or from any snapshots" ("Database Snapshots (SQL Server)", limitations on the source
    database), and every page a move rewrites is first copied into each snapshot."""
    q = tsql_ident(move.target.database)
    return [
        "SELECT TOP (1) @msg = N'tierwise: pre-check failed: database snapshot ' + QUOTENAME(s.name)",
        f"    + {tsql_str(f' of {q} exists; files cannot be removed from a database that has snapshots, and every moved page would be copied into them. Drop the snapshots first. {tail}')}",
        f"FROM sys.databases AS s WHERE s.source_database_id = DB_ID({_lit_db(move)});",
        *fail_if_msg(),
    ]


def columnstore_check(filegroup: str, why: str) -> list[str]:
    """Before SQL Server 2025 (17.x), refuse a filegroup that holds columnstore data: shrink
    cannot move columnstore pages there (DBCC SHRINKDATABASE page: "fails when it encounters an
    xVelocity memory optimized columnstore index"; the 2025 release lifts it for EMPTYFILE, not
    verifiable in the stored docs: version 17 is trusted here and checked by the post-check).
    Run in the database; needs @msg declared."""
    return [
        f"IF {MAJOR_VERSION} < 17",
        "BEGIN",
        "    SELECT TOP (1) @msg = N'tierwise: pre-check failed: columnstore index ' + QUOTENAME(i.name) + N' on '",
        "        + QUOTENAME(OBJECT_SCHEMA_NAME(i.object_id)) + N'.' + QUOTENAME(OBJECT_NAME(i.object_id))",
        f"        + {tsql_str(f' has data in filegroup {tsql_ident(filegroup)}; {why} Nothing was changed.')}",
        "    FROM sys.indexes AS i",
        "    JOIN sys.partitions AS p ON p.object_id = i.object_id AND p.index_id = i.index_id",
        "    JOIN sys.allocation_units AS au ON au.container_id = p.partition_id",
        f"    WHERE i.type IN (5, 6) AND au.data_space_id = FILEGROUP_ID({tsql_str(filegroup)});",
        *fail_if_msg("    "),
        "END;",
    ]


def volume_of_directory(directory: str) -> list[str]:
    """Set @log_shared_volume to the volume holding `directory`: sys.dm_os_volume_stats of the
    longest mount point that prefixes it (any online database's file on it), as free_space_check."""
    return [
        "SELECT TOP (1) @log_shared_volume = vs.volume_id",
        "FROM sys.master_files AS mf",
        "JOIN sys.databases AS d ON d.database_id = mf.database_id AND d.state = 0",
        "CROSS APPLY sys.dm_os_volume_stats(mf.database_id, mf.file_id) AS vs",
        f"WHERE LEFT(LOWER({tsql_str(directory)}), LEN(vs.volume_mount_point)) = LOWER(vs.volume_mount_point)",
        "ORDER BY LEN(vs.volume_mount_point) DESC;",
    ]


def volume_of_filegroup(filegroup: str) -> list[str]:
    """Set @log_shared_volume to the volume of the filegroup's first file (`filegroup`: an
    nvarchar T-SQL expression; run in the database)."""
    return [
        "SELECT TOP (1) @log_shared_volume = vs.volume_id",
        "FROM sys.database_files AS df CROSS APPLY sys.dm_os_volume_stats(DB_ID(), df.file_id) AS vs",
        f"WHERE df.data_space_id = FILEGROUP_ID({filegroup}) ORDER BY df.file_id;",
    ]


LOG_SAMPLE_SECONDS = 5  # between the two reads of the database's Log Bytes Flushed/sec counter


def log_rate_sample() -> list[str]:
    """Set @log_rate_mb_s to the log the current database writes now, MB/s: two reads of its
    'Log Bytes Flushed/sec' counter (sys.dm_os_performance_counters, object Databases, instance
    the database name; a cumulative count whose rate is the difference over the interval) five
    seconds apart. NULL when the counter cannot be read (it needs VIEW SERVER STATE)."""
    counter = (
        "SELECT {var} = cntr_value FROM sys.dm_os_performance_counters WHERE counter_name = N'Log Bytes Flushed/sec' "
        "AND object_name LIKE N'%:Databases%' AND instance_name = DB_NAME();"
    )
    return [
        "DECLARE @log_flushed0 bigint, @log_flushed1 bigint, @log_t0 datetime2(3), @log_rate_mb_s decimal(19, 3);",
        counter.format(var="@log_flushed0"),
        "SET @log_t0 = SYSUTCDATETIME();",
        f"WAITFOR DELAY '00:00:{LOG_SAMPLE_SECONDS:02d}';",
        counter.format(var="@log_flushed1"),
        "SET @log_rate_mb_s = (@log_flushed1 - @log_flushed0) / 1048576.0"
        " / NULLIF(DATEDIFF(MILLISECOND, @log_t0, SYSUTCDATETIME()) / 1000.0, 0);",
    ]


def log_room_check(
    need_mb: str,
    what: str,
    headroom_pct: float,
    shared: tuple[list[str], str] | None = None,
    *,
    run_seconds: str,
) -> list[str]:
    """The transaction log can hold what the run adds to it: the move's own log (`need_mb`, a
    bigint expression, MB, plus headroom) and the log the database's other work writes while the
    move runs, which stays too (log backups are paused for the run; a single transaction, as the
    partition move's, keeps the log active until it commits): the log generation rate measured
    now (log_rate_sample) times the estimated duration (`run_seconds`, a T-SQL expression that may
    use @log_move_mb). When the rate cannot be read, the check says it covers the move's own log
    only. Room: free space in the log (sys.dm_db_log_space_usage, SQL Server 2012+, reports the
    current database, so run it in the database) plus what the log files may still grow to
    (growth on, below max_size, within the volume's free space). Only in FULL / BULK_LOGGED
    recovery: in SIMPLE the log is reused after each checkpoint. Needs @msg declared.

    Each volume's free space counts once: log files on one volume share it (summing it per file
    counted it once per file). `shared` = (lines that set @log_shared_volume, see
    volume_of_directory / volume_of_filegroup; MB expression) is what the move's data will still
    take on that volume, which the log cannot grow into as well."""
    factor = 1 + headroom_pct / 100
    reserve: list[str] = []
    reserved = "0"
    if shared is not None:
        volume, reserve_mb = shared
        reserve = [
            "DECLARE @log_shared_volume nvarchar(256), @log_reserved_mb bigint;",
            f"SET @log_reserved_mb = CEILING(({reserve_mb}) * {factor:.2f});",
            *volume,
        ]
        reserved = "CASE WHEN v.volume_id = @log_shared_volume THEN @log_reserved_mb ELSE 0 END"
    return [
        "DECLARE @log_need_mb bigint, @log_move_mb bigint, @log_during_mb bigint, @log_run_s bigint,",
        "    @log_free_mb bigint, @log_grow_mb bigint, @recovery nvarchar(60);",
        f"SET @log_move_mb = CEILING(({need_mb}) * {factor:.2f});",
        "SELECT @recovery = recovery_model_desc FROM sys.databases WHERE database_id = DB_ID();",
        *log_rate_sample(),
        f"SET @log_run_s = {run_seconds};",
        "SET @log_during_mb = CEILING(@log_rate_mb_s * @log_run_s);",
        "SET @log_need_mb = @log_move_mb + COALESCE(@log_during_mb, 0);",
        "SELECT @log_free_mb = (total_log_size_in_bytes - used_log_space_in_bytes) / 1048576 FROM sys.dm_db_log_space_usage;",
        *reserve,
        "-- per volume: what its log files may still grow by, at most the volume's free space (counted once)",
        "SELECT @log_grow_mb = COALESCE(SUM(CASE WHEN v.free_mb - " + reserved + " < 0 THEN 0",
        "    WHEN v.grow_mb < v.free_mb - " + reserved + " THEN v.grow_mb",
        "    ELSE v.free_mb - " + reserved + " END), 0)",
        "FROM (SELECT vs.volume_id, MIN(vs.available_bytes) / 1048576 AS free_mb,",
        "        SUM(CASE WHEN df.growth = 0 THEN 0 WHEN df.max_size = -1 THEN vs.available_bytes / 1048576",
        "            ELSE (CAST(df.max_size AS bigint) - df.size) / 128 END) AS grow_mb",
        "    FROM sys.database_files AS df CROSS APPLY sys.dm_os_volume_stats(DB_ID(), df.file_id) AS vs",
        "    WHERE df.type = 1 GROUP BY vs.volume_id) AS v;",
        say_expr(
            f"{tsql_str(f'log: {what} writes about ')} + CAST(@log_move_mb AS nvarchar(20)) + N' MB of log'"
            " + CASE WHEN @log_rate_mb_s IS NULL THEN N' (the database''s log generation rate could not be read: this"
            " check covers the move''s own log only)'"
            " ELSE N', and the database''s other work writes ' + CAST(@log_rate_mb_s AS nvarchar(30))"
            " + N' MB/s now (measured over "
            + str(LOG_SAMPLE_SECONDS)
            + " s), about ' + CAST(@log_during_mb AS nvarchar(20))"
            " + N' MB more over the estimated ' + CAST(@log_run_s / 60 + 1 AS nvarchar(20)) + N' min of the run' END"
            " + N'; recovery model ' + @recovery + N', ' + CAST(@log_free_mb AS nvarchar(20)) + N' MB free in the log, which can grow by '"
            " + CAST(@log_grow_mb AS nvarchar(20)) + N' MB.'"
        ),
        *fail(
            "@recovery <> N'SIMPLE' AND @log_free_mb + @log_grow_mb < @log_need_mb",
            f"{tsql_str(f'tierwise: pre-check failed: {what} is fully logged: about ')} + CAST(@log_move_mb AS nvarchar(20))"
            " + N' MB of log ("
            + f"{headroom_pct:g}"
            + " % headroom included)' + CASE WHEN @log_during_mb IS NULL THEN N'' ELSE N' plus about '"
            " + CAST(@log_during_mb AS nvarchar(20)) + N' MB the database''s other work writes during the run ('"
            " + CAST(@log_rate_mb_s AS nvarchar(30)) + N' MB/s now)' END + N', which stays in the log until the next log backup ('"
            " + @recovery + N' recovery, log backups paused for the move), but the log has ' + CAST(@log_free_mb AS nvarchar(20))"
            " + N' MB free and can grow by only ' + CAST(@log_grow_mb AS nvarchar(20)) + N' MB"
            + (
                " (set aside: the room the moved data needs on a volume it shares with the log)"
                if shared is not None
                else ""
            )
            + ". Grow the log first, or run in a quieter hour. Nothing was changed.'",
        ),
    ]


def ifi_note(need_mb: str) -> list[str]:
    """Say whether instant file initialization is on (sys.dm_server_services
    .instant_file_initialization_enabled, SQL Server 2016 SP1+ and 2012 SP4: read through
    sp_executesql where the column exists). Without it ADD FILE first writes zeros over the
    whole new file; a warning with an estimate, not a stop: the move still works, only slower,
    and the new file's size is what the data needs."""
    return [
        "DECLARE @ifi nvarchar(1);",
        "IF COL_LENGTH(N'sys.dm_server_services', N'instant_file_initialization_enabled') IS NOT NULL",
        "    EXEC sys.sp_executesql N'SELECT TOP (1) @i = instant_file_initialization_enabled FROM sys.dm_server_services "
        "WHERE servicename LIKE N''SQL Server (%'';', N'@i nvarchar(1) OUTPUT', @i = @ifi OUTPUT;",
        "IF @ifi = N'Y'",
        "BEGIN",
        say("instant file initialization is on: new data files are not zeroed first.", "    "),
        "END",
        "ELSE",
        "BEGIN",
        say_expr(
            "N'warning: instant file initialization is ' + CASE WHEN @ifi = N'N' THEN N'off' ELSE N'unknown' END"
            f" + N': ADD FILE first writes zeros over ' + CAST(({need_mb}) AS nvarchar(20)) + N' MB, about '"
            f" + CAST(({need_mb}) / 200 / 60 + 1 AS nvarchar(20)) + N' min at ~200 MB/s. Grant the service account "
            "Perform volume maintenance tasks to avoid it.'",
            "    ",
        ),
        "END;",
    ]


def file_exists_probe(path: str, var: str) -> list[str]:
    """Set the declared bit `var` to whether `path` exists as a file, as the service account
    sees it: sys.dm_os_file_exists on SQL Server 2017+ (through sp_executesql), xp_fileexist
    before."""
    return [
        f"SET {var} = NULL;",
        f"IF {MAJOR_VERSION} >= 14",
        "    EXEC sys.sp_executesql N'SELECT @e = CAST(file_exists AS bit) FROM sys.dm_os_file_exists(@p);',",
        f"        N'@p nvarchar(4000), @e bit OUTPUT', @p = {tsql_str(path)}, @e = {var} OUTPUT;",
        "ELSE",
        "BEGIN",
        "    DELETE FROM @fe_probe;",
        f"    INSERT INTO @fe_probe EXEC master.dbo.xp_fileexist {tsql_str(path)};",
        f"    SELECT {var} = CAST(MAX(file_exists) AS bit) FROM @fe_probe;",
        "END;",
    ]


def file_size_probe(path: str, var: str) -> list[str]:
    """Set the declared bigint `var` to the size in bytes of the file at `path`, as the service
    account sees it: sys.dm_os_enumerate_filesystem(directory, name) (SQL Server 2017+, released
    with sys.dm_os_file_exists; its size_in_bytes column, level 0 = the directory itself, the name
    compared exactly as a pattern could match more), through sp_executesql so older versions never
    compile it; NULL before 2017 or when there is no such file."""
    return [
        f"SET {var} = NULL;",
        f"IF {MAJOR_VERSION} >= 14",
        "    EXEC sys.sp_executesql N'SELECT @s = MAX(size_in_bytes) FROM sys.dm_os_enumerate_filesystem(@d, @f) "
        "WHERE is_directory = 0 AND level = 0 AND file_or_directory_name = @f;',",
        f"        N'@d nvarchar(4000), @f nvarchar(4000), @s bigint OUTPUT', @d = {tsql_str(dirname(path))}, "
        f"@f = {tsql_str(basename(path))}, @s = {var} OUTPUT;",
    ]


def directory_check(directory: str, label: str) -> list[str]:
    """The target directory exists and the service account can see it (both probes run as it).

    SQL Server 2017+: sys.dm_os_file_exists (enabled in SQL Server 2017 per its release notes;
    not on the DMV reference pages, same columns as xp_fileexist), called through sp_executesql
    so that older versions never compile it. Older versions: xp_fileexist."""
    probe = directory
    if len(probe) > 3 and probe.endswith(("\\", "/")):
        probe = probe[:-1]
    return [
        "DECLARE @dir_is_directory bit;",
        f"IF {MAJOR_VERSION} >= 14",
        "BEGIN",
        say("directory check with sys.dm_os_file_exists", "    "),
        "    EXEC sys.sp_executesql N'SELECT @d = CAST(file_is_a_directory AS bit) FROM sys.dm_os_file_exists(@p);',",
        f"        N'@p nvarchar(4000), @d bit OUTPUT', @p = {tsql_str(probe)}, @d = @dir_is_directory OUTPUT;",
        "END",
        "ELSE",
        "BEGIN",
        say("directory check with xp_fileexist (SQL Server before 2017)", "    "),
        "    DECLARE @dir_probe TABLE (file_exists int, is_directory int, parent_exists int);",
        f"    INSERT INTO @dir_probe EXEC master.dbo.xp_fileexist {tsql_str(probe)};",
        "    SELECT @dir_is_directory = CAST(MAX(is_directory) AS bit) FROM @dir_probe;",
        "END;",
        *fail(
            "COALESCE(@dir_is_directory, 0) = 0",
            tsql_str(
                f"tierwise: pre-check failed: the {label} directory {directory} does not exist, or the SQL "
                "Server service account cannot see it. Create it and grant the service account full control. "
                "Nothing was changed."
            ),
        ),
    ]


def free_space_check(directory: str, need_mb: str, headroom_pct: float, what: str) -> list[str]:
    """Free space on the volume holding `directory` >= need (a T-SQL bigint expression, MB) plus
    headroom. Measured from sys.dm_os_volume_stats of the longest mount point that prefixes the
    directory (any database file on that volume), else xp_fixeddrives (drive letters); when
    neither knows the volume, a warning (SQL Server then refuses files that do not fit)."""
    factor = 1 + headroom_pct / 100
    windows = path_separator(directory) == "\\"
    lines = [
        "DECLARE @free_mb bigint, @need_mb bigint;",
        f"SET @need_mb = CEILING(({need_mb}) * {factor:.2f});",
        "SELECT TOP (1) @free_mb = vs.available_bytes / 1048576",
        "FROM sys.master_files AS mf",
        "JOIN sys.databases AS d ON d.database_id = mf.database_id AND d.state = 0",
        "CROSS APPLY sys.dm_os_volume_stats(mf.database_id, mf.file_id) AS vs",
        f"WHERE LEFT(LOWER({tsql_str(directory)}), LEN(vs.volume_mount_point)) = LOWER(vs.volume_mount_point)",
        "ORDER BY LEN(vs.volume_mount_point) DESC;",
    ]
    if windows and directory[1:2] == ":":
        # no database file on that volume yet: the drive's free space, from
        # sys.dm_os_enumerate_fixed_drives (documented, SQL Server 2019+) or xp_fixeddrives before
        lines += [
            f"IF @free_mb IS NULL AND {MAJOR_VERSION} >= 15",
            "BEGIN",
            say("free space from sys.dm_os_enumerate_fixed_drives", "    "),
            "    EXEC sys.sp_executesql N'SELECT @f = free_space_in_bytes / 1048576 FROM sys.dm_os_enumerate_fixed_drives"
            " WHERE UPPER(LEFT(fixed_drive_path, 1)) = UPPER(@d);',",
            f"        N'@d nchar(1), @f bigint OUTPUT', @d = {tsql_str(directory[0])}, @f = @free_mb OUTPUT;",
            "END",
            "ELSE IF @free_mb IS NULL",
            "BEGIN",
            say("free space from xp_fixeddrives (SQL Server before 2019)", "    "),
            "    DECLARE @drives TABLE (drive nvarchar(5), mb_free bigint);",
            "    INSERT INTO @drives EXEC master.dbo.xp_fixeddrives;",
            f"    SELECT @free_mb = mb_free FROM @drives WHERE UPPER(drive) = UPPER({tsql_str(directory[0])});",
            "END;",
        ]
    lines += [
        "IF @free_mb IS NULL",
        "BEGIN",
        say_expr(
            f"{tsql_str(f'warning: cannot measure the free space under {directory} (no database file on that volume yet); {what} needs about ')}"
            " + CAST(@need_mb AS nvarchar(20)) + N' MB there.'",
            "    ",
        ),
        "END;",
        *fail(
            "@free_mb < @need_mb",
            f"{tsql_str(f'tierwise: pre-check failed: {what} needs ')} + CAST(@need_mb AS nvarchar(20)) + "
            f"N' MB under ' + {tsql_str(directory)} + N' ({headroom_pct:g} % headroom included), but only ' + "
            "CAST(@free_mb AS nvarchar(20)) + N' MB are free. Nothing was changed.'",
        ),
    ]
    return lines


def opening_checks(move: Move, title: str) -> list[str]:
    """The start of the first batch, in master: the title line, then the right server, version
    and edition, and the database present and ONLINE."""
    db = move.target.database
    return [
        "USE [master];",
        "SET NOCOUNT ON;",
        "DECLARE @msg nvarchar(2048);",
        say(title),
        *identity_checks(move),
        *fail(
            f"DATABASEPROPERTYEX({tsql_str(db)}, 'Status') <> N'ONLINE'",
            tsql_str(
                f"tierwise: pre-check failed: database {tsql_ident(db)} is not ONLINE. Nothing was changed."
            ),
        ),
    ]


def log_backup_next_step(move: Move, what: str) -> list[str]:
    """After a fully logged move (EMPTYFILE), in FULL or BULK_LOGGED recovery: print the exact
    next step, a log backup, and never take one here. The log keeps every record until a log
    backup, and the backup jobs (destination, retention, the log chain) were paused for the move
    and are the operator's. Not a condition of REMOVE FILE: a data file is removable once empty
    (Microsoft Learn, "Delete data or log files from a database": "A file must be empty before it
    can be deleted"; DBCC SHRINKFILE, EMPTYFILE "empties the file and allows for its database
    removal"); a log backup is what frees a secondary *log* file for removal, and these scripts
    never remove a log file (log files are copied offline). Run in the database; needs nothing
    declared but the frame's variables."""
    q = tsql_ident(move.target.database)
    return [
        "IF EXISTS (SELECT 1 FROM sys.databases WHERE database_id = DB_ID() AND recovery_model_desc <> N'SIMPLE')",
        "BEGIN",
        say(
            f"next step: resume the log backup jobs of {q} and take a log backup now (BACKUP LOG {q} TO <your "
            f"backup destination>, or start the log backup job): {what} is fully logged and stays in the log "
            "until then. This script never takes a backup itself.",
            "    ",
        ),
        "END;",
    ]
