"""Imports running at the same time (issue #16): one writer per target, so interleaved files of
one server never count an I/O twice, and two first imports of a new server share one target.
On SQLite and PostgreSQL."""

from __future__ import annotations

import csv
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import func, select

from app.importer import FileImport, import_file
from app.store.db import Store
from app.store.ingest import ingest_snapshots
from app.store.models import DbObject, ImportedFile, IoInterval, Sample, Target
from connectors.files import read_import_file
from connectors.shapes import SQLSERVER_FILE_STATS

HEADER = [c.name for c in SQLSERVER_FILE_STATS.columns]
T0 = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)
NOW = datetime(2024, 5, 10, tzinfo=UTC)


def fs_line(server: str, when: datetime, file_id: int, reads: int) -> list[str]:
    values: dict[str, object] = {
        "sample_time": when.isoformat(),
        "server_name": server,
        "sqlserver_start_time": "2024-04-28T03:12:45Z",
        "database_name": "Sales",
        "file_id": file_id,
        "file_name": f"Sales_{file_id}",
        "type_desc": "ROWS",
        "filegroup_name": "PRIMARY",
        "physical_name": rf"E:\data\Sales_{file_id}.ndf",
        "size_on_disk_bytes": 1 << 30,
        "num_of_reads": reads,
        "num_of_bytes_read": reads * 8192,
        "io_stall_read_ms": reads // 2,
        "num_of_writes": reads // 4,
        "num_of_bytes_written": reads * 2048,
        "io_stall_write_ms": reads // 8,
        "io_stall_queued_read_ms": 0,
        "io_stall_queued_write_ms": 0,
        "volume_mount_point": "E:\\",
        "volume_total_bytes": 1 << 41,
        "volume_available_bytes": 1 << 40,
    }
    return [str(values[c]) for c in HEADER]


def write(path: Path, rows: list[list[str]]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, lineterminator="\r\n")
        w.writerow(HEADER)
        w.writerows(rows)
    return path


def reads_at(i: int, file_id: int) -> int:
    return 1000 * i * file_id + i * i  # grows by a different amount each step


def interleaved(tmp_path: Path, server: str, samples: int, files: int) -> tuple[Path, Path]:
    """Two files of one server: even sample times in one, odd in the other."""
    even: list[list[str]] = []
    odd: list[list[str]] = []
    for i in range(samples):
        rows = [
            fs_line(server, T0 + timedelta(minutes=5 * i), f, reads_at(i, f)) for f in range(1, files + 1)
        ]
        (even if i % 2 == 0 else odd).extend(rows)
    return write(tmp_path / "even.csv", even), write(tmp_path / "odd.csv", odd)


def in_parallel(*calls: Callable[[], FileImport]) -> list[FileImport]:
    """Run the calls at the same moment in threads; re-raise any error."""
    barrier = threading.Barrier(len(calls))
    results: list[FileImport | None] = [None] * len(calls)
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            barrier.wait()
            results[i] = calls[i]()
        except BaseException as exc:  # re-raised in the test thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    if errors:
        raise errors[0]
    assert all(r is not None for r in results)
    return [r for r in results if r is not None]


def spans_and_sums(store: Store) -> dict[str, tuple[int, int]]:
    """Per object: (last - first stored cumulative reads, sum of interval reads)."""
    with store.session() as s:
        out: dict[str, tuple[int, int]] = {}
        for obj in s.scalars(select(DbObject)):
            reads = list(
                s.scalars(select(Sample.reads).where(Sample.object_id == obj.id).order_by(Sample.sample_time))
            )
            total = s.scalar(select(func.sum(IoInterval.reads)).where(IoInterval.object_id == obj.id)) or 0
            out[obj.key] = ((reads[-1] or 0) - (reads[0] or 0), int(total))
        return out


def test_two_interleaved_files_of_one_server_at_once_count_each_io_once(
    store_url: str, tmp_path: Path
) -> None:
    even, odd = interleaved(tmp_path, "SQLCONC", samples=40, files=3)
    first, second = Store(store_url), Store(store_url, migrate=False)
    try:
        a, b = in_parallel(
            lambda: import_file(first, even, now=NOW, chunk_rows=6),
            lambda: import_file(second, odd, now=NOW, chunk_rows=6),
        )
    finally:
        second.dispose()
    spans = spans_and_sums(first)
    assert len(spans) == 3
    for key, (span, total) in spans.items():
        assert span > 0 and total == span, key
    # every row was stored or reported as not stored; a file with ignored rows is not recorded
    for out in (a, b):
        assert out.result.samples + out.result.ignored_count == 20 * 3
        assert out.recorded == (out.result.ignored_count == 0)
        assert all(i.line is not None and i.line >= 2 for i in out.ignored)
    with first.session() as s:
        assert s.scalar(select(func.count()).select_from(Target)) == 1
        assert s.scalar(select(func.count()).select_from(Sample)) == a.result.samples + b.result.samples
    first.dispose()


def test_two_first_imports_of_a_new_server_share_one_target(store_url: str, tmp_path: Path) -> None:
    stores = [Store(store_url), Store(store_url, migrate=False)]
    try:
        for round_ in range(3):
            server = f"NEWSRV{round_}"
            left = write(
                tmp_path / f"l{round_}.csv",
                [fs_line(server, T0 + timedelta(minutes=5 * i), 1, reads_at(i, 1)) for i in range(4)],
            )
            right = write(
                tmp_path / f"r{round_}.csv",
                [fs_line(server, T0 + timedelta(minutes=5 * i), 2, reads_at(i, 2)) for i in range(4)],
            )
            a, b = in_parallel(
                lambda left=left: import_file(stores[0], left, now=NOW),  # type: ignore[misc]
                lambda right=right: import_file(stores[1], right, now=NOW),  # type: ignore[misc]
            )
            assert (a.result.samples, b.result.samples) == (4, 4)
            assert a.recorded and b.recorded
        with stores[0].session() as s:
            names = sorted(s.scalars(select(Target.name)))
            assert names == [f"import:sqlserver:NEWSRV{r}" for r in range(3)]
            assert s.scalar(select(func.count()).select_from(ImportedFile)) == 6
        for key, (span, total) in spans_and_sums(stores[0]).items():
            assert total == span, key
    finally:
        for st in stores:
            st.dispose()


def test_an_interval_overlapping_a_stored_one_is_refused_and_reported(store: Store, tmp_path: Path) -> None:
    """Belt and braces behind the lock: an interval reaching back before the end of a stored one
    (left by an earlier bug, or samples removed by retention) is not stored a second time."""
    rows = [fs_line("SQLOVL", T0 + timedelta(minutes=5 * i), 1, reads_at(i, 1)) for i in range(3)]
    early = write(tmp_path / "early.csv", rows[:1])
    import_file(store, early, now=NOW)
    # a stored interval ending after the only stored sample (as double counting left them)
    with store.session() as s:
        obj = s.scalars(select(DbObject)).one()
        s.add(
            IoInterval(
                object_id=obj.id,
                start_time=T0,
                end_time=T0 + timedelta(minutes=3),
                seconds=180,
                extra={},
                reads=5,
            )
        )
    later = write(tmp_path / "later.csv", rows[1:])
    out = import_file(store, later, now=NOW)
    assert out.result.overlapping == 1 and not out.recorded
    assert out.ignored[0].line == 2 and "overlaps" in out.ignored[0].sample.reason
    with store.session() as s:
        ends = sorted(s.scalars(select(IoInterval.end_time)))
    # the overlapping interval is not stored; the sample is, and the next interval starts there
    assert ends == [T0 + timedelta(minutes=3), T0 + timedelta(minutes=10)]
    assert import_file(store, later, now=NOW).recorded  # imported again: nothing left to refuse


def test_ingest_without_the_guard_is_unchanged(store: Store) -> None:
    """The live poll path (ingest_snapshots without guard_overlap) still stores every interval."""
    snaps = read_import_file(Path(__file__).parents[1] / "fixtures" / "import" / "sqlserver_file_stats.csv")
    with store.session() as s:
        target = Target(
            name="t",
            engine="sqlserver",
            source="live",
            poll_interval_s=300,
            enabled=True,
            created_at=NOW,
            consecutive_failures=0,
        )
        s.add(target)
        s.flush()
        r = ingest_snapshots(s, target, [x for x in snaps if x.server == "SQLPROD01"])
    assert r.intervals == 6 and r.overlapping == 0
