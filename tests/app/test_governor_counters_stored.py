"""Resource Governor's share of the stall reaches the advice from an import (issue #32, item 1):
the io_stall_queued_read_ms / io_stall_queued_write_ms columns of sys.dm_io_virtual_file_stats
(SQL Server 2014+) are stored per interval as deltas with the other engine counters (`extra`), and
the advice window sums them like the stalls. On SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import select

from app.importer import import_file
from app.store.db import Store
from app.store.models import DbObject
from app.store.window_read import window_usage
from tests.advisors.scenarios.generate import HERE

FILE = HERE / "resource-governor-queueing" / "file_stats.csv"


def test_the_governors_queue_is_stored_per_interval_and_summed_in_the_window(store: Store) -> None:
    out = import_file(store, FILE)
    assert out.result.samples > 0
    with store.session() as s:
        ids = {o.name: o.id for o in s.scalars(select(DbObject))}
        usage = window_usage(
            s, since=datetime(2026, 11, 1, tzinfo=UTC), until=datetime(2026, 11, 21, tzinfo=UTC), history=[]
        )
    capped, _ = usage[ids["FG_CAPPED_1"]]
    reads, stall = capped.counters["reads"], capped.counters["read_time_ms"]
    assert reads and stall
    queued = capped.extra["io_stall_queued_read_ms"]
    # 250 reads/s a file at 30 ms, 28.8 of them queued: the deltas keep the shares exactly
    assert stall == 30 * reads and queued * 30 == stall * 28.8
    assert capped.extra["io_stall_queued_write_ms"] == 0
    slow, _ = usage[ids["FG_SLOWDISK_1"]]
    assert slow.extra.get("io_stall_queued_read_ms", 0) == 0  # the same stall, none of it queued
