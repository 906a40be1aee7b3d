"""Reviewing in headless Chromium as an approver: suppress a recommendation through the form
(reason + expiry), see it marked suppressed and its approval refused, lift it; approve a move and
find it in the Scripts page's change-window plan with its estimated duration; mark it executed and
see its verification "waiting" and the track record. Also the heat map's "How much flash" chart
and an object's evidence. Screenshots: test-artifacts/screenshots/2x-review-*.png."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from playwright.sync_api import Locator, Page, expect

from app.settings import Settings
from app.store.db import Store
from app.store.users import add_user
from tests.conftest import live_server
from tests.e2e.conftest import SHOTS, shot

APPROVER, PASSWORD = "abe", "correct horse battery"
REASON = "month-end close: no moves before December"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The demo fleet as in tests/e2e/conftest.py, plus an approver (the demo login is an admin)."""
    tmp = tmp_path_factory.mktemp("e2e-review")
    settings = Settings(
        database_url=f"sqlite:///{tmp / 'tierwise.db'}",
        secret_key_file=tmp / "tierwise.key",
        demo=True,
        scheduler_enabled=False,
        demo_history_hours=8,
    )
    store = Store(settings.database_url)
    with store.session() as s:
        add_user(s, username=APPROVER, password=PASSWORD, role="approver", now=datetime.now(UTC))
    store.dispose()
    with live_server(settings) as url:
        yield url


def _login(page: Page, server: str) -> None:
    page.goto(server + "/login")
    page.get_by_label("User name").fill(APPROVER)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Fleet")).to_be_visible()
    expect(page.get_by_text(f"{APPROVER} (approver)")).to_be_visible()


def _row(page: Page, name: str) -> Locator:
    return page.locator("table").first.locator("tbody tr").filter(has=page.get_by_label(f"select {name}"))


def test_suppress_lift_approve_plan_execute(server: str, page: Page) -> None:
    _login(page, server)
    # two open fc -> flash moves of SQLPROD01: which ones depends on the demo's clock, so ask
    items = page.request.get(server + "/api/recommendations?status=open&limit=1000").json()["items"]
    names = sorted(r["name"] for r in items if r["server"] == "SQLPROD01" and r["to_tier"] == "flash")
    assert len(names) >= 2, names
    suppressed, approved = names[0], names[1]
    page.goto(server + "/recommendations?target=demo%3ASQLPROD01")
    expect(page.get_by_role("heading", name="Recommendations")).to_be_visible()
    row = _row(page, suppressed)
    expect(row).to_contain_text("open")

    # suppress it through the form: a reason and an expiry date
    until = (datetime.now(UTC) + timedelta(days=30)).date()
    row.get_by_label(f"select {suppressed}").check()
    page.get_by_label("Suppress selected: reason").fill(REASON)
    page.get_by_label("until").fill(until.isoformat())
    page.get_by_role("button", name="Suppress selected").click()
    expect(page.get_by_role("status")).to_contain_text(
        f"suppressed 1 recommendation(s) until {until} 00:00 UTC"
    )
    row = _row(page, suppressed)
    expect(row).to_contain_text(f"suppressed until {until} 00:00 UTC by {APPROVER} ({REASON})")
    expect(row.get_by_role("button", name="Lift")).to_be_visible()
    shot(page, "2x-review-suppressed")

    # approving it is refused while it is suppressed
    row.get_by_label(f"select {suppressed}").check()
    page.get_by_role("button", name="Approve selected").click()
    expect(page.get_by_role("status")).to_contain_text("lift the suppression before approving it")
    row = _row(page, suppressed)
    expect(row.locator(".badge").first).to_have_text("open")
    expect(row).to_contain_text("suppressed until")

    # lift it: back as an open recommendation, the lift in the audit log
    row.get_by_role("button", name="Lift").click()
    expect(page.get_by_role("status")).to_contain_text(f"lifted the suppression of {suppressed}")
    row = _row(page, suppressed)
    expect(row.locator(".badge").first).to_have_text("open")
    expect(row).not_to_contain_text("suppressed")
    expect(row.get_by_role("button", name="Lift")).to_have_count(0)
    expect(page.get_by_role("row").filter(has_text="lift_suppression").first).to_contain_text(APPROVER)

    # approve another one: the Scripts page plans it into the next change window
    _row(page, approved).get_by_label(f"select {approved}").check()
    page.get_by_label("Comment").fill("for the Saturday window")
    page.get_by_role("button", name="Approve selected").click()
    expect(page.get_by_role("status")).to_contain_text(f"approve: 1 recommendation(s) by {APPROVER}")
    plan = page.request.get(server + "/api/change-windows").json()
    moves = plan["next_window"]["moves"]
    assert [m["name"] for m in moves] == [approved], plan
    duration = moves[0]["duration"]

    page.get_by_role("link", name="Scripts", exact=True).click()
    expect(page.get_by_role("heading", name="Scripts", exact=True)).to_be_visible()
    windows = page.locator("section.change-windows")
    expect(windows.get_by_role("heading", level=2)).to_contain_text(plan["next_window"]["label"])
    planned = windows.locator("ol li").filter(has_text=approved)
    expect(planned).to_have_count(1)
    expect(planned).to_contain_text(duration)
    expect(planned).to_contain_text(f"fits {plan['next_window']['label']}")

    # more approvals (two big DB2 table spaces) so the plan also has a later window, then the shot
    page.goto(server + "/recommendations?target=demo%3ADB2PROD01")
    for name in ("TS_HIST_2024", "TS_HIST_2023"):
        _row(page, name).get_by_label(f"select {name}").check()
    page.get_by_role("button", name="Approve selected").click()
    expect(page.get_by_role("status")).to_contain_text("approve: 2 recommendation(s)")
    page.goto(server + "/scripts")
    expect(windows.locator("ol li")).to_have_count(3)
    expect(windows.get_by_role("heading", level=3).first).to_contain_text("Then ")
    shot(page, "2x-review-scripts-windows")

    # mark it executed: a verification starts, "waiting" on the Recommendations page
    move = page.get_by_role("row").filter(has_text=approved)
    move.get_by_role("button", name="Executed").click()
    expect(page.get_by_role("status")).to_contain_text(f"marked executed by {APPROVER}")
    expect(page.get_by_role("row").filter(has_text=approved)).to_contain_text("executed")
    expect(windows.locator("ol li").filter(has_text=approved)).to_have_count(0)

    page.goto(server + "/recommendations?status=executed")
    done = page.locator("table").first.locator("tbody tr").filter(has_text=approved)
    expect(done.locator(".verification")).to_have_attribute("data-status", "waiting")
    expect(done.locator(".verification")).to_contain_text("measuring since")
    record = page.get_by_role("region", name="Track record")
    expect(record).to_contain_text("waiting 1")
    expect(record.get_by_role("row").filter(has_text=approved)).to_contain_text("waiting")
    shot(page, "2x-review-executed")
    record.scroll_into_view_if_needed()
    record.screenshot(path=str(SHOTS / "2x-review-track-record.png"))


def test_heatmap_flash_chart_and_object_evidence(server: str, page: Page) -> None:
    _login(page, server)
    page.goto(server + "/heatmap")
    flash = page.get_by_role("img", name="How much flash: share of I/O wait saved against GB of flash")
    expect(flash).to_be_visible()
    assert flash.locator("path").count() >= 1 and flash.locator("circle").count() >= 1
    expect(page.locator("table.flash-savings")).to_contain_text("Sales")
    shot(page, "2x-review-heatmap")

    page.goto(server + "/targets/demo%3ASQLPROD01")
    page.get_by_label("Name contains").fill("HotIdx")
    page.get_by_role("button", name="Filter").click()
    page.get_by_role("link", name="Sales_HotIdx1").click()
    evidence = page.get_by_role("region", name="Evidence")
    expect(evidence).to_contain_text("Moves with filegroup FG_HOT_INDEX")
    expect(evidence.locator("table.predicted tr.chosen")).to_contain_text("flash")
    shot(page, "2x-review-object-evidence")
