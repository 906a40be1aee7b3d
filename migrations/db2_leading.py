"""DB2: the ILM leading edge - ADD PARTITION for the next period, empty, on the hot storage group.

The new range must overlap no partition (SYSCAT.DATAPARTITIONS, with the inclusive flags); its
table space is the newest partition's, or a new one created like it. The rollback detaches the
new partition into a kept table, only while no row has its key in the range (else inserts into
that range would fail with SQL0327N once the partition is gone).
"""

from __future__ import annotations

import hashlib
from datetime import datetime

from migrations.db2_frame import (
    BACKUP_ADD_DETACH,
    ROUTINES,
    Db2Script,
    compound,
    create_tablespace_like,
    ensure_group,
    start,
    where_sg,
)
from migrations.db2_ranges import (
    RANGE_DECLARE,
    bound_sql,
    count_into,
    inclusive,
    overlap_sql,
    range_where,
    references_check,
    single_key_check,
)
from migrations.header import Operations
from migrations.plan import AddDataPartition, Move, Options
from migrations.quoting import db2_ident, db2_str

AUTHORITIES = (
    "Needs DBADM granted WITH DATAACCESS, the default (ALTER TABLE ... ADD / DETACH PARTITION, the "
    "emptiness check reads the table), plus SYSCTRL or SYSADM when the table space or storage group must "
    "be created (CREATE TABLESPACE; a new storage group), " + ROUTINES.format(extra="")
)
OPERATIONS = Operations(
    duration="seconds: catalog changes only (the partition is empty)",
    log_volume="a few catalog log records",
    blocking=(
        "ADD / DETACH PARTITION wait for queries holding locks on the table and invalidate static packages "
        "on it; a busy table may make them wait until LOCKTIMEOUT"
    ),
    backups=(
        "the script stops before any change while a BACKUP of the database runs (run it again afterwards); otherwise no effect on backup jobs; a new table space is in the next backup"
    ),
    abort="interrupt the CLP (Ctrl-C): the running statement rolls back; the script is safe to run again",
    recover="run the script again: every step checks first and says 'already done'",
)


def render_add_partition(
    move: Move, a: AddDataPartition, direction: str, forward: Move, options: Options, at: datetime
) -> str:
    table = f"{db2_ident(a.schema)}.{db2_ident(a.table)}"
    verb = "detach (kept as a table) the partition" if a.remove else "add the partition"
    what = f"{table}: {verb} {db2_ident(a.partition_name)} ({a.range_low or 'MINVALUE'} .. {a.range_high or 'MAXVALUE'})"
    s = start(
        move,
        direction,
        forward,
        options,
        at,
        what=what,
        source="(new)",
        destination=where_sg(a.target),
        method=add_method_lines(a),
        limits=["Not supported in pureScale (checked).", AUTHORITIES],
        operations=OPERATIONS,
        backup=BACKUP_ADD_DETACH,
        unit=a.remove,
    )
    add_steps(s, a, options)
    return s.text()


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


def _names(a: AddDataPartition) -> tuple[str, str, str, str, str]:
    """The schema, table and partition as literals, the table quoted, and the partition's row of
    SYSCAT.DATAPARTITIONS (a FROM ... WHERE tail)."""
    ls, lt, lp = db2_str(a.schema), db2_str(a.table), db2_str(a.partition_name)
    table = f"{db2_ident(a.schema)}.{db2_ident(a.table)}"
    part = f"SYSCAT.DATAPARTITIONS WHERE TABSCHEMA = {ls} AND TABNAME = {lt} AND DATAPARTITIONNAME = {lp}"
    return ls, lt, lp, table, part


def add_steps(s: Db2Script, a: AddDataPartition, options: Options) -> None:
    """The leading edge: ADD PARTITION on the hot storage group (rollback: DETACH it, kept)."""
    ls, lt = db2_str(a.schema), db2_str(a.table)
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
        _detach_empty(s, a, low, high)
        return
    _add_checks(s, a, low, high)
    _add(s, a, low, high)


def _detach_empty(s: Db2Script, a: AddDataPartition, low: str, high: str) -> None:
    """The rollback: DETACH the new partition into a kept table, only while it is empty. The
    check before it stops early (no lock taken) when rows are there; the DETACH itself runs in
    one unit of work with the emptiness counted again under an exclusive lock on the table, so no
    row can arrive between the count and the DETACH (the T-SQL rollback does the same under
    XACT_ABORT with TABLOCKX; issue #30 N7: the count and the DETACH were two units of work)."""
    ls, lt, lp, table, part = _names(a)
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
    count = [*range_where(ls, lt, part), *count_into("v_rows", probe)]
    s.comment(s.checks[-1])
    s.statement(
        compound(
            [
                *RANGE_DECLARE,
                f"IF EXISTS (SELECT 1 FROM {part}) THEN",
                *[f"  {line}" for line in count],
                "END IF;",
                "IF v_rows > 0 THEN",
                f"  {s.signal(empty)}",
                "END IF;",
            ]
        )
    )
    s.unit(
        f"step 1: detach partition {a.partition_name} into {removed_name(a)} (kept), in one unit of work: "
        f"LOCK TABLE {a.schema}.{a.table} IN EXCLUSIVE MODE, count its rows again, DETACH only when it holds none, COMMIT",
        [
            f"LOCK TABLE {table} IN EXCLUSIVE MODE",
            compound(
                [
                    *RANGE_DECLARE,
                    f"IF EXISTS (SELECT 1 FROM {part}) THEN",
                    *[f"  {line}" for line in count],
                    "  IF v_rows = 0 THEN",
                    f"    {s.say(f'step 1: detaching partition {db2_ident(a.partition_name)}; its rows stay in {db2_ident(removed_name(a))}')}",
                    f"    EXECUTE IMMEDIATE {db2_str(detach)};",
                    "  ELSE",
                    f"    {s.say('step 1: not detached: the partition holds rows (counted again under the table lock)')}",
                    "  END IF;",
                    "ELSE",
                    f"  {s.say(f'step 1: already done: no partition {db2_ident(a.partition_name)}')}",
                    "END IF;",
                ]
            ),
        ],
    )
    s.check(
        f"post-check: {a.schema}.{a.table} has no partition {a.partition_name} (else it held rows when counted under "
        "the lock: see step 1's message; nothing was changed)",
        "SYSCAT.DATAPARTITIONS",
        "post-check: the partition is still there",
        where=f"TABSCHEMA = {ls} AND TABNAME = {lt} AND DATAPARTITIONNAME = {lp} AND STATUS = ''",
        post=True,
    )
    s.window(
        "BEGIN\n"
        f"  {s.say(f'finished: partition {db2_ident(a.partition_name)} is detached into {db2_ident(removed_name(a))}')}\n"
        "END"
    )


def _add_checks(s: Db2Script, a: AddDataPartition, low: str, high: str) -> None:
    """The name free or already this range, no overlap, the table space on the hot group."""
    ls, lt, lp, _, part = _names(a)
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


def _add(s: Db2Script, a: AddDataPartition, low: str, high: str) -> None:
    """The storage group and table space if missing, ADD PARTITION, and the post-check."""
    table, part = _names(a)[3:]
    ensure_group(s, a.target, "step 1")
    number = 2
    if a.tablespace != a.like_tablespace:  # else it exists (checked above): nothing to create
        create_tablespace_like(s, a.tablespace, a.like_tablespace, a.target.name, f"step {number}")
        number += 1
    step = f"step {number}"
    add = (
        f"ALTER TABLE {table} ADD PARTITION {db2_ident(a.partition_name)} "
        f"STARTING FROM ({low}){inclusive(a.low_inclusive, a.range_low)} "
        f"ENDING AT ({high}){inclusive(a.high_inclusive, a.range_high)} IN {db2_ident(a.tablespace)}"
    )
    s.change(
        f"{step}: add partition {a.partition_name} in {a.tablespace}",
        "BEGIN\n"
        f"  IF EXISTS (SELECT 1 FROM {part}) THEN\n"
        f"    {s.say(f'{step}: already done: partition {db2_ident(a.partition_name)} exists')}\n"
        "  ELSE\n"
        f"    {s.say(f'{step}: adding partition {db2_ident(a.partition_name)} in {db2_ident(a.tablespace)}')}\n"
        f"    EXECUTE IMMEDIATE {db2_str(add)};\n"
        "  END IF;\n"
        "END",
    )
    s.check(
        f"post-check: partition {a.partition_name} is in table space {a.tablespace}",
        "SYSIBM.SYSDUMMY1",
        f"post-check: partition not in {a.tablespace[:20]}",
        where=(
            f"NOT EXISTS (SELECT 1 FROM {part} AND TBSPACEID = (SELECT TBSPACEID FROM SYSCAT.TABLESPACES "
            f"WHERE TBSPACE = {db2_str(a.tablespace)}))"
        ),
        post=True,
    )
    s.window(
        "BEGIN\n"
        f"  {s.say(f'finished: {table} has partition {db2_ident(a.partition_name)} in {db2_ident(a.tablespace)}')}\n"
        "END"
    )
