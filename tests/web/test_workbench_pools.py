"""The fleet page's "Start here" with storage pools: per pool, its tiers used and free, what its
open moves save and its top moves; the figures add up to the fleet's. One pool: today's look."""

from __future__ import annotations

import copy
import html
from datetime import UTC, datetime
from typing import Any

import yaml
from fastapi.testclient import TestClient

from advisors.quantities import gb, io_wait
from app.evaluate import evaluate
from app.store.db import Store
from app.store.policies import current_policy
from app.store.workbench import start_here
from policies.loader import DEFAULT_POLICY
from tests.web.conftest import csrf_of, login


def _store(client: TestClient) -> Store:
    store: Store = client.app.state.tierwise.store  # type: ignore[attr-defined]
    return store


def _db2_on_its_own_array(client: TestClient) -> None:
    """Save a policy that puts DB2PROD01 on array `db2-array` (the same locations, a 500 GB flash
    tier) and evaluate with it."""
    data: dict[str, Any] = yaml.safe_load(DEFAULT_POLICY.read_text(encoding="utf-8"))
    tiers = copy.deepcopy(data["tiers"])
    tiers[0]["capacity_gb"] = 500
    data["pools"] = [{"name": "db2-array", "servers": "DB2PROD*", "tiers": tiers}]
    token = csrf_of(client.get("/policies").text)
    r = client.post(
        "/policies", data={"yaml_text": yaml.safe_dump(data), "comment": "pools", "csrf_token": token}
    )
    assert r.status_code == 200 and "policy saved" in r.text, r.text
    store = _store(client)
    with store.session() as s:
        policy = current_policy(s, None)
    evaluate(store, policy, now=datetime.now(UTC), time_limit_s=2.0)


def test_start_here_per_pool_adds_up_to_the_fleet(app_client: TestClient) -> None:
    client = login(app_client, "ada")
    before = client.get("/").text
    assert "Per storage pool" not in before and 'id="start-flash"' in before  # one pool: as before
    _db2_on_its_own_array(client)
    now = datetime.now(UTC)
    with _store(client).session() as s:
        start = start_here(s, current_policy(s, None), now=now)
    assert [p.name for p in start.pools] == ["default", "db2-array"]
    assert start.flash is None
    by_name = {p.name: p for p in start.pools}
    assert [t.tier for t in by_name["db2-array"].tiers] == ["flash", "fc", "sata"]
    assert (
        by_name["db2-array"].tiers[0].capacity_gb == 500
        and by_name["default"].tiers[0].capacity_gb
        == yaml.safe_load(DEFAULT_POLICY.read_text())["tiers"][0]["capacity_gb"]
    )
    assert by_name["db2-array"].open_moves > 0 and by_name["default"].open_moves > 0
    assert sum(p.open_moves for p in start.pools) == start.open_moves
    assert abs(sum(p.saving_ms_per_s for p in start.pools) - start.saving_ms_per_s) < 1e-6
    items = client.get("/api/recommendations?limit=1000&status=open").json()["items"]
    db2_ids = {r["id"] for r in items if r["engine"] == "db2"}
    for p in start.pools:
        assert len(p.top_moves) <= 5
        assert all((m.id in db2_ids) == (p.name == "db2-array") for m in p.top_moves)
        savings = [m.saving_ms_per_s for m in p.top_moves]
        assert savings == sorted(savings, reverse=True)
    page = html.unescape(client.get("/").text)
    block = page[page.index('id="start-here"') : page.index("</section>")]
    assert "Per storage pool" in block and 'id="start-flash"' not in block
    pool_card = block[block.index('id="pool-db2-array"') :]
    flash = next(t for t in by_name["db2-array"].tiers if t.tier == "flash")
    assert (
        f'<td>flash</td><td class="num">{gb(flash.used_gb)} <span class="muted small">of 500 GB ('
        in pool_card
    )
    for m in by_name["db2-array"].top_moves:
        assert f'href="/recommendations/{m.id}"' in pool_card
        assert f"{m.from_tier} → {m.to_tier}, {io_wait(m.saving_ms_per_s)}</span>" in pool_card
