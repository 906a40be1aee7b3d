"""The hourly advice job: the whole fleet at a process's first run, then only the pools that
changed, evaluated here (SQLite, or the scheduler polls) or left to the collector workers, which
evaluate a due pool when no target is due (PostgreSQL)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
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
from app.store.watermarks import mark_ingested, pool_health, request_changed_pools
from app.workers import Worker
from tests.app.test_evaluate_pools import two_pools, two_pools_yaml


def _policy_file(tmp_path: Path) -> Path:
    path = tmp_path / "pools.yaml"
    path.write_text(two_pools_yaml(), encoding="utf-8")
    return path


def _pools(store: Store) -> dict[str, tuple[int, int, datetime | None]]:
    with store.session() as s:
        return {r.pool: (r.requested, r.done, r.advised_at) for r in pool_health(s)}


def _db2(store: Store) -> int:
    with store.session() as s:
        tid = s.scalar(select(Target.id).where(Target.name.like("%DB2%")))
    assert tid is not None
    return tid


def test_hourly_job_evaluates_only_the_changed_pool(store: Store, settings: Settings, tmp_path: Path) -> None:
    settings = settings.model_copy(update={"policy_file": _policy_file(tmp_path), "demo_history_hours": 6})
    ensure_demo_fleet(store, Vault(Fernet.generate_key()), settings, now=datetime.now(UTC))
    rt = jobs.Runtime(store, Vault(Fernet.generate_key()), settings)
    jobs._evaluate(rt)  # the first run: the whole fleet, every pool advised
    first = _pools(store)
    assert set(first) == {"default", "db2-array"}
    assert all(done == requested for requested, done, _ in first.values())
    jobs._evaluate(rt)  # nothing changed: no pool evaluated
    assert _pools(store) == first
    with store.session() as s:
        mark_ingested(s, [_db2(store)])
    jobs._evaluate(rt)
    after = _pools(store)
    assert after["default"] == first["default"]
    assert after["db2-array"][1] == after["db2-array"][0] and after["db2-array"][2] != first["db2-array"][2]
    assert rt.monitor.get("evaluate:db2-array") is not None and rt.monitor.get("evaluate:default") is None


@pytest.mark.postgres
def test_workers_evaluate_the_due_pools_the_job_leaves_them(postgres_url: str, tmp_path: Path) -> None:
    key = Fernet.generate_key()
    settings = Settings(
        database_url=postgres_url,
        secret_key=key.decode(),
        secret_key_file=tmp_path / "k",
        polling="workers",
        policy_file=_policy_file(tmp_path),
        demo_history_hours=6,
    )
    store = Store(postgres_url)
    try:
        ensure_demo_fleet(store, Vault(key), settings, now=datetime.now(UTC))
        with store.session() as s:  # no poll due: the worker's cycles go to the pools
            s.execute(text("UPDATE target SET next_attempt_at = now() + interval '1 day'"))
        rt = jobs.Runtime(store, Vault(key), settings)
        jobs._evaluate(rt)  # whole fleet first
        with store.session() as s:
            mark_ingested(s, [_db2(store)])
        jobs._evaluate(rt)  # the first run was the whole fleet: incremental from here
        assert {p: r > d for p, (r, d, _) in _pools(store).items()} == {"default": False, "db2-array": True}
        worker = Worker(store, Vault(key), settings, batch=2, lease_s=60)
        stats = worker.run_once()
        assert (stats.claimed, stats.pools, stats.pool_failures) == (0, 1, 0)
        assert worker.run_once().pools == 0  # nothing due any more
        with store.session() as s:
            row = s.get(PoolWatermark, "db2-array")
            assert row is not None and row.done == row.requested and row.lease_owner is None
            assert row.advised_at is not None and row.advised_at > datetime.now(UTC) - timedelta(minutes=5)
            assert request_changed_pools(s, two_pools(), datetime.now(UTC)) == []
    finally:
        store.dispose()
