"""The DB2 CLP's session rules, held against every DB2 script we write (issue #30, part 2).

Each script is read the way `db2 -td@ -vsf FILE` reads it (tests/migrations/sqltokens.py splits
it into statements on the terminator outside quotes) and walked as a CLP session: whether a
connection exists, whether autocommit (c) and stop-on-error (s) are on, whether the lock
timeout is set. The scripts held to the rules: every DB2 golden file (forward, rollback and the
check-only `.check.db2`) and every DB2 script the demo fleet's advice yields once each DB2
recommendation is approved (app.review, as an approver does on the Recommendations page).

The rules, with IBM's words for each:

1. CONNECT before anything whose required connection is "Database" (REQUIRED_CONNECTION below,
   from the "Required connection" section of each command's page in IBM's Db2 Command
   Reference; SQL statements run in the connected database). N4: `SET SERVEROUTPUT ON` used to
   come before `CONNECT TO`, so with -s a fresh CLP session stopped at line 2.
2. `SET CURRENT LOCK TIMEOUT` to a bounded value (1 to MAX_LOCK_TIMEOUT seconds) after CONNECT
   and before any statement that changes something (DDL, DML, LOCK TABLE, a CALL of an admin
   procedure that changes the configuration). Its initial value is null, which means the
   locktimeout database configuration parameter, -1 (wait forever) by default (IBM Db2 docs,
   "CURRENT LOCK TIMEOUT special register",
   https://www.ibm.com/support/knowledgecenter/SS6NHC/com.ibm.db2.luw.sql.ref.doc/doc/r0011857.html).
   N5: no script set it.
3. A multi-statement unit of work (a LOCK TABLE and the statements that need its lock) runs with
   autocommit off (`UPDATE COMMAND OPTIONS USING C OFF`: IBM Db2 docs, "UPDATE COMMAND OPTIONS
   command", option c, "Autocommit SQL statements",
   https://www.ibm.com/support/knowledgecenter/SSEPGG_10.5.0/com.ibm.db2.luw.admin.cmd.doc/doc/r0001975.html)
   and ends in COMMIT or ROLLBACK before autocommit is on again; no check inside it (a failing
   check would stop the CLP with the lock held until the session ends: `db2 terminate` then
   commits, IBM Db2 docs, "TERMINATE command",
   https://www.ibm.com/support/knowledgecenter/en/SSEPGG_11.5.0/com.ibm.db2.luw.admin.cmd.doc/doc/r0001973.html).
4. Every check's failure path ends the script: each check (SELECT RAISE_ERROR or a compound that
   SIGNALs) runs with stop-on-error on (option s, "Stop execution on command error", same page
   as rule 3), and no compound that signals declares a handler that could catch it, so a failing
   check never falls through to a change.
5. A check-only script changes nothing: no DDL, DML, LOCK TABLE, COMMIT, no CALL but
   DBMS_OUTPUT.PUT_LINE, no autocommit or stop-on-error switched off; it ends by printing the
   plan and the estimated duration.

Nothing here runs a Db2 engine (none is available to these tests): the rules are checked on the
text. tests/migrations/fixtures/db2_tablespace.forward.before_issue30.db2 is a golden file as it
was before issue #30; test_the_rules_reject_the_scripts_before_issue_30 shows rules 1 and 2
reject it.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest

from migrations import render_pair
from tests.migrations.demo_approved import demo_approved_scripts
from tests.migrations.golden_cases import CASES, FIXTURES, GENERATED_AT, GOLDEN, OPTIONS, case_move
from tests.migrations.sqltokens import db2_skeleton, db2_statements

# The "Required connection" of every CLP command these scripts use (IBM Db2 Command Reference);
# anything else the CLP reads is an SQL statement, which runs in the connected database.
REQUIRED_CONNECTION = {
    # https://www.ibm.com/support/knowledgecenter/SSEPGG_10.5.0/com.ibm.db2.luw.admin.cmd.doc/doc/r0001975.html
    "UPDATE COMMAND OPTIONS": "None",
    # https://www.ibm.com/docs/en/db2/11.5.x?topic=commands-set-serveroutput ("Required
    # connection: Database"; it calls DBMS_OUTPUT.ENABLE in the database)
    "SET SERVEROUTPUT": "Database",
    # https://www.ibm.com/support/knowledgecenter/en/SSEPGG_11.5.0/com.ibm.db2.luw.admin.cmd.doc/doc/r0001973.html
    "TERMINATE": "None",
    "CONNECT TO": "makes it",
    "CONNECT RESET": "ends it",
}
MAX_LOCK_TIMEOUT = 300  # seconds: "bounded" means a 2 a.m. window is not held up for long

CHECK = re.compile(r"\bRAISE_ERROR\s*\(|\bSIGNAL\s+SQLSTATE\b", re.IGNORECASE)
# what changes something, read on the skeleton (quoted text blanked, EXECUTE IMMEDIATE payloads
# kept): every change our compounds make goes through EXECUTE IMMEDIATE; outside compounds,
# LOCK TABLE and the DDL / DML keywords at the start of a statement; ADMIN_CMD (UPDATE DB CFG)
CHANGE = re.compile(
    r"\bEXECUTE\s+IMMEDIATE\b|\bCALL\s+SYSPROC\.ADMIN_CMD\b"
    r"|^\s*(?:LOCK\s+TABLE|INSERT|DELETE|UPDATE(?!\s+COMMAND\s+OPTIONS)|MERGE|CREATE|ALTER|DROP|RENAME|GRANT|REVOKE"
    r"|SET\s+INTEGRITY|TRUNCATE|REORG|LOAD|IMPORT)\b",
    re.IGNORECASE,
)
OPTION = re.compile(r"UPDATE COMMAND OPTIONS USING ((?:[A-Z] (?:ON|OFF)\s*)+)$", re.IGNORECASE)
LOCK_TIMEOUT = re.compile(r"SET CURRENT LOCK TIMEOUT\s*=?\s*(?:WAIT\s+)?(-?\d+)$", re.IGNORECASE)


def required_connection(statement: str) -> str:
    upper = " ".join(statement.upper().split())
    for command, needs in REQUIRED_CONNECTION.items():
        if upper.startswith(command):
            return needs
    return "Database"  # an SQL statement


@dataclass
class Session:
    """What the CLP holds while it reads one script."""

    connected: bool = False
    autocommit: bool = True
    stop_on_error: bool = True  # the first statement sets it; checked there
    lock_timeout: int | None = None
    unit: list[str] = field(default_factory=list)  # statements since autocommit went off


def violations(text: str) -> Iterator[str]:
    """Every place `text` breaks rules 1-4 (empty when it keeps them)."""
    statements = db2_statements(text)
    first = " ".join(statements[0].split()) if statements else ""
    if first != "UPDATE COMMAND OPTIONS USING C ON S ON":
        yield f"the first statement must force autocommit and stop-on-error on, not {first[:60]!r}"
    s = Session()
    for i, stmt in enumerate(statements, start=1):
        flat = " ".join(stmt.split())
        upper = flat.upper()
        needs = required_connection(flat)
        if needs == "Database" and not s.connected:
            yield f"statement {i} needs a database connection and comes before CONNECT: {flat[:60]}"
        if upper.startswith("CONNECT TO"):
            s.connected = True
            continue
        if upper.startswith("CONNECT RESET"):
            if not s.autocommit:
                yield f"statement {i}: CONNECT RESET inside a unit of work (autocommit off)"
            s.connected = False
            continue
        if (m := OPTION.match(flat)) is not None:
            for letter, state in re.findall(r"([A-Z]) (ON|OFF)", m.group(1).upper()):
                on = state == "ON"
                if letter == "C":
                    if on and not s.autocommit:
                        if not s.unit or s.unit[-1] not in ("COMMIT", "ROLLBACK"):
                            yield f"statement {i}: a unit of work that does not end in COMMIT or ROLLBACK: {s.unit}"
                        s.unit = []
                    s.autocommit = on
                elif letter == "S":
                    s.stop_on_error = on
            continue
        if (m := LOCK_TIMEOUT.match(flat)) is not None:
            s.lock_timeout = int(m.group(1))
            if not 0 < s.lock_timeout <= MAX_LOCK_TIMEOUT:
                yield f"statement {i}: CURRENT LOCK TIMEOUT {s.lock_timeout} is not a bounded wait"
            continue
        skeleton = db2_skeleton(stmt)
        if not s.autocommit:
            s.unit.append(upper)
        if CHANGE.search(skeleton) and s.lock_timeout is None:
            yield f"statement {i} changes something before SET CURRENT LOCK TIMEOUT: {flat[:60]}"
        if re.match(r"LOCK\s+TABLE\b", upper) and s.autocommit:
            yield f"statement {i}: LOCK TABLE with autocommit on (the lock ends with the statement)"
        if CHECK.search(skeleton):
            if not s.stop_on_error:
                yield f"statement {i}: a check with stop-on-error off (a failure would fall through): {flat[:60]}"
            if not s.autocommit:
                yield f"statement {i}: a check inside a unit of work (a stop there keeps its locks): {flat[:60]}"
            if re.search(r"\bDECLARE\b[^;]*\bHANDLER\b", skeleton, re.IGNORECASE):
                yield f"statement {i}: a check in a compound with a handler that could catch it"
    if not s.autocommit:
        yield "the script ends with autocommit off"
    if not s.stop_on_error:
        yield "the script ends with stop-on-error off"
    if s.connected:
        yield "the script ends connected (no CONNECT RESET)"


def check_only_violations(text: str) -> Iterator[str]:
    """Rule 5: what a check-only script must not do."""
    for i, stmt in enumerate(db2_statements(text), start=1):
        flat = " ".join(stmt.split())
        skeleton = db2_skeleton(stmt)
        if CHANGE.search(skeleton) or re.match(r"(COMMIT|ROLLBACK)\b", flat, re.IGNORECASE):
            yield f"statement {i} changes something: {flat[:80]}"
        for call in re.findall(r"\bCALL\s+([\w.]+)", skeleton, re.IGNORECASE):
            if call.upper() != "DBMS_OUTPUT.PUT_LINE":
                yield f"statement {i} calls {call}"
        if re.fullmatch(r"UPDATE COMMAND OPTIONS USING .*\bOFF\b.*", flat, re.IGNORECASE):
            yield f"statement {i} switches an option off: {flat}"
    if "estimated duration: " not in text or "the window run will" not in text:
        yield "it does not print the plan and the estimated duration"


# ---------------------------------------------------------------------------------------------
# the scripts held to the rules

DB2_CASES = [c for c in CASES if c.dialect == "db2"]


def golden_scripts() -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(GOLDEN.glob("db2_*.db2"))}


def test_every_db2_case_has_a_forward_a_rollback_and_a_check_only_golden() -> None:
    names = set(golden_scripts())
    for case in DB2_CASES:
        assert {f"{case.name}.{d}.db2" for d in ("forward", "rollback", "check")} <= names, case.name
    assert len(names) == 3 * len(DB2_CASES)


@pytest.fixture(scope="module")
def demo_scripts(demo_approved: tuple[str, dict[str, str]]) -> dict[str, str]:
    """Every DB2 script the demo fleet's advice yields when each DB2 recommendation is approved."""
    return demo_approved[1]


@pytest.fixture(scope="module")
def demo_approved(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, str]]:
    """The demo store's URL and every DB2 script its advice yields when each DB2 recommendation is
    approved (tests/migrations/demo_approved.py)."""
    return demo_approved_scripts(tmp_path_factory.mktemp("demo"), "db2")


# ---------------------------------------------------------------------------------------------
# rules 1-4


@pytest.mark.parametrize("name", sorted(golden_scripts()))
def test_every_golden_script_keeps_the_clp_session_rules(name: str) -> None:
    text = golden_scripts()[name]
    assert list(violations(text)) == [], name


def test_every_script_the_demo_approves_keeps_the_clp_session_rules(demo_scripts: dict[str, str]) -> None:
    for name, text in demo_scripts.items():
        assert list(violations(text)) == [], name
        if name.endswith(".check.db2"):
            assert list(check_only_violations(text)) == [], name


def test_every_ilm_month_file_keeps_the_clp_session_rules() -> None:
    """`tierwise ilm --scripts` joins a month's parts into one file: each part is a whole session
    (its own CONNECT ... CONNECT RESET), and the month's check-only file changes nothing."""
    import json

    from migrations.ilm import ilm_moves, month_check, month_pair
    from tests.migrations.golden_cases import tiers

    def load(name: str) -> object:
        return json.loads((FIXTURES / name).read_text(encoding="utf-8"))

    sel = ilm_moves(
        load("advice_db2.json"), load("ilm_plan_db2.json"), source="p", tiers=tiers(), dialect="db2"
    )
    assert sel.months
    for month in sel.months:
        forward, rollback, moves, _ = month_pair(month, "db2", OPTIONS, GENERATED_AT)
        check = month_check(month, "db2", OPTIONS, GENERATED_AT)
        assert check is not None and check.direction == "check"
        for text in (forward.text, rollback.text, check.text):
            assert list(violations(text)) == [], month.month
        assert list(check_only_violations(check.text)) == [], month.month
        assert check.text.count("migration script: CHECK ONLY (changes nothing)") == len(moves)


def test_the_rules_reject_the_scripts_before_issue_30() -> None:
    """The golden file as it was before this issue: SET SERVEROUTPUT ON before CONNECT (N4) and
    no lock timeout before the ALTER TABLESPACE (N5)."""
    old = (FIXTURES / "db2_tablespace.forward.before_issue30.db2").read_text(encoding="utf-8")
    found = list(violations(old))
    assert any("statement 2 needs a database connection and comes before CONNECT: SET SERVEROUTPUT ON" in v
               for v in found), found  # fmt: skip
    assert any("changes something before SET CURRENT LOCK TIMEOUT" in v and "EXECUTE" not in v for v in found)
    assert not any("comes before CONNECT" in v and "SERVEROUTPUT" not in v for v in found), found


# each rule, shown to catch what it is about (so a rule that can never fail cannot pass silently)
GOOD = (
    "--#SET TERMINATOR @\nUPDATE COMMAND OPTIONS USING C ON S ON@\nCONNECT TO DB@\nSET SERVEROUTPUT ON@\n"
    "SET CURRENT LOCK TIMEOUT = 60@\n"
    "SELECT RAISE_ERROR('75001', 'x') FROM SYSIBM.SYSDUMMY1 WHERE 1 = 0 FETCH FIRST 1 ROW ONLY@\n"
    'UPDATE COMMAND OPTIONS USING C OFF@\nLOCK TABLE "S"."T" IN EXCLUSIVE MODE@\n'
    'BEGIN\n  EXECUTE IMMEDIATE \'ALTER TABLE "S"."T" DETACH PARTITION "P" INTO "S"."X"\';\nEND@\n'
    "COMMIT@\nUPDATE COMMAND OPTIONS USING C ON@\nCONNECT RESET@\n"
)
BROKEN: dict[str, tuple[Callable[[str], str], str]] = {
    "serveroutput first": (
        lambda t: t.replace("CONNECT TO DB@\nSET SERVEROUTPUT ON@", "SET SERVEROUTPUT ON@\nCONNECT TO DB@"),
        "comes before CONNECT",
    ),
    "no lock timeout": (
        lambda t: t.replace("SET CURRENT LOCK TIMEOUT = 60@\n", ""),
        "before SET CURRENT LOCK",
    ),
    "wait forever": (lambda t: t.replace("= 60", "= -1"), "not a bounded wait"),
    "lock timeout after the change": (
        lambda t: t.replace("SET CURRENT LOCK TIMEOUT = 60@\n", "").replace(
            "CONNECT RESET@", "SET CURRENT LOCK TIMEOUT = 60@\nCONNECT RESET@"
        ),
        "before SET CURRENT LOCK",
    ),
    "lock with autocommit": (
        lambda t: t.replace("UPDATE COMMAND OPTIONS USING C OFF@\n", ""),
        "LOCK TABLE with",
    ),
    "unit without commit": (lambda t: t.replace("COMMIT@\n", ""), "does not end in COMMIT"),
    "unit never closed": (
        lambda t: t.replace("COMMIT@\nUPDATE COMMAND OPTIONS USING C ON@\n", ""),
        "autocommit off",
    ),
    "check inside the unit": (
        lambda t: t.replace(
            "COMMIT@",
            "SELECT RAISE_ERROR('75001', 'y') FROM SYSIBM.SYSDUMMY1 FETCH FIRST 1 ROW ONLY@\nCOMMIT@",
        ),
        "a check inside a unit of work",
    ),
    "check with stop-on-error off": (
        lambda t: t.replace("SELECT RAISE_ERROR", "UPDATE COMMAND OPTIONS USING S OFF@\nSELECT RAISE_ERROR"),
        "stop-on-error off",
    ),
    "handled signal": (
        lambda t: t.replace(
            "SELECT RAISE_ERROR('75001', 'x') FROM SYSIBM.SYSDUMMY1 WHERE 1 = 0 FETCH FIRST 1 ROW ONLY@",
            "BEGIN\n  DECLARE CONTINUE HANDLER FOR SQLEXCEPTION BEGIN END;\n"
            "  SIGNAL SQLSTATE '75001' SET MESSAGE_TEXT = 'x';\nEND@",
        ),
        "handler",
    ),
    "no reset": (lambda t: t.replace("CONNECT RESET@\n", ""), "ends connected"),
}


def test_the_rules_pass_a_good_session_and_catch_each_break() -> None:
    assert list(violations(GOOD)) == []
    for what, (breaking, expected) in BROKEN.items():
        found = list(violations(breaking(GOOD)))
        assert any(expected in v for v in found), (what, found)


# ---------------------------------------------------------------------------------------------
# rule 5: the check-only run


def test_every_move_has_a_check_only_script_that_changes_nothing() -> None:
    scripts = golden_scripts()
    for case in DB2_CASES:
        forward = scripts[f"{case.name}.forward.db2"]
        check = scripts[f"{case.name}.check.db2"]
        assert list(check_only_violations(check)) == [], case.name
        assert "migration script: CHECK ONLY (changes nothing)" in check, case.name
        # the same numbered checks as the forward script, so "check 7 failed" means one thing
        numbered = re.compile(r"^--   (check \d+: .*?)(?: \[window run only\])?$", re.M)
        assert numbered.findall(check) == numbered.findall(forward), case.name
        # every step of the forward script is in the plan the check-only run prints
        steps = re.findall(r"^-- (step \d+: .*)$", forward, re.M)
        assert steps, case.name
        for step in dict.fromkeys(steps):
            if "wait up to" in step:  # the wait belongs to the DETACH step, printed with it
                continue
            assert f"'  {step.replace(chr(39), chr(39) * 2)}'" in check, (case.name, step)
        # it is not the forward script: its statements are a strict subset, no step runs
        assert not re.search(r"^-- step \d+:", check, re.M), case.name
    assert list(check_only_violations(scripts["db2_partition.forward.db2"])), (
        "the rule must catch a forward script"
    )


def test_a_check_only_run_warns_about_this_moment_and_skips_what_the_window_builds() -> None:
    text = golden_scripts()["db2_partition.check.db2"]
    statements = db2_statements(text)
    backup = next(s for s in statements if "MON_GET_UTILITY(-2)" in s)
    assert backup.startswith("BEGIN") and "RAISE_ERROR" not in backup and "SIGNAL" not in backup
    assert "warning: check 6 failed: a BACKUP is running" in backup
    # the room check needs the storage group: it runs only where the group already exists, and
    # says when it did not run
    room = next(s for s in statements if "not enough free space in SG_FC" in s)
    assert (
        room.startswith("SELECT RAISE_ERROR")
        and "WHERE (EXISTS (SELECT 1 FROM SYSCAT.STOGROUPS WHERE SGNAME = 'SG_FC'))" in room
    )
    assert any("check 20 not run now: storage group SG_FC does not exist yet" in s for s in statements)


# ---------------------------------------------------------------------------------------------
# the per-finding fixes, each on the text the generator writes now


def _statements(name: str) -> list[str]:
    return db2_statements(golden_scripts()[name])


def test_ilm_rollback_counts_and_detaches_in_one_unit_of_work() -> None:
    """N7: the count and the DETACH were two autocommitted units, so a row could arrive between
    them. Now: C OFF, LOCK TABLE ... IN EXCLUSIVE MODE, the count again and the DETACH in one
    compound (DETACH only when it found no row), COMMIT, C ON; the post-check after the unit
    stops the script when the partition is still there."""
    statements = _statements("db2_ilm_add_partition.rollback.db2")
    off = statements.index("UPDATE COMMAND OPTIONS USING C OFF")
    assert statements[off + 1] == 'LOCK TABLE "SALES"."ORDERS" IN EXCLUSIVE MODE'
    unit = statements[off + 2]
    assert statements[off + 3 : off + 5] == ["COMMIT", "UPDATE COMMAND OPTIONS USING C ON"]
    count = unit.index('SELECT COUNT_BIG(*) FROM (SELECT 1 FROM "SALES"."ORDERS" WHERE')
    guard = unit.index("IF v_rows = 0 THEN")
    detach = unit.index('DETACH PARTITION "P20240701"')
    assert count < guard < detach and "SIGNAL" not in unit
    detaches = [i for i, s in enumerate(statements) if "DETACH PARTITION" in s and "EXECUTE IMMEDIATE" in s]
    assert detaches == [off + 2], "every DETACH inside the unit"
    post = next(i for i, s in enumerate(statements) if "post-check: the partition is still there" in s)
    assert post > off + 4
    # the early check still stops before any lock when rows are there
    early = next(i for i, s in enumerate(statements) if "partition holds rows: not detached" in s)
    assert early < off
    head = golden_scripts()["db2_ilm_add_partition.rollback.db2"].split(
        "\nUPDATE COMMAND OPTIONS USING C ON S ON@"
    )[0]
    assert "run `db2 rollback` in the same shell" in head


def test_check_6_says_what_a_backup_means_for_the_action() -> None:
    """N11: "an online backup pauses the rebalance" was said in scripts that start none."""
    scripts = golden_scripts()
    rebalancing = {
        n for n, t in scripts.items() if re.search(r"USING STOGROUP|REBALANCE'", t) and ".check." not in n
    }
    assert rebalancing >= {"db2_tablespace.forward.db2", "db2_partition_alone.forward.db2"}
    seen = set()
    for name, text in scripts.items():
        line = next(ln for ln in text.split("\n") if ln.startswith("--   check 6: no BACKUP"))
        seen.add(line.split("every member): ", 1)[1].split(" (IBM, Compatibility")[0])
        assert "Compatibility of online backup and other utilities" in line, name
        if "rebalance" in line:
            assert name.replace(".check.", ".forward.") in rebalancing, f"{name}: starts no rebalance: {line}"
    assert len(seen) == 5, seen  # table space / partition route / leading edge / temporary / log


def _sqlite_catalog() -> sqlite3.Connection:
    """An in-memory stand-in for the catalog views a check reads, with the scalar functions Db2
    has and SQLite lacks. Only the predicate logic is tested here, not Db2's dialect."""
    db = sqlite3.connect(":memory:")
    for schema in ("SYSIBMADM", "SYSCAT", "SYSIBM"):
        db.execute(f"ATTACH DATABASE ':memory:' AS {schema}")
    # LEFT is a keyword in SQLite (LEFT JOIN): Db2's LEFT(s, n) is called LEFT_ here (see _sqlite)
    db.create_function("LEFT_", 2, lambda s, n: None if s is None else s[:n])
    db.create_function("CHR", 1, chr)
    db.execute("CREATE TABLE SYSIBM.SYSDUMMY1 (IBMREQD TEXT)")
    db.execute("INSERT INTO SYSIBM.SYSDUMMY1 VALUES ('Y')")
    return db


def _sqlite(sql: str) -> str:
    """Db2 text as SQLite reads it: LEFT( renamed (a keyword there), FETCH FIRST as LIMIT."""
    return re.sub(r"\bLEFT\(", "LEFT_(", sql).replace("FETCH FIRST 1 ROW ONLY", "LIMIT 1")


def _log_step_runs_admin_cmd(logpath: str, newlogpath: str) -> bool:
    """Step 1 of the DB2 log script on a DBCFG holding these two values: does it reach the CALL
    of ADMIN_CMD (its IF and ELSEIF conditions evaluated as written)?"""
    step = next(s for s in _statements("db2_log.forward.db2") if "CALL SYSPROC.ADMIN_CMD" in s)
    conditions = re.findall(r"^\s*(?:IF|ELSEIF) (.*) THEN$", step, re.M)
    assert len(conditions) == 2, step
    db = _sqlite_catalog()
    db.execute("CREATE TABLE SYSIBMADM.DBCFG (NAME TEXT, VALUE TEXT)")
    db.executemany(
        "INSERT INTO SYSIBMADM.DBCFG VALUES (?, ?)", [("logpath", logpath), ("newlogpath", newlogpath)]
    )
    return not any(
        db.execute(_sqlite(f"SELECT CASE WHEN {c} THEN 1 ELSE 0 END")).fetchone()[0] for c in conditions
    )


def test_log_script_sets_newlogpath_only_when_the_log_is_not_there_yet() -> None:
    """N12: NEWLOGPATH was set again when `logpath` was already under the new path."""
    new = "/db2/fc1/log/NODE0000/LOGSTREAM0000/"
    assert not _log_step_runs_admin_cmd(new, ""), "the log is there: nothing to set"
    assert not _log_step_runs_admin_cmd("/db2/log/SALESDB/NODE0000/LOGSTREAM0000/", "/db2/fc1/log/"), (
        "pending"
    )
    assert _log_step_runs_admin_cmd("/db2/log/SALESDB/NODE0000/LOGSTREAM0000/", "")
    # the log is there but another move is pending: set it again, or the next activation moves it away
    assert _log_step_runs_admin_cmd(new, "/db2/sata/log/")
    # a sibling directory whose name starts the same is not "under" the path
    assert _log_step_runs_admin_cmd("/db2/fc1/logs_old/NODE0000/", "")


def test_partition_route_builds_and_checks_the_target_before_the_detach() -> None:
    """N1: the copy table is created (empty, in the target) and checked attachable, the log and
    the room checked, all before the DETACH; the copy and attach run with stop-on-error off so a
    failure reaches the repair, which attaches the detached table back with the original range."""
    statements = _statements("db2_partition.forward.db2")

    def at(needle: str) -> int:
        return next(i for i, s in enumerate(statements) if needle in s)

    create = at(
        'CREATE TABLE "SALES"."TW_95F66C2B39BC_COPY" LIKE "SALES"."ORDERS" INCLUDING COLUMN DEFAULTS IN "TS_ORDERS_2024_FC"'
    )
    attachable = at("the copy table cannot be attached")
    log = at("the active log cannot hold the copy")
    room = at("not enough free space in SG_FC")
    detach = at('DETACH PARTITION "P2024Q1" INTO')
    s_off = statements.index("UPDATE COMMAND OPTIONS USING S OFF")
    copy = at("copying the rows into")
    attach = at('attaching partition "P2024Q1" from')
    s_on = statements.index("UPDATE COMMAND OPTIONS USING S ON")
    repair = at('attaching "TW_95F66C2B39BC_DETACHED" back')
    post = at("post-check: not in TS_ORDERS_2024_FC")
    drop = at('DROP TABLE "SALES"."TW_95F66C2B39BC_DETACHED"')
    assert create < attachable < log < room < detach < s_off < copy < attach < s_on < repair < post < drop
    assert "MON_TRANSACTION_LOG_UTILIZATION" in statements[log] and "'max_log'" in statements[log]
    assert "100.0 / (100 - T.PCTPAGESSAVED)" in statements[room]
    assert (
        "ENDING AT (''2024-04-01'') EXCLUSIVE FROM \"SALES\".\"TW_95F66C2B39BC_DETACHED\""
        in statements[repair]
    )
    assert "IF v_rows = v_other THEN" in statements[attach]
    # the rollback first attaches back a forward run's detached table (the forward's names)
    back = _statements("db2_partition.rollback.db2")
    first_step = next(i for i, s in enumerate(back) if "EXECUTE IMMEDIATE" in s)
    assert (
        'FROM "SALES"."TW_95F66C2B39BC_DETACHED"' in back[first_step]
        and "ATTACH PARTITION" in back[first_step]
    )


def _attachable(table: list[tuple], copy: list[tuple], options: tuple[tuple, tuple] | None = None) -> bool:
    """Check 17 of the partition script (the copy table can be attached) on a catalog holding
    these columns of SALES.ORDERS and of the copy: True when it passes."""
    check = next(
        s for s in _statements("db2_partition.forward.db2") if "the copy table cannot be attached" in s
    )
    sql = _sqlite(check)
    db = _sqlite_catalog()
    db.create_function("RAISE_ERROR", 2, lambda state, message: message)
    db.execute(
        "CREATE TABLE SYSCAT.COLUMNS (TABSCHEMA, TABNAME, COLNO, COLNAME, TYPESCHEMA, TYPENAME, LENGTH, SCALE, NULLS, "
        'CODEPAGE, "DEFAULT", HIDDEN, COMPRESS)'
    )
    db.execute(
        "CREATE TABLE SYSCAT.TABLES (TABSCHEMA, TABNAME, TYPE, TBSPACE, COMPRESSION, ROWCOMPMODE, APPEND_MODE)"
    )
    db.execute(
        "CREATE TABLE SYSCAT.DATAPARTITIONS (TABSCHEMA, TABNAME, DATAPARTITIONNAME, TBSPACEID, STATUS)"
    )
    db.execute("CREATE TABLE SYSCAT.TABLESPACES (TBSPACE, TBSPACEID)")
    db.execute("CREATE TABLE SYSCAT.DATAPARTITIONEXPRESSION (TABSCHEMA, TABNAME)")
    db.executemany(
        "INSERT INTO SYSCAT.TABLESPACES VALUES (?, ?)", [("TS_ORDERS_2024", 5), ("TS_ORDERS_2024_FC", 9)]
    )
    db.execute("INSERT INTO SYSCAT.DATAPARTITIONS VALUES ('SALES', 'ORDERS', 'P2024Q1', 5, '')")
    mine, theirs = options or (("N", " ", "N"), ("N", " ", "N"))
    db.executemany(
        "INSERT INTO SYSCAT.TABLES VALUES ('SALES', ?, 'T', ?, ?, ?, ?)",
        [("ORDERS", "TS_ORDERS_2024", *mine), ("TW_95F66C2B39BC_COPY", "TS_ORDERS_2024_FC", *theirs)],
    )
    for name, cols in (("ORDERS", table), ("TW_95F66C2B39BC_COPY", copy)):
        db.executemany(
            "INSERT INTO SYSCAT.COLUMNS VALUES ('SALES', ?, ?, ?, 'SYSIBM', ?, ?, 0, ?, 1208, NULL, ' ', 'O')",
            [(name, i, *c) for i, c in enumerate(cols)],
        )
    return db.execute(sql).fetchone() is None


def test_the_attachable_check_finds_each_mismatch() -> None:
    cols = [("ORDER_ID", "BIGINT", 8, "N"), ("ORDER_DATE", "DATE", 4, "N"), ("NOTE", "VARCHAR", 200, "Y")]
    assert _attachable(cols, cols)
    assert not _attachable(cols, [*cols[:2], ("NOTE", "VARCHAR", 100, "Y")])  # length
    assert not _attachable(cols, [*cols[:2], ("NOTE", "VARCHAR", 200, "N")])  # nullability
    assert not _attachable(cols, [cols[1], cols[0], cols[2]])  # order
    assert not _attachable(cols, cols[:2])  # a column missing
    assert not _attachable(cols, cols, (("R", "A", "N"), ("N", " ", "N")))  # row compression
    assert not _attachable(cols, cols, (("N", " ", "Y"), ("N", " ", "N")))  # append mode


def test_check_only_scripts_are_stored_for_every_approved_db2_move(demo_scripts: dict[str, str]) -> None:
    """app.scripts stores a check-only script (direction "check") beside each forward and rollback."""
    directions = {name.rsplit(".", 2)[-2] for name in demo_scripts}
    assert directions == {"forward", "rollback", "check"}, directions
    forwards = [n for n in demo_scripts if n.endswith(".forward.db2")]
    assert forwards and all(n.replace(".forward.", ".check.") in demo_scripts for n in forwards)


def test_the_old_golden_fixture_is_the_pre_issue_file() -> None:
    """The fixture is what the generator wrote before #30; rendering today's differs where the fix is."""
    old = (FIXTURES / "db2_tablespace.forward.before_issue30.db2").read_text(encoding="utf-8")
    move = case_move(next(c for c in DB2_CASES if c.name == "db2_tablespace"))
    now = render_pair(move, "db2", OPTIONS, GENERATED_AT)[0].text
    assert "SET SERVEROUTPUT ON@\nCONNECT TO SALESDB@" in old and "CURRENT LOCK TIMEOUT" not in old
    assert "CONNECT TO SALESDB@\nSET SERVEROUTPUT ON@\nSET CURRENT LOCK TIMEOUT = 60@" in now
