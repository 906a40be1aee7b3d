"""Collector workers: several processes share the polling of targets through the PostgreSQL store.

A worker repeats one cycle:

1. **claim** up to `batch` due targets in one short transaction: `SELECT … FOR UPDATE SKIP LOCKED`
   on `target`, then a lease (`lease_owner`, `lease_until`). A locked or leased target is skipped,
   so each due poll goes to exactly one worker; a worker that dies leaves a lease that expires.
2. **poll** them one after the other, outside any transaction (the lease is renewed while a long
   batch runs).
3. **write** the whole batch in one transaction: the target rows are locked (`FOR UPDATE`, in id
   order), the snapshots ingested with COPY, and each target released with its next due time —
   only where the lease is still this worker's: a worker whose lease expired and was taken over
   never overwrites the new owner's schedule (its samples are still offered to the store, where
   the ingest keeps them or counts them as duplicates / out of order, never twice).

If the store cannot be reached when the batch is written, the polled snapshots are held in memory
(one batch at most: the worker claims nothing new while it holds some) and written when the store
is back. Due times, leases and sample times all come from the database's clock (`now()`), never
from the collector host's, so clock skew between collector hosts changes nothing.

When no target is due, a worker evaluates one storage pool the hourly job found changed
(`run_due_pools`): it leases the pool's row (`pool_watermark`, `FOR UPDATE SKIP LOCKED`), reads
only that pool's targets, and stores only that pool's recommendations and snapshot entries, after
checking in the same transaction that the lease is still its own. The lease is renewed from a
heartbeat thread while the pool is evaluated, so only a worker that really stalls loses it. A failing pool is recorded on
its row and retried later; the other pools go on. The scheduler runs the same loop in-process on
SQLite, or when the deployment polls from the scheduler; with workers it takes, through the same
leases, only the due pools no worker has taken for TIERWISE_POOL_TAKEOVER_MINUTES (app/jobs.py).

PostgreSQL only: SQLite deployments poll from the single scheduler (TIERWISE_POLLING=scheduler).
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select, text
from sqlalchemy.orm import Session

from app.collect import read_target, record_poll_outcome
from app.evaluate import PoolRun, advise_pool_in_store
from app.metrics import record_poll
from app.secrets import Vault, scrub
from app.settings import Settings
from app.store.db import Store, retryable
from app.store.ingest import IngestResult, ingest_batch
from app.store.models import Target
from app.store.policies import current_policy
from app.store.watermarks import LeaseLost, PoolClaim, claim_pool, fail_pool, finish_pool, renew_pool
from connectors.records import Snapshot, SourceError
from policies.model import Policy

log = logging.getLogger("tierwise.workers")

Reader = Callable[[Target, datetime], Snapshot]

_DB_NOW = "(now() AT TIME ZONE 'UTC')"  # the store keeps naive UTC timestamps

_CLAIM = text(
    f"""
    WITH due AS (
        SELECT id FROM target
        WHERE enabled AND source <> 'import' AND connection_encrypted IS NOT NULL
          AND (next_attempt_at IS NULL OR next_attempt_at <= {_DB_NOW})
          AND (lease_until IS NULL OR lease_until < {_DB_NOW})
        ORDER BY next_attempt_at NULLS FIRST, id
        LIMIT :n
        FOR UPDATE SKIP LOCKED
    )
    UPDATE target AS t
    SET lease_owner = :owner, lease_until = {_DB_NOW} + make_interval(secs => :lease)
    FROM due WHERE t.id = due.id
    RETURNING t.id, t.name, t.engine, t.source, t.connection_encrypted, t.password_env,
              t.poll_interval_s, t.next_attempt_at, {_DB_NOW} AS db_now
    """
)
_RENEW = text(
    f"UPDATE target SET lease_until = {_DB_NOW} + make_interval(secs => :lease) "
    "WHERE lease_owner = :owner AND id = ANY(:ids)"
)
_RELEASE = text("UPDATE target SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = :owner")


class WorkerError(Exception):
    """The worker cannot run here (SQLite store, or the deployment polls from the scheduler)."""


def worker_identity() -> str:
    """host:pid:random — unique per worker process, readable in `target.lease_owner`."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


def _aware(value: datetime | None) -> datetime | None:
    return None if value is None else value.replace(tzinfo=UTC)


class DbClock:
    """The store's clock, as last read, advanced by this host's monotonic clock."""

    def __init__(self) -> None:
        self._db: datetime | None = None
        self._mono = 0.0

    def sync(self, db_now: datetime) -> None:
        self._db, self._mono = db_now, time.monotonic()

    @property
    def synced(self) -> bool:
        return self._db is not None

    def now(self) -> datetime:
        if self._db is None:
            raise RuntimeError("the database clock has not been read yet")
        return self._db + timedelta(seconds=time.monotonic() - self._mono)


def store_clock(store: Store) -> DbClock:
    """The store's clock, read now: the clock the workers' leases are on, so another evaluator
    (the service taking over pools, app/jobs.py) judges them as the workers do."""
    clock = DbClock()
    with store.session() as s:
        clock.sync(s.execute(text(f"SELECT {_DB_NOW}")).scalar_one().replace(tzinfo=UTC))
    return clock


@dataclass(frozen=True)
class Claim:
    target: Target  # detached copy: what the connector needs
    slot: datetime  # the due time this poll serves (the claim time for a never-polled target)


@dataclass
class Polled:
    claim: Claim
    at: datetime  # sample time, on the database's clock
    snapshot: Snapshot | None
    error: str | None
    seconds: float


@dataclass
class CycleStats:
    claimed: int = 0
    polled: int = 0
    failed: int = 0
    written: int = 0  # polls whose outcome reached the store
    held: int = 0  # polls waiting for the store to come back
    lost_leases: int = 0  # written, but the target had been taken over: its schedule left alone
    pools: int = 0  # storage pools evaluated (when no target was due)
    pool_failures: int = 0
    result: IngestResult = field(default_factory=IngestResult)

    def add(self, other: CycleStats) -> None:
        for name in (
            "claimed",
            "polled",
            "failed",
            "written",
            "held",
            "lost_leases",
            "pools",
            "pool_failures",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.result.add(other.result)


def next_slot(slot: datetime, interval_s: int, now: datetime) -> datetime:
    """The first slot after `now` on the target's cadence (missed slots are coalesced, as the
    scheduler does), so each interval is polled once and the cadence does not drift."""
    step = timedelta(seconds=interval_s)
    nxt = slot + step
    if nxt <= now:
        nxt = slot + step * ((now - slot) // step + 1)
    return nxt


class Worker:
    """One collector: claim, poll, write, release — see the module docstring."""

    def __init__(
        self,
        store: Store,
        vault: Vault,
        settings: Settings,
        *,
        batch: int | None = None,
        lease_s: int | None = None,
        owner: str | None = None,
        read: Reader | None = None,
        local_clock: Callable[[], datetime] | None = None,
        max_skew_s: float = 60.0,
        evaluate_pools: bool = True,
    ) -> None:
        if not store.is_postgres:
            raise WorkerError(
                "collector workers need the PostgreSQL store; a SQLite deployment polls from its one "
                "scheduler (`tierwise serve`, TIERWISE_POLLING=scheduler)"
            )
        self.store = store
        self.vault = vault
        self.settings = settings
        self.batch = batch or settings.worker_batch
        self.lease_s = lease_s or settings.worker_lease_s
        if self.batch < 1 or self.lease_s < 1:
            raise WorkerError("batch and lease must be at least 1")
        self.owner = owner or worker_identity()
        self.read: Reader = read or self._read_target
        self.local_clock = local_clock or (lambda: datetime.now(UTC))
        self.max_skew_s = max_skew_s
        self.evaluate_pools = evaluate_pools
        self.clock = DbClock()
        self.skew_s = 0.0  # this host's clock minus the store's, at the last claim
        self.pending: list[Polled] = []  # polled, not yet written (the store was unreachable)
        self.totals = CycleStats()

    def _read_target(self, target: Target, at: datetime) -> Snapshot:
        return read_target(target, self.vault, now=at, timeout_s=self.settings.poll_timeout_s)

    # --- the three steps ------------------------------------------------------------------

    def claim(self, n: int | None = None) -> list[Claim]:
        """Lease up to n due targets (one transaction, one statement)."""
        with self.store.session() as s:
            rows = s.execute(_CLAIM, {"n": n or self.batch, "owner": self.owner, "lease": self.lease_s}).all()
            if not rows:
                self._sync_clock(s.execute(text(f"SELECT {_DB_NOW}")).scalar_one())
                return []
        self._sync_clock(rows[0].db_now)
        now = self.clock.now()
        claims = []
        for r in sorted(rows, key=lambda r: (r.next_attempt_at is not None, r.next_attempt_at, r.id)):
            target = Target(
                id=r.id,
                name=r.name,
                engine=r.engine,
                source=r.source,
                connection_encrypted=r.connection_encrypted,
                password_env=r.password_env,
                poll_interval_s=r.poll_interval_s,
            )
            claims.append(Claim(target, _aware(r.next_attempt_at) or now))
        return claims

    def poll(self, claims: list[Claim]) -> list[Polled]:
        """Read each claimed target (no transaction open); failures are recorded, never raised."""
        out = []
        renewed = time.monotonic()
        for claim in claims:
            if time.monotonic() - renewed > self.lease_s / 3:  # the whole batch is unwritten still
                self.renew([c.target.id for c in claims])
                renewed = time.monotonic()
            at = self.clock.now()
            started = time.monotonic()
            try:
                snapshot: Snapshot | None = self.read(claim.target, at)
                error = None
            except Exception as exc:
                snapshot = None
                error = str(exc) if isinstance(exc, SourceError) else scrub(f"{type(exc).__name__}: {exc}")
                log.warning("poll of %s failed: %s", claim.target.name, error)
            out.append(Polled(claim, at, snapshot, error, time.monotonic() - started))
        return out

    def write(self, polled: list[Polled]) -> CycleStats:
        """Store a batch of polls in one transaction and release their targets. Raises if the
        store cannot be reached (the caller holds the batch); a batch that fails for another
        reason is written target by target, so one bad snapshot cannot block the others."""
        try:
            with self.store.session() as s:
                return self._write(s, polled)
        except Exception as exc:
            if retryable(exc):
                raise
            log.exception("batch write failed; writing its %d polls one by one", len(polled))
        stats = CycleStats()
        for p in polled:
            try:
                with self.store.session() as s:
                    stats.add(self._write(s, [p]))
            except Exception as exc:
                if retryable(exc):
                    raise
                log.exception("could not store the poll of %s; it is dropped", p.claim.target.name)
                failed = Polled(p.claim, p.at, None, scrub(f"store: {type(exc).__name__}: {exc}"), p.seconds)
                with self.store.session() as s:
                    stats.add(self._write(s, [failed]))
        return stats

    def _write(self, s: Session, polled: list[Polled]) -> CycleStats:
        stats = CycleStats()
        ids = sorted({p.claim.target.id for p in polled})
        locked = {
            t.id: t
            for t in s.scalars(select(Target).where(Target.id.in_(ids)).order_by(Target.id).with_for_update())
        }
        now = self.clock.now()
        todo = [p for p in polled if p.claim.target.id in locked]  # else removed while polled
        ingest: dict[int, list[Snapshot]] = {}
        for p in todo:
            if p.snapshot is not None:
                ingest.setdefault(p.claim.target.id, []).append(p.snapshot)
        for r in ingest_batch(s, [(locked[tid], snaps) for tid, snaps in ingest.items()]).values():
            stats.result.add(r)
        for p in sorted(todo, key=lambda p: (p.claim.target.id, p.at)):
            target = locked[p.claim.target.id]
            ours = target.lease_owner == self.owner
            stats.written += 1
            if p.snapshot is not None:
                stats.polled += 1
            else:
                stats.failed += 1
            if not ours:
                stats.lost_leases += 1
                log.warning(
                    "lease on %s was taken over; its schedule is left to %s", target.name, target.lease_owner
                )
                continue
            record_poll_outcome(
                target,
                at=p.at,
                error=None if p.snapshot is not None else p.error or "poll failed",
                max_backoff_s=self.settings.max_backoff_s,
                next_due=next_slot(p.claim.slot, target.poll_interval_s, now),
            )
            target.lease_owner = None
            target.lease_until = None
        for p in polled:
            record_poll(p.claim.target.engine, p.snapshot is not None, p.seconds)
        return stats

    def renew(self, ids: list[int]) -> None:
        """Extend this worker's leases while a long batch is polled (best effort)."""
        try:
            with self.store.session() as s:
                s.execute(_RENEW, {"lease": self.lease_s, "owner": self.owner, "ids": ids})
        except Exception as exc:
            log.warning("could not renew leases: %s", scrub(str(exc)))

    def release_all(self) -> None:
        """Give back every lease this worker holds (on shutdown; best effort)."""
        try:
            with self.store.session() as s:
                s.execute(_RELEASE, {"owner": self.owner})
        except Exception as exc:
            log.warning("could not release leases: %s", scrub(str(exc)))

    def _policy(self) -> Policy:
        with self.store.session() as s:
            return current_policy(s, self.settings.policy_file)

    def _evaluate_one_pool(self, stats: CycleStats) -> None:
        """Evaluate one due storage pool, if any (on the store's clock); counted in `stats`."""
        runs = run_due_pools(self.store, self._policy, owner=self.owner, clock=self.clock.now,
                             lease_s=self.lease_s, limit=1)  # fmt: skip
        stats.pools = len(runs)
        stats.pool_failures = sum(r.error is not None for r in runs)
        self.totals.pools += stats.pools
        self.totals.pool_failures += stats.pool_failures

    def _sync_clock(self, db_now: datetime) -> None:
        db = db_now.replace(tzinfo=UTC)
        self.clock.sync(db)
        self.skew_s = (self.local_clock() - db).total_seconds()
        if abs(self.skew_s) > self.max_skew_s:
            log.warning(
                "this host's clock is %+.0f s off the store's; leases and sample times use the store's",
                self.skew_s,
            )

    # --- the loop ---------------------------------------------------------------------------

    def flush(self) -> CycleStats:
        """Write the held polls, if any; they stay held while the store is unreachable."""
        if not self.pending:
            return CycleStats()
        stats = self.write(self.pending)
        log.info("wrote %d held polls", len(self.pending))
        self.pending = []
        return stats

    def run_once(self) -> CycleStats:
        """One cycle: write what is held, else claim, poll and write a batch. Store errors
        propagate (nothing is lost: polls are held, claims expire)."""
        stats = self.flush()
        if stats.written:
            self.totals.add(stats)
            return stats
        claims = self.claim()
        stats.claimed = len(claims)
        if not claims:
            if self.evaluate_pools:
                self._evaluate_one_pool(stats)
            return stats
        polled = self.poll(claims)
        try:
            written = self.write(polled)
        except Exception as exc:
            if not retryable(exc):
                raise
            self.pending = polled
            log.warning(
                "store unreachable; holding %d polls until it is back: %s", len(polled), scrub(str(exc))
            )
            stats.held = len(polled)
            self.totals.add(stats)
            return stats
        written.claimed = len(claims)
        self.totals.add(written)
        return written

    def run(
        self,
        stop: threading.Event,
        *,
        idle_s: float = 2.0,
        max_retry_s: float = 30.0,
        until_idle: bool = False,
        shutdown_flush_s: float | None = None,
    ) -> CycleStats:
        """Cycle until `stop` is set (or, with until_idle, until nothing is due and nothing held).
        A batch in progress is finished and written before returning; leases are released."""
        retry = 0.5
        while not stop.is_set():
            try:
                stats = self.run_once()
                retry = 0.5
            except Exception as exc:
                if retryable(exc):
                    log.warning("store unreachable (retrying in %.1f s): %s", retry, scrub(str(exc)))
                else:  # a bug or a store-side error: keep the worker alive, slow down
                    log.exception("collector cycle failed (retrying in %.1f s)", retry)
                stop.wait(retry)
                retry = min(retry * 2, max_retry_s)
                continue
            if stats.held:
                stop.wait(retry)
                retry = min(retry * 2, max_retry_s)
            elif not stats.claimed and not stats.written and not stats.pools:
                if until_idle:
                    break
                stop.wait(idle_s)
        self._drain(self.lease_s if shutdown_flush_s is None else shutdown_flush_s)
        self.release_all()
        return self.totals

    def _drain(self, budget_s: float) -> None:
        deadline = time.monotonic() + budget_s
        while self.pending:
            try:
                self.totals.add(self.flush())
            except Exception as exc:
                if not retryable(exc) or time.monotonic() > deadline:
                    log.error(
                        "stopping with %d polls not written (their leases expire; the next poll "
                        "covers the gap with one longer interval)",
                        len(self.pending),
                    )
                    return
                time.sleep(1.0)


class LeaseHeartbeat:
    """Renews a pool's lease every `every_s` seconds (real time) from its own thread and session
    while the evaluation runs, so a pool that takes longer than the lease is not picked up by a
    second worker; only a worker that really stalls (its process frozen, the store unreachable
    for a whole lease) loses it. The evaluation itself stays pure and unaware of the lease."""

    def __init__(
        self, store: Store, claim: PoolClaim, clock: Callable[[], datetime], lease_s: float, every_s: float
    ) -> None:
        self.store, self.claim, self.clock, self.lease_s, self.every_s = store, claim, clock, lease_s, every_s
        self.renewals = 0
        self.lost = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"lease:{claim.pool}", daemon=True)

    def __enter__(self) -> LeaseHeartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self.every_s):
            try:
                with self.store.session() as s:
                    renewed = renew_pool(s, self.claim, self.clock(), self.lease_s)
            except Exception as exc:  # a store blip: the next beat tries again, the lease still runs
                log.warning("pool %s: could not renew the lease: %s", self.claim.pool, scrub(str(exc)))
                continue
            if not renewed:
                if not self._stop.is_set():  # finished meanwhile is not lost
                    self.lost = True
                    log.warning("pool %s: lease taken over; this evaluation will be dropped", self.claim.pool)
                return
            self.renewals += 1


def run_due_pools(
    store: Store,
    policy: Callable[[], Policy],
    *,
    owner: str,
    clock: Callable[[], datetime],
    lease_s: float,
    time_limit_s: float = 10.0,
    limit: int | None = None,
    renew_every_s: float | None = None,
    requested_before: datetime | None = None,
) -> list[PoolRun]:
    """Claim due pools one at a time (app/store/watermarks.claim_pool) and evaluate each as its
    own unit of work, until none is due (or `limit` are done). A pool whose evaluation fails is
    recorded on its row and retried later; the others go on. `policy` is read per pool, so a
    long run picks up a policy saved meanwhile. The lease is renewed every `renew_every_s`
    (a third of the lease by default) while a pool is evaluated (LeaseHeartbeat). With
    `requested_before`, only pools due since then at the latest (claim_pool)."""
    every_s = lease_s / 3 if renew_every_s is None else renew_every_s
    runs: list[PoolRun] = []
    while limit is None or len(runs) < limit:
        with store.session() as s:
            claim = claim_pool(s, owner, clock(), lease_s, requested_before=requested_before)
        if claim is None:
            break
        try:
            with LeaseHeartbeat(store, claim, clock, lease_s, every_s):
                runs.append(_evaluate_claim(store, claim, policy(), clock(), time_limit_s))
        except Exception as exc:
            error = scrub(f"{type(exc).__name__}: {exc}")
            log.error("pool %s: evaluation failed, retried later: %s", claim.pool, error)
            runs.append(PoolRun(claim.pool, error=error))
            if isinstance(exc, LeaseLost):
                continue
            try:
                with store.session() as s:
                    fail_pool(s, claim, error, clock())
            except Exception as again:  # the store itself is down: the lease expires instead
                log.warning("pool %s: could not record the failure: %s", claim.pool, scrub(str(again)))
            if retryable(exc):
                break  # the store is failing: the next run takes the rest
    return runs


def _evaluate_claim(
    store: Store, claim: PoolClaim, policy: Policy, now: datetime, time_limit_s: float
) -> PoolRun:
    def finish(s: Session, seen: dict[int, int]) -> None:
        finish_pool(s, claim, policy, seen, now)

    return advise_pool_in_store(store, policy, claim.pool, claim.targets, now=now, time_limit_s=time_limit_s,
                                before_store=finish)  # fmt: skip


def describe(stats: CycleStats) -> dict[str, Any]:
    r = stats.result
    return {
        "claimed": stats.claimed,
        "polled": stats.polled,
        "failed": stats.failed,
        "written": stats.written,
        "held": stats.held,
        "lost_leases": stats.lost_leases,
        "pools": stats.pools,
        "pool_failures": stats.pool_failures,
        "samples": r.samples,
        "intervals": r.intervals,
        "duplicates": r.duplicates,
        "out_of_order": r.out_of_order,
        "new_series": r.new_series,
    }
