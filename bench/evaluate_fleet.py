"""The hourly evaluation of a large fleet, per storage pool, on PostgreSQL.

Builds a fleet of N SQL Server instances x F files in P pools with a week of hourly roll-ups (and
the current hour's intervals not rolled up yet), then runs the hourly advice the way the service
does: `request_changed_pools` finds every pool changed, `run_due_pools` evaluates them one by one
(or W worker processes share them through their leases). The plain read it is compared with is
one GROUP BY per object over the same window, in the same run.

Run: .venv/bin/python -m bench.evaluate_fleet --instances 500 --files 50 [--pools 5] [--workers 1]
     [--polls-this-hour 1] (6: the current half hour polled every 5 minutes, as in production)

The data is generated in the server (INSERT ... SELECT over generate_series, indexes built after
the load): no row crosses the wire, faster than COPY of the same rows. The last line is
`evaluate: <objects> objects in <s> s; plain aggregate read <s0> s; ratio <s/s0>`.
"""

from __future__ import annotations

import argparse
import copy
import multiprocessing
import resource
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import yaml
from sqlalchemy import create_engine, text

from app.store.db import Store
from app.store.watermarks import request_changed_pools
from app.workers import run_due_pools
from policies.loader import DEFAULT_POLICY, load_policy, parse_policy
from policies.model import Policy

ADMIN = "postgresql+psycopg://postgres:postgres@127.0.0.1:5432/postgres"
NOW = datetime(2026, 11, 20, 12, 58, tzinfo=UTC)
COLS = "reads, bytes_read, read_time_ms, writes, bytes_written, write_time_ms"


def fleet_policy(pools: int, days: int) -> Policy:
    """The shipped policy's tiers in each pool (a pool per array of servers P000S*, P001S*, ...),
    flash sized to a fifth of a pool's data, so that the placement has to choose."""
    data: dict[str, Any] = yaml.safe_load(DEFAULT_POLICY.read_text(encoding="utf-8"))
    data["window_days"] = days
    data["pools"] = [
        {"name": f"array-{p:03d}", "servers": f"P{p:03d}S*", "tiers": copy.deepcopy(data["tiers"])}
        for p in range(pools)
    ]
    return parse_policy(yaml.safe_dump(data), source="bench fleet")


def build(url: str, instances: int, files: int, pools: int, days: int, polls: int = 1) -> None:
    """Targets, objects, a week of hourly roll-ups, the current hour above the roll-up mark (in
    `polls` intervals per object) and one ingest watermark per target, generated in the server."""
    hours = days * 24
    first = NOW.replace(minute=0, second=0, microsecond=0, tzinfo=None) - timedelta(hours=hours - 1)
    per_pool = -(-instances // pools)
    tiers = [t.locations.sqlserver_directory for t in load_policy().tiers]  # the shipped policy's
    engine = create_engine(url)
    # per object and hour: a steady base by object, a daily swing, a few hot objects
    vals = (
        "r, r * 8192, r * (1 + o.id % 9), w, w * 8192, w * (1 + o.id % 4)",
        "(o.id % 97) * 40 + (o.id % 7 = 0)::int * 20000 + ({h} % 24) * (o.id % 11) * 5",
        "(o.id % 53) * 10 + ({h} % 24) * (o.id % 5)",
    )
    with engine.begin() as c:
        c.execute(
            text(f"""
            INSERT INTO target (name, engine, source, poll_interval_s, enabled, created_at, consecutive_failures)
            SELECT 'P' || lpad(((i - 1) / {per_pool})::text, 3, '0') || 'S' || lpad(i::text, 6, '0'),
                   'sqlserver', 'simulator', 3600, true, TIMESTAMP '{first}', 0
            FROM generate_series(1, {instances}) i""")
        )
        c.execute(
            text(f"""
            INSERT INTO object (target_id, engine, server, database, kind, key, name, size_bytes,
                                physical_name, filegroup, first_seen, last_seen)
            SELECT t.id, 'sqlserver', t.name, 'Sales', 'data_file', 'Sales/file/' || f, 'f' || f || '.ndf',
                   (1 + f % 8)::bigint * 2147483648,
                   (ARRAY['{tiers[0]}', '{tiers[1]}', '{tiers[2]}'])[1 + f % 3] || 'f' || f || '.ndf',
                   'FG' || f, TIMESTAMP '{first}', TIMESTAMP '{first}'
            FROM target t, generate_series(1, {files}) f""")
        )
        # the roll-ups' indexes are built after the load (faster than kept up row by row)
        pk = c.execute(
            text(
                "SELECT conname FROM pg_constraint WHERE conrelid = 'hourly_rollup'::regclass AND contype = 'p'"
            )
        ).scalar_one()
        ix = c.execute(
            text(
                "SELECT indexdef, indexname FROM pg_indexes WHERE tablename = 'hourly_rollup' AND indexname <> :pk"
            ),
            {"pk": pk},
        ).all()
        for _, name in ix:
            c.execute(text(f'DROP INDEX "{name}"'))
        c.execute(text(f'ALTER TABLE hourly_rollup DROP CONSTRAINT "{pk}"'))
        c.execute(
            text(f"""
            INSERT INTO hourly_rollup (object_id, hour, intervals, seconds, {COLS}, extra)
            SELECT o.id, TIMESTAMP '{first}' + make_interval(hours => h), 1, 3600.0, {vals[0]}, '{{}}'::json
            FROM object o, generate_series(0, {hours - 2}) h,
                 LATERAL (SELECT {vals[1].format(h="h")} AS r, {vals[2].format(h="h")} AS w) v""")
        )
        c.execute(text(f'ALTER TABLE hourly_rollup ADD CONSTRAINT "{pk}" PRIMARY KEY (object_id, hour)'))
        for indexdef, _ in ix:
            c.execute(text(indexdef))
        mark = c.execute(text("SELECT coalesce(max(id), 0) FROM io_interval")).scalar_one()
        c.execute(text("DELETE FROM rollup_progress"))
        c.execute(
            text(
                "INSERT INTO rollup_progress (name, last_interval_id, updated_at) VALUES ('hourly', :m, now())"
            ),
            {"m": mark},
        )
        last = first + timedelta(hours=hours - 1)
        # the current hour's first 30 minutes, in `polls` intervals (5-minute polls: 6)
        c.execute(
            text(f"""
            INSERT INTO io_interval (object_id, start_time, end_time, seconds, {COLS}, extra)
            SELECT o.id, TIMESTAMP '{last}' + make_interval(secs => k * {1800 / polls}),
                   TIMESTAMP '{last}' + make_interval(secs => (k + 1) * {1800 / polls}), {1800 / polls},
                   {vals[0]}, '{{}}'::json
            FROM object o, generate_series(0, {polls - 1}) k,
                 LATERAL (SELECT ({vals[1].format(h=hours - 1)}) / {2 * polls} AS r,
                                 ({vals[2].format(h=hours - 1)}) / {2 * polls} AS w) v""")
        )
        c.execute(
            text("""
            INSERT INTO ingest_watermark (target_id, version, imported_version, changed_at, advised_version)
            SELECT id, 1, 0, now() AT TIME ZONE 'UTC', 0 FROM target""")
        )
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as c:
        c.execute(text("VACUUM ANALYZE"))
    engine.dispose()


def plain_read(url: str, days: int) -> tuple[float, int]:
    """One GROUP BY per object over the same window (the roll-ups and the hour above the mark),
    every row fetched: the floor any evaluation of this data pays."""
    hours = days * 24
    since = NOW.replace(minute=0, second=0, microsecond=0, tzinfo=None) - timedelta(hours=hours - 1)
    sums = ", ".join(f"sum({c})::bigint" for c in COLS.split(", "))
    engine = create_engine(url)
    with engine.connect() as c:
        t0 = time.perf_counter()
        rows = c.execute(
            text(f"""
            SELECT object_id, sum(seconds), {sums} FROM (
                SELECT object_id, seconds, {COLS} FROM hourly_rollup WHERE hour >= :since AND hour <= :now
                UNION ALL
                SELECT object_id, seconds, {COLS} FROM io_interval
                WHERE id > (SELECT last_interval_id FROM rollup_progress WHERE name = 'hourly')
                  AND end_time >= :since AND end_time <= :now
            ) u GROUP BY object_id"""),
            {"since": since, "now": NOW.replace(tzinfo=None)},
        ).all()
        seconds = time.perf_counter() - t0
    engine.dispose()
    return seconds, len(rows)


def _worker(url: str, pools: int, days: int, name: str) -> tuple[int, float, float, float, int, float]:
    """Evaluate due pools until none is left: the objects evaluated, the seconds spent reading,
    advising and storing, summed over this worker's pools, its largest pool's objects and the
    process's peak resident memory in MB (what a collector host must hold for it)."""
    store = Store(url, migrate=False)
    policy = fleet_policy(pools, days)
    runs = run_due_pools(store, lambda: policy, owner=name, clock=lambda: NOW, lease_s=3600)
    failed = [r for r in runs if r.error]
    for r in failed:
        print(f"  {name}: pool {r.pool} failed: {r.error}")
    store.dispose()
    return (sum(r.objects for r in runs), sum(r.read_s for r in runs), sum(r.advise_s for r in runs),
            sum(r.store_s for r in runs), max((r.objects for r in runs), default=0),
            resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--instances", type=int, default=500)
    ap.add_argument("--files", type=int, default=50)
    ap.add_argument("--pools", type=int, default=None, help="default: one pool per 100 instances")
    ap.add_argument("--days", type=int, default=7)
    ap.add_argument("--workers", type=int, default=1, help="processes sharing the pools through their leases")
    ap.add_argument("--polls-this-hour", type=int, default=1,
                    help="intervals per object in the current hour, not rolled up yet (5-minute polls: 6)")  # fmt: skip
    a = ap.parse_args()
    pools = a.pools or max(a.instances // 100, 1)
    admin = create_engine(ADMIN, isolation_level="AUTOCOMMIT")
    name = f"tierwise_bench_{uuid.uuid4().hex[:8]}"
    with admin.connect() as c:
        c.execute(text(f'CREATE DATABASE "{name}"'))
    url = ADMIN.rsplit("/", 1)[0] + f"/{name}"
    try:
        Store(url).dispose()  # the schema
        t0 = time.perf_counter()
        build(url, a.instances, a.files, pools, a.days, a.polls_this_hour)
        print(f"built {a.instances} x {a.files} objects in {pools} pools, {a.days * 24} hours "
              f"({a.polls_this_hour} intervals in the current one), in {time.perf_counter() - t0:.1f} s")  # fmt: skip
        s0, n0 = plain_read(url, a.days)
        print(f"plain aggregate read: {n0} objects in {s0:.2f} s")
        store = Store(url, migrate=False)
        policy = fleet_policy(pools, a.days)
        t0 = time.perf_counter()
        with store.session() as s:
            due = request_changed_pools(s, policy, NOW)
        t_request = time.perf_counter() - t0
        store.dispose()
        print(f"{len(due)} pools due, found in {t_request:.2f} s")
        if a.workers <= 1:
            done = [_worker(url, pools, a.days, "bench")]
        else:
            with multiprocessing.get_context("spawn").Pool(a.workers) as mp:
                done = mp.starmap(_worker, [(url, pools, a.days, f"bench-{i}") for i in range(a.workers)])
        seconds = time.perf_counter() - t0
        objects, read_s, advise_s, store_s = (sum(column) for column in list(zip(*done, strict=True))[:4])
        largest, peak_mb = max(d[4] for d in done), max(d[5] for d in done)
        print(f"peak memory of a worker process: {peak_mb:.0f} MB (largest pool {largest} objects)")
        print(f"stages, summed over pools and workers: read {read_s:.2f} s, advise {advise_s:.2f} s, "
              f"store {store_s:.2f} s")  # fmt: skip
        print(f"evaluate: {objects} objects in {seconds:.2f} s; plain aggregate read {s0:.2f} s; "
              f"ratio {seconds / s0:.2f}")  # fmt: skip
    finally:
        with admin.connect() as c:
            c.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


if __name__ == "__main__":
    main()
