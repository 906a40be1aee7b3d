"""The demo fleet: simulated targets with some history, so a new install shows data at once."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select

from app.collect import simulator_connection
from app.secrets import Vault
from app.settings import Settings
from app.store.db import Store
from app.store.ingest import IngestResult, ingest_snapshots
from app.store.models import DbObject, Sample, Target
from app.store.targets import add_target

DEMO_USER = "demo"
DEMO_PASSWORD = "tierwise-demo"  # documented in README: the demo fleet is simulated, nothing to protect


def ensure_demo_user(store: Store) -> None:
    """The documented demo login (admin), created once."""
    from app.store.models import User
    from app.store.users import add_user

    with store.session() as s:
        if s.scalar(select(User.id).where(User.username == DEMO_USER)) is None:
            add_user(s, username=DEMO_USER, password=DEMO_PASSWORD, role="admin", now=datetime.now(UTC))


def _origin(now: datetime, hours: int) -> datetime:
    return (now - timedelta(hours=hours)).replace(minute=0, second=0, microsecond=0)


def ensure_demo_fleet(
    store: Store, vault: Vault, settings: Settings, *, now: datetime | None = None
) -> IngestResult:
    """Create the simulated targets once, then backfill history up to `now` in demo steps.

    Idempotent: a second start only fills the time since the newest stored sample.
    """
    from connectors.simulator import demo_fleet

    now = now or datetime.now(UTC)
    total = IngestResult()
    with store.session() as s:
        existing = list(s.scalars(select(Target).where(Target.source == "simulator")))
    if existing:
        origin = datetime.fromisoformat(
            vault.decrypt(existing[0].connection_encrypted or "").split("origin=", 1)[1]
        )
    else:
        origin = _origin(now, settings.demo_history_hours)
    fleet = demo_fleet(origin)
    step = timedelta(seconds=settings.demo_step_s)
    for instance in fleet.instances:
        name = f"demo:{instance.name}"
        with store.session() as s:
            target = s.scalar(select(Target).where(Target.name == name))
            if target is None:
                target = add_target(
                    s,
                    name=name,
                    engine=str(instance.engine),
                    source="simulator",
                    connection_encrypted=vault.encrypt(simulator_connection(instance.name, origin)),
                    password_env=None,
                    poll_interval_s=settings.demo_poll_interval_s,
                    now=now,
                )
            last = s.scalar(
                select(func.max(Sample.sample_time))
                .join(DbObject, DbObject.id == Sample.object_id)
                .where(DbObject.target_id == target.id)
            )
            t = origin if last is None else last + step
            times = []
            while t <= now:
                times.append(t)
                t += step
            total.add(ingest_snapshots(s, target, (instance.snapshot(at) for at in times)))
            if times:
                target.last_success_at = times[-1]
                target.last_poll_at = times[-1]
    return total
