"""Credentials at rest: Fernet-encrypted connection strings, key from env or a 0600 key file.

A connection string never leaves this module in clear except to the driver; everything shown to
people goes through `redact`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken

from app.settings import Settings

_SECRET_KEYS = re.compile(
    r"(?i)\b(pwd|password|passwd|secret|token|authentication|access\s*token)\s*=\s*(\{[^}]*\}|[^;]*)"
)


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


def redact(connection_string: str) -> str:
    """Mask every password-like value (PWD=…, Password={…}) in an ODBC/CLI connection string."""
    return _SECRET_KEYS.sub(lambda m: f"{m.group(1)}=***", connection_string)


def scrub(message: str, *secrets: str | None) -> str:
    """Remove known secret values and password-like assignments from an error message."""
    out = redact(message)
    for secret in secrets:
        if secret:
            out = out.replace(secret, "***")
    return out
