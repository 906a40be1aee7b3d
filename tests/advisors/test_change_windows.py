"""The change-window scheduler: table-driven cases with the reason text asserted, DST weeks, and
the policy section's validation."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from advisors.change_windows import GB, Move, action_for, duration_text, estimate, schedule
from policies.loader import PolicyError, load_policy, parse_policy
from policies.model import ChangeWindowPolicy

NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)  # a Wednesday; windows: Saturdays 01:00-05:00 UTC
SAT1 = "Saturday 2026-11-28 01:00–05:00 UTC"
SAT2 = "Saturday 2026-12-05 01:00–05:00 UTC"


def mv(name: str, gb: float | None, *, kind: str = "filegroup", engine: str = "sqlserver", priority: float = 1.0,
       from_tier: str = "fc", to_tier: str = "flash", rec_id: int = 0) -> Move:  # fmt: skip
    return Move(id=rec_id or abs(hash(name)) % 10_000, name=name, engine=engine, kind=kind,
                size_bytes=None if gb is None else int(gb * GB), from_tier=from_tier, to_tier=to_tier,
                approved_at=NOW - timedelta(days=1), priority=priority)  # fmt: skip


def policy(**kw: Any) -> ChangeWindowPolicy:
    return ChangeWindowPolicy.model_validate(kw)


@dataclass
class Case:
    id: str
    moves: list[Move]
    expect: dict[str, tuple[str, str]]  # name -> (where: "window N" | "unfit" | "waiting", reason)
    pol: dict[str, Any] = field(default_factory=dict)
    now: datetime = NOW


CASES = [
    Case(
        "fits",
        [mv("FG_ORDERS", 380)],
        {"FG_ORDERS": ("window 0", "FG_ORDERS 380 GB at 200 MB/s ≈ 32 min + 50 % EMPTYFILE overhead ≈ 49 min; "
                                   f"fits {SAT1} (3 h 11 min left, 120 GB of the 500 GB cap left)")},
    ),
    Case(
        "the bigger saving goes first, time adds up",
        [mv("FG_ORDERS", 380, priority=5), mv("FG_STAGE", 200, priority=9, kind="data_file")],
        {"FG_STAGE": ("window 0", "FG_STAGE 200 GB at 200 MB/s ≈ 17 min + 50 % EMPTYFILE overhead ≈ 26 min; "
                                  f"fits {SAT1} (3 h 34 min left, 400 GB of the 600 GB cap left)"),
         "FG_ORDERS": ("window 0", "FG_ORDERS 380 GB at 200 MB/s ≈ 32 min + 50 % EMPTYFILE overhead ≈ 49 min; "
                                   f"fits {SAT1} (2 h 46 min left, 20.0 GB of the 600 GB cap left)")},
        pol={"cap_gb_per_window": 600},
    ),
    Case(
        "spills to the next window when the cap is used; a small one fills the gap",
        [mv("FG_B", 300, priority=2), mv("FG_A", 300, priority=3), mv("FG_C", 100, priority=1)],
        {"FG_A": ("window 0", "FG_A 300 GB at 200 MB/s ≈ 26 min + 50 % EMPTYFILE overhead ≈ 38 min; "
                              f"fits {SAT1} (3 h 22 min left, 200 GB of the 500 GB cap left)"),
         "FG_B": ("window 1", "FG_B 300 GB at 200 MB/s ≈ 26 min + 50 % EMPTYFILE overhead ≈ 38 min; "
                              f"fits {SAT2} (3 h 22 min left, 200 GB of the 500 GB cap left); "
                              f"no room in {SAT1} (3 h 22 min and 200 GB left)"),
         "FG_C": ("window 0", "FG_C 100 GB at 200 MB/s ≈ 9 min + 50 % EMPTYFILE overhead ≈ 13 min; "
                              f"fits {SAT1} (3 h 9 min left, 100 GB of the 500 GB cap left)")},
    ),
    Case(
        "spills when the time is used",
        [mv("TS_A", 400, engine="db2", kind="tablespace", priority=2), mv("TS_B", 100, engine="db2", kind="tablespace")],
        {"TS_A": ("window 0", "TS_A 400 GB at 40.0 MB/s ≈ 2 h 51 min + 30 % REBALANCE overhead ≈ 3 h 42 min; "
                              f"fits {SAT1} (18 min left, 100 GB of the 500 GB cap left)"),
         "TS_B": ("window 1", "TS_B 100 GB at 40.0 MB/s ≈ 43 min + 30 % REBALANCE overhead ≈ 55 min; "
                              f"fits {SAT2} (3 h 5 min left, 400 GB of the 500 GB cap left); "
                              f"no room in {SAT1} (18 min and 100 GB left)")},
        pol={"copy_rate_by_action": {"rebalance": 40}},
    ),
    Case(
        "larger than the cap",
        [mv("FG_BIG", 600)],
        {"FG_BIG": ("unfit", "FG_BIG 600 GB at 200 MB/s ≈ 51 min + 50 % EMPTYFILE overhead ≈ 1 h 17 min; "
                             "larger than the 500 GB a window may move (change_windows.cap_gb_per_window): "
                             "split the move or raise the cap")},
    ),
    Case(
        "longer than any window",
        [mv("P_2019", 450, kind="partition")],
        {"P_2019": ("unfit", "P_2019 450 GB at 20.0 MB/s ≈ 6 h 24 min + 100 % rebuild overhead ≈ 12 h 48 min; "
                             f"longer than any window (the longest window, {SAT1}, has 4 h): "
                             "plan a longer window or a faster copy rate for it")},
        pol={"copy_rate_by_action": {"rebuild": 20}},
    ),
    Case(
        "tier pair rate wins over the kind's rate",
        [mv("FG_ARCH", 50, from_tier="fc", to_tier="sata")],
        {"FG_ARCH": ("window 0", "FG_ARCH 50.0 GB at 80.0 MB/s ≈ 11 min + 50 % EMPTYFILE overhead ≈ 16 min; "
                                 f"fits {SAT1} (3 h 44 min left, 450 GB of the 500 GB cap left)")},
        pol={"copy_rate_by_action": {"emptyfile": 150}, "copy_rate_by_tiers": {"fc->sata": 80}},
    ),
    Case(
        "tempdb: nothing copied, restart noted",
        [mv("tempdev", 8, kind="tempdb")],
        {"tempdev": ("window 0", "tempdev 8.0 GB: nothing copied (the files are recreated at start); instance "
                                 f"restart ≈ 15 min; needs an instance restart; fits {SAT1} (3 h 45 min left, "
                                 "500 GB of the 500 GB cap left)")},
    ),
    Case(
        "log move with a restart where the policy says so",
        [mv("Sales_log", 20, kind="log_file")],
        {"Sales_log": ("window 0", "Sales_log 20.0 GB at 200 MB/s ≈ 2 min + 10 % offline copy overhead ≈ 2 min "
                                   "+ instance restart ≈ 15 min ≈ 17 min; needs an instance restart; "
                                   f"fits {SAT1} (3 h 43 min left, 480 GB of the 500 GB cap left)")},
        pol={"restart_needed": ["tempdb", "log_file"]},
    ),
    Case(
        "a window already open has only what is left of it",
        [mv("FG_LATE", 200, priority=2), mv("FG_LATER", 400)],
        {"FG_LATE": ("window 0", "FG_LATE 200 GB at 200 MB/s ≈ 17 min + 50 % EMPTYFILE overhead ≈ 26 min; "
                                 f"fits {SAT1} (4 min left, 300 GB of the 500 GB cap left)"),
         "FG_LATER": ("window 1", "FG_LATER 400 GB at 200 MB/s ≈ 34 min + 50 % EMPTYFILE overhead ≈ 51 min; "
                                  f"fits {SAT2} (3 h 9 min left, 100 GB of the 500 GB cap left); "
                                  f"no room in {SAT1} (4 min and 300 GB left)")},
        now=datetime(2026, 11, 28, 4, 30, tzinfo=UTC),
    ),
    Case(
        "full windows: waits",
        [mv("FG_1", 450, priority=3), mv("FG_2", 450, priority=2), mv("FG_3", 450, priority=1)],
        {"FG_3": ("waiting", "FG_3 450 GB at 200 MB/s ≈ 38 min + 50 % EMPTYFILE overhead ≈ 58 min; no room in "
                             f"the next 2 windows (up to {SAT2}): it waits for a later one")},
        pol={"horizon_windows": 2},
    ),
    Case(
        "size not measured",
        [mv("FG_NEW", None)],
        {"FG_NEW": ("unfit", "FG_NEW: size not measured yet, so the copy time cannot be estimated; plan it by hand")},
    ),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_schedule_cases(case: Case) -> None:
    out = schedule(case.moves, policy(**case.pol), now=case.now)
    got: dict[str, tuple[str, str]] = {}
    for i, w in enumerate(out.windows):
        for p in w.moves:
            got[p.move.name] = (f"window {i}", p.reason)
    got.update({p.move.name: ("unfit", p.reason) for p in out.unfit})
    got.update({p.move.name: ("waiting", p.reason) for p in out.waiting})
    for name, expected in case.expect.items():
        assert got[name] == expected
    assert len(got) == len(case.moves)


def test_moves_in_a_window_run_one_after_another_from_its_opening() -> None:
    out = schedule([mv("FG_A", 300, priority=2), mv("FG_C", 100)], policy(), now=NOW)
    first = out.windows[0]
    assert [p.move.name for p in first.moves] == ["FG_A", "FG_C"]
    assert first.moves[0].starts_at == datetime(2026, 11, 28, 1, 0, tzinfo=UTC)
    assert first.moves[1].starts_at == datetime(2026, 11, 28, 1, 0, tzinfo=UTC) + timedelta(seconds=2304)
    assert first.used_gb == pytest.approx(400)
    assert out.next_window is first and len(out.windows) == 12


def test_moves_taken_offline_together_share_one_window_back_to_back() -> None:
    """One offline script takes a database offline once for all its offline moves (issue #30, N8):
    the plan keeps them in one window, one after another, even when a more urgent move comes
    between them by priority, and spills them together when they do not fit."""
    sales = [replace(mv("PRIMARY", 150, priority=5), together="1/sqlserver/Sales"),
             replace(mv("Sales_log", 150, kind="log_file", priority=1), together="1/sqlserver/Sales")]  # fmt: skip
    other = mv("FG_A", 150, priority=3)
    out = schedule([*sales, other], policy(cap_gb_per_window=320), now=NOW)
    first, second = out.windows[0], out.windows[1]
    assert [p.move.name for p in first.moves] == ["PRIMARY", "Sales_log"]  # together, FG_A not between
    assert first.moves[1].starts_at == first.moves[0].starts_at + timedelta(
        seconds=first.moves[0].estimate.total_s
    )
    assert all(p.reason.endswith("(one offline period with PRIMARY, Sales_log)") for p in first.moves)
    assert [p.move.name for p in second.moves] == ["FG_A"]  # the cap left 20 GB in the first
    # too big together for any window: both refused, with the reason for the pair
    out = schedule(sales, policy(cap_gb_per_window=200), now=NOW)
    assert [p.move.name for p in out.unfit] == ["PRIMARY", "Sales_log"] and not out.windows[0].moves
    assert "larger than the 200 GB a window may move" in out.unfit[0].reason
    # without the key the same two moves are planned apart
    apart = schedule([mv("PRIMARY", 150, priority=5), mv("Sales_log", 150, kind="log_file", priority=1)],
                     policy(cap_gb_per_window=200), now=NOW)  # fmt: skip
    assert [len(w.moves) for w in apart.windows[:2]] == [1, 1]


@pytest.mark.parametrize(
    ("now", "hours", "move_h", "where"),
    [
        # spring forward (2026-03-29, 02:00 -> 03:00): Sunday 01:00-05:00 Berlin lasts 3 h
        (datetime(2026, 3, 25, 12, 0, tzinfo=UTC), [3, 4], 3.5, 1),
        # fall back (2026-10-25, 03:00 -> 02:00): it lasts 5 h, so a 4.5 h move fits the first one
        (datetime(2026, 10, 21, 12, 0, tzinfo=UTC), [5, 4], 4.5, 0),
    ],
    ids=["spring", "autumn"],
)
def test_dst_weeks(now: datetime, hours: list[int], move_h: float, where: int) -> None:
    pol = policy(windows=[{"name": "Sunday", "days": ["sun"], "start": "01:00", "end": "05:00",
                           "time_zone": "Europe/Berlin"}], overhead={}, cap_gb_per_window=3000,
                 copy_rate_mb_s=100, horizon_windows=2)  # fmt: skip
    gb = move_h * 3600 * 100 / 1024
    out = schedule([mv("TS_HIST", gb, engine="db2", kind="tablespace")], pol, now=now)
    assert [w.length_s / 3600 for w in out.windows] == hours
    assert len(out.windows[where].moves) == 1
    reason = out.windows[where].moves[0].reason
    first, second = (w.label for w in out.windows)
    if where == 1:
        # 1,230 GB to move, 1,770 of the 3,000 GB cap left: in TB from 1,024 GB (advisors.quantities)
        assert reason == (f"TS_HIST 1.2 TB at 100 MB/s ≈ 3 h 30 min; fits {second} (30 min left, "
                          f"1.7 TB of the 2.9 TB cap left); no room in {first} (3 h and 2.9 TB left)")  # fmt: skip
        assert first == "Sunday 2026-03-29 01:00–05:00 Europe/Berlin"
        assert out.windows[0].opens_at == datetime(2026, 3, 29, 0, 0, tzinfo=UTC)  # 01:00 CET
    else:
        # 1,582 GB to move, 1,418 of the 3,000 GB cap left
        assert reason == (f"TS_HIST 1.5 TB at 100 MB/s ≈ 4 h 30 min; fits {first} (30 min left, "
                          "1.4 TB of the 2.9 TB cap left)")  # fmt: skip
        assert out.windows[0].opens_at == datetime(2026, 10, 24, 23, 0, tzinfo=UTC)  # 01:00 CEST


def test_window_crossing_midnight_and_several_windows_in_order() -> None:
    pol = policy(windows=[{"days": ["fri"], "start": "22:00", "end": "02:00"},
                          {"days": ["sun", "wed"], "start": "03:00", "end": "04:00", "time_zone": "America/New_York"}],
                 horizon_windows=3)  # fmt: skip
    out = schedule([], pol, now=NOW)
    assert [w.label for w in out.windows] == [
        "Friday 2026-11-27 22:00–02:00 UTC",
        "Sunday 2026-11-29 03:00–04:00 America/New_York",
        "Wednesday 2026-12-02 03:00–04:00 America/New_York",
    ]
    assert out.windows[0].length_s == 4 * 3600


@pytest.mark.parametrize(
    ("engine", "kind", "name", "action"),
    [
        ("sqlserver", "filegroup", "FG_ORDERS", "emptyfile"),
        ("sqlserver", "filegroup", "PRIMARY", "offline_copy"),
        ("sqlserver", "log_file", "Sales_log", "offline_copy"),
        ("sqlserver", "tempdb", "tempdev", "restart"),
        ("sqlserver", "partition", "p3", "rebuild"),
        ("db2", "tablespace", "TS_ORDERS", "rebalance"),
        ("db2", "partition", "PART3", "rebuild"),
    ],
)
def test_action_for(engine: str, kind: str, name: str, action: str) -> None:
    assert action_for(engine, kind, name) == action


def test_duration_text_and_estimate_example_from_the_design() -> None:
    assert [duration_text(s) for s in (0, 10, 90, 3600, 7860)] == [
        "0 min",
        "< 1 min",
        "2 min",
        "1 h",
        "2 h 11 min",
    ]
    est = estimate(mv("FG_ORDERS", 380), policy())
    assert est.text == "FG_ORDERS 380 GB at 200 MB/s ≈ 32 min + 50 % EMPTYFILE overhead ≈ 49 min"
    assert est.total_s == pytest.approx(380 * 1024 / 200 * 1.5)
    with pytest.raises(ValueError, match="timezone-aware"):
        schedule([], policy(), now=datetime(2026, 11, 25, 12, 0))


POLICY_HEAD = load_policy().model_dump_json()


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"windows": [{"days": ["sat"], "start": "01:00", "end": "05:00", "time_zone": "Mars/Olympus"}]},
         "change_windows.windows[0].time_zone: Value error, unknown time zone 'Mars/Olympus'"),
        ({"windows": [{"days": ["saturday"], "start": "01:00", "end": "05:00"}]}, "change_windows.windows[0].days[0]"),
        ({"windows": []}, "change_windows.windows: List should have at least 1 item"),
        ({"cap_gb_per_window": 0}, "change_windows.cap_gb_per_window: Input should be greater than 0"),
        ({"copy_rate_mb_s": -1}, "change_windows.copy_rate_mb_s: Input should be greater than 0"),
        ({"overhead": {"shrink": 0.5}}, "change_windows.overhead.shrink"),
        ({"overhead": {"emptyfile": -0.5}}, "emptyfile: an overhead share must not be negative"),
        ({"copy_rate_by_action": {"rebuild": 0}}, "rebuild: a copy rate must be more than 0 MB/s"),
        ({"copy_rate_by_tiers": {"fc-flash": 100}}, "'fc-flash': write a tier pair as 'from->to'"),
        ({"copy_rate_by_tiers": {"fc->flsh": 100}}, "change_windows.copy_rate_by_tiers: 'fc->flsh' names unknown tier 'flsh'"),
        ({"restart_needed": ["filegroup"]}, "change_windows.restart_needed[0]"),
        ({"window": []}, "change_windows.window: Extra inputs are not permitted"),
    ],
)  # fmt: skip
def test_policy_section_errors_name_the_field(section: dict[str, Any], message: str) -> None:
    import json

    import yaml

    data = json.loads(POLICY_HEAD)
    data["change_windows"] = section
    with pytest.raises(PolicyError) as exc:
        parse_policy(yaml.safe_dump(data), source="p.yaml")
    assert message in str(exc.value)


def test_shipped_policy_has_the_saturday_window() -> None:
    cw = load_policy().change_windows
    assert [(w.name, w.days, str(w.start), str(w.end), w.time_zone) for w in cw.windows] == [
        ("Saturday night", ["sat"], "01:00:00", "05:00:00", "UTC")
    ]
    assert cw.cap_gb_per_window == 500 and cw.restart_needed == ["tempdb"]
