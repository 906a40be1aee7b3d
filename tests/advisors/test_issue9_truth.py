"""Issue #9 end to end on the demo fleet: the nightly backup of FG_ARCHIVE is left out of its heat,
flash's daily write budget holds what the write-hot staging table FG_LOAD and the other writers
placed there write (and decides between them when it is short), and the Orders month re-read at
every month-end keeps fc when the policy declares the period (and the window holds the last one)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from advisors.advise import Advice, AdviceReport, advise
from advisors.ilm import plan_ilm
from advisors.quantities import gb, pct
from app.advice import windows_from_snapshots
from app.ilm import partition_inputs
from connectors.simulator import ObjectTruth, demo_fleet
from policies.loader import load_policy
from policies.workload import CalendarPeriod

ORIGIN = datetime(2026, 11, 1, tzinfo=UTC)
POLICY = load_policy()
MONTH_END = CalendarPeriod(name="month-end close", kind="month_end", last_days=2, first_days=1)
# 20 days of data around the November close (Nov 29 - Dec 1), advised on Dec 8, between closes
CALENDAR = POLICY.model_copy(update={"window_days": 20, "business_calendar": [MONTH_END]})
REREAD = ("Sales/file/16", "Sales/partition/dbo.Orders/1/9")  # FG_ORD_202508, 15 months old


def _truth() -> dict[str, ObjectTruth]:
    out: dict[str, ObjectTruth] = {}
    for inst in demo_fleet(ORIGIN).instances:
        out.update({f"{inst.name}|{k}": t for k, t in inst.truth().items()})
    return out


def _run(start: datetime, hours: int, policy):  # type: ignore[no-untyped-def]
    fleet = demo_fleet(ORIGIN)
    snaps = [s for h in range(hours + 1) for s in fleet.snapshots(start + timedelta(hours=h))]
    return advise(windows_from_snapshots(snaps, policy), policy, curve_points=0, now=snaps[-1].sample_time)


@pytest.fixture(scope="module")
def week() -> AdviceReport:
    return _run(ORIGIN + timedelta(hours=31), 7 * 24, POLICY)  # as test_advise_truth: no month-end in it


@pytest.fixture(scope="module")
def close() -> AdviceReport:
    return _run(datetime(2026, 11, 18, tzinfo=UTC), 20 * 24, CALENDAR)


def by_name(report: AdviceReport, name: str) -> Advice:
    return next(a for a in report.objects if a.info.name == name)


def truth_of(a: Advice, truth: dict[str, ObjectTruth]) -> ObjectTruth:
    key = f"{a.info.server}|{a.info.key}"
    return truth[key] if key in truth else truth[f"{a.info.server}|{a.info.files[0].key}"]


def test_nightly_backup_is_left_out_of_the_archive_heat(week: AdviceReport) -> None:
    a = by_name(week, "FG_ARCHIVE")
    t = _truth()["SQLPROD01|Sales/file/6"]
    assert t.maintenance is not None and t.maintenance_read_iops == pytest.approx(6.25)
    m = a.features.maintenance
    assert m is not None and [s.kind for s in m.slices] == ["burst"]
    assert m.read_share is not None and m.read_share > 0.95 and m.hours == 7  # one hour a night
    # the figures are the workload's, as the truth gives them (the daily sine: within a few %)
    assert a.features.read_iops == pytest.approx(t.read_iops, rel=0.1)
    assert a.features.avg_read_bytes == pytest.approx(t.avg_read_bytes, rel=0.01)
    assert (a.verdict.profile, a.recommended_tier) == ("cold", "sata")
    note = next(r for r in a.reasons if r.startswith("TW102"))
    assert note.startswith("TW102 97 % of this filegroup's reads fell in hours of large sequential reads")
    assert "were left out of its heat and rates" in note


def _written(report: AdviceReport, tier: str) -> float:
    return sum(
        a.placement_object.write_gb_day
        for a in report.objects
        if a.placement_object is not None and a.recommended_tier == tier
    )


def test_flash_write_budget_holds_the_writers_placed_there(week: AdviceReport) -> None:
    """The shipped flash tier, 1 DWPD on 8 x 960 GB drives in RAID 5 7+1: 3,840 GB of host writes a
    day. The staging table (~1.3 TB a day, its reads save much per GB written) fits beside the
    writers that save more; Staging's PRIMARY (~630 GB a day, saving far less per GB written) does
    not."""
    budget = POLICY.tier("flash").write_budget_gb_day
    assert budget == 3840
    primary = next(a for a in week.objects if a.info.key == "Staging/filegroup/PRIMARY")
    t = _truth()["SQLPROD01|Staging/file/1"]
    assert (t.profile, t.intended_tier) == ("write_heavy", "fc") and t.endurance
    assert (primary.verdict.profile, primary.recommended_tier) == ("write_heavy", "fc")
    assert primary.decision is not None and (primary.decision.stage, primary.decision.preferred_tier) == (
        "write_budget",
        "flash",
    )
    assert (
        "flash's daily write budget is" in primary.explanation
        and f"of {gb(budget)} a day)" in primary.explanation
    )
    assert primary.placement_object is not None and 500 < primary.placement_object.write_gb_day < 800
    load = by_name(week, "FG_LOAD")
    assert _truth()["SQLPROD01|Staging/file/3"].intended_tier == "flash"
    assert (load.verdict.profile, load.recommended_tier) == ("write_heavy", "flash")
    assert load.placement_object is not None and 1_000 < load.placement_object.write_gb_day < 1_500
    assert _written(week, "flash") <= budget * (1 + 1e-9)
    written = _written(week, "flash")
    assert (
        f"flash's daily write budget: the units placed there write {gb(written)} of {gb(budget)} a day "
        f"({pct(written / budget)})"
    ) in week.notes


def test_a_short_write_budget_keeps_the_writers_that_save_least_per_gb_written_off_flash() -> None:
    """At a quarter of the rating (0.25 DWPD: 960 GB of host writes a day on RAID 5) fewer writers
    fit: the budget is one constraint on their sum, and the ones left out say it is the write
    budget that binds."""
    tiers = [POLICY.tiers[0].model_copy(update={"endurance_dwpd": 0.25}), *POLICY.tiers[1:]]
    short = POLICY.model_copy(update={"tiers": tiers})
    report = _run(ORIGIN + timedelta(hours=31), 7 * 24, short)
    assert _written(report, "flash") <= 960 * (1 + 1e-9)
    left = [a for a in report.objects if a.decision is not None and a.decision.stage == "write_budget"]
    assert left, [a.explanation for a in report.objects if a.placement_unit == a.info.key]
    for a in left:
        assert a.recommended_tier != "flash" and a.decision.preferred_tier == "flash"
        assert "flash's daily write budget is" in a.explanation and f"of {gb(960)} a day)" in a.explanation

    # what binds is the budget: none of the writers left out fits in what the placed ones leave of it
    written = _written(report, "flash")
    for a in left:
        assert a.placement_object is not None and written + a.placement_object.write_gb_day > 960
    assert {a.info.name for a in left} >= {"FG_LOAD"}  # ~1,270 GB/day alone is more than the budget


def test_month_end_reread_keeps_fc_between_closes(close: AdviceReport, week: AdviceReport) -> None:
    truth = _truth()
    for key in REREAD:
        t = truth[f"SQLPROD01|{key}"]
        assert (t.profile, t.intended_tier, t.period, t.period_tier) == ("cold", "sata", "month_end", "fc")
    for a in (by_name(close, "FG_ORD_202508"), by_name(close, "Orders 2025-08")):
        assert (a.verdict.rule, a.verdict.profile, a.recommended_tier) == ("TW901", "cold", "fc"), a.reasons
    unit = by_name(close, "FG_ORD_202508")
    assert "in the 'month-end close' period (2026-11-29) it would wait" in unit.explanation
    assert "kept on fc between periods" in unit.explanation
    # a week in mid-month without the calendar cannot see the close: the steady-state answer
    assert by_name(week, "FG_ORD_202508").recommended_tier == "sata"


def test_agreement_over_the_close(close: AdviceReport) -> None:
    """The figure in docs/demo-fleet.md: the period tier where the object has one."""
    truth = _truth()
    pairs = [(a, truth_of(a, truth)) for a in close.objects]
    agree = sum(
        (a.verdict.profile, a.recommended_tier) == (t.profile, t.period_tier or t.intended_tier)
        for a, t in pairs
    )
    assert (agree, len(pairs)) == (70, 76)


def test_ilm_plan_keeps_the_month_end_partition_off_sata(close: AdviceReport) -> None:
    """The service's ILM inputs carry the period heat, so the plan does not demote the month that
    is re-read at every close (without the calendar it would go to sata like its neighbours)."""
    inputs = partition_inputs(close)
    reread = next(p for p in inputs if p.key == REREAD[1])
    assert reread.period == "month-end close" and reread.period_heat is not None
    assert reread.period_heat > reread.heat
    now = datetime(2026, 12, 8, tzinfo=UTC)
    plan = plan_ilm(inputs, CALENDAR, now=now, months=12)
    orders = next(t for t in plan.tables if t.table.endswith("Orders"))
    part = next(p for p in orders.partitions if p.key == REREAD[1])
    assert all(m.to_tier != "sata" for m in part.moves), part.moves
    # the calendar is what keeps it: the same inputs without the period heat send it to sata
    plain = plan_ilm(
        [replace(p, period_heat=None, period=None) for p in inputs], CALENDAR, now=now, months=12
    )
    plain_part = next(
        p for t in plain.tables if t.table.endswith("Orders") for p in t.partitions if p.key == REREAD[1]
    )
    assert [m.to_tier for m in plain_part.moves][-1:] == ["sata"], plain_part.moves
