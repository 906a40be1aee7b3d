"""The Targets page shows admins each storage pool's evaluation state, a failing pool's error with it."""

from __future__ import annotations

from datetime import UTC, datetime

from fastapi.testclient import TestClient
from sqlalchemy import select

from app.settings import Settings
from app.store.db import Store
from app.store.models import Target
from app.store.watermarks import claim_pool, fail_pool, mark_ingested, request_changed_pools
from policies.loader import DEFAULT_POLICY, parse_policy
from tests.web.conftest import login


def test_a_failing_pools_error_shows_on_the_targets_page(
    app_client: TestClient, web_settings: Settings
) -> None:
    now = datetime.now(UTC)
    policy = parse_policy(DEFAULT_POLICY.read_text(encoding="utf-8"), source="default")
    store = Store(web_settings.database_url)
    try:
        with store.session() as s:  # the start-up evaluation advised the pool; new data makes it due
            mark_ingested(s, list(s.scalars(select(Target.id))))
        with store.session() as s:
            assert request_changed_pools(s, policy, now) == ["default"]
        with store.session() as s:
            claim = claim_pool(s, "worker-7", now, 60)
        assert claim is not None
        with store.session() as s:
            fail_pool(s, claim, "RuntimeError: the solver gave up on pool default", now)
    finally:
        store.dispose()
    page = login(app_client, "ada").get("/targets").text
    assert "Pool evaluations" in page
    row = page[page.index('id="pool-default"') :].split("</tr>")[0]
    assert "failing" in row and "RuntimeError: the solver gave up on pool default" in row
    assert ">1</td>" in row  # one failure, paused before the retry
    assert "worker-7" not in row  # the lease is released
    # a viewer sees the targets, not the evaluation internals
    app_client.cookies.clear()
    viewer = login(app_client, "vera").get("/targets").text
    assert "Pool evaluations" not in viewer and "the solver gave up" not in viewer
