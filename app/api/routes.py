"""The JSON API under /api: the same data as the pages. Every route but /api/health needs a login."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Depends, Header, HTTPException, Query, Request, status
from pydantic import BaseModel, Field

from app.scripts import ensure_scripts
from app.store.models import Recommendation
from app.store.policies import current_policy
from app.store.recommendations import (
    RecommendationFilter,
    ReviewError,
    list_recommendations,
    open_counts,
    recent_audit,
    review,
)
from app.store.targets import statuses
from app.web.auth import CurrentUser, api_user, check_csrf, require
from app.web.state import AppState, app_state

router = APIRouter(prefix="/api")


def _iso(t: datetime | None) -> str | None:
    return None if t is None else t.astimezone(UTC).isoformat()


def recommendation_json(r: Recommendation) -> dict[str, Any]:
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
        "created_at": _iso(r.created_at),
        "updated_at": _iso(r.updated_at),
        "reviewed_by": r.reviewed_by,
        "reviewed_at": _iso(r.reviewed_at),
        "review_comment": r.review_comment,
    }


@router.get("/targets")
def targets(
    user: CurrentUser = Depends(api_user), state: AppState = Depends(app_state)
) -> list[dict[str, Any]]:
    """Targets with the outcome of their last poll (connection strings are never returned)."""
    now = datetime.now(UTC)
    with state.store.session() as s:
        rows, counts = statuses(s), open_counts(s)
    return [
        {
            "name": r.name,
            "engine": r.engine,
            "source": r.source,
            "state": r.state(now),
            "objects": r.objects,
            "poll_interval_s": r.poll_interval_s,
            "last_success_at": _iso(r.last_success_at),
            "last_error": r.last_error,
            "last_error_at": _iso(r.last_error_at),
            "consecutive_failures": r.consecutive_failures,
            "open_recommendations": counts.get(r.id, 0),
        }
        for r in rows
    ]


@router.get("/recommendations")
def recommendations(
    engine: str | None = None,
    server: str | None = None,
    status_filter: str | None = Query(None, alias="status"),
    to_tier: str | None = None,
    target: str | None = None,
    limit: int = Query(100, ge=1, le=1000),
    offset: int = Query(0, ge=0),
    user: CurrentUser = Depends(api_user),
    state: AppState = Depends(app_state),
) -> dict[str, Any]:
    with state.store.session() as s:
        rows, total = list_recommendations(
            s,
            RecommendationFilter(engine, server, status_filter, to_tier, target),
            limit=limit,
            offset=offset,
        )
        items = [recommendation_json(r) for r in rows]
    return {"total": total, "items": items}


class ReviewBody(BaseModel):
    action: str = Field(description="approve, reject, defer or reopen")
    comment: str | None = Field(default=None, max_length=4000)


@router.post("/recommendations/{rec_id}/review")
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
    try:
        with state.store.session() as s:
            now = datetime.now(UTC)
            rec = review(s, rec_id, action=body.action, username=user.username, comment=body.comment, now=now)
            if rec.status == "approved":
                ensure_scripts(s, rec, current_policy(s, state.settings.policy_file), now=now)
            out = recommendation_json(rec)
    except ReviewError as exc:
        code = status.HTTP_404_NOT_FOUND if "no recommendation" in str(exc) else status.HTTP_409_CONFLICT
        raise HTTPException(code, str(exc)) from None
    return out


@router.get("/audit")
def audit_log(
    limit: int = Query(100, ge=1, le=1000),
    user: CurrentUser = Depends(api_user),
    state: AppState = Depends(app_state),
) -> list[dict[str, Any]]:
    with state.store.session() as s:
        return [
            {
                "at": _iso(e.at),
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
    from app.web.auth import csrf_token

    return {"username": user.username, "role": user.role, "csrf_token": csrf_token(request)}
