"""Where SQLite and PostgreSQL differ in the read queries: time buckets and window bounds.

The one place for dialect SQL of the object pages, the heat map, the mail digests and the
evaluate window: every other read module writes portable SQLAlchemy and asks here.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import ColumnElement, Integer, cast, func, literal_column, type_coerce
from sqlalchemy.orm import Session

from app.store.models import UTCDateTime


def dialect_of(session: Session) -> str:
    """The store's SQL dialect name ("sqlite" or "postgresql")."""
    return session.get_bind().dialect.name


def hour_bucket(col: Any, dialect: str) -> ColumnElement[datetime]:
    """The hour an instant falls in (UTC), as an aware datetime: strftime on SQLite, date_trunc
    on PostgreSQL."""
    if dialect == "sqlite":
        return type_coerce(func.strftime("%Y-%m-%d %H:00:00", col), UTCDateTime())
    return type_coerce(func.date_trunc("hour", col), UTCDateTime())


def hour_of_day(col: Any, dialect: str) -> ColumnElement[int]:
    """The UTC hour of day (0-23) of an instant."""
    if dialect == "sqlite":
        return cast(func.strftime("%H", col), Integer)
    return cast(func.extract("hour", col), Integer)


def epoch_bucket(col: Any, seconds: int, dialect: str) -> ColumnElement[int]:
    """floor(unix time / seconds): buckets of any width aligned to the Unix epoch."""
    if dialect == "sqlite":
        return cast(cast(func.strftime("%s", col), Integer) / seconds, Integer)
    return cast(func.floor(func.extract("epoch", col) / seconds), Integer)


def window_bounds(session: Session, *instants: datetime) -> list[Any]:
    """Window bounds for a statement run many times. On PostgreSQL they are written into the SQL
    as literals: with bound parameters, psycopg prepares the statement after 5 runs and the server
    then switches to a generic plan that took 5-8 s instead of 70 ms for io_totals (measured on
    10,000 objects). The values are our own datetimes, formatted here: nothing from a request."""
    if dialect_of(session) != "postgresql":
        return list(instants)
    return [
        literal_column(f"TIMESTAMP '{t.astimezone(UTC).replace(tzinfo=None).isoformat(sep=' ')}'")
        for t in instants
    ]
