"""DB2 LUW dialect: CLP scripts with `@` as the statement terminator (`db2 -td@ -vsf FILE`).

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

from migrations import db2_partition
from migrations.header import Operations, header_lines
from migrations.plan import (
    AddDataPartition,
    Move,
    MoveDataPartition,
    MoveDb2Log,
    MoveTablespace,
    MoveTempTablespace,
    Options,
    StorageGroup,
    Unsupported,
)
from migrations.quoting import UnsafeNameError, check_db2_alias, comment_lines, db2_ident, db2_str

SQLSTATE = "75001"
MAX_MESSAGE = 70  # bytes RAISE_ERROR keeps


def _num(x: float) -> str:
    text = f"{x:.6f}".rstrip("0").rstrip(".")
    return text or "0"


class Db2Script:
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


def _where_sg(sg: StorageGroup) -> str:
    return f"storage group {db2_ident(sg.name)}" + (f" ({', '.join(sg.paths)})" if sg.paths else "")


def _identity_checks(s: Db2Script, move: Move) -> None:
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


def _backup_check(s: Db2Script, move: Move, options: Options) -> None:
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
    """Create the storage group if missing (a numbered step, True), or, without paths to create
    it on, only check that it exists (no step, False)."""
    if not sg.paths:
        s.check(
            f"storage group {sg.name} exists",
            "SYSIBM.SYSDUMMY1",
            f"storage group {sg.name} missing",
            where=f"NOT EXISTS (SELECT 1 FROM SYSCAT.STOGROUPS WHERE SGNAME = {db2_str(sg.name)})",
        )
        return False
    s.comment(f"{step}: storage group {sg.name}, created only if missing")
    s.statement(
        "BEGIN\n"
        f"  IF EXISTS (SELECT 1 FROM SYSCAT.STOGROUPS WHERE SGNAME = {db2_str(sg.name)}) THEN\n"
        f"    {s.say(f'{step}: already done: storage group {db2_ident(sg.name)} exists')}\n"
        "  ELSE\n"
        f"    {s.say(f'{step}: creating {_where_sg(sg)}')}\n"
        f"    EXECUTE IMMEDIATE {db2_str(create_stogroup_sql(sg))};\n"
        "  END IF;\n"
        "END"
    )
    return True


def _tablespace_steps(
    s: Db2Script, ts: str, source: StorageGroup | None, target: StorageGroup, options: Options
) -> None:
    lts, ltarget = db2_str(ts), db2_str(target.name)
    src = db2_str(source.name) if source is not None else "''"
    s.check(
        f"table space {ts} exists",
        "SYSIBM.SYSDUMMY1",
        f"table space {ts} not found",
        where=f"NOT EXISTS (SELECT 1 FROM SYSCAT.TABLESPACES WHERE TBSPACE = {lts})",
    )
    s.check(
        f"table space {ts} is in storage group {source.name if source else '(none: DMS)'} or already in {target.name}",
        "SYSCAT.TABLESPACES",
        f"{ts} is elsewhere: advice out of date",
        where=f"TBSPACE = {lts} AND COALESCE(SGNAME, '') NOT IN ({src}, {ltarget})",
    )
    s.check(
        f"table space {ts} is a regular or large table space that can use a storage group",
        "SYSCAT.TABLESPACES",
        f"{ts}: temporary or SMS, unsupported",
        where=f"TBSPACE = {lts} AND COALESCE(SGNAME, '') <> {ltarget} AND (DATATYPE IN ('T', 'U') OR (TBSPACETYPE = 'S' AND SGNAME IS NULL))",
    )
    moving = f"EXISTS (SELECT 1 FROM SYSCAT.TABLESPACES WHERE TBSPACE = {lts} AND COALESCE(SGNAME, '') <> {ltarget})"
    s.check(
        f"no rebalance is running on {ts}",
        f"TABLE(MON_GET_REBALANCE_STATUS({lts}, -2)) AS R",
        "a rebalance is running: wait for it",
        where=moving,
    )
    ensure_group(s, target, "step 1")
    factor = 1 + options.headroom_pct / 100
    s.check(
        f"the paths of {target.name} have room for {ts} ({options.headroom_pct:g} % headroom; storage is striped over the paths)",
        "SYSIBM.SYSDUMMY1",
        f"not enough free space in {target.name}",
        where=(
            f"{moving} AND (SELECT MIN(P.STO_PATH_FREE_SIZE) * COUNT(*) FROM TABLE(ADMIN_GET_STORAGE_PATHS({ltarget}, -1)) AS P)"
            f" < (SELECT SUM(T.TBSP_USED_PAGES * T.TBSP_PAGE_SIZE) FROM TABLE(MON_GET_TABLESPACE({lts}, -1)) AS T) * {factor:.2f}"
        ),
    )
    move_sql = f"ALTER TABLESPACE {db2_ident(ts)} USING STOGROUP {db2_ident(target.name)}"
    convert_sql = f"ALTER TABLESPACE {db2_ident(ts)} MANAGED BY AUTOMATIC STORAGE USING STOGROUP {db2_ident(target.name)}"
    s.comment(
        f"step 2: re-point {ts} at {target.name} (online; the rebalance runs in the background after the commit)"
    )
    s.statement(
        "BEGIN\n"
        "  DECLARE v_sg VARCHAR(128);\n"
        f"  SELECT SGNAME INTO v_sg FROM SYSCAT.TABLESPACES WHERE TBSPACE = {lts};\n"
        f"  IF v_sg = {ltarget} THEN\n"
        f"    {s.say(f'step 2: already done: {db2_ident(ts)} uses storage group {db2_ident(target.name)}')}\n"
        "  ELSEIF v_sg IS NULL THEN\n"
        f"    {s.say(f'step 2: converting {db2_ident(ts)} to automatic storage in {db2_ident(target.name)}')}\n"
        f"    EXECUTE IMMEDIATE {db2_str(convert_sql)};\n"
        "  ELSE\n"
        f"    {s.say(f'step 2: moving {db2_ident(ts)} to storage group {db2_ident(target.name)}')}\n"
        f"    EXECUTE IMMEDIATE {db2_str(move_sql)};\n"
        "  END IF;\n"
        "END"
    )
    rebalance_sql = f"ALTER TABLESPACE {db2_ident(ts)} REBALANCE"
    s.comment(
        f"step 3: after a DMS conversion, REBALANCE moves {ts} off its old (non automatic storage) containers"
    )
    s.statement(
        "BEGIN\n"
        f"  IF EXISTS (SELECT 1 FROM TABLE(MON_GET_CONTAINER({lts}, -1)) AS C WHERE COALESCE(C.DB_STORAGE_PATH_ID, -1) < 0)\n"
        f"     AND NOT EXISTS (SELECT 1 FROM TABLE(MON_GET_REBALANCE_STATUS({lts}, -2)) AS R) THEN\n"
        f"    {s.say(f'step 3: rebalancing {db2_ident(ts)} off its old containers')}\n"
        f"    EXECUTE IMMEDIATE {db2_str(rebalance_sql)};\n"
        "  ELSE\n"
        f"    {s.say('step 3: nothing to do: no containers outside the storage paths')}\n"
        "  END IF;\n"
        "END"
    )
    s.check(
        f"post-check: table space {ts} uses storage group {target.name}",
        "SYSCAT.TABLESPACES",
        f"post-check: {ts} is not in {target.name}",
        where=f"TBSPACE = {lts} AND COALESCE(SGNAME, '') <> {ltarget}",
    )
    s.comment(
        "the rebalance progress (no rows: finished; the old containers are dropped when it is done); run it again to watch"
    )
    s.statement(
        "SELECT VARCHAR(R.TBSP_NAME, 30) AS TBSP_NAME, R.REBALANCER_MODE, R.REBALANCER_STATUS, "
        "R.REBALANCER_EXTENTS_REMAINING, R.REBALANCER_EXTENTS_PROCESSED, R.REBALANCER_START_TIME "
        f"FROM TABLE(MON_GET_REBALANCE_STATUS({lts}, -2)) AS R"
    )
    s.statement(
        "BEGIN\n"
        f"  {s.say(f'finished: {db2_ident(ts)} uses {db2_ident(target.name)}; data moves in the background until the rebalance ends')}\n"
        "END"
    )


def _exclusive_check(s: Db2Script, a: MoveDataPartition) -> None:
    """The partition's table space holds nothing but this partition (its data, indexes, long data)."""
    lts, ls, lt = db2_str(a.tablespace), db2_str(a.schema), db2_str(a.table)
    tsid = f"(SELECT TBSPACEID FROM SYSCAT.TABLESPACES WHERE TBSPACE = {lts})"
    s.check(
        f"partition {a.partition_id} of {a.schema}.{a.table} is in table space {a.tablespace}",
        "SYSIBM.SYSDUMMY1",
        "partition not in its planned table space",
        where=(
            f"NOT EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = {ls} AND TABNAME = {lt} "
            f"AND DATAPARTITIONID = {a.partition_id} AND TBSPACEID = {tsid})"
        ),
    )
    other_parts = (
        f"SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE {tsid} IN (TBSPACEID, COALESCE(INDEX_TBSPACEID, -1), "
        f"COALESCE(LONG_TBSPACEID, -1)) AND NOT (TABSCHEMA = {ls} AND TABNAME = {lt} AND DATAPARTITIONID = {a.partition_id})"
    )
    other_tables = (
        f"SELECT 1 FROM SYSCAT.TABLES AS T WHERE {lts} IN (COALESCE(T.TBSPACE, ''), COALESCE(T.INDEX_TBSPACE, ''), "
        "COALESCE(T.LONG_TBSPACE, '')) AND NOT EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS AS D "
        "WHERE D.TABSCHEMA = T.TABSCHEMA AND D.TABNAME = T.TABNAME)"
    )
    global_indexes = (
        f"SELECT 1 FROM SYSCAT.INDEXES AS I WHERE I.TBSPACEID = {tsid} AND NOT EXISTS "
        "(SELECT 1 FROM SYSCAT.INDEXPARTITIONS AS P WHERE P.INDSCHEMA = I.INDSCHEMA AND P.INDNAME = I.INDNAME)"
    )
    s.check(
        f"table space {a.tablespace} holds only this partition (else: unsupported here, review - see the header)",
        "SYSIBM.SYSDUMMY1",
        "table space shared: unsupported here, review",
        where=f"EXISTS ({other_parts}) OR EXISTS ({other_tables}) OR EXISTS ({global_indexes})",
    )


def _log_steps(s: Db2Script, a: MoveDb2Log) -> None:
    """NEWLOGPATH through ADMIN_CMD; post-check in SYSIBMADM.DBCFG (the pending `newlogpath`, or
    `logpath` once a reactivation has moved the log)."""
    target = db2_str(a.to_path + "%")
    s.check(
        f"the log is under {a.from_path} today, or already set to move to / moved to {a.to_path}",
        "SYSIBM.SYSDUMMY1",
        "log path not as planned: advice out of date",
        where=(
            "NOT EXISTS (SELECT 1 FROM SYSIBMADM.DBCFG WHERE (NAME = 'logpath' AND (VALUE LIKE "
            f"{db2_str(a.from_path + '%')} OR VALUE LIKE {target})) OR (NAME = 'newlogpath' AND VALUE LIKE {target}))"
        ),
    )
    command = f'UPDATE DB CFG USING NEWLOGPATH "{a.to_path}"'
    s.comment(f"step 1: record the new log path {a.to_path} (running it again sets the same value again)")
    s.statement(f"CALL SYSPROC.ADMIN_CMD({db2_str(command)})")
    s.check(
        f"post-check: SYSIBMADM.DBCFG shows newlogpath (pending) or logpath under {a.to_path}",
        "SYSIBM.SYSDUMMY1",
        "post-check: new log path not recorded",
        where=(
            f"NOT EXISTS (SELECT 1 FROM SYSIBMADM.DBCFG WHERE NAME IN ('newlogpath', 'logpath') AND VALUE LIKE {target})"
        ),
    )
    s.statement(
        "BEGIN\n"
        f"  {s.say(f'finished: the log moves to {a.to_path} at the next activation of the database (RESTART NEEDED)')}\n"
        "END"
    )


# Authorities, from each statement's and routine's "Authorization" section in IBM Db2 docs.
# SYSADM and SYSCTRL do not include DBADM, DATAACCESS or SQLADM (Db2 9.7 and later), and the
# MON_GET_* / ADMIN_GET_STORAGE_PATHS table functions are not granted to PUBLIC.
_ROUTINES = (
    "and EXECUTE on SYSPROC.MON_GET_HADR{extra} (or DBADM, SQLADM or DATAACCESS, which include it; "
    "none is granted to PUBLIC); SELECT on SYSIBMADM.ENV_INST_INFO, DB2_CF and DB_HISTORY (PUBLIC in a "
    "non-restrictive database). Db2 10.5 or later (MON_GET_HADR)."
)


def authorities(a: object) -> str:
    """The authorities a script needs, named per statement and routine."""
    if isinstance(a, MoveTablespace) or (isinstance(a, MoveDataPartition) and a.route == "tablespace"):
        return (
            "Needs SYSCTRL or SYSADM (ALTER TABLESPACE; a storage group that must be created) "
            + _ROUTINES.format(
                extra=", MON_GET_REBALANCE_STATUS, MON_GET_TABLESPACE, MON_GET_CONTAINER and ADMIN_GET_STORAGE_PATHS"
            )
        )
    if isinstance(a, MoveDataPartition):
        return (
            "Needs DBADM granted WITH DATAACCESS, the default (DETACH / ATTACH, CREATE TABLE, INSERT, DROP TABLE, "
            "SET INTEGRITY, the row counts), plus SYSCTRL or SYSADM when the target table space or storage group "
            "must be created (CREATE TABLESPACE; a new storage group), EXECUTE on the SYSIBMADM.DBMS_PIPE module "
            "(the wait after the DETACH; DATAACCESS includes it), "
            + _ROUTINES.format(extra=", ADMIN_GET_STORAGE_PATHS and ADMIN_GET_TAB_INFO")
        )
    if isinstance(a, AddDataPartition):
        return (
            "Needs DBADM granted WITH DATAACCESS, the default (ALTER TABLE ... ADD / DETACH PARTITION, the "
            "emptiness check reads the table), plus SYSCTRL or SYSADM when the table space or storage group must "
            "be created (CREATE TABLESPACE; a new storage group), " + _ROUTINES.format(extra="")
        )
    if isinstance(a, MoveTempTablespace):
        return (
            "Needs SYSCTRL or SYSADM (CREATE / DROP TABLESPACE, a new storage group, GRANT USE OF TABLESPACE), "
            "SELECT on SYSIBMADM.ADMINTEMPTABLES " + _ROUTINES.format(extra="")
        )
    return (
        "Needs SYSADM, SYSCTRL or SYSMAINT (UPDATE DB CFG through SYSPROC.ADMIN_CMD, EXECUTE on ADMIN_CMD), "
        "SELECT on SYSIBMADM.DBCFG " + _ROUTINES.format(extra="")
    )


REBALANCE_MB_S = (100, 200)  # a rebalance or a logged copy on ordinary arrays; varies widely
COPY_MB_S = (50, 150)


def _duration(size: int | None, rates: tuple[int, int], what: str) -> str:
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


def _watch(ts: str) -> str:
    return (
        "SELECT REBALANCER_STATUS, REBALANCER_EXTENTS_REMAINING, REBALANCER_EXTENTS_PROCESSED FROM "
        f"TABLE(MON_GET_REBALANCE_STATUS({db2_str(ts)}, -2)) AS R (no rows: finished)"
    )


def operations(move: Move, forward: Move) -> Operations:
    """What the on-call DBA plans around, per action; sizes from the recommendation."""
    a, size = move.action, forward.why.size_bytes
    if isinstance(a, MoveTablespace) or (isinstance(a, MoveDataPartition) and a.route == "tablespace"):
        ts = a.tablespace
        return Operations(
            duration=(
                "the script itself takes seconds; the rebalance then runs in the background after it ends: "
                f"{_duration(size, REBALANCE_MB_S, 'rebalance')}. Watch it with {_watch(ts)}"
            ),
            log_volume="small: the rebalance logs extent moves, not the rows; a DMS conversion logs its container changes",
            blocking=(
                f"none for applications: {ts} stays readable and writable; the rebalance competes with them for I/O "
                "on both storage groups"
            ),
            backups=(
                "run it outside the backup window (the rebalance and a backup read the same containers), and take a "
                "new full database backup after the rebalance ends: the table space's containers have changed"
            ),
            abort=(
                f"ALTER TABLESPACE {db2_ident(ts)} REBALANCE SUSPEND pauses the data movement (REBALANCE RESUME "
                "continues it); the storage group change itself is committed at once and is undone by the rollback "
                "script, not by cancelling"
            ),
            recover=(
                "run the script again: every step checks first; a suspended rebalance resumes with "
                f"ALTER TABLESPACE {db2_ident(ts)} REBALANCE RESUME (also at the next activation)"
            ),
        )
    if isinstance(a, MoveDataPartition):
        return Operations(
            duration=(
                "the asynchronous detach usually ends within seconds to a few minutes once no query holds the "
                f"partition (the script waits up to {db2_partition.DETACH_WAIT_SECONDS // 60} min), then "
                f"{_duration(size, COPY_MB_S, 'one logged INSERT ... SELECT')}, then SET INTEGRITY (index "
                "maintenance of the attached rows, about as long again with non-partitioned indexes)"
            ),
            log_volume=(
                f"about the partition's size ({_gb(size)}) in one transaction: the active log "
                "(LOGFILSIZ x (LOGPRIMARY + LOGSECOND)) must hold it, or the INSERT fails with SQL0964C and rolls back"
            ),
            blocking=(
                "DETACH waits for queries that hold locks on the partition (dynamic UR queries excepted) and "
                "invalidates static packages on the table; an asynchronous task then finishes the detach (the script "
                "waits for it). The partition's rows are invisible in the table from the DETACH until the ATTACH and "
                "SET INTEGRITY complete, that is for the whole Duration above (longer if the script stops and is run "
                "again later; meanwhile they are in the detached table); the other partitions stay readable and "
                "writable (SET INTEGRITY ... ALLOW WRITE ACCESS)"
            ),
            backups=(
                "keep it out of the backup window (the copy's log volume goes into the next online backup's log "
                "range); take a new full database backup afterwards, when a table space was created"
            ),
            abort=(
                "interrupt the CLP (Ctrl-C) or FORCE APPLICATION: the running statement rolls back; the script is "
                "safe to run again, every step checks first"
            ),
            recover=(
                "run the script again: it carries on from the step it stopped at; or put the partition back as it "
                "was with the re-attach commands in Method (the detached table keeps every row until step 7)"
            ),
        )
    if isinstance(a, AddDataPartition):
        return Operations(
            duration="seconds: catalog changes only (the partition is empty)",
            log_volume="a few catalog log records",
            blocking=(
                "ADD / DETACH PARTITION wait for queries holding locks on the table and invalidate static packages "
                "on it; a busy table may make them wait until LOCKTIMEOUT"
            ),
            backups="no effect on backup jobs; a new table space is in the next backup",
            abort="interrupt the CLP (Ctrl-C): the running statement rolls back; the script is safe to run again",
            recover="run the script again: every step checks first and says 'already done'",
        )
    if isinstance(a, MoveTempTablespace):
        return Operations(
            duration="seconds: catalog changes only (DROP TABLESPACE fails, and the script stops, while the old one is in use)",
            log_volume="a few catalog log records",
            blocking="none for applications: new work uses the new table space at once; nothing waits on the DROP",
            backups="no effect on backup jobs (temporary table spaces are not backed up)",
            abort="interrupt the CLP (Ctrl-C): the running statement rolls back; the script is safe to run again",
            recover="run the script again later: it carries on (the new table space is kept, the old one dropped once free)",
        )
    return Operations(
        duration="seconds now; the log moves at the next activation of the database",
        log_volume="next to none: one configuration update",
        blocking="none now; the reactivation needs every application disconnected",
        backups="take a full database backup after the reactivation (the log path changed)",
        abort="nothing to abort: one configuration update",
        recover="run the rollback script to record the old path again before the reactivation",
    )


def _gb(size: int | None) -> str:
    return "unknown" if size is None else f"{size / 1024**3:,.1f} GB"


def render(move: Move, direction: str, forward: Move, options: Options, generated_at: datetime) -> str:
    a = move.action
    if isinstance(a, MoveTablespace):
        what = f"table space {db2_ident(a.tablespace)} of database {move.target.database}"
        method = [
            "ALTER TABLESPACE ... USING STOGROUP: online; new containers on the target paths, the old ones are",
            "dropped after an asynchronous rebalance that starts at the commit. A DMS table space is converted",
            "to automatic storage first (one-way) and then rebalanced.",
        ]
        limits = ["Not supported in pureScale (checked).", authorities(a)]
        if a.source is None:
            limits.append(
                "The table space is DMS today: the move converts it to automatic storage, which cannot be undone; "
                "the rollback puts it in IBMSTOGROUP."
            )
        ts, source, target = a.tablespace, a.source, a.target
    elif isinstance(a, MoveDataPartition) and a.route == "detach_attach":
        table = f"{db2_ident(a.schema)}.{db2_ident(a.table)}"
        what = (
            f"data partition {a.partition_name} of {table}, from table space {db2_ident(a.tablespace)} "
            f"to {db2_ident(a.target_tablespace or '')}"
        )
        method = db2_partition.method_lines(a)
        limits = ["Not supported in pureScale (checked).", authorities(a), *db2_partition.limits()]
        ts, source, target = a.tablespace, a.source, a.target
    elif isinstance(a, MoveDataPartition):
        table = f"{db2_ident(a.schema)}.{db2_ident(a.table)}"
        what = f"data partition {a.partition_id} ({a.partition_name or 'unnamed'}) of {table}, in table space {db2_ident(a.tablespace)}"
        method = [
            f"the advice shows no other partition in table space {a.tablespace}: ALTER TABLESPACE ... USING",
            "STOGROUP (online, asynchronous rebalance). The script first checks that the table space holds",
            "only this partition; when something else is in it the script stops before changing anything:",
            "unsupported here: review (partitions that the advice shows sharing a table space are scripted",
            "with detach / copy / attach instead).",
        ]
        limits = ["Not supported in pureScale (checked).", authorities(a)]
        ts, source, target = a.tablespace, a.source, a.target
    elif isinstance(a, MoveTempTablespace):
        what = f"temporary table space {db2_ident(a.tablespace)} of database {move.target.database}"
        method = [
            "CREATE SYSTEM (or USER, like the old one: read from SYSCAT.TABLESPACES at run time) TEMPORARY TABLESPACE",
            f"{db2_ident(a.new_tablespace)} on the target storage group, like {db2_ident(a.tablespace)} (page size, extent size,",
            f"buffer pool), then DROP TABLESPACE {db2_ident(a.tablespace)}: automatic storage temporary table spaces cannot",
            'change their storage group (IBM Db2 docs, "Temporary table spaces": a rebalance returns SQL0109N). The new',
            "name replaces the old one. A user temporary table space: the USE privileges of the old one are granted on",
            "the new one, and the DROP waits until no declared or created temporary table is in it (IBM Db2 docs,",
            '"Dropping table spaces"; SYSIBMADM.ADMINTEMPTABLES shows them).',
        ]
        limits = [
            "Not supported in pureScale (checked).",
            authorities(a),
            "No restart needed: new work uses the new table space at once; DROP fails while a running query "
            "uses the old one (run the script again later).",
            "User temporary: applications that name the table space (DECLARE GLOBAL TEMPORARY TABLE ... IN "
            f"{db2_ident(a.tablespace)}) must use {db2_ident(a.new_tablespace)}; without IN, Db2 picks one they have USE of. "
            "A created temporary table defined in it stops the script before anything changes (move it by hand).",
        ]
        ts, source, target = a.tablespace, a.source, a.target
    elif isinstance(a, MoveDb2Log):
        what = f"the active log of database {move.target.database}"
        method = [
            f"CALL SYSPROC.ADMIN_CMD('UPDATE DB CFG USING NEWLOGPATH \"{a.to_path}\"') (IBM Db2 docs: UPDATE DATABASE",
            "CONFIGURATION command using the ADMIN_CMD procedure). It only records the new path: DB2 creates the",
            "log files there (under NODE0000/LOGSTREAM0000/) when the database is next activated.",
        ]
        limits = [
            "RESTART NEEDED: takes effect at the next activation of the database (all applications disconnected, "
            "then ACTIVATE DATABASE or the first connection); until then the log stays where it is.",
            authorities(a),
            "The directory must exist and belong to the instance owner.",
        ]
        header = header_lines(
            move, direction=direction, forward=forward, dialect_title="DB2 CLP", what=what,
            source=f"log path {a.from_path}", destination=f"log path {a.to_path}", method=method, limits=limits,
            run=[
                f"db2 -td@ -vsf <this file>   (as the instance owner; it connects to {move.target.database} itself)",
                "Then, in a change window: db2 deactivate db <db> (all applications disconnected), db2 activate db <db>.",
                "Read docs/running-scripts.md first.",
            ],
            options=options, generated_at=generated_at, operations=operations(move, forward),
        )  # fmt: skip
        s = Db2Script(header, move.target.database)
        _identity_checks(s, move)
        _backup_check(s, move, options)
        _log_steps(s, a)
        return s.text()
    elif isinstance(a, AddDataPartition):
        table = f"{db2_ident(a.schema)}.{db2_ident(a.table)}"
        verb = "detach (kept as a table) the partition" if a.remove else "add the partition"
        what = f"{table}: {verb} {db2_ident(a.partition_name)} ({a.range_low or 'MINVALUE'} .. {a.range_high or 'MAXVALUE'})"
        method = db2_partition.add_method_lines(a)
        limits = ["Not supported in pureScale (checked).", authorities(a)]
        ts, source, target = a.tablespace, None, a.target
    else:
        raise Unsupported(f"{move.key}: {type(a).__name__} is a SQL Server action; it has no DB2 form")
    header = header_lines(
        move,
        direction=direction,
        forward=forward,
        dialect_title="DB2 CLP",
        what=what,
        source=_where_sg(source)
        if source
        else ("(new)" if isinstance(a, AddDataPartition) else "no storage group (DMS containers)"),
        destination=_where_sg(target),
        method=method,
        limits=limits,
        run=[
            f"db2 -td@ -vsf <this file>   (as the instance owner; it connects to {move.target.database} itself)",
            "Read docs/running-scripts.md first.",
        ],
        options=options,
        generated_at=generated_at,
        operations=operations(move, forward),
    )
    s = Db2Script(header, move.target.database)
    _identity_checks(s, move)
    _backup_check(s, move, options)
    if isinstance(a, MoveDataPartition) and a.route == "detach_attach":
        db2_partition.steps(s, a, options)
        return s.text()
    if isinstance(a, AddDataPartition):
        db2_partition.add_steps(s, a, options)
        return s.text()
    if isinstance(a, MoveTempTablespace):
        db2_partition.temp_steps(s, a)
        return s.text()
    if isinstance(a, MoveDataPartition):
        _exclusive_check(s, a)
    _tablespace_steps(s, ts, source, target, options)
    return s.text()
