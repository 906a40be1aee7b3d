"""Verify after change: a move's measured days after it against the same weekdays before it.

Plain data in, plain data out. The caller gives, per clock hour (UTC), the interval counters of
the moved unit, of unmoved objects on the tier it left (the controls) and of the other objects on
the tier it joined, for the window before the change and the window after it.

The method, so that a verdict survives a sceptic (docs/verification.md has a worked example):

- **Was it moved?** `seen_moved` checks that every file of the unit is on the destination tier
  from the change on; otherwise the verdict is "not moved", whatever the latencies did.
- **Day-level pairs by hour of week**: each day after the move is paired with the same weekday
  before it, hour by hour (after hour t with before hour t - lag, lag a whole number of weeks). A
  day's effect is the log ratio of after to before I/O wait *at the before hours' read and write
  counts*, so a changed read/write mix or a busier hour is not mistaken for a faster disk.
- **Controls**: the same log ratio for unmoved objects on the source tier over the same hours is
  subtracted (difference in differences), so a quieter or busier array is not credited to the move.
- **One-sided load guards**: a gain is credited only from days with at least `credit_min_load` x
  the before day's I/O (less load flatters latency); a regression is blamed only from days with at
  most `blame_max_load` x (more load excuses it).
- **An interval, not a guess**: a t interval over the days' effects. Improved when even its gain
  end is above zero; regressed when all of it is past the margins; no measurable effect when it
  lies within the equivalence margin; otherwise inconclusive ("extend to 14 days").
- **The destination's band**: a promotion that lands above the faster tier's normal band is "outside
  band", not improved, and never a regression (the array is the suspect, not the move); a demotion
  is a regression only above the slower tier's band.
- **The tier it joined**, per I/O class at its before counts, with its own interval and the moved
  unit's share of the tier's I/O.

The windows and pairs are in verify_windows.py, the interval arithmetic in verify_stats.py.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from dataclasses import replace as dc_replace
from datetime import datetime, timedelta
from statistics import fmean, stdev
from typing import Any

from advisors import quantities as q
from advisors.verify_stats import (
    Interval,
    RankInterval,
    hodges_lehmann,
    pct,
    pct_change,
    t_interval,
    t_quantile,
    week_variance,
)
from advisors.verify_windows import DAY, HOUR, Day, HourTotals, Slots, pair_days
from policies.model import VerificationPolicy

__all__ = [  # the windows and the interval arithmetic live in verify_windows / verify_stats
    "DAY", "HOUR", "Day", "HourTotals", "Interval", "RankInterval", "Slots", "hodges_lehmann", "pair_days", "pct",
    "t_interval", "week_variance",
]  # fmt: skip

IMPROVED, NO_EFFECT, REGRESSED = "improved", "no_effect", "regressed"
OUTSIDE_BAND, WITHIN_BAND = "outside_band", "within_band"
INCONCLUSIVE, NOT_MOVED = "inconclusive", "not_moved"
UNCONTROLLED = "uncontrolled"  # no fair control: what the array did is not told from what the move did
VERIFIED = "verified"  # the verdict before intervals; kept so that old rows still read
# what a status means, in words, for pages, mails and the CLI
LABELS = {
    IMPROVED: "improved",
    NO_EFFECT: "no measurable effect",
    REGRESSED: "regressed",
    OUTSIDE_BAND: "outside the tier's band",
    WITHIN_BAND: "within the tier's band",
    INCONCLUSIVE: "inconclusive",
    NOT_MOVED: "not moved",
    UNCONTROLLED: "uncontrolled",
    VERIFIED: "verified",
}

# The design's constants (docs/verification.md, "Error rates"); bench/verify_power.py measures them.
# A synthetic control needs this many controls' worth of I/O weight (Kish's effective number,
# (sum w)^2 / sum w^2): one busy control and a few near-idle ones are one control, not four.
MIN_EFFECTIVE_CONTROLS = 3.0
# Early harm alarm: the unit's I/O wait at the before mix this many times what it was (a demotion:
# than the slower tier's band top plus the margin), over at least HARM_MIN_HOURS paired hours, on at
# least HARM_HOUR_SHARE of them one by one. Far past what an array's day-to-day swing does.
HARM_RATIO = 4.0
HARM_MIN_HOURS = 12
HARM_HOUR_SHARE = 0.75


# ---- figures for display ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Figures:
    """One side over the compared hours; rates are the mean of the hours' rates."""

    hours: float  # covered hours (seconds / 3600)
    reads: int
    writes: int
    read_iops: float
    write_iops: float
    avg_read_ms: float | None
    avg_write_ms: float | None
    avg_read_kb: float | None
    avg_write_kb: float | None
    io_ms_per_s: float  # I/O wait per second (read + write time)
    avg_io_kb: float | None

    @property
    def iops(self) -> float:
        return self.read_iops + self.write_iops

    @property
    def ios(self) -> int:
        return self.reads + self.writes

    @property
    def avg_ms(self) -> float | None:
        return self.io_ms_per_s / self.iops if self.iops > 0 else None

    @property
    def read_share(self) -> float | None:
        return self.read_iops / self.iops if self.iops > 0 else None

    def as_dict(self) -> dict[str, Any]:
        r = 3
        return {
            "hours": round(self.hours, 2),
            "reads": self.reads,
            "writes": self.writes,
            "iops": round(self.iops, r),
            "read_iops": round(self.read_iops, r),
            "write_iops": round(self.write_iops, r),
            "avg_read_ms": _round(self.avg_read_ms),
            "avg_write_ms": _round(self.avg_write_ms),
            "avg_ms": _round(self.avg_ms),
            "avg_read_kb": _round(self.avg_read_kb),
            "avg_write_kb": _round(self.avg_write_kb),
            "avg_io_kb": _round(self.avg_io_kb),
            "io_ms_per_s": round(self.io_ms_per_s, r),
        }


def _round(v: float | None, digits: int = 3) -> float | None:
    return None if v is None else round(v, digits)


def figures(hours: Iterable[HourTotals]) -> Figures:
    """Figures over some hours; each hour's rates count equally (a side with more night-time
    hours is not favoured)."""
    hs = [t for t in hours if t.seconds > 0]
    n = len(hs)
    total = HourTotals()
    rates = [0.0] * 6  # reads, bytes_read, read_ms, writes, bytes_written, write_ms per second
    for t in hs:
        total = total + t
        for i, v in enumerate(
            (t.reads, t.bytes_read, t.read_time_ms, t.writes, t.bytes_written, t.write_time_ms)
        ):
            rates[i] += v / t.seconds / n
    reads, bread, rms, writes, bwritten, wms = rates
    return Figures(
        hours=total.seconds / 3600,
        reads=total.reads,
        writes=total.writes,
        read_iops=reads,
        write_iops=writes,
        avg_read_ms=rms / reads if reads > 0 else None,
        avg_write_ms=wms / writes if writes > 0 else None,
        avg_read_kb=bread / reads / 1024 if reads > 0 else None,
        avg_write_kb=bwritten / writes / 1024 if writes > 0 else None,
        io_ms_per_s=rms + wms,
        avg_io_kb=(bread + bwritten) / (reads + writes) / 1024 if reads + writes > 0 else None,
    )


# Every measured figure reads as advisors.quantities says (the pages, the report and the CLI read
# them so), an unknown one as "n/a"; the policy's own thresholds are echoed as the policy writes
# them (`:g`, marked "echo:").
NA = "n/a"


# ---- was it moved? ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Placement:
    """Where one file of the moved unit is now, and since when (from the store's object rows)."""

    name: str
    location: str | None  # path or storage group, for the reasons
    tier: str | None  # the tier of its current location (policy's tier_of_location)
    since: datetime | None  # when it got there (a relocation seen by ingest); None: always there
    previous_tier: str | None
    first_seen: datetime
    last_seen: datetime


@dataclass(frozen=True, slots=True)
class Moved:
    moved: bool
    first_arrival: datetime | None  # the before-window ends here at the latest
    last_arrival: datetime | None  # the after-window starts here at the earliest
    reasons: tuple[str, ...]
    checked: bool = True  # False: where the unit should be is unknown, so the move could not be seen


def seen_moved(
    files: Sequence[Placement], to_tier: str | None, changed_at: datetime, *, settle: timedelta
) -> Moved:
    """Whether every file of the unit arrived on `to_tier` at the change. A file no longer seen
    within `settle` of the change was removed by the move (emptied into the others) and does not
    count; every kept file must have reached the tier within `settle` of the change (or be new
    since it): one that got there earlier was there before the change, one that got there later
    was moved by another change. An unknown destination is not a seen move: no verdict."""
    if to_tier is None:
        return Moved(False, None, None, (
            "cannot tell whether it moved: the destination is on no tier of the policy, so no verdict",
        ), checked=False)  # fmt: skip
    if not files:
        return Moved(False, None, None, ("not moved: no file of it is monitored",))
    newest = max(f.last_seen for f in files)
    kept = [f for f in files if f.last_seen >= newest - HOUR or f.last_seen >= changed_at + settle]
    gone = [f.name for f in files if f not in kept and f.last_seen > changed_at - settle]
    wrong = [f for f in kept if f.tier != to_tier]
    if wrong:
        return Moved(False, None, None, tuple(
            f"not moved: {f.name} ({f.location or '?'}) is on {f.tier or 'no known tier'}, not {to_tier}"
            for f in wrong
        ))  # fmt: skip
    arrivals: list[datetime] = []
    already: list[str] = []
    for f in kept:
        if f.since is not None and f.previous_tier != to_tier:
            arrival: datetime | None = f.since  # a relocation from another tier seen by ingest
        elif f.first_seen > changed_at - settle:
            arrival = f.first_seen  # a new file on the tier (the filegroup moved into it)
        else:
            arrival = None
        if arrival is None or arrival < changed_at - settle:
            since = f.since if f.since is not None and f.previous_tier != to_tier else f.first_seen
            already.append(f"{f.name} ({f.location or '?'}, since {since:%Y-%m-%d %H:%M} UTC)")
        else:
            arrivals.append(arrival)
    if already:
        return Moved(
            False, None, None, (f"not moved: already on {to_tier} before the change: " + ", ".join(already),)
        )
    late = [a for a in arrivals if a > changed_at + settle]
    if late:
        return Moved(False, None, None, (
            f"not moved at the change: on {to_tier} only from {max(late):%Y-%m-%d %H:%M} UTC, more than "
            f"{settle.total_seconds() / 86400:g} days after it (another change)",
        ))  # fmt: skip
    reasons = [f"on {to_tier}: " + ", ".join(f"{f.name} ({f.location or '?'})" for f in kept)]
    if gone:
        reasons.append("removed with the move: " + ", ".join(gone))
    first, last = min(arrivals), max(arrivals)
    if last > changed_at:
        reasons.append(f"the last file reached {to_tier} at {last:%Y-%m-%d %H:%M} UTC: measured from then")
    return Moved(True, first, last, tuple(reasons))


# ---- the controls ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Candidate:
    """An unmoved object that could be a control, and where it is: its target, the storage pool
    (array) its location belongs to (None: two pools take it) and its tier in that pool."""

    object_id: int
    target_id: int
    pool: str | None
    tier: str | None
    engine: str | None = None  # None: matches any (callers that do not say)
    kind: str | None = None  # "data", "log" or "tempdb" (`kind_class`)


def kind_class(kind: str) -> str:
    """What a control must share with the unit's files: a log's sequential writes and tempdb's
    spills do not behave like a data file's random reads."""
    return "log" if kind in ("log_file", "log") else "tempdb" if kind == "tempdb" else "data"


def pick_controls(
    candidates: Iterable[Candidate],
    *,
    target_id: int,
    pool: str,
    tier: str,
    enough: int,
    shared: bool,
    engine: str | None = None,
    kind: str | None = None,
) -> list[int]:
    """The controls of a move off `tier` of `pool` on `target_id`: unmoved objects on the same
    array's same tier only (a tier of the same name on another array says nothing about this one).
    The unit's own target's come first, all of them; when they are fewer than `enough` and the
    pool is `shared` (a declared pool: its servers share the array), the pool's other targets'
    fill up to `enough`, in target then object order. With `engine` and `kind` (`kind_class`) given,
    only candidates of the same engine and kind of file are controls. The implicit pool of servers in no pool is
    not shared: tierwise does not know that two such servers share an array."""
    same = [
        c
        for c in candidates
        if c.pool == pool
        and c.tier == tier
        and (engine is None or c.engine in (None, engine))
        and (kind is None or c.kind in (None, kind))
    ]
    own = sorted(c.object_id for c in same if c.target_id == target_id)
    if not shared or len(own) >= enough:
        return own
    others = sorted((c.target_id, c.object_id) for c in same if c.target_id != target_id)
    return own + [object_id for _, object_id in others[: enough - len(own)]]


# ---- the verdict -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Change:
    """What to verify: the moved unit's hours on both sides, the controls, the tier it joined."""

    before: Slots
    after: Slots
    start: datetime  # first hour of the judged after-window (after the warm-up)
    end: datetime  # end of the after-window (or now, while it runs)
    lag: timedelta  # after hour t pairs with before hour t - lag (whole weeks: same weekday and hour)
    predicted_gain_ms_per_s: float | None  # I/O wait per second the move was predicted to save
    from_tier: str | None = None
    to_tier: str | None = None
    promotion: bool | None = None  # to a faster tier (None: unknown)
    controls_before: Slots | None = None  # unmoved objects on the source tier
    controls_after: Slots | None = None
    controls: int = 0  # how many objects
    tier_before: Slots | None = None  # the *other* objects on the joined tier
    tier_after: Slots | None = None
    band_read_ms: float | None = None  # top of the joined tier's normal band
    band_write_ms: float | None = None
    excluded: frozenset[datetime] = frozenset()  # hours left out (maintenance, business periods)
    window_days: int = 7
    # each unmoved object on the source tier on its own (before, after): their week-to-week spread
    # widens the interval (`week_variance`); empty: the days are taken as independent
    control_objects: tuple[tuple[Slots, Slots], ...] = ()


def control_week_variance(change: Change, min_hours: int) -> float | None:
    """`week_variance` of the change's control objects, each paired by hour of week like the unit."""
    per = []
    for cb, ca in change.control_objects:
        days = pair_days(cb, ca, start=change.start, end=change.end, lag=change.lag, min_hours=min_hours,
                         excluded=change.excluded)  # fmt: skip
        per.append([d.raw for d in days])
    return week_variance(per)


def _read_heavy(side: Iterable[HourTotals]) -> bool | None:
    reads = writes = 0
    for h in side:
        reads, writes = reads + h.reads, writes + h.writes
    return None if reads + writes == 0 else reads >= writes


def day_ratios(before: Slots, after: Slots, change: Change, min_hours: int) -> dict[datetime, float]:
    """One control's day log ratios as `pair_days` pairs them (`Day.raw`: the after hours at the
    before hours' read and write counts), without building its days: a synthetic control has dozens."""
    out: dict[datetime, float] = {}
    day = change.start
    lag, excluded = change.lag, change.excluded
    while day + HOUR <= change.end:
        stop = min(day + DAY, change.end)
        wb = ar = aw = 0.0  # the before wait; the after read and write waits at the before counts
        ra = rt = wa = wt = 0
        pairs = []
        t = day
        while t < stop:
            b, a = before.get(t - lag), after.get(t)
            if (b is not None and a is not None and b.seconds > 0 and a.seconds > 0 and b.ios > 0 and a.ios > 0
                    and t not in excluded and t - lag not in excluded):  # fmt: skip
                pairs.append((b, a))
                ra, rt, wa, wt = ra + a.reads, rt + a.read_time_ms, wa + a.writes, wt + a.write_time_ms
            t += HOUR
        day += DAY
        if len(pairs) < min_hours:
            continue
        day_r = rt / ra if ra else None
        day_w = wt / wa if wa else None
        ok = True
        for b, a in pairs:
            r = a.read_time_ms / a.reads if a.reads else day_r
            w = a.write_time_ms / a.writes if a.writes else day_w
            if (b.reads and r is None) or (b.writes and w is None):
                ok = False
                break
            wb += b.read_time_ms + b.write_time_ms
            ar += b.reads * (r or 0.0)
            aw += b.writes * (w or 0.0)
        if ok and wb > 0 and ar + aw > 0:
            out[day - DAY] = math.log((ar + aw) / wb)
    return out


@dataclass(frozen=True, slots=True)
class Synthetic:
    """The counterfactual of the unit: per after-day, the I/O-weighted mean log ratio of the usable
    controls (each paired by hour of week on its own, at its own before mix), and what the controls
    say about how far an unmoved object strays from it (placebo in space)."""

    per_day: dict[datetime, float]  # day start -> the weighted controls' log ratio
    used: int
    effective: float  # Kish's effective number of controls
    idle: int  # dropped: no I/O (or too little to pair a day) on a side
    other_class: int  # dropped: reads where the unit writes, or the other way round
    week_var: float | None  # the week-level variance of the placebos (`week_variance`), None: < 3
    placebo: tuple[float, ...]  # each control's mean effect net of the synthetic of the others

    @property
    def usable(self) -> bool:
        return self.effective >= MIN_EFFECTIVE_CONTROLS


def synthetic_control(change: Change, p: VerificationPolicy) -> Synthetic:
    """A weighted synthetic control from the change's control objects. A control with no I/O on a
    side (or too little to pair `min_days` days) is dropped, never allowed to block the unit's
    hours; one whose read/write class differs from the unit's (read- against write-heavy) is
    dropped; the rest weigh by their before I/O, so a near-idle file counts for little."""
    unit_class = _read_heavy(change.before.values())
    rows: list[tuple[float, dict[datetime, float]]] = []
    idle = other = 0
    for cb, ca in change.control_objects:
        w = float(sum(h.ios for h in cb.values()))
        if w <= 0 or not any(h.ios for h in ca.values()):
            idle += 1
            continue
        if unit_class is not None and _read_heavy(cb.values()) not in (None, unit_class):
            other += 1
            continue
        ratios = day_ratios(cb, ca, change, p.min_day_hours)
        if len(ratios) < p.min_days:
            idle += 1
            continue
        rows.append((w, ratios))
    total = sum(w for w, _ in rows)
    effective = total**2 / sum(w * w for w, _ in rows) if rows else 0.0

    def weighted(day: datetime, leave_out: int | None = None) -> float | None:
        num = den = 0.0
        for i, (w, per) in enumerate(rows):
            if i != leave_out and day in per:
                num, den = num + w * per[day], den + w
        whole = total - (rows[leave_out][0] if leave_out is not None else 0.0)
        return num / den if den > 0 and den >= whole / 2 else None  # half the weight at least

    all_days = sorted({d for _, per in rows for d in per})
    per_day = {d: v for d in all_days if (v := weighted(d)) is not None}
    placebos: list[list[float]] = []
    for i, (_, per) in enumerate(rows):
        vals = [per[d] - v for d in sorted(per) if (v := weighted(d, i)) is not None]
        if len(vals) >= 2:
            placebos.append(vals)
    return Synthetic(per_day=per_day, used=len(rows), effective=effective, idle=idle, other_class=other,
                     week_var=week_variance(placebos) if len(rows) >= 2 else None,
                     placebo=tuple(fmean(v) for v in placebos))  # fmt: skip


def placebo_widened(iv: Interval, placebo: Sequence[float], level: float) -> Interval:
    """The interval at least as wide as the placebos allow: had the unit not moved, its effect would
    stray from the synthetic control as far as each control's does from the others' (placebo in
    space), however its days are correlated. A prediction interval over the placebos' means
    (t with placebos - 1 degrees of freedom, variance x (1 + 1/placebos)); with correlated days the
    day-to-day spread alone is too narrow, and a few controls know their spread only roughly."""
    j = len(placebo)
    if j < 2:
        return iv
    spread = stdev(placebo) * math.sqrt(1 + 1 / j)
    half = t_quantile(level, j - 1) * spread
    if half <= (iv.high - iv.low) / 2:
        return iv
    return Interval(iv.estimate, iv.estimate - half, iv.estimate + half, iv.days, iv.level)


def looks(p: VerificationPolicy) -> int:
    """How many times a verdict may be taken: at the window and, inconclusive, at the extension."""
    return 2 if p.extend_to_days > p.window_days else 1


def look_level(p: VerificationPolicy) -> float:
    """Each look's interval level: the policy's error rate shared between the looks (Bonferroni),
    so that a second look at 14 days does not add its own 5 % to the first's."""
    return 1 - (1 - p.interval_level) / looks(p)


@dataclass(frozen=True, slots=True)
class Harm:
    """The early harm alarm's finding: the unit's I/O wait at the before mix against its reference."""

    ratio: float  # after ÷ reference, over the paired hours so far
    hours: int
    beyond: int  # hours that are past the ratio on their own
    reference_ms: float
    after_ms: float

    def text(self, to_tier: str | None) -> str:
        return (
            f"regression: {q.ratio(self.ratio)} the I/O wait per I/O ({q.latency(self.reference_ms)} → "
            f"{q.latency(self.after_ms)}) over the {self.hours} paired hours since the move on {to_tier or 'the new tier'}, "
            f"{self.beyond} of them each past {HARM_RATIO:g}x: flagged early, without waiting for the window"  # echo: design bound
        )


def harm_alarm(change: Change, p: VerificationPolicy) -> Harm | None:
    """The unit slower than HARM_RATIO x its reference over the hours so far: the before latency for
    a promotion (or unknown), for a demotion the slower tier's band top plus the margin (when
    higher). Hours with more than `blame_max_load` x the before I/O are left out (load excuses)."""
    pairs: list[tuple[HourTotals, HourTotals]] = []
    t = change.start
    while t < change.end:
        b, a = change.before.get(t - change.lag), change.after.get(t)
        if (b is not None and a is not None and b.ios > 0 and a.ios > 0 and b.seconds > 0 and a.seconds > 0
                and t not in change.excluded and t - change.lag not in change.excluded
                and (a.ios / a.seconds) <= p.blame_max_load * (b.ios / b.seconds)):  # fmt: skip
            pairs.append((b, a))
        t += HOUR
    if len(pairs) < HARM_MIN_HOURS:
        return None
    before_w = sum(b.read_time_ms + b.write_time_ms for b, _ in pairs)
    n = sum(b.ios for b, _ in pairs)
    if before_w <= 0 or n <= 0:
        return None
    ref_ms = before_w / n
    if change.promotion is False and change.band_read_ms is not None:
        ref_ms = max(ref_ms, change.band_read_ms + p.regression_ms)

    def at_mix(b: HourTotals, a: HourTotals) -> float:
        r = a.read_time_ms / a.reads if a.reads else 0.0
        w = a.write_time_ms / a.writes if a.writes else 0.0
        return b.reads * r + b.writes * w

    after_ms = sum(at_mix(b, a) for b, a in pairs) / n
    beyond = sum(1 for b, a in pairs if at_mix(b, a) / b.ios >= HARM_RATIO * ref_ms)
    ratio = after_ms / ref_ms if ref_ms > 0 else 0.0
    if ratio < HARM_RATIO or beyond < HARM_HOUR_SHARE * len(pairs):
        return None
    return Harm(ratio, len(pairs), beyond, ref_ms, after_ms)


@dataclass(frozen=True, slots=True)
class Outcome:
    status: str
    achieved_gain_ms_per_s: float | None
    share_of_prediction: float | None
    achieved: bool | None  # share of prediction reached the policy's success share
    interval: Interval | None  # the interval the verdict rests on
    regression: str | None  # "object" | "tier" | None
    days: tuple[Day, ...]
    controlled: bool
    before: Figures | None
    after: Figures | None
    tier_before: Figures | None
    tier_after: Figures | None
    verdict: str  # one sentence: why this status
    reasons: tuple[str, ...]
    tier_share: float | None = None  # the moved unit's share of the joined tier's I/O after the move
    tier_intervals: Mapping[str, Interval] = field(default_factory=dict)  # the tier check, per I/O class
    # the effect shown: Hodges–Lehmann with its Wilcoxon interval, over the days `interval` is over
    effect: RankInterval | None = None
    slower: bool = False  # outside band and slower than before on the old tier too (the report says so)


def _mean_ms(days: Sequence[Day]) -> float:
    return sum(d.before.read_time_ms + d.before.write_time_ms for d in days) / sum(d.before.ios for d in days)


def _past(iv: Interval | None, days: Sequence[Day], pct_: float, ms: float) -> bool:
    """The whole interval beyond +pct_ % and +ms ms over the before latency."""
    if iv is None or not days:
        return False
    return iv.low > math.log1p(pct_ / 100) and _mean_ms(days) * math.expm1(iv.low) > ms


_MS_FLOOR = 0.01  # ms: below what the counters (whole ms per interval) resolve per I/O


def _class_ms(days: Sequence[Day], what: str) -> float | None:
    """ms per read (write) after, at the before mix, over the days that had reads (writes) before:
    weighted by those counts, so a day without any is left out rather than counted as 0 ms."""
    n = w = 0.0
    for d in days:
        v = getattr(d, f"after_{what}_ms")
        if v is None:
            continue
        k = d.before.reads if what == "read" else d.before.writes
        n, w = n + k, w + v * k
    return w / n if n > 0 else None


def _blameable(d: Day, p: VerificationPolicy) -> bool:
    size = d.size_change_pct
    return d.load <= p.blame_max_load and (size is None or abs(size) <= p.max_io_size_change_pct)


@dataclass(frozen=True, slots=True)
class TierCheck:
    """The other objects on the joined tier, per I/O class: what was found and the intervals."""

    reasons: tuple[str, ...]
    regressions: tuple[str, ...]
    before: Figures | None
    after: Figures | None
    intervals: dict[str, Interval]  # "read" / "write" -> the class's interval (blameable days)


CLASSES = ("read", "write")


def _class_past(iv: Interval | None, days: Sequence[Day], what: str, pct_: float, ms: float) -> bool:
    """The whole interval of one class beyond +pct_ % and +ms ms over its before latency."""
    n = sum(d.before.reads if what == "read" else d.before.writes for d in days)
    t = sum(d.before.read_time_ms if what == "read" else d.before.write_time_ms for d in days)
    if iv is None or n <= 0:
        return False
    return iv.low > math.log1p(pct_ / 100) and t / n * math.expm1(iv.low) > ms


def _tier_check(change: Change, p: VerificationPolicy, week_var: float) -> TierCheck:
    """The other objects on the joined tier, paired the same way and judged per I/O class (reads,
    writes) at their before hours' counts: a read share going from 50 to 80 %, or a batch of
    writes, is not a slower tier. Blamed on the move only when all of a class's interval is past
    the tier margins, from days whose load and that class's I/O size allow; the interval carries
    the week-level term, as the unit's does."""
    if change.tier_before is None or change.tier_after is None:
        return TierCheck((), (), None, None, {})
    days = pair_days(change.tier_before, change.tier_after, start=change.start, end=change.end,
                     lag=change.lag, min_hours=p.min_day_hours, excluded=change.excluded)  # fmt: skip
    if not days:
        return TierCheck((), (), None, None, {})
    tb = figures([d.before for d in days])
    ta = figures([d.after for d in days])
    reasons: list[str] = []
    regressions: list[str] = []
    intervals: dict[str, Interval] = {}
    for what in CLASSES:
        n_b, n_a = (tb.reads, ta.reads) if what == "read" else (tb.writes, ta.writes)
        if min(n_b, n_a) < p.min_ios:
            continue
        blame = []
        for d in days:
            size = d.class_size_change_pct(what)
            if d.load <= p.blame_max_load and (size is None or abs(size) <= p.max_io_size_change_pct):
                blame.append(d)
        vals = [v for v in (d.class_raw(what) for d in blame) if v is not None]
        iv = t_interval(vals, p.interval_level, week_var) if len(vals) >= p.min_days else None
        if iv is not None:
            intervals[what] = iv
        text = f"tier {change.to_tier}'s other objects, {what}s at their before counts: " + (
            iv.text() if iv else f"{len(vals)} comparable days (needs {p.min_days})"
        )
        if _class_past(iv, blame, what, p.tier_regression_pct, p.tier_regression_ms):
            regressions.append(
                f"regression: tier {change.to_tier} it joined got slower: its other objects' {what} latency "
                f"{iv.text() if iv else ''}, all beyond the {p.tier_regression_pct:g} % and "  # echo: policy threshold
                f"{p.tier_regression_ms:g} ms allowed"  # echo: policy threshold
            )
        else:
            reasons.append(text)
    return TierCheck(tuple(reasons), tuple(regressions), tb, ta, intervals)


def verify(change: Change, policy: VerificationPolicy) -> Outcome:
    """The verdict on one move that was seen on its destination, with its reasons in numbers."""
    p = policy
    reasons: list[str] = []
    syn = synthetic_control(change, p)
    with_controls = syn.usable
    band = None
    if change.band_read_ms is not None:
        band = (
            change.band_read_ms,
            change.band_write_ms if change.band_write_ms is not None else change.band_read_ms,
        )
    days = pair_days(change.before, change.after, start=change.start, end=change.end, lag=change.lag,
                     min_hours=p.min_day_hours, excluded=change.excluded)  # fmt: skip
    if with_controls:  # a day counts only with its counterfactual (zero-I/O controls never block one)
        days = [dc_replace(d, control=syn.per_day[d.start]) for d in days if d.start in syn.per_day]

    basis: dict[int, list[float]] = {}  # id of an interval -> the day effects it is over

    def done(status: str, verdict: str, **kw: Any) -> Outcome:
        fields: dict[str, Any] = dict(achieved_gain_ms_per_s=None, share_of_prediction=None, achieved=None,
                                      interval=None, regression=None, before=None, after=None,
                                      tier_before=None, tier_after=None)  # fmt: skip
        fields.update(kw)
        # the effect shown beside the verdict: robust to one odd day, over the same days
        values = basis.get(id(fields["interval"])) if fields["interval"] is not None else None
        effect = hodges_lehmann(values, p.interval_level) if values else None
        shown = (f"effect {effect.text()}",) if effect is not None else ()
        return Outcome(status=status, days=tuple(days), controlled=with_controls, verdict=verdict,
                       reasons=(*reasons, *shown, verdict), effect=effect, **fields)  # fmt: skip

    weeks = change.lag.days // 7
    reasons.append(
        f"compared {len(days)} days after the move with the same weekdays {weeks} week{'s' if weeks != 1 else ''} "
        f"earlier, hour by hour ({sum(d.hours for d in days)} paired hours)"
        + (
            f"; {len(change.excluded)} hours of maintenance (declared windows, detected bursts) or business periods left out"
            if change.excluded
            else ""
        )
    )
    if not days:
        return done(INCONCLUSIVE, "too little data: no day has enough paired hours on both sides")
    b = figures([d.before for d in days])
    a = figures([d.after for d in days])
    if b.avg_read_ms is not None or a.avg_read_ms is not None:
        reasons.append(f"read latency {q.latency(b.avg_read_ms, NA)} → {q.latency(a.avg_read_ms, NA)}")
    if b.avg_write_ms is not None or a.avg_write_ms is not None:
        reasons.append(f"write latency {q.latency(b.avg_write_ms, NA)} → {q.latency(a.avg_write_ms, NA)}")
    vol = pct_change(b.iops, a.iops)
    reasons.append(
        f"IOPS {q.rate(b.iops, '')} → {q.rate(a.iops, '')}"
        + (f" ({q.change_pct(vol)})" if vol is not None else "")
    )
    if b.avg_io_kb is not None and a.avg_io_kb is not None:
        reasons.append(f"average I/O size {q.size(b.avg_io_kb * 1024)} → {q.size(a.avg_io_kb * 1024)}")
    dropped = []
    if syn.idle:
        dropped.append(f"{syn.idle} without I/O to compare on a side dropped")
    if syn.other_class:
        dropped.append(f"{syn.other_class} of the other read/write class dropped")
    dropped_text = f" ({', '.join(dropped)})" if dropped else ""
    if with_controls:
        ctrl = fmean(d.control or 0.0 for d in days) if days else 0.0
        reasons.append(
            f"controls: {syn.used} unmoved objects on {change.from_tier} weighted by their I/O (as many as "
            f"{q.figure(syn.effective)} equal ones){dropped_text} changed {q.change_pct(pct(ctrl))} at their before "
            "mix over the same hours; the move is judged net of that"
        )
        if len(syn.placebo) >= 2:
            reasons.append(
                f"placebo in space: each control judged as if it had moved comes out {q.change_pct(pct(min(syn.placebo)))} "
                f"to {q.change_pct(pct(max(syn.placebo)))}"
            )
    elif syn.used or syn.idle or syn.other_class:
        reasons.append(
            f"no fair control: {syn.used} usable unmoved objects on {change.from_tier or 'the source tier'}{dropped_text} "
            f"weigh as {q.figure(syn.effective)} equal ones (needs {MIN_EFFECTIVE_CONTROLS:g}): a change of the array "  # echo: design bound
            "itself is not separated from the move"
        )
    else:
        reasons.append(
            f"no unmoved objects on {change.from_tier or 'the source tier'} to compare with: a change of the "
            "array itself is not separated from the move"
        )
    level = look_level(p)
    wv = syn.week_var if with_controls else None
    wdf = len(syn.placebo) - 1 if wv is not None else None  # how well the controls know that variance
    if wv is not None:
        reasons.append(
            f"{len(syn.placebo)} unmoved objects vary ±{q.pct(pct(math.sqrt(wv)) / 100)} from week to week "
            "on their own: the intervals allow for that"
        )
    tier = _tier_check(change, p, wv or 0.0)
    tb, ta = tier.before, tier.after
    reasons.extend(tier.reasons)
    tier_share = None
    if tb is not None and ta is not None:
        tier_share = a.iops / (ta.iops + a.iops) if ta.iops + a.iops else None
        reasons.append(
            f"tier {change.to_tier}: load {q.rate(tb.iops, '')} → {q.rate(ta.iops + a.iops, 'IOPS')} with this object "
            f"({q.pct(tier_share or 0)} of it)"
        )
    common: dict[str, Any] = dict(before=b, after=a, tier_before=tb, tier_after=ta, tier_share=tier_share,
                                  tier_intervals=tier.intervals)  # fmt: skip

    credit = [d for d in days if d.load >= p.credit_min_load]
    blame = [d for d in days if _blameable(d, p)]
    both = [d for d in credit if d in blame]

    def interval(of: Sequence[Day], need: int) -> Interval | None:
        vals = [d.effect for d in of]
        iv = t_interval(vals, level, wv or 0.0, wdf) if len(of) >= need else None
        if iv is not None and with_controls:
            iv = placebo_widened(iv, syn.placebo, level)
        if iv is not None:
            basis[id(iv)] = vals
        return iv

    iv_all = interval(days, 2)
    iv_credit = interval(credit, p.min_days)
    iv_blame = interval(blame, p.min_days)
    iv_both = interval(both, p.min_days)
    if len(credit) < len(days):
        reasons.append(
            f"{len(days) - len(credit)} days with less than {p.credit_min_load:g}x the before day's I/O are not "
            "credited with a gain"
        )
    if len(blame) < len(days):
        reasons.append(
            f"{len(days) - len(blame)} days with more than {p.blame_max_load:g}x the before day's I/O (or another "
            "I/O size) are not blamed for a regression"
        )
    if iv_all is not None:
        reasons.append(
            "latency at the before read/write mix "
            + ("net of the controls " if with_controls else "")
            + iv_all.text()
        )
    # the achieved gain, at the before workload
    achieved = share = None
    if iv_all is not None:
        achieved = b.io_ms_per_s * -math.expm1(iv_all.estimate)
        pred = change.predicted_gain_ms_per_s
        share = achieved / pred if pred is not None and pred > 0 else None
        common.update(achieved_gain_ms_per_s=achieved, share_of_prediction=share)

    def gain_reason() -> str | None:
        if achieved is None:
            return None
        pred = change.predicted_gain_ms_per_s
        if share is not None and pred is not None:
            text = f"achieved {q.pct(share)} of the predicted {q.io_wait(pred)} saved"
            if share < p.success_share:
                text += f" (a successful move reaches {q.pct(p.success_share)})"
            return text
        verb = "saved" if achieved >= 0 else "cost"
        return f"{verb} {q.io_wait(abs(achieved))} of I/O wait at the before workload (no predicted gain to compare)"

    g = gain_reason()
    if g is not None:
        reasons.append(g)
    extend = (
        f": extend to {p.extend_to_days} days"
        if change.window_days < p.extend_to_days
        else ": measure again later"
    )

    total_b, total_a = sum(d.before.ios for d in days), sum(d.after.ios for d in days)
    paired_hours = sum(d.hours for d in days)
    if len(days) < p.min_days or paired_hours < p.min_hours:
        return done(INCONCLUSIVE, f"too little data: {len(days)} paired days, {paired_hours} paired hours "
                    f"(needs {p.min_days} days and {p.min_hours:g} hours){extend}", **common)  # fmt: skip
    if min(total_b, total_a) < p.min_ios:
        return done(INCONCLUSIVE, f"too few I/Os to judge: {q.count(total_b)} before, {q.count(total_a)} after "
                    f"(needs {q.count(p.min_ios)} on each side)", **common)  # fmt: skip

    # delivered its prediction: the interval's least-gain end still saves the success share of it
    # (a point estimate of 102 % over a wide interval is no proof); never without a fair control
    hit = None
    gain_iv = iv_credit or iv_all
    pred = change.predicted_gain_ms_per_s
    if gain_iv is not None and pred is not None and pred > 0:
        least = b.io_ms_per_s * -math.expm1(gain_iv.high) / pred
        hit = with_controls and least >= p.success_share
        reasons.append(
            f"{'delivered' if hit else 'not shown to deliver'} its prediction: at least {q.pct(max(least, 0.0))} of it "
            f"at the interval's slow end (needs {q.pct(p.success_share)}"
            + (")" if with_controls else ", and a fair control)")
        )

    # the destination's band, per class (reads, writes), from days the load allows
    beyond: list[str] = []
    inside: list[bool] = []
    band_ivs: list[str] = []  # per class: the band interval, for an open verdict
    band_text = ""
    if band is not None:
        margin = p.regression_ms
        texts = []
        for what, top, n_b, n_a in (
            ("read", band[0], b.reads, a.reads),
            ("write", band[1], b.writes, a.writes),
        ):
            if min(n_b, n_a) < p.min_ios:
                continue
            # a band top and margin of 0 (or a day at 0 ms) must not divide by zero: both are held
            # at the resolution of the counters
            ref = max(top + margin, _MS_FLOOR)
            per_day = [getattr(d, f"after_{what}_ms") for d in blame]
            vals = [math.log(max(v, _MS_FLOOR) / ref) for v in per_day if v is not None]
            # one week's level against a fixed top: half the variance of a week-to-week difference
            iv = t_interval(vals, level, (wv or 0.0) / 2) if len(vals) >= p.min_days else None
            ms_after = _class_ms(days, what)
            if ms_after is None:
                continue
            texts.append(f"{what} {q.latency(ms_after)} against {top:g} ms")  # echo: the policy's band top
            if iv is not None:
                low, high = q.change_pct(pct(iv.low)), q.change_pct(pct(iv.high))
                line = f"{top + margin:g} ms"  # echo: the policy's band top plus its margin
                band_ivs.append(f"{what}s {q.change_pct(pct(iv.estimate))} ({low} to {high}) against {line}")
            if iv is not None and iv.low > 0:
                allowed = f"up to {top:g} ms, +{margin:g} ms allowed"  # echo: the policy's band and margin
                beyond.append(f"{what} latency {q.latency(ms_after)} is above {change.to_tier}'s normal band "
                              f"({allowed}) on every comparable day's interval")  # fmt: skip
            inside.append(iv is not None and iv.high <= 0)
        if texts:
            band_text = (
                f"at the before mix, {', '.join(texts)}, the top of {change.to_tier}'s normal band "
                f"(+{margin:g} ms allowed)"  # echo: the policy's margin
            )
            reasons.append(band_text)
    beyond_band = bool(beyond)
    within_band = bool(inside) and all(inside)

    regressions = list(tier.regressions)
    object_regressed = slower = False
    if change.promotion is False and band is not None:
        object_regressed = beyond_band  # a slower tier may be slower, up to its band
    elif with_controls and _past(iv_blame, blame, p.regression_pct, p.regression_ms):
        # a promotion that lands above the faster tier's band is the tier not delivering, not the
        # move failing: "outside band" (check the array), never a rollback
        slower = change.promotion is not False and beyond_band
        object_regressed = not slower
    if object_regressed:
        what = (
            "; ".join(beyond)
            if change.promotion is False and band is not None
            else f"latency {iv_blame.text() if iv_blame else ''}, all beyond the {p.regression_pct:g} % and "  # echo: policy
            f"{p.regression_ms:g} ms allowed"  # echo: policy threshold
        )
        regressions.insert(0, f"regression: {what}")
    harm = None if object_regressed else harm_alarm(change, p)
    if harm is not None:  # far slower than any array swing: flagged with or without controls
        object_regressed, slower = True, False
        regressions.insert(0, harm.text(change.to_tier))
    if regressions:
        reasons.extend(regressions[1:])
        return done(REGRESSED, regressions[0], interval=iv_blame or iv_all, achieved=hit,
                    regression="object" if object_regressed else "tier", **common)  # fmt: skip
    if change.promotion is not False and beyond_band:
        if slower:
            beyond.append(
                f"slower than before on {change.from_tier or 'the old tier'} too ({iv_blame.text() if iv_blame else ''})"
            )
        return done(OUTSIDE_BAND, f"outside {change.to_tier}'s normal band: {'; '.join(beyond)}; not credited "
                    "as an improvement (check the array before moving it back)", interval=iv_all, achieved=hit,
                    slower=slower, **common)  # fmt: skip
    if change.promotion is False and band is not None:
        if within_band:
            return done(WITHIN_BAND, f"within {change.to_tier}'s normal band, as a move to a slower tier should be",
                        interval=iv_all, achieved=None, **common)  # fmt: skip
        # a level against a fixed line: only more days narrow it (docs/verification.md, "Why a noisy
        # demotion needs more than a week")
        found = f" ({'; '.join(band_ivs)}, top plus the margin)" if band_ivs else ""
        return done(INCONCLUSIVE, f"cannot yet tell whether it stays within {change.to_tier}'s band{found}{extend}",
                    interval=iv_all, **common)  # fmt: skip
    if not with_controls:  # the best verdict without a fair control: never credited, never blamed
        worse = _past(iv_blame, blame, p.regression_pct, p.regression_ms)
        shown = iv_all
        what = (
            f"slower ({iv_blame.text() if iv_blame else ''}), check the array before moving it back"
            if worse
            else f"latency at the before mix {shown.text()}"
            if shown
            else "no interval"
        )
        return done(UNCONTROLLED, f"uncontrolled: {what}; no fair control tells a change of the array from "
                    "the move's, so it is neither credited nor blamed", interval=iv_blame if worse else shown,
                    achieved=False if hit is not None else None, slower=worse, **common)  # fmt: skip
    if iv_credit is not None and iv_credit.high < 0:
        return done(IMPROVED, f"improved: even the slow end of the interval is faster ({iv_credit.text()})",
                    interval=iv_credit, achieved=hit, **common)  # fmt: skip
    eq = math.log1p(p.equivalence_pct / 100)
    margin_text = f"±{p.equivalence_pct:g} %"  # echo: the policy's equivalence margin
    if iv_both is not None and -eq < iv_both.low and iv_both.high < eq:
        return done(NO_EFFECT, f"no measurable effect: the interval lies within {margin_text} "
                    f"({iv_both.text()})", interval=iv_both, achieved=hit, **common)  # fmt: skip
    shown = iv_both or iv_all
    return done(INCONCLUSIVE, "inconclusive: the interval " + (f"({shown.text()}) " if shown else "")
                + f"neither shows a gain nor lies within {margin_text}{extend}",
                interval=shown, **common)  # fmt: skip


def not_moved(moved: Moved) -> Outcome:
    """The verdict for a move that was not seen on its destination: "not moved", or inconclusive
    when where it should be is unknown (that is no evidence that it stayed put)."""
    return Outcome(status=NOT_MOVED if moved.checked else INCONCLUSIVE, achieved_gain_ms_per_s=None, share_of_prediction=None, achieved=None,
                   interval=None, regression=None, days=(), controlled=False, before=None, after=None,
                   tier_before=None, tier_after=None, verdict=moved.reasons[0], reasons=moved.reasons)  # fmt: skip
