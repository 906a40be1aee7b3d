"""The Policy page refuses a policy whose pools would both take a stored object, and says which."""

from __future__ import annotations

import html
from datetime import UTC, datetime

from fastapi.testclient import TestClient

from advisors.pools import conflict_reason
from app.store.unmapped import UnmappedLocation
from tests.store.test_policies_pools import pooled_text
from tests.web.conftest import csrf_of, login


def test_the_policy_page_names_the_object_and_both_pools(app_client: TestClient) -> None:
    login(app_client, "ada")
    token = csrf_of(app_client.get("/policies").text)
    text = pooled_text(["SQL*01"], ["SQLPROD*"])  # the demo's SQLPROD01 matches both
    r = app_client.post("/policies", data={"yaml_text": text, "comment": "pools", "csrf_token": token})
    assert r.status_code == 422
    page = html.unescape(r.text)
    assert "Not saved:" in page and "pools 'array-a' and 'array-b' would both take stored objects" in page
    assert "sqlserver SQLPROD01 " in page
    r = app_client.post("/policies", data={"yaml_text": pooled_text(["DB2*"], ["SQLPROD*"]), "comment": "apart",
                                           "csrf_token": token})  # fmt: skip
    assert r.status_code == 200 and "policy saved" in r.text


def test_a_location_two_pools_take_is_listed_with_both_and_not_mappable() -> None:
    row = dict(target_id=1, target="SQLPROD01", evaluated_at=datetime(2026, 11, 20, tzinfo=UTC), server="SQLPROD01",
               engine="sqlserver", location="B:\\fc\\", location_kind="path", objects=2, size_gb=8.0,
               reads_per_s=5.0, writes_per_s=1.0, examples=("F1",))  # fmt: skip
    torn = UnmappedLocation(pool="array-a+array-b", reason=conflict_reason(["array-a", "array-b"]),
                            pools=("array-a", "array-b"), **row)  # type: ignore[arg-type]  # fmt: skip
    lost = UnmappedLocation(pool="array-a", reason="matches no tier of pool array-a", **row)  # type: ignore[arg-type]
    assert (torn.mappable, torn.pool_text) == (False, "array-a and array-b")
    assert (lost.mappable, lost.pool_text) == (True, "array-a")
