"""DB2: move one data partition out of a shared table space (detach / copy / attach).

A table space that other partitions share cannot be re-pointed for one of them, and no single
statement moves one data partition to another table space (a partition alone in its table
space takes the table space route instead: db2_tablespace.render_partition_alone). The script
builds and checks everything it can before the DETACH, detaches, copies, attaches, and repairs
a failed copy or attach itself (issue #30, N1). Each step is a compound statement that looks at
the catalog first, so a second run (or a run after a stop) carries on where the last one ended
and says "already done" for the rest:

1. the target storage group, created if missing;
2. the target table space `<table space>_<tier>` on it, created only if missing, with the
   source's page size, extent size, type and buffer pool: every table space of a partitioned
   table must have the same page size, extent size, storage mechanism and type (IBM Db2 11.5
   docs, "Partitioned tables");
3. the copy table, empty: `CREATE TABLE <schema>.TW_…_COPY LIKE <table> INCLUDING COLUMN
   DEFAULTS IN <target>` (a non-partitioned table with the table's columns, as ATTACH wants its
   source: IBM Db2 docs, "Attaching data partitions"; a mismatch fails the ATTACH with SQL20408N
   or SQL20307N, "Creating tables like existing tables"), then the table's row compression,
   value compression and append mode, which LIKE does not copy;
   before anything else changes, checks that the copy can be attached (the same columns, types,
   lengths, nullability, code pages, defaults, hidden and compress attributes, in the same order,
   and the same table options, not partitioned, in the target table space), that the active
   log can hold the copy (SYSIBMADM.MON_TRANSACTION_LOG_UTILIZATION, and MAX_LOG's share of it
   for one transaction), and that the target paths have room for it uncompressed;
4. `ALTER TABLE … DETACH PARTITION p INTO <schema>.TW_…_DETACHED` (IBM Db2 11.5 docs, "ALTER
   TABLE" / "Detaching data partitions"), then a wait of up to DETACH_WAIT_SECONDS: the
   asynchronous partition detach task finishes the detach after the commit, and until then the
   detached table is TYPE 'L' in SYSCAT.TABLES and the partition STATUS 'L' (or 'D' while
   detached dependents wait, pre-checked) in SYSCAT.DATAPARTITIONS ("Asynchronous partition
   detach for data partitioned tables"; "Guidelines and restrictions on altering partitioned
   tables"). STATUS 'I' (asynchronous index cleanup of non-partitioned indexes) is not waited
   for: the detached table can be used "even before asynchronous index cleanup completes"
   ("Scenarios: Rolling in and rolling out partitioned table data"). The wait sleeps with
   DBMS_PIPE.RECEIVE_MESSAGE on a pipe nobody sends to (the documented timeout returns 1; the
   DBMS_PIPE module is in Db2 9.7 and later, DBMS_LOCK.SLEEP only in 11.5 Mod Pack 1 and later).
   The rows are copied only now: until the DETACH commits, the partition takes writes;
5. `INSERT INTO <copy> SELECT * FROM <detached>` (one logged statement: all rows or none; the
   documented alternatives are ADMIN_MOVE_TABLE or LOAD FROM CURSOR, which commit on their own and
   cannot run inside a compound statement);
6. `ALTER TABLE … ATTACH PARTITION p STARTING (low) … ENDING (high) … FROM <copy>` with the
   partition's own bounds and inclusive flags (checked against SYSCAT.DATAPARTITIONS before
   anything changes), only when the copy holds as many rows as the detached table;
   steps 5 and 6 run with stop-on-error off (Db2Script.tolerant), so that a failure there
   reaches step 7;
7. the repair: when the partition is not in the table (step 5 or 6 failed) and the detached
   table is there, the detached table is attached back with the original range: the rows are
   where they were, and the post-check below stops the script saying so;
8. `SET INTEGRITY FOR … ALLOW WRITE ACCESS IMMEDIATE CHECKED` (IBM Db2 11.5 docs, "Attaching data
   partitions"), after step 6 or step 7;
9. post-check: the partition is in the target table space (SYSCAT.DATAPARTITIONS.TBSPACEID) with
   an empty STATUS, and it holds as many rows as the detached table (COUNT(*) of the rows whose
   partitioning key is in its range, read from SYSCAT.DATAPARTITIONEXPRESSION and
   SYSCAT.DATAPARTITIONS); only then the detached table is dropped.

Before anything changes: no foreign key references the table (SYSCAT.REFERENCES), the key has
one column. The rollback is the same move in reverse (target table space back to the source
one); it first repairs a forward run that stopped after its DETACH (the forward's detached table
is attached back with the original range), and stops when the forward run is half done in a
state only the forward can finish. The ILM leading edge (db2_leading) checks that the new range
overlaps no partition; its rollback detaches the new partition only while no row has its key in
the range.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime

from migrations.db2_frame import (
    BACKUP_DETACH_ATTACH,
    ROUTINES,
    Db2Script,
    compound,
    create_tablespace_like,
    duration_text,
    ensure_group,
    group_exists,
    room_sql,
    source_text,
    start,
    where_sg,
)
from migrations.db2_ranges import (
    COUNT_DECLARE,
    RANGE_DECLARE,
    bound_sql,
    count_into,
    inclusive,
    range_where,
    references_check,
    single_key_check,
)
from migrations.header import Operations
from migrations.plan import Move, MoveDataPartition, Options, Unsupported
from migrations.quoting import MAX_NAME, db2_ident, db2_str

DETACH_WAIT_SECONDS = 600  # how long step 4 waits for the asynchronous partition detach task
DETACH_POLL_SECONDS = 10  # between two looks at the catalog
COPY_MB_S = (50, 150)  # a logged copy on ordinary arrays; varies widely
AUTHORITIES = (
    "Needs DBADM granted WITH DATAACCESS, the default (DETACH / ATTACH, CREATE TABLE, INSERT, DROP TABLE, "
    "SET INTEGRITY, the row counts), plus SYSCTRL or SYSADM when the target table space or storage group "
    "must be created (CREATE TABLESPACE; a new storage group), EXECUTE on the SYSIBMADM.DBMS_PIPE module "
    "(the wait after the DETACH; DATAACCESS includes it), SELECT on SYSIBMADM.MON_TRANSACTION_LOG_UTILIZATION "
    "and SYSIBMADM.DBCFG (the log check; PUBLIC in a non-restrictive database), "
    + ROUTINES.format(extra=", ADMIN_GET_TAB_INFO")
)
# the log the copy writes, as a multiple of its uncompressed data: its log records carry each row
# with a header of their own, and a failed INSERT writes its undo records into the same log
LOG_FACTOR = 2


def staging_names(a: MoveDataPartition) -> tuple[str, str]:
    """The detached table and its copy on the target: fixed per move, so a re-run finds them."""
    assert a.target_tablespace is not None
    digest = (
        hashlib.sha256(
            "|".join([a.schema, a.table, a.partition_name or "", a.target_tablespace]).encode("utf-8")
        )
        .hexdigest()[:12]
        .upper()
    )
    detached, copy = f"TW_{digest}_DETACHED", f"TW_{digest}_COPY"
    assert len(detached) <= MAX_NAME
    return detached, copy


def attach_sql(a: MoveDataPartition, source_table: str) -> str:
    assert a.partition_name is not None
    return (
        f"ALTER TABLE {db2_ident(a.schema)}.{db2_ident(a.table)} ATTACH PARTITION {db2_ident(a.partition_name)} "
        f"STARTING FROM ({bound_sql(a.range_low, low=True)}){inclusive(a.low_inclusive, a.range_low)} "
        f"ENDING AT ({bound_sql(a.range_high, low=False)}){inclusive(a.high_inclusive, a.range_high)} "
        f"FROM {db2_ident(a.schema)}.{db2_ident(source_table)}"
    )


class _Steps:
    """Step numbers in the order the steps are written (1, 2, 3 … without gaps)."""

    def __init__(self) -> None:
        self.number = 0

    def next(self) -> str:
        self.number += 1
        return f"step {self.number}"


def method_lines(a: MoveDataPartition, *, rollback: bool = False) -> list[str]:
    detached, copy = staging_names(a)
    table = f"{db2_ident(a.schema)}.{db2_ident(a.table)}"
    k = 3 if rollback else 0  # a rollback's steps 1-3 repair an interrupted forward run
    lines = [
        f"table space {a.tablespace} is shared with other partitions: detach / copy / attach (online for the",
        "other partitions; this partition's rows are invisible in the table from the DETACH until the ATTACH",
        "and SET INTEGRITY complete). Everything that can be built and checked comes before the DETACH:",
    ]
    if rollback:
        lines += [
            "  1-3. when the forward script stopped after its DETACH: its detached table attached back with the",
            "     original range, SET INTEGRITY, its copy table dropped (nothing to do otherwise)",
        ]
    lines += [
        f"  {1 + k}. storage group {db2_ident(a.target.name)}, created if missing",
        f"  {2 + k}. table space {db2_ident(a.target_tablespace or '')} on it, created if missing like the source",
        f"  {3 + k}. CREATE TABLE {db2_ident(a.schema)}.{db2_ident(copy)} LIKE {table} INCLUDING COLUMN DEFAULTS IN the target, empty,",
        "     with the table's compression and append mode; then checks: the copy can be attached (columns and",
        "     table options match), the active log holds the copy, the target paths hold it uncompressed",
        f"  {4 + k}. ALTER TABLE {table} DETACH PARTITION {db2_ident(a.partition_name or '')} INTO {db2_ident(a.schema)}.{db2_ident(detached)},",
        f"     then a wait of up to {DETACH_WAIT_SECONDS // 60} minutes for the asynchronous partition detach task to finish",
        f"  {5 + k}. INSERT INTO the copy SELECT * FROM the detached table (one logged statement)",
        f"  {6 + k}. ALTER TABLE ... ATTACH PARTITION with the same bounds FROM the copy, when it holds every row",
        f"  {7 + k}. repair: if step {5 + k} or {6 + k} failed, the detached table is attached back with the original range",
        f"  {8 + k}. SET INTEGRITY FOR {table} ALLOW WRITE ACCESS IMMEDIATE CHECKED",
        f"  {9 + k}. post-checks (partition in the target table space, STATUS empty, as many rows as the detached",
        "     table), then DROP the detached table",
        f"If the script stops after step {4 + k} some other way, run it again (it carries on)"
        + ("" if rollback else ", or run the rollback script (its step 1 attaches the detached table back)")
        + ", or re-attach by hand:",
        f"  {attach_sql(a, detached)}@",
        f"  SET INTEGRITY FOR {table} ALLOW WRITE ACCESS IMMEDIATE CHECKED@",
    ]
    return lines


def limits() -> list[str]:
    return [
        f"The copy is one logged INSERT: the active log must hold about {LOG_FACTOR}x the partition's uncompressed "
        "size (checked before the DETACH).",
        "Refused before anything changes: LOB, XML, LONG, identity or generated columns; dependent MQTs or "
        "staging tables; partitions being attached or detached; a copy table that does not match the table; a "
        "row-compressed table without statistics (RUNSTATS first: its uncompressed size is unknown).",
    ]


def render_detach_attach(
    move: Move, a: MoveDataPartition, direction: str, forward: Move, options: Options, at: datetime
) -> str:
    """A partition that shares its table space with others: detach, copy, attach. The rollback
    (`forward` is the move it undoes) repairs an interrupted forward run first."""
    table = f"{db2_ident(a.schema)}.{db2_ident(a.table)}"
    what = (
        f"data partition {a.partition_name} of {table}, from table space {db2_ident(a.tablespace)} "
        f"to {db2_ident(a.target_tablespace or '')}"
    )
    undo = (
        forward.action if direction == "rollback" and isinstance(forward.action, MoveDataPartition) else None
    )
    s = start(
        move,
        direction,
        forward,
        options,
        at,
        what=what,
        source=source_text(a.source),
        destination=where_sg(a.target),
        method=method_lines(a, rollback=undo is not None),
        limits=["Not supported in pureScale (checked).", AUTHORITIES, *limits()],
        operations=operations(forward),
        backup=BACKUP_DETACH_ATTACH,
    )
    steps(s, a, options, undo=undo)
    return s.text()


@dataclass(frozen=True)
class _Staging:
    """The names and catalog predicates every step of one detach / copy / attach uses."""

    partition: str
    target_ts: str
    ls: str
    lt: str
    lp: str
    src: str
    tgt: str
    detached: str
    copy: str
    ldet: str
    lcopy: str
    table: str
    q_det: str
    q_copy: str
    tsid: str
    part: str
    in_target: str
    moved: str
    listed: str

    def table_exists(self, name: str) -> str:
        return f"EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = {self.ls} AND TABNAME = {name})"

    def regular(self, name: str) -> str:
        """The table exists and is a regular table (TYPE 'T': a detached table is 'L' until the
        asynchronous partition detach task has finished)."""
        return f"EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = {self.ls} AND TABNAME = {name} AND TYPE = 'T')"


def _staging(a: MoveDataPartition) -> _Staging:
    if a.partition_name is None or a.target_tablespace is None:
        raise Unsupported(
            f"{a.schema}.{a.table}: detach / attach needs the partition's name and a target table space"
        )
    ls, lt, lp = db2_str(a.schema), db2_str(a.table), db2_str(a.partition_name)
    src, tgt = db2_str(a.tablespace), db2_str(a.target_tablespace)
    detached, copy = staging_names(a)
    ldet, lcopy = db2_str(detached), db2_str(copy)
    table = f"{db2_ident(a.schema)}.{db2_ident(a.table)}"
    q_det, q_copy = f"{db2_ident(a.schema)}.{db2_ident(detached)}", f"{db2_ident(a.schema)}.{db2_ident(copy)}"
    tsid = "(SELECT TBSPACEID FROM SYSCAT.TABLESPACES WHERE TBSPACE = {})"
    part = f"SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = {ls} AND TABNAME = {lt} AND DATAPARTITIONNAME = {lp}"
    in_target = f"EXISTS (SELECT 1 FROM {part} AND TBSPACEID = {tsid.format(tgt)} AND STATUS = '')"
    # attached from the copy already, SET INTEGRITY done or not
    moved = f"EXISTS (SELECT 1 FROM {part} AND TBSPACEID = {tsid.format(tgt)})"
    # the partition is in the table (or attaching); a detached one whose index cleanup runs (STATUS
    # 'I', TBSPACEID null) stays listed until the cleanup ends but no longer holds the range
    listed = f"EXISTS (SELECT 1 FROM {part} AND STATUS <> 'I')"
    return _Staging(
        a.partition_name,
        a.target_tablespace,
        ls,
        lt,
        lp,
        src,
        tgt,
        detached,
        copy,
        ldet,
        lcopy,
        table,
        q_det,
        q_copy,
        tsid,
        part,
        in_target,
        moved,
        listed,
    )


def steps(
    s: Db2Script, a: MoveDataPartition, options: Options, *, undo: MoveDataPartition | None = None
) -> None:
    """Append the pre-checks, steps and post-checks to `s`; `undo`: the forward move this script
    rolls back (its staging tables are repaired first)."""
    n = _staging(a)
    u = _staging(undo) if undo is not None and undo.route == "detach_attach" else None
    number = _Steps()
    _pre_checks(s, a, n, u)
    if u is not None:
        _repair_forward(s, a, n, u, number)
    ensure_group(s, a.target, number.next())
    create_tablespace_like(s, n.target_ts, a.tablespace, a.target.name, number.next())
    _copy_table(s, n, number.next())
    _target_checks(s, a, n, options)
    _detach(s, a, n, number.next())
    _copy_and_attach(s, a, n, number)
    _post_checks(s, a, n, number.next())


def _pre_checks(s: Db2Script, a: MoveDataPartition, n: _Staging, u: _Staging | None) -> None:
    """Before anything changes: the partition where planned with its planned range, nothing attaching,
    no dependents or columns the copy cannot carry, a matching target table space; for a rollback,
    a forward run that stopped where this script can repair it."""
    interrupted = "" if u is None else f" AND NOT {u.table_exists(u.ldet)}"
    s.check(
        f"partition {n.partition} of {a.schema}.{a.table} is in table space {a.tablespace} or {n.target_ts}, "
        "or detached by an earlier run" + ("" if u is None else " (of this script or of the forward script)"),
        "SYSIBM.SYSDUMMY1",
        "partition not where planned: advice out of date",
        where=(
            f"NOT EXISTS (SELECT 1 FROM {n.part} AND TBSPACEID IN ({n.tsid.format(n.src)}, {n.tsid.format(n.tgt)})) "
            f"AND NOT {n.table_exists(n.ldet)} AND NOT {n.table_exists(n.lcopy)}{interrupted}"
        ),
    )
    if u is not None:
        s.check(
            f"the forward script's detached table {u.detached}, if it is there, is a regular table (its asynchronous "
            "detach has finished): else run this script again in a few minutes",
            "SYSIBM.SYSDUMMY1",
            "forward detach still in progress: run again",
            where=f"{u.table_exists(u.ldet)} AND NOT {u.regular(u.ldet)}",
        )
        s.check(
            f"the forward script did not stop after attaching its copy: while its detached table {u.detached} is "
            "there and the partition is in the table, only the forward script can finish (its row check, then the "
            "drop): run the forward script again, then this one",
            "SYSIBM.SYSDUMMY1",
            "forward run unfinished: run it again first",
            where=f"{u.table_exists(u.ldet)} AND {u.listed}",
        )
    low_flag = (
        "" if a.low_inclusive is None else f" OR LOWINCLUSIVE <> {db2_str('Y' if a.low_inclusive else 'N')}"
    )
    high_flag = (
        ""
        if a.high_inclusive is None
        else f" OR HIGHINCLUSIVE <> {db2_str('Y' if a.high_inclusive else 'N')}"
    )
    s.check(
        f"partition {n.partition} has the range {bound_sql(a.range_low, low=True)} .. {bound_sql(a.range_high, low=False)} "
        "(the ATTACH recreates exactly this range)",
        "SYSCAT.DATAPARTITIONS",
        "partition range differs from the plan",
        where=(
            f"TABSCHEMA = {n.ls} AND TABNAME = {n.lt} AND DATAPARTITIONNAME = {n.lp} AND (LOWVALUE <> "
            f"{db2_str(bound_sql(a.range_low, low=True))} OR HIGHVALUE <> {db2_str(bound_sql(a.range_high, low=False))}"
            f"{low_flag}{high_flag})"
        ),
    )
    s.check(
        f"no other partition of {a.schema}.{a.table} is being attached or detached (SYSCAT.DATAPARTITIONS.STATUS)",
        "SYSCAT.DATAPARTITIONS",
        "a partition is attaching/detaching: finish it",
        where=f"TABSCHEMA = {n.ls} AND TABNAME = {n.lt} AND DATAPARTITIONNAME <> {n.lp} AND STATUS <> ''",
        transient=True,
    )
    s.check(
        f"no materialized query table (SYSCAT.TABLES.TYPE 'S') or staging table (PROPERTY character 2 'Y') "
        f"depends on {a.schema}.{a.table} (they would become detached dependents)",
        "SYSCAT.TABDEP AS D JOIN SYSCAT.TABLES AS T ON T.TABSCHEMA = D.TABSCHEMA AND T.TABNAME = D.TABNAME",
        "dependent MQT/staging table: unsupported, review",
        where=(
            f"D.BSCHEMA = {n.ls} AND D.BNAME = {n.lt} AND D.BTYPE = 'T' "
            "AND (T.TYPE = 'S' OR SUBSTR(T.PROPERTY, 2, 1) = 'Y')"
        ),
    )
    s.check(
        f"{a.schema}.{a.table} has no LOB, XML, LONG, identity or generated columns",
        "SYSCAT.COLUMNS",
        "LOB/XML/identity/generated column: unsupported",
        where=(
            f"TABSCHEMA = {n.ls} AND TABNAME = {n.lt} AND (TYPENAME IN ('BLOB', 'CLOB', 'DBCLOB', 'XML', "
            "'LONG VARCHAR', 'LONG VARGRAPHIC') OR IDENTITY = 'Y' OR GENERATED <> ' ')"
        ),
    )
    s.check(
        f"table space {n.target_ts}, if it exists, uses storage group {a.target.name} and matches "
        f"{a.tablespace} (page size, extent size, type)",
        "SYSCAT.TABLESPACES AS N JOIN SYSCAT.TABLESPACES AS O ON O.TBSPACE = " + n.src,
        f"{n.target_ts[:20]} does not match",
        where=(
            f"N.TBSPACE = {n.tgt} AND (COALESCE(N.SGNAME, '') <> {db2_str(a.target.name)} OR N.PAGESIZE <> O.PAGESIZE "
            "OR N.EXTENTSIZE <> O.EXTENTSIZE OR N.DATATYPE <> O.DATATYPE)"
        ),
    )
    references_check(s, a.schema, a.table)
    single_key_check(s, a.schema, a.table)


def _repair_forward(s: Db2Script, a: MoveDataPartition, n: _Staging, u: _Staging, number: _Steps) -> None:
    """The rollback's first steps: a forward run that stopped after its DETACH left the rows in its
    detached table (u) and the range missing from the table: attach that table back with the
    original range (the inverse move has the same bounds), SET INTEGRITY, and drop the forward's
    copy table, whose rows are a copy of the detached one's."""
    step = number.next()
    s.change(
        f"{step}: repair an interrupted forward run: its detached table {u.detached} back as partition "
        f"{n.partition} with the original range (nothing to do when the forward run did not stop after its DETACH)",
        "BEGIN\n"
        f"  IF {u.regular(u.ldet)} AND NOT {n.listed} THEN\n"
        f"    {s.say(f'{step}: the forward run stopped after its DETACH: attaching {db2_ident(u.detached)} back as partition {db2_ident(n.partition)}')}\n"
        f"    EXECUTE IMMEDIATE {db2_str(attach_sql(a, u.detached))};\n"
        "  ELSE\n"
        f"    {s.say(f'{step}: nothing to repair')}\n"
        "  END IF;\n"
        "END",
    )
    step = number.next()
    s.change(f"{step}: SET INTEGRITY after the repair (nothing to do without one)", _integrity(s, n, step))
    step = number.next()
    drop = f"DROP TABLE {u.q_copy}"
    s.change(
        f"{step}: drop the forward run's copy table {u.copy} if it is left (its rows are a copy of the partition's)",
        "BEGIN\n"
        f"  IF {u.table_exists(u.lcopy)} AND {n.listed} THEN\n"
        f"    {s.say(f'{step}: dropping the copy table of the forward run, {db2_ident(u.copy)}')}\n"
        f"    EXECUTE IMMEDIATE {db2_str(drop)};\n"
        "  ELSE\n"
        f"    {s.say(f'{step}: nothing to drop')}\n"
        "  END IF;\n"
        "END",
    )


def _integrity(s: Db2Script, n: _Staging, step: str) -> str:
    """SET INTEGRITY when the table is in set integrity pending state (SYSCAT.TABLES.STATUS 'C'),
    as an ATTACH leaves it."""
    integrity = f"SET INTEGRITY FOR {n.table} ALLOW WRITE ACCESS IMMEDIATE CHECKED"
    return (
        "BEGIN\n"
        f"  IF EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = {n.ls} AND TABNAME = {n.lt} AND STATUS = 'C') THEN\n"
        f"    {s.say(f'{step}: SET INTEGRITY for {n.table}')}\n"
        f"    EXECUTE IMMEDIATE {db2_str(integrity)};\n"
        "  ELSE\n"
        f"    {s.say(f'{step}: already done: the table is not in set integrity pending state')}\n"
        "  END IF;\n"
        "END"
    )


def _copy_table(s: Db2Script, n: _Staging, step: str) -> None:
    """The copy, created empty in the target before anything is detached, like the table and with
    the table options LIKE leaves out (SYSCAT.TABLES ROWCOMPMODE 'S' static / 'A' adaptive row
    compression, COMPRESSION 'V' / 'B' value compression, APPEND_MODE 'Y'), read at run time."""
    create = f"CREATE TABLE {n.q_copy} LIKE {n.table} INCLUDING COLUMN DEFAULTS IN {db2_ident(n.target_ts)}"
    s.change(
        f"{step}: the copy table {n.copy} in {n.target_ts}, empty, created only if missing, like {n.table} with its "
        "compression and append mode",
        compound(
            [
                "DECLARE v_comp CHAR(1);",
                "DECLARE v_mode CHAR(1);",
                "DECLARE v_append CHAR(1);",
                f"IF {n.moved} THEN",
                f"  {s.say(f'{step}: already done: partition {db2_ident(n.partition)} is in {db2_ident(n.target_ts)}')}",
                f"ELSEIF {n.table_exists(n.lcopy)} THEN",
                f"  {s.say(f'{step}: already done: {db2_ident(n.copy)} exists')}",
                "ELSE",
                f"  {s.say(f'{step}: creating {db2_ident(n.copy)} like {n.table} in {db2_ident(n.target_ts)}')}",
                f"  EXECUTE IMMEDIATE {db2_str(create)};",
                "  SELECT COMPRESSION, ROWCOMPMODE, APPEND_MODE INTO v_comp, v_mode, v_append FROM SYSCAT.TABLES "
                f"WHERE TABSCHEMA = {n.ls} AND TABNAME = {n.lt};",
                "  IF v_mode IN ('S', 'A') THEN",
                f"    EXECUTE IMMEDIATE {db2_str(f'ALTER TABLE {n.q_copy} COMPRESS YES ')} || "
                "CASE WHEN v_mode = 'A' THEN 'ADAPTIVE' ELSE 'STATIC' END;",
                "  END IF;",
                "  IF v_comp IN ('V', 'B') THEN",
                f"    EXECUTE IMMEDIATE {db2_str(f'ALTER TABLE {n.q_copy} ACTIVATE VALUE COMPRESSION')};",
                "  END IF;",
                "  IF v_append = 'Y' THEN",
                f"    EXECUTE IMMEDIATE {db2_str(f'ALTER TABLE {n.q_copy} APPEND ON')};",
                "  END IF;",
                "END IF;",
            ]
        ),
    )


# the columns ATTACH compares between the copy and the table (SYSCAT.COLUMNS), in column order
_COLUMNS = "COLNO, COLNAME, TYPESCHEMA, TYPENAME, LENGTH, SCALE, NULLS, CODEPAGE, COALESCE(\"DEFAULT\", ''), HIDDEN, COMPRESS"


def _sizes(n: _Staging, columns: str) -> str:
    """KB of the partition's (or, after a stop, the detached table's) objects from
    SYSPROC.ADMIN_GET_TAB_INFO (physical sizes; IBM Db2 docs, "ADMINTABINFO administrative view and
    ADMIN_GET_TAB_INFO table function"; FPAGES is -1 without RUNSTATS)."""
    return (
        f"((SELECT COALESCE(SUM({columns}), 0) FROM TABLE(SYSPROC.ADMIN_GET_TAB_INFO({n.ls}, {n.lt})) AS I "
        f"WHERE I.DATA_PARTITION_ID = (SELECT DATAPARTITIONID FROM {n.part} AND STATUS <> 'I')) + "
        f"(SELECT COALESCE(SUM({columns}), 0) FROM TABLE(SYSPROC.ADMIN_GET_TAB_INFO({n.ls}, {n.ldet})) AS I))"
    )


def _uncompressed(n: _Staging) -> str:
    """How many times larger the data is without row compression: 100 / (100 - PCTPAGESSAVED) for
    a row-compressed table (SYSCAT.TABLES ROWCOMPMODE 'S' or 'A'; PCTPAGESSAVED, the share of pages
    compression saves, from RUNSTATS), else 1."""
    return (
        "(SELECT CASE WHEN T.ROWCOMPMODE IN ('S', 'A') AND T.PCTPAGESSAVED BETWEEN 0 AND 99 "
        "THEN 100.0 / (100 - T.PCTPAGESSAVED) ELSE 1 END FROM SYSCAT.TABLES AS T "
        f"WHERE T.TABSCHEMA = {n.ls} AND T.TABNAME = {n.lt})"
    )


def _target_checks(s: Db2Script, a: MoveDataPartition, n: _Staging, options: Options) -> None:
    """After step 3, before the DETACH: the copy can be attached, the log holds the copy, the
    target paths hold it uncompressed."""
    mine = f"TABSCHEMA = {n.ls} AND TABNAME = {n.lt}"
    theirs = f"TABSCHEMA = {n.ls} AND TABNAME = {n.lcopy}"
    cols = f"SELECT {_COLUMNS} FROM SYSCAT.COLUMNS WHERE {{}}"
    differs = (
        f"EXISTS ({cols.format(mine)} EXCEPT {cols.format(theirs)}) OR EXISTS ({cols.format(theirs)} EXCEPT {cols.format(mine)}) "
        "OR EXISTS (SELECT 1 FROM SYSCAT.TABLES AS A JOIN SYSCAT.TABLES AS B ON B.TABSCHEMA = A.TABSCHEMA "
        f"WHERE A.TABSCHEMA = {n.ls} AND A.TABNAME = {n.lt} AND B.TABNAME = {n.lcopy} AND (A.COMPRESSION <> B.COMPRESSION "
        f"OR A.ROWCOMPMODE <> B.ROWCOMPMODE OR A.APPEND_MODE <> B.APPEND_MODE OR COALESCE(B.TBSPACE, '') <> {n.tgt})) "
        f"OR EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONEXPRESSION WHERE {theirs})"
    )
    copy_needed = f"NOT {n.moved} AND {n.table_exists(n.lcopy)}"
    s.check(
        f"the copy table {n.copy} can be attached as partition {n.partition}: the same columns as {a.schema}.{a.table} "
        "in the same order (SYSCAT.COLUMNS: name, type, length, scale, nullability, code page, default, hidden, "
        "compress), the same row compression, value compression and append mode (SYSCAT.TABLES), not partitioned, "
        f"in table space {n.target_ts}. Else ATTACH would fail after the DETACH (SQL20408N / SQL20307N): nothing "
        f"was detached; drop {n.copy} and review",
        "SYSIBM.SYSDUMMY1",
        "the copy table cannot be attached: review",
        where=f"{copy_needed} AND ({differs})",
        needs=(n.table_exists(n.lcopy), f"the copy table {n.copy} is created in the window run (step 3)"),
    )
    s.check(
        f"{a.schema}.{a.table}, if row-compressed, has statistics (SYSCAT.TABLES.PCTPAGESSAVED >= 0): the log and "
        "room checks need its uncompressed size (RUNSTATS ON TABLE first)",
        "SYSCAT.TABLES",
        "compressed table without statistics: RUNSTATS",
        where=f"{mine} AND ROWCOMPMODE IN ('S', 'A') AND PCTPAGESSAVED < 0 AND NOT {n.moved}",
    )
    factor = 1 + options.headroom_pct / 100
    data = _sizes(n, "I.DATA_OBJECT_P_SIZE")
    index = _sizes(n, "I.INDEX_OBJECT_P_SIZE")
    rest = _sizes(
        n, "I.INDEX_OBJECT_P_SIZE + I.LONG_OBJECT_P_SIZE + I.LOB_OBJECT_P_SIZE + I.XML_OBJECT_P_SIZE"
    )
    log_kb = f"({LOG_FACTOR} * {data} * {_uncompressed(n)} + {index}) * {factor:.2f}"
    cfg = "(SELECT MAX(BIGINT(VALUE)) FROM SYSIBMADM.DBCFG WHERE NAME = '{}')"
    # MAX_LOG: the percentage of the primary log space one transaction may use (0: no limit);
    # LOGFILSIZ is in 4 KB pages (IBM Db2 docs, "max_log", "logfilsiz" configuration parameters)
    per_transaction = (
        f"{cfg.format('logprimary')} * {cfg.format('logfilsiz')} * 4 * {cfg.format('max_log')} / 100"
    )
    available = "(SELECT MIN(L.TOTAL_LOG_AVAILABLE_KB) FROM SYSIBMADM.MON_TRANSACTION_LOG_UTILIZATION AS L)"
    s.check(
        f"the active log can hold the copy: {LOG_FACTOR}x the partition's uncompressed data plus its indexes "
        f"({options.headroom_pct:g} % headroom) is no more than the log space available "
        "(SYSIBMADM.MON_TRANSACTION_LOG_UTILIZATION.TOTAL_LOG_AVAILABLE_KB, null with infinite logging) and no more "
        "than MAX_LOG's share of the primary log (LOGPRIMARY x LOGFILSIZ), the most one transaction may use",
        "SYSIBM.SYSDUMMY1",
        "the active log cannot hold the copy",
        where=(
            f"NOT {n.moved} AND (COALESCE({available}, {log_kb}) < {log_kb} "
            f"OR ({cfg.format('max_log')} > 0 AND {per_transaction} < {log_kb}))"
        ),
    )
    s.check(
        f"the paths of {a.target.name} have room for the copy uncompressed ({options.headroom_pct:g} % headroom; "
        "storage is striped over the paths; sizes from ADMIN_GET_TAB_INFO: data, index, long, LOB and XML objects, "
        "the data times 100 / (100 - PCTPAGESSAVED) when the table is row-compressed)",
        "SYSIBM.SYSDUMMY1",
        f"not enough free space in {a.target.name}",
        where=(
            f"NOT {n.in_target} AND {room_sql(a.target.name)} < ({data} * {_uncompressed(n)} + {rest}) * 1024 * {factor:.2f}"
        ),
        needs=group_exists(a.target),
    )


def _detach(s: Db2Script, a: MoveDataPartition, n: _Staging, step: str) -> None:
    """Step 4: the DETACH, and the wait for the asynchronous detach task."""
    detach = f"ALTER TABLE {n.table} DETACH PARTITION {db2_ident(n.partition)} INTO {n.q_det}"
    s.change(
        f"{step}: detach partition {n.partition} into {n.detached} (skipped when already moved or detached)",
        "BEGIN\n"
        f"  IF {n.in_target} THEN\n"
        f"    {s.say(f'{step}: already done: partition {db2_ident(n.partition)} is in {db2_ident(n.target_ts)}; nothing to do')}\n"
        f"  ELSEIF EXISTS (SELECT 1 FROM {n.part} AND TBSPACEID = {n.tsid.format(n.src)} AND STATUS = '') THEN\n"
        f"    {s.say(f'{step}: detaching partition {db2_ident(n.partition)}')}\n"
        f"    EXECUTE IMMEDIATE {db2_str(detach)};\n"
        "  ELSE\n"
        f"    {s.say(f'{step}: already done: the partition is detached or attached from the copy')}\n"
        "  END IF;\n"
        "END",
    )
    pending = (
        f"EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = {n.ls} AND TABNAME = {n.ldet} AND TYPE <> 'T') "
        f"OR EXISTS (SELECT 1 FROM {n.part} AND STATUS IN ('D', 'L'))"
    )
    finished = s.register(
        f"the detach of {n.partition} has finished within {DETACH_WAIT_SECONDS // 60} minutes: the detached "
        f"table {n.detached} is a regular table (SYSCAT.TABLES.TYPE 'T', not 'L') and the partition is no longer "
        "listed as detaching (SYSCAT.DATAPARTITIONS.STATUS 'D' or 'L'; 'I', index cleanup, is not waited for). "
        f"Else: detach still in progress: run the script again; the rows stay in {a.schema}.{n.detached} until it "
        "finishes",
        "detach still in progress: run again",
        window_only=True,
    )
    pipe = db2_str(f"TIERWISE_WAIT_{n.detached}")
    s.window(
        compound(
            [
                "DECLARE v_waited INTEGER DEFAULT 0;",
                "DECLARE v_status INTEGER;",
                f"WHILE v_waited < {DETACH_WAIT_SECONDS} AND ({pending}) DO",
                f"  SET v_status = DBMS_PIPE.RECEIVE_MESSAGE({pipe}, {DETACH_POLL_SECONDS});",
                f"  SET v_waited = v_waited + {DETACH_POLL_SECONDS};",
                "END WHILE;",
                f"IF {pending} THEN",
                f"  {s.say(f'detach still in progress: run the script again; the rows stay in {db2_ident(a.schema)}.{db2_ident(n.detached)} until it finishes')}",
                f"  {s.signal(finished)}",
                "END IF;",
            ]
        ),
        f"{step}: wait up to {DETACH_WAIT_SECONDS // 60} minutes for the asynchronous partition detach task "
        f"(checked every {DETACH_POLL_SECONDS} seconds; DBMS_PIPE.RECEIVE_MESSAGE on a pipe nobody sends to is the sleep)",
        s.checks[-1],
    )


def _copy_and_attach(s: Db2Script, a: MoveDataPartition, n: _Staging, number: _Steps) -> None:
    """Steps 5 to 8: copy the rows into the copy table, ATTACH it when it holds every row (stop on
    error off: a failure there reaches the repair), the repair, SET INTEGRITY."""
    insert = f"INSERT INTO {n.q_copy} SELECT * FROM {n.q_det}"
    delete = f"DELETE FROM {n.q_copy}"
    copy_step, attach_step = number.next(), number.next()
    counts = [
        *count_into("v_rows", db2_str(f"SELECT COUNT_BIG(*) FROM {n.q_copy}")),
        *count_into("v_other", db2_str(f"SELECT COUNT_BIG(*) FROM {n.q_det}")),
    ]
    s.tolerant(
        f"{copy_step} and {attach_step} with stop-on-error off: if either fails, the CLP carries on to the repair "
        f"(step {number.number + 1}), which puts the original range back",
        [
            (
                f"{copy_step}: copy the detached rows into {n.copy} in {n.target_ts} (again from the start after a stop)",
                compound(
                    [
                        f"IF {n.regular(n.ldet)} AND {n.table_exists(n.lcopy)} AND NOT {n.listed} THEN",
                        f"  {s.say(f'{copy_step}: copying the rows into {db2_ident(n.copy)}')}",
                        f"  EXECUTE IMMEDIATE {db2_str(delete)};",
                        f"  EXECUTE IMMEDIATE {db2_str(insert)};",
                        "ELSE",
                        f"  {s.say(f'{copy_step}: nothing to copy')}",
                        "END IF;",
                    ]
                ),
            ),
            (
                f"{attach_step}: attach {n.copy} as partition {n.partition} with its original range, when it holds "
                f"as many rows as {n.detached}",
                compound(
                    [
                        *COUNT_DECLARE,
                        f"IF {n.regular(n.ldet)} AND {n.table_exists(n.lcopy)} AND NOT {n.listed} THEN",
                        *[f"  {line}" for line in counts],
                        "  IF v_rows = v_other THEN",
                        f"    {s.say(f'{attach_step}: attaching partition {db2_ident(n.partition)} from {db2_ident(n.copy)}')}",
                        f"    EXECUTE IMMEDIATE {db2_str(attach_sql(a, n.copy))};",
                        "  ELSE",
                        f"    {s.say(f'{attach_step}: not attached: {db2_ident(n.copy)} does not hold every row of {db2_ident(n.detached)}')}",
                        "  END IF;",
                        "ELSE",
                        f"  {s.say(f'{attach_step}: nothing to attach')}",
                        "END IF;",
                    ]
                ),
            ),
        ],
    )
    repair = number.next()
    s.change(
        f"{repair}: repair: when the partition is not in the table (step {copy_step.split()[1]} or "
        f"{attach_step.split()[1]} failed), attach {n.detached} back with the original range: the rows are where "
        "they were, and the post-check below stops the script",
        "BEGIN\n"
        f"  IF {n.regular(n.ldet)} AND NOT {n.listed} THEN\n"
        f"    {s.say(f'{repair}: the copy or its attach failed (see above): attaching {db2_ident(n.detached)} back as partition {db2_ident(n.partition)}; nothing is lost')}\n"
        f"    EXECUTE IMMEDIATE {db2_str(attach_sql(a, n.detached))};\n"
        "  ELSE\n"
        f"    {s.say(f'{repair}: nothing to repair')}\n"
        "  END IF;\n"
        "END",
    )
    integrity = number.next()
    s.change(
        f"{integrity}: SET INTEGRITY for {a.schema}.{a.table} (validates the attached range, maintains indexes)",
        _integrity(s, n, integrity),
    )


def _post_checks(s: Db2Script, a: MoveDataPartition, n: _Staging, step: str) -> None:
    """The partition in the target with every row, then the last step drops the detached table."""
    s.check(
        f"post-check: partition {n.partition} is in table space {n.target_ts} (SYSCAT.DATAPARTITIONS.TBSPACEID) "
        "with an empty STATUS (else: when the repair step attached the detached table back, nothing is lost: read "
        "the messages above, fix the cause, run the script again)",
        "SYSIBM.SYSDUMMY1",
        f"post-check: not in {n.target_ts[:20]}",
        where=f"NOT {n.in_target}",
        post=True,
    )
    same = s.register(
        f"before the drop: the attached partition {n.partition} holds as many rows as the detached table "
        f"{n.detached} (rows with the partitioning key in the partition's range; else {n.detached} is kept)",
        "row counts differ: detached table kept",
        window_only=True,
    )
    s.window(
        compound(
            [
                *RANGE_DECLARE,
                f"IF {n.table_exists(n.ldet)} AND {n.in_target} THEN",
                *[f"  {line}" for line in range_where(n.ls, n.lt, f"{n.part} AND STATUS = ''")],
                *[
                    f"  {line}"
                    for line in count_into(
                        "v_rows", f"{db2_str(f'SELECT COUNT_BIG(*) FROM {n.table} WHERE ')} || v_where"
                    )
                ],
                *[
                    f"  {line}"
                    for line in count_into("v_other", db2_str(f"SELECT COUNT_BIG(*) FROM {n.q_det}"))
                ],
                "  IF v_rows <> v_other THEN",
                f"    {s.signal(same)}",
                "  END IF;",
                "END IF;",
            ]
        ),
        s.checks[-1],
    )
    drop = f"DROP TABLE {n.q_det}"
    s.change(
        f"{step}: drop the detached table {n.detached} (its rows are in the attached partition now)",
        "BEGIN\n"
        f"  IF {n.table_exists(n.ldet)} AND {n.in_target} THEN\n"
        f"    {s.say(f'{step}: dropping {db2_ident(n.detached)}')}\n"
        f"    EXECUTE IMMEDIATE {db2_str(drop)};\n"
        "  ELSE\n"
        f"    {s.say(f'{step}: already done: no detached table left')}\n"
        "  END IF;\n"
        "END",
    )
    s.window(
        "BEGIN\n"
        f"  {s.say(f'finished: partition {db2_ident(n.partition)} of {n.table} is in {db2_ident(n.target_ts)}')}\n"
        "END"
    )


def operations(forward: Move) -> Operations:
    """What the on-call DBA plans around; the size from the recommendation."""
    size = forward.why.size_bytes
    return Operations(
        duration=(
            "the asynchronous detach usually ends within seconds to a few minutes once no query holds the "
            f"partition (the script waits up to {DETACH_WAIT_SECONDS // 60} min), then "
            f"{duration_text(size, COPY_MB_S, 'one logged INSERT ... SELECT')}, then SET INTEGRITY (index "
            "maintenance of the attached rows, about as long again with non-partitioned indexes)"
        ),
        log_volume=(
            f"about the partition's size ({_gb(size)}) in one transaction; the script checks before the DETACH "
            f"that the active log has {LOG_FACTOR}x its uncompressed size free (MON_TRANSACTION_LOG_UTILIZATION, "
            "MAX_LOG), since a full log fails the INSERT with SQL0964C"
        ),
        blocking=(
            "DETACH waits for queries that hold locks on the partition (dynamic UR queries excepted; at most the "
            "lock timeout, 60 s) and invalidates static packages on the table; an asynchronous task then finishes "
            "the detach (the script waits for it). The partition's rows are invisible in the table from the DETACH "
            "until the ATTACH and SET INTEGRITY complete, that is for the whole Duration above (longer if the script "
            "stops and is run again later; meanwhile they are in the detached table); the other partitions stay "
            "readable and writable (SET INTEGRITY ... ALLOW WRITE ACCESS)"
        ),
        backups=(
            "the script stops before any change while a BACKUP of the database runs (run it again afterwards); keep it out of the backup window (the copy's log volume goes into the next online backup's log "
            "range); take a new full database backup afterwards, when a table space was created"
        ),
        abort=(
            "interrupt the CLP (Ctrl-C) or FORCE APPLICATION: the running statement rolls back; the script is "
            "safe to run again, every step checks first"
        ),
        recover=(
            "a failed copy or attach is repaired by the script itself (the detached table is attached back with "
            "the original range, nothing is lost) and the script stops; otherwise run it again: it carries on "
            "from the step it stopped at; or run the rollback script, whose step 1 attaches the detached table "
            "back (the detached table keeps every row until the last step)"
        ),
    )


def _gb(size: int | None) -> str:
    return "unknown" if size is None else f"{size / 1024**3:,.1f} GB"
