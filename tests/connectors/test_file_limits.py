"""Memory bounded per line, and UTF-16 without a byte-order mark named (issue #33, item 6): a
damaged file's endless line is refused with file and line before it is read whole or split into
fields (a 50 MB line of commas cost 1 GB), and a UTF-16 file without a BOM is told to be saved as
UTF-8 instead of failing on a header that matches nothing."""

from __future__ import annotations

import codecs
import tracemalloc
from pathlib import Path

import pytest

from connectors.files import MAX_LINE_BYTES, read_import_file
from connectors.records import ImportFileError
from tests.connectors.test_files import FS_HEADER, fs_row, write_csv


def test_a_20_mb_line_of_commas_is_refused_without_holding_it(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "commas.csv", [fs_row()])
    with path.open("ab") as fh:
        fh.write(b"," * (20 << 20) + b"\r\n")
    tracemalloc.start()
    try:
        with pytest.raises(ImportFileError) as err:
            read_import_file(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (err.value.path, err.value.line) == (str(path), 3)
    assert f"longer than {MAX_LINE_BYTES:,} bytes" in str(err.value)
    assert peak < 3 * MAX_LINE_BYTES + (4 << 20), (
        f"{peak / 2**20:.0f} MiB"
    )  # a few copies of one bounded line


def test_a_long_line_within_the_bound_reads_as_before(tmp_path: Path) -> None:
    """The bound is far above any real line: a long value is still judged by its column."""
    path = write_csv(tmp_path / "long.csv", [fs_row(physical_name="E:\\" + "x" * 100_000)])
    [snap] = read_import_file(path)
    assert snap.samples[0].ref.physical_name == "E:\\" + "x" * 100_000


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_utf16_without_a_byte_order_mark_is_told_to_be_saved_as_utf8(tmp_path: Path, codec: str) -> None:
    text = ",".join(FS_HEADER) + "\r\n" + ",".join(fs_row()) + "\r\n"
    path = tmp_path / f"{codec}.csv"
    path.write_bytes(text.encode(codec))  # no BOM: sqlcmd -u or PowerShell's Unicode, BOM stripped
    with pytest.raises(ImportFileError) as err:
        read_import_file(path)
    assert str(err.value).startswith(f"{path}, line 1: ")
    assert "save as UTF-8 (this file looks like UTF-16 without a byte-order mark" in str(err.value)


def test_utf16_with_a_byte_order_mark_is_still_read(tmp_path: Path) -> None:
    text = ",".join(FS_HEADER) + "\r\n" + ",".join(fs_row()) + "\r\n"
    path = tmp_path / "bom.csv"
    path.write_bytes(codecs.BOM_UTF16_LE + text.encode("utf-16-le"))
    [snap] = read_import_file(path)
    assert snap.server == "SQL01"
