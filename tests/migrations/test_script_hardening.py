"""The 2 a.m. questions asked of every generated T-SQL script (H7 #5): a check that looks at other
sessions (a running BACKUP, DBCC, users of the database) must not pass blind, and a step that
changes files must be preceded by such a check."""

from __future__ import annotations

import re

import pytest

from tests.migrations.golden_cases import CASES, render_case
from tests.migrations.sqltokens import tsql_batches

TSQL = {name: text for case in CASES if case.dialect == "tsql" for name, text in render_case(case).items()}
PERMISSION = "HAS_PERMS_BY_NAME(NULL, NULL, N'VIEW SERVER STATE') = 0"
OTHER_SESSIONS = re.compile(r"FROM sys\.dm_(?:exec_requests|exec_sessions|tran_locks)\b")


@pytest.mark.parametrize("name", sorted(TSQL))
def test_checks_on_other_sessions_never_pass_without_view_server_state(name: str) -> None:
    """Without VIEW SERVER STATE these DMVs show only the caller's session, so "no BACKUP is
    running" or "no other session uses the database" would be true whatever runs. The offline
    move (ROLLBACK IMMEDIATE would kill a running backup) and the read-only mark checked them
    without the permission check. The permission check must run first, in the batch or an earlier one."""
    batches = tsql_batches(TSQL[name])
    for i, batch in enumerate(batches):
        found = OTHER_SESSIONS.search(batch)
        if found is None:
            continue
        # in this batch, or in an earlier one (a failed check stops every later batch)
        before = "\n".join(batches[:i]) + batch[: found.start()]
        assert PERMISSION in before, (name, batch[found.start() : found.start() + 120])


@pytest.mark.parametrize("name", sorted(TSQL))
def test_file_changes_follow_a_running_backup_check(name: str) -> None:
    """ADD FILE, REMOVE FILE, shrink, SET OFFLINE and MODIFY FILEGROUP conflict with a running
    BACKUP: each batch that does one is preceded (in it or an earlier batch) by a check of
    sys.dm_exec_requests or of the database's locks."""
    batches = tsql_batches(TSQL[name])
    change = re.compile(
        r"^\s*(?:ALTER DATABASE \S+ (?:ADD FILE |REMOVE FILE |SET OFFLINE|MODIFY FILEGROUP)|DBCC SHRINKFILE)",
        re.M,
    )
    for i, batch in enumerate(batches):
        hit = change.search(batch)
        if hit is None:
            continue
        before = "\n".join(batches[:i]) + batch[: hit.start()]
        assert "sys.dm_exec_requests" in before or "resource_type = N'DATABASE'" in before, (
            name,
            hit.group(0),
        )


def test_read_only_mark_counts_sessions_holding_the_database_from_master() -> None:
    """A BACKUP or CHECKDB of the database started from master runs in master: the exclusive-access
    count includes the sessions holding a DATABASE lock on it, and the already-done exit comes
    first (a re-run checks nothing)."""
    for name in ("tsql_read_only.forward.sql", "tsql_read_only.rollback.sql"):
        (b,) = [b for b in tsql_batches(TSQL[name]) if "MODIFY FILEGROUP" in b and "@others" in b]
        done = b.index("already done:")
        perm = b.index(PERMISSION)
        count = b.index("SELECT @others = COUNT(*) FROM (")
        assert done < perm < count < b.index("ALTER DATABASE [Sales] MODIFY FILEGROUP")
        assert "resource_type = N'DATABASE' AND resource_database_id = DB_ID(N'Sales')" in b[count:]
        assert ") AS u (session_id) WHERE session_id <> @@SPID;" in b[count:]
