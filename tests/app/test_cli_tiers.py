"""`tierwise tiers`: each pool tier, the policy's figures against the measured ones, with a warning
where they differ by more than 2x (tests/advisors/scenarios: shapes where the policy is wrong)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from app.cli import app
from tests.advisors.scenarios import generate
from tests.fixture_policy import REFERENCE_POLICY

runner = CliRunner()


def _files(name: str) -> list[str]:
    return [str(p) for p in sorted((generate.HERE / name).glob("*.csv"))]


def test_flash_slower_than_the_policy_is_shown_and_warned() -> None:
    files = _files("flash-slower-than-policy")
    r = runner.invoke(app, ["tiers", "--input", *files, "--policy", str(REFERENCE_POLICY)])
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0] == "pool default"
    flash_read = lines[lines.index(" flash") + 1]
    assert "policy   1.0 ms" in flash_read and "144 object-hours on 3 objects" in flash_read
    assert "4.0 ms at 5.0 % load" in flash_read
    assert "warning: pool default: flash reads measure 3.8 ms, 3.80x the policy's 1.0 ms" in r.stderr
    assert "fc reads" not in r.stderr  # measured on 2 objects only: shown, weighed 0, no warning
    fc_read = lines[lines.index(" fc") + 1]
    assert "used 6.0 ms (0 % measured: measured on 2 object(s), fewer than 3)" in fc_read


def test_json_carries_the_interval_the_weight_and_the_warning() -> None:
    files = _files("flash-slower-than-policy")
    r = runner.invoke(app, ["tiers", "--input", *files, "--policy", str(REFERENCE_POLICY), "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["learn_tiers"] is True
    rows = {(t["tier"], t["direction"]): t for t in doc["pools"][0]["tiers"]}
    flash = rows[("flash", "read")]
    assert flash["policy_ms"] == 1.0 and flash["object_hours"] == 144 and flash["objects"] == 3
    assert flash["interval_ms"][0] <= flash["measured_ms"] <= flash["interval_ms"][1]
    assert flash["weight"] > 0.95 and flash["warning"]
    sata = rows[("sata", "read")]
    assert (
        sata["measured_ms"] is None
        and sata["used_ms"] == 14.0
        and sata["why"] == "nothing measured there yet"
    )
    assert rows[("flash", "write")]["warning"] is None  # 1.5 ms measured, 1.5 ms in the policy


def test_a_bad_file_is_a_message_and_exit_2(tmp_path) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "x.csv"
    bad.write_text("not,an,import\n1,2,3\n")
    r = runner.invoke(app, ["tiers", "--input", str(bad), "--policy", str(REFERENCE_POLICY)])
    assert r.exit_code == 2 and not r.stdout


def test_the_advice_json_carries_the_figures_it_used() -> None:
    files = _files("flash-slower-than-policy")
    tiers = runner.invoke(app, ["tiers", "--input", *files, "--policy", str(REFERENCE_POLICY), "--json"])
    advice = runner.invoke(app, ["advise", "--input", *files, "--policy", str(REFERENCE_POLICY)])
    assert tiers.exit_code == 0 and advice.exit_code == 0, advice.output
    shown = json.loads(tiers.stdout)["pools"][0]["tiers"]
    pool = json.loads(advice.stdout)["summary"]["pools"][0]
    assert pool["tier_figures"] == shown  # one measurement, the same in the advice and in `tierwise tiers`
    flash = next(t for t in pool["tier_figures"] if (t["tier"], t["direction"]) == ("flash", "read"))
    assert flash["policy_ms"] == 1.0 and flash["weight"] > 0.95
    assert abs(flash["used_ms"] - flash["measured_ms"]) < 0.02 * flash["measured_ms"]
