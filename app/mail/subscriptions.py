"""Report subscriptions as the Reports page and /api/subscriptions manage them: every field checked,
the scope in its stored form, added with an audit entry, and the recent deliveries. One service
for the form and the JSON API, so both refuse the same things with the same words."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.mail.scope import SCOPE_FORMS, ScopeError, resolve_scope
from app.mail.service import SubscriptionError, parse_recipients, trigger_for
from app.store.models import Delivery, ReportSubscription
from app.store.recommendations import audit
from app.timefmt import iso


class SubscriptionIn(BaseModel):
    name: str = Field(min_length=1, max_length=200)
    recipients: str = Field(min_length=3, max_length=4000, description="comma-separated addresses")
    scope: str = Field(default="fleet", max_length=600, description=SCOPE_FORMS)
    cron: str = Field(default="weekly", description="five-field cron, or daily / weekly / monthly (07:00)")
    timezone: str = "UTC"
    format: str = Field(
        default="html", pattern="^(html|text)$", description="html (with a text part) or text"
    )


def validate(session: Session, body: SubscriptionIn) -> SubscriptionIn:
    """The subscription as stored: every field checked (a scope against the store's targets and
    databases), the scope in its stored form (a bare target name becomes target:NAME). Raises
    SubscriptionError (422) naming the field."""
    parse_recipients(body.recipients)
    try:
        scope = resolve_scope(session, body.scope)
    except ScopeError as exc:
        raise SubscriptionError(str(exc), exc.field) from None
    trigger_for(body.cron, body.timezone)
    return body.model_copy(update={"scope": scope.text()})


def create(session: Session, body: SubscriptionIn, *, username: str, now: datetime) -> ReportSubscription:
    """Add a validated subscription (audited); a name already taken is a SubscriptionError."""
    if session.scalar(select(ReportSubscription.id).where(ReportSubscription.name == body.name)) is not None:
        raise SubscriptionError(f"a subscription named {body.name!r} already exists", "name")
    sub = ReportSubscription(name=body.name, recipients=body.recipients, scope=body.scope, cron=body.cron,
                             timezone=body.timezone, format=body.format, enabled=True, created_by=username,
                             created_at=now)  # fmt: skip
    session.add(sub)
    session.flush()
    audit(session, at=now, username=username, action="add_subscription", subject_type="subscription",
          subject_id=str(sub.id), summary=f"{body.name}: {body.scope} to {body.recipients} at {body.cron} {body.timezone}")  # fmt: skip
    return sub


def subscription_json(s: ReportSubscription) -> dict[str, Any]:
    return {"id": s.id, "name": s.name, "recipients": s.recipients, "scope": s.scope, "cron": s.cron,
            "timezone": s.timezone, "format": s.format, "enabled": s.enabled, "created_by": s.created_by,
            "last_run_at": iso(s.last_run_at)}  # fmt: skip


def recent_deliveries(session: Session, limit: int = 50) -> list[Delivery]:
    """The newest deliveries first (the page shows 50, the API 200)."""
    return list(
        session.scalars(select(Delivery).order_by(Delivery.at.desc(), Delivery.id.desc()).limit(limit))
    )


def delivery_json(d: Delivery) -> dict[str, Any]:
    return {"id": d.id, "subscription_id": d.subscription_id, "at": iso(d.at), "recipients": d.recipients,
            "subject": d.subject, "status": d.status, "attempts": d.attempts, "error": d.error}  # fmt: skip
