"""The review service: every change of a recommendation's status goes through here, from the pages,
the JSON API and the CLI alike. Each step checks the status allows it (TRANSITIONS in
app/store/recommendations.py), audits it, and on approval freezes the move's scripts, so what ops
later download is what was approved. An approved move whose scripts were refused (no safe script
can be written for it) is flagged, left out of the change windows and cannot be marked executed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.errors import Conflict, Invalid, NotFound
from app.scripts import ensure_scripts
from app.store.models import Recommendation, ScriptRecord, Suppression
from app.store.recommendations import (
    REVIEW_ACTIONS,
    ConcurrentChange,
    RecommendationNotFound,
    ReviewError,
    Status,
    actions_for,
    change_status,
    concurrent_change,
)
from app.store.recommendations import review as record_review
from app.store.suppressions import SuppressionError, SuppressionNotFound
from app.store.suppressions import lift as lift_suppression
from app.store.suppressions import suppress as add_suppression
from app.verify import open_for_executed
from policies.model import Policy

__all__ = [
    "REVIEW_ACTIONS",
    "ConcurrentChange",
    "RecommendationNotFound",
    "ReviewError",
    "ScriptsRefused",
    "Status",
    "SuppressionEnded",
    "SuppressionError",
    "SuppressionMissing",
    "SuppressionNotFound",
    "SuppressionRefused",
    "actions_for",
    "executable",
    "lift",
    "mark_executed",
    "refusal",
    "review",
    "review_many",
    "suppress",
]


class ScriptsRefused(ReviewError):
    """An approved move without scripts (the generator refused it) cannot be marked executed."""


class SuppressionMissing(SuppressionNotFound, NotFound):
    """No recommendation (to suppress) or suppression (to lift) with that id (404)."""


class SuppressionRefused(SuppressionError, Invalid):
    """A suppression that cannot be made as asked: no reason, an expiry in the past, a status or
    object that cannot take one (422: the request is what must change)."""


class SuppressionEnded(SuppressionError, Conflict):
    """A suppression already lifted or expired cannot be lifted (409)."""


def refusal(rec: Recommendation) -> str | None:
    """ "scripts refused: <reason>" for an approved move no safe script could be written for."""
    if rec.status == Status.APPROVED and rec.script_error:
        return f"scripts refused: {rec.script_error}"
    return None


def executable(rec: Recommendation) -> bool:
    """Whether "Executed" may be offered: approved, and its scripts were not refused."""
    return rec.status == Status.APPROVED and not rec.script_error


def review(
    session: Session,
    rec_id: int,
    *,
    action: str,
    username: str,
    comment: str | None,
    now: datetime,
    policy: Policy,
    expected: str | None = None,
) -> Recommendation:
    """approve / reject / defer / reopen one recommendation; an approval writes its scripts now
    (or records on the recommendation why none can be written: see `refusal`). `expected`: the
    status the reviewer saw; another status now is a ConcurrentChange (409)."""
    rec = record_review(session, rec_id, action=action, username=username, comment=comment, now=now,
                        expected=expected)  # fmt: skip
    if rec.status == Status.APPROVED:
        ensure_scripts(session, rec, policy, now=now)  # frozen now: what ops run is what was approved
    return rec


@dataclass
class Outcome:
    """What a review of several recommendations did: the ones changed, and the ones left as they were."""

    done: list[Recommendation] = field(default_factory=list)
    unchanged: list[Recommendation] = field(default_factory=list)  # already in the status asked for

    @property
    def refused(self) -> list[Recommendation]:
        return [r for r in self.done if refusal(r)]


def review_many(
    session: Session,
    rec_ids: Iterable[int],
    *,
    action: str,
    username: str,
    comment: str | None,
    now: datetime,
    policy: Policy,
    seen: Mapping[int, str] | None = None,
) -> Outcome:
    """The same review action on a selection (all or nothing); rows already in the status asked
    for, and shown so (`seen`: id -> the status the page showed), are left alone rather than
    refusing the whole selection. A row whose status changed since the page showed it was
    reviewed by someone else meanwhile: ConcurrentChange (409), nothing of the selection kept."""
    target = REVIEW_ACTIONS.get(action)
    seen = seen or {}
    out = Outcome()
    for rec_id in rec_ids:
        rec = session.get(Recommendation, rec_id)
        expected = seen.get(rec_id)
        if rec is not None and target is not None and rec.status == target and expected in (None, target):
            out.unchanged.append(rec)
            continue
        out.done.append(review(session, rec_id, action=action, username=username, comment=comment, now=now,
                               policy=policy, expected=expected))  # fmt: skip
    return out


def suppress(
    session: Session, rec_id: int, *, reason: str, expires_at: datetime, username: str, now: datetime
) -> Suppression:
    """Hide the advice for this recommendation's object until `expires_at` (audited). The store's
    refusals are raised as SuppressionMissing (404) or SuppressionRefused (422)."""
    try:
        return add_suppression(
            session, rec_id, reason=reason, expires_at=expires_at, username=username, now=now
        )
    except SuppressionNotFound as exc:
        raise SuppressionMissing(str(exc)) from None
    except SuppressionError as exc:
        raise SuppressionRefused(str(exc)) from None


def lift(session: Session, sup_id: int, *, username: str, now: datetime) -> Suppression:
    """End a suppression now (audited); the advice shows again. The store's refusals are raised
    as SuppressionMissing (404) or SuppressionEnded (409)."""
    try:
        return lift_suppression(session, sup_id, username=username, now=now)
    except SuppressionNotFound as exc:
        raise SuppressionMissing(str(exc)) from None
    except SuppressionError as exc:
        raise SuppressionEnded(str(exc)) from None


def mark_executed(
    session: Session,
    rec_id: int,
    *,
    username: str,
    when: datetime,
    now: datetime,
    policy: Policy | None = None,
) -> Recommendation:
    """Record that ops ran an approved move's script at `when`; its verification starts. Refused
    (ScriptsRefused) when no script could be written for it: there is nothing ops could have run.
    With `policy`, scripts not written yet are written first, so a refusal is known."""
    rec = session.get(Recommendation, rec_id)
    if rec is None:
        raise RecommendationNotFound(f"no recommendation #{rec_id}")
    if rec.status == Status.EXECUTED:  # a second click, or another approver, was first
        raise concurrent_change(session, rec, Status.EXECUTED)
    if rec.status != Status.APPROVED:
        raise ReviewError(
            f"recommendation #{rec_id} is {rec.status}: only approved moves can be marked executed"
        )
    if policy is not None:
        ensure_scripts(session, rec, policy, now=now)
    has_scripts = session.scalar(
        select(ScriptRecord.id).where(ScriptRecord.recommendation_id == rec.id).limit(1)
    )
    if rec.script_error and has_scripts is None:
        raise ScriptsRefused(
            f"recommendation #{rec_id} ({rec.name}) cannot be marked executed: its scripts were refused "
            f"({rec.script_error}); no script of tierwise could have run. Reopen or reject it."
        )
    change_status(session, rec, Status.EXECUTED, action="executed", username=username, now=now,
                  summary=f"run on {when:%Y-%m-%d %H:%M} UTC",
                  values={"executed_by": username, "executed_at": when})  # fmt: skip
    open_for_executed(session, rec, when=when, now=now)  # measured again once the after-window has passed
    return rec
