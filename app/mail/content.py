"""What a report says: figures gathered from the store for one scope, as plain data."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from advisors.change_windows import Schedule
from app.change_windows import plan
from app.store.models import DbObject, IlmPlanRecord, IoInterval, Recommendation, Target
from app.store.policies import current_policy
from app.store.suppressions import active_for
from app.store.targets import statuses
from policies.model import Policy

LIVE = ("open", "approved", "deferred")
# ids of the regressions a message announces; deliver() drops it before sending and marks them notified
NOTIFY_HEADER = "X-Tierwise-Regressions"


@dataclass(frozen=True)
class Scope:
    """fleet | target:NAME | database:TARGET/DB"""

    kind: str
    target: str | None = None
    database: str | None = None

    @classmethod
    def parse(cls, text: str) -> Scope:
        text = (text or "fleet").strip()
        if text == "fleet":
            return cls("fleet")
        kind, _, value = text.partition(":")
        if kind == "target" and value:
            return cls("target", value)
        if kind == "database" and "/" in value:
            target, _, db = value.rpartition("/")
            return cls("database", target, db)
        raise ValueError(f"scope must be 'fleet', 'target:NAME' or 'database:TARGET/DB', not {text!r}")

    def label(self) -> str:
        if self.kind == "fleet":
            return "the fleet"
        if self.kind == "target":
            return f"target {self.target}"
        return f"database {self.database} on {self.target}"


@dataclass(frozen=True)
class RecLine:
    id: int
    server: str
    database: str
    kind: str
    name: str
    from_tier: str | None
    to_tier: str
    status: str
    size_gb: float
    saving_ms_per_s: float
    reasons: tuple[str, ...]
    gb_freed: float = 0.0  # a move to a cheaper tier: GB of the dearer tier it frees ...
    cost_freed: float = 0.0  # ... and their worth at the policy's cost_per_gb


@dataclass(frozen=True)
class RegressionLine:
    """A verified move that made things worse (verify after change), announced once."""

    id: int
    target: str
    name: str
    from_tier: str | None
    to_tier: str | None
    changed_at: datetime
    recommendation_id: int | None
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class ReportContent:
    scope: Scope
    generated_at: datetime
    period_hours: int
    read_iops: float
    write_iops: float
    avg_read_ms: float | None
    avg_write_ms: float | None
    counts: dict[str, int]
    predicted_saving_ms_per_s: float
    flash_gb_recommended: float
    gb_freed: float  # by the open and approved moves to cheaper tiers
    cost_freed: float
    top: tuple[RecLine, ...]
    gb_by_tier_now: dict[str, float]
    gb_by_tier_after: dict[str, float]
    skew: tuple[tuple[float, float], ...]  # (share of capacity, share of I/O), hottest first
    failing_targets: tuple[tuple[str, str], ...] = field(default_factory=tuple)
    ilm_due: tuple[tuple[str, str, str], ...] = field(default_factory=tuple)  # (partition, date, to tier)
    regressions: tuple[RegressionLine, ...] = field(default_factory=tuple)  # not announced yet
    next_window: str | None = None  # the coming change window's label (docs/change-windows.md)
    next_window_moves: tuple[str, ...] = field(default_factory=tuple)  # what fits in it, in DBA words


def _objects_query(scope: Scope):  # type: ignore[no-untyped-def]
    q = select(DbObject).join(Target)
    if scope.target:
        q = q.where(Target.name == scope.target)
    if scope.database:
        q = q.where(DbObject.database == scope.database)
    return q


def gather(
    session: Session,
    scope: Scope,
    *,
    now: datetime,
    period_hours: int = 24,
    top_n: int = 10,
    policy: Policy | None = None,
) -> ReportContent:
    objects = {o.id: o for o in session.scalars(_objects_query(scope))}
    since = now - timedelta(hours=period_hours)
    sums = session.execute(
        select(
            IoInterval.object_id,
            func.sum(IoInterval.reads),
            func.sum(IoInterval.writes),
            func.sum(IoInterval.read_time_ms),
            func.sum(IoInterval.write_time_ms),
        )
        .where(IoInterval.end_time > since, IoInterval.end_time <= now)
        .group_by(IoInterval.object_id)
    ).all()
    reads = writes = read_ms = write_ms = 0
    io_by_object: dict[int, float] = {}
    for oid, n_reads, n_writes, rt, wt in sums:
        obj = objects.get(oid)
        if obj is None or obj.kind == "partition":  # partitions' I/O is in their files already
            continue
        reads, writes = reads + (n_reads or 0), writes + (n_writes or 0)
        read_ms, write_ms = read_ms + (rt or 0), write_ms + (wt or 0)
        io_by_object[oid] = float((n_reads or 0) + (n_writes or 0))
    seconds = period_hours * 3600
    recs_q = (
        select(Recommendation).join(Target).where(Recommendation.status.in_((*LIVE, "executed", "rejected")))
    )
    if scope.target:
        recs_q = recs_q.where(Target.name == scope.target)
    if scope.database:
        recs_q = recs_q.where(Recommendation.database == scope.database)
    recs = list(session.scalars(recs_q))
    hidden = active_for(session, now)  # suppressed: out of the counts, the top list and the savings
    suppressed = [r for r in recs if r.status in ("open", "deferred") and (r.target_id, r.key) in hidden]
    recs = [r for r in recs if r not in suppressed]
    counts = {
        s: sum(1 for r in recs if r.status == s)
        for s in ("open", "approved", "deferred", "rejected", "executed")
    }
    counts["suppressed"] = len(suppressed)
    windows = _next_window(session, [r for r in recs if r.status == "approved"], policy, now)
    live = [r for r in recs if r.status in ("open", "approved")]

    def saving(r: Recommendation) -> float:
        return max((r.io_ms_per_s_now or 0.0) - (r.io_ms_per_s_after or 0.0), 0.0)

    def freed(r: Recommendation) -> tuple[float, float]:
        """What a demotion frees (advice evidence `decision.numbers`): GB and their cost."""
        numbers = ((r.evidence or {}).get("decision") or {}).get("numbers") or {}
        return float(numbers.get("gb_freed") or 0.0), float(numbers.get("cost_freed") or 0.0)

    top = sorted(live, key=saving, reverse=True)[:top_n]
    gb_now: dict[str, float] = {}
    gb_after: dict[str, float] = {}
    for r in live:
        gb = (r.size_bytes or 0) / 1024**3
        if r.from_tier:
            gb_now[r.from_tier] = gb_now.get(r.from_tier, 0.0) + gb
        gb_after[r.to_tier] = gb_after.get(r.to_tier, 0.0) + gb
    sized = [(objects[oid].size_bytes or 0, io) for oid, io in io_by_object.items()]
    sized.sort(key=lambda x: x[1] / max(x[0], 1), reverse=True)
    total_size = sum(s for s, _ in sized) or 1
    total_io = sum(io for _, io in sized) or 1.0
    skew: list[tuple[float, float]] = [(0.0, 0.0)]
    acc_s = acc_io = 0.0
    for size, io in sized:
        acc_s, acc_io = acc_s + size, acc_io + io
        skew.append((acc_s / total_size, acc_io / total_io))
    ilm_due = _ilm_due(session, scope, now=now, days=31)
    failing = tuple(
        (t.name, t.last_error or "")
        for t in statuses(session)
        if t.consecutive_failures and (scope.target is None or t.name == scope.target)
    )
    return ReportContent(
        scope=scope,
        generated_at=now,
        period_hours=period_hours,
        read_iops=reads / seconds,
        write_iops=writes / seconds,
        avg_read_ms=read_ms / reads if reads else None,
        avg_write_ms=write_ms / writes if writes else None,
        counts=counts,
        predicted_saving_ms_per_s=sum(saving(r) for r in live),
        gb_freed=sum(freed(r)[0] for r in live),
        cost_freed=sum(freed(r)[1] for r in live),
        flash_gb_recommended=sum((r.size_bytes or 0) / 1024**3 for r in live if r.to_tier == "flash"),
        top=tuple(
            RecLine(
                r.id,
                r.server,
                r.database,
                r.kind,
                r.name,
                r.from_tier,
                r.to_tier,
                r.status,
                (r.size_bytes or 0) / 1024**3,
                saving(r),
                tuple((r.evidence or {}).get("reasons", [])),
                *freed(r),
            )
            for r in top
        ),
        gb_by_tier_now=gb_now,
        gb_by_tier_after=gb_after,
        skew=tuple(skew),
        failing_targets=failing,
        ilm_due=ilm_due,
        regressions=_regressions(session, scope),
        next_window=windows.next_window.label if windows.next_window else None,
        next_window_moves=tuple(p.reason for p in windows.next_window.moves) if windows.next_window else (),
    )


def _next_window(
    session: Session, approved: list[Recommendation], policy: Policy | None, now: datetime
) -> Schedule:
    return plan(approved, policy or current_policy(session, None), now=now)


def _ilm_due(session: Session, scope: Scope, *, now: datetime, days: int) -> tuple[tuple[str, str, str], ...]:
    """Partition moves the latest ILM plan schedules within the next `days`."""
    rec = session.scalar(select(IlmPlanRecord).order_by(IlmPlanRecord.id.desc()).limit(1))
    if rec is None:
        return ()
    until = (now + timedelta(days=days)).date().isoformat()
    servers = None
    if scope.target:
        servers = {
            o.server
            for o in session.scalars(select(DbObject).join(Target).where(Target.name == scope.target))
        }
    due = []
    for t in rec.plan.get("tables", []):
        if servers is not None and t["server"] not in servers:
            continue
        if scope.database and t["database"] != scope.database:
            continue
        for p in t["partitions"]:
            for m in p["moves"]:
                if now.date().isoformat() <= m["date"] <= until:
                    label = f"{t['server']}/{t['database']}/{t['table']} " + (
                        f"new {p['range_start']}" if p["new"] else f"p{p['partition']}"
                    )
                    due.append((label, m["date"], m["to_tier"]))
    return tuple(sorted(due, key=lambda x: x[1]))


def _regressions(session: Session, scope: Scope) -> tuple[RegressionLine, ...]:
    """Regressions found by verify after change that no delivered report has announced yet."""
    from app.verify import pending_regressions

    names = dict(session.execute(select(Target.id, Target.name)).all())
    rows = pending_regressions(session, {scope.target} if scope.target else None)
    if scope.database:
        rows = [v for v in rows if v.key.startswith(f"{scope.database}/")]
    out = []
    for v in rows:
        reasons = tuple(r for r in v.reasons or [] if not r.startswith("compared "))
        out.append(RegressionLine(v.id, names.get(v.target_id, "?"), v.name, v.from_tier, v.to_tier, v.changed_at,
                                  v.recommendation_id, reasons))  # fmt: skip
    return tuple(out)
