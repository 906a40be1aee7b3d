"""DB2 partitioned tables: range bounds as SQL, which partitions a range overlaps, and the row
checks that read a partition's range from the catalog (dynamic SQL inside compound statements).

Shared by the detach / copy / attach move (db2_partition) and the ILM leading edge (db2_leading).
"""

from __future__ import annotations

import re

from migrations.db2_frame import Db2Script
from migrations.quoting import db2_str

_NUMBER = re.compile(r"^[+-]?\d+(?:\.\d+)?$")


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


def inclusive(flag: bool | None, bound: str | None) -> str:
    if bound is None or flag is None:
        return ""
    return " INCLUSIVE" if flag else " EXCLUSIVE"


def references_check(s: Db2Script, schema: str, table: str) -> None:
    """Stop before a DETACH when foreign keys reference the table: the child rows would point at
    rows that leave the table (and Db2 may refuse to detach from a parent table at all); drop or
    re-point the constraints by hand first."""
    s.check(
        f"no foreign key references {schema}.{table} (SYSCAT.REFERENCES): detaching a partition of a parent "
        "table is unsupported here; review the constraints by hand. Nothing was changed",
        "SYSCAT.REFERENCES",
        "the table is a foreign key parent: unsupported",
        where=f"REFTABSCHEMA = {db2_str(schema)} AND REFTABNAME = {db2_str(table)}",
    )


COUNT_DECLARE = [
    "DECLARE v_sql VARCHAR(8000);",
    "DECLARE v_rows BIGINT DEFAULT 0;",
    "DECLARE v_other BIGINT DEFAULT 0;",
    "DECLARE s1 STATEMENT;",
    "DECLARE c1 CURSOR FOR s1;",
]
RANGE_DECLARE = [
    "DECLARE v_key VARCHAR(1000);",
    "DECLARE v_nulls CHAR(1);",
    "DECLARE v_low VARCHAR(512);",
    "DECLARE v_lowinc CHAR(1);",
    "DECLARE v_high VARCHAR(512);",
    "DECLARE v_highinc CHAR(1);",
    "DECLARE v_where VARCHAR(4000);",
    *COUNT_DECLARE,
]


def count_into(into: str, sql: str) -> list[str]:
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


def range_where(ls: str, lt: str, part: str) -> list[str]:
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


def single_key_check(s: Db2Script, schema: str, table: str) -> None:
    """The row checks read the range of one partitioning key column; refuse the rest."""
    s.check(
        f"{schema}.{table} is partitioned on one key (the row checks read the range of one key column)",
        "SYSIBM.SYSDUMMY1",
        "partitioning key has 2+ columns: unsupported",
        where=(
            f"(SELECT COUNT(*) FROM SYSCAT.DATAPARTITIONEXPRESSION WHERE TABSCHEMA = {db2_str(schema)} "
            f"AND TABNAME = {db2_str(table)}) <> 1"
        ),
    )
