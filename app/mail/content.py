"""What a report says: figures gathered from the store for one scope, as plain data."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from advisors.change_windows import Schedule
from app.change_windows import plan
from app.evaluate import server_owners
from app.freshness import target_freshness
from app.mail.scope import Scope
from app.store.anchor import anchors as anchor_of
from app.store.anchor import window_start
from app.store.ilm_plans import latest_plan
from app.store.io_window import NOT_STORAGE, metrics_of, usage
from app.store.models import DbObject, Recommendation, Target
from app.store.object_flash import fastest_tier, fastest_tiers, tier_label
from app.store.policies import current_policy
from app.store.recommendations import CURRENT, SUPPRESSED, Status, saving_ms_per_s
from app.store.rollup import rolled_up_mark
from app.store.suppressions import active_for
from app.store.targets import statuses
from policies.model import Policy

__all__ = ["NOTIFY_HEADER", "Coverage", "RecLine", "RegressionLine", "ReportContent", "Scope", "gather"]

# ids of the regressions a message announces; deliver() drops it before sending and marks them notified
NOTIFY_HEADER = "X-Tierwise-Regressions"


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


def duration(seconds: float) -> str:
    """Covered time as a DBA reads it: "40 min", "1 h", "23 h"."""
    if seconds < 3600:
        return f"{max(round(seconds / 60), 1)} min"
    return f"{round(seconds / 3600)} h"


@dataclass(frozen=True)
class Coverage:
    """The data behind one target's figures: the period they are from (the report's last hours,
    or the hours up to its newest sample when it was judged on an older window, as the advice is),
    the seconds its samples cover in it, and the notes a DBA must read next to them."""

    target: str
    until: datetime
    covered_s: float  # by its best-covered object (a target's objects are sampled together)
    newest: datetime | None
    history_hours: float | None  # oldest sample to newest (app.freshness)
    notes: tuple[str, ...] = ()  # the advice snapshot's data-end note; "1 hour of data: ..."

    def label(self, now: datetime, period_hours: int) -> str:
        """ "1 h of data", "23 h of the last 24 h", "24 h of the 24 h up to 2026-10-20 09:00 UTC"."""
        if self.covered_s <= 0:
            newest = f"; newest sample {self.newest:%Y-%m-%d %H:%M} UTC" if self.newest else ""
            return f"no samples in the last {period_hours} h{newest}"
        covered = duration(self.covered_s)
        if self.history_hours is not None and self.history_hours * 3600 <= self.covered_s + 60:
            return f"{covered} of data"  # all it has lies in the period
        if self.until < now:
            return f"{covered} of the {period_hours} h up to {self.until:%Y-%m-%d %H:%M} UTC"
        return f"{covered} of the last {period_hours} h"


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
    flash_gb_recommended: float  # onto each move's pool's fastest tier
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
    coverage: tuple[Coverage, ...] = field(default_factory=tuple)  # per target in scope, by name
    currency: str = "USD"  # the policy's: how cost_freed reads
    flash_tier: str = "flash"  # the moves' pools' fastest tiers, as the heat map names them ("flash / nvme")

    def coverage_label(self) -> str:
        """What the rates rest on, for the headline: one target's (or every target's, when they
        agree) coverage, else "per target below"."""
        labels = {c.label(self.generated_at, self.period_hours) for c in self.coverage}
        if not labels:
            return f"no samples in the last {self.period_hours} h"
        return labels.pop() if len(labels) == 1 else "coverage per target below"

    def coverage_by_target(self) -> tuple[tuple[str, str], ...]:
        """(target, its coverage) when the targets' coverage differs, else nothing to list."""
        if self.coverage_label() != "coverage per target below":
            return ()
        return tuple((c.target, c.label(self.generated_at, self.period_hours)) for c in self.coverage)

    def notes(self) -> tuple[str, ...]:
        """Every target's notes, prefixed with its name when the report covers more than one."""
        many = len(self.coverage) > 1
        return tuple(f"{c.target}: {n}" if many else n for c in self.coverage for n in c.notes)


def _objects_query(scope: Scope):  # type: ignore[no-untyped-def]
    q = select(DbObject).join(Target)
    if scope.target:
        q = q.where(Target.name == scope.target)
    if scope.database:
        q = q.where(DbObject.database == scope.database)
    return q


def _pool(rec: Recommendation) -> str | None:
    """The pool the advice put the move in (its evidence), None for the top-level tiers."""
    pool = (rec.evidence or {}).get("pool")
    return str(pool) if pool else None


def gather(
    session: Session,
    scope: Scope,
    *,
    now: datetime,
    period_hours: int = 24,
    top_n: int = 10,
    policy: Policy | None = None,
) -> ReportContent:
    policy = policy or current_policy(session, None)
    objects = {o.id: o for o in session.scalars(_objects_query(scope))}
    rates = _rates(session, scope, objects, now=now, period_hours=period_hours)
    recs_q = select(Recommendation).join(Target).where(Recommendation.status.in_(CURRENT))
    if scope.target:
        recs_q = recs_q.where(Target.name == scope.target)
    if scope.database:
        recs_q = recs_q.where(Recommendation.database == scope.database)
    recs = list(session.scalars(recs_q))
    hidden = active_for(session, now)  # suppressed: out of the counts, the top list and the savings
    suppressed = [
        r for r in recs if r.status in (Status.OPEN, Status.DEFERRED) and (r.target_id, r.key) in hidden
    ]
    recs = [r for r in recs if r not in suppressed]
    counts: dict[str, int] = {
        s: sum(1 for r in recs if r.status == s)
        for s in (Status.OPEN, Status.APPROVED, Status.DEFERRED, Status.REJECTED, Status.EXECUTED)
    }
    counts[SUPPRESSED] = len(suppressed)
    windows = _next_window(session, [r for r in recs if r.status == Status.APPROVED], policy, now)
    live = [r for r in recs if r.status in (Status.OPEN, Status.APPROVED)]

    def freed(r: Recommendation) -> tuple[float, float]:
        """What a demotion frees (advice evidence `decision.numbers`): GB and their cost."""
        numbers = ((r.evidence or {}).get("decision") or {}).get("numbers") or {}
        return float(numbers.get("gb_freed") or 0.0), float(numbers.get("cost_freed") or 0.0)

    top = sorted(live, key=saving_ms_per_s, reverse=True)[:top_n]
    gb_now: dict[str, float] = {}
    gb_after: dict[str, float] = {}
    for r in live:
        gb = (r.size_bytes or 0) / 1024**3
        if r.from_tier:
            gb_now[r.from_tier] = gb_now.get(r.from_tier, 0.0) + gb
        gb_after[r.to_tier] = gb_after.get(r.to_tier, 0.0) + gb
    sized = [(objects[oid].size_bytes or 0, io) for oid, io in rates.io_by_object.items()]
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
        read_iops=rates.read_iops,
        write_iops=rates.write_iops,
        avg_read_ms=rates.read_ms / rates.reads if rates.reads else None,
        avg_write_ms=rates.write_ms / rates.writes if rates.writes else None,
        counts=counts,
        predicted_saving_ms_per_s=sum(saving_ms_per_s(r) for r in live),
        gb_freed=sum(freed(r)[0] for r in live),
        cost_freed=sum(freed(r)[1] for r in live),
        flash_gb_recommended=sum(
            (r.size_bytes or 0) / 1024**3 for r in live if r.to_tier == fastest_tier(policy, _pool(r))
        ),
        flash_tier=tier_label(fastest_tiers(policy, {_pool(r) for r in live})),
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
                saving_ms_per_s(r),
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
        coverage=rates.coverage,
        currency=policy.currency,
    )


@dataclass
class _Rates:
    read_iops: float = 0.0
    write_iops: float = 0.0
    reads: int = 0
    writes: int = 0
    read_ms: int = 0
    write_ms: int = 0
    io_by_object: dict[int, float] = field(default_factory=dict)
    coverage: tuple[Coverage, ...] = ()


def _rates(
    session: Session,
    scope: Scope,
    objects: dict[int, DbObject],
    *,
    now: datetime,
    period_hours: int,
) -> _Rates:
    """Each object's rates over the seconds its samples cover in the period (app.store.io_window:
    the roll-ups plus the intervals not rolled up, metrics_of), summed: one hour at 2,267 reads/s
    reads 2,267 reads/s, not a 24th of it. Each target is read on the period ending at its newest
    sample (app/store/anchor.py), as the advice judged it. In the fleet, a
    server that two targets hold (an old import and the polled target) counts once, from the
    target the advice reads."""
    anchors = anchor_of(session, now)  # enabled targets with data
    newest = dict(anchors.newest)
    in_scope = {o.target_id for o in objects.values()} & set(newest)
    owners = server_owners(session, newest) if scope.kind == "fleet" else {}
    by_end: dict[datetime, list[int]] = defaultdict(list)
    for tid in in_scope:
        by_end[anchors.end(tid)].append(tid)
    out = _Rates()
    covered: dict[int, float] = defaultdict(float)
    dialect = session.get_bind().dialect.name
    mark = rolled_up_mark(session)
    for end, tids in by_end.items():
        ids = select(DbObject.id).where(DbObject.target_id.in_(tids), DbObject.kind.not_in(NOT_STORAGE))
        if scope.database:
            ids = ids.where(DbObject.database == scope.database)
        q = usage(dialect, since=window_start(end, period_hours), until=end, object_ids=ids, file_io_only=True,
                  mark=mark)  # fmt: skip
        for row in session.execute(q):
            o = objects.get(row.object_id)
            if o is None or owners.get((o.engine, o.server), o.target_id) != o.target_id:
                continue  # its server's I/O is counted from the target the advice reads
            m = metrics_of(row, o.size_bytes)
            covered[o.target_id] = max(covered[o.target_id], m.seconds)
            if m.io is None:
                continue
            out.read_iops += m.read_iops or 0.0
            out.write_iops += m.write_iops or 0.0
            out.reads += int(row.reads or 0)
            out.writes += int(row.writes or 0)
            out.read_ms += int(row.read_time_ms or 0)
            out.write_ms += int(row.write_time_ms or 0)
            out.io_by_object[row.object_id] = m.io
    names = dict(session.execute(select(Target.id, Target.name).where(Target.id.in_(in_scope))).all())
    lines = []
    for end, tids in by_end.items():
        for tid in tids:
            f = target_freshness(session, tid)
            notes = tuple(n for n in (f.data_note, f.history_note) if n)
            lines.append(Coverage(names[tid], end, covered[tid], newest[tid], f.hours, notes))
    out.coverage = tuple(sorted(lines, key=lambda c: c.target))
    return out


def _next_window(
    session: Session, approved: list[Recommendation], policy: Policy | None, now: datetime
) -> Schedule:
    return plan(approved, policy or current_policy(session, None), now=now)


def _ilm_due(session: Session, scope: Scope, *, now: datetime, days: int) -> tuple[tuple[str, str, str], ...]:
    """Partition moves the latest ILM plan schedules within the next `days`."""
    rec = latest_plan(session)
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
    """Regressions found by verify after change that no delivered report has announced yet, and
    promotions outside the destination's band that are slower than before too (worded so)."""
    from advisors.verify import OUTSIDE_BAND
    from app.verify import pending_regressions

    names = dict(session.execute(select(Target.id, Target.name)).all())
    rows = pending_regressions(session, {scope.target} if scope.target else None)
    if scope.database:
        rows = [v for v in rows if v.key.startswith(f"{scope.database}/")]
    out = []
    for v in rows:
        reasons = tuple(r for r in v.reasons or [] if not r.startswith("compared "))
        if v.status == OUTSIDE_BAND:  # a promotion above the faster tier's band, and slower than before
            reasons = (f"outside band and slower: {v.to_tier or 'the new tier'} is above its normal band and "
                       f"the object is slower than it was on {v.from_tier or 'the old tier'}; check the array "
                       "first, roll back if it cannot be fixed soon", *reasons)  # fmt: skip
        out.append(RegressionLine(v.id, names.get(v.target_id, "?"), v.name, v.from_tier, v.to_tier, v.changed_at,
                                  v.recommendation_id, reasons))  # fmt: skip
    return tuple(out)
