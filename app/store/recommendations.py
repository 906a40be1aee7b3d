"""Recommendations and their review: stored advice, status changes, and the audit trail."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import ColumnElement, and_, exists, func, select
from sqlalchemy.orm import Session

from app.store.models import AuditEvent, Recommendation, Suppression, Target

REVIEW_ACTIONS = {"approve": "approved", "reject": "rejected", "defer": "deferred", "reopen": "open"}
LIVE = ("open", "deferred")


class ReviewError(Exception):
    pass


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


def sync_recommendations(
    session: Session,
    target_by_server: dict[tuple[str, str], int],
    advice: Sequence[dict[str, Any]],
    now: datetime,
) -> SyncResult:
    """Store the placement units' advice. A unit whose advice is unchanged keeps its open
    recommendation (evidence refreshed); a changed target tier supersedes it; a unit that should
    stay where it is withdraws it. Reviewed recommendations are never touched."""
    created = updated = superseded = withdrawn = 0
    live = {
        (r.target_id, r.key): r
        for r in session.scalars(select(Recommendation).where(Recommendation.status.in_(LIVE)))
    }
    seen: set[tuple[int, str]] = set()
    for a in advice:
        if a.get("placement_unit") != a["key"]:
            continue
        target_id = target_by_server.get((a["engine"], a["server"]))
        if target_id is None:
            continue
        k = (target_id, a["key"])
        seen.add(k)
        moves = a["current_tier"] is not None and a["recommended_tier"] != a["current_tier"]
        rec = live.get(k)
        if rec is not None and (not moves or rec.to_tier != a["recommended_tier"]):
            rec.status = "withdrawn" if not moves else "superseded"
            rec.updated_at = now
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
                Recommendation(target_id=target_id, key=a["key"], status="open", created_at=now, **values)
            )
            created += 1
        else:
            for name, value in values.items():
                setattr(rec, name, value)
            updated += 1
    for k, rec in live.items():
        if k not in seen and k[0] in target_by_server.values():
            rec.status, rec.updated_at = "withdrawn", now
            withdrawn += 1
    return SyncResult(created, updated, superseded, withdrawn)


def review(
    session: Session, rec_id: int, *, action: str, username: str, comment: str | None, now: datetime
) -> Recommendation:
    new_status = REVIEW_ACTIONS.get(action)
    if new_status is None:
        raise ReviewError(f"unknown review action {action!r} (use {', '.join(REVIEW_ACTIONS)})")
    rec = session.get(Recommendation, rec_id)
    if rec is None:
        raise ReviewError(f"no recommendation #{rec_id}")
    if rec.status in ("superseded", "withdrawn", "executed"):
        raise ReviewError(f"recommendation #{rec_id} is {rec.status} and can no longer be reviewed")
    if new_status == "approved":
        sup = session.scalar(
            select(Suppression)
            .where(
                Suppression.target_id == rec.target_id, Suppression.key == rec.key, suppression_in_force(now)
            )
            .order_by(Suppression.expires_at.desc())
            .limit(1)
        )
        if sup is not None:
            raise ReviewError(
                f"recommendation #{rec_id} ({rec.name}) is suppressed until {sup.expires_at:%Y-%m-%d %H:%M} UTC "
                f"by {sup.created_by}: lift the suppression before approving it"
            )
    old = rec.status
    rec.status = new_status
    rec.reviewed_by, rec.reviewed_at, rec.review_comment, rec.updated_at = username, now, comment or None, now
    audit(
        session,
        at=now,
        username=username,
        action=action,
        subject_type="recommendation",
        subject_id=str(rec_id),
        summary=f"{rec.server} {rec.database} {rec.kind} {rec.name}: {rec.from_tier} -> {rec.to_tier} "
        f"({old} -> {new_status})",
        comment=comment or None,
    )
    return rec


@dataclass(frozen=True)
class RecommendationFilter:
    engine: str | None = None
    server: str | None = None
    status: str | None = None
    to_tier: str | None = None
    target: str | None = None  # the target's name, as on the fleet page


def list_recommendations(
    session: Session, f: RecommendationFilter, *, limit: int = 100, offset: int = 0
) -> tuple[list[Recommendation], int]:
    q = select(Recommendation)
    if f.engine:
        q = q.where(Recommendation.engine == f.engine)
    if f.server:
        q = q.where(Recommendation.server == f.server)
    if f.status:
        q = q.where(Recommendation.status == f.status)
    else:
        q = q.where(Recommendation.status.not_in(("superseded", "withdrawn")))
    if f.to_tier:
        q = q.where(Recommendation.to_tier == f.to_tier)
    if f.target:
        q = q.join(Target, Target.id == Recommendation.target_id).where(Target.name == f.target)
    total = session.scalar(select(func.count()).select_from(q.subquery())) or 0
    rows = session.scalars(
        q.order_by(Recommendation.io_ms_per_s_now.desc().nulls_last(), Recommendation.id)
        .limit(limit)
        .offset(offset)
    )
    return list(rows), total


def open_counts(session: Session, *, now: datetime | None = None) -> dict[int, int]:
    """Open recommendations per target; suppressed ones (at `now`, default the clock) are not counted."""
    at = now or datetime.now(UTC)
    return dict(
        session.execute(
            select(Recommendation.target_id, func.count())
            .where(Recommendation.status == "open", ~suppressed(at))
            .group_by(Recommendation.target_id)
        ).all()
    )


def recent_audit(session: Session, *, limit: int = 50) -> list[AuditEvent]:
    return list(
        session.scalars(select(AuditEvent).order_by(AuditEvent.at.desc(), AuditEvent.id.desc()).limit(limit))
    )


def target_names(session: Session) -> dict[int, str]:
    return dict(session.execute(select(Target.id, Target.name)).all())
