"""Business calendar (issue #9): recurring periods are judged on their own, an object hot in one
keeps the tier it needs then (TW901: a demotion must pay in the period too), and ILM plans neither demote a partition hot in every
period nor keep a cold partition that turned hot where it is. Table-driven, reasons asserted."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

import pytest

from advisors.advise import advise
from advisors.features import GB, ObjectInfo, ObjectWindow, Usage
from advisors.ilm import PartitionInput, add_months, months_between, plan_ilm
from advisors.maintenance import occurrence, split_period
from policies.loader import load_policy
from policies.model import Policy
from policies.workload import CalendarPeriod

POLICY = load_policy()
HOUR = 3600.0
MONTH_END = CalendarPeriod(name="month-end close", kind="month_end", last_days=2, first_days=1)
QUARTER_END = CalendarPeriod(name="quarter close", kind="quarter_end", last_days=3, first_days=0)
YEAR_END = CalendarPeriod(name="year end", kind="year_end", last_days=5, first_days=3)
SEASON = CalendarPeriod(name="winter sale", kind="custom", start="12-20", end="01-10")

OCCURRENCES = [
    (MONTH_END, date(2026, 11, 29), date(2026, 11, 29)),
    (MONTH_END, date(2026, 11, 30), date(2026, 11, 29)),
    (MONTH_END, date(2026, 12, 1), date(2026, 11, 29)),  # the first day belongs to November's close
    (MONTH_END, date(2026, 12, 2), None),
    (MONTH_END, date(2026, 11, 28), None),
    (MONTH_END, date(2027, 2, 27), date(2027, 2, 27)),  # February: the last 2 days are the 27th, 28th
    (QUARTER_END, date(2026, 9, 29), date(2026, 9, 28)),
    (QUARTER_END, date(2026, 10, 30), None),  # October is no quarter's last month
    (QUARTER_END, date(2026, 10, 1), None),  # first_days = 0
    (YEAR_END, date(2027, 1, 3), date(2026, 12, 27)),
    (YEAR_END, date(2027, 1, 4), None),
    (SEASON, date(2026, 12, 31), date(2026, 12, 20)),
    (SEASON, date(2027, 1, 10), date(2026, 12, 20)),  # crosses the year's end
    (SEASON, date(2027, 1, 11), None),
]


@pytest.mark.parametrize(("period", "day", "first"), OCCURRENCES)
def test_occurrences(period: CalendarPeriod, day: date, first: date | None) -> None:
    assert occurrence(period, day) == first


def usage(reads: float, read_kb: float, read_ms: float = 7.0) -> Usage:
    r = int(reads * HOUR)
    return Usage(HOUR, {"reads": r, "bytes_read": int(r * read_kb * 1024), "read_time_ms": int(r * read_ms),
                        "writes": 0, "bytes_written": 0, "write_time_ms": 0})  # fmt: skip


def window(
    start: datetime, days: int, busy: set[date], busy_usage: Usage, quiet: Usage, *, tier: str = "fc"
) -> ObjectWindow:
    buckets = []
    for h in range(days * 24):
        t = start + timedelta(hours=h)
        buckets.append((t, busy_usage if t.date() in busy else quiet))
    counters: dict[str, int | None] = {}
    for _, u in buckets:
        for k, v in u.counters.items():
            counters[k] = (counters.get(k) or 0) + (v or 0)
    info = ObjectInfo("Sales/filegroup/FG_ORD_202508", "sqlserver", "S", "Sales", "filegroup", "FG_ORD_202508",
                      size_bytes=30 * GB, current_tier=tier)  # fmt: skip
    return ObjectWindow(info, Usage(len(buckets) * HOUR, counters), tuple(buckets))


START = datetime(2026, 11, 18, tzinfo=UTC)
CLOSE = {date(2026, 11, 29), date(2026, 11, 30), date(2026, 12, 1)}


@dataclass
class Case:
    policy: Policy
    busy: Usage
    tier: str  # where the object is
    stage: str
    recommended: str
    reason: str


def with_calendar(*periods: CalendarPeriod) -> Policy:
    return POLICY.model_copy(update={"business_calendar": list(periods)})


CASES = {
    "re-read every month-end, cold in between -> the period keeps fc": Case(
        with_calendar(MONTH_END), usage(120, 8), "fc", "period", "fc",
        "Stays on fc: in the 'month-end close' period (2026-11-29) it would wait",
    ),
    "hot enough at month-end for flash, on flash -> the period keeps flash": Case(
        with_calendar(MONTH_END), usage(900, 8, 0.8), "flash", "period", "flash",
        "Stays on flash: in the 'month-end close' period (2026-11-29) it would wait",
    ),
    "hot at month-end only, on fc -> not promoted: it must pay on every window": Case(
        with_calendar(MONTH_END), usage(900, 8), "fc", "period", "fc", "Stays on fc: in the 'month-end close'",
    ),
    "busier at month-end but below hot_min_ratio -> judged on the other days": Case(
        with_calendar(MONTH_END.model_copy(update={"hot_min_ratio": 50})), usage(120, 8), "fc", "price", "sata",
        "Move filegroup FG_ORD_202508 from fc to sata: frees 30.0 GB of fc",
    ),
    "no calendar: month-end I/O counts as ordinary I/O": Case(
        POLICY, usage(120, 8), "fc", "price", "fc", "; on sata it would wait",
    ),
    "period declared but the object is as cold in it -> demoted": Case(
        with_calendar(MONTH_END), usage(3, 64), "fc", "price", "sata", "from fc to sata: frees 30.0 GB of fc",
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", list(CASES))
def test_calendar_keeps_the_tier_a_period_needs(name: str) -> None:
    c = CASES[name]
    quiet = usage(3, 64, 0.8 if c.tier == "flash" else 7.0)
    w = window(START, 20, CLOSE, c.busy, quiet, tier=c.tier)
    [a] = advise([w], c.policy, now=START + timedelta(days=20), curve_points=0).objects
    assert a.decision is not None
    assert (a.decision.stage, a.recommended_tier) == (c.stage, c.recommended), a.explanation
    assert c.reason in a.explanation, a.explanation
    if c.stage == "period":
        assert a.decision.rule == "TW901"
        assert a.features.read_iops == pytest.approx(3.0, rel=0.01)  # everyday figures: the other days only


def test_occurrence_needs_enough_hours_and_other_days() -> None:
    policy = with_calendar(MONTH_END)
    # only 6 hours of the close in the data: too little to judge, but still not everyday heat
    w = window(datetime(2026, 12, 1, 18, tzinfo=UTC), 5, {date(2026, 12, 1)}, usage(120, 8), usage(3, 64))
    split = split_period(w, policy)
    assert split.period is None and len(split.by_hour) == 5 * 24 - 6
    # nothing but the period: left as it is
    only = window(datetime(2026, 11, 29, tzinfo=UTC), 3, CLOSE, usage(120, 8), usage(3, 64))
    assert split_period(only, policy) is only


# --- ILM ---------------------------------------------------------------------------------------

NOW = datetime(2026, 12, 10, tzinfo=UTC)


def monthly(n: int = 24, current: str = "fc") -> list[PartitionInput]:
    first = add_months(date(NOW.year, NOW.month, 1), -(n - 1))
    out = []
    for i in range(n):
        start, end = add_months(first, i), add_months(first, i + 1)
        age = max(0.0, months_between(end, NOW.date()))
        out.append(PartitionInput("sqlserver", "S", "Sales", "dbo.Orders", i + 1, f"p{i + 1}",
                                  None if i == 0 else start.isoformat(), None if i == n - 1 else end.isoformat(),
                                  30.0, 1000 * 0.5 ** (age / 3), 0.9, current, f"FG_{i + 1}"))  # fmt: skip
    return out


def tier_at(p, when: date) -> str | None:  # type: ignore[no-untyped-def]
    moves = [m for m in p.moves if m.date <= when]
    return moves[-1].to_tier if moves else p.current_tier


def test_ilm_keeps_a_partition_hot_in_every_period_and_says_why() -> None:
    parts = monthly()
    old = parts[8]  # 15 months old: cold on ordinary days, re-read at every month-end
    parts[8] = PartitionInput(old.engine, old.server, old.database, old.table, old.partition, old.key,
                              old.range_low, old.range_high, old.size_gb, old.heat, 0.9, "fc", old.location,
                              period_heat=200.0, period="month-end close")  # fmt: skip
    plan = plan_ilm(parts, POLICY, now=NOW, months=12).tables[0]
    without = plan_ilm(monthly(), POLICY, now=NOW, months=12).tables[0]
    p, q = (next(x for x in t.partitions if x.partition == 9) for t in (plan, without))
    assert tier_at(q, NOW.date()) == "sata"  # judged on its everyday heat alone it is demoted now
    for m in range(13):  # with its month-end heat it stays on fc all year
        assert tier_at(p, add_months(NOW.date(), m)) == "fc", p.moves
    assert not p.moves or "not demoted between periods" in p.moves[0].reason


def test_ilm_promotes_a_cold_partition_that_turned_hot() -> None:
    parts = monthly(current="sata")
    old = parts[5]  # 18 months old, on sata, and suddenly as busy as last month
    parts[5] = PartitionInput(old.engine, old.server, old.database, old.table, old.partition, old.key,
                              old.range_low, old.range_high, old.size_gb, 500.0, 0.9, "sata", old.location)  # fmt: skip
    p = next(x for x in plan_ilm(parts, POLICY, now=NOW, months=12).tables[0].partitions if x.partition == 6)
    assert p.moves and p.moves[0].date == NOW.date() and p.moves[0].to_tier in ("flash", "fc")
