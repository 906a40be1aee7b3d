"""Import messages say what was stored (issue #33, item 6): a file a collection is still writing
is imported as it was when the import began, and the rest is left for the next import, with a
note; a file changed while its second pass runs stops with the number of samples already stored,
never "nothing from this file was stored". On SQLite and PostgreSQL."""

from __future__ import annotations

import csv
import threading
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner

from app.cli import _import_failed, app
from app.importer import ImportStoppedError, import_file
from app.settings import get_settings
from app.store.db import Store
from app.store.models import Sample
from tests.app.test_import_concurrency import NOW, T0, fs_line, reads_at, write

FILES = 4


def rows(first: int, last: int, server: str = "SQLGROW") -> list[list[str]]:
    """Samples first..last-1 of FILES files, 5 minutes apart."""
    return [fs_line(server, T0 + timedelta(minutes=5 * i), f, reads_at(i, f)) for i in range(first, last)
            for f in range(1, FILES + 1)]  # fmt: skip


def append(path: Path, new: list[list[str]], tail: str = "") -> None:
    with path.open("a", encoding="utf-8", newline="") as fh:
        csv.writer(fh, lineterminator="\r\n").writerows(new)
        fh.write(tail)


def samples(store: Store) -> int:
    with store.session() as s:
        return int(s.scalar(select(func.count()).select_from(Sample)) or 0)


def test_rows_appended_during_the_import_wait_for_the_next_one(store: Store, tmp_path: Path) -> None:
    path = write(tmp_path / "growing.csv", rows(0, 30))
    grown = [False]

    def collection_goes_on(done: int) -> None:  # the collector appends while the file is read
        if not grown[0]:
            grown[0] = True
            append(path, rows(30, 40), tail=f"{T0.isoformat()},SQLGR")  # and is mid-line now

    out = import_file(store, path, now=NOW, progress=collection_goes_on, chunk_rows=20)
    assert out.result.samples == 30 * FILES and samples(store) == 30 * FILES  # what it held at the start
    assert out.grew_to is not None and out.grew_to > out.size == len(
        write(tmp_path / "x.csv", rows(0, 30)).read_bytes()
    )
    assert out.recorded  # the part imported is complete: the whole file is a different one

    with path.open("rb+") as fh:  # the collection finishes: its last line completed, one more sample
        data = fh.read()
        fh.seek(0)
        fh.write(data[: data.rfind(b"\n") + 1])
        fh.truncate()
    append(path, rows(40, 41))
    again = import_file(store, path, now=NOW)
    assert samples(store) == 41 * FILES
    assert (again.result.samples, again.result.duplicates, again.grew_to) == (11 * FILES, 30 * FILES, None)


def test_a_file_changed_during_the_second_pass_says_how_many_samples_were_stored(
    store: Store, tmp_path: Path
) -> None:
    path = write(tmp_path / "changed.csv", rows(0, 600))  # progress is reported every 64 KiB
    size = path.stat().st_size
    changed = [False]

    def someone_edits_it(done: int) -> None:  # `done` counts both passes: past the first, edit the end
        if done > size and not changed[0]:
            changed[0] = True
            data = path.read_bytes()
            at = data.rfind(b",E:\\") - 1  # the last row's volume_available_bytes ... same length
            bad = data[:at] + b"x" + data[at + 1 :]
            path.write_bytes(bad)

    with pytest.raises(ImportStoppedError) as err:
        import_file(store, path, now=NOW, progress=someone_edits_it, chunk_rows=8)
    stored = samples(store)
    assert stored > 0 and err.value.stored.samples == stored
    message = _import_failed(err.value)
    assert f"{stored} samples" in message and "were stored before it" in message
    assert "nothing from this file was stored" not in message
    assert err.value.line is not None and str(path) in message


@pytest.fixture
def cli_env(store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TIERWISE_DATABASE_URL", store_url)
    monkeypatch.setenv("TIERWISE_SECRET_KEY_FILE", str(tmp_path / "tw.key"))
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def test_tierwise_import_of_a_file_still_being_written_says_what_it_stored(
    cli_env: None, store_url: str, tmp_path: Path
) -> None:
    path = write(tmp_path / "live.csv", rows(0, 400))
    stop = threading.Event()

    def collector() -> None:  # writes a sample every few milliseconds, lines in two pieces
        i = 400
        while not stop.is_set():
            line = ",".join(rows(i, i + 1)[0])
            append(path, [], tail=line[:40])
            append(path, [], tail=line[40:] + "\r\n")
            i += 1
            stop.wait(0.002)

    writer = threading.Thread(target=collector)
    writer.start()
    try:
        result = CliRunner().invoke(app, ["import", str(path)])
    finally:
        stop.set()
        writer.join()
    assert result.exit_code == 0, result.output
    store = Store(store_url)
    try:
        stored = samples(store)
    finally:
        store.dispose()
    assert stored >= 400 * FILES
    assert f"{stored} samples" in result.output  # the summary counts what was stored
    assert "note: the file grew while it was imported" in result.output
