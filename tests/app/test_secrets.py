"""Credentials at rest: encrypted, key file private, never shown."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from app.secrets import SecretError, Vault, load_key, redact, scrub
from app.settings import Settings


def test_key_file_created_private_and_reused(tmp_path: Path) -> None:
    settings = Settings(secret_key_file=tmp_path / "k" / "tierwise.key")
    key = load_key(settings)
    mode = stat.S_IMODE((tmp_path / "k" / "tierwise.key").stat().st_mode)
    assert mode == 0o600
    assert load_key(settings) == key


def test_roundtrip_and_ciphertext_hides_password() -> None:
    vault = Vault(Fernet.generate_key())
    conn = "DRIVER={ODBC Driver 18 for SQL Server};SERVER=db1;UID=tw;PWD=S3cret!pass"
    token = vault.encrypt(conn)
    assert "S3cret" not in token
    assert vault.decrypt(token) == conn


def test_wrong_key_is_a_clear_error() -> None:
    token = Vault(Fernet.generate_key()).encrypt("x")
    with pytest.raises(SecretError, match="cannot be decrypted"):
        Vault(Fernet.generate_key()).decrypt(token)


@pytest.mark.parametrize(
    ("conn", "secret"),
    [
        ("SERVER=a;UID=u;PWD=hunter2;Encrypt=yes", "hunter2"),
        ("SERVER=a;Password={semi;colon}}pw};UID=u", "semi;colon"),
        ("DATABASE=SAMPLE;HOSTNAME=h;PORT=50000;UID=db2inst1;pwd = abc def", "abc def"),
    ],
)
def test_redact_masks_password_values(conn: str, secret: str) -> None:
    out = redact(conn)
    assert secret not in out
    assert "***" in out


def test_scrub_removes_known_secret_values_anywhere() -> None:
    msg = "login failed for user tw with password P@ss; server said P@ss is wrong"
    assert "P@ss" not in scrub(msg, "P@ss")


def test_url_passwords_are_masked() -> None:
    out = redact("could not connect to postgresql+psycopg://tierwise:s3cr%40t@db:5432/tw")
    assert "s3cr" not in out and "postgresql+psycopg://tierwise:***@db:5432/tw" in out


def test_log_lines_and_tracebacks_are_redacted(capsys: pytest.CaptureFixture[str]) -> None:
    """A crash logged with its traceback does not print the connection string it carried."""
    import logging

    from app.secrets import RedactingFormatter

    log = logging.getLogger("tierwise.test.redact")
    handler = logging.StreamHandler()
    handler.setFormatter(RedactingFormatter("%(levelname)s %(message)s"))
    log.addHandler(handler)
    log.propagate = False
    try:
        try:
            raise RuntimeError("login failed: SERVER=a;UID=u;PWD=hunter2;Encrypt=yes")
        except RuntimeError:
            log.exception("poll failed for DSN=x;Password={p;w}")
    finally:
        log.removeHandler(handler)
    err = capsys.readouterr().err
    assert "RuntimeError" in err and "Traceback" in err  # the traceback is still there
    assert "hunter2" not in err and "p;w" not in err
    assert err.count("***") >= 2


# Passwords as ODBC and DB2 CLI allow them: braces with `}}` for a literal brace, `;` and `=`
# inside braces, quotes. Each must vanish whole from every path text takes to a log or a page.
HARD_PASSWORDS = [
    ("UID=tw;PWD={ab}}c;d};SERVER=db1", ["ab}}c;d", "ab}c;d", "c;d"]),
    ("Server=db1;Password={x=y;z}}};Encrypt=yes", ["x=y;z", "z}"]),
    ('DATABASE=S;PWD="a;b""c";HOSTNAME=h', ['a;b""c', "a;b", 'b""c']),
    ("DSN=x;pwd='p;q';UID=u", ["p;q"]),
    ("SERVER=db1;UID=svc_tw;PWD=plain-1", ["plain-1", "svc_tw"]),
]


@pytest.mark.parametrize(("conn", "fragments"), HARD_PASSWORDS)
def test_braced_quoted_and_semicolon_passwords_never_leak(
    conn: str, fragments: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    import logging

    from app.secrets import RedactingFormatter
    from connectors import sqlserver

    message = f"poll failed: [Microsoft][ODBC Driver 18]Login failed ({conn}) at step 2"
    outputs = {
        "app.redact": redact(conn),
        "app.redact(message)": redact(message),
        "app.scrub": scrub(message),
        "connectors.redact_text": sqlserver.redact_text(conn),
        "connectors.scrub": sqlserver.scrub(message, conn),
    }
    log = logging.getLogger("tierwise.test.redact.hard")
    handler = logging.StreamHandler()
    handler.setFormatter(RedactingFormatter("%(message)s"))
    log.addHandler(handler)
    log.propagate = False
    try:
        log.error("target %s failed: %s", "db1", message)
    finally:
        log.removeHandler(handler)
    outputs["log line"] = capsys.readouterr().err
    for where, text in outputs.items():
        for fragment in fragments:
            assert fragment not in text, f"{where} leaks {fragment!r}: {text!r}"
        assert "***" in text, where


@pytest.mark.parametrize(
    ("conn", "expected"),
    [
        ("UID=tw;PWD={ab}}c;d};SERVER=db1", "UID=***;PWD=***;SERVER=db1"),
        ('DATABASE=S;PWD="a;b""c";HOSTNAME=h', "DATABASE=S;PWD=***;HOSTNAME=h"),
        ("could not log in: Password={p}}w} for x", "could not log in: Password=*** for x"),
    ],
)
def test_redaction_keeps_what_is_not_secret(conn: str, expected: str) -> None:
    assert redact(conn) == expected


def test_one_redactor_for_app_and_connectors() -> None:
    """The service's log redaction and the connectors' are the same grammar."""
    from connectors import sqlserver

    for conn, _ in HARD_PASSWORDS:
        assert redact(conn) == sqlserver.redact_text(conn)
