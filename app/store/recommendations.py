"""Recommendations and their review: stored advice, status changes, and the audit trail."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, cast

from sqlalchemy import ColumnElement, CursorResult, and_, exists, func, or_, select, update
from sqlalchemy.orm import Session
from sqlalchemy.orm.attributes import set_committed_value

from app.errors import Conflict, NotFound
from app.store.models import AuditEvent, Recommendation, Suppression, Target
from policies.model import DEFAULT_POOL


class Status(StrEnum):
    """A recommendation's review status, as stored (`Recommendation.status`)."""

    OPEN = "open"
    APPROVED = "approved"
    REJECTED = "rejected"
    DEFERRED = "deferred"
    EXECUTED = "executed"  # ops ran the approved move's script (app/review.mark_executed)
    SUPERSEDED = "superseded"  # the advice changed its target tier: a new recommendation replaced it
    WITHDRAWN = "withdrawn"  # the advice no longer moves the unit


# What a DBA's review may do to each status. Executed, superseded and withdrawn are final: the
# advice run writes superseded/withdrawn (sync_recommendations), ops write executed.
REVIEWABLE = (Status.OPEN, Status.APPROVED, Status.REJECTED, Status.DEFERRED)
TRANSITIONS: dict[Status, frozenset[Status]] = {
    **{s: frozenset(t for t in REVIEWABLE if t != s) for s in REVIEWABLE},
    Status.EXECUTED: frozenset(),
    Status.SUPERSEDED: frozenset(),
    Status.WITHDRAWN: frozenset(),
}
TRANSITIONS[Status.APPROVED] |= {Status.EXECUTED}
REVIEW_ACTIONS = {
    "approve": Status.APPROVED,
    "reject": Status.REJECTED,
    "defer": Status.DEFERRED,
    "reopen": Status.OPEN,
}
LIVE = (Status.OPEN, Status.DEFERRED)  # what a new advice run may update, supersede or withdraw
CURRENT = (Status.OPEN, Status.APPROVED, Status.REJECTED, Status.DEFERRED, Status.EXECUTED)
SUPPRESSED = "suppressed"  # a list filter, not a status: the object's advice is suppressed


def actions_for(status: str) -> list[str]:
    """The review actions valid from `status` (the page offers only these)."""
    allowed = TRANSITIONS.get(Status(status), frozenset())
    return [a for a, to in REVIEW_ACTIONS.items() if to in allowed]


def saving_ms_per_s(rec: Recommendation) -> float:
    """I/O wait a move saves, ms per second (0 for a move that adds wait to free a dearer tier):
    what the report, the change-window order and the fleet page add up."""
    return max((rec.io_ms_per_s_now or 0.0) - (rec.io_ms_per_s_after or 0.0), 0.0)


def freed(rec: Recommendation) -> tuple[float, float]:
    """What a move to a cheaper tier frees (the advice's `decision.numbers`): GB and their cost."""
    numbers = ((rec.evidence or {}).get("decision") or {}).get("numbers") or {}
    return float(numbers.get("gb_freed") or 0.0), float(numbers.get("cost_freed") or 0.0)


class ReviewError(Conflict):
    """A review the status does not allow (a conflict); the message says why."""


class RecommendationNotFound(NotFound, ReviewError):
    """No recommendation with that id (404; still a ReviewError for callers that catch those)."""


class ConcurrentChange(ReviewError):
    """Another review (or the advice run) changed the recommendation's status between this one's
    read and its write: this one lost the compare-and-set (409) and changed nothing."""


def compare_and_set(
    session: Session, rec: Recommendation, expected: Sequence[Status], values: dict[str, Any]
) -> bool:
    """UPDATE recommendation SET <values> WHERE id = :id AND status IN (:expected): True when the
    row still had an expected status, so this change won; `rec` then shows the values. Every status
    change goes through here: two requests that both read "open" cannot both approve (on
    PostgreSQL the second waits for the first's row lock, then finds the status changed; on SQLite
    the write lock orders them the same way)."""
    result = session.execute(
        update(Recommendation)
        .where(Recommendation.id == rec.id, Recommendation.status.in_([str(x) for x in expected]))
        .values(**values),
        execution_options={"synchronize_session": False},
    )
    if cast(CursorResult[Any], result).rowcount != 1:
        return False
    for name, value in values.items():
        set_committed_value(rec, name, value)
    return True


def concurrent_change(session: Session, rec: Recommendation, tried: Status) -> ConcurrentChange:
    """What the loser of a race is told: the status the winner set, who set it and when."""
    session.refresh(rec)
    status = Status(rec.status)
    by = (
        rec.executed_by
        if status == Status.EXECUTED
        else "a new advice run"
        if status in (Status.SUPERSEDED, Status.WITHDRAWN)
        else rec.reviewed_by
    )
    at = f"{rec.updated_at:%Y-%m-%d %H:%M:%S} UTC" if rec.updated_at else "just now"
    what = f"already {status}" if status == tried else f"{status} meanwhile"
    return ConcurrentChange(
        f"recommendation #{rec.id} ({rec.name}) is {what} by {by or 'someone'} at {at}; "
        "nothing was changed: reload it to see its status"
    )


def suppression_in_force(now: datetime) -> ColumnElement[bool]:
    """A suppression row that hides its object's advice at `now`: not lifted and not yet expired.
    Computed at read time, so an expired suppression needs no job to end (app/store/suppressions.py)."""
    return and_(Suppression.lifted_at.is_(None), Suppression.expires_at > now)


def suppressed(now: datetime) -> ColumnElement[bool]:
    """A recommendation whose object has a suppression in force at `now`."""
    return exists().where(
        Suppression.target_id == Recommendation.target_id,
        Suppression.key == Recommendation.key,
        suppression_in_force(now),
    )


@dataclass(frozen=True)
class SyncResult:
    created: int
    updated: int
    superseded: int
    withdrawn: int


def audit(
    session: Session,
    *,
    at: datetime,
    username: str,
    action: str,
    subject_type: str,
    subject_id: str | None,
    summary: str,
    comment: str | None = None,
) -> None:
    session.add(
        AuditEvent(
            at=at,
            username=username,
            action=action,
            subject_type=subject_type,
            subject_id=subject_id,
            summary=summary,
            comment=comment,
        )
    )


def _evidence_pool(rec: Recommendation) -> str:
    return str((rec.evidence or {}).get("pool") or DEFAULT_POOL)


def sync_recommendations(
    session: Session,
    target_by_server: dict[tuple[str, str], int],
    advice: Sequence[dict[str, Any]],
    now: datetime,
    *,
    pool: str | None = None,
) -> SyncResult:
    """Store the placement units' advice. A unit whose advice is unchanged keeps its open
    recommendation (evidence refreshed); a changed target tier supersedes it; a unit that should
    stay where it is withdraws it. Reviewed recommendations are never touched.

    With `pool`, the advice is one storage pool's (app/evaluate.advise_pool_in_store): only the
    live recommendations whose evidence names that pool, or whose unit this advice places (moved
    here by a policy change), are updated, superseded or withdrawn, so another pool's advice on
    the same server is never touched."""
    created = updated = superseded = withdrawn = 0
    units = [
        (target_by_server[(a["engine"], a["server"])], a)
        for a in advice
        if a.get("placement_unit") == a["key"] and (a["engine"], a["server"]) in target_by_server
    ]
    advised = set(target_by_server.values())
    query = select(Recommendation).where(Recommendation.status.in_(LIVE))
    if pool is not None:
        query = query.where(Recommendation.target_id.in_(sorted(advised)))
    keys = {(tid, a["key"]) for tid, a in units}
    live = {
        (r.target_id, r.key): r
        for r in session.scalars(query)
        if pool is None or _evidence_pool(r) == pool or (r.target_id, r.key) in keys
    }
    for target_id, a in units:
        moves = a["current_tier"] is not None and a["recommended_tier"] != a["current_tier"]
        rec = live.pop((target_id, a["key"]), None)
        if rec is not None and (not moves or rec.to_tier != a["recommended_tier"]):
            ended = Status.WITHDRAWN if not moves else Status.SUPERSEDED
            # a review that won the race keeps its recommendation; no new one is added beside it
            if not compare_and_set(session, rec, LIVE, {"status": ended, "updated_at": now}):
                continue
            withdrawn += not moves
            superseded += bool(moves)
            rec = None
        if not moves:
            continue
        values = {
            "engine": a["engine"],
            "server": a["server"],
            "database": a["database"],
            "kind": a["kind"],
            "name": a["name"],
            "from_tier": a["current_tier"],
            "to_tier": a["recommended_tier"],
            "profile": a["profile"],
            "rule": a["rule"],
            "size_bytes": a["size_bytes"],
            "io_ms_per_s_now": a["predicted"]["io_ms_per_s_now"],
            "io_ms_per_s_after": a["predicted"]["io_ms_per_s_after"],
            "evidence": a,
            "updated_at": now,
        }
        if rec is None:
            session.add(
                Recommendation(
                    target_id=target_id, key=a["key"], status=Status.OPEN, created_at=now, **values
                )
            )
            created += 1
        elif compare_and_set(session, rec, LIVE, values):  # reviewed meanwhile: left as reviewed
            updated += 1
    for (target_id, _), rec in live.items():  # no longer advised to move (within the scope)
        if target_id in advised and compare_and_set(
            session, rec, LIVE, {"status": Status.WITHDRAWN, "updated_at": now}
        ):
            withdrawn += 1
    return SyncResult(created, updated, superseded, withdrawn)


def change_status(
    session: Session,
    rec: Recommendation,
    to: Status,
    *,
    action: str,
    username: str,
    now: datetime,
    comment: str | None = None,
    summary: str = "",
    values: dict[str, Any] | None = None,
) -> Recommendation:
    """Move `rec` to status `to` if TRANSITIONS allows it, with `values` (who reviewed it, ...) in
    the same compare-and-set, and audit it; ReviewError if the status does not allow it, and
    ConcurrentChange if another change won the race for it (nothing changed, nothing audited)."""
    old = Status(rec.status)
    if to not in TRANSITIONS[old]:
        if to == old:
            raise ReviewError(f"recommendation #{rec.id} ({rec.name}) is already {old}")
        if not TRANSITIONS[old] or old == Status.EXECUTED:
            raise ReviewError(f"recommendation #{rec.id} is {old} and can no longer be reviewed")
        raise ReviewError(f"recommendation #{rec.id} is {old}: it cannot become {to}")
    if not compare_and_set(session, rec, [old], {"status": to, "updated_at": now, **(values or {})}):
        raise concurrent_change(session, rec, to)
    audit(session, at=now, username=username, action=action, subject_type="recommendation", subject_id=str(rec.id),
          summary=f"{rec.server} {rec.database} {rec.kind} {rec.name}: {rec.from_tier} -> {rec.to_tier} "
          f"{summary or f'({old} -> {to})'}", comment=comment or None)  # fmt: skip
    return rec


def suppression_of(session: Session, rec: Recommendation, now: datetime) -> Suppression | None:
    """The suppression in force on `rec`'s object at `now` (the latest expiry), if any."""
    return session.scalar(
        select(Suppression)
        .where(Suppression.target_id == rec.target_id, Suppression.key == rec.key, suppression_in_force(now))
        .order_by(Suppression.expires_at.desc())
        .limit(1)
    )


def review(
    session: Session,
    rec_id: int,
    *,
    action: str,
    username: str,
    comment: str | None,
    now: datetime,
    expected: str | None = None,
) -> Recommendation:
    """A DBA's review action (approve, reject, defer, reopen), checked against TRANSITIONS and
    audited. Approving also needs no suppression in force. app/review.py adds the scripts.

    `expected`: the status the reviewer saw (the page's, or the API caller's `expected_status`).
    When the recommendation no longer has it, someone else reviewed it first: ConcurrentChange
    (409, naming who), even if that review asked for the same status (a double-click)."""
    new_status = REVIEW_ACTIONS.get(action)
    if new_status is None:
        raise ReviewError(f"unknown review action {action!r} (use {', '.join(REVIEW_ACTIONS)})")
    rec = session.get(Recommendation, rec_id)
    if rec is None:
        raise RecommendationNotFound(f"no recommendation #{rec_id}")
    if expected is not None and rec.status != expected:
        raise concurrent_change(session, rec, new_status)
    if new_status == Status.APPROVED and (sup := suppression_of(session, rec, now)) is not None:
        raise ReviewError(
            f"recommendation #{rec_id} ({rec.name}) is suppressed until {sup.expires_at:%Y-%m-%d %H:%M} UTC "
            f"by {sup.created_by}: lift the suppression before approving it"
        )
    reviewed = {"reviewed_by": username, "reviewed_at": now, "review_comment": comment or None}
    change_status(session, rec, new_status, action=action, username=username, now=now, comment=comment,
                  values=reviewed)  # fmt: skip
    return rec


# The list's sortable columns (the page's ?sort=), each with the order it starts in.
SORTS: dict[str, tuple[Any, bool]] = {
    "saving": (func.coalesce(Recommendation.io_ms_per_s_now, 0.0) - func.coalesce(Recommendation.io_ms_per_s_after, 0.0), True),
    "wait": (Recommendation.io_ms_per_s_now, True),
    "size": (Recommendation.size_bytes, True),
    "object": (Recommendation.name, False),
    "database": (Recommendation.database, False),
    "server": (Recommendation.server, False),
    "move": (Recommendation.to_tier, False),
    "profile": (Recommendation.profile, False),
    "status": (Recommendation.status, False),
    "updated": (Recommendation.updated_at, True),
}  # fmt: skip
DEFAULT_SORT = "saving"


@dataclass(frozen=True)
class RecommendationFilter:
    engine: str | None = None
    server: str | None = None
    status: str | None = None  # a Status, or SUPPRESSED; None: the current ones (CURRENT)
    to_tier: str | None = None
    target: str | None = None  # the target's name, as on the fleet page
    database: str | None = None
    text: str | None = None  # matched, case-blind, in the server, database, kind, name, profile and rule
    sort: str = DEFAULT_SORT  # a key of SORTS
    descending: bool | None = None  # None: the column's own starting order


def _like(text: str) -> str:
    escaped = text.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def list_recommendations(
    session: Session,
    f: RecommendationFilter,
    *,
    limit: int = 100,
    offset: int = 0,
    now: datetime | None = None,
) -> tuple[list[Recommendation], int]:
    """One page of recommendations matching `f`, and how many match. `now` decides which
    suppressions are in force for the "suppressed" filter (default: the clock)."""
    q = select(Recommendation)
    if f.engine:
        q = q.where(Recommendation.engine == f.engine)
    if f.server:
        q = q.where(Recommendation.server == f.server)
    if f.database:
        q = q.where(Recommendation.database == f.database)
    if f.status == SUPPRESSED:
        q = q.where(Recommendation.status.in_(CURRENT), suppressed(now or datetime.now(UTC)))
    elif f.status:
        q = q.where(Recommendation.status == f.status)
    else:
        q = q.where(Recommendation.status.in_(CURRENT))
    if f.to_tier:
        q = q.where(Recommendation.to_tier == f.to_tier)
    if f.target:
        q = q.join(Target, Target.id == Recommendation.target_id).where(Target.name == f.target)
    if f.text and f.text.strip():
        pattern = _like(f.text.strip())
        columns = (Recommendation.server, Recommendation.database, Recommendation.kind, Recommendation.name,
                   Recommendation.profile, Recommendation.rule)  # fmt: skip
        q = q.where(or_(*(func.lower(c).like(pattern, escape="\\") for c in columns)))
    total = session.scalar(select(func.count()).select_from(q.subquery())) or 0
    column, first_desc = SORTS.get(f.sort, SORTS[DEFAULT_SORT])
    desc = first_desc if f.descending is None else f.descending
    order = column.desc().nulls_last() if desc else column.asc().nulls_last()
    rows = session.scalars(q.order_by(order, Recommendation.id).limit(limit).offset(offset))
    return list(rows), total


def open_counts(session: Session, *, now: datetime | None = None) -> dict[int, int]:
    """Open recommendations per target; suppressed ones (at `now`, default the clock) are not counted."""
    at = now or datetime.now(UTC)
    return dict(
        session.execute(
            select(Recommendation.target_id, func.count())
            .where(Recommendation.status == Status.OPEN, ~suppressed(at))
            .group_by(Recommendation.target_id)
        ).all()
    )


def recent_audit(session: Session, *, limit: int = 50) -> list[AuditEvent]:
    return list(
        session.scalars(select(AuditEvent).order_by(AuditEvent.at.desc(), AuditEvent.id.desc()).limit(limit))
    )


def target_names(session: Session) -> dict[int, str]:
    return dict(session.execute(select(Target.id, Target.name)).all())
