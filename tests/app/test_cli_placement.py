"""`tierwise place` and `tierwise size`: JSON out, clear errors (exit 2, nothing on stdout)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from app.cli_placement import register

runner = CliRunner()

TIERS = [
    {"name": "flash", "capacity_gb": 100, "max_iops": 50000, "raid_factor": 4, "read_latency_ms": 0.5, "write_latency_ms": 0.5},
    {"name": "fc", "capacity_gb": 1000, "max_iops": 5000, "raid_factor": 2, "read_latency_ms": 6, "write_latency_ms": 2},
    {"name": "sata", "capacity_gb": 10000, "max_iops": 2000, "raid_factor": 6, "read_latency_ms": 12, "write_latency_ms": 4},
]  # fmt: skip
OBJECTS = [
    {"id": "ix_orders", "size_gb": 10, "read_iops": 2000, "write_iops": 100},
    {"id": "orders_2019", "size_gb": 500, "read_iops": 10, "write_iops": 5},
    {"id": "audit", "size_gb": 20, "read_iops": 900, "write_iops": 0, "pinned_tier": "sata"},
]


@pytest.fixture
def app() -> typer.Typer:
    a = typer.Typer()
    register(a)
    return a


def write(tmp_path: Path, name: str, data: Any) -> Path:
    p = tmp_path / name
    p.write_text(data if isinstance(data, str) else json.dumps(data))
    return p


def run_place(
    app: typer.Typer, tmp_path: Path, objects: Any = OBJECTS, tiers: Any = TIERS, *extra: str
) -> Any:
    o, t = write(tmp_path, "objects.json", objects), write(tmp_path, "tiers.json", tiers)
    return runner.invoke(app, ["place", "--objects", str(o), "--tiers", str(t), *extra])


def test_place_prints_the_assignment_as_json(app: typer.Typer, tmp_path: Path) -> None:
    r = run_place(app, tmp_path, OBJECTS, TIERS, "--time-limit", "5")
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["assignment"] == {"ix_orders": "flash", "orders_2019": "fc", "audit": "sata"}
    assert out["status"] == "optimal"
    assert out["objective"] == pytest.approx(1050 + 70 + 900 * 12)
    assert out["lower_bound"] <= out["objective"] + 1e-6
    assert {"gap", "method", "notes"} <= set(out)


def test_place_reports_infeasible_with_exit_0(app: typer.Typer, tmp_path: Path) -> None:
    big = [{"id": "huge", "size_gb": 50000, "read_iops": 1, "write_iops": 0}]
    r = run_place(app, tmp_path, big, TIERS)
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["status"] == "infeasible" and out["assignment"] == {} and out["objective"] is None
    assert any("total size" in n for n in out["notes"])


def _obj(**changes: Any) -> list[dict[str, Any]]:
    rows = [dict(o) for o in OBJECTS]
    rows[2].update(changes)
    return [{k: v for k, v in row.items() if v is not ...} for row in rows]


@pytest.mark.parametrize(
    ("objects", "tiers", "message"),
    [
        (
            _obj(read_iops=-5),
            TIERS,
            'objects.json: object 3 ("audit"): read_iops must be a number >= 0, got -5',
        ),
        (_obj(size_gb=...), TIERS, 'objects.json: object 3 ("audit"): size_gb is missing'),
        (_obj(write_iops="7"), TIERS, 'object 3 ("audit"): write_iops must be a number >= 0, got "7"'),
        (_obj(write_iops=True), TIERS, 'object 3 ("audit"): write_iops must be a number >= 0, got true'),
        (_obj(pinned_tier="nvme"), TIERS, 'object 3 ("audit"): pinned_tier "nvme" is not a tier in'),
        (_obj(id="ix_orders"), TIERS, 'object 3 ("ix_orders"): duplicate id (also object 1)'),
        (_obj(id=""), TIERS, "objects.json: object 3: id must be a non-empty string"),
        (_obj(sise_gb=3), TIERS, "object 3 (\"audit\"): unknown field 'sise_gb'"),
        (_obj(read_hit_ratio=2), TIERS, "read_hit_ratio must be a number between 0 and 1"),
        (_obj(allowed_tiers=["fc", "tape"]), TIERS, "allowed_tiers must be a list of tier names"),
        ([*OBJECTS, 7], TIERS, "objects.json: object 4: expected a JSON object"),
        ({"id": "x"}, TIERS, "objects.json: expected a JSON array"),
        ("[{", TIERS, "objects.json: invalid JSON at line 1"),
        (OBJECTS, [], "tiers.json: no tiers"),
        (
            OBJECTS,
            [{**TIERS[0], "raid_factor": 3.5}],
            'tiers.json: tier 1 ("flash"): raid_factor must be an integer',
        ),
        (OBJECTS, [TIERS[0], TIERS[0]], 'tiers.json: tier 2 ("flash"): duplicate name (also tier 1)'),
        (
            OBJECTS,
            [{**TIERS[1], "max_iops": -1}],
            'tiers.json: tier 1 ("fc"): max_iops must be a number >= 0',
        ),
        (OBJECTS, [{**TIERS[1], "read_latency_ms": None}], "read_latency_ms is missing"),
        (OBJECTS, "NaN", "tiers.json: expected a JSON array"),
    ],
)
def test_place_rejects_bad_input_clearly(
    app: typer.Typer, tmp_path: Path, objects: Any, tiers: Any, message: str
) -> None:
    r = run_place(app, tmp_path, objects, tiers)
    assert r.exit_code == 2
    assert r.stdout == ""
    assert message in r.stderr, r.stderr


def test_place_names_an_unreadable_file(app: typer.Typer, tmp_path: Path) -> None:
    t = write(tmp_path, "tiers.json", TIERS)
    r = runner.invoke(app, ["place", "--objects", str(tmp_path / "nope.json"), "--tiers", str(t)])
    assert r.exit_code == 2 and r.stdout == ""
    assert "nope.json: cannot read the file" in r.stderr


def test_place_rejects_a_non_positive_time_limit(app: typer.Typer, tmp_path: Path) -> None:
    r = run_place(app, tmp_path, OBJECTS, TIERS, "--time-limit", "0")
    assert r.exit_code == 2 and r.stdout == "" and "--time-limit" in r.stderr


def test_size_reproduces_emc_sizing(app: typer.Typer) -> None:
    r = runner.invoke(
        app, ["size", "--host-iops", "11700", "--read-pct", "80", "--raid", "10", "--device-iops", "180"]
    )
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout) == {"physical_iops": 14040.0, "devices": 78, "raid_factor": 2}
    r = runner.invoke(app, ["size", "--host-iops", "11700", "--read-pct", "80", "--raid", "5"])
    assert json.loads(r.stdout) == {"physical_iops": 18720.0, "devices": None, "raid_factor": 4}


def test_size_with_read_hits_capacity_and_headroom(app: typer.Typer) -> None:
    args = ["size", "--host-iops", "11390", "--read-pct", "80", "--read-hit-pct", "25", "--raid", "1"]
    args += [
        "--device-iops",
        "180",
        "--max-utilisation",
        "0.7",
        "--capacity-gb",
        "2000",
        "--device-gb",
        "146",
    ]
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["physical_iops"] == pytest.approx(11390)
    assert out["devices"] == 91  # 11,390 / (180 x 0.7) = 90.4 -> 91 beats 2,000 / 146 = 13.7 -> 14


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--raid", "3"], "--raid: unsupported RAID level 3"),
        (["--raid", "5", "--read-pct", "120"], "--read-pct must be between 0 and 100"),
        (["--raid", "5", "--host-iops", "-1"], "--host-iops must be >= 0"),
        (["--raid", "5", "--capacity-gb", "100"], "--device-gb is required"),
        (["--raid", "5", "--device-iops", "0"], "--device-iops must be > 0"),
        (["--raid", "5", "--max-utilisation", "1.5"], "--max-utilisation must be between 0 and 1"),
    ],
)
def test_size_rejects_bad_input_clearly(app: typer.Typer, args: list[str], message: str) -> None:
    base = {"--host-iops": "1000", "--read-pct": "70"}
    for k, v in zip(args[::2], args[1::2], strict=True):
        base[k] = v
    r = runner.invoke(app, ["size", *[x for kv in base.items() for x in kv]])
    assert r.exit_code == 2 and r.stdout == ""
    assert message in r.stderr, r.stderr


def test_size_rejects_a_non_number(app: typer.Typer) -> None:
    r = runner.invoke(app, ["size", "--host-iops", "lots", "--read-pct", "80", "--raid", "5"])
    assert r.exit_code == 2 and r.stdout == ""
    assert "--host-iops" in r.stderr


def test_native_stdout_noise_is_kept_out_of_the_json() -> None:
    code = (
        "import os, sys\n"
        "from app.cli_placement import native_stdout_silenced\n"
        "print('before', flush=True)\n"
        "with native_stdout_silenced():\n"
        "    os.write(1, b'HighsMipSolverData noise\\n')\n"
        "print('after')\n"
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True)
    assert out.stdout == "before\nafter\n"


def test_place_places_each_pool_on_its_own_tiers(app: typer.Typer, tmp_path: Path) -> None:
    """Array B's small flash tier is full with its own hot object; array A's hot objects never
    take it, however much hotter they are."""
    tiers = [{**t, "pool": "array-a"} for t in TIERS] + [
        {**t, "pool": "array-b", **({"capacity_gb": 15} if t["name"] == "flash" else {})} for t in TIERS
    ]
    objects = [
        {"id": "a_hot1", "size_gb": 60, "read_iops": 3000, "write_iops": 0, "pool": "array-a"},
        {"id": "a_hot2", "size_gb": 60, "read_iops": 2500, "write_iops": 0, "pool": "array-a"},
        {"id": "b_warm", "size_gb": 10, "read_iops": 500, "write_iops": 0, "pool": "array-b"},
    ]
    r = run_place(app, tmp_path, objects, tiers)
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    assert [p["pool"] for p in out["pools"]] == ["array-a", "array-b"]
    by_pool = {p["pool"]: p for p in out["pools"]}
    # A's 100 GB flash holds one of its 60 GB objects; B's flash holds B's object
    assert sorted(by_pool["array-a"]["assignment"].values()) == ["fc", "flash"]
    assert by_pool["array-b"]["assignment"] == {"b_warm": "flash"}
    assert out["assignment"] == {**by_pool["array-a"]["assignment"], **by_pool["array-b"]["assignment"]}
    assert out["status"] == "optimal"
    assert out["objective"] == pytest.approx(
        by_pool["array-a"]["objective"] + by_pool["array-b"]["objective"]
    )


def test_place_checks_each_objects_pool_and_its_tiers(app: typer.Typer, tmp_path: Path) -> None:
    tiers = [{**t, "pool": "array-a"} for t in TIERS] + [{**TIERS[1], "pool": "array-b"}]
    bad_pool = [{"id": "x", "size_gb": 1, "read_iops": 1, "write_iops": 0, "pool": "array-c"}]
    r = run_place(app, tmp_path, bad_pool, tiers)
    assert r.exit_code == 2 and r.stdout == ""
    assert 'pool "array-c" has no tiers in' in r.stderr and "pools: array-a, array-b" in r.stderr
    pinned = [
        {"id": "x", "size_gb": 1, "read_iops": 1, "write_iops": 0, "pool": "array-b", "pinned_tier": "sata"}
    ]
    r = run_place(app, tmp_path, pinned, tiers)
    assert (
        r.exit_code == 2
        and 'pinned_tier "sata" is not a tier in' in r.stderr
        and "(fc of pool array-b)" in r.stderr
    )
    twice = [*tiers, {**TIERS[0], "pool": "array-b"}, {**TIERS[0], "pool": "array-b"}]
    r = run_place(app, tmp_path, OBJECTS, twice)
    assert r.exit_code == 2 and "duplicate name in pool array-b" in r.stderr


def test_place_without_pools_prints_todays_json(app: typer.Typer, tmp_path: Path) -> None:
    r = run_place(app, tmp_path)
    assert r.exit_code == 0 and "pools" not in json.loads(r.stdout)


def test_size_for_a_tier_of_a_pool_takes_its_raid_and_devices(app: typer.Typer, tmp_path: Path) -> None:
    import yaml

    from policies.loader import DEFAULT_POLICY

    data = yaml.safe_load(DEFAULT_POLICY.read_text(encoding="utf-8"))
    fc = {**data["tiers"][1], "raid_level": 5, "device_iops": 200, "devices": 10}
    data["pools"] = [{"name": "array-b", "servers": "SQLB*", "tiers": [data["tiers"][0], fc]}]
    policy = write(tmp_path, "policy.yaml", yaml.safe_dump(data))
    args = ["size", "--host-iops", "1000", "--read-pct", "80", "--policy", str(policy), "--tier", "fc"]
    r = runner.invoke(app, [*args, "--pool", "array-b"])
    assert r.exit_code == 0, r.stderr
    # RAID 5 on array B: 800 + 200 x 4 = 1,600 back-end IOPS on 200-IOPS devices: 8 of its 10
    assert json.loads(r.stdout) == {"physical_iops": 1600.0, "devices": 8, "raid_factor": 4, "pool": "array-b",
                                    "tier": "fc", "tier_devices": 10}  # fmt: skip
    top = json.loads(runner.invoke(app, args).stdout)  # the top-level fc: RAID 10
    assert (top["pool"], top["raid_factor"], top["physical_iops"]) == ("default", 2, 1200.0)
    r = runner.invoke(app, [*args[:-1], "sata", "--pool", "array-b"])
    assert r.exit_code == 2 and "--tier: pool array-b has no tier 'sata' (tiers: flash, fc)" in r.stderr
    r = runner.invoke(app, ["size", "--host-iops", "1000", "--read-pct", "80"])
    assert r.exit_code == 2 and "--raid is required" in r.stderr


def test_place_with_one_infeasible_pool_has_no_total_objective_nor_gap(
    app: typer.Typer, tmp_path: Path
) -> None:
    """An infeasible pool makes the totals unknown: objective and gap both null, as for one pool
    (the gap was printed 0.0, "optimal", beside a null objective)."""
    tiers = [{**t, "pool": "array-a"} for t in TIERS] + [{**t, "pool": "array-b"} for t in TIERS]
    objects = [
        {"id": "a_fits", "size_gb": 10, "read_iops": 500, "write_iops": 0, "pool": "array-a"},
        {"id": "b_huge", "size_gb": 50000, "read_iops": 1, "write_iops": 0, "pool": "array-b"},
    ]
    r = run_place(app, tmp_path, objects, tiers)
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    by_pool = {p["pool"]: p for p in out["pools"]}
    assert by_pool["array-a"]["status"] == "optimal" and by_pool["array-a"]["gap"] is not None
    assert by_pool["array-b"]["status"] == "infeasible"
    assert out["status"] == "infeasible" and out["objective"] is None and out["gap"] is None
