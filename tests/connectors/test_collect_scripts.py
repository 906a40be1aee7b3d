"""The collection scripts DBAs run: their CSV headers and column order match the shapes, the T-SQL
parses (sqlfluff tsql), the Db2 SELECTs parse (sqlfluff db2) and the shell wrapper works with a
stand-in `db2` command. No database is needed; what only a real server can show is listed in
docs/import-files.md."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
import sqlfluff
from sqlfluff.api import APIParsingError

from connectors.collect import COLLECT_DIR, SCRIPTS
from connectors.files import read_import_file
from connectors.shapes import (
    DB2_BUFFERPOOLS,
    DB2_CONTAINERS,
    DB2_TABLE_PARTITIONS,
    DB2_TABLESPACES,
    DB2_TRANSACTION_LOG,
    SQLSERVER_BUFFER_MANAGER,
    SQLSERVER_FILE_STATS,
    SQLSERVER_PARTITIONS,
    Shape,
)

COLLECT = Path(__file__).resolve().parents[2] / "connectors" / "collect"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "import"
FILE_STATS_SQL = COLLECT / "sqlserver_file_stats.sql"
PARTITIONS_SQL = COLLECT / "sqlserver_partitions.sql"
BUFFER_MANAGER_SQL = COLLECT / "sqlserver_buffer_manager.sql"
DB2_SQL = COLLECT / "db2_collect.sql"
DB2_SH = COLLECT / "db2_collect.sh"

TSQL_SCRIPTS = {
    FILE_STATS_SQL.name: SQLSERVER_FILE_STATS,
    PARTITIONS_SQL.name: SQLSERVER_PARTITIONS,
    BUFFER_MANAGER_SQL.name: SQLSERVER_BUFFER_MANAGER,
}
DB2_EXPORTS = {
    "tablespaces": (DB2_TABLESPACES, "TABLESPACES_HEADER"),
    "table_partitions": (DB2_TABLE_PARTITIONS, "TABLE_PARTITIONS_HEADER"),
    "transaction_log": (DB2_TRANSACTION_LOG, "TRANSACTION_LOG_HEADER"),
    "bufferpools": (DB2_BUFFERPOOLS, "BUFFERPOOLS_HEADER"),
    "containers": (DB2_CONTAINERS, "CONTAINERS_HEADER"),
}

# T-SQL batches (script name, batch number) that sqlfluff 4.5's tsql dialect cannot parse although
# SQL Server runs them. Empty today: every batch and every dynamic statement parses. If one stops
# parsing after a sqlfluff upgrade or a script change, record it here with the construct and why
# it is valid T-SQL, rather than skipping the check.
EXPECTED_TSQL_PARSE_GAPS: set[tuple[str, int]] = set()


def columns(shape: Shape) -> list[str]:
    return [c.name for c in shape.columns]


def sqlcmd_text(path: Path) -> str:
    """The script as SQL Server receives it: sqlcmd scripting variables substituted."""
    text = path.read_text(encoding="utf-8")
    return text.replace("$(Samples)", "12").replace("$(IntervalSeconds)", "300")


def batches(text: str) -> list[str]:
    """Split on lines holding only GO, as sqlcmd does."""
    parts = re.split(r"^[ \t]*GO[ \t]*(?:\r?\n|$)", text, flags=re.IGNORECASE | re.MULTILINE)
    return [p for p in parts if p.strip()]


def parses(sql: str, dialect: str) -> bool:
    try:
        sqlfluff.parse(sql, dialect=dialect)
    except APIParsingError:
        return False
    return True


def tsql_literal(text: str) -> str:
    return text.replace("''", "'")


def header_in_tsql(path: Path) -> list[str]:
    found: list[str] = re.findall(
        r"^SELECT N'(sample_time,[^']*)';$", path.read_text(encoding="utf-8"), re.MULTILINE
    )
    assert len(found) == 1
    return found[0].split(",")


def header_in_shell(name: str) -> list[str]:
    found: list[str] = re.findall(rf"^{name}='([^']*)'$", DB2_SH.read_text(encoding="utf-8"), re.MULTILINE)
    assert len(found) == 1
    return found[0].split(",")


def db2_statements() -> dict[str, str]:
    """EXPORT statements of db2_collect.sql by the file they write."""
    text = DB2_SQL.read_text(encoding="utf-8")
    out: dict[str, str] = {}
    for stmt in text.split("\n@\n"):
        m = re.search(r"^EXPORT TO (\w+)\.del OF DEL MODIFIED BY CODEPAGE=1208 MESSAGES \1\.msg$", stmt, re.M)
        if m:
            out[m.group(1)] = stmt[m.start() :]
    return out


def test_the_shipped_scripts_are_all_listed() -> None:
    assert COLLECT_DIR == COLLECT
    shipped = {p.name for p in COLLECT.iterdir() if p.suffix in (".sql", ".sh")}
    assert shipped == set(SCRIPTS)


# ---------------------------------------------------------------------------------------------
# SQL Server scripts


@pytest.mark.parametrize("script", sorted(TSQL_SCRIPTS))
def test_tsql_header_lists_exactly_the_shape_columns(script: str) -> None:
    assert header_in_tsql(COLLECT / script) == columns(TSQL_SCRIPTS[script])


# The CSV line is built one field per line, in header order; each line names its source.
_FIELD_SOURCES = {"@now": "sample_time", "@server_name": "server_name", "@start_utc": "sqlserver_start_time"}


@pytest.mark.parametrize("script", sorted(TSQL_SCRIPTS))
def test_tsql_csv_line_builds_the_header_columns_in_order(script: str) -> None:
    text = (COLLECT / script).read_text(encoding="utf-8")
    start = text.index("SELECT CONVERT(nvarchar(max),")
    builder = text[start : text.index("\n    FROM #", start)]
    fields: list[str] = []
    for line in builder.splitlines():
        var = re.search(r"@now|@server_name|@start_utc", line)
        col = re.search(r"\b(?:o|v|pt|b)\.(\w+)", line)
        assert var or col, line
        name = _FIELD_SOURCES[var.group(0)] if var else col.group(1)  # type: ignore[union-attr]
        fields.append("rows" if name == "row_count" else name)
    assert fields == columns(TSQL_SCRIPTS[script])
    # text is quoted with doubled quotes; numbers are not
    for line, name in zip(builder.splitlines(), fields, strict=True):
        is_text = TSQL_SCRIPTS[script].column(name).type.value == "text"  # type: ignore[union-attr]
        assert ("REPLACE(" in line) == is_text, line


@pytest.mark.parametrize("script", sorted(TSQL_SCRIPTS))
def test_tsql_batches_parse_with_sqlfluff(script: str) -> None:
    parts = batches(sqlcmd_text(COLLECT / script))
    assert parts, "no batch found"
    failing = {(script, i) for i, batch in enumerate(parts, start=1) if not parses(batch, "tsql")}
    expected = {gap for gap in EXPECTED_TSQL_PARSE_GAPS if gap[0] == script}
    assert failing == expected


def test_file_stats_dynamic_capture_parses_in_all_four_variants() -> None:
    text = FILE_STATS_SQL.read_text(encoding="utf-8")
    m = re.search(r"DECLARE @capture nvarchar\(max\) = (.*?END;)\n", text, re.S)
    assert m is not None
    pieces = [tsql_literal(x) for x in re.findall(r"N'((?:[^']|'')*)'", m.group(1))]
    base, queued_yes, queued_no, volume_yes, volume_no = pieces
    for queued in (queued_yes, queued_no):
        for volume in (volume_yes, volume_no):
            statement = base + queued + volume
            assert parses(statement, "tsql"), statement
            # one INSERT of 14 columns from one read of the DMVs
            assert statement.count("sys.dm_io_virtual_file_stats") == 1


def test_partitions_per_database_statement_parses() -> None:
    text = PARTITIONS_SQL.read_text(encoding="utf-8")
    m = re.search(r"DECLARE @per_database nvarchar\(max\) = N'(.*?)';\n", text, re.S)
    assert m is not None
    statement = tsql_literal(m.group(1))
    assert parses(statement, "tsql")
    assert "sys.dm_db_index_operational_stats(DB_ID(), NULL, NULL, NULL)" in statement


# The filegroup query is assembled at run time from QUOTENAME(database name). Expected sqlfluff
# outcome per name: a doubled "]]" inside brackets (QUOTENAME's escape for "]", valid T-SQL) is a
# known gap of sqlfluff 4.5's tsql lexer, so that case is recorded as failing, not skipped.
_QUOTED_NAMES = [("[Sales]", True), ('[Sales 2024, "EU"]', True), ("[Sales ]]2024[]", False)]


@pytest.mark.parametrize(("quoted", "sqlfluff_parses"), _QUOTED_NAMES)
def test_filegroup_query_for_quoted_database_names(quoted: str, sqlfluff_parses: bool) -> None:
    statement = f"SELECT @id, fg.data_space_id, fg.name FROM {quoted}.sys.filegroups AS fg;"
    assert parses(statement, "tsql") is sqlfluff_parses
    assert "QUOTENAME(@db_name) + N'.sys.filegroups AS fg;'" in FILE_STATS_SQL.read_text(encoding="utf-8")
    assert "QUOTENAME(@db_name) + N'.sys.sp_executesql'" in PARTITIONS_SQL.read_text(encoding="utf-8")


@pytest.mark.parametrize("script", sorted(TSQL_SCRIPTS))
def test_tsql_uses_only_its_two_scripting_variables_and_no_go_lines(script: str) -> None:
    text = (COLLECT / script).read_text(encoding="utf-8")
    assert set(re.findall(r"\$\((\w*)", text)) == {"Samples", "IntervalSeconds"}
    assert not re.search(r"^[ \t]*GO[ \t]*$", text, re.IGNORECASE | re.MULTILINE)


@pytest.mark.parametrize("script", sorted(TSQL_SCRIPTS))
def test_tsql_header_comment_documents_the_run(script: str) -> None:
    text = (COLLECT / script).read_text(encoding="utf-8")
    assert text.startswith("/*")
    comment = text[: text.index("*/")]
    for part in ("WHAT IT READS", "LEAST PRIVILEGES", "HOW TO RUN", "WHAT IT WRITES"):
        assert part in comment
    command = re.search(r"^  sqlcmd .*\n.*$", comment, re.MULTILINE)
    assert command is not None
    for option in ("-b", "-f o:65001", "-y 0", "-h -1", f"-i {script}", "-v Samples=", "IntervalSeconds="):
        assert option in command.group(0)
    assert " -W" not in command.group(0)  # sqlcmd refuses -W together with -y


# ---------------------------------------------------------------------------------------------
# Db2 script and wrapper


@pytest.mark.parametrize("name", sorted(DB2_EXPORTS))
def test_db2_headers_list_exactly_the_shape_columns(name: str) -> None:
    shape, variable = DB2_EXPORTS[name]
    assert header_in_shell(variable) == columns(shape)


@pytest.mark.parametrize("name", sorted(DB2_EXPORTS))
def test_db2_export_selects_the_header_columns_in_order(name: str) -> None:
    shape, _ = DB2_EXPORTS[name]
    statement = db2_statements()[name]
    outer = statement[statement.index("\nSELECT\n") : statement.index("\nFROM ")]
    aliases = re.findall(r"\bAS (\w+),?$", outer, re.MULTILINE)
    assert aliases == columns(shape)


@pytest.mark.parametrize("name", sorted(DB2_EXPORTS))
def test_db2_selects_parse_with_sqlfluff(name: str) -> None:
    statement = db2_statements()[name]
    select = statement[statement.index("\nSELECT\n") + 1 :]
    assert parses(select, "db2")
    # numbers are cast to BIGINT so EXPORT never writes a signed, zero-padded DECIMAL
    for aggregate in re.findall(r"^\s+(\S*SUM\(t\.\w+\)\S*)", select, re.MULTILINE):
        assert aggregate.startswith("BIGINT(SUM("), aggregate


def test_db2_containers_export_takes_sizes_once_and_sums_counters() -> None:
    statement = db2_statements()["containers"]
    inner = statement[
        statement.index("FROM (\n    SELECT") : statement.index("GROUP BY t.tbsp_name, t.container_name")
    ]
    gauges = {c.name for c in DB2_CONTAINERS.columns if c.type.value == "gauge"}
    counters = {c.name for c in DB2_CONTAINERS.columns if c.type.value == "counter"}
    for name in gauges:  # the same container and file system seen by every member
        assert f"BIGINT(MAX(t.{name})) AS {name}," in inner
    for name in counters:
        assert f"BIGINT(SUM(t.{name})) AS {name}" in inner
    assert "CAST(MIN(t.fs_id) AS VARCHAR(64)) AS fs_id," in inner
    pools = db2_statements()["bufferpools"]
    assert "WHERE t.bp_name NOT LIKE 'IBMSYSTEMBP%'" in pools and "BIGINT(SUM(t.bp_cur_buffsz))" in pools


def test_db2_script_terminator_only_ends_statements() -> None:
    text = DB2_SQL.read_text(encoding="utf-8")
    lines = text.splitlines()
    assert all(line == "@" for line in lines if "@" in line)
    assert sum(line == "@" for line in lines) == len(DB2_EXPORTS)
    assert set(db2_statements()) == set(DB2_EXPORTS)
    comment = text[: text.index("EXPORT TO")]
    for part in ("WHAT IT READS", "LEAST PRIVILEGES", "HOW TO RUN", "WHAT IT WRITES", "DB_CONN_TIME"):
        assert part in comment


def test_wrapper_has_valid_posix_shell_syntax() -> None:
    for shell in ("sh", "dash"):
        if shutil.which(shell):
            result = subprocess.run([shell, "-n", str(DB2_SH)], capture_output=True, text=True, check=False)
            assert result.returncode == 0, result.stderr


def _first_sample_rows(name: str) -> list[str]:
    lines = (FIXTURES / f"db2_{name}.csv").read_text(encoding="utf-8").splitlines()[1:]
    first_time = lines[0].split(",", 1)[0]
    return [line for line in lines if line.startswith(first_time + ",")]


def _fake_db2(bin_dir: Path, *, fail: bool = False) -> None:
    """A stand-in `db2` CLP: for `-f` it writes the DEL files a real EXPORT would, from fixtures."""
    rows = {name: "\n".join(_first_sample_rows(name)) + "\n" for name in DB2_EXPORTS}
    script = ["#!/bin/sh", 'echo "$*" >> "${FAKE_DB2_LOG:?}"', 'case "$*" in', "  *-f*)"]
    if fail:
        script += [
            "    echo 'SQL0551N  The statement failed: no EXECUTE privilege. SQLSTATE=42501'",
            "    exit 4 ;;",
        ]
    else:
        for name, body in rows.items():
            script.append(f"    cat > {name}.del <<'EOF'\n{body}EOF")
        script.append("    ;;")
    script += ["esac", "exit 0", ""]
    path = bin_dir / "db2"
    path.write_text("\n".join(script), encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def _run_wrapper(tmp_path: Path, *args: str, fail: bool = False) -> subprocess.CompletedProcess[str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    _fake_db2(bin_dir, fail=fail)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "FAKE_DB2_LOG": str(tmp_path / "db2.log"),
        "TMPDIR": str(tmp_path),
    }
    return subprocess.run(["sh", str(DB2_SH), *args], capture_output=True, text=True, env=env, check=False)


def test_wrapper_writes_five_importable_files(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = _run_wrapper(tmp_path, "SALESDB", "2", "1", str(out))
    assert result.returncode == 0, result.stderr
    for name, (shape, _) in DB2_EXPORTS.items():
        lines = (out / f"{name}.csv").read_text(encoding="utf-8").splitlines()
        assert lines[0].split(",") == columns(shape)
        per_sample = len(_first_sample_rows(name))
        assert len(lines) == 1 + 2 * per_sample  # header once, then both samples appended
        # the stand-in returns the same rows both times: identical rows import once
        snaps = read_import_file(out / f"{name}.csv")
        assert len(snaps) == 1 and len(snaps[0].samples) == per_sample
        assert snaps[0].server == "db2host01/db2inst1"
    calls = (tmp_path / "db2.log").read_text(encoding="utf-8").splitlines()
    assert calls[0] == "connect to SALESDB"
    assert calls.count(f"-td@ -s -f {DB2_SH.parent / 'db2_collect.sql'}") == 2
    assert calls[-2:] == ["connect reset", "terminate"]
    assert not list(tmp_path.glob("tierwise_db2.*")), "work directory left behind"


def test_wrapper_stops_with_the_database_error(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = _run_wrapper(tmp_path, "SALESDB", "3", "1", str(out), fail=True)
    assert result.returncode == 1
    assert "SQL0551N" in result.stderr and "sample 1 of 3 failed" in result.stderr
    # the header lines are there, no rows
    assert (out / "tablespaces.csv").read_text(encoding="utf-8").count("\n") == 1


@pytest.mark.parametrize(
    "args",
    [
        ("SALESDB", "0", "60", "out"),
        ("SALESDB", "2", "x", "out"),
        ("SALES;rm", "2", "60", "out"),
        ("SALESDB", "2", "60"),
    ],
)
def test_wrapper_refuses_bad_arguments(tmp_path: Path, args: tuple[str, ...]) -> None:
    result = _run_wrapper(tmp_path, *args)
    assert result.returncode == 2
    assert "usage:" in result.stderr
    assert not (tmp_path / "db2.log").exists()  # nothing was run against the database
