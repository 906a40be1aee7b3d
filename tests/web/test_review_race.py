"""Review transitions are compare-and-set (issue #33, item 3): requests fired at once at one
recommendation, through the real HTTP stack (uvicorn, several clients in threads), on both stores.
Exactly one of each burst wins; every other gets a 409 that names the winner; the audit log
records the winners only and agrees with the final status; one verification per execution."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

import httpx
import pytest
from sqlalchemy import func, select

from app.settings import Settings
from app.store.db import Store
from app.store.models import AuditEvent, Recommendation, Verification
from app.store.tokens import create_token
from app.store.users import add_user
from tests.conftest import live_server
from tests.web.conftest import PASSWORD, csrf_of

CLIENTS = 10


@dataclass
class Server:
    url: str
    store: Store
    token: str


@pytest.fixture
def server(settings: Settings) -> Iterator[Server]:
    cfg = settings.model_copy(update={"demo": True, "scheduler_enabled": False, "demo_history_hours": 8})
    store = Store(cfg.database_url)
    with store.session() as s:
        abe = add_user(s, username="abe", password=PASSWORD, role="approver", now=datetime.now(UTC))
        token = create_token(s, user=abe, name="race", now=datetime.now(UTC))
    try:
        with live_server(cfg) as url:
            yield Server(url, store, token)
    finally:
        store.dispose()


def fire(requests: list[tuple[httpx.Client, str, str, dict[str, object]]]) -> list[httpx.Response]:
    """Send the requests at once, one thread and client each (a barrier lines them up)."""
    barrier = threading.Barrier(len(requests))
    out: list[httpx.Response | None] = [None] * len(requests)

    def one(i: int) -> None:
        client, method, path, kw = requests[i]
        barrier.wait()
        out[i] = client.request(method, path, **kw)  # type: ignore[arg-type]

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(requests))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert all(r is not None for r in out)
    return [r for r in out if r is not None]


def audit_of(store: Store, rec_id: int) -> list[str]:
    with store.session() as s:
        return list(s.scalars(select(AuditEvent.action).where(AuditEvent.subject_type == "recommendation",
                                                              AuditEvent.subject_id == str(rec_id))
                              .order_by(AuditEvent.id)))  # fmt: skip


def status_of(store: Store, rec_id: int) -> str:
    with store.session() as s:
        rec = s.get(Recommendation, rec_id)
        assert rec is not None
        return rec.status


AFTER = {
    "approve": "approved",
    "reject": "rejected",
    "defer": "deferred",
    "reopen": "open",
    "executed": "executed",
}


def first_open(store: Store, *, newest: bool = False) -> int:
    with store.session() as s:
        order = Recommendation.id.desc() if newest else Recommendation.id
        rec_id = s.scalar(
            select(Recommendation.id).where(Recommendation.status == "open").order_by(order).limit(1)
        )
    assert rec_id is not None
    return int(rec_id)


def test_bursts_of_transitions_have_one_winner_each_through_the_api(server: Server) -> None:
    rec_id = first_open(server.store)
    auth = {"Authorization": f"Bearer {server.token}"}
    clients = [httpx.Client(base_url=server.url, headers=auth, timeout=120) for _ in range(CLIENTS)]
    review, executed = f"/api/recommendations/{rec_id}/review", f"/api/recommendations/{rec_id}/executed"
    # each burst from the status the previous left, every request saying the status it saw; kinds
    # mixed where two may race for one status
    bursts = [
        ["approve"] * 5 + ["reject"] * 5,
        ["reopen"] * 10,
        ["defer"] * 5 + ["approve"] * 5,
        ["reopen"] * 10,
        ["approve"] * 5 + ["defer"] * 5,
    ]
    winners: list[str] = []
    try:
        for kinds in bursts:
            seen = status_of(server.store, rec_id)
            body = [{"json": {"action": k, "expected_status": seen}} for k in kinds]
            responses = fire([(c, "POST", review, kw) for c, kw in zip(clients, body, strict=True)])
            outcome = [(k, r.status_code, r.text[:300]) for k, r in zip(kinds, responses, strict=True)]
            won = [k for k, code, _ in outcome if code == 200]
            assert len(won) == 1, outcome  # exactly one transition from the status they all saw
            assert sorted(code for _, code, _ in outcome) == [200] + [409] * (CLIENTS - 1), outcome
            final = status_of(server.store, rec_id)
            assert final == AFTER[won[0]], outcome
            for r in responses:  # the losers are told what the winner did, by whom and when
                if r.status_code == 409:
                    assert re.search(
                        rf"is (already {final}|{final} meanwhile) by abe at \d{{4}}-", r.json()["detail"]
                    )
            winners.append(won[0])
        if status_of(server.store, rec_id) != "approved":  # approved alone, so the executions can race
            assert clients[0].post(review, json={"action": "approve"}).status_code == 200
            winners.append("approve")
        responses = fire([(c, "POST", executed, {"json": {}}) for c in clients])
        assert sorted(r.status_code for r in responses) == [200] + [409] * (CLIENTS - 1), [
            r.text for r in responses
        ]
        assert all("already executed by abe" in r.json()["detail"] for r in responses if r.status_code == 409)
        assert status_of(server.store, rec_id) == "executed"
    finally:
        for c in clients:
            c.close()
    actions = audit_of(server.store, rec_id)
    assert actions == [*winners, "executed"]  # the winners only, in order: the final status is the last
    with server.store.session() as s:
        assert s.scalar(select(func.count()).select_from(Verification)
                        .where(Verification.recommendation_id == rec_id)) == 1  # fmt: skip


def test_without_the_status_seen_each_change_still_starts_from_the_one_before(server: Server) -> None:
    """A caller that does not say what it saw reviews whatever the status is when its turn comes:
    the changes are applied one after the other, each audited from the status the previous left,
    and the log ends with the final status (issue #33: 8 of 10 "won" and the log disagreed)."""
    rec_id = first_open(server.store)
    auth = {"Authorization": f"Bearer {server.token}"}
    clients = [httpx.Client(base_url=server.url, headers=auth, timeout=120) for _ in range(CLIENTS)]
    kinds = ["approve", "reject", "defer", "reopen", "approve"] * 2
    try:
        responses = fire([(c, "POST", f"/api/recommendations/{rec_id}/review", {"json": {"action": k}})
                          for c, k in zip(clients, kinds, strict=True)])  # fmt: skip
    finally:
        for c in clients:
            c.close()
    assert {r.status_code for r in responses} <= {200, 409}
    with server.store.session() as s:
        events = list(s.scalars(select(AuditEvent).where(AuditEvent.subject_id == str(rec_id))
                                .order_by(AuditEvent.id)))  # fmt: skip
    assert len(events) == sum(r.status_code == 200 for r in responses) >= 1
    previous = "open"
    for e in events:  # "... (open -> approved)": a chain, each from the status the previous set
        m = re.search(r"\((\w+) -> (\w+)\)$", e.summary)
        assert m is not None and m.group(1) == previous and m.group(2) == AFTER[e.action], e.summary
        previous = m.group(2)
    assert previous == status_of(server.store, rec_id)


def _signed_in(url: str) -> httpx.Client:
    client = httpx.Client(base_url=url, timeout=120)
    token = csrf_of(client.get("/login").text)
    r = client.post("/login", data={"username": "abe", "password": PASSWORD, "csrf_token": token})
    assert r.status_code == 303, r.text
    return client


def test_a_double_click_on_the_review_page_changes_once_and_the_others_see_409(server: Server) -> None:
    rec_id = first_open(server.store, newest=True)
    clients = [_signed_in(server.url) for _ in range(CLIENTS)]
    try:
        forms = []
        for i, c in enumerate(clients):  # ten reviewers, each with the page open (showing "open")
            page = c.get(f"/recommendations/{rec_id}").text
            assert f'name="seen" value="{rec_id}:open"' in page
            data = {"ids": str(rec_id), "seen": f"{rec_id}:open", "action": "approve" if i % 2 == 0 else "reject",
                    "csrf_token": csrf_of(page), "back": f"/recommendations/{rec_id}"}  # fmt: skip
            forms.append(
                (c, "POST", "/recommendations/review", {"data": data, "headers": {"Accept": "text/html"}})
            )
        responses = fire(forms)
    finally:
        for c in clients:
            c.close()
    assert sorted(r.status_code for r in responses) == [303] + [409] * (CLIENTS - 1)
    actions = audit_of(server.store, rec_id)
    final = status_of(server.store, rec_id)
    assert len(actions) == 1 and AFTER[actions[0]] == final
    for r in responses:
        if r.status_code == 409:  # the page says who won, and that nothing of this review was kept
            assert f"already {final} by abe" in r.text or f"{final} meanwhile by abe" in r.text
            assert "nothing was changed" in r.text
