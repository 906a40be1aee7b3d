"""Hourly roll-ups with a high-water mark, on SQLite and PostgreSQL: exact, incremental, late
arrivals counted once, io_interval never updated, retention never losing an un-rolled interval,
the 0011 data migration honouring the old `rolled_up` flags."""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import pytest
from alembic import command
from sqlalchemy import MetaData, Table, create_engine, event, func, insert, select, text

from app.store.db import Store, alembic_config
from app.store.ingest import bulk_insert, ingest_batch, ingest_snapshots
from app.store.io_window import usage
from app.store.models import COUNTER_COLUMNS, HourlyRollup, IoInterval, RollupProgress, Target
from app.store.rollup import apply_retention, not_rolled_up, roll_up, rolled_up_mark
from app.store.targets import add_target
from connectors.simulator import SimulatedFleet

T0 = datetime(2026, 11, 1, 0, 0, tzinfo=UTC)


def _add_targets(store: Store, fleet: SimulatedFleet, now: datetime, prefix: str = "") -> list[int]:
    with store.session() as s:
        return [
            add_target(
                s,
                name=prefix + i.name,
                engine="sqlserver",
                source="simulator",
                connection_encrypted=None,
                password_env=None,
                poll_interval_s=300,
                now=now,
            ).id
            for i in fleet.instances
        ]


def _poll(store: Store, fleet: SimulatedFleet, tids: list[int], times: list[datetime]) -> None:
    with store.session() as s:
        targets = [s.get(Target, t) for t in tids]
        for at in times:
            ingest_batch(s, [(t, [i.snapshot(at)]) for t, i in zip(targets, fleet.instances, strict=True)])  # type: ignore[misc]


def _expected(store: Store) -> dict[tuple[int, datetime], tuple[int, float, int | None, int | None]]:
    """Every stored interval summed per object and hour of its end, in Python."""
    sums: dict[tuple[int, datetime], list[Any]] = defaultdict(lambda: [0, 0.0, 0, 0])
    with store.session() as s:
        for iv in s.scalars(select(IoInterval)):
            acc = sums[(iv.object_id, iv.end_time.replace(minute=0, second=0))]
            acc[0] += 1
            acc[1] += iv.seconds
            acc[2] += iv.reads or 0
            acc[3] += iv.bytes_written or 0
    return {k: (v[0], round(v[1], 6), v[2], v[3]) for k, v in sums.items()}


def _rolled(store: Store) -> dict[tuple[int, datetime], tuple[int, float, int | None, int | None]]:
    with store.session() as s:
        return {
            (r.object_id, r.hour): (r.intervals, round(r.seconds, 6), r.reads or 0, r.bytes_written or 0)
            for r in s.scalars(select(HourlyRollup))
        }


def _interval_rows(object_id: int, ends: list[datetime], reads: int) -> list[dict[str, Any]]:
    return [
        {
            "object_id": object_id,
            "start_time": e - timedelta(minutes=5),
            "end_time": e,
            "seconds": 300.0,
            "extra": {"x": 1},
            **{c: reads for c in COUNTER_COLUMNS},
        }
        for e in ends
    ]


def test_rollup_is_exact_incremental_and_counts_late_intervals_once(store: Store) -> None:
    fleet = SimulatedFleet(seed=3, origin=T0, instances=2, files_per_instance=3)
    tids = _add_targets(store, fleet, T0)
    _poll(store, fleet, tids, [T0 + timedelta(minutes=20 * k) for k in range(7)])  # 00:00 .. 02:00
    with store.session() as s:
        first = roll_up(s)
    assert first > 0
    assert _rolled(store) == _expected(store)

    # the same hours keep filling (02:20, 02:40 go into the 02:00 row rolled up already)
    _poll(store, fleet, tids, [T0 + timedelta(minutes=20 * k) for k in (7, 8)])
    # a late arrival: an older file imported now, for hours long rolled up — a new target's objects
    # and, stored straight, intervals of a known object in two hours that already have roll-ups
    late = SimulatedFleet(seed=4, origin=T0 - timedelta(days=2), instances=1, files_per_instance=2)
    late_tid = _add_targets(store, late, T0, "OLD-")
    with store.session() as s:
        snaps = [
            late.instances[0].snapshot(T0 - timedelta(days=2) + timedelta(minutes=30 * k)) for k in range(4)
        ]
        ingest_snapshots(s, s.get(Target, late_tid[0]), snaps)  # type: ignore[arg-type]
        known = s.scalar(select(IoInterval.object_id).order_by(IoInterval.id).limit(1))
        assert known is not None
        bulk_insert(
            s,
            cast(Table, IoInterval.__table__),
            _interval_rows(known, [T0 + timedelta(minutes=7), T0 + timedelta(hours=1, minutes=3)], 11),
        )
    with store.session() as s:
        assert s.scalar(select(func.count()).where(not_rolled_up())) > 0
        second = roll_up(s)
    assert second > 0
    assert _rolled(store) == _expected(store)  # every interval in its hour exactly once

    with store.session() as s:  # re-runs change nothing
        assert roll_up(s) == 0
        assert roll_up(s) == 0
        assert s.scalar(select(func.count()).where(not_rolled_up())) == 0
        mark = s.scalar(select(RollupProgress.last_interval_id))
        assert mark == s.scalar(select(func.max(IoInterval.id)))
        assert s.scalar(select(func.sum(HourlyRollup.intervals))) == s.scalar(
            select(func.count()).select_from(IoInterval)
        )
    assert _rolled(store) == _expected(store)


def test_rollup_never_updates_intervals(store: Store) -> None:
    fleet = SimulatedFleet(seed=5, origin=T0, instances=1, files_per_instance=4)
    tids = _add_targets(store, fleet, T0)
    _poll(store, fleet, tids, [T0 + timedelta(minutes=10 * k) for k in range(5)])
    statements: list[str] = []

    def seen(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        statements.append(" ".join(statement.split()).lower())

    event.listen(store.engine, "before_cursor_execute", seen)
    try:
        with store.session() as s:
            assert roll_up(s) == 4 * 4
    finally:
        event.remove(store.engine, "before_cursor_execute", seen)
    writes = [st for st in statements if st.startswith(("update", "insert", "delete"))]
    assert writes and not [st for st in writes if "io_interval" in st.split(" where ")[0]]
    assert any(st.startswith("insert into hourly_rollup") for st in writes)


def test_retention_keeps_every_interval_not_rolled_up(store: Store) -> None:
    fleet = SimulatedFleet(seed=6, origin=T0, instances=1, files_per_instance=2)
    tids = _add_targets(store, fleet, T0)
    _poll(store, fleet, tids, [T0 + timedelta(minutes=10 * k) for k in range(4)])  # 6 intervals
    with store.session() as s:
        assert roll_up(s) == 6
    # a late import of even older intervals after the roll-up: old enough to expire, not rolled up
    with store.session() as s:
        oid = s.scalar(select(IoInterval.object_id).limit(1))
        assert oid is not None
        bulk_insert(
            s,
            cast(Table, IoInterval.__table__),
            _interval_rows(oid, [T0 - timedelta(hours=5), T0 - timedelta(hours=4)], 7),
        )
    now = T0 + timedelta(days=30)
    with store.session() as s:
        r = apply_retention(s, now=now, sample_days=14, rollup_days=400)
        assert r.intervals == 6  # the rolled-up ones only
        assert s.scalar(select(func.count()).select_from(IoInterval)) == 2
        assert roll_up(s) == 2
        r = apply_retention(s, now=now, sample_days=14, rollup_days=400)
        assert r.intervals == 2
        assert s.scalar(select(func.count()).select_from(IoInterval)) == 0
        assert s.scalar(select(func.sum(HourlyRollup.intervals))) == 8
    # io_interval is empty now: the next interval still gets an id above the mark (no id reuse on
    # SQLite), so it is rolled up and counted
    _poll(store, fleet, tids, [T0 + timedelta(minutes=10 * k) for k in (4, 5)])
    with store.session() as s:
        assert roll_up(s) == 2
        assert s.scalar(select(func.sum(HourlyRollup.intervals))) == 10


@pytest.mark.postgres
def test_rollup_waits_for_intervals_still_being_written(postgres_url: str) -> None:
    """An interval whose id was taken before the roll-up but committed after it must not fall
    below the mark: the roll-up waits for writers of io_interval (SHARE lock)."""
    store = Store(postgres_url)
    try:
        fleet = SimulatedFleet(seed=8, origin=T0, instances=2, files_per_instance=2)
        tids = _add_targets(store, fleet, T0)
        _poll(store, fleet, tids, [T0])  # first samples, no intervals yet
        with store.session() as s:
            objs = [r[0] for r in s.execute(text("SELECT id FROM object ORDER BY id")).all()]
        slow = store.engine.connect()
        slow_tx = slow.begin()  # takes low ids, commits last
        slow.execute(insert(IoInterval), _interval_rows(objs[0], [T0 + timedelta(minutes=5)], 5))
        with store.session() as s:  # higher ids, committed first
            bulk_insert(
                s, cast(Table, IoInterval.__table__), _interval_rows(objs[1], [T0 + timedelta(minutes=5)], 3)
            )
        counted: list[int] = []

        def job() -> None:
            with store.session() as s:
                counted.append(roll_up(s))

        worker = threading.Thread(target=job)
        worker.start()
        time.sleep(1.0)  # the roll-up is waiting for the slow writer (or has not started: same result)
        slow_tx.commit()
        slow.close()
        worker.join(timeout=60)
        assert not worker.is_alive()
        with store.session() as s:
            counted.append(roll_up(s))
            assert s.scalar(select(func.count()).where(not_rolled_up())) == 0
        assert counted == [2, 0]
        assert _rolled(store) == _expected(store)
    finally:
        store.dispose()


@pytest.mark.empty_store  # migrates for real, from an empty database
def test_migration_0011_keeps_old_rolled_up_flags_exact(store_url: str) -> None:
    """A store at 0010 with intervals rolled up (flag set), not rolled up after the last rolled one,
    and a straggler below it (committed after a roll-up passed its id): after 0011 every interval
    is counted exactly once."""
    cfg = alembic_config(store_url)
    command.upgrade(cfg, "0010")
    engine = create_engine(store_url)
    old = MetaData()
    old.reflect(engine)  # the 0010 tables, written as that version's code wrote them
    hour = datetime(2026, 11, 1, 0, 0)  # naive UTC, as the store keeps it
    with engine.begin() as c:
        c.execute(
            insert(old.tables["target"]).values(
                id=1, name="T", engine="sqlserver", source="live", poll_interval_s=300, enabled=True,
                created_at=hour, consecutive_failures=0,
            )
        )  # fmt: skip
        c.execute(
            insert(old.tables["object"]).values(
                id=1, target_id=1, engine="sqlserver", server="S", database="D", kind="data_file",
                key="D/file/1", name="f", first_seen=hour, last_seen=hour,
            )
        )  # fmt: skip
        # ids 1..6: 1, 2, 4 rolled up; 3 a straggler; 5, 6 after the last roll-up
        marks = [(5, True), (10, True), (15, False), (20, True), (25, False), (65, False)]
        c.execute(
            insert(old.tables["io_interval"]),
            [
                {"id": i, "object_id": 1, "start_time": hour + timedelta(minutes=m - 5),
                 "end_time": hour + timedelta(minutes=m), "seconds": 300.0, "reads": 10 * i,
                 "extra": {"k": 1}, "rolled_up": rolled}
                for i, (m, rolled) in enumerate(marks, start=1)
            ],
        )  # fmt: skip
        c.execute(
            insert(old.tables["hourly_rollup"]).values(
                object_id=1, hour=hour, intervals=3, seconds=900.0, reads=70, extra={"k": 3}
            )
        )
        if engine.dialect.name == "postgresql":
            c.execute(text("SELECT setval('io_interval_id_seq', 6)"))
    engine.dispose()
    store = Store(store_url)  # upgrades to head
    try:
        with store.session() as s:
            assert s.scalar(select(RollupProgress.last_interval_id)) == 4
            r = s.scalar(select(HourlyRollup))
            assert r is not None and (r.intervals, r.reads, r.extra) == (4, 100, {"k": 4})  # + straggler 3
            assert roll_up(s) == 2  # 5 and 6
            # the next interval gets an id above every old one
            bulk_insert(s, cast(Table, IoInterval.__table__), _interval_rows(1, [T0 + timedelta(hours=2)], 1))
            assert s.scalar(select(func.max(IoInterval.id))) == 7
            assert roll_up(s) == 1
            rows = {
                (h.hour - T0).seconds // 3600: (h.intervals, h.reads) for h in s.scalars(select(HourlyRollup))
            }
        assert rows == {0: (5, 150), 1: (1, 60), 2: (1, 1)}
    finally:
        store.dispose()


def test_usage_counts_each_interval_once_whatever_mark_it_was_given(store: Store) -> None:
    """The pages' sums (roll-ups + intervals above the mark) are the same before and after a
    roll-up, and with a mark read before that roll-up (a stale hint only narrows the scan)."""
    fleet = SimulatedFleet(seed=9, origin=T0, instances=1, files_per_instance=3)
    tids = _add_targets(store, fleet, T0)
    _poll(store, fleet, tids, [T0 + timedelta(minutes=15 * k) for k in range(5)])
    now = T0 + timedelta(hours=2)

    def sums(mark: int | None) -> dict[int, Any]:
        with store.session() as s:
            q = usage(s.get_bind().dialect.name, since=T0 - timedelta(hours=1), until=now, mark=mark)
            return {r.object_id: (r.reads, r.seconds) for r in s.execute(q)}

    before = sums(None)
    with store.session() as s:
        stale = rolled_up_mark(s)
        assert roll_up(s) == 12
    _poll(store, fleet, tids, [T0 + timedelta(minutes=75)])
    with store.session() as s:
        assert roll_up(s) == 3
        assert rolled_up_mark(s) > stale
    after = sums(None)
    assert after == sums(stale) == sums(rolled_up_mark_now(store))
    expected = _expected(store)
    for oid, (reads, _) in after.items():
        assert reads == sum(v[2] for k, v in expected.items() if k[0] == oid)
    assert set(before) == set(after)


def rolled_up_mark_now(store: Store) -> int:
    with store.session() as s:
        return rolled_up_mark(s)
