"""`tierwise users role|passwd|delete`: account changes from the shell end the user's web logins
and are audited."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from app.cli import app
from app.settings import get_settings
from app.store.db import Store
from app.store.models import ApiToken, AuditEvent, User
from app.store.users import authenticate, session_user, start_session

runner = CliRunner()


@pytest.fixture
def cli_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    url = f"sqlite:///{tmp_path / 'tw.db'}"
    monkeypatch.setenv("TIERWISE_DATABASE_URL", url)
    monkeypatch.setenv("TIERWISE_SECRET_KEY_FILE", str(tmp_path / "tw.key"))
    get_settings.cache_clear()
    r = runner.invoke(app, ["users", "add", "abe", "--role", "approver", "--password", "correct horse 1"])
    assert r.exit_code == 0, r.output
    store = Store(url)
    yield store
    store.dispose()
    get_settings.cache_clear()


def _login(store: Store) -> str:
    now = datetime.now(UTC)
    with store.session() as s:
        user = s.scalar(select(User).where(User.username == "abe"))
        assert user is not None
        sid, _ = start_session(s, user_id=user.id, role=user.role, now=now, lifetime=timedelta(hours=12))
    return sid


def _live(store: Store, sid: str) -> bool:
    with store.session() as s:
        return session_user(s, sid, now=datetime.now(UTC)) is not None


def _actions(store: Store) -> list[str]:
    with store.session() as s:
        return [e.action for e in s.scalars(select(AuditEvent).order_by(AuditEvent.id))]


def test_role_change_ends_logins_and_is_audited(cli_store: Store) -> None:
    sid = _login(cli_store)
    assert _live(cli_store, sid)
    r = runner.invoke(app, ["users", "role", "abe", "viewer"])
    assert r.exit_code == 0, r.output
    assert not _live(cli_store, sid)
    with cli_store.session() as s:
        assert s.scalar(select(User.role).where(User.username == "abe")) == "viewer"
    assert _actions(cli_store) == ["set_role"]
    bad = runner.invoke(app, ["users", "role", "abe", "root"])
    assert bad.exit_code != 0 and "role must be one of" in bad.output


def test_password_change_ends_logins(cli_store: Store) -> None:
    sid = _login(cli_store)
    r = runner.invoke(app, ["users", "passwd", "abe", "--password", "another horse 2"])
    assert r.exit_code == 0, r.output
    assert not _live(cli_store, sid)
    with cli_store.session() as s:
        assert authenticate(s, "abe", "another horse 2") is not None
        assert authenticate(s, "abe", "correct horse 1") is None
    assert _actions(cli_store) == ["set_password"]


def test_delete_ends_logins_and_tokens(cli_store: Store) -> None:
    assert runner.invoke(app, ["users", "token", "abe"]).exit_code == 0
    sid = _login(cli_store)
    r = runner.invoke(app, ["users", "delete", "abe", "--yes"])
    assert r.exit_code == 0, r.output
    assert not _live(cli_store, sid)
    with cli_store.session() as s:
        assert s.scalar(select(User).where(User.username == "abe")) is None
        assert list(s.scalars(select(ApiToken))) == []
    assert _actions(cli_store) == ["delete_user"]
    missing = runner.invoke(app, ["users", "delete", "nobody", "--yes"])
    assert missing.exit_code != 0 and "no user named 'nobody'" in missing.output


def test_tokens_are_listed_without_the_token_and_revoked_with_an_audit(cli_store: Store) -> None:
    made = runner.invoke(app, ["users", "token", "abe", "--name", "prometheus"])
    assert made.exit_code == 0, made.output
    token = made.stdout.strip()
    listed = runner.invoke(app, ["users", "tokens", "abe"])
    assert listed.exit_code == 0, listed.output
    assert "prometheus" in listed.output and "abe" in listed.output and "active" in listed.output
    assert token not in listed.output and token[3:12] not in listed.output  # never the token
    with cli_store.session() as s:
        token_id = s.scalar(select(ApiToken.id))
    r = runner.invoke(app, ["users", "revoke-token", str(token_id)])
    assert r.exit_code == 0, r.output
    assert f"revoked API token #{token_id} (prometheus) of abe" in r.output
    with cli_store.session() as s:
        assert s.scalar(select(ApiToken.revoked).where(ApiToken.id == token_id)) is True
        event = s.scalars(select(AuditEvent).where(AuditEvent.action == "revoke_token")).one()
        assert event.username.startswith("cli") and event.subject_id == "abe"
    assert "revoked" in runner.invoke(app, ["users", "tokens"]).output
    unknown = runner.invoke(app, ["users", "revoke-token", "999"])
    assert unknown.exit_code == 2 and "no API token #999" in unknown.output
    assert "no API tokens for nobody" in runner.invoke(app, ["users", "tokens", "nobody"]).output


def test_an_idle_login_is_ended_in_the_store_judged_on_its_last_use(cli_store: Store) -> None:
    """session_user owns the idle rule: within the limit the login lives (and its last use moves),
    past it the row is deleted and IdleEnded raised; no limit means no idle rule."""
    from app.store.models import WebSession
    from app.store.users import IdleEnded

    sid = _login(cli_store)
    now = datetime.now(UTC)
    limit = timedelta(minutes=30)
    with cli_store.session() as s:
        assert session_user(s, sid, now=now + timedelta(minutes=29), idle_limit=limit) is not None
    # used at +29 min: 30 minutes after the login it is not idle (judged on the last use)
    with cli_store.session() as s:
        assert session_user(s, sid, now=now + timedelta(minutes=40), idle_limit=limit) is not None
    with cli_store.session() as s:  # no limit: an old last use does not end it
        assert session_user(s, sid, now=now + timedelta(hours=3), idle_limit=None) is not None
    with cli_store.session() as s, pytest.raises(IdleEnded):
        session_user(s, sid, now=now + timedelta(hours=4), idle_limit=limit)
    with cli_store.session() as s:
        assert s.scalar(select(WebSession)) is None  # ended for every copy of the cookie
        assert session_user(s, sid, now=now + timedelta(hours=4)) is None
