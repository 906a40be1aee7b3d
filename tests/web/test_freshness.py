"""Old data and short history are said everywhere a figure is shown: the banner of every page, the
target page and the API (#17 items 2 and 4)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from cryptography.fernet import Fernet
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.demo import ensure_demo_fleet
from app.evaluate import DataEnd, evaluate
from app.freshness import data_end_note, history_span, hours_of_history, short_history_note
from app.main import create_app
from app.secrets import Vault
from app.settings import Settings
from app.store.db import Store
from app.store.models import Target
from app.store.users import add_user
from policies.loader import load_policy
from tests.web.conftest import PASSWORD, login

T0 = datetime(2026, 10, 20, 9, 0, tzinfo=UTC)


def test_hours_of_history_and_its_warning() -> None:
    assert hours_of_history(T0, T0 + timedelta(hours=1)) == 1.0
    assert hours_of_history(None, T0) is None
    assert short_history_note(1.0) == "1 hour of data: figures are a sample"
    assert short_history_note(5.4) == "5 hours of data: figures are a sample"
    assert short_history_note(0.25) == "15 minutes of data: figures are a sample"
    assert short_history_note(24.0) is None and short_history_note(None) is None


def test_the_data_end_note_is_found_among_the_snapshot_notes() -> None:
    note = DataEnd(1, T0).note(T0 + timedelta(days=33), 7)
    assert data_end_note(["placement optimal", note]) == note
    assert data_end_note(["placement optimal"]) is None and data_end_note(None) is None


def _client(settings: Settings, store: Store) -> TestClient:
    with store.session() as s:
        add_user(s, username="vera", password=PASSWORD, role="viewer", now=datetime.now(UTC))
    return TestClient(create_app(settings.model_copy(update={"scheduler_enabled": False})))


@pytest.fixture
def old_fleet(store: Store, settings: Settings) -> Iterator[TestClient]:
    """The demo fleet as if its files were collected 33 days ago, evaluated now."""
    collected = (datetime.now(UTC) - timedelta(days=33)).replace(minute=0, second=0, microsecond=0)
    ensure_demo_fleet(store, Vault(Fernet.generate_key()), settings.model_copy(update={"demo_history_hours": 12}),
                      now=collected)  # fmt: skip
    evaluate(store, load_policy(), now=datetime.now(UTC))
    with _client(settings, store) as client:
        yield login(client, "vera")


def test_every_page_shows_the_data_end_banner(old_fleet: TestClient) -> None:
    for path in ("/", "/recommendations", "/heatmap", "/account"):
        r = old_fleet.get(path)
        assert r.status_code == 200, path
        assert 'id="data-end-banner"' in r.text and "33 days old" in r.text, path


def test_target_page_says_which_window_it_shows(old_fleet: TestClient, store: Store) -> None:
    with store.session() as s:
        target_id = s.scalar(select(Target.id).order_by(Target.id).limit(1))
    r = old_fleet.get(f"/targets/{target_id}")
    assert r.status_code == 200
    assert 'id="data-note"' in r.text and "judged on the 7-day window ending at the newest sample" in r.text
    assert "I/O over the 24 hours ending at the newest sample" in r.text
    with store.session() as s:
        hours = hours_of_history(*history_span(s, target_id or 0))
    assert hours is not None and 12 <= hours < 13  # the demo starts its history on the hour
    assert 'id="history-note"' in r.text and f"{short_history_note(hours)}" in r.text
    assert "hours of data: figures are a sample" in r.text


def test_api_rows_carry_data_end_and_note(old_fleet: TestClient, store: Store) -> None:
    with store.session() as s:
        first, last = history_span(s, s.scalar(select(Target.id).order_by(Target.id).limit(1)) or 0)
    assert first is not None and last is not None and last < datetime.now(UTC) - timedelta(days=32)
    targets = old_fleet.get("/api/targets").json()
    assert targets and all(t["data_note"] and "33 days old" in t["data_note"] for t in targets)
    assert all(
        datetime.fromisoformat(t["data_end"]) < datetime.now(UTC) - timedelta(days=32) for t in targets
    )
    recs = old_fleet.get("/api/recommendations").json()["items"]
    assert recs and all(r["data_note"] and r["data_end"] for r in recs)


def test_fresh_data_has_no_banner_and_short_history_warns(store: Store, settings: Settings) -> None:
    ensure_demo_fleet(
        store, Vault(Fernet.generate_key()), settings.model_copy(update={"demo_history_hours": 1})
    )
    evaluate(store, load_policy(), now=datetime.now(UTC))
    with store.session() as s:
        target_id = s.scalar(select(Target.id).order_by(Target.id).limit(1))
    with _client(settings, store) as client:
        login(client, "vera")
        fleet = client.get("/")
        assert fleet.status_code == 200 and 'id="data-end-banner"' not in fleet.text
        with store.session() as s:
            note = short_history_note(hours_of_history(*history_span(s, target_id or 0)))
        assert note is not None and note.endswith(" of data: figures are a sample")
        page = client.get(f"/targets/{target_id}")
        assert note in page.text and 'id="data-note"' not in page.text
        assert "I/O over the last 24 hours" in page.text
        rows = client.get("/api/targets").json()
        assert rows and all(r["data_note"] is None and r["data_end"] for r in rows)
