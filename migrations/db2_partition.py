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
(`add_steps`) checks that the new range overlaps no partition; its rollback detaches the new
partition only while no row has its key in the range (else inserts into that range would fail
with SQL0327N once the partition is gone).

The rollback is the same move in reverse (target table space back to the source one).
"""

from __future__ import annotations

import hashlib
import re

from migrations.plan import AddDataPartition, MoveDataPartition, MoveTempTablespace, Options, Unsupported
from migrations.quoting import MAX_NAME, db2_ident, db2_str

_NUMBER = re.compile(r"^[+-]?\d+(?:\.\d+)?$")
DETACH_WAIT_SECONDS = 600  # how long step 3 waits for the asynchronous partition detach task
DETACH_POLL_SECONDS = 10  # between two looks at the catalog


def bound_sql(value: str | None, *, low: bool) -> str:
    """A range bound as ATTACH writes it and SYSCAT.DATAPARTITIONS shows it: a number as is,
    anything else as a string literal, an open end as MINVALUE / MAXVALUE."""
    if value is None:
        return "MINVALUE" if low else "MAXVALUE"
    if _NUMBER.match(value):
        return value
    return db2_str(value)


def _cmp(column: str, op: str, bound: str) -> str:
    """A catalog bound (LOWVALUE / HIGHVALUE text) compared with a planned bound: as numbers when
    the planned bound is a number, else as the literal text (quotes included on both sides)."""
    if _NUMBER.match(bound):
        return f"CASE WHEN {column} IN ('MINVALUE', 'MAXVALUE') THEN NULL ELSE DECFLOAT({column}) END {op} {bound}"
    return f"{column} {op} {db2_str(bound_sql(bound, low=True))}"


def overlap_sql(
    low: str | None, low_inclusive: bool | None, high: str | None, high_inclusive: bool | None
) -> str:
    """A predicate on SYSCAT.DATAPARTITIONS AS D: D's range overlaps [low, high]. Unknown inclusive
    flags count as inclusive (the check errs towards stopping)."""
    above = ["D.HIGHVALUE = 'MAXVALUE'"]  # D ends above the new low end
    if low is None:
        above.append("1 = 1")
    else:
        above.append(_cmp("D.HIGHVALUE", ">", low))
        if low_inclusive is not False:
            above.append(f"(D.HIGHINCLUSIVE = 'Y' AND {_cmp('D.HIGHVALUE', '=', low)})")
    below = ["D.LOWVALUE = 'MINVALUE'"]  # D starts below the new high end
    if high is None:
        below.append("1 = 1")
    else:
        below.append(_cmp("D.LOWVALUE", "<", high))
        if high_inclusive is not False:
            below.append(f"(D.LOWINCLUSIVE = 'Y' AND {_cmp('D.LOWVALUE', '=', high)})")
    return f"({' OR '.join(above)}) AND ({' OR '.join(below)})"


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


def _inclusive(flag: bool | None, bound: str | None) -> str:
    if bound is None or flag is None:
        return ""
    return " INCLUSIVE" if flag else " EXCLUSIVE"


def attach_sql(a: MoveDataPartition, source_table: str) -> str:
    assert a.partition_name is not None
    return (
        f"ALTER TABLE {db2_ident(a.schema)}.{db2_ident(a.table)} ATTACH PARTITION {db2_ident(a.partition_name)} "
        f"STARTING FROM ({bound_sql(a.range_low, low=True)}){_inclusive(a.low_inclusive, a.range_low)} "
        f"ENDING AT ({bound_sql(a.range_high, low=False)}){_inclusive(a.high_inclusive, a.range_high)} "
        f"FROM {db2_ident(a.schema)}.{db2_ident(source_table)}"
    )


def references_check(s: object, schema: str, table: str) -> None:
    """Stop before a DETACH when foreign keys reference the table: the child rows would point at
    rows that leave the table (and Db2 may refuse to detach from a parent table at all); drop or
    re-point the constraints by hand first."""
    from migrations.db2 import Db2Script

    assert isinstance(s, Db2Script)
    s.check(
        f"no foreign key references {schema}.{table} (SYSCAT.REFERENCES): detaching a partition of a parent "
        "table is unsupported here; review the constraints by hand. Nothing was changed",
        "SYSCAT.REFERENCES",
        "the table is a foreign key parent: unsupported",
        where=f"REFTABSCHEMA = {db2_str(schema)} AND REFTABNAME = {db2_str(table)}",
    )


_COUNT_DECLARE = [
    "DECLARE v_sql VARCHAR(8000);",
    "DECLARE v_rows BIGINT DEFAULT 0;",
    "DECLARE v_other BIGINT DEFAULT 0;",
    "DECLARE s1 STATEMENT;",
    "DECLARE c1 CURSOR FOR s1;",
]
_RANGE_DECLARE = [
    "DECLARE v_key VARCHAR(1000);",
    "DECLARE v_nulls CHAR(1);",
    "DECLARE v_low VARCHAR(512);",
    "DECLARE v_lowinc CHAR(1);",
    "DECLARE v_high VARCHAR(512);",
    "DECLARE v_highinc CHAR(1);",
    "DECLARE v_where VARCHAR(4000);",
    *_COUNT_DECLARE,
]


def _count(into: str, sql: str) -> list[str]:
    """Run a dynamic `SELECT COUNT_BIG(*) …` (`sql`: an SQL PL string expression) into `into`:
    dynamic, because a compound statement is compiled whole and may name a table that does not
    exist yet (or any more)."""
    return [
        f"SET v_sql = {sql};",
        "PREPARE s1 FROM v_sql;",
        "OPEN c1;",
        f"FETCH c1 INTO {into};",
        "CLOSE c1;",
    ]


def _range_where(ls: str, lt: str, part: str) -> list[str]:
    """Set v_where to the partition's range as a predicate on its partitioning key, built from
    the catalog (SYSCAT.DATAPARTITIONEXPRESSION: the key in SQL syntax; SYSCAT.DATAPARTITIONS:
    LOWVALUE / HIGHVALUE as SQL literals, MINVALUE / MAXVALUE, with LOWINCLUSIVE / HIGHINCLUSIVE):
    exactly the rows the partition holds. Null keys sort high unless NULLSFIRST is 'Y', so they
    belong to the partition that ends at MAXVALUE (or starts at MINVALUE)."""
    key = f"SYSCAT.DATAPARTITIONEXPRESSION WHERE TABSCHEMA = {ls} AND TABNAME = {lt}"
    return [
        f"SELECT VARCHAR(DATAPARTITIONEXPRESSION, 1000), NULLSFIRST INTO v_key, v_nulls FROM {key} AND DATAPARTITIONKEYSEQ = 1;",
        f"SELECT LOWVALUE, LOWINCLUSIVE, HIGHVALUE, HIGHINCLUSIVE INTO v_low, v_lowinc, v_high, v_highinc FROM {part};",
        "SET v_where = CASE WHEN v_low = 'MINVALUE' THEN '1 = 1' ELSE v_key || CASE WHEN v_lowinc = 'Y' THEN ' >= ' "
        "ELSE ' > ' END || v_low END || ' AND ' || CASE WHEN v_high = 'MAXVALUE' THEN '1 = 1' ELSE v_key || "
        "CASE WHEN v_highinc = 'Y' THEN ' <= ' ELSE ' < ' END || v_high END;",
        "IF (v_high = 'MAXVALUE' AND v_nulls = 'N') OR (v_low = 'MINVALUE' AND v_nulls = 'Y') THEN",
        "  SET v_where = '(' || v_where || ') OR ' || v_key || ' IS NULL';",
        "END IF;",
    ]


def single_key_check(s: object, schema: str, table: str) -> None:
    """The row checks read the range of one partitioning key column; refuse the rest."""
    from migrations.db2 import Db2Script

    assert isinstance(s, Db2Script)
    s.check(
        f"{schema}.{table} is partitioned on one key (the row checks read the range of one key column)",
        "SYSIBM.SYSDUMMY1",
        "partitioning key has 2+ columns: unsupported",
        where=(
            f"(SELECT COUNT(*) FROM SYSCAT.DATAPARTITIONEXPRESSION WHERE TABSCHEMA = {db2_str(schema)} "
            f"AND TABNAME = {db2_str(table)}) <> 1"
        ),
    )


def compound(lines: list[str]) -> str:
    return "BEGIN\n" + "\n".join(f"  {line}" for line in lines) + "\nEND"


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


def steps(s: object, a: MoveDataPartition, options: Options) -> None:
    """Append the pre-checks, steps and post-checks to `s` (a db2.Db2Script)."""
    from migrations.db2 import Db2Script, ensure_group

    assert isinstance(s, Db2Script)
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

    def table_exists(name: str) -> str:
        return f"EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = {ls} AND TABNAME = {name})"

    s.check(
        f"partition {a.partition_name} of {a.schema}.{a.table} is in table space {a.tablespace} or {a.target_tablespace}, "
        "or detached by an earlier run",
        "SYSIBM.SYSDUMMY1",
        "partition not where planned: advice out of date",
        where=(
            f"NOT EXISTS (SELECT 1 FROM {part} AND TBSPACEID IN ({tsid.format(src)}, {tsid.format(tgt)})) "
            f"AND NOT {table_exists(ldet)} AND NOT {table_exists(lcopy)}"
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
        f"partition {a.partition_name} has the range {bound_sql(a.range_low, low=True)} .. {bound_sql(a.range_high, low=False)} "
        "(the ATTACH recreates exactly this range)",
        "SYSCAT.DATAPARTITIONS",
        "partition range differs from the plan",
        where=(
            f"TABSCHEMA = {ls} AND TABNAME = {lt} AND DATAPARTITIONNAME = {lp} AND (LOWVALUE <> "
            f"{db2_str(bound_sql(a.range_low, low=True))} OR HIGHVALUE <> {db2_str(bound_sql(a.range_high, low=False))}"
            f"{low_flag}{high_flag})"
        ),
    )
    s.check(
        f"no other partition of {a.schema}.{a.table} is being attached or detached (SYSCAT.DATAPARTITIONS.STATUS)",
        "SYSCAT.DATAPARTITIONS",
        "a partition is attaching/detaching: finish it",
        where=f"TABSCHEMA = {ls} AND TABNAME = {lt} AND DATAPARTITIONNAME <> {lp} AND STATUS <> ''",
    )
    s.check(
        f"no materialized query table (SYSCAT.TABLES.TYPE 'S') or staging table (PROPERTY character 2 'Y') "
        f"depends on {a.schema}.{a.table} (they would become detached dependents)",
        "SYSCAT.TABDEP AS D JOIN SYSCAT.TABLES AS T ON T.TABSCHEMA = D.TABSCHEMA AND T.TABNAME = D.TABNAME",
        "dependent MQT/staging table: unsupported, review",
        where=(
            f"D.BSCHEMA = {ls} AND D.BNAME = {lt} AND D.BTYPE = 'T' "
            "AND (T.TYPE = 'S' OR SUBSTR(T.PROPERTY, 2, 1) = 'Y')"
        ),
    )
    s.check(
        f"{a.schema}.{a.table} has no LOB, XML, LONG, identity or generated columns",
        "SYSCAT.COLUMNS",
        "LOB/XML/identity/generated column: unsupported",
        where=(
            f"TABSCHEMA = {ls} AND TABNAME = {lt} AND (TYPENAME IN ('BLOB', 'CLOB', 'DBCLOB', 'XML', "
            "'LONG VARCHAR', 'LONG VARGRAPHIC') OR IDENTITY = 'Y' OR GENERATED <> ' ')"
        ),
    )
    s.check(
        f"table space {a.target_tablespace}, if it exists, uses storage group {a.target.name} and matches "
        f"{a.tablespace} (page size, extent size, type)",
        "SYSCAT.TABLESPACES AS N JOIN SYSCAT.TABLESPACES AS O ON O.TBSPACE = " + src,
        f"{a.target_tablespace[:20]} does not match",
        where=(
            f"N.TBSPACE = {tgt} AND (COALESCE(N.SGNAME, '') <> {db2_str(a.target.name)} OR N.PAGESIZE <> O.PAGESIZE "
            "OR N.EXTENTSIZE <> O.EXTENTSIZE OR N.DATATYPE <> O.DATATYPE)"
        ),
    )
    references_check(s, a.schema, a.table)
    single_key_check(s, a.schema, a.table)
    ensure_group(s, a.target, "step 1")
    factor = 1 + options.headroom_pct / 100
    # sizes in KB from SYSPROC.ADMIN_GET_TAB_INFO (physical data, index, long, LOB and XML objects of
    # the data partition, or of the detached table after a stop): IBM Db2 docs, "ADMINTABINFO
    # administrative view and ADMIN_GET_TAB_INFO table function"; FPAGES is -1 without RUNSTATS
    sizes = "I.DATA_OBJECT_P_SIZE + I.INDEX_OBJECT_P_SIZE + I.LONG_OBJECT_P_SIZE + I.LOB_OBJECT_P_SIZE + I.XML_OBJECT_P_SIZE"
    part_kb = (
        f"(SELECT COALESCE(SUM({sizes}), 0) FROM TABLE(SYSPROC.ADMIN_GET_TAB_INFO({ls}, {lt})) AS I "
        f"WHERE I.DATA_PARTITION_ID = (SELECT DATAPARTITIONID FROM {part} AND STATUS <> 'I'))"
    )
    detached_kb = (
        f"(SELECT COALESCE(SUM({sizes}), 0) FROM TABLE(SYSPROC.ADMIN_GET_TAB_INFO({ls}, {ldet})) AS I)"
    )
    s.check(
        f"the paths of {a.target.name} have room for the partition ({options.headroom_pct:g} % headroom; storage is "
        "striped over the paths; size from ADMIN_GET_TAB_INFO: data, index, long, LOB and XML objects)",
        "SYSIBM.SYSDUMMY1",
        f"not enough free space in {a.target.name}",
        where=(
            f"NOT {in_target} AND (SELECT MIN(P.STO_PATH_FREE_SIZE) * COUNT(*) FROM TABLE(ADMIN_GET_STORAGE_PATHS("
            f"{db2_str(a.target.name)}, -1)) AS P) < ({part_kb} + {detached_kb}) * 1024 * {factor:.2f}"
        ),
    )

    create_tablespace_like(s, a.target_tablespace, a.tablespace, a.target.name, "step 2")
    detach = f"ALTER TABLE {table} DETACH PARTITION {db2_ident(a.partition_name)} INTO {q_det}"
    s.comment(
        f"step 3: detach partition {a.partition_name} into {detached} (skipped when already moved or detached)"
    )
    s.statement(
        "BEGIN\n"
        f"  IF {in_target} THEN\n"
        f"    {s.say(f'already done: partition {db2_ident(a.partition_name)} is in {db2_ident(a.target_tablespace)}; nothing to do')}\n"
        f"  ELSEIF EXISTS (SELECT 1 FROM {part} AND TBSPACEID = {tsid.format(src)} AND STATUS = '') THEN\n"
        f"    {s.say(f'step 3: detaching partition {db2_ident(a.partition_name)}')}\n"
        f"    EXECUTE IMMEDIATE {db2_str(detach)};\n"
        "  ELSE\n"
        f"    {s.say('step 3: already done: the partition is detached or attached from the copy')}\n"
        "  END IF;\n"
        "END"
    )
    pending = (
        f"EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = {ls} AND TABNAME = {ldet} AND TYPE <> 'T') "
        f"OR EXISTS (SELECT 1 FROM {part} AND STATUS IN ('D', 'L'))"
    )
    finished = s.register(
        f"the detach of {a.partition_name} has finished within {DETACH_WAIT_SECONDS // 60} minutes: the detached "
        f"table {detached} is a regular table (SYSCAT.TABLES.TYPE 'T', not 'L') and the partition is no longer "
        "listed as detaching (SYSCAT.DATAPARTITIONS.STATUS 'D' or 'L'; 'I', index cleanup, is not waited for). "
        f"Else: detach still in progress: run the script again; the rows stay in {a.schema}.{detached} until it "
        "finishes",
        "detach still in progress: run again",
    )
    pipe = db2_str(f"TIERWISE_WAIT_{detached}")
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
                f"  {s.say(f'detach still in progress: run the script again; the rows stay in {db2_ident(a.schema)}.{db2_ident(detached)} until it finishes')}",
                f"  {s.signal(finished)}",
                "END IF;",
            ]
        )
    )
    create_copy = f"CREATE TABLE {q_copy} LIKE {q_det} IN {db2_ident(a.target_tablespace)}"
    insert = f"INSERT INTO {q_copy} SELECT * FROM {q_det}"
    delete = f"DELETE FROM {q_copy}"
    s.comment(
        f"step 4: copy the detached rows into {copy} in {a.target_tablespace} (again from the start after a stop)"
    )
    copied = s.register(
        f"step 4 copied every row: COUNT(*) of {copy} equals COUNT(*) of {detached} (else the script stops before "
        f"the ATTACH; {detached} keeps every row, and a rerun empties {copy} and copies again)",
        "copy row count differs: run again",
    )
    s.statement(
        compound(
            [
                *_COUNT_DECLARE,
                f"IF {table_exists(ldet)} AND NOT {listed} THEN",
                f"  IF NOT {table_exists(lcopy)} THEN",
                f"    EXECUTE IMMEDIATE {db2_str(create_copy)};",
                "  END IF;",
                f"  {s.say(f'step 4: copying the rows into {db2_ident(copy)}')}",
                f"  EXECUTE IMMEDIATE {db2_str(delete)};",
                f"  EXECUTE IMMEDIATE {db2_str(insert)};",
                *[f"  {line}" for line in _count("v_rows", db2_str(f"SELECT COUNT_BIG(*) FROM {q_copy}"))],
                *[f"  {line}" for line in _count("v_other", db2_str(f"SELECT COUNT_BIG(*) FROM {q_det}"))],
                "  IF v_rows <> v_other THEN",
                f"    {s.signal(copied)}",
                "  END IF;",
                "ELSE",
                f"  {s.say('step 4: nothing to copy')}",
                "END IF;",
            ]
        )
    )
    s.comment(f"step 5: attach {copy} as partition {a.partition_name} with its original range")
    s.statement(
        "BEGIN\n"
        f"  IF {table_exists(lcopy)} AND NOT {listed} THEN\n"
        f"    {s.say(f'step 5: attaching partition {db2_ident(a.partition_name)} from {db2_ident(copy)}')}\n"
        f"    EXECUTE IMMEDIATE {db2_str(attach_sql(a, copy))};\n"
        "  ELSE\n"
        f"    {s.say('step 5: nothing to attach')}\n"
        "  END IF;\n"
        "END"
    )
    integrity = f"SET INTEGRITY FOR {table} ALLOW WRITE ACCESS IMMEDIATE CHECKED"
    s.comment(
        f"step 6: SET INTEGRITY for {a.schema}.{a.table} (validates the attached range, maintains indexes)"
    )
    s.statement(
        "BEGIN\n"
        f"  IF EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = {ls} AND TABNAME = {lt} AND STATUS = 'C') THEN\n"
        f"    {s.say(f'step 6: SET INTEGRITY for {table}')}\n"
        f"    EXECUTE IMMEDIATE {db2_str(integrity)};\n"
        "  ELSE\n"
        f"    {s.say('step 6: already done: the table is not in set integrity pending state')}\n"
        "  END IF;\n"
        "END"
    )
    s.check(
        f"post-check: partition {a.partition_name} is in table space {a.target_tablespace} (SYSCAT.DATAPARTITIONS.TBSPACEID) "
        "with an empty STATUS",
        "SYSIBM.SYSDUMMY1",
        f"post-check: partition not in {a.target_tablespace[:20]}",
        where=f"NOT {in_target}",
    )
    same = s.register(
        f"before the drop: the attached partition {a.partition_name} holds as many rows as the detached table "
        f"{detached} (rows with the partitioning key in the partition's range; else {detached} is kept)",
        "row counts differ: detached table kept",
    )
    s.comment(s.checks[-1])
    s.statement(
        compound(
            [
                *_RANGE_DECLARE,
                f"IF {table_exists(ldet)} AND {in_target} THEN",
                *[f"  {line}" for line in _range_where(ls, lt, f"{part} AND STATUS = ''")],
                *[
                    f"  {line}"
                    for line in _count(
                        "v_rows", f"{db2_str(f'SELECT COUNT_BIG(*) FROM {table} WHERE ')} || v_where"
                    )
                ],
                *[f"  {line}" for line in _count("v_other", db2_str(f"SELECT COUNT_BIG(*) FROM {q_det}"))],
                "  IF v_rows <> v_other THEN",
                f"    {s.signal(same)}",
                "  END IF;",
                "END IF;",
            ]
        )
    )
    drop = f"DROP TABLE {q_det}"
    s.comment(f"step 7: drop the detached table {detached} (its rows are in the attached partition now)")
    s.statement(
        "BEGIN\n"
        f"  IF {table_exists(ldet)} AND {in_target} THEN\n"
        f"    {s.say(f'step 7: dropping {db2_ident(detached)}')}\n"
        f"    EXECUTE IMMEDIATE {db2_str(drop)};\n"
        "  ELSE\n"
        f"    {s.say('step 7: already done: no detached table left')}\n"
        "  END IF;\n"
        "END"
    )
    s.statement(
        "BEGIN\n"
        f"  {s.say(f'finished: partition {db2_ident(a.partition_name)} of {table} is in {db2_ident(a.target_tablespace)}')}\n"
        "END"
    )


def create_tablespace_like(
    s: object, ts: str, like: str, group: str, step: str, *, temporary: bool = False
) -> None:
    """`ts` on storage group `group`, created only if missing, with the page size, extent size,
    type (REGULAR / LARGE) and buffer pool of `like` read from SYSCAT.TABLESPACES at run time
    (every table space of a partitioned table must match in these: IBM Db2 docs, "Partitioned
    tables"). The only statement text built at run time; the names in it are fixed here."""
    from migrations.db2 import Db2Script

    assert isinstance(s, Db2Script)
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


def add_method_lines(a: AddDataPartition) -> list[str]:
    table = f"{db2_ident(a.schema)}.{db2_ident(a.table)}"
    if a.remove:
        return [
            f"ALTER TABLE {table} DETACH PARTITION {db2_ident(a.partition_name)} INTO {db2_ident(a.schema)}."
            f"{db2_ident(removed_name(a))}: the partition becomes a table, which is kept (drop it when it is empty).",
        ]
    where = (
        f"in table space {db2_ident(a.tablespace)} (the newest partition's, already on storage group {db2_ident(a.target.name)});"
        if a.tablespace == a.like_tablespace
        else f"table space {db2_ident(a.tablespace)} on storage group {db2_ident(a.target.name)}, created if missing like {db2_ident(a.like_tablespace)};"
    )
    return [
        where,
        f"ALTER TABLE {table} ADD PARTITION {db2_ident(a.partition_name)} STARTING FROM ... ENDING AT ... IN {db2_ident(a.tablespace)}",
        '(IBM Db2 docs, ALTER TABLE ADD PARTITION; "Scenarios: Rolling in and rolling out partitioned table data").',
    ]


def removed_name(a: AddDataPartition) -> str:
    digest = (
        hashlib.sha256("|".join([a.schema, a.table, a.partition_name]).encode("utf-8"))
        .hexdigest()[:12]
        .upper()
    )
    return f"TW_{digest}_REMOVED"


def add_steps(s: object, a: AddDataPartition, options: Options) -> None:
    """The leading edge: ADD PARTITION on the hot storage group (rollback: DETACH it, kept)."""
    from migrations.db2 import Db2Script, ensure_group

    assert isinstance(s, Db2Script)
    ls, lt, lp = db2_str(a.schema), db2_str(a.table), db2_str(a.partition_name)
    table = f"{db2_ident(a.schema)}.{db2_ident(a.table)}"
    part = f"SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = {ls} AND TABNAME = {lt} AND DATAPARTITIONNAME = {lp}"
    s.check(
        f"table {a.schema}.{a.table} exists and is range-partitioned",
        "SYSIBM.SYSDUMMY1",
        "table missing or not partitioned",
        # SYSCAT.DATAPARTITIONS has a row for a table that is not partitioned too; only a
        # range-partitioned table has a partitioning key in SYSCAT.DATAPARTITIONEXPRESSION
        where=f"NOT EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONEXPRESSION WHERE TABSCHEMA = {ls} AND TABNAME = {lt})",
    )
    s.check(
        f"no partition of {a.schema}.{a.table} is being attached or detached (SYSCAT.DATAPARTITIONS.STATUS)",
        "SYSCAT.DATAPARTITIONS",
        "a partition is attaching/detaching: finish it",
        where=f"TABSCHEMA = {ls} AND TABNAME = {lt} AND STATUS <> ''",
    )
    low, high = bound_sql(a.range_low, low=True), bound_sql(a.range_high, low=False)
    if a.remove:
        detach = f"ALTER TABLE {table} DETACH PARTITION {db2_ident(a.partition_name)} INTO {db2_ident(a.schema)}.{db2_ident(removed_name(a))}"
        s.check(
            f"partition {a.partition_name}, if present, has the range {low} .. {high} tierwise added",
            "SYSCAT.DATAPARTITIONS",
            "partition range differs from the plan",
            where=f"TABSCHEMA = {ls} AND TABNAME = {lt} AND DATAPARTITIONNAME = {lp} AND (LOWVALUE <> {db2_str(low)} OR HIGHVALUE <> {db2_str(high)})",
        )
        references_check(s, a.schema, a.table)
        single_key_check(s, a.schema, a.table)
        empty = s.register(
            f"partition {a.partition_name} is empty (SELECT 1 FROM {a.schema}.{a.table} WHERE the partitioning key is "
            "in its range, with its inclusive bounds, FETCH FIRST 1 ROW ONLY): once its period has started, the "
            "detach would take its rows out of the table and inserts into the range would fail (SQL0327N); "
            "move the rows first or keep the partition. Nothing was changed",
            "partition holds rows: not detached",
        )
        probe = (
            f"{db2_str(f'SELECT COUNT_BIG(*) FROM (SELECT 1 FROM {table} WHERE ')} || v_where || "
            f"{db2_str(' FETCH FIRST 1 ROW ONLY) AS X')}"
        )
        s.comment(s.checks[-1])
        s.statement(
            compound(
                [
                    *_RANGE_DECLARE,
                    f"IF EXISTS (SELECT 1 FROM {part}) THEN",
                    *[f"  {line}" for line in [*_range_where(ls, lt, part), *_count("v_rows", probe)]],
                    "END IF;",
                    "IF v_rows > 0 THEN",
                    f"  {s.signal(empty)}",
                    "END IF;",
                ]
            )
        )
        s.comment(f"step 1: detach partition {a.partition_name} into {removed_name(a)} (kept)")
        s.statement(
            "BEGIN\n"
            f"  IF EXISTS (SELECT 1 FROM {part}) THEN\n"
            f"    {s.say(f'step 1: detaching partition {db2_ident(a.partition_name)}; its rows stay in {db2_ident(removed_name(a))}')}\n"
            f"    EXECUTE IMMEDIATE {db2_str(detach)};\n"
            "  ELSE\n"
            f"    {s.say(f'step 1: already done: no partition {db2_ident(a.partition_name)}')}\n"
            "  END IF;\n"
            "END"
        )
        s.check(
            f"post-check: {a.schema}.{a.table} has no partition {a.partition_name}",
            "SYSCAT.DATAPARTITIONS",
            "post-check: the partition is still there",
            where=f"TABSCHEMA = {ls} AND TABNAME = {lt} AND DATAPARTITIONNAME = {lp} AND STATUS = ''",
        )
        s.statement(
            "BEGIN\n"
            f"  {s.say(f'finished: partition {db2_ident(a.partition_name)} is detached into {db2_ident(removed_name(a))}')}\n"
            "END"
        )
        return
    s.check(
        f"partition name {a.partition_name}, if taken, has exactly the range {low} .. {high} (an earlier run added it)",
        "SYSIBM.SYSDUMMY1",
        "partition name taken by another range",
        where=f"EXISTS (SELECT 1 FROM {part} AND (LOWVALUE <> {db2_str(low)} OR HIGHVALUE <> {db2_str(high)}))",
    )
    s.check(
        f"no other partition of {a.schema}.{a.table} overlaps {low} .. {high} (SYSCAT.DATAPARTITIONS LOWVALUE / "
        "HIGHVALUE with their inclusive flags; numbers compared as numbers, other literals as text, which orders "
        "ISO dates and timestamps of one format correctly)",
        "SYSCAT.DATAPARTITIONS AS D",
        "the new range overlaps another partition",
        where=(
            f"D.TABSCHEMA = {ls} AND D.TABNAME = {lt} AND NOT (D.DATAPARTITIONNAME = {lp} AND D.LOWVALUE = {db2_str(low)} "
            f"AND D.HIGHVALUE = {db2_str(high)}) AND {overlap_sql(a.range_low, a.low_inclusive, a.range_high, a.high_inclusive)}"
        ),
    )
    lts, llike = db2_str(a.tablespace), db2_str(a.like_tablespace)
    if a.tablespace == a.like_tablespace:
        # the new partition joins the newest partition's table space, already on the hot tier
        s.check(
            f"table space {a.tablespace} exists and uses storage group {a.target.name}",
            "SYSIBM.SYSDUMMY1",
            f"{a.tablespace[:20]} missing or elsewhere",
            where=(
                f"NOT EXISTS (SELECT 1 FROM SYSCAT.TABLESPACES WHERE TBSPACE = {lts} "
                f"AND SGNAME = {db2_str(a.target.name)})"
            ),
        )
    else:
        s.check(
            f"table space {a.like_tablespace} exists (the new table space is created like it)",
            "SYSIBM.SYSDUMMY1",
            f"{a.like_tablespace[:20]} not found",
            where=f"NOT EXISTS (SELECT 1 FROM SYSCAT.TABLESPACES WHERE TBSPACE = {llike})",
        )
        s.check(
            f"table space {a.tablespace}, if it exists, uses storage group {a.target.name} and matches "
            f"{a.like_tablespace} (page size, extent size, type)",
            f"SYSCAT.TABLESPACES AS N JOIN SYSCAT.TABLESPACES AS O ON O.TBSPACE = {llike}",
            f"{a.tablespace[:20]} does not match",
            where=(
                f"N.TBSPACE = {lts} AND (COALESCE(N.SGNAME, '') <> {db2_str(a.target.name)} OR N.PAGESIZE <> O.PAGESIZE "
                "OR N.EXTENTSIZE <> O.EXTENTSIZE OR N.DATATYPE <> O.DATATYPE)"
            ),
        )
    number = 2 if ensure_group(s, a.target, "step 1") else 1
    if a.tablespace != a.like_tablespace:  # else it exists (checked above): nothing to create
        create_tablespace_like(s, a.tablespace, a.like_tablespace, a.target.name, f"step {number}")
        number += 1
    step = f"step {number}"
    add = (
        f"ALTER TABLE {table} ADD PARTITION {db2_ident(a.partition_name)} "
        f"STARTING FROM ({low}){_inclusive(a.low_inclusive, a.range_low)} "
        f"ENDING AT ({high}){_inclusive(a.high_inclusive, a.range_high)} IN {db2_ident(a.tablespace)}"
    )
    s.comment(f"{step}: add partition {a.partition_name} in {a.tablespace}")
    s.statement(
        "BEGIN\n"
        f"  IF EXISTS (SELECT 1 FROM {part}) THEN\n"
        f"    {s.say(f'{step}: already done: partition {db2_ident(a.partition_name)} exists')}\n"
        "  ELSE\n"
        f"    {s.say(f'{step}: adding partition {db2_ident(a.partition_name)} in {db2_ident(a.tablespace)}')}\n"
        f"    EXECUTE IMMEDIATE {db2_str(add)};\n"
        "  END IF;\n"
        "END"
    )
    s.check(
        f"post-check: partition {a.partition_name} is in table space {a.tablespace}",
        "SYSIBM.SYSDUMMY1",
        f"post-check: partition not in {a.tablespace[:20]}",
        where=(
            f"NOT EXISTS (SELECT 1 FROM {part} AND TBSPACEID = (SELECT TBSPACEID FROM SYSCAT.TABLESPACES "
            f"WHERE TBSPACE = {db2_str(a.tablespace)}))"
        ),
    )
    s.statement(
        "BEGIN\n"
        f"  {s.say(f'finished: {table} has partition {db2_ident(a.partition_name)} in {db2_ident(a.tablespace)}')}\n"
        "END"
    )


def temp_steps(s: object, a: MoveTempTablespace) -> None:
    """A system or user temporary table space to another storage group: a new one of the same kind
    like it on the target, then DROP the old one (IBM Db2 docs: automatic storage temporary table
    spaces cannot change their storage group; a database needs a system temporary table space of
    the catalog's page size, so the new one is created first). Which kind it is (SYSCAT.TABLESPACES
    DATATYPE T or U) is read at run time. A user temporary table space also gets the old one's USE
    privileges, and is dropped only while no declared or created temporary table is in it (IBM Db2
    docs, "Dropping table spaces")."""
    from migrations.db2 import Db2Script, ensure_group

    assert isinstance(s, Db2Script)
    old, new, group = db2_str(a.tablespace), db2_str(a.new_tablespace), db2_str(a.target.name)
    exists = "EXISTS (SELECT 1 FROM SYSCAT.TABLESPACES WHERE TBSPACE = {})"
    old_type = f"(SELECT DATATYPE FROM SYSCAT.TABLESPACES WHERE TBSPACE = {old})"
    s.check(
        f"table space {a.tablespace} is a system or user temporary table space, or already replaced by {a.new_tablespace}",
        "SYSIBM.SYSDUMMY1",
        f"{a.tablespace[:24]} not temporary",
        where=(
            f"NOT EXISTS (SELECT 1 FROM SYSCAT.TABLESPACES WHERE TBSPACE = {old} AND DATATYPE IN ('T', 'U')) "
            f"AND NOT {exists.format(new)}"
        ),
    )
    s.check(
        f"table space {a.new_tablespace}, if it exists, is temporary of the same kind as {a.tablespace} in storage group {a.target.name}",
        "SYSCAT.TABLESPACES",
        f"{a.new_tablespace[:24]} exists elsewhere",
        where=(
            f"TBSPACE = {new} AND (DATATYPE NOT IN ('T', 'U') OR COALESCE(SGNAME, '') <> {group} "
            f"OR DATATYPE <> COALESCE({old_type}, DATATYPE))"
        ),
    )
    s.check(
        f"no created temporary table is defined in {a.tablespace} (its definition would block the DROP: move it by hand)",
        "SYSCAT.TABLES",
        "a created temp table is defined in it",
        where=f"TYPE = 'G' AND TBSPACE = {old}",
    )
    ensure_group(s, a.target, "step 1")
    create_tablespace_like(s, a.new_tablespace, a.tablespace, a.target.name, "step 2", temporary=True)
    grant = (
        f"{db2_str('GRANT USE OF TABLESPACE ' + db2_ident(a.new_tablespace) + ' TO ')} || "
        "CASE WHEN R.GRANTEETYPE = 'G' AND R.GRANTEE = 'PUBLIC' THEN 'PUBLIC' ELSE "
        "CASE R.GRANTEETYPE WHEN 'U' THEN 'USER ' WHEN 'G' THEN 'GROUP ' ELSE 'ROLE ' END || "
        "'\"' || REPLACE(RTRIM(R.GRANTEE), '\"', '\"\"') || '\"' END || "
        "CASE WHEN R.USEAUTH = 'G' THEN ' WITH GRANT OPTION' ELSE '' END"
    )
    s.comment(
        f"step 3: a user temporary table space: the users, groups and roles with USE of {a.tablespace} get USE of "
        f"{a.new_tablespace} (nothing to do for a system temporary one)"
    )
    s.statement(
        "BEGIN\n"
        "  FOR R AS SELECT A.GRANTEE, A.GRANTEETYPE, A.USEAUTH FROM SYSCAT.TBSPACEAUTH AS A "
        f"WHERE A.TBSPACE = {old} AND A.USEAUTH IN ('Y', 'G') "
        f"AND EXISTS (SELECT 1 FROM SYSCAT.TABLESPACES WHERE TBSPACE = {new} AND DATATYPE = 'U') "
        "AND NOT EXISTS (SELECT 1 FROM SYSCAT.TBSPACEAUTH AS B "
        f"WHERE B.TBSPACE = {new} AND B.GRANTEE = A.GRANTEE AND B.GRANTEETYPE = A.GRANTEETYPE AND B.USEAUTH IN ('Y', 'G')) DO\n"
        f"    {s.say(f'step 3: granting USE of {db2_ident(a.new_tablespace)} like {db2_ident(a.tablespace)}')}\n"
        f"    EXECUTE IMMEDIATE {grant};\n"
        "  END FOR;\n"
        "END"
    )
    s.check(
        f"no declared or created temporary table is in {a.tablespace} right now "
        "(SYSIBMADM.ADMINTEMPTABLES; they block the DROP: run the script again when the applications using them have ended)",
        "SYSIBMADM.ADMINTEMPTABLES AS T",
        "temp tables in use in it: run again later",
        where=f"T.TBSP_ID = (SELECT TBSPACEID FROM SYSCAT.TABLESPACES WHERE TBSPACE = {old})",
    )
    drop = f"DROP TABLESPACE {db2_ident(a.tablespace)}"
    s.comment(f"step 4: drop {a.tablespace} (fails while a query uses it: run again in a quieter moment)")
    s.statement(
        "BEGIN\n"
        f"  IF {exists.format(old)} AND {exists.format(new)} THEN\n"
        f"    {s.say(f'step 4: dropping {db2_ident(a.tablespace)}')}\n"
        f"    EXECUTE IMMEDIATE {db2_str(drop)};\n"
        "  ELSE\n"
        f"    {s.say(f'step 4: already done: {db2_ident(a.tablespace)} is gone')}\n"
        "  END IF;\n"
        "END"
    )
    s.check(
        f"post-check: {a.new_tablespace} is a temporary table space in {a.target.name} and {a.tablespace} is gone",
        "SYSIBM.SYSDUMMY1",
        "post-check: temporary table space not replaced",
        where=(
            f"NOT EXISTS (SELECT 1 FROM SYSCAT.TABLESPACES WHERE TBSPACE = {new} AND DATATYPE IN ('T', 'U') AND SGNAME = {group}) "
            f"OR {exists.format(old)}"
        ),
    )
    s.statement(
        "BEGIN\n"
        f"  {s.say(f'finished: temporary table space {db2_ident(a.new_tablespace)} is in {db2_ident(a.target.name)}')}\n"
        "END"
    )
