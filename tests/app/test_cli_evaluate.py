"""`tierwise evaluate`: imported files end in advice at once, with what it could not judge said."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from app.cli import app
from tests.app.test_import import FILE_STATS

runner = CliRunner()


def test_evaluate_after_import_of_old_files(cli_env: Path) -> None:
    assert runner.invoke(app, ["evaluate"]).output.startswith("no data to advise on")
    r = runner.invoke(app, ["import", str(FILE_STATS)])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["evaluate", "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    # the file's samples are long past the 7-day window: judged on the window ending at them
    assert doc["objects"] > 0
    assert set(doc["data_ends"]) == {"import:sqlserver:SQLPROD01", "import:sqlserver:SQLPROD02\\OLTP"}
    assert all(n.startswith("data up to ") and "days old" in n for n in doc["data_ends"].values())
    assert doc["recommendations"]["created"] == doc["moves"]
    text = runner.invoke(app, ["evaluate"]).output
    assert f"{doc['objects']} objects advised; {doc['moves']} moves" in text
    assert "import:sqlserver:SQLPROD01: data up to" in text
    for name, count in doc["unknown_locations"].items():
        assert f"{name}: {count} objects on locations that match no tier" in text
