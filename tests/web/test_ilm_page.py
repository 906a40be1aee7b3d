"""The stored ILM plan: shown on /ilm and at /api/ilm; daily re-plans record what changed."""

from __future__ import annotations

from datetime import timedelta

from fastapi.testclient import TestClient
from sqlalchemy import func, select

from app.evaluate import evaluate
from app.ilm import plan_changes
from app.store.models import IlmPlanRecord
from policies.loader import load_policy
from tests.web.conftest import login


def test_plan_page_and_api(app_client: TestClient) -> None:
    page = login(app_client, "vera").get("/ilm").text
    assert "dbo.Orders" in page and "Capacity forecast" in page and "tier-flash" in page
    doc = app_client.get("/api/ilm").json()
    orders = next(t for t in doc["plan"]["tables"] if t["table"] == "dbo.Orders")
    assert any(p["new"] for p in orders["partitions"])  # the leading edge
    # each table says how its heat was judged: a decay that explains it, or the measured medians
    fits = {t["table"]: t["fit"] for t in doc["plan"]["tables"]}
    assert orders["fit"]["method"] == "huber" and "(fitted decay, R² " in page
    hist = next((f for name, f in fits.items() if name.endswith("ORDER_HIST")), None)
    assert hist is not None and hist["method"] == "median by age" and hist["why"]
    assert "No exponential decay explains this table's heat" in page


def test_replanned_once_a_day(app_client: TestClient) -> None:
    state = app_client.app.state.tierwise  # type: ignore[attr-defined]
    with state.store.session() as s:
        first = s.scalar(select(IlmPlanRecord.created_at).order_by(IlmPlanRecord.id.desc()).limit(1))
    assert first is not None
    evaluate(state.store, load_policy(), now=first + timedelta(hours=2))  # same day: no new plan
    with state.store.session() as s:
        assert s.scalar(select(func.count()).select_from(IlmPlanRecord)) == 1
    evaluate(state.store, load_policy(), now=first + timedelta(days=1))
    with state.store.session() as s:
        assert s.scalar(select(func.count()).select_from(IlmPlanRecord)) == 2


def test_changes_name_partitions_whose_next_move_changed() -> None:
    def doc(move: dict[str, str] | None) -> dict:  # type: ignore[type-arg]
        p = {"partition": 7, "new": False, "moves": [move] if move else []}
        return {"tables": [{"server": "S", "database": "D", "table": "dbo.T", "partitions": [p]}]}

    demote = {"date": "2027-01-01", "to_tier": "sata"}
    assert plan_changes(None, doc(demote)) == []
    assert plan_changes(doc(demote), doc(demote)) == []
    changed = plan_changes(doc(demote), doc(None))  # stayed hot: no longer demoted on schedule
    assert changed == [{"partition": "S/D/dbo.T p7", "before": demote, "after": None}]
