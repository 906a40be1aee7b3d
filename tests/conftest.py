"""Shared fixtures: every store test runs against SQLite and a real PostgreSQL."""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from sqlalchemy import create_engine, text

from app.secrets import Vault
from app.settings import Settings
from app.store.db import Store
from tests.store_templates import StoreTemplates

if TYPE_CHECKING:
    from fastapi import FastAPI

POSTGRES_URL = os.environ.get(
    "TIERWISE_TEST_POSTGRES_URL", "postgresql+psycopg://postgres:postgres@127.0.0.1:5432/postgres"
)
FIXTURES = Path(__file__).parent / "fixtures"


def pytest_configure(config: pytest.Config) -> None:
    """No test writes into the user's own data directory, where the default store and key live
    (app.settings.data_dir): the session gets a fresh one, for its subprocesses too (platformdirs
    takes XDG_DATA_HOME on Linux)."""
    home = tempfile.mkdtemp(prefix="tierwise-test-data-")
    os.environ["XDG_DATA_HOME"] = home
    config.add_cleanup(lambda: shutil.rmtree(home, ignore_errors=True))
    config.addinivalue_line(
        "markers",
        "empty_store: store_url is an empty database (the test runs the migrations itself) instead of"
        " a clone of the session's migrated template",
    )


def free_port() -> int:
    """A loopback port nobody listens on (for servers we start, or to test a refused connection)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def live_server(settings: Settings, app: FastAPI | None = None) -> Iterator[str]:
    """The service as `tierwise serve` runs it (its client-address rules included), on a free
    loopback port in a thread; yields its URL. `app`: one built by the test (to reach its state)."""
    import uvicorn

    from app.cli import client_address_options
    from app.main import create_app

    port = free_port()
    srv = uvicorn.Server(
        uvicorn.Config(
            app or create_app(settings),
            host="127.0.0.1",
            port=port,
            log_level="warning",
            **client_address_options(settings),
        )
    )
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not srv.started:
        assert time.monotonic() < deadline, "server did not start"
        time.sleep(0.1)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        srv.should_exit = True
        thread.join(timeout=10)


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A fresh, empty PostgreSQL database for one test, dropped afterwards. Fails (never skips)
    when PostgreSQL is not reachable: `make test` starts it."""
    admin = create_engine(POSTGRES_URL, isolation_level="AUTOCOMMIT")
    name = f"tierwise_test_{uuid.uuid4().hex[:12]}"
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    url = POSTGRES_URL.rsplit("/", 1)[0] + f"/{name}"
    try:
        yield url
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(scope="session")
def store_templates(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StoreTemplates]:
    """The session's template stores (tests/store_templates.py): migrated once per backend, the
    demo fleet loaded once; every test gets its own clone. Dropped when the session ends."""
    templates = StoreTemplates(POSTGRES_URL, tmp_path_factory.mktemp("templates"))
    try:
        yield templates
    finally:
        templates.close()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def store_url(
    request: pytest.FixtureRequest, tmp_path: Path, store_templates: StoreTemplates
) -> Iterator[str]:
    """A store of the test's own at the newest schema: a clone of the session's migrated template
    (the migrations ran once, for real). Tests marked `empty_store` get an empty database and run
    the migrations themselves."""
    if request.node.get_closest_marker("empty_store"):
        if request.param == "sqlite":
            yield f"sqlite:///{tmp_path / 'tierwise.db'}"
        else:
            yield str(request.getfixturevalue("postgres_url"))
        return
    template = store_templates.migrated(request.param)
    url = store_templates.clone_new(template, sqlite_file=tmp_path / "tierwise.db")
    try:
        yield url
    finally:
        if request.param == "postgresql":
            store_templates.drop_clone(url)


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    s = Store(store_url)
    yield s
    s.dispose()


@pytest.fixture
def settings(store_url: str, tmp_path: Path) -> Settings:
    return Settings(
        database_url=store_url,
        secret_key_file=tmp_path / "tierwise.key",
        demo_history_hours=6,
        demo_step_s=900,
        poll_timeout_s=3,
    )


@pytest.fixture
def vault() -> Vault:
    from cryptography.fernet import Fernet

    return Vault(Fernet.generate_key())
