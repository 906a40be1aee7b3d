"""T-SQL dialect: batches separated by `GO`, for sqlcmd and SSMS (SQLCMD mode).

How a script stops (domain.md §7):

- The first batch holds `:on error exit`, so sqlcmd (and SSMS in SQLCMD mode) stops at the first
  error of any statement. The second batch checks that sqlcmd variables are substituted; when
  they are not (SSMS without SQLCMD mode, or `sqlcmd -x`), it raises and sets NOEXEC, so nothing
  after it runs in any tool.
- A failed pre-check raises `RAISERROR(N'%s', 16, 1, @msg)`, sets `NOEXEC ON` and `RETURN`s:
  RAISERROR at severity 16 does not end the batch (THROW would, before NOEXEC could be set;
  NOEXEC first would silence THROW), the message goes through `%s` so a `%` in a name is never a
  format, NOEXEC stops every later batch even where `:on error exit` is not honoured, and RETURN
  ends the current batch at once (sqlcmd only acts on `:on error exit` after the batch, and the
  rest of the batch must not run whatever the tool). The last batch sets NOEXEC OFF again and
  says whether the script finished or stopped.
- Names never contain line breaks or `$(` (quoting.check_name refuses them), so no generated line
  can be a `GO`, a sqlcmd command or a variable; the gate's `$(TierwiseSqlcmdMode)` is the only
  variable in a script.

`render(move, direction, forward, options, generated_at)` dispatches on the action type.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from migrations.header import header_lines
from migrations.plan import Move, Options, Unsupported
from migrations.quoting import comment_lines, path_separator, tsql_ident, tsql_str

SQLCMD_VARIABLE = "TierwiseSqlcmdMode"
MIN_MAJOR_VERSION = 11  # SQL Server 2012: sys.databases.replica_id, sys.dm_exec_sessions.database_id
CLOUD_EDITIONS = "5, 6, 8, 9, 11"  # Azure SQL Database, Synapse, Managed Instance, Edge, serverless


def fail(condition: str, message: str, indent: str = "") -> list[str]:
    """IF condition: raise `message` (a T-SQL string expression) and stop every later batch."""
    assign = [] if message == "@msg" else [f"{indent}    SET @msg = {message};"]
    return [
        f"{indent}IF {condition}",
        f"{indent}BEGIN",
        *assign,
        f"{indent}    RAISERROR(N'%s', 16, 1, @msg);",
        f"{indent}    SET NOEXEC ON;",
        f"{indent}    RETURN;",
        f"{indent}END;",
    ]


def fail_if_msg(indent: str = "") -> list[str]:
    """Raise when an earlier query left a message in @msg."""
    return fail("@msg IS NOT NULL", "@msg", indent)


def say(text: str, indent: str = "") -> str:
    return f"{indent}PRINT {tsql_str('tierwise: ' + text)};"


@dataclass
class Batches:
    """A script under construction: header lines, then batches (each a list of lines)."""

    header: list[str]
    batches: list[list[str]] = field(default_factory=list)

    def add(self, *lines: str | list[str]) -> None:
        out: list[str] = []
        for item in lines:
            if isinstance(item, list):
                out.extend(item)
            else:
                out.append(item)
        self.batches.append(out)

    def text(self) -> str:
        parts = [*comment_lines(self.header, "tsql")]
        parts += [":on error exit", f':setvar {SQLCMD_VARIABLE} "on"', "GO"]
        for b in self.batches:
            parts.extend(b)
            parts.append("GO")
        return "\n".join(parts) + "\n"


def gate() -> list[str]:
    return [
        f"IF N'$({SQLCMD_VARIABLE})' <> N'on'",
        "BEGIN",
        "    RAISERROR(N'%s', 16, 1, N'tierwise: run this script with sqlcmd -b, or in SSMS with Query > "
        "SQLCMD Mode switched on; never with sqlcmd -x. Nothing was changed.');",
        "    SET NOEXEC ON;",
        "    RETURN;",
        "END;",
    ]


def finish(done: str) -> list[str]:
    return [
        "DECLARE @tw_finished bit;",
        "SET @tw_finished = 1;  -- not executed when a check stopped the script (NOEXEC)",
        "SET NOEXEC OFF;",
        "IF @tw_finished = 1",
        "BEGIN",
        say(done, "    "),
        "END",
        "ELSE",
        "BEGIN",
        say(
            "STOPPED: a check or step above failed or asked for a manual step; later steps did not run.",
            "    ",
        ),
        # a marker for the session: in a file of several scripts (tierwise ilm --scripts) the
        # next part's guard (part_guard) stops there instead of running on after NOEXEC OFF
        "    IF OBJECT_ID(N'tempdb..#tierwise_stopped') IS NULL CREATE TABLE #tierwise_stopped (stopped bit);",
        "END;",
    ]


def part_guard() -> list[str]:
    """The first batch of every later part of a multi-script file: stop when an earlier part
    stopped (its finish batch left #tierwise_stopped in the session)."""
    return [
        "IF OBJECT_ID(N'tempdb..#tierwise_stopped') IS NOT NULL",
        "BEGIN",
        "    RAISERROR(N'%s', 16, 1, N'tierwise: an earlier part of this file stopped; this part and the later ones do not run.');",
        "    SET NOEXEC ON;",
        "    RETURN;",
        "END;",
    ]


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
    db = move.target.database
    minutes = round(options.backup_max_age_hours * 60)
    hours = f"{options.backup_max_age_hours:g}"
    text = (
        f"tierwise: pre-check failed: no full backup of {tsql_ident(db)} finished in the last {hours} hours "
        "(last: "
    )
    message = (
        f"{tsql_str(text)} + COALESCE(CONVERT(nvarchar(30), @last_full, 120), N'never') + "
        "N'). Take one first. Nothing was changed.'"
    )
    lines = [
        "DECLARE @last_full datetime;",
        "SELECT @last_full = MAX(backup_finish_date) FROM msdb.dbo.backupset",
        f"WHERE database_name = {tsql_str(db)} AND type = 'D';",
    ]
    cond = f"@last_full IS NULL OR @last_full < DATEADD(MINUTE, -{minutes}, GETDATE())"
    if options.backup_check == "error":
        return [*lines, *fail(cond, message)]
    return [
        *lines,
        f"IF {cond}",
        "BEGIN",
        f"    PRINT REPLACE({message}, N'pre-check failed', N'warning');",
        "END;",
    ]


MAJOR_VERSION = "CAST(PARSENAME(CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), 4) AS int)"
FS_NOTE = (
    "File-system checks use sys.dm_os_file_exists (SQL Server 2017+) and sys.dm_os_volume_stats / "
    "sys.dm_os_enumerate_fixed_drives (2019+); xp_fileexist / xp_fixeddrives only on older versions. "
    "The script prints which one it used."
)


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
        "    PRINT N'tierwise: directory check with sys.dm_os_file_exists';",
        "    EXEC sys.sp_executesql N'SELECT @d = CAST(file_is_a_directory AS bit) FROM sys.dm_os_file_exists(@p);',",
        f"        N'@p nvarchar(4000), @d bit OUTPUT', @p = {tsql_str(probe)}, @d = @dir_is_directory OUTPUT;",
        "END",
        "ELSE",
        "BEGIN",
        "    PRINT N'tierwise: directory check with xp_fileexist (SQL Server before 2017)';",
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
            "    PRINT N'tierwise: free space from sys.dm_os_enumerate_fixed_drives';",
            "    EXEC sys.sp_executesql N'SELECT @f = free_space_in_bytes / 1048576 FROM sys.dm_os_enumerate_fixed_drives"
            " WHERE UPPER(LEFT(fixed_drive_path, 1)) = UPPER(@d);',",
            f"        N'@d nchar(1), @f bigint OUTPUT', @d = {tsql_str(directory[0])}, @f = @free_mb OUTPUT;",
            "END",
            "ELSE IF @free_mb IS NULL",
            "BEGIN",
            "    PRINT N'tierwise: free space from xp_fixeddrives (SQL Server before 2019)';",
            "    DECLARE @drives TABLE (drive nvarchar(5), mb_free bigint);",
            "    INSERT INTO @drives EXEC master.dbo.xp_fixeddrives;",
            f"    SELECT @free_mb = mb_free FROM @drives WHERE UPPER(drive) = UPPER({tsql_str(directory[0])});",
            "END;",
        ]
    lines += [
        "IF @free_mb IS NULL",
        "BEGIN",
        f"    PRINT {tsql_str(f'tierwise: warning: cannot measure the free space under {directory} (no database file on that volume yet); {what} needs about ')}"
        " + CAST(@need_mb AS nvarchar(20)) + N' MB there.';",
        "END;",
        *fail(
            "@free_mb < @need_mb",
            f"{tsql_str(f'tierwise: pre-check failed: {what} needs ')} + CAST(@need_mb AS nvarchar(20)) + "
            f"N' MB under ' + {tsql_str(directory)} + N' ({headroom_pct:g} % headroom included), but only ' + "
            "CAST(@free_mb AS nvarchar(20)) + N' MB are free. Nothing was changed.'",
        ),
    ]
    return lines


def render(move: Move, direction: str, forward: Move, options: Options, generated_at: datetime) -> str:
    from migrations import tsql_leading, tsql_offline, tsql_online, tsql_partition, tsql_readonly
    from migrations.plan import AddPartition, MoveFiles, MovePartition, SetReadOnly

    action = move.action
    if isinstance(action, MoveFiles):
        if action.mode == "online":
            return tsql_online.render_online(move, action, direction, forward, options, generated_at)
        if action.mode == "offline":
            return tsql_offline.render_offline(move, action, direction, forward, options, generated_at)
        return tsql_offline.render_restart(move, action, direction, forward, options, generated_at)
    if isinstance(action, SetReadOnly):
        return tsql_readonly.render_read_only(move, action, direction, forward, options, generated_at)
    if isinstance(action, MovePartition):
        return tsql_partition.render_partition(move, action, direction, forward, options, generated_at)
    if isinstance(action, AddPartition):
        return tsql_leading.render_add_partition(move, action, direction, forward, options, generated_at)
    raise Unsupported(f"{move.key}: {type(action).__name__} is a DB2 action; it has no T-SQL form")


def make_header(
    move: Move,
    direction: str,
    forward: Move,
    options: Options,
    generated_at: datetime,
    *,
    what: str,
    source: str,
    destination: str,
    method: list[str],
    limits: list[str],
) -> list[str]:
    run = [
        f"sqlcmd -S {move.target.server} -E -b -f 65001 -i <this file>   (or SSMS: Query > SQLCMD Mode)",
        "Never run it with sqlcmd -x. Read docs/running-scripts.md first.",
        FS_NOTE,
    ]
    return header_lines(
        move,
        direction=direction,
        forward=forward,
        dialect_title="T-SQL",
        what=what,
        source=source,
        destination=destination,
        method=method,
        limits=limits,
        run=run,
        options=options,
        generated_at=generated_at,
    )
