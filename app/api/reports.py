"""Report subscriptions and deliveries as JSON (approvers add, everyone sees); the page is app/web/reports.py."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Depends, Request, status
from sqlalchemy import select

from app.http.auth import CurrentUser, api_user, check_csrf, require
from app.http.state import AppState, app_state
from app.mail.subscriptions import (
    SubscriptionIn,
    create,
    delivery_json,
    recent_deliveries,
    subscription_json,
    validate,
)
from app.store.models import ReportSubscription

router = APIRouter(prefix="/api")


@router.get("/subscriptions")
def list_subscriptions(
    user: CurrentUser = Depends(api_user), state: AppState = Depends(app_state)
) -> list[dict[str, Any]]:
    with state.store.session() as s:
        subs = s.scalars(select(ReportSubscription).order_by(ReportSubscription.id))
        return [subscription_json(x) for x in subs]


@router.post("/subscriptions", status_code=status.HTTP_201_CREATED)
def create_subscription(
    body: SubscriptionIn,
    request: Request,
    user: CurrentUser = Depends(api_user),
    state: AppState = Depends(app_state),
) -> dict[str, Any]:
    """Add a subscription (approver); a field that cannot be used is a 422 naming it."""
    if not user.via_token:
        check_csrf(request, request.headers.get("x-csrf-token"))
    require(user, "approver")
    with state.store.session() as s:
        sub = create(s, validate(s, body), username=user.username, now=datetime.now(UTC))
        return subscription_json(sub)


@router.get("/deliveries")
def list_deliveries(
    user: CurrentUser = Depends(api_user), state: AppState = Depends(app_state)
) -> list[dict[str, Any]]:
    with state.store.session() as s:
        return [delivery_json(d) for d in recent_deliveries(s, limit=200)]
