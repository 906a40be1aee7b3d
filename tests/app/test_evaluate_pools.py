"""Evaluation per storage pool, incremental: the same advice as the whole-fleet run, one pool's
run never touches another pool's recommendations, only changed pools are due, a failing pool is
recorded without holding up the others, and a pool is leased to one evaluator at a time."""

from __future__ import annotations

import copy
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import yaml
from cryptography.fernet import Fernet
from sqlalchemy import select

from app.demo import ensure_demo_fleet
from app.evaluate import PoolRun, advise_pool_in_store, evaluate, windows_from_store
from app.secrets import Vault
from app.settings import Settings
from app.store.db import Store
from app.store.models import AdviceSnapshot, PoolWatermark, Recommendation, Target
from app.store.watermarks import (
    LeaseLost,
    claim_pool,
    finish_pool,
    mark_ingested,
    pool_health,
    pool_targets,
    request_changed_pools,
)
from app.workers import run_due_pools
from policies.loader import DEFAULT_POLICY, parse_policy
from policies.model import Policy

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
LIVE = ("open", "deferred")


def two_pools(flash_gb: float | None = None, default_flash_gb: float | None = None) -> Policy:
    """SQLPROD01 on the top-level tiers, DB2PROD01 on an array of its own (same locations)."""
    return parse_policy(two_pools_yaml(flash_gb, default_flash_gb), source="db2 on its own array")


def two_pools_yaml(flash_gb: float | None = None, default_flash_gb: float | None = None) -> str:
    data: dict[str, Any] = yaml.safe_load(DEFAULT_POLICY.read_text(encoding="utf-8"))
    tiers = copy.deepcopy(data["tiers"])
    if flash_gb is not None:
        tiers[0]["capacity_gb"] = flash_gb
    if default_flash_gb is not None:
        data["tiers"][0]["capacity_gb"] = default_flash_gb
    data["pools"] = [{"name": "db2-array", "servers": "DB2PROD*", "tiers": tiers}]
    return str(yaml.safe_dump(data))


def _fleet(store: Store, settings: Settings) -> None:
    ensure_demo_fleet(store, Vault(Fernet.generate_key()), settings.model_copy(update={"demo_history_hours": 6}),
                      now=NOW)  # fmt: skip


def _run(
    store: Store, policy: Policy | Callable[[], Policy], at: datetime = NOW, owner: str = "t"
) -> list[Any]:
    read = policy if callable(policy) else (lambda: policy)
    with store.session() as s:
        request_changed_pools(s, read(), at)
    return run_due_pools(store, read, owner=owner, clock=lambda: at, lease_s=60)


def _recs(store: Store) -> dict[tuple[int, str], tuple[str, str, datetime]]:
    with store.session() as s:
        return {
            (r.target_id, r.key): (r.status, r.to_tier, r.updated_at)
            for r in s.scalars(select(Recommendation).where(Recommendation.status.in_(LIVE)))
        }


def _snapshot_advice(store: Store) -> dict[tuple[int, str], str]:
    with store.session() as s:
        return {
            (snap.target_id, o["key"]): o["recommended_tier"]
            for snap in s.scalars(select(AdviceSnapshot))
            for o in snap.objects
        }


def test_pool_by_pool_advice_equals_the_whole_fleet_run(store: Store, settings: Settings) -> None:
    _fleet(store, settings)
    policy = two_pools(flash_gb=40)
    runs = _run(store, policy)
    assert sorted(r.pool for r in runs) == ["db2-array", "default"]
    assert all(r.error is None and r.objects > 0 for r in runs)
    by_pool = _recs(store)
    per_pool_snapshots = _snapshot_advice(store)
    assert by_pool and {t for t, _ in by_pool} == {t for t, _ in per_pool_snapshots}
    # the whole-fleet run at the same instant finds nothing to create, supersede or withdraw
    whole = evaluate(store, policy, now=NOW)
    assert (whole.sync.created, whole.sync.superseded, whole.sync.withdrawn) == (0, 0, 0)
    assert whole.sync.updated == len(by_pool)
    assert {k: v[:2] for k, v in _recs(store).items()} == {k: v[:2] for k, v in by_pool.items()}
    assert _snapshot_advice(store) == per_pool_snapshots


def test_a_pool_run_says_where_its_time_went(
    store: Store, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    """Each pool's run splits its seconds into reading, advising and storing (the log line and the
    bench's stage figures): each part measured, and together the whole (the stages follow one
    another, with nothing timed twice or left out)."""
    _fleet(store, settings)
    with caplog.at_level("INFO", logger="tierwise.evaluate"):
        runs = _run(store, two_pools(flash_gb=40))
    assert runs and all(r.error is None for r in runs)
    for r in runs:
        parts = (r.read_s, r.advise_s, r.store_s)
        assert all(p > 0 for p in parts), parts
        assert sum(parts) == pytest.approx(r.seconds, abs=1e-9)
        line = next(m for m in caplog.messages if m.startswith(f"pool {r.pool} evaluated:"))
        assert f"read {r.read_s:.1f} s, advise {r.advise_s:.1f} s, store {r.store_s:.1f} s" in line
    failed = PoolRun("gone", error="boom")
    assert (failed.read_s, failed.advise_s, failed.store_s) == (0.0, 0.0, 0.0)


def test_the_pools_read_is_its_share_of_the_whole_read(store: Store, settings: Settings) -> None:
    _fleet(store, settings)
    policy = two_pools()
    with store.session() as s:
        members = pool_targets(s, policy)
        whole, owners = windows_from_store(s, policy, now=NOW)
        assert set(members) == {"default", "db2-array"}
        for tids in members.values():
            part, part_owners = windows_from_store(s, policy, now=NOW, targets=tids)
            mine = {
                (w.info.server, w.info.key): w
                for w in whole
                if owners[(w.info.engine, w.info.server)] in tids
            }
            assert part and {(w.info.server, w.info.key): w for w in part} == mine
            assert set(part_owners.values()) == set(tids)


def test_one_pools_run_never_touches_another_pools_recommendations(store: Store, settings: Settings) -> None:
    _fleet(store, settings)
    evaluate(store, two_pools(flash_gb=40), now=NOW)
    before = _recs(store)
    with store.session() as s:
        db2 = s.scalar(select(Target.id).where(Target.name.like("%DB2%")))
        sql = s.scalar(select(Target.id).where(Target.name.like("%SQL%")))
    assert db2 is not None and sql is not None
    assert any(t == db2 for t, _ in before) and any(t == sql for t, _ in before)
    # the default pool re-evaluated with no flash at all: its moves change, DB2's stay as they were
    later = NOW + timedelta(minutes=30)
    policy = two_pools(flash_gb=40, default_flash_gb=1)
    with store.session() as s:
        sql_targets = pool_targets(s, policy)["default"]
    run = advise_pool_in_store(store, policy, "default", sql_targets, now=later)
    assert run.error is None
    after = _recs(store)
    assert {k: v for k, v in after.items() if k[0] == db2} == {k: v for k, v in before.items() if k[0] == db2}
    sql_before = {k: v[1] for k, v in before.items() if k[0] == sql}
    sql_after = {k: v[1] for k, v in after.items() if k[0] == sql}
    assert sql_after != sql_before
    with store.session() as s:
        snaps = {x.target_id: x for x in s.scalars(select(AdviceSnapshot))}
    assert snaps[db2].evaluated_at == NOW and snaps[sql].evaluated_at == later


def test_only_changed_pools_are_due_and_a_policy_change_makes_all_due(
    store: Store, settings: Settings
) -> None:
    _fleet(store, settings)
    policy = two_pools()
    evaluate(store, policy, now=NOW)  # the whole fleet: every pool advised
    with store.session() as s:
        assert request_changed_pools(s, policy, NOW) == []
        db2 = s.scalar(select(Target.id).where(Target.name.like("%DB2%")))
        assert db2 is not None
        mark_ingested(s, [db2])  # a poll of DB2PROD01
    with store.session() as s:
        assert request_changed_pools(s, policy, NOW) == ["db2-array"]
    runs = run_due_pools(store, lambda: policy, owner="t", clock=lambda: NOW, lease_s=60)
    assert [r.pool for r in runs] == ["db2-array"]
    with store.session() as s:
        assert request_changed_pools(s, policy, NOW) == []
        assert sorted(request_changed_pools(s, two_pools(flash_gb=77), NOW)) == ["db2-array", "default"]


def test_a_failing_pool_is_recorded_and_the_others_go_on(store: Store, settings: Settings) -> None:
    _fleet(store, settings)
    policy = two_pools()
    calls = []

    def flaky() -> Policy:
        calls.append(1)
        if len(calls) == 2:  # the first pool's evaluation reads it once, the request once before
            raise RuntimeError("policy store hiccup")
        return policy

    runs = _run(store, flaky)
    assert len(runs) == 2 and sum(r.error is not None for r in runs) == 1
    failed = next(r for r in runs if r.error is not None)
    assert "policy store hiccup" in (failed.error or "")
    with store.session() as s:
        rows = {r.pool: r for r in pool_health(s)}
        assert rows[failed.pool].error and rows[failed.pool].failures == 1
        assert rows[failed.pool].requested > rows[failed.pool].done
        retry_at = rows[failed.pool].retry_at
        assert retry_at is not None and retry_at > NOW
        assert rows[failed.pool].lease_owner is None
        ok = next(r for r in runs if r.error is None).pool
        assert rows[ok].done == rows[ok].requested and rows[ok].error is None
    # not retried before its pause is over, then retried and cleared
    assert run_due_pools(store, lambda: policy, owner="t", clock=lambda: NOW, lease_s=60) == []
    later = NOW + timedelta(minutes=2)
    again = run_due_pools(store, lambda: policy, owner="t", clock=lambda: later, lease_s=60)
    assert [(r.pool, r.error) for r in again] == [(failed.pool, None)]


def test_a_pool_is_leased_to_one_evaluator_and_an_expired_lease_is_taken_over(
    store: Store, settings: Settings
) -> None:
    _fleet(store, settings)
    policy = two_pools()
    with store.session() as s:
        assert len(request_changed_pools(s, policy, NOW)) == 2
    with store.session() as s:
        a = claim_pool(s, "worker-a", NOW, 60)
    with store.session() as s:
        b = claim_pool(s, "worker-b", NOW, 60)
    with store.session() as s:
        assert claim_pool(s, "worker-c", NOW, 60) is None  # both leased
    assert a is not None and b is not None and a.pool != b.pool
    # worker-a stalls past its lease: worker-c takes the pool over, and worker-a's result is dropped
    late = NOW + timedelta(seconds=61)
    with store.session() as s:
        c = claim_pool(s, "worker-c", late, 60)
    assert c is not None and c.pool in (a.pool, b.pool)
    stalled = a if c.pool == a.pool else b
    with pytest.raises(LeaseLost), store.session() as s:
        finish_pool(s, stalled, policy, {}, late)
    run = advise_pool_in_store(store, policy, c.pool, c.targets, now=late,
                               before_store=lambda s, seen: finish_pool(s, c, policy, seen, late))  # fmt: skip
    assert run.error is None
    with store.session() as s:
        row = s.get(PoolWatermark, c.pool)
        assert row is not None and row.done == row.requested and row.lease_owner is None


@pytest.mark.postgres
def test_skip_locked_hands_concurrent_claims_different_pools(postgres_url: str) -> None:
    store = Store(postgres_url)
    try:
        _fleet(store, Settings(database_url=postgres_url))
        with store.session() as s:
            request_changed_pools(s, two_pools(), NOW)
        with store.session() as first:  # its claim's row stays locked until it commits
            a = claim_pool(first, "worker-a", NOW, 60)
            with store.session() as second:
                b = claim_pool(second, "worker-b", NOW, 60)
            assert a is not None and b is not None and a.pool != b.pool
    finally:
        store.dispose()


def _staging_split() -> Policy:
    """SQLPROD01's Staging database on an array of its own (by path): one target in two pools."""
    data: dict[str, Any] = yaml.safe_load(DEFAULT_POLICY.read_text(encoding="utf-8"))
    fc_directory = next(t for t in data["tiers"] if t["name"] == "fc")["locations"]["sqlserver_directory"]
    data["pools"] = [
        {
            "name": "staging-array",
            "servers": "SQLPROD01",
            "sqlserver_path_prefixes": [f"{fc_directory}Staging\\"],  # where the demo's Staging database is
            "tiers": copy.deepcopy(data["tiers"]),
        }
    ]
    return parse_policy(yaml.safe_dump(data), source="staging on its own array")


def test_a_server_split_across_pools_keeps_the_other_pools_advice(store: Store, settings: Settings) -> None:
    _fleet(store, settings)
    policy = _staging_split()
    evaluate(store, policy, now=NOW)
    with store.session() as s:
        members = pool_targets(s, policy)
        sql = s.scalar(select(Target.id).where(Target.name.like("%SQL%")))
    assert sql is not None and sql in members["staging-array"] and sql in members["default"]
    before = _recs(store)
    with store.session() as s:
        snap = s.get(AdviceSnapshot, sql)
        assert snap is not None
        pools_before = {o["key"]: o["pool"] for o in snap.objects}
    assert set(pools_before.values()) == {"default", "staging-array"}
    default_recs = {k: v for k, v in before.items() if k[0] == sql and pools_before.get(k[1]) == "default"}
    assert default_recs
    later = NOW + timedelta(minutes=30)
    run = advise_pool_in_store(store, policy, "staging-array", members["staging-array"], now=later)
    assert run.error is None and run.objects > 0
    after = _recs(store)
    assert {k: after.get(k) for k in default_recs} == default_recs  # not withdrawn, not even updated
    with store.session() as s:
        snap = s.get(AdviceSnapshot, sql)
        assert snap is not None
        assert {o["key"]: o["pool"] for o in snap.objects} == pools_before  # both pools' objects kept
        assert {c["pool"] for c in snap.flash_curve} <= {"default", "staging-array"}
        assert snap.evaluated_at == later


def _conflicting() -> Policy:
    """Two pools that both take SQLPROD01: its objects cannot be placed until the policy says which."""
    data: dict[str, Any] = yaml.safe_load(DEFAULT_POLICY.read_text(encoding="utf-8"))
    data["pools"] = [
        {"name": "array-a", "servers": "SQLPROD*", "tiers": copy.deepcopy(data["tiers"])},
        {"name": "array-b", "servers": "SQL*01", "tiers": copy.deepcopy(data["tiers"])},
    ]
    return parse_policy(yaml.safe_dump(data), source="two pools take SQLPROD01")


def test_objects_two_pools_take_are_listed_and_the_rest_advised(store: Store, settings: Settings) -> None:
    _fleet(store, settings)
    # pool by pool: the conflicted server's objects are in no pool's run, and no run fails
    runs = _run(store, _conflicting())
    assert runs and all(r.error is None for r in runs)
    # the whole-fleet run lists them per target, naming both pools, and advises the rest
    result = evaluate(store, _conflicting(), now=NOW + timedelta(hours=1))
    listed = [u for rows in result.unknown_detail.values() for u in rows]
    conflicts = [u for u in listed if u.get("pools")]
    assert conflicts and {u["server"] for u in conflicts} == {"SQLPROD01"}
    assert all(u["pools"] == ["array-a", "array-b"] for u in conflicts)
    with store.session() as s:
        live = s.scalars(select(Recommendation).where(Recommendation.status.in_(LIVE))).all()
        assert live, "the other servers are still advised"
        assert "SQLPROD01" not in {r.evidence.get("server") for r in live}
