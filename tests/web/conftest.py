"""A running app (demo fleet, no scheduler) and logged-in clients for each role."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from app.settings import Settings
from app.store.db import Store
from app.store.users import add_user

PASSWORD = "correct horse battery"


def csrf_of(html: str) -> str:
    m = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert m, "page has no CSRF token"
    return m.group(1)


def login(client: TestClient, username: str, password: str = PASSWORD) -> TestClient:
    token = csrf_of(client.get("/login").text)
    r = client.post("/login", data={"username": username, "password": password, "csrf_token": token},
                    follow_redirects=False)  # fmt: skip
    assert r.status_code == 303, r.text
    return client


@pytest.fixture
def web_settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"demo": True, "scheduler_enabled": False, "demo_history_hours": 8})


@pytest.fixture
def app_client(web_settings: Settings) -> Iterator[TestClient]:
    store = Store(web_settings.database_url)
    with store.session() as s:
        for name, role in (("vera", "viewer"), ("abe", "approver"), ("ada", "admin")):
            add_user(s, username=name, password=PASSWORD, role=role, now=datetime.now(UTC))
    store.dispose()
    with TestClient(create_app(web_settings)) as client:
        yield client
