"""schemathesis against our OpenAPI spec: no input makes the API answer with a server error."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from sqlalchemy import select

from app.settings import Settings
from app.store.db import Store
from app.store.models import User
from app.store.tokens import create_token
from app.store.users import add_user
from tests.conftest import live_server


@pytest.fixture(scope="module")
def live_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    tmp: Path = tmp_path_factory.mktemp("fuzz")
    cfg = Settings(database_url=f"sqlite:///{tmp / 'tw.db'}", secret_key_file=tmp / "tw.key", demo=True,
                   scheduler_enabled=False, demo_history_hours=4)  # fmt: skip
    store = Store(cfg.database_url)
    with store.session() as s:
        add_user(s, username="fuzz", password="fuzz-password", role="approver", now=datetime.now(UTC))
        token = create_token(s, user=s.scalar(select(User).where(User.username == "fuzz")), name="fuzz",  # type: ignore[arg-type]
                             now=datetime.now(UTC))  # fmt: skip
    store.dispose()
    with live_server(cfg) as url:
        yield url, token


@pytest.fixture(scope="module")
def api_schema(live_api: tuple[str, str]) -> schemathesis.BaseSchema:
    base, token = live_api  # the schema, like the API, needs a login
    return schemathesis.openapi.from_url(f"{base}/openapi.json", headers={"Authorization": f"Bearer {token}"})


def test_no_server_errors(api_schema: schemathesis.BaseSchema, live_api: tuple[str, str]) -> None:
    _, token = live_api
    headers = {"Authorization": f"Bearer {token}"}
    checked = []
    for result in api_schema.get_all_operations():
        operation = result.ok()

        @given(case=operation.as_strategy())
        @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
        def call(case: schemathesis.Case) -> None:
            response = case.call(headers=headers)
            assert response.status_code < 500, (
                case.method,
                case.path,
                response.status_code,
                response.text[:300],
            )

        call()
        checked.append(f"{operation.method.upper()} {operation.path}")
    assert "POST /api/recommendations/{rec_id}/review" in checked and "GET /api/recommendations" in checked
