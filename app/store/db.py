"""Engine and session factory; schema upgrades applied at start (Alembic)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

import psycopg
from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

# Errors that come from the store, not from the data or a target: SQLAlchemy's wrapped ones and
# the drivers' own, which bulk paths (PostgreSQL COPY, raw SQLite connections) raise unwrapped.
_FROM_STORE: tuple[type[BaseException], ...] = (DBAPIError, sqlite3.Error, psycopg.Error)
# The store is locked, busy, unreachable or gave up on a lock (SQLite "database is locked",
# PostgreSQL connection refused, serialization failure, deadlock, lock or statement timeout): the
# same work may succeed when tried again. Wrapped (SQLAlchemy) or raw (COPY, raw connections).
_TRANSIENT: tuple[type[BaseException], ...] = (
    OperationalError,
    InterfaceError,
    sqlite3.OperationalError,
    psycopg.OperationalError,
    psycopg.InterfaceError,
)

StoreFault = Literal["transient", "permanent"]
_SQLITE_BUSY = ("database is locked", "database is busy", "database table is locked")


def store_fault(exc: BaseException) -> StoreFault | None:
    """Whose error this is, the one definition every retry and blame decision uses.

    transient: the store is locked, busy or unreachable (retry later); permanent: the store refused
    what was written (an integrity, data or SQL error: the same write fails again, so it is a bug or
    bad data, never retried); None: not the store's error at all (a target's, or a bug).
    SQLite raises OperationalError for a lock and for a missing table or bad SQL alike: only its
    lock messages are transient."""
    orig = exc.orig if isinstance(exc, DBAPIError) else exc
    if isinstance(orig, sqlite3.Error) and not (isinstance(exc, DBAPIError) and exc.connection_invalidated):
        return "transient" if any(m in str(orig) for m in _SQLITE_BUSY) else "permanent"
    if isinstance(exc, _TRANSIENT):
        return "transient"
    if isinstance(exc, DBAPIError) and exc.connection_invalidated:
        return "transient"
    if isinstance(exc, _FROM_STORE):
        message = str(exc)
        return (
            "transient" if "database is locked" in message or "database is busy" in message else "permanent"
        )
    return None


def retryable(exc: BaseException) -> bool:
    """A store error worth trying again (scheduled jobs, collector workers, the scheduler's loop)."""
    return store_fault(exc) == "transient"


ALEMBIC_DIR = Path(__file__).parent / "alembic"


def include_object(obj: object, name: str | None, type_: str, reflected: bool, compare_to: object) -> bool:
    """APScheduler keeps its own job table in the same database; it is not ours to migrate."""
    return not (type_ == "table" and name == "scheduler_job")


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    cur = dbapi_conn.cursor()
    # WAL lets the web process read while the scheduler writes; foreign keys are off by default in SQLite.
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA busy_timeout=10000")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.close()


def make_engine(url: str) -> Engine:
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=10)


def alembic_config(url: str) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(ALEMBIC_DIR))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


def upgrade(engine: Engine) -> None:
    """Bring the store's schema to the newest version (idempotent)."""
    cfg = alembic_config(engine.url.render_as_string(hide_password=False))
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")


class Store:
    """The store as the service uses it: one engine, short sessions."""

    def __init__(self, url: str, *, migrate: bool = True) -> None:
        self.url = url
        self.engine = make_engine(url)
        if migrate:
            upgrade(self.engine)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)

    @property
    def is_postgres(self) -> bool:
        return self.engine.dialect.name == "postgresql"

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A transaction: committed on success, rolled back on any error (the store stays consistent)."""
        with self._sessions() as session, session.begin():
            yield session

    @contextmanager
    def write_session(self) -> Iterator[Session]:
        """A transaction that will write counters of targets: on SQLite it takes the database's
        write lock first (BEGIN IMMEDIATE), so reading the latest samples and inserting the next
        ones cannot interleave with another writer (an import chunk, a poll); busy_timeout makes
        the second writer wait. On PostgreSQL the callers lock their target rows (FOR UPDATE)."""
        with self.session() as session:
            if not self.is_postgres:
                session.connection().exec_driver_sql("BEGIN IMMEDIATE")
            yield session

    def dispose(self) -> None:
        self.engine.dispose()
