"""The object pages in headless Chromium: a target's objects (sort, filter), drill into one object
(its SVG charts draw), its recommendation, and the heat map. Screenshots:
test-artifacts/screenshots/1x-objects-*.png."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from app.demo import DEMO_PASSWORD, DEMO_USER
from tests.e2e.conftest import shot


def _login(page: Page, server: str) -> None:
    page.goto(server + "/login")
    page.get_by_label("User name").fill(DEMO_USER)
    page.get_by_label("Password").fill(DEMO_PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Fleet")).to_be_visible()


def _numbers(page: Page, column: int) -> list[float]:
    cells = page.locator("table.objects tbody tr").evaluate_all(
        f"rows => rows.map(r => r.children[{column}].textContent.trim())"
    )
    out = []
    for text in cells:
        t = text.replace(",", "")
        if t in ("–", ""):
            continue
        mult = 1000.0 if t.endswith("k") else 1.0
        out.append(float(t.rstrip("k")) * mult)
    return out


def test_target_object_and_heatmap(server: str, page: Page) -> None:
    _login(page, server)
    page.goto(server + "/targets/demo%3ASQLPROD01")
    expect(page.get_by_role("heading", name="demo:SQLPROD01")).to_be_visible()
    expect(page.locator("table.databases").get_by_role("link", name="Sales", exact=True)).to_be_visible()
    shot(page, "1x-objects-target")

    # sort by read IOPS (descending first), then filter by name
    page.locator("table.objects thead").get_by_role("link", name="Read IOPS").click()
    expect(page.locator("th[aria-sort=descending]")).to_contain_text("Read IOPS")
    values = _numbers(page, 5)
    assert values and values == sorted(values, reverse=True)
    page.get_by_label("Name contains").fill("HotIdx")
    page.get_by_role("button", name="Filter").click()
    expect(page.locator("table.objects tbody tr")).to_have_count(2)
    expect(page.locator("th[aria-sort=descending]")).to_contain_text("Read IOPS")  # the sort is kept

    # drill into one object: four charts, each drawn
    page.get_by_role("link", name="Sales_HotIdx1").click()
    expect(page.get_by_role("heading", name="Sales_HotIdx1")).to_be_visible()
    charts = page.locator("svg.chart[role=img]")
    expect(charts).to_have_count(4)
    for i in range(3):
        assert charts.nth(i).locator("path").count() >= 2, f"line chart {i} has no lines"
    assert charts.nth(3).locator("rect").count() >= 5, "hour-of-day bars missing"
    box = charts.nth(0).bounding_box()
    assert box is not None and box["width"] > 400 and box["height"] > 120
    expect(
        page.get_by_text("more than the 1.50 ms/s per GB that a GB on flash costs over fc").first
    ).to_be_visible()
    evidence = page.get_by_role("region", name="Evidence")
    expect(evidence).to_contain_text("Moves with filegroup FG_HOT_INDEX")
    expect(evidence.locator("table.predicted tr.chosen")).to_contain_text("flash")
    shot(page, "1x-objects-object")

    page.get_by_role("link", name="FG_HOT_INDEX").first.click()
    expect(page.get_by_role("heading", name="FG_HOT_INDEX")).to_be_visible()

    # a DB2 database page
    page.goto(server + "/targets/demo%3ADB2PROD01/ORDERS")
    expect(page.get_by_role("heading", name="ORDERS")).to_be_visible()
    expect(page.get_by_role("link", name="TS_HOT_IDX", exact=True)).to_be_visible()
    shot(page, "1x-objects-database")

    # the heat map: grid, legend, skew curve; a row label leads to the object
    page.goto(server + "/heatmap")
    expect(page.get_by_role("heading", name="Heat map")).to_be_visible()
    grid = page.get_by_role("img", name="Heat by hour: the busiest objects")
    expect(grid).to_be_visible()
    assert grid.locator("rect").count() > 40
    skew = page.get_by_role("img", name="Skew: share of I/O against share of capacity, hottest objects first")
    assert skew.locator("path").count() >= 2
    expect(page.get_by_text("Predicted I/O wait saved")).to_be_visible()
    flash = page.get_by_role("img", name="How much flash: share of I/O wait saved against GB of flash")
    expect(flash).to_be_visible()
    assert flash.locator("circle").count() >= 1, "no recommended-flash marker"
    shot(page, "1x-objects-heatmap")
    grid.locator("a").first.click()
    expect(page.locator("svg.chart[role=img]").first).to_be_visible()
    assert "/objects/" in page.url
