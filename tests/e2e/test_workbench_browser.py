"""The Recommendations workbench in headless Chromium as an approver: sorting by a column header,
text search, the database and status filters, select-all, the export (the downloaded rows are the
filtered ones), approving from the sticky action bar, suppressing a row in place without the page
moving, and an approved move whose scripts were refused (flagged, no "Executed").
Screenshots: test-artifacts/screenshots/3x-workbench-*.png."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from sqlalchemy import select

from app.settings import Settings
from app.store.db import Store
from app.store.models import Recommendation
from app.store.users import add_user
from tests.conftest import live_server
from tests.e2e.conftest import shot

APPROVER, PASSWORD = "abe", "correct horse battery"


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    tmp = tmp_path_factory.mktemp("e2e-workbench")
    return Settings(database_url=f"sqlite:///{tmp / 'tierwise.db'}", secret_key_file=tmp / "tierwise.key",
                    demo=True, scheduler_enabled=False, demo_history_hours=8)  # fmt: skip


@pytest.fixture(scope="module")
def server(settings: Settings) -> Iterator[str]:
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


def _names(page: Page) -> list[str]:
    return page.locator("table.workbench tbody tr strong").all_inner_texts()


def test_sort_search_filter_select_all_and_export(server: str, page: Page) -> None:
    _login(page, server)
    expect(page.get_by_role("region", name="Start here")).to_contain_text("The open moves save")
    page.get_by_role("link", name="Recommendations", exact=True).click()
    table = page.locator("table.workbench")

    # sort by size, smallest first, by clicking the header twice (it starts biggest first)
    page.get_by_role("link", name="Size").click()
    expect(table.locator("th[aria-sort]")).to_have_attribute("aria-sort", "descending")
    page.get_by_role("link", name="Size").click()
    expect(table.locator("th[aria-sort]")).to_have_attribute("aria-sort", "ascending")
    api = page.request.get(server + "/api/recommendations?sort=size&dir=asc&limit=50").json()["items"]
    assert _names(page) == [r["name"] for r in api]
    sizes = [r["size_bytes"] for r in api]
    assert sizes == sorted(sizes)

    # text search, then the database filter on top of it
    page.get_by_label("Search").fill("fg_ord_2025")
    page.get_by_role("button", name="Filter").click()
    names = _names(page)
    assert names and all(n.startswith("FG_ORD_2025") for n in names), names
    page.get_by_label("Search").fill("")
    page.get_by_label("Database").select_option("ORDERS")
    page.get_by_role("button", name="Filter").click()
    orders = _names(page)
    api = page.request.get(server + "/api/recommendations?database=ORDERS&limit=100").json()["items"]
    assert sorted(orders) == sorted(r["name"] for r in api) and orders
    # the sort chosen before is kept by the filter form
    assert "sort=size" in page.url and "dir=asc" in page.url

    # select-all selects every row of the page, and the bar counts them
    page.get_by_label("select all on this page").check()
    expect(page.locator("input.pick:checked")).to_have_count(len(orders))
    expect(page.locator("[data-selected-count]")).to_have_text(f"{len(orders)} selected")
    page.get_by_label("select all on this page").uncheck()
    expect(page.locator("input.pick:checked")).to_have_count(0)

    # export: the downloaded rows are the filtered ones, in the page's order
    with page.expect_download() as info:
        page.get_by_role("link", name="Export CSV").click()
    rows = list(csv.DictReader(io.StringIO(Path(info.value.path()).read_text(encoding="utf-8"))))
    assert [r["name"] for r in rows] == orders
    assert {r["database"] for r in rows} == {"ORDERS"}
    shot(page, "3x-workbench-filtered")

    # the status filter knows "suppressed"; an unknown status says so instead of an empty list
    page.goto(server + "/recommendations?status=bogus")
    expect(page.get_by_role("alert")).to_contain_text("Unknown status 'bogus'")
    assert len(_names(page)) > 0


def test_approve_suppress_in_place_and_refused_scripts(server: str, page: Page, settings: Settings) -> None:
    store = Store(settings.database_url)
    with store.session() as s:  # the advice moves TS_HOT_IDX, but it is in the flash group already
        rec = s.scalar(select(Recommendation).where(Recommendation.name == "TS_HOT_IDX"))
        assert rec is not None
        rec.evidence = {**rec.evidence, "storage_group": "SG_FLASH"}
        refused_id = rec.id
    store.dispose()
    _login(page, server)
    page.goto(server + "/recommendations?target=demo%3ASQLPROD01")
    bar = page.locator("#workbench-bar")

    # suppress a row in the middle of the list: it is marked where it is, nothing moves
    rows = page.locator("table.workbench tbody tr")
    victim, below = rows.nth(3), rows.nth(4)
    victim_name = victim.locator("strong").inner_text()
    before = (victim.bounding_box(), below.bounding_box(), page.evaluate("window.scrollY"))
    victim.get_by_label(f"select {victim_name}").check()
    until = (datetime.now(UTC) + timedelta(days=14)).date().isoformat()
    page.get_by_label("Suppress selected: reason").fill("vendor tool moves it")
    page.get_by_label("until").fill(until)
    page.get_by_role("button", name="Suppress selected").click()
    expect(bar.get_by_role("status")).to_contain_text(
        f"suppressed 1 recommendation(s) until {until} 00:00 UTC"
    )
    expect(victim).to_contain_text(f"suppressed until {until} 00:00 UTC by {APPROVER} (vendor tool moves it)")
    expect(victim.get_by_role("button", name="Lift")).to_be_visible()
    after = (victim.bounding_box(), below.bounding_box(), page.evaluate("window.scrollY"))
    assert after == before, (before, after)
    shot(page, "3x-workbench-suppressed")
    page.goto(server + "/recommendations?status=suppressed")
    assert _names(page) == [victim_name]

    # approve two from the sticky bar, scrolled to the bottom of the list: the bar stays in view
    page.goto(server + "/recommendations?q=TS_")
    names = _names(page)
    assert "TS_HOT_IDX" in names
    page.get_by_label("select TS_HOT_IDX").check()
    other = next(n for n in names if n != "TS_HOT_IDX")
    page.get_by_label(f"select {other}").check()
    page.locator("table.workbench tbody tr").last.scroll_into_view_if_needed()
    expect(bar).to_be_in_viewport()
    bar.get_by_role("button", name="Approve selected").click()
    expect(bar.get_by_role("status")).to_contain_text("approve: 2 recommendation(s)")
    expect(bar.get_by_role("status")).to_contain_text("scripts refused: ")
    flagged = page.locator("table.workbench tbody tr").filter(has=page.get_by_label("select TS_HOT_IDX"))
    expect(flagged).to_contain_text("approved — scripts refused: ")

    # the refused one: flagged on its page, no "Executed"; the scripts page leaves it out of the plan
    page.goto(server + f"/recommendations/{refused_id}")
    expect(page.get_by_role("alert")).to_contain_text("already in storage group SG_FLASH")
    expect(page.get_by_role("button", name="Executed")).to_have_count(0)
    expect(page.get_by_role("button", name="Reopen")).to_be_visible()
    expect(page.get_by_role("button", name="Approve")).to_have_count(0)
    page.goto(server + "/scripts")
    expect(page.locator("#refused-moves")).to_contain_text("TS_HOT_IDX")
    expect(page.locator("section.change-windows ol li").filter(has_text="TS_HOT_IDX")).to_have_count(0)
    expect(
        page.get_by_role("row").filter(has_text="TS_HOT_IDX").get_by_role("button", name="Executed")
    ).to_have_count(0)
    expect(
        page.get_by_role("row").filter(has_text=other).get_by_role("button", name="Executed")
    ).to_be_visible()
    shot(page, "3x-workbench-scripts-refused")
