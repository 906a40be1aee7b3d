"""The report lists what fits in the next change window, and leaves suppressed advice out (real SMTP
server on loopback, demo fleet, SQLite and PostgreSQL)."""

from __future__ import annotations

import email
import email.policy
from collections.abc import Iterator
from datetime import timedelta
from email.message import EmailMessage
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from sqlalchemy import select

from app.demo import ensure_demo_fleet
from app.evaluate import evaluate
from app.mail.content import Scope
from app.mail.service import compose, deliver
from app.secrets import Vault
from app.settings import Settings
from app.store.db import Store
from app.store.models import Recommendation
from app.store.recommendations import review
from app.store.suppressions import suppress
from policies.loader import load_policy
from tests.conftest import free_port
from tests.mail.test_reports import NOW, mail_settings  # NOW is a Friday: the next window is Saturday

NEXT = "Saturday 2026-11-21 01:00–05:00 UTC"


class Keep:
    def __init__(self) -> None:
        self.messages: list[EmailMessage] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        message = email.message_from_bytes(envelope.content, policy=email.policy.default)
        assert isinstance(message, EmailMessage)
        self.messages.append(message)
        return "250 OK"


@pytest.fixture
def inbox_port() -> Iterator[tuple[Keep, int]]:
    inbox, port = Keep(), free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield inbox, port
    finally:
        controller.stop()


@pytest.fixture
def fleet(store: Store, vault: Vault, settings: Settings) -> Store:
    ensure_demo_fleet(store, vault, settings, now=NOW)
    evaluate(store, load_policy(), now=NOW)
    return store


def _by_saving(recs: list[Recommendation]) -> list[Recommendation]:
    return sorted(recs, key=lambda r: (r.io_ms_per_s_now or 0) - (r.io_ms_per_s_after or 0), reverse=True)


def test_report_lists_the_next_window_and_leaves_suppressed_out(
    fleet: Store, settings: Settings, inbox_port: tuple[Keep, int]
) -> None:
    inbox, port = inbox_port
    with fleet.session() as s:
        recs = _by_saving(
            [
                r
                for r in s.scalars(select(Recommendation).where(Recommendation.status == "open"))
                if r.size_bytes
            ]
        )
        assert len(recs) >= 3
        approve, hide = recs[:2], recs[2]
        for r in approve:
            review(s, r.id, action="approve", username="abe", comment=None, now=NOW - timedelta(hours=1))
        suppress(s, hide.id, reason="vendor moves it", expires_at=NOW + timedelta(days=7), username="abe",
                 now=NOW - timedelta(hours=1))  # fmt: skip
        approved_names = [r.name for r in approve]
        hidden = (hide.id, hide.name)
        open_left = len(recs) - 3
    cfg = mail_settings(settings, port)
    msg, content = compose(fleet, cfg, Scope("fleet"), ["dba@example.test"], now=NOW)
    assert deliver(fleet, cfg, msg, now=NOW).ok
    received = inbox.messages[0]
    text = received.get_body(preferencelist=("plain",)).get_content()  # type: ignore[union-attr]
    html = received.get_body(preferencelist=("html",)).get_content()  # type: ignore[union-attr]

    assert content.next_window == NEXT
    assert len(content.next_window_moves) == 2
    for name, line in zip(approved_names, content.next_window_moves, strict=True):  # biggest saving first
        assert line.startswith(f"{name} ") and f"; fits {NEXT} (" in line
    assert f"Fits in the next change window: {NEXT}" in text
    assert f"  1. {content.next_window_moves[0]}" in text and f"  2. {content.next_window_moves[1]}" in text
    assert f"Fits in the next change window: {NEXT}" in html and approved_names[0] in html
    # the suppressed one is left out of the counts and the top list, and counted as suppressed
    assert content.counts["suppressed"] == 1 and content.counts["open"] == open_left
    assert hidden[0] not in [r.id for r in content.top]
    assert f"#{hidden[0]} " not in text and ", suppressed 1" in text
    # once it expires it is back, with no job run
    later = NOW + timedelta(days=8)
    _, again = compose(fleet, cfg, Scope("fleet"), ["dba@example.test"], now=later)
    assert again.counts["suppressed"] == 0 and again.counts["open"] == open_left + 1
    assert hidden[0] in [r.id for r in again.top]


def test_no_approved_moves_says_so(fleet: Store, settings: Settings, inbox_port: tuple[Keep, int]) -> None:
    _, port = inbox_port
    msg, content = compose(fleet, mail_settings(settings, port), Scope("fleet"), ["x@example.test"], now=NOW)
    assert content.next_window == NEXT and content.next_window_moves == ()
    text = msg.get_body(preferencelist=("plain",)).get_content()  # type: ignore[union-attr]
    assert f"Fits in the next change window: {NEXT}\n  no approved move is planned in it" in text
