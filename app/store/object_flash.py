"""The stored flash curves (how much of a pool's fastest tier each database could use) and the name
of that fastest tier. With storage pools there is one fastest tier per pool (the first of the pool's
tiers), so a page that shows several pools names each of theirs, never the top-level one alone.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.store.lookup import target_named
from app.store.models import AdviceSnapshot, Target
from policies.model import DEFAULT_POOL, Policy


def fastest_tier(policy: Policy, pool: str | None) -> str | None:
    """The first (fastest) tier of the pool an object is in (None or "": the implicit pool of the
    top-level tiers); None for a pool the policy no longer lists."""
    try:
        return policy.pool_tiers(pool or DEFAULT_POOL)[0].name
    except KeyError:
        return None


def fastest_tiers(policy: Policy, pools: Iterable[str | None]) -> list[str]:
    """The fastest tier of each of these pools, once each, in the policy's pool order; with no
    pool given, of every pool of the policy (the top-level tiers' alone without pools)."""
    wanted = {p or DEFAULT_POOL for p in pools}
    names = [fastest_tier(policy, p) for p in policy.pool_names() if not wanted or p in wanted]
    return list(dict.fromkeys(n for n in names if n is not None))


def tier_label(names: Iterable[str]) -> str:
    """How a page names the fastest tier when the objects shown span pools: "flash / nvme"."""
    return " / ".join(dict.fromkeys(names))


@dataclass(frozen=True)
class DatabaseFlash:
    target: str
    evaluated_at: datetime
    curve: dict[str, Any]  # AdviceSnapshot.flash_curve item

    def flash_tier(self, policy: Policy) -> str | None:
        """The fastest tier of the curve's pool in the policy in force (a policy saved since the
        advice ran renames it at once); the one the advice stored when the pool is gone."""
        stored = self.curve.get("flash_tier")
        return fastest_tier(policy, self.curve.get("pool")) or (str(stored) if stored else None)


def flash_curves(s: Session, target: str | None) -> list[DatabaseFlash]:
    """The stored flash curves of one target (by name, or its numeric id; NotFound: none) or of the
    whole fleet."""
    q = select(Target.name, AdviceSnapshot.evaluated_at, AdviceSnapshot.flash_curve).join(
        AdviceSnapshot, AdviceSnapshot.target_id == Target.id
    )
    if target:
        q = q.where(Target.id == target_named(s, target).id)
    rows = s.execute(q.order_by(Target.name)).all()
    return [DatabaseFlash(r.name, r.evaluated_at, c) for r in rows for c in (r.flash_curve or [])]


def curves_tier_label(policy: Policy, curves: Iterable[DatabaseFlash]) -> str:
    """The fastest tier(s) the curves count GB of; with no curve, every pool's."""
    every = fastest_tiers(policy, ())
    names = {t for t in (c.flash_tier(policy) for c in curves) if t is not None}
    return tier_label(sorted(names, key=lambda n: (every.index(n) if n in every else len(every), n)) or every)
