"""The partitioning operator step of docs/large-fleet.md, run as written: convert a store that holds
data, keep writing, roll up, drop expired partitions, upgrade the schema again."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest
from sqlalchemy import func, select

from app.store.db import Store
from app.store.ingest import ingest_batch
from app.store.models import HourlyRollup, IoInterval, Sample, Target
from app.store.rollup import roll_up
from app.store.targets import add_target
from connectors.simulator import SimulatedFleet

pytestmark = pytest.mark.postgres

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "large-fleet.md"


def _sql_blocks() -> list[str]:
    return re.findall(r"```sql\n(.*?)```", GUIDE.read_text(), flags=re.S)


def test_the_documented_partitioning_converts_a_store_and_drops_expired_weeks(postgres_url: str) -> None:
    functions, conversion = _sql_blocks()
    store = Store(postgres_url)
    now = datetime.now(UTC).replace(microsecond=0)
    origin = now - timedelta(days=40)
    fleet = SimulatedFleet(seed=2, origin=origin, instances=2, files_per_instance=3)
    objects = 2 * 3
    with store.session() as s:
        targets = [
            add_target(
                s,
                name=i.name,
                engine="sqlserver",
                source="simulator",
                connection_encrypted=None,
                password_env=None,
                poll_interval_s=300,
                now=origin,
            )
            for i in fleet.instances
        ]
        for k in (1, 2, 3):  # 40 days old: beyond the 14 days of raw data kept
            at = origin + timedelta(hours=k)
            ingest_batch(s, [(t, [i.snapshot(at)]) for t, i in zip(targets, fleet.instances, strict=True)])
        roll_up(s)
    store.dispose()

    raw = psycopg.connect(postgres_url.replace("postgresql+psycopg://", "postgresql://"), autocommit=True)
    try:
        raw.execute(functions)
        raw.execute(conversion)
        kinds = dict(
            raw.execute(
                "SELECT relname, relkind FROM pg_class WHERE relname IN ('sample', 'io_interval', 'hourly_rollup')"
            ).fetchall()
        )
        assert kinds == {"sample": "p", "io_interval": "p", "hourly_rollup": "p"}

        store = Store(postgres_url)  # the schema upgrade at start still passes
        with store.session() as s:
            assert s.scalar(select(func.count()).select_from(Sample)) == 3 * objects  # copied over
            targets = list(s.scalars(select(Target).order_by(Target.id)))
            for k in (0, 1):  # new polls land in this week's partition
                at = now - timedelta(minutes=10 - 5 * k)
                ingest_batch(
                    s, [(t, [i.snapshot(at)]) for t, i in zip(targets, fleet.instances, strict=True)]
                )
            roll_up(s)
        dropped = raw.execute("SELECT tierwise_partitions(14, 400)").fetchone()
        assert dropped is not None and dropped[0] >= 2  # the old week of samples and of intervals
        with store.session() as s:
            assert s.scalar(select(func.count()).select_from(Sample)) == 2 * objects
            assert s.scalar(select(func.min(Sample.sample_time))) == now - timedelta(minutes=10)
            assert s.scalar(select(func.count()).where(IoInterval.end_time < now - timedelta(days=14))) == 0
            assert s.scalar(select(func.count()).select_from(HourlyRollup)) > 0  # kept 400 days
        for t in ("sample", "io_interval", "hourly_rollup"):
            assert raw.execute(f"SELECT count(*) FROM {t}_default").fetchone() == (0,)
        store.dispose()
    finally:
        raw.close()
