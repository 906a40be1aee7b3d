"""SMTP delivery with STARTTLS or implicit TLS, optional login, and retries with back-off.

A temporary failure (connection refused or dropped, a 4xx reply) is retried; a permanent one
(5xx, authentication refused, a certificate that does not verify) is not. The caller records every
outcome: nothing fails silently. TLS always verifies the server's certificate and host name,
against TIERWISE_SMTP_CA_FILE when set (an internal CA), else the system's trusted CAs.

A service that stops does not wait out the retries: `MailStop` ends the back-off wait and closes
the connection in use, and the outcome says `stopped`, so the caller keeps the message queued.
"""

from __future__ import annotations

import contextlib
import copy
import io
import smtplib
import socket
import ssl
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from email.generator import BytesGenerator
from email.message import EmailMessage
from typing import Any

from app.settings import Settings


@dataclass(frozen=True)
class SendOutcome:
    ok: bool
    attempts: int
    error: str | None
    stopped: bool = False  # not sent because the service is stopping: the message stays queued


def _hang_up(smtp: smtplib.SMTP) -> None:
    """Shut the connection's socket down from another thread: a read or write blocked on it in
    the sending thread fails at once (close() alone does not wake it on Linux). A connection
    being opened is not interrupted (it takes at most TIERWISE_SMTP_TIMEOUT_S) and is not used."""
    sock = getattr(smtp, "sock", None)
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


class MailStop:
    """Set when the service stops: a send in its back-off wait returns at once and a connection in
    use is closed (its call fails at once), so shutdown never waits for the SMTP retries."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._open: dict[int, smtplib.SMTP] = {}  # sending thread -> its connection

    def set(self) -> None:
        self._event.set()
        with self._lock:
            conns = list(self._open.values())
        for smtp in conns:
            _hang_up(smtp)

    def is_set(self) -> bool:
        return self._event.is_set()

    def wait(self, seconds: float) -> bool:
        """Sleep `seconds`, or less when the service stops; True when it stops."""
        return self._event.wait(seconds)

    def opened(self, smtp: smtplib.SMTP) -> None:
        with self._lock:
            self._open[threading.get_ident()] = smtp

    def closed(self) -> None:
        """The calling thread is done with its connection."""
        with self._lock:
            self._open.pop(threading.get_ident(), None)


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


def _client(settings: Settings, context: ssl.SSLContext, stop: MailStop | None) -> smtplib.SMTP:
    """A connected client; with `stop`, known to it from before it connects, so a stop hangs up
    while it waits for the server's greeting too (smtplib reads it inside the constructor)."""
    base: type[smtplib.SMTP] = smtplib.SMTP_SSL if settings.smtp_ssl else smtplib.SMTP

    class Client(base):  # type: ignore[valid-type,misc]
        def connect(self, host: str = "localhost", port: int = 0, source_address: Any = None) -> Any:
            if stop is not None:
                stop.opened(self)
            return super().connect(host, port, source_address)

    options: dict[str, Any] = {"context": context} if settings.smtp_ssl else {}
    return Client(settings.smtp_host, settings.smtp_port, timeout=settings.smtp_timeout_s, **options)


def _send_once(
    message: EmailMessage, settings: Settings, context: ssl.SSLContext, stop: MailStop | None
) -> None:
    smtp: smtplib.SMTP | None = None
    try:
        smtp = _client(settings, context, stop)
        with smtp:
            if stop is not None and stop.is_set():  # stopped while it connected
                raise smtplib.SMTPServerDisconnected("the service is stopping")
            if settings.smtp_starttls and not settings.smtp_ssl:
                smtp.starttls(context=context)
            if settings.smtp_username:
                smtp.login(settings.smtp_username, settings.smtp_password or "")
            smtp.send_message(message)
    finally:
        if stop is not None:
            stop.closed()


def send(
    message: EmailMessage,
    settings: Settings,
    *,
    sleep: Callable[[float], None] = time.sleep,
    stop: MailStop | None = None,
) -> SendOutcome:
    """One message with retries; with `stop`, the back-off waits on it (not `sleep`) and a stop
    ends the tries: the outcome is `stopped`, the message not sent and not failed."""
    try:
        context = tls_context(settings)
    except (OSError, ValueError) as exc:  # a missing or unreadable CA file: nothing was tried
        return SendOutcome(False, 0, f"TIERWISE_SMTP_CA_FILE: {_describe(exc)}")
    delay = settings.smtp_backoff_s
    last: str | None = None
    for attempt in range(1, max(settings.smtp_attempts, 1) + 1):
        if stop is not None and stop.is_set():
            return SendOutcome(False, attempt - 1, last, stopped=True)
        try:
            _send_once(message, settings, context, stop)
            return SendOutcome(True, attempt, None)
        except Exception as exc:  # every failure is classified and recorded
            last = _describe(exc)
            if settings.smtp_password:
                last = last.replace(settings.smtp_password, "***")
            if stop is not None and stop.is_set():  # its connection was closed by the stop
                return SendOutcome(False, attempt, last, stopped=True)
            if not _transient(exc) or attempt == settings.smtp_attempts:
                return SendOutcome(False, attempt, last)
            if stop is not None:
                if stop.wait(delay):
                    return SendOutcome(False, attempt, last, stopped=True)
            else:
                sleep(delay)
            delay *= 2
    return SendOutcome(False, settings.smtp_attempts, last)
