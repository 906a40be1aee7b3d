"""T-SQL: what the file moves share (filegroups, logs, tempdb): header, plan table, helpers.

Three ways to move files (domain.md §3.1–3.3), chosen by the plan (`MoveFiles.mode`):

- online — a secondary data file: ADD FILE on the target to the same filegroup, DBCC SHRINKFILE
  EMPTYFILE (pages move to the filegroup's other files), REMOVE FILE. The database stays online,
  but moving a table's IAM pages takes a schema-modification lock on it (tsql_online.py).
- offline — the primary data file (file_id 1, whose filegroup moves with it) and log files
  (errors 5020/2555: they can never be emptied and removed): SET OFFLINE, copy by hand,
  MODIFY FILE, SET ONLINE. One script, run twice: the first run checks and takes the database
  offline, prints what to copy where, and stops; the second run (after the copy) repoints the
  catalog and brings the database online. The copy is an operator's action — the script never
  runs OS commands (no xp_cmdshell).
- restart — tempdb: MODIFY FILE only; the instance uses the new files after its next restart.

Every run re-reads the state (sys.master_files, sys.databases) and does only what is left.
The bodies are in tsql_online.py, tsql_offline.py and tsql_tempdb.py (restart).
"""

from __future__ import annotations

from datetime import datetime

from migrations.header import Operations
from migrations.plan import FileMove, Move, MoveFiles, Options
from migrations.quoting import dirname, path_separator, tsql_ident, tsql_str
from migrations.tsql_frame import Batches, make_header

MB = 1024 * 1024
TEMPDB = "N'tempdb'"


def size_mb(f: FileMove, options: Options) -> int:
    if f.size_bytes is None:
        return options.min_file_mb
    return max(options.min_file_mb, -(-f.size_bytes // MB))


def lower_eq(column: str, path: str) -> str:
    """Windows paths compare case-insensitively; POSIX paths (SQL Server on Linux) exactly."""
    if path_separator(path) == "\\":
        return f"LOWER({column}) = LOWER({tsql_str(path)})"
    return f"{column} = {tsql_str(path)}"


def target_dir(files: tuple[FileMove, ...]) -> str:
    return dirname(files[0].to_path)


def sizes(files: tuple[FileMove, ...]) -> tuple[int, int]:
    """Known bytes, and how many files have no size in the plan."""
    return sum(f.size_bytes or 0 for f in files), sum(1 for f in files if f.size_bytes is None)


def gb(size: int) -> str:
    """Bytes as GB with one decimal."""
    return f"{size / 1024**3:,.1f} GB"


def file_at(db_lit: str, f: FileMove, path: str) -> str:
    """The catalog has the planned file at `path` (sys.master_files, readable while the database is
    offline)."""
    return (
        f"EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID({db_lit}) "
        f"AND name = {tsql_str(f.to_name)} AND {lower_eq('physical_name', path)})"
    )


def any_old(db_lit: str, files: tuple[FileMove, ...]) -> str:
    """Any planned file still at its old place."""
    return " OR ".join(file_at(db_lit, f, f.from_path) for f in files)


def all_new(db_lit: str, files: tuple[FileMove, ...]) -> str:
    """Every planned file at its new place."""
    return " AND ".join(file_at(db_lit, f, f.to_path) for f in files)


def plan_table(action: MoveFiles, options: Options) -> list[str]:
    rows = ",\n".join(
        f"    ({i}, {tsql_str(f.from_name)}, {tsql_str(f.from_path)}, {tsql_str(f.to_name)}, "
        f"{tsql_str(f.to_path)}, {size_mb(f, options)})"
        for i, f in enumerate(action.files, start=1)
    )
    return [
        "IF OBJECT_ID(N'tempdb..#tw_files') IS NOT NULL DROP TABLE #tw_files;",
        "-- the plan's files; DATABASE_DEFAULT: compared with this database's catalog, whatever tempdb's collation",
        "CREATE TABLE #tw_files (step int NOT NULL, from_name sysname COLLATE DATABASE_DEFAULT NOT NULL,",
        "    from_path nvarchar(260) COLLATE DATABASE_DEFAULT NOT NULL, to_name sysname COLLATE DATABASE_DEFAULT NOT NULL,",
        "    to_path nvarchar(260) COLLATE DATABASE_DEFAULT NOT NULL, size_mb bigint NOT NULL);",
        "INSERT INTO #tw_files (step, from_name, from_path, to_name, to_path, size_mb) VALUES",
        rows + ";",
    ]


def describe(move: Move, action: MoveFiles) -> str:
    db = tsql_ident(move.target.database)
    if action.what == "tempdb":
        return f"the tempdb files {', '.join(tsql_ident(f.from_name) for f in action.files)}"
    if action.what == "log":
        return f"log file {tsql_ident(action.files[0].from_name)} of database {db}"
    if action.what == "database":
        names = ", ".join(tsql_ident(f.from_name) for f in action.files)
        return f"the offline files {names} of database {db}"
    if action.what == "filegroup" and action.filegroup is not None:
        return f"filegroup {tsql_ident(action.filegroup)} of database {db} ({len(action.files)} file(s))"
    return f"data file {tsql_ident(action.files[0].from_name)} of database {db}"


def _file_lines(action: MoveFiles) -> list[str]:
    out: list[str] = []
    for f in action.files:
        rename = "" if f.from_name == f.to_name else f" (new logical name {tsql_ident(f.to_name)})"
        out.append(f"  {tsql_ident(f.from_name)}: {f.from_path} -> {f.to_path}{rename}")
    return out


def start(
    move: Move,
    action: MoveFiles,
    direction: str,
    forward: Move,
    options: Options,
    at: datetime,
    operations: Operations | None = None,
) -> Batches:
    """The script's header (with its Operations block); the caller adds the check batches and the
    change section (the frame writes the gate and the check-only barrier)."""
    source = ", ".join(sorted({dirname(f.from_path) for f in action.files}))
    method, limits = _method(action)
    header = make_header(
        move,
        direction,
        forward,
        options,
        at,
        what=describe(move, action),
        source=source,
        destination=", ".join(dict.fromkeys(dirname(f.to_path) for f in action.files)),
        method=[*method, "Files:", *_file_lines(action)],
        limits=limits,
        operations=operations,
    )
    return Batches(header)


# Permissions, from each statement's "Permissions" section (Microsoft Learn): ALTER DATABASE
# File and Filegroup Options, ALTER permission on the database; DBCC SHRINKFILE, sysadmin or
# db_owner; sys.dm_exec_requests / sys.dm_tran_locks / sys.dm_os_volume_stats /
# sys.dm_server_services, VIEW SERVER STATE (without it the DMVs show the caller's session only,
# so the scripts stop: tsql_checks.server_state_check). xp_fileexist and xp_fixeddrives are
# undocumented.
_BACKUP_READ = "SELECT on msdb.dbo.backupset and backupmediafamily (the backup check)"
PERMISSIONS_ONLINE = (
    "Permissions: sysadmin covers all. Without it: ALTER on the database (ADD / MODIFY / REMOVE FILE), db_owner "
    f"(DBCC SHRINKFILE), VIEW SERVER STATE (the checks for a running BACKUP or DBCC, free space, instant file "
    f"initialization: the script stops without it), {_BACKUP_READ}; before SQL Server 2017 / 2019 the directory "
    "and free-space probes use xp_fileexist / xp_fixeddrives (undocumented): run as sysadmin there."
)
PERMISSIONS_OFFLINE = (
    "Permissions: sysadmin (the run marker is a table the script creates in msdb). The statements need ALTER on "
    f"the database (SET OFFLINE / ONLINE, MODIFY FILE), VIEW SERVER STATE (the checks) and {_BACKUP_READ}."
)
PERMISSIONS_RESTART = (
    "Permissions: ALTER on tempdb (MODIFY FILE) and VIEW SERVER STATE (sys.dm_os_volume_stats: an error without "
    "it); the directory probe before "
    "SQL Server 2017 uses xp_fileexist (undocumented): run as sysadmin there. Restarting the service needs "
    "Windows (or Linux) service rights."
)


def _method(action: MoveFiles) -> tuple[list[str], list[str]]:
    if action.mode == "online":
        return (
            [
                "online: for each file, ADD FILE on the target to the same filegroup (same growth and maximum size",
                "as the old file), DBCC SHRINKFILE (EMPTYFILE) moves its pages to the filegroup's other files, then",
                "REMOVE FILE. The database stays online, but NOT without blocking: see Operations.",
            ],
            [
                "PAUSE the backup jobs of this database (log backups especially) while it runs: ADD FILE, EMPTYFILE and "
                "REMOVE FILE cannot run during a database or log backup (each waits for the other, then one fails). Every "
                "step checks first and stops while a BACKUP or a DBCC (CHECKDB) of the database runs.",
                "EMPTYFILE is fully logged (about the used size of the file) and fragments indexes; in FULL recovery the log "
                "keeps all of it until the next log backup: the script checks the log has room first.",
                "With several old files some pages move more than once (proportional fill).",
                "Refused while the filegroup is READ_ONLY, while database snapshots exist, and before SQL Server 2025 when "
                "the filegroup holds columnstore data.",
                "The new files get new logical names (the rollback restores the original names, paths, growth and maximum size).",
                PERMISSIONS_ONLINE,
            ],
        )
    if action.mode == "offline":
        return (
            [
                "offline, in two runs of this same script:",
                "  run 1: pre-checks, SET OFFLINE WITH ROLLBACK IMMEDIATE, records a run marker in msdb, prints",
                "         what to copy where, stops.",
                "  MANUAL STEP: copy (do not move) the files and their ACLs, then run the script again.",
                "  run 2: accepts the copies only under run 1's marker of this same direction (database offline",
                "         since, files where the marker recorded them), MODIFY FILE (catalog), SET ONLINE and clears",
                "         the marker, post-check.",
            ],
            [
                "DOWNTIME: the database is offline from run 1 until run 2 brings it online.",
                "Only the primary data file and the primary log file can never be removed (error 5020), and EMPTYFILE cannot empty the primary data file (error 2555), so these are copied; a secondary log file can be removed once inactive, but this plan moves it whole.",
                "Not for availability-group or mirrored databases, nor while database snapshots exist (error 5094).",
                "The SQL Server service account needs full control of the copies: copy the ACLs with the files (the MANUAL STEP prints how); delete the originals only after the post-check passed.",
                "Run marker: table msdb.dbo.tierwise_offline_run (created if absent; the script runs as sysadmin); run 2 accepts copies only while it holds run 1's marker.",
                PERMISSIONS_OFFLINE,
            ],
        )
    return (
        [
            "restart: MODIFY FILE for each tempdb file. TAKES EFFECT AT THE NEXT RESTART of the SQL Server",
            "service; until then tempdb keeps using its current files. Nothing is copied (tempdb is rebuilt at start).",
        ],
        [
            "RESTART REQUIRED. If the target directory is missing at restart, SQL Server does not start: the pre-check verifies it now; keep it in place.",
            "If the instance does not start after the restart, the script's last lines say how to recover (start it with -f -T3608, MODIFY FILE back).",
            "The plan must name every tempdb file of the kind it moves (data or log): the script stops when sys.master_files lists another one, which would stay on the old tier.",
            PERMISSIONS_RESTART,
        ],
    )
