"""End to end in a real headless Chromium (Debian's package, driven by Playwright): log in, open
the fleet, drill into a server's recommendations, approve one with a comment, see the audit entry.
Screenshots of the main pages are saved under test-artifacts/screenshots/."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Page, expect

from app.demo import DEMO_PASSWORD, DEMO_USER
from tests.e2e.conftest import shot


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
    row.get_by_role("link").last.click()  # the open-recommendations count
    expect(page.get_by_role("heading", name="Recommendations")).to_be_visible()
    expect(page.get_by_text("FG_HOT_INDEX")).to_be_visible()
    shot(page, "03-recommendations")

    page.get_by_role("link", name="FG_HOT_INDEX").click()
    expect(page.get_by_role("heading", name="FG_HOT_INDEX")).to_be_visible()
    expect(
        page.get_by_text("more than the 1.50 ms/s per GB that a GB on flash costs over fc").first
    ).to_be_visible()
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

    # the approved move's scripts: preview and download (what ops run)
    page.get_by_role("link", name="Scripts").click()
    expect(page.get_by_role("heading", name="Scripts")).to_be_visible()
    move = page.get_by_role("row").filter(has_text="FG_HOT_INDEX")
    expect(move).to_contain_text("forward")
    shot(page, "06-scripts")
    with page.expect_download() as download_info:
        move.get_by_role("link", name="download").first.click()
    download = download_info.value
    assert download.suggested_filename.endswith(".forward.sql")
    text = Path(download.path()).read_text(encoding="utf-8")
    assert "migration script: FORWARD" in text and "FG_HOT_INDEX" in text and "To:         tier flash" in text
