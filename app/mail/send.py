"""SMTP delivery with STARTTLS or implicit TLS, optional login, and retries with back-off.

A temporary failure (connection refused or dropped, a 4xx reply) is retried; a permanent one
(5xx, authentication refused) is not. The caller records every outcome: nothing fails silently.
"""

from __future__ import annotations

import smtplib
import socket
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass
from email.message import EmailMessage

from app.settings import Settings


@dataclass(frozen=True)
class SendOutcome:
    ok: bool
    attempts: int
    error: str | None


def _transient(exc: BaseException) -> bool:
    if isinstance(exc, smtplib.SMTPResponseException):
        return 400 <= exc.smtp_code < 500
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        return all(400 <= code < 500 for code, _ in exc.recipients.values())
    return isinstance(
        exc, (smtplib.SMTPServerDisconnected, smtplib.SMTPConnectError, OSError, socket.timeout)
    )


def _describe(exc: BaseException) -> str:
    if isinstance(exc, smtplib.SMTPResponseException):
        text = (
            exc.smtp_error.decode(errors="replace")
            if isinstance(exc.smtp_error, bytes)
            else str(exc.smtp_error)
        )
        return f"SMTP {exc.smtp_code}: {text}"
    return f"{type(exc).__name__}: {exc}"


def _send_once(message: EmailMessage, settings: Settings) -> None:
    context = ssl.create_default_context()
    smtp: smtplib.SMTP
    if settings.smtp_ssl:
        smtp = smtplib.SMTP_SSL(
            settings.smtp_host, settings.smtp_port, timeout=settings.smtp_timeout_s, context=context
        )
    else:
        smtp = smtplib.SMTP(settings.smtp_host, settings.smtp_port, timeout=settings.smtp_timeout_s)
    with smtp:
        if settings.smtp_starttls and not settings.smtp_ssl:
            smtp.starttls(context=context)
        if settings.smtp_username:
            smtp.login(settings.smtp_username, settings.smtp_password or "")
        smtp.send_message(message)


def send(
    message: EmailMessage, settings: Settings, *, sleep: Callable[[float], None] = time.sleep
) -> SendOutcome:
    delay = settings.smtp_backoff_s
    last: str | None = None
    for attempt in range(1, max(settings.smtp_attempts, 1) + 1):
        try:
            _send_once(message, settings)
            return SendOutcome(True, attempt, None)
        except Exception as exc:  # every failure is classified and recorded
            last = _describe(exc)
            if settings.smtp_password:
                last = last.replace(settings.smtp_password, "***")
            if not _transient(exc) or attempt == settings.smtp_attempts:
                return SendOutcome(False, attempt, last)
            sleep(delay)
            delay *= 2
    return SendOutcome(False, settings.smtp_attempts, last)
