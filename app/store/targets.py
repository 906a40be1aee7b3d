"""Target queries: what to poll, and how the last poll went."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.store.models import DbObject, Target


class TargetError(Exception):
    pass


ENGINES = ("sqlserver", "db2")


def get_by_name(session: Session, name: str) -> Target:
    target = session.scalar(select(Target).where(Target.name == name))
    if target is None:
        raise TargetError(f"no target named {name!r} (see `tierwise targets list`)")
    return target


def add_target(
    session: Session,
    *,
    name: str,
    engine: str,
    source: str,
    connection_encrypted: str | None,
    password_env: str | None,
    poll_interval_s: int,
    now: datetime,
) -> Target:
    if engine not in ENGINES:
        raise TargetError(f"engine must be one of {', '.join(ENGINES)}, not {engine!r}")
    if not name.strip():
        raise TargetError("target name must not be empty")
    if poll_interval_s < 10:
        raise TargetError("poll interval must be at least 10 seconds")
    if session.scalar(select(Target.id).where(Target.name == name)) is not None:
        raise TargetError(f"a target named {name!r} already exists")
    target = Target(
        name=name,
        engine=engine,
        source=source,
        connection_encrypted=connection_encrypted,
        password_env=password_env,
        poll_interval_s=poll_interval_s,
        enabled=True,
        created_at=now,
        consecutive_failures=0,
    )
    session.add(target)
    session.flush()
    return target


def import_target(session: Session, *, server: str, engine: str, now: datetime) -> Target:
    """The target that imported files of `server` belong to (created on first import)."""
    name = f"import:{engine}:{server}"
    target = session.scalar(select(Target).where(Target.name == name))
    if target is not None:
        return target
    return add_target(
        session,
        name=name,
        engine=engine,
        source="import",
        connection_encrypted=None,
        password_env=None,
        poll_interval_s=300,
        now=now,
    )


def pollable(session: Session) -> list[Target]:
    return list(
        session.scalars(
            select(Target).where(Target.enabled.is_(True), Target.source != "import").order_by(Target.name)
        )
    )


@dataclass(frozen=True)
class TargetStatus:
    id: int
    name: str
    engine: str
    source: str
    enabled: bool
    poll_interval_s: int
    objects: int
    last_success_at: datetime | None
    last_error: str | None
    last_error_at: datetime | None
    consecutive_failures: int
    next_attempt_at: datetime | None

    def state(self, now: datetime) -> str:
        if not self.enabled:
            return "disabled"
        if self.source == "import":
            return "imported"
        if self.consecutive_failures:
            return "failing"
        if self.last_success_at is None:
            return "never polled"
        if (now - self.last_success_at).total_seconds() > 3 * self.poll_interval_s:
            return "stale"
        return "ok"


def statuses(session: Session) -> list[TargetStatus]:
    counts = dict(
        session.execute(select(DbObject.target_id, func.count()).group_by(DbObject.target_id)).all()
    )
    return [
        TargetStatus(
            id=t.id,
            name=t.name,
            engine=t.engine,
            source=t.source,
            enabled=t.enabled,
            poll_interval_s=t.poll_interval_s,
            objects=counts.get(t.id, 0),
            last_success_at=t.last_success_at,
            last_error=t.last_error,
            last_error_at=t.last_error_at,
            consecutive_failures=t.consecutive_failures,
            next_attempt_at=t.next_attempt_at,
        )
        for t in session.scalars(select(Target).order_by(Target.name))
    ]
