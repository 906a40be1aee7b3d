"""The JSON API under /api: the same data as the pages. Every route but /api/health needs a login."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from fastapi import APIRouter, Depends, Header, Query, Request, status
from pydantic import BaseModel, Field

from app import review as reviews
from app.api import schemas
from app.errors import Invalid
from app.freshness import freshness
from app.http.auth import CurrentUser, api_user, check_csrf, csrf_token, require
from app.http.state import AppState, app_state
from app.move_impact import impacts
from app.store.models import Recommendation, Suppression
from app.store.policies import current_policy
from app.store.recommendations import (
    RecommendationFilter,
    list_recommendations,
    open_counts,
    recent_audit,
)
from app.store.suppressions import (
    active_for,
    list_suppressions,
    suppression_json,
)
from app.store.targets import statuses
from app.timefmt import iso

router = APIRouter(prefix="/api")

# the values a filter can take: an unknown one is a 422, not an empty list
RecommendationStatus = Literal[
    "open", "approved", "rejected", "deferred", "executed", "superseded", "withdrawn", "suppressed"
]
Engine = Literal["sqlserver", "db2"]
ListSort = Literal[
    "saving", "wait", "size", "object", "database", "server", "move", "profile", "status", "updated"
]
SortDirection = Literal["asc", "desc"]


def recommendation_json(
    r: Recommendation, suppression: Suppression | None = None, *, now: datetime | None = None
) -> dict[str, Any]:
    return {
        "id": r.id,
        "engine": r.engine,
        "server": r.server,
        "database": r.database,
        "kind": r.kind,
        "name": r.name,
        "key": r.key,
        "from_tier": r.from_tier,
        "to_tier": r.to_tier,
        "profile": r.profile,
        "rule": r.rule,
        "size_bytes": r.size_bytes,
        "io_ms_per_s_now": r.io_ms_per_s_now,
        "io_ms_per_s_after": r.io_ms_per_s_after,
        "status": r.status,
        "reasons": (r.evidence or {}).get("reasons", []),
        "metrics": (r.evidence or {}).get("metrics", {}),
        "created_at": iso(r.created_at),
        "updated_at": iso(r.updated_at),
        "reviewed_by": r.reviewed_by,
        "reviewed_at": iso(r.reviewed_at),
        "review_comment": r.review_comment,
        # an approved move no safe script could be written for: not planned, cannot be executed
        "scripts_refused": reviews.refusal(r),
        # the suppression in force for this object, if any ("suppressed until … by … (reason)")
        "suppression": suppression_json(suppression, now or datetime.now(UTC)) if suppression else None,
    }


@router.get("/targets")
def targets(
    user: CurrentUser = Depends(api_user), state: AppState = Depends(app_state)
) -> list[dict[str, Any]]:
    """Targets with the outcome of their last poll (connection strings are never returned)."""
    now = datetime.now(UTC)
    with state.store.session() as s:
        rows, counts = statuses(s), open_counts(s, now=now)
        fresh = freshness(s)
    return [
        {
            "name": r.name,
            "engine": r.engine,
            "source": r.source,
            "state": r.state(now),
            "objects": r.objects,
            "poll_interval_s": r.poll_interval_s,
            "last_success_at": iso(r.last_success_at),
            "last_error": r.last_error,
            "last_error_at": iso(r.last_error_at),
            "consecutive_failures": r.consecutive_failures,
            "open_recommendations": counts.get(r.id, 0),
            # the newest sample, and how the advice was judged when that is older than its window
            "data_end": iso(fresh[r.id].data_end) if r.id in fresh else None,
            "data_note": fresh[r.id].data_note if r.id in fresh else None,
        }
        for r in rows
    ]


def recommendation_filter(
    engine: Engine | None = Query(None, description="only this engine's recommendations"),
    server: str | None = Query(None, description="only this monitored server's (its name, exactly)"),
    status_filter: RecommendationStatus | None = Query(
        None,
        alias="status",
        description="only this status; `suppressed`: current ones whose object has a suppression in "
        "force; none: the current ones (open, approved, rejected, deferred, executed)",
    ),
    to_tier: str | None = Query(None, description="only moves onto this tier"),
    target: str | None = Query(None, description="only this target's (its name, as on the fleet page)"),
    database: str | None = Query(None, description="only this database's (its name, exactly)"),
    q: str | None = Query(
        None,
        max_length=200,
        description="text in the server, database, kind, object, profile or rule (case-blind)",
    ),
    sort: ListSort = Query("saving", description="the column to sort by, as on the Recommendations page"),
    direction: SortDirection | None = Query(
        None, alias="dir", description="asc or desc; none: the column's own starting order"
    ),
) -> RecommendationFilter:
    """The Recommendations page's filter, search and sort from the query: one set of parameters for
    the list and its exports (/api/recommendations.csv and .xlsx)."""
    return RecommendationFilter(
        engine=engine,
        server=server,
        status=status_filter,
        to_tier=to_tier,
        target=target,
        database=database,
        text=q,
        sort=sort,
        descending=None if direction is None else direction == "desc",
    )


@router.get("/recommendations", response_model=schemas.RecommendationList, response_model_exclude_unset=True)
def recommendations(
    f: RecommendationFilter = Depends(recommendation_filter),
    limit: int = Query(100, ge=1, le=1000),
    offset: int = Query(0, ge=0),
    user: CurrentUser = Depends(api_user),
    state: AppState = Depends(app_state),
) -> dict[str, Any]:
    """Recommendations as the Recommendations page filters, searches and sorts them; status
    "suppressed" lists the ones whose object has a suppression in force."""
    with state.store.session() as s:
        rows, total = list_recommendations(s, f, limit=limit, offset=offset)
        now = datetime.now(UTC)
        active = active_for(s, now)
        items = [recommendation_json(r, active.get((r.target_id, r.key)), now=now) for r in rows]
        fresh = freshness(s, {r.target_id for r in rows})
        for item, r in zip(items, rows, strict=True):  # what the target's figures rest on
            item["data_end"] = iso(fresh[r.target_id].data_end)
            item["data_note"] = fresh[r.target_id].data_note
        from app.verify import add_verifications

        add_verifications(s, items)  # verified / regressed / inconclusive / waiting, once executed
        impact = impacts(rows, current_policy(s, state.settings.policy_file))
        for item, r in zip(items, rows, strict=True):  # what the move costs, before approval
            item["impact"] = impact[r.id].to_json()
    return {"total": total, "items": items}


class ReviewBody(BaseModel):
    action: Literal["approve", "reject", "defer", "reopen"]
    comment: str | None = Field(default=None, max_length=4000)
    expected_status: Literal["open", "approved", "rejected", "deferred"] | None = Field(
        default=None,
        description="the status you saw: if it is no longer the recommendation's, someone else "
        "reviewed it meanwhile and the review is refused with 409 (naming who), never applied over theirs",
    )


@router.post(
    "/recommendations/{rec_id}/review",
    response_model=schemas.Recommendation,
    response_model_exclude_unset=True,
)
def review_recommendation(
    rec_id: int,
    body: ReviewBody,
    request: Request,
    x_csrf_token: str | None = Header(None),
    user: CurrentUser = Depends(api_user),
    state: AppState = Depends(app_state),
) -> dict[str, Any]:
    if not user.via_token:
        check_csrf(request, x_csrf_token)
    require(user, "approver")
    with state.store.session() as s:  # no such recommendation: 404; a review its status refuses: 409
        now = datetime.now(UTC)
        rec = reviews.review(s, rec_id, action=body.action, username=user.username, comment=body.comment,
                             now=now, policy=current_policy(s, state.settings.policy_file),
                             expected=body.expected_status)  # fmt: skip
        return recommendation_json(rec, active_for(s, now).get((rec.target_id, rec.key)), now=now)


class SuppressBody(BaseModel):
    reason: str = Field(min_length=1, max_length=4000, description="why the advice does not apply")
    expires_at: datetime = Field(description="ISO date or date-time; a date or a time without zone is UTC")


def _csrf_unless_token(request: Request, user: CurrentUser, header: str | None) -> None:
    if not user.via_token:
        check_csrf(request, header)


@router.post("/recommendations/{rec_id}/suppress", status_code=status.HTTP_201_CREATED)
def suppress_recommendation(
    rec_id: int,
    body: SuppressBody,
    request: Request,
    x_csrf_token: str | None = Header(None),
    user: CurrentUser = Depends(api_user),
    state: AppState = Depends(app_state),
) -> dict[str, Any]:
    """Suppress the advice for this recommendation's object until `expires_at` (approver)."""
    _csrf_unless_token(request, user, x_csrf_token)
    require(user, "approver")
    until = body.expires_at if body.expires_at.tzinfo else body.expires_at.replace(tzinfo=UTC)
    now = datetime.now(UTC)
    with state.store.session() as s:  # no such recommendation: 404; a suppression it cannot take: 422
        sup = reviews.suppress(
            s, rec_id, reason=body.reason, expires_at=until, username=user.username, now=now
        )
        return suppression_json(sup, now)


class ExecutedBody(BaseModel):
    executed_at: datetime | None = Field(
        default=None, description="when ops ran the script (ISO; no zone means UTC); default now"
    )


@router.post("/recommendations/{rec_id}/executed")
def executed_recommendation(
    rec_id: int,
    request: Request,
    body: ExecutedBody | None = None,
    x_csrf_token: str | None = Header(None),
    user: CurrentUser = Depends(api_user),
    state: AppState = Depends(app_state),
) -> dict[str, Any]:
    """Record that ops ran this approved move's script (approver); starts its verification."""
    _csrf_unless_token(request, user, x_csrf_token)
    require(user, "approver")
    now = datetime.now(UTC)
    when = body.executed_at if body is not None and body.executed_at is not None else now
    when = (when if when.tzinfo else when.replace(tzinfo=UTC)).astimezone(UTC)  # keep the offset given
    if when > now:
        raise Invalid("executed_at is in the future")
    with state.store.session() as s:  # not found: 404; not approved, or its scripts were refused: 409
        rec = reviews.mark_executed(s, rec_id, username=user.username, when=when, now=now,
                                    policy=current_policy(s, state.settings.policy_file))  # fmt: skip
        return {"id": rec.id, "status": rec.status, "executed_by": rec.executed_by,
                "executed_at": iso(rec.executed_at)}  # fmt: skip


@router.post("/suppressions/{sup_id}/lift")
def lift_suppression(
    sup_id: int,
    request: Request,
    x_csrf_token: str | None = Header(None),
    user: CurrentUser = Depends(api_user),
    state: AppState = Depends(app_state),
) -> dict[str, Any]:
    """End a suppression now (approver); the advice shows again."""
    _csrf_unless_token(request, user, x_csrf_token)
    require(user, "approver")
    now = datetime.now(UTC)
    with state.store.session() as s:  # no such suppression: 404; already lifted or expired: 409
        return suppression_json(reviews.lift(s, sup_id, username=user.username, now=now), now)


@router.get("/suppressions")
def suppressions(
    include_ended: bool = Query(False, description="also lifted and expired ones"),
    user: CurrentUser = Depends(api_user),
    state: AppState = Depends(app_state),
) -> list[dict[str, Any]]:
    now = datetime.now(UTC)
    with state.store.session() as s:
        return [suppression_json(x, now) for x in list_suppressions(s, now=now, include_ended=include_ended)]


@router.get("/audit")
def audit_log(
    limit: int = Query(100, ge=1, le=1000),
    user: CurrentUser = Depends(api_user),
    state: AppState = Depends(app_state),
) -> list[dict[str, Any]]:
    with state.store.session() as s:
        return [
            {
                "at": iso(e.at),
                "username": e.username,
                "action": e.action,
                "subject_type": e.subject_type,
                "subject_id": e.subject_id,
                "summary": e.summary,
                "comment": e.comment,
            }
            for e in recent_audit(s, limit=limit)
        ]


@router.get("/session")
def session_info(request: Request, user: CurrentUser = Depends(api_user)) -> dict[str, str]:
    """Who is logged in, and the CSRF token to send as X-CSRF-Token on API posts."""
    return {"username": user.username, "role": user.role, "csrf_token": csrf_token(request)}


@router.get("/verifications")
def verifications(
    # every status of app.verify.STATUSES (and "verified", rows from before intervals); others are a 422
    status_filter: str | None = Query(
        None,
        alias="status",
        pattern=r"^(waiting|improved|no_effect|within_band|outside_band|regressed|inconclusive|not_moved|verified)$",
    ),
    limit: int = Query(100, ge=1, le=1000),
    offset: int = Query(0, ge=0),
    user: CurrentUser = Depends(api_user),
    state: AppState = Depends(app_state),
) -> list[dict[str, Any]]:
    """Verify after change: each executed or observed move, measured before and after (newest first)."""
    from app.verify import list_verifications, rollback_scripts, verification_json

    with state.store.session() as s:
        rows = list_verifications(s, status=status_filter, limit=limit, offset=offset)
        scripts = rollback_scripts(s, [v.recommendation_id for v in rows if v.recommendation_id is not None])
        return [verification_json(v, scripts.get(v.recommendation_id or 0)) for v in rows]


@router.get("/track-record")
def track_record(
    user: CurrentUser = Depends(api_user), state: AppState = Depends(app_state)
) -> dict[str, Any]:
    """The advisor's track record: share of judged moves that achieved >= 80 % of the predicted gain."""
    from app.verify import track_record as record

    with state.store.session() as s:
        return record(s, current_policy(s, state.settings.policy_file).verification)
