"""`tierwise targets` never echoes a connection string; errors are clear."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli import app
from app.settings import get_settings

runner = CliRunner()


def test_add_list_remove_without_echoing_the_connection(cli_env: Path) -> None:
    conn = "DRIVER={FreeTDS};SERVER=127.0.0.1;PORT=1;UID=tw;PWD=VerySecret42"
    r = runner.invoke(app, ["targets", "add", "SQLPROD01", "--engine", "sqlserver", "--connection", conn])
    assert r.exit_code == 0, r.output
    assert "VerySecret42" not in r.output
    r = runner.invoke(app, ["targets", "list", "--json"])
    assert r.exit_code == 0
    assert '"name": "SQLPROD01"' in r.output
    assert "never polled" in r.output
    assert "VerySecret42" not in r.output and "PWD" not in r.output
    raw = (cli_env / "tw.db").read_bytes()
    assert b"VerySecret42" not in raw
    r = runner.invoke(app, ["targets", "remove", "SQLPROD01", "--yes"])
    assert r.exit_code == 0
    assert "no targets" in runner.invoke(app, ["targets", "list"]).output


def test_duplicate_and_bad_engine_are_rejected(cli_env: Path) -> None:
    args = ["targets", "add", "X", "--engine", "sqlserver", "--connection", "SERVER=a"]
    assert runner.invoke(app, args).exit_code == 0
    r = runner.invoke(app, args)
    assert r.exit_code == 2 and "already exists" in r.output
    r = runner.invoke(app, ["targets", "add", "Y", "--engine", "oracle", "--connection", "x"])
    assert r.exit_code == 2 and "engine must be one of" in r.output


def test_unknown_target_named_in_error(cli_env: Path) -> None:
    r = runner.invoke(app, ["targets", "test", "NOPE"])
    assert r.exit_code == 1
    assert "no target named 'NOPE'" in r.output


def test_collect_once_reports_a_dead_target_without_its_password(cli_env: Path) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    conn = f"DRIVER={{FreeTDS}};SERVER=127.0.0.1;PORT={port};UID=tw;PWD=TopSecret99;TDS_Version=7.4"
    assert (
        runner.invoke(
            app, ["targets", "add", "DEAD", "--engine", "sqlserver", "--connection", conn]
        ).exit_code
        == 0
    )
    r = runner.invoke(app, ["collect", "--once"])
    assert r.exit_code == 1
    assert "DEAD: FAILED" in r.output and f"127.0.0.1:{port}" in r.output
    assert "TopSecret99" not in r.output
    listed = runner.invoke(app, ["targets", "list"]).output
    assert "failing" in listed and "TopSecret99" not in listed


def test_settings_come_from_a_config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "tierwise.env"
    cfg.write_text("TIERWISE_DEFAULT_POLL_INTERVAL_S=120\nTIERWISE_SAMPLE_RETENTION_DAYS=30\n")
    monkeypatch.setenv("TIERWISE_CONFIG", str(cfg))
    monkeypatch.setenv("TIERWISE_SAMPLE_RETENTION_DAYS", "21")  # the environment wins over the file
    get_settings.cache_clear()
    try:
        s = get_settings()
        assert s.default_poll_interval_s == 120
        assert s.sample_retention_days == 21
    finally:
        get_settings.cache_clear()


def test_users_add_and_list(cli_env: Path) -> None:
    r = runner.invoke(app, ["users", "add", "root", "--admin", "--password", "a-long-secret"])
    assert r.exit_code == 0 and "a-long-secret" not in r.output
    r = runner.invoke(app, ["users", "add", "bob", "--role", "boss", "--password", "a-long-secret"])
    assert r.exit_code == 2 and "role must be one of" in r.output
    r = runner.invoke(app, ["users", "add", "eve", "--password", "short"])
    assert r.exit_code == 2 and "at least 8 characters" in r.output
    listed = runner.invoke(app, ["users", "list"]).output
    assert "root" in listed and "admin" in listed and "eve" not in listed
