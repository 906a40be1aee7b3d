"""The /api routes that serve advised objects declare response models (app/api/schemas.py), and the
bodies stay byte for byte what the routes build: validated, never reshaped (#18).

The expected body is the route function's own return value rendered the way FastAPI renders a
route without a response model (jsonable_encoder, then JSONResponse), on the demo fleet with
SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any, get_args

import pytest
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.api import objects as api_objects
from app.api import routes as api_routes
from app.http.state import AppState
from app.main import create_app
from app.settings import Settings
from app.store.models import AdviceSnapshot, DbObject, Recommendation
from app.store.recommendations import SUPPRESSED, Status
from app.store.users import add_user
from tests.web.conftest import PASSWORD, login

NO_USER: Any = None  # the route functions ignore the user their dependency checked


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    cfg = settings.model_copy(update={"demo": True, "scheduler_enabled": False, "demo_history_hours": 8})
    from app.store.db import Store

    store = Store(cfg.database_url)
    with store.session() as s:
        add_user(s, username="abe", password=PASSWORD, role="approver", now=datetime.now(UTC))
    store.dispose()
    with TestClient(create_app(cfg)) as c:
        yield login(c, "abe")


def _state(c: TestClient) -> AppState:
    return c.app.state.tierwise  # type: ignore[attr-defined,no-any-return]


def _rendered(value: Any) -> bytes:
    """What FastAPI sends for a route without a response model."""
    return bytes(JSONResponse(jsonable_encoder(value)).body)


def _pairs(body: bytes) -> list[tuple[str, Any]]:
    """A body's keys and values in order (1 and 1.0 stay apart), without "until": the object
    detail's window ends at the moment of the request."""
    return [(k, v) for k, v in json.loads(body, object_pairs_hook=list) if k != "until"]


def test_bodies_are_what_the_routes_build(client: TestClient) -> None:
    state = _state(client)
    with state.store.session() as s:
        assert s.scalars(select(AdviceSnapshot).limit(1)).first() is not None, (
            "the demo fleet was not advised"
        )
        ids = list(s.scalars(select(DbObject.id).order_by(DbObject.id)))
    with_evidence = 0
    for oid in ids:
        r = client.get(f"/api/objects/{oid}")
        assert r.status_code == 200, r.text
        built = api_objects.object_json(object_id=oid, user=NO_USER, state=state)
        assert _pairs(r.content) == _pairs(_rendered(built))
        r = client.get(f"/api/objects/{oid}/evidence")
        if r.status_code == 404:  # no advice covers it (e.g. an instance counter)
            continue
        assert r.status_code == 200, r.text
        expected = api_objects.object_evidence_json(object_id=oid, user=NO_USER, state=state)
        assert r.content == _rendered(expected)
        with_evidence += 1
        assert r.json()["decision"] is None or r.json()["decision"]["stage"]
    assert with_evidence > 10  # files, filegroups, table spaces, partitions, logs of both engines

    f = api_routes.recommendation_filter(engine=None, server=None, status_filter=None, to_tier=None,
                                         target=None, database=None, q=None, sort="saving",
                                         direction=None)  # fmt: skip
    r = client.get("/api/recommendations", params={"limit": 1000})
    assert r.status_code == 200, r.text
    listed = api_routes.recommendations(f=f, limit=1000, offset=0, user=NO_USER, state=state)
    assert listed["items"] and r.content == _rendered(listed)


def test_a_review_answers_with_the_recommendation_as_stored(client: TestClient) -> None:
    state = _state(client)
    with state.store.session() as s:
        rec_id = s.scalar(select(Recommendation.id).where(Recommendation.status == Status.OPEN))
    assert rec_id is not None
    token = client.get("/api/session").json()["csrf_token"]
    r = client.post(f"/api/recommendations/{rec_id}/review", json={"action": "defer", "comment": "after Q4"},
                    headers={"X-CSRF-Token": token})  # fmt: skip
    assert r.status_code == 200, r.text
    with state.store.session() as s:
        rec = s.get(Recommendation, rec_id)
        assert rec is not None and rec.status == Status.DEFERRED
        assert r.content == _rendered(api_routes.recommendation_json(rec, None))


def test_the_openapi_schema_documents_the_advice(client: TestClient) -> None:
    doc = client.get("/openapi.json").json()
    schemas = doc["components"]["schemas"]

    def ok_ref(path: str, method: str = "get") -> str:
        content = doc["paths"][path][method]["responses"]["200"]["content"]["application/json"]
        return str(content["schema"]["$ref"]).rsplit("/", 1)[-1]

    assert ok_ref("/api/objects/{object_id}/evidence") == "ObjectEvidence"
    assert ok_ref("/api/objects/{object_id}") == "ObjectDetail"
    assert ok_ref("/api/recommendations") == "RecommendationList"
    assert ok_ref("/api/recommendations/{rec_id}/review", "post") == "Recommendation"
    decision = schemas["DecisionDoc"]
    assert {"stage", "rule", "moved", "preferred_tier", "recommended_tier"} <= set(decision["required"])
    assert "predicted" in decision["properties"] and "PredictedWait" in schemas
    assert set(schemas["Status"]["enum"]) == {s.value for s in Status}


def test_the_status_filter_is_the_status_enum_and_suppressed() -> None:
    """The list filter's allowed values are derived by hand (a Literal): held to the enum here."""
    assert set(get_args(api_routes.RecommendationStatus)) == {*(s.value for s in Status), SUPPRESSED}
