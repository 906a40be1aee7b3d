"""A DBA's own collection as issue #28 met it: tests/fixtures/own_collection/scenario.yaml (two SQL
Server instances and a Db2 one, SQLCRM01's databases on a D:\\ no tier of the shipped policy
names), its files written as the collection scripts write them, ending `days_old` days before the
test runs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import yaml

from tests.advisors.scenarios.generate import render

SPEC = Path(__file__).parent / "fixtures" / "own_collection" / "scenario.yaml"
UNMAPPED_DIR = "D:\\MSSQL\\DATA\\"  # where SQLCRM01's files are
BUSIEST_UNMAPPED = "D:\\MSSQL\\DATA\\CRM\\"  # the busiest database's directory, on that drive


def collection_end(days_old: float) -> datetime:
    return (datetime.now(UTC) - timedelta(days=days_old)).replace(minute=0, second=0, microsecond=0)


def write_collection(directory: Path, days_old: float) -> list[Path]:
    """The collection's import files in `directory`, their newest sample `days_old` days ago."""
    spec = yaml.safe_load(SPEC.read_text(encoding="utf-8"))
    spec["collection"]["end"] = collection_end(days_old).isoformat()
    scenario = directory / "scenario"
    scenario.mkdir(parents=True, exist_ok=True)
    (scenario / "scenario.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
    out = []
    for name, text in sorted(render(scenario).items()):
        path = directory / name
        path.write_text(text, encoding="utf-8", newline="")
        out.append(path)
    return out
