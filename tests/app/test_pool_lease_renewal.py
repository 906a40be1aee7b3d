"""A pool whose evaluation takes longer than its lease keeps the lease: it is renewed while the
evaluation runs (app/workers.LeaseHeartbeat), so a second worker never picks the pool up and the
slow result is stored, not dropped as LeaseLost."""

from __future__ import annotations

import time
from datetime import datetime, timedelta

from sqlalchemy import select

from app.evaluate import evaluate
from app.settings import Settings
from app.store.db import Store
from app.store.models import PoolWatermark, Target
from app.store.watermarks import PoolClaim, claim_pool, mark_ingested, renew_pool, request_changed_pools
from app.workers import run_due_pools
from policies.model import Policy
from tests.app.test_evaluate_pools import NOW, _fleet, two_pools

LEASE_S = 60


def _only_db2_due(store: Store, policy: Policy) -> None:
    evaluate(store, policy, now=NOW)  # the whole fleet: every pool advised
    with store.session() as s:
        db2 = s.scalar(select(Target.id).where(Target.name.like("%DB2%")))
        assert db2 is not None
        mark_ingested(s, [db2])
    with store.session() as s:
        assert request_changed_pools(s, policy, NOW) == ["db2-array"]


def test_a_slow_evaluation_keeps_its_lease(store: Store, settings: Settings) -> None:
    _fleet(store, settings)
    policy = two_pools()
    _only_db2_due(store, policy)
    clock = [NOW]  # the evaluators' clock, moved by the test
    seen: dict[str, object] = {}

    def slow_policy() -> Policy:
        """The evaluation's first step, and a slow one: 2.5 leases pass on the clock. A second
        worker then looks for work at the time the first lease would have run out."""
        clock[0] = NOW + timedelta(seconds=2.5 * LEASE_S)
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:  # the heartbeat beats every 20 ms (real time)
            with store.session() as s:
                row = s.get(PoolWatermark, "db2-array")
                assert row is not None
                until = row.lease_until
            if until is not None and until > clock[0]:
                break
            time.sleep(0.02)
        seen["lease_until"] = until
        with store.session() as s:
            seen["second_worker"] = claim_pool(s, "worker-b", clock[0], LEASE_S)
        return policy

    runs = run_due_pools(store, slow_policy, owner="worker-a", clock=lambda: clock[0], lease_s=LEASE_S,
                         renew_every_s=0.02)  # fmt: skip
    assert seen["second_worker"] is None  # nothing to take: the slow pool's lease was renewed
    until = seen["lease_until"]
    assert isinstance(until, datetime) and until > NOW + timedelta(seconds=2.5 * LEASE_S)
    assert [(r.pool, r.error) for r in runs] == [("db2-array", None)]  # stored, not LeaseLost
    with store.session() as s:
        row = s.get(PoolWatermark, "db2-array")
        assert row is not None and row.done == row.requested and row.lease_owner is None
        assert row.advised_at == clock[0]


def test_a_lease_taken_over_is_not_renewed(store: Store, settings: Settings) -> None:
    _fleet(store, settings)
    policy = two_pools()
    _only_db2_due(store, policy)
    with store.session() as s:
        a = claim_pool(s, "worker-a", NOW, LEASE_S)
    assert a is not None
    late = NOW + timedelta(seconds=LEASE_S + 1)  # worker-a really stalled: worker-b takes over
    with store.session() as s:
        b = claim_pool(s, "worker-b", late, LEASE_S)
    assert isinstance(b, PoolClaim) and b.pool == a.pool
    with store.session() as s:
        assert renew_pool(s, a, late, LEASE_S) is False
    with store.session() as s:
        row = s.get(PoolWatermark, a.pool)
        assert row is not None and row.lease_owner == "worker-b"
        assert row.lease_until == late + timedelta(seconds=LEASE_S)
