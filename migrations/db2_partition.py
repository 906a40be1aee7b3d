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
   TABLE" / "Detaching data partitions"; with no detached dependents, pre-checked, the
   detached table can be used at once: "Scenarios: Rolling in and rolling out partitioned table
   data");
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
   with an empty STATUS; only then the detached table is dropped.

The rollback is the same move in reverse (target table space back to the source one).
"""

from __future__ import annotations

import hashlib
import re

from migrations.plan import AddDataPartition, MoveDataPartition, MoveTempTablespace, Options, Unsupported
from migrations.quoting import MAX_NAME, db2_ident, db2_str

_NUMBER = re.compile(r"^[+-]?\d+(?:\.\d+)?$")


def bound_sql(value: str | None, *, low: bool) -> str:
    """A range bound as ATTACH writes it and SYSCAT.DATAPARTITIONS shows it: a number as is,
    anything else as a string literal, an open end as MINVALUE / MAXVALUE."""
    if value is None:
        return "MINVALUE" if low else "MAXVALUE"
    if _NUMBER.match(value):
        return value
    return db2_str(value)


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


def method_lines(a: MoveDataPartition) -> list[str]:
    detached, copy = staging_names(a)
    table = f"{db2_ident(a.schema)}.{db2_ident(a.table)}"
    return [
        f"table space {a.tablespace} is shared with other partitions: detach / copy / attach (online for the",
        "other partitions; this partition's rows are invisible from the detach until SET INTEGRITY ends):",
        f"  1. table space {db2_ident(a.target_tablespace or '')} on the target storage group, created if missing like the source",
        f"  2. ALTER TABLE {table} DETACH PARTITION {db2_ident(a.partition_name or '')} INTO {db2_ident(a.schema)}.{db2_ident(detached)}",
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
        f"no materialized query table or staging table depends on {a.schema}.{a.table} (detached dependents)",
        "SYSCAT.TABDEP AS D JOIN SYSCAT.TABLES AS T ON T.TABSCHEMA = D.TABSCHEMA AND T.TABNAME = D.TABNAME",
        "dependent MQT/staging table: unsupported, review",
        where=f"D.BSCHEMA = {ls} AND D.BNAME = {lt} AND D.BTYPE = 'T' AND T.TYPE IN ('S', 'U')",
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
    ensure_group(s, a.target, "step 1")
    factor = 1 + options.headroom_pct / 100
    s.check(
        f"the paths of {a.target.name} have room for the partition ({options.headroom_pct:g} % headroom; "
        "size from the last RUNSTATS, FPAGES)",
        "SYSIBM.SYSDUMMY1",
        f"not enough free space in {a.target.name}",
        where=(
            f"NOT {in_target} AND (SELECT MIN(P.STO_PATH_FREE_SIZE) * COUNT(*) FROM TABLE(ADMIN_GET_STORAGE_PATHS("
            f"{db2_str(a.target.name)}, -1)) AS P) < (SELECT COALESCE(SUM(GREATEST(D.FPAGES, 0) * T.PAGESIZE), 0) "
            f"FROM SYSCAT.DATAPARTITIONS AS D JOIN SYSCAT.TABLESPACES AS T ON T.TBSPACEID = D.TBSPACEID "
            f"WHERE D.TABSCHEMA = {ls} AND D.TABNAME = {lt} AND D.DATAPARTITIONNAME = {lp}) * {factor:.2f}"
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
        f"  ELSEIF EXISTS (SELECT 1 FROM {part} AND TBSPACEID = {tsid.format(src)}) THEN\n"
        f"    {s.say(f'step 3: detaching partition {db2_ident(a.partition_name)}')}\n"
        f"    EXECUTE IMMEDIATE {db2_str(detach)};\n"
        "  ELSE\n"
        f"    {s.say('step 3: already done: the partition is detached or attached from the copy')}\n"
        "  END IF;\n"
        "END"
    )
    s.check(
        f"the detach of {a.partition_name} has finished: the detached table {detached} is a regular table and "
        "the partition is no longer listed as detaching (SYSCAT.DATAPARTITIONS.STATUS D, L or I)",
        "SYSIBM.SYSDUMMY1",
        "detach still in progress: wait, run again",
        where=(
            f"EXISTS (SELECT 1 FROM SYSCAT.TABLES WHERE TABSCHEMA = {ls} AND TABNAME = {ldet} AND TYPE <> 'T') "
            f"OR EXISTS (SELECT 1 FROM {part} AND STATUS IN ('D', 'L', 'I'))"
        ),
    )
    create_copy = f"CREATE TABLE {q_copy} LIKE {q_det} IN {db2_ident(a.target_tablespace)}"
    insert = f"INSERT INTO {q_copy} SELECT * FROM {q_det}"
    delete = f"DELETE FROM {q_copy}"
    s.comment(
        f"step 4: copy the detached rows into {copy} in {a.target_tablespace} (again from the start after a stop)"
    )
    s.statement(
        "BEGIN\n"
        f"  IF {table_exists(ldet)} AND NOT EXISTS (SELECT 1 FROM {part}) THEN\n"
        f"    IF NOT {table_exists(lcopy)} THEN\n"
        f"      EXECUTE IMMEDIATE {db2_str(create_copy)};\n"
        "    END IF;\n"
        f"    {s.say(f'step 4: copying the rows into {db2_ident(copy)}')}\n"
        f"    EXECUTE IMMEDIATE {db2_str(delete)};\n"
        f"    EXECUTE IMMEDIATE {db2_str(insert)};\n"
        "  ELSE\n"
        f"    {s.say('step 4: nothing to copy')}\n"
        "  END IF;\n"
        "END"
    )
    s.comment(f"step 5: attach {copy} as partition {a.partition_name} with its original range")
    s.statement(
        "BEGIN\n"
        f"  IF {table_exists(lcopy)} AND NOT EXISTS (SELECT 1 FROM {part}) THEN\n"
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
    return [
        f"table space {db2_ident(a.tablespace)} on storage group {db2_ident(a.target.name)}, created if missing like {db2_ident(a.like_tablespace)};",
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
        where=f"NOT EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = {ls} AND TABNAME = {lt})",
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
        f"no other partition of {a.schema}.{a.table} covers {low} .. {high} (this is the leading edge)",
        "SYSIBM.SYSDUMMY1",
        "partition name taken by another range",
        where=f"EXISTS (SELECT 1 FROM {part} AND (LOWVALUE <> {db2_str(low)} OR HIGHVALUE <> {db2_str(high)}))",
    )
    s.check(
        f"table space {a.tablespace}, if it exists, uses storage group {a.target.name} and matches {a.like_tablespace}",
        f"SYSCAT.TABLESPACES AS N JOIN SYSCAT.TABLESPACES AS O ON O.TBSPACE = {db2_str(a.like_tablespace)}",
        f"{a.tablespace[:20]} does not match",
        where=(
            f"N.TBSPACE = {db2_str(a.tablespace)} AND (COALESCE(N.SGNAME, '') <> {db2_str(a.target.name)} OR N.PAGESIZE <> O.PAGESIZE "
            "OR N.EXTENTSIZE <> O.EXTENTSIZE OR N.DATATYPE <> O.DATATYPE)"
        ),
    )
    ensure_group(s, a.target, "step 1")
    create_tablespace_like(s, a.tablespace, a.like_tablespace, a.target.name, "step 2")
    add = (
        f"ALTER TABLE {table} ADD PARTITION {db2_ident(a.partition_name)} "
        f"STARTING FROM ({low}){_inclusive(a.low_inclusive, a.range_low)} "
        f"ENDING AT ({high}){_inclusive(a.high_inclusive, a.range_high)} IN {db2_ident(a.tablespace)}"
    )
    s.comment(f"step 3: add partition {a.partition_name} in {a.tablespace}")
    s.statement(
        "BEGIN\n"
        f"  IF EXISTS (SELECT 1 FROM {part}) THEN\n"
        f"    {s.say(f'step 3: already done: partition {db2_ident(a.partition_name)} exists')}\n"
        "  ELSE\n"
        f"    {s.say(f'step 3: adding partition {db2_ident(a.partition_name)} in {db2_ident(a.tablespace)}')}\n"
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
