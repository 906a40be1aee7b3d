"""T-SQL: what the file moves share (filegroups, logs, tempdb): header, plan table, helpers.

Three ways to move files (domain.md §3.1–3.3), chosen by the plan (`MoveFiles.mode`):

- online — a secondary data file: ADD FILE on the target to the same filegroup, DBCC SHRINKFILE
  EMPTYFILE (pages move to the filegroup's other files), REMOVE FILE. The database stays online.
- offline — the primary data file (file_id 1, whose filegroup moves with it) and log files
  (errors 5020/2555: they can never be emptied and removed): SET OFFLINE, copy by hand,
  MODIFY FILE, SET ONLINE. One script, run twice: the first run checks and takes the database
  offline, prints what to copy where, and stops; the second run (after the copy) repoints the
  catalog and brings the database online. The copy is an operator's action — the script never
  runs OS commands (no xp_cmdshell).
- restart — tempdb: MODIFY FILE only; the instance uses the new files after its next restart.

Every run re-reads the state (sys.master_files, sys.databases) and does only what is left.
The bodies are in tsql_online.py and tsql_offline.py (offline and restart).
"""

from __future__ import annotations

from datetime import datetime

from migrations.plan import FileMove, Move, MoveFiles, Options
from migrations.quoting import dirname, path_separator, tsql_ident, tsql_str
from migrations.tsql import Batches, gate, make_header

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
    move: Move, action: MoveFiles, direction: str, forward: Move, options: Options, at: datetime
) -> Batches:
    """The script's header and SQLCMD-mode gate; the caller adds the batches."""
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
        destination=target_dir(action.files),
        method=[*method, "Files:", *_file_lines(action)],
        limits=limits,
    )
    script = Batches(header)
    script.add(gate())
    return script


def _method(action: MoveFiles) -> tuple[list[str], list[str]]:
    if action.mode == "online":
        return (
            [
                "online: for each file, ADD FILE on the target to the same filegroup, DBCC SHRINKFILE (EMPTYFILE)",
                "moves its pages to the filegroup's other files, then REMOVE FILE. The database stays online.",
            ],
            [
                "EMPTYFILE is fully logged, slow on large files and fragments indexes: take log backups while it runs.",
                "With several old files some pages move more than once (proportional fill).",
                "Files cannot be added or removed while a BACKUP runs; run again after it.",
                "The new files get new logical names (the rollback restores the original names and paths).",
            ],
        )
    if action.mode == "offline":
        return (
            [
                "offline, in two runs of this same script:",
                "  run 1: pre-checks, SET OFFLINE WITH ROLLBACK IMMEDIATE, prints what to copy where, stops.",
                "  MANUAL STEP: copy (do not move) the files, then run the script again.",
                "  run 2: checks the copies exist, MODIFY FILE (catalog), SET ONLINE, post-check.",
            ],
            [
                "DOWNTIME: the database is offline from run 1 until run 2 brings it online.",
                "The primary data file and log files can never be removed (errors 5020/2555), so they are copied.",
                "Not for availability-group or mirrored databases (they cannot be taken offline).",
                "The SQL Server service account needs full control of the copies; delete the originals only after the post-check passed.",
            ],
        )
    return (
        [
            "restart: MODIFY FILE for each tempdb file. TAKES EFFECT AT THE NEXT RESTART of the SQL Server",
            "service; until then tempdb keeps using its current files. Nothing is copied (tempdb is rebuilt at start).",
        ],
        [
            "RESTART REQUIRED. If the target directory is missing at restart, SQL Server does not start: the",
            "pre-check verifies it now; keep it in place.",
        ],
    )
