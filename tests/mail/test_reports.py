"""Report emails against a real SMTP server on loopback (aiosmtpd): content, retries, schedules."""

from __future__ import annotations

import email
import email.policy
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from sqlalchemy import select

from advisors.quantities import gb as size_gb
from advisors.quantities import io_wait, money
from app.demo import ensure_demo_fleet
from app.evaluate import evaluate
from app.mail.attachment import Attachment
from app.mail.content import Scope, gather
from app.mail.service import compose, deliver, due, run_due, trigger_for
from app.secrets import Vault
from app.settings import Settings
from app.store.db import Store
from app.store.models import Delivery, Recommendation, ReportSubscription
from policies.loader import load_policy
from tests.conftest import free_port

NOW = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


class Inbox:
    """An aiosmtpd handler that keeps what it receives; it can refuse the first N attempts."""

    def __init__(self, refuse_first: int = 0) -> None:
        self.refuse_first = refuse_first
        self.attempts = 0
        self.messages: list[EmailMessage] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.attempts += 1
        if self.attempts <= self.refuse_first:
            return "451 4.3.0 try again later"
        message = email.message_from_bytes(envelope.content, policy=email.policy.default)
        assert isinstance(message, EmailMessage)
        self.messages.append(message)
        return "250 OK"


@pytest.fixture
def smtp() -> Iterator[tuple[Inbox, int]]:
    inbox, port = Inbox(), free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield inbox, port
    finally:
        controller.stop()


@pytest.fixture
def demo_store(store: Store, vault: Vault, settings: Settings) -> Store:
    ensure_demo_fleet(store, vault, settings, now=NOW)
    evaluate(store, load_policy(), now=NOW)
    return store


def mail_settings(settings: Settings, port: int, **kw: Any) -> Settings:
    return settings.model_copy(update={"smtp_host": "127.0.0.1", "smtp_port": port, "smtp_from": "tierwise@example.test",
                                       "smtp_backoff_s": 0.01, "smtp_attempts": 3, "smtp_timeout_s": 5, **kw})  # fmt: skip


def test_scheduled_run_delivers_one_message_with_both_parts_images_and_attachments(
    demo_store: Store, settings: Settings, smtp: tuple[Inbox, int]
) -> None:
    inbox, port = smtp
    cfg = mail_settings(settings, port)
    with demo_store.session() as s:
        s.add(ReportSubscription(name="weekly", recipients="dba@example.test, boss@example.test", scope="fleet",
                                 cron="0 7 * * *", timezone="UTC", enabled=True, created_by="ada",
                                 created_at=NOW - timedelta(days=2)))  # fmt: skip
    scripts = [
        Attachment("move_FG_HOT_INDEX.sql", b"-- forward\nSELECT 1;\n"),
        Attachment("rollback.sql", b"SELECT 2;\n"),
    ]
    sent = run_due(demo_store, cfg, now=NOW, attachments_for=lambda scope: scripts)
    assert [x.ok for x in sent] == [True]
    assert len(inbox.messages) == 1
    msg = inbox.messages[0]
    assert msg["To"] == "dba@example.test, boss@example.test"
    text = msg.get_body(preferencelist=("plain",))
    html = msg.get_body(preferencelist=("html",))
    assert text is not None and html is not None
    html_text = html.get_content()
    images = [p for p in msg.walk() if p.get_content_type() == "image/png"]
    assert len(images) == 2
    for img in images:
        cid = img["Content-ID"].strip("<>")
        assert f"cid:{cid}" in html_text
        assert img.get_payload(decode=True)[:8] == b"\x89PNG\r\n\x1a\n"
    names = sorted(p.get_filename() for p in msg.iter_attachments() if p.get_filename())
    assert names == ["move_FG_HOT_INDEX.sql", "rollback.sql"]
    assert "http" not in html_text.replace(cfg.base_url, "")  # no external resources
    # sent once: a second run at the same time finds nothing due
    assert run_due(demo_store, cfg, now=NOW + timedelta(minutes=1)) == []
    with demo_store.session() as s:
        d = s.scalar(select(Delivery))
        assert d is not None and d.status == "sent" and d.attempts == 1


def test_numbers_in_the_mail_equal_the_advisors(demo_store: Store, settings: Settings) -> None:
    msg, content = compose(demo_store, settings, Scope.parse("fleet"), ["x@example.test"], now=NOW)
    with demo_store.session() as s:
        live = list(s.scalars(select(Recommendation).where(Recommendation.status.in_(("open", "approved")))))
    saving = sum(max((r.io_ms_per_s_now or 0) - (r.io_ms_per_s_after or 0), 0) for r in live)
    assert content.counts["open"] == len(live) > 0
    assert content.predicted_saving_ms_per_s == pytest.approx(saving)
    text = msg.get_body(preferencelist=("plain",)).get_content()  # type: ignore[union-attr]
    assert f"open {len(live)}," in text
    assert f"if open and approved moves are made: {io_wait(saving)} of I/O wait" in text
    best = max(live, key=lambda r: (r.io_ms_per_s_now or 0) - (r.io_ms_per_s_after or 0))
    assert f"#{best.id} {best.server}" in text and best.evidence["reasons"][0] in text
    # moves to cheaper tiers are worth the GB and cost they free, not "saves 0.0 ms/s"
    down = [r for r in live if r.evidence["decision"]["numbers"].get("gb_freed")]
    assert down, "the demo's cold months and history table spaces move down"
    gb = sum(r.evidence["decision"]["numbers"]["gb_freed"] for r in down)
    cost = sum(r.evidence["decision"]["numbers"]["cost_freed"] for r in down)
    assert (content.gb_freed, content.cost_freed) == (pytest.approx(gb), pytest.approx(cost))
    assert (
        f"moves to cheaper tiers free: {size_gb(gb)} of dearer storage, worth {money(cost, 'USD')} at" in text
    )


def test_refused_then_accepted_is_delivered_once(demo_store: Store, settings: Settings) -> None:
    inbox, port = Inbox(refuse_first=1), free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        cfg = mail_settings(settings, port)
        msg, _ = compose(demo_store, cfg, Scope("fleet"), ["dba@example.test"], now=NOW)
        result = deliver(demo_store, cfg, msg, now=NOW)
    finally:
        controller.stop()
    assert result.ok and len(inbox.messages) == 1 and inbox.attempts == 2
    with demo_store.session() as s:
        d = s.get(Delivery, result.delivery_id)
        assert d is not None and (d.status, d.attempts) == ("sent", 2)


def test_server_down_leaves_a_failed_delivery_and_no_crash(demo_store: Store, settings: Settings) -> None:
    cfg = mail_settings(settings, free_port(), smtp_password="hunter2hunter2")
    waits: list[float] = []
    msg, _ = compose(demo_store, cfg, Scope("fleet"), ["dba@example.test"], now=NOW)
    result = deliver(demo_store, cfg, msg, now=NOW, sleep=waits.append)
    assert not result.ok and waits == [0.01, 0.02]  # retried with back-off, then given up
    with demo_store.session() as s:
        d = s.get(Delivery, result.delivery_id)
        assert (
            d is not None
            and d.status == "failed"
            and d.attempts == 3
            and "Connection refused" in (d.error or "")
        )


def test_missed_runs_are_owed_once() -> None:
    sub = ReportSubscription(name="w", recipients="a@b.c", scope="fleet", cron="weekly", timezone="Europe/Berlin",
                             enabled=True, created_by="x", created_at=datetime(2026, 11, 1, tzinfo=UTC))  # fmt: skip
    # Mondays 07:00 Berlin = 06:00 UTC; down for two weeks: one run is owed, not two
    assert due(sub, datetime(2026, 11, 20, tzinfo=UTC))
    sub.last_run_at = datetime(2026, 11, 20, tzinfo=UTC)
    assert not due(sub, datetime(2026, 11, 23, 5, 59, tzinfo=UTC))
    assert due(sub, datetime(2026, 11, 23, 6, 0, tzinfo=UTC))
    # crontab numbering: 1 = Monday, 0 and 7 = Sunday
    monday = trigger_for("30 6 * * 1", "UTC").get_next_fire_time(None, datetime(2026, 11, 21, tzinfo=UTC))
    sunday = trigger_for("30 6 * * 0", "UTC").get_next_fire_time(None, datetime(2026, 11, 21, tzinfo=UTC))
    assert monday is not None and monday.date().isoformat() == "2026-11-23"
    assert sunday is not None and sunday.date().isoformat() == "2026-11-22"
    with pytest.raises(Exception, match="unknown time zone"):
        trigger_for("daily", "Mars/Olympus")
    with pytest.raises(Exception, match="not a cron expression"):
        trigger_for("every tuesday", "UTC")


def test_scope_filters_content(demo_store: Store) -> None:
    with demo_store.session() as s:
        fleet = gather(s, Scope.parse("fleet"), now=NOW)
        one = gather(s, Scope.parse("target:demo:DB2PROD01"), now=NOW)
        db = gather(s, Scope.parse("database:demo:SQLPROD01/Sales"), now=NOW)
    assert 0 < one.read_iops < fleet.read_iops
    assert all(r.server == "DB2PROD01" for r in one.top)
    assert all(r.database == "Sales" for r in db.top)
    with pytest.raises(ValueError, match="scope must be"):
        Scope.parse("server")


def test_cli_render_and_send(tmp_path: Any, monkeypatch: pytest.MonkeyPatch, smtp: tuple[Inbox, int]) -> None:
    from typer.testing import CliRunner

    from app.cli import app
    from app.settings import get_settings

    inbox, port = smtp
    monkeypatch.setenv("TIERWISE_DATABASE_URL", f"sqlite:///{tmp_path / 'tw.db'}")
    monkeypatch.setenv("TIERWISE_SECRET_KEY_FILE", str(tmp_path / "tw.key"))
    monkeypatch.setenv("TIERWISE_SMTP_HOST", "127.0.0.1")
    monkeypatch.setenv("TIERWISE_SMTP_PORT", str(port))
    get_settings.cache_clear()
    try:
        runner = CliRunner()
        out = tmp_path / "report.eml"
        r = runner.invoke(app, ["report", "render", "--out", str(out), "--to", "dba@example.test"])
        assert r.exit_code == 0, r.output
        parsed = email.message_from_bytes(out.read_bytes(), policy=email.policy.default)
        assert parsed["To"] == "dba@example.test" and parsed.get_body(preferencelist=("html",)) is not None
        assert inbox.messages == []  # render never sends
        r = runner.invoke(app, ["report", "send", "--to", "ops@example.test"])
        assert r.exit_code == 0 and "sent to ops@example.test" in r.output
        assert [m["To"] for m in inbox.messages] == ["ops@example.test"]
        r = runner.invoke(app, ["report", "send", "--to", "not-an-address"])
        assert r.exit_code == 2 and "recipients must be e-mail addresses" in r.output
    finally:
        get_settings.cache_clear()


def test_ilm_moves_due_are_in_the_report(demo_store: Store, settings: Settings) -> None:
    msg, content = compose(demo_store, settings, Scope.parse("fleet"), ["x@example.test"], now=NOW)
    assert content.ilm_due, "the demo's Orders plan moves partitions this month"
    text = msg.get_body(preferencelist=("plain",)).get_content()  # type: ignore[union-attr]
    label, when, tier = content.ilm_due[0]
    assert "Partition moves due in the next month" in text and f"{when}  {label} -> {tier}" in text


def test_scheduled_report_attaches_the_approved_scripts(
    demo_store: Store, settings: Settings, smtp: tuple[Inbox, int]
) -> None:
    from app.store.recommendations import review

    inbox, port = smtp
    with demo_store.session() as s:
        rec = s.scalar(select(Recommendation).where(Recommendation.name == "FG_HOT_INDEX"))
        assert rec is not None
        review(s, rec.id, action="approve", username="abe", comment=None, now=NOW)
        s.add(ReportSubscription(name="daily", recipients="dba@example.test", scope="target:demo:SQLPROD01",
                                 cron="daily", timezone="UTC", enabled=True, created_by="abe",
                                 created_at=NOW - timedelta(days=1)))  # fmt: skip
    sent = run_due(demo_store, mail_settings(settings, port), now=NOW)
    assert [x.ok for x in sent] == [True]
    files = sorted(p.get_filename() or "" for p in inbox.messages[0].iter_attachments())
    assert len(files) == 2 and files[0].endswith(".forward.sql") and files[1].endswith(".rollback.sql")
    forward = next(
        p for p in inbox.messages[0].iter_attachments() if (p.get_filename() or "").endswith(".forward.sql")
    )
    assert "FG_HOT_INDEX" in forward.get_content()


def test_text_format_subscription_sends_plain_text_only(
    demo_store: Store, settings: Settings, smtp: tuple[Inbox, int]
) -> None:
    inbox, port = smtp
    with demo_store.session() as s:
        s.add(ReportSubscription(name="plain", recipients="ops@example.test", scope="fleet", cron="daily",
                                 timezone="UTC", format="text", enabled=True, created_by="abe",
                                 created_at=NOW - timedelta(days=1)))  # fmt: skip
    assert [
        x.ok
        for x in run_due(demo_store, mail_settings(settings, port), now=NOW, attachments_for=lambda _: [])
    ] == [True]
    msg = inbox.messages[0]
    assert msg.get_body(preferencelist=("html",)) is None
    assert not [p for p in msg.walk() if p.get_content_type() == "image/png"]
    assert "Top recommendations" in msg.get_body(preferencelist=("plain",)).get_content()  # type: ignore[union-attr]
