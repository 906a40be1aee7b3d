"""A target's object rows kept per data version, so filters, sorts and pages do not re-read them.

Building the rows reads every object's 24 h of I/O (one row per interval and roll-up hour) and
takes most of a big target's page time; paging through them must not repeat that.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.store.models import DbObject, IoInterval, Recommendation, Target
from app.store.object_rows import (
    DatabaseSummary,
    ObjectRow,
    database_summaries,
    object_rows,
    order_rows,
    sort_keys,
)
from policies.model import Policy


@dataclass
class CachedRows:
    """One version of a target's rows, with what does not depend on the filters."""

    rows: list[ObjectRow]
    kinds: list[str]
    databases: list[DatabaseSummary]
    orders: dict[tuple[str, bool], list[ObjectRow]] = field(default_factory=dict)  # by (sort, desc)

    def ordered(self, sort: str, descending: bool, policy: Policy) -> list[ObjectRow]:
        hit = self.orders.get((sort, descending))
        if hit is None:
            hit = order_rows(self.rows, sort_keys(policy)[sort], descending=descending)
            self.orders[(sort, descending)] = hit
        return hit


class RowsCache:
    """A target's (or database's) rows per data version. The version is the newest io_interval id
    (every poll adds intervals; roll-ups move interval sums, never change them), the target's
    objects (count, newest id, newest last_seen: a poll that changes an object's location sees
    it), its recommendations (newest update, count, newest id: reviews and advice runs set
    updated_at), the window start and the policy; filters, sort and paging run over the cached
    rows."""

    def __init__(self, size: int = 32) -> None:
        self.size = size
        self._items: dict[tuple[Any, ...], CachedRows] = {}
        self._lock = threading.Lock()

    def get(self, key: tuple[Any, ...]) -> CachedRows | None:
        with self._lock:
            return self._items.get(key)

    def put(self, key: tuple[Any, ...], rows: CachedRows) -> None:
        with self._lock:
            for old in [k for k in self._items if k[:3] == key[:3]]:
                del self._items[old]  # an older version of the same target / database
            if len(self._items) >= self.size:
                self._items.pop(next(iter(self._items)))
            self._items[key] = rows

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


object_rows_cache = RowsCache()


def data_version(session: Session, target_id: int) -> tuple[Any, ...]:
    """What changes whenever a target's rows would: see RowsCache."""
    newest_interval = session.scalar(select(func.max(IoInterval.id)))
    recs = session.execute(
        select(
            func.max(Recommendation.updated_at), func.count(Recommendation.id), func.max(Recommendation.id)
        ).where(Recommendation.target_id == target_id)
    ).one()
    objects = session.execute(
        select(func.count(DbObject.id), func.max(DbObject.id), func.max(DbObject.last_seen)).where(
            DbObject.target_id == target_id
        )
    ).one()
    return (newest_interval, *recs, *objects)


def cached_rows(
    session: Session, target: Target, database: str | None, since: datetime, until: datetime, policy: Policy
) -> CachedRows:
    """The rows of a target (or database) from the cache, read and kept when the data moved on."""
    url = str(session.get_bind().engine.url)
    key = (url, target.id, database, since, policy.model_dump_json(), data_version(session, target.id))
    cached = object_rows_cache.get(key)
    if cached is None:
        rows = object_rows(session, target, database, since, until, policy)
        cached = CachedRows(rows, sorted({r.kind for r in rows}), database_summaries(rows))
        object_rows_cache.put(key, cached)
    return cached
