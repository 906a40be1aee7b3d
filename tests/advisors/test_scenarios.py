"""The scenario corpus (tests/advisors/scenarios/): workload shapes with the tier, profile and
decision stage the physics asks for, run through the whole import -> advice pipeline.

Per scenario: (a) the committed CSV files are exactly what the generator makes from scenario.yaml;
(b) every file imports; (c) each expectation holds for the advised object. Corpus-wide: enough
scenarios, every scenario well formed, no sequential_read unit recommended for flash, every advised
object has a decision. See tests/advisors/scenarios/README.md.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from fnmatch import fnmatchcase
from functools import cache
from typing import Any

import pytest

from advisors.advise import advise
from advisors.classify import PROFILES
from app.advice import report_json, windows_from_snapshots
from connectors.files import read_import_file
from connectors.records import Snapshot
from policies.model import Policy
from tests.advisors.scenarios import generate
from tests.advisors.scenarios.trace_figures import TRACES_DIRS, compute_figures, find_traces

SCENARIOS = generate.scenario_dirs()
NAMES = [d.name for d in SCENARIOS]
STAGES = (
    "benefit",
    "capacity",
    "iops",
    "write_budget",
    "minimum_benefit",
    "price",
    "residency",
    "pinned",
    "period",
    "moves_with_unit",
    "storage_problem",
)
MAX_FILE_BYTES = 150_000


@cache
def spec_of(name: str) -> dict[str, Any]:
    return generate.load_spec(generate.HERE / name)


@cache
def policy_of(name: str) -> Policy:
    return generate.scenario_policy(spec_of(name))


@cache
def snapshots_of(name: str) -> tuple[Snapshot, ...]:
    snaps: list[Snapshot] = []
    for path in sorted((generate.HERE / name).glob("*.csv")):
        snaps.extend(read_import_file(path))
    return tuple(snaps)


@cache
def report_of(name: str) -> dict[str, Any]:
    """The advice JSON for a scenario, as the service would show it."""
    policy = policy_of(name)
    snaps = snapshots_of(name)
    windows = windows_from_snapshots(snaps, policy)
    now = max(s.sample_time for s in snaps)
    return report_json(advise(windows, policy, now=now), policy)


def units_of(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The placement units of a report (partitions and members move with them)."""
    return [o for o in report["objects"] if o.get("placement_unit") == o.get("key")]


def find(report: Mapping[str, Any], exp: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The advised units an expectation names: `object` (a name or a shell pattern), narrowed by
    `server` and `database` when given."""
    found = [
        o
        for o in units_of(report)
        if fnmatchcase(str(o["name"]), str(exp["object"]))
        and ("server" not in exp or o["server"] == exp["server"])
        and ("database" not in exp or o["database"] == exp["database"])
    ]
    return found


def describe(o: Mapping[str, Any]) -> str:
    """One object's advice, readable in a failure message."""
    d = o.get("decision") or {}
    m = o.get("metrics") or {}
    nums = {k: v for k, v in (d.get("numbers") or {}).items() if v is not None}
    preds = "; ".join(
        f"{p['tier']}: read {p['read_ms']} ms, write {p['write_ms']} ms, wait {p['io_ms_per_s']} ms/s"
        + (" (measured)" if p.get("measured") else "")
        for p in d.get("predicted") or []
    )
    return (
        f"\n  {o['server']}/{o['database']} {o['kind']} {o['name']}: current {o['current_tier']}, "
        f"recommended {o['recommended_tier']}, profile {o['profile']}, rule {o.get('rule')}, "
        f"stage {d.get('stage')}"
        f"\n  explanation: {o.get('explanation')}"
        f"\n  metrics: reads/s {m.get('read_iops')}, writes/s {m.get('write_iops')}, "
        f"read {m.get('avg_read_bytes')} B at {m.get('avg_read_ms')} ms, "
        f"write {m.get('avg_write_bytes')} B at {m.get('avg_write_ms')} ms, read % {m.get('read_pct')}, "
        f"prefetch {m.get('prefetch_share')}, heat ratio {m.get('heat_ratio')}"
        f"\n  decision numbers: {json.dumps(nums, sort_keys=True)}"
        f"\n  predicted: {preds}"
        f"\n  reasons: {' | '.join(o.get('reasons') or [])}"
    )


# --- (a) no drift between scenario.yaml and the committed files -------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_committed_files_are_what_the_generator_writes(name: str) -> None:
    directory = generate.HERE / name
    expected = generate.render(directory)
    committed = {p.name: p.read_text(encoding="utf-8") for p in directory.glob("*.csv")}
    assert sorted(committed) == sorted(expected), (
        f"{name}: CSV files differ from what scenario.yaml gives; run "
        "`python -m tests.advisors.scenarios.generate` and commit the result"
    )
    for file_name, text in expected.items():
        assert committed[file_name] == text, (
            f"{name}/{file_name} drifted from scenario.yaml; regenerate with "
            f"`python -m tests.advisors.scenarios.generate {name}`"
        )
        assert len(text.encode()) < MAX_FILE_BYTES, f"{name}/{file_name} is too big for the corpus"


# --- (b) every file imports, every object is there -------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_files_import_and_windows_build(name: str) -> None:
    snaps = snapshots_of(name)
    assert snaps, f"{name}: no samples"
    windows = windows_from_snapshots(snaps, policy_of(name))
    spec = spec_of(name)
    expected_files = sum(
        1 if o["engine"] == "db2" or o["kind"] == "log" else int(o.get("files", 1)) for o in spec["objects"]
    )
    assert len(windows) == expected_files
    hours = generate.collection_of(spec, name).hours
    for w in windows:
        assert w.total.seconds > 0, w.info.key
        assert w.info.current_tier is not None or (w.info.engine == "db2" and w.info.kind == "log_file"), (
            f"{name}: {w.info.key} at {w.info.physical_name or w.info.storage_group} matches no tier"
        )
        assert w.total.seconds <= hours * 3600 + 1


@pytest.mark.parametrize("name", NAMES)
def test_scenario_is_well_formed(name: str) -> None:
    spec = spec_of(name)
    for key in ("description", "source", "objects", "expect"):
        assert spec.get(key), f"{name}: scenario.yaml needs `{key}`"
    unknown = set(spec) - {"description", "source", "policy", "collection", "objects", "expect"}
    assert not unknown, f"{name}: unknown top-level keys {sorted(unknown)}"
    policy = policy_of(name)
    tiers = {t.name for t in policy.tiers}
    names = {str(o["name"]) for o in spec["objects"]} | {
        f"{o['database']} transaction log"
        for o in spec["objects"]
        if o["engine"] == "db2" and o["kind"] == "log"
    }
    names |= {"tempdb"} if any(o["kind"] == "tempdb" for o in spec["objects"]) else set()
    for exp in spec["expect"]:
        assert set(exp) <= {
            "object",
            "server",
            "database",
            "tier",
            "profile",
            "stage",
            "reason",
            "maintenance",
            "explains",
        }, exp
        assert any(fnmatchcase(n, str(exp["object"])) for n in names), f"{name}: no object {exp['object']!r}"
        assert exp["tier"] in tiers, exp
        assert exp["profile"] in PROFILES, exp
        assert exp["stage"] and set(exp["stage"]) <= set(STAGES), exp
        reason = str(exp.get("reason", ""))
        assert reason and any(ch.isdigit() for ch in reason), (
            f"{name}: {exp['object']}: a reason with numbers"
        )


# --- (c) the expectations ---------------------------------------------------------------------------


def _expectations() -> list[Any]:
    out = []
    for name in NAMES:
        for i, exp in enumerate(spec_of(name)["expect"]):
            where = "".join(f"{exp[k]}/" for k in ("server", "database") if k in exp)
            out.append(pytest.param(name, i, id=f"{name}:{where}{exp['object']}"))
    return out


@pytest.mark.parametrize(("name", "index"), _expectations())
def test_expectation(name: str, index: int) -> None:
    exp = spec_of(name)["expect"][index]
    report = report_of(name)
    found = find(report, exp)
    assert found, f"{name}: no advised unit named {exp['object']!r}; units: " + ", ".join(
        f"{o['server']}/{o['database']}/{o['name']}" for o in units_of(report)
    )
    if not any(ch in str(exp["object"]) for ch in "*?["):
        assert len(found) == 1, f"{name}: {exp['object']!r} is ambiguous: give server / database"
    problems = []
    for o in found:
        stage = (o.get("decision") or {}).get("stage")
        wrong = []
        if o["recommended_tier"] != exp["tier"]:
            wrong.append(f"tier {o['recommended_tier']} (expected {exp['tier']})")
        if o["profile"] != exp["profile"]:
            wrong.append(f"profile {o['profile']} (expected {exp['profile']})")
        if stage not in exp["stage"]:
            wrong.append(f"stage {stage} (expected one of {exp['stage']})")
        if exp.get("maintenance") and not o.get("maintenance"):
            wrong.append("no maintenance hours left out (expected the burst hours left out)")
        missing = [text for text in exp.get("explains", []) if text not in str(o.get("explanation"))]
        if missing:
            wrong.append(f"the explanation does not say {missing}")
        if wrong:
            problems.append(f"{'; '.join(wrong)}{describe(o)}")
    assert not problems, (
        f"{name}: {exp['object']}: " + "\n".join(problems) + f"\n  why expected: {exp['reason']}"
    )


# --- corpus-wide ------------------------------------------------------------------------------------


def test_corpus_has_enough_scenarios() -> None:
    assert len(SCENARIOS) >= 25, NAMES


@pytest.mark.parametrize("name", NAMES)
def test_no_sequential_read_unit_on_flash(name: str) -> None:
    report = report_of(name)
    flash = policy_of(name).tiers[0].name
    bad = [
        o for o in units_of(report) if o["profile"] == "sequential_read" and o["recommended_tier"] == flash
    ]
    assert not bad, "".join(describe(o) for o in bad)


@pytest.mark.parametrize("name", NAMES)
def test_every_recommendation_has_a_decision(name: str) -> None:
    report = report_of(name)
    missing = [o for o in report["objects"] if not o.get("decision") or not o["decision"].get("stage")]
    assert not missing, "".join(describe(o) for o in missing)
    for o in report["objects"]:
        assert o["decision"]["recommended_tier"] == o["recommended_tier"], describe(o)
        assert o.get("explanation"), describe(o)


def test_trace_figures_match_the_traces() -> None:
    """The figures the README and the scenarios cite, recomputed from the traces when they are
    available (shared/traces beside the repository)."""
    traces = find_traces()
    if traces is None:
        pytest.skip(f"the public traces are not here (looked in {', '.join(str(p) for p in TRACES_DIRS)})")
    committed = json.loads((generate.HERE / "trace_figures.json").read_text(encoding="utf-8"))
    assert compute_figures(traces) == committed
