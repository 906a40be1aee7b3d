"""Collect end to end: simulator ground truth -> store -> deltas; failing targets; the scheduler."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from app.collect import backoff_delay, poll_target, simulator_connection
from app.demo import ensure_demo_fleet
from app.jobs import Runtime, Scheduler, SchedulerLock
from app.secrets import Vault
from app.settings import Settings
from app.store.db import Store
from app.store.models import DbObject, IoInterval, Sample, Target
from app.store.targets import add_target
from connectors.simulator import demo_fleet
from tests.conftest import free_port


def _add(store: Store, vault: Vault, name: str, engine: str, connection: str, **kw: object) -> int:
    with store.session() as s:
        return add_target(
            s,
            name=name,
            engine=engine,
            source="live",
            connection_encrypted=vault.encrypt(connection),
            password_env=kw.get("password_env"),
            poll_interval_s=int(kw.get("interval", 60)),  # type: ignore[arg-type]
            now=datetime.now(UTC),
        ).id


def test_demo_history_matches_simulator_ground_truth(store: Store, vault: Vault, settings: Settings) -> None:
    now = datetime(2026, 11, 3, 12, 0, tzinfo=UTC)
    settings = settings.model_copy(update={"demo_history_hours": 60})
    first = ensure_demo_fleet(store, vault, settings, now=now)
    assert first.samples > 0 and first.intervals > 0
    again = ensure_demo_fleet(store, vault, settings, now=now)
    assert again.samples == 0  # idempotent: nothing new to fill
    origin = (now - timedelta(hours=60)).replace(minute=0, second=0, microsecond=0)
    fleet = demo_fleet(origin)
    sql = next(i for i in fleet.instances if i.name == "SQLPROD01")
    restart = sql.restarts()[0]
    truth = sql.truth()
    with store.session() as s:
        objs = {
            o.key: o for o in s.scalars(select(DbObject).join(Target).where(Target.name == "demo:SQLPROD01"))
        }
        # no interval spans the restart, and none is negative
        for iv in s.scalars(
            select(IoInterval).where(IoInterval.object_id.in_([o.id for o in objs.values()]))
        ):
            assert not (iv.start_time < restart < iv.end_time)
            assert (iv.reads or 0) >= 0 and (iv.read_time_ms or 0) >= 0
        # a full day of intervals reproduces the workload model's read rate and latency
        day_start = restart + timedelta(hours=1)
        day_end = day_start + timedelta(hours=24)
        checked = 0
        for key, t in truth.items():
            obj = objs.get(key)
            if obj is None or t.read_iops < 1:
                continue
            ivs = list(
                s.scalars(
                    select(IoInterval).where(
                        IoInterval.object_id == obj.id,
                        IoInterval.start_time >= day_start,
                        IoInterval.end_time <= day_end,
                    )
                )
            )
            if not ivs or ivs[0].reads is None:
                continue
            secs = sum(iv.seconds for iv in ivs)
            reads = sum(iv.reads or 0 for iv in ivs)
            assert secs >= 23 * 3600
            assert reads / secs == pytest.approx(t.read_iops, rel=0.05), key
            assert sum(iv.read_time_ms or 0 for iv in ivs) / reads == pytest.approx(t.read_ms, rel=0.1), key
            checked += 1
        assert checked >= 5


def test_failing_targets_are_recorded_and_never_block_others(
    store: Store, vault: Vault, settings: Settings
) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    origin = now - timedelta(hours=2)
    sim = _add(store, vault, "demo:SQLPROD01", "sqlserver", simulator_connection("SQLPROD01", origin))
    port = free_port()
    mssql = _add(
        store,
        vault,
        "SQLDOWN",
        "sqlserver",
        f"DRIVER={{FreeTDS}};SERVER=127.0.0.1;PORT={port};UID=tw;PWD=Hunter2Secret;TDS_Version=7.4",
    )
    db2 = _add(
        store,
        vault,
        "DB2DOWN",
        "db2",
        f"DATABASE=SAMPLE;HOSTNAME=127.0.0.1;PORT={port};PROTOCOL=TCPIP;UID=db2inst1;PWD=Hunter2Secret",
    )
    envpw = _add(
        store, vault, "NOPWD", "sqlserver", "DRIVER={FreeTDS};SERVER=127.0.0.1", password_env="TW_UNSET_PW"
    )
    outcomes = {tid: poll_target(store, vault, settings, tid, now=now) for tid in (mssql, db2, envpw, sim)}
    assert outcomes[sim].ok and outcomes[sim].result is not None and outcomes[sim].result.samples > 0
    for tid in (mssql, db2, envpw):
        assert not outcomes[tid].ok
        assert "Hunter2Secret" not in (outcomes[tid].error or "")
    assert "TW_UNSET_PW" in (outcomes[envpw].error or "")
    with store.session() as s:
        down = s.get(Target, mssql)
        assert down is not None
        assert down.consecutive_failures == 1 and down.last_error and "Hunter2Secret" not in down.last_error
        assert down.next_attempt_at == now + timedelta(seconds=60)
        ok = s.get(Target, sim)
        assert ok is not None and ok.last_success_at == now and ok.last_error is None
    # backing off: the next scheduled poll inside the window is skipped, a forced one is not
    skipped = poll_target(store, vault, settings, mssql, now=now + timedelta(seconds=30))
    assert skipped.skipped
    again = poll_target(store, vault, settings, mssql, now=now + timedelta(seconds=30), force=True)
    assert not again.ok and not again.skipped
    with store.session() as s:
        down = s.get(Target, mssql)
        assert down is not None and down.consecutive_failures == 2
        assert down.next_attempt_at == now + timedelta(seconds=30 + 120)


def test_backoff_doubles_and_is_capped() -> None:
    assert [backoff_delay(n, 300, 3600).total_seconds() for n in (1, 2, 3, 4, 5)] == [
        300,
        600,
        1200,
        2400,
        3600,
    ]


def test_scheduler_polls_every_target_despite_a_dead_one(
    store: Store, vault: Vault, settings: Settings
) -> None:
    now = datetime.now(UTC)
    sim = _add(
        store,
        vault,
        "demo:DB2PROD01",
        "db2",
        simulator_connection("DB2PROD01", now - timedelta(hours=1)),
        interval=10,
    )
    dead = _add(
        store,
        vault,
        "SQLDOWN",
        "sqlserver",
        f"DRIVER={{FreeTDS}};SERVER=127.0.0.1;PORT={free_port()};UID=tw;PWD=x",
        interval=10,
    )
    scheduler = Scheduler(Runtime(store=store, vault=vault, settings=settings))
    assert scheduler.start()
    try:
        assert SchedulerLock(store).acquire() is False  # a second scheduler is refused
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with store.session() as s:
                a, b = s.get(Target, sim), s.get(Target, dead)
                if a and b and a.last_success_at and b.last_error_at:
                    break
            time.sleep(0.2)
        with store.session() as s:
            a, b = s.get(Target, sim), s.get(Target, dead)
            assert a is not None and a.last_success_at is not None
            assert b is not None and b.last_error and b.consecutive_failures >= 1
            assert s.scalar(select(Sample.id).limit(1)) is not None
    finally:
        scheduler.shutdown()
    lock = SchedulerLock(store)
    assert lock.acquire() is True  # released on shutdown
    lock.release()


def test_a_store_error_is_raised_for_retry_and_never_blamed_on_the_target(
    store: Store, store_url: str, vault: Vault
) -> None:
    """A store that cannot take the samples is our problem, not the target's: the poll raises (the
    scheduler's job wrapper retries it) and the target is neither marked failing nor backed off.
    The store error is real: the sample table is renamed away while the target table stays
    writable, as a store locked for the ingest and free again a moment later would be."""
    from sqlalchemy import text

    from app.store.db import store_fault

    origin = datetime.now(UTC) - timedelta(hours=1)
    tid = _add(store, vault, "sim1", "sqlserver", simulator_connection("SQLPROD01", origin))
    settings = Settings(database_url=store_url)
    with store.session() as s:
        s.execute(text("ALTER TABLE sample RENAME TO sample_away"))
    try:
        with pytest.raises(Exception) as raised:
            poll_target(store, vault, settings, tid)
        assert store_fault(raised.value) is not None, raised.value
    finally:
        with store.session() as s:
            s.execute(text("ALTER TABLE sample_away RENAME TO sample"))
    with store.session() as s:
        t = s.get(Target, tid)
        assert t is not None
        assert (t.consecutive_failures, t.last_error, t.next_attempt_at) == (0, None, None)
    assert poll_target(store, vault, settings, tid).ok
