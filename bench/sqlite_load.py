"""Benchmark: how logins fare while a large import and the roll-up run, on SQLite and PostgreSQL.

Where does SQLite stop serving? SQLite has one writer at a time: a login writes (its session and
an audit line), so it waits for the import's chunks and the roll-up's batches. This starts the
service (`tierwise serve`, no scheduler) on a fresh store, then for each number of clients
logging in at once: imports a generated file_stats.csv of a new server (`tierwise import`, in
its own process, as a DBA would run it) and then rolls its intervals up (the scheduled roll-up,
in its own process), while the clients log in over and over. Printed per phase: logins done,
their latency p50 / p99 / max, and how many were refused (503: the store stayed busy past its
lock wait) or failed. A login costs CPU of its own (the password hash: with many clients on few
cores that alone takes time), so each round starts with an idle phase, and `wait_p99_s` is what
the store added: the phase's p99 less the idle one's. A phase "serves" when every login succeeded
and the store added under a second (wait_p99_s < 1).

Run: .venv/bin/python -m bench.sqlite_load [--mb 20] [--clients 1,4,16] [--postgres]
(--postgres: a fresh database on 127.0.0.1:5432, dropped afterwards; make bench runs both).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import httpx
from sqlalchemy import create_engine, text

from app.store.db import Store
from app.store.users import add_user
from bench.import_file import generate

PASSWORD = "bench password 1"
POSTGRES_ADMIN = "postgresql+psycopg://postgres:postgres@127.0.0.1:5432/postgres"
TIERWISE = str(Path(sys.executable).with_name("tierwise"))


@dataclass
class Phase:
    name: str
    clients: int
    latencies: list[float] = field(default_factory=list)
    refused: int = 0  # 503: the store stayed busy past its lock wait
    failed: int = 0  # anything else but the login's 303
    seconds: float = 0.0

    def p99(self) -> float:
        lat = sorted(self.latencies)
        return lat[min(len(lat) - 1, int(0.99 * len(lat)))] if lat else 0.0

    def summary(self, idle: Phase | None = None) -> dict[str, object]:
        lat = sorted(self.latencies)

        def pct(p: float) -> float | None:
            return round(lat[min(len(lat) - 1, int(p * len(lat)))], 3) if lat else None

        return {
            "phase": self.name,
            "clients": self.clients,
            "seconds": round(self.seconds, 1),
            "logins": len(lat),
            "p50_s": round(statistics.median(lat), 3) if lat else None,
            "p99_s": pct(0.99),
            "max_s": round(lat[-1], 3) if lat else None,
            "wait_p99_s": round(max(self.p99() - idle.p99(), 0.0), 3) if idle is not None else None,
            "refused_503": self.refused,
            "failed": self.failed,
            "serves": bool(lat)
            and not self.refused
            and not self.failed
            and self.p99() - (idle.p99() if idle is not None else 0.0) < 1.0,
        }


def _login_loop(url: str, phase: Phase, stop: threading.Event, lock: threading.Lock) -> None:
    with httpx.Client(base_url=url, timeout=120) as client:
        while not stop.is_set():
            page = client.get("/login").text
            token = page.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
            began = time.perf_counter()
            r = client.post("/login", data={"username": "bench", "password": PASSWORD, "csrf_token": token})
            took = time.perf_counter() - began
            with lock:
                if r.status_code == 303:
                    phase.latencies.append(took)
                elif r.status_code == 503:
                    phase.refused += 1
                else:
                    phase.failed += 1
            client.cookies.clear()


def measure(url: str, phase: Phase, work: subprocess.Popen[bytes] | None, seconds: float = 0.0) -> Phase:
    """Clients log in until `work` ends (or for `seconds` when there is none)."""
    stop, lock = threading.Event(), threading.Lock()
    threads = [
        threading.Thread(target=_login_loop, args=(url, phase, stop, lock)) for _ in range(phase.clients)
    ]
    began = time.perf_counter()
    for t in threads:
        t.start()
    if work is not None:
        if work.wait() != 0:
            raise SystemExit(f"{phase.name}: the work process failed ({work.returncode})")
    else:
        time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()
    phase.seconds = time.perf_counter() - began
    return phase


def rollup(url: str) -> None:
    """The scheduled roll-up's work, in this process (a child of the benchmark)."""
    from app.store.rollup import roll_up_in_batches

    store = Store(url)
    n = roll_up_in_batches(store)
    store.dispose()
    print(json.dumps({"rolled_up": n}), file=sys.stderr)


@contextmanager
def postgres_database() -> Iterator[str]:
    admin = create_engine(POSTGRES_ADMIN, isolation_level="AUTOCOMMIT")
    name = f"tierwise_bench_{uuid.uuid4().hex[:10]}"
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield POSTGRES_ADMIN.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@contextmanager
def service(url: str, env: dict[str, str], port: int) -> Iterator[str]:
    proc = subprocess.Popen([TIERWISE, "serve", "--port", str(port)], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{base}/api/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline or proc.poll() is not None:
                raise SystemExit("the service did not start")
            time.sleep(0.2)
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def run(url: str, tmp: Path, megabytes: int, levels: list[int]) -> list[dict[str, object]]:
    store = Store(url)
    with store.session() as s:
        add_user(s, username="bench", password=PASSWORD, role="viewer", now=datetime.now(UTC))
    store.dispose()
    env = {**os.environ, "TIERWISE_DATABASE_URL": url, "TIERWISE_SECRET_KEY_FILE": str(tmp / "bench.key"),
           "TIERWISE_SCHEDULER_ENABLED": "false", "TIERWISE_LOG_LEVEL": "WARNING"}  # fmt: skip
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    out: list[dict[str, object]] = []
    with service(url, env, port) as base:
        for clients in levels:
            idle = measure(base, Phase("idle", clients), None, seconds=5)
            out.append(idle.summary())
            path = tmp / f"file_stats_{clients}.csv"
            rows = generate(path, megabytes)
            # a new server each time: the file's name is in its rows
            path.write_text(path.read_text().replace("SQLBENCH01", f"SQLBENCH{clients:02d}"))
            began = time.perf_counter()
            importing = subprocess.Popen([TIERWISE, "import", str(path)], env=env, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL)  # fmt: skip
            phase = measure(base, Phase("import", clients), importing).summary(idle)
            phase["import_rows_per_s"] = round(rows / (time.perf_counter() - began))
            out.append(phase)
            rolling = subprocess.Popen([sys.executable, "-m", "bench.sqlite_load", "--rollup", url], env=env,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
            out.append(measure(base, Phase("roll-up", clients), rolling).summary(idle))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mb", type=int, default=20, help="size of each imported file, MB")
    parser.add_argument("--clients", default="1,4,16", help="clients logging in at once, per round")
    parser.add_argument("--postgres", action="store_true", help="a fresh PostgreSQL database, not SQLite")
    parser.add_argument("--rollup", metavar="URL", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rollup:
        rollup(args.rollup)
        return
    levels = [int(x) for x in args.clients.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        if args.postgres:
            with postgres_database() as url:
                results = run(url, Path(tmp), args.mb, levels)
        else:
            results = run(f"sqlite:///{Path(tmp) / 'bench.db'}", Path(tmp), args.mb, levels)
    store = "postgresql" if args.postgres else "sqlite"
    for r in results:
        print(json.dumps({"store": store, "file_mb": args.mb, **r}))


if __name__ == "__main__":
    main()
