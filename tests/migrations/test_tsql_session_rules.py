"""sqlcmd's session rules, held against every T-SQL script we write (issue #30, part 2).

Each script is read the way `sqlcmd -b -i FILE` (or SSMS in SQLCMD mode) reads it: sqlcmd
commands (`:on error exit`, `:setvar`) act on the client, a line holding only `GO` ends a batch,
and each batch is sent on its own (tests/migrations/sqltokens.py splits them; quoted text and
comments are blanked before any keyword is looked at). What a batch sets with SET at its top
level lasts for the session, so it holds for every later batch. The scripts held to the rules:
every T-SQL golden file, every ILM month file (its parts joined as `tierwise ilm --scripts`
writes them) and every T-SQL script the demo fleet's advice yields once each SQL Server
recommendation is approved (app.review, as an approver does on the Recommendations page).

The rules, with Microsoft's words for each (Microsoft Learn):

1. `:on error exit` comes first ("sqlcmd utility" / "sqlcmd commands", `:On Error [ exit |
   ignore ]`: with exit, sqlcmd ends the run at an error, with an error exit code), before any
   batch, and nothing sets it to ignore. The first SQL batch is the gate: SQLCMD mode, `TW_CHECK_ONLY`
   given as 0 or 1 (no `:setvar TW_CHECK_ONLY`: "sqlcmd - Use with scripting variables", variable
   precedence, `:setvar` is above `sqlcmd -v`, so a default would override the command line), and
   the seven SET options indexed views, computed-column and filtered indexes require ("SET options
   that affect results").
2. Every check stops the script at severity 16 or more before anything changes: RAISERROR is
   used at severity 0 (progress, WITH NOWAIT) or 16 and above, never 1-15 ("RAISERROR": severities
   up to 10 are informational messages, not errors, so neither sqlcmd nor a CATCH acts on them);
   a severity 16 outside a TRY is followed by `SET NOEXEC ON` ("SET NOEXEC": later queries are
   compiled, not executed, so no later batch runs) and RETURN; one inside a TRY lands in a CATCH that stops the same way;
   and every statement that changes something comes after the check-only barrier, so every
   pre-check has run (and stopped the script when it failed) before the first change.
3. `SET XACT_ABORT ON` holds wherever a transaction spans statements ("SET XACT_ABORT": "When
   SET XACT_ABORT is ON, if a Transact-SQL statement raises a run-time error, the entire
   transaction is terminated and rolled back"): set earlier in the session, never switched off
   before the transaction; the BEGIN TRANSACTION sits in a TRY whose CATCH rolls back
   (`IF @@TRANCOUNT > 0 ROLLBACK`).
4. The check-only section (the gate, the pre-check batches and the barrier, the part a run with
   `-v TW_CHECK_ONLY=1` executes) changes nothing: no DDL, no DML on anything but the session's
   own temporary tables (#...) and table variables (@...), no DBCC, BACKUP or RESTORE, no
   procedure but sp_executesql (whose SQL is held to the same rule) and the read-only probes
   xp_fileexist, xp_fixeddrives, xp_enumerrorlogs and xp_readerrorlog; and the barrier ends a
   check-only run with NOEXEC ON and RETURN.

Nothing here runs SQL Server (none is available to these tests): the rules are checked on the
text. tests/migrations/fixtures/tsql_partition.forward.before_issue30.sql is a golden file as it
was before issue #30; test_the_rules_reject_the_scripts_before_issue_30 shows the rules reject it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from migrations import Options
from migrations.ilm import ilm_moves, month_pair
from tests.migrations.demo_approved import demo_approved_scripts
from tests.migrations.golden_cases import CASES, FIXTURES, render_case, tiers
from tests.migrations.sqltokens import tsql_skeleton, tsql_tokens

GATE = "$(TierwiseSqlcmdMode)"
BARRIER = "check-only run: every pre-check above passed"
SESSION_OPTIONS = (
    "SET ANSI_NULLS ON",
    "SET ANSI_PADDING ON",
    "SET ANSI_WARNINGS ON",
    "SET ARITHABORT ON",
    "SET CONCAT_NULL_YIELDS_NULL ON",
    "SET QUOTED_IDENTIFIER ON",
    "SET NUMERIC_ROUNDABORT OFF",
)
# what changes something, read on a batch's skeleton (quoted names '[?]', literals '?', comments
# gone): temporary tables (#...) and table variables (@...) are the session's own
CHANGE = re.compile(
    r"\bALTER\s+(?:DATABASE|TABLE|INDEX|PARTITION|AUTHORIZATION|SCHEMA|LOGIN|USER|SERVER)\b"
    r"|\bCREATE\s+(?!TABLE\s+#)\w+"
    r"|\bDROP\s+(?!TABLE\s+#)\w+"
    r"|\bINTO\s+(?![@#]|\w+\s*\()"  # INSERT INTO / SELECT ... INTO a real table
    r"|\bUPDATE\s+(?!@|#)\S+\s+SET\b|\bDELETE\s+FROM\s+(?![@#])|\bDELETE\s+(?!FROM\b)(?![@#])\S"
    r"|\bMERGE\b|\bTRUNCATE\b|\bDBCC\b|\bBACKUP\s+(?:DATABASE|LOG)\b|\bRESTORE\b|\bKILL\b"
    r"|\bRECONFIGURE\b|\bGRANT\b|\bDENY\b|\bREVOKE\b|\bSWITCH\b|\bSPLIT\s+RANGE\b|\bNEXT\s+USED\b",
    re.IGNORECASE,
)
READ_ONLY_PROCEDURES = {
    "sys.sp_executesql",
    "master.dbo.xp_fileexist",
    "master.dbo.xp_fixeddrives",
    "master.sys.xp_enumerrorlogs",
    "master.sys.xp_readerrorlog",
}
EXEC = re.compile(r"\bEXEC(?:UTE)?\s+(?!@)([\w.]+)", re.IGNORECASE)
RAISERROR = re.compile(r"RAISERROR\(\s*N'\?'\s*,\s*(\d+)\s*,", re.IGNORECASE)


# ---------------------------------------------------------------------------------------------
# reading a script as sqlcmd does


def parts(text: str) -> list[list[str]]:
    """The file as sqlcmd reads it: a list of parts (a month file joins several scripts, each with
    its own `:on error exit` and gate), each a list of batches; sqlcmd command lines and comments
    kept in the batch text, GO lines removed."""
    out: list[list[str]] = []
    batch: list[str] = []
    batches: list[str] = []
    for line in text.split("\n"):
        if line.strip().upper() == "GO":
            batches.append("\n".join(batch))
            batch = []
            continue
        batch.append(line)
    if "\n".join(batch).strip():
        batches.append("\n".join(batch))
    current: list[str] = []
    for b in batches:
        if ":on error exit" in b.split("\n") and current:
            out.append(current)
            current = []
        current.append(b)
    out.append(current)
    return out


def code(batch: str) -> str:
    """The batch's skeleton, sqlcmd command lines left out."""
    lines = [ln for ln in batch.split("\n") if not ln.lstrip().startswith(":")]
    return tsql_skeleton("\n".join(lines))


def executed_sql(batch: str) -> Iterator[str]:
    """The SQL text the batch hands to sp_executesql: the literal right after `sp_executesql`, and
    the literal pieces of each `SET @sql = ...;` (what EXEC sys.sp_executesql @sql runs)."""
    tokens = [t for t in tsql_tokens(batch) if t.kind != "comment"]
    collecting = False
    pieces: list[str] = []
    for i, t in enumerate(tokens):
        if t.kind == "string":
            if collecting:
                pieces.append(t.value)
            continue
        # a code token: where assignments to @sql start and statements end, in order
        for m in re.finditer(r"SET\s+@sql\s*=|;", t.text, re.IGNORECASE):
            if m.group(0) == ";" and collecting:
                yield " ".join(pieces)
                collecting = False
            elif m.group(0) != ";":
                collecting, pieces = True, []
        if (
            re.search(r"sp_executesql\s+N?$", t.text)
            and i + 1 < len(tokens)
            and tokens[i + 1].kind == "string"
        ):
            yield tokens[i + 1].value


def changes(batch: str) -> list[str]:
    """What in the batch changes something (its own statements and the SQL it executes)."""
    found = [m.group(0) for m in CHANGE.finditer(code(batch))]
    found += [
        f"EXEC {m.group(1)}" for m in EXEC.finditer(code(batch)) if m.group(1) not in READ_ONLY_PROCEDURES
    ]
    for sql in executed_sql(batch):
        found += [f"(dynamic) {m.group(0)}" for m in CHANGE.finditer(tsql_skeleton(sql))]
    return found


def _blocks(lines: list[str]) -> Iterator[tuple[int, int, int]]:
    """(BEGIN TRY line, BEGIN CATCH line, END CATCH line) of each TRY/CATCH, innermost first."""
    stack: list[tuple[int, int | None]] = []
    for i, ln in enumerate(lines):
        s = ln.strip().upper()
        if s.startswith("BEGIN TRY"):
            stack.append((i, None))
        elif s.startswith("BEGIN CATCH"):
            start, _ = stack.pop()
            stack.append((start, i))
        elif s.startswith("END CATCH"):
            start, catch = stack.pop()
            assert catch is not None
            yield start, catch, i


def violations(text: str) -> Iterator[str]:
    """Every place `text` breaks rules 1-4 (empty when it keeps them)."""
    first = next((ln for ln in text.split("\n") if ln.strip() and not ln.lstrip().startswith("--")), "")
    if first.strip() != ":on error exit":
        yield f"rule 1: the first line sqlcmd acts on must be :on error exit, not {first[:60]!r}"
    if re.search(r"^\s*:on\s+error\s+ignore", text, re.IGNORECASE | re.MULTILINE):
        yield "rule 1: :on error ignore"
    if re.search(r"^\s*:setvar\s+TW_CHECK_ONLY\b", text, re.IGNORECASE | re.MULTILINE):
        yield "rule 1: a :setvar TW_CHECK_ONLY default overrides sqlcmd -v"
    for p, batches in enumerate(parts(text), start=1):
        yield from (f"part {p}: {v}" for v in _part_violations(batches))


def _part_violations(batches: list[str]) -> Iterator[str]:
    gate = next((i for i, b in enumerate(batches) if GATE in b), None)
    barrier = next((i for i, b in enumerate(batches) if BARRIER in b), None)
    if gate is None or barrier is None:
        yield "rule 4: no gate or no check-only barrier: a check-only run would run the changes"
        return
    sql_batches = [i for i, b in enumerate(batches) if code(b).strip()]
    own = [
        i for i in sql_batches if "#tierwise_stopped') IS NOT NULL" not in batches[i]
    ]  # a month file's guard
    if own and own[0] != gate:
        yield "rule 1: the gate is not the first SQL batch"
    if ":on error exit" not in batches[0].split("\n") and ":on error exit" not in "\n".join(
        batches[: gate + 1]
    ):
        yield "rule 1: no :on error exit before the gate"
    g = code(batches[gate])
    if "N'$(TW_CHECK_ONLY)' NOT IN (N'0', N'1')" not in batches[gate]:
        yield "rule 1: the gate does not refuse a TW_CHECK_ONLY other than 0 or 1"
    for option in SESSION_OPTIONS:
        if option not in g:
            yield f"rule 1: the gate does not {option}"
    raw = batches[barrier]
    stop = raw[raw.find("IF N'$(TW_CHECK_ONLY)' = N'1'") :] if "IF N'$(TW_CHECK_ONLY)' = N'1'" in raw else ""
    if not re.search(r"SET NOEXEC ON;\s*RETURN;\s*END;", code(stop)):
        yield "rule 4: the barrier does not end a check-only run with NOEXEC ON and RETURN"
    for i, batch in enumerate(batches):
        found = changes(batch)
        if gate <= i <= barrier and found:
            yield f"rule 4: check-only section batch {i} changes something: {found[:3]}"
        if i < gate and found:
            yield f"rule 2: batch {i} changes something before the gate: {found[:3]}"
        yield from (f"batch {i}: {v}" for v in _stop_violations(batch))
    yield from _transaction_violations(batches)


def _stop_violations(batch: str) -> Iterator[str]:
    """Rule 2 within a batch: severities, and every severity-16 error stops the script."""
    lines = code(batch).split("\n")
    tries = list(_blocks(lines))
    for n, ln in enumerate(lines):
        for m in RAISERROR.finditer(ln):
            severity = int(m.group(1))
            if 0 < severity < 16:
                yield f"rule 2: RAISERROR at severity {severity}: neither progress (0) nor a stop (16+)"
            if severity < 16:
                continue
            inside = [t for t in tries if t[0] < n < t[1]]
            if inside:
                _, catch, end = inside[0]
                block = "\n".join(lines[catch:end])
                if "SET NOEXEC ON;" not in block or "RETURN;" not in block or not RAISERROR.search(block):
                    yield f"rule 2: a severity-16 error in a TRY whose CATCH does not stop: {ln.strip()[:60]}"
                continue
            rest = [x.strip() for x in lines[n + 1 :] if x.strip()][:2]
            if rest != ["SET NOEXEC ON;", "RETURN;"]:
                yield f"rule 2: severity {severity} not followed by SET NOEXEC ON; RETURN: {ln.strip()[:60]}"
    for start, catch, end in tries:
        block = "\n".join(lines[catch:end])
        if "SET NOEXEC ON;" in block:
            continue
        # a CATCH that goes on (a probe that may fail, a DBCC whose error is judged after it):
        # nothing in its TRY may change anything, or the batch must stop right after it
        after = "\n".join(lines[end + 1 :])
        if CHANGE.search("\n".join(lines[start:catch])) and not re.search(r"SET NOEXEC ON;\s*RETURN;", after):
            yield "rule 2: a change in a TRY whose CATCH neither stops nor is followed by a stop"


def _transaction_violations(batches: list[str]) -> Iterator[str]:
    """Rule 3: XACT_ABORT ON in the session before every BEGIN TRANSACTION, which sits in a TRY
    whose CATCH rolls back."""
    xact = False
    for i, batch in enumerate(batches):
        lines = code(batch).split("\n")
        tries = list(_blocks(lines))
        for n, ln in enumerate(lines):
            s = ln.strip().upper()
            if s.startswith("SET XACT_ABORT ON"):
                xact = True
            elif s.startswith("SET XACT_ABORT OFF"):
                xact = False
            elif s.startswith("BEGIN TRANSACTION") or s.startswith("BEGIN TRAN;"):
                if not xact:
                    yield f"rule 3: batch {i}: BEGIN TRANSACTION without SET XACT_ABORT ON in the session"
                inside = [t for t in tries if t[0] < n < t[1]]
                if not inside or "IF @@TRANCOUNT > 0 ROLLBACK" not in "\n".join(
                    lines[inside[0][1] : inside[0][2]]
                ):
                    yield f"rule 3: batch {i}: BEGIN TRANSACTION outside a TRY whose CATCH rolls back"


# ---------------------------------------------------------------------------------------------
# the scripts


def golden_scripts() -> dict[str, str]:
    out: dict[str, str] = {}
    for case in CASES:
        if case.dialect == "tsql":
            out.update(render_case(case))
    return out


def ilm_month_files() -> dict[str, str]:
    """The SQL Server ILM plan's month files as `tierwise ilm --scripts` writes them."""
    doc = json.loads((FIXTURES / "advice_sqlserver.json").read_text(encoding="utf-8"))
    out: dict[str, str] = {}
    for plan in ("ilm_plan_sqlserver.json", "ilm_plan_sqlserver_read_only.json"):
        sel = ilm_moves(doc, json.loads((FIXTURES / plan).read_text(encoding="utf-8")), source=plan,
                        tiers=tiers(), dialect="tsql")  # fmt: skip
        for month in sel.months:
            forward, rollback, _, _ = month_pair(
                month, "tsql", Options(generator="t"), datetime(2024, 5, 2, tzinfo=UTC)
            )
            out[f"{plan}:{month.month}.forward"] = forward.text
            out[f"{plan}:{month.month}.rollback"] = rollback.text
    assert out, "the ILM fixtures should have months with T-SQL moves"
    return out


@pytest.fixture(scope="module")
def demo_scripts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Every T-SQL script the demo fleet's advice yields when each SQL Server recommendation is
    approved (tests/migrations/demo_approved.py)."""
    return demo_approved_scripts(tmp_path_factory.mktemp("demo"), "sqlserver")[1]


# ---------------------------------------------------------------------------------------------
# rules 1-4


@pytest.mark.parametrize("name", sorted(golden_scripts()))
def test_every_golden_script_keeps_sqlcmds_session_rules(name: str) -> None:
    assert list(violations(golden_scripts()[name])) == [], name


def test_every_ilm_month_file_keeps_sqlcmds_session_rules() -> None:
    """A month file joins several scripts: each part has its own gate and barrier, and every later
    part starts with the guard that stops it when an earlier part stopped."""
    for name, text in ilm_month_files().items():
        assert list(violations(text)) == [], name


def test_every_script_the_demo_approves_keeps_sqlcmds_session_rules(demo_scripts: dict[str, str]) -> None:
    forwards = [n for n in demo_scripts if n.endswith(".forward.sql")]
    assert len(forwards) >= 5 and len(demo_scripts) == 2 * len(forwards)
    kinds = " ".join(demo_scripts)
    assert "tempdb" in kinds and "PRIMARY" in kinds  # a restart move and an offline move among them
    for name, text in demo_scripts.items():
        assert list(violations(text)) == [], name


def test_the_rules_reject_the_scripts_before_issue_30() -> None:
    """The partition move as written before issue #30: no TW_CHECK_ONLY gate and no barrier, so a
    check-only run would reach the move; and the gate set none of the session options."""
    old = (FIXTURES / "tsql_partition.forward.before_issue30.sql").read_text(encoding="utf-8")
    found = list(violations(old))
    assert any("no gate or no check-only barrier" in v for v in found), found


def test_the_rules_catch_each_kind_of_break() -> None:
    """Each rule fails on a script broken in its way (so a rule that passes is not blind)."""
    good = golden_scripts()["tsql_filegroup_online.forward.sql"]
    assert list(violations(good)) == []
    broken = {
        "rule 1: the first line": good.replace(":on error exit\n", "", 1),
        "rule 1: the gate does not SET QUOTED_IDENTIFIER ON": good.replace("SET QUOTED_IDENTIFIER ON;", "", 1),
        "rule 1: a :setvar TW_CHECK_ONLY default": good.replace(
            ':setvar TierwiseSqlcmdMode "on"', ':setvar TierwiseSqlcmdMode "on"\n:setvar TW_CHECK_ONLY 0', 1
        ),
        "rule 2: RAISERROR at severity 10": good.replace("RAISERROR(N'%s', 16, 1, @msg);", "RAISERROR(N'%s', 10, 1, @msg);", 1),
        "rule 2: severity 16 not followed by SET NOEXEC ON": good.replace(
            "    RAISERROR(N'%s', 16, 1, @msg);\n    SET NOEXEC ON;", "    RAISERROR(N'%s', 16, 1, @msg);\n    PRINT 1;", 1
        ),
        "rule 4: check-only section batch": good.replace(
            "SET NOCOUNT ON;", "SET NOCOUNT ON;\nALTER DATABASE [Sales] SET RECOVERY SIMPLE;", 1
        ),
        "rule 4: the barrier does not end": good.replace(
            "CREATE TABLE #tierwise_check_only (passed bit);\n    SET NOEXEC ON;",
            "CREATE TABLE #tierwise_check_only (passed bit);", 1,
        ),
    }  # fmt: skip
    for rule, text in broken.items():
        assert text != good, rule
        assert any(rule in v for v in violations(text)), (rule, list(violations(text)))
    partition = golden_scripts()["tsql_partition.forward.sql"]
    no_xact = "\n".join(ln for ln in partition.split("\n") if ln.strip() != "SET XACT_ABORT ON;")
    assert any("rule 3" in v for v in violations(no_xact))
    dynamic = good.replace(
        "SET NOCOUNT ON;", "SET NOCOUNT ON;\nEXEC sys.sp_executesql N'DROP TABLE dbo.t;';", 1
    )
    assert any("(dynamic) DROP TABLE" in v for v in violations(dynamic))


def test_the_change_reader_sees_the_changes_the_scripts_make() -> None:
    """The reader behind rule 4 is not blind: in the change section it finds the statements each
    kind of move changes things with, its own and those it runs through sp_executesql."""
    scripts = golden_scripts()
    expected = {
        "tsql_filegroup_online.forward.sql": {"ALTER DATABASE", "DBCC"},
        "tsql_filegroup_offline_primary.forward.sql": {
            "ALTER DATABASE",
            "CREATE TABLE",
            "INTO",
            "DELETE FROM",
            "DBCC",
        },
        "tsql_tempdb_data.forward.sql": {"ALTER DATABASE"},
        "tsql_partition.forward.sql": {"(dynamic) SWITCH", "(dynamic) SPLIT RANGE", "(dynamic) NEXT USED"},
        "tsql_read_only.forward.sql": {"ALTER DATABASE"},
        "tsql_ilm_add_partition.forward.sql": {"(dynamic) SPLIT RANGE", "(dynamic) NEXT USED"},
    }
    for name, wanted in expected.items():
        (batches,) = parts(scripts[name])
        barrier = next(i for i, b in enumerate(batches) if BARRIER in b)
        found = " | ".join(c for b in batches[barrier + 1 :] for c in changes(b))
        for w in wanted:
            assert w.split()[0] in found and all(x in found for x in w.split()), (name, w, found[:300])
