"""Cumulative counters -> intervals: restarts, resets, duplicates, rates (domain.md §1.1)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from advisors.deltas import CounterPoint, Outcome, interval_between, rates

T0 = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
START = datetime(2026, 10, 30, 8, 0, tzinfo=UTC)


def point(
    minutes: float,
    reads: int,
    *,
    start: datetime = START,
    extra: dict[str, int] | None = None,
    **counters: int | None,
) -> CounterPoint:
    base: dict[str, int | None] = {
        "reads": reads,
        "bytes_read": reads * 8192,
        "read_time_ms": reads * 5,
        "writes": 10,
        "bytes_written": 10 * 8192,
        "write_time_ms": 20,
    }
    base.update(counters)
    return CounterPoint(T0 + timedelta(minutes=minutes), start, base, extra or {})


def test_first_sample_starts_a_series() -> None:
    assert interval_between(None, point(0, 100)).outcome is Outcome.RESTART


def test_interval_is_the_difference_and_rates_follow_domain_formulas() -> None:
    r = interval_between(point(0, 1000, writes=10), point(5, 4000, writes=310, write_time_ms=620))
    assert r.outcome is Outcome.INTERVAL and r.interval is not None
    iv = r.interval
    assert iv.seconds == 300
    assert iv.counters["reads"] == 3000
    assert iv.counters["bytes_read"] == 3000 * 8192
    assert iv.counters["writes"] == 300
    rt = rates(iv.counters, iv.seconds)
    assert rt.read_iops == pytest.approx(10.0)
    assert rt.avg_read_bytes == pytest.approx(8192)
    assert rt.avg_read_ms == pytest.approx(5.0)
    assert rt.write_iops == pytest.approx(1.0)
    assert rt.avg_write_ms == pytest.approx(600 / 300)
    assert rt.read_mb_s == pytest.approx(3000 * 8192 / 2**20 / 300)


def test_duplicate_sample_is_ignored() -> None:
    assert interval_between(point(5, 10), point(5, 10)).outcome is Outcome.DUPLICATE


def test_older_sample_is_out_of_order() -> None:
    assert interval_between(point(5, 10), point(4, 10)).outcome is Outcome.OUT_OF_ORDER


def test_changed_start_time_is_a_restart_even_if_counters_grew() -> None:
    later_start = START + timedelta(days=1)
    r = interval_between(point(0, 100), point(5, 500, start=later_start))
    assert r.outcome is Outcome.RESTART
    assert r.interval is None
    assert later_start.isoformat() in r.detail


@pytest.mark.parametrize("field", ["reads", "bytes_read", "read_time_ms", "writes", "write_time_ms"])
def test_any_counter_going_down_is_a_reset_never_a_negative_delta(field: str) -> None:
    prev = point(0, 1000)
    cur_counters = dict(point(5, 2000).counters)
    cur_counters[field] = 0
    r = interval_between(prev, CounterPoint(T0 + timedelta(minutes=5), START, cur_counters, {}))
    assert r.outcome is Outcome.RESET
    assert field in r.detail


def test_extra_counter_going_down_is_a_reset() -> None:
    r = interval_between(
        point(0, 10, extra={"pool_data_l_reads": 50}), point(5, 20, extra={"pool_data_l_reads": 40})
    )
    assert r.outcome is Outcome.RESET


def test_extra_deltas_and_missing_counters() -> None:
    prev = point(0, 10, extra={"pool_data_l_reads": 50, "only_before": 3})
    cur = point(5, 20, extra={"pool_data_l_reads": 80, "only_after": 9}, bytes_read=None)
    r = interval_between(prev, cur)
    assert r.interval is not None
    assert r.interval.extra == {"pool_data_l_reads": 30}
    assert r.interval.counters["bytes_read"] is None  # unknown, not zero
    assert rates(r.interval.counters, 300).avg_read_bytes is None


def test_idle_interval_has_no_averages() -> None:
    r = interval_between(point(0, 10), point(5, 10))
    assert r.interval is not None
    rt = rates(r.interval.counters, r.interval.seconds)
    assert rt.read_iops == 0
    assert rt.avg_read_ms is None and rt.avg_read_bytes is None


def test_daylight_saving_step_in_start_time_is_not_a_restart() -> None:
    # DB2 reports activation time in local time: after a DST change it appears 1 h earlier
    r = interval_between(point(0, 100), point(5, 400, start=START - timedelta(hours=1)))
    assert r.outcome is Outcome.INTERVAL
    assert r.interval is not None and r.interval.counters["reads"] == 300


def test_restart_with_counters_reset_and_start_shifted_by_an_hour_is_a_restart() -> None:
    # started 1 h before T0, restarted at T0 + 60 min: the shift looks like DST but counters fell
    r = interval_between(
        point(0, 1000, start=T0 - timedelta(hours=1)), point(65, 20, start=T0 + timedelta(minutes=60))
    )
    assert r.outcome is Outcome.RESTART
