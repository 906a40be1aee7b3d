"""Secrets by structure (issue #33 item 1): every value whose key is not on the allow-list stays out
of the API (as a viewer), every page, the log, the CLI and every column of the store, on SQLite
and PostgreSQL; malformed strings are refused when a target is added; a target an older version
stored keeps working, or is refused before the driver can repeat it."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import MetaData, create_engine, select
from typer.testing import CliRunner

from app.cli import app as cli
from app.collect import poll_target
from app.main import create_app
from app.secrets import LOG_FORMAT, RedactingFormatter, Vault, load_key
from app.settings import Settings, get_settings
from app.store.db import Store
from app.store.models import Target
from app.store.targets import add_target
from app.store.users import add_user
from connectors.records import SourceError
from tests.conftest import free_port
from tests.secret_corpus import ISSUE_REPRO, ISSUE_REPRO_SECRETS, MALFORMED, SECRET_MARKERS, corpus_connection
from tests.web.conftest import PASSWORD, csrf_of, login

MARKERS = [*SECRET_MARKERS, *ISSUE_REPRO_SECRETS]


def assert_no_secret(text: str, where: str) -> None:
    for marker in MARKERS:
        assert marker not in text, f"{where} shows {marker!r}"


@pytest.fixture
def log_output() -> Iterator[io.StringIO]:
    """What the service's one log handler (app.secrets.logging_config: a RedactingFormatter on the
    root logger) writes while the test runs."""
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(RedactingFormatter(LOG_FORMAT))
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        yield out
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)


@pytest.fixture
def service(settings: Settings) -> Iterator[tuple[TestClient, Settings]]:
    cfg = settings.model_copy(update={"scheduler_enabled": False})
    store = Store(cfg.database_url)
    with store.session() as s:
        add_user(s, username="ada", password=PASSWORD, role="admin", now=datetime.now(UTC))
        add_user(s, username="vera", password=PASSWORD, role="viewer", now=datetime.now(UTC))
    store.dispose()
    with TestClient(create_app(cfg)) as client:
        yield client, cfg


def every_column_value(url: str) -> Iterator[tuple[str, str]]:
    """(table.column, text) for every non-null value of every table of the store."""
    engine = create_engine(url)
    try:
        meta = MetaData()
        meta.reflect(engine)
        with engine.connect() as conn:
            for table in meta.sorted_tables:
                for row in conn.execute(select(table)):
                    for column, value in zip(table.columns, row, strict=True):
                        if value is None:
                            continue
                        text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
                        yield f"{table.name}.{column.name}", text
    finally:
        engine.dispose()


def add_form(client: TestClient, name: str, engine: str, connection: str, password_env: str = "") -> str:
    token = csrf_of(client.get("/targets").text)
    r = client.post("/targets", data={"name": name, "engine": engine, "connection": connection,
                                      "password_env": password_env, "interval": "300", "csrf_token": token})  # fmt: skip
    assert r.status_code == 200
    return r.text


def test_every_output_stays_clean_of_connection_secrets(
    service: tuple[TestClient, Settings], log_output: io.StringIO, caplog: pytest.LogCaptureFixture
) -> None:
    client, cfg = service
    login(client, "ada")

    # malformed strings are refused, naming the problem and position, never a value
    for n, (text, kind, position, secrets) in enumerate(MALFORMED):
        page = add_form(client, f"BAD{n}", "sqlserver", text)
        assert "the connection string is malformed" in page, kind
        assert f"(at character {position + 1})" in page
        for secret in secrets:
            assert secret not in page
    page = add_form(client, "TWICE", "sqlserver", "SERVER=db1;PWD=PwdLeak21", password_env="TW_PWD")
    assert "keep one" in page and "PwdLeak21" not in page
    assert client.get("/api/targets").json() == []

    # well-formed strings carrying every kind of secret are stored, tested and polled
    names = {"CORPUS_SQL": "sqlserver", "CORPUS_DB2": "db2"}
    for name, engine in names.items():
        page = add_form(client, name, engine, corpus_connection(engine, free_port()))
        assert f"added {name}" in page
        assert_no_secret(page, "the add answer")
        token = csrf_of(client.get("/targets").text)
        page = client.post(f"/targets/{name}/test", data={"csrf_token": token}).text
        assert f"{name}: test failed" in page
        assert_no_secret(page, "the Test answer")

    # a row an older version stored: the issue's repro (an unclosed brace) is refused before the
    # driver can repeat it; a well-formed old row is polled as before
    store = Store(cfg.database_url)
    vault = Vault(load_key(cfg))
    now = datetime.now(UTC)
    with store.session() as s:
        for name, conn in (
            ("OLD_REPRO", ISSUE_REPRO),
            ("OLD_PLAIN", corpus_connection("sqlserver", free_port())),
        ):
            add_target(s, name=name, engine="sqlserver", source="live", connection_encrypted=vault.encrypt(conn),
                       password_env=None, poll_interval_s=300, now=now)  # fmt: skip
    token = csrf_of(client.get("/targets").text)
    page = client.post("/targets/OLD_REPRO/test", data={"csrf_token": token}).text
    assert "OLD_REPRO: test failed: the stored connection string is malformed" in page
    assert "remove the target and add it again" in page
    assert_no_secret(page, "the Test answer for an old row")

    with store.session() as s:
        ids = {t.name: t.id for t in s.scalars(select(Target))}
    outcomes = {name: poll_target(store, vault, cfg, tid, force=True) for name, tid in ids.items()}
    store.dispose()
    assert not any(o.ok for o in outcomes.values())
    assert "cannot connect to SQL Server at 127.0.0.1" in (outcomes["OLD_PLAIN"].error or "")
    assert "cannot connect to Db2 at 127.0.0.1" in (outcomes["CORPUS_DB2"].error or "")
    for outcome in outcomes.values():
        assert_no_secret(outcome.error or "", f"the poll error of {outcome.target}")

    # the viewer's API and every page
    client.post("/logout", data={"csrf_token": csrf_of(client.get("/").text)})
    login(client, "vera")
    api = client.get("/api/targets")
    assert api.status_code == 200 and {t["name"] for t in api.json()} == set(ids)
    assert all(t["last_error"] for t in api.json())
    assert_no_secret(api.text, "/api/targets")
    for path in ["/", "/targets", "/reports", "/api/health", *(f"/targets/{name}" for name in ids)]:
        r = client.get(path)
        assert r.status_code == 200, path
        assert_no_secret(r.text, path)

    # the log: the records themselves and the handler's lines
    log = log_output.getvalue()
    assert "poll of CORPUS_SQL failed" in log and "poll of OLD_REPRO failed" in log
    assert_no_secret(log, "the service log")
    for record in caplog.records:
        assert_no_secret(record.getMessage(), f"log record {record.name}")

    # the raw store: every column of every table
    seen = 0
    for where, text in every_column_value(cfg.database_url):
        seen += 1
        assert_no_secret(text, where)
    assert seen > 20


def test_real_driver_repeating_the_issue_repro_is_scrubbed() -> None:
    """unixODBC repeats the unclosed brace's tail in "Can't open lib '...'": the connector's own
    scrub masks it by the string's values."""
    from connectors import sqlserver

    with pytest.raises(SourceError) as caught:
        sqlserver.collect(ISSUE_REPRO, sample_time=datetime.now(UTC), timeout_s=3)
    message = str(caught.value)
    assert "Can't open lib" in message  # the driver did repeat something
    for secret in ISSUE_REPRO_SECRETS:
        assert secret not in message


# --- the CLI ------------------------------------------------------------------------------------

runner = CliRunner()


@pytest.fixture
def cli_store(store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("TIERWISE_DATABASE_URL", store_url)
    monkeypatch.setenv("TIERWISE_SECRET_KEY_FILE", str(tmp_path / "tw.key"))
    get_settings.cache_clear()
    yield store_url
    get_settings.cache_clear()


def test_cli_targets_add_list_and_test_never_show_a_secret(cli_store: str) -> None:
    for n, (text, _kind, position, secrets) in enumerate(MALFORMED):
        r = runner.invoke(cli, ["targets", "add", f"BAD{n}", "--engine", "db2", "--connection", text])
        assert r.exit_code == 2 and "the connection string is malformed" in r.output
        assert f"(at character {position + 1})" in r.output
        for secret in secrets:
            assert secret not in r.output
    for engine in ("sqlserver", "db2"):
        conn = corpus_connection(engine, free_port())
        r = runner.invoke(cli, ["targets", "add", f"C_{engine}", "--engine", engine, "--connection", conn])
        assert r.exit_code == 0, r.output
        assert_no_secret(r.output, "targets add")
        r = runner.invoke(cli, ["targets", "test", f"C_{engine}"])
        assert r.exit_code == 1 and f"C_{engine}: " in r.output
        assert_no_secret(r.output, "targets test")
    r = runner.invoke(cli, ["collect", "--once"])
    assert r.exit_code == 1 and "C_sqlserver: FAILED" in r.output
    assert_no_secret(r.output, "collect --once")
    for args in (["targets", "list"], ["targets", "list", "--json"]):
        r = runner.invoke(cli, args)
        assert r.exit_code == 0 and "C_db2" in r.output and "failing" in r.output
        assert_no_secret(r.output, " ".join(args))
    for where, text in every_column_value(cli_store):
        assert_no_secret(text, where)
