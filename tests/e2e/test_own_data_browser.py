"""A DBA's own data in Chromium (#28, done-when): a three-week-old collection of two SQL Server
instances and a Db2 one, SQLCRM01 on a D:\\ no tier names, imported into a fresh store and served
with the scheduler running, as `tierwise serve` runs. In the browser: the fleet names the unmapped
database, the heat map shows the busiest objects with their I/O, object pages show charts, and
mapping the drive on the Policy page produces its recommendations within a minute, with no shell.
Screenshots: test-artifacts/screenshots/own-*.png (kept in docs/images/ after a look)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from playwright.sync_api import Browser, Page, expect
from sqlalchemy import select

from app.evaluate import evaluate
from app.importer import import_file
from app.settings import Settings
from app.store.db import Store
from app.store.models import DbObject
from app.store.users import add_user
from policies.loader import load_policy
from tests.conftest import live_server
from tests.e2e.conftest import shot
from tests.own_collection import BUSIEST_UNMAPPED, write_collection

ADMIN, PASSWORD = "ada", "correct horse battery"
DAYS_OLD = 21


@pytest.fixture(scope="module")
def own(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, int]]]:
    tmp = tmp_path_factory.mktemp("e2e-own")
    settings = Settings(database_url=f"sqlite:///{tmp / 'tierwise.db'}", secret_key_file=tmp / "tierwise.key",
                        scheduler_enabled=True)  # fmt: skip
    store = Store(settings.database_url)
    for path in write_collection(tmp / "collection", DAYS_OLD):
        import_file(store, path)
    evaluate(store, load_policy(), now=datetime.now(UTC))
    with store.session() as s:
        add_user(s, username=ADMIN, password=PASSWORD, role="admin", now=datetime.now(UTC))
        ids = {n: i for i, n in s.execute(select(DbObject.id, DbObject.name))}
    store.dispose()
    with live_server(settings) as url:
        yield url, ids


@pytest.fixture
def admin(own: tuple[str, dict[str, int]], browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1360, "height": 900})
    page = context.new_page()
    page.goto(own[0] + "/login")
    page.get_by_label("User name").fill(ADMIN)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    yield page
    context.close()


def test_the_fleet_names_the_unmapped_database_first(own: tuple[str, dict[str, int]], admin: Page) -> None:
    block = admin.get_by_role("region", name="Not advised: data on locations no tier names")
    first = block.locator("tr.unmapped").first
    expect(first).to_contain_text(BUSIEST_UNMAPPED)
    expect(first).to_contain_text("CRM")
    expect(first).to_contain_text("SQLCRM01")
    expect(first.get_by_role("link", name="Map it to a tier")).to_have_attribute(
        "href", "/policies#unknown-locations"
    )
    expect(admin.locator("#start-attention")).to_contain_text("4 locations match no tier")
    shot(admin, "own-fleet")


def test_the_heat_map_shows_the_busiest_objects_with_their_io(
    own: tuple[str, dict[str, int]], admin: Page
) -> None:
    admin.goto(own[0] + "/heatmap")
    main = admin.locator("main")
    expect(main).not_to_contain_text("no I/O recorded")
    expect(main).to_contain_text(f"{DAYS_OLD} days old")
    grid = admin.locator("figure.wide svg").first
    expect(grid.locator("a", has_text="FG_CONTACTS_1")).to_have_count(1)  # the busiest, on the unmapped drive
    expect(grid.locator("rect").first).to_be_visible()
    shot(admin, "own-heatmap")


def test_object_pages_show_charts(own: tuple[str, dict[str, int]], admin: Page) -> None:
    for name in ("FG_CONTACTS_1", "FG_ORDERS_1", "TS_ORDERS"):
        admin.goto(f"{own[0]}/objects/{own[1][name]}")
        charts = admin.locator("#charts svg")
        expect(charts).to_have_count(4)
        expect(charts.first.locator("path, polyline").first).to_be_attached()
        if name == "FG_CONTACTS_1":
            expect(admin.locator("#evidence")).to_contain_text(
                f"Not advised: {BUSIEST_UNMAPPED} matches no tier"
            )
            shot(admin, "own-object-unmapped")


def test_mapping_the_drive_on_the_policy_page_advises_it_within_a_minute(
    own: tuple[str, dict[str, int]], admin: Page
) -> None:
    admin.goto(own[0] + "/policies#unknown-locations")
    row = admin.locator("#unknown-locations ~ form tr", has_text=BUSIEST_UNMAPPED).first
    row.get_by_label(f"location to map, {BUSIEST_UNMAPPED}").fill("D:\\")
    row.get_by_label(f"tier of {BUSIEST_UNMAPPED}").select_option("fc")
    shot(admin, "own-policy-mapping")
    started = time.monotonic()
    admin.get_by_role("button", name="Map and save").click()
    expect(admin.locator("main")).to_contain_text("advising the 1 target with objects there")
    # the page refreshes itself while the advice runs; it must be done within a minute
    expect(admin.locator("#advice-run")).to_contain_text("Advice done", timeout=60_000)
    assert time.monotonic() - started < 60
    expect(admin.locator("#advice-run")).to_contain_text("new recommendation")
    expect(admin.locator("main")).to_contain_text(
        "None: every location of the last advice run matches a tier"
    )
    shot(admin, "own-policy-done")
    admin.goto(own[0] + "/recommendations?q=FG_CONTACTS")
    expect(admin.locator("main table").first).to_contain_text("FG_CONTACTS")
    admin.goto(own[0] + "/")
    expect(admin.locator("tr.unmapped")).to_have_count(0)
