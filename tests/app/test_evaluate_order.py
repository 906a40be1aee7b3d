"""The windows of an evaluation come in object-id order, whatever order the read's plan returns
rows in: the placement may break ties by input order, so the advice must not depend on the plan
(one pool's read and the whole fleet's read use different plans on PostgreSQL)."""

from __future__ import annotations

from datetime import UTC, datetime

from cryptography.fernet import Fernet
from sqlalchemy import select

from app.demo import ensure_demo_fleet
from app.evaluate import windows_from_store
from app.secrets import Vault
from app.settings import Settings
from app.store.db import Store
from app.store.models import DbObject, Target
from policies.loader import load_policy

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def test_windows_come_in_object_id_order_for_the_fleet_and_for_one_pool(
    store: Store, settings: Settings
) -> None:
    ensure_demo_fleet(store, Vault(Fernet.generate_key()), settings.model_copy(update={"demo_history_hours": 6}),
                      now=NOW)  # fmt: skip
    policy = load_policy(None)
    with store.session() as s:
        ids = {(o.server, o.key): o.id for o in s.scalars(select(DbObject))}
        targets = list(s.scalars(select(Target.id).order_by(Target.id.desc())))
        fleet, _ = windows_from_store(s, policy, now=NOW)
        pool, _ = windows_from_store(s, policy, now=NOW, targets=targets)
    for windows in (fleet, pool):
        order = [ids[(w.info.server, w.info.key)] for w in windows]
        assert len(order) > 50
        assert order == sorted(order)
    assert [w.info.key for w in fleet] == [w.info.key for w in pool]
