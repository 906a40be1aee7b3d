"""Every generated script parses: T-SQL batch by batch with sqlfluff's `tsql` dialect; DB2
SELECT/VALUES/CALL statements with sqlfluff's `db2` dialect, the rest (CLP commands, compound
statements, CREATE STOGROUP / ALTER TABLESPACE) by our own structural checks.

sqlfluff 4.5 cannot parse everything we write. The gaps are listed here, each with a minimal
reproduction (so an upgrade that fixes one fails `test_known_gaps_still_exist` and the entry can
go) and a rewrite that removes just that construct: a batch that fails must parse once its gaps
are rewritten, so a gap never hides a real syntax error.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import pytest
import sqlfluff
from sqlfluff.api.simple import APIParsingError

from tests.migrations.golden_cases import CASES, render_case
from tests.migrations.sqltokens import db2_statements, db2_tokens, tsql_batches

BRACKET = r"\[(?:[^\]]|\]\])*\]"


@dataclass(frozen=True)
class Gap:
    what: str
    reproduce: str
    rewrite: Callable[[str], str]


KNOWN_TSQL_GAPS = (
    Gap(
        "ALTER DATABASE ... REMOVE FILE: internal error (AttributeError) in sqlfluff's tsql grammar",
        "ALTER DATABASE [Sales] REMOVE FILE [f1];",
        lambda b: re.sub(rf"ALTER DATABASE {BRACKET} REMOVE FILE {BRACKET};", "PRINT 1;", b),
    ),
    Gap(
        "bracketed identifiers with an escaped ] (]]): the tsql lexer ends the identifier at the first ]",
        "SELECT 1 AS [a]]b];",
        lambda b: re.sub(BRACKET, lambda m: "[x]" if "]]" in m.group(0)[1:-1] else m.group(0), b),
    ),
    Gap(
        "the column name `precision` unbracketed is read as a keyword (we write pp.[precision])",
        "SELECT CAST(pp.precision AS int) FROM sys.partition_parameters AS pp;",
        lambda b: b,
    ),
)


def _parses(sql: str, dialect: str) -> bool:
    try:
        sqlfluff.parse(sql, dialect=dialect)
    except APIParsingError:
        return False
    except Exception:  # sqlfluff internal errors (e.g. REMOVE FILE)
        return False
    return True


@pytest.mark.parametrize("gap", KNOWN_TSQL_GAPS, ids=[g.what[:40] for g in KNOWN_TSQL_GAPS])
def test_known_gaps_still_exist(gap: Gap) -> None:
    assert not _parses(gap.reproduce, "tsql"), f"sqlfluff now parses this; remove the gap: {gap.what}"


TSQL_CASES = [c for c in CASES if c.dialect == "tsql"]
DB2_CASES = [c for c in CASES if c.dialect == "db2"]


@pytest.mark.parametrize("case", TSQL_CASES, ids=[c.name for c in TSQL_CASES])
def test_tsql_batches_parse(case: object) -> None:
    for name, text in render_case(case).items():  # type: ignore[arg-type]
        for i, batch in enumerate(tsql_batches(text)):
            if _parses(batch, "tsql"):
                continue
            rewritten = batch
            for gap in KNOWN_TSQL_GAPS:
                rewritten = gap.rewrite(rewritten)
            assert rewritten != batch, (
                f"{name} batch {i} does not parse and matches no known gap:\n{batch[:800]}"
            )
            assert _parses(rewritten, "tsql"), (
                f"{name} batch {i} still fails with its known gaps rewritten:\n{rewritten[:800]}"
            )


# ---------------------------------------------------------------------------------------------
# DB2

IDENT = r'"(?:[^"]|"")+"'
STR = r"'(?:[^']|'')*'"
NUM = r"\d+(?:\.\d+)?"
DDL = [
    re.compile(
        rf"CREATE STOGROUP {IDENT} ON {STR}(?:, {STR})*(?: OVERHEAD {NUM})?(?: DEVICE READ RATE {NUM})?(?: DATA TAG (?:[1-9]|NONE))?"
    ),
    re.compile(rf"ALTER TABLESPACE {IDENT} USING STOGROUP {IDENT}"),
    re.compile(rf"ALTER TABLESPACE {IDENT} MANAGED BY AUTOMATIC STORAGE USING STOGROUP {IDENT}"),
    re.compile(rf"ALTER TABLESPACE {IDENT} REBALANCE"),
    # detach / copy / attach of a data partition (migrations/db2_partition.py)
    re.compile(rf"ALTER TABLE {IDENT}\.{IDENT} DETACH PARTITION {IDENT} INTO {IDENT}\.{IDENT}"),
    re.compile(rf"CREATE TABLE {IDENT}\.{IDENT} LIKE {IDENT}\.{IDENT} INCLUDING COLUMN DEFAULTS IN {IDENT}"),
    # the copy table takes the table's value compression and append mode (LIKE leaves them out)
    re.compile(rf"ALTER TABLE {IDENT}\.{IDENT} ACTIVATE VALUE COMPRESSION"),
    re.compile(rf"ALTER TABLE {IDENT}\.{IDENT} APPEND ON"),
    re.compile(
        rf"ALTER TABLE {IDENT}\.{IDENT} ATTACH PARTITION {IDENT} STARTING FROM \((?:MINVALUE|{STR}|-?{NUM})\)"
        rf"(?: INCLUSIVE| EXCLUSIVE)? ENDING AT \((?:MAXVALUE|{STR}|-?{NUM})\)(?: INCLUSIVE| EXCLUSIVE)? "
        rf"FROM {IDENT}\.{IDENT}"
    ),
    re.compile(rf"SET INTEGRITY FOR {IDENT}\.{IDENT} ALLOW WRITE ACCESS IMMEDIATE CHECKED"),
    # a system temporary table space is replaced, not re-pointed (migrations/db2_partition.temp_steps)
    re.compile(rf"DROP TABLESPACE {IDENT}"),
    # the ILM leading edge (migrations/db2_partition.add_steps)
    re.compile(
        rf"ALTER TABLE {IDENT}\.{IDENT} ADD PARTITION {IDENT} STARTING FROM \((?:MINVALUE|{STR}|-?{NUM})\)"
        rf"(?: INCLUSIVE| EXCLUSIVE)? ENDING AT \((?:MAXVALUE|{STR}|-?{NUM})\)(?: INCLUSIVE| EXCLUSIVE)? IN {IDENT}"
    ),
]
# payloads sqlfluff's db2 dialect parses: checked by sqlfluff, not by a pattern
SQLFLUFF_DDL = [
    re.compile(rf"DELETE FROM {IDENT}\.{IDENT}"),
    re.compile(rf"INSERT INTO {IDENT}\.{IDENT} SELECT \* FROM {IDENT}\.{IDENT}"),
    re.compile(rf"DROP TABLE {IDENT}\.{IDENT}"),
]
# the one statement built at run time (the target table space takes the source's page size,
# extent size, type and buffer pool from the catalog): its text outside the variables is fixed
RUNTIME_SQL = re.compile(
    r"SET v_sql = (?:'CREATE ' \|\| CASE WHEN v_type = 'L' THEN 'LARGE' ELSE 'REGULAR' END"
    r"|'CREATE ' \|\| CASE WHEN v_type = 'U' THEN 'USER' ELSE 'SYSTEM' END \|\| ' TEMPORARY') \|\| "
    rf"(?P<a>{STR}) \|\| VARCHAR\(v_page\) \|\| (?P<b>{STR}) \|\| VARCHAR\(v_extent\) \|\| "
    r"' BUFFERPOOL \"' \|\| REPLACE\(v_bp, '\"', '\"\"'\) \|\| '\"';"
)
RUNTIME_PARTS = (
    re.compile(rf" TABLESPACE {IDENT} PAGESIZE "),
    re.compile(rf" MANAGED BY AUTOMATIC STORAGE USING STOGROUP {IDENT} EXTENTSIZE "),
)
# the other statement built at run time: USE of a user temporary table space, granted on its
# replacement to each grantee of the old one (migrations/db2_partition.temp_steps); the grantee
# is the only run-time text, delimited with '"' doubled
RUNTIME_GRANT = re.compile(
    rf"EXECUTE IMMEDIATE (?P<a>{STR}) \|\| CASE WHEN R.GRANTEETYPE = 'G' AND R.GRANTEE = 'PUBLIC' THEN 'PUBLIC' ELSE "
    r"CASE R.GRANTEETYPE WHEN 'U' THEN 'USER ' WHEN 'G' THEN 'GROUP ' ELSE 'ROLE ' END \|\| "
    r"'\"' \|\| REPLACE\(RTRIM\(R.GRANTEE\), '\"', '\"\"'\) \|\| '\"' END \|\| "
    r"CASE WHEN R.USEAUTH = 'G' THEN ' WITH GRANT OPTION' ELSE '' END;"
)
RUNTIME_GRANT_PART = re.compile(rf"GRANT USE OF TABLESPACE {IDENT} TO ")
KNOWN_DB2_GAPS = (
    'DROP TABLESPACE "X"',
    'CREATE SYSTEM TEMPORARY TABLESPACE "X" PAGESIZE 8192 MANAGED BY AUTOMATIC STORAGE USING STOGROUP "S" '
    'EXTENTSIZE 32 BUFFERPOOL "B"',
    'ALTER TABLE "S"."T" DETACH PARTITION "P" INTO "S"."X"',
    'CREATE TABLE "S"."C" LIKE "S"."X" IN "TS"',
    'ALTER TABLE "S"."T" ATTACH PARTITION "P" STARTING FROM (\'2024-01-01\') INCLUSIVE ENDING AT (\'2024-04-01\') '
    'EXCLUSIVE FROM "S"."C"',
    'SET INTEGRITY FOR "S"."T" ALLOW WRITE ACCESS IMMEDIATE CHECKED',
    'ALTER TABLE "S"."T" ADD PARTITION "P" STARTING FROM (\'2024-07-01\') INCLUSIVE ENDING AT (\'2024-10-01\') '
    'EXCLUSIVE IN "TS"',
    'CREATE REGULAR TABLESPACE "X" PAGESIZE 8192 MANAGED BY AUTOMATIC STORAGE USING STOGROUP "SG" EXTENTSIZE 32 '
    'BUFFERPOOL "BP"',
    'CREATE USER TEMPORARY TABLESPACE "X" PAGESIZE 8192 MANAGED BY AUTOMATIC STORAGE USING STOGROUP "S" '
    'EXTENTSIZE 32 BUFFERPOOL "B"',
    'GRANT USE OF TABLESPACE "X" TO USER "U"',
    'GRANT USE OF TABLESPACE "X" TO GROUP "G" WITH GRANT OPTION',
)


@pytest.mark.parametrize("sql", KNOWN_DB2_GAPS, ids=[g[:40] for g in KNOWN_DB2_GAPS])
def test_known_db2_gaps_still_exist(sql: str) -> None:
    """sqlfluff 4.5's db2 dialect cannot parse these, so check_compound matches them by pattern."""
    assert not _parses(sql, "db2"), f"sqlfluff now parses this; check it with sqlfluff instead: {sql}"


CLP = [
    re.compile(r"UPDATE COMMAND OPTIONS USING C ON S ON"),
    re.compile(r"SET SERVEROUTPUT ON"),
    re.compile(r"CONNECT TO [A-Za-z#$][A-Za-z0-9#$_]{0,7}"),
    re.compile(r"CONNECT RESET"),
    # the session rules of issue #30 (test_db2_session_rules.py): the lock timeout, a unit of work
    # with autocommit off and its COMMIT, stop-on-error off around a step the script repairs
    re.compile(r"SET CURRENT LOCK TIMEOUT = \d+"),
    re.compile(r"UPDATE COMMAND OPTIONS USING [CS] (?:ON|OFF)"),
    re.compile(r"COMMIT"),
    re.compile(rf"LOCK TABLE {IDENT}\.{IDENT} IN EXCLUSIVE MODE"),
]
# the row compression of the copy table, its mode read from the catalog at run time
RUNTIME_COMPRESS = re.compile(
    rf"EXECUTE IMMEDIATE (?P<a>{STR}) \|\| CASE WHEN v_mode = 'A' THEN 'ADAPTIVE' ELSE 'STATIC' END;"
)
RUNTIME_COMPRESS_PART = re.compile(rf"ALTER TABLE {IDENT}\.{IDENT} COMPRESS YES ")


# a row count run as dynamic SQL (migrations/db2_partition._count): a fixed SELECT COUNT_BIG(*)
# literal, optionally around the partition's range predicate built from the catalog (v_where)
DYNAMIC_COUNT = re.compile(rf"SET v_sql = (?P<a>{STR})(?: \|\| v_where(?: \|\| (?P<b>{STR}))?)?;")
CURSOR_STEPS = {
    "PREPARE s1 FROM v_sql;",
    "OPEN c1;",
    "FETCH c1 INTO v_rows;",
    "FETCH c1 INTO v_other;",
    "CLOSE c1;",
}
SIGNAL = re.compile(rf"SIGNAL SQLSTATE '75001' SET MESSAGE_TEXT = {STR};")


def _range_where_lines() -> set[str]:
    """The two fixed `SET v_where` lines the generator writes (the predicate is built from
    catalog text at run time; only these forms may build it)."""
    from migrations.db2_ranges import range_where

    return {line.strip() for line in range_where("'S'", "'T'", "X") if line.strip().startswith("SET v_where")}


def check_compound(stmt: str) -> None:
    """BEGIN … END with balanced IF/END IF, `;`-terminated inner statements, CALLs that parse,
    and EXECUTE IMMEDIATE payloads that match the DDL grammar."""
    assert stmt.startswith("BEGIN\n") and stmt.endswith("\nEND"), stmt[:80]
    body = stmt[len("BEGIN\n") : -len("\nEND")]
    code = "".join(
        t.text if t.kind == "code" else ("X" if t.kind != "comment" else "") for t in db2_tokens(body)
    )
    opens = len(re.findall(r"\bIF\b", code)) - len(re.findall(r"\bEND IF\b", code))
    assert opens == len(re.findall(r"\bEND IF\b", code)), f"unbalanced IF in {stmt[:120]}"
    runtime_sql = False
    counting = False
    for line in body.split("\n"):
        s = line.strip()
        if not s or re.match(r"^(IF|ELSEIF|ELSE|AND|OR)\b", s) or s.endswith(" THEN"):
            continue
        loop = re.fullmatch(r"FOR R AS (SELECT .*) DO", s)
        if loop:  # a cursor loop over a catalog query: the query must parse
            assert _parses(loop.group(1), "db2"), s
            continue
        wait = re.fullmatch(r"WHILE v_waited < \d+ AND \((.*)\) DO", s)
        if wait:  # the wait for an asynchronous detach: its catalog condition must parse
            assert _parses(f"SELECT 1 FROM SYSIBM.SYSDUMMY1 WHERE {wait.group(1)}", "db2"), s
            continue
        if s == "END WHILE;" or re.fullmatch(r"SET v_waited = v_waited \+ \d+;", s):
            continue
        if re.fullmatch(rf"SET v_status = DBMS_PIPE\.RECEIVE_MESSAGE\({STR}, \d+\);", s):
            continue  # the sleep: a receive on a pipe nobody sends to, with a timeout
        assert s.endswith(";"), f"inner statement without ';': {s[:80]}"
        if s.startswith("CALL "):
            assert _parses(s[:-1], "db2"), s
        elif s == "EXECUTE IMMEDIATE v_sql;":
            assert runtime_sql, "EXECUTE IMMEDIATE v_sql without the fixed SET v_sql"
        elif s.startswith("SET v_where = "):
            assert s in _range_where_lines(), f"range predicate not in the fixed form: {s[:120]}"
        elif s in CURSOR_STEPS:
            if s.startswith("PREPARE"):
                assert counting, "PREPARE without the fixed dynamic count before it"
                counting = False
        elif (count := DYNAMIC_COUNT.fullmatch(s)) is not None:
            # with the range predicate replaced by a constant one, the count must parse
            sql = count.group("a")[1:-1].replace("''", "'")
            if "v_where" in s:
                sql += "1 = 1" + (count.group("b") or "''")[1:-1].replace("''", "'")
            assert sql.startswith("SELECT COUNT_BIG(*) FROM "), s
            assert _parses(sql, "db2"), f"dynamic count does not parse: {sql}"
            counting = True
        elif SIGNAL.fullmatch(s):
            continue
        elif s.startswith("SET v_sql = "):
            m = RUNTIME_SQL.fullmatch(s)
            assert m, f"run-time statement not in the fixed form: {s[:120]}"
            for part, pattern in zip((m.group("a"), m.group("b")), RUNTIME_PARTS, strict=True):
                assert pattern.fullmatch(part[1:-1].replace("''", "'")), part
            runtime_sql = True
        elif compress := RUNTIME_COMPRESS.fullmatch(s):
            assert RUNTIME_COMPRESS_PART.fullmatch(compress.group("a")[1:-1].replace("''", "'")), s
        elif grant := RUNTIME_GRANT.fullmatch(s):
            assert RUNTIME_GRANT_PART.fullmatch(grant.group("a")[1:-1].replace("''", "'")), s
        elif s.startswith("EXECUTE IMMEDIATE "):
            m = re.fullmatch(rf"EXECUTE IMMEDIATE ({STR});", s)
            assert m, s
            payload = m.group(1)[1:-1].replace("''", "'")
            if any(p.fullmatch(payload) for p in SQLFLUFF_DDL):
                assert _parses(payload, "db2"), payload
            else:
                assert any(p.fullmatch(payload) for p in DDL), (
                    f"EXECUTE IMMEDIATE payload not in the DDL grammar: {payload}"
                )
        elif s.startswith(("DECLARE ", "SELECT ", "END IF")) or s == "END FOR;":
            continue
        else:
            raise AssertionError(f"unexpected statement in a compound: {s[:80]}")


@pytest.mark.parametrize("case", DB2_CASES, ids=[c.name for c in DB2_CASES])
def test_db2_statements_parse_or_pass_structural_checks(case: object) -> None:
    for name, text in render_case(case).items():  # type: ignore[arg-type]
        kinds: set[str] = set()
        for stmt in db2_statements(text):
            first = stmt.split()[0].upper()
            if first in ("SELECT", "VALUES", "CALL"):
                assert _parses(stmt, "db2"), f"{name}: sqlfluff db2 cannot parse {stmt[:200]}"
                kinds.add("sql")
            elif first == "BEGIN":
                check_compound(stmt)
                kinds.add("compound")
            else:
                assert any(p.fullmatch(stmt) for p in CLP), f"{name}: unexpected statement {stmt[:120]}"
                kinds.add("clp")
        assert kinds == {"sql", "compound", "clp"}, name


def test_structural_checks_catch_bad_ddl() -> None:
    with pytest.raises(AssertionError):
        check_compound("BEGIN\n  EXECUTE IMMEDIATE 'DROP STOGROUP \"X\"';\nEND")
    with pytest.raises(AssertionError):
        check_compound(
            'BEGIN\n  EXECUTE IMMEDIATE \'ALTER TABLESPACE "X" USING STOGROUP "S"; DROP TABLE T\';\nEND'
        )
    with pytest.raises(AssertionError):
        check_compound("BEGIN\n  IF 1 = 1 THEN\n    CALL P();\nEND")
    check_compound(
        "BEGIN\n  IF 1 = 1 THEN\n    EXECUTE IMMEDIATE 'ALTER TABLESPACE \"X\" REBALANCE';\n  END IF;\nEND"
    )
    with pytest.raises(AssertionError):
        check_compound("BEGIN\n  EXECUTE IMMEDIATE v_sql;\nEND")
    with pytest.raises(AssertionError):  # DETACH into an unqualified table: not the generated form
        check_compound('BEGIN\n  EXECUTE IMMEDIATE \'ALTER TABLE "S"."T" DETACH PARTITION "P" INTO X\';\nEND')
    with pytest.raises(AssertionError):  # a payload sqlfluff parses is still pattern-checked first
        check_compound("BEGIN\n  EXECUTE IMMEDIATE 'DELETE FROM T WHERE 1 = 1; DROP TABLE U';\nEND")


def test_structural_checks_catch_a_bad_grant_loop() -> None:
    good = (
        "BEGIN\n  FOR R AS SELECT A.GRANTEE FROM SYSCAT.TBSPACEAUTH AS A WHERE A.TBSPACE = 'T' DO\n"
        "    EXECUTE IMMEDIATE 'GRANT USE OF TABLESPACE \"X\" TO ' || CASE WHEN R.GRANTEETYPE = 'G' AND "
        "R.GRANTEE = 'PUBLIC' THEN 'PUBLIC' ELSE CASE R.GRANTEETYPE WHEN 'U' THEN 'USER ' WHEN 'G' THEN 'GROUP ' "
        "ELSE 'ROLE ' END || '\"' || REPLACE(RTRIM(R.GRANTEE), '\"', '\"\"') || '\"' END || CASE WHEN "
        "R.USEAUTH = 'G' THEN ' WITH GRANT OPTION' ELSE '' END;\n  END FOR;\nEND"
    )
    check_compound(good)
    with pytest.raises(AssertionError):  # anything but GRANT USE in the fixed part
        check_compound(good.replace("GRANT USE OF TABLESPACE", "DROP TABLESPACE"))
    with pytest.raises(AssertionError):  # the grantee not delimited
        check_compound(good.replace("REPLACE(RTRIM(R.GRANTEE), '\"', '\"\"')", "R.GRANTEE"))
    with pytest.raises(AssertionError):  # a loop query that does not parse
        check_compound(good.replace("FROM SYSCAT.TBSPACEAUTH AS A WHERE", "FROM WHERE"))
