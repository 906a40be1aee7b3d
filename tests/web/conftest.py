"""A running app (demo fleet, no scheduler) and logged-in clients for each role."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from app.demo import ensure_demo_fleet, ensure_demo_user
from app.main import create_app
from app.secrets import Vault
from app.settings import Settings
from app.store.db import Store
from app.store.models import Target, User
from app.store.users import add_user
from tests.store_templates import StoreTemplates, Template

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


USERS = (("vera", "viewer"), ("abe", "approver"), ("ada", "admin"))
# The demo template's key: the targets' connection strings (which carry the demo's origin) are
# encrypted with it, so a test's app reads them only with this key in its key file.
DEMO_KEY = Fernet.generate_key()


def add_users(store: Store, now: datetime) -> None:
    """The three logins of the web tests, one per role."""
    with store.session() as s:
        for name, role in USERS:
            add_user(s, username=name, password=PASSWORD, role=role, now=now)


def _demo_template(templates: StoreTemplates, settings: Settings) -> Template:
    """The store as app_client's start leaves it before the advice runs: the users, then the
    demo fleet with its history up to now, then the demo login; built once per session and hour.

    The demo's history starts at the whole hour `demo_history_hours` before now, so a template
    built in this wall-clock hour holds the very samples a fresh start would write (the app's
    start fills the steps since it was built). In the next hour it is built again."""
    built_in = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    key = (settings.demo_history_hours, settings.demo_step_s, settings.demo_poll_interval_s)
    backend = "sqlite" if settings.database_url.startswith("sqlite") else "postgresql"

    def populate(store: Store) -> None:
        now = datetime.now(UTC)
        add_users(store, now)
        ensure_demo_fleet(store, Vault(DEMO_KEY), settings, now=now)
        ensure_demo_user(store)

    template = templates.populated(backend, key, populate)
    if template.built_at.replace(minute=0, second=0, microsecond=0) != built_in:
        template = templates.populated(backend, key, populate, fresh=False)
    return template


def _load_demo_from_template(templates: StoreTemplates, settings: Settings) -> bool:
    """Fill the test's (migrated, untouched) store from the demo template and give the test's key
    file the template's key. False, and nothing done, where the template would not be what a fresh
    start builds: not the demo, a key of the test's own, or a store something already wrote to."""
    key_file = Path(settings.secret_key_file)
    if not settings.demo or settings.secret_key or key_file.exists():
        return False
    store = Store(settings.database_url, migrate=False)
    try:
        with store.session() as s:
            written = s.scalar(select(func.count(User.id))) or s.scalar(select(func.count(Target.id)))
    finally:
        store.dispose()
    if written:
        return False
    templates.clone_into(_demo_template(templates, settings), settings.database_url)
    key_file.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # as app.secrets.load_key
    with os.fdopen(fd, "wb") as fh:
        fh.write(DEMO_KEY)
    return True


@pytest.fixture
def app_client(web_settings: Settings, store_templates: StoreTemplates) -> Iterator[TestClient]:
    """The app on the demo fleet with the three users, as it starts: the store comes from the
    session's demo template (tests/store_templates.py) when it can; the start still fills the
    latest steps and runs the advice, as on a fresh store."""
    if not _load_demo_from_template(store_templates, web_settings):
        store = Store(web_settings.database_url)
        add_users(store, datetime.now(UTC))
        store.dispose()
    with TestClient(create_app(web_settings)) as client:
        yield client
