"""ILM plans: the simulator's decaying Orders partitions, hot old partitions, boundaries, capacity."""

from __future__ import annotations

import math
import re
from datetime import UTC, date, datetime, timedelta

import numpy as np
import pytest

from advisors.advise import advise
from advisors.ilm import PartitionInput, add_months, fit_heat, months_between, parse_boundary, plan_ilm
from app.advice import windows_from_snapshots
from app.ilm import make_plan
from connectors.simulator import demo_fleet
from policies.loader import load_policy, parse_policy
from tests.fixture_policy import REFERENCE_POLICY, reference_policy

POLICY = reference_policy()  # the synthetic tables' expectations: hand arithmetic on its tier figures
SHIPPED = load_policy()  # the demo fleet sits where the shipped policy's tiers are
NOW = datetime(2026, 11, 20, tzinfo=UTC)


def monthly(
    n: int,
    *,
    half_life: float = 3.0,
    size_gb: float = 20.0,
    right: bool = True,
    current: str = "fc",
    table: str = "dbo.Orders",
) -> list[PartitionInput]:
    """n monthly partitions ending with the current month, heat halving every `half_life` months."""
    first = add_months(date(NOW.year, NOW.month, 1), -(n - 1))
    out = []
    for i in range(n):
        start, end = add_months(first, i), add_months(first, i + 1)
        if right:
            low, high = start.isoformat(), end.isoformat()
        else:  # RANGE LEFT: boundaries are the last day of each month, upper-inclusive
            low, high = (start - timedelta(days=1)).isoformat(), (end - timedelta(days=1)).isoformat()
        age = max(0.0, months_between(end, NOW.date()))
        out.append(PartitionInput("sqlserver", "S", "Sales", table, i + 1, f"Sales/p/{i + 1}",
                                  None if i == 0 else low, None if i == n - 1 else high, size_gb,
                                  1000 * 0.5 ** (age / half_life), 0.9, current, f"FG_{i + 1}"))  # fmt: skip
    return out


def tier_now(p) -> str | None:  # type: ignore[no-untyped-def]
    moves = [m for m in p.moves if m.date <= NOW.date()]
    return moves[-1].to_tier if moves else p.current_tier


def tier_at(p, when: date) -> str | None:  # type: ignore[no-untyped-def]
    moves = [m for m in p.moves if m.date <= when]
    return moves[-1].to_tier if moves else p.current_tier


def test_boundaries_are_recognised() -> None:
    assert parse_boundary("2026-01-01") == date(2026, 1, 1)
    assert parse_boundary("2026-01-01T00:00:00.000") == date(2026, 1, 1)
    assert parse_boundary("'2026-03-31'") == date(2026, 3, 31)  # DB2 HIGHVALUE text
    assert parse_boundary("202603") == date(2026, 3, 1)
    assert parse_boundary("20260315") == date(2026, 3, 15)
    assert parse_boundary("EU-WEST") is None and parse_boundary("42") is None and parse_boundary(None) is None


def test_simulator_plan_puts_current_months_on_flash_and_the_cold_tail_on_sata() -> None:
    """Month 0 is the advice (one answer per object); later months move each partition where its
    projected I/O wait plus the tier's price is least, as the advice's benefit model would."""
    origin = datetime(2026, 11, 1, tzinfo=UTC)
    fleet = demo_fleet(origin)
    snaps = [s for h in range(31, 31 + 7 * 24 + 1) for s in fleet.snapshots(origin + timedelta(hours=h))]
    report = advise(windows_from_snapshots(snaps, SHIPPED), SHIPPED, curve_points=0)
    now = snaps[-1].sample_time
    plan = make_plan(report, SHIPPED, now=now, months=12)
    orders = next(t for t in plan.tables if t.table == "dbo.Orders")
    assert orders.fit.method == "huber" and orders.fit.r2 is not None and orders.fit.r2 > 0.9
    existing = sorted((p for p in orders.partitions if not p.new), key=lambda p: p.partition)
    assert len(existing) == 24
    tiers = [tier_at(p, now.date()) for p in existing]
    # one answer per object: month 0 is what the recommendations say for each partition
    advised = {a.info.key: a.recommended_tier for a in report.objects if a.info.kind == "partition"}
    assert [advised[p.key] for p in existing] == tiers
    # the demo's truth (docs/demo-fleet.md): the newest 11 months save more than flash's price, the
    # older ones are cold; on the shipped policy a GB on fc (10K SAS) costs 1.35 ms/s per GB more than
    # on sata (NL-SAS), far more than the ~0.4 ms/s per GB those months' reads would wait there, so
    # none stays on fc
    assert tiers == ["sata"] * 13 + ["flash"] * 11
    # the later months' reasons say the projected heat and the price per GB as the pages read them
    by_benefit = [m.reason for p in orders.partitions for m in p.moves if m.reason.startswith("projected ")]
    assert by_benefit and all(
        re.fullmatch(
            r"projected [\d,.]+ I/O per GB-hour: least I/O wait plus price on \w+ \([\d.]+ ms/s per GB\)", r
        )
        for r in by_benefit
    ), by_benefit[:3]
    # later in the year the then-current months are on flash and today's are gone down
    in_six = add_months(now.date(), 6)
    new_now = [
        p
        for p in orders.partitions
        if p.new and p.range_start and p.range_start <= in_six < (p.range_end or in_six)
    ]
    assert new_now and tier_at(new_now[0], in_six) == "flash"
    # heat halves every ~3 months: the month 10 months old today is worth less than flash's price
    # within six months and goes down, today's current month (then 6 months old) is still worth it
    assert tier_at(existing[-11], now.date()) == "flash" and tier_at(existing[-11], in_six) != "flash"
    assert tier_at(existing[-1], in_six) == "flash"
    for tier, months in plan.forecast.items():
        for m in months:
            assert m["gb"] <= m["capacity_gb"] + 1e-6, (tier, m)


def test_old_but_hot_partition_is_not_demoted() -> None:
    parts = monthly(36)
    audited = parts[2]  # 33 months old, re-read for an audit: as hot as the current month

    parts[2] = PartitionInput(audited.engine, audited.server, audited.database, audited.table, audited.partition,
                              audited.key, audited.range_low, audited.range_high, audited.size_gb, 1000.0, 0.9,
                              "fc", audited.location)  # fmt: skip
    plan = plan_ilm(parts, POLICY, now=NOW, months=12)
    t = plan.tables[0]
    hot = next(p for p in t.partitions if p.partition == 3)
    assert tier_now(hot) in ("flash", "fc")
    assert any("still hot: not demoted" in m.reason for m in hot.moves) or tier_now(hot) == "fc"
    cold_old = next(p for p in t.partitions if p.partition == 4)
    assert tier_now(cold_old) == "sata"
    assert any(m.read_only and "older than 24" in m.reason for m in cold_old.moves)


def test_range_left_and_right_give_the_same_plan() -> None:
    right = plan_ilm(monthly(24, right=True), POLICY, now=NOW, months=6).tables[0]
    left = plan_ilm(monthly(24, right=False), POLICY, now=NOW, months=6).tables[0]
    assert [tier_now(p) for p in right.partitions if not p.new] == [
        tier_now(p) for p in left.partitions if not p.new
    ]
    first, last = right.partitions[0], next(p for p in right.partitions if p.partition == 24)
    assert (
        first.range_start is not None and first.range_end is not None
    )  # open low end inferred from the period
    assert last.range_end == add_months(last.range_start, 1)  # type: ignore[arg-type]
    assert right.period_months == 1


def test_not_date_partitioned_and_empty_partitions() -> None:
    regions = [PartitionInput("db2", "D", "ORDERS", "ORDERS.BY_REGION", i, f"k{i}", lo, hi, 1.0, 5.0, 0.9, "fc")
               for i, (lo, hi) in enumerate([(None, "'EU'"), ("'EU'", "'US'"), ("'US'", None)])]  # fmt: skip
    empty = monthly(6)

    empty = [PartitionInput(p.engine, p.server, p.database, p.table, p.partition, p.key, p.range_low, p.range_high,
                            0.0 if p.partition == 1 else p.size_gb, 0.0 if p.partition == 1 else p.heat, 0.9,
                            p.current_tier, p.location) for p in empty]  # fmt: skip
    plan = plan_ilm([*regions, *empty], POLICY, now=NOW, months=3)
    assert plan.not_date_partitioned == ("D/ORDERS/ORDERS.BY_REGION",)
    assert [t.table for t in plan.tables] == ["dbo.Orders"]
    assert tier_now(plan.tables[0].partitions[0]) == "sata"  # an empty old partition is the cold tail


def test_capacity_overflows_to_the_next_tier() -> None:
    tight = parse_policy(
        (POLICY_TEXT := REFERENCE_POLICY.read_text(encoding="utf-8")).replace(
            "capacity_gb: 1400 ", "capacity_gb: 30 "
        ),
        source="tight.yaml",
    )
    assert POLICY_TEXT
    plan = plan_ilm(monthly(12, size_gb=20), tight, now=NOW, months=2)
    flash_now = [p for p in plan.tables[0].partitions if tier_now(p) == "flash"]
    assert len(flash_now) == 1  # 30 GB of flash holds one 20 GB partition
    assert any("flash full" in m.reason for p in plan.tables[0].partitions for m in p.moves)
    assert all(m["gb"] <= 30 + 1e-6 for m in plan.forecast["flash"])


def test_reasons_and_notes_read_their_figures_as_the_pages_do() -> None:
    """Shares in percent, sizes in the size rule (advisors.quantities), the policy's shares too."""
    plan = plan_ilm(monthly(12, size_gb=20), POLICY, now=NOW, months=2)
    reasons = [m.reason for p in plan.tables[0].partitions for m in p.moves]
    assert (
        "among the partitions carrying the first 70 % of the table's projected I/O" in reasons
    )  # flash_io_share
    tail = [r for r in reasons if r.startswith("cold tail: ")]
    assert tail and all(re.fullmatch(r"cold tail: 9\d % of the table's projected I/O is in hotter partitions", r)
                        for r in tail)  # fmt: skip
    # every tier 30 GB: twelve 20 GB partitions overflow the last one, 200 GB and one more a month
    text = re.sub(r"capacity_gb: \d+ ", "capacity_gb: 30 ", REFERENCE_POLICY.read_text(encoding="utf-8"))
    full = plan_ilm(monthly(12, size_gb=20), parse_policy(text, source="full.yaml"), now=NOW, months=2)
    assert full.notes == (
        "sata needs 200 GB in 2026-11, more than its 30.0 GB",
        "sata needs 220 GB in 2026-12, more than its 30.0 GB",
        "sata needs 240 GB in 2027-01, more than its 30.0 GB",
        # the plan, not the heat, decides where the hot months go: said once per tier
        "the plan is the limit on flash, not the heat: its 30.0 GB is used up in 3 of 3 months (2026-11 to "
        "2027-01); 6 monthly placements that wanted flash go to fc or slower",
        "the plan is the limit on fc, not the heat: its 30.0 GB is used up in 3 of 3 months (2026-11 to "
        "2027-01); 11 monthly placements that wanted fc go to sata",
    )


def test_huber_fit_shrugs_off_an_audited_outlier() -> None:
    ages = list(range(24))
    heats = [1000 * 0.5 ** (a / 3) for a in ages]
    heats[20] = 1000.0  # re-read for an audit
    fit = fit_heat(ages, heats, default_half_life=6)
    slope, _ = np.polyfit(ages, [math.log(h) for h in heats], 1)
    ols_half_life = math.log(0.5) / slope
    assert fit.method == "huber"
    assert abs(fit.half_life_months - 3) < abs(ols_half_life - 3)
    assert fit.half_life_months == pytest.approx(3, rel=0.15)
    few = fit_heat([0, 1], [10, 5], default_half_life=6)
    assert few.method == "policy default" and few.half_life_months == 6
