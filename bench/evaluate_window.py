"""The advice read: windows_from_store before (raw intervals in Python) / after (SQL sums) on PostgreSQL.

Run: .venv/bin/python -m bench.evaluate_window [--instances 200] [--files 50] [--days 7] [--skip-old]
"""

from __future__ import annotations

import argparse
import time
import uuid
from datetime import UTC, datetime, timedelta

from sqlalchemy import create_engine, text

from app.evaluate import windows_from_store
from app.store.db import Store
from app.store.models import DbObject, Target
from policies.loader import load_policy
from tests.app.test_evaluate_windows import oracle_windows_from_store

FC_DIR = load_policy().tier("fc").locations.sqlserver_directory  # where the shipped policy's fc is
ADMIN = "postgresql+psycopg://postgres:postgres@127.0.0.1:5432/postgres"
NOW = datetime(2026, 11, 20, 12, 58, tzinfo=UTC)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--instances", type=int, default=200)
    ap.add_argument("--files", type=int, default=50)
    ap.add_argument("--days", type=int, default=7)
    ap.add_argument("--skip-old", action="store_true")
    ap.add_argument("--runs", type=int, default=8)
    ap.add_argument("--profile", action="store_true")
    a = ap.parse_args()
    admin = create_engine(ADMIN, isolation_level="AUTOCOMMIT")
    name = f"tierwise_bench_{uuid.uuid4().hex[:8]}"
    with admin.connect() as c:
        c.execute(text(f'CREATE DATABASE "{name}"'))
    url = ADMIN.rsplit("/", 1)[0] + f"/{name}"
    try:
        store = Store(url)
        t0 = time.perf_counter()
        with store.session() as s:
            for i in range(a.instances):
                t = Target(name=f"SQL{i:04d}", engine="sqlserver", source="simulator", created_at=NOW)
                s.add(t)
                s.flush()
                s.add_all(
                    DbObject(
                        target_id=t.id,
                        engine="sqlserver",
                        server=t.name,
                        database="Sales",
                        kind="data_file",
                        key=f"Sales/file/{f}",
                        name=f"f{f}.ndf",
                        size_bytes=2**34,
                        physical_name=f"{FC_DIR}f{f}.ndf",
                        filegroup=f"FG{f % 10}",
                        first_seen=NOW,
                        last_seen=NOW,
                    )
                    for f in range(a.files)
                )
        hours = a.days * 24
        first = NOW.replace(minute=0, second=0, microsecond=0, tzinfo=None) - timedelta(hours=hours - 1)
        cols = "reads, bytes_read, read_time_ms, writes, bytes_written, write_time_ms"
        vals = (
            "(o.id % 97 + h) , (o.id % 97 + h) * 8192, (o.id % 13 + h), (o.id % 7 + h),"
            " (o.id % 7 + h) * 8192, (o.id % 5)"
        )
        extra = """CASE WHEN o.id % 5 = 0 THEN '{"pool_data_p_reads": 5, "pool_async_data_reads": 2}'::json ELSE '{}'::json END"""
        with store.session() as s:
            # one interval per object and hour (hourly polls), every one rolled up; then the
            # current hour's intervals again above the mark (not rolled up yet)
            s.execute(
                text(f"""
                INSERT INTO io_interval (object_id, start_time, end_time, seconds, {cols}, extra)
                SELECT o.id, TIMESTAMP '{first}' + (h || ' hours')::interval - interval '30 minutes',
                       TIMESTAMP '{first}' + (h || ' hours')::interval + interval '30 minutes', 3600.0,
                       {vals}, {extra}
                FROM object o, generate_series(0, {hours - 2}) h""")
            )
            s.execute(
                text(f"""
                INSERT INTO hourly_rollup (object_id, hour, intervals, seconds, {cols}, extra)
                SELECT object_id, date_trunc('hour', end_time), 1, seconds, {cols}, extra FROM io_interval""")
            )
            s.execute(text("""DELETE FROM rollup_progress"""))
            s.execute(
                text("""INSERT INTO rollup_progress (name, last_interval_id, updated_at)
                              SELECT 'hourly', max(id), now() FROM io_interval""")
            )
            s.execute(
                text(f"""
                INSERT INTO io_interval (object_id, start_time, end_time, seconds, {cols}, extra)
                SELECT o.id, TIMESTAMP '{first}' + interval '{hours - 1} hours',
                       TIMESTAMP '{first}' + interval '{hours - 1} hours 30 minutes', 1800.0,
                       {vals.replace("h", str(hours - 1))}, {extra}
                FROM object o""")
            )
        with store.session() as s:
            s.execute(text("ANALYZE"))
            n_iv = s.execute(text("SELECT count(*) FROM io_interval")).scalar()
            n_ru = s.execute(text("SELECT count(*) FROM hourly_rollup")).scalar()
        print(
            f"built {a.instances * a.files} objects, {n_iv} intervals, {n_ru} roll-ups in "
            f"{time.perf_counter() - t0:.1f} s"
        )
        policy = load_policy().model_copy(update={"window_days": a.days})
        new = None
        if a.profile:
            import cProfile
            import pstats

            with store.session() as s:
                cProfile.runctx(
                    "windows_from_store(s, policy, now=NOW)", globals(), locals(), "/tmp/wfs.prof"
                )
            pstats.Stats("/tmp/wfs.prof").sort_stats("cumulative").print_stats(25)
        for run in range(a.runs):
            with store.session() as s:
                t0 = time.perf_counter()
                new = windows_from_store(s, policy, now=NOW)
                print(
                    f"after  (SQL sums) run {run + 1}: {time.perf_counter() - t0:.2f} s, {len(new[0])} windows"
                )
        if not a.skip_old:
            with store.session() as s:
                t0 = time.perf_counter()
                old = oracle_windows_from_store(s, policy, now=NOW)
                print(
                    f"before (raw intervals in Python): {time.perf_counter() - t0:.2f} s, {len(old[0])} windows"
                )
            assert new is not None
            a_, b_ = (
                {w.info.key + w.info.server: w for w in new[0]},
                {w.info.key + w.info.server: w for w in old[0]},
            )
            same = a_.keys() == b_.keys() and all(
                a_[k].total == b_[k].total and list(a_[k].by_hour) == list(b_[k].by_hour) for k in a_
            )
            print("equal to the oracle:", same)
        store.dispose()
    finally:
        with admin.connect() as c:
            c.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


if __name__ == "__main__":
    main()
