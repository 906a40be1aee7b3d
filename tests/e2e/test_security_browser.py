"""In Chromium: hostile target names (an imported server named `Y'+alert(43)+'`, one carrying
`</script><script>alert(1)</script>`) are shown as text, no dialog but the remove confirmation ever
opens, the confirmation works from the static script, and every page runs under the CSP without a
violation (one is forced at the end to show the listener would catch it)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from playwright.sync_api import ConsoleMessage, Dialog, Page, expect

from app.settings import Settings
from app.store.db import Store
from app.store.targets import add_target
from app.store.users import add_user
from tests.conftest import live_server
from tests.e2e.conftest import shot

QUOTE = "import:sqlserver:Y'+alert(43)+'"
SCRIPT = "import:sqlserver:</script><script>alert(1)</script>"
PASSWORD = "correct horse battery"
PAGES = ["/", "/recommendations", "/heatmap", "/scripts", "/ilm", "/targets", "/policies", "/reports",
         "/targets/demo%3ASQLPROD01", "/recommendations/1", "/account"]  # fmt: skip


@pytest.fixture(scope="module")
def hostile_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp: Path = tmp_path_factory.mktemp("e2e-sec")
    settings = Settings(database_url=f"sqlite:///{tmp / 'tierwise.db'}", secret_key_file=tmp / "tierwise.key",
                        demo=True, scheduler_enabled=False, demo_history_hours=8)  # fmt: skip
    store = Store(settings.database_url)
    with store.session() as s:
        now = datetime.now(UTC)
        add_user(s, username="sec", password=PASSWORD, role="admin", now=now)
        for name in (QUOTE, SCRIPT):
            add_target(s, name=name, engine="sqlserver", source="import", connection_encrypted=None,
                       password_env=None, poll_interval_s=300, now=now)  # fmt: skip
    store.dispose()
    with live_server(settings) as url:
        yield url


def _watch(page: Page, accept: list[bool] | None = None) -> tuple[list[str], list[str]]:
    """Dialogs opened (with their text; dismissed unless `accept` holds True) and console errors and
    page errors."""
    dialogs: list[str] = []
    errors: list[str] = []

    def on_dialog(d: Dialog) -> None:
        dialogs.append(f"{d.type}: {d.message}")
        if accept and accept[0]:
            d.accept()
        else:
            d.dismiss()

    def on_console(m: ConsoleMessage) -> None:
        if m.type == "error" and not str(m.location.get("url", "")).endswith("/favicon.ico"):
            errors.append(f"{m.text} ({m.location.get('url')})")

    page.on("dialog", on_dialog)
    page.on("console", on_console)
    page.on("pageerror", lambda e: errors.append(str(e)))
    return dialogs, errors


def _login(page: Page, base: str) -> None:
    page.goto(base + "/login")
    page.get_by_label("User name").fill("sec")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Fleet")).to_be_visible()


def test_hostile_names_are_inert_and_the_confirm_still_works(hostile_server: str, page: Page) -> None:
    accept = [False]
    dialogs, errors = _watch(page, accept)
    _login(page, hostile_server)
    page.goto(hostile_server + "/targets")
    expect(page.get_by_role("cell", name=QUOTE, exact=True)).to_be_visible()
    expect(page.get_by_role("cell", name=SCRIPT, exact=True)).to_be_visible()
    shot(page, "security-hostile-targets")
    assert dialogs == [] and errors == [], (dialogs, errors)

    row = page.get_by_role("row").filter(has=page.get_by_role("cell", name=QUOTE, exact=True))
    row.get_by_role("button", name="Remove").click()  # the handler dismisses: nothing is removed
    expect(page.get_by_role("cell", name=QUOTE, exact=True)).to_be_visible()
    assert dialogs == [f"confirm: Remove {QUOTE} and all its samples?"], dialogs

    accept[0] = True
    row.get_by_role("button", name="Remove").click()
    expect(page.get_by_role("status")).to_contain_text("removed")
    expect(page.get_by_role("cell", name=QUOTE, exact=True)).to_have_count(0)
    assert dialogs == [f"confirm: Remove {QUOTE} and all its samples?"] * 2, dialogs
    assert errors == [], errors


def test_every_page_runs_under_the_csp(hostile_server: str, page: Page) -> None:
    dialogs, errors = _watch(page)
    _login(page, hostile_server)
    for path in PAGES:
        response = page.goto(hostile_server + path)
        assert response is not None and response.ok, path
        assert "script-src 'self'" in (response.headers.get("content-security-policy") or ""), path
    assert dialogs == [] and errors == [], (dialogs, errors)
    # the listener does see a violation: an inline script is refused, and reported on the console
    page.goto(hostile_server + "/targets")
    page.evaluate("() => { const s = document.createElement('script'); s.textContent = 'window.ran = 1';"
                  " document.body.appendChild(s); }")  # fmt: skip
    page.wait_for_timeout(200)
    assert page.evaluate("() => window.ran === undefined")
    assert any("Content Security Policy" in e for e in errors), errors
