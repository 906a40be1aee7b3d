"""DB2 script frame: CLP scripts with `@` as the statement terminator (`db2 -td@ -vsf FILE`).

The scaffolding every DB2 script shares (the script, its numbered checks, the header, the
identity and backup checks, storage groups and table spaces created only if missing); the
writers are db2_tablespace, db2_partition, db2_leading, db2_temp and db2_log, and db2.render picks
the writer for an action.

The session, in this order (tests/migrations/test_db2_session_rules.py holds every script to it):
- `--#SET TERMINATOR @` and `UPDATE COMMAND OPTIONS USING C ON S ON`: the CLP stops at the first
  failing statement even when `-s` was forgotten, and every statement commits even when
  DB2OPTIONS says `+c` (the options the file sets override DB2OPTIONS and the command line: IBM
  Db2 docs, "UPDATE COMMAND OPTIONS command", required connection none,
  https://www.ibm.com/support/knowledgecenter/SSEPGG_10.5.0/com.ibm.db2.luw.admin.cmd.doc/doc/r0001975.html,
  and "Command line processor options").
- `CONNECT TO <database>`, and only then `SET SERVEROUTPUT ON`: IBM lists that command's required
  connection as "Database" (IBM Db2 docs, "SET SERVEROUTPUT command",
  https://www.ibm.com/docs/en/db2/11.5.x?topic=commands-set-serveroutput). Before the CONNECT a
  fresh CLP session fails it, and with -s the script would stop at its second statement.
- `SET CURRENT LOCK TIMEOUT = 60` (LOCK_TIMEOUT_SECONDS) before any DDL or DML: the register's
  initial value is null, which means the locktimeout database configuration parameter, whose
  default -1 waits forever (IBM Db2 docs, "CURRENT LOCK TIMEOUT special register",
  https://www.ibm.com/support/knowledgecenter/SS6NHC/com.ibm.db2.luw.sql.ref.doc/doc/r0011857.html;
  "SET CURRENT LOCK TIMEOUT statement": not under transaction control). The policy has no
  setting for it (change_windows plans durations, not lock waits), so the value is ours: see
  LOCK_TIMEOUT_SECONDS.
- A multi-statement unit of work (a LOCK TABLE and the statements that need the lock) runs
  between `UPDATE COMMAND OPTIONS USING C OFF` and `COMMIT`, then `C ON` again (Db2Script.unit).
  Nothing in such a unit is a check: a failing check would stop the CLP inside the unit with its
  locks held until the session ends (`db2 terminate` then commits: IBM Db2 docs, "TERMINATE
  command", https://www.ibm.com/support/knowledgecenter/en/SSEPGG_11.5.0/com.ibm.db2.luw.admin.cmd.doc/doc/r0001973.html);
  the decision is made inside the unit and a check after the COMMIT stops the script.
- A step whose failure the script repairs itself runs between `S OFF` and `S ON`
  (Db2Script.tolerant): the CLP carries on past it to the repair; no check sits in that span.

Checks:
- Checks that need more than one query (row counts through dynamic SQL) are compound statements
  that end in `SIGNAL SQLSTATE '75001'` with the same numbered message.
- Pre-checks are `SELECT RAISE_ERROR('75001', '…') FROM … WHERE <bad>`: nothing happens when the
  check passes; when it fails the statement errors and the CLP stops. RAISE_ERROR carries at
  most 70 bytes, so each message starts with the check number that the header lists in full.
- Conditional DDL (create a storage group only if missing, move only if not moved) is a compound
  statement (BEGIN … END) with EXECUTE IMMEDIATE of a statement built here, so a second run
  says "already done" (DBMS_OUTPUT, shown because of SET SERVEROUTPUT ON) instead of failing.
- Names are delimited ("…" with `"` doubled) and compared with catalog values as '…' literals:
  write names exactly as the catalog shows them. `@`, line breaks and other control characters
  in names are refused (quoting.check_name).

The check-only run (direction "check", the `.check.db2` file beside a move's scripts): the same
header and the same numbered checks against the live server, none of the steps. Post-checks and
the checks that only the window run can make are listed but not run; a check that needs an
earlier step's result (a storage group the script creates) runs only when that result already
exists, else says so; a check on what runs at this moment (a backup, a rebalance, temporary
tables in use) only warns. At the end it prints the steps the window run will take and the
estimated duration. It changes nothing: no DDL, no DML, no CALL but DBMS_OUTPUT.PUT_LINE.
"""

from __future__ import annotations

from datetime import datetime

from migrations.header import Operations, header_lines
from migrations.plan import Move, Options, StorageGroup, Unsupported
from migrations.quoting import UnsafeNameError, check_db2_alias, comment_lines, db2_ident, db2_str

SQLSTATE = "75001"
MAX_MESSAGE = 70  # bytes RAISE_ERROR keeps
# Seconds a statement of these scripts waits for a lock before it fails with SQL0911N (reason 68),
# which rolls the unit of work back: nothing is half done, and a second run carries on. 60 s is
# long enough for ordinary OLTP transactions to finish and let a DETACH, ATTACH, ADD PARTITION,
# DROP TABLESPACE or LOCK TABLE through, and short enough that the exclusive request (which new
# readers queue behind) cannot stall the application for long at 2 a.m.; a table whose
# transactions hold locks longer needs a quieter moment, not a longer wait. The policy has no
# setting for it: docs/running-scripts.md says how to change it.
LOCK_TIMEOUT_SECONDS = 60
CHECK = "check"  # the direction of a check-only script


def _num(x: float) -> str:
    text = f"{x:.6f}".rstrip("0").rstrip(".")
    return text or "0"


class Db2Script:
    """A CLP script under construction: header lines, numbered checks listed in the header, and
    statements (each ends with the `@` terminator).

    `check_only`: the check-only run. Writers call the same methods in the same order either way
    (so check numbers agree between the window run and the check-only run): `check` for a check,
    `change` for a step that changes something, `window` for output and waits that belong to the
    window run only, `statement` for what both runs do."""

    def __init__(
        self,
        header: list[str],
        database: str,
        *,
        check_only: bool = False,
        duration: str = "",
    ) -> None:
        self.header = header
        self.statements: list[str] = []
        self.checks: list[str] = []
        self.check_only = check_only
        self.duration = duration
        self.plan: list[str] = []  # the steps, as their comments say them (printed by a check-only run)
        try:
            check_db2_alias(database, "database")
        except UnsafeNameError as exc:
            raise Unsupported(str(exc)) from exc
        self.statements += [
            # c: autocommit, s: stop on error (IBM Db2 docs, "UPDATE COMMAND OPTIONS command"); the
            # file's setting is the last override, after DB2OPTIONS and the command-line flags
            "UPDATE COMMAND OPTIONS USING C ON S ON@",
            f"CONNECT TO {database}@",
            # required connection: Database (IBM Db2 docs, "SET SERVEROUTPUT command")
            "SET SERVEROUTPUT ON@",
            # before any DDL or DML: the default (locktimeout -1) waits forever
            f"SET CURRENT LOCK TIMEOUT = {LOCK_TIMEOUT_SECONDS}@",
        ]

    def comment(self, *lines: str) -> None:
        self.statements.extend(comment_lines(list(lines), "db2"))

    def statement(self, text: str) -> None:
        """A statement both runs make (a check compound, a warning)."""
        self.statements.append(text.rstrip() + "@")

    def change(self, comment: str, text: str) -> None:
        """A step that changes something: in the window run its comment and statement; in the
        check-only run nothing but a line of the plan it prints at the end."""
        self.plan.append(comment)
        if self.check_only:
            return
        self.comment(comment)
        self.statement(text)

    def window(self, text: str, *comments: str) -> None:
        """Output, waits and progress that belong to the window run only."""
        if self.check_only:
            return
        if comments:
            self.comment(*comments)
        self.statement(text)

    def unit(self, comment: str, statements: list[str]) -> None:
        """One unit of work of several statements (a LOCK TABLE and what needs the lock):
        autocommit off, the statements, COMMIT, autocommit on. No check inside (see the module
        docstring); a step of the plan in the check-only run."""
        self.plan.append(comment)
        if self.check_only:
            return
        self.comment(comment, "one unit of work: autocommit off until the COMMIT below")
        self.statements.append("UPDATE COMMAND OPTIONS USING C OFF@")
        self.statements.extend(s.rstrip() + "@" for s in statements)
        self.statements += ["COMMIT@", "UPDATE COMMAND OPTIONS USING C ON@"]

    def tolerant(self, comment: str, steps: list[tuple[str, str]]) -> None:
        """Steps whose failure the next step repairs: stop-on-error off around them, so the CLP
        carries on to the repair (no check inside); each (comment, statement) is a step."""
        self.plan.extend(c for c, _ in steps)
        if self.check_only:
            return
        self.comment(comment)
        self.statements.append("UPDATE COMMAND OPTIONS USING S OFF@")
        for c, text in steps:
            self.comment(c)
            self.statement(text)
        self.statements.append("UPDATE COMMAND OPTIONS USING S ON@")

    def register(self, description: str, short: str, *, window_only: bool = False) -> str:
        """Number a check, list it in the header, and return its message (cut to fit 70 bytes:
        RAISE_ERROR and SIGNAL keep no more). `window_only`: a check only the window run can
        make (after a change); the check-only run lists it as such."""
        number = len(self.checks) + 1
        note = " [window run only]" if window_only and self.check_only else ""
        self.checks.append(f"check {number}: {description}{note}")
        message = f"tierwise check {number} failed: {short}"
        if len(message.encode("utf-8")) > MAX_MESSAGE:
            message = f"tierwise check {number} failed (see the script header)"
        return message

    def signal(self, message: str) -> str:
        return f"SIGNAL SQLSTATE '{SQLSTATE}' SET MESSAGE_TEXT = {db2_str(message)};"

    def check(
        self,
        description: str,
        bad_rows: str,
        short: str,
        *,
        where: str | None = None,
        post: bool = False,
        needs: tuple[str, str] | None = None,
        transient: bool = False,
    ) -> None:
        """A pre- or post-check: `bad_rows` is a FROM … [WHERE …] tail that returns rows when the
        check fails. `short` is the message (cut to fit 70 bytes with the check number).

        For the check-only run: `post`, a check after the changes (not run); `needs`, (predicate,
        why): the check means something now only where the predicate holds (an earlier step's
        result exists already), else it says why it did not run; `transient`, a check on what
        runs at this moment: it warns instead of stopping."""
        message = self.register(description, short, window_only=post)
        tail = bad_rows if where is None else f"{bad_rows} WHERE {where}"
        if self.check_only and post:
            self.comment(self.checks[-1])
            return
        if self.check_only and transient:
            self.comment(self.checks[-1], "check-only run: a warning, not a stop (it is about this moment)")
            now = (
                f"warning: {message.removeprefix('tierwise ')} (now; the window run stops if it is still so)"
            )
            self.statement(
                compound([f"IF EXISTS (SELECT 1 FROM {tail}) THEN", f"  {self.say(now)}", "END IF;"])
            )
            return
        self.comment(self.checks[-1])
        if self.check_only and needs is not None:
            predicate, why = needs
            tail = f"{bad_rows} WHERE ({predicate})" + ("" if where is None else f" AND ({where})")
            number = len(self.checks)
            self.statement(
                compound(
                    [
                        f"IF NOT ({predicate}) THEN",
                        f"  {self.say(f'check {number} not run now: {why}')}",
                        "END IF;",
                    ]
                )
            )
        self.statement(
            f"SELECT RAISE_ERROR('{SQLSTATE}', {db2_str(message)}) FROM {tail} FETCH FIRST 1 ROW ONLY"
        )

    def say(self, text: str) -> str:
        """A progress line with the UTC time, so the output is the run's timeline (DBMS_OUTPUT
        shows it when its statement ends; each step is one statement)."""
        return (
            "CALL DBMS_OUTPUT.PUT_LINE('tierwise: ' || VARCHAR_FORMAT(CURRENT TIMESTAMP - CURRENT TIMEZONE, "
            f"'YYYY-MM-DD HH24:MI:SS') || ' UTC ' || {db2_str(text)});"
        )

    def _summary(self) -> str:
        """The check-only run's last words: nothing changed, the plan, the estimated duration."""
        lines = [
            "check only: every check above passed or warned; nothing was changed",
            "the window run will (each step checks first and says 'already done' when there is nothing to do):",
            *[f"  {step}" for step in self.plan],
        ]
        if self.duration:
            lines.append(f"estimated duration: {self.duration}")
        return compound([self.say(line) for line in lines])

    def text(self) -> str:
        lines = ["--#SET TERMINATOR @", *comment_lines(self.header, "db2")]
        if self.checks:
            lines += comment_lines(["Checks (a failing check stops the script with its number):"], "db2")
            lines += comment_lines([f"  {c}" for c in self.checks], "db2")
        lines += self.statements
        if self.check_only:
            lines.append(self._summary() + "@")
        lines.append("CONNECT RESET@")
        return "\n".join(lines) + "\n"


def compound(lines: list[str]) -> str:
    return "BEGIN\n" + "\n".join(f"  {line}" for line in lines) + "\nEND"


def where_sg(sg: StorageGroup) -> str:
    return f"storage group {db2_ident(sg.name)}" + (f" ({', '.join(sg.paths)})" if sg.paths else "")


def source_text(sg: StorageGroup | None) -> str:
    """The header's Source: the storage group, or none for a DMS table space."""
    return where_sg(sg) if sg else "no storage group (DMS containers)"


def identity_checks(s: Db2Script, move: Move) -> None:
    db = move.target.database
    s.check(
        f"connected to database {db}",
        "SYSIBM.SYSDUMMY1",
        f"not connected to {db}",
        where=f"UPPER(CURRENT SERVER) <> UPPER({db2_str(db)})",
    )
    if "/" in move.target.server:
        instance = move.target.server.rsplit("/", 1)[1]
        s.check(
            f"instance {instance}",
            "SYSIBMADM.ENV_INST_INFO",
            f"not instance {instance}",
            where=f"UPPER(INST_NAME) <> UPPER({db2_str(instance)})",
        )
    # a pureScale instance has cluster caching facilities; SYSIBMADM.DB2_CF lists them and is
    # empty elsewhere (IBM Db2 docs, "DB2_MEMBER and DB2_CF administrative views")
    s.check(
        "not a pureScale instance (SYSIBMADM.DB2_CF lists no cluster caching facility): unsupported here",
        "SYSIBMADM.DB2_CF",
        "pureScale instance: unsupported here",
    )
    s.check(
        "not an HADR database (the storage paths would have to exist on the standby too: review by hand)",
        "TABLE(MON_GET_HADR(NULL)) AS H",
        "HADR database: unsupported here, review",
        where="H.HADR_ROLE <> 'STANDARD'",
    )


def backup_sql(hours: int) -> str:
    """A successful full backup of the whole database (IBM Db2 docs, "DB_HISTORY administrative
    view": OPERATION 'B' backup, OBJECTTYPE 'D' database (a table space backup is 'P'),
    OPERATIONTYPE 'F' offline / 'N' online full, SQLCODE null or >= 0 when it succeeded) that did
    not go to the null device, told by its LOCATION (/dev/null, NUL). DEVICETYPE says nothing about
    that: 'N' there means "generated internally by Db2", 'D' disk, 'T' tape and so on."""
    return (
        "SELECT 1 FROM SYSIBMADM.DB_HISTORY WHERE OPERATION = 'B' AND OBJECTTYPE = 'D' AND OPERATIONTYPE IN ('F', 'N') "
        "AND COALESCE(SQLCODE, 0) >= 0 "
        "AND COALESCE(LOCATION, '') NOT LIKE '/dev/null%' AND UPPER(COALESCE(LOCATION, '')) NOT IN ('NUL', 'NUL:') "
        f"AND END_TIME >= VARCHAR_FORMAT(CURRENT TIMESTAMP - {hours} HOURS, 'YYYYMMDDHH24MISS')"
    )


def backup_check(s: Db2Script, move: Move, options: Options) -> None:
    hours = max(1, round(options.backup_max_age_hours))
    recent = backup_sql(hours)
    if options.backup_check == "error":
        s.check(
            f"a full database backup of {move.target.database} (not a table space backup, not to /dev/null or NUL) "
            f"finished successfully in the last {hours} hours",
            "SYSIBM.SYSDUMMY1",
            f"no full database backup in the last {hours} hours",
            where=f"NOT EXISTS ({recent})",
        )
        return
    s.comment(f"warning only: a full backup of {move.target.database} in the last {hours} hours")
    s.statement(
        "BEGIN\n"
        f"  IF NOT EXISTS ({recent}) THEN\n"
        f"    {s.say(f'warning: no full backup of {move.target.database} finished in the last {hours} hours')}\n"
        "  END IF;\n"
        "END"
    )


# Utilities that stop a script before its first change (SYSPROC.MON_GET_UTILITY "returns
# information about utilities currently running on the database", column UTILITY_TYPE; IBM Db2
# docs, "MON_GET_UTILITY table function - Get utilities running on the database",
# https://ibm.com/docs/en/SSEPGG_11.5.0/com.ibm.db2.luw.sql.rtn.doc/doc/r0060768.html; the
# snapshot views SYSIBMADM.SNAPUTIL / SNAP_GET_UTIL show the same as LIST UTILITIES but also need
# SYSMON or higher). Why a running backup matters differs per action, and the check says it for
# the action its script takes (BACKUP_* below), after IBM Db2 docs, "Compatibility of online
# backup and other utilities",
# https://www.ibm.com/support/knowledgecenter/en/SSEPGG_11.1.0/com.ibm.db2.luw.admin.ha.doc/doc/c0021554.html:
# that page names the operations that may run beside an online backup (EXPORT and INSPECT always;
# CREATE INDEX, REORG INDEX ONLINE, IMPORT without REPLACE and others under conditions, online
# backup holding the ALTER TABLE lock in share mode); ALTER TABLESPACE ... USING STOGROUP, DETACH /
# ATTACH / ADD PARTITION, CREATE / DROP TABLESPACE and UPDATE DB CFG are not among them, so the
# scripts stop for any running backup instead of guessing.
BLOCKING_UTILITIES = ("BACKUP",)
_NOT_LISTED = "not among the operations IBM lists as able to run beside an online backup"
BACKUP_REBALANCE = (
    "the rebalance this script starts moves every extent of the table space while the backup reads them, and "
    f"ALTER TABLESPACE ... USING STOGROUP is {_NOT_LISTED}"
)
BACKUP_DETACH_ATTACH = (
    f"DETACH / ATTACH PARTITION, CREATE TABLESPACE and CREATE TABLE are {_NOT_LISTED}, and the logged copy "
    "of the partition would land in the backup's log range"
)
BACKUP_ADD_DETACH = f"ADD / DETACH PARTITION (and CREATE TABLESPACE when one is created) are {_NOT_LISTED}"
BACKUP_TEMP = f"CREATE / DROP TABLESPACE are {_NOT_LISTED}"
BACKUP_LOG = f"UPDATE DB CFG ... NEWLOGPATH is {_NOT_LISTED}, and the reactivation that applies it would end the backup"


def utility_check(s: Db2Script, move: Move, why: str) -> None:
    """No backup of the database runs right now, on any member (MON_GET_UTILITY(-2)); `why`
    says what a running backup means for this script's action."""
    types = ", ".join(db2_str(t) for t in BLOCKING_UTILITIES)
    s.check(
        f"no BACKUP of {move.target.database} is running (SYSPROC.MON_GET_UTILITY(-2), every member): {why} "
        "(IBM, Compatibility of online backup and other utilities); wait for it or pause the backup job, then run "
        "the script again. Nothing was changed",
        "TABLE(MON_GET_UTILITY(-2)) AS U",
        "a BACKUP is running: wait, run again",
        where=f"U.UTILITY_TYPE IN ({types})",
        transient=True,
    )


def _trimmed(path: str) -> str:
    """A storage path without its trailing separator, as compared with the catalog's."""
    return path.rstrip("/\\") or path


def usable_paths_sql(name: str) -> str:
    """The storage group's paths that take new containers: ADMIN_GET_STORAGE_PATHS rows whose
    DB_STORAGE_PATH_STATE is not DROP_PENDING (a dropped path still in use: IBM Db2 docs,
    "Dropping storage paths", states NOT_IN_USE / IN_USE / DROP_PENDING,
    https://www.ibm.com/support/knowledgecenter/SSEPGG_10.5.0/com.ibm.db2.luw.admin.dbobj.doc/doc/t0054954.html;
    "ADMIN_GET_STORAGE_PATHS table function",
    https://www.ibm.com/docs/SSEPGG_11.5.0/com.ibm.db2.luw.sql.rtn.doc/doc/r0055331.html)."""
    return f"TABLE(ADMIN_GET_STORAGE_PATHS({db2_str(name)}, -1)) AS P WHERE P.DB_STORAGE_PATH_STATE <> 'DROP_PENDING'"


def room_sql(name: str) -> str:
    """Bytes free on the group's usable paths (storage is striped over them: the smallest one
    times their number), 0 when it has none, so a room check never passes on an empty list."""
    return f"COALESCE((SELECT MIN(P.STO_PATH_FREE_SIZE) * COUNT(*) FROM {usable_paths_sql(name)}), 0)"


def paths_check(s: Db2Script, sg: StorageGroup) -> None:
    """After step 1: the group has a path that takes new containers, with a known free size
    (a path on an unmounted file system shows none)."""
    s.check(
        f"storage group {sg.name} has a storage path that is not DROP_PENDING and whose free space is known "
        "(SYSPROC.ADMIN_GET_STORAGE_PATHS)",
        "SYSIBM.SYSDUMMY1",
        f"no usable storage path in {sg.name}",
        where=f"NOT EXISTS (SELECT 1 FROM {usable_paths_sql(sg.name)} AND P.STO_PATH_FREE_SIZE IS NOT NULL)",
        needs=group_exists(sg),
    )


def group_exists(sg: StorageGroup) -> tuple[str, str]:
    """What a check on the group's paths needs in a check-only run: the group, which step 1 of
    the window run creates when it is missing."""
    return (
        f"EXISTS (SELECT 1 FROM SYSCAT.STOGROUPS WHERE SGNAME = {db2_str(sg.name)})",
        f"storage group {sg.name} does not exist yet (step 1 creates it on {', '.join(sg.paths) or 'its paths'})",
    )


def create_stogroup_sql(sg: StorageGroup) -> str:
    """CREATE STOGROUP with the tier's media attributes (domain.md §4.9)."""
    if not sg.paths:
        raise Unsupported(f"storage group {sg.name}: no paths to create it on")
    sql = f"CREATE STOGROUP {db2_ident(sg.name)} ON " + ", ".join(db2_str(p) for p in sg.paths)
    if sg.overhead_ms is not None:
        sql += f" OVERHEAD {_num(sg.overhead_ms)}"
    if sg.device_read_rate_mb_s is not None:
        sql += f" DEVICE READ RATE {_num(sg.device_read_rate_mb_s)}"
    if sg.data_tag is not None:
        sql += f" DATA TAG {sg.data_tag}"
    return sql


def ensure_group(s: Db2Script, sg: StorageGroup, step: str) -> bool:
    """Step `step` (always a step, so the writers' numbering never skips one): create the storage
    group if missing; a second run, or a later part of an ILM file that uses the same group, says
    "already done". Before it, a check: a group of that name that lacks a planned path stops the
    script before anything changed. Without paths to create it on, the step only checks that it
    exists (a numbered check that stops the script when it is missing) and says so. Either way a
    check follows: the group has a usable path. Returns True when the script may create the
    group."""
    exists = f"EXISTS (SELECT 1 FROM SYSCAT.STOGROUPS WHERE SGNAME = {db2_str(sg.name)})"
    if not sg.paths:
        s.check(
            f"storage group {sg.name} exists",
            "SYSIBM.SYSDUMMY1",
            f"storage group {sg.name} missing",
            where=f"NOT {exists}",
        )
        s.change(
            f"{step}: storage group {sg.name}, not created here (no storage paths given): it exists (checked)",
            compound([s.say(f"{step}: already done: storage group {db2_ident(sg.name)} exists")]),
        )
        paths_check(s, sg)
        return False
    planned = ", ".join(f"({db2_str(_trimmed(p))})" for p in sg.paths)
    s.check(
        f"storage group {sg.name}, if it exists already, has every planned path ({', '.join(sg.paths)}; "
        "ADMIN_GET_STORAGE_PATHS, trailing separators ignored): a group of that name on other paths may be "
        "another tier. Nothing was changed: review the group or the policy's locations",
        f"(VALUES {planned}) AS W(PATH)",
        f"{sg.name[:24]} exists on other paths",
        where=(
            f"{exists} AND NOT EXISTS (SELECT 1 FROM TABLE(ADMIN_GET_STORAGE_PATHS({db2_str(sg.name)}, -1)) AS P "
            # CHR(92): the backslash of a Windows path, without writing one into the CLP file
            "WHERE TRIM(TRAILING '/' FROM TRIM(TRAILING CHR(92) FROM P.DB_STORAGE_PATH)) = W.PATH)"
        ),
    )
    s.change(
        f"{step}: storage group {sg.name}, created only if missing",
        "BEGIN\n"
        f"  IF {exists} THEN\n"
        f"    {s.say(f'{step}: already done: storage group {db2_ident(sg.name)} exists')}\n"
        "  ELSE\n"
        f"    {s.say(f'{step}: creating {where_sg(sg)}')}\n"
        f"    EXECUTE IMMEDIATE {db2_str(create_stogroup_sql(sg))};\n"
        "  END IF;\n"
        "END",
    )
    paths_check(s, sg)
    return True


def create_tablespace_like(
    s: Db2Script, ts: str, like: str, group: str, step: str, *, temporary: bool = False
) -> None:
    """`ts` on storage group `group`, created only if missing, with the page size, extent size,
    type (REGULAR / LARGE) and buffer pool of `like` read from SYSCAT.TABLESPACES at run time
    (every table space of a partitioned table must match in these: IBM Db2 docs, "Partitioned
    tables"). The only statement text built at run time; the names in it are fixed here."""
    kind = (
        # the kind of the old one (DATATYPE T: system, U: user temporary), read at run time
        "'CREATE ' || CASE WHEN v_type = 'U' THEN 'USER' ELSE 'SYSTEM' END || ' TEMPORARY' || "
        if temporary
        else "'CREATE ' || CASE WHEN v_type = 'L' THEN 'LARGE' ELSE 'REGULAR' END || "
    )
    create_ts = (
        f"{kind}"
        f"{db2_str(' TABLESPACE ' + db2_ident(ts) + ' PAGESIZE ')} || VARCHAR(v_page) || "
        f"{db2_str(' MANAGED BY AUTOMATIC STORAGE USING STOGROUP ' + db2_ident(group) + ' EXTENTSIZE ')} || "
        "VARCHAR(v_extent) || ' BUFFERPOOL \"' || REPLACE(v_bp, '\"', '\"\"') || '\"'"
    )
    s.change(
        f"{step}: table space {ts} in {group}, created only if missing, like {like}",
        "BEGIN\n"
        "  DECLARE v_page INTEGER;\n"
        "  DECLARE v_extent INTEGER;\n"
        "  DECLARE v_type CHAR(1);\n"
        "  DECLARE v_bp VARCHAR(128);\n"
        "  DECLARE v_sql VARCHAR(1000);\n"
        f"  IF EXISTS (SELECT 1 FROM SYSCAT.TABLESPACES WHERE TBSPACE = {db2_str(ts)}) THEN\n"
        f"    {s.say(f'{step}: already done: table space {db2_ident(ts)} exists')}\n"
        "  ELSE\n"
        "    SELECT T.PAGESIZE, T.EXTENTSIZE, T.DATATYPE, B.BPNAME INTO v_page, v_extent, v_type, v_bp FROM SYSCAT.TABLESPACES AS T "
        f"JOIN SYSCAT.BUFFERPOOLS AS B ON B.BUFFERPOOLID = T.BUFFERPOOLID WHERE T.TBSPACE = {db2_str(like)};\n"
        f"    SET v_sql = {create_ts};\n"
        f"    {s.say(f'{step}: creating table space {db2_ident(ts)} in storage group {db2_ident(group)}')}\n"
        "    EXECUTE IMMEDIATE v_sql;\n"
        "  END IF;\n"
        "END",
    )


# Authorities, from each statement's and routine's "Authorization" section in IBM Db2 docs.
# SYSADM and SYSCTRL do not include DBADM, DATAACCESS or SQLADM (Db2 9.7 and later), and the
# MON_GET_* / ADMIN_GET_STORAGE_PATHS table functions are not granted to PUBLIC ("Default PUBLIC
# privilege: None" on the MON_GET_UTILITY and ADMIN_GET_STORAGE_PATHS pages).
ROUTINES = (
    "and EXECUTE on SYSPROC.MON_GET_HADR, MON_GET_UTILITY, ADMIN_GET_STORAGE_PATHS{extra} (or DBADM, SQLADM "
    "or DATAACCESS, which include it; "
    "none is granted to PUBLIC); SELECT on SYSIBMADM.ENV_INST_INFO, DB2_CF and DB_HISTORY (PUBLIC in a "
    "non-restrictive database). Db2 10.5 or later (MON_GET_HADR)."
)


def duration_text(size: int | None, rates: tuple[int, int], what: str) -> str:
    if size is None:
        return f"unknown size: {what} runs at roughly {rates[0]}-{rates[1]} MB/s"
    mb = size / 1024**2
    fast, slow = round(mb / rates[1] / 60), round(mb / rates[0] / 60)
    span = (
        "under a minute"
        if slow < 1
        else (f"about {slow} min" if fast == slow else f"about {max(fast, 1)}-{slow} min")
    )
    return f"{span} for {size / 1024**3:,.1f} GB at ~{rates[0]}-{rates[1]} MB/s ({what}; speeds vary)"


def run_lines(move: Move, direction: str, then: tuple[str, ...], *, unit: bool) -> list[str]:
    """How to run the script (the header's Run:). `unit`: the script has a unit of work with
    autocommit off (Db2Script.unit), and a stop inside it leaves a lock until the session ends."""
    db = move.target.database
    if direction == CHECK:
        return [
            f"db2 -td@ -vsf <this file>   (as the instance owner; it connects to {db} itself)",
            "CHECK ONLY: the same checks as the forward script, against the live server, and none of its steps;",
            "it changes nothing. Run it days before the change window, in daylight; it prints the plan and the",
            "estimated duration. A failing check stops it with its number, as it would stop the forward script.",
            "Read docs/running-scripts.md first.",
        ]
    lines = [
        f"db2 -td@ -vsf <this file>   (as the instance owner; it connects to {db} itself)",
        *then,
        f"A statement waits at most {LOCK_TIMEOUT_SECONDS} s for a lock (SET CURRENT LOCK TIMEOUT); a lock timeout "
        "(SQL0911N reason 68) rolls back its unit of work and stops the script: run it again in a quieter moment.",
    ]
    if unit:
        lines.append(
            "If it stops between UPDATE COMMAND OPTIONS USING C OFF and the COMMIT after it, run `db2 rollback` in "
            "the same shell at once: it releases the table lock (`db2 terminate` alone would commit)."
        )
    lines.append("Read docs/running-scripts.md first.")
    return lines


def start(
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
    operations: Operations,
    backup: str,
    then: tuple[str, ...] = (),
    unit: bool = False,
) -> Db2Script:
    """The script with its header (`then`: what to run after it; `unit`: it has a unit of work
    with autocommit off), connected to the database, after the identity and backup checks
    (`backup`: what a running backup means for its action, BACKUP_*); the writer appends its own
    checks and steps. Direction "check": the check-only run of `forward`."""
    header = header_lines(
        move,
        direction=direction,
        forward=forward,
        dialect_title="DB2 CLP",
        what=what,
        source=source,
        destination=destination,
        method=method,
        limits=limits,
        run=run_lines(move, direction, then, unit=unit),
        options=options,
        generated_at=generated_at,
        operations=operations,
    )
    s = Db2Script(header, move.target.database, check_only=direction == CHECK, duration=operations.duration)
    identity_checks(s, move)
    backup_check(s, move, options)
    utility_check(s, move, backup)
    return s
