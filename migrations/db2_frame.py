"""DB2 script frame: CLP scripts with `@` as the statement terminator (`db2 -td@ -vsf FILE`).

The scaffolding every DB2 script shares (the script, its numbered checks, the header, the
identity and backup checks, storage groups and table spaces created only if missing); the
writers are db2_tablespace, db2_partition, db2_leading, db2_temp and db2_log, and db2.render picks
the writer for an action.

- The file starts with `--#SET TERMINATOR @` and `UPDATE COMMAND OPTIONS USING C ON S ON`: the CLP
  stops at the first failing statement even when `-s` was forgotten, and every statement commits
  even when DB2OPTIONS says `+c` (without it nothing would commit and a DETACH would hold its
  locks until the CLP ends; the options the file sets override DB2OPTIONS and the command line:
  IBM Db2 docs, "UPDATE COMMAND OPTIONS command" and "Command line processor options").
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
"""

from __future__ import annotations

from datetime import datetime

from migrations.header import Operations, header_lines
from migrations.plan import Move, Options, StorageGroup, Unsupported
from migrations.quoting import UnsafeNameError, check_db2_alias, comment_lines, db2_ident, db2_str

SQLSTATE = "75001"
MAX_MESSAGE = 70  # bytes RAISE_ERROR keeps


def _num(x: float) -> str:
    text = f"{x:.6f}".rstrip("0").rstrip(".")
    return text or "0"


class Db2Script:
    """A CLP script under construction: header lines, numbered checks listed in the header, and
    statements (each ends with the `@` terminator)."""

    def __init__(self, header: list[str], database: str) -> None:
        self.header = header
        self.statements: list[str] = []
        self.checks: list[str] = []
        try:
            check_db2_alias(database, "database")
        except UnsafeNameError as exc:
            raise Unsupported(str(exc)) from exc
        self.statements += [
            # c: autocommit, s: stop on error (IBM Db2 docs, "UPDATE COMMAND OPTIONS command"); the
            # file's setting is the last override, after DB2OPTIONS and the command-line flags
            "UPDATE COMMAND OPTIONS USING C ON S ON@",
            "SET SERVEROUTPUT ON@",
            f"CONNECT TO {database}@",
        ]

    def comment(self, *lines: str) -> None:
        self.statements.extend(comment_lines(list(lines), "db2"))

    def statement(self, text: str) -> None:
        self.statements.append(text.rstrip() + "@")

    def register(self, description: str, short: str) -> str:
        """Number a check, list it in the header, and return its message (cut to fit 70 bytes:
        RAISE_ERROR and SIGNAL keep no more)."""
        number = len(self.checks) + 1
        self.checks.append(f"check {number}: {description}")
        message = f"tierwise check {number} failed: {short}"
        if len(message.encode("utf-8")) > MAX_MESSAGE:
            message = f"tierwise check {number} failed (see the script header)"
        return message

    def signal(self, message: str) -> str:
        return f"SIGNAL SQLSTATE '{SQLSTATE}' SET MESSAGE_TEXT = {db2_str(message)};"

    def check(self, description: str, bad_rows: str, short: str, *, where: str | None = None) -> None:
        """A pre- or post-check: `bad_rows` is a FROM … [WHERE …] tail that returns rows when the
        check fails. `short` is the message (cut to fit 70 bytes with the check number)."""
        message = self.register(description, short)
        self.comment(self.checks[-1])
        tail = bad_rows if where is None else f"{bad_rows} WHERE {where}"
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

    def text(self) -> str:
        lines = ["--#SET TERMINATOR @", *comment_lines(self.header, "db2")]
        if self.checks:
            lines += comment_lines(["Checks (a failing check stops the script with its number):"], "db2")
            lines += comment_lines([f"  {c}" for c in self.checks], "db2")
        lines += self.statements
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
# SYSMON or higher). A running online backup pauses a rebalance that overlaps it until the backup
# ends (IBM Db2 docs, "Compatibility of online backup and other utilities",
# https://www.ibm.com/support/knowledgecenter/en/SSEPGG_11.1.0/com.ibm.db2.luw.admin.ha.doc/doc/c0021554.html);
# that page does not list ALTER TABLESPACE ... USING STOGROUP, DETACH / ATTACH PARTITION or DROP
# TABLESPACE either way, so the scripts stop for any running backup instead of guessing.
BLOCKING_UTILITIES = ("BACKUP",)


def utility_check(s: Db2Script, move: Move) -> None:
    """No backup of the database runs right now, on any member (MON_GET_UTILITY(-2))."""
    types = ", ".join(db2_str(t) for t in BLOCKING_UTILITIES)
    s.check(
        f"no BACKUP of {move.target.database} is running (SYSPROC.MON_GET_UTILITY(-2), every member): an online "
        "backup pauses the rebalance and competes for the same containers and locks; wait for it or pause the "
        "backup job, then run the script again. Nothing was changed",
        "TABLE(MON_GET_UTILITY(-2)) AS U",
        "a BACKUP is running: wait, run again",
        where=f"U.UTILITY_TYPE IN ({types})",
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
    "already done" once the group is found on every planned path (a group of that name elsewhere
    stops the script before anything changed). Without paths to create it on, the step only
    checks that it exists (a numbered check that stops the script when it is missing) and says
    so. Either way a check follows: the group has a usable path. Returns True when the script may
    create the group."""
    if not sg.paths:
        s.check(
            f"storage group {sg.name} exists",
            "SYSIBM.SYSDUMMY1",
            f"storage group {sg.name} missing",
            where=f"NOT EXISTS (SELECT 1 FROM SYSCAT.STOGROUPS WHERE SGNAME = {db2_str(sg.name)})",
        )
        s.comment(
            f"{step}: storage group {sg.name}, not created here (no storage paths given): it exists (checked)"
        )
        s.statement(compound([s.say(f"{step}: already done: storage group {db2_ident(sg.name)} exists")]))
        paths_check(s, sg)
        return False
    elsewhere = s.register(
        f"storage group {sg.name}, if it exists already, has every planned path ({', '.join(sg.paths)}; "
        "ADMIN_GET_STORAGE_PATHS, trailing separators ignored): a group of that name on other paths may be "
        "another tier. Nothing was changed: review the group or the policy's locations",
        f"{sg.name[:24]} exists on other paths",
    )
    planned = ", ".join(f"({db2_str(_trimmed(p))})" for p in sg.paths)
    s.comment(s.checks[-1], f"{step}: storage group {sg.name}, created only if missing")
    s.statement(
        "BEGIN\n"
        f"  IF EXISTS (SELECT 1 FROM SYSCAT.STOGROUPS WHERE SGNAME = {db2_str(sg.name)}) THEN\n"
        f"    IF EXISTS (SELECT 1 FROM (VALUES {planned}) AS W(PATH) WHERE NOT EXISTS (SELECT 1 FROM "
        f"TABLE(ADMIN_GET_STORAGE_PATHS({db2_str(sg.name)}, -1)) AS P "
        # CHR(92): the backslash of a Windows path, without writing one into the CLP file
        "WHERE TRIM(TRAILING '/' FROM TRIM(TRAILING CHR(92) FROM P.DB_STORAGE_PATH)) = W.PATH)) THEN\n"
        f"      {s.signal(elsewhere)}\n"
        "    END IF;\n"
        f"    {s.say(f'{step}: already done: storage group {db2_ident(sg.name)} exists')}\n"
        "  ELSE\n"
        f"    {s.say(f'{step}: creating {where_sg(sg)}')}\n"
        f"    EXECUTE IMMEDIATE {db2_str(create_stogroup_sql(sg))};\n"
        "  END IF;\n"
        "END"
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
    s.comment(f"{step}: table space {ts} in {group}, created only if missing, like {like}")
    s.statement(
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
        "END"
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
    then: tuple[str, ...] = (),
) -> Db2Script:
    """The script with its header (`then`: what to run after it), connected to the database,
    after the identity and backup checks; the writer appends its own checks and steps."""
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
        run=[
            f"db2 -td@ -vsf <this file>   (as the instance owner; it connects to {move.target.database} itself)",
            *then,
            "Read docs/running-scripts.md first.",
        ],
        options=options,
        generated_at=generated_at,
        operations=operations,
    )
    s = Db2Script(header, move.target.database)
    identity_checks(s, move)
    backup_check(s, move, options)
    utility_check(s, move)
    return s
