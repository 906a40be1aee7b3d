"""The advisor's per-hour loops have a fast path (UTC or fixed-offset buckets in order, members with
the same hours, >= 8 dicts with the same keys and no None) and a fallback (anything else); the
equality fixture only feeds the fast one. Each test here runs the same public function on an input
that takes the fast path and one that forces the fallback, or checks a sum worked out by hand."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, date, datetime, time, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo

import pytest

from advisors.features import (
    ObjectInfo,
    ObjectWindow,
    Usage,
    add_counters,
    add_extra,
    combine,
    compute_features,
)
from advisors.maintenance import in_window, is_burst, split_maintenance, sum_usage
from advisors.units import WHOLE, window_mixes
from policies.loader import load_policy
from policies.model import Policy
from policies.workload import MaintenanceWindow

POLICY = load_policy()
HOUR = 3600.0
INFO = ObjectInfo(key="Sales/file/data1", engine="sqlserver", server="S", database="Sales",
                  kind="file", name="data1", size_bytes=100 * 1024**3, current_tier="sata")  # fmt: skip
Buckets = list[tuple[datetime, Usage]]


def reads(n: int, seconds: float = HOUR) -> Usage:
    return Usage(seconds, {"reads": n, "writes": 0})


def window(buckets: Sequence[tuple[datetime, Usage]], info: ObjectInfo = INFO) -> ObjectWindow:
    return ObjectWindow(info, sum_usage([u for _, u in buckets]), tuple(buckets))


def shuffled(buckets: Sequence[tuple[datetime, Usage]], seed: int = 7) -> Buckets:
    out = list(buckets)
    random.Random(seed).shuffle(out)
    assert out != list(buckets)
    return out


def daily(wall_start: datetime, rates: Sequence[int], tz: tzinfo | None) -> Buckets:
    """24 buckets a day from a naive wall-clock start, each with `rate` reads/s of its day."""
    return [
        ((wall_start + timedelta(hours=h)).replace(tzinfo=tz), reads(rate * 3600))
        for d, rate in enumerate(rates)
        for h in range(24 * d, 24 * d + 24)
    ]


def hand_profile(buckets: Sequence[tuple[datetime, float, float]]) -> tuple[float, ...]:
    """(label, requests, seconds) -> requests per second by the label's hour, summed plainly."""
    req, secs = [0.0] * 24, [0.0] * 24
    for t, r, s in buckets:
        req[t.hour] += r
        secs[t.hour] += s
    return tuple(r / s if s else 0.0 for r, s in zip(req, secs, strict=True))


# --- compute_features: trend and hour-of-day profile -----------------------------------------------

WALL = datetime(2026, 3, 2)  # no DST change in the zones below for these 4 days
ZONES: dict[str, tzinfo | None] = {
    "UTC (fast)": UTC,
    "naive (fast)": None,
    "fixed -05:00 (fast)": timezone(timedelta(hours=-5)),
    "fixed +05:30 (fast)": timezone(timedelta(hours=5, minutes=30)),
    "zoneinfo Etc/GMT+5 (fallback)": ZoneInfo("Etc/GMT+5"),
    "zoneinfo America/New_York (fallback)": ZoneInfo("America/New_York"),
}


@pytest.mark.parametrize("order", ["in order", "shuffled"])
@pytest.mark.parametrize("zone", list(ZONES))
def test_trend_and_profile_are_the_hand_figures_in_any_zone_and_order(zone: str, order: str) -> None:
    # daily rates 10, 12, 14, 16 /s: slope 2 /s per day over a mean of 13 /s
    buckets = daily(WALL, [10, 12, 14, 16], ZONES[zone])
    if order == "shuffled":
        buckets = shuffled(buckets)
    f = compute_features(window(buckets), db_heat=None)
    assert f.trend_pct_per_day == pytest.approx(100 * 2 / 13, rel=1e-12)
    assert f.by_hour_of_day == pytest.approx((13.0,) * 24, rel=1e-12)


def test_fast_and_fallback_give_identical_figures_on_the_same_wall_clock() -> None:
    """The same wall-clock labels as a fixed offset (by day ordinal) and as a ZoneInfo of that
    offset (by midnight datetimes, `_trend`), with a daily cycle and uneven days."""
    rng = random.Random(3)
    walls = [WALL + timedelta(hours=h) for h in range(5 * 24)]
    usages = [Usage(HOUR - rng.randrange(0, 400), {"reads": rng.randrange(0, 9000), "writes": rng.randrange(0, 900)})
              for _ in walls]  # fmt: skip
    fixed = [(t.replace(tzinfo=timezone(timedelta(hours=-5))), u) for t, u in zip(walls, usages, strict=True)]
    zoned = [(t.replace(tzinfo=ZoneInfo("Etc/GMT+5")), u) for t, u in zip(walls, usages, strict=True)]
    fast = compute_features(window(fixed), db_heat=None)
    slow = compute_features(window(zoned), db_heat=None)
    assert fast.trend_pct_per_day is not None
    assert fast.trend_pct_per_day == pytest.approx(slow.trend_pct_per_day, rel=1e-12)
    assert fast.by_hour_of_day == slow.by_hour_of_day
    assert fast.by_hour_of_day == pytest.approx(
        hand_profile([(t, u.counters["reads"] + u.counters["writes"], u.seconds) for t, u in fixed])  # type: ignore[operator]
    )
    assert compute_features(window(shuffled(fixed)), db_heat=None) == fast


@pytest.mark.parametrize("order", ["in order", "shuffled"])
def test_dst_zone_across_the_october_change_counts_days_by_local_date(order: str) -> None:
    """Europe/Paris on 2026-10-25 has 25 hours (02:00 twice): the day is one day, its rate is its
    requests over its 25 covered hours."""
    paris = ZoneInfo("Europe/Paris")
    rates = {date(2026, 10, d): r for d, r in ((23, 10), (24, 12), (25, 14), (26, 16), (27, 18))}
    start = datetime(2026, 10, 22, 22, tzinfo=UTC)  # 2026-10-23 00:00 CEST
    buckets: Buckets = []
    t = start
    while (local := t.astimezone(paris)).date() <= date(2026, 10, 27):
        buckets.append((local, reads(rates[local.date()] * 3600)))
        t += timedelta(hours=1)
    assert sum(1 for t, _ in buckets if t.date() == date(2026, 10, 25)) == 25
    assert sum(1 for t, _ in buckets if t.hour == 2) == 6
    if order == "shuffled":
        buckets = shuffled(buckets)
    f = compute_features(window(buckets), db_heat=None)
    assert f.trend_pct_per_day == pytest.approx(100 * 2 / 14, rel=1e-12)
    # every hour of the day averages the five days, 02:00 the 25th twice: (10+12+14+14+16+18)/6
    assert f.by_hour_of_day == pytest.approx((14.0,) * 24, rel=1e-12)
    assert f.by_hour_of_day == pytest.approx(
        hand_profile([(t, u.counters["reads"] or 0, u.seconds) for t, u in buckets])
    )


@pytest.mark.parametrize("order", ["in order", "shuffled"])
@pytest.mark.parametrize("tz", [UTC, None, timezone(timedelta(hours=9))], ids=["UTC", "naive", "fixed"])
def test_days_under_90_percent_covered_do_not_count(tz: tzinfo | None, order: str) -> None:
    """A first day of 20 h (72,000 s < 77,760 s) at 1,000 /s is left out; a last day of 22 h
    (79,200 s) counts: days 10, 12, 14, 16 /s."""
    first = [((WALL + timedelta(hours=h)).replace(tzinfo=tz), reads(1000 * 3600)) for h in range(4, 24)]
    full = daily(WALL + timedelta(days=1), [10, 12, 14], tz)
    last = [((WALL + timedelta(days=4, hours=h)).replace(tzinfo=tz), reads(16 * 3600)) for h in range(22)]
    buckets = first + full + last
    if order == "shuffled":
        buckets = shuffled(buckets)
    f = compute_features(window(buckets), db_heat=None)
    assert f.trend_pct_per_day == pytest.approx(100 * 2 / 13, rel=1e-12)
    only_one_day = first + daily(WALL + timedelta(days=1), [10], tz)
    g = compute_features(
        window(only_one_day if order == "in order" else shuffled(only_one_day)), db_heat=None
    )
    assert g.trend_pct_per_day is None
    assert g.by_hour_of_day[0] == 10.0 and g.by_hour_of_day[5] == pytest.approx((1000 + 10) / 2)


def test_a_zone_change_or_a_day_going_back_mid_series_falls_back_with_the_same_figures() -> None:
    """The fast loop gives up half way (another tzinfo, or an earlier day): the profile it had
    already summed is kept and the trend comes from the general path."""
    rng = random.Random(5)
    buckets = [
        (WALL.replace(tzinfo=UTC) + timedelta(hours=h), reads(rng.randrange(1000, 90000)))
        for h in range(4 * 24)
    ]
    ref = compute_features(window(buckets), db_heat=None)
    assert ref.trend_pct_per_day is not None
    zone_switch = buckets[:50] + [(t.astimezone(ZoneInfo("UTC")), u) for t, u in buckets[50:]]
    day_back = buckets[48:72] + buckets[:48] + buckets[72:]  # day 3, then days 1 and 2, then day 4
    for other in (zone_switch, day_back):
        f = compute_features(window(other), db_heat=None)
        assert f.trend_pct_per_day == pytest.approx(ref.trend_pct_per_day, rel=1e-12)
        assert f.by_hour_of_day == ref.by_hour_of_day
    # labels switching to +09:00 at 02:00 UTC on day 2 (11:00 local): the days are the general
    # path's (each label's local midnight), in order or shuffled
    to_tokyo = buckets[:50] + [(t.astimezone(timezone(timedelta(hours=9))), u) for t, u in buckets[50:]]
    f = compute_features(window(to_tokyo), db_heat=None)
    g = compute_features(window(shuffled(to_tokyo)), db_heat=None)
    assert f.trend_pct_per_day is not None and f.trend_pct_per_day != ref.trend_pct_per_day
    assert f.trend_pct_per_day == pytest.approx(g.trend_pct_per_day, rel=1e-12)
    assert f.by_hour_of_day == pytest.approx(g.by_hour_of_day, rel=1e-12)


def test_profile_reads_each_bucket_on_its_own_basis() -> None:
    """Requests per bucket: reads + writes (None as 0) where either is known, else the partition
    proxies; the counts below are written out by hand."""
    t0 = WALL.replace(tzinfo=UTC)
    kinds: list[tuple[Usage, float]] = [
        (Usage(HOUR, {"reads": 3600, "writes": 7200}), 10800),
        (Usage(HOUR, {"reads": None, "writes": 360}), 360),
        (Usage(HOUR, {"reads": 720, "writes": None}), 720),
        (Usage(HOUR, {"reads": None, "writes": None}, {"page_io_latch_wait_count": 36}), 36),
        (Usage(HOUR, {}, {"object_data_p_reads": 18000}), 18000),
        (Usage(1800.0, {}, {}), 0),
    ]
    buckets = [(t0 + timedelta(hours=h), kinds[h % len(kinds)][0]) for h in range(48)]
    expected = hand_profile([(t, kinds[i % len(kinds)][1], u.seconds) for i, (t, u) in enumerate(buckets)])
    for b in (buckets, shuffled(buckets)):
        assert compute_features(window(b), db_heat=None).by_hour_of_day == pytest.approx(expected, rel=1e-12)
    assert expected[0] == 10800 / 3600 and expected[5] == 0.0


# --- add_counters / add_extra / sum_usage around the column threshold (8) --------------------------


def plain_counters(dicts: Sequence[Mapping[str, int | None]]) -> dict[str, int | None]:
    """Key by key in first-seen order: None only when every dict that has the key says None."""
    keys: list[str] = []
    for d in dicts:
        keys += [k for k in d if k not in keys]
    out: dict[str, int | None] = {}
    for k in keys:
        known = [d[k] for d in dicts if k in d and d[k] is not None]
        out[k] = sum(known) if known else None  # type: ignore[arg-type]
    return out


def _same(i: int) -> dict[str, int | None]:
    return {"reads": 10 + i, "writes": 100 * i, "bytes_read": 8192 * (10 + i)}


def _none_in_some(i: int) -> dict[str, int | None]:
    return {**_same(i), "read_time_ms": None if i % 3 == 0 else 7 * i}


def _none_in_all(i: int) -> dict[str, int | None]:
    return {**_same(i), "read_time_ms": None}


def _keys_missing(i: int) -> dict[str, int | None]:
    d = _same(i)
    if i % 2:
        del d["writes"]
    return d


def _other_keys_same_size(i: int) -> dict[str, int | None]:
    d = _same(i)
    if i == 5:
        d["write_time_ms"] = d.pop("writes")
    return d


def _zero_then_none(i: int) -> dict[str, int | None]:
    return {**_same(i), "read_time_ms": 0 if i == 0 else None}


def _none_first(i: int) -> dict[str, int | None]:
    return {**_same(i), "read_time_ms": None if i == 0 else i}


COUNTERS: dict[str, Callable[[int], dict[str, int | None]]] = {
    "same keys": _same,
    "None in some": _none_in_some,
    "None in all": _none_in_all,
    "keys missing in some": _keys_missing,
    "other keys, same sizes": _other_keys_same_size,
    "0 then None": _zero_then_none,
    "None first": _none_first,
}


def _extra(kind: str, i: int) -> dict[str, int]:
    if kind == "none":
        return {}
    if kind == "some empty":
        return {} if i % 2 else {"pool_data_p_reads": i, "pool_async_data_reads": 2 * i}
    if kind == "extra key in one":
        return {"pool_data_p_reads": i, "pool_async_data_reads": 2 * i} | (
            {"direct_reads": 5} if i == 6 else {}
        )
    if kind == "other keys, same sizes":
        return {"pool_data_p_reads": i, ("direct_reads" if i == 7 else "pool_async_data_reads"): 2 * i}
    return {"pool_data_p_reads": i, "pool_async_data_reads": 2 * i}


@pytest.mark.parametrize(
    "extra", ["same keys", "none", "some empty", "extra key in one", "other keys, same sizes"]
)
@pytest.mark.parametrize("counters", list(COUNTERS))
@pytest.mark.parametrize("n", [1, 2, 7, 8, 9, 20])
def test_sums_equal_a_plain_loop_around_the_threshold(n: int, counters: str, extra: str) -> None:
    cs = [COUNTERS[counters](i) for i in range(n)]
    xs = [_extra(extra, i) for i in range(n)]
    want_c = plain_counters(cs)
    want_x = {k: v for k, v in plain_counters(xs).items() if v is not None}
    got_c, got_x = add_counters(cs), add_extra(xs)
    assert got_c == want_c and list(got_c) == list(want_c)
    assert got_x == want_x and list(got_x) == list(want_x)
    u = sum_usage([Usage(HOUR - i, c, x) for i, (c, x) in enumerate(zip(cs, xs, strict=True))])
    assert u.seconds == sum(HOUR - i for i in range(n))
    assert dict(u.counters) == want_c and dict(u.extra) == want_x


@pytest.mark.parametrize("n", [7, 8, 9])
def test_none_counter_rules_by_hand(n: int) -> None:
    cs: list[dict[str, int | None]] = [
        {"reads": i, "read_time_ms": None, "writes": None if i else 4} for i in range(n)
    ]
    got = add_counters(cs)
    assert got["read_time_ms"] is None  # None in every bucket stays None
    assert got["writes"] == 4  # None in the others: the sum of the known one
    assert got["reads"] == n * (n - 1) // 2
    assert sum_usage([Usage(1.0, c) for c in cs]).counters == got


# --- combine: members' hours lined up by position, or the dict path --------------------------------

T0 = datetime(2026, 11, 13, tzinfo=UTC)


def member(i: int, hours: Sequence[int], *, with_none: bool = False) -> ObjectWindow:
    """A file of a filegroup; its counters at hour h depend on (i, h) so every sum is checkable."""
    buckets = []
    for h in hours:
        c: dict[str, int | None] = {"reads": 100 * i + h, "writes": i * h, "bytes_read": 8192 * (100 * i + h)}
        if with_none:
            c["read_time_ms"] = None if i % 2 else i + h
            c["write_time_ms"] = None
        x = {"page_io_latch_wait_count": i + h} if i % 3 == 0 else {}
        buckets.append((T0 + timedelta(hours=h), Usage(HOUR - i, c, x)))
    info = ObjectInfo(key=f"Sales/file/f{i}", engine="sqlserver", server="S", database="Sales",
                      kind="file", name=f"f{i}", size_bytes=(i + 1) * 1024**3, current_tier="sata")  # fmt: skip
    return ObjectWindow(info, sum_usage([u for _, u in buckets]), tuple(buckets))


def hand_combined(members: Sequence[ObjectWindow]) -> list[tuple[datetime, Usage]]:
    """Per hour, in time order: counters and extras summed (None only when all None), the
    longest seconds; a member's duplicated hour counts as one more file at that hour."""
    at: dict[datetime, list[Usage]] = {}
    for m in members:
        for t, u in m.by_hour:
            at.setdefault(t, []).append(u)
    out = []
    for t in sorted(at):
        us = at[t]
        extra = {k: v for k, v in plain_counters([u.extra for u in us]).items() if v is not None}
        out.append((t, Usage(max(u.seconds for u in us), plain_counters([u.counters for u in us]), extra)))
    return out


FG = ObjectInfo(key="Sales/filegroup/FG", engine="sqlserver", server="S", database="Sales",
                kind="filegroup", name="FG", current_tier="sata")  # fmt: skip


@pytest.mark.parametrize("with_none", [False, True])
@pytest.mark.parametrize("n", [2, 7, 8, 9])
def test_combine_same_hours_and_forced_fallbacks_equal_the_hand_sums(n: int, with_none: bool) -> None:
    hours = list(range(30))
    same = [member(i, hours, with_none=with_none) for i in range(n)]
    variants = {
        "same hours (fast)": same,
        "one missing an hour": [member(0, hours[:12] + hours[13:], with_none=with_none), *same[1:]],
        "one with an extra hour": [*same[:-1], member(n - 1, [*hours, 30], with_none=with_none)],
        "first out of order": [
            ObjectWindow(same[0].info, same[0].total, tuple(shuffled(same[0].by_hour))),
            *same[1:],
        ],
        "first with a duplicated hour": [
            ObjectWindow(
                same[0].info, same[0].total, (*same[0].by_hour[:5], same[0].by_hour[4], *same[0].by_hour[5:])
            ),
            *same[1:],
        ],
    }
    fast = combine(same, FG)
    for name, members in variants.items():
        got = combine(members, FG)
        want = hand_combined(members)
        assert [t for t, _ in got.by_hour] == [t for t, _ in want], name
        assert list(got.by_hour) == want, name
        assert got.total == Usage(
            max(m.total.seconds for m in members),
            plain_counters([m.total.counters for m in members]),
            {k: v for k, v in plain_counters([m.total.extra for m in members]).items() if v is not None},
        ), name
        assert got.info.size_bytes == sum(m.info.size_bytes or 0 for m in members)
    assert combine(variants["first out of order"], FG).by_hour == fast.by_hour
    if with_none:
        assert all(u.counters["write_time_ms"] is None for _, u in fast.by_hour)
        # the odd members' None left out: the even members' i + 3 at hour 3
        assert fast.by_hour[3][1].counters["read_time_ms"] == sum(i + 3 for i in range(0, n, 2))


def test_combine_of_one_member_keeps_its_buckets() -> None:
    m = member(1, range(24))
    got = combine([m], FG)
    assert got.by_hour == m.by_hour
    assert all(a is b for a, b in zip(got.by_hour, m.by_hour, strict=True))
    assert got.total is m.total and got.info.size_bytes == m.info.size_bytes
    # one member out of order: put in order, nothing else changed
    back = ObjectWindow(m.info, m.total, tuple(reversed(m.by_hour)))
    assert combine([back], FG).by_hour == m.by_hour


def test_combine_members_with_equal_instants_in_other_zones() -> None:
    """The same hours labelled in another zone are the same hours: they line up either way."""
    a, b = member(0, range(10)), member(1, range(10))
    paris = ObjectWindow(
        b.info, b.total, tuple((t.astimezone(ZoneInfo("Europe/Paris")), u) for t, u in b.by_hour)
    )
    got = combine([a, paris], FG)
    assert got.by_hour == combine([a, b], FG).by_hour
    assert [t.tzinfo for t, _ in got.by_hour] == [UTC] * 10


# --- split_maintenance: early exits and the inline burst pre-check --------------------------------

MIN_READS = POLICY.burst_detection.min_reads
MIN_BYTES = POLICY.burst_detection.min_avg_read_bytes
GB_ = 1024**3


def mixed_hours(days: int = 3) -> Buckets:
    """Ordinary hours, and at 02:00-05:00 reads right at and around the burst thresholds."""

    def c(r: int | None, b: int | None) -> Usage:
        return Usage(HOUR, {"reads": r, "bytes_read": b, "writes": 50})

    special = {
        2: c(MIN_READS, MIN_READS * MIN_BYTES),  # exactly at both thresholds: a burst
        3: c(MIN_READS - 1, (MIN_READS - 1) * MIN_BYTES * 4),  # one read too few
        4: c(MIN_READS * 10, MIN_READS * 10 * MIN_BYTES - 1),  # a byte too small on average
        5: c(MIN_READS * 50, None),  # no byte count
        6: c(None, 10 * GB_),
        7: c(0, 0),
        8: c(MIN_READS * 40, MIN_READS * 40 * 4 * 1024 * 1024),  # 4 MB reads: a backup
    }
    start = datetime(2026, 3, 2, tzinfo=UTC)
    return [(start + timedelta(hours=h), special.get(h % 24, c(1000, 1000 * 8192))) for h in range(days * 24)]


BACKUP = MaintenanceWindow(name="nightly backup", kind="backup", start=time(12), end=time(13))


def policy(*windows: MaintenanceWindow, bursts: bool = True) -> Policy:
    rules = POLICY.burst_detection.model_copy(update={"enabled": bursts})
    return POLICY.model_copy(update={"maintenance_windows": list(windows), "burst_detection": rules})


def test_no_applicable_window_and_bursts_off_returns_the_window_itself() -> None:
    w = window(mixed_hours())
    for p in (policy(bursts=False), policy(BACKUP.model_copy(update={"database": ["Other*"]}), bursts=False)):
        assert split_maintenance(w, p) is w
    assert split_maintenance(w, policy()) is not w  # bursts on: the same hours are not all normal


@pytest.mark.parametrize(
    "p",
    [
        policy(),
        policy(BACKUP.model_copy(update={"database": ["Other*"]})),
        policy(BACKUP),
        policy(BACKUP, bursts=False),
        policy(BACKUP.model_copy(update={"objects": ["nothing*"]}), BACKUP.model_copy(update={"name": "b2"})),
    ],
    ids=[
        "bursts only",
        "window for another db + bursts",
        "window + bursts",
        "window, bursts off",
        "two windows",
    ],
)
def test_left_out_hours_are_those_in_a_window_or_is_burst(p: Policy) -> None:
    buckets = mixed_hours()
    w = window(buckets)
    applies = [m for m in p.maintenance_windows if m.database is None and m.objects is None]
    in_win = [t for t, _ in buckets if any(in_window(m, t) for m in applies)]
    bursts = [t for t, u in buckets if t not in in_win and is_burst(INFO, u, p.burst_detection)]
    split = split_maintenance(w, p)
    assert split.maintenance is not None
    assert [t for t, _ in split.by_hour] == [t for t, _ in buckets if t not in in_win and t not in bursts]
    kinds = {s.kind: s.hours for s in split.maintenance.slices}
    assert kinds == {k: v for k, v in (("backup", len(in_win)), ("burst", len(bursts))) if v}
    if p.burst_detection.enabled:
        # the hours at exactly the thresholds and of 4 MB reads, every day; the near misses kept
        assert [t.hour for t in bursts] == [2, 8] * 3
    left = sum_usage([u for t, u in buckets if t in in_win or t in bursts])
    assert split.total.counters["reads"] == w.total.counters["reads"] - left.counters["reads"]  # type: ignore[operator]


# --- window_mixes: the last N hours by bisect (in order) or by scan ---------------------------------


def test_short_window_mix_is_the_same_in_order_shuffled_or_with_duplicates() -> None:
    rng = random.Random(11)
    start = datetime(2026, 3, 2, tzinfo=UTC)
    hours = [h for h in range(72) if h not in (20, 55)]  # gaps, one inside the last 24 h
    buckets = [(start + timedelta(hours=h),
                Usage(HOUR, {"reads": rng.randrange(1, 5000), "bytes_read": rng.randrange(1, 5000) * 65536,
                             "writes": rng.randrange(0, 3000), "bytes_written": rng.randrange(0, 3000) * 8192}))
               for h in hours]  # fmt: skip
    short = POLICY.hysteresis.short_window_hours
    key = f"the last {short:g} h"
    in_order = window_mixes(window(buckets), POLICY)
    assert key in in_order
    # by hand: the buckets labelled from (last + 1 h - short) on, the hour on the boundary included
    since = start + timedelta(hours=71 + 1 - short)
    recent = [u for t, u in buckets if t >= since]
    assert len(recent) == short - 1 and buckets[-len(recent)][0] == since
    assert in_order[key] == window_mixes(window([(t, u) for t, u in buckets if t >= since]), POLICY)[WHOLE]
    assert window_mixes(window(shuffled(buckets)), POLICY) == in_order
    dup = [*buckets[:10], buckets[9], *buckets[10:]]  # an early duplicate: the scan path, same last 24 h
    got = window_mixes(ObjectWindow(INFO, window(buckets).total, tuple(dup)), POLICY)
    assert got == in_order
