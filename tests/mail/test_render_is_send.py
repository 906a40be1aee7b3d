"""`tierwise report render` writes what `report send` sends, attachments included: compared with
what a real SMTP server on loopback (aiosmtpd) receives (#17 item 8)."""

from __future__ import annotations

import email
import email.policy
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from cryptography.fernet import Fernet
from sqlalchemy import select
from typer.testing import CliRunner

from app.demo import ensure_demo_fleet
from app.evaluate import evaluate
from app.mail.service import deliver, rendered, report_message
from app.secrets import Vault
from app.settings import Settings, get_settings
from app.store.db import Store
from app.store.models import Recommendation
from app.store.recommendations import review
from policies.loader import load_policy
from tests.conftest import free_port

NOW = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


class RawInbox:
    """Keeps the bytes each message arrived with."""

    def __init__(self) -> None:
        self.raw: list[bytes] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.raw.append(envelope.original_content)
        return "250 OK"


@pytest.fixture
def inbox() -> Iterator[tuple[RawInbox, int]]:
    box, port = RawInbox(), free_port()
    controller = Controller(box, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield box, port
    finally:
        controller.stop()


@pytest.fixture
def approved_store(store: Store, settings: Settings) -> Store:
    """The demo fleet advised at NOW with two moves approved: their scripts are attached."""
    ensure_demo_fleet(store, Vault(Fernet.generate_key()), settings, now=NOW)
    evaluate(store, load_policy(), now=NOW)
    with store.session() as s:
        for server in ("SQLPROD01", "DB2PROD01"):  # one move each: 2 scripts each
            rec = s.scalar(select(Recommendation).where(Recommendation.status == "open", Recommendation.server == server)
                           .order_by(Recommendation.id).limit(1))  # fmt: skip
            assert rec is not None
            review(s, rec.id, action="approve", username="abe", comment=None, now=NOW)
    return store


def _parts(raw: bytes) -> list[tuple[str, str | None, bytes]]:
    """Every part's type, file name and decoded body, the Message-ID's own part replaced (it is
    unique per message, and the charts' Content-IDs follow from it) and the MIME boundaries."""
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    assert isinstance(msg, EmailMessage)
    local = str(msg["Message-ID"]).strip("<>").split("@")[0]
    out = [("headers", None, "\n".join(f"{k}: {v}" for k, v in msg.items() if k != "Message-ID").encode())]
    for part in msg.walk():
        if part.is_multipart():
            out.append((part.get_content_type(), None, b""))
            continue
        body = part.get_payload(decode=True) or b""
        out.append((part.get_content_type(), part.get_filename(), body.replace(local.encode(), b"ID")))
    boundary = re.compile(rb'boundary="[^"]*"')  # drawn at random each time a message is written
    return [(t, f, boundary.sub(b"boundary", b.replace(local.encode(), b"ID"))) for t, f, b in out]


def test_rendered_bytes_are_the_bytes_sent(
    approved_store: Store, settings: Settings, inbox: tuple[RawInbox, int]
) -> None:
    box, port = inbox
    cfg = settings.model_copy(
        update={"smtp_host": "127.0.0.1", "smtp_port": port, "smtp_from": "tw@example.test"}
    )
    msg = report_message(approved_store, cfg, "fleet", ["dba@example.test"], now=NOW)
    on_file = rendered(msg)
    assert deliver(approved_store, cfg, msg, now=NOW).ok
    assert box.raw == [on_file]
    files = sorted(f for t, f, _ in _parts(on_file) if f and t != "image/png")
    # the DB2 move's check-only script goes with its forward and rollback (issue #30)
    assert [(f.split("_")[0], f.split(".")[-2]) for f in files] == [
        ("01-DB2PROD01", "check"), ("01-DB2PROD01", "forward"), ("01-DB2PROD01", "rollback"),
        ("01-SQLPROD01", "forward"), ("01-SQLPROD01", "rollback"),
    ]  # fmt: skip
    # two renderings of one report differ only in the Message-ID (and the MIME boundaries)
    again = rendered(report_message(approved_store, cfg, "fleet", ["dba@example.test"], now=NOW))
    assert _parts(again) == _parts(on_file)


def test_cli_render_writes_what_cli_send_sends(
    approved_store: Store, settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    inbox: tuple[RawInbox, int],
) -> None:  # fmt: skip
    from app.cli import app

    box, port = inbox
    monkeypatch.setenv("TIERWISE_DATABASE_URL", settings.database_url)
    monkeypatch.setenv("TIERWISE_SECRET_KEY_FILE", str(settings.secret_key_file))
    monkeypatch.setenv("TIERWISE_SMTP_HOST", "127.0.0.1")
    monkeypatch.setenv("TIERWISE_SMTP_PORT", str(port))
    get_settings.cache_clear()
    try:
        runner = CliRunner()
        out = tmp_path / "report.eml"
        args = ["--scope", "target:demo:SQLPROD01"]
        r = runner.invoke(app, ["report", "render", "--out", str(out), "--to", "dba@example.test", *args])
        assert r.exit_code == 0 and "2 attached" in r.output, r.output
        assert box.raw == []  # render never sends
        r = runner.invoke(app, ["report", "send", "--to", "dba@example.test", *args])
        assert r.exit_code == 0, r.output
    finally:
        get_settings.cache_clear()
    assert len(box.raw) == 1

    def stamped(parts: list[tuple[str, str | None, bytes]]) -> list[tuple[str, str | None, bytes]]:
        """The two commands ran a moment apart: the time they were made at is the one difference."""
        stamp = re.compile(rb"(Date: .*|, \d{4}-\d\d-\d\d \d\d:\d\d UTC)")
        return [(t, f, stamp.sub(b"<when>", b)) for t, f, b in parts]

    sent, written = _parts(box.raw[0]), _parts(out.read_bytes())
    assert stamped(written) == stamped(sent)
    names = sorted(f or "" for t, f, _ in sent if f and t != "image/png")
    assert len(names) == 2 and names[0].endswith(".forward.sql") and names[1].endswith(".rollback.sql")
