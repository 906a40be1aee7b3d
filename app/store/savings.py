"""What the open and approved recommendations are predicted to save, summed for the heat map.

With storage pools, "flash" is each pool's fastest tier: a move counts towards the flash capacity
when it goes onto the first tier of its own pool (the pool the advice put in its evidence)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import case, func, select
from sqlalchemy.orm import Session

from advisors.features import GB
from app.store.models import Recommendation
from app.store.object_flash import fastest_tier, fastest_tiers, tier_label
from app.store.recommendations import Status
from policies.model import Policy

# The recommendations whose effect is still ahead: not yet run, not turned down.
SAVING = (Status.OPEN, Status.APPROVED)


@dataclass(frozen=True)
class Savings:
    recommendations: int
    io_ms_per_s_now: float
    io_ms_per_s_after: float
    saved_ms_per_s: float  # where the move is predicted to reduce I/O wait
    added_ms_per_s: float  # where it adds wait (moves to slower tiers, to free fast capacity)
    flash_tier: str  # the fastest tier, or the pools' fastest tiers ("flash / nvme")
    flash_gb: float  # capacity the moves onto their pool's fastest tier would use
    flash_tiers: tuple[str, ...] = ()  # the pools' fastest tiers, once each, in the policy's order

    @property
    def net_ms_per_s(self) -> float:
        return self.io_ms_per_s_now - self.io_ms_per_s_after


def predicted_savings(session: Session, target_id: int | None, policy: Policy) -> Savings:
    """The I/O wait the open and approved moves of a target (every target: None) are predicted to
    save and add, and the capacity they would take on their pools' fastest tiers (a pool the
    policy no longer lists has none: its moves count in the wait only)."""
    pool = Recommendation.evidence["pool"].as_string()
    now_ms = func.coalesce(Recommendation.io_ms_per_s_now, 0.0)
    after_ms = func.coalesce(Recommendation.io_ms_per_s_after, 0.0)
    q = select(
        Recommendation.to_tier,
        pool.label("pool"),
        func.count().label("n"),
        func.sum(now_ms).label("now"),
        func.sum(after_ms).label("after"),
        func.sum(case((now_ms > after_ms, now_ms - after_ms), else_=0.0)).label("gain"),
        func.sum(case((after_ms > now_ms, after_ms - now_ms), else_=0.0)).label("loss"),
        func.sum(Recommendation.size_bytes).label("size"),
    ).where(Recommendation.status.in_(SAVING))
    if target_id is not None:
        q = q.where(Recommendation.target_id == target_id)
    n, total_now, total_after, gain, loss, flash_bytes = 0, 0.0, 0.0, 0.0, 0.0, 0
    pools: set[str | None] = set()
    for row in session.execute(q.group_by(Recommendation.to_tier, pool)):
        n += int(row.n)
        total_now += float(row.now or 0.0)
        total_after += float(row.after or 0.0)
        gain += float(row.gain or 0.0)
        loss += float(row.loss or 0.0)
        pools.add(row.pool)
        if row.to_tier == fastest_tier(policy, row.pool):
            flash_bytes += int(row.size or 0)
    names = fastest_tiers(policy, pools) or fastest_tiers(
        policy, ()
    )  # no move (or no pool left): every pool's
    return Savings(n, total_now, total_after, gain, loss, tier_label(names), flash_bytes / GB, tuple(names))
