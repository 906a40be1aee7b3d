"""Report subscriptions and deliveries: the Reports page (approvers manage, everyone sees); the same
as JSON: app/api/reports.py, over one service (app/mail/subscriptions.py)."""

from __future__ import annotations

from datetime import UTC, datetime

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy import select

from app.http.auth import CurrentUser, form_user, page_user
from app.http.flash import take as take_flash
from app.http.state import AppState, app_state
from app.mail.service import SubscriptionError
from app.mail.subscriptions import SubscriptionIn, create, recent_deliveries, validate
from app.store.models import ReportSubscription, Target
from app.store.recommendations import audit
from app.web.pages import _back
from app.web.templating import render

router = APIRouter()


@router.get("/reports", response_class=HTMLResponse)
def reports_page(
    request: Request, user: CurrentUser = Depends(page_user), state: AppState = Depends(app_state)
) -> HTMLResponse:
    with state.store.session() as s:
        subs = list(s.scalars(select(ReportSubscription).order_by(ReportSubscription.name)))
        deliveries = recent_deliveries(s)
        targets = list(s.scalars(select(Target.name).order_by(Target.name)))  # the scope field's choices
    return render(request, "reports.html", user, subs=subs, deliveries=deliveries, targets=targets,
                  can_manage=user.role in ("approver", "admin"), message=take_flash(request))  # fmt: skip


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
            body = validate(s, body)
            create(s, body, username=user.username, now=datetime.now(UTC))
    except SubscriptionError as exc:
        return _back("/reports", exc.detail)
    except ValueError as exc:  # a field the form model refuses (pydantic's ValidationError)
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
