"""A live poll and an import chunk of one target never both compute intervals from the same
stored sample: the poll takes the store's write lock (SQLite) or the target's row lock
(PostgreSQL) before it reads the latest samples, as import chunks do."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

from sqlalchemy import func, select

from app.importer import _store_chunk
from app.store.db import Store
from app.store.ingest import SeriesCache, ingest_snapshot, ingest_snapshots
from app.store.models import IoInterval, Target
from app.store.targets import add_target
from connectors.files import FileSnapshot
from tests.store.test_ingest import snap


def test_a_poll_and_an_import_chunk_of_one_target_count_each_io_once(store: Store) -> None:
    now = datetime(2026, 12, 1, tzinfo=UTC)
    with store.session() as s:
        tid = add_target(s, name="SQL1", engine="sqlserver", source="live", connection_encrypted=None,
                         password_env=None, poll_interval_s=300, now=now).id  # fmt: skip
    with store.session() as s:
        first = s.get(Target, tid)
        assert first is not None
        ingest_snapshots(s, first, [snap(0, 1000), snap(5, 2000)])
    chunk = [FileSnapshot(snap(7, 2400), (2,)), FileSnapshot(snap(9, 2800), (3,))]
    importer = threading.Thread(target=lambda: _store_chunk(store, chunk, {("sqlserver", "SQL1"): tid}))
    # the poll at minute 10, as app.collect.poll_target writes it: the lock first, then the latest
    # samples are read; an import chunk that arrives meanwhile waits for the poll to commit
    with store.write_session() as s:
        target = s.get(Target, tid, with_for_update=True)
        assert target is not None
        cache = SeriesCache(s, target, guard_overlap=True)
        importer.start()
        importer.join(timeout=1.0)
        assert importer.is_alive(), "the import chunk wrote while the poll held the target"
        ingest_snapshot(cache, snap(10, 3000))
    importer.join(timeout=30)
    assert not importer.is_alive()
    with store.session() as s:
        reads = s.scalar(select(func.sum(IoInterval.reads)))
    assert reads == 3000 - 1000  # the counter's span, once
