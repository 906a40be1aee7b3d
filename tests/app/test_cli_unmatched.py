"""Objects on locations no tier names are left out of the advice, and `advise`, `evaluate` and
`ilm` always say so: each location on stderr, busiest first, whatever the format; `advise --format
table` ends with the count and the busiest locations, where a DBA reading the table sees them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli import app
from tests.advisors.scenarios.generate import render
from tests.conftest import FIXTURES
from tests.fixture_policy import mapped_policy

runner = CliRunner()
WARNING = re.compile(
    r"^warning: (?P<server>\S+): (?P<location>.+?) matches no tier of the policy: (?P<objects>\d+) objects?, "
    r"(?P<size>[\d,.]+ [KMGT]?B), (?P<io><?[\d,.]+) I/O/s, not advised \(map it to a tier in the policy's locations "
    r"or on the Policy page\)$"
)
# tests/fixtures/own_collection: SQLCRM01 installed on D:\, which no tier of the shipped policy names.
# CRM's filegroup reads 2,400/s and writes 300/s, its log writes 150/s: 2,850 I/O/s in D:\MSSQL\DATA\CRM\;
# msdb 2 + 1, master 0.2, model 0.01.
CRM, MSDB, MASTER, MODEL = (f"D:\\MSSQL\\DATA\\{db}\\" for db in ("CRM", "msdb", "master", "model"))


@pytest.fixture(scope="module")
def own_collection(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The collection's CSV files, as the DBA's scripts wrote them."""
    out = tmp_path_factory.mktemp("own_collection")
    paths = []
    for name, text in render(FIXTURES / "own_collection").items():
        (out / name).write_text(text, encoding="utf-8", newline="")
        paths.append(str(out / name))
    return paths


def _warnings(stderr: str) -> list[dict[str, str]]:
    """The unmatched-location lines of stderr, parsed; every `warning:` line must be one."""
    lines = [line for line in stderr.splitlines() if line.startswith("warning: ")]
    found = [WARNING.match(line) for line in lines]
    assert all(found), lines
    return [m.groupdict() for m in found if m is not None]


def _said_busiest_first(stderr: str) -> None:
    warned = _warnings(stderr)
    assert [w["location"] for w in warned] == [CRM, MSDB, MASTER, MODEL]
    assert {w["server"] for w in warned} == {"SQLCRM01"}
    crm = warned[0]
    assert (crm["objects"], crm["size"], crm["io"]) == ("3", "90.0 GB", "2,850")
    assert warned[-1]["io"] == "<0.1"  # model's 0.01 I/O/s: a trickle, not 0
    ios = [float(w["io"].replace(",", "").replace("<", "")) for w in warned]
    assert ios == sorted(ios, reverse=True)


def test_advise_table_ends_with_the_unmatched_locations(own_collection: list[str]) -> None:
    r = runner.invoke(app, ["advise", "--input", *own_collection, "--format", "table"])
    assert r.exit_code == 0, r.output
    _said_busiest_first(r.stderr)
    last = r.stdout.rstrip("\n").splitlines()[-1]
    assert last == (
        f"6 objects on unmatched locations were not advised ({CRM} 2,850 I/O/s, {MSDB} 3.0 I/O/s, "
        f"{MASTER} 0.2 I/O/s, 1 more): map them to tiers in the policy's locations or on the Policy page"
    )
    # the mapped servers are advised as before: the table lists them, and none of CRM's objects
    assert "SQLERP01" in r.stdout and "FG_ORDERS" in r.stdout and "FG_CONTACTS" not in r.stdout


def test_advise_json_stays_json_and_stderr_says_it(own_collection: list[str]) -> None:
    r = runner.invoke(app, ["advise", "--input", *own_collection])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)  # stdout is the JSON alone
    assert [u["location"] for u in sorted(doc["unknown_locations"], key=lambda u: -u["io_per_s"])] == [
        CRM, MSDB, MASTER, MODEL,
    ]  # fmt: skip
    _said_busiest_first(r.stderr)
    # --explain prints the evidence, and the unmatched locations still reach stderr
    r = runner.invoke(app, ["advise", "--input", *own_collection, "--explain", "SQLERP01/ERP/FG_ORDERS"])
    assert r.exit_code == 0, r.output
    _said_busiest_first(r.stderr)


def test_a_file_no_tier_matches_is_not_an_empty_table_without_a_word() -> None:
    """The issue's case: every path of the file matches no tier of the shipped policy."""
    files = [str(FIXTURES / "import" / "sqlserver_file_stats.csv")]
    doc = json.loads(runner.invoke(app, ["advise", "--input", *files]).stdout)
    assert doc["objects"] == [] and doc["unknown_locations"]
    r = runner.invoke(app, ["advise", "--input", *files, "--format", "table"])
    assert r.exit_code == 0, r.output
    lines = r.stdout.rstrip("\n").splitlines()
    assert lines[-2].startswith("0 moves;")
    total = sum(u["objects"] for u in doc["unknown_locations"])
    assert lines[-1].startswith(f"{total} objects on unmatched locations were not advised (")
    warned = _warnings(r.stderr)
    assert len(warned) == len(doc["unknown_locations"])
    assert sum(int(w["objects"]) for w in warned) == total


def test_nothing_is_said_once_the_drive_is_mapped(own_collection: list[str], tmp_path: Path) -> None:
    policy = mapped_policy(tmp_path / "p.yaml", {"fc": {"sqlserver_path_prefixes": ["D:\\MSSQL\\DATA\\"]}})
    r = runner.invoke(
        app, ["advise", "--input", *own_collection, "--format", "table", "--policy", str(policy)]
    )
    assert r.exit_code == 0, r.output
    assert "warning:" not in r.stderr and "unmatched" not in r.stdout
    assert r.stdout.rstrip("\n").splitlines()[-1].endswith("placement optimal")
    assert "FG_CONTACTS" in r.stdout  # CRM is advised now


def test_ilm_says_it_whatever_the_format(own_collection: list[str]) -> None:
    for fmt in ("json", "table"):
        r = runner.invoke(app, ["ilm", "--input", *own_collection, "--format", fmt])
        assert r.exit_code == 0, r.output
        _said_busiest_first(r.stderr)
        if fmt == "json":
            assert "tables" in json.loads(r.stdout)


def test_evaluate_says_it_with_json_too(own_collection: list[str], cli_env: Path) -> None:
    r = runner.invoke(app, ["import", *own_collection])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["evaluate", "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["unknown_locations"] == {"import:sqlserver:SQLCRM01": 6}
    _said_busiest_first(r.stderr)
    r = runner.invoke(app, ["evaluate"])
    assert r.exit_code == 0, r.output
    _said_busiest_first(r.stderr)
    assert "import:sqlserver:SQLCRM01: 6 objects on locations that match no tier" in r.stdout
