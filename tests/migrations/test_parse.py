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
]
CLP = [
    re.compile(r"UPDATE COMMAND OPTIONS USING S ON"),
    re.compile(r"SET SERVEROUTPUT ON"),
    re.compile(r"CONNECT TO [A-Za-z#$][A-Za-z0-9#$_]{0,7}"),
    re.compile(r"CONNECT RESET"),
]


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
    for line in body.split("\n"):
        s = line.strip()
        if not s or re.match(r"^(IF|ELSEIF|ELSE|AND|OR)\b", s) or s.endswith(" THEN"):
            continue
        assert s.endswith(";"), f"inner statement without ';': {s[:80]}"
        if s.startswith("CALL "):
            assert _parses(s[:-1], "db2"), s
        elif s.startswith("EXECUTE IMMEDIATE "):
            m = re.fullmatch(rf"EXECUTE IMMEDIATE ({STR});", s)
            assert m, s
            payload = m.group(1)[1:-1].replace("''", "'")
            assert any(p.fullmatch(payload) for p in DDL), (
                f"EXECUTE IMMEDIATE payload not in the DDL grammar: {payload}"
            )
        elif s.startswith(("DECLARE ", "SELECT ", "END IF")):
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
        check_compound("BEGIN\n  EXECUTE IMMEDIATE 'DROP TABLESPACE \"X\"';\nEND")
    with pytest.raises(AssertionError):
        check_compound(
            'BEGIN\n  EXECUTE IMMEDIATE \'ALTER TABLESPACE "X" USING STOGROUP "S"; DROP TABLE T\';\nEND'
        )
    with pytest.raises(AssertionError):
        check_compound("BEGIN\n  IF 1 = 1 THEN\n    CALL P();\nEND")
    check_compound(
        "BEGIN\n  IF 1 = 1 THEN\n    EXECUTE IMMEDIATE 'ALTER TABLESPACE \"X\" REBALANCE';\n  END IF;\nEND"
    )
