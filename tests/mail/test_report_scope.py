"""Report scopes name what exists: checked when saved (form, API) and when rendered (CLI, the
schedule); a bare target name is a target scope; a database scope splits after the longest known
target name, so DB2 import targets (`import:db2:host/instance`) and database names with "/" work
(#17 item 7)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from typer.testing import CliRunner

from app.importer import import_file
from app.mail.scope import Scope, ScopeError, resolve_scope
from app.mail.service import run_due
from app.settings import Settings, get_settings
from app.store.db import Store
from app.store.models import Delivery, ReportSubscription, Target
from app.store.targets import import_target
from tests.conftest import FIXTURES, free_port
from tests.mail.test_report_data import T0, one_hour_file
from tests.web.conftest import login

DB2 = "import:db2:db2host01/db2inst1"


@pytest.fixture
def scoped_store(store: Store, tmp_path: Path) -> Store:
    """A DB2 import target with a "/" in its name, a target whose name is its prefix, and a SQL
    Server database whose name holds a "/"."""
    import_file(store, FIXTURES / "import" / "db2_tablespaces.csv")
    import_file(store, one_hour_file(tmp_path, database="Sales/EU"))
    with store.session() as s:
        import_target(s, server="db2host01", engine="db2", now=T0)  # import:db2:db2host01
    return store


def test_scopes_resolve_against_the_known_targets(scoped_store: Store) -> None:
    with scoped_store.session() as s:
        db2_id = s.scalar(select(Target.id).where(Target.name == DB2))
        resolve = lambda text: resolve_scope(s, text)  # noqa: E731
        assert resolve("fleet") == Scope("fleet")
        assert resolve(DB2) == Scope("target", DB2)  # a bare name
        assert resolve(str(db2_id)) == Scope("target", DB2)  # an id
        assert resolve(f"target:{DB2}") == resolve(f"target:{db2_id}") == Scope("target", DB2)
        # longest target name first: not import:db2:db2host01 + "db2inst1/SALESDB"
        assert resolve(f"database:{DB2}/SALESDB") == Scope("database", DB2, "SALESDB")
        assert resolve(f"database:{db2_id}/SALESDB") == Scope("database", DB2, "SALESDB")
        sales = resolve("database:import:sqlserver:SQLRATE01/Sales/EU")
        assert sales == Scope("database", "import:sqlserver:SQLRATE01", "Sales/EU")
        assert resolve(sales.text()) == sales  # the stored form reads back the same
        with pytest.raises(ScopeError, match="no target named 'SQLPROD09'"):
            resolve("SQLPROD09")
        with pytest.raises(ScopeError, match="no target named 'SQLPROD09'"):
            resolve("target:SQLPROD09")
        with pytest.raises(ScopeError, match="names no known target"):
            resolve("database:SQLPROD09/Sales")
        with pytest.raises(ScopeError, match=r"has no database 'HR' \(it has SALESDB\)"):
            resolve(f"database:{DB2}/HR")


def test_a_database_scope_reports_that_database(scoped_store: Store) -> None:
    from app.mail.content import gather
    from policies.loader import load_policy

    with scoped_store.session() as s:
        sales = gather(s, resolve_scope(s, "database:import:sqlserver:SQLRATE01/Sales/EU"),
                       now=T0 + timedelta(hours=1), policy=load_policy())  # fmt: skip
        other = gather(s, resolve_scope(s, f"database:{DB2}/SALESDB"), now=T0 + timedelta(hours=1),
                       policy=load_policy())  # fmt: skip
    assert sales.read_iops == pytest.approx(2267)
    assert [c.target for c in sales.coverage] == ["import:sqlserver:SQLRATE01"]
    assert [c.target for c in other.coverage] == [DB2]


def test_api_refuses_an_unknown_target_and_stores_the_scope_it_means(app_client: TestClient) -> None:
    login(app_client, "abe")
    token = app_client.get("/api/session").json()["csrf_token"]

    def post(name: str, scope: str) -> Any:
        return app_client.post("/api/subscriptions", json={"name": name, "recipients": "a@b.c", "scope": scope},
                               headers={"X-CSRF-Token": token})  # fmt: skip

    r = post("x", "target:SQLPROD09")
    assert r.status_code == 422 and r.json()["detail"].startswith("scope: no target named 'SQLPROD09'")
    r = post("y", "database:demo:SQLPROD01/NoSuchDb")
    assert (
        r.status_code == 422
        and "scope: target 'demo:SQLPROD01' has no database 'NoSuchDb'" in r.json()["detail"]
    )
    r = post("z", "demo:SQLPROD01")  # a bare name
    assert r.status_code == 201 and r.json()["scope"] == "target:demo:SQLPROD01"
    r = post("w", "database:demo:SQLPROD01/Sales")
    assert r.status_code == 201 and r.json()["scope"] == "database:demo:SQLPROD01/Sales"
    assert [x["name"] for x in app_client.get("/api/subscriptions").json()] == ["z", "w"]


def test_form_says_which_target_is_unknown(app_client: TestClient) -> None:
    from tests.web.conftest import csrf_of

    token = csrf_of(login(app_client, "abe").get("/reports").text)
    r = app_client.post("/reports", data={"name": "M", "recipients": "dba@example.test", "scope": "SQLPROD09",
                                          "cron": "weekly", "timezone": "UTC", "csrf_token": token})  # fmt: skip
    assert (
        "scope: no target named &#39;SQLPROD09&#39;" in r.text
        or "scope: no target named 'SQLPROD09'" in r.text
    )
    assert app_client.get("/api/subscriptions").json() == []
    assert 'value="target:demo:DB2PROD01"' in r.text  # the scope field offers the known targets


def _cli_env(monkeypatch: pytest.MonkeyPatch, settings: Settings) -> None:
    monkeypatch.setenv("TIERWISE_DATABASE_URL", settings.database_url)
    monkeypatch.setenv("TIERWISE_SECRET_KEY_FILE", str(settings.secret_key_file))
    monkeypatch.setenv("TIERWISE_SMTP_HOST", "127.0.0.1")
    monkeypatch.setenv("TIERWISE_SMTP_PORT", str(free_port()))  # nothing listens: nothing may be sent
    get_settings.cache_clear()


def test_cli_refuses_an_unknown_scope(
    scoped_store: Store, settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.cli import app

    _cli_env(monkeypatch, settings)
    try:
        runner = CliRunner()
        out = tmp_path / "r.eml"
        for command in (["render", "--out", str(out)], ["send", "--to", "dba@example.test"]):
            r = runner.invoke(app, ["report", *command, "--scope", "target:SQLPROD09"])
            assert r.exit_code == 2 and "no target named 'SQLPROD09'" in r.output, r.output
        assert not out.exists()
        r = runner.invoke(
            app, ["report", "render", "--out", str(out), "--scope", "import:sqlserver:SQLRATE01"]
        )
        assert r.exit_code == 0, r.output
        assert "for target import:sqlserver:SQLRATE01" in r.output
    finally:
        get_settings.cache_clear()
    with scoped_store.session() as s:
        assert list(s.scalars(select(Delivery))) == []  # refused before anything was tried


def test_a_subscription_whose_target_is_gone_is_a_failed_delivery(
    scoped_store: Store, settings: Settings
) -> None:
    now = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
    with scoped_store.session() as s:
        for name, scope in (("gone", "target:SQLPROD09"), ("ok", f"target:{DB2}")):
            s.add(ReportSubscription(name=name, recipients="dba@example.test", scope=scope, cron="daily",
                                     timezone="UTC", enabled=True, created_by="abe",
                                     created_at=now - timedelta(days=1)))  # fmt: skip
    cfg = settings.model_copy(update={"smtp_host": "127.0.0.1", "smtp_port": free_port(), "smtp_attempts": 1})
    sent = run_due(scoped_store, cfg, now=now, attachments_for=lambda _: [])
    assert [x.ok for x in sent] == [False, False]  # the other one is tried (and fails: no server)
    with scoped_store.session() as s:
        rows = {d.subscription_id: d for d in s.scalars(select(Delivery))}
        subs = {x.name: x.id for x in s.scalars(select(ReportSubscription))}
    assert (
        rows[subs["gone"]].error
        == "not composed: no target named 'SQLPROD09' (`tierwise targets list` shows them)"
    )
    assert rows[subs["gone"]].status == "failed" and rows[subs["gone"]].attempts == 0
    assert "Connection refused" in (rows[subs["ok"]].error or "")
