"""T-SQL: tempdb's files to another tier (domain.md §3.3): MODIFY FILE only; the instance uses the
new files after its next restart (nothing is copied: tempdb is rebuilt at start).

Every run re-reads sys.master_files and configures only the files not at their target yet; the
pre-check insists the plan names every tempdb file of the kinds it moves (a missed one would stay
on the old tier), and the last lines say how to start the instance should the new place fail.
"""

from __future__ import annotations

from datetime import datetime

from migrations.header import Operations
from migrations.plan import Move, MoveFiles, Options
from migrations.quoting import path_separator, tsql_ident, tsql_str
from migrations.tsql_checks import directory_check, file_exists_probe, free_space_check, identity_checks
from migrations.tsql_files import (
    TEMPDB,
    all_new,
    describe,
    file_at,
    gb,
    lower_eq,
    size_mb,
    sizes,
    start,
    target_dir,
)
from migrations.tsql_frame import MAJOR_VERSION, fail, finish, say, say_expr


def _tempdb_operations(action: MoveFiles) -> Operations:
    known, unknown = sizes(action.files)
    size = gb(known) + (f" (+{unknown} file(s) of unknown size)" if unknown else "")
    return Operations(
        duration=(
            "Seconds now (catalog changes). The move happens at the next restart of the SQL Server service, "
            f"which recreates these tempdb files ({size}) at their configured size: data files in seconds "
            "with instant file initialization, a log file is zeroed (minutes for a large one)."
        ),
        log_volume="Next to none: MODIFY FILE changes the catalog in master.",
        blocking="None now. The restart disconnects every session of the instance: plan it in a change window.",
        backups=(
            "tempdb is never backed up. Backup and other Agent jobs running at the restart fail: restart "
            "outside their windows."
        ),
        abort=(
            "Cancel at any point: each MODIFY FILE is checked first, so the script is safe to run again; "
            "before the restart the rollback script sets the old paths back and nothing else happened."
        ),
        recover=(
            f"If the instance does not start after the restart, start it with {_minimal_start(action)}, "
            "MODIFY FILE tempdb back to the old paths and restart: the script's last lines print the exact "
            "statements (Microsoft Learn: Move system databases, failure recovery)."
        ),
    )


def _minimal_start(action: MoveFiles) -> str:
    if path_separator(action.files[0].from_path) == "\\":
        return "NET START MSSQLSERVER /f /T3608"
    return "sqlservr -f -T3608 (as the mssql user)"


def _coverage_check(action: MoveFiles) -> list[str]:
    """Stop unless the plan names every tempdb file of the kinds it moves (sys.master_files.type of
    the planned files: data, log). A file the plan misses stays on the old path and keeps taking
    its share of tempdb I/O (proportional fill), so the move would look done and not be. The
    advice treats tempdb's data files as one unit and its log as another, so a missed file means
    one was added after the advice; moving only the data (or only the log) stays possible."""
    names = ", ".join(sorted({tsql_str(n) for f in action.files for n in (f.from_name, f.to_name)}))
    return [
        "DECLARE @missed nvarchar(1024);",
        "SET @missed = N'';",
        "-- the planned files' kinds (0 data, 1 log): every tempdb file of those kinds must be in the plan",
        "SELECT @missed = @missed + N' ' + QUOTENAME(mf.name) + N' (' + mf.type_desc + N') at ' + mf.physical_name + N';'",
        "FROM sys.master_files AS mf",
        f"WHERE mf.database_id = DB_ID({TEMPDB}) AND mf.name NOT IN ({names})",
        f"    AND mf.type IN (SELECT p.type FROM sys.master_files AS p WHERE p.database_id = DB_ID({TEMPDB}) AND p.name IN ({names}));",
        *fail(
            "@missed <> N''",
            "N'tierwise: pre-check failed: the plan does not move every tempdb file of its kind; these would stay "
            "where they are:' + @missed + N' Regenerate the advice and this script (or move them by hand with the "
            "same ALTER DATABASE [tempdb] MODIFY FILE). Nothing was changed.'",
        ),
    ]


def _recovery_lines(move: Move, action: MoveFiles) -> list[str]:
    """How to get the instance up when tempdb's new location fails at start: Microsoft Learn,
    "Move system databases", Failure recovery procedure (NET START ... /f /T3608: minimal
    configuration, master only recovered; then MODIFY FILE back, stop, start)."""
    windows = path_separator(action.files[0].from_path) == "\\"
    if windows:
        start = (
            "NET START MSSQLSERVER /f /T3608 (a named instance: NET START MSSQL$<instance> /f /T3608; the "
            "parameters are case sensitive)"
        )
        restart = "NET STOP MSSQLSERVER, then NET START MSSQLSERVER"
    else:
        start = "sudo systemctl stop mssql-server, then sudo -u mssql /opt/mssql/bin/sqlservr -f -T3608"
        restart = "stop that sqlservr (Ctrl+C), then sudo systemctl start mssql-server"
    back = [
        f"      ALTER DATABASE [tempdb] MODIFY FILE (NAME = {tsql_str(f.to_name)}, FILENAME = {tsql_str(f.from_path)});"
        for f in action.files
    ]
    return [
        say(
            "IF THE INSTANCE DOES NOT START after the restart (target directory missing or not writable by the "
            f"service account; see the error log): start it with {start},",
            "    ",
        ),
        say(
            f"  connect (single-user: stop SQL Server Agent first) with sqlcmd -S {move.target.server} -E and run:",
            "    ",
        ),
        *[say(b, "    ") for b in back],
        say(
            f"  then {restart}. Fix the target and run this script again later "
            "(Microsoft Learn: Move system databases, failure recovery procedure).",
            "    ",
        ),
    ]


def render_restart(
    move: Move, action: MoveFiles, direction: str, forward: Move, options: Options, at: datetime
) -> str:
    script = start(move, action, direction, forward, options, at, operations=_tempdb_operations(action))
    script.check(*_checks(move, action, direction))
    script.check(*_room(action, options))
    for i, f in enumerate(action.files, start=1):
        at_target = file_at(TEMPDB, f, f.to_path)
        script.add(
            "USE [master];",
            f"IF {at_target}",
            "BEGIN",
            say(f"step {i}: already done: {tsql_ident(f.to_name)} is configured at {f.to_path}", "    "),
            "END",
            "ELSE",
            "BEGIN",
            say(
                f"step {i}: configuring {tsql_ident(f.to_name)} at {f.to_path} (used after the restart)",
                "    ",
            ),
            f"    ALTER DATABASE [tempdb] MODIFY FILE (NAME = {tsql_str(f.to_name)}, FILENAME = {tsql_str(f.to_path)});",
            "END;",
        )
    script.add(*_post_check(move, action))
    script.add(finish(f"finished: tempdb is configured on tier {move.to_tier} (takes effect at restart)."))
    return script.text()


def _checks(move: Move, action: MoveFiles, direction: str) -> list[str]:
    """The right server; every planned file configured at its old or new place; the plan names every
    tempdb file of its kinds; the target directory exists."""
    target = target_dir(action.files)
    return [
        "USE [master];",
        "SET NOCOUNT ON;",
        "DECLARE @msg nvarchar(2048);",
        say(f"{direction}: {describe(move, action)}: tier {move.from_tier or 'unknown'} -> {move.to_tier}"),
        say("RESTART REQUIRED: the new locations take effect at the next restart of the SQL Server service."),
        *identity_checks(move),
        *[
            line
            for f in action.files
            for line in fail(
                f"NOT ({file_at(TEMPDB, f, f.from_path)} OR {file_at(TEMPDB, f, f.to_path)})",
                tsql_str(
                    f"tierwise: pre-check failed: tempdb file {tsql_ident(f.to_name)} is neither configured at "
                    f"{f.from_path} nor at {f.to_path}; the advice is out of date. Nothing was changed."
                ),
            )
        ],
        *_coverage_check(action),
        *directory_check(target, "target"),
        *_cluster_check(target),
        *_foreign_file_checks(action),
    ]


def _cluster_check(target: str) -> list[str]:
    """A failover cluster instance (SERVERPROPERTY('IsClustered') = 1) starts on whichever node owns
    it, so tempdb's directory must be there on every node. Microsoft Learn,
    sys.dm_io_cluster_valid_path_names: "A SQL Server failover cluster instance (FCI) must use
    shared storage between all nodes of the FCI for data and log file storage. The disks listed in
    this view are the disks that are in the cluster resource group associated with the instance";
    tempdb alone may sit on a local disk of each node (supported since SQL Server 2012, when the
    directory exists on every node with the service account's rights). The script sees only this
    node: on a shared disk of the instance it says so; otherwise it warns, naming each node
    (sys.dm_os_cluster_nodes), that the directory must exist on all of them before any failover or
    restart elsewhere. SQL Server 2012 has sys.dm_io_cluster_shared_drives instead (through
    sp_executesql, so no version compiles a view it lacks). Both views need VIEW SERVER STATE."""
    lt = tsql_str(target)
    return [
        "IF CAST(SERVERPROPERTY('IsClustered') AS int) = 1",
        "BEGIN",
        "    DECLARE @nodes nvarchar(2048), @shared bit;",
        "    SET @nodes = N'';",
        "    SELECT @nodes = @nodes + CASE WHEN @nodes = N'' THEN N'' ELSE N', ' END + NodeName + N' (' + status_description"
        " + CASE WHEN is_current_owner = 1 THEN N', runs the instance now' ELSE N'' END + N')' FROM sys.dm_os_cluster_nodes;",
        f"    IF {MAJOR_VERSION} >= 12",
        "        EXEC sys.sp_executesql N'SELECT @s = CASE WHEN EXISTS (SELECT 1 FROM sys.dm_io_cluster_valid_path_names"
        " WHERE LEFT(LOWER(@t), LEN(path_name)) = LOWER(path_name)) THEN 1 ELSE 0 END;',",
        f"            N'@t nvarchar(4000), @s bit OUTPUT', @t = {lt}, @s = @shared OUTPUT;",
        "    ELSE",
        "        EXEC sys.sp_executesql N'SELECT @s = CASE WHEN EXISTS (SELECT 1 FROM sys.dm_io_cluster_shared_drives"
        " WHERE UPPER(LEFT(@t, 1)) = UPPER(LEFT(DriveName, 1))) THEN 1 ELSE 0 END;',",
        f"            N'@t nvarchar(4000), @s bit OUTPUT', @t = {lt}, @s = @shared OUTPUT;",
        "    IF @shared = 1",
        "    BEGIN",
        say_expr(
            f"{tsql_str('failover cluster instance (nodes: ')} + @nodes + "
            f"{tsql_str(f'): {target} is on a shared disk of its resource group, which moves with the instance.')}",
            "        ",
        ),
        "    END",
        "    ELSE",
        "    BEGIN",
        say_expr(
            f"{tsql_str('warning: failover cluster instance (nodes: ')} + @nodes + "
            + tsql_str(
                f"): {target} is not on a shared disk of this instance (sys.dm_io_cluster_valid_path_names), so it is "
                "a local disk of each node. tempdb may live there only if the same directory exists, with full control "
                "for the SQL Server service account, on EVERY node: this script can check only the node it runs on. "
                f"Create {target} on each node listed before the restart, or the instance does not start on a node "
                "that lacks it after a failover."
            ),
            "        ",
        ),
        "    END;",
        "END;",
    ]


def _foreign_file_checks(action: MoveFiles) -> list[str]:
    """No file at a target path that is not this tempdb's own: at the restart SQL Server creates or
    reuses the file at the configured path, so another instance's tempdb file there (several
    instances configured on one shared tier directory) fails the start while that instance holds
    it open, or breaks that instance at its own next start; a file of another database of this
    instance is refused likewise. A file tempdb already runs from (a re-run after the restart) is
    its own. The probe runs as the service account (file_exists_probe)."""
    lines = [
        "DECLARE @fe_probe TABLE (file_exists int, is_directory int, parent_exists int), @target_exists bit;"
    ]
    for f in action.files:
        running = (
            f"EXISTS (SELECT 1 FROM tempdb.sys.database_files WHERE name = {tsql_str(f.to_name)} "
            f"AND {lower_eq('physical_name', f.to_path)})"
        )
        lines += [
            *file_exists_probe(f.to_path, "@target_exists"),
            *fail(
                f"@target_exists = 1 AND NOT {running}",
                tsql_str(
                    f"tierwise: pre-check failed: a file already exists at {f.to_path} and this instance's tempdb does "
                    "not run from it: another instance's tempdb file (instances must not share one tempdb directory: "
                    "give each its own, e.g. <tier directory>\\<instance>\\tempdb\\) or a leftover. At the restart "
                    "SQL Server would take it over, or fail to start while another instance holds it. If it is a "
                    "leftover of this instance, delete it; otherwise choose another directory. Nothing was changed."
                ),
            ),
            *fail(
                f"EXISTS (SELECT 1 FROM sys.master_files WHERE database_id <> DB_ID({TEMPDB}) "
                f"AND {lower_eq('physical_name', f.to_path)})",
                tsql_str(
                    f"tierwise: pre-check failed: {f.to_path} is a file of another database of this instance "
                    "(sys.master_files). Nothing was changed."
                ),
            ),
        ]
    return lines


def _room(action: MoveFiles, options: Options) -> list[str]:
    """While a file is not configured at the target yet: the volume has room for tempdb's files."""
    target = target_dir(action.files)
    pending = " OR ".join(f"NOT {file_at(TEMPDB, f, f.to_path)}" for f in action.files)
    return [
        "USE [master];",
        "DECLARE @msg nvarchar(2048);",
        f"IF NOT ({pending})",
        "BEGIN",
        say("every file is configured at the target already: no free-space check needed", "    "),
        "    RETURN;",
        "END;",
        *free_space_check(
            target,
            str(sum(size_mb(f, options) for f in action.files)),
            options.headroom_pct,
            "tempdb (recreated at its configured size at start)",
        ),
    ]


def _post_check(move: Move, action: MoveFiles) -> list[str]:
    """Every file configured at the target; whether tempdb already runs from there, else the restart
    and how to recover should it fail."""
    target = target_dir(action.files)
    all_to = all_new(TEMPDB, action.files)
    active = " AND ".join(
        f"EXISTS (SELECT 1 FROM tempdb.sys.database_files WHERE name = {tsql_str(f.to_name)} "
        f"AND {lower_eq('physical_name', f.to_path)})"
        for f in action.files
    )
    olds = "; ".join(f.from_path for f in action.files)
    return [
        "USE [master];",
        "DECLARE @msg nvarchar(2048);",
        *fail(
            f"NOT ({all_to})", tsql_str(f"tierwise: post-check failed: tempdb is not configured at {target}.")
        ),
        f"IF {active}",
        "BEGIN",
        say(f"post-check passed: tempdb is configured at and already running from {target}.", "    "),
        "END",
        "ELSE",
        "BEGIN",
        say(
            f"post-check passed: tempdb is configured at {target}. RESTART the SQL Server service in the change",
            "    ",
        ),
        say(f"window for it to take effect; after the restart delete the old files: {olds}", "    "),
        *_recovery_lines(move, action),
        "END;",
    ]
