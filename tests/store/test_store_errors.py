"""One classification of store errors (app/store/db.store_fault), checked on real errors of both
stores: what is retried (locked, busy, unreachable, serialization failure) and what is not (an
integrity error: the same write would fail again)."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest
from sqlalchemy import create_engine, text

from app.store.db import Store, retryable, store_fault
from app.store.models import Target
from app.store.targets import add_target
from connectors.records import SourceError
from tests.conftest import free_port


def _raised(fn: object) -> BaseException:
    try:
        fn()  # type: ignore[operator]
    except Exception as exc:
        return exc
    raise AssertionError("no error raised")


def _add(store: Store, name: str) -> None:
    with store.session() as s:
        add_target(s, name=name, engine="sqlserver", source="live", connection_encrypted=None,
                   password_env=None, poll_interval_s=60, now=datetime.now(UTC))  # fmt: skip


def test_a_locked_sqlite_database_is_retried(tmp_path: Path) -> None:
    path = tmp_path / "tw.db"
    store = Store(f"sqlite:///{path}")
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another writer: a large import's chunk
    try:
        with store.engine.connect() as conn:
            conn.exec_driver_sql("PRAGMA busy_timeout=100")
            wrapped = _raised(
                lambda: conn.exec_driver_sql("INSERT INTO rollup_progress VALUES ('x', 0, NULL)")
            )
        raw = sqlite3.connect(path, isolation_level=None, timeout=0.1)
        unwrapped = _raised(lambda: raw.execute("INSERT INTO rollup_progress VALUES ('y', 0, NULL)"))
        raw.close()
    finally:
        holder.execute("ROLLBACK")
        holder.close()
        store.dispose()
    for exc in (wrapped, unwrapped):
        assert "database is locked" in str(exc)
        assert store_fault(exc) == "transient" and retryable(exc)


def test_a_refused_postgresql_connection_is_retried() -> None:
    port = free_port()  # nobody listens there
    engine = create_engine(f"postgresql+psycopg://tierwise@127.0.0.1:{port}/tierwise")
    wrapped = _raised(engine.connect)
    engine.dispose()
    unwrapped = _raised(lambda: psycopg.connect(f"host=127.0.0.1 port={port} dbname=x connect_timeout=3"))
    for exc in (wrapped, unwrapped):
        assert "refused" in str(exc).lower() or "connection" in str(exc).lower()
        assert store_fault(exc) == "transient" and retryable(exc)


@pytest.mark.postgres
def test_a_postgresql_serialization_failure_is_retried(postgres_url: str) -> None:
    store = Store(postgres_url)
    _add(store, "SQLPROD01")
    try:
        with store.engine.connect() as first, store.engine.connect() as second:
            first.exec_driver_sql("BEGIN ISOLATION LEVEL REPEATABLE READ")
            first.execute(text("SELECT poll_interval_s FROM target WHERE name = 'SQLPROD01'")).scalar()
            second.execute(text("UPDATE target SET poll_interval_s = 120 WHERE name = 'SQLPROD01'"))
            second.commit()
            exc = _raised(
                lambda: first.execute(text("UPDATE target SET poll_interval_s = 30 WHERE name = 'SQLPROD01'"))
            )
            first.rollback()
    finally:
        store.dispose()
    assert isinstance(getattr(exc, "orig", None), psycopg.errors.SerializationFailure), exc
    assert store_fault(exc) == "transient" and retryable(exc)


def test_an_integrity_error_is_the_stores_but_never_retried(store: Store) -> None:
    _add(store, "SQLPROD01")

    def same_name_again() -> None:  # the name is unique (add_target would refuse it before the store)
        with store.session() as s:
            s.add(Target(name="SQLPROD01", engine="sqlserver", source="live", created_at=datetime.now(UTC)))

    exc = _raised(same_name_again)
    assert "unique" in str(exc).lower()
    assert store_fault(exc) == "permanent" and not retryable(exc)


def test_errors_that_are_not_the_stores() -> None:
    for exc in (SourceError("connection refused by SQLPROD01"), ValueError("bug"), KeyError("x")):
        assert store_fault(exc) is None and not retryable(exc)
