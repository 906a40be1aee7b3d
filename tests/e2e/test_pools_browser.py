"""The fleet page's "Start here" per storage pool in headless Chromium: a policy that puts the
demo's DB2 server on its own array shows one card per pool (its tiers used and free, its open
moves' saving, its top moves), and a top move opens its recommendation.
Screenshot: test-artifacts/screenshots/3y-fleet-pools.png."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
import yaml
from playwright.sync_api import Page, expect

from app.settings import Settings
from app.store.db import Store
from app.store.policies import save_policy
from app.store.users import add_user
from policies.loader import DEFAULT_POLICY
from tests.conftest import live_server
from tests.e2e.conftest import shot

VIEWER, PASSWORD = "vera", "correct horse battery"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("e2e-pools")
    settings = Settings(database_url=f"sqlite:///{tmp / 'tierwise.db'}", secret_key_file=tmp / "tierwise.key",
                        demo=True, scheduler_enabled=False, demo_history_hours=8)  # fmt: skip
    data: dict[str, Any] = yaml.safe_load(DEFAULT_POLICY.read_text(encoding="utf-8"))
    tiers = copy.deepcopy(data["tiers"])
    tiers[0]["capacity_gb"] = 500
    data["pools"] = [{"name": "db2-array", "servers": "DB2PROD*", "tiers": tiers}]
    store = Store(settings.database_url)
    now = datetime.now(UTC)
    with store.session() as s:
        add_user(s, username=VIEWER, password=PASSWORD, role="viewer", now=now)
        save_policy(s, yaml_text=yaml.safe_dump(data), username="setup", comment="pools", now=now)
    store.dispose()
    with live_server(settings) as url:
        yield url


def test_start_here_shows_each_pool(server: str, page: Page) -> None:
    page.goto(server + "/login")
    page.get_by_label("User name").fill(VIEWER)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    start = page.get_by_role("region", name="Start here")
    expect(start).to_contain_text("Per storage pool")
    db2 = page.locator("#pool-db2-array")
    expect(db2).to_be_visible()
    expect(page.locator("#pool-default")).to_be_visible()
    expect(db2.locator("tbody tr").first).to_contain_text("of 500")
    expect(page.locator("#pool-default tbody tr").first).to_contain_text("of 6.6 TB")  # 6,720 GB of flash
    shot(page, "3y-fleet-pools")
    top = db2.locator("ol.top-moves a").first
    expect(top).to_be_visible()
    name = top.inner_text()
    top.click()
    expect(page.locator("h1")).to_contain_text(name)
