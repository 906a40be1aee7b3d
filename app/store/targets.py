"""Target queries: what to poll, and how the last poll went."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import cast

from sqlalchemy import Executable, Table, func, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from app.secrets import Vault, redact
from app.store.models import DbObject, Target
from connectors import connstr


class TargetError(Exception):
    pass


ENGINES = ("sqlserver", "db2")


MAX_TARGET_ID = 2**31 - 1


def find_target(session: Session, ref: str) -> Target | None:
    """A target by its id (digits: what links and forms use, since a name may hold "/") or its
    name (what people type)."""
    if "\x00" in ref:
        return None
    if ref.isascii() and ref.isdigit() and int(ref) <= MAX_TARGET_ID:
        target = session.get(Target, int(ref))
        if target is not None:
            return target
    return session.scalar(select(Target).where(Target.name == ref))


def get_target(session: Session, ref: str) -> Target:
    """`find_target`, or a TargetError naming what was asked for."""
    target = find_target(session, ref)
    if target is None:
        raise TargetError(f"no target named {ref[:200]!r} (see `tierwise targets list`)")
    return target


def _check_fields(*, name: str, engine: str, poll_interval_s: int) -> None:
    if engine not in ENGINES:
        raise TargetError(f"engine must be one of {', '.join(ENGINES)}, not {engine!r}")
    if not name.strip():
        raise TargetError("target name must not be empty")
    if poll_interval_s < 10:
        raise TargetError("poll interval must be at least 10 seconds")


def check_connection(connection: str, *, password_env: str | None) -> None:
    """Refuse a connection string the driver would misread, before it is stored: by the ODBC
    grammar (connectors.connstr: a brace never closed, a pair without '=', an empty key, a key
    given twice, text after a closing brace, a control character), naming the problem and its
    character, never a value; and a password given twice (PWD= in the string and a password
    environment variable, which the poll would append)."""
    if not connection.strip():
        raise TargetError("the connection string is empty")
    try:
        attributes = connstr.parse(connection)
    except connstr.ConnectionStringError as exc:
        raise TargetError(f"the connection string is malformed: {exc}") from None
    if not attributes:
        raise TargetError("the connection string holds no key=value pair")
    if password_env and any(connstr.normal_key(a.key) in connstr.PASSWORD_KEYS for a in attributes):
        raise TargetError(
            "the connection string holds a password (PWD=) and a password environment variable is "
            "named too: keep one"
        )


def register_target(
    session: Session,
    *,
    name: str,
    engine: str,
    connection: str,
    vault: Vault,
    password_env: str | None,
    poll_interval_s: int,
    now: datetime,
) -> Target:
    """A live target from a connection string a person gave (the CLI, the Targets page): checked
    (`check_connection`) and stored only encrypted, secrets and all. What may be shown of it is
    derived when needed (connectors.connstr.display), never stored in clear."""
    _check_fields(name=name, engine=engine, poll_interval_s=poll_interval_s)
    check_connection(connection, password_env=password_env)
    return add_target(session, name=name, engine=engine, source="live",
                      connection_encrypted=vault.encrypt(connection), password_env=password_env,
                      poll_interval_s=poll_interval_s, now=now)  # fmt: skip


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
    """The target row, for callers whose connection is their own (the demo's simulated fleet,
    tests); a string typed by a person goes through `register_target`."""
    _check_fields(name=name, engine=engine, poll_interval_s=poll_interval_s)
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


IMPORT_PREFIX = "import:{engine}:"


def import_target_name(server: str, engine: str) -> str:
    return IMPORT_PREFIX.format(engine=engine) + server


def import_target(session: Session, *, server: str, engine: str, now: datetime) -> Target:
    """The target that imported files of `server` belong to, created on first import.

    Insert-or-get: two imports of a new server at the same time both get the one target (INSERT
    … ON CONFLICT DO NOTHING waits for the other transaction, then the SELECT sees its row)."""
    name = import_target_name(server, engine)
    target = session.scalar(select(Target).where(Target.name == name))
    if target is not None:
        return target
    if engine not in ENGINES:
        raise TargetError(f"engine must be one of {', '.join(ENGINES)}, not {engine!r}")
    if not server.strip():
        raise TargetError("server name must not be empty")
    values = {
        "name": name,
        "engine": engine,
        "source": "import",
        "connection_encrypted": None,
        "password_env": None,
        "poll_interval_s": 300,
        "enabled": True,
        "created_at": now,
        "consecutive_failures": 0,
    }
    table = cast(Table, Target.__table__)
    stmt: Executable
    if session.get_bind().dialect.name == "postgresql":
        stmt = pg_insert(table).values(values).on_conflict_do_nothing(index_elements=["name"])
    else:
        stmt = sqlite_insert(table).values(values).on_conflict_do_nothing(index_elements=["name"])
    session.execute(stmt)
    target = session.scalar(
        select(Target).where(Target.name == name).execution_options(populate_existing=True)
    )
    if target is None:  # pragma: no cover - the row exists once the INSERT returned
        raise TargetError(f"could not create the import target {name!r}")
    return target


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
            last_error=redact(t.last_error) if t.last_error else None,  # and rows older versions wrote
            last_error_at=t.last_error_at,
            consecutive_failures=t.consecutive_failures,
            next_attempt_at=t.next_attempt_at,
        )
        for t in session.scalars(select(Target).order_by(Target.name))
    ]
