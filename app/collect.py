"""One poll of one target: read its counters, store them, record how it went.

A failing target is recorded and backed off; it never raises into the scheduler, so other
targets keep being polled. A failing store (locked, unreachable) is not the target's fault: that
error is raised for the scheduler's job wrapper to retry, and the target's record is untouched.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import TYPE_CHECKING

from app.metrics import record_poll
from app.secrets import Vault, redact, remember_secrets, scrub
from app.settings import Settings
from app.store.db import Store, store_fault
from app.store.ingest import IngestResult, ingest_snapshots
from app.store.models import Target
from connectors import connstr
from connectors.records import Snapshot, SourceError

if TYPE_CHECKING:
    from connectors.simulator import SimulatedFleet

log = logging.getLogger("tierwise.collect")

SIMULATOR_PREFIX = "simulator:"


@dataclass(frozen=True)
class PollOutcome:
    target: str
    ok: bool
    skipped: bool = False
    error: str | None = None
    result: IngestResult | None = None
    seconds: float = 0.0


def simulator_connection(
    instance: str, origin: datetime, *, seed: int | None = None, instances: int = 0, files: int = 0
) -> str:
    """The demo fleet's instance, or (with a seed) one of a generic fleet of `instances` x `files`."""
    conn = f"{SIMULATOR_PREFIX}instance={instance};origin={origin.astimezone(UTC).isoformat()}"
    if seed is not None:
        conn += f";seed={seed};instances={instances};files={files}"
    return conn


@lru_cache(maxsize=8)
def _fleet(origin: datetime, seed: int | None = None, instances: int = 0, files: int = 0) -> SimulatedFleet:
    from connectors.simulator import SimulatedFleet, demo_fleet

    if seed is None:
        return demo_fleet(origin)
    return SimulatedFleet(seed=seed, origin=origin, instances=instances, files_per_instance=files)


def _simulated_snapshot(connection: str, now: datetime) -> Snapshot:
    params = dict(p.split("=", 1) for p in connection[len(SIMULATOR_PREFIX) :].split(";") if p)
    origin = datetime.fromisoformat(params["origin"])
    if "seed" in params:
        fleet = _fleet(origin, int(params["seed"]), int(params["instances"]), int(params["files"]))
    else:
        fleet = _fleet(origin)
    try:
        return fleet.instance(params["instance"]).snapshot(now)
    except KeyError:
        raise SourceError(f"the simulated fleet has no instance {params['instance']!r}") from None


# malformed strings the driver would misread and repeat: a brace never closed swallows the rest of
# the string into one value (unixODBC answers "Can't open lib '<the rest>'"), a control character
# breaks the log line it is repeated in. Any other slip (a key twice, text after a brace) is left
# to the driver, as before: a string stored by an older version still polls.
_REFUSED_AT_POLL = ("unclosed_brace", "control")


def read_target(target: Target, vault: Vault, *, now: datetime, timeout_s: int) -> Snapshot:
    """The target's snapshot at `now`; raises SourceError with a message masked by the target's
    own secret values (every value whose key is not on the allow-list, the password from the
    environment) and by pattern."""
    if target.connection_encrypted is None:
        raise SourceError("target has no connection (imported targets are not polled)")
    connection = vault.decrypt(target.connection_encrypted)
    if connection.startswith(SIMULATOR_PREFIX):
        return _simulated_snapshot(connection, now)
    try:
        connstr.parse(connection)
    except connstr.ConnectionStringError as exc:
        if exc.kind in _REFUSED_AT_POLL:
            raise SourceError(
                f"the stored connection string is malformed: {exc}; remove the target and add it again"
            ) from None
    if target.password_env:
        password = os.environ.get(target.password_env)
        if password is None:
            raise SourceError(f"environment variable {target.password_env} (the password) is not set")
        connection = connstr.append(connection, "PWD", password)
    remember_secrets(connstr.secret_values(connection, accounts=False))
    try:
        if target.engine == "sqlserver":
            from connectors import sqlserver

            return sqlserver.collect(connection, sample_time=now, timeout_s=timeout_s)
        if target.engine == "db2":
            from connectors import db2

            return db2.collect(connection, sample_time=now, timeout_s=timeout_s)
        raise SourceError(f"unknown engine {target.engine!r}")
    except SourceError as exc:
        raise SourceError(_scrub(str(exc), connection)) from None
    except Exception as exc:  # a driver or bug: keep the type, never the secret
        raise SourceError(_scrub(f"{type(exc).__name__}: {exc}", connection)) from None


def _scrub(message: str, connection: str) -> str:
    """A driver's message with the connection's own secrets masked by value, then by pattern."""
    return redact(connstr.scrub(message, connection))


def backoff_delay(failures: int, interval_s: int, max_backoff_s: int) -> timedelta:
    """Doubling back-off from the poll interval, capped."""
    return timedelta(seconds=min(interval_s * 2 ** max(failures - 1, 0), max_backoff_s))


def record_poll_outcome(
    target: Target, *, at: datetime, error: str | None, max_backoff_s: int, next_due: datetime | None = None
) -> None:
    """What one poll leaves on its target row, whoever polled it (the scheduler's poll job or a
    collector worker): when it was polled; on success, that it succeeded and its next due time
    (None: the scheduler's own cadence); on failure, the redacted error and a doubling back-off."""
    target.last_poll_at = at
    if error is None:
        target.last_success_at = at
        target.consecutive_failures = 0
        target.next_attempt_at = next_due
        return
    target.last_error = redact(error)  # scrubbed by its poller; masked again on the way to the store
    target.last_error_at = at
    target.consecutive_failures += 1
    target.next_attempt_at = at + backoff_delay(
        target.consecutive_failures, target.poll_interval_s, max_backoff_s
    )


def poll_target(
    store: Store,
    vault: Vault,
    settings: Settings,
    target_id: int,
    *,
    now: datetime | None = None,
    force: bool = False,
) -> PollOutcome:
    now = now or datetime.now(UTC)
    started = time.monotonic()
    with store.session() as s:
        target = s.get(Target, target_id)
        if target is None:
            return PollOutcome(target=f"#{target_id}", ok=False, skipped=True, error="target removed")
        name = target.name
        if not force and target.next_attempt_at is not None and now < target.next_attempt_at:
            return PollOutcome(target=name, ok=False, skipped=True, error="backing off after failures")
        s.expunge(target)
    try:
        snapshot = read_target(target, vault, now=now, timeout_s=settings.poll_timeout_s)
        # a store error below is ours, not the target's: it is raised for the job to retry (app.jobs)
        # and never recorded as the target failing, nor backs it off
        with store.write_session() as s:
            # the write lock (SQLite) or row lock (PostgreSQL) serialises ingests of one target: an
            # import chunk or a collector worker may write it too; the overlap guard is a second line
            fresh = s.get(Target, target_id, with_for_update=True)
            assert fresh is not None
            result = ingest_snapshots(s, fresh, [snapshot], guard_overlap=True)
            record_poll_outcome(fresh, at=now, error=None, max_backoff_s=settings.max_backoff_s)
        log.info("polled %s: %d samples, %d intervals", name, result.samples, result.intervals)
        record_poll(target.engine, True, time.monotonic() - started)
        return PollOutcome(name, True, result=result, seconds=time.monotonic() - started)
    except Exception as exc:
        if store_fault(exc) is not None:  # the store's, never the target's: the job retries or logs it
            record_poll(target.engine, False, time.monotonic() - started)
            raise
        message = str(exc) if isinstance(exc, SourceError) else scrub(f"{type(exc).__name__}: {exc}")
        log.warning("poll of %s failed: %s", name, message)
        with store.session() as s:
            fresh = s.get(Target, target_id)
            if fresh is not None:
                record_poll_outcome(fresh, at=now, error=message, max_backoff_s=settings.max_backoff_s)
        record_poll(target.engine, False, time.monotonic() - started)
        return PollOutcome(name, False, error=message, seconds=time.monotonic() - started)
