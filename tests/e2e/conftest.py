"""Browser fixtures shared by the end-to-end tests: a live server on the demo fleet (SQLite, one
per test module), Debian's headless Chromium driven by Playwright, and a page per test."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn
from fastapi import FastAPI
from playwright.sync_api import Browser, Page, sync_playwright

from app.main import create_app
from app.settings import Settings

CHROMIUM = "/usr/bin/chromium"
SHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"
FLAGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync",
]  # fmt: skip


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def demo_app(settings: Settings) -> FastAPI:
    """The service as `tierwise serve` builds it, with the object pages' router included if
    app/main.py does not include it yet."""
    from app.web.objects import router as objects_router

    app = create_app(settings)
    if not any(getattr(r, "path", None) == "/heatmap" for r in app.routes):
        app.include_router(objects_router)
    return app


def shot(page: Page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("e2e")
    settings = Settings(
        database_url=f"sqlite:///{tmp / 'tierwise.db'}",
        secret_key_file=tmp / "tierwise.key",
        demo=True,
        scheduler_enabled=False,
        demo_history_hours=8,
    )
    port = _free_port()
    srv = uvicorn.Server(uvicorn.Config(demo_app(settings), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not srv.started:
        assert time.monotonic() < deadline, "server did not start"
        time.sleep(0.1)
    yield f"http://127.0.0.1:{port}"
    srv.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    assert Path(CHROMIUM).exists(), "Debian's chromium is missing: `make test` installs it"
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        yield b
        b.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1360, "height": 900})
    pg = context.new_page()
    yield pg
    context.close()
