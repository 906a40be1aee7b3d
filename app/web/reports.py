"""Report subscriptions and deliveries: a page and the JSON API (approvers manage, everyone sees)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Depends, Form, HTTPException, Request, status
from fastapi.responses import HTMLResponse, Response
from pydantic import BaseModel, Field
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.mail.scope import SCOPE_FORMS, ScopeError, resolve_scope
from app.mail.service import SubscriptionError, parse_recipients, trigger_for
from app.store.models import Delivery, ReportSubscription, Target
from app.store.recommendations import audit
from app.web.auth import CurrentUser, api_user, check_csrf, form_user, page_user, require
from app.web.pages import _back
from app.web.state import AppState, app_state
from app.web.templating import render

router = APIRouter()


class SubscriptionIn(BaseModel):
    name: str = Field(min_length=1, max_length=200)
    recipients: str = Field(min_length=3, max_length=4000, description="comma-separated addresses")
    scope: str = Field(default="fleet", max_length=600, description=SCOPE_FORMS)
    cron: str = Field(default="weekly", description="five-field cron, or daily / weekly / monthly (07:00)")
    timezone: str = "UTC"
    format: str = Field(
        default="html", pattern="^(html|text)$", description="html (with a text part) or text"
    )


def _validate(session: Session, body: SubscriptionIn) -> SubscriptionIn:
    """The subscription as stored: every field checked (a scope against the store's targets and
    databases), the scope in its stored form (a bare target name becomes target:NAME)."""
    parse_recipients(body.recipients)
    scope = resolve_scope(session, body.scope)
    trigger_for(body.cron, body.timezone)
    return body.model_copy(update={"scope": scope.text()})


def _problem(exc: SubscriptionError | ScopeError) -> str:
    """The message with the field it is about: "scope: no target named 'SQLPROD09' ..."."""
    field = getattr(exc, "field", None)
    return f"{field}: {exc}" if field else str(exc)


def _create(session: Session, body: SubscriptionIn, user: CurrentUser, now: datetime) -> ReportSubscription:
    if session.scalar(select(ReportSubscription.id).where(ReportSubscription.name == body.name)) is not None:
        raise SubscriptionError(f"a subscription named {body.name!r} already exists", "name")
    sub = ReportSubscription(name=body.name, recipients=body.recipients, scope=body.scope, cron=body.cron,
                             timezone=body.timezone, format=body.format, enabled=True, created_by=user.username,
                             created_at=now)  # fmt: skip
    session.add(sub)
    session.flush()
    audit(session, at=now, username=user.username, action="add_subscription", subject_type="subscription",
          subject_id=str(sub.id), summary=f"{body.name}: {body.scope} to {body.recipients} at {body.cron} {body.timezone}")  # fmt: skip
    return sub


def _sub_json(s: ReportSubscription) -> dict[str, Any]:
    return {"id": s.id, "name": s.name, "recipients": s.recipients, "scope": s.scope, "cron": s.cron,
            "timezone": s.timezone, "format": s.format, "enabled": s.enabled, "created_by": s.created_by,
            "last_run_at": s.last_run_at.isoformat() if s.last_run_at else None}  # fmt: skip


def _deliveries(session: Session, limit: int = 50) -> list[Delivery]:
    return list(
        session.scalars(select(Delivery).order_by(Delivery.at.desc(), Delivery.id.desc()).limit(limit))
    )


@router.get("/reports", response_class=HTMLResponse)
def reports_page(
    request: Request, user: CurrentUser = Depends(page_user), state: AppState = Depends(app_state)
) -> HTMLResponse:
    with state.store.session() as s:
        subs = list(s.scalars(select(ReportSubscription).order_by(ReportSubscription.name)))
        deliveries = _deliveries(s)
        targets = list(s.scalars(select(Target.name).order_by(Target.name)))  # the scope field's choices
    return render(request, "reports.html", user, subs=subs, deliveries=deliveries, targets=targets,
                  can_manage=user.role in ("approver", "admin"), message=request.query_params.get("message"))  # fmt: skip


@router.post("/reports")
def add_subscription_form(
    name: str = Form(...),
    recipients: str = Form(...),
    scope: str = Form("fleet"),
    cron: str = Form("weekly"),
    timezone: str = Form("UTC"),
    fmt: str = Form("html", alias="format"),
    user: CurrentUser = Depends(form_user("approver")),
    state: AppState = Depends(app_state),
) -> Response:
    try:
        body = SubscriptionIn(name=name.strip(), recipients=recipients, scope=scope.strip(), cron=cron.strip(),
                              timezone=timezone.strip(), format=fmt)  # fmt: skip
        with state.store.session() as s:
            body = _validate(s, body)
            _create(s, body, user, datetime.now(UTC))
    except (SubscriptionError, ScopeError) as exc:
        return _back("/reports", _problem(exc))
    except ValueError as exc:
        return _back("/reports", str(exc))
    return _back("/reports", f"subscription {body.name} added")


@router.post("/reports/{sub_id}/delete")
def delete_subscription_form(
    sub_id: int,
    user: CurrentUser = Depends(form_user("approver")),
    state: AppState = Depends(app_state),
) -> Response:
    now = datetime.now(UTC)
    with state.store.session() as s:
        sub = s.get(ReportSubscription, sub_id)
        if sub is None:
            return _back("/reports", f"no subscription #{sub_id}")
        audit(s, at=now, username=user.username, action="delete_subscription", subject_type="subscription",
              subject_id=str(sub_id), summary=f"deleted {sub.name}")  # fmt: skip
        s.delete(sub)
    return _back("/reports", "subscription deleted")


@router.get("/api/subscriptions")
def list_subscriptions(
    user: CurrentUser = Depends(api_user), state: AppState = Depends(app_state)
) -> list[dict[str, Any]]:
    with state.store.session() as s:
        return [_sub_json(x) for x in s.scalars(select(ReportSubscription).order_by(ReportSubscription.id))]


@router.post("/api/subscriptions", status_code=status.HTTP_201_CREATED)
def create_subscription(
    body: SubscriptionIn,
    request: Request,
    user: CurrentUser = Depends(api_user),
    state: AppState = Depends(app_state),
) -> dict[str, Any]:
    if not user.via_token:
        check_csrf(request, request.headers.get("x-csrf-token"))
    require(user, "approver")
    try:
        with state.store.session() as s:
            return _sub_json(_create(s, _validate(s, body), user, datetime.now(UTC)))
    except (SubscriptionError, ScopeError) as exc:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, _problem(exc)) from None


@router.get("/api/deliveries")
def list_deliveries(
    user: CurrentUser = Depends(api_user), state: AppState = Depends(app_state)
) -> list[dict[str, Any]]:
    with state.store.session() as s:
        return [
            {"id": d.id, "subscription_id": d.subscription_id, "at": d.at.isoformat(), "recipients": d.recipients,
             "subject": d.subject, "status": d.status, "attempts": d.attempts, "error": d.error}
            for d in _deliveries(s, limit=200)
        ]  # fmt: skip
