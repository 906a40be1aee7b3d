"""Has a target's data changed since the advice last read it? One row per target (IngestWatermark).

Every write that stores samples of a target adds one to its `version` (polls, collector batches,
import chunks: app/store/ingest.py calls `mark_ingested`); an import also sets `imported_version`
to the new version. An evaluation reads the versions before it reads the data (`data_versions`)
and records them as `advised_version` when done (`mark_advised`). So:

- `import_pending`: targets an import wrote since the advice last read them (the scheduler
  advises them once the imports have been still for a quiet period, app/jobs.py);
- `changed_since_advice`: targets with any new data since then (an evaluation can skip the rest).

Counters, not times: a collector host's clock never makes a change look older than the advice.
One small table read by primary key: cheap every few seconds on SQLite and PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import cast

from sqlalchemy import Table, bindparam, case, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from app.store.models import IngestWatermark

_TABLE = cast(Table, IngestWatermark.__table__)


def mark_ingested(
    session: Session, target_ids: Iterable[int], *, imported: bool = False, at: datetime | None = None
) -> None:
    """One more write of these targets' samples, in the caller's transaction (ids in order, as the
    ingest locks its targets: no deadlock between writers)."""
    ids = sorted(set(target_ids))
    if not ids:
        return
    at = at or datetime.now(UTC)
    t = _TABLE
    insert = pg_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert
    rows = [
        {
            "target_id": i,
            "version": 1,
            "imported_version": 1 if imported else 0,
            "changed_at": at,
            "advised_version": 0,
        }
        for i in ids
    ]
    stmt = insert(t).values(rows)
    stmt = stmt.on_conflict_do_update(
        index_elements=[t.c.target_id],
        set_={
            "version": t.c.version + 1,
            "imported_version": case(
                (stmt.excluded.imported_version > 0, t.c.version + 1), else_=t.c.imported_version
            ),
            "changed_at": stmt.excluded.changed_at,
        },
    )
    session.execute(stmt)


def data_versions(session: Session) -> dict[int, int]:
    """Each target's data version, read by an evaluation before it reads the data."""
    return {tid: v for tid, v in session.execute(select(_TABLE.c.target_id, _TABLE.c.version))}


def mark_advised(session: Session, seen: dict[int, int], at: datetime) -> None:
    """The evaluation that read `seen` is stored: those versions are advised (never moved back, if
    an older evaluation finishes after a newer one)."""
    if not seen:
        return
    t = _TABLE
    stmt = (
        update(t)
        .where(t.c.target_id == bindparam("tid"), t.c.advised_version < bindparam("seen"))
        .values(advised_version=bindparam("seen"), advised_at=at)
    )
    session.connection().execute(stmt, [{"tid": tid, "seen": v} for tid, v in sorted(seen.items())])


def import_pending(session: Session) -> dict[int, int]:
    """Targets an import wrote since the advice last read them: target id -> imported_version (the
    value changes with every import chunk, so a caller sees when the imports have gone still)."""
    t = _TABLE
    rows = session.execute(
        select(t.c.target_id, t.c.imported_version).where(t.c.imported_version > t.c.advised_version)
    )
    return {tid: v for tid, v in rows}


def changed_since_advice(session: Session) -> set[int]:
    """Targets with samples stored since the advice last read them (any source)."""
    t = _TABLE
    return set(session.scalars(select(t.c.target_id).where(t.c.version > t.c.advised_version)))
