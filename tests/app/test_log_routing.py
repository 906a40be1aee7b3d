"""Every log record of the service goes through the one redacting handler (issue #33 item 1):
ours, uvicorn's access lines and tracebacks, and a library's that brought its own handler. Run in
subprocesses, so that the process's logging set-up is the real one and the test's is untouched."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from app.secrets import Vault
from app.store.db import Store
from app.store.targets import add_target
from tests.conftest import free_port
from tests.secret_corpus import ISSUE_REPRO, ISSUE_REPRO_SECRETS, SECRET_MARKERS, corpus_connection

ROOT = Path(__file__).resolve().parents[2]
MARKERS = [*SECRET_MARKERS, *ISSUE_REPRO_SECRETS]


def wait_for(url: str, proc: subprocess.Popen[str], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while True:
        assert proc.poll() is None, proc.communicate()[1]
        try:
            httpx.get(url, timeout=2)
            return
        except httpx.TransportError:
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.2)


def test_tierwise_serve_logs_access_lines_and_poll_failures_only_redacted(
    store_url: str, tmp_path: Path
) -> None:
    """The real `tierwise serve`: its scheduler polls targets whose strings carry every kind of
    secret (one stored by an older version, malformed as in the issue), and a request's query
    string spells credentials; uvicorn's access line and our poll warnings reach stderr masked."""
    from cryptography.fernet import Fernet

    key = Fernet.generate_key()
    vault = Vault(key)
    store = Store(store_url)
    with store.session() as s:
        for name, conn in (
            ("SQL_OLD", ISSUE_REPRO),
            ("SQL_CORPUS", corpus_connection("sqlserver", free_port())),
        ):
            add_target(s, name=name, engine="sqlserver", source="live", connection_encrypted=vault.encrypt(conn),
                       password_env=None, poll_interval_s=300, now=datetime.now(UTC))  # fmt: skip
    store.dispose()
    port = free_port()
    env = {
        **os.environ,
        "TIERWISE_DATABASE_URL": store_url,
        "TIERWISE_SECRET_KEY": key.decode(),
        "TIERWISE_LOG_LEVEL": "INFO",
        "TIERWISE_POLL_JITTER_S": "0",
        "TIERWISE_POLL_TIMEOUT_S": "3",
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "serve", "--port", str(port)],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        wait_for(f"http://127.0.0.1:{port}/login", proc)
        query = "TrustStorePassword=TsPassLeak24&note=KeyStoreSecret%3DKsSecretLeak23"
        assert httpx.get(f"http://127.0.0.1:{port}/login?{query}", timeout=10).status_code == 200
        time.sleep(8)  # both targets are polled at start; the SQL Server driver gives up within 3 s
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert '"GET /login?TrustStorePassword=***' in err, err  # uvicorn's access line, masked
    assert "poll of SQL_OLD failed: the stored connection string is malformed" in err, err
    assert "poll of SQL_CORPUS failed: cannot connect to SQL Server at 127.0.0.1" in err, err
    for marker in MARKERS:
        assert marker not in err, marker


RAISING_SERVER = textwrap.dedent(
    """
    import logging, sys
    import httpx, uvicorn
    from app.secrets import configure_logging, logging_config, remember_secrets

    configure_logging("INFO")
    lib = logging.getLogger("somelib")
    lib.addHandler(logging.StreamHandler(sys.stderr))  # a library's own handler, added earlier
    lib.propagate = False
    configure_logging("INFO")
    remember_secrets(["UnlistedLeak31"])

    async def app(scope, receive, send):
        if scope["type"] == "lifespan":
            return
        raise RuntimeError(
            "login failed for DRIVER={FreeTDS};SERVER=db1;UID=tw;PWD={PwdLeak21;x};"
            "KeyStoreSecret=KsSecretLeak23 with option UnlistedLeak31"
        )

    port = int(sys.argv[1])
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_config=logging_config("INFO"),
                            log_level="info", lifespan="off")
    server = uvicorn.Server(config)

    import threading, time
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    print(httpx.get(f"http://127.0.0.1:{port}/boom").status_code, flush=True)
    lib.warning("somelib connected with TrustStorePassword=TsPassLeak24")
    logging.getLogger("tierwise.test").warning("a value seen before: UnlistedLeak31")
    server.should_exit = True
    """
)


def test_uvicorn_tracebacks_and_library_handlers_go_through_the_redacting_handler() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", RAISING_SERVER, str(free_port())],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "500"
    err = proc.stderr
    assert "ERROR uvicorn.error: Exception in ASGI application" in err, err
    assert "Traceback (most recent call last)" in err and "RuntimeError: login failed for" in err
    assert "WARNING somelib: somelib connected with TrustStorePassword=***" in err, err
    assert "a value seen before: ***" in err
    for marker in ("PwdLeak21", "KsSecretLeak23", "UnlistedLeak31", "TsPassLeak24"):
        assert marker not in err, marker


@pytest.mark.parametrize("level", ["info", "INFO", 20])
def test_logging_config_is_one_redacting_root_handler(level: str | int) -> None:
    from app.secrets import UVICORN_LOGGERS, logging_config

    config = logging_config(level)
    assert config["root"]["handlers"] == ["redacting"]
    assert config["formatters"]["redacting"]["()"] == "app.secrets.RedactingFormatter"
    for name in UVICORN_LOGGERS:
        assert config["loggers"][name] == {"handlers": [], "propagate": True}
