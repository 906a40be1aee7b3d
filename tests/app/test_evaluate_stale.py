"""Data collected weeks ago is judged on the window ending at its newest sample, and says so."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from cryptography.fernet import Fernet
from sqlalchemy import func, select

from app.demo import ensure_demo_fleet
from app.evaluate import evaluate
from app.secrets import Vault
from app.settings import Settings
from app.store.db import Store
from app.store.models import AdviceSnapshot, DbObject, Recommendation, Target
from policies.loader import load_policy

COLLECTED = datetime(2026, 10, 20, 9, 0, tzinfo=UTC)
NOW = COLLECTED + timedelta(days=33, hours=3)


def test_old_data_gets_advice_on_its_own_window(store: Store, settings: Settings) -> None:
    settings = settings.model_copy(update={"demo_history_hours": 12})
    ensure_demo_fleet(store, Vault(Fernet.generate_key()), settings, now=COLLECTED)
    result = evaluate(store, load_policy(), now=NOW)
    with store.session() as s:
        targets = set(s.scalars(select(Target.name)))
        open_moves = s.scalar(select(func.count()).select_from(Recommendation))
        notes = {
            name: snap.notes
            for name, snap in s.execute(select(Target.name, AdviceSnapshot).join(AdviceSnapshot))
        }
    # the window counted back from the wall clock held nothing; the advice used the data's own
    assert result.objects > 0 and result.moves > 0 and (open_moves or 0) > 0
    assert set(result.data_ends) == targets
    for name in targets:
        assert any(n.startswith("data up to 2026-10-20 09:00 UTC, 33 days old") for n in notes[name]), notes[
            name
        ]


def test_fresh_data_has_no_data_end_note(store: Store, settings: Settings) -> None:
    settings = settings.model_copy(update={"demo_history_hours": 6})
    ensure_demo_fleet(store, Vault(Fernet.generate_key()), settings, now=NOW)
    result = evaluate(store, load_policy(), now=NOW + timedelta(minutes=5))
    assert result.objects > 0 and result.data_ends == {}
    with store.session() as s:
        assert not any(
            n.startswith("data up to") for snap in s.scalars(select(AdviceSnapshot)) for n in snap.notes
        )


def test_a_server_held_by_two_targets_is_advised_once(store: Store, settings: Settings) -> None:
    """Files imported before a server was polled stay in their import target; the advice reads
    the polled target only, so the server's files are not counted twice."""
    from app.collect import poll_target, simulator_connection
    from app.importer import import_file
    from app.store.targets import add_target
    from tests.app.test_import import FILE_STATS

    import_file(store, FILE_STATS)  # import:sqlserver:SQLPROD01 and import:sqlserver:SQLPROD02\OLTP
    vault = Vault(Fernet.generate_key())
    with store.session() as s:
        live = add_target(s, name="prod-a", engine="sqlserver", source="live",
                          connection_encrypted=vault.encrypt(simulator_connection("SQLPROD01", COLLECTED)),
                          password_env=None, poll_interval_s=300, now=COLLECTED).id  # fmt: skip
    for hours in range(1, 4):
        assert poll_target(store, vault, settings, live, now=NOW - timedelta(hours=4 - hours)).ok
    evaluate(store, load_policy(), now=NOW)
    with store.session() as s:
        snaps = {
            name: snap for name, snap in s.execute(select(Target.name, AdviceSnapshot).join(AdviceSnapshot))
        }
    assert "prod-a" in snaps and "import:sqlserver:SQLPROD02\\OLTP" in snaps
    assert "import:sqlserver:SQLPROD01" not in snaps
    assert {o["server"] for o in snaps["prod-a"].objects} == {"SQLPROD01"}
    with store.session() as s:
        live_keys = set(s.scalars(select(DbObject.key).where(DbObject.target_id == live)))
        imported = set(
            s.scalars(select(DbObject.key).join(Target).where(Target.name == "import:sqlserver:SQLPROD01"))
        )
    advised = [o["key"] for o in snaps["prod-a"].objects]
    assert imported - live_keys, "the fixture should hold files the live target does not"
    assert not set(advised) & (imported - live_keys), "files only the import target holds were advised"
    assert len(advised) == len(set(advised))
