"""A recommendation's impact before approval is the one its stored script turns out to have: the
same move, the same options, the policy's copy rate (#28 item 6)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
import yaml

from advisors import quantities
from app.move_impact import impacts, recommendation_impact
from app.scripts import ensure_scripts
from app.store.db import Store
from app.store.models import Recommendation, Target
from migrations.durations import copy_minutes, minutes_text
from policies.loader import parse_policy
from policies.model import Policy
from tests.migrations.golden_cases import FIXTURES, POLICY

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)


def _policy(**change_windows: Any) -> Policy:
    data: dict[str, Any] = yaml.safe_load(POLICY.read_text(encoding="utf-8"))
    if change_windows:
        data["change_windows"] = change_windows
    return parse_policy(yaml.safe_dump(data), source="test policy")


def _advice(fixture: str, key: str) -> dict[str, Any]:
    doc = json.loads((FIXTURES / fixture).read_text(encoding="utf-8"))
    return next(o for o in doc["objects"] if o["key"] == key)


def _rec(s: Any, evidence: dict[str, Any], status: str = "open") -> Recommendation:
    target = s.query(Target).filter_by(name=evidence["server"]).one_or_none()
    if target is None:
        target = Target(name=evidence["server"], engine=evidence["engine"], source="import", created_at=NOW)
        s.add(target)
        s.flush()
    rec = Recommendation(target_id=target.id, key=evidence["key"], engine=evidence["engine"],
                         server=evidence["server"], database=evidence["database"], kind=evidence["kind"],
                         name=evidence["name"], from_tier=evidence.get("current_tier"),
                         to_tier=evidence["recommended_tier"], profile="random_read", rule="R1",
                         size_bytes=evidence.get("size_bytes"), evidence=evidence, status=status,
                         created_at=NOW, updated_at=NOW)  # fmt: skip
    s.add(rec)
    s.flush()
    return rec


# (fixture, key, the impact's kind, what the stored forward script contains)
CASES = [
    ("advice_sqlserver.json", "Sales/filegroup/FG_ORDERS_2024", "online", "DBCC SHRINKFILE"),
    ("advice_sqlserver.json", "Sales/filegroup/PRIMARY", "offline", "SET OFFLINE"),
    ("advice_sqlserver.json", "Sales/file/2", "offline", "SET OFFLINE"),
    ("advice_sqlserver.json", "tempdb/data", "restart", "MODIFY FILE"),
    ("advice_db2.json", "SALESDB/tablespace/TS_ORDERS_2024", "online", "USING STOGROUP"),
]


@pytest.mark.parametrize(("fixture", "key", "kind", "needle"), CASES, ids=[c[1] for c in CASES])
def test_the_impact_before_approval_is_what_the_stored_script_does(
    store: Store, fixture: str, key: str, kind: str, needle: str
) -> None:
    policy = _policy()
    with store.session() as s:
        rec = _rec(s, _advice(fixture, key))
        impact = recommendation_impact(rec, policy)  # open: no script written yet
        rows = ensure_scripts(s, rec, policy, now=NOW)
        # forward and rollback, and for DB2 the check-only script (issue #30)
        assert rec.script_error is None and len(rows) == (3 if fixture == "advice_db2.json" else 2)
        forward = next(r for r in rows if r.direction == "forward")
    assert impact.kind == kind
    assert needle in forward.text
    assert ("SET OFFLINE" in forward.text) == (kind == "offline") == forward.manual_step
    assert forward.restart_required == (kind == "restart")


def test_the_policys_copy_rate_is_the_pages_and_the_scripts(store: Store) -> None:
    """change_windows' copy rate for the move's tiers (a tier pair wins over the kind of move, which
    wins over the default) sets the downtime the page shows and the one the script prints."""
    evidence = _advice("advice_sqlserver.json", "Sales/filegroup/PRIMARY")
    size = sum(f["size_bytes"] for f in evidence["files"])
    pair = f"{evidence['current_tier']}->{evidence['recommended_tier']}"
    cases: list[tuple[dict[str, Any], int]] = [
        ({}, 200),  # the default
        ({"copy_rate_mb_s": 80}, 80),
        ({"copy_rate_mb_s": 80, "copy_rate_by_action": {"offline_copy": 40}}, 40),
        ({"copy_rate_mb_s": 80, "copy_rate_by_action": {"offline_copy": 40}, "copy_rate_by_tiers": {pair: 25}}, 25),
        ({"copy_rate_by_action": {"emptyfile": 10}}, 200),  # another kind of move's rate is not this one's
    ]  # fmt: skip
    for change_windows, rate in cases:
        policy = _policy(**change_windows)
        with store.session() as s:
            rec = _rec(s, evidence)
            impact = recommendation_impact(rec, policy)
            forward = next(r for r in ensure_scripts(s, rec, policy, now=NOW) if r.direction == "forward")
            s.rollback()
        minutes = copy_minutes(size, rate)
        assert (impact.kind, impact.copy_rate_mb_s, impact.downtime_minutes) == ("offline", rate, minutes)
        assert impact.copy_bytes == size
        assert f"about {minutes_text(minutes)} to copy" in forward.text and f"at ~{rate} MB/s" in forward.text
        assert (
            f"copy rate of {quantities.rate(rate, 'MB/s')}" in impact.detail
            and impact.summary == f"offline ≈ {minutes_text(minutes)}"
        )


def test_no_script_says_why_as_the_approval_would(store: Store) -> None:
    """master moves with the instance, and a DB2 log needs a log path the test policy does not
    give: the impact says so, with the reason the approval then keeps on the recommendation."""
    policy = _policy()
    for fixture, key in (
        ("advice_sqlserver.json", "master/filegroup/PRIMARY"),
        ("advice_db2.json", "SALESDB/log"),
    ):
        evidence = dict(_advice(fixture, key), current_tier="fc", recommended_tier="flash")
        with store.session() as s:
            rec = _rec(s, evidence)
            impact = recommendation_impact(rec, policy)
            assert ensure_scripts(s, rec, policy, now=NOW) == []
            assert impact.kind == "no_script" and rec.script_error and rec.script_error in impact.detail
    with store.session() as s:
        a = _rec(s, _advice("advice_sqlserver.json", "Sales/filegroup/PRIMARY"))
        b = _rec(s, _advice("advice_sqlserver.json", "Sales/filegroup/FG_ORDERS_2024"))
        both = impacts([a, b], policy)
        assert {k: v.kind for k, v in both.items()} == {a.id: "offline", b.id: "online"}
