"""One store per user by default: without TIERWISE_DATABASE_URL the store and the key live in the
user's data directory (created 0700, the key 0600), whatever the working directory; explicit
settings win; every command says on stderr which store it uses, its password masked; the demo has
a store of its own there, and `tierwise serve --demo` starts again on it; `tierwise --version`."""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path

import httpx
import pytest
from sqlalchemy.engine import make_url
from typer.testing import CliRunner

from app.cli import app
from app.secrets import redact_url
from app.settings import Settings, data_dir, get_settings, with_demo
from tests.app.test_import import FILE_STATS
from tests.conftest import free_port

runner = CliRunner()
TIERWISE = Path(sys.executable).parent / "tierwise"  # the installed command


@pytest.fixture
def own_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A user with nothing set but a data directory of their own (XDG_DATA_HOME, as on Linux)."""
    for name in ("TIERWISE_DATABASE_URL", "TIERWISE_SECRET_KEY", "TIERWISE_SECRET_KEY_FILE", "TIERWISE_CONFIG",
                 "TIERWISE_DEMO"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    get_settings.cache_clear()
    yield tmp_path / "xdg" / "tierwise"
    get_settings.cache_clear()


def _store_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("store: ")]


def test_no_test_writes_into_the_users_own_data_directory() -> None:
    """tests/conftest.py gives the session a data directory of its own."""
    assert data_dir().parent.name.startswith("tierwise-test-data-")
    assert not data_dir().is_relative_to(Path.home())


def test_version_is_the_installed_one() -> None:
    r = runner.invoke(app, ["--version"])
    assert r.exit_code == 0 and r.stdout == f"tierwise {version('tierwise')}\n"
    out = subprocess.run([str(TIERWISE), "--version"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout == f"tierwise {version('tierwise')}\n", out.stderr
    assert re.fullmatch(r"tierwise \d+\.\d+\.\d+\S*\n", out.stdout)


def test_import_in_one_folder_and_list_in_another_see_one_store(
    own_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    monkeypatch.chdir(tmp_path / "a")
    r = runner.invoke(app, ["import", str(FILE_STATS)])
    assert r.exit_code == 0, r.output
    expected = f"store: sqlite:///{own_env / 'tierwise.db'}"
    assert _store_lines(r.stderr) == [expected] and "store:" not in r.stdout
    get_settings.cache_clear()  # another process, in another folder
    monkeypatch.chdir(tmp_path / "b")
    r = runner.invoke(app, ["targets", "list", "--json"])
    assert r.exit_code == 0, r.output
    names = {t["name"] for t in json.loads(r.stdout)}  # stdout stays JSON alone
    assert names == {"import:sqlserver:SQLPROD01", "import:sqlserver:SQLPROD02\\OLTP"}
    assert _store_lines(r.stderr) == [expected]  # once
    # the directory is its owner's only; the key file too; nothing lands in the working folders
    assert stat.S_IMODE(own_env.stat().st_mode) == 0o700
    assert stat.S_IMODE((own_env / "tierwise.key").stat().st_mode) == 0o600
    assert (own_env / "tierwise.db").is_file()
    assert list((tmp_path / "a").iterdir()) == [] and list((tmp_path / "b").iterdir()) == []


def test_explicit_settings_win(own_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = f"sqlite:///{tmp_path / 'mine.db'}"
    monkeypatch.setenv("TIERWISE_DATABASE_URL", url)
    monkeypatch.setenv("TIERWISE_SECRET_KEY_FILE", str(tmp_path / "mine.key"))
    get_settings.cache_clear()
    r = runner.invoke(app, ["targets", "list"])
    assert r.exit_code == 0, r.output
    assert _store_lines(r.stderr) == [f"store: {url}"]
    assert (tmp_path / "mine.key").is_file() and not own_env.exists()  # the data directory is not made


def test_the_demo_has_a_store_of_its_own(own_env: Path, tmp_path: Path) -> None:
    own = Settings()
    assert own.database_url == f"sqlite:///{own_env / 'tierwise.db'}"
    assert own.secret_key_file == own_env / "tierwise.key"
    demo = f"sqlite:///{own_env / 'demo.db'}"
    assert with_demo(own).database_url == demo and with_demo(own).demo
    assert Settings(demo=True).database_url == demo  # TIERWISE_DEMO=true, as `serve --demo`
    mine = Settings(database_url=f"sqlite:///{tmp_path / 'x.db'}")
    assert with_demo(mine).database_url == mine.database_url  # a store that was set is kept
    assert not own_env.exists()  # settings alone create nothing


def test_no_password_is_shown() -> None:
    assert redact_url("postgresql+psycopg://tierwise:s3cret@dbhost/tierwise") == (
        "postgresql+psycopg://tierwise:***@dbhost/tierwise"
    )
    # a password holding "@" or "/" unencoded, or given as a query parameter
    assert (
        redact_url("postgresql+psycopg://tw:p@ss/w@dbhost:5432/tw")
        == "postgresql+psycopg://tw:***@dbhost:5432/tw"
    )
    assert "s3cret" not in redact_url("postgresql+psycopg://tw@dbhost/tw?sslmode=require&password=s3cret")
    assert redact_url("sqlite:////home/dba@corp/.local/share/tierwise/tierwise.db") == (
        "sqlite:////home/dba@corp/.local/share/tierwise/tierwise.db"
    )


@pytest.mark.postgres
def test_the_store_line_masks_the_password(
    postgres_url: str, own_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = make_url(postgres_url).set(password="S3cr3t-pw")  # trust auth: the password is not checked
    monkeypatch.setenv("TIERWISE_DATABASE_URL", url.render_as_string(hide_password=False))
    get_settings.cache_clear()
    r = runner.invoke(app, ["targets", "list", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout) == []
    assert _store_lines(r.stderr) == [f"store: {url.render_as_string(hide_password=True)}"]
    assert ":***@" in r.stderr and "S3cr3t" not in r.output


def _serve_demo(env: dict[str, str], port: int, log: Path) -> None:
    """`tierwise serve --demo` until its login page answers, then stopped as Ctrl+C stops it."""
    with log.open("w") as out:
        proc = subprocess.Popen([str(TIERWISE), "serve", "--demo", "--port", str(port)], env=env,
                                stdout=out, stderr=subprocess.STDOUT)  # fmt: skip
        try:
            deadline = time.monotonic() + 180
            while True:
                assert proc.poll() is None, log.read_text()
                assert time.monotonic() < deadline, log.read_text()
                try:
                    if httpx.get(f"http://127.0.0.1:{port}/login", timeout=2).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                time.sleep(0.5)
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def test_serve_demo_on_a_fresh_machine_and_again(tmp_path: Path) -> None:
    home = tmp_path / "xdg" / "tierwise"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIERWISE_")}
    env.update(XDG_DATA_HOME=str(tmp_path / "xdg"), TIERWISE_DEMO_HISTORY_HOURS="3")
    port = free_port()
    for run in ("first", "second"):
        log = tmp_path / f"{run}.log"
        _serve_demo(env, port, log)
        text = log.read_text()
        assert text.count(f"store: sqlite:///{home / 'demo.db'}") == 1, text
        assert "demo fleet ready" in text and "Traceback" not in text, text
    assert (home / "demo.db").is_file() and not (home / "tierwise.db").exists()  # the own store untouched
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
