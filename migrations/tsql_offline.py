"""T-SQL: offline moves (primary data file and log files); tempdb (restart) is tsql_tempdb.

Offline (domain.md §3.1; errors 5020/2555 rule out the online path): one script, run twice.
Run 1 checks, takes the database offline, records a run marker in msdb (plan checksum, time,
each file's size) and prints what to copy where, then stops. The operator copies the files (the
script never runs OS commands). Run 2 accepts the copies only under that marker — the database
has been offline since this pair of scripts took it offline, so a file at the new path was copied
after it stopped changing — points the catalog at them (MODIFY FILE), brings the database online
and clears the marker in that same batch (a marker never outlives its offline period), then checks
it. Run 2 accepts only a marker of its own direction whose files are still where it recorded them. The state is re-read from sys.master_files and sys.databases
(both readable while the database is offline) every time, so the same script also resumes after
any failure, and its inverse (the rollback) undoes any stage.
"""

from __future__ import annotations

from datetime import datetime

from migrations.durations import copy_minutes, minutes_text
from migrations.header import Operations
from migrations.plan import FileMove, Move, MoveFiles, Options
from migrations.quoting import dirname, path_separator, tsql_ident, tsql_str
from migrations.tsql_checks import (
    backup_check,
    directory_check,
    file_exists_probe,
    file_size_probe,
    free_space_check,
    ha_checks,
    identity_checks,
    server_state_check,
)
from migrations.tsql_files import (
    all_new,
    any_old,
    describe,
    file_at,
    gb,
    lower_eq,
    size_mb,
    sizes,
    start,
)
from migrations.tsql_frame import MAJOR_VERSION, fail, finish, say, say_expr

# The run marker. msdb because it survives the database going offline and the session ending;
# created by run 1 when absent: the scripts run as sysadmin (docs/running-scripts.md), which
# holds CREATE TABLE in msdb.
MARKER = "msdb.dbo.tierwise_offline_run"
MARKER_LIT = tsql_str(MARKER)


def _directories(action: MoveFiles) -> list[str]:
    """The plan's target directories, in the order of its files."""
    return list(dict.fromkeys(dirname(f.to_path) for f in action.files))


def _targets(action: MoveFiles) -> str:
    """The target directories for messages: one, or several joined with ' and '."""
    return " and ".join(_directories(action))


def _copy_time(files: tuple[FileMove, ...], rate_mb_s: float) -> str:
    known, unknown = sizes(files)
    minutes = minutes_text(copy_minutes(known, rate_mb_s))
    text = f"about {minutes} to copy {gb(known)} at ~{rate_mb_s:g} MB/s (copy speed varies with the storage)"
    if unknown:
        text += f", plus {unknown} file(s) of a size the plan does not know"
    return text


# ---------------------------------------------------------------------------------------------
# offline: SET OFFLINE / copy by hand / MODIFY FILE / SET ONLINE


def _copy_commands(f: FileMove) -> list[str]:
    """What the operator runs for one file: the copy, its ACL, and a size comparison.

    Windows: Copy-Item does not carry the original's ACL to the copy; `Get-Acl | Set-Acl` does
    (as dbatools' Move-DbaDbFile does after its copy), so the service account can open the copy.
    Linux: `cp -p` keeps mode and owner (as root), and chown makes mssql the owner either way."""
    if path_separator(f.from_path) == "\\":
        src, dst = f.from_path.replace("'", "''"), f.to_path.replace("'", "''")
        return [
            f"PowerShell: Copy-Item -LiteralPath '{src}' -Destination '{dst}'",
            f"  its ACL:  Get-Acl -LiteralPath '{src}' | Set-Acl -LiteralPath '{dst}'   (elevated PowerShell)",
            f"  check:    (Get-Item -LiteralPath '{src}').Length -eq (Get-Item -LiteralPath '{dst}').Length   -> True",
        ]
    src, dst = f.from_path.replace("'", "'\\''"), f.to_path.replace("'", "'\\''")
    return [
        f"shell: cp -p --sparse=always '{src}' '{dst}' && chown mssql:mssql '{dst}' && chmod 660 '{dst}'",
        f"  check:  stat -c %s '{src}' '{dst}'   (the same size twice)",
    ]


def _offline_operations(move: Move, action: MoveFiles, direction: str, options: Options) -> Operations:
    db = tsql_ident(move.target.database)
    other = "rollback" if direction == "forward" else "forward"
    back = "; ".join(
        f"ALTER DATABASE {db} MODIFY FILE (NAME = {tsql_str(f.to_name)}, FILENAME = {tsql_str(f.from_path)})"
        for f in action.files
    )
    return Operations(
        duration=(
            f"{db} is DOWN from run 1 to the end of run 2: {_copy_time(action.files, options.copy_rate_mb_s)}, plus a minute for "
            "the checks and the recovery at SET ONLINE; each run itself takes seconds. After SET ONLINE run 2 reads every "
            "page once (DBCC CHECKDB WITH PHYSICAL_ONLY) while the database is already online again."
        ),
        log_volume=(
            "Next to none: SET OFFLINE, MODIFY FILE and SET ONLINE change the catalog in master; the copy "
            "is a file copy. Open transactions are rolled back at SET OFFLINE from log already written."
        ),
        blocking=(
            f"SET OFFLINE WITH ROLLBACK IMMEDIATE disconnects every session of {db} and rolls back its open "
            "transactions (a long one takes as long to roll back); nobody can use it until run 2 ends."
        ),
        backups=(
            f"Backup, CHECKDB and index jobs of {db} fail while it is offline: pause them for the window. "
            "Run 1 stops while a BACKUP or DBCC runs on it (ROLLBACK IMMEDIATE would kill it). The backup "
            "chain is unaffected (same files, same LSNs)."
        ),
        abort=(
            "Before run 1's step 1 nothing has changed: cancel. After it the database is offline: do not "
            f"leave it so; finish the copy and run this script again, or run the {other} script (it brings "
            "it online on the untouched original files). Every step checks first, so both are safe to repeat."
        ),
        recover=(
            "The original files are never changed. If run 2 cannot bring the database online (permissions "
            "on a copy, a bad copy: errors 5120/5125/5173), fix the copies and run this script again. The "
            f"{other} script refuses once this run 2 has pointed a file at its copy (its run 2 needs a "
            "marker of its own direction); to go back then, and only while the database has stayed offline "
            f"since run 1, by hand: {back}; ALTER DATABASE {db} SET ONLINE; then DELETE FROM {MARKER} "
            f"WHERE database_name = {tsql_str(move.target.database)}."
        ),
    )


def _marker_table(ldb: str, any_from: str) -> list[str]:
    """Run 1: the run marker table in msdb, created when absent (a change: after the barrier)."""
    return [
        "USE [master];",
        f"IF {_state(ldb)} = N'ONLINE' AND ({any_from}) AND OBJECT_ID({MARKER_LIT}, N'U') IS NULL",
        "BEGIN",
        say(f"creating {MARKER} (run markers of offline moves; one row per file)", "    "),
        f"    CREATE TABLE {MARKER} (",
        "        database_name sysname NOT NULL,",
        "        plan_sha256 char(64) NOT NULL,",
        "        direction varchar(8) NOT NULL,",
        "        file_name sysname NOT NULL,",
        "        physical_name nvarchar(260) NOT NULL,",
        "        size_pages bigint NOT NULL,",
        "        size_bytes bigint NOT NULL,",
        "        taken_offline_at datetime NOT NULL,",
        "        taken_offline_by sysname NOT NULL,",
        "        CONSTRAINT PK_tierwise_offline_run PRIMARY KEY (database_name, plan_sha256, file_name)",
        "    );",
        "END;",
    ]


def _run1_checks(move: Move, ldb: str, qdb: str) -> list[str]:
    """Checks that only run 1 needs: what SET OFFLINE WITH ROLLBACK IMMEDIATE would break or fail on.

    - Database snapshots: the source of a snapshot must stay online (Microsoft Learn, "Database
      snapshots", limitations on the source database); SET OFFLINE fails with error 5094 ("... a
      database with database snapshots or active DBCC replicas").
    - A running BACKUP or DBCC (CHECKDB runs on an internal snapshot, the "DBCC replica" of 5094):
      ROLLBACK IMMEDIATE would kill it. sys.dm_exec_requests.command is 'BACKUP DATABASE',
      'BACKUP LOG', 'DBCC ...' (Microsoft Learn, sys.dm_exec_requests); the request's database_id
      is its session's database, so a BACKUP run from master is found by its DATABASE lock on the
      database (sys.dm_tran_locks). Both need VIEW SERVER STATE (sysadmin has it).
    - Availability groups and mirroring: ha_checks, in the first batch of every run."""
    running = (
        "EXISTS (SELECT 1 FROM sys.dm_exec_requests AS r "
        "WHERE (r.command LIKE N'BACKUP%' OR r.command LIKE N'DBCC%' OR r.command LIKE N'RESTORE%') "
        f"AND r.session_id <> @@SPID AND (r.database_id = DB_ID({ldb}) OR EXISTS (SELECT 1 FROM sys.dm_tran_locks AS l "
        f"WHERE l.request_session_id = r.session_id AND l.resource_type = N'DATABASE' "
        f"AND l.resource_database_id = DB_ID({ldb}))))"
    )
    return [
        *fail(
            f"EXISTS (SELECT 1 FROM sys.databases WHERE source_database_id = DB_ID({ldb}))",
            tsql_str(
                f"tierwise: pre-check failed: {qdb} has database snapshots (sys.databases.source_database_id); "
                "a database with snapshots cannot be taken offline (error 5094). Drop them (DROP DATABASE "
                "<snapshot>) or move later. Nothing was changed."
            ),
        ),
        # without VIEW SERVER STATE sys.dm_exec_requests shows only this session: the check below
        # would pass blind and ROLLBACK IMMEDIATE kill a running backup
        *server_state_check(),
        *fail(
            running,
            tsql_str(
                f"tierwise: pre-check failed: a BACKUP, RESTORE or DBCC (e.g. CHECKDB) is running on {qdb}; "
                "SET OFFLINE WITH ROLLBACK IMMEDIATE would kill it (or fail with error 5094). Let it finish "
                "and pause the backup and maintenance jobs of this database for the window, then run again. "
                "Nothing was changed."
            ),
        ),
    ]


def render_offline(
    move: Move, action: MoveFiles, direction: str, forward: Move, options: Options, at: datetime
) -> str:
    operations = _offline_operations(move, action, direction, options)
    script = start(move, action, direction, forward, options, at, operations=operations)
    ldb = tsql_str(move.target.database)
    any_from = any_old(ldb, action.files)
    script.check(*_where_now(move, action, direction))
    script.check(*_run1_checks_batch(move, action, options))
    for directory in _directories(action):
        script.check(*_run1_target_batch(move, action, options, directory))
    # run 2's checks of the copies, as pre-checks too: a check-only run between the two runs
    # verifies the copies before the real run 2 uses them
    script.check(_run2_gate(move, action, direction, forward, _state(ldb), any_from))
    script.add(*_marker_table(ldb, any_from))
    script.add(*_take_offline(move, action, direction, forward))
    script.add(_run2_gate(move, action, direction, forward, _state(ldb), any_from))
    script.add(*_point_at_copies(move, action))
    script.add(*_bring_online(move, action, direction))
    script.add(*_offline_post_check(move, action))
    script.add(finish(f"finished: {describe(move, action)} is on tier {move.to_tier}."))
    return script.text()


def _state(ldb: str) -> str:
    """The database's state, an expression readable while it is offline."""
    return f"(SELECT state_desc FROM sys.databases WHERE name = {ldb})"


def _where_now(move: Move, action: MoveFiles, direction: str) -> list[str]:
    """Run 1 and run 2: the right server, no availability group, every file where the plan says (old
    or new place), the database in a state this script handles."""
    ldb = tsql_str(move.target.database)
    qdb = tsql_ident(move.target.database)
    target = _targets(action)
    state = _state(ldb)
    all_to = all_new(ldb, action.files)
    return [
        "USE [master];",
        "SET NOCOUNT ON;",
        "DECLARE @msg nvarchar(2048);",
        say(
            f"{direction}: {describe(move, action)}: tier {move.from_tier or 'unknown'} -> {move.to_tier} (offline)"
        ),
        *identity_checks(move),
        *ha_checks(move, "a database in one cannot be taken offline."),
        "-- every planned file is where the plan says: old place, or new place after an earlier run",
        *[
            line
            for f in action.files
            for line in fail(
                f"NOT ({file_at(ldb, f, f.from_path)} OR {file_at(ldb, f, f.to_path)})",
                tsql_str(
                    f"tierwise: pre-check failed: file {tsql_ident(f.to_name)} of {qdb} is neither at {f.from_path} "
                    f"nor at {f.to_path}; the advice is out of date. Nothing was changed."
                ),
            )
        ],
        *fail(
            f"{state} NOT IN (N'ONLINE', N'OFFLINE', N'RECOVERY_PENDING')",
            f"{tsql_str(f'tierwise: pre-check failed: database {qdb} is ')} + {state} + N'; review it by hand. Nothing was changed.'",
        ),
        f"IF {state} = N'ONLINE' AND {all_to}",
        "BEGIN",
        say(f"already done: {qdb} is online from {target}; the steps below change nothing.", "    "),
        "END;",
    ]


def _run1_checks_batch(move: Move, action: MoveFiles, options: Options) -> list[str]:
    """Run 1, while the database is online on the old files: no snapshot, backup or DBCC, a recent
    backup, the target directory, no stale copy there, free space."""
    ldb = tsql_str(move.target.database)
    qdb = tsql_ident(move.target.database)
    state = _state(ldb)
    any_from = any_old(ldb, action.files)
    # run 1: checks that only make sense while the database is still online on the old files
    probes: list[str] = []
    for f in action.files:
        probes += [
            f"IF {file_at(ldb, f, f.from_path)}",
            "BEGIN",
            *[f"    {line}" for line in file_exists_probe(f.to_path, "@file_exists")],
            *fail(
                "@file_exists = 1",
                tsql_str(
                    f"tierwise: pre-check failed: {f.to_path} already exists. A file there now is not a copy of the "
                    "database as it is (it is still online); if it is the original from before an earlier move, it is "
                    "out of date. Rename or delete it, then run again. Nothing was changed."
                ),
                "    ",
            ),
            "END;",
        ]
    return [
        "USE [master];",
        "DECLARE @msg nvarchar(2048);",
        f"IF NOT ({state} = N'ONLINE' AND ({any_from}))",
        "BEGIN",
        say("no run-1 checks: the database is offline, or online from the new files already", "    "),
        "    RETURN;",
        "END;",
        say(
            "run 1: checking snapshots, running backups, backups, the target directory, stale copies, free space"
        ),
        *_run1_checks(move, ldb, qdb),
        *backup_check(move, options),
        "DECLARE @fe_probe TABLE (file_exists int, is_directory int, parent_exists int), @file_exists bit;",
        *probes,
    ]


def _run1_target_batch(move: Move, action: MoveFiles, options: Options, directory: str) -> list[str]:
    """Run 1: one target directory of the plan exists (as the service account sees it) and has room
    for the copies going there. A database's offline files may go to several directories (its
    data files to one tier, its log to another: one offline script per database, issue #30 N8)."""
    ldb = tsql_str(move.target.database)
    qdb = tsql_ident(move.target.database)
    files = [f for f in action.files if dirname(f.to_path) == directory]
    return [
        "USE [master];",
        "DECLARE @msg nvarchar(2048);",
        f"IF NOT ({_state(ldb)} = N'ONLINE' AND ({any_old(ldb, action.files)}))",
        "    RETURN;",
        *directory_check(directory, "target"),
        *free_space_check(
            directory,
            str(sum(size_mb(f, options) for f in files)),
            options.headroom_pct,
            f"the copies of the files of {qdb} going to {directory}",
        ),
    ]


def _take_offline(move: Move, action: MoveFiles, direction: str, forward: Move) -> list[str]:
    """Run 1, step 1: SET OFFLINE, then the run marker of this offline period."""
    ldb = tsql_str(move.target.database)
    qdb = tsql_ident(move.target.database)
    plan = tsql_str(forward.checksum())
    names = ", ".join(tsql_str(f.to_name) for f in action.files)
    state = _state(ldb)
    any_from = any_old(ldb, action.files)
    return [
        "USE [master];",
        f"IF {state} = N'ONLINE' AND ({any_from})",
        "BEGIN",
        "    -- the database is online: any marker of it is stale (it was online after that run 1)",
        f"    DELETE FROM {MARKER} WHERE database_name = {ldb};",
        say(
            f"step 1: taking {qdb} offline (every session of it is disconnected; open transactions are rolled back)",
            "    ",
        ),
        f"    ALTER DATABASE {qdb} SET OFFLINE WITH ROLLBACK IMMEDIATE;",
        f"    IF {state} = N'OFFLINE'",
        "    BEGIN",
        f"        INSERT INTO {MARKER} (database_name, plan_sha256, direction, file_name, physical_name,",
        "            size_pages, size_bytes, taken_offline_at, taken_offline_by)",
        f"        SELECT {ldb}, {plan}, {tsql_str(direction)}, mf.name, mf.physical_name, mf.size,",
        "            CAST(mf.size AS bigint) * 8192, GETDATE(), ORIGINAL_LOGIN()",
        f"        FROM sys.master_files AS mf WHERE mf.database_id = DB_ID({ldb}) AND mf.name IN ({names});",
        say(
            f"run marker recorded in {MARKER}: the copies made from now on are accepted by run 2", "        "
        ),
        "    END;",
        "END;",
    ]


def _point_at_copies(move: Move, action: MoveFiles) -> list[str]:
    """Run 2, step 2: MODIFY FILE each file that does not point at its copy yet."""
    ldb = tsql_str(move.target.database)
    qdb = tsql_ident(move.target.database)
    state = _state(ldb)
    modify: list[str] = []
    for i, f in enumerate(action.files, start=1):
        modify += [
            f"    IF NOT {file_at(ldb, f, f.to_path)}",
            "    BEGIN",
            say(f"step 2.{i}: pointing {tsql_ident(f.to_name)} at {f.to_path}", "        "),
            f"        ALTER DATABASE {qdb} MODIFY FILE (NAME = {tsql_str(f.to_name)}, FILENAME = {tsql_str(f.to_path)});",
            "    END;",
        ]
    return [
        "USE [master];",
        f"IF {state} IN (N'OFFLINE', N'RECOVERY_PENDING')",
        "BEGIN",
        *modify,
        "END;",
    ]


def _bring_online(move: Move, action: MoveFiles, direction: str) -> list[str]:
    """Run 2, step 3: SET ONLINE from the copies, and clear the run marker."""
    ldb = tsql_str(move.target.database)
    qdb = tsql_ident(move.target.database)
    target = _targets(action)
    state = _state(ldb)
    other = "rollback" if direction == "forward" else "forward"
    return [
        "USE [master];",
        f"IF {state} IN (N'OFFLINE', N'RECOVERY_PENDING')",
        "BEGIN",
        say(
            f"step 3: bringing {qdb} online from {target}. If this fails (errors 5120/5125/5173: the copies' "
            "permissions or a bad copy), fix the copies and run this script again. The original files are "
            f"untouched; the {other} script refuses from here (the files point at the copies): to go back, "
            "see To recover in the header.",
            "    ",
        ),
        f"    ALTER DATABASE {qdb} SET ONLINE;",
        "    -- the marker describes this offline period only: it goes as soon as the database is online,",
        "    -- so a later offline period (by hand, after a session died before the post-check) has none",
        f"    IF {state} = N'ONLINE' AND OBJECT_ID({MARKER_LIT}, N'U') IS NOT NULL",
        f"        DELETE FROM {MARKER} WHERE database_name = {ldb};",
        "END;",
    ]


def _offline_post_check(move: Move, action: MoveFiles) -> list[str]:
    """Online from the copies; the old files can go once the application is checked."""
    ldb = tsql_str(move.target.database)
    qdb = tsql_ident(move.target.database)
    target = _targets(action)
    state = _state(ldb)
    all_to = all_new(ldb, action.files)
    olds = "; ".join(f.from_path for f in action.files)
    return [
        "USE [master];",
        "DECLARE @msg nvarchar(2048);",
        *fail(
            f"NOT ({state} = N'ONLINE' AND {all_to})",
            tsql_str(f"tierwise: post-check failed: {qdb} is not online from {target}."),
        ),
        f"IF OBJECT_ID({MARKER_LIT}, N'U') IS NOT NULL",
        f"    DELETE FROM {MARKER} WHERE database_name = {ldb};",
        *_page_check(move, action),
        say(
            f"post-check passed: {qdb} is online and its moved files are in {target} (tier {move.to_tier}); "
            "run marker cleared.",
            "",
        ),
        say(f"once the application is checked, delete the old copies: {olds}", ""),
    ]


def _page_check(move: Move, action: MoveFiles) -> list[str]:
    """After SET ONLINE from copied data files: DBCC CHECKDB WITH PHYSICAL_ONLY reads every page of
    the database and checks its header, its checksum (or torn-page bits) and the allocation
    structures (Microsoft Learn, DBCC CHECKDB, PHYSICAL_ONLY: "Limits the checking to the integrity
    of the physical structure of the page and record headers and the allocation consistency of the
    database ... designed to detect torn pages, checksum failures, and common hardware failures"),
    so a copy damaged on the way is found before the originals are deleted. Page checksums only
    exist where PAGE_VERIFY is CHECKSUM (sys.databases.page_verify_option_desc): the script says
    when it is not. A log file is read by the recovery at SET ONLINE; CHECKDB does not read it, so
    a script that moves only log files does not run it. The database is online meanwhile (CHECKDB
    works on an internal snapshot); a failure stops the script with the way back."""
    db = move.target.database
    ldb, qdb = tsql_str(db), tsql_ident(db)
    names = ", ".join(tsql_str(f.to_name) for f in action.files)
    olds = "; ".join(f.from_path for f in action.files)
    return [
        "DECLARE @checkdb_error int, @checkdb_text nvarchar(2048);",
        f"IF EXISTS (SELECT 1 FROM sys.master_files WHERE database_id = DB_ID({ldb}) AND type = 0 AND name IN ({names}))",
        "BEGIN",
        say(
            f"page check: DBCC CHECKDB ({qdb}) WITH PHYSICAL_ONLY reads every page of the copies (headers, checksums, "
            "allocation); the database is online meanwhile; it takes about as long as reading the database once.",
            "    ",
        ),
        f"    IF (SELECT page_verify_option_desc FROM sys.databases WHERE name = {ldb}) <> N'CHECKSUM'",
        "    BEGIN",
        say_expr(
            f"{tsql_str(f'warning: {qdb} has PAGE_VERIFY ')} + (SELECT page_verify_option_desc FROM sys.databases WHERE name = {ldb})"
            " + N', not CHECKSUM: pages written before checksums were on carry none, so the check sees broken page "
            "structure but not every changed byte.'",
            "        ",
        ),
        "    END;",
        "    BEGIN TRY",
        f"        DBCC CHECKDB ({ldb}) WITH PHYSICAL_ONLY, NO_INFOMSGS;",
        "        SET @checkdb_error = @@ERROR;",
        "    END TRY",
        "    BEGIN CATCH",
        "        SELECT @checkdb_error = ERROR_NUMBER(), @checkdb_text = ERROR_MESSAGE();",
        "    END CATCH;",
        *fail(
            "@checkdb_error <> 0",
            f"{tsql_str(f'tierwise: post-check failed: DBCC CHECKDB ({qdb}) WITH PHYSICAL_ONLY reported error ')} + "
            "CAST(@checkdb_error AS nvarchar(10)) + COALESCE(N': ' + @checkdb_text, N' (see the messages above)') + "
            + tsql_str(
                f". {qdb} runs from the copies; the original files are untouched ({olds}): do not delete them. "
                "To go back to them, see To recover in the header (SET OFFLINE, MODIFY FILE back, SET ONLINE); then "
                "copy again and rerun this script, or investigate the copies with DBCC CHECKDB."
            ),
            "    ",
        ),
        say("page check passed: DBCC CHECKDB WITH PHYSICAL_ONLY found no damaged page.", "    "),
        "END;",
    ]


def _run2_gate(
    move: Move, action: MoveFiles, direction: str, forward: Move, state: str, any_from: str
) -> list[str]:
    """Run 2, before any copy is used: the database must be offline under run 1's marker.

    The marker (database, plan checksum, THIS direction) proves that run 1 of this script took the
    database offline and that it has not been online since (step 3 deletes it right after SET
    ONLINE); a file at the new path is then a copy made since. Each file must still be where the
    marker recorded it (or already pointed at its planned copy by an earlier run 2 of this
    direction that stopped before SET ONLINE). The other direction's marker is never accepted:
    forward and rollback share the plan checksum, and a forward marker left behind after the
    database went online from the copies would otherwise let the rollback reopen the out-of-date
    originals. The documented case "forward stopped at its manual step, nothing copied" never
    reaches this gate in the rollback: the catalog still has every file at the rollback's target
    (the originals), so the rollback only brings the database online on them. Without a marker
    (someone else took the database offline, or it was online in between) a file at the new path
    may be stale: stop. The copy's own size cannot be read from T-SQL (sys.dm_os_file_exists and
    xp_fileexist give existence only; OPENROWSET(BULK) would read the whole file), so the script
    checks what the catalog shows — each file's size unchanged since the marker — and backup
    history (a backup after the marker means the database was online in between); SQL Server
    itself checks the copies' headers and sizes at SET ONLINE (errors 5120, 5125, 5173)."""
    db = move.target.database
    ldb, qdb = tsql_str(db), tsql_ident(db)
    plan_sha = forward.checksum()
    plan = tsql_str(plan_sha)
    target = _targets(action)
    mine = f"m.database_name = {ldb} AND m.plan_sha256 = {plan} AND m.direction = {tsql_str(direction)}"
    # a file run 2 already pointed at its copy (MODIFY FILE done, SET ONLINE not yet)
    pointed = " OR ".join(
        f"(m.file_name = {tsql_str(f.to_name)} AND {lower_eq('mf.physical_name', f.to_path)})"
        for f in action.files
    )
    changed = (
        f"EXISTS (SELECT 1 FROM {MARKER} AS m INNER JOIN sys.master_files AS mf "
        f"ON mf.database_id = DB_ID({ldb}) AND mf.name COLLATE DATABASE_DEFAULT = m.file_name COLLATE DATABASE_DEFAULT "
        f"WHERE {mine} AND (mf.size <> m.size_pages OR NOT (mf.physical_name COLLATE DATABASE_DEFAULT "
        f"= m.physical_name COLLATE DATABASE_DEFAULT OR {pointed})))"
    )
    other_name = "rollback" if direction == "forward" else "forward"
    return [
        "USE [master];",
        "DECLARE @msg nvarchar(2048), @missing int = 0, @marked datetime, @marked_files int;",
        "DECLARE @fe_probe TABLE (file_exists int, is_directory int, parent_exists int), @copy_exists bit;",
        "DECLARE @copy_bytes bigint, @orig_bytes bigint, @want_bytes bigint;",
        f"IF {state} IN (N'OFFLINE', N'RECOVERY_PENDING') AND ({any_from})",
        "BEGIN",
        f"    IF OBJECT_ID({MARKER_LIT}, N'U') IS NOT NULL",
        f"        SELECT @marked = MIN(m.taken_offline_at), @marked_files = COUNT(*) FROM {MARKER} AS m",
        f"        WHERE {mine};",
        *fail(
            "@marked IS NULL",
            f"{tsql_str(f'tierwise: run 2 refused: {qdb} is ')} + {state} + "
            + tsql_str(
                f", but not taken offline by run 1 of this {direction} script (no {direction} run marker for "
                f"plan sha256 {plan_sha[:12]}... in {MARKER}): it was taken offline by someone else, or by "
                f"the {other_name} script, so a file at the new path may be a stale copy and none is used. "
                f"Bring it online (ALTER DATABASE {qdb} SET ONLINE: it opens its current files) and run "
                f"this script again, or finish first whatever took it offline (the {other_name} script: run "
                "it again). Nothing was changed."
            ),
            "    ",
        ),
        *fail(
            f"@marked_files <> {len(action.files)} OR {changed}",
            tsql_str(
                f"tierwise: run 2 refused: the files of {qdb} are not as run 1 recorded them in {MARKER} (a "
                "size or a path changed, or a file is missing): it was online or changed in between, and "
                f"copies made before are out of date. Bring it online (ALTER DATABASE {qdb} SET ONLINE), "
                f"delete the copies in {target} and run this script again. Nothing was changed."
            ),
            "    ",
        ),
        *fail(
            f"EXISTS (SELECT 1 FROM msdb.dbo.backupset WHERE database_name = {ldb} AND backup_start_date > @marked)",
            tsql_str(
                f"tierwise: run 2 refused: a backup of {qdb} started after run 1 took it offline, so it was "
                "online in between and copies made before are out of date. Bring it online (ALTER DATABASE "
                f"{qdb} SET ONLINE), delete the copies in {target} and run this script again. Nothing was changed."
            ),
            "    ",
        ),
        *_error_log_check(move, direction),
        *[
            line
            for f in action.files
            for line in [
                *[f"    {x}" for x in file_exists_probe(f.to_path, "@copy_exists")],
                "    IF COALESCE(@copy_exists, 0) = 0 SET @missing = @missing + 1;",
                "    ELSE",
                "    BEGIN",
                *_copy_size_check(move, f, mine),
                "    END;",
            ]
        ],
        *_manual_step(move, action, direction),
        "END;",
    ]


def _error_log_check(move: Move, direction: str) -> list[str]:
    """Run 2 refuses when the database was started after run 1 took it offline: SQL Server writes
    "Starting up database '<name>'." to its error log at every start of a database, SET ONLINE
    included, so an ONLINE and OFFLINE by hand between the runs (which leaves the marker, the
    catalog sizes and, without a backup, the backup history as they were) shows there. Read with
    xp_readerrorlog (log number, 1 = SQL Server log, two search strings, start time; undocumented,
    like xp_enumerrorlogs, which lists the logs with their last write, so every log written since
    run 1 is searched, not only the current one: sp_cycle_errorlog may have started a new one);
    they need sysadmin or securityadmin, as this script does. When the log cannot be read the
    script says so and goes on with the other checks (marker, catalog, backups)."""
    db = move.target.database
    quoted = "'" + db + "'"
    return [
        "    DECLARE @started TABLE (log_date datetime, process_info nvarchar(64), text nvarchar(4000));",
        "    DECLARE @logs TABLE (archive int, last_write datetime, size_bytes bigint);",
        "    DECLARE @archive int, @started_at datetime;",
        "    BEGIN TRY",
        "        INSERT INTO @logs EXEC master.sys.xp_enumerrorlogs 1;",
        "        SELECT @archive = MIN(archive) FROM @logs WHERE last_write >= @marked;",
        "        WHILE @archive IS NOT NULL",
        "        BEGIN",
        f"            INSERT INTO @started EXEC master.sys.xp_readerrorlog @archive, 1, N'Starting up database', {tsql_str(quoted)}, @marked;",
        "            SELECT @archive = MIN(archive) FROM @logs WHERE archive > @archive AND last_write >= @marked;",
        "        END;",
        "        SELECT @started_at = MIN(log_date) FROM @started WHERE log_date > @marked;",
        "    END TRY",
        "    BEGIN CATCH",
        say_expr(
            "N'warning: the error log could not be read (' + ERROR_MESSAGE() + N'); whether the database was started "
            "since run 1 is judged by the marker, the catalog and the backup history only.'",
            "        ",
        ),
        "    END CATCH;",
        *fail(
            "@started_at IS NOT NULL",
            f"{tsql_str(f'tierwise: run 2 refused: the error log says {tsql_ident(db)} started (was brought online) at ')}"
            " + CONVERT(nvarchar(30), @started_at, 120) + "
            + tsql_str(f", after run 1 of this {direction} script took it offline at ")
            + " + CONVERT(nvarchar(30), @marked, 120) + "
            + tsql_str(
                f": it was online in between, so copies made before may be out of date. Bring it online (ALTER DATABASE "
                f"{tsql_ident(db)} SET ONLINE), delete the copies and run this script again (run 1). Nothing was changed."
            ),
            "    ",
        ),
    ]


def _copy_size_check(move: Move, f: FileMove, mine: str) -> list[str]:
    """A copy found at the new path is as large as its original: the original's size now (the
    database is offline, so it has not changed since run 1) or, when the original is no longer
    there, the size run 1 recorded in the marker (sys.master_files.size, 8 KB pages). A truncated
    or half-written copy stops run 2 before the catalog points at it. The sizes come from
    sys.dm_os_enumerate_filesystem (SQL Server 2017+); before 2017 T-SQL cannot read a file's size
    without reading the whole file, so the script says to compare the sizes by hand (the MANUAL
    STEP printed how) and relies on SQL Server's own checks at SET ONLINE (errors 5120, 5125 "has
    been truncated", 5173) and the page check after it."""
    db = move.target.database
    return [
        *[f"        {x}" for x in file_size_probe(f.to_path, "@copy_bytes")],
        *[f"        {x}" for x in file_size_probe(f.from_path, "@orig_bytes")],
        f"        SELECT @want_bytes = COALESCE(@orig_bytes, (SELECT MAX(m.size_bytes) FROM {MARKER} AS m WHERE {mine} "
        f"AND m.file_name = {tsql_str(f.to_name)}));",
        f"        IF {MAJOR_VERSION} < 14",
        "        BEGIN",
        say(
            f"warning: SQL Server before 2017 cannot read the size of the copy {f.to_path} from T-SQL: compare it with "
            f"{f.from_path} by hand before this run continues; SQL Server checks the copy's size at SET ONLINE (error 5125).",
            "            ",
        ),
        "        END;",
        *fail(
            "@copy_bytes IS NOT NULL AND @want_bytes IS NOT NULL AND @copy_bytes <> @want_bytes",
            f"{tsql_str(f'tierwise: run 2 refused: the copy {f.to_path} is ')} + CAST(@copy_bytes AS nvarchar(20)) + "
            f"{tsql_str(f' bytes, but the file of {tsql_ident(db)} it copies ({f.from_path}) is ')} + CAST(@want_bytes AS nvarchar(20)) + "
            + tsql_str(
                " bytes: the copy is incomplete or not this file. Copy it again as the MANUAL STEP says, check the sizes, "
                "and run this script again. Nothing was changed."
            ),
            "        ",
        ),
        *fail(
            f"@copy_bytes IS NULL AND {MAJOR_VERSION} >= 14",
            tsql_str(
                f"tierwise: run 2 refused: {f.to_path} exists, but its size cannot be read "
                "(sys.dm_os_enumerate_filesystem lists no such file: a directory of that name, or no permission for the "
                "service account). Nothing was changed."
            ),
            "        ",
        ),
    ]


def _manual_step(move: Move, action: MoveFiles, direction: str) -> list[str]:
    """Run 2 while a copy is missing: what to copy where (with its ACL and a size check), then stop
    every later batch until the script is run again."""
    qdb = tsql_ident(move.target.database)
    target = _targets(action)
    other = (
        "To give up instead, run the rollback script."
        if direction == "forward"
        else "To go ahead with the move instead, run the forward script."
    )
    copy_lines: list[str] = []
    for f in action.files:
        copy_lines.append(say(f"    copy  {f.from_path}", "        "))
        copy_lines.append(say(f"      to  {f.to_path}", "        "))
        copy_lines += [say(f"      {c}", "        ") for c in _copy_commands(f)]
    return [
        "    IF @missing > 0",
        "    BEGIN",
        say("======================== MANUAL STEP ========================", "        "),
        say(
            f"{qdb} is offline. Copy (do not move) these files with their ACLs (the SQL Server service "
            "account needs full control of the copies), and check each copy's size:",
            "        ",
        ),
        *copy_lines,
        say(f"Then run this same script again. {other}", "        "),
        say("=============================================================", "        "),
        "        RAISERROR(N'%s', 16, 1, "
        + tsql_str(
            f"tierwise: MANUAL STEP: {qdb} is offline; copy the files listed above to {target}, then run "
            "this script again."
        )
        + ");",
        "        SET NOEXEC ON;",
        "        RETURN;",
        "    END;",
    ]
