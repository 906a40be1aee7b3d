"""`tierwise script`: files, plan.json with checksums, notes, and bad input (exit 2, nothing written)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from app.cli_script import register
from tests.migrations.golden_cases import FIXTURES, POLICY

IMPORT = Path(__file__).parent.parent / "fixtures" / "import"


@pytest.fixture
def cli() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def main() -> None:  # a group, so `script` is a subcommand as in the real CLI
        pass

    register(app)
    return app


def run(cli: typer.Typer, *args: str) -> Any:
    return CliRunner().invoke(cli, ["script", *args])


def test_tsql_scripts_and_plan(cli: typer.Typer, tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = run(
        cli,
        "--advice",
        str(FIXTURES / "advice_sqlserver.json"),
        "--dialect",
        "tsql",
        "--out",
        str(out),
        "--policy",
        str(POLICY),
    )
    assert r.exit_code == 0, r.output
    plan = json.loads((out / "plan.json").read_text(encoding="utf-8"))
    assert plan["dialect"] == "tsql" and plan["policy"] == "migrations-test"
    assert [s["order"] for s in plan["scripts"]] == [1, 2, 3, 4, 5]
    assert [s["key"] for s in plan["scripts"]] == [
        "Sales/file/2",
        "Sales/filegroup/FG_ORDERS_2024",
        "Sales/filegroup/PRIMARY",
        "tempdb/data",
        "tempdb/file/2",
    ]
    written = sorted(p.name for p in out.iterdir())
    assert len(written) == 11
    for s in plan["scripts"]:
        for direction in ("forward", "rollback"):
            f = out / s[direction]["path"]
            assert hashlib.sha256(f.read_bytes()).hexdigest() == s[direction]["sha256"]
            assert str(f) in r.stdout
            assert f.name.startswith(f"{s['order']:02d}-") and f.name.endswith(f".{direction}.sql")
    by_key = {s["key"]: s for s in plan["scripts"]}
    assert by_key["Sales/filegroup/PRIMARY"]["manual_step"] and by_key["tempdb/data"]["restart_required"]
    assert by_key["Sales/filegroup/FG_ORDERS_2024"]["action"] == "MoveFiles/online"
    assert (
        plan["advice"]["sha256"]
        == hashlib.sha256((FIXTURES / "advice_sqlserver.json").read_bytes()).hexdigest()
    )
    assert {s["key"] for s in plan["skipped"]} >= {"master/filegroup/PRIMARY"}
    assert "note: skipped SQLPROD01|master/filegroup/PRIMARY" in r.stderr
    fwd = (out / by_key["Sales/filegroup/FG_ORDERS_2024"]["forward"]["path"]).read_text(encoding="utf-8")
    assert by_key["Sales/filegroup/FG_ORDERS_2024"]["plan_sha256"] in fwd
    assert f"Generated:  {plan['generated_at']}" in fwd


def test_only_takes_several_keys(cli: typer.Typer, tmp_path: Path) -> None:
    out = tmp_path / "o"
    r = run(
        cli,
        "--advice",
        str(FIXTURES / "advice_sqlserver.json"),
        "--dialect",
        "tsql",
        "--out",
        str(out),
        "--policy",
        str(POLICY),
        "--only",
        "Sales/partition/dbo.Orders/1/3",
        "SQLPROD01|tempdb/data",
    )
    assert r.exit_code == 0, r.output
    plan = json.loads((out / "plan.json").read_text(encoding="utf-8"))
    assert [s["action"] for s in plan["scripts"]] == ["MovePartition", "MoveFiles/restart"]


def test_db2_from_fresh_advice(cli: typer.Typer, tmp_path: Path) -> None:
    """The contract with `tierwise advise` itself: its JSON (default policy) scripts as is."""
    from app.cli import app as main_app

    r = CliRunner().invoke(
        main_app,
        [
            "advise",
            "--input",
            str(IMPORT / "db2_tablespaces.csv"),
            str(IMPORT / "db2_table_partitions.csv"),
            str(IMPORT / "db2_transaction_log.csv"),
        ],
    )
    assert r.exit_code == 0, r.output
    advice = tmp_path / "advice.json"
    advice.write_text(r.stdout, encoding="utf-8")
    out = tmp_path / "db2"
    r = run(cli, "--advice", str(advice), "--dialect", "db2", "--out", str(out))
    assert r.exit_code == 0, r.output
    plan = json.loads((out / "plan.json").read_text(encoding="utf-8"))
    doc = json.loads(advice.read_text(encoding="utf-8"))
    moves = {
        o["key"]
        for o in doc["objects"]
        if o["placement_unit"] == o["key"]
        and o["current_tier"]
        and o["recommended_tier"] != o["current_tier"]
    }
    assert moves, "the DB2 fixtures should yield at least one move under the default policy"
    scripted = {s["key"] for s in plan["scripts"]}
    noted = {s["key"] for s in plan["skipped"]}
    assert moves == scripted | (moves & noted)
    for s in plan["scripts"]:
        text = (out / s["forward"]["path"]).read_text(encoding="utf-8")
        assert text.startswith("--#SET TERMINATOR @\n") and "USING STOGROUP" in text


def test_other_engine_is_a_note(cli: typer.Typer, tmp_path: Path) -> None:
    r = run(
        cli,
        "--advice",
        str(FIXTURES / "advice_sqlserver.json"),
        "--dialect",
        "db2",
        "--out",
        str(tmp_path / "x"),
        "--policy",
        str(POLICY),
        "--only",
        "Sales/filegroup/FG_ORDERS_2024",
    )
    assert r.exit_code == 0, r.output
    assert "a sqlserver object: not part of a db2 plan" in r.stderr and "no moves to script" in r.stderr


def _bad(tmp_path: Path, name: str, mutate: Any) -> Path:
    doc = json.loads((FIXTURES / "advice_sqlserver.json").read_text(encoding="utf-8"))
    mutate(doc)
    path = tmp_path / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("make", "extra", "message"),
    [
        (lambda t: t / "missing.json", [], "cannot read the file"),
        (
            lambda t: (t / "bad.json").write_text("{nope", encoding="utf-8") and t / "bad.json",
            [],
            "invalid JSON at line 1",
        ),
        (
            lambda t: _bad(t, "a.json", lambda d: d["objects"][1].pop("key")),
            [],
            "object 2: key must be a non-empty string",
        ),
        (
            lambda t: _bad(t, "a.json", lambda d: d["objects"][1].update(recommended_tier="nvme")),
            [],
            "'nvme' is not a tier",
        ),
        (lambda t: _bad(t, "a.json", lambda d: d["objects"][6].pop("files")), [], "has no location"),
        (
            lambda t: FIXTURES / "advice_sqlserver.json",
            ["--only", "nope"],
            "--only nope: no object has that key",
        ),
        (
            lambda t: FIXTURES / "advice_sqlserver.json",
            ["--dialect", "oracle"],
            "--dialect must be tsql or db2",
        ),
        (
            lambda t: FIXTURES / "advice_sqlserver.json",
            ["--backup-check", "maybe"],
            "--backup-check must be error or warn",
        ),
        (
            lambda t: FIXTURES / "advice_sqlserver.json",
            ["--policy", "/nonexistent/policy.yaml"],
            "policy.yaml",
        ),
    ],
)
def test_bad_input_exits_2_and_writes_nothing(
    cli: typer.Typer, tmp_path: Path, make: Any, extra: list[str], message: str
) -> None:
    advice = make(tmp_path)
    out = tmp_path / "out"
    args = ["--advice", str(advice), "--dialect", "tsql", "--out", str(out), "--policy", str(POLICY), *extra]
    if "--policy" in extra:
        args = ["--advice", str(advice), "--dialect", "tsql", "--out", str(out), *extra]
    if "--dialect" in extra:
        args = ["--advice", str(advice), "--out", str(out), "--policy", str(POLICY), *extra]
    r = run(cli, *args)
    assert r.exit_code == 2, r.output
    assert message in r.stderr, r.stderr
    assert r.stderr.startswith("error: ")
    assert not out.exists()


def test_out_must_be_new_or_empty(cli: typer.Typer, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "old.sql").write_text("x", encoding="utf-8")
    r = run(
        cli,
        "--advice",
        str(FIXTURES / "advice_sqlserver.json"),
        "--dialect",
        "tsql",
        "--out",
        str(out),
        "--policy",
        str(POLICY),
    )
    assert r.exit_code == 2 and "not an empty directory" in r.stderr
    assert [p.name for p in out.iterdir()] == ["old.sql"]


def test_hostile_names_end_to_end(cli: typer.Typer, tmp_path: Path) -> None:
    out = tmp_path / "h"
    r = run(
        cli,
        "--advice",
        str(FIXTURES / "advice_hostile.json"),
        "--dialect",
        "tsql",
        "--out",
        str(out),
        "--policy",
        str(POLICY),
    )
    assert r.exit_code == 0, r.output
    plan = json.loads((out / "plan.json").read_text(encoding="utf-8"))
    assert plan["scripts"][0]["database"] == "Sales]; DROP DATABASE x; --"
    assert all(p.name.isascii() for p in out.iterdir())
