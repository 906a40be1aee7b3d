"""A window's hours kept by column (advisors.features.Hours) stand for the (time, Usage) pairs they
were made from: the same sequence, the same slices, the same sums, and the same advice. The store
reads every pool's window into them, so the advisor must not be able to tell them apart."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from advisors.features import (
    NO_EXTRA,
    Hours,
    ObjectInfo,
    ObjectWindow,
    Usage,
    combine,
    compute_features,
    hour_columns,
    hour_seconds,
    hour_times,
    keep_hours,
)
from advisors.maintenance import prepare_window, sum_usage
from advisors.units import window_mixes
from bench.advise_cost import run
from policies.loader import load_policy
from tests.advisors.test_advise_equal_fast import EXPECTED, _differences, document, fleet, fleet_policy

T0 = datetime(2026, 11, 1, tzinfo=UTC)
KEYS = ("reads", "bytes_read", "read_time_ms", "writes", "bytes_written", "write_time_ms")
INFO = ObjectInfo(key="Sales/file/1", engine="sqlserver", server="S", database="Sales", kind="data_file",
                  name="f1.ndf", size_bytes=8 * 1024**3)  # fmt: skip


def pairs(n: int, *, none_at: int | None = None, extra_at: int | None = None) -> list[tuple[datetime, Usage]]:
    out = []
    for i in range(n):
        counters: dict[str, int | None] = {k: (i + 1) * (j + 3) for j, k in enumerate(KEYS)}
        if i == none_at:
            counters["write_time_ms"] = None
        extra = {"page_io_latch_wait_count": i} if i == extra_at else NO_EXTRA
        out.append((T0 + timedelta(hours=i), Usage(3600.0 - i, counters, extra)))
    return out


def held(p: list[tuple[datetime, Usage]]) -> Hours:
    h = Hours.of(p)
    assert h is not None
    return h


@pytest.mark.parametrize("none_at", [None, 0, 5])
@pytest.mark.parametrize("extra_at", [None, 3])
def test_hours_read_as_the_pairs_they_were_made_from(none_at: int | None, extra_at: int | None) -> None:
    p = pairs(9, none_at=none_at, extra_at=extra_at)
    h = held(p)
    assert len(h) == 9 and list(h) == p and h == p and p == list(h)
    assert [h[i] for i in range(-9, 9)] == p[-9:] + p
    with pytest.raises(IndexError):
        h[9]
    assert h[2:7] == p[2:7] and isinstance(h[2:7], Hours)
    assert h[::-2] == p[::-2]
    assert keep_hours(h, [8, 0, 4]) == [p[8], p[0], p[4]]
    assert list(hour_times(h)) == [t for t, _ in p]
    assert hour_seconds(h) == [u.seconds for _, u in p]
    assert hour_columns(h, "write_time_ms", "no such") == [
        [u.counters["write_time_ms"] for _, u in p],
        [None] * 9,
    ]
    # a taken slice keeps an unknown hour's mask only while it holds that hour
    assert (h.take([1, 2]).unknown == {}) is True
    assert (h.take([0, 5]).unknown == {}) is (none_at is None)
    # each Usage is a plain one: ints (not numpy's), the shared empty mapping where no extra
    u = h[4][1]
    assert all(type(v) is int for v in u.counters.values())
    assert type(u.seconds) is float
    if extra_at is None:
        assert h.extra is None and u.extra is NO_EXTRA


def test_hours_not_held_by_column_are_none() -> None:
    assert Hours.of([]) is None
    other_keys = pairs(3)
    other_keys[1] = (other_keys[1][0], Usage(3600.0, {"reads": 1}))
    assert Hours.of(other_keys) is None
    int_seconds = pairs(3)
    int_seconds[0] = (int_seconds[0][0], Usage(3600, dict(int_seconds[0][1].counters)))
    assert Hours.of(int_seconds) is None
    float_counter = pairs(3)
    float_counter[2] = (float_counter[2][0], Usage(3600.0, {**float_counter[2][1].counters, "reads": 1.5}))  # type: ignore[dict-item]
    assert Hours.of(float_counter) is None
    too_big = pairs(3)
    too_big[0] = (too_big[0][0], Usage(3600.0, {**too_big[0][1].counters, "reads": 2**63}))
    assert Hours.of(too_big) is None
    h = held(pairs(2))
    assert Hours.of(h) is h


def test_combine_by_column_equals_the_pairs_sum() -> None:
    """Files of one filegroup summed hour by hour: a counter unknown only where every file's is."""
    members = [pairs(6, none_at=2), pairs(6, none_at=2), pairs(6, none_at=4)]
    windows = [ObjectWindow(INFO, sum_usage([u for _, u in m]), tuple(m)) for m in members]
    by_column = [replace(w, by_hour=held(list(w.by_hour))) for w in windows]
    want = combine(windows, INFO)
    got = combine(by_column, INFO)
    assert isinstance(got.by_hour, Hours)
    assert list(got.by_hour) == list(want.by_hour) and got.total == want.total
    assert got.by_hour[2][1].counters["write_time_ms"] is not None  # the third file knew it
    only_unknown = combine(by_column[:2], INFO)
    assert only_unknown.by_hour[2][1].counters["write_time_ms"] is None
    assert only_unknown.by_hour[2][1] == combine(windows[:2], INFO).by_hour[2][1]


def with_hourly_extra(w: ObjectWindow) -> ObjectWindow:
    """The window with a DB2-like extra counter in every other hour."""
    hours = [
        (t, replace(u, extra={"pool_data_l_reads": 10 * (u.counters["reads"] or 0)} if i % 2 else NO_EXTRA))
        for i, (t, u) in enumerate(w.by_hour)
    ]
    return replace(w, total=sum_usage([u for _, u in hours]), by_hour=tuple(hours))


def test_features_maintenance_and_mixes_do_not_tell_them_apart() -> None:
    policy = load_policy()
    windows = [w for w in fleet(servers=3, seed=5) if w.by_hour]  # partitions have no hours of their own
    extras = 0
    for w in windows + [with_hourly_extra(w) for w in windows[::3]]:
        h = Hours.of(w.by_hour)
        assert h is not None
        extras += h.extra is not None
        by_column = replace(w, by_hour=h)
        want, got = prepare_window(w, policy), prepare_window(by_column, policy)
        assert got.total == want.total and got.maintenance == want.maintenance
        assert list(got.by_hour) == list(want.by_hour)
        assert compute_features(got, db_heat=2.0) == compute_features(want, db_heat=2.0)
        assert window_mixes(got, policy) == window_mixes(want, policy)
    assert extras == len(windows[::3]) > 10


def test_the_advice_is_the_same_with_every_window_by_column() -> None:
    """The equality fixture's fleet, its windows held by column as the store reads them."""
    windows = fleet()
    by_column = []
    for w in windows:
        h = Hours.of(w.by_hour)
        assert (h is None) is (not w.by_hour)  # partitions without hours of their own stay empty
        by_column.append(replace(w, by_hour=h or ()))
    assert sum(isinstance(w.by_hour, Hours) for w in by_column) == 206
    report, curves = run(by_column, fleet_policy(windows))

    differences = _differences(json.loads(EXPECTED.read_text()), document(report, curves))
    assert not differences, f"{len(differences)} differences, first: {differences[:20]}"


def test_sums_int64_might_not_hold_are_added_as_pairs() -> None:
    """Two files with 2**62 reads in an hour: 2**63, which an int64 sum would wrap to negative."""
    big = [(t, Usage(u.seconds, {**u.counters, "reads": 2**62}, u.extra)) for t, u in pairs(4)]
    windows = [ObjectWindow(INFO, sum_usage([u for _, u in big]), tuple(big))] * 2
    by_column = [replace(w, by_hour=held(big)) for w in windows]
    got = combine(by_column, INFO)
    assert not isinstance(got.by_hour, Hours)
    assert [u.counters["reads"] for _, u in got.by_hour] == [2**63] * 4
    assert got == combine(windows, INFO)


def test_columns_of_different_lengths_are_refused() -> None:
    times = tuple(t for t, _ in pairs(3))
    with pytest.raises(ValueError, match="different lengths"):
        Hours.by_column(times, [3600.0] * 2, {"reads": [1, 2, 3]})
    with pytest.raises(ValueError, match="different lengths"):
        Hours.by_column(times, [3600.0] * 3, {"reads": [1, 2]})


def test_partition_proxy_hours_give_the_same_profile() -> None:
    """A partition's hours: no file counters, its page I/O latch waits as the proxy (extra)."""
    info = replace(INFO, kind="partition", key="Sales/partition/1")
    hours = [
        (
            T0 + timedelta(hours=i),
            Usage(3600.0, dict.fromkeys(KEYS), {"page_io_latch_wait_count": 7 * i} if i % 3 else {}),
        )
        for i in range(24 * 4)
    ]
    w = ObjectWindow(info, sum_usage([u for _, u in hours]), tuple(hours))
    h = held(hours)
    assert h.extra is not None and set(h.unknown) == set(KEYS)
    want = compute_features(w, db_heat=None)
    assert want.heat_basis.startswith("page I/O latch") and sum(want.by_hour_of_day) > 0
    assert compute_features(replace(w, by_hour=h), db_heat=None) == want
