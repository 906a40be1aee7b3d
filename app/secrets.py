"""Credentials at rest: Fernet-encrypted connection strings, key from env or a 0600 key file.

A connection string never leaves this module in clear except to the driver; everything shown to
people goes through `redact`, and every log record of the process (ours, uvicorn's, every
library's) through one handler whose formatter redacts (`configure_logging`).
"""

from __future__ import annotations

import logging
import logging.config
import os
import re
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

from cryptography.fernet import Fernet, InvalidToken

from app.settings import Settings
from connectors.connstr import MASK, redact_text


class SecretError(Exception):
    pass


def load_key(settings: Settings) -> bytes:
    if settings.secret_key:
        return settings.secret_key.encode()
    path = Path(settings.secret_key_file)
    if path.exists():
        return path.read_bytes().strip()
    key = Fernet.generate_key()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(key)
    return key


class Vault:
    def __init__(self, key: bytes) -> None:
        try:
            self._fernet = Fernet(key)
        except ValueError as exc:
            raise SecretError("TIERWISE_SECRET_KEY / key file does not hold a valid Fernet key") from exc

    def encrypt(self, text: str) -> str:
        return self._fernet.encrypt(text.encode()).decode()

    def decrypt(self, token: str) -> str:
        try:
            return self._fernet.decrypt(token.encode()).decode()
        except InvalidToken as exc:
            raise SecretError(
                "stored credentials cannot be decrypted with the configured key "
                "(was TIERWISE_SECRET_KEY or the key file changed?)"
            ) from exc


# user:password@ in a URL (postgresql://tierwise:secret@db/tierwise, smtp://u:p@host)
_URL_PASSWORD = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^:/@\s]+:)[^@\s]+@")


def redact(connection_string: str) -> str:
    """Mask every credential in a connection string or any text that may hold one: the secret
    values this process has seen (`remember_secrets`), attribute values by the ODBC grammar
    (connectors.connstr.redact_text: braces, quotes, `;` inside values) and URL passwords."""
    return _URL_PASSWORD.sub(r"\1***@", redact_text(_KNOWN.mask(connection_string)))


class _KnownSecrets:
    """The secret values of the connection strings this process has decrypted: a log line or a
    traceback that repeats one is masked by value, whatever words surround it. Shorter values
    are left to the pattern and to the scrub of each driver message (masking "true" or "1433" in
    every line would garble the log). Values are found by their first `MIN_LENGTH` characters in
    a dictionary, so a line costs one look-up per character however many targets there are (an
    alternation of thousands of values took milliseconds per line)."""

    MIN_LENGTH = 6
    LIMIT = 100_000

    def __init__(self) -> None:
        self._values: set[str] = set()
        self._index: dict[str, tuple[str, ...]] = {}  # first MIN_LENGTH characters -> values, longest first
        self._lock = threading.Lock()

    def add(self, values: Iterable[str]) -> None:
        forms = set()
        for value in values:
            if value and len(value) >= self.MIN_LENGTH:
                forms.update({value, quote(value, safe=""), quote_plus(value)})  # as a URL repeats it
        with self._lock:
            new = forms - self._values
            if not new or len(self._values) + len(new) > self.LIMIT:
                return
            self._values |= new
            index = dict(self._index)
            for value in new:
                head = value[: self.MIN_LENGTH]
                index[head] = tuple(sorted({*index.get(head, ()), value}, key=len, reverse=True))
            self._index = index  # replaced whole: readers never see it half-built

    def mask(self, text: str) -> str:
        index, width = self._index, self.MIN_LENGTH
        if not index:
            return text
        out: list[str] = []
        i = last = 0
        end = len(text) - width
        while i <= end:
            for value in index.get(text[i : i + width], ()):
                if text.startswith(value, i):
                    out.append(text[last:i])
                    out.append(MASK)
                    i = last = i + len(value)
                    break
            else:
                i += 1
        if not out:
            return text
        out.append(text[last:])
        return "".join(out)


_KNOWN = _KnownSecrets()


def remember_secrets(values: Iterable[str]) -> None:
    """Mask these values in every later log line and `redact` result of this process."""
    _KNOWN.add(values)


# the user info of one URL up to its last "@" before the query: a password may itself hold "@" or "/"
_URL_USERINFO = re.compile(r"(?i)^([a-z][a-z0-9+.-]*://[^:/@?#\s]*:)[^?#]*@")


def redact_url(url: str) -> str:
    """One URL (the store's, as `store:` lines show it) with its password masked wherever it is:
    in the user info, however many "@" it holds, or as a query parameter."""
    return redact(_URL_USERINFO.sub(r"\1***@", url.strip()))


def scrub(message: str, *secrets: str | None) -> str:
    """Remove known secret values and password-like assignments from an error message."""
    out = redact(message)
    for secret in secrets:
        if secret:
            out = out.replace(secret, "***")
    return out


class RedactingFormatter(logging.Formatter):
    """Log lines pass through `redact` whole, tracebacks included: a driver error or a SQL
    statement's parameters quoted in an exception can carry a connection string."""

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# uvicorn configures these itself unless told otherwise (uvicorn.config.LOGGING_CONFIG)
UVICORN_LOGGERS = ("uvicorn", "uvicorn.error", "uvicorn.access", "uvicorn.asgi")


def logging_config(level: str | int) -> dict[str, Any]:
    """The one logging set-up, as `logging.config.dictConfig` takes it: one stderr handler whose
    formatter redacts, on the root logger; uvicorn's loggers keep no handler of their own and
    pass their records (access lines, "Exception in ASGI application" tracebacks) up to it.
    `tierwise serve` hands the same dict to uvicorn as its `log_config`."""
    if isinstance(level, str):
        level = level.upper()
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"redacting": {"()": f"{__name__}.RedactingFormatter", "fmt": LOG_FORMAT}},
        "handlers": {
            "redacting": {
                "class": "logging.StreamHandler",
                "formatter": "redacting",
                "stream": "ext://sys.stderr",
            }
        },
        "root": {"level": level, "handlers": ["redacting"]},
        "loggers": {name: {"handlers": [], "propagate": True} for name in UVICORN_LOGGERS},
    }


def configure_logging(level: str | int) -> None:
    """The process's logging: `logging_config`, warnings routed to the log, and any handler a
    library attached to its own logger removed, so that its records reach the redacting one."""
    logging.config.dictConfig(logging_config(level))
    logging.captureWarnings(True)
    for logger in list(logging.root.manager.loggerDict.values()):
        if not isinstance(logger, logging.Logger):
            continue
        own = [h for h in logger.handlers if not isinstance(h, logging.NullHandler)]
        for handler in own:
            logger.removeHandler(handler)
        if own or not logger.handlers:  # a NullHandler without propagation is a library's "silent"
            logger.propagate = True
