"""What the 2 a.m. DBA meets (H5): a backup running when the script starts, a storage group that
is missing, elsewhere or without a usable path, and an emptied file that REMOVE FILE refuses.
Structural checks on the generated text, each failing without the change it covers, plus the
room predicate run on SQLite."""

from __future__ import annotations

import re
import sqlite3
from dataclasses import replace

import pytest

from migrations import MoveTablespace, render_pair
from migrations.db2_frame import room_sql
from migrations.plan import Move
from tests.migrations.golden_cases import CASES, GENERATED_AT, OPTIONS, case_move, render_case
from tests.migrations.sqltokens import db2_skeleton, db2_statements, tsql_batches, tsql_skeleton

DB2 = {n: t for c in CASES if c.dialect == "db2" for n, t in render_case(c).items()}
TSQL = {n: t for c in CASES if c.dialect == "tsql" for n, t in render_case(c).items()}
# statements that change something: DDL built in a compound statement, or the log path update
CHANGE = re.compile(r"EXECUTE IMMEDIATE|CALL SYSPROC\.ADMIN_CMD")
REMOVE = re.compile(r"^\s*ALTER DATABASE \[.*\] REMOVE FILE ", re.MULTILINE)


def _db2_case(name: str) -> Move:
    return case_move(next(c for c in CASES if c.name == name))


def _index(statements: list[str], needle: str) -> int:
    return next(i for i, s in enumerate(statements) if needle in s)


# 1. DB2: a running backup stops every script before its first change


@pytest.mark.parametrize("name", sorted(DB2))
def test_every_db2_script_stops_for_a_running_backup_before_its_first_change(name: str) -> None:
    statements = db2_statements(DB2[name])
    check = _index(statements, "FROM TABLE(MON_GET_UTILITY(-2)) AS U")
    assert "U.UTILITY_TYPE IN ('BACKUP')" in statements[check]
    # the header lists it and names the authority MON_GET_UTILITY needs
    head = DB2[name].split("\nUPDATE COMMAND OPTIONS USING C ON S ON@")[0]
    assert "no BACKUP of SALESDB is running (SYSPROC.MON_GET_UTILITY(-2)" in head
    assert "MON_GET_UTILITY" in head.split("Needs ", 1)[1].split("\n", 1)[0]
    if name.endswith(".check.db2"):
        # the check-only run (issue #30) warns about a backup running now and changes nothing
        assert statements[check].startswith("BEGIN") and "SIGNAL" not in statements[check]
        assert "warning: check 6 failed: a BACKUP is running" in statements[check]
        assert not any(CHANGE.search(s) for s in statements), name
        return
    assert statements[check].startswith("SELECT RAISE_ERROR('75001', 'tierwise check ")
    first_change = next(i for i, s in enumerate(statements) if CHANGE.search(s))
    assert check < first_change, name


# 2. DB2: the target storage group has the planned paths and a usable one, before the move


def test_an_existing_group_on_other_paths_stops_before_anything_changes() -> None:
    statements = db2_statements(DB2["db2_tablespace.forward.db2"])
    group = _index(statements, "CREATE STOGROUP")
    elsewhere = _index(statements, "exists on other paths")
    # a check of its own before the step (issue #30: no check inside a change), for an existing
    # group only, a planned path its storage paths lack
    check = statements[elsewhere]
    assert check.startswith("SELECT RAISE_ERROR('75001', 'tierwise check ")
    assert "FROM (VALUES ('/db2/sata1')) AS W(PATH) WHERE EXISTS (SELECT 1 FROM SYSCAT.STOGROUPS" in check
    assert "AND NOT EXISTS (SELECT 1 FROM TABLE(ADMIN_GET_STORAGE_PATHS('SG_SATA', -1)) AS P" in check
    block = statements[group]
    exists, create = block.index("IF EXISTS (SELECT 1 FROM SYSCAT.STOGROUPS"), block.index("  ELSE\n")
    assert exists < block.index("step 1: already done") < create and "SIGNAL" not in block
    # the check comes before it, and it is the first statement that can change anything
    assert elsewhere < group == next(i for i, s in enumerate(statements) if CHANGE.search(s))


@pytest.mark.parametrize("name", sorted(DB2))
def test_a_usable_path_is_checked_after_step_1_and_before_step_2(name: str) -> None:
    text = DB2[name]
    step = re.search(r"^-- (step \d+): storage group", text, re.M)
    statements = db2_statements(text)
    if name.endswith(".check.db2"):
        # no step runs; the check runs where the group exists already, else says it did not run
        if "no usable storage path in " not in text:
            assert name.startswith(("db2_log.", "db2_ilm_add_partition.rollback")), name
            return
        usable = statements[_index(statements, "no usable storage path in ")]
        assert "WHERE (EXISTS (SELECT 1 FROM SYSCAT.STOGROUPS WHERE SGNAME = " in usable
        return
    if step is None:
        # the log move and the detach of a new partition (leading edge rollback) use no group
        assert name.startswith(("db2_log.", "db2_ilm_add_partition.rollback")), name
        return
    group = _index(statements, f"'{step.group(1)}: ")
    usable = _index(statements, "no usable storage path in ")
    assert (
        "P.DB_STORAGE_PATH_STATE <> 'DROP_PENDING' AND P.STO_PATH_FREE_SIZE IS NOT NULL" in statements[usable]
    )
    later = [i for i, s in enumerate(statements) if CHANGE.search(s) and i > group]
    assert group < usable < (later[0] if later else len(statements)), name


def test_room_checks_count_only_usable_paths_and_never_pass_on_none() -> None:
    for name in ("db2_tablespace.forward.db2", "db2_partition.forward.db2"):
        room = next(s for s in db2_statements(DB2[name]) if "not enough free space in" in s)
        assert (
            "COALESCE((SELECT MIN(P.STO_PATH_FREE_SIZE) * COUNT(*) FROM TABLE(ADMIN_GET_STORAGE_PATHS("
            in room
        )
        assert "WHERE P.DB_STORAGE_PATH_STATE <> 'DROP_PENDING'), 0) < " in room


def test_room_predicate_on_sqlite() -> None:
    """The free room of a group as the scripts compute it, with ADMIN_GET_STORAGE_PATHS replaced
    by a table: no usable path is 0 bytes (the check stops), where the old MIN * COUNT was NULL
    and `NULL < need` let the check pass; a DROP_PENDING path takes no new containers."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE paths (DB_STORAGE_PATH_STATE TEXT, STO_PATH_FREE_SIZE INTEGER)")
    room = room_sql("SG").replace("TABLE(ADMIN_GET_STORAGE_PATHS('SG', -1)) AS P", "paths AS P")
    assert "paths AS P" in room

    def stops(need: int) -> bool:
        return bool(db.execute(f"SELECT {room} < {need}").fetchone()[0])

    old = "(SELECT MIN(P.STO_PATH_FREE_SIZE) * COUNT(*) FROM paths AS P)"
    assert db.execute(f"SELECT {old} < 100").fetchone()[0] is None  # the bug: never true
    assert stops(100)
    db.execute("INSERT INTO paths VALUES ('DROP_PENDING', 5), ('IN_USE', 1000), ('NOT_IN_USE', 800)")
    assert not stops(1600) and stops(1601)  # 800 x 2 usable paths; the dropped one does not count


def test_hostile_group_and_path_names_stay_inside_their_quotes() -> None:
    move = _db2_case("db2_tablespace")
    a = move.action
    assert isinstance(a, MoveTablespace)
    group = replace(a.target, name='SG "hot"\' OR 1=1 --', paths=("/db2/o'brien) --/",))
    hostile = replace(move, action=replace(a, target=group, tablespace="TS \"x\" 'y'"))
    forward, _ = render_pair(hostile, "db2", OPTIONS, GENERATED_AT)
    statements = db2_statements(forward.text)
    for needle in (
        "MON_GET_UTILITY",
        "CREATE STOGROUP",
        "STO_PATH_FREE_SIZE IS NOT NULL",
        "COALESCE((SELECT MIN(",
    ):
        statement = statements[_index(statements, needle)]
        skeleton = db2_skeleton(statement)
        assert "OR 1=1" not in skeleton and "brien" not in skeleton and "--" not in skeleton, skeleton
    check = statements[_index(statements, "exists on other paths")]
    assert "OR 1=1" not in db2_skeleton(check) and "brien" not in db2_skeleton(check)
    assert "ADMIN_GET_STORAGE_PATHS('SG \"hot\"'' OR 1=1 --', -1)" in check
    assert "(VALUES ('/db2/o''brien) --')) AS W(PATH)" in check


# 3. T-SQL: REMOVE FILE only once the file is empty; the log backup is printed, never taken


def not_emptied_check(batch: str) -> str:
    """The IF line of a REMOVE FILE batch that refuses a file still holding pages."""
    start = batch.index("IF EXISTS (SELECT 1 FROM sys.database_files AS df WHERE df.name = ")
    line = batch[start : batch.index("\n", start)]
    assert "sys.dm_db_file_space_usage" in line and "> 0 OR FILEPROPERTY(df.name, 'SpaceUsed') > " in line
    assert "8 * (CEILING(df.size / 8088.0) + CEILING(df.size / 511232.0) - 1)" in line
    return line


@pytest.mark.parametrize("name", ["tsql_filegroup_online.forward.sql", "tsql_filegroup_online.rollback.sql"])
def test_remove_file_checks_the_file_is_empty_first(name: str) -> None:
    batches = [b for b in tsql_batches(TSQL[name]) if REMOVE.search(b)]
    assert batches
    for batch in batches:
        # the emptiness check (issue #30, N10): no page of a table or index in a uniform extent,
        # and no used extent beyond the allocation pages' (PFS and GAM intervals)
        check = batch.index(not_emptied_check(batch))
        remove = REMOVE.search(batch)
        assert remove is not None and check < batch.index("BEGIN TRY") < remove.start()
        assert "REMOVE FILE would fail with error 5042 (not empty)" in batch
        assert "No log backup is needed before REMOVE FILE." in batch


@pytest.mark.parametrize("name", sorted(TSQL))
def test_no_script_takes_a_backup_and_online_moves_print_the_log_backup_as_next_step(name: str) -> None:
    text = TSQL[name]
    assert not re.search(r"\bBACKUP\s+(LOG|DATABASE)\b", tsql_skeleton(text)), name
    if not name.startswith("tsql_filegroup_online"):
        return
    post = next(b for b in tsql_batches(text) if "post-check passed" in b)
    guard = post.index("recovery_model_desc <> N'SIMPLE'")
    assert guard < post.index("next step: resume the log backup jobs of [Sales] and take a log backup now")


def test_hostile_file_names_in_the_emptiness_check() -> None:
    text = render_case(next(c for c in CASES if c.name == "tsql_hostile_names"))[
        "tsql_hostile_names.forward.sql"
    ]
    batches = [b for b in tsql_batches(text) if REMOVE.search(b)]
    assert batches
    for batch in batches:
        skeleton = tsql_skeleton(batch)
        assert "DROP DATABASE" not in skeleton and "odd" not in skeleton
        assert (
            "WHERE df.name = N'?' AND ((SELECT COALESCE(SUM(su.user_object_reserved_page_count" in skeleton
            and "FILEPROPERTY(df.name, '?') > 8 * (CEILING(df.size / 8088.0) + CEILING(df.size / 511232.0) - 1)))"
            in skeleton
        )


# 4. every T-SQL file move names the permissions it needs


@pytest.mark.parametrize(
    "name", sorted(n for n in TSQL if n.startswith(("tsql_filegroup", "tsql_log", "tsql_tempdb")))
)
def test_file_move_headers_list_permissions(name: str) -> None:
    head = TSQL[name].split(":on error exit")[0]
    line = next(ln for ln in head.split("\n") if "Permissions:" in ln)
    assert "VIEW SERVER STATE" in line, name
    if "online" in name:
        assert "db_owner (DBCC SHRINKFILE)" in line and "ALTER on the database" in line
    elif "tempdb" in name:
        assert "ALTER on tempdb (MODIFY FILE)" in line
    else:
        assert "sysadmin (the run marker" in line and "SET OFFLINE / ONLINE" in line
