"""Benchmark: poll cycles of 1,000 simulated instances x 50 files by 1, 2 and 4 collector worker
processes (`app/workers.py`) sharing the work through one PostgreSQL store.

Each cycle makes every target due, starts the worker processes (each has built its simulated
fleet before the clock starts), and ends when the last one finds nothing left to claim. Printed:
cycle time, rows/s (samples + intervals written), how many polls each worker took, and that every
target was polled exactly once. Then, for comparison, in the same run: one worker claiming and
writing one target at a time (batch 1); the store's write path alone (no polling, no processes),
one transaction per target (the scheduler's way) against batches (deltas computed in PostgreSQL)
and batches with the deltas judged in Python, in turn, best of 3; a plain COPY of the same number
of rows into an unindexed (unlogged) twin table, the reference of the last line, and into a logged
one (what durability alone costs); and, for what limits the ratio, the same COPY into the real
sample table (its indexes), rolled back; the whole write set of an ingest (half the rows as
samples, half as intervals, every object's last_seen moved) by COPY and one UPDATE, rolled back:
the most any ingest design reaches on this schema; and the share of the workers' time in store
writes, simulated polls and claims.

Run: make bench   (or: .venv/bin/python -m bench.collectors --instances 1000 --files 50)
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import psycopg
from cryptography.fernet import Fernet
from sqlalchemy import create_engine, func, select, text

from app.collect import simulator_connection
from app.secrets import Vault
from app.store.db import Store
from app.store.models import Sample, Target

ADMIN_URL = "postgresql+psycopg://postgres:postgres@127.0.0.1:5432/postgres"
SEED = 1


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--instances", type=int, default=1000)
    ap.add_argument("--files", type=int, default=50)
    ap.add_argument("--batch", type=int, default=50, help="targets a worker claims at a time")
    ap.add_argument("--workers", default="1,2,4", help="worker process counts to measure")
    ap.add_argument("--admin-url", default=ADMIN_URL)
    ap.add_argument("--child", nargs=6, metavar=("URL", "KEY", "ORIGIN", "INSTANCES", "FILES", "BATCH"))
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return

    admin = create_engine(args.admin_url, isolation_level="AUTOCOMMIT")
    name = f"tierwise_bench_{uuid.uuid4().hex[:8]}"
    with admin.connect() as c:
        c.execute(text(f'CREATE DATABASE "{name}"'))
    url = args.admin_url.rsplit("/", 1)[0] + f"/{name}"
    try:
        run(url, args.instances, args.files, args.batch, [int(n) for n in args.workers.split(",")])
    finally:
        with admin.connect() as c:
            c.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


# --- a worker process ----------------------------------------------------------------------------


def child(url: str, key: str, origin: str, instances: str, files: str, batch: str) -> None:
    from app.collect import _fleet
    from app.settings import Settings
    from app.workers import Worker, describe

    _fleet(datetime.fromisoformat(origin), SEED, int(instances), int(files))  # built before the clock starts
    settings = Settings(database_url=url, secret_key=key, polling="workers", log_level="WARNING")
    store = Store(url, migrate=False)
    # collection only: the pool evaluation a worker runs when nothing is due is measured by
    # bench/evaluate_fleet.py, not here
    worker = Worker(store, Vault(key.encode()), settings, batch=int(batch), evaluate_pools=False)
    read = worker.read
    read_s = 0.0

    def timed(target: Target, at: datetime):  # type: ignore[no-untyped-def]
        nonlocal read_s
        t0 = time.perf_counter()
        try:
            return read(target, at)
        finally:
            read_s += time.perf_counter() - t0

    worker.read = timed
    spent = {"write_s": 0.0, "claim_s": 0.0}

    def timing(name: str, step):  # type: ignore[no-untyped-def]
        def timed_step(*args):  # type: ignore[no-untyped-def]
            t0 = time.perf_counter()
            try:
                return step(*args)
            finally:
                spent[name] += time.perf_counter() - t0

        return timed_step

    worker.write = timing("write_s", worker.write)  # type: ignore[method-assign]
    worker.claim = timing("claim_s", worker.claim)  # type: ignore[method-assign]
    print("ready", flush=True)
    sys.stdin.readline()  # go
    t0 = time.perf_counter()
    totals = worker.run(threading.Event(), until_idle=True, idle_s=0)
    print(
        json.dumps({**describe(totals), "seconds": time.perf_counter() - t0, "read_s": read_s, **spent}),
        flush=True,
    )
    store.dispose()


# --- the controller ------------------------------------------------------------------------------


@dataclass
class Cycle:
    seconds: float
    rows: int
    polls: list[int]
    read_s: float
    new_samples: int
    write_s: float
    claim_s: float


def run(url: str, instances: int, files: int, batch: int, counts: list[int]) -> None:
    origin = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=1)
    key = Fernet.generate_key()
    vault = Vault(key)
    store = Store(url)
    with store.session() as s:
        for n in range(1, instances + 1):
            name = f"SQLSIM{n:04d}"
            s.add(
                Target(
                    name=name,
                    engine="sqlserver",
                    source="simulator",
                    connection_encrypted=vault.encrypt(
                        simulator_connection(name, origin, seed=SEED, instances=instances, files=files)
                    ),
                    poll_interval_s=300,
                    enabled=True,
                    created_at=origin,
                    consecutive_failures=0,
                )
            )

    def cycle(workers: int, *, size: int = batch) -> Cycle:
        with store.session() as s:
            before = int(s.scalar(select(func.count()).select_from(Sample)) or 0)
        cmd = [sys.executable, "-m", "bench.collectors", "--child", url, key.decode(), origin.isoformat()]
        cmd += [str(instances), str(files), str(size)]
        procs = [
            subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            for _ in range(workers)
        ]
        for p in procs:
            assert p.stdout is not None and p.stdout.readline().strip() == "ready"
        with store.session() as s:  # the next interval: every target due now
            s.execute(text("UPDATE target SET next_attempt_at = now() AT TIME ZONE 'UTC'"))
        t0 = time.perf_counter()
        for p in procs:
            assert p.stdin is not None
            p.stdin.write("go\n")
            p.stdin.flush()
        results = [json.loads(p.communicate()[0].strip().splitlines()[-1]) for p in procs]
        seconds = time.perf_counter() - t0
        with store.session() as s:
            after = int(s.scalar(select(func.count()).select_from(Sample)) or 0)
            leased = int(s.scalar(select(func.count()).where(Target.lease_owner.is_not(None))) or 0)
        assert leased == 0, "leases left behind"
        return Cycle(
            seconds,
            sum(r["samples"] + r["intervals"] for r in results),
            [r["polled"] for r in results],
            sum(r["read_s"] for r in results),
            after - before,
            sum(r["write_s"] for r in results),
            sum(r["claim_s"] for r in results),
        )

    def show(label: str, c: Cycle) -> float:
        rate = c.rows / c.seconds
        once = (
            "every target polled once"
            if sum(c.polls) == instances
            else f"POLLS {sum(c.polls)} != {instances}"
        )
        stored = "" if c.new_samples == instances * files else f" SAMPLES {c.new_samples}"
        print(
            f"  {label:<38} {c.seconds:6.2f} s  {c.rows:>7} rows  {rate:>9,.0f} rows/s  "
            f"polls/worker {c.polls}  ({once}{stored}; simulator {c.read_s:.2f} s; "
            f"store writes {c.write_s:.2f} s; claims {c.claim_s:.2f} s; "
            f"host load {os.getloadavg()[0]:.1f})"
        )
        return rate

    print(
        f"collector workers: {instances} instances x {files} files into PostgreSQL, batch {batch} "
        f"({os.cpu_count()} cores; host load {os.getloadavg()[0]:.1f})"
    )
    show("first cycle, 1 worker (creates objects)", cycle(1))
    steady = {n: cycle(n) for n in counts}
    rates = {
        n: show(f"steady cycle, {n} worker process{'es' if n > 1 else ''}", c) for n, c in steady.items()
    }
    per_target = show("1 worker, batch 1 (claim+write per target)", cycle(1, size=1))
    steady_rows = instances * files * 2
    per_target_rate, batch_rate, python_rate = write_path(store, origin, instances, files, batch)
    print(
        f"  store write path only, {min(instances, 200)} targets, alternating, best of 3: "
        f"one transaction per target {per_target_rate:,.0f} rows/s, batches of {batch} "
        f"{batch_rate:,.0f} rows/s ({batch_rate / per_target_rate:.2f}x; deltas in PostgreSQL), "
        f"batches with deltas judged in Python {python_rate:,.0f} rows/s"
    )
    copy_rate = plain_copy(url, steady_rows, instances * files, origin)
    logged_rate = plain_copy(url, steady_rows, instances * files, origin, logged=True)
    schema_rate = schema_copy(url, steady_rows, instances * files, origin)
    write_set_rate = schema_copy(url, steady_rows, instances * files, origin, write_set=True)
    store.dispose()
    print(
        f"  plain COPY of {steady_rows} rows into an unindexed twin table: {copy_rate:,.0f} rows/s "
        f"(unlogged: the reference); into a logged one: {logged_rate:,.0f} rows/s "
        f"({logged_rate / copy_rate:.2f}: the WAL a durable store cannot skip)"
    )
    print(
        f"  COPY of {steady_rows} rows into the store's sample table (its indexes; no foreign key "
        f"since schema 0016), rolled back: {schema_rate:,.0f} rows/s ({schema_rate / copy_rate:.2f} of "
        "plain COPY: the ceiling the schema sets before any delta is computed)"
    )
    print(
        f"  the write set alone, by COPY and one UPDATE, rolled back: {steady_rows // 2} samples and "
        f"{steady_rows - steady_rows // 2} intervals (each table with its indexes) and every "
        f"object's last_seen: {write_set_rate:,.0f} rows/s ({write_set_rate / copy_rate:.2f} of plain "
        "COPY: the most any ingest of these rows can reach on this schema, with no delta computed)"
    )
    best = max(rates, key=lambda n: rates[n])
    c = steady[best]
    spent = c.read_s + c.claim_s + c.write_s
    print(
        f"  what limits it: the best cycle's worker time is store writes {c.write_s / spent:.0%} "
        f"(an ingest writes samples and intervals, each with its indexes, and moves last_seen; "
        f"the write path alone reaches {batch_rate / copy_rate:.2f} of plain COPY), the simulated "
        f"polls {c.read_s / spent:.0%}, claims {c.claim_s / spent:.0%}; and every cycle shares "
        f"{os.cpu_count()} cores with PostgreSQL"
    )
    print(
        f"  1 worker, batch {batch} vs batch 1: {rates.get(1, 0) / per_target:.2f}x; "
        f"best ({best} workers) vs plain COPY: {rates[best] / copy_rate:.3f}"
    )


def write_path(
    store: Store, origin: datetime, instances: int, files: int, batch: int
) -> tuple[float, float, float]:
    """The store's side alone (no polling, no processes): the same snapshots written one target per
    transaction (as the scheduler does), in batches (as the workers do: deltas computed in
    PostgreSQL) and in batches with the deltas judged in Python, in turn, best of 3."""
    from app.store.ingest import ingest_batch, ingest_snapshots
    from connectors.simulator import SimulatedFleet

    fleet = SimulatedFleet(seed=SEED, origin=origin, instances=instances, files_per_instance=files)
    n = min(instances, 200)
    with store.session() as s:
        ids = [t.id for t in s.scalars(select(Target).order_by(Target.name).limit(n))]
    start = datetime.now(UTC) + timedelta(minutes=1)
    modes = ("per_target", "batch", "batch_python")
    best = dict.fromkeys(modes, 0.0)
    for k in range(3 * len(modes)):
        mode = modes[k % len(modes)]
        snaps = [inst.snapshot(start + timedelta(seconds=10 * k)) for inst in fleet.instances[:n]]
        rows = 0
        t0 = time.perf_counter()
        if mode == "per_target":
            for tid, snap in zip(ids, snaps, strict=True):
                with store.session() as s:
                    r = ingest_snapshots(s, s.get(Target, tid), [snap])  # type: ignore[arg-type]
                    rows += r.samples + r.intervals
        else:
            for i in range(0, n, batch):
                with store.session() as s:
                    targets = {
                        t.id: t for t in s.scalars(select(Target).where(Target.id.in_(ids[i : i + batch])))
                    }
                    part = [
                        (targets[tid], [snap])
                        for tid, snap in zip(ids[i : i + batch], snaps[i : i + batch], strict=True)
                    ]
                    judged = ingest_batch(s, part, in_database=mode == "batch")
                    rows += sum(r.samples + r.intervals for r in judged.values())
        best[mode] = max(best[mode], rows / (time.perf_counter() - t0))
    return best["per_target"], best["batch"], best["batch_python"]


def plain_copy(url: str, rows: int, n_objects: int, origin: datetime, *, logged: bool = False) -> float:
    """The reference: the same number of rows, same columns, by one plain COPY into an unlogged
    table (as bench/poll_cycle.py); `logged`: into a logged table, what durability alone costs."""
    raw = psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://"))
    table = "copy_ref_logged" if logged else "copy_ref"
    with raw, raw.cursor() as cur:
        cur.execute(f"CREATE {'' if logged else 'UNLOGGED '}TABLE {table} (LIKE sample INCLUDING DEFAULTS)")
        cur.execute("SELECT min(id) FROM object")
        base_obj = cur.fetchone()[0]  # type: ignore[index]
        buf = io.StringIO()
        ts = (origin + timedelta(minutes=15)).replace(tzinfo=None).isoformat()
        for i in range(rows):
            buf.write(
                f"{i + 1}\t{base_obj + (i % n_objects)}\t{ts}\t{ts}\t{10**10}\t{i}\t{i * 8192}\t{i * 5}\t"
                f"{i}\t{i * 8192}\t{i * 2}\t{{}}\n"
            )
        data = buf.getvalue()
        t0 = time.perf_counter()
        with cur.copy(
            f"COPY {table} (id, object_id, sample_time, instance_start, size_bytes, reads, bytes_read, "
            "read_time_ms, writes, bytes_written, write_time_ms, extra) FROM STDIN"
        ) as cp:
            cp.write(data)
        return rows / (time.perf_counter() - t0)


def _lines(rows: int, n_objects: int, base_obj: int, base: datetime, *, interval: bool = False) -> str:
    """COPY text of `rows` rows over `n_objects` objects, one sample time per round of objects: of
    sample (object_id, sample_time, instance_start, size_bytes, counters, extra), or `interval`,
    of io_interval (object_id, start_time, end_time, seconds, counters, extra)."""
    buf = io.StringIO()
    for i in range(rows):
        t = base + timedelta(seconds=i // n_objects)
        ts = t.isoformat()
        head = (
            f"{(t - timedelta(minutes=5)).isoformat()}\t{ts}\t300.0" if interval else f"{ts}\t{ts}\t{10**10}"
        )
        buf.write(
            f"{base_obj + (i % n_objects)}\t{head}\t{i}\t{i * 8192}\t{i * 5}\t{i}\t{i * 8192}\t{i * 2}\t{{}}\n"
        )
    return buf.getvalue()


def schema_copy(url: str, rows: int, n_objects: int, origin: datetime, *, write_set: bool = False) -> float:
    """What the store's own schema costs: the same rows COPYed into the real sample table (primary
    key, unique (object_id, sample_time), sample_time index; its foreign key to object was dropped
    in schema 0016), rolled back. `write_set`: what an ingest of these rows must write whatever it
    computes: half of them as samples and half as intervals (each table with its indexes), and
    every object's last_seen moved, rolled back."""
    raw = psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://"))
    counters = "reads, bytes_read, read_time_ms, writes, bytes_written, write_time_ms, extra"
    try:
        with raw.cursor() as cur:
            cur.execute("SELECT min(id) FROM object")
            base_obj = cur.fetchone()[0]  # type: ignore[index]
            base = (origin + timedelta(days=30)).replace(tzinfo=None)
            samples = rows // 2 if write_set else rows
            data = _lines(samples, n_objects, base_obj, base)
            intervals = _lines(rows - samples, n_objects, base_obj, base, interval=True) if write_set else ""
            t0 = time.perf_counter()
            with cur.copy(
                f"COPY sample (object_id, sample_time, instance_start, size_bytes, {counters}) FROM STDIN"
            ) as cp:
                cp.write(data)
            if write_set:
                with cur.copy(
                    f"COPY io_interval (object_id, start_time, end_time, seconds, {counters}) FROM STDIN"
                ) as cp:
                    cp.write(intervals)
                cur.execute("UPDATE object SET last_seen = %s", (base,))
            seconds = time.perf_counter() - t0
        return rows / seconds
    finally:
        raw.rollback()
        raw.close()


if __name__ == "__main__":
    main()
