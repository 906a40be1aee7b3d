"""SMTP delivery with STARTTLS or implicit TLS, optional login, and retries with back-off.

A temporary failure (connection refused or dropped, a 4xx reply) is retried; a permanent one
(5xx, authentication refused, a certificate that does not verify) is not. The caller records every
outcome: nothing fails silently. TLS always verifies the server's certificate and host name,
against TIERWISE_SMTP_CA_FILE when set (an internal CA), else the system's trusted CAs.
"""

from __future__ import annotations

import copy
import io
import smtplib
import socket
import ssl
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from email.generator import BytesGenerator
from email.message import EmailMessage

from app.settings import Settings


@dataclass(frozen=True)
class SendOutcome:
    ok: bool
    attempts: int
    error: str | None


def wire_bytes(message: EmailMessage, *, drop: Sequence[str] = ()) -> bytes:
    """The message as smtplib.SMTP.send_message puts it on the wire (Bcc removed, CRLF line ends),
    without the `drop` headers: what a rendered report must equal."""
    out = copy.copy(message)
    for name in ("Bcc", "Resent-Bcc", *drop):
        del out[name]
    with io.BytesIO() as buf:
        BytesGenerator(buf).flatten(out, linesep="\r\n")
        return buf.getvalue()


def _transient(exc: BaseException) -> bool:
    if isinstance(exc, ssl.SSLCertVerificationError):  # untrusted or wrong name: a retry won't help
        return False
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


def tls_context(settings: Settings) -> ssl.SSLContext:
    """Certificate and host name verified; the CA file, when set, replaces the system's CAs."""
    cafile = str(settings.smtp_ca_file) if settings.smtp_ca_file else None
    return ssl.create_default_context(cafile=cafile)


def _send_once(message: EmailMessage, settings: Settings, context: ssl.SSLContext) -> None:
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
    try:
        context = tls_context(settings)
    except (OSError, ValueError) as exc:  # a missing or unreadable CA file: nothing was tried
        return SendOutcome(False, 0, f"TIERWISE_SMTP_CA_FILE: {_describe(exc)}")
    delay = settings.smtp_backoff_s
    last: str | None = None
    for attempt in range(1, max(settings.smtp_attempts, 1) + 1):
        try:
            _send_once(message, settings, context)
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
