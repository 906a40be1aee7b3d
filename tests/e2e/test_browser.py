"""End to end in a real headless Chromium (Debian's package, driven by Playwright): log in, open
the fleet, drill into a server's recommendations, approve one with a comment, see the audit entry.
Screenshots of the main pages are saved under test-artifacts/screenshots/."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn
from playwright.sync_api import Browser, Page, expect, sync_playwright

from app.demo import DEMO_PASSWORD, DEMO_USER
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
    srv = uvicorn.Server(
        uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning")
    )
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


def shot(page: Page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def test_login_approve_and_audit(server: str, page: Page) -> None:
    page.goto(server + "/")
    expect(page).to_have_url(server + "/login")
    expect(page.get_by_role("heading", name="Log in")).to_be_visible()
    shot(page, "01-login")

    page.get_by_label("User name").fill(DEMO_USER)
    page.get_by_label("Password").fill("not the password")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("alert")).to_contain_text("Wrong user name or password")

    page.get_by_label("User name").fill(DEMO_USER)
    page.get_by_label("Password").fill(DEMO_PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Fleet")).to_be_visible()
    expect(page.get_by_text("demo:SQLPROD01")).to_be_visible()
    expect(page.get_by_text("demo · simulated fleet")).to_be_visible()
    shot(page, "02-fleet")

    # drill into one server's open recommendations
    row = page.get_by_role("row").filter(has_text="demo:SQLPROD01")
    row.get_by_role("link").click()
    expect(page.get_by_role("heading", name="Recommendations")).to_be_visible()
    expect(page.get_by_text("FG_HOT_INDEX")).to_be_visible()
    shot(page, "03-recommendations")

    page.get_by_role("link", name="FG_HOT_INDEX").click()
    expect(page.get_by_role("heading", name="FG_HOT_INDEX")).to_be_visible()
    expect(page.get_by_text("small random reads that miss cache")).to_be_visible()
    page.get_by_label("Comment").fill("approved for Saturday's window")
    page.get_by_role("button", name="Approve", exact=True).click()
    expect(page.get_by_role("status")).to_contain_text("approve: 1 recommendation(s) by demo")
    history = page.get_by_role("row").filter(has_text="approved for Saturday's window")
    expect(history).to_contain_text("approve")
    expect(page.get_by_text("approved", exact=True)).to_be_visible()
    shot(page, "04-approved")

    page.goto(server + "/recommendations")
    audit_row = page.get_by_role("row").filter(has_text="approved for Saturday's window")
    expect(audit_row).to_contain_text("demo")
    expect(audit_row).to_contain_text("FG_HOT_INDEX")
    shot(page, "05-audit")
