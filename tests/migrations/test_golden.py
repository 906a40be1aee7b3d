"""Golden files per action and dialect, and the invariants every generated script keeps."""

from __future__ import annotations

import re

import pytest

from tests.migrations.golden_cases import CASES, GOLDEN, Case, render_case
from tests.migrations.sqltokens import db2_statements, db2_tokens, tool_lines, tsql_batches, tsql_tokens

REGEN = "run `.venv/bin/python scripts/regen_golden.py` (make golden), review the diff and commit it"


@pytest.fixture(scope="module")
def rendered() -> dict[str, str]:
    out: dict[str, str] = {}
    for case in CASES:
        out.update(render_case(case))
    return out


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_matches_golden(case: Case, rendered: dict[str, str]) -> None:
    for name in render_case(case):
        path = GOLDEN / name
        assert path.exists(), f"{path} is missing: {REGEN}"
        assert rendered[name] == path.read_text(encoding="utf-8"), (
            f"{name} differs from its golden file: {REGEN}"
        )


def test_no_stale_golden_files(rendered: dict[str, str]) -> None:
    stale = sorted(p.name for p in GOLDEN.iterdir() if p.name not in rendered)
    assert not stale, f"golden files without a case: {stale}; {REGEN}"


def _tsql(rendered: dict[str, str]) -> list[tuple[str, str]]:
    return [(n, t) for n, t in sorted(rendered.items()) if n.endswith(".sql")]


def _db2(rendered: dict[str, str]) -> list[tuple[str, str]]:
    return [(n, t) for n, t in sorted(rendered.items()) if n.endswith(".db2")]


def test_tsql_scripts_keep_the_client_tool_contract(rendered: dict[str, str]) -> None:
    for name, text in _tsql(rendered):
        tsql_tokens(text)  # every quote and comment is closed
        lines = tool_lines(text)
        assert lines["sqlcmd"] == [":on error exit", ':setvar TierwiseSqlcmdMode "on"'], name
        # the gate's SQLCMD-mode variable and the check-only switch, nothing else (no default for
        # TW_CHECK_ONLY: a :setvar would override sqlcmd -v, see tsql_frame)
        assert set(lines["variables"]) == {"$(TierwiseSqlcmdMode)", "$(TW_CHECK_ONLY)"}, name
        assert all(g == "GO" for g in lines["go"]), name
        assert text.count("\nGO\n") == len(tsql_batches(text)), name
        batches = tsql_batches(text)
        assert "$(TierwiseSqlcmdMode)" in batches[1], (
            f"{name}: the SQLCMD-mode gate must be the first SQL batch"
        )
        assert "SET NOEXEC OFF" in batches[-1], f"{name}: the last batch resets NOEXEC"
        # every failed check raises through %s (a % in a name is never a format) and sets NOEXEC
        for m in re.finditer(r"RAISERROR\((.*?), 16, 1", text):
            assert m.group(1) == "N'%s'", f"{name}: RAISERROR with a format string {m.group(1)[:40]}"
        assert "THROW" not in text.upper().replace("THROWN", ""), name
        # a stop must end the batch at once, whether or not NOEXEC acts within the batch
        lines = text.split("\n")
        for i, line in enumerate(lines):
            if line.strip() == "SET NOEXEC ON;":
                assert lines[i + 1].strip() == "RETURN;", (
                    f"{name}: line {i + 1}: SET NOEXEC ON without RETURN"
                )
        assert "xp_cmdshell" not in text.lower(), name


def test_tsql_header_says_what_where_why(rendered: dict[str, str]) -> None:
    for name, text in _tsql(rendered):
        head = text.split(":on error exit")[0]
        for label in (
            "Moves:",
            "Server:",
            "Database:",
            "From:",
            "To:",
            "Why:",
            "Predicted:",
            "Generator:",
            "Generated:",
            "Plan:       sha256 ",
        ):
            assert label in head, f"{name}: header lacks {label}"
        assert all(line.startswith("--") for line in head.strip().split("\n")), name


def test_manual_step_and_restart_are_announced(rendered: dict[str, str]) -> None:
    for name in ("tsql_filegroup_offline_primary.forward.sql", "tsql_log_offline.forward.sql"):
        text = rendered[name]
        assert "MANUAL STEP" in text and "Copy-Item -LiteralPath" in text and "run this script again" in text
        assert "xp_cmdshell" not in text
    for name in ("tsql_tempdb_data.forward.sql", "tsql_tempdb_log.forward.sql"):
        text = rendered[name]
        head = text.split(":on error exit")[0]
        assert "TAKES EFFECT AT THE NEXT RESTART" in head and "RESTART REQUIRED" in head
        assert "RESTART REQUIRED" in text.split(":on error exit")[1]


def test_every_step_is_guarded(rendered: dict[str, str]) -> None:
    """Each changing statement sits inside an IF that re-reads the catalog (idempotent)."""
    changing = re.compile(r"^\s*(ALTER DATABASE|DBCC SHRINKFILE)", re.IGNORECASE)
    for name, text in _tsql(rendered):
        for batch in tsql_batches(text):
            lines = batch.split("\n")
            for i, line in enumerate(lines):
                if changing.match(line):
                    assert line.startswith("    "), f"{name}: unguarded {line.strip()[:60]}"
                    assert any(ln.lstrip().startswith(("IF ", "ELSE")) for ln in lines[:i]), (
                        f"{name}: {line.strip()[:60]}"
                    )


def test_db2_scripts_keep_the_clp_contract(rendered: dict[str, str]) -> None:
    for name, text in _db2(rendered):
        assert text.startswith("--#SET TERMINATOR @\n"), name
        db2_tokens(text)
        statements = db2_statements(text)
        # the session first (issue #30 N4, N5; the rules themselves: test_db2_session_rules.py)
        assert statements[:4] == [
            "UPDATE COMMAND OPTIONS USING C ON S ON",
            "CONNECT TO SALESDB",
            "SET SERVEROUTPUT ON",
            "SET CURRENT LOCK TIMEOUT = 60",
        ], name
        assert statements[-1] == "CONNECT RESET", name
        assert tool_lines(text)["directives"] == ["--#SET TERMINATOR @"], name
        for m in re.finditer(r"RAISE_ERROR\('75001', '((?:[^']|'')*)'\)", text):
            assert len(m.group(1).replace("''", "'").encode()) <= 70, (
                f"{name}: RAISE_ERROR text over 70 bytes"
            )


def test_rollback_undoes_forward(rendered: dict[str, str]) -> None:
    fwd = rendered["tsql_filegroup_online.forward.sql"]
    back = rendered["tsql_filegroup_online.rollback.sql"]
    assert "ADD FILE (NAME = N'Orders, 2024 \"hot\"_fc', FILENAME = N'F:\\fc\\Sales_Orders_2024.ndf'" in fwd
    assert "ADD FILE (NAME = N'Orders, 2024 \"hot\"', FILENAME = N'E:\\data\\Sales_Orders_2024.ndf'" in back
    assert 'REMOVE FILE [Orders, 2024 "hot"_fc]' in back
    plan = re.search(r"Plan:       sha256 (\w+)", fwd)
    assert plan and plan.group(1) in back
    dfwd, dback = rendered["db2_tablespace.forward.db2"], rendered["db2_tablespace.rollback.db2"]
    assert 'ALTER TABLESPACE "USERSPACE1" USING STOGROUP "SG_SATA"' in dfwd
    assert 'ALTER TABLESPACE "USERSPACE1" USING STOGROUP "IBMSTOGROUP"' in dback
    assert "CREATE STOGROUP" not in dback  # the original group exists; it is never created blind


def test_xp_procedures_only_as_the_old_version_fallback() -> None:
    """xp_fileexist / xp_fixeddrives run only in the ELSE branch of a SQL Server version check;
    2017+ uses sys.dm_os_file_exists, 2019+ sys.dm_os_enumerate_fixed_drives, and the header says so."""
    from tests.migrations.golden_cases import all_golden

    seen = 0
    for name, text in all_golden().items():
        if not name.endswith(".sql"):
            continue
        assert "sys.dm_os_file_exists (SQL Server 2017+)" in text, name
        lines = text.splitlines()
        for i, line in enumerate(lines):
            if "EXEC master.dbo.xp_" not in line:
                continue
            seen += 1
            before = "\n".join(lines[max(0, i - 12) : i])
            assert "ELSE" in before and "SERVERPROPERTY('ProductVersion')" in before, (
                f"{name}:{i + 1}: {line}"
            )
            modern = "sys.dm_os_file_exists" if "xp_fileexist" in line else "sys.dm_os_enumerate_fixed_drives"
            assert modern in before, f"{name}:{i + 1}: no {modern} branch before {line}"
    assert seen, "the golden scripts should still carry the fallback for old versions"
