"""The T-SQL frame (migrations/tsql.py): progress lines sent at once with a timestamp, the STOPPED
line from the failing batch itself, step start/done/error lines, and the full-backup check."""

from __future__ import annotations

import itertools
import re

from migrations.plan import Options
from migrations.tsql_checks import backup_check
from migrations.tsql_frame import Batches, fail, finish, say, step
from tests.migrations.golden_cases import CASES, case_move, render_case
from tests.migrations.sqltokens import tsql_batches

TSQL = [c for c in CASES if c.dialect == "tsql"]
FRAME_VARS = ("@tw_say", "@tw_t0", "@tw_err")


def test_say_is_sent_at_once_with_a_utc_timestamp_and_percent_safe() -> None:
    line = say("100 % of [a%b] done")
    assert "PRINT" not in line
    set_line, raise_line = line.split("\n")
    assert set_line.startswith(
        "SET @tw_say = N'tierwise: ' + CONVERT(nvarchar(19), SYSUTCDATETIME(), 126) + N'Z '"
    )
    assert "N'100 % of [a%b] done'" in set_line
    # the text only ever reaches RAISERROR as the argument of a fixed %s format
    assert raise_line == "RAISERROR(N'%s', 0, 1, @tw_say) WITH NOWAIT;"


def test_batches_declare_the_frame_variables_they_use() -> None:
    script = Batches(["h"])
    script.add("SELECT 1;")
    script.add(say("x"))
    assert script.batches[0] == ["SELECT 1;"]
    assert script.batches[1][0] == "DECLARE @tw_say nvarchar(2048);"


def test_every_golden_batch_declares_what_it_uses_and_say_sits_in_a_block() -> None:
    for case in TSQL:
        for name, text in render_case(case).items():
            for batch in tsql_batches(text):
                lines = [ln for ln in batch.split("\n") if ln.strip()]
                for var in FRAME_VARS:
                    if any(var in ln for ln in lines):
                        assert lines[0].startswith("DECLARE ") and var in lines[0], (name, var, lines[:2])
                for prev, ln in itertools.pairwise(lines):
                    if ln.lstrip().startswith("SET @tw_say"):
                        # two statements: never the single statement of an IF / ELSE without BEGIN
                        assert not re.match(r"\s*(IF\b|ELSE\s*$)", prev), (name, prev, ln)


def test_fail_says_stopped_before_raising() -> None:
    lines = "\n".join(fail("1 = 1", "N'boom'")).split("\n")
    stopped = next(i for i, ln in enumerate(lines) if "STOPPED" in ln)
    raised = next(i for i, ln in enumerate(lines) if "RAISERROR(N'%s', 16, 1, @msg)" in ln)
    noexec = next(i for i, ln in enumerate(lines) if "SET NOEXEC ON" in ln)
    assert stopped < raised < noexec


def test_step_prints_start_done_with_duration_and_error_then_stops() -> None:
    text = "\n".join(step(2, 5, "emptying f", ["    DBCC SHRINKFILE (N'f', EMPTYFILE);"]))
    assert "N'step 2/5 start: emptying f'" in text
    assert "N'step 2/5 done: emptying f (' + CAST(DATEDIFF(SECOND, @tw_t0, SYSUTCDATETIME())" in text
    try_part, catch_part = text.split("BEGIN CATCH")
    assert (
        try_part.index("step 2/5 start") < try_part.index("DBCC SHRINKFILE") < try_part.index("step 2/5 done")
    )
    assert "N'step 2/5 error: emptying f: error ' + CAST(ERROR_NUMBER() AS nvarchar(10))" in catch_part
    assert catch_part.index("STOPPED") < catch_part.index("RAISERROR(N'%s', 16, 1, @tw_err)")
    assert catch_part.index("RAISERROR(N'%s', 16, 1, @tw_err)") < catch_part.index("SET NOEXEC ON")


def test_backup_check_wants_a_full_restorable_backup_of_this_database() -> None:
    move = case_move(next(c for c in TSQL if c.name == "tsql_filegroup_online"))
    text = "\n".join(backup_check(move, Options()))
    assert "b.type = 'D'" in text
    assert "b.is_damaged = 0" in text
    # this incarnation: the GUID RESTORE renews, not the name
    assert "b.database_guid = (SELECT rs.database_guid FROM sys.database_recovery_status AS rs" in text
    assert "WHERE database_name" not in text
    # a backup to NUL is no backup
    assert (
        "UPPER(f.physical_device_name) IN (N'NUL', N'NUL:') OR f.physical_device_name = N'/dev/null'" in text
    )
    # copy-only full backups restore on their own: they count
    assert "is_copy_only" not in text
    assert text.index("@last_full") < text.index("RAISERROR(N'%s', 16, 1, @msg)")


def test_backup_check_warn_mode_does_not_stop() -> None:
    move = case_move(next(c for c in TSQL if c.name == "tsql_filegroup_online"))
    text = "\n".join(backup_check(move, Options(backup_check="warn")))
    assert "RAISERROR(N'%s', 16" not in text
    assert "N'pre-check failed', N'warning'" in text and "WITH NOWAIT" in text


# -- the check-only run (issue #30): sqlcmd -v TW_CHECK_ONLY=1 ------------------------------------


def _script() -> Batches:
    script = Batches(
        [
            "Moves:      filegroup [FG] of database [Sales]",
            "From:       tier fc: F:\\fc\\",
            "To:         tier sata: S:\\sata\\",
            "Method:",
            "  online: ADD FILE, EMPTYFILE,",
            "  REMOVE FILE.",
            "  Files:",
            "    [f]: F:\\fc\\f.ndf -> S:\\sata\\f.ndf",
            "Operations:",
            "  Duration:    about 9 min at ~200 MB/s",
        ]
    )
    script.add("ALTER DATABASE [Sales] REMOVE FILE [f];")  # a change, added first on purpose
    script.check("SELECT 1 AS pre_check;")
    return script


def test_changes_sit_after_the_barrier_whatever_order_they_were_added_in() -> None:
    """Batches.check batches run before the barrier, Batches.add batches after it; the gate is
    always first. A writer cannot put a change where a check-only run reaches it by calling add."""
    batches = tsql_batches(_script().text())
    gate = next(i for i, b in enumerate(batches) if "$(TierwiseSqlcmdMode)" in b)
    check = next(i for i, b in enumerate(batches) if "pre_check" in b)
    barrier = next(i for i, b in enumerate(batches) if "check-only run: every pre-check above passed" in b)
    change = next(i for i, b in enumerate(batches) if "REMOVE FILE [f]" in b)
    assert gate < check < barrier < change


def test_gate_wants_tw_check_only_said_and_declares_no_default() -> None:
    """sqlcmd's precedence (Microsoft Learn, "sqlcmd - Use with scripting variables": environment,
    then -v, then :setvar, lowest to highest) lets a :setvar default override -v TW_CHECK_ONLY=1:
    so no :setvar; an undefined variable stops sqlcmd before the batch runs ("an error message is
    returned and the execution of the script stops"), and any value but 0 or 1 stops the gate."""
    text = _script().text()
    assert not [ln for ln in text.split("\n") if ln.startswith(":setvar TW_CHECK_ONLY")]
    gate = tsql_batches(text)[1]
    i = gate.index("IF N'$(TW_CHECK_ONLY)' NOT IN (N'0', N'1')")
    block = gate[i : gate.index("END;", i)]
    assert "RAISERROR(N'%s', 16, 1," in block and "SET NOEXEC ON;" in block and "RETURN;" in block
    assert "-v TW_CHECK_ONLY=1" in block and "-v TW_CHECK_ONLY=0" in block


def test_barrier_prints_the_plan_and_duration_then_ends_a_check_only_run() -> None:
    batches = tsql_batches(_script().text())
    (barrier,) = [b for b in batches if "check-only run: every pre-check above passed" in b]
    for line in (
        "plan: Moves: filegroup [FG] of database [Sales]",
        "plan: From: tier fc: F:\\fc\\",
        "plan: To: tier sata: S:\\sata\\",
        "plan: method: online: ADD FILE, EMPTYFILE, REMOVE FILE.",
        "plan: file [f]: F:\\fc\\f.ndf -> S:\\sata\\f.ndf",
        "estimated duration: about 9 min at ~200 MB/s",
    ):
        assert f"N'{line}'" in barrier, line
    i = barrier.index("IF N'$(TW_CHECK_ONLY)' = N'1'")
    block = barrier[i : barrier.index("END;", i)]
    # the same stop as a failed check (NOEXEC, then RETURN), and a note for the last batch
    assert block.index("CREATE TABLE #tierwise_check_only") < block.index("SET NOEXEC ON;")
    assert block.split("\n")[-2].strip() == "RETURN;"
    assert barrier.index("plan: Moves:") < i


def test_last_batch_says_a_check_only_run_passed_rather_than_stopped() -> None:
    text = _script().text()
    script = _script()
    script.add(finish("finished: moved."))
    last = tsql_batches(script.text())[-1]
    noexec_off = last.index("SET NOEXEC OFF;")
    check_only = last.index("ELSE IF OBJECT_ID(N'tempdb..#tierwise_check_only') IS NOT NULL")
    stopped = last.index("STOPPED: a check or step above failed")
    assert noexec_off < check_only < stopped
    assert "check-only run finished: every pre-check passed and nothing was changed" in last
    assert "DROP TABLE #tierwise_check_only;" in last  # the next part of a month file is judged on its own
    assert "TW_CHECK_ONLY" in text


def test_every_golden_says_how_to_run_the_check_only_run_first() -> None:
    for case in TSQL:
        for name, text in render_case(case).items():
            head = text.split(":on error exit")[0]
            first = head.index("1. check only")
            assert "-v TW_CHECK_ONLY=1 -i <this file>" in head[first:], name
            assert head.index("-v TW_CHECK_ONLY=1") < head.index("-v TW_CHECK_ONLY=0"), name
