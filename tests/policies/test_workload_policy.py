"""Issue #9 policy sections: maintenance windows, burst detection, flash endurance, business
calendar. Valid files load; mistakes are reported with the field's path."""

from __future__ import annotations

from datetime import time

import pytest

from policies.loader import DEFAULT_POLICY, PolicyError, load_policy, parse_policy

BASE = DEFAULT_POLICY.read_text(encoding="utf-8")


def with_section(text: str) -> str:
    """The default policy with its empty `maintenance_windows` / `business_calendar` replaced."""
    out = BASE
    for key in ("maintenance_windows", "business_calendar"):
        if text.startswith(key + ":"):
            start = out.index(key + ":")
            end = out.index("\n", start)
            out = out[:start] + text + out[end:]
    return out


def test_default_policy_declares_the_flash_budget_and_no_windows() -> None:
    p = load_policy()
    assert p.tier("flash").endurance_dwpd == 1 and p.tier("fc").endurance_dwpd is None
    assert p.maintenance_windows == [] and p.business_calendar == []
    assert p.burst_detection.enabled and p.burst_detection.min_avg_read_bytes == 512 * 1024
    assert p.endurance.tier_max_budget_share == 1.0
    # 1 DWPD on 8 x 960 GB drives in RAID 5 7+1: 7,680 GB raw, and each host byte writes data and parity
    assert p.tier("flash").raw_capacity_gb == pytest.approx(7680)
    assert (
        p.tier("flash").write_budget_gb_day == pytest.approx(1 * 7680 / 2)
        and p.tier("fc").write_budget_gb_day is None
    )


def test_settings_of_the_rule_based_advice_still_load_and_are_named() -> None:
    """A policy saved before the benefit model must not stop the service: the retired settings
    are ignored and said so; min_benefit_ms carries over to benefit.min_saving_ms_per_io."""
    text = BASE.replace(
        "  tier_max_budget_share: 1.0",
        "  tier_max_budget_share: 1.0\n  object_max_budget_share: 0.25",
    ).replace("  cold_max_iops: 5", "  cold_max_iops: 5\n  flash_min_read_iops: 180\n  min_benefit_ms: 3.5")
    # an old file has no benefit.min_saving_ms_per_io (when it has, that one wins)
    start = text.index("  min_saving_ms_per_io:")
    text = text[:start] + text[text.index("\n", start) + 1 :]
    p = parse_policy(text, source="old.yaml")
    assert p.benefit.min_saving_ms_per_io == 3.5
    assert p.retired_settings == [
        "classification.flash_min_read_iops is retired (flash is decided by the I/O wait it saves): ignored",
        "classification.min_benefit_ms is retired: read as benefit.min_saving_ms_per_io",
        "endurance.object_max_budget_share is retired (the write budget is one constraint on all units "
        "placed): ignored",
    ]
    assert load_policy().retired_settings == []


def test_windows_and_periods_load() -> None:
    p = parse_policy(
        with_section(
            "maintenance_windows:\n"
            "  - {name: nightly backup, kind: backup, start: '01:00', end: '03:00', time_zone: Europe/Paris}\n"
            "  - {name: checkdb, kind: dbcc, days: [sun], start: 22:30, end: '02:00', database: Sales,"
            " objects: [FG_*]}"
        ).replace(
            "business_calendar: []",
            "business_calendar:\n"
            "  - {name: close, kind: month_end, last_days: 2, first_days: 1}\n"
            "  - {name: sale, kind: custom, start: '12-20', end: '01-10', hot_min_ratio: 2}",
        ),
        source="mine.yaml",
    )
    backup, checkdb = p.maintenance_windows
    assert (backup.start, backup.end, backup.time_zone, len(backup.days)) == (
        time(1),
        time(3),
        "Europe/Paris",
        7,
    )
    # unquoted 22:30 is a base-60 number to YAML 1.1: read as minutes since midnight
    assert (checkdb.start, checkdb.days, checkdb.database, checkdb.objects) == (
        time(22, 30),
        ["sun"],
        ["Sales"],
        ["FG_*"],
    )
    assert [c.kind for c in p.business_calendar] == ["month_end", "custom"]


ERRORS = [
    ("maintenance_windows:\n  - {name: b, kind: bakup, start: '01:00', end: '02:00'}",
     "mine.yaml: maintenance_windows[0].kind: Input should be 'backup', 'dbcc', 'index' or 'etl'"),
    ("maintenance_windows:\n  - {name: b, kind: backup, start: '01:00', end: '02:00', time_zone: Mars/Base}",
     "maintenance_windows[0].time_zone: Value error, unknown time zone 'Mars/Base'"),
    ("maintenance_windows:\n  - {name: b, kind: backup, start: '01:00', end: '01:00'}",
     "maintenance_windows[0]: Value error, start and end are the same time"),
    ("maintenance_windows:\n  - {name: b, kind: backup, start: '25:00', end: '01:00'}",
     "maintenance_windows[0].start:"),
    ("maintenance_windows:\n  - {name: b, kind: backup, days: [monday], start: '01:00', end: '02:00'}",
     "maintenance_windows[0].days[0]: Input should be 'mon'"),
    ("maintenance_windows:\n  - {name: b, kind: backup, start: '01:00', end: '02:00'}\n"
     "  - {name: b, kind: dbcc, start: '03:00', end: '04:00'}",
     "maintenance_windows: names must be unique (b used twice)"),
    ("business_calendar:\n  - {name: x, kind: custom, start: '13-01', end: '01-10'}",
     "business_calendar[0].start: Value error, '13-01' is not a month-day 'MM-DD'"),
    ("business_calendar:\n  - {name: x, kind: custom, start: '12-01'}",
     "business_calendar[0]: Value error, a custom period needs start and end"),
    ("business_calendar:\n  - {name: x, kind: month_end, start: '12-01', end: '12-31'}",
     "business_calendar[0]: Value error, start/end are for custom periods"),
    ("business_calendar:\n  - {name: x, kind: month_end, last_days: 0, first_days: 0}",
     "business_calendar[0]: Value error, last_days and first_days are both 0"),
    ("business_calendar:\n  - {name: x, kind: month_end, hot_min_ratio: 1}",
     "business_calendar[0].hot_min_ratio: Input should be greater than 1"),
]  # fmt: skip


@pytest.mark.parametrize(("section", "message"), ERRORS)
def test_mistakes_name_the_field(section: str, message: str) -> None:
    with pytest.raises(PolicyError) as err:
        parse_policy(with_section(section), source="mine.yaml")
    assert message in str(err.value), str(err.value)


def test_endurance_and_burst_fields_are_checked() -> None:
    assert "    endurance_dwpd: 1 " in BASE
    text = BASE.replace("    endurance_dwpd: 1 ", "    endurance_dwpd: 0 ").replace(
        "  tier_max_budget_share: 1.0", "  tier_max_budget_share: 2.5"
    )
    with pytest.raises(PolicyError) as err:
        parse_policy(text, source="mine.yaml")
    assert "tiers[0].endurance_dwpd: Input should be greater than 0" in str(err.value)
    assert "endurance.tier_max_budget_share: Input should be less than or equal to 2" in str(err.value)
