"""The T-SQL frame (migrations/tsql.py): progress lines sent at once with a timestamp, the STOPPED
line from the failing batch itself, step start/done/error lines, and the full-backup check."""

from __future__ import annotations

import itertools
import re

from migrations.plan import Options
from migrations.tsql_checks import backup_check
from migrations.tsql_frame import Batches, fail, say, step
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
