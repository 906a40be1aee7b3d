"""Money reads in the policy's currency (`currency:`) on the fleet page, a recommendation's page and
the report email: what the demo fleet's moves to cheaper tiers free, with a symbol for once."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from advisors.quantities import gb, money
from app.mail.content import Scope
from app.mail.service import compose
from app.main import create_app
from app.settings import Settings
from app.store.db import Store
from app.store.models import Recommendation
from app.store.policies import current_policy
from app.store.users import add_user
from app.store.workbench import start_here
from policies.loader import DEFAULT_POLICY
from tests.web.conftest import PASSWORD, login


@pytest.fixture
def euro(settings: Settings, tmp_path: Path) -> Settings:
    policy = tmp_path / "euro.yaml"
    policy.write_text('currency: "€"\n' + DEFAULT_POLICY.read_text(encoding="utf-8"), encoding="utf-8")
    return settings.model_copy(
        update={"demo": True, "scheduler_enabled": False, "demo_history_hours": 8, "policy_file": policy}
    )


@pytest.fixture
def client(euro: Settings) -> Iterator[TestClient]:
    store = Store(euro.database_url)
    with store.session() as s:
        add_user(s, username="vera", password=PASSWORD, role="viewer", now=datetime.now(UTC))
    store.dispose()
    with TestClient(create_app(euro)) as c:
        yield login(c, "vera")


def test_money_is_in_the_policy_currency_everywhere(client: TestClient, euro: Settings) -> None:
    store = Store(euro.database_url)
    now = datetime.now(UTC)
    with store.session() as s:
        policy = current_policy(s, euro.policy_file)
        assert policy.currency == "€"
        start = start_here(s, policy, now=now)
        down = [
            r
            for r in s.scalars(select(Recommendation).where(Recommendation.status == "open"))
            if ((r.evidence or {}).get("decision") or {}).get("numbers", {}).get("cost_freed")
        ]
    assert start.freed and down, "the demo's cold data moves to cheaper tiers"
    fleet = client.get("/").text
    for f in start.freed:
        assert f'{gb(f.gb)} <span class="unit">of {f.tier}</span>' in fleet
        assert f"worth {money(f.cost, '€')} at the policy's cost per GB" in fleet
    assert "worth €" in fleet and "USD" not in fleet
    rec = down[0]
    numbers = rec.evidence["decision"]["numbers"]
    page = client.get(f"/recommendations/{rec.id}").text
    assert (
        f"{gb(numbers['gb_freed'])} of {rec.from_tier}, worth {money(numbers['cost_freed'], '€')} at the policy's"
        in page
    )
    msg, content = compose(store, euro, Scope.parse("fleet"), ["x@example.test"], now=now)
    store.dispose()
    text = msg.get_body(preferencelist=("plain",)).get_content()  # type: ignore[union-attr]
    html = msg.get_body(preferencelist=("html",)).get_content()  # type: ignore[union-attr]
    assert content.currency == "€" and content.cost_freed > 0
    said = f"worth {money(content.cost_freed, '€')} at the policy's cost per GB"
    assert said in text and said in html
    assert "rejected 0\n  predicted saving if open and approved moves are made: " in text  # lines kept apart
