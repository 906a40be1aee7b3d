"""DB2: a table space to another storage group (ALTER TABLESPACE ... USING STOGROUP), and a data
partition alone in its table space moved the same way (domain.md §4.9).

Online: the re-pointing commits at once and an asynchronous rebalance moves the extents after
it; a DMS table space is converted to automatic storage first (one-way). A partition whose table
space holds anything else stops before any change (the shared case is db2_partition's).
"""

from __future__ import annotations

from datetime import datetime

from migrations.db2_frame import (
    BACKUP_REBALANCE,
    ROUTINES,
    Db2Script,
    duration_text,
    ensure_group,
    group_exists,
    room_sql,
    source_text,
    start,
    where_sg,
)
from migrations.header import Operations
from migrations.plan import Move, MoveDataPartition, MoveTablespace, Options, StorageGroup
from migrations.quoting import db2_ident, db2_str

REBALANCE_MB_S = (100, 200)  # a rebalance on ordinary arrays; varies widely
# Authorities, from each statement's and routine's "Authorization" section in IBM Db2 docs.
AUTHORITIES = (
    "Needs SYSCTRL or SYSADM (ALTER TABLESPACE; a storage group that must be created) "
    + ROUTINES.format(extra=", MON_GET_REBALANCE_STATUS, MON_GET_TABLESPACE, MON_GET_CONTAINER")
)


def render_tablespace(
    move: Move, a: MoveTablespace, direction: str, forward: Move, options: Options, at: datetime
) -> str:
    what = f"table space {db2_ident(a.tablespace)} of database {move.target.database}"
    method = [
        "ALTER TABLESPACE ... USING STOGROUP: online; new containers on the target paths, the old ones are",
        "dropped after an asynchronous rebalance that starts at the commit. A DMS table space is converted",
        "to automatic storage first (one-way) and then rebalanced.",
    ]
    limits = ["Not supported in pureScale (checked).", AUTHORITIES]
    if a.source is None:
        limits.append(
            "The table space is DMS today: the move converts it to automatic storage, which cannot be undone; "
            "the rollback puts it in IBMSTOGROUP."
        )
    s = _script(move, a, direction, forward, options, at, what, method, limits)
    _tablespace_steps(s, a.tablespace, a.source, a.target, options)
    return s.text()


def render_partition_alone(
    move: Move, a: MoveDataPartition, direction: str, forward: Move, options: Options, at: datetime
) -> str:
    """The advice shows no other partition in the table space: move the table space, after
    checking that it holds only this partition."""
    table = f"{db2_ident(a.schema)}.{db2_ident(a.table)}"
    what = f"data partition {a.partition_id} ({a.partition_name or 'unnamed'}) of {table}, in table space {db2_ident(a.tablespace)}"
    method = [
        f"the advice shows no other partition in table space {a.tablespace}: ALTER TABLESPACE ... USING",
        "STOGROUP (online, asynchronous rebalance). The script first checks that the table space holds",
        "only this partition; when something else is in it the script stops before changing anything:",
        "unsupported here: review (partitions that the advice shows sharing a table space are scripted",
        "with detach / copy / attach instead).",
    ]
    limits = ["Not supported in pureScale (checked).", AUTHORITIES]
    s = _script(move, a, direction, forward, options, at, what, method, limits)
    _exclusive_check(s, a)
    _tablespace_steps(s, a.tablespace, a.source, a.target, options)
    return s.text()


def _script(
    move: Move,
    a: MoveTablespace | MoveDataPartition,
    direction: str,
    forward: Move,
    options: Options,
    at: datetime,
    what: str,
    method: list[str],
    limits: list[str],
) -> Db2Script:
    """The script with its header and the shared checks, for a table space re-pointed whole."""
    return start(
        move,
        direction,
        forward,
        options,
        at,
        what=what,
        source=source_text(a.source),
        destination=where_sg(a.target),
        method=method,
        limits=limits,
        operations=operations(a.tablespace, forward),
        backup=BACKUP_REBALANCE,
    )


def _tablespace_checks(s: Db2Script, ts: str, source: StorageGroup | None, target: StorageGroup) -> str:
    """Before anything changes: the table space there, in the planned storage group (or the target
    already), of a kind that can use one, no rebalance running. Returns the "still to move"
    predicate the later steps use."""
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
        transient=True,
    )
    return moving


def _tablespace_steps(
    s: Db2Script, ts: str, source: StorageGroup | None, target: StorageGroup, options: Options
) -> None:
    """The pre-checks, step 1 (the storage group), the room check, step 2 (re-point), step 3
    (rebalance off DMS containers), the post-check and the rebalance's progress."""
    lts, ltarget = db2_str(ts), db2_str(target.name)
    moving = _tablespace_checks(s, ts, source, target)
    ensure_group(s, target, "step 1")
    factor = 1 + options.headroom_pct / 100
    s.check(
        f"the paths of {target.name} have room for {ts} ({options.headroom_pct:g} % headroom; storage is striped over the paths)",
        "SYSIBM.SYSDUMMY1",
        f"not enough free space in {target.name}",
        where=(
            f"{moving} AND {room_sql(target.name)}"
            f" < (SELECT SUM(T.TBSP_USED_PAGES * T.TBSP_PAGE_SIZE) FROM TABLE(MON_GET_TABLESPACE({lts}, -1)) AS T) * {factor:.2f}"
        ),
        needs=group_exists(target),
    )
    move_sql = f"ALTER TABLESPACE {db2_ident(ts)} USING STOGROUP {db2_ident(target.name)}"
    convert_sql = f"ALTER TABLESPACE {db2_ident(ts)} MANAGED BY AUTOMATIC STORAGE USING STOGROUP {db2_ident(target.name)}"
    s.change(
        f"step 2: re-point {ts} at {target.name} (online; the rebalance runs in the background after the commit)",
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
        "END",
    )
    rebalance_sql = f"ALTER TABLESPACE {db2_ident(ts)} REBALANCE"
    s.change(
        f"step 3: after a DMS conversion, REBALANCE moves {ts} off its old (non automatic storage) containers",
        "BEGIN\n"
        f"  IF EXISTS (SELECT 1 FROM TABLE(MON_GET_CONTAINER({lts}, -1)) AS C WHERE COALESCE(C.DB_STORAGE_PATH_ID, -1) < 0)\n"
        f"     AND NOT EXISTS (SELECT 1 FROM TABLE(MON_GET_REBALANCE_STATUS({lts}, -2)) AS R) THEN\n"
        f"    {s.say(f'step 3: rebalancing {db2_ident(ts)} off its old containers')}\n"
        f"    EXECUTE IMMEDIATE {db2_str(rebalance_sql)};\n"
        "  ELSE\n"
        f"    {s.say('step 3: nothing to do: no containers outside the storage paths')}\n"
        "  END IF;\n"
        "END",
    )
    s.check(
        f"post-check: table space {ts} uses storage group {target.name}",
        "SYSCAT.TABLESPACES",
        f"post-check: {ts} is not in {target.name}",
        where=f"TBSPACE = {lts} AND COALESCE(SGNAME, '') <> {ltarget}",
        post=True,
    )
    s.window(
        "SELECT VARCHAR(R.TBSP_NAME, 30) AS TBSP_NAME, R.REBALANCER_MODE, R.REBALANCER_STATUS, "
        "R.REBALANCER_EXTENTS_REMAINING, R.REBALANCER_EXTENTS_PROCESSED, R.REBALANCER_START_TIME "
        f"FROM TABLE(MON_GET_REBALANCE_STATUS({lts}, -2)) AS R",
        "the rebalance progress (no rows: finished; the old containers are dropped when it is done); run it again to watch",
    )
    s.window(
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


def _watch(ts: str) -> str:
    return (
        "SELECT REBALANCER_STATUS, REBALANCER_EXTENTS_REMAINING, REBALANCER_EXTENTS_PROCESSED FROM "
        f"TABLE(MON_GET_REBALANCE_STATUS({db2_str(ts)}, -2)) AS R (no rows: finished)"
    )


def operations(ts: str, forward: Move) -> Operations:
    """What the on-call DBA plans around; the size from the recommendation."""
    size = forward.why.size_bytes
    return Operations(
        duration=(
            "the script itself takes seconds; the rebalance then runs in the background after it ends: "
            f"{duration_text(size, REBALANCE_MB_S, 'rebalance')}. Watch it with {_watch(ts)}"
        ),
        log_volume="small: the rebalance logs extent moves, not the rows; a DMS conversion logs its container changes",
        # soft invalidation: IBM Db2 10.1 docs on changing the storage group a table space uses
        # (https://www.ibm.com/support/knowledgecenter/en/SSEPGG_10.1.0/com.ibm.db2.luw.admin.dbobj.doc/doc/t0060303.html)
        blocking=(
            f"none for applications: {ts} stays readable and writable; the rebalance competes with them for I/O "
            "on both storage groups. Dynamic SQL compiled with the old storage group's attributes (overhead, "
            "read rate) is soft-invalidated and recompiled; static packages keep the old costs until rebound"
        ),
        backups=(
            "the script stops while a BACKUP of the database runs (the rebalance would move the extents the backup "
            "reads); run it outside the backup window, and take a new full database backup after the rebalance "
            "ends: the table space's containers have changed"
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
