"""The scheduled roll-up works in short transactions (issue #33, item 5): each batch adds its
intervals and moves the mark past exactly them, so the result is the one-transaction roll-up's
(every interval once, on both stores), and logins during the roll-up of a large import go
through between its batches (on SQLite one waited 23-35 s for the whole backlog)."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from typing import cast

from fastapi.testclient import TestClient
from sqlalchemy import Table, func, select

from app.jobs import Runtime, Scheduler, rollup_job
from app.main import create_app
from app.secrets import Vault, load_key
from app.settings import Settings
from app.store.db import Store
from app.store.ingest import bulk_insert
from app.store.models import COUNTER_COLUMNS, DbObject, HourlyRollup, IoInterval, RollupProgress
from app.store.rollup import roll_up_batch, roll_up_in_batches
from app.store.targets import add_target
from app.store.users import add_user
from connectors.simulator import SimulatedFleet
from tests.store.test_rollup import T0, _add_targets, _expected, _interval_rows, _poll, _rolled
from tests.web.conftest import PASSWORD, csrf_of


def test_batches_add_every_interval_once_and_move_the_mark_with_each(store: Store) -> None:
    fleet = SimulatedFleet(seed=3, origin=T0, instances=2, files_per_instance=3)
    tids = _add_targets(store, fleet, T0)
    _poll(store, fleet, tids, [T0 + timedelta(minutes=20 * k) for k in range(7)])
    with store.session() as s:
        total = int(s.scalar(select(func.count()).select_from(IoInterval)) or 0)
        ids = list(s.scalars(select(IoInterval.id).order_by(IoInterval.id)))
    assert total > 14
    assert roll_up_batch(store, limit=5) == 5  # one transaction: 5 intervals, the mark past the 5th
    with store.session() as s:
        assert s.scalar(select(RollupProgress.last_interval_id)) == ids[4]
        assert s.scalar(select(func.sum(HourlyRollup.intervals))) == 5
    # more intervals arrive for hours already rolled up, and a known object gets two late ones
    _poll(store, fleet, tids, [T0 + timedelta(minutes=20 * k) for k in (7, 8)])
    with store.session() as s:
        known = s.scalar(select(IoInterval.object_id).order_by(IoInterval.id).limit(1))
        assert known is not None
        bulk_insert(
            s, cast(Table, IoInterval.__table__), _interval_rows(known, [T0 + timedelta(minutes=7)], 11)
        )
    assert roll_up_in_batches(store, batch=4) > 0
    assert _rolled(store) == _expected(store)  # every interval in its hour exactly once
    assert roll_up_in_batches(store, batch=4) == 0
    with store.session() as s:
        assert s.scalar(select(RollupProgress.last_interval_id)) == s.scalar(select(func.max(IoInterval.id)))


def _large_import(store: Store, intervals: int, objects: int = 200) -> None:
    """What a large import leaves: `intervals` raw intervals over `objects` files, none rolled up."""
    with store.session() as s:
        t = add_target(s, name="SQLBIG01", engine="sqlserver", source="import", connection_encrypted=None,
                       password_env=None, poll_interval_s=300, now=T0)  # fmt: skip
        objs = []
        for i in range(objects):
            o = DbObject(target_id=t.id, key=f"db/file/{i}", engine="sqlserver", server="SQLBIG01", database="db",
                         kind="data_file", name=f"file{i}", first_seen=T0, last_seen=T0)  # fmt: skip
            s.add(o)
            s.flush()
            objs.append(o.id)
    for k0 in range(0, intervals // objects, 200):
        rows = []
        for k in range(k0, min(k0 + 200, intervals // objects)):
            end = T0 + timedelta(minutes=5 * (k + 1))
            rows += [{"object_id": o, "start_time": end - timedelta(minutes=5), "end_time": end, "seconds": 300.0,
                      "extra": {}, **dict.fromkeys(COUNTER_COLUMNS, k)} for o in objs]  # fmt: skip
        with store.session() as s:
            bulk_insert(s, cast(Table, IoInterval.__table__), rows)


def test_logins_go_through_between_the_batches_of_a_large_roll_up(settings: Settings) -> None:
    """Logins during the roll-up of a large import succeed and land between its batches: some
    login sees the mark part way, which one transaction for the whole backlog never shows. How long
    a login waits is measured by bench/sqlite_load.py (make bench-load), not asserted here."""
    cfg = settings.model_copy(update={"demo": False, "scheduler_enabled": False})
    store = Store(cfg.database_url)
    with store.session() as s:
        add_user(s, username="abe", password=PASSWORD, role="approver", now=datetime.now(UTC))
    _large_import(store, 200_000)
    with store.session() as s:
        last = int(s.scalar(select(func.max(IoInterval.id))) or 0)
    Scheduler(
        Runtime(store, Vault(load_key(cfg)), cfg)
    )  # the jobs' runtime, not started: rollup_job runs below
    codes: list[int] = []
    marks: list[int] = []
    try:
        with TestClient(create_app(cfg)) as client:

            def login() -> None:
                token = csrf_of(client.get("/login").text)
                r = client.post("/login", data={"username": "abe", "password": PASSWORD, "csrf_token": token},
                                follow_redirects=False)  # fmt: skip
                codes.append(r.status_code)
                with store.session() as s:
                    marks.append(int(s.scalar(select(RollupProgress.last_interval_id)) or 0))
                client.post("/logout", data={"csrf_token": csrf_of(client.get("/").text)})

            job = threading.Thread(target=rollup_job)
            job.start()
            while job.is_alive():
                login()
            job.join()
        with store.session() as s:
            assert s.scalar(select(func.sum(HourlyRollup.intervals))) == 200_000  # the roll-up finished
    finally:
        store.dispose()
    assert codes and set(codes) == {303}, codes
    assert any(0 < m < last for m in marks), (last, marks)  # a login committed between two batches
