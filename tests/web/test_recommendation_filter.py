"""The recommendations list and its CSV / XLSX exports take one set of filter parameters (one FastAPI
dependency): the same names, values and descriptions, and the same rows."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from app.settings import Settings
from app.store.db import Store
from app.store.models import Recommendation, Target
from app.store.users import add_user
from tests.web.conftest import PASSWORD, login

NOW = datetime(2026, 11, 20, 9, 30, tzinfo=UTC)
ROUTES = ("/api/recommendations", "/api/recommendations.csv", "/api/recommendations.xlsx")
FILTERS = {"engine", "server", "status", "to_tier", "target", "database", "q", "sort", "dir"}


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    """The application without the demo fleet, a viewer, and three recommendations on two servers."""
    settings = settings.model_copy(update={"demo": False, "scheduler_enabled": False})
    store = Store(settings.database_url)
    with store.session() as s:
        add_user(s, username="vera", password=PASSWORD, role="viewer", now=NOW)
        t = Target(name="T1", engine="sqlserver", source="import", created_at=NOW)
        s.add(t)
        s.flush()
        s.add_all(
            Recommendation(target_id=t.id, key=f"Sales/filegroup/{name}", engine="sqlserver", server=server,
                           database="Sales", kind="filegroup", name=name, from_tier="sata", to_tier=to, profile="hot",
                           rule="TW101", size_bytes=2**30, io_ms_per_s_now=now_ms, io_ms_per_s_after=1.0,
                           evidence={}, status="open", created_at=NOW, updated_at=NOW)
            for name, server, to, now_ms in (("FG_A", "SQL1", "flash", 9.0), ("FG_B", "SQL1", "fc", 5.0),
                                             ("FG_C", "SQL2", "flash", 7.0))
        )  # fmt: skip
    store.dispose()
    with TestClient(create_app(settings)) as c:
        yield login(c, "vera")


def test_the_list_and_the_exports_document_the_same_filter(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    params = {route: {p["name"]: p for p in paths[route]["get"]["parameters"]} for route in ROUTES}
    assert set(params[ROUTES[0]]) == FILTERS | {"limit", "offset"}
    for route in ROUTES[1:]:
        assert set(params[route]) == FILTERS
        for name in FILTERS:
            assert params[route][name] == params[ROUTES[0]][name], (route, name)
    for name in FILTERS:
        assert params[ROUTES[0]][name].get("description"), name  # every filter says what it does


def test_the_list_and_the_csv_return_the_same_rows(client: TestClient) -> None:
    query = {"server": "SQL1", "sort": "wait", "dir": "asc"}
    listed = [r["name"] for r in client.get("/api/recommendations", params=query).json()["items"]]
    exported = [r["name"] for r in csv.DictReader(io.StringIO(client.get(ROUTES[1], params=query).text))]
    assert listed == exported == ["FG_B", "FG_A"]
    assert [r["name"] for r in client.get(ROUTES[0], params={"q": "fg_c"}).json()["items"]] == ["FG_C"]
    for route in ROUTES:  # a value the filter cannot take is refused alike
        assert client.get(route, params={"status": "bogus"}).status_code == 422, route
        assert client.get(route, params={"dir": "up"}).status_code == 422, route
        assert client.get(route, params={"q": "x" * 201}).status_code == 422, route
