"""One subscription's failure never stops the others (issue #33, item 2), and a stopping service
does not wait out the SMTP retries: unsent reports stay queued and go at the next start (item 6).
Against a real SMTP server (aiosmtpd) and both stores."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta

import pytest
from aiosmtpd.controller import Controller
from sqlalchemy import select, update

from app.mail.attachment import Attachment
from app.mail.scope import Scope
from app.mail.send import MailStop
from app.mail.service import Sent, run_due
from app.settings import Settings
from app.store.db import Store
from app.store.models import Delivery, ReportSubscription, Target
from tests.conftest import free_port
from tests.mail.test_reports import NOW, Inbox, mail_settings

EVIL = "SQLPROD\r\nX-Injected: 1"


def subscribe(store: Store, name: str, scope: str, *, timezone: str = "UTC") -> int:
    with store.session() as s:
        sub = ReportSubscription(name=name, recipients=f"{name}@example.test", scope=scope, cron="0 7 * * *",
                                 timezone=timezone, enabled=True, created_by="ada",
                                 created_at=NOW - timedelta(days=2))  # fmt: skip
        s.add(sub)
        s.flush()
        return sub.id


def deliveries(store: Store) -> dict[int | None, Delivery]:
    with store.session() as s:
        return {d.subscription_id: d for d in s.scalars(select(Delivery).order_by(Delivery.id))}


def rename_first_target(store: Store, name: str) -> None:
    """A name stored before names were checked (import refuses it now): set in the store directly."""
    with store.session() as s:
        first = s.scalar(select(Target.id).order_by(Target.id).limit(1))
        s.execute(update(Target).where(Target.id == first).values(name=name))


def test_a_target_named_with_a_line_break_gets_its_report_and_stops_no_other(
    demo_store: Store, settings: Settings, smtp: tuple[Inbox, int]
) -> None:
    inbox, port = smtp
    rename_first_target(demo_store, EVIL)
    first = subscribe(demo_store, "first", "fleet")
    evil = subscribe(demo_store, "evil", f"target:{EVIL}")
    last = subscribe(demo_store, "last", "fleet")
    sent = run_due(demo_store, mail_settings(settings, port), now=NOW, attachments_for=lambda scope: [])
    assert [x.ok for x in sent] == [True, True, True]
    got = {m["To"]: m for m in inbox.messages}
    assert set(got) == {"first@example.test", "evil@example.test", "last@example.test"}
    subject = str(got["evil@example.test"]["Subject"])
    assert "SQLPROD\\r\\nX-Injected: 1" in subject  # written visibly, on one line
    assert all(m["X-Injected"] is None for m in inbox.messages)  # nothing injected
    by_sub = deliveries(demo_store)
    assert {by_sub[i].status for i in (first, evil, last)} == {"sent"}


def test_a_report_that_cannot_be_composed_is_recorded_and_the_others_are_sent(
    demo_store: Store, settings: Settings, smtp: tuple[Inbox, int]
) -> None:
    inbox, port = smtp
    broken = subscribe(demo_store, "broken", "fleet")
    lost_zone = subscribe(demo_store, "lostzone", "fleet", timezone="Mars/Olympus_Mons")
    fine = subscribe(demo_store, "fine", "fleet")

    def scripts(scope: Scope) -> Sequence[Attachment]:  # the first report's scripts cannot be read
        if not inbox.messages and not getattr(scripts, "failed", False):
            scripts.failed = True  # type: ignore[attr-defined]
            raise RuntimeError("script store unreadable for this scope")
        return []

    sent = run_due(demo_store, mail_settings(settings, port), now=NOW, attachments_for=scripts)
    assert (sent[0].ok, sent[0].error) == (False, "RuntimeError: script store unreadable for this scope")
    assert [m["To"] for m in inbox.messages] == ["fine@example.test"]
    by_sub = deliveries(demo_store)
    assert by_sub[broken].status == "failed" and "not composed: RuntimeError" in (by_sub[broken].error or "")
    assert by_sub[fine].status == "sent"
    assert lost_zone not in by_sub  # its schedule cannot be read: logged and skipped, nobody else stopped
    with demo_store.session() as s:  # the failed one is marked run (recorded, not retried each minute)
        assert s.get(ReportSubscription, broken).last_run_at == NOW  # type: ignore[union-attr]
    assert run_due(demo_store, mail_settings(settings, port), now=NOW + timedelta(minutes=1)) == []


def _run_in_thread(store: Store, cfg: Settings, stop: MailStop) -> tuple[threading.Thread, list[Sent]]:
    out: list[Sent] = []
    thread = threading.Thread(
        target=lambda: out.extend(run_due(store, cfg, now=NOW, attachments_for=lambda scope: [], stop=stop))
    )
    thread.start()
    return thread, out


def _wait(cond: object, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not cond():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_stopping_ends_the_retries_at_once_and_the_next_start_sends_the_queued_report(
    demo_store: Store, settings: Settings
) -> None:
    refusing, port = Inbox(refuse_first=10**6), free_port()
    controller = Controller(refusing, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        sub = subscribe(demo_store, "queued", "fleet")
        cfg = mail_settings(settings, port, smtp_backoff_s=30.0, smtp_attempts=4)  # 3.5 minutes of retries
        stop = MailStop()
        thread, out = _run_in_thread(demo_store, cfg, stop)
        _wait(lambda: refusing.attempts >= 1)
        started = time.monotonic()
        stop.set()
        thread.join(timeout=10)
        # bounded by the stop, not by the retries (3.5 minutes of them before): a generous bound
        assert not thread.is_alive() and time.monotonic() - started < 20
    finally:
        controller.stop()
    assert [(x.ok, x.queued) for x in out] == [(False, True)]
    queued = deliveries(demo_store)[sub]
    assert queued.status == "pending" and queued.attempts == 1
    with demo_store.session() as s:
        raw = s.scalar(select(Delivery.message).where(Delivery.id == queued.id))
    assert raw and b"Message-ID:" in raw

    inbox, port = Inbox(), free_port()  # the next start: the SMTP server answers again
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        sent = run_due(demo_store, mail_settings(settings, port), now=NOW + timedelta(minutes=5))
    finally:
        controller.stop()
    assert [x.ok for x in sent] == [True]  # the queued one, sent once; the subscription is not due again
    assert len(inbox.messages) == 1 and inbox.messages[0]["Message-ID"] == queued.message_id
    done = deliveries(demo_store)[sub]
    assert (done.id, done.status, done.attempts) == (queued.id, "sent", 2)
    with demo_store.session() as s:
        assert s.scalar(select(Delivery.message).where(Delivery.id == queued.id)) is None


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A server that accepts connections and never says a word (a hung SMTP relay)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    conns: list[socket.socket] = []
    accepting = threading.Thread(target=lambda: conns.append(srv.accept()[0]), daemon=True)
    accepting.start()
    try:
        yield int(srv.getsockname()[1])
    finally:
        for c in conns:
            c.close()
        srv.close()


def test_stopping_hangs_up_a_connection_the_smtp_server_never_answers(
    demo_store: Store, settings: Settings, silent_server: int
) -> None:
    sub = subscribe(demo_store, "hung", "fleet")
    cfg = mail_settings(settings, silent_server, smtp_timeout_s=120, smtp_attempts=4)
    stop = MailStop()
    thread, out = _run_in_thread(demo_store, cfg, stop)
    time.sleep(1.0)  # connected, waiting for the greeting that never comes
    assert thread.is_alive()
    started = time.monotonic()
    stop.set()
    thread.join(timeout=10)
    assert (
        not thread.is_alive() and time.monotonic() - started < 20
    )  # bounded by the stop, not 3.5 minutes of retries
    assert [x.queued for x in out] == [True]
    assert deliveries(demo_store)[sub].status == "pending"


def test_the_scheduler_stops_in_seconds_while_a_report_retries_and_leaves_it_queued(
    store: Store, settings: Settings
) -> None:
    from app.jobs import Runtime, Scheduler
    from app.secrets import Vault, load_key

    refusing, port = Inbox(refuse_first=10**6), free_port()
    controller = Controller(refusing, hostname="127.0.0.1", port=port)
    controller.start()
    cfg = mail_settings(settings, port, smtp_backoff_s=30.0, smtp_attempts=4)  # 3.5 minutes of retries
    with store.session() as s:
        s.add(ReportSubscription(name="weekly", recipients="dba@example.test", scope="fleet", cron="* * * * *",
                                 timezone="UTC", enabled=True, created_by="ada",
                                 created_at=datetime.now(UTC) - timedelta(days=1)))  # fmt: skip
    scheduler = Scheduler(Runtime(store, Vault(load_key(cfg)), cfg))
    try:
        assert scheduler.start()
        _wait(lambda: refusing.attempts >= 1, timeout=60)  # the reports job runs at start
        started = time.monotonic()
        scheduler.shutdown()
        assert time.monotonic() - started < 30  # the retries alone would take 3.5 minutes
    finally:
        controller.stop()
    with store.session() as s:
        [d] = s.scalars(select(Delivery))
        assert (d.status, d.attempts) == ("pending", 1)
        assert s.scalar(select(Delivery.message).where(Delivery.id == d.id))
