"""The first hour of a DBA who brings real files (#17, done-when): a collection that ended a month
ago is imported into a fresh store, `tierwise evaluate` runs once, and the move is found in
/api/recommendations, on the Recommendations page in Chromium and in the rendered report, whose
rates equal the file's (I/O in the file / seconds it covers); the pages say how old the data is."""

from __future__ import annotations

import csv
import email
import email.policy
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
import yaml
from playwright.sync_api import Browser
from typer.testing import CliRunner

from app.cli import app
from app.settings import Settings, get_settings
from tests.advisors.scenarios.generate import render
from tests.conftest import live_server
from tests.e2e.conftest import shot

PASSWORD = "correct horse battery"
DAYS_OLD = 30
runner = CliRunner()


def _collection(tmp: Path, end: datetime) -> Path:
    """A 48-hour hourly file_stats.csv: one random-read filegroup at 139 reads/s on FC (a move to
    flash, scenario random-read-139-flash-empty) and its log, ending `end`."""
    spec = {
        "description": "first hour",
        "base_policy": "shipped",  # a DBA's file on the shipped policy's fc directory
        "collection": {"hours": 48, "interval_minutes": 60, "end": end.isoformat()},
        "objects": [
            {"engine": "sqlserver", "server": "SQLWEB01", "database": "Catalog", "kind": "filegroup",
             "name": "FG_SEARCH", "files": 1, "size_gb": 100, "tier": "fc", "reads_per_s": 139,
             "read_kib": 8, "read_ms": 12},
            {"engine": "sqlserver", "server": "SQLWEB01", "database": "Catalog", "kind": "log",
             "name": "Catalog_log", "size_gb": 5, "tier": "fc", "writes_per_s": 5, "write_kib": 4,
             "write_ms": 0.7},
        ],
    }  # fmt: skip
    scenario = tmp / "scenario"
    scenario.mkdir()
    (scenario / "scenario.yaml").write_text(yaml.safe_dump(spec))
    path = tmp / "file_stats.csv"
    path.write_text(render(scenario)["file_stats.csv"])
    return path


def _file_rate(path: Path) -> float:
    """Reads per second over the file: the counters' growth between its first and last sample,
    divided by the seconds between them (every file of the collection together)."""
    rows = list(csv.DictReader(path.open()))
    times = sorted({r["sample_time"] for r in rows})

    def reads_at(t: str) -> int:
        return sum(int(r["num_of_reads"]) for r in rows if r["sample_time"] == t)

    def parse(t: str) -> datetime:
        return datetime.fromisoformat(t.replace("Z", "+00:00"))

    seconds = (parse(times[-1]) - parse(times[0])).total_seconds()
    return (reads_at(times[-1]) - reads_at(times[0])) / seconds


@pytest.fixture(scope="module")
def first_hour(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, object]]:
    tmp = tmp_path_factory.mktemp("first-hour")
    settings = Settings(
        database_url=f"sqlite:///{tmp / 'tierwise.db'}",
        secret_key_file=tmp / "tierwise.key",
        scheduler_enabled=False,
    )
    mp = pytest.MonkeyPatch()
    mp.setenv("TIERWISE_DATABASE_URL", settings.database_url)
    mp.setenv("TIERWISE_SECRET_KEY_FILE", str(settings.secret_key_file))
    get_settings.cache_clear()
    end = (datetime.now(UTC) - timedelta(days=DAYS_OLD)).replace(minute=0, second=0, microsecond=0)
    collection = _collection(tmp, end)
    try:
        for args in (
            ["import", str(collection)],
            ["evaluate"],
            ["users", "add", "ada", "--role", "admin", "--password", PASSWORD],
            ["report", "render", "--out", str(tmp / "report.eml"), "--format", "text"],
        ):
            r = runner.invoke(app, args)
            assert r.exit_code == 0, f"tierwise {' '.join(args)}: {r.output}"
            if args == ["evaluate"]:
                assert "1 moves" in r.output and "recommendations: 1 new" in r.output, r.output
                assert f"{DAYS_OLD} days old" in r.output, r.output
        token = runner.invoke(app, ["users", "token", "ada", "--name", "e2e"]).stdout.strip()
        with live_server(settings) as url:
            yield {"url": url, "token": token, "file": collection, "report": tmp / "report.eml"}
    finally:
        mp.undo()
        get_settings.cache_clear()


def test_the_move_is_in_the_api_with_the_data_end_note(first_hour: dict[str, object]) -> None:
    r = httpx.get(f"{first_hour['url']}/api/recommendations",
                  headers={"Authorization": f"Bearer {first_hour['token']}"})  # fmt: skip
    assert r.status_code == 200, r.text
    moves = [i for i in r.json()["items"] if i["name"] == "FG_SEARCH"]
    assert len(moves) == 1 and moves[0]["to_tier"] == "flash" and moves[0]["status"] == "open"
    assert f"{DAYS_OLD} days old" in moves[0]["data_note"]
    assert datetime.fromisoformat(moves[0]["data_end"]) < datetime.now(UTC) - timedelta(days=DAYS_OLD - 1)


def test_the_move_is_on_the_recommendations_page_in_chromium(
    first_hour: dict[str, object], browser: Browser
) -> None:
    context = browser.new_context(viewport={"width": 1360, "height": 900})
    page = context.new_page()
    try:
        page.goto(f"{first_hour['url']}/login")
        page.fill("#username", "ada")
        page.fill("#password", PASSWORD)
        page.click("button[type=submit]")
        page.goto(f"{first_hour['url']}/recommendations")
        assert page.locator("main").get_by_text("FG_SEARCH").first.is_visible()
        banner = page.locator("#data-end-banner")
        assert banner.is_visible()
        assert f"{DAYS_OLD} days old" in banner.inner_text()
        shot(page, "first-hour-recommendations")
    finally:
        context.close()


def test_the_report_lists_the_move_at_the_files_rate(first_hour: dict[str, object]) -> None:
    path = first_hour["report"]
    assert isinstance(path, Path)
    msg = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
    body = msg.get_body(("plain",))
    assert body is not None
    text = body.get_content()  # type: ignore[attr-defined]
    assert "FG_SEARCH" in text and "-> flash" in text
    reads = re.search(r"reads ([\d,.]+) reads/s", text)  # the report's line: "reads 139 reads/s"
    assert reads is not None, text
    file_rate = _file_rate(first_hour["file"])  # type: ignore[arg-type]
    assert file_rate == pytest.approx(139, rel=0.01)
    # the report's rate is the file's: its I/O over the seconds it covers (not a 24th of it)
    assert float(reads.group(1).replace(",", "")) == pytest.approx(file_rate, rel=0.01), text
