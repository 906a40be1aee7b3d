"""The advisor made faster gives the same advice: a generated ~300-object multi-database fleet
(bench.advise_cost.fleet: SQL Server and DB2, filegroups, logs, tempdb, partitions, bursts,
residency holds, an overloaded tier) is advised and its advice JSON, per-database flash curves and
the unrounded figures behind them compared with an expectation stored before the speed-up
(fixtures/advise_equal_fast.json). Every tier, rule and text equal; every number to 1e-9 relative.

The fleet and its policy are built on the frozen reference policy (tests/reference-policy.yaml),
not the shipped one: the expectation was stored on its figures, and a change of the shipped
figures is not a change of the advisor. Regenerate the expectation only when the advice is meant
to change:
    .venv/bin/python -m tests.advisors.test_advise_equal_fast --write
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any

from advisors.advise import Advice, AdviceReport, DatabaseCurve
from advisors.features import ObjectWindow
from app.advice import report_json
from app.evaluate import curve_json
from bench.advise_cost import fleet as bench_fleet
from bench.advise_cost import fleet_policy as bench_fleet_policy
from bench.advise_cost import run
from policies.model import Policy
from tests.fixture_policy import reference_policy

EXPECTED = Path(__file__).parent / "fixtures" / "advise_equal_fast.json"
REL = 1e-9
# the expectation was stored on the policy's tier figures: the tiers measured from the fleet
# (benefit.learn_tiers, advisors.tier_curves) are a change of the advice, not of its speed
_FROZEN = reference_policy()
REFERENCE = _FROZEN.model_copy(update={"benefit": _FROZEN.benefit.model_copy(update={"learn_tiers": False})})


def fleet(servers: int = 15, seed: int = 14) -> list[ObjectWindow]:
    """bench.advise_cost's fleet, placed in the reference policy's tier directories."""
    return bench_fleet(servers, seed, REFERENCE)


def fleet_policy(windows: list[ObjectWindow]) -> Policy:
    """bench.advise_cost's fleet policy on the reference policy's figures."""
    return bench_fleet_policy(windows, REFERENCE)


def _plain(v: Any) -> Any:
    """Dataclasses, mappings and sequences as JSON values, floats unrounded."""
    if is_dataclass(v) and not isinstance(v, type):
        return {f.name: _plain(getattr(v, f.name)) for f in fields(v)}
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in sorted(v.items(), key=lambda kv: str(kv[0]))}
    if isinstance(v, (tuple, list)):
        return [_plain(x) for x in v]
    if isinstance(v, (frozenset, set)):
        return sorted(_plain(x) for x in v)
    if isinstance(v, float) and not math.isfinite(v):
        return repr(v)
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    return str(v)


def _raw(a: Advice) -> dict[str, Any]:
    """The unrounded figures an object's advice rests on (the JSON rounds them)."""
    return {
        "uid": f"{a.info.server}|{a.info.key}",
        "recommended_tier": a.recommended_tier,
        "rule": a.verdict.rule,
        "allowed": list(a.verdict.allowed_tiers),
        "io_ms_per_s_now": a.io_ms_per_s_now,
        "io_ms_per_s_after": a.io_ms_per_s_after,
        "features": _plain(a.features),
        "waits": _plain(dict(a.waits)),
        "placement_object": _plain(a.placement_object),
        "decision": _plain(a.decision),
    }


def document(report: AdviceReport, curves: list[DatabaseCurve]) -> dict[str, Any]:
    policy = fleet_policy(fleet())
    p = report.placement
    out: dict[str, Any] = json.loads(
        json.dumps(
            {
                "advice": report_json(report, policy),
                "curves": [curve_json(c) for c in curves],
                "raw": {
                    "objects": [_raw(a) for a in report.objects],
                    "placement": {
                        "assignment": dict(sorted(p.assignment.items())),
                        "objective": _plain(p.objective),
                        "lower_bound": _plain(p.lower_bound),
                        "status": p.status,
                        "method": p.method,
                    },
                    "flash_curve": _plain(report.flash_curve),
                    "flash_curve_by_database": _plain(
                        {f"{s}|{d}": pts for (s, d), pts in report.flash_curve_by_database.items()}
                    ),
                    "utilisation": _plain(dict(report.utilisation)),
                    "database_curves": [_plain(c) for c in curves],
                },
            },
            sort_keys=True,
        )
    )
    return out


def _fresh() -> dict[str, Any]:
    windows = fleet()
    report, curves = run(windows, fleet_policy(windows))
    return document(report, curves)


def _differences(want: Any, got: Any, path: str = "$") -> list[str]:
    if isinstance(want, float) or isinstance(got, float):
        numbers = isinstance(want, int | float) and isinstance(got, int | float) and not isinstance(got, bool)
        if numbers and math.isclose(want, got, rel_tol=REL, abs_tol=1e-12):
            return []
        return [f"{path}: {want!r} != {got!r}"]
    if isinstance(want, dict) and isinstance(got, dict):
        out = [f"{path}.{k}: missing" for k in want.keys() - got.keys()]
        out += [f"{path}.{k}: unexpected" for k in got.keys() - want.keys()]
        for k in want.keys() & got.keys():
            out += _differences(want[k], got[k], f"{path}.{k}")
        return out
    if isinstance(want, list) and isinstance(got, list):
        if len(want) != len(got):
            return [f"{path}: {len(want)} items != {len(got)}"]
        return [
            d
            for i, (w, g) in enumerate(zip(want, got, strict=True))
            for d in _differences(w, g, f"{path}[{i}]")
        ]
    return [] if want == got else [f"{path}: {want!r} != {got!r}"]


def test_the_fleet_exercises_the_advice() -> None:
    """The expectation is worth comparing: many objects, moves both ways, several stages."""
    want = json.loads(EXPECTED.read_text())
    objects = want["advice"]["objects"]
    assert len(fleet()) == 296 and len(objects) == 204  # files advised as their filegroups
    assert {"flash", "fc", "sata"} == {o["recommended_tier"] for o in objects}
    assert want["advice"]["summary"]["moves"] >= 30
    stages = {o["decision"]["stage"] for o in objects}
    assert {"benefit", "price", "residency", "moves_with_unit", "capacity"} <= stages
    assert {o["engine"] for o in objects} == {"sqlserver", "db2"}
    assert sum(len(c["points"]) > 2 for c in want["curves"]) >= 10


def test_the_advice_is_what_it_was_before_the_speed_up() -> None:
    differences = _differences(json.loads(EXPECTED.read_text()), _fresh())
    assert not differences, f"{len(differences)} differences, first: {differences[:20]}"


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        EXPECTED.parent.mkdir(exist_ok=True)
        EXPECTED.write_text(json.dumps(_fresh(), sort_keys=True, separators=(",", ":")) + "\n")
        print(f"wrote {EXPECTED}")
