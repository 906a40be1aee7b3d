"""Bad values are refused with file/line/column before anything is written, on both stores, and
the next file on the command line is still imported; samples that cannot be stored are reported
(exit 1) and leave the file importable again; chunked commits resume after a crash (issue #16)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner

from app.cli import app
from app.importer import import_file
from app.settings import get_settings
from app.store.db import Store
from app.store.models import ImportedFile, IoInterval, Sample
from connectors.records import ImportFileError
from tests.app.test_import_concurrency import HEADER, NOW, T0, fs_line, reads_at, write

BAD = {
    "20_digit_counter": ({"num_of_reads": "12345678901234567890"}, "num_of_reads"),
    "2_pow_63_counter": ({"num_of_reads": str(2**63)}, "num_of_reads"),
    "2_pow_63_gauge": ({"size_on_disk_bytes": str(2**63)}, "size_on_disk_bytes"),
    "huge_file_id": ({"file_id": str(2**31)}, "file_id"),
    "nul_in_name": ({"file_name": "Sa\x00les"}, "file_name"),
    "crlf_in_server": ({"server_name": "SQLBAD\r\nX-Injected: 1"}, "server_name"),
    "lf_in_database": ({"database_name": "Sa\nles"}, "database_name"),
    "escape_in_filegroup": ({"filegroup_name": "FG\x1b[2J"}, "filegroup_name"),
    "del_in_path": ({"physical_name": "E:\\data\x7f.mdf"}, "physical_name"),
    "100kb_name": ({"physical_name": "E:\\" + "x" * 100_000}, "physical_name"),
    "null_text": ({"filegroup_name": "NULL"}, "filegroup_name"),
    "blank_server": ({"server_name": "   "}, "server_name"),
    "future_sample": ({"sample_time": (NOW + timedelta(days=365 * 75)).isoformat()}, "sample_time"),
    "start_after_sample": ({"sqlserver_start_time": "2024-06-01T00:00:00Z"}, "sqlserver_start_time"),
}


def bad_file(tmp_path: Path, name: str, change: dict[str, str]) -> Path:
    """Three good samples, the bad value on line 3."""
    rows = [fs_line("SQLBAD", T0 + timedelta(minutes=5 * i), 1, reads_at(i, 1)) for i in range(3)]
    row = dict(zip(HEADER, rows[1], strict=True))
    row.update(change)
    rows[1] = [row[c] for c in HEADER]
    return write(tmp_path / f"{name}.csv", rows)


def count(store: Store, model: type) -> int:
    with store.session() as s:
        return int(s.scalar(select(func.count()).select_from(model)) or 0)


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_value_is_refused_with_its_place_and_stores_nothing(
    store: Store, tmp_path: Path, name: str
) -> None:
    change, column = BAD[name]
    path = bad_file(tmp_path, name, change)
    with pytest.raises(ImportFileError) as err:
        import_file(store, path, now=NOW)
    assert (err.value.line, err.value.column) == (3, column), str(err.value)
    assert count(store, Sample) == 0 and count(store, ImportedFile) == 0


def test_field_over_the_csv_limit_is_an_error_not_a_traceback(store: Store, tmp_path: Path) -> None:
    path = bad_file(tmp_path, "huge", {"physical_name": "x" * (200 * 1024)})
    with pytest.raises(ImportFileError) as err:
        import_file(store, path, now=NOW)
    assert err.value.line == 3 and "longer than" in str(err.value)


def test_cli_goes_on_after_each_bad_file_and_imports_the_good_one(
    store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TIERWISE_DATABASE_URL", store_url)
    monkeypatch.setenv("TIERWISE_SECRET_KEY_FILE", str(tmp_path / "tw.key"))
    bad = [bad_file(tmp_path, name, change) for name, (change, _) in sorted(BAD.items())]
    huge = bad_file(tmp_path, "huge", {"physical_name": "x" * (200 * 1024)})
    good = write(
        tmp_path / "good.csv",
        [fs_line("SQLGOOD", T0 + timedelta(minutes=5 * i), 1, reads_at(i, 1)) for i in range(3)],
    )
    get_settings.cache_clear()
    try:
        r = CliRunner().invoke(app, ["import", *map(str, bad), str(huge), str(good)])
    finally:
        get_settings.cache_clear()
    assert r.exit_code == 1, r.output
    assert isinstance(r.exception, SystemExit), r.exception  # typer.Exit(1), not a traceback
    for path in [*bad, huge]:
        assert f"{path}, line 3" in r.output
    assert "good.csv: 3 snapshots, 3 samples, 2 intervals" in r.output
    check = Store(store_url, migrate=False)
    assert count(check, Sample) == 3 and count(check, ImportedFile) == 1
    check.dispose()


def test_out_of_order_file_exits_1_names_lines_and_can_be_imported_again(
    store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = [fs_line("SQLORD", T0 + timedelta(minutes=5 * i), 1, reads_at(i, 1)) for i in range(6)]
    late = write(tmp_path / "late.csv", rows[3:])
    early = write(tmp_path / "early.csv", rows[:4])  # overlaps late by one sample
    monkeypatch.setenv("TIERWISE_DATABASE_URL", store_url)
    monkeypatch.setenv("TIERWISE_SECRET_KEY_FILE", str(tmp_path / "tw.key"))
    get_settings.cache_clear()
    try:
        first = CliRunner().invoke(app, ["import", str(late), str(early)])
    finally:
        get_settings.cache_clear()
    assert first.exit_code == 1
    assert "early.csv: 3 samples were not stored" in first.output
    assert "line 2: Sales/file/1" in first.output and "line 4:" in first.output
    store = Store(store_url, migrate=False)
    with store.session() as s:
        assert list(s.scalars(select(ImportedFile.path))) == [str(late)]  # early.csv not recorded
    store.dispose()


def test_a_sample_from_2099_does_not_poison_the_series(store: Store, tmp_path: Path) -> None:
    rows = [fs_line("SQLFUT", T0 + timedelta(minutes=5 * i), 1, reads_at(i, 1)) for i in range(3)]
    future = write(tmp_path / "future.csv", [fs_line("SQLFUT", T0.replace(year=2099), 1, 1)])
    with pytest.raises(ImportFileError):
        import_file(store, future, now=NOW)
    out = import_file(store, write(tmp_path / "ok.csv", rows), now=NOW)
    assert (out.result.samples, out.result.ignored_count, out.recorded) == (3, 0, True)


def test_chunked_import_resumes_after_a_crash_without_double_counting(store: Store, tmp_path: Path) -> None:
    rows = [
        fs_line("SQLCHUNK", T0 + timedelta(minutes=5 * i), f, reads_at(i, f))
        for i in range(30)
        for f in (1, 2)
    ]
    path = write(tmp_path / "long.csv", rows)
    commits: list[int] = []

    def crash(done: int) -> None:
        commits.append(done)
        if len(commits) == 2:
            raise KeyboardInterrupt  # the process dies between two chunks

    with pytest.raises(KeyboardInterrupt):
        import_file(store, path, now=NOW, chunk_rows=10, committed=crash)
    assert count(store, Sample) == 20 and count(store, ImportedFile) == 0  # two chunks committed
    out = import_file(store, path, now=NOW, chunk_rows=10)
    assert (out.result.samples, out.result.duplicates, out.recorded) == (40, 20, True)
    with store.session() as s:
        total = s.scalar(select(func.sum(IoInterval.reads))) or 0
    assert total == (reads_at(29, 1) - reads_at(0, 1)) + (reads_at(29, 2) - reads_at(0, 2))
    assert count(store, IoInterval) == 58


def test_a_bad_last_line_stores_nothing_even_with_chunks(store: Store, tmp_path: Path) -> None:
    rows = [fs_line("SQLALL", T0 + timedelta(minutes=5 * i), 1, reads_at(i, 1)) for i in range(30)]
    rows.append(fs_line("SQLALL", T0 + timedelta(minutes=5 * 30), 1, -1))
    path = write(tmp_path / "bad_end.csv", rows)
    with pytest.raises(ImportFileError) as err:
        import_file(store, path, now=NOW, chunk_rows=5)
    assert err.value.line == 32
    assert count(store, Sample) == 0
