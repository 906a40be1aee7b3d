"""The heat map and the flash-curve JSON name each pool's fastest tier, from the policy in force:
a database on array-b counts GB of nvme, the fleet's page names "flash / nvme"."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml
from fastapi.testclient import TestClient

from app.main import create_app
from app.settings import Settings
from app.store.db import Store
from app.store.models import AdviceSnapshot, Recommendation, Target
from app.store.users import add_user
from policies.loader import DEFAULT_POLICY
from tests.policies.test_pools_policy import nvme_pool
from tests.web.conftest import PASSWORD, login

NOW = datetime(2026, 11, 20, 9, 30, tzinfo=UTC)


def _curve(database: str, pool: str | None) -> dict[str, object]:
    curve: dict[str, object] = {"database": database, "points": [[0, 0.0], [10, 0.5]],
                                "savings": {"flash_gb_recommended": 5, "io_ms_per_s_now": 3.0, "io_ms_per_s_after": 1.0,
                                            "io_ms_per_s_saved": 2.0}}  # fmt: skip
    return curve if pool is None else {**curve, "pool": pool}


@pytest.fixture
def client(settings: Settings, tmp_path: Path) -> Iterator[TestClient]:
    """A two-pool policy file (array-b takes the SQLDEV servers), a target on each pool with its
    stored curve, and an open move onto array-b's nvme."""
    data = yaml.safe_load(DEFAULT_POLICY.read_text())
    data["pools"] = [nvme_pool("array-b", "SQLDEV*")]
    policy = tmp_path / "pools.yaml"
    policy.write_text(yaml.safe_dump(data), encoding="utf-8")
    settings = settings.model_copy(update={"demo": False, "scheduler_enabled": False, "policy_file": policy})
    store = Store(settings.database_url)
    with store.session() as s:
        add_user(s, username="vera", password=PASSWORD, role="viewer", now=NOW)
        for name, pool in (("SQLDEV01", "array-b"), ("SQLPROD01", None)):
            t = Target(name=name, engine="sqlserver", source="import", created_at=NOW)
            s.add(t)
            s.flush()
            s.add(AdviceSnapshot(target_id=t.id, evaluated_at=NOW, objects=[], notes=[],
                                 flash_curve=[_curve("Sales", pool)]))  # fmt: skip
            if pool is not None:
                s.add(Recommendation(target_id=t.id, key="Sales/filegroup/FG", engine="sqlserver", server=name,
                                     database="Sales", kind="filegroup", name="FG", from_tier="sas", to_tier="nvme",
                                     profile="hot", rule="TW101", size_bytes=6 * 2**30, io_ms_per_s_now=3.0,
                                     io_ms_per_s_after=1.0, evidence={"pool": pool}, status="open", created_at=NOW,
                                     updated_at=NOW))  # fmt: skip
    store.dispose()
    with TestClient(create_app(settings)) as c:
        yield login(c, "vera")


def test_the_flash_curve_json_names_the_pools_fastest_tier(client: TestClient) -> None:
    dev = client.get("/api/targets/SQLDEV01/flash-curve").json()
    assert dev["flash_tier"] == "nvme" and [d["flash_tier"] for d in dev["databases"]] == ["nvme"]
    prod = client.get("/api/targets/SQLPROD01/flash-curve").json()
    assert prod["flash_tier"] == "flash" and [d["flash_tier"] for d in prod["databases"]] == ["flash"]


def test_the_heat_map_counts_and_names_flash_per_pool(client: TestClient) -> None:
    sv = client.get("/api/heatmap", params={"target": "SQLDEV01"}).json()["savings"]
    assert sv["flash_tier"] == "nvme" and sv["flash_gb"] == pytest.approx(6.0)  # nvme is array-b's flash
    fleet = client.get("/heatmap").text
    assert "How much flash / nvme" in fleet
    page = client.get("/heatmap", params={"target": "SQLDEV01"}).text
    assert "How much nvme" in page and "nvme they would use" in page
