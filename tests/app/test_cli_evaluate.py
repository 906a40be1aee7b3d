"""`tierwise evaluate`: imported files end in advice at once, with what it could not judge said."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli import app
from app.settings import get_settings
from tests.app.test_import import FILE_STATS
from tests.fixture_policy import mapped_policy

runner = CliRunner()


def test_evaluate_after_import_of_old_files(cli_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert runner.invoke(app, ["evaluate"]).stdout.startswith("no data to advise on")
    r = runner.invoke(app, ["import", str(FILE_STATS)])
    assert r.exit_code == 0, r.output
    # the shipped policy knows none of the fixture's directories: nothing is advised, all is said
    r = runner.invoke(app, ["evaluate", "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["objects"] == 0 and doc["moves"] == 0
    assert set(doc["unknown_locations"]) == {"import:sqlserver:SQLPROD01", "import:sqlserver:SQLPROD02\\OLTP"}
    assert all(n > 0 for n in doc["unknown_locations"].values())
    said = runner.invoke(app, ["evaluate"])
    for name, count in doc["unknown_locations"].items():
        assert f"{name}: {count} objects on locations that match no tier" in said.stdout
    assert sum(u["objects"] for rows in doc["unknown_detail"].values() for u in rows) == sum(
        doc["unknown_locations"].values()
    )
    assert "SQLPROD01: E:\\data\\ matches no tier of the policy" in said.stderr  # each location, on stderr

    # once the directories are mapped, the old files are advised
    monkeypatch.setenv("TIERWISE_POLICY_FILE", str(mapped_policy(cli_env / "mapped.yaml")))
    get_settings.cache_clear()
    r = runner.invoke(app, ["evaluate", "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    # the file's samples are long past the 7-day window: judged on the window ending at them
    assert doc["objects"] > 0
    assert set(doc["data_ends"]) == {"import:sqlserver:SQLPROD01", "import:sqlserver:SQLPROD02\\OLTP"}
    assert all(n.startswith("data up to ") and "days old" in n for n in doc["data_ends"].values())
    assert doc["recommendations"]["created"] == doc["moves"]
    text = runner.invoke(app, ["evaluate"]).output
    assert f"{doc['objects']} objects advised; {doc['moves']} moves" in text
    assert "import:sqlserver:SQLPROD01: data up to" in text


def test_evaluate_json_stays_json_when_the_solver_prints(cli_env: Path) -> None:
    """HiGHS 1.12 (bundled with SciPy 1.17) prints a stray line straight to file descriptor 1
    during some MILP solves (ERGO-Code/HiGHS#2783): `tierwise evaluate --json` must still print
    JSON alone, for a script that parses it. Here every HiGHS run writes such a line first, as
    HiGHS does (the solver's class replaced in a child process: stdout is a real pipe there)."""
    assert runner.invoke(app, ["import", str(FILE_STATS)]).exit_code == 0
    policy = mapped_policy(cli_env / "mapped.yaml")
    code = (
        "import os\n"
        "import advisors.highs as h\n"
        "class Noisy(h._h._Highs):\n"
        "    def run(self):\n"
        "        os.write(1, b'HighsMipSolverData::transformNewIntegerFeasibleSolution tmpSolver.run();\\n')\n"
        "        os.write(2, b'the solver ran\\n')\n"
        "        return super().run()\n"
        "h._h._Highs = Noisy\n"
        "from app.cli import app\n"
        "app(['evaluate', '--json'])\n"
    )
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "TIERWISE_POLICY_FILE": str(policy)}
    out = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "the solver ran" in out.stderr
    doc = json.loads(out.stdout)
    assert doc["objects"] > 0 and doc["moves"] >= 0
