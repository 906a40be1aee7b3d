"""TIERWISE_POLLING=workers with no collector worker running: a changed pool must not wait for the
daily whole-fleet run. The service evaluates a due pool that no worker has taken for
TIERWISE_POOL_TAKEOVER_MINUTES (app/jobs.py `pool-takeover`), claiming it through the same lease as
a worker, so a pool a live worker holds is never taken and a stalled worker's is taken over."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from sqlalchemy import select, text

from app import jobs
from app.demo import ensure_demo_fleet
from app.secrets import Vault
from app.settings import Settings
from app.store.db import Store
from app.store.models import PoolWatermark, Target
from app.store.watermarks import LeaseLost, claim_pool, finish_pool, mark_ingested
from app.workers import store_clock
from tests.app.test_evaluate_pools import two_pools, two_pools_yaml

pytestmark = pytest.mark.postgres

TAKEOVER_MIN = 15


@dataclass
class Fleet:
    store: Store
    rt: jobs.Runtime


@pytest.fixture
def fleet(postgres_url: str, tmp_path: Path) -> Iterator[Fleet]:
    """The demo fleet in two pools on PostgreSQL, polled by workers (none runs), advised once as a
    whole; then the DB2 target gets new data and the hourly job makes only its pool due."""
    key = Fernet.generate_key()
    policy_file = tmp_path / "pools.yaml"
    policy_file.write_text(two_pools_yaml(), encoding="utf-8")
    settings = Settings(
        database_url=postgres_url,
        secret_key=key.decode(),
        secret_key_file=tmp_path / "k",
        polling="workers",
        policy_file=policy_file,
        demo_history_hours=6,
        pool_takeover_minutes=TAKEOVER_MIN,
    )
    store = Store(postgres_url)
    try:
        ensure_demo_fleet(store, Vault(key), settings, now=datetime.now(UTC))
        rt = jobs.Runtime(store, Vault(key), settings)
        jobs._evaluate(rt)  # a process's first run: the whole fleet
        with store.session() as s:
            db2 = s.scalar(select(Target.id).where(Target.name.like("%DB2%")))
            assert db2 is not None
            mark_ingested(s, [db2])
        jobs._evaluate(rt)  # incremental: the changed pool is left to the workers
        assert _row(store).requested > _row(store).done
        yield Fleet(store, rt)
    finally:
        store.dispose()


def _row(store: Store, pool: str = "db2-array") -> PoolWatermark:
    with store.session() as s:
        row = s.get(PoolWatermark, pool)
        assert row is not None
        s.expunge(row)
        return row


def _due_for(store: Store, minutes: int) -> None:
    """Time passes: the pool has been due (and untaken) for `minutes`, on the store's clock."""
    with store.session() as s:
        s.execute(
            text(
                "UPDATE pool_watermark SET requested_at = (now() AT TIME ZONE 'UTC') "
                "- make_interval(mins => :m) WHERE requested > done"
            ),
            {"m": minutes},
        )


def test_a_pool_no_worker_takes_is_evaluated_by_the_service_after_the_bound(fleet: Fleet) -> None:
    before = _row(fleet.store)
    other = _row(fleet.store, "default")
    jobs._take_over_pools(fleet.rt)  # just changed: the workers' turn still
    assert _row(fleet.store).done == before.done < before.requested
    assert fleet.rt.monitor.get("evaluate:db2-array") is None

    _due_for(fleet.store, TAKEOVER_MIN - 1)
    jobs._take_over_pools(fleet.rt)
    assert _row(fleet.store).done < before.requested

    _due_for(fleet.store, TAKEOVER_MIN + 1)  # no worker took it within the bound
    jobs._take_over_pools(fleet.rt)
    after = _row(fleet.store)
    assert after.done == after.requested == before.requested and after.lease_owner is None
    assert after.advised_at is not None and after.advised_at != before.advised_at
    assert after.error is None
    health = fleet.rt.monitor.get("evaluate:db2-array")
    assert health is not None and health.successes == 1
    untouched = _row(fleet.store, "default")  # not due: left alone
    assert (untouched.done, untouched.advised_at) == (other.done, other.advised_at)

    jobs._take_over_pools(fleet.rt)  # nothing due any more
    assert health.successes == 1


def test_a_pool_a_live_worker_holds_is_never_taken(fleet: Fleet) -> None:
    now = store_clock(fleet.store).now()
    with fleet.store.session() as s:
        held = claim_pool(s, "worker-a", now, 120)  # a worker's lease, on the store's clock
    assert held is not None and held.pool == "db2-array"
    _due_for(fleet.store, TAKEOVER_MIN + 60)
    jobs._take_over_pools(fleet.rt)
    row = _row(fleet.store)
    assert row.lease_owner == "worker-a" and row.done < row.requested
    assert fleet.rt.monitor.get("evaluate:db2-array") is None

    with fleet.store.session() as s:  # the worker stalls: its lease runs out
        s.execute(
            text("UPDATE pool_watermark SET lease_until = (now() AT TIME ZONE 'UTC') - interval '1 second'")
        )
    jobs._take_over_pools(fleet.rt)
    row = _row(fleet.store)
    assert row.done == row.requested and row.lease_owner is None
    with pytest.raises(LeaseLost), fleet.store.session() as s:  # the stalled worker's result is dropped
        finish_pool(s, held, two_pools(), {}, now)


def test_the_takeover_job_runs_only_when_workers_evaluate(fleet: Fleet, tmp_path: Path) -> None:
    scheduler = jobs.Scheduler(fleet.rt)
    assert scheduler.start()
    try:
        assert scheduler.scheduler is not None
        assert scheduler.scheduler.get_job(jobs.POOL_TAKEOVER) is not None
    finally:
        scheduler.shutdown()
    polling_here = fleet.rt.settings.model_copy(update={"polling": "scheduler"})
    scheduler = jobs.Scheduler(jobs.Runtime(fleet.store, fleet.rt.vault, polling_here))
    assert scheduler.start()
    try:
        assert scheduler.scheduler is not None
        assert scheduler.scheduler.get_job(jobs.POOL_TAKEOVER) is None  # the stored job is dropped
    finally:
        scheduler.shutdown()
