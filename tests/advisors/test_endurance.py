"""Write-heavy objects and flash endurance (issue #9): TW502 / TW503 per object, the budget figure
on write-heavy, log and tempdb verdicts, TW504 for the whole placement. Table-driven, reasons
asserted."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from advisors.classify import TEMPDB_WAITS_NOTE, WRITELOG_NOTE, classify, daily_write_gb, write_budget_gb
from advisors.endurance import endurance_note
from advisors.features import GB, ObjectInfo, ObjectWindow, Usage, compute_features
from policies.loader import load_policy
from policies.model import Policy

POLICY = load_policy()  # flash: 3 DWPD x 1,400 GB = 4,200 GB/day; one object may use 25 %
HOUR = 3600.0


@dataclass
class Case:
    rule: str
    profile: str
    reads_s: float
    writes_s: float
    write_kb: float
    reasons: tuple[str, ...]
    allowed: tuple[str, ...]
    kind: str = "filegroup"
    read_ms: float = 13.0
    write_ms: float = 2.0
    policy: Policy = POLICY


def features(c: Case):  # type: ignore[no-untyped-def]
    r, w = int(c.reads_s * HOUR), int(c.writes_s * HOUR)
    counters = {"reads": r, "bytes_read": r * 8192, "read_time_ms": int(r * c.read_ms), "writes": w,
                "bytes_written": int(w * c.write_kb * 1024), "write_time_ms": int(w * c.write_ms)}  # fmt: skip
    info = ObjectInfo("k", "sqlserver", "S", "D", c.kind, "obj", size_bytes=40 * GB, current_tier="fc")
    return info, compute_features(ObjectWindow(info, Usage(HOUR, counters)), db_heat=None)


NO_DWPD = POLICY.model_copy(
    update={"tiers": [POLICY.tiers[0].model_copy(update={"endurance_dwpd": None}), *POLICY.tiers[1:]]}
)

CASES = {
    "write-hot staging table, flash candidate by its reads -> TW502, kept on fc": Case(
        "TW502", "write_heavy", 185, 60, 256,
        ("TW502 write-dominated (24 % of requests and 91 % of bytes are writes) and writes 1,266 GB per "
         "day: 30 % of flash's daily write budget (3 DWPD x 1,400 GB = 4,200 GB/day), more than the 25 % "
         "one object may use: its 185 reads/s do not justify the wear, kept off flash",
         "TW701 small random reads"),
        ("fc", "sata"),
    ),
    "read-dominated but writing a lot -> TW701 stays, TW503 says the wear is justified": Case(
        "TW701", "random_read", 3000, 160, 64,
        ("TW503 writes 844 GB per day: 20 % of flash's daily write budget",),
        ("flash", "fc", "sata"),
        policy=POLICY.model_copy(update={"endurance": POLICY.endurance.model_copy(
            update={"object_max_budget_share": 0.1})}),
    ),
    "writes over the whole budget -> TW502 even when reads dominate by count": Case(
        "TW502", "write_heavy", 5000, 800, 256, ("more than the 25 % one object may use",), ("fc", "sata"),
    ),
    "small writer, flash candidate -> TW701, no endurance note": Case(
        "TW701", "random_read", 2000, 40, 8, ("TW701 small random reads",), ("flash", "fc", "sata"),
    ),
    "write-heavy (TW501) -> budget figure in its reasons": Case(
        "TW501", "write_heavy", 50, 400, 64,
        ("TW501 write-heavy", "writes 2,109 GB per day: 50 % of flash's daily write budget"),
        ("fc", "sata"),
    ),
    "no DWPD declared -> no endurance rule, TW701": Case(
        "TW701", "random_mixed", 185, 60, 256, ("TW701 small random reads",), ("flash", "fc", "sata"),
        policy=NO_DWPD,
    ),
    "log -> its own rule, the budget figure and the WRITELOG caveat": Case(
        "TW202", "log_write", 1, 300, 24, ("TW202 transaction log", "writes 593 GB per day: 14 %", WRITELOG_NOTE),
        ("fc",), kind="log_file",
    ),
    "tempdb -> its own rule and the PAGEIOLATCH caveat": Case(
        "TW302", "tempdb", 300, 300, 32, ("TW302 tempdb", TEMPDB_WAITS_NOTE), ("fc",), kind="tempdb",
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", list(CASES))
def test_endurance_rules(name: str) -> None:
    c = CASES[name]
    info, f = features(c)
    v = classify(info, f, c.policy)
    assert (v.rule, v.profile, v.allowed_tiers) == (c.rule, c.profile, c.allowed), v.reasons
    text = " | ".join(v.reasons)
    for expected in c.reasons:
        assert expected in text, text
    if c.rule != "TW503" and "TW503" not in " ".join(c.reasons):
        assert "TW503" not in text


def test_budget_arithmetic() -> None:
    assert write_budget_gb(POLICY) == 3 * 1400
    assert write_budget_gb(NO_DWPD) is None
    _, f = features(Case("", "", 0, 100, 64, (), ()))
    assert daily_write_gb(f) == pytest.approx(100 * 64 / 1024 / 1024 * 86_400)


def test_fleet_note_when_flash_would_wear_out() -> None:
    _, heavy = features(Case("", "", 3000, 300, 64, (), ()))  # ~1,580 GB/day each
    _, light = features(Case("", "", 3000, 10, 8, (), ()))
    assert endurance_note([("FG_A", light), ("FG_B", light)], POLICY) is None
    note = endurance_note([("FG_A", heavy), ("FG_B", heavy), ("FG_C", heavy), ("FG_D", light)], POLICY)
    assert note is not None
    assert note.startswith("TW504 the placement would write 4,753 GB per day to flash, 113 % of its daily")
    assert "the policy allows 100 %" in note and "Largest writers: FG_C 1,582 GB, FG_B 1,582 GB, FG_A" in note
    assert endurance_note([("FG_A", heavy)] * 5, NO_DWPD) is None
