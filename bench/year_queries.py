"""Benchmark: the service's I/O queries over a year of hourly roll-ups, without and with the time
partitioning of docs/large-fleet.md.

Loads into a fresh PostgreSQL database, with COPY: `--instances` x `--files` objects, a year
(`--days`) of hourly roll-ups for each, and the last `--raw-days` of 5-minute intervals (the raw
data the object page and the advice read; the current hour's intervals are above the roll-up mark,
as between two roll-ups). Then times, `--repeat` times each with a different target / object, the
queries as the service runs them (the functions of app/store/heat_map.py, object_detail.py and
io_window.py, and the evaluate window's statement of app/evaluate.py), prints p50 / p95 and the plan of the slowest statement of each;
then converts the store with the documented partitioning SQL (timed) and measures again.

A year of 1,000 instances x 50 files is 438 million roll-up rows (~90 GB): more than this host
holds. The defaults load a year for 50 instances (21.9 million rows); docs/large-fleet.md
extrapolates to 1,000 with the plans shown.

Run: make bench   (or: .venv/bin/python -m bench.year_queries --instances 50 --files 50 --days 365)
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
from sqlalchemy import create_engine, event, select, text

from app.store.db import Store
from app.store.heat_map import heat_map
from app.store.io_window import usage, window_start
from app.store.models import DbObject, HourlyRollup, IoInterval
from app.store.object_detail import object_detail
from app.store.rollup import rolled_up_mark
from policies.loader import load_policy

FC_DIR = load_policy().tier("fc").locations.sqlserver_directory  # where the shipped policy's fc is

ADMIN_URL = "postgresql+psycopg://postgres:postgres@127.0.0.1:5432/postgres"
GUIDE = Path(__file__).resolve().parents[1] / "docs" / "large-fleet.md"
CHUNK = 200_000


def _raw(url: str) -> psycopg.Connection[Any]:
    return psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://"), autocommit=True)


def load(url: str, instances: int, files: int, days: int, raw_days: int, now: datetime) -> dict[str, int]:
    """Targets, objects, roll-ups and intervals, written with COPY; indexes built afterwards."""
    Store(url).dispose()  # the schema, as the service creates it
    conn = _raw(url)
    naive = now.replace(tzinfo=None)
    counts: dict[str, int] = {}
    t0 = time.perf_counter()
    with conn.cursor() as cur:
        with cur.copy(
            "COPY target (id, name, engine, source, poll_interval_s, enabled, created_at, "
            "consecutive_failures) FROM STDIN"
        ) as cp:
            for t in range(1, instances + 1):
                cp.write_row((t, f"SQLSIM{t:04d}", "sqlserver", "simulator", 300, True, naive, 0))
        with cur.copy(
            "COPY object (id, target_id, engine, server, database, kind, key, name, size_bytes, "
            "physical_name, file_id, filegroup, first_seen, last_seen) FROM STDIN"
        ) as cp:
            for t in range(1, instances + 1):
                for f in range(1, files + 1):
                    oid = (t - 1) * files + f
                    cp.write_row(
                        (
                            oid,
                            t,
                            "sqlserver",
                            f"SQLSIM{t:04d}",
                            f"DB{f % 5}",
                            "data_file",
                            f"DB{f % 5}/file/{f}",
                            f"file{f}",
                            (1 + f % 40) * 2**30,
                            f"{FC_DIR}DB{f % 5}\\file{f}.ndf",
                            f,
                            f"FG{f % 7}",
                            naive,
                            naive,
                        )
                    )
        cur.execute(
            "SELECT setval('target_id_seq', %s), setval('object_id_seq', %s)", (instances, instances * files)
        )
        objects = instances * files
        # as the store is written: hour after hour, every object each hour; indexes built after the load
        cur.execute(
            "ALTER TABLE hourly_rollup DROP CONSTRAINT fk_hourly_rollup_object_id_object, "
            "DROP CONSTRAINT pk_hourly_rollup"
        )
        cur.execute("DROP INDEX ix_hourly_rollup_hour")
        first_hour = naive.replace(minute=0, second=0, microsecond=0) - timedelta(days=days)
        current_hour = naive.replace(minute=0, second=0, microsecond=0)
        rng = random.Random(1)
        base = [int(2000 / (1 + rng.paretovariate(1.2) * 50) * 3600) for _ in range(objects)]
        rows = 0
        with cur.copy(
            "COPY hourly_rollup (object_id, hour, intervals, seconds, reads, bytes_read, read_time_ms, "
            "writes, bytes_written, write_time_ms, extra) FROM STDIN"
        ) as cp:
            hour = first_hour
            buf: list[str] = []
            while hour < current_hour:
                ts = hour.isoformat(sep=" ")
                shape = 0.5 + abs(12 - (hour.hour + 3) % 24) / 12
                for i in range(objects):
                    r = int(base[i] * shape * 0.8)
                    w = r // 4
                    buf.append(
                        f"{i + 1}\t{ts}\t12\t3600\t{r}\t{r * 8192}\t{r * 5}\t{w}\t{w * 8192}\t{w * 2}\t{{}}\n"
                    )
                if len(buf) >= CHUNK:
                    cp.write("".join(buf))
                    rows += len(buf)
                    buf = []
                hour += timedelta(hours=1)
            cp.write("".join(buf))
            rows += len(buf)
        counts["hourly_rollup"] = rows
        cur.execute("ALTER TABLE hourly_rollup ADD CONSTRAINT pk_hourly_rollup PRIMARY KEY (object_id, hour)")
        cur.execute("CREATE INDEX ix_hourly_rollup_hour ON hourly_rollup (hour)")
        cur.execute(
            "ALTER TABLE hourly_rollup ADD CONSTRAINT fk_hourly_rollup_object_id_object FOREIGN KEY "
            "(object_id) REFERENCES object (id) ON DELETE CASCADE"
        )
        # raw intervals of the last raw_days, every 5 minutes (the current hour's not rolled up yet)
        cur.execute("ALTER TABLE io_interval DROP CONSTRAINT uq_io_interval_object_id")
        cur.execute("DROP INDEX ix_io_interval_end_time")
        end = naive.replace(second=0, microsecond=0) - timedelta(minutes=naive.minute % 5)
        t = end - timedelta(days=raw_days)
        rows = 0
        mark = 0
        with cur.copy(
            "COPY io_interval (id, object_id, start_time, end_time, seconds, reads, bytes_read, "
            "read_time_ms, writes, bytes_written, write_time_ms, extra) FROM STDIN"
        ) as cp:
            buf = []
            while t <= end:
                s, e = (t - timedelta(minutes=5)).isoformat(sep=" "), t.isoformat(sep=" ")
                shape = 0.5 + abs(12 - (t.hour + 3) % 24) / 12
                for i in range(objects):
                    rows += 1
                    r = int(base[i] * shape * 0.8 / 12)
                    w = r // 4
                    buf.append(
                        f"{rows}\t{i + 1}\t{s}\t{e}\t300\t{r}\t{r * 8192}\t{r * 5}\t{w}\t{w * 8192}\t{w * 2}\t{{}}\n"
                    )
                if t < current_hour:
                    mark = rows
                if len(buf) >= CHUNK:
                    cp.write("".join(buf))
                    buf = []
                t += timedelta(minutes=5)
            cp.write("".join(buf))
        counts["io_interval"] = rows
        cur.execute("SELECT setval('io_interval_id_seq', %s)", (rows,))
        cur.execute(
            "ALTER TABLE io_interval ADD CONSTRAINT uq_io_interval_object_id UNIQUE (object_id, end_time)"
        )
        cur.execute("CREATE INDEX ix_io_interval_end_time ON io_interval (end_time)")
        cur.execute("UPDATE rollup_progress SET last_interval_id = %s WHERE name = 'hourly'", (mark,))
        cur.execute("VACUUM ANALYZE")
        cur.execute(
            "SELECT pg_size_pretty(pg_total_relation_size('hourly_rollup')), "
            "pg_size_pretty(pg_total_relation_size('io_interval'))"
        )
        sizes = cur.fetchone()
    conn.close()
    counts["load_s"] = int(time.perf_counter() - t0)
    print(
        f"  loaded {counts['hourly_rollup']:,} roll-ups ({sizes[0] if sizes else '?'} with indexes) and "
        f"{counts['io_interval']:,} intervals ({sizes[1] if sizes else '?'}) in {counts['load_s']} s"
    )
    return counts


class Timed:
    """Each statement the service runs during one call, with its duration (to explain the slowest)."""

    def __init__(self, store: Store) -> None:
        self.statements: list[tuple[float, str, Any]] = []
        self._t0 = 0.0
        event.listen(store.engine, "before_cursor_execute", self._before)
        event.listen(store.engine, "after_cursor_execute", self._after)

    def _before(self, conn: Any, cursor: Any, statement: str, params: Any, *args: Any) -> None:
        self._t0 = time.perf_counter()

    def _after(self, conn: Any, cursor: Any, statement: str, params: Any, *args: Any) -> None:
        self.statements.append((time.perf_counter() - self._t0, statement, params))


def measure(store: Store, instances: int, files: int, now: datetime, repeat: int, label: str) -> None:
    policy = load_policy()
    rng = random.Random(7)
    day = window_start(now, 24)
    queries: list[tuple[str, int, Callable[[Any, int, int], Any]]] = [
        (
            "target page: 24 h per object, one target",
            repeat,
            lambda s, t, o: s.execute(
                usage(
                    "postgresql",
                    since=day,
                    until=now,
                    object_ids=select(DbObject.id).where(DbObject.target_id == t),
                    mark=rolled_up_mark(s),
                )
            ).all(),
        ),
        (
            "heat map: whole fleet, 7 days",
            max(3, repeat // 4),
            lambda s, t, o: heat_map(session=s, target=None, policy=policy, now=now),
        ),
        (
            "heat map: one target, 7 days",
            repeat,
            lambda s, t, o: heat_map(session=s, target=f"SQLSIM{t:04d}", policy=policy, now=now),
        ),
        (
            "object page: one object, 7 days raw",
            repeat,
            lambda s, t, o: object_detail(session=s, object_id=o, policy=policy, now=now),
        ),
        (
            "one object's year of hourly roll-ups",
            repeat,
            lambda s, t, o: s.execute(
                select(HourlyRollup.hour, HourlyRollup.reads, HourlyRollup.writes).where(
                    HourlyRollup.object_id == o, HourlyRollup.hour >= now - timedelta(days=365)
                )
            ).all(),
        ),
        (
            "fleet reads per hour, last 30 days (hour index)",
            max(3, repeat // 4),
            lambda s, t, o: s.execute(
                text("SELECT hour, sum(reads) FROM hourly_rollup WHERE hour >= :since GROUP BY hour"),
                {"since": (now - timedelta(days=30)).replace(tzinfo=None)},
            ).all(),
        ),
        (
            "evaluate window: its statement, all objects, 7 days raw",
            2,
            lambda s, t, o: s.execute(evaluate_window).all(),
        ),
    ]
    # the statement of app.evaluate.windows_from_store, fetched as rows: that function also builds an
    # ORM object per interval, which over millions of intervals costs minutes (docs/large-fleet.md)
    evaluate_window = (
        select(IoInterval.__table__)
        .where(IoInterval.end_time > now - timedelta(days=policy.window_days), IoInterval.end_time <= now)
        .order_by(IoInterval.id)
    )
    timed = Timed(store)
    print(f"  {label}")
    for name, n, fn in queries:
        times: list[float] = []
        slowest: tuple[float, str, Any] = (0.0, "", None)
        for _ in range(n):
            t = rng.randint(1, instances)
            o = (t - 1) * files + rng.randint(1, files)
            timed.statements.clear()
            with store.session() as s:
                t0 = time.perf_counter()
                fn(s, t, o)
                times.append(time.perf_counter() - t0)
            slowest = max([slowest, *timed.statements], key=lambda x: x[0])
        p50 = statistics.median(times)
        p95 = statistics.quantiles(times, n=20)[-1] if len(times) >= 2 else times[0]
        print(f"    {name:<55} p50 {p50 * 1000:9.1f} ms  p95 {p95 * 1000:9.1f} ms  (n={n})")
        _explain(store, slowest)


def _explain(store: Store, slowest: tuple[float, str, Any]) -> None:
    _, statement, params = slowest
    if not statement:
        return
    with store.engine.connect() as conn:
        cur = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
        cur.execute("EXPLAIN (ANALYZE, BUFFERS, SUMMARY OFF) " + statement, params)
        plan = [r[0] for r in cur.fetchall()]
        conn.rollback()
    keep = [
        ln for ln in plan if re.search(r"Scan|Append|Aggregate|Join|Buffers: shared|Subplans Removed", ln)
    ]
    for ln in keep[:12]:
        print(f"        {ln.strip()[:150]}")


def partition(url: str) -> float:
    functions, conversion = re.findall(r"```sql\n(.*?)```", GUIDE.read_text(), flags=re.S)
    conn = _raw(url)
    t0 = time.perf_counter()
    conn.execute(functions)
    conn.execute(conversion)
    conn.execute("VACUUM ANALYZE")
    conn.close()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--instances", type=int, default=50)
    ap.add_argument("--files", type=int, default=50)
    ap.add_argument("--days", type=int, default=365)
    ap.add_argument("--raw-days", type=int, default=7)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--admin-url", default=ADMIN_URL)
    args = ap.parse_args()
    admin = create_engine(args.admin_url, isolation_level="AUTOCOMMIT")
    name = f"tierwise_bench_{uuid.uuid4().hex[:8]}"
    with admin.connect() as c:
        c.execute(text(f'CREATE DATABASE "{name}"'))
    url = args.admin_url.rsplit("/", 1)[0] + f"/{name}"
    now = datetime.now(UTC).replace(microsecond=0)
    try:
        print(
            f"year queries: {args.instances} instances x {args.files} files, {args.days} days of hourly "
            f"roll-ups, {args.raw_days} days of 5-minute intervals, PostgreSQL"
        )
        load(url, args.instances, args.files, args.days, args.raw_days, now)
        store = Store(url)
        measure(store, args.instances, args.files, now, args.repeat, "unpartitioned (the schema as migrated)")
        store.dispose()
        took = partition(url)
        print(f"  documented partitioning conversion (copies every row) + VACUUM ANALYZE: {took:.0f} s")
        store = Store(url)
        measure(
            store,
            args.instances,
            args.files,
            now,
            args.repeat,
            "partitioned: weekly sample / io_interval, monthly hourly_rollup",
        )
        store.dispose()
    finally:
        with admin.connect() as c:
            c.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


if __name__ == "__main__":
    main()
