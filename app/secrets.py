"""Credentials at rest: Fernet-encrypted connection strings, key from env or a 0600 key file.

A connection string never leaves this module in clear except to the driver; everything shown to
people goes through `redact`.
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken

from app.settings import Settings
from connectors.sqlserver import redact_text


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
    """Mask every credential in a connection string or any text that may hold one: attribute
    values by the ODBC grammar (connectors.sqlserver.redact_text: braces, quotes, `;` inside
    values) and URL passwords."""
    return _URL_PASSWORD.sub(r"\1***@", redact_text(connection_string))


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


def configure_logging(level: str | int) -> None:
    """The CLI's logging: one stderr handler whose every line is redacted."""
    handler = logging.StreamHandler()
    handler.setFormatter(RedactingFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level, handlers=[handler])
