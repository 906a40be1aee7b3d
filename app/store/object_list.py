"""The target and database pages' question: which objects, filtered, sorted and paged."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.orm import Session

from app.errors import NotFound
from app.store.anchor import target_end, window_start
from app.store.lookup import target_named
from app.store.object_rows import DatabaseSummary, ObjectRow
from app.store.object_rows_cache import cached_rows
from policies.model import Policy

PAGE_SIZE = 50


@dataclass(frozen=True)
class ObjectFilter:
    kind: str | None = None
    tier: str | None = None  # a tier name, or "unknown"
    name: str | None = None  # contains, case-insensitive
    sort: str = "heat"
    descending: bool = True
    offset: int = 0
    limit: int = PAGE_SIZE
    clamp: bool = False  # an offset past the end shows the last page (pages) or nothing (API)


@dataclass(frozen=True)
class ObjectList:
    target: str
    target_id: int
    engine: str
    database: str | None
    since: datetime
    until: datetime
    rows: list[ObjectRow]  # the page
    total: int  # rows matching the filter
    offset: int
    limit: int
    kinds: list[str]  # present in the target / database, for the filter
    databases: list[DatabaseSummary]

    @property
    def page(self) -> int:
        return self.offset // self.limit + 1

    @property
    def pages(self) -> int:
        return max(1, math.ceil(self.total / self.limit))


def list_objects(
    *,
    session: Session,
    target: str,
    database: str | None,
    policy: Policy,
    now: datetime,
    filters: ObjectFilter,
    hours: int = 24,
) -> ObjectList:
    """A target's (or one database's) objects with the I/O of the `hours` ending at the target's
    newest sample (app/store/anchor.py), filtered, sorted and paged. An unknown sort key must be
    rejected by the caller (see object_rows.SORT_KEYS)."""
    t = target_named(session, target)
    if database is not None and "\x00" in database:  # PostgreSQL text cannot hold it: no such database
        raise NotFound(f"target {target!r} has no database {database!r}")
    until = target_end(session, t.id, now)
    since = window_start(until, hours)
    cached = cached_rows(session, t, database, since, until, policy)
    if database is not None and not cached.rows:
        raise NotFound(f"target {target!r} has no database {database!r}")
    # ordering is total (ties by name, then id), so filtering the ordered rows orders the subset
    chosen = cached.ordered(filters.sort, filters.descending, policy)
    if filters.kind:
        chosen = [r for r in chosen if r.kind == filters.kind]
    if filters.tier:
        want = None if filters.tier == "unknown" else filters.tier
        chosen = [r for r in chosen if r.current_tier == want]
    if filters.name:
        needle = filters.name.casefold()
        chosen = [r for r in chosen if needle in r.name.casefold()]
    start = max(filters.offset, 0)
    if filters.clamp and start >= len(chosen):
        start = max(0, (len(chosen) - 1) // filters.limit * filters.limit)
    return ObjectList(
        target=t.name,
        target_id=t.id,
        engine=t.engine,
        database=database,
        since=since,
        until=until,
        rows=chosen[start : start + filters.limit],
        total=len(chosen),
        offset=start,
        limit=filters.limit,
        kinds=cached.kinds,
        databases=cached.databases,
    )
