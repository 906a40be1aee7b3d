"""Collector workers against a real PostgreSQL store and the simulated fleet, with faults injected.

Each fault test states its figure: samples expected vs stored (printed with `pytest -s`, and kept
as a junit property `figure`). Time is advanced by making targets due again (the worker's leases
and due times run on the database's clock, which the tests cannot move).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from sqlalchemy import create_engine, func, select, text
from sqlalchemy.exc import OperationalError
from typer.testing import CliRunner

from app.collect import simulator_connection
from app.secrets import Vault
from app.settings import Settings
from app.store.db import Store
from app.store.models import DbObject, IoInterval, Sample, Target
from app.store.targets import add_target
from app.workers import CycleStats, Worker, WorkerError, next_slot
from connectors.records import Snapshot, SourceError
from connectors.simulator import SimulatedFleet
from tests.conftest import POSTGRES_URL

pytestmark = pytest.mark.postgres

SEED, INSTANCES, FILES = 3, 6, 5
ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Source:
    """The simulated fleet as the workers see it, with faults: unreachable targets, a poll hook."""

    fleet: SimulatedFleet
    down: set[str] = field(default_factory=set)
    polls: list[tuple[str, datetime]] = field(default_factory=list)
    on_poll: Callable[[Target, datetime], None] | None = None
    delay_s: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def read(self, target: Target, at: datetime) -> Snapshot:
        with self.lock:
            self.polls.append((target.name, at))
        if self.on_poll is not None:
            self.on_poll(target, at)
        if self.delay_s:
            time.sleep(self.delay_s)
        if target.name in self.down:
            raise SourceError("connection refused (simulated outage)")
        return self.fleet.instance(target.name).snapshot(at)


@dataclass
class Env:
    url: str
    store: Store
    vault: Vault
    key: bytes
    settings: Settings
    source: Source
    origin: datetime

    def worker(self, **kw: object) -> Worker:
        kw.setdefault("read", self.source.read)
        return Worker(self.store, self.vault, self.settings, **kw)  # type: ignore[arg-type]


@pytest.fixture
def env(postgres_url: str, tmp_path: Path) -> Iterator[Env]:
    key = Fernet.generate_key()
    vault = Vault(key)
    store = Store(postgres_url)
    origin = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=1)
    fleet = SimulatedFleet(seed=SEED, origin=origin, instances=INSTANCES, files_per_instance=FILES)
    with store.session() as s:
        for inst in fleet.instances:
            conn = simulator_connection(inst.name, origin, seed=SEED, instances=INSTANCES, files=FILES)
            add_target(
                s,
                name=inst.name,
                engine="sqlserver",
                source="simulator",
                connection_encrypted=vault.encrypt(conn),
                password_env=None,
                poll_interval_s=300,
                now=origin,
            )
    settings = Settings(
        database_url=postgres_url,
        secret_key=key.decode(),
        secret_key_file=tmp_path / "k",
        polling="workers",
        worker_batch=2,
        worker_lease_s=60,
    )
    yield Env(postgres_url, store, vault, key, settings, Source(fleet), origin)
    store.dispose()


def make_due(store: Store) -> None:
    """The next interval: every target is due now (on the database's clock)."""
    with store.session() as s:
        s.execute(text("UPDATE target SET next_attempt_at = now() AT TIME ZONE 'UTC'"))


def drain(worker: Worker) -> CycleStats:
    total = CycleStats()
    while True:
        stats = worker.run_once()
        total.add(stats)
        if not stats.claimed and not stats.written:
            return total


def counts(store: Store, target: str | None = None) -> tuple[int, int]:
    """(samples, intervals) stored, for one target or all."""
    with store.session() as s:
        q_s = select(func.count()).select_from(Sample).join(DbObject, DbObject.id == Sample.object_id)
        q_i = select(func.count()).select_from(IoInterval).join(DbObject, DbObject.id == IoInterval.object_id)
        if target is not None:
            q_s = q_s.join(Target).where(Target.name == target)
            q_i = q_i.join(Target).where(Target.name == target)
        return int(s.scalar(q_s) or 0), int(s.scalar(q_i) or 0)


def figure(record: Callable[[str, object], None], name: str, expected: int, stored: int, **more: int) -> None:
    extra = "".join(f", {k.replace('_', ' ')} {v}" for k, v in more.items())
    line = f"FIGURE {name}: samples expected {expected}, stored {stored}{extra}"
    print(line)
    record("figure", line)


def test_claims_are_leased_released_and_follow_the_cadence(env: Env) -> None:
    w = env.worker(batch=4)
    claims = w.claim()
    assert len(claims) == 4
    with env.store.session() as s:
        leased = s.scalars(select(Target).where(Target.lease_owner == w.owner)).all()
        assert {t.name for t in leased} == {c.target.name for c in claims}
        assert all(t.lease_until is not None and t.lease_until > w.clock.now() for t in leased)
    assert len(env.worker(batch=10).claim()) == INSTANCES - 4  # leased ones are skipped
    stats = w.write(w.poll(claims))
    assert stats.written == 4 and stats.result.samples == 4 * FILES and stats.lost_leases == 0
    with env.store.session() as s:
        for t in s.scalars(select(Target).where(Target.name.in_([c.target.name for c in claims]))):
            assert t.lease_owner is None and t.lease_until is None
            assert t.last_success_at is not None and t.next_attempt_at is not None
            assert t.next_attempt_at - t.last_success_at == pytest.approx(
                timedelta(seconds=300), abs=timedelta(seconds=5)
            )
    slot = datetime(2026, 1, 1, tzinfo=UTC)
    assert next_slot(slot, 300, slot + timedelta(seconds=10)) == slot + timedelta(seconds=300)
    # a worker that fell behind skips the missed slots instead of polling them back to back
    assert next_slot(slot, 300, slot + timedelta(seconds=700)) == slot + timedelta(seconds=900)


def test_two_collectors_racing_poll_each_target_once_per_interval(
    env: Env, record_property: Callable[[str, object], None]
) -> None:
    env.source.delay_s = 0.01  # polls overlap, so both workers contend for the same due targets
    rounds = 4
    other_host = Store(env.url, migrate=False)
    workers = [
        env.worker(batch=2),
        Worker(other_host, env.vault, env.settings, batch=2, read=env.source.read),
    ]
    done: list[CycleStats] = []
    for _ in range(rounds):
        make_due(env.store)
        threads = [
            threading.Thread(target=lambda w=w: done.append(w.run(threading.Event(), until_idle=True)))
            for w in workers
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
    per_target = Counter(name for name, _ in env.source.polls)
    assert per_target == dict.fromkeys(per_target, rounds) and len(per_target) == INSTANCES
    by_worker = [w.totals.polled for w in workers]
    assert sum(by_worker) == rounds * INSTANCES
    samples, intervals = counts(env.store)
    expected = rounds * INSTANCES * FILES
    figure(
        record_property,
        "two collectors racing",
        expected,
        samples,
        polls_per_target=rounds,
        worker_a_polls=by_worker[0],
        worker_b_polls=by_worker[1],
        duplicates=sum(w.totals.result.duplicates for w in workers),
    )
    assert samples == expected
    assert intervals == (rounds - 1) * INSTANCES * FILES
    assert sum(w.totals.result.duplicates + w.totals.lost_leases for w in workers) == 0
    other_host.dispose()


def test_a_long_batch_renews_its_leases(env: Env) -> None:
    env.source.delay_s = 1.2  # 3 polls x 1.2 s outlast the 3 s lease: renewed every second
    slow = env.worker(batch=3, lease_s=3)
    thread = threading.Thread(target=slow.run_once)
    thread.start()
    other = env.worker(batch=INSTANCES, lease_s=3)
    taken: list[str] = []
    while thread.is_alive():
        claims = other.claim()
        taken += [c.target.name for c in claims]
        if claims:
            other.write(other.poll(claims))
        time.sleep(0.2)
    thread.join()
    assert len(taken) == INSTANCES - 3
    assert Counter(n for n, _ in env.source.polls) == dict.fromkeys(
        [i.name for i in env.source.fleet.instances], 1
    )


def test_a_worker_whose_lease_was_taken_over_leaves_the_new_owner_alone(
    env: Env, record_property: Callable[[str, object], None]
) -> None:
    late = env.worker(batch=INSTANCES, lease_s=1)
    claims = late.claim()
    polled = late.poll(claims)  # ...and then it stalls past its lease
    time.sleep(1.5)
    prompt = env.worker(batch=INSTANCES)
    assert prompt.run_once().polled == INSTANCES  # the targets are claimed again and written
    with env.store.session() as s:
        due = {t.name: t.next_attempt_at for t in s.scalars(select(Target))}
    stats = late.write(polled)  # the stalled worker comes back
    assert stats.lost_leases == INSTANCES
    samples, _ = counts(env.store)
    figure(
        record_property,
        "worker stalled past its lease, target taken over",
        INSTANCES * FILES,
        samples,
        late_samples_out_of_order=stats.result.out_of_order,
    )
    assert samples == INSTANCES * FILES  # its older samples are not stored behind the newer ones
    assert stats.result.out_of_order == INSTANCES * FILES
    with env.store.session() as s:
        assert {t.name: t.next_attempt_at for t in s.scalars(select(Target))} == due


def test_target_unreachable_for_a_while_then_back(
    env: Env, record_property: Callable[[str, object], None]
) -> None:
    w = env.worker(batch=INSTANCES)
    down = "SQLSIM0002"
    plan = [True, False, False, True, True]  # reachable in each round?
    for up in plan:
        make_due(env.store)
        env.source.down = set() if up else {down}
        stats = drain(w)
        assert stats.polled + stats.failed == INSTANCES
        with env.store.session() as s:
            t = s.scalar(select(Target).where(Target.name == down))
            assert t is not None and t.lease_owner is None
            if not up:
                assert t.last_error and "simulated outage" in t.last_error
                assert t.next_attempt_at is not None and t.next_attempt_at > w.clock.now()  # backing off
        if not up:
            assert w.claim() == []  # not due again before its back-off ends
    with env.store.session() as s:
        t = s.scalar(select(Target).where(Target.name == down))
        assert t is not None and t.consecutive_failures == 0 and t.last_success_at is not None
        # nothing lost: the intervals stored for the outage-spanning series add up to the whole
        # counter difference between the first and the last sample
        objs = s.scalars(select(DbObject).join(Target).where(Target.name == down)).all()
        for o in objs:
            first, last = (
                s.scalar(select(Sample).where(Sample.object_id == o.id).order_by(Sample.sample_time.asc())),
                s.scalar(select(Sample).where(Sample.object_id == o.id).order_by(Sample.sample_time.desc())),
            )
            total = s.scalar(select(func.sum(IoInterval.reads)).where(IoInterval.object_id == o.id))
            assert first is not None and last is not None
            assert total == (last.reads or 0) - (first.reads or 0)
    ok_rounds = sum(plan)
    samples, intervals = counts(env.store, down)
    figure(
        record_property,
        "target unreachable for 2 of 5 polls",
        ok_rounds * FILES,
        samples,
        failed_polls=len(plan) - ok_rounds,
        intervals=intervals,
    )
    assert samples == ok_rounds * FILES
    assert intervals == (ok_rounds - 1) * FILES  # one longer interval spans the outage
    assert counts(env.store)[0] == (len(plan) * (INSTANCES - 1) + ok_rounds) * FILES  # the others: every poll


def _set_connections(url: str, allowed: bool) -> None:
    """Make the store unreachable (refuse new connections, drop the open ones) or reachable again."""
    name = url.rsplit("/", 1)[1]
    admin = create_engine(POSTGRES_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(text(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS {"true" if allowed else "false"}'))
        if not allowed:
            c.execute(
                text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = :d"), {"d": name}
            )
    admin.dispose()


def test_store_unreachable_mid_cycle_holds_samples_and_writes_them_once(
    env: Env, record_property: Callable[[str, object], None]
) -> None:
    w = env.worker(batch=INSTANCES)
    make_due(env.store)
    assert drain(w).polled == INSTANCES  # round 1, normal

    def cut(target: Target, at: datetime) -> None:
        if env.source.on_poll is not None:  # once: the store goes away after the batch was claimed
            env.source.on_poll = None
            _set_connections(env.url, False)

    make_due(env.store)
    env.source.on_poll = cut
    try:
        stats = w.run_once()
        assert stats.claimed == INSTANCES and stats.held == INSTANCES and len(w.pending) == INSTANCES
        with pytest.raises(OperationalError):
            w.run_once()  # still down: the polls stay held, nothing new is claimed
        assert len(w.pending) == INSTANCES
    finally:
        _set_connections(env.url, True)
    held = list(w.pending)
    back = w.run_once()  # the store is back: the held polls are written
    assert back.written == INSTANCES and not w.pending
    samples, intervals = counts(env.store)
    expected = 2 * INSTANCES * FILES
    # the write is retried (say the commit's acknowledgement was lost): counted, never doubled
    again = w.write(held)
    after, _ = counts(env.store)
    figure(
        record_property,
        "store unreachable mid-cycle",
        expected,
        samples,
        held_polls=INSTANCES,
        stored_after_a_repeated_write=after,
        duplicates_on_repeat=again.result.duplicates,
    )
    assert samples == expected and after == expected
    assert intervals == INSTANCES * FILES
    assert again.result.duplicates == INSTANCES * FILES and again.result.samples == 0
    with env.store.session() as s:
        assert s.scalar(select(func.count()).where(Target.lease_owner.is_not(None))) == 0


_HANGING_WORKER = textwrap.dedent(
    """
    import sys, threading, time
    from pathlib import Path
    from app.secrets import Vault
    from app.settings import Settings
    from app.store.db import Store
    from app.workers import Worker

    url, key, marker = sys.argv[1], sys.argv[2], Path(sys.argv[3])

    def hang(target, at):
        marker.write_text(target.name)
        time.sleep(600)  # stuck mid-poll until killed

    settings = Settings(database_url=url, secret_key=key, polling="workers")
    w = Worker(Store(url, migrate=False), Vault(key.encode()), settings, batch=1, lease_s=3, read=hang)
    w.run(threading.Event())
    """
)


def test_collector_killed_mid_poll_is_taken_over_after_the_lease(
    env: Env, tmp_path: Path, record_property: Callable[[str, object], None]
) -> None:
    marker = tmp_path / "polling"
    proc = subprocess.Popen(
        [sys.executable, "-c", _HANGING_WORKER, env.url, env.key.decode(), str(marker)], cwd=ROOT
    )
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert proc.poll() is None and time.monotonic() < deadline, "the worker did not start polling"
            time.sleep(0.05)
        stuck = marker.read_text()
        with env.store.session() as s:
            t = s.scalar(select(Target).where(Target.name == stuck))
            assert t is not None and t.lease_owner and t.lease_owner.split(":")[1] == str(proc.pid)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    w = env.worker(batch=INSTANCES)
    first = w.run_once()
    assert first.polled == INSTANCES - 1  # the dead worker's target is still leased
    assert stuck not in {n for n, _ in env.source.polls}
    deadline = time.monotonic() + 30
    while stuck not in {n for n, _ in env.source.polls}:  # after the 3 s lease, it is due again
        assert time.monotonic() < deadline, "the dead worker's target was never taken over"
        w.run_once()
        time.sleep(0.2)
    samples, _ = counts(env.store)
    figure(
        record_property,
        "collector killed mid-poll",
        INSTANCES * FILES,
        samples,
        polls_by_survivor=len(env.source.polls),
    )
    assert samples == INSTANCES * FILES
    assert Counter(n for n, _ in env.source.polls) == dict.fromkeys(
        [i.name for i in env.source.fleet.instances], 1
    )
    with env.store.session() as s:
        assert s.scalar(select(func.count()).where(Target.lease_owner.is_not(None))) == 0


def test_instance_restart_between_polls(env: Env, record_property: Callable[[str, object], None]) -> None:
    w = env.worker(batch=INSTANCES)
    name = "SQLSIM0004"
    rounds = 3
    new_series = 0
    for r in range(rounds):
        make_due(env.store)
        if r == 1:  # restarted after the first poll
            env.source.fleet.instance(name).restart(w.clock.now() - timedelta(milliseconds=1))
        stats = drain(w)
        if r:  # the first poll of every series is new by definition
            new_series += stats.result.new_series
    samples, intervals = counts(env.store, name)
    figure(
        record_property,
        "instance restart between polls",
        rounds * FILES,
        samples,
        intervals=intervals,
        new_series=new_series,
    )
    assert samples == rounds * FILES
    assert intervals == (rounds - 2) * FILES  # the interval across the restart is dropped, not negative
    assert new_series == FILES
    with env.store.session() as s:
        assert s.scalar(select(func.min(IoInterval.reads))) >= 0


def test_clock_skew_between_collector_hosts(env: Env, record_property: Callable[[str, object], None]) -> None:
    ahead = env.worker(batch=INSTANCES, local_clock=lambda: datetime.now(UTC) + timedelta(minutes=15))
    behind = env.worker(batch=INSTANCES, local_clock=lambda: datetime.now(UTC) - timedelta(minutes=15))
    rounds = 4
    total = CycleStats()
    for r in range(rounds):  # the two hosts take turns
        owner, other = (ahead, behind) if r % 2 == 0 else (behind, ahead)
        make_due(env.store)
        claims = owner.claim()
        assert len(claims) == INSTANCES
        assert other.claim() == []  # whatever its own clock says, the other host sees the leases held
        total.add(owner.write(owner.poll(claims)))
    assert ahead.skew_s == pytest.approx(900, abs=30) and behind.skew_s == pytest.approx(-900, abs=30)
    samples, intervals = counts(env.store)
    out_of_order = total.result.out_of_order
    with env.store.session() as s:
        newest = s.scalar(select(func.max(Sample.sample_time)))
    figure(
        record_property,
        "clock skew of ±15 min between two collector hosts",
        rounds * INSTANCES * FILES,
        samples,
        intervals=intervals,
        out_of_order=out_of_order,
    )
    assert samples == rounds * INSTANCES * FILES
    assert intervals == (rounds - 1) * INSTANCES * FILES
    # sample times are the store's clock: alternating hosts never put a series out of order
    assert out_of_order == 0 and total.result.duplicates == 0
    assert newest is not None and abs((newest - datetime.now(UTC)).total_seconds()) < 120


def test_worker_command_runs_until_sigterm_and_releases_its_leases(env: Env) -> None:
    envvars = {
        **os.environ,
        "TIERWISE_DATABASE_URL": env.url,
        "TIERWISE_SECRET_KEY": env.key.decode(),
        "TIERWISE_POLLING": "workers",
        "TIERWISE_LOG_LEVEL": "WARNING",
    }
    cmd = [sys.executable, "-m", "app.cli", "collect", "--worker", "--batch", "2", "--lease-seconds", "30"]
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=envvars, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 90
        while counts(env.store)[0] < INSTANCES * FILES:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "the worker did not poll the fleet"
            time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["polled"] == INSTANCES and summary["samples"] == INSTANCES * FILES
    with env.store.session() as s:
        assert s.scalar(select(func.count()).where(Target.lease_owner.is_not(None))) == 0
        assert s.scalar(select(func.count()).where(Target.last_success_at.is_(None))) == 0


def test_sqlite_deployments_keep_the_single_scheduler(tmp_path: Path) -> None:
    from app.cli import app as cli

    url = f"sqlite:///{tmp_path / 'tw.db'}"
    store = Store(url)
    try:
        with pytest.raises(WorkerError, match="PostgreSQL"):
            Worker(store, Vault(Fernet.generate_key()), Settings(database_url=url))
    finally:
        store.dispose()
    result = CliRunner().invoke(
        cli, ["collect", "--worker"], env={"TIERWISE_DATABASE_URL": url, "TIERWISE_POLLING": "workers"}
    )
    assert result.exit_code == 2 and "single-process mode" in result.output


def test_scheduler_does_not_poll_when_workers_do(env: Env) -> None:
    from app.jobs import Runtime, Scheduler

    scheduler = Scheduler(Runtime(store=env.store, vault=env.vault, settings=env.settings))
    assert scheduler.start()
    try:
        assert scheduler.sync_targets() == []
        assert scheduler.scheduler is not None
        assert not [j for j in scheduler.scheduler.get_jobs() if j.id.startswith("poll:")]
        assert {j.id for j in scheduler.scheduler.get_jobs()} >= {"rollup", "retention"}
    finally:
        scheduler.shutdown()
