"""`tierwise script`: files, plan.json with checksums, notes, and bad input (exit 2, nothing written)."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from app.cli_script import register
from tests.fixture_policy import DB2_ON_SATA, mapped_policy
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
    assert [s["order"] for s in plan["scripts"]] == [1, 2, 3, 4]
    # Sales's log and PRIMARY file are both offline moves: one script pair (issue #30, N8)
    assert [s["key"] for s in plan["scripts"]] == [
        "Sales/file/2 + Sales/filegroup/PRIMARY",
        "Sales/filegroup/FG_ORDERS_2024",
        "tempdb/data",
        "tempdb/file/2",
    ]
    written = sorted(p.name for p in out.iterdir())
    assert len(written) == 9
    for s in plan["scripts"]:
        for direction in ("forward", "rollback"):
            f = out / s[direction]["path"]
            assert hashlib.sha256(f.read_bytes()).hexdigest() == s[direction]["sha256"]
            assert str(f) in r.stdout
            assert f.name.startswith(f"{s['order']:02d}-") and f.name.endswith(f".{direction}.sql")
    by_key = {s["key"]: s for s in plan["scripts"]}
    assert (
        by_key["Sales/file/2 + Sales/filegroup/PRIMARY"]["manual_step"]
        and by_key["tempdb/data"]["restart_required"]
    )
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
    """The contract with `tierwise advise` itself: its JSON scripts as is. The fixture's workload
    justifies no move under the default policy (its busy table space reads in 4 ms: flash would
    save 1.2 ms per I/O), so the policy here puts its storage groups on sata and asks for 0.5 ms."""
    from app.cli import app as main_app
    from policies.loader import DEFAULT_POLICY

    policy = tmp_path / "policy.yaml"
    text = DEFAULT_POLICY.read_text(encoding="utf-8")
    for old, new in (("db2_storage_groups: [SG_NLSAS]", "db2_storage_groups: [SG_NLSAS, SG_HOT, SG_COLD]"),
                     ("  min_saving_ms_per_io: 2.0", "  min_saving_ms_per_io: 0.5")):  # fmt: skip
        assert old in text, f"the shipped policy no longer says {old!r}: update this test"
        text = text.replace(old, new)
    policy.write_text(text, encoding="utf-8")
    r = CliRunner().invoke(
        main_app,
        [
            "advise",
            "--policy",
            str(policy),
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
    assert moves, "the DB2 fixtures should yield at least one move"
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


def test_fresh_advice_has_schema_table_and_range_flags(cli: typer.Typer, tmp_path: Path) -> None:
    """`tierwise advise` writes schema, table and the range flags the generators read, and a DB2
    partition that shares its table space scripts as detach / copy / attach from that JSON."""
    from app.cli import app as main_app

    r = CliRunner().invoke(
        main_app,
        ["advise", "--policy", str(mapped_policy(tmp_path / "policy.yaml", DB2_ON_SATA, min_saving_ms_per_io=0.5)),
         "--input", str(IMPORT / "sqlserver_file_stats.csv"), str(IMPORT / "sqlserver_partitions.csv"),
         str(IMPORT / "db2_tablespaces.csv"), str(IMPORT / "db2_table_partitions.csv")],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    parts = [o for o in doc["objects"] if o["kind"] == "partition"]
    sql = [o for o in parts if o["engine"] == "sqlserver"]
    db2 = [o for o in parts if o["engine"] == "db2"]
    assert sql and db2
    for o in parts:
        assert f"{o['schema']}.{o['table']}" == o["table_name"]
    assert all(isinstance(o["range_right"], bool) for o in sql)
    # RANGE RIGHT: the low bound is in the partition, the high bound is not
    assert all(o.get("low_inclusive") is o["range_right"] for o in sql if o.get("range_low") is not None)
    assert all(
        o.get("high_inclusive") is (not o["range_right"]) for o in sql if o.get("range_high") is not None
    )
    q1 = next(o for o in db2 if o["name"].endswith("P2024Q1"))
    assert (q1["schema"], q1["table"], q1["low_inclusive"], q1["high_inclusive"]) == (
        "SALES",
        "ORDERS",
        True,
        False,
    )
    assert "range_right" not in q1  # a SQL Server notion
    advice = tmp_path / "advice.json"
    advice.write_text(r.stdout, encoding="utf-8")
    out = tmp_path / "db2"
    r = run(cli, "--advice", str(advice), "--dialect", "db2", "--out", str(out), "--only", q1["key"])
    assert r.exit_code == 0, r.output
    plan = json.loads((out / "plan.json").read_text(encoding="utf-8"))
    (entry,) = plan["scripts"]
    text = (out / entry["forward"]["path"]).read_text(encoding="utf-8")
    assert 'DETACH PARTITION "P2024Q1"' in text and "STARTING FROM (''2024-01-01'') INCLUSIVE" in text


def test_db2_log_path_per_tier(cli: typer.Typer, tmp_path: Path) -> None:
    """--db2-log-path TIER=PATH scripts the DB2 log (NEWLOGPATH, restart needed); without it the
    log is a note; a bad value or unknown tier is an error and nothing is written."""
    key = "db2host01/db2inst1|SALESDB/log"
    args = [
        "--advice",
        str(FIXTURES / "advice_db2.json"),
        "--dialect",
        "db2",
        "--policy",
        str(POLICY),
        "--only",
        key,
    ]
    out = tmp_path / "with"
    r = run(cli, *args, "--out", str(out), "--db2-log-path", "fc=/db2/fc1/log")
    assert r.exit_code == 0, r.output
    plan = json.loads((out / "plan.json").read_text(encoding="utf-8"))
    (entry,) = plan["scripts"]
    assert entry["action"] == "MoveDb2Log" and entry["restart_required"] is True
    assert "takes effect at the next restart" in r.stdout
    text = (out / entry["forward"]["path"]).read_text(encoding="utf-8")
    # set only when the log is not there yet (issue #30 N12): a CALL inside the step's compound
    assert "    CALL SYSPROC.ADMIN_CMD('UPDATE DB CFG USING NEWLOGPATH \"/db2/fc1/log/\"');\n" in text
    back = (out / entry["rollback"]["path"]).read_text(encoding="utf-8")
    assert (
        'NEWLOGPATH "/db2/log/SALESDB/"' in back
    )  # NODE0000/LOGSTREAM0000/ is DB2's, not part of the setting
    r = run(cli, *args, "--out", str(tmp_path / "without"))
    assert r.exit_code == 0 and "--db2-log-path" in r.stderr
    for bad in ("fc", "ssd=/x"):
        r = run(cli, *args, "--out", str(tmp_path / "bad"), "--db2-log-path", bad)
        assert r.exit_code == 2 and "--db2-log-path" in r.output and not (tmp_path / "bad").exists()


def test_db2_writes_a_check_only_script_beside_each_move(cli: typer.Typer, tmp_path: Path) -> None:
    """Issue #30: a `.check.db2` per move, in plan.json with its sha256, printed first; the same
    numbered checks as the forward script, and none of its steps. T-SQL writes none (its scripts
    take TW_CHECK_ONLY themselves)."""
    out = tmp_path / "db2"
    r = run(cli, "--advice", str(FIXTURES / "advice_db2.json"), "--dialect", "db2", "--out", str(out),
            "--policy", str(POLICY))  # fmt: skip
    assert r.exit_code == 0, r.output
    plan = json.loads((out / "plan.json").read_text(encoding="utf-8"))
    assert plan["scripts"] and "check-only script" in plan["run"]
    lines = r.stdout.splitlines()
    for entry in plan["scripts"]:
        check = entry["check"]["path"]
        assert (
            check.endswith(".check.db2") and check.replace(".check.", ".forward.") == entry["forward"]["path"]
        )
        data = (out / check).read_bytes()
        assert hashlib.sha256(data).hexdigest() == entry["check"]["sha256"]
        text = data.decode("utf-8")
        forward = (out / entry["forward"]["path"]).read_text(encoding="utf-8")
        assert "migration script: CHECK ONLY (changes nothing)" in text
        assert "EXECUTE IMMEDIATE" not in text and "EXECUTE IMMEDIATE" in forward
        assert re.findall(r"^--   check (\d+):", text, re.M) == re.findall(
            r"^--   check (\d+):", forward, re.M
        )
        # printed just before its forward script, with what it is for
        at = next(i for i, ln in enumerate(lines) if ln.startswith(str(out / entry["forward"]["path"])))
        before = lines[at - 1]
        assert before == f"{out / check}  (check only: changes nothing; run it first, days before the window)"
    tsql = tmp_path / "tsql"
    r = run(cli, "--advice", str(FIXTURES / "advice_sqlserver.json"), "--dialect", "tsql", "--out", str(tsql),
            "--policy", str(POLICY))  # fmt: skip
    assert r.exit_code == 0, r.output
    assert not list(tsql.glob("*.check.*"))
    assert all(
        "check" not in e for e in json.loads((tsql / "plan.json").read_text(encoding="utf-8"))["scripts"]
    )


def _rename_csv(src: Path, dest: Path, renames: dict[str, str]) -> Path:
    """A copy of an import file with some columns' values replaced (header names -> new value)."""
    import csv

    rows = list(csv.reader(src.open(encoding="utf-8", newline="")))
    cols = {rows[0].index(k): v for k, v in renames.items()}
    with dest.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(rows[0])
        for row in rows[1:]:
            writer.writerow([cols.get(i, v) for i, v in enumerate(row)])
    return dest


def test_schema_and_table_names_with_dots_end_to_end(cli: typer.Typer, tmp_path: Path) -> None:
    """Import files -> `tierwise advise` -> `tierwise script`, with a schema and a table whose
    names contain "." and the quote characters: the collected schema keeps the split exact."""
    from app.cli import app as main_app

    schema, table = 's.a]"b', 'T.x]"y'
    sql = _rename_csv(
        IMPORT / "sqlserver_partitions.csv", tmp_path / "p.csv", {"schema_name": schema, "table_name": table}
    )
    db2 = _rename_csv(
        IMPORT / "db2_table_partitions.csv", tmp_path / "t.csv", {"tabschema": schema, "tabname": table}
    )
    r = CliRunner().invoke(
        main_app,
        ["advise", "--policy", str(mapped_policy(tmp_path / "policy.yaml", DB2_ON_SATA, min_saving_ms_per_io=0.5)),
         "--input", str(IMPORT / "sqlserver_file_stats.csv"), str(sql), str(IMPORT / "db2_tablespaces.csv"), str(db2)],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    parts = [o for o in doc["objects"] if o["kind"] == "partition"]
    assert parts and {(o["schema_name"], o["schema"], o["table"]) for o in parts} == {(schema, schema, table)}
    advice = tmp_path / "advice.json"
    advice.write_text(r.stdout, encoding="utf-8")
    sql_key = next(o["key"] for o in parts if o["engine"] == "sqlserver" and o["key"].endswith("/1/2"))
    db2_key = next(o["key"] for o in parts if o["engine"] == "db2" and o["name"].endswith("P2024Q1"))
    expected = {"tsql": '[s.a]]"b].[T.x]]"y]', "db2": '"s.a]""b"."T.x]""y"'}
    for dialect, key in (("tsql", sql_key), ("db2", db2_key)):
        out = tmp_path / dialect
        r = run(cli, "--advice", str(advice), "--dialect", dialect, "--out", str(out), "--only", key)
        assert r.exit_code == 0, r.output
        (entry,) = json.loads((out / "plan.json").read_text(encoding="utf-8"))["scripts"]
        for direction in ("forward", "rollback"):
            text = (out / entry[direction]["path"]).read_text(encoding="utf-8")
            assert expected[dialect] in text, (dialect, direction)


def test_db2_log_path_from_the_policy_and_the_option_overrides_it(cli: typer.Typer, tmp_path: Path) -> None:
    """A tier's locations.db2_log_path scripts the DB2 log move without --db2-log-path; the option,
    when it names the tier, wins."""
    import yaml

    doc = yaml.safe_load(POLICY.read_text(encoding="utf-8"))
    for tier in doc["tiers"]:
        if tier["name"] == "fc":
            tier["locations"]["db2_log_path"] = "/db2/fc1/policylog"
    policy = tmp_path / "policy.yaml"
    policy.write_text(yaml.safe_dump(doc), encoding="utf-8")
    args = ["--advice", str(FIXTURES / "advice_db2.json"), "--dialect", "db2", "--policy", str(policy),
            "--only", "db2host01/db2inst1|SALESDB/log"]  # fmt: skip
    for out, extra, expected in (
        (tmp_path / "policy", [], "/db2/fc1/policylog/"),
        (tmp_path / "option", ["--db2-log-path", "fc=/db2/fc1/optionlog"], "/db2/fc1/optionlog/"),
    ):
        r = run(cli, *args, "--out", str(out), *extra)
        assert r.exit_code == 0, r.output
        (entry,) = json.loads((out / "plan.json").read_text(encoding="utf-8"))["scripts"]
        assert entry["action"] == "MoveDb2Log"
        text = (out / entry["forward"]["path"]).read_text(encoding="utf-8")
        assert f'NEWLOGPATH "{expected}"' in text


def test_policy_db2_log_path_must_not_be_empty(tmp_path: Path) -> None:
    import yaml

    from policies.loader import PolicyError, load_policy

    doc = yaml.safe_load(POLICY.read_text(encoding="utf-8"))
    doc["tiers"][0]["locations"]["db2_log_path"] = ""
    policy = tmp_path / "policy.yaml"
    policy.write_text(yaml.safe_dump(doc), encoding="utf-8")
    with pytest.raises(PolicyError, match="db2_log_path"):
        load_policy(policy)


def test_tsql_output_makes_the_check_only_run_the_first_step(cli: typer.Typer, tmp_path: Path) -> None:
    """Issue #30: `tierwise script` prints, before each forward script, the exact check-only
    command (the script itself with sqlcmd -v TW_CHECK_ONLY=1: every pre-check, the plan and the
    estimated duration, no change), and plan.json says it per move and in its run line."""
    out = tmp_path / "out"
    r = run(cli, "--advice", str(FIXTURES / "advice_sqlserver.json"), "--dialect", "tsql", "--out", str(out),
            "--policy", str(POLICY))  # fmt: skip
    assert r.exit_code == 0, r.output
    plan = json.loads((out / "plan.json").read_text(encoding="utf-8"))
    assert plan["run"].startswith("run each forward script with sqlcmd -v TW_CHECK_ONLY=1 first")
    lines = r.stdout.splitlines()
    for s in plan["scripts"]:
        forward = str(out / s["forward"]["path"])
        command = f"sqlcmd -S {s['server']} -E -b -f 65001 -v TW_CHECK_ONLY=1 -i {forward}"
        assert s["check_only"] == command
        i = next(n for n, ln in enumerate(lines) if ln.startswith(forward))
        assert lines[i - 1] == f"check first (changes nothing; days before the window): {command}"
