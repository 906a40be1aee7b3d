"""Change windows: which approved moves fit in which of the coming windows, and how long each takes.

Pure: plain moves and the policy's `change_windows:` section in, a schedule out; `now` is a
parameter, never the clock. Window times are wall-clock times in the window's time zone and are
turned into instants with zoneinfo, so a window over a daylight-saving change is as long as it
really is (Sunday 01:00-05:00 Europe/Berlin lasts 3 h on the spring night, 5 h on the autumn one).

A move's duration is its size ÷ the copy rate (per tier pair, else per kind of move, else the
default), plus an overhead share for how the move is made (EMPTYFILE, rebuild, REBALANCE, offline
copy), plus the restart time when the object needs one (tempdb). Moves are placed one after another,
highest predicted saving first (then the earliest approved), into the first window with both time
and data cap left. A move larger than the cap or longer than every window is flagged with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from advisors.quantities import duration_minutes, gb, pct
from advisors.quantities import rate as rate_text
from policies.model import ChangeWindow, ChangeWindowPolicy, MoveAction

MB = 1024**2
GB = 1024**3
WEEKDAY_INDEX = {d: i for i, d in enumerate(("mon", "tue", "wed", "thu", "fri", "sat", "sun"))}
ACTION_WORDS: dict[str, str] = {
    "emptyfile": "EMPTYFILE",
    "rebuild": "rebuild",
    "rebalance": "REBALANCE",
    "offline_copy": "offline copy",
    "restart": "restart",
}


@dataclass(frozen=True)
class Move:
    """One approved move, as the scheduler sees it."""

    id: int
    name: str
    engine: str  # sqlserver | db2
    kind: str  # filegroup, data_file, log_file, tempdb, partition, tablespace
    size_bytes: int | None
    from_tier: str | None
    to_tier: str
    approved_at: datetime
    priority: float = 0.0  # predicted saving, ms of I/O wait per second: the higher, the sooner
    label: str = ""  # how the page names it, e.g. "SQL1 · Sales · filegroup FG_ORDERS"
    # moves sharing a non-empty key run in one window, back to back: one offline script takes their
    # database offline once for all of them (issue #30, N8), so the plan cannot split them
    together: str = ""


@dataclass(frozen=True)
class Estimate:
    action: MoveAction
    gb: float  # data copied: counts against the window's cap
    rate_mb_s: float
    copy_s: float
    overhead_share: float
    restart_s: float  # 0 unless the move needs an instance restart
    text: str  # "FG_ORDERS 380 GB at 200 MB/s ≈ 32 min + 50 % EMPTYFILE overhead ≈ 49 min"

    @property
    def total_s(self) -> float:
        return self.copy_s * (1 + self.overhead_share) + self.restart_s

    @property
    def restart(self) -> bool:
        return self.action == "restart" or self.restart_s > 0


@dataclass(frozen=True)
class Placed:
    move: Move
    estimate: Estimate
    window: int | None  # index into Schedule.windows; None: not placed
    starts_at: datetime | None  # planned start (UTC), moves running one after another
    reason: str


@dataclass
class PlannedWindow:
    name: str
    start: datetime  # aware, in the window's time zone
    end: datetime
    opens_at: datetime  # UTC: the start, or `now` for a window already open
    cap_gb: float
    moves: list[Placed] = field(default_factory=list)
    used_gb: float = 0.0
    used_s: float = 0.0

    @property
    def length_s(self) -> float:
        return (self.end.astimezone(UTC) - self.opens_at).total_seconds()

    @property
    def left_s(self) -> float:
        return self.length_s - self.used_s

    @property
    def left_gb(self) -> float:
        return self.cap_gb - self.used_gb

    @property
    def label(self) -> str:
        return f"{self.start:%A %Y-%m-%d %H:%M}–{self.end:%H:%M} {self.start.tzinfo}"


@dataclass(frozen=True)
class Schedule:
    now: datetime
    windows: tuple[PlannedWindow, ...]
    unfit: tuple[Placed, ...]  # larger than the cap or longer than any window: never fits as it is
    waiting: tuple[Placed, ...]  # would fit a window, but the planned ones are full

    @property
    def next_window(self) -> PlannedWindow | None:
        return self.windows[0] if self.windows else None


def duration_text(seconds: float) -> str:
    """'49 min', '2 h 11 min', '4 h' (advisors.quantities' durations), '< 1 min' for a move of
    seconds that the minutes would call nothing."""
    if 0 < seconds < 30:
        return "< 1 min"
    return duration_minutes(round(seconds / 60))


def action_for(engine: str, kind: str, name: str) -> MoveAction:
    """How tierwise's scripts move this kind of object (docs/running-scripts.md)."""
    if kind == "tempdb":
        return "restart"  # tempdb files are recreated at start: nothing is copied
    if kind == "log_file":
        return "offline_copy"
    if kind == "partition":
        return "rebuild"  # SQL Server: index rebuild onto the new filegroup; DB2: ADMIN_MOVE_TABLE
    if engine == "db2":
        return "rebalance"
    if name.upper() == "PRIMARY":
        return "offline_copy"  # the primary filegroup cannot be emptied online
    return "emptyfile"


def copy_rate(policy: ChangeWindowPolicy, action: MoveAction, from_tier: str | None, to_tier: str) -> float:
    """MB/s of one kind of move between two tiers: the tier pair's rate, else the kind's, else the
    default. The change-window plan and the scripts (their offline copy's downtime) both use it."""
    return policy.copy_rate_by_tiers.get(f"{from_tier}->{to_tier}") or policy.copy_rate_by_action.get(
        action, policy.copy_rate_mb_s
    )


def estimate(move: Move, policy: ChangeWindowPolicy) -> Estimate:
    action = action_for(move.engine, move.kind, move.name)
    restart_s = (
        policy.restart_minutes * 60 if (action == "restart" or move.kind in policy.restart_needed) else 0.0
    )
    restart_words = f"instance restart ≈ {duration_text(restart_s)}"
    if action == "restart":
        size = "" if move.size_bytes is None else f" {gb(move.size_bytes / GB)}"
        text = f"{move.name}{size}: nothing copied (the files are recreated at start); {restart_words}"
        return Estimate(action, 0.0, 0.0, 0.0, 0.0, restart_s, text + "; needs an instance restart")
    rate = copy_rate(policy, action, move.from_tier, move.to_tier)
    size_bytes = move.size_bytes or 0
    size_gb = size_bytes / GB
    copy_s = size_bytes / MB / rate
    share = policy.overhead.get(action, 0.0)
    text = f"{move.name} {gb(size_gb)} at {rate_text(rate, 'MB/s')} ≈ {duration_text(copy_s)}"
    if share:
        text += f" + {pct(share)} {ACTION_WORDS[action]} overhead ≈ {duration_text(copy_s * (1 + share))}"
    if restart_s:
        total = copy_s * (1 + share) + restart_s
        text += f" + {restart_words} ≈ {duration_text(total)}; needs an instance restart"
    return Estimate(action, size_gb, rate, copy_s, share, restart_s, text)


def occurrences(policy: ChangeWindowPolicy, now: datetime) -> list[PlannedWindow]:
    """The next `horizon_windows` windows that have not ended at `now`, earliest first."""
    found: list[PlannedWindow] = []
    days = 7 * policy.horizon_windows + 2
    for w in policy.windows:
        zone = ZoneInfo(w.time_zone)
        first = now.astimezone(zone).date() - timedelta(
            days=1
        )  # one that started yesterday may still be open
        for offset in range(days):
            day = first + timedelta(days=offset)
            if day.weekday() not in {WEEKDAY_INDEX[d] for d in w.days}:
                continue
            start, end = _bounds(w, day, zone)
            end_utc = end.astimezone(UTC)
            if end_utc <= now:
                continue
            opens = max(start.astimezone(UTC), now.astimezone(UTC))
            found.append(PlannedWindow(w.name, start, end, opens, policy.cap_gb_per_window))
    found.sort(key=lambda p: (p.opens_at, p.end.astimezone(UTC)))
    return found[: policy.horizon_windows]


def _bounds(w: ChangeWindow, day: date, zone: ZoneInfo) -> tuple[datetime, datetime]:
    start = datetime.combine(day, w.start, tzinfo=zone)
    end_day = day if w.end > w.start else day + timedelta(days=1)
    return start, datetime.combine(end_day, w.end, tzinfo=zone)


def _units(moves: list[Move]) -> list[list[Move]]:
    """The moves as the plan places them: each alone, or with the moves it must run together with;
    the most urgent unit first (its most urgent member, then the earliest approval)."""
    units: dict[str, list[Move]] = {}
    for m in sorted(moves, key=lambda m: (-m.priority, m.approved_at, m.id)):
        units.setdefault(m.together or f"#{m.id}", []).append(m)
    return list(units.values())


def _refused(unit: list[Move], ests: list[Estimate], with_others: str, why: str) -> list[Placed]:
    return [Placed(m, e, None, None, f"{why}{with_others}") for m, e in zip(unit, ests, strict=True)]


def schedule(moves: list[Move], policy: ChangeWindowPolicy, *, now: datetime) -> Schedule:
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    windows = occurrences(policy, now)
    longest = max(windows, key=lambda w: w.length_s) if windows else None
    unfit: list[Placed] = []
    waiting: list[Placed] = []
    for unit in _units(moves):
        ests = [estimate(m, policy) for m in unit]
        names = ", ".join(m.name for m in unit)
        with_others = "" if len(unit) == 1 else f" (one offline period with {names})"
        unsized = [
            m.name for m, e in zip(unit, ests, strict=True) if m.size_bytes is None and e.action != "restart"
        ]
        if unsized:
            why = f"{', '.join(unsized)}: size not measured yet, so the copy time cannot be estimated; plan it by hand"
            unfit += _refused(unit, ests, with_others, why)
            continue
        unit_gb = sum(e.gb for e in ests)
        unit_s = sum(e.total_s for e in ests)
        text = "; ".join(e.text for e in ests)
        if unit_gb > policy.cap_gb_per_window:
            why = (f"{text}; larger than the {gb(policy.cap_gb_per_window)} a window may move "
                   "(change_windows.cap_gb_per_window): split the move or raise the cap")  # fmt: skip
            unfit += _refused(unit, ests, with_others, why)
            continue
        if longest is None or unit_s > longest.length_s:
            how_long = "no window planned" if longest is None else (
                f"the longest window, {longest.label}, has {duration_text(longest.length_s)}")  # fmt: skip
            why = f"{text}; longer than any window ({how_long}): plan a longer window or a faster copy rate for it"
            unfit += _refused(unit, ests, with_others, why)
            continue
        placed = False
        for i, w in enumerate(windows):
            if unit_gb <= w.left_gb + 1e-9 and unit_s <= w.left_s + 1e-6:
                for m, est in zip(unit, ests, strict=True):
                    starts = w.opens_at + timedelta(seconds=w.used_s)
                    w.used_gb += est.gb
                    w.used_s += est.total_s
                    reason = (f"{est.text}; fits {w.label} ({duration_text(w.left_s)} left, "
                              f"{gb(w.left_gb)} of the {gb(policy.cap_gb_per_window)} cap left)")  # fmt: skip
                    if i > 0:
                        first = windows[0]
                        reason += (f"; no room in {first.label} ({duration_text(first.left_s)} and "
                                   f"{gb(first.left_gb)} left)")  # fmt: skip
                    w.moves.append(Placed(m, est, i, starts, reason + with_others))
                placed = True
                break
        if not placed:
            why = (f"{text}; no room in the next {len(windows)} windows (up to {windows[-1].label}): "
                   "it waits for a later one")  # fmt: skip
            waiting += _refused(unit, ests, with_others, why)
    return Schedule(now, tuple(windows), tuple(unfit), tuple(waiting))
