"""`tierwise advise --format table` warns when the files hold less than a day of history (#17 item 4)."""

from __future__ import annotations

from pathlib import Path

import yaml
from typer.testing import CliRunner

from app.cli import app
from tests.advisors.scenarios.generate import render

runner = CliRunner()


def _file(tmp_path: Path, hours: int) -> Path:
    spec = {
        "description": "short",
        "base_policy": "shipped",  # on the shipped policy's fc directory: `advise` below uses that policy
        "collection": {"hours": hours, "interval_minutes": 60, "end": "2026-10-20T09:00:00Z"},
        "objects": [
            {"engine": "sqlserver", "server": "SQLWEB01", "database": "Catalog", "kind": "filegroup",
             "name": "FG_SEARCH", "files": 1, "size_gb": 100, "tier": "fc", "reads_per_s": 139,
             "read_kib": 8, "read_ms": 12},
        ],
    }  # fmt: skip
    scenario = tmp_path / f"s{hours}"
    scenario.mkdir()
    (scenario / "scenario.yaml").write_text(yaml.safe_dump(spec))
    path = tmp_path / f"file_stats_{hours}.csv"
    path.write_text(render(scenario)["file_stats.csv"])
    return path


def test_one_hour_of_data_is_called_a_sample(tmp_path: Path) -> None:
    r = runner.invoke(app, ["advise", "--input", str(_file(tmp_path, 1)), "--format", "table"])
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[0] == "warning: 1 hour of data: figures are a sample"
    assert "FG_SEARCH" in r.output


def test_two_days_of_data_has_no_warning(tmp_path: Path) -> None:
    r = runner.invoke(app, ["advise", "--input", str(_file(tmp_path, 48)), "--format", "table"])
    assert r.exit_code == 0, r.output
    assert "figures are a sample" not in r.output and "FG_SEARCH" in r.output
