"""Reports: render and send one now, and the scheduled subscriptions (missed runs sent once)."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.message import EmailMessage
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from apscheduler.triggers.cron import CronTrigger
from sqlalchemy import select

from app.errors import Invalid
from app.mail.content import NOTIFY_HEADER, ReportContent, gather
from app.mail.render import Attachment, build_message
from app.mail.scope import Scope, ScopeError, resolve_scope
from app.mail.send import send, wire_bytes
from app.settings import Settings
from app.store.db import Store
from app.store.models import Delivery, ReportSubscription

log = logging.getLogger("tierwise.reports")

PRESETS = {"daily": "0 7 * * *", "weekly": "0 7 * * mon", "monthly": "0 7 1 * *"}
_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat", "sun")


def _standard_weekdays(expr: str) -> str:
    """Standard cron counts weekdays from 0 = Sunday; APScheduler 3's numbers start at Monday.
    Numbers in the day-of-week field are turned into names so `1` means Monday, as in crontab."""
    fields = expr.split()
    if len(fields) == 5:
        fields[4] = re.sub(
            r"\d+", lambda m: _DAYS[int(m.group())] if int(m.group()) < 8 else m.group(), fields[4]
        )
    return " ".join(fields)


class SubscriptionError(Invalid):
    """A subscription field that cannot be used (422); `field` names it for the form and the API."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field

    @property
    def detail(self) -> str:
        """The message with the field it is about: "scope: no target named 'SQLPROD09' ..."."""
        return f"{self.field}: {self}" if self.field else str(self)


def resolve(store: Store, text: str) -> Scope:
    """The scope a subscription or a command names, checked against the store's targets
    (app.mail.scope.resolve_scope; raises ScopeError, a ValueError naming what is unknown)."""
    with store.session() as s:
        return resolve_scope(s, text)


def trigger_for(cron: str, timezone: str) -> CronTrigger:
    """A cron expression (five fields) or a preset (daily, weekly, monthly at 07:00) in a time zone."""
    try:
        tz = ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError):
        raise SubscriptionError(
            f"unknown time zone {timezone!r} (use e.g. Europe/Berlin or UTC)", "timezone"
        ) from None
    try:
        return CronTrigger.from_crontab(
            _standard_weekdays(PRESETS.get(cron.strip(), cron.strip())), timezone=tz
        )
    except ValueError as exc:
        raise SubscriptionError(
            f"schedule {cron!r} is not a cron expression or preset: {exc}", "cron"
        ) from None


def parse_recipients(text: str) -> list[str]:
    out = [a.strip() for a in text.replace(";", ",").split(",") if a.strip()]
    bad = [a for a in out if "@" not in a or any(ch in a for ch in "\r\n <>")]
    if not out or bad:
        raise SubscriptionError(
            f"recipients must be e-mail addresses, comma-separated (bad: {', '.join(bad) or 'none given'})",
            "recipients",
        )
    return out


def due(sub: ReportSubscription, now: datetime) -> bool:
    """True when a scheduled time has passed since the last run: a run missed while the service
    was down is owed once, however many were missed."""
    trigger = trigger_for(sub.cron, sub.timezone)
    since = sub.last_run_at or sub.created_at
    nxt = trigger.get_next_fire_time(None, since + timedelta(seconds=1))
    return nxt is not None and nxt <= now


@dataclass(frozen=True)
class Sent:
    delivery_id: int
    ok: bool
    error: str | None
    message: EmailMessage


def compose(store: Store, settings: Settings, scope: Scope, recipients: Sequence[str], *, now: datetime,
            attachments: Sequence[Attachment] = (), fmt: str = "html") -> tuple[EmailMessage, ReportContent]:  # fmt: skip
    from app.store.policies import current_policy

    with store.session() as s:
        content = gather(s, scope, now=now, policy=current_policy(s, settings.policy_file))
    msg = build_message(content, sender=settings.smtp_from, recipients=recipients, base_url=settings.base_url,
                        attachments=attachments, fmt=fmt)  # fmt: skip
    return msg, content


def report_message(
    store: Store,
    settings: Settings,
    scope_text: str,
    recipients: Sequence[str],
    *,
    now: datetime,
    fmt: str = "html",
    attachments_for: Callable[[Scope], Sequence[Attachment]] | None = None,
) -> EmailMessage:
    """The report as `deliver` sends it: the scope checked against the store, the scripts of the
    approved moves in scope attached. `tierwise report render` writes this message (wire_bytes)
    and `report send` and the schedule send it: what is looked at is what is sent."""
    scope = resolve(store, scope_text)
    attachments = (
        attachments_for(scope)
        if attachments_for is not None
        else scope_attachments(store, settings, scope, now=now)
    )
    msg, _ = compose(store, settings, scope, recipients, now=now, attachments=attachments, fmt=fmt)
    return msg


def rendered(message: EmailMessage) -> bytes:
    """The bytes an SMTP server receives for `message` (without the internal header `deliver`
    removes): what `tierwise report render` writes."""
    return wire_bytes(message, drop=(NOTIFY_HEADER,))


def deliver(
    store: Store,
    settings: Settings,
    message: EmailMessage,
    *,
    now: datetime,
    subscription_id: int | None = None,
    sleep: Callable[[float], None] | None = None,
) -> Sent:
    notify = str(message.get(NOTIFY_HEADER) or "")  # regressions this report announces (internal header)
    del message[NOTIFY_HEADER]
    outcome = send(message, settings, sleep=sleep) if sleep is not None else send(message, settings)
    if notify and outcome.ok:
        from app.verify import mark_notified

        mark_notified(store, [int(x) for x in notify.split(",") if x.isascii() and x.isdigit()], now=now)
    elif notify:
        message[NOTIFY_HEADER] = notify  # not sent: the next attempt announces them again
    with store.session() as s:
        d = Delivery(subscription_id=subscription_id, at=now, recipients=str(message["To"]),
                     subject=str(message["Subject"]), status="sent" if outcome.ok else "failed",
                     attempts=outcome.attempts, error=outcome.error, message_id=str(message["Message-ID"]))  # fmt: skip
        s.add(d)
        s.flush()
        delivery_id = d.id
    if outcome.ok:
        log.info("report %r sent to %s", message["Subject"], message["To"])
    else:
        log.error("report %r to %s FAILED after %d attempts: %s", message["Subject"], message["To"], outcome.attempts,
                  outcome.error)  # fmt: skip
    return Sent(delivery_id, outcome.ok, outcome.error, message)


def scope_attachments(store: Store, settings: Settings, scope: Scope, *, now: datetime) -> list[Attachment]:
    """Forward and rollback scripts of the approved moves in scope (zipped by the renderer when many)."""
    from app.scripts import approved_script_attachments
    from app.store.models import Recommendation, Target
    from app.store.policies import current_policy
    from app.store.recommendations import Status

    with store.session() as s:
        q = select(Recommendation).join(Target).where(Recommendation.status == Status.APPROVED)
        if scope.target:
            q = q.where(Target.name == scope.target)
        if scope.database:
            q = q.where(Recommendation.database == scope.database)
        recs = list(s.scalars(q.order_by(Recommendation.id)))
        return approved_script_attachments(s, recs, current_policy(s, settings.policy_file), now=now)


def run_due(
    store: Store,
    settings: Settings,
    *,
    now: datetime,
    attachments_for: Callable[[Scope], Sequence[Attachment]] | None = None,
    sleep: Callable[[float], None] | None = None,
) -> list[Sent]:
    """Send every enabled subscription that is due, once each, and mark it run."""
    with store.session() as s:
        subs = [
            (sub.id, sub.scope, sub.recipients, sub.format)
            for sub in s.scalars(select(ReportSubscription).where(ReportSubscription.enabled.is_(True)))
            if due(sub, now)
        ]
        for sub_id, _, _, _ in subs:
            row = s.get(ReportSubscription, sub_id)
            assert row is not None
            row.last_run_at = now  # claimed before sending: a crash never sends twice
    sent: list[Sent] = []
    for sub_id, scope_text, recipients, fmt in subs:
        try:
            msg = report_message(store, settings, scope_text, parse_recipients(recipients), now=now, fmt=fmt,
                                 attachments_for=attachments_for)  # fmt: skip
        except (ScopeError, SubscriptionError) as exc:  # e.g. its target was removed: recorded, not skipped
            sent.append(_not_composed(store, sub_id, recipients, scope_text, str(exc), now))
            continue
        sent.append(deliver(store, settings, msg, now=now, subscription_id=sub_id, sleep=sleep))
    return sent


def _not_composed(
    store: Store, sub_id: int, recipients: str, scope_text: str, error: str, now: datetime
) -> Sent:
    """A failed delivery for a subscription whose report cannot be made (its scope names a target
    that is gone): on the Reports page and in the log, never silent."""
    with store.session() as s:
        d = Delivery(subscription_id=sub_id, at=now, recipients=recipients, subject=f"tierwise report for {scope_text}",
                     status="failed", attempts=0, error=f"not composed: {error}")  # fmt: skip
        s.add(d)
        s.flush()
        delivery_id = d.id
    log.error("report for subscription #%d not composed: %s", sub_id, error)
    return Sent(delivery_id, False, error, EmailMessage())
