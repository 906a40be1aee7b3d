"""Reports: render and send one now, and the scheduled subscriptions (missed runs sent once)."""

from __future__ import annotations

import email
import email.policy
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
from app.job_health import describe
from app.mail.attachment import Attachment
from app.mail.content import NOTIFY_HEADER, ReportContent, gather
from app.mail.render import build_message
from app.mail.scope import Scope, ScopeError, resolve_scope
from app.mail.send import MailStop, send, wire_bytes
from app.settings import Settings
from app.store.db import Store, store_fault
from app.store.models import Delivery, ReportSubscription
from connectors.records import escape_controls

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
    queued: bool = False  # not sent: the service is stopping; the delivery stays pending, and queued


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
    stop: MailStop | None = None,
    delivery_id: int | None = None,
) -> Sent:
    """Send `message` and record the outcome: on the pending delivery `delivery_id` (a scheduled
    report), else on a new one. A send the service's stop ended leaves the delivery pending with
    the message, for the next start (`run_due`)."""
    notify = str(message.get(NOTIFY_HEADER) or "")  # regressions this report announces (internal header)
    del message[NOTIFY_HEADER]
    outcome = send(message, settings, stop=stop, **({} if sleep is None else {"sleep": sleep}))
    if notify and outcome.ok:
        from app.verify import mark_notified

        mark_notified(store, [int(x) for x in notify.split(",") if x.isascii() and x.isdigit()], now=now)
    elif notify:
        message[NOTIFY_HEADER] = notify  # not sent: the next attempt announces them again
    status = "sent" if outcome.ok else "pending" if outcome.stopped else "failed"
    with store.session() as s:
        d = s.get(Delivery, delivery_id) if delivery_id is not None else None
        if d is None:
            d = Delivery(subscription_id=subscription_id, at=now, attempts=0)
            s.add(d)
        d.recipients, d.subject, d.status = str(message["To"]), str(message["Subject"]), status
        d.attempts = (d.attempts or 0) + outcome.attempts
        d.error, d.message_id = outcome.error, str(message["Message-ID"])
        d.message = wire_bytes(message) if outcome.stopped else None  # queued as it will be sent
        s.flush()
        delivery_id = d.id
    if outcome.ok:
        log.info("report %r sent to %s", message["Subject"], message["To"])
    elif outcome.stopped:
        log.warning("report %r to %s queued: the service is stopping; it is sent at the next start",
                    message["Subject"], message["To"])  # fmt: skip
    else:
        log.error("report %r to %s FAILED after %d attempts: %s", message["Subject"], message["To"], outcome.attempts,
                  outcome.error)  # fmt: skip
    return Sent(delivery_id, outcome.ok, outcome.error, message, queued=outcome.stopped)


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


@dataclass(frozen=True)
class _Claim:
    """A subscription's run, claimed: its pending delivery and what the report is made from."""

    delivery_id: int
    subscription_id: int | None
    scope: str
    recipients: str
    fmt: str


def run_due(
    store: Store,
    settings: Settings,
    *,
    now: datetime,
    attachments_for: Callable[[Scope], Sequence[Attachment]] | None = None,
    sleep: Callable[[float], None] | None = None,
    stop: MailStop | None = None,
) -> list[Sent]:
    """The queued reports first (pending deliveries a stopped service left), then every enabled
    subscription that is due, once each. Each is its own unit: claimed in a transaction of its own
    (marked run, with a pending delivery: a crash never sends twice), then composed and sent; a
    report that cannot be composed, for whatever reason, is a failed delivery with the reason, and
    the others go on. Only a store error stops the run (the store is needed to record anything):
    the deliveries it left pending are composed and sent at the next run."""
    sent = _send_queued(store, settings, now=now, attachments_for=attachments_for, sleep=sleep, stop=stop)
    with store.session() as s:
        subs = list(s.scalars(select(ReportSubscription).where(ReportSubscription.enabled.is_(True))
                              .order_by(ReportSubscription.id)))  # fmt: skip
    for sub in subs:
        if stop is not None and stop.is_set():
            break  # the rest are still due at the next start
        if not _due(sub, now):
            continue
        claim = _claim(store, sub.id, now)
        if claim is not None:
            sent.append(_compose_and_send(store, settings, claim, now=now, attachments_for=attachments_for,
                                          sleep=sleep, stop=stop))  # fmt: skip
    return sent


def _due(sub: ReportSubscription, now: datetime) -> bool:
    """`due`, with a schedule that can no longer be read (a time zone gone from the system's
    database) logged and skipped: it never stops the other subscriptions."""
    try:
        return due(sub, now)
    except SubscriptionError as exc:
        log.error("subscription #%d (%s) skipped: %s", sub.id, escape_controls(sub.name), exc.detail)
        return False


def _claim(store: Store, sub_id: int, now: datetime) -> _Claim | None:
    """Mark one subscription run and queue its pending delivery, in one transaction."""
    with store.session() as s:
        sub = s.get(ReportSubscription, sub_id)
        if sub is None or not sub.enabled or not due(sub, now):
            return None
        sub.last_run_at = now
        d = Delivery(subscription_id=sub.id, at=now, recipients=sub.recipients, status="pending", attempts=0,
                     subject=f"tierwise report for {escape_controls(sub.scope)}")  # fmt: skip
        s.add(d)
        s.flush()
        return _Claim(d.id, sub.id, sub.scope, sub.recipients, sub.format)


def _compose_and_send(
    store: Store,
    settings: Settings,
    claim: _Claim,
    *,
    now: datetime,
    attachments_for: Callable[[Scope], Sequence[Attachment]] | None,
    sleep: Callable[[float], None] | None,
    stop: MailStop | None,
) -> Sent:
    try:
        msg = report_message(store, settings, claim.scope, parse_recipients(claim.recipients), now=now,
                             fmt=claim.fmt, attachments_for=attachments_for)  # fmt: skip
    except Exception as exc:  # its own failure, recorded on its delivery; a store error is the run's
        if store_fault(exc) is not None:
            raise
        known = isinstance(exc, ScopeError | SubscriptionError)  # e.g. its target was removed
        return _not_composed(store, claim, str(exc) if known else describe(exc))
    return deliver(store, settings, msg, now=now, subscription_id=claim.subscription_id,
                   delivery_id=claim.delivery_id, sleep=sleep, stop=stop)  # fmt: skip


def _send_queued(
    store: Store,
    settings: Settings,
    *,
    now: datetime,
    attachments_for: Callable[[Scope], Sequence[Attachment]] | None,
    sleep: Callable[[float], None] | None,
    stop: MailStop | None,
) -> list[Sent]:
    """Pending deliveries, oldest first: a queued message is sent as it was composed; one claimed
    but never composed (the service stopped, or the store failed, in between) is composed now."""
    with store.session() as s:
        rows = s.execute(
            select(Delivery.id, Delivery.subscription_id, Delivery.message, Delivery.at)
            .where(Delivery.status == "pending")
            .order_by(Delivery.id)
        ).all()
    sent: list[Sent] = []
    for delivery_id, sub_id, raw, at in rows:
        if stop is not None and stop.is_set():
            break
        if raw is not None:
            msg = email.message_from_bytes(raw, policy=email.policy.default)
            assert isinstance(msg, EmailMessage)
            sent.append(deliver(store, settings, msg, now=now, subscription_id=sub_id, delivery_id=delivery_id,
                                sleep=sleep, stop=stop))  # fmt: skip
            continue
        with store.session() as s:
            sub = s.get(ReportSubscription, sub_id) if sub_id is not None else None
            claim = (
                None if sub is None else _Claim(delivery_id, sub.id, sub.scope, sub.recipients, sub.format)
            )
        if claim is None:
            gone = _Claim(delivery_id, sub_id, "", "", "html")
            sent.append(
                _not_composed(store, gone, "its subscription was removed before the report was composed")
            )
            continue
        sent.append(_compose_and_send(store, settings, claim, now=at, attachments_for=attachments_for,
                                      sleep=sleep, stop=stop))  # fmt: skip
    return sent


def _not_composed(store: Store, claim: _Claim, error: str) -> Sent:
    """A failed delivery for a subscription whose report cannot be made (its scope names a target
    that is gone, a name or value the report cannot take): on the Reports page and in the log
    (one line: control characters escaped), never silent."""
    error = escape_controls(error)
    with store.session() as s:
        d = s.get(Delivery, claim.delivery_id)
        assert d is not None
        d.status, d.error, d.message = "failed", f"not composed: {error}", None
    log.error("report for subscription #%s not composed: %s", claim.subscription_id, error)
    return Sent(claim.delivery_id, False, error, EmailMessage())
