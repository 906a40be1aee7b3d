"""Unknown locations as a task: listed per target on the Targets and Policy pages, and mapped to a
pool's tier in one form that saves a new policy version (validated, audited, admin only)."""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime

from fastapi.testclient import TestClient

from app.evaluate import evaluate
from app.store.db import Store
from app.store.policies import current_policy, history
from policies.loader import DEFAULT_POLICY
from tests.web.conftest import csrf_of, login


def _store(client: TestClient) -> Store:
    store: Store = client.app.state.tierwise.store  # type: ignore[attr-defined]
    return store


def _evaluate(client: TestClient) -> dict[str, int]:
    store = _store(client)
    with store.session() as s:
        policy = current_policy(s, None)
    return evaluate(store, policy, now=datetime.now(UTC), time_limit_s=2.0).unknown_locations


def _forget_fc(client: TestClient) -> None:
    """A policy whose fc tier no longer names the demo's F:\\MSSQL\\SAS\\ directory."""
    token = csrf_of(client.get("/policies").text)
    text = DEFAULT_POLICY.read_text().replace("sqlserver_path_prefixes: ['F:\\MSSQL\\SAS\\']",
                                              "sqlserver_path_prefixes: ['F:\\MSSQL\\NOSAS\\']")  # fmt: skip
    assert "F:\\MSSQL\\NOSAS\\" in text
    r = client.post("/policies", data={"yaml_text": text, "comment": "forget fc", "csrf_token": token})
    assert r.status_code == 200 and "policy saved" in r.text


def test_unmatched_locations_are_listed_and_mapped_in_one_form(app_client: TestClient) -> None:
    login(app_client, "ada")
    assert _evaluate(app_client) == {}
    assert "None: every location of the last advice run matches a tier" in app_client.get("/policies").text
    _forget_fc(app_client)
    unknown = _evaluate(app_client)
    assert unknown and all(n > 0 for n in unknown.values())
    targets = app_client.get("/targets").text
    assert "Locations that match no tier" in targets
    assert "F:\\MSSQL\\SAS\\" in html.unescape(targets) and "matches no tier of the policy" in targets
    page = app_client.get("/policies").text
    locations = [html.unescape(v) for v in re.findall(r'name="location" value="([^"]*)"', page)]
    assert locations and all(loc.startswith("F:\\MSSQL\\SAS\\") for loc in locations)
    versions = len(history_of(app_client))
    n = len(locations)
    listed = [html.unescape(v) for v in re.findall(r'name="listed" value="([^"]*)"', page)]
    assert listed == locations  # each row offers its own directory, which may be shortened to a prefix
    form = {"csrf_token": csrf_of(page), "comment": "fc is F:\\MSSQL\\SAS\\", "location": locations, "listed": listed,
            "engine": ["sqlserver"] * n, "kind": ["path"] * n, "pool": ["default"] * n, "tier": ["fc"] * n}  # fmt: skip
    r = app_client.post("/policies/mapping", data=form)
    assert r.status_code == 200 and "policy saved" in r.text, r.text
    assert len(history_of(app_client)) == versions + 1
    with _store(app_client).session() as s:
        policy = current_policy(s, None)
    assert set(locations) <= set(policy.tier("fc").locations.sqlserver_path_prefixes)
    events = app_client.get("/api/audit").json()
    assert any(e["action"] == "edit_policy" and "mapped locations to tiers" in e["summary"] for e in events)
    assert _evaluate(app_client) == {}  # the objects are placed again
    assert "Locations that match no tier" not in app_client.get("/targets").text


def history_of(client: TestClient) -> list[object]:
    with _store(client).session() as s:
        return list(history(s))


def test_mapping_is_admin_only_csrf_checked_and_validated(app_client: TestClient) -> None:
    login(app_client, "abe")
    token = csrf_of(app_client.get("/policies").text)
    row = {"location": "E:\\x\\", "listed": "E:\\x\\", "engine": "sqlserver", "kind": "path", "pool": "default",
           "tier": "flash"}  # fmt: skip
    assert app_client.post("/policies/mapping", data={**row, "csrf_token": token}).status_code == 403
    login(app_client, "ada")
    assert app_client.post("/policies/mapping", data={**row, "csrf_token": "nope"}).status_code == 403
    token = csrf_of(app_client.get("/policies").text)
    before = len(history_of(app_client))
    r = app_client.post("/policies/mapping", data={**row, "tier": "optane", "csrf_token": token})
    assert r.status_code == 200 and "not saved: pool &#39;default&#39; has no tier &#39;optane&#39;" in r.text
    r = app_client.post("/policies/mapping", data={**row, "pool": "array-z", "csrf_token": token})
    assert "not saved: the policy has no pool &#39;array-z&#39;" in r.text
    assert len(history_of(app_client)) == before
