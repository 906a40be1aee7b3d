"""DB2 CLP scripts, hardened (issue #15, part D): structural checks on the generated text that
each fail without the fix they cover, plus the range-overlap predicate run on SQLite."""

from __future__ import annotations

import re
import sqlite3
from dataclasses import replace
from decimal import Decimal

import pytest

from migrations import AddDataPartition, MoveDataPartition, render_pair
from migrations.db2_ranges import overlap_sql
from migrations.plan import Move
from tests.migrations.golden_cases import CASES, GENERATED_AT, OPTIONS, case_move, render_case
from tests.migrations.sqltokens import db2_statements

DB2_CASES = [c for c in CASES if c.dialect == "db2"]


@pytest.fixture(scope="module")
def scripts() -> dict[str, str]:
    out: dict[str, str] = {}
    for case in DB2_CASES:
        out.update(render_case(case))
    return out


def _case(name: str) -> Move:
    return case_move(next(c for c in DB2_CASES if c.name == name))


def _render(move: Move) -> tuple[str, str]:
    forward, rollback = render_pair(move, "db2", OPTIONS, GENERATED_AT)
    return forward.text, rollback.text


def _header(text: str) -> str:
    return text.split("\nUPDATE COMMAND OPTIONS USING C ON S ON@")[0]


def _index(statements: list[str], needle: str) -> int:
    return next(i for i, s in enumerate(statements) if needle in s)


# 1. the rollback of a new partition detaches it only while it is empty


def test_add_partition_rollback_stops_when_the_partition_holds_rows() -> None:
    _, rollback = _render(_case("db2_ilm_add_partition"))
    statements = db2_statements(rollback)
    probe = _index(statements, 'SELECT COUNT_BIG(*) FROM (SELECT 1 FROM "SALES"."ORDERS" WHERE ')
    detach = _index(statements, "DETACH PARTITION")
    assert probe < detach, "the emptiness check must run before the DETACH"
    block = statements[probe]
    # the key from the catalog, the bounds with their inclusive flags, one row at most
    assert "FROM SYSCAT.DATAPARTITIONEXPRESSION" in block
    assert "CASE WHEN v_lowinc = 'Y' THEN ' >= ' ELSE ' > ' END" in block
    assert "CASE WHEN v_highinc = 'Y' THEN ' <= ' ELSE ' < ' END" in block
    assert "FETCH FIRST 1 ROW ONLY) AS X" in block
    assert re.search(r"IF v_rows > 0 THEN\s+SIGNAL SQLSTATE '75001'", block)
    assert "SQL0327N" in _header(rollback) and "Nothing was changed" in _header(rollback)


# 2. autocommit and stop-on-error are forced, whatever DB2OPTIONS says


def test_every_script_forces_autocommit_and_stop_on_error(scripts: dict[str, str]) -> None:
    for name, text in scripts.items():
        assert db2_statements(text)[0] == "UPDATE COMMAND OPTIONS USING C ON S ON", name


# 3. the header names the authority every routine the script calls needs


def test_header_names_every_routine_the_script_calls(scripts: dict[str, str]) -> None:
    for name, text in scripts.items():
        body = text[len(_header(text)) :]
        head = _header(text)
        routines = set(re.findall(r"\b((?:MON_GET|ADMIN_GET)_\w+)\(", body))
        assert routines, name
        for routine in routines:
            assert routine in head, f"{name}: {routine} is called but its authority is not named"
        assert "EXECUTE on SYSPROC." in head and "DBADM, SQLADM or DATAACCESS" in head, name
        assert "Needs SYSCTRL or SYSADM;" not in head, name


# 4. partition move: sizes from ADMIN_GET_TAB_INFO, row counts compared before the drop


def test_partition_move_sizes_from_admin_get_tab_info_and_counts_before_the_drop() -> None:
    forward, rollback = _render(_case("db2_partition"))
    for text in (forward, rollback):
        statements = db2_statements(text)
        room = statements[_index(statements, "not enough free space")]
        assert "FPAGES" not in room
        for column in (
            "DATA_OBJECT_P_SIZE",
            "INDEX_OBJECT_P_SIZE",
            "LONG_OBJECT_P_SIZE",
            "LOB_OBJECT_P_SIZE",
        ):
            assert column in room
        assert "SYSPROC.ADMIN_GET_TAB_INFO('SALES', 'ORDERS')" in room and "* 1024 *" in room
        drop = next(
            i for i, s in enumerate(statements) if re.search(r"DROP TABLE \"SALES\"\.\"TW_\w+_DETACHED\"", s)
        )
        count = _index(statements, "row counts differ: detached table kept")
        assert count < drop
        block = statements[count]
        assert '\'SELECT COUNT_BIG(*) FROM "SALES"."ORDERS" WHERE \' || v_where' in block
        assert re.search(r"SELECT COUNT_BIG\(\*\) FROM \"SALES\"\.\"TW_\w+_DETACHED\"", block)
        assert "IF v_rows <> v_other THEN" in block
        # the copy is attached only when it holds every row of the detached table (issue #30 N1:
        # the count is the ATTACH's guard now, and a short copy goes to the repair, not a stop)
        copy = _index(statements, "copying the rows into")
        attach = statements[_index(statements, "attaching partition")]
        assert copy < _index(statements, "attaching partition")
        assert "INSERT INTO" in statements[copy]
        assert attach.index("IF v_rows = v_other THEN") < attach.index("ATTACH PARTITION")


# 5. the backup check wants a successful full database backup


def test_backup_check_wants_a_full_database_backup(scripts: dict[str, str]) -> None:
    for name, text in scripts.items():
        check = next(s for s in db2_statements(text) if "SYSIBMADM.DB_HISTORY" in s)
        for part in (
            "OPERATION = 'B'",
            "OBJECTTYPE = 'D'",
            "OPERATIONTYPE IN ('F', 'N')",
            "COALESCE(SQLCODE, 0) >= 0",
            "NOT LIKE '/dev/null%'",
            "NOT IN ('NUL', 'NUL:')",
        ):
            assert part in check, f"{name}: {part}"
        # DEVICETYPE 'N' is "generated internally by Db2" (DB_HISTORY), not the null device
        assert "DEVICETYPE" not in check, name


# 6. the ILM add-partition checks test the range and the table spaces for real


def test_add_partition_checks_the_range_and_never_compares_a_table_space_with_itself() -> None:
    move = _case("db2_ilm_add_partition")
    a = move.action
    assert isinstance(a, AddDataPartition) and a.tablespace == a.like_tablespace
    forward, _ = _render(move)
    statements = db2_statements(forward)
    overlap = statements[_index(statements, "the new range overlaps another partition")]
    assert "D.HIGHVALUE > '''2024-07-01'''" in overlap and "D.LOWVALUE < '''2024-10-01'''" in overlap
    same = f"O.TBSPACE = '{a.tablespace}' WHERE N.TBSPACE = '{a.tablespace}'"
    assert not any(same in s for s in statements), "a table space compared with itself"
    assert any(f"TBSPACE = '{a.tablespace}' AND SGNAME = 'SG_HOT'" in s for s in statements)
    # a new table space on the hot tier is compared with the one it is created like
    other = replace(move, action=replace(a, tablespace="TS_ORDERS_2024_HOT"))
    statements = db2_statements(_render(other)[0])
    assert any(
        "NOT EXISTS (SELECT 1 FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_ORDERS_2024')" in s
        for s in statements
    )
    assert any("O.TBSPACE = 'TS_ORDERS_2024' WHERE N.TBSPACE = 'TS_ORDERS_2024_HOT'" in s for s in statements)


def _overlapping(rows: list[tuple[str, str, str, str, str]], predicate: str) -> list[str]:
    db = sqlite3.connect(":memory:")
    db.create_function("DECFLOAT", 1, lambda v: float(Decimal(v)))
    db.execute(
        "CREATE TABLE D (DATAPARTITIONNAME TEXT, LOWVALUE TEXT, LOWINCLUSIVE TEXT, HIGHVALUE TEXT, HIGHINCLUSIVE TEXT)"
    )
    db.executemany("INSERT INTO D VALUES (?, ?, ?, ?, ?)", rows)
    return [r[0] for r in db.execute(f"SELECT DATAPARTITIONNAME FROM D WHERE {predicate} ORDER BY 1")]


def test_overlap_predicate_on_dates_and_numbers() -> None:
    dates = [
        ("P1", "'2024-01-01'", "Y", "'2024-04-01'", "N"),
        ("P2", "'2024-04-01'", "Y", "'2024-07-01'", "N"),  # ends where the new one starts: no overlap
        ("P3", "'2024-04-01'", "Y", "'2024-07-01'", "Y"),  # includes 2024-07-01: overlaps
        ("P4", "'2024-09-01'", "Y", "MAXVALUE", "Y"),  # open end above
        ("P5", "'2024-10-01'", "Y", "'2025-01-01'", "N"),  # starts where the new one ends (exclusive)
    ]
    assert _overlapping(dates, overlap_sql("2024-07-01", True, "2024-10-01", False)) == ["P3", "P4"]
    numbers = [
        ("N1", "MINVALUE", "Y", "100", "N"),
        ("N2", "100", "Y", "200", "N"),
        ("N3", "150", "Y", "900", "N"),
        ("N4", "1000", "Y", "2000", "N"),
    ]
    # as numbers, 900 < 1000 (as text '900' > '1000' and N3 would wrongly overlap)
    assert _overlapping(numbers, overlap_sql("200", True, "1000", False)) == ["N3"]
    assert _overlapping(numbers, overlap_sql(None, None, "50", False)) == ["N1"]


# 8. pre-checks: foreign keys before a DETACH, pureScale everywhere


def test_detach_stops_on_foreign_keys_and_every_script_refuses_purescale(scripts: dict[str, str]) -> None:
    for name, text in scripts.items():
        statements = db2_statements(text)
        assert any("FROM SYSIBMADM.DB2_CF" in s and "pureScale" in s for s in statements), name
        if any("DETACH PARTITION" in s for s in statements):
            fk = _index(
                statements, "FROM SYSCAT.REFERENCES WHERE REFTABSCHEMA = 'SALES' AND REFTABNAME = 'ORDERS'"
            )
            assert fk < _index(statements, "DETACH PARTITION"), name
    detaching = [n for n, t in scripts.items() if any("DETACH PARTITION" in s for s in db2_statements(t))]
    assert len(detaching) >= 3, detaching  # the partition move both ways and the ILM rollback


def test_signal_messages_fit_70_bytes(scripts: dict[str, str]) -> None:
    texts = list(scripts.values())
    for name in ("db2_partition", "db2_ilm_add_partition"):
        texts.extend(_render(replace(_case(name), target=replace(_case(name).target, database="LONGNAME"))))
    for text in texts:
        for m in re.finditer(r"MESSAGE_TEXT = '((?:[^']|'')*)'", text):
            assert len(m.group(1).replace("''", "'").encode()) <= 70, m.group(1)


# 9. every script says how long, how much log, what waits, backups, abort, recover


def test_every_script_has_a_complete_operations_block(scripts: dict[str, str]) -> None:
    labels = ("Duration:", "Log volume:", "Blocking:", "Backups:", "To abort:", "To recover:")
    for name, text in scripts.items():
        head = _header(text)
        assert "-- Operations:" in head, name
        for label in labels:
            line = next(ln for ln in head.split("\n") if ln.startswith(f"--   {label}"))
            assert len(line.split(label, 1)[1].strip()) > 10, f"{name}: {label} empty"
    rebalance = _header(scripts["db2_tablespace.forward.db2"])
    assert "MON_GET_REBALANCE_STATUS('USERSPACE1', -2)" in rebalance
    assert 'ALTER TABLESPACE "USERSPACE1" REBALANCE SUSPEND' in rebalance
    assert re.search(r"Duration: .*for 1\.0 GB at ~100-200 MB/s", rebalance)


def test_duration_scales_with_the_plan_size() -> None:
    move = _case("db2_partition")
    big = replace(move, why=replace(move.why, size_bytes=300 * 1024**3))
    assert isinstance(move.action, MoveDataPartition)
    head = _header(_render(big)[0])
    assert "about 34-102 min for 300.0 GB at ~50-150 MB/s" in head
    assert "about the partition's size (300.0 GB) in one transaction" in head


# the dynamic row counts: only SELECT COUNT_BIG(*) is ever prepared, and it parses


DYNAMIC = re.compile(r"SET v_sql = ('(?:[^']|'')*')(?: \|\| v_where(?: \|\| ('(?:[^']|'')*'))?)?;")
SAMPLE_WHERE = "\"ORDER_DATE\" >= '2024-07-01' AND \"ORDER_DATE\" < '2024-10-01'"


def test_dynamic_counts_are_fixed_selects_that_parse(scripts: dict[str, str]) -> None:
    import sqlfluff

    seen = 0
    for name, text in scripts.items():
        for stmt in db2_statements(text):
            if "PREPARE s1 FROM v_sql;" not in stmt:
                continue
            lines = [ln.strip() for ln in stmt.split("\n")]
            sets = [ln for ln in lines if ln.startswith("SET v_sql = ")]
            assert sets and len(sets) == lines.count("PREPARE s1 FROM v_sql;"), name
            for line in sets:
                m = DYNAMIC.fullmatch(line)
                assert m, f"{name}: run-time SELECT not in the fixed form: {line}"
                sql = m.group(1)[1:-1].replace("''", "'")
                if "|| v_where" in line:
                    sql += SAMPLE_WHERE + (m.group(2)[1:-1].replace("''", "'") if m.group(2) else "")
                assert sql.startswith("SELECT COUNT_BIG(*) FROM "), sql
                sqlfluff.parse(sql, dialect="db2")  # raises when it does not parse
                seen += 1
            for ln in lines:
                if ln.startswith(("PREPARE", "OPEN", "FETCH", "CLOSE")):
                    assert ln in ("PREPARE s1 FROM v_sql;", "OPEN c1;", "CLOSE c1;") or re.fullmatch(
                        r"FETCH c1 INTO v_(rows|other);", ln
                    ), ln
    assert seen >= 5


# 7. DBA review (issue #15 follow-up)


def test_detach_waits_for_the_asynchronous_detach_task_before_the_copy() -> None:
    """Check 15 used to run straight after the DETACH and stop the script while the asynchronous
    partition detach task was still converting the partition (TYPE 'L'), rows invisible."""
    forward, _ = _render(_case("db2_partition"))
    statements = db2_statements(forward)
    detach = _index(statements, 'EXECUTE IMMEDIATE \'ALTER TABLE "SALES"."ORDERS" DETACH PARTITION')
    wait = _index(statements, "detach still in progress")
    copy = _index(statements, "copying the rows into")
    assert detach < wait < copy
    block = statements[wait]
    assert block.startswith("BEGIN"), "the detach check must wait in a compound statement, not fail at once"
    loop = re.search(r"WHILE v_waited < (\d+) AND \((.*)\) DO\n(.*?)END WHILE;", block, re.S)
    assert loop, block
    assert int(loop.group(1)) == 600
    condition, body = loop.group(2), loop.group(3)
    assert "TYPE <> 'T'" in condition and "STATUS IN ('D', 'L')" in condition
    assert "'I'" not in condition, "asynchronous index cleanup (STATUS 'I') does not block the copy"
    assert re.search(r"SET v_status = DBMS_PIPE\.RECEIVE_MESSAGE\('[A-Z0-9_]+', 10\);", body)
    assert "SET v_waited = v_waited + 10;" in body
    after = block[block.index("END WHILE;") :]
    assert "IF " + condition + " THEN" in after and "SIGNAL SQLSTATE '75001'" in after
    assert 'the rows stay in "SALES"."TW_' in after
    # the steps after the wait ignore a partition row left over for index cleanup
    for needle in ("copying the rows into", "step 6: attaching partition"):
        assert "DATAPARTITIONNAME = 'P2024Q1' AND STATUS <> 'I')" in statements[_index(statements, needle)]
    # a rerun while the detach is still logical does not detach again
    step3 = statements[_index(statements, "step 4: detaching partition")]
    assert (
        "TBSPACEID = (SELECT TBSPACEID FROM SYSCAT.TABLESPACES WHERE TBSPACE = 'TS_ORDERS_2024') AND STATUS = ''"
        in step3
    )
    head = _header(forward)
    assert "invisible in the table from the DETACH until the ATTACH and SET INTEGRITY complete" in head
    assert "waits up to 10 min" in head and "DBMS_PIPE" in head


def test_add_partition_check_tests_the_partitioning_key_not_datapartitions() -> None:
    """SYSCAT.DATAPARTITIONS has a row for a non-partitioned table too: the check could not fail."""
    forward, _ = _render(_case("db2_ilm_add_partition"))
    check = next(s for s in db2_statements(forward) if "table missing or not partitioned" in s)
    assert (
        "NOT EXISTS (SELECT 1 FROM SYSCAT.DATAPARTITIONEXPRESSION WHERE TABSCHEMA = 'SALES' AND TABNAME = 'ORDERS')"
        in check
    )
    assert "SYSCAT.DATAPARTITIONS" not in check


def test_add_partition_in_the_same_table_space_creates_nothing_and_numbers_steps_from_1() -> None:
    move = _case("db2_ilm_add_partition")
    a = move.action
    assert isinstance(a, AddDataPartition) and a.tablespace == a.like_tablespace
    forward, _ = _render(move)
    assert "EXECUTE IMMEDIATE v_sql" not in forward, "a table space created like itself"
    steps = re.findall(r"^-- (step \d+):", forward, re.M)
    assert steps == [f"step {i}" for i in range(1, len(steps) + 1)], steps
    assert "created if missing like" not in _header(forward)
    # a new table space is still created like the newest partition's
    other = replace(move, action=replace(a, tablespace="TS_ORDERS_2024_HOT"))
    text = _render(other)[0]
    assert "EXECUTE IMMEDIATE v_sql" in text
    steps = re.findall(r"^-- (step \d+):", text, re.M)
    assert steps == [f"step {i}" for i in range(1, len(steps) + 1)], steps


def test_dependent_check_finds_mqts_and_staging_tables_not_typed_tables() -> None:
    forward, _ = _render(_case("db2_partition"))
    check = next(s for s in db2_statements(forward) if "SYSCAT.TABDEP AS D" in s)
    assert "(T.TYPE = 'S' OR SUBSTR(T.PROPERTY, 2, 1) = 'Y')" in check
    assert "'U'" not in check


def test_copy_count_message_does_not_claim_a_rollback() -> None:
    forward, _ = _render(_case("db2_partition"))
    assert "rolled back" not in forward.split("-- Checks")[1]
    copy = next(s for s in db2_statements(forward) if "copying the rows into" in s)
    assert "DELETE FROM" in copy and copy.index("DELETE FROM") < copy.index("INSERT INTO")


def _step_numbers(text: str) -> list[int]:
    return [int(n) for n in re.findall(r"^-- step (\d+):", text, re.M)]


def test_steps_are_numbered_from_1_without_gaps_whether_or_not_the_group_is_created(
    scripts: dict[str, str],
) -> None:
    """H7 #4: ensure_group made a step only when it could create the storage group; a group
    without paths (every rollback: the group it goes back to exists) was only checked, and the
    steps started at 2. Now the group is always step 1 (created, or checked and said), and every
    script's steps run 1, 2, 3 ... in order (a step may have two comments, never a gap)."""
    for name, text in scripts.items():
        numbers = _step_numbers(text)
        if name.endswith(".check.db2"):  # a check-only run takes no step (it prints them)
            assert not numbers, name
            continue
        assert numbers, name
        assert numbers == sorted(numbers), name
        assert sorted(set(numbers)) == list(range(1, max(numbers) + 1)), (name, numbers)
        if "storage group" in text.split("-- step 1:", 1)[1].split("\n", 1)[0]:
            assert "'step 1: already done: storage group " in text, name


def test_storage_group_step_is_safe_to_run_twice(scripts: dict[str, str]) -> None:
    """H7 #4: CREATE STOGROUP runs only in the branch where SYSCAT.STOGROUPS has no such group;
    a second run (or a later ILM part using the same group) says already done."""
    created = 0
    for name, text in scripts.items():
        for statement in db2_statements(text):
            if "CREATE STOGROUP" not in statement:
                continue
            created += 1
            guard = statement.index("IF EXISTS (SELECT 1 FROM SYSCAT.STOGROUPS WHERE SGNAME = ")
            done = statement.index("step 1: already done: storage group")
            assert (
                guard < done < statement.index("ELSE") < statement.index("EXECUTE IMMEDIATE 'CREATE STOGROUP")
            ), name
    assert created


def test_a_group_without_paths_is_checked_and_still_step_1() -> None:
    move = _case("db2_partition")
    a = move.action
    assert isinstance(a, MoveDataPartition) and a.target.paths
    forward, _ = _render(replace(move, action=replace(a, target=replace(a.target, paths=()))))
    assert "CREATE STOGROUP" not in forward
    assert f"failed: storage group {a.target.name} missing" in forward
    assert _step_numbers(forward)[0] == 1
    assert sorted(set(_step_numbers(forward))) == list(range(1, 10))
