"""DB2: move one data partition out of a shared table space (detach / copy / attach).

A table space that other partitions share cannot be re-pointed for one of them, and no single
statement moves one data partition to another table space. The script does it in steps, each a
compound statement that looks at the catalog first, so a second run (or a run after a stop)
carries on where the last one ended and says "already done" for the rest:

1. the target table space `<table space>_<tier>` on the target storage group, created only if
   missing, with the source's page size, extent size, type and buffer pool: every table space
   of a partitioned table must have the same page size, extent size, storage mechanism and
   type (IBM Db2 11.5 docs, "Partitioned tables");
2. `ALTER TABLE … DETACH PARTITION p INTO <schema>.TW_…_DETACHED` (IBM Db2 11.5 docs, "ALTER
   TABLE" / "Detaching data partitions"), then a wait of up to DETACH_WAIT_SECONDS: the
   asynchronous partition detach task finishes the detach after the commit, and until then the
   detached table is TYPE 'L' in SYSCAT.TABLES and the partition STATUS 'L' (or 'D' while
   detached dependents wait, pre-checked) in SYSCAT.DATAPARTITIONS ("Asynchronous partition
   detach for data partitioned tables"; "Guidelines and restrictions on altering partitioned
   tables"). STATUS 'I' (asynchronous index cleanup of non-partitioned indexes) is not waited
   for: the detached table can be used "even before asynchronous index cleanup completes"
   ("Scenarios: Rolling in and rolling out partitioned table data"). The wait sleeps with
   DBMS_PIPE.RECEIVE_MESSAGE on a pipe nobody sends to (the documented timeout returns 1; the
   DBMS_PIPE module is in Db2 9.7 and later, DBMS_LOCK.SLEEP only in 11.5 Mod Pack 1 and later);
3. `CREATE TABLE <schema>.TW_…_COPY LIKE <detached> IN <target>` and
   `INSERT INTO … SELECT * FROM <detached>` (one logged statement: all rows or none; the
   documented alternatives are ADMIN_MOVE_TABLE or LOAD FROM CURSOR, which commit on their
   own and cannot run inside a compound statement);
4. `ALTER TABLE … ATTACH PARTITION p STARTING (low) … ENDING (high) … FROM <copy>` with the
   partition's own bounds and inclusive flags, checked against SYSCAT.DATAPARTITIONS
   (LOWVALUE, HIGHVALUE, LOWINCLUSIVE, HIGHINCLUSIVE) before anything changes;
5. `SET INTEGRITY FOR … ALLOW WRITE ACCESS IMMEDIATE CHECKED` (IBM Db2 11.5 docs, "Attaching
   data partitions");
6. post-check: the partition is in the target table space (SYSCAT.DATAPARTITIONS.TBSPACEID)
   with an empty STATUS, and it holds as many rows as the detached table (COUNT(*) of the rows
   whose partitioning key is in its range, read from SYSCAT.DATAPARTITIONEXPRESSION and
   SYSCAT.DATAPARTITIONS); only then the detached table is dropped.

Before anything changes: no foreign key references the table (SYSCAT.REFERENCES), the key has
one column, and the target paths have room for the partition's physical size
(SYSPROC.ADMIN_GET_TAB_INFO, which needs no RUNSTATS, unlike FPAGES). The ILM leading edge
(db2_leading) checks that the new range overlaps no partition; its rollback detaches the new
partition only while no row has its key in the range (else inserts into that range would fail
with SQL0327N once the partition is gone).

The rollback is the same move in reverse (target table space back to the source one).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime

from migrations.db2_frame import (
    ROUTINES,
    Db2Script,
    compound,
    create_tablespace_like,
    duration_text,
    ensure_group,
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

DETACH_WAIT_SECONDS = 600  # how long step 3 waits for the asynchronous partition detach task
DETACH_POLL_SECONDS = 10  # between two looks at the catalog
COPY_MB_S = (50, 150)  # a logged copy on ordinary arrays; varies widely
AUTHORITIES = (
    "Needs DBADM granted WITH DATAACCESS, the default (DETACH / ATTACH, CREATE TABLE, INSERT, DROP TABLE, "
    "SET INTEGRITY, the row counts), plus SYSCTRL or SYSADM when the target table space or storage group "
    "must be created (CREATE TABLESPACE; a new storage group), EXECUTE on the SYSIBMADM.DBMS_PIPE module "
    "(the wait after the DETACH; DATAACCESS includes it), " + ROUTINES.format(extra=", ADMIN_GET_TAB_INFO")
)


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


def method_lines(a: MoveDataPartition) -> list[str]:
    detached, copy = staging_names(a)
    table = f"{db2_ident(a.schema)}.{db2_ident(a.table)}"
    return [
        f"table space {a.tablespace} is shared with other partitions: detach / copy / attach (online for the",
        "other partitions; this partition's rows are invisible in the table from the DETACH until the ATTACH",
        "and SET INTEGRITY complete):",
        f"  1. table space {db2_ident(a.target_tablespace or '')} on the target storage group, created if missing like the source",
        f"  2. ALTER TABLE {table} DETACH PARTITION {db2_ident(a.partition_name or '')} INTO {db2_ident(a.schema)}.{db2_ident(detached)},",
        f"     then a wait of up to {DETACH_WAIT_SECONDS // 60} minutes for the asynchronous partition detach task to finish",
        f"  3. CREATE TABLE {db2_ident(a.schema)}.{db2_ident(copy)} LIKE the detached table IN the target; INSERT ... SELECT *",
        "  4. ALTER TABLE ... ATTACH PARTITION with the same bounds FROM the copy",
        f"  5. SET INTEGRITY FOR {table} ALLOW WRITE ACCESS IMMEDIATE CHECKED",
        "  6. post-check (partition in the target table space, STATUS empty), then DROP the detached table",
        "If the script stops after step 2 and you want the partition back as it was, re-attach the",
        "detached table (it still holds every row):",
        f"  {attach_sql(a, detached)}@",
        f"  SET INTEGRITY FOR {table} ALLOW WRITE ACCESS IMMEDIATE CHECKED@",
    ]


def limits() -> list[str]:
    return [
        "The copy is one logged INSERT: the active log must hold the partition's size.",
        "Refused before anything changes: LOB, XML, LONG, identity or generated columns; dependent MQTs or "
        "staging tables; partitions being attached or detached. CREATE TABLE ... LIKE copies the columns, "
        "not compression or other table options: if ATTACH reports SQL20408N, re-attach as shown above.",
    ]


def render_detach_attach(
    move: Move, a: MoveDataPartition, direction: str, forward: Move, options: Options, at: datetime
) -> str:
    """A partition that shares its table space with others: detach, copy, attach."""
    table = f"{db2_ident(a.schema)}.{db2_ident(a.table)}"
    what = (
        f"data partition {a.partition_name} of {table}, from table space {db2_ident(a.tablespace)} "
        f"to {db2_ident(a.target_tablespace or '')}"
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
        method=method_lines(a),
        limits=["Not supported in pureScale (checked).", AUTHORITIES, *limits()],
        operations=operations(forward),
    )
    steps(s, a, options)
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
    listed: str

    def table_exists(self, name: str) -> str:
        return f"EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = {self.ls} AND TABNAME = {name})"


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
        listed,
    )


def steps(s: Db2Script, a: MoveDataPartition, options: Options) -> None:
    """Append the pre-checks, steps and post-checks to `s`."""
    n = _staging(a)
    _pre_checks(s, a, n)
    ensure_group(s, a.target, "step 1")
    _room_check(s, a, n, options)
    _detach(s, a, n)
    _copy_and_attach(s, a, n)
    _post_checks(s, a, n)


def _pre_checks(s: Db2Script, a: MoveDataPartition, n: _Staging) -> None:
    """Before anything changes: the partition where planned with its planned range, nothing attaching,
    no dependents or columns the copy cannot carry, a matching target table space."""
    s.check(
        f"partition {n.partition} of {a.schema}.{a.table} is in table space {a.tablespace} or {n.target_ts}, "
        "or detached by an earlier run",
        "SYSIBM.SYSDUMMY1",
        "partition not where planned: advice out of date",
        where=(
            f"NOT EXISTS (SELECT 1 FROM {n.part} AND TBSPACEID IN ({n.tsid.format(n.src)}, {n.tsid.format(n.tgt)})) "
            f"AND NOT {n.table_exists(n.ldet)} AND NOT {n.table_exists(n.lcopy)}"
        ),
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


def _room_check(s: Db2Script, a: MoveDataPartition, n: _Staging, options: Options) -> None:
    """The target storage group's paths hold the partition (or the detached table after a stop)."""
    factor = 1 + options.headroom_pct / 100
    # sizes in KB from SYSPROC.ADMIN_GET_TAB_INFO (physical data, index, long, LOB and XML objects of
    # the data partition, or of the detached table after a stop): IBM Db2 docs, "ADMINTABINFO
    # administrative view and ADMIN_GET_TAB_INFO table function"; FPAGES is -1 without RUNSTATS
    sizes = "I.DATA_OBJECT_P_SIZE + I.INDEX_OBJECT_P_SIZE + I.LONG_OBJECT_P_SIZE + I.LOB_OBJECT_P_SIZE + I.XML_OBJECT_P_SIZE"
    part_kb = (
        f"(SELECT COALESCE(SUM({sizes}), 0) FROM TABLE(SYSPROC.ADMIN_GET_TAB_INFO({n.ls}, {n.lt})) AS I "
        f"WHERE I.DATA_PARTITION_ID = (SELECT DATAPARTITIONID FROM {n.part} AND STATUS <> 'I'))"
    )
    detached_kb = (
        f"(SELECT COALESCE(SUM({sizes}), 0) FROM TABLE(SYSPROC.ADMIN_GET_TAB_INFO({n.ls}, {n.ldet})) AS I)"
    )
    s.check(
        f"the paths of {a.target.name} have room for the partition ({options.headroom_pct:g} % headroom; storage is "
        "striped over the paths; size from ADMIN_GET_TAB_INFO: data, index, long, LOB and XML objects)",
        "SYSIBM.SYSDUMMY1",
        f"not enough free space in {a.target.name}",
        where=(
            f"NOT {n.in_target} AND {room_sql(a.target.name)} < ({part_kb} + {detached_kb}) * 1024 * {factor:.2f}"
        ),
    )


def _detach(s: Db2Script, a: MoveDataPartition, n: _Staging) -> None:
    """Steps 2 and 3: the target table space, the DETACH, and the wait for the asynchronous detach task."""
    create_tablespace_like(s, n.target_ts, a.tablespace, a.target.name, "step 2")
    detach = f"ALTER TABLE {n.table} DETACH PARTITION {db2_ident(n.partition)} INTO {n.q_det}"
    s.comment(
        f"step 3: detach partition {n.partition} into {n.detached} (skipped when already moved or detached)"
    )
    s.statement(
        "BEGIN\n"
        f"  IF {n.in_target} THEN\n"
        f"    {s.say(f'already done: partition {db2_ident(n.partition)} is in {db2_ident(n.target_ts)}; nothing to do')}\n"
        f"  ELSEIF EXISTS (SELECT 1 FROM {n.part} AND TBSPACEID = {n.tsid.format(n.src)} AND STATUS = '') THEN\n"
        f"    {s.say(f'step 3: detaching partition {db2_ident(n.partition)}')}\n"
        f"    EXECUTE IMMEDIATE {db2_str(detach)};\n"
        "  ELSE\n"
        f"    {s.say('step 3: already done: the partition is detached or attached from the copy')}\n"
        "  END IF;\n"
        "END"
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
    )
    pipe = db2_str(f"TIERWISE_WAIT_{n.detached}")
    s.comment(
        f"step 3: wait up to {DETACH_WAIT_SECONDS // 60} minutes for the asynchronous partition detach task "
        f"(checked every {DETACH_POLL_SECONDS} seconds; DBMS_PIPE.RECEIVE_MESSAGE on a pipe nobody sends to is the sleep)",
        s.checks[-1],
    )
    s.statement(
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
        )
    )


def _copy_and_attach(s: Db2Script, a: MoveDataPartition, n: _Staging) -> None:
    """Steps 4 to 6: copy the rows into the target, ATTACH the copy, SET INTEGRITY."""
    create_copy = f"CREATE TABLE {n.q_copy} LIKE {n.q_det} IN {db2_ident(n.target_ts)}"
    insert = f"INSERT INTO {n.q_copy} SELECT * FROM {n.q_det}"
    delete = f"DELETE FROM {n.q_copy}"
    s.comment(
        f"step 4: copy the detached rows into {n.copy} in {n.target_ts} (again from the start after a stop)"
    )
    copied = s.register(
        f"step 4 copied every row: COUNT(*) of {n.copy} equals COUNT(*) of {n.detached} (else the script stops before "
        f"the ATTACH; {n.detached} keeps every row, and a rerun empties {n.copy} and copies again)",
        "copy row count differs: run again",
    )
    s.statement(
        compound(
            [
                *COUNT_DECLARE,
                f"IF {n.table_exists(n.ldet)} AND NOT {n.listed} THEN",
                f"  IF NOT {n.table_exists(n.lcopy)} THEN",
                f"    EXECUTE IMMEDIATE {db2_str(create_copy)};",
                "  END IF;",
                f"  {s.say(f'step 4: copying the rows into {db2_ident(n.copy)}')}",
                f"  EXECUTE IMMEDIATE {db2_str(delete)};",
                f"  EXECUTE IMMEDIATE {db2_str(insert)};",
                *[
                    f"  {line}"
                    for line in count_into("v_rows", db2_str(f"SELECT COUNT_BIG(*) FROM {n.q_copy}"))
                ],
                *[
                    f"  {line}"
                    for line in count_into("v_other", db2_str(f"SELECT COUNT_BIG(*) FROM {n.q_det}"))
                ],
                "  IF v_rows <> v_other THEN",
                f"    {s.signal(copied)}",
                "  END IF;",
                "ELSE",
                f"  {s.say('step 4: nothing to copy')}",
                "END IF;",
            ]
        )
    )
    s.comment(f"step 5: attach {n.copy} as partition {n.partition} with its original range")
    s.statement(
        "BEGIN\n"
        f"  IF {n.table_exists(n.lcopy)} AND NOT {n.listed} THEN\n"
        f"    {s.say(f'step 5: attaching partition {db2_ident(n.partition)} from {db2_ident(n.copy)}')}\n"
        f"    EXECUTE IMMEDIATE {db2_str(attach_sql(a, n.copy))};\n"
        "  ELSE\n"
        f"    {s.say('step 5: nothing to attach')}\n"
        "  END IF;\n"
        "END"
    )
    integrity = f"SET INTEGRITY FOR {n.table} ALLOW WRITE ACCESS IMMEDIATE CHECKED"
    s.comment(
        f"step 6: SET INTEGRITY for {a.schema}.{a.table} (validates the attached range, maintains indexes)"
    )
    s.statement(
        "BEGIN\n"
        f"  IF EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = {n.ls} AND TABNAME = {n.lt} AND STATUS = 'C') THEN\n"
        f"    {s.say(f'step 6: SET INTEGRITY for {n.table}')}\n"
        f"    EXECUTE IMMEDIATE {db2_str(integrity)};\n"
        "  ELSE\n"
        f"    {s.say('step 6: already done: the table is not in set integrity pending state')}\n"
        "  END IF;\n"
        "END"
    )


def _post_checks(s: Db2Script, a: MoveDataPartition, n: _Staging) -> None:
    """The partition in the target with every row, then step 7 drops the detached table."""
    s.check(
        f"post-check: partition {n.partition} is in table space {n.target_ts} (SYSCAT.DATAPARTITIONS.TBSPACEID) "
        "with an empty STATUS",
        "SYSIBM.SYSDUMMY1",
        f"post-check: partition not in {n.target_ts[:20]}",
        where=f"NOT {n.in_target}",
    )
    same = s.register(
        f"before the drop: the attached partition {n.partition} holds as many rows as the detached table "
        f"{n.detached} (rows with the partitioning key in the partition's range; else {n.detached} is kept)",
        "row counts differ: detached table kept",
    )
    s.comment(s.checks[-1])
    s.statement(
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
        )
    )
    drop = f"DROP TABLE {n.q_det}"
    s.comment(f"step 7: drop the detached table {n.detached} (its rows are in the attached partition now)")
    s.statement(
        "BEGIN\n"
        f"  IF {n.table_exists(n.ldet)} AND {n.in_target} THEN\n"
        f"    {s.say(f'step 7: dropping {db2_ident(n.detached)}')}\n"
        f"    EXECUTE IMMEDIATE {db2_str(drop)};\n"
        "  ELSE\n"
        f"    {s.say('step 7: already done: no detached table left')}\n"
        "  END IF;\n"
        "END"
    )
    s.statement(
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
            "the script stops before any change while a BACKUP of the database runs (run it again afterwards); keep it out of the backup window (the copy's log volume goes into the next online backup's log "
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


def _gb(size: int | None) -> str:
    return "unknown" if size is None else f"{size / 1024**3:,.1f} GB"
