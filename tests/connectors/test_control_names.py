"""Names are data (issue #33, item 2): a name with a line break or another control character is
refused with its file, line and column when imported, and a polled row with one is refused and
logged (escaped) while the rest of the poll is kept."""

from __future__ import annotations

import csv
import logging
from pathlib import Path

import pytest

from connectors import db2, sqlserver
from connectors.files import read_import_file
from connectors.records import ImportFileError, SourceError, control_character, escape_controls
from connectors.shapes import (
    DB2_TABLESPACES,
    SQLSERVER_BUFFER_MANAGER,
    SQLSERVER_FILE_STATS,
    SQLSERVER_PARTITIONS,
    ColumnType,
    shape_for_header,
)
from tests.connectors.test_db2 import FIXTURES as DB2_FIXTURES
from tests.connectors.test_db2 import SAMPLE_TIME as DB2_TIME
from tests.connectors.test_db2 import SHAPES as DB2_SHAPES
from tests.connectors.test_sqlserver import FIXTURES as SQLSERVER_FIXTURES
from tests.connectors.test_sqlserver import SAMPLE_TIME, load_fixture

IMPORT_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "import"
CONTROLS = ["\r\n", "\n", "\r", "\x00", "\x01", "\t", "\x1b", "\x7f", "\x85", "\u2028"]


def _name_columns() -> list[tuple[Path, str]]:
    """(fixture file, text column in its header): every name column of every import file."""
    out = []
    for path in sorted(IMPORT_FIXTURES.glob("*.csv")):
        header = next(csv.reader(path.open(encoding="utf-8", newline="")))
        shape = shape_for_header(header)
        assert shape is not None
        out += [(path, c.name) for c in shape.columns if c.type is ColumnType.TEXT and c.name in header]
    return out


NAME_COLUMNS = _name_columns()


def _with_value(src: Path, dest: Path, column: str, value: str) -> Path:
    """The fixture with the first data row's `column` (line 2) replaced."""
    rows = list(csv.reader(src.open(encoding="utf-8", newline="")))
    rows[1][rows[0].index(column)] = value
    with dest.open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh, lineterminator="\r\n").writerows(rows)
    return dest


def test_every_import_file_has_name_columns_checked() -> None:
    files = {p.name for p, _ in NAME_COLUMNS}
    assert (
        len(files) == 8 and len(NAME_COLUMNS) >= 30
    )  # server, database, file, table space, bounds, paths...
    assert ("db2_table_partitions.csv", "lowvalue") in {(p.name, c) for p, c in NAME_COLUMNS}


@pytest.mark.parametrize(("src", "column"), NAME_COLUMNS, ids=[f"{p.stem}-{c}" for p, c in NAME_COLUMNS])
def test_a_line_break_in_any_name_is_refused_with_file_line_and_column(
    tmp_path: Path, src: Path, column: str
) -> None:
    path = _with_value(src, tmp_path / src.name, column, "BAD\r\nNAME")
    with pytest.raises(ImportFileError) as err:
        read_import_file(path)
    assert (err.value.path, err.value.line, err.value.column) == (str(path), 2, column), str(err.value)
    assert "control character" in str(err.value) or "carriage return" in str(err.value)
    assert "\r" not in str(err.value) and "\n" not in str(err.value)  # the message itself is one line


@pytest.mark.parametrize("ch", CONTROLS, ids=[f"U+{ord(c[0]):04X}" for c in CONTROLS])
def test_every_control_character_in_a_server_name_is_refused(tmp_path: Path, ch: str) -> None:
    src = IMPORT_FIXTURES / "sqlserver_file_stats.csv"
    path = _with_value(src, tmp_path / "fs.csv", "server_name", f"SQL{ch}01")
    with pytest.raises(ImportFileError) as err:
        read_import_file(path)
    assert (err.value.line, err.value.column) == (2, "server_name")
    assert f"U+{ord(ch[0]):04X}" in str(err.value)


def test_names_with_spaces_quotes_and_non_latin_letters_are_still_kept(tmp_path: Path) -> None:
    src = IMPORT_FIXTURES / "sqlserver_file_stats.csv"
    path = _with_value(src, tmp_path / "fs.csv", "file_name", ' Sales "2024" 日本 é ')
    names = {s.ref.name for snap in read_import_file(path) for s in snap.samples}
    assert ' Sales "2024" 日本 é ' in names


def test_escape_controls_keeps_one_line_and_shows_the_character() -> None:
    assert escape_controls("SQL\r\n01\x00\x01\x7f\u2028") == "SQL\\r\\n01\\0\\x01\\x7f\\u2028"
    assert control_character("plain name") is None
    assert control_character("a\nb") == (1, "line feed (U+000A)")


# ---- polled rows ------------------------------------------------------------------------------


def test_a_polled_sql_server_row_with_a_control_character_is_refused_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    files = load_fixture(SQLSERVER_FIXTURES / "file_stats.json", SQLSERVER_FILE_STATS)
    parts = load_fixture(SQLSERVER_FIXTURES / "partitions.json", SQLSERVER_PARTITIONS)
    buffers = load_fixture(SQLSERVER_FIXTURES / "buffer_manager.json", SQLSERVER_BUFFER_MANAGER)
    bad = dict(files[0], file_name="Sales\r\nX-Injected: 1")
    with caplog.at_level(logging.ERROR, logger="connectors.sqlserver"):
        snap = sqlserver.snapshot_from_results(
            {"file_stats": [bad, *files[1:]], "partitions": parts, "buffer_manager": buffers},
            sample_time=SAMPLE_TIME,
        )
    names = {s.ref.name for s in snap.samples}
    assert "Sales\r\nX-Injected: 1" not in names
    assert {f["file_name"] for f in files[1:]} <= names  # the rest of the poll is kept
    [record] = [r for r in caplog.records if "refused" in r.getMessage()]
    text = record.getMessage()
    assert "file_name" in text and "Sales\\r\\nX-Injected: 1" in text and "\n" not in text
    assert snap.server in text


def test_a_polled_server_name_with_a_line_break_refuses_the_poll() -> None:
    files = load_fixture(SQLSERVER_FIXTURES / "file_stats.json", SQLSERVER_FILE_STATS)
    rows = [dict(f, server_name="SQL\r\nPROD") for f in files]
    with pytest.raises(SourceError) as err:
        sqlserver.snapshot_from_results({"file_stats": rows}, sample_time=SAMPLE_TIME)
    assert "control characters" in str(err.value) and "SQL\\r\\nPROD" in str(err.value)
    assert "\n" not in str(err.value)


def test_a_polled_db2_table_space_with_a_control_character_is_refused_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    results = {name: load_fixture(DB2_FIXTURES / f"{name}.json", shape) for name, shape in DB2_SHAPES.items()}
    victim = results["tablespaces"][0]["tbsp_name"]
    results["tablespaces"][0] = dict(results["tablespaces"][0], tbsp_name=f"{victim}\x1b[31m")
    with caplog.at_level(logging.ERROR, logger="connectors.sqlserver"):
        snap = db2.snapshot_from_results(results, sample_time=DB2_TIME)
    names = {s.ref.name for s in snap.samples}
    assert victim not in names and all("\x1b" not in n for n in names)
    assert {r["tbsp_name"] for r in results["tablespaces"][1:]} <= names  # only the bad row went
    assert any(
        DB2_TABLESPACES.name in r.getMessage() and "\\x1b[31m" in r.getMessage() for r in caplog.records
    )
