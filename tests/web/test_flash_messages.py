"""Flash messages (issue #33, item 6): a page's confirmation waits in the signed-in login's row of
the store and is shown once, by the next page; no page shows text from the URL any more, so a link
cannot make a signed-in page say "your password expired, call ..."."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy import select

from app.store.models import Recommendation, WebSession
from tests.web.conftest import csrf_of, login

SPOOF = "Your password expired. Call 555-0100 to reset it"


def _first_open(client: TestClient) -> int:
    store = client.app.state.tierwise.store  # type: ignore[attr-defined]
    with store.session() as s:
        rec_id = s.scalar(
            select(Recommendation.id).where(Recommendation.status == "open").order_by(Recommendation.id)
        )
    assert rec_id is not None
    return int(rec_id)


def test_no_signed_in_page_shows_a_message_from_the_url(app_client: TestClient) -> None:
    login(app_client, "ada")
    rec_id = _first_open(app_client)
    pages = ["/recommendations", f"/recommendations/{rec_id}", "/scripts", "/targets", "/account", "/policies",
             "/reports"]  # fmt: skip
    for page in pages:
        r = app_client.get(page, params={"message": SPOOF})
        assert r.status_code == 200, page
        assert "555-0100" not in r.text, page


def test_a_confirmation_is_shown_once_by_the_next_page_and_never_in_the_url(app_client: TestClient) -> None:
    login(app_client, "abe")
    rec_id = _first_open(app_client)
    page = app_client.get(f"/recommendations/{rec_id}").text
    r = app_client.post("/recommendations/review", data={"ids": str(rec_id), "seen": f"{rec_id}:open", "action": "defer",
                        "csrf_token": csrf_of(page), "back": f"/recommendations/{rec_id}"}, follow_redirects=False)  # fmt: skip
    assert r.status_code == 303 and r.headers["location"] == f"/recommendations/{rec_id}"
    shown = app_client.get(r.headers["location"]).text
    assert "defer: 1 recommendation(s) by abe" in shown
    assert (
        "defer: 1 recommendation(s) by abe" not in app_client.get(f"/recommendations/{rec_id}").text
    )  # once


def test_a_confirmation_belongs_to_its_login(app_client: TestClient) -> None:
    """Another login of the same user (another browser) does not see it; logging out drops it."""
    login(app_client, "abe")
    other = TestClient(app_client.app)
    login(other, "abe")
    page = app_client.get("/reports").text
    r = app_client.post("/reports", data={"name": "weekly", "recipients": "dba@example.test",
                        "scope": "fleet", "cron": "weekly", "timezone": "UTC", "format": "html",
                        "csrf_token": csrf_of(page)}, follow_redirects=False)  # fmt: skip
    assert r.status_code == 303 and "message" not in r.headers["location"]
    assert "subscription weekly added" not in other.get("/reports").text
    store = app_client.app.state.tierwise.store  # type: ignore[attr-defined]
    with store.session() as s:  # held in the store, in this login's row only
        waiting = list(s.scalars(select(WebSession.flash).where(WebSession.flash.is_not(None))))
    assert waiting == ["subscription weekly added"]
    assert "subscription weekly added" in app_client.get("/reports").text
