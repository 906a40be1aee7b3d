"""Suppressions: a DBA hides the advice for one object, with a reason, until an expiry date.

A suppression belongs to the object (target + placement-unit key), not to one recommendation row, so
re-evaluation that supersedes the recommendation does not bring the advice back early. Whether a
suppression is in force is decided at read time from `now`: an expired one ends by itself, no job
needed. Lifted and expired suppressions are kept for the record; every suppress and lift is audited.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.store.models import Recommendation, Suppression
from app.store.recommendations import Status, audit, suppression_in_force
from app.timefmt import iso

MAX_DAYS = 365  # a suppression is a decision to revisit, not a permanent exception
MAX_REASON = 4000
SUPPRESSIBLE = (Status.OPEN, Status.DEFERRED, Status.REJECTED)


class SuppressionError(Exception):
    """The request is wrong (bad reason or expiry, already suppressed); the message says why."""


class SuppressionNotFound(SuppressionError):
    pass


def state_of(sup: Suppression, now: datetime) -> str:
    """active | lifted | expired"""
    if sup.lifted_at is not None:
        return "lifted"
    return "active" if sup.expires_at > now else "expired"


def describe(sup: Suppression) -> str:
    """How the UI and the API say it: "suppressed until … by … (reason)"."""
    return f"suppressed until {sup.expires_at:%Y-%m-%d %H:%M} UTC by {sup.created_by} ({sup.reason})"


def active_for(session: Session, now: datetime) -> dict[tuple[int, str], Suppression]:
    """Suppressions in force at `now`, by (target_id, key); the latest expiry wins if two overlap."""
    out: dict[tuple[int, str], Suppression] = {}
    for sup in session.scalars(
        select(Suppression).where(suppression_in_force(now)).order_by(Suppression.expires_at)
    ):
        out[(sup.target_id, sup.key)] = sup
    return out


def list_suppressions(
    session: Session, *, now: datetime, include_ended: bool = False, limit: int = 500
) -> list[Suppression]:
    q = select(Suppression)
    if not include_ended:
        q = q.where(suppression_in_force(now))
    return list(
        session.scalars(q.order_by(Suppression.created_at.desc(), Suppression.id.desc()).limit(limit))
    )


def check_request(reason: str, expires_at: datetime, *, now: datetime, max_days: int = MAX_DAYS) -> str:
    """The cleaned reason, or SuppressionError naming what is wrong."""
    reason = (reason or "").strip()
    if not reason:
        raise SuppressionError("a reason is required to suppress a recommendation")
    if len(reason) > MAX_REASON:
        raise SuppressionError(f"the reason is too long ({len(reason)} characters, at most {MAX_REASON})")
    if expires_at.tzinfo is None:
        raise SuppressionError("the expiry needs a time zone (naive date and time given)")
    if expires_at <= now:
        raise SuppressionError(
            f"the expiry {expires_at:%Y-%m-%d %H:%M} UTC is not in the future (now {now:%Y-%m-%d %H:%M} UTC)"
        )
    if expires_at > now + timedelta(days=max_days):
        raise SuppressionError(
            f"the expiry {expires_at:%Y-%m-%d} is more than {max_days} days away; "
            f"suppress for at most {max_days} days and review it then"
        )
    return reason


def suppress(
    session: Session,
    rec_id: int,
    *,
    reason: str,
    expires_at: datetime,
    username: str,
    now: datetime,
    max_days: int = MAX_DAYS,
) -> Suppression:
    """Suppress the advice for the object of recommendation `rec_id` until `expires_at`."""
    rec = session.get(Recommendation, rec_id)
    if rec is None:
        raise SuppressionNotFound(f"no recommendation #{rec_id}")
    if rec.status not in SUPPRESSIBLE:
        hint = " (reopen it first)" if rec.status == Status.APPROVED else ""
        raise SuppressionError(f"recommendation #{rec_id} is {rec.status} and cannot be suppressed{hint}")
    reason = check_request(reason, expires_at, now=now, max_days=max_days)
    current = active_for(session, now).get((rec.target_id, rec.key))
    if current is not None:
        raise SuppressionError(f"{rec.name} is already {describe(current)}; lift that suppression first")
    sup = Suppression(
        target_id=rec.target_id,
        key=rec.key,
        name=rec.name,
        reason=reason,
        created_by=username,
        created_at=now,
        expires_at=expires_at,
    )
    session.add(sup)
    session.flush()
    audit(
        session,
        at=now,
        username=username,
        action="suppress",
        subject_type="recommendation",
        subject_id=str(rec_id),
        summary=f"{rec.server} {rec.database} {rec.kind} {rec.name}: {rec.from_tier} -> {rec.to_tier} "
        f"suppressed until {expires_at:%Y-%m-%d %H:%M} UTC (suppression #{sup.id})",
        comment=reason,
    )
    return sup


def lift(session: Session, sup_id: int, *, username: str, now: datetime) -> Suppression:
    """End a suppression before its expiry; the advice shows again at once."""
    sup = session.get(Suppression, sup_id)
    if sup is None:
        raise SuppressionNotFound(f"no suppression #{sup_id}")
    state = state_of(sup, now)
    if state == "lifted":
        raise SuppressionError(f"suppression #{sup_id} was already lifted by {sup.lifted_by}")
    if state == "expired":
        raise SuppressionError(f"suppression #{sup_id} expired on {sup.expires_at:%Y-%m-%d %H:%M} UTC")
    sup.lifted_by, sup.lifted_at = username, now
    audit(
        session,
        at=now,
        username=username,
        action="lift_suppression",
        subject_type="suppression",
        subject_id=str(sup_id),
        summary=f"{sup.name}: lifted the suppression by {sup.created_by} that ran until "
        f"{sup.expires_at:%Y-%m-%d %H:%M} UTC",
        comment=sup.reason,
    )
    return sup


def suppression_json(sup: Suppression, now: datetime) -> dict[str, object]:
    return {
        "id": sup.id,
        "target_id": sup.target_id,
        "key": sup.key,
        "name": sup.name,
        "reason": sup.reason,
        "created_by": sup.created_by,
        "created_at": iso(sup.created_at),
        "expires_at": iso(sup.expires_at),
        "lifted_by": sup.lifted_by,
        "lifted_at": iso(sup.lifted_at),
        "state": state_of(sup, now),
        "text": describe(sup),
    }
