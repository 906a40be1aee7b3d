"""The fleet page's "Start here" block: what the open moves save, how full flash is, what the
moves to cheaper tiers free, which targets fail, which locations match no tier (their data is not
advised) and which executed moves made things worse; with
storage pools, per pool: its tiers used and free, its open moves' saving and its top moves.

Read from the stored advice (the recommendations and each target's AdviceSnapshot) with the same
arithmetic the report uses (`saving_ms_per_s`, `freed`); plain data out, no formula of its own
beyond adding up and weighting by reads.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.store.models import AdviceSnapshot, Recommendation, Target, Verification
from app.store.recommendations import Status, freed, saving_ms_per_s
from app.store.suppressions import active_for
from app.store.targets import statuses
from app.store.unmapped import UnmappedLocation, unknown_locations
from policies.model import DEFAULT_POOL, Policy

GB = 1024**3


@dataclass(frozen=True, slots=True)
class Unit:
    """One placement unit of the last advice run, reduced to what the block adds up."""

    key: str
    size_gb: float
    tier: str | None  # where it is today (None: its location matches no tier)
    io_ms_per_s: float  # I/O wait today
    read_iops: float
    read_ms: float | None  # measured average read latency
    read_ms_on: dict[str, float]  # the advice's predicted read latency on each tier
    pool: str = DEFAULT_POOL  # the storage pool whose tiers it is on


@dataclass(frozen=True)
class TierUse:
    tier: str
    capacity_gb: float
    used_gb: float  # placement units on it today
    after_gb: float  # once the open and approved moves are made

    @property
    def free_gb(self) -> float:
        return self.capacity_gb - self.used_gb

    @property
    def used_share(self) -> float:
        return self.used_gb / self.capacity_gb if self.capacity_gb else 0.0


@dataclass(frozen=True)
class Freed:
    """Capacity of a dearer tier the open moves to cheaper tiers give back."""

    tier: str
    gb: float
    cost: float
    moves: int


@dataclass(frozen=True)
class Failing:
    id: int
    name: str
    error: str


@dataclass(frozen=True)
class Regression:
    id: int
    name: str
    target: str
    recommendation_id: int | None
    changed_at: datetime
    reason: str


@dataclass(frozen=True)
class TopMove:
    """One of a pool's open moves that save the most."""

    id: int
    name: str
    server: str
    database: str
    from_tier: str | None
    to_tier: str
    saving_ms_per_s: float


@dataclass(frozen=True)
class PoolStart:
    """One storage pool in the block: each of its tiers used and free, what its open moves save
    and the moves that save the most. Pools share nothing, so each is read on its own."""

    name: str
    tiers: list[TierUse]
    open_moves: int
    saving_ms_per_s: float
    io_wait_ms_per_s: float
    top_moves: list[TopMove]

    @property
    def saving_share(self) -> float | None:
        return self.saving_ms_per_s / self.io_wait_ms_per_s if self.io_wait_ms_per_s > 0 else None


@dataclass(frozen=True)
class StartHere:
    open_moves: int  # open and not suppressed
    suppressed: int
    approved: int  # approved, scripts written, waiting to be run
    refused: int  # approved, but no safe script could be written
    saving_ms_per_s: float  # what the open moves save
    io_wait_ms_per_s: float  # the fleet's I/O wait today (placement units of the last advice run)
    read_ms_now: float | None  # reads-weighted average read latency today ...
    read_ms_after: float | None  # ... and once the open moves are made
    flash: TierUse | None
    freed: list[Freed] = field(default_factory=list)
    failing: list[Failing] = field(default_factory=list)
    regressions: list[Regression] = field(default_factory=list)
    evaluated_at: datetime | None = None  # the newest advice run
    pools: list[PoolStart] = field(default_factory=list)  # per pool, when the policy lists pools
    # locations no tier of their pool names, the busiest first: their objects are not advised
    unmapped: list[UnmappedLocation] = field(default_factory=list)

    @property
    def saving_share(self) -> float | None:
        """The open moves' saving as a share of today's I/O wait."""
        return self.saving_ms_per_s / self.io_wait_ms_per_s if self.io_wait_ms_per_s > 0 else None

    @property
    def read_ms_saved(self) -> float | None:
        if self.read_ms_now is None or self.read_ms_after is None:
            return None
        return self.read_ms_now - self.read_ms_after


def _unit(o: dict[str, Any]) -> Unit:
    metrics = o.get("metrics") or {}
    predicted = ((o.get("decision") or {}).get("predicted")) or []
    return Unit(
        key=str(o["key"]),
        size_gb=(o.get("size_bytes") or 0) / GB,
        tier=o.get("current_tier"),
        io_ms_per_s=float((o.get("predicted") or {}).get("io_ms_per_s_now") or 0.0),
        read_iops=float(metrics.get("read_iops") or 0.0),
        read_ms=metrics.get("avg_read_ms"),
        read_ms_on={str(p["tier"]): float(p["read_ms"]) for p in predicted if p.get("read_ms") is not None},
        pool=str(o.get("pool") or DEFAULT_POOL),
    )


def _pool_of(rec: Recommendation) -> str:
    return str((rec.evidence or {}).get("pool") or DEFAULT_POOL)


def _tier_use(name: str, capacity_gb: float, units: list[Unit], pending: list[Recommendation]) -> TierUse:
    """A tier's GB used today (its placement units) and once the pending moves are made."""
    used = sum(u.size_gb for u in units if u.tier == name)
    onto = sum((r.size_bytes or 0) / GB for r in pending if r.to_tier == name)
    off = sum((r.size_bytes or 0) / GB for r in pending if r.from_tier == name)
    return TierUse(name, capacity_gb, used, used + onto - off)


TOP_MOVES = 5


def pool_blocks(
    policy: Policy, all_units: list[Unit], open_recs: list[Recommendation], pending: list[Recommendation]
) -> list[PoolStart]:
    """Each pool of the policy that has objects or moves (the implicit `default` pool too), in
    the policy's order: its tiers' capacity used and free, its open moves' saving, its top moves."""
    out = []
    for pool in policy.pool_names():
        units_here = [u for u in all_units if u.pool == pool]
        open_here = [r for r in open_recs if _pool_of(r) == pool]
        if not units_here and not open_here:
            continue
        pending_here = [r for r in pending if _pool_of(r) == pool]
        top = sorted(open_here, key=lambda r: (-saving_ms_per_s(r), r.id))[:TOP_MOVES]
        out.append(
            PoolStart(
                name=pool,
                tiers=[
                    _tier_use(t.name, t.capacity_gb, units_here, pending_here)
                    for t in policy.pool_tiers(pool)
                ],
                open_moves=len(open_here),
                saving_ms_per_s=sum(saving_ms_per_s(r) for r in open_here),
                io_wait_ms_per_s=sum(u.io_ms_per_s for u in units_here),
                top_moves=[
                    TopMove(r.id, r.name, r.server, r.database, r.from_tier, r.to_tier, saving_ms_per_s(r))
                    for r in top
                ],
            )
        )
    return out


_cache: dict[tuple[int, datetime], list[Unit]] = {}
_lock = threading.Lock()


def units(session: Session) -> dict[int, list[Unit]]:
    """Each target's placement units from its latest AdviceSnapshot. The snapshot JSON is parsed
    once per advice run (cached by target and evaluation time): it holds every object."""
    stamps = dict(session.execute(select(AdviceSnapshot.target_id, AdviceSnapshot.evaluated_at)).all())
    out: dict[int, list[Unit]] = {}
    missing = [tid for tid, at in stamps.items() if (tid, at) not in _cache]
    if missing:
        rows = session.execute(
            select(AdviceSnapshot.target_id, AdviceSnapshot.evaluated_at, AdviceSnapshot.objects).where(
                AdviceSnapshot.target_id.in_(missing)
            )
        )
        with _lock:
            for tid, at, objects in rows:
                for old in [k for k in _cache if k[0] == tid]:
                    del _cache[old]
                _cache[(tid, at)] = [
                    _unit(o)
                    for o in objects or []
                    if o.get("placement_unit") == o.get("key") and o.get("kind") != "partition"
                ]
    with _lock:
        for tid, at in stamps.items():
            out[tid] = _cache.get((tid, at), [])
    return out


def _weighted(pairs: Iterable[tuple[float, float]]) -> float | None:
    """The mean of values weighted by reads, None without reads."""
    total = weight = 0.0
    for w, v in pairs:
        total, weight = total + w * v, weight + w
    return total / weight if weight > 0 else None


def start_here(session: Session, policy: Policy, *, now: datetime) -> StartHere:
    hidden = active_for(session, now)
    recs = list(
        session.scalars(
            select(Recommendation).where(Recommendation.status.in_((Status.OPEN, Status.APPROVED)))
        )
    )
    open_recs = [r for r in recs if r.status == Status.OPEN and (r.target_id, r.key) not in hidden]
    approved = [r for r in recs if r.status == Status.APPROVED]
    by_unit = units(session)
    all_units = [(tid, u) for tid, us in by_unit.items() for u in us]
    moving = {(r.target_id, r.key): r.to_tier for r in open_recs}

    reads = [(u.read_iops, u.read_ms) for _, u in all_units if u.read_iops > 0 and u.read_ms is not None]
    after = []
    for tid, u in all_units:
        if u.read_iops <= 0 or u.read_ms is None:
            continue
        to = moving.get((tid, u.key))
        after.append((u.read_iops, u.read_ms_on.get(to, u.read_ms) if to else u.read_ms))

    pending = [r for r in open_recs + approved if not r.script_error]
    flash_tier = policy.tiers[0] if policy.tiers else None
    flash = None
    pools = pool_blocks(policy, [u for _, u in all_units], open_recs, pending) if policy.pools else []
    if flash_tier is not None and not policy.pools:  # with pools, each pool's tiers are shown instead
        flash = _tier_use(flash_tier.name, flash_tier.capacity_gb, [u for _, u in all_units], pending)

    freed_by: dict[str, list[float]] = {}
    for r in open_recs:
        gb, cost = freed(r)
        if gb > 0 and r.from_tier:
            acc = freed_by.setdefault(r.from_tier, [0.0, 0.0, 0])
            acc[0], acc[1], acc[2] = acc[0] + gb, acc[1] + cost, acc[2] + 1
    order = {t.name: i for i, t in enumerate(policy.tiers)}

    failing = [
        Failing(t.id, t.name, t.last_error or "")
        for t in statuses(session)
        if t.enabled and t.consecutive_failures
    ]
    names = dict(session.execute(select(Target.id, Target.name)).all())
    regressions = [
        Regression(
            v.id,
            v.name,
            names.get(v.target_id, "?"),
            v.recommendation_id,
            v.changed_at,
            (v.reasons or [""])[0],
        )
        for v in session.scalars(
            select(Verification)
            .where(Verification.status == "regressed")
            .order_by(Verification.changed_at.desc())
        )
    ]
    evaluated = session.scalar(
        select(AdviceSnapshot.evaluated_at).order_by(AdviceSnapshot.evaluated_at.desc()).limit(1)
    )
    return StartHere(
        open_moves=len(open_recs),
        suppressed=sum(1 for r in recs if r.status == Status.OPEN and (r.target_id, r.key) in hidden),
        approved=sum(1 for r in approved if not r.script_error),
        refused=sum(1 for r in approved if r.script_error),
        saving_ms_per_s=sum(saving_ms_per_s(r) for r in open_recs),
        io_wait_ms_per_s=sum(u.io_ms_per_s for _, u in all_units),
        read_ms_now=_weighted(reads),
        read_ms_after=_weighted(after),
        flash=flash,
        freed=sorted(
            (Freed(t, v[0], v[1], int(v[2])) for t, v in freed_by.items()),
            key=lambda f: order.get(f.tier, 99),
        ),
        failing=failing,
        regressions=regressions,
        evaluated_at=evaluated,
        pools=pools,
        unmapped=unknown_locations(session),
    )
