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

import hashlib
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from fnmatch import fnmatchcase
from typing import cast

from sqlalchemy import ARRAY, BigInteger, Integer, Table, any_, bindparam, case, literal, or_, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from app.store.models import DbObject, IngestWatermark, PoolWatermark, Target
from policies.model import Policy, Pool, PoolConflict

_TABLE = cast(Table, IngestWatermark.__table__)


def mark_ingested(
    session: Session, target_ids: Iterable[int], *, imported: bool = False, at: datetime | None = None
) -> None:
    """One more write of these targets' samples, in the caller's transaction (ids in order, as the
    ingest locks its targets: no deadlock between writers). One statement whose text does not
    depend on how many targets: on PostgreSQL the ids go as one array, so the driver parses the
    statement once per connection (a VALUES row per target made a new statement every batch, and
    parsing it was a tenth of a collector batch, measured on bench/collectors.py). A target
    deleted meanwhile gets no row."""
    ids = sorted(set(target_ids))
    if not ids:
        return
    t = _TABLE
    postgres = session.get_bind().dialect.name == "postgresql"
    insert = pg_insert if postgres else sqlite_insert
    of = Target.id == any_(bindparam("ids", ids, type_=ARRAY(Integer))) if postgres else Target.id.in_(ids)
    rows = select(
        Target.id,
        literal(1, BigInteger),
        literal(1 if imported else 0, BigInteger),
        literal(at or datetime.now(UTC), t.c.changed_at.type),
        literal(0, BigInteger),
    ).where(of)
    stmt = insert(t).from_select(
        ["target_id", "version", "imported_version", "changed_at", "advised_version"], rows
    )
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


def request_advice(session: Session, target_ids: Iterable[int] | None = None) -> list[int]:
    """These targets' data (every enabled target's when None) must be advised again though no
    sample arrived: the policy now places their objects differently (a location mapped to a tier, a
    tier's figures edited). Marked as an import is, in the caller's transaction, so the after-import
    job advises them (app/jobs.py) and a restart does not forget them. Returns the ids marked."""
    if target_ids is None:
        target_ids = session.scalars(select(Target.id).where(Target.enabled.is_(True)))
    ids = sorted(set(target_ids))
    mark_ingested(session, ids, imported=True)
    return ids


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


# --- storage pools: which pools changed since their last evaluation, and who evaluates them -----


def policy_key(policy: Policy) -> str:
    """The policy a pool was evaluated with, as a digest: any change re-evaluates every pool."""
    return hashlib.sha256(policy.model_dump_json().encode()).hexdigest()


def _names(pool: Pool, server: str) -> bool:
    return any(fnmatchcase(server.lower(), p.lower()) for p in pool.servers)


def pool_targets(session: Session, policy: Policy) -> dict[str, list[int]]:
    """Each pool's enabled targets (a server split across arrays by path or storage group is in
    each of its pools). Decided per server, and per object only for the servers that a pool
    splitting by location names; an object two pools take (PoolConflict) is left out here, as
    the advice leaves it out."""
    splitting = [p for p in policy.pools if p.splits]
    members: dict[str, set[int]] = defaultdict(set)
    split_servers: set[tuple[str, str]] = set()
    servers = session.execute(
        select(DbObject.target_id, DbObject.engine, DbObject.server)
        .join(Target, Target.id == DbObject.target_id)
        .where(Target.enabled.is_(True))
        .distinct()
    ).all()
    for tid, engine, server in servers:
        if any(_names(p, server) for p in splitting):
            split_servers.add((engine, server))
            continue
        try:
            members[policy.pool_of(server=server, engine=engine, physical_name=None, storage_group=None)].add(
                tid
            )
        except PoolConflict:
            continue
    if split_servers:
        rows = session.execute(
            select(
                DbObject.target_id,
                DbObject.engine,
                DbObject.server,
                DbObject.physical_name,
                DbObject.storage_group,
            )
            .join(Target, Target.id == DbObject.target_id)
            .where(Target.enabled.is_(True), DbObject.server.in_(sorted({s for _, s in split_servers})))
            .distinct()
        )
        for tid, engine, server, path, group in rows:
            if (engine, server) not in split_servers:
                continue
            try:
                pool = policy.pool_of(server=server, engine=engine, physical_name=path, storage_group=group)
            except PoolConflict:
                continue
            members[pool].add(tid)
    return {pool: sorted(tids) for pool, tids in sorted(members.items())}


def _new_pool_row(pool: str) -> PoolWatermark:
    return PoolWatermark(pool=pool, requested=0, done=0, targets=[], versions={}, policy_key="", failures=0)


def request_changed_pools(session: Session, policy: Policy, now: datetime) -> list[str]:
    """Make due the pools whose data changed since their last evaluation: a target's data version,
    the pool's targets or the policy differ from what that evaluation read. Rows of pools the
    policy no longer has are dropped. Returns the pools due now (newly or still)."""
    key = policy_key(policy)
    members = pool_targets(session, policy)
    versions = data_versions(session)
    rows = {
        r.pool: r
        for r in session.scalars(select(PoolWatermark).order_by(PoolWatermark.pool).with_for_update())
    }
    for gone in sorted(set(rows) - set(members)):
        session.delete(rows.pop(gone))
    due = []
    for pool, tids in members.items():
        row = rows.get(pool)
        if row is None:
            row = _new_pool_row(pool)
            session.add(row)
        seen = {str(t): versions.get(t, 0) for t in tids}
        changed = row.policy_key != key or list(row.targets) != tids or dict(row.versions) != seen
        if changed and row.requested <= row.done:
            row.requested += 1
            row.requested_at = now
        if changed:
            row.targets = tids
        if row.requested > row.done:
            due.append(pool)
    return due


def mark_pools_advised(session: Session, policy: Policy, seen: dict[int, int], now: datetime) -> None:
    """A whole-fleet evaluation that read `seen` (data_versions) is stored: every pool is advised
    as of those versions and this policy (no pool is due until its data changes again)."""
    key = policy_key(policy)
    members = pool_targets(session, policy)
    rows = {
        r.pool: r
        for r in session.scalars(select(PoolWatermark).order_by(PoolWatermark.pool).with_for_update())
    }
    for gone in sorted(set(rows) - set(members)):
        session.delete(rows.pop(gone))
    for pool, tids in members.items():
        row = rows.get(pool)
        if row is None:
            row = _new_pool_row(pool)
            session.add(row)
        row.targets = tids
        row.versions = {str(t): seen.get(t, 0) for t in tids}
        row.policy_key = key
        row.done = row.requested
        row.advised_at = now
        row.error, row.failures, row.retry_at = None, 0, None


@dataclass(frozen=True)
class PoolClaim:
    """A due pool leased to one evaluator: `requested` is the request it serves."""

    pool: str
    requested: int
    targets: list[int]
    owner: str


class LeaseLost(Exception):
    """The pool's lease expired and another evaluator took it over: this one's result is dropped."""


def claim_pool(
    session: Session, owner: str, now: datetime, lease_s: float, *, requested_before: datetime | None = None
) -> PoolClaim | None:
    """Lease one due pool (the longest waiting first): `FOR UPDATE SKIP LOCKED` on PostgreSQL, so
    concurrent workers never take the same row; a lease that has expired is taken over. SQLite
    evaluates in one process (the clause is left out there). With `requested_before`, only a pool
    due since then at the latest (the service taking over pools no worker took, app/jobs.py)."""
    waited = [] if requested_before is None else [PoolWatermark.requested_at <= requested_before]
    row = session.scalar(
        select(PoolWatermark)
        .where(
            PoolWatermark.requested > PoolWatermark.done,
            or_(PoolWatermark.lease_until.is_(None), PoolWatermark.lease_until < now),
            or_(PoolWatermark.retry_at.is_(None), PoolWatermark.retry_at <= now),
            *waited,
        )
        .order_by(PoolWatermark.requested_at, PoolWatermark.pool)
        .limit(1)
        .with_for_update(skip_locked=True)
    )
    if row is None:
        return None
    row.lease_owner, row.lease_until = owner, now + timedelta(seconds=lease_s)
    return PoolClaim(row.pool, row.requested, list(row.targets), owner)


def renew_pool(session: Session, claim: PoolClaim, now: datetime, lease_s: float) -> bool:
    """Extend the lease while the pool is evaluated (app/workers.LeaseHeartbeat), so only an
    evaluator that really stalls loses it. Only while the lease is still this evaluator's: False
    once another took it over (or it was finished), and then nothing is changed."""
    renewed = session.execute(
        update(PoolWatermark)
        .where(PoolWatermark.pool == claim.pool, PoolWatermark.lease_owner == claim.owner)
        .values(lease_until=now + timedelta(seconds=lease_s))
    )
    return bool(renewed.rowcount)  # type: ignore[attr-defined]


def _leased(session: Session, claim: PoolClaim) -> PoolWatermark:
    row = session.scalar(select(PoolWatermark).where(PoolWatermark.pool == claim.pool).with_for_update())
    if row is None or row.lease_owner != claim.owner:
        raise LeaseLost(f"pool {claim.pool}: lease taken over by {row.lease_owner if row else 'nobody'}")
    return row


def finish_pool(
    session: Session, claim: PoolClaim, policy: Policy, seen: dict[int, int], now: datetime
) -> None:
    """In the transaction that stores the pool's advice (first, so it holds the row): the lease is
    still this evaluator's (else LeaseLost, and the caller's transaction is rolled back), and the
    pool is advised as of the versions the evaluation read."""
    row = _leased(session, claim)
    row.done = max(row.done, claim.requested)
    row.versions = {str(t): seen.get(t, 0) for t in claim.targets}
    row.policy_key = policy_key(policy)
    row.advised_at = now
    row.lease_owner = row.lease_until = None
    row.error, row.failures, row.retry_at = None, 0, None


def fail_pool(
    session: Session, claim: PoolClaim, error: str, now: datetime, *, max_retry_s: float = 3600
) -> None:
    """The evaluation failed: kept on the row (health, /api), retried after a doubling pause, the
    lease released; other pools go on."""
    row = session.scalar(select(PoolWatermark).where(PoolWatermark.pool == claim.pool).with_for_update())
    if row is None or row.lease_owner != claim.owner:
        return
    row.failures += 1
    row.error, row.failed_at = error[:4000], now
    row.retry_at = now + timedelta(seconds=min(60 * 2 ** (row.failures - 1), max_retry_s))
    row.lease_owner = row.lease_until = None


def pool_health(session: Session) -> list[PoolWatermark]:
    """Every pool's evaluation state (due, leased, failing), for health pages and tests."""
    return list(session.scalars(select(PoolWatermark).order_by(PoolWatermark.pool)))


def pool_state(row: PoolWatermark, now: datetime) -> str:
    """One word for the health table: `evaluating` (leased now), `failing` (its last run failed;
    retried after `retry_at`), `due` (changed since its last run) or `current`."""
    if row.lease_owner is not None and row.lease_until is not None and row.lease_until > now:
        return "evaluating"
    if row.error:
        return "failing"
    return "due" if row.requested > row.done else "current"
