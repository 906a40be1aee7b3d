"""/api/health turns degraded when a job has failed its last FAILED_RUNS_DEGRADED runs, naming it
(issue #33, item 2): a reports job failing every minute said "ok" for a quarter hour, since it was
not late yet by its allowance."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy import select

from app import jobs
from app.demo import DEMO_USER
from app.job_health import FAILED_RUNS_DEGRADED, JobMonitor, scheduler_status
from app.jobs import REPORTS_STALE_S
from app.main import create_app
from app.store.models import User
from app.store.tokens import create_token
from tests.app.test_jobs_resilience import fleet_settings, wait_for

T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


def test_three_failed_runs_degrade_however_long_the_allowance_and_a_success_clears_it() -> None:
    clock = [T0]
    monitor = JobMonitor(clock=lambda: clock[0])
    monitor.register("reports", interval_s=60, stale_after_s=REPORTS_STALE_S)
    monitor.register("rollup", interval_s=600)
    for run in range(1, FAILED_RUNS_DEGRADED + 1):
        clock[0] += timedelta(minutes=1)
        monitor.started("reports")
        for _ in range(3):  # a run that retried a store error twice counts as one failed run
            monitor.failed("reports", RuntimeError("boom"))
        status = scheduler_status(monitor.snapshot(), alive=True, now=clock[0])
        assert status.stale == []  # never late by its 15-minute allowance
        expected = ["reports"] if run == FAILED_RUNS_DEGRADED else []
        assert (status.state, status.failed_repeatedly) == (
            "degraded" if expected else "running",
            expected,
        ), run
    monitor.started("reports")
    monitor.succeeded("reports")
    status = scheduler_status(monitor.snapshot(), alive=True, now=clock[0])
    assert (status.state, status.failed_repeatedly) == ("running", [])


def test_api_health_names_the_job_that_failed_its_last_runs(store_url: str, tmp_path: Path) -> None:
    settings = fleet_settings(store_url, tmp_path, demo=True, scheduler_enabled=True)
    with TestClient(create_app(settings)) as client:
        state = client.app.state.tierwise  # type: ignore[attr-defined]
        assert state.scheduler is not None
        monitor = state.scheduler.monitor
        wait_for(lambda: monitor.get("reports") is not None and monitor.get("reports").successes >= 1,
                 what="the reports job's first run")  # fmt: skip
        assert client.get("/api/health").json()["failed_repeatedly"] == []

        def failing_reports(rt: jobs.Runtime) -> None:
            raise ValueError("Header values may not contain linefeed or carriage return characters")

        for run in range(FAILED_RUNS_DEGRADED):  # the job's runs as APScheduler starts them
            jobs._guard("reports", failing_reports)
            body = client.get("/api/health").json()
            assert body["failed_repeatedly"] == ([] if run < FAILED_RUNS_DEGRADED - 1 else ["reports"])
        assert (
            body["status"] == "degraded"
            and body["scheduler"] == "degraded"
            and "reports" not in body["stale"]
        )
        assert "jobs" not in body  # the errors only for a signed-in caller
        with state.store.session() as s:
            demo = s.scalar(select(User).where(User.username == DEMO_USER))
            token = create_token(s, user=demo, name="monitoring", now=datetime.now(UTC))
        body = client.get("/api/health", headers={"Authorization": f"Bearer {token}"}).json()
        [job] = [j for j in body["jobs"] if j["job"] == "reports"]
        assert job["failed_runs"] == FAILED_RUNS_DEGRADED and "linefeed" in job["last_error"]
