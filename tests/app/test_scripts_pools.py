"""Scripts move an object within its own storage pool: a move on array B is written with array B's
directories and storage groups, whichever way it is generated (`tierwise script`, the stored
scripts of an approved recommendation, ILM)."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import typer
import yaml
from typer.testing import CliRunner

from app.cli_script import register, select_pool_moves
from app.script_spots import pool_spots, tier_spots
from app.scripts import ensure_scripts
from app.store.db import Store
from app.store.models import Recommendation, Target
from migrations import Options, render_pair, select_moves
from policies.loader import parse_policy
from policies.model import Policy
from tests.migrations.golden_cases import FIXTURES, POLICY

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
B_DIRS = {"flash": "X:\\flashB\\", "fc": "Y:\\fcB\\", "sata": "Z:\\sataB\\"}


def two_pools() -> Policy:
    """The migrations test policy plus array-b (SQLPROD02* and db2host01*), whose tiers have their
    own directories and storage groups."""
    data: dict[str, Any] = yaml.safe_load(POLICY.read_text(encoding="utf-8"))
    tiers = []
    for t in copy.deepcopy(data["tiers"]):
        name = t["name"]
        t["locations"] = {
            "sqlserver_path_prefixes": [B_DIRS[name]],
            "sqlserver_directory": B_DIRS[name],
            "db2_storage_groups": [f"SG_B_{name.upper()}"],
            "db2_storage_group": f"SG_B_{name.upper()}",
            "db2_paths": [f"/db2b/{name}"],
        }
        tiers.append(t)
    data["pools"] = [{"name": "array-b", "servers": ["SQLPROD02*", "db2host01*"], "tiers": tiers}]
    return parse_policy(yaml.safe_dump(data), source="two pools")


def sqlserver_advice() -> dict[str, Any]:
    """The fixture advice with SQLPROD02\\OLTP on array B and its PRIMARY filegroup advised to flash."""
    doc: dict[str, Any] = json.loads((FIXTURES / "advice_sqlserver.json").read_text(encoding="utf-8"))
    for o in doc["objects"]:
        o["pool"] = "array-b" if o["server"].startswith("SQLPROD02") else "default"
        if o["server"].startswith("SQLPROD02") and o["key"] == "OLTP/filegroup/PRIMARY":
            o["recommended_tier"] = "flash"
    return doc


def test_a_move_on_pool_b_goes_to_pool_bs_flash_directory(tmp_path: Path) -> None:
    policy_file = tmp_path / "policy.yaml"
    policy_file.write_text(
        yaml.safe_dump(two_pools().model_dump(mode="json", exclude_none=True)), encoding="utf-8"
    )
    advice = tmp_path / "advice.json"
    advice.write_text(json.dumps(sqlserver_advice()), encoding="utf-8")
    app = typer.Typer()

    @app.callback()
    def main() -> None:
        pass

    register(app)
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["script", "--advice", str(advice), "--dialect", "tsql", "--out", str(out),
                                 "--policy", str(policy_file)])  # fmt: skip
    assert r.exit_code == 0, r.output
    plan = json.loads((out / "plan.json").read_text(encoding="utf-8"))
    by_key = {(s["server"], s["key"]): s for s in plan["scripts"]}
    oltp = by_key[("SQLPROD02\\OLTP", "OLTP/filegroup/PRIMARY")]
    assert (oltp["from_tier"], oltp["to_tier"]) == ("fc", "flash")
    text = (out / oltp["forward"]["path"]).read_text(encoding="utf-8")
    assert "X:\\flashB\\" in text and "E:\\flash\\" not in text
    # the default pool's moves still go to the top-level tiers' directories
    sales = (
        out / by_key[("SQLPROD01", "Sales/file/2 + Sales/filegroup/PRIMARY")]["forward"]["path"]
    ).read_text(encoding="utf-8")
    assert "F:\\fc\\" in sales and "Y:\\fcB\\" not in sales


def test_only_selects_across_pools_and_an_unknown_key_is_refused() -> None:
    policy = two_pools()
    doc = sqlserver_advice()
    picked = select_pool_moves(doc, source="advice", policy=policy, dialect="tsql",
                               only=["SQLPROD02\\OLTP|OLTP/filegroup/PRIMARY"])  # fmt: skip
    assert [m.key for m in picked.moves] == ["OLTP/filegroup/PRIMARY"]
    try:
        select_pool_moves(doc, source="advice", policy=policy, dialect="tsql", only=["nope"])
    except ValueError as exc:
        assert "--only nope: no object has that key" in str(exc)
    else:
        raise AssertionError("an --only key no object has must be refused")


def test_db2_on_pool_b_gets_pool_bs_storage_group() -> None:
    policy = two_pools()
    doc = json.loads((FIXTURES / "advice_db2.json").read_text(encoding="utf-8"))
    for o in doc["objects"]:
        o["pool"] = "array-b"
    selection = select_pool_moves(doc, source="advice", policy=policy, dialect="db2")
    move = next(m for m in selection.moves if m.key == "SALESDB/tablespace/TS_ORDERS_2024")
    forward, _ = render_pair(move, "db2", Options(generator="test"), NOW)
    assert "SG_B_FC" in forward.text and "SG_FC" not in forward.text.replace("SG_B_FC", "")


def test_without_pools_the_selection_is_the_plain_one() -> None:
    policy = parse_policy(POLICY.read_text(encoding="utf-8"), source="one pool")
    doc = json.loads((FIXTURES / "advice_sqlserver.json").read_text(encoding="utf-8"))
    plain = select_moves(doc, source="advice", tiers=tier_spots(policy), dialect="tsql")
    pooled = select_pool_moves(doc, source="advice", policy=policy, dialect="tsql")
    assert pooled == plain and len(plain.moves) == 4  # Sales's two offline moves are one


def test_an_approved_recommendation_on_pool_b_stores_pool_bs_script(store: Store) -> None:
    policy = two_pools()
    evidence = next(o for o in sqlserver_advice()["objects"] if o["key"] == "OLTP/filegroup/PRIMARY"
                    and o["server"].startswith("SQLPROD02"))  # fmt: skip
    with store.session() as s:
        t = Target(name="SQLPROD02", engine="sqlserver", source="import", created_at=NOW)
        s.add(t)
        s.flush()
        rec = Recommendation(target_id=t.id, key=evidence["key"], engine="sqlserver", server=evidence["server"],
                             database="OLTP", kind="filegroup", name="PRIMARY", from_tier="fc", to_tier="flash",
                             profile="random_read", rule="R1", size_bytes=evidence["size_bytes"],
                             evidence=evidence, status="approved", created_at=NOW, updated_at=NOW)  # fmt: skip
        s.add(rec)
        s.flush()
        rows = ensure_scripts(s, rec, policy, now=NOW)
        assert rec.script_error is None and len(rows) == 2
        forward = next(r for r in rows if r.direction == "forward")
        assert "X:\\flashB\\" in forward.text and "E:\\flash\\" not in forward.text
        gone = Recommendation(target_id=t.id, key="x", engine="sqlserver", server=evidence["server"],
                              database="OLTP", kind="filegroup", name="X", from_tier="fc", to_tier="flash",
                              profile="random_read", rule="R1", evidence={**evidence, "pool": "array-z"},
                              status="approved", created_at=NOW, updated_at=NOW)  # fmt: skip
        s.add(gone)
        s.flush()
        assert ensure_scripts(s, gone, policy, now=NOW) == []
        assert gone.script_error is not None and "pool 'array-z'" in gone.script_error


def test_db2_log_path_may_name_the_pool() -> None:
    policy = two_pools()
    paths = {"fc": "/db2/a/log", "array-b/fc": "/db2b/log"}
    assert {t.name: t.db2_log_path for t in pool_spots(policy, "array-b", paths)}["fc"] == "/db2b/log"
    assert {t.name: t.db2_log_path for t in pool_spots(policy, "default", paths)}["fc"] == "/db2/a/log"
