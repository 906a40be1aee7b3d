"""Snapshots into the store, on SQLite and PostgreSQL: deltas, restarts, duplicates, moves."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select

from app.store.db import Store
from app.store.ingest import ingest_snapshots
from app.store.models import DbObject, HourlyRollup, IoInterval, Sample, Target
from app.store.rollup import apply_retention, roll_up
from app.store.targets import add_target
from connectors.records import Engine, ObjectKind, ObjectRef, ObjectSample, Snapshot

T0 = datetime(2026, 11, 1, 0, 0, tzinfo=UTC)
BOOT = datetime(2026, 10, 31, 6, 0, tzinfo=UTC)


def snap(
    minutes: int,
    reads: int,
    *,
    boot: datetime = BOOT,
    path: str = r"F:\fc\Sales\hot1.ndf",
    extra: dict[str, int] | None = None,
) -> Snapshot:
    ref = ObjectRef(
        Engine.SQLSERVER,
        "SQL1",
        "Sales",
        ObjectKind.DATA_FILE,
        "Sales/file/3",
        "hot1",
        size_bytes=10 * 2**30,
        logical_name="hot1",
        physical_name=path,
        file_id=3,
        filegroup="FG_HOT",
    )
    counters = {
        "reads": reads,
        "bytes_read": reads * 8192,
        "read_time_ms": reads * 12,
        "writes": reads // 4,
        "bytes_written": reads * 2048,
        "write_time_ms": reads // 2,
    }
    return Snapshot(
        Engine.SQLSERVER,
        "SQL1",
        T0 + timedelta(minutes=minutes),
        boot,
        (ObjectSample(ref, counters, extra or {}),),
    )


def _target(store: Store) -> int:
    with store.session() as s:
        return add_target(
            s,
            name="SQL1",
            engine="sqlserver",
            source="live",
            connection_encrypted=None,
            password_env=None,
            poll_interval_s=300,
            now=T0,
        ).id


def _ingest(store: Store, tid: int, snaps: list[Snapshot]):  # type: ignore[no-untyped-def]
    with store.session() as s:
        return ingest_snapshots(s, s.get(Target, tid), snaps)  # type: ignore[arg-type]


def _intervals(store: Store) -> list[IoInterval]:
    with store.session() as s:
        return list(s.scalars(select(IoInterval).order_by(IoInterval.end_time)))


def test_consecutive_samples_make_intervals(store: Store) -> None:
    tid = _target(store)
    r = _ingest(store, tid, [snap(0, 1000), snap(5, 4000), snap(10, 7600)])
    assert (r.samples, r.intervals, r.new_series) == (3, 2, 1)
    ivs = _intervals(store)
    assert [iv.reads for iv in ivs] == [3000, 3600]
    assert [iv.read_time_ms for iv in ivs] == [36000, 43200]
    assert ivs[0].start_time == T0 and ivs[0].end_time == T0 + timedelta(minutes=5)
    assert ivs[0].end_time.tzinfo is not None


def test_restart_leaves_a_gap_and_counts_nothing_twice(store: Store) -> None:
    tid = _target(store)
    reboot = T0 + timedelta(minutes=7)
    r = _ingest(
        store, tid, [snap(0, 1000), snap(5, 2000), snap(10, 300, boot=reboot), snap(15, 900, boot=reboot)]
    )
    assert r.new_series == 2
    ivs = _intervals(store)
    assert [iv.reads for iv in ivs] == [1000, 600]
    assert [iv.end_time - T0 for iv in ivs] == [timedelta(minutes=5), timedelta(minutes=15)]
    assert all((iv.reads or 0) >= 0 for iv in ivs)


def test_counter_reset_without_restart_starts_new_series(store: Store) -> None:
    tid = _target(store)
    r = _ingest(store, tid, [snap(0, 1000), snap(5, 50), snap(10, 150)])
    assert r.new_series == 2
    assert any("reset" in n for n in r.notes)
    assert [iv.reads for iv in _intervals(store)] == [100]


def test_duplicates_are_idempotent_and_series_survive_a_service_restart(store_url: str) -> None:
    first = Store(store_url)
    tid = _target(first)
    _ingest(first, tid, [snap(0, 1000), snap(5, 2000)])
    first.dispose()
    second = Store(store_url)  # a new process: the previous sample comes from the store
    r = _ingest(second, tid, [snap(5, 2000), snap(10, 3500)])
    assert (r.duplicates, r.samples, r.intervals) == (1, 1, 1)
    assert [iv.reads for iv in _intervals(second)] == [1000, 1500]
    with second.session() as s:
        assert s.scalar(select(func.count()).select_from(Sample)) == 3
    second.dispose()


def test_older_sample_than_stored_series_is_not_stored(store: Store) -> None:
    tid = _target(store)
    _ingest(store, tid, [snap(10, 2000)])
    r = _ingest(store, tid, [snap(5, 1000)])
    assert r.out_of_order == 1 and r.samples == 0


def test_object_location_follows_newest_sample(store: Store) -> None:
    tid = _target(store)
    _ingest(store, tid, [snap(0, 1000), snap(5, 2000, path=r"E:\flash\Sales\hot1.ndf")])
    with store.session() as s:
        obj = s.scalar(select(DbObject))
        assert obj is not None
        assert obj.physical_name == r"E:\flash\Sales\hot1.ndf"
        assert obj.last_seen == T0 + timedelta(minutes=5)
        assert obj.first_seen == T0
        # the move is remembered: when, and where it was before (verification compares the two)
        assert obj.location_since == T0 + timedelta(minutes=5)
        assert obj.previous_location is not None
        assert obj.previous_location["physical_name"] == r"F:\fc\Sales\hot1.ndf"
        assert obj.previous_location["filegroup"] == "FG_HOT"


def test_unchanged_location_is_not_a_relocation(store: Store) -> None:
    tid = _target(store)
    _ingest(store, tid, [snap(0, 1000), snap(5, 2000), snap(10, 3000)])
    with store.session() as s:
        obj = s.scalar(select(DbObject))
        assert obj is not None
        assert obj.location_since is None and obj.previous_location is None


def test_extra_counters_are_differenced(store: Store) -> None:
    tid = _target(store)
    _ingest(
        store,
        tid,
        [
            snap(0, 10, extra={"singleton_lookup_count": 100}),
            snap(5, 20, extra={"singleton_lookup_count": 175}),
        ],
    )
    assert _intervals(store)[0].extra == {"singleton_lookup_count": 75}


def test_rollup_is_exact_and_incremental(store: Store) -> None:
    tid = _target(store)
    reads = [0, 1000, 2500, 4000, 4100, 9000, 12000, 15000, 15001, 20000, 22000, 22001, 30000, 31000, 40000]
    _ingest(store, tid, [snap(10 * i, r) for i, r in enumerate(reads[:8])])
    with store.session() as s:
        assert roll_up(s) == 7
    _ingest(store, tid, [snap(10 * i, r) for i, r in enumerate(reads) if i >= 8])
    with store.session() as s:
        assert roll_up(s) == 7
        assert roll_up(s) == 0  # nothing counted twice
        rows = list(s.scalars(select(HourlyRollup).order_by(HourlyRollup.hour)))
    assert sum(r.reads or 0 for r in rows) == reads[-1] - reads[0]
    assert sum(r.intervals for r in rows) == len(reads) - 1
    by_hour = {r.hour: r.reads for r in rows}
    # intervals ending 00:10..00:50 -> hour 00; 01:00..01:50 -> hour 01; 02:00..02:20 -> hour 02
    assert by_hour[T0] == reads[5] - reads[0]
    assert by_hour[T0 + timedelta(hours=1)] == reads[11] - reads[5]
    assert by_hour[T0 + timedelta(hours=2)] == reads[14] - reads[11]


def test_retention_keeps_unrolled_intervals(store: Store) -> None:
    tid = _target(store)
    _ingest(store, tid, [snap(0, 10), snap(5, 20), snap(10, 30)])
    now = T0 + timedelta(days=20)
    with store.session() as s:
        r = apply_retention(s, now=now, sample_days=14, rollup_days=400)
    assert (r.samples, r.intervals) == (3, 0)  # intervals not rolled up yet stay
    with store.session() as s:
        roll_up(s)
        r = apply_retention(s, now=now, sample_days=14, rollup_days=400)
        assert r.intervals == 2
        assert s.scalar(select(func.count()).select_from(HourlyRollup)) == 1
        r = apply_retention(s, now=T0 + timedelta(days=401), sample_days=14, rollup_days=400)
        assert r.rollups == 1
