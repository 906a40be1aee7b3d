"""Each quantity's one text form (advisors/quantities.py): the unit switches at the rounded value,
unknown figures read as missing, negatives keep their sign, and a trickle never reads as zero."""

from __future__ import annotations

import math

import pytest

from advisors import quantities as q

NOT_A_FIGURE = (None, math.nan, math.inf, -math.inf)


@pytest.mark.parametrize(
    ("ms_per_s", "text"),
    [
        (0, "0 ms/s"),
        (0.04, "<0.1 ms/s"),
        (-0.04, ">-0.1 ms/s"),
        (0.05, "0.1 ms/s"),
        (28.6, "28.6 ms/s"),
        (999.9, "999.9 ms/s"),
        (999.94, "999.9 ms/s"),
        (999.95, "1.0 s/s"),  # rounds to 1,000 ms/s: shown in s/s, never "1,000.0 ms/s"
        (1000, "1.0 s/s"),
        (59_099, "59.1 s/s"),
        (1_234_567, "1,234.6 s/s"),
        (-28.6, "-28.6 ms/s"),
        (-1500, "-1.5 s/s"),
    ],
)
def test_io_wait_is_ms_per_s_below_1000_and_s_per_s_from_there(ms_per_s: float, text: str) -> None:
    assert q.io_wait(ms_per_s) == text


@pytest.mark.parametrize("v", NOT_A_FIGURE)
def test_an_unknown_figure_reads_as_missing_in_every_quantity(v: float | None) -> None:
    for f in (
        q.io_wait,
        q.io_wait_per,
        q.latency,
        q.size,
        q.gb,
        q.rate,
        q.pct,
        q.change_pct,
        q.count,
        q.figure,
    ):
        assert f(v) == "–", f.__name__
        assert f(v, missing="n/a") == "n/a", f.__name__
    assert q.money(v, "USD") == "–"


@pytest.mark.parametrize(
    ("v", "text"),
    [
        (0, "0 ms/s per GB"),
        (0.0004, "<0.001 ms/s per GB"),
        (0.045, "0.045 ms/s per GB"),
        (0.87, "0.87 ms/s per GB"),
        (1.5, "1.50 ms/s per GB"),
        (9.996, "10 ms/s per GB"),
        (1778, "1,778 ms/s per GB"),  # stays in ms/s: compared with prices of a few ms/s per GB
        (-0.55, "-0.55 ms/s per GB"),
    ],
)
def test_io_wait_per_gb_stays_in_ms_per_s(v: float, text: str) -> None:
    assert q.io_wait_per(v) == text


def test_io_wait_per_names_what_it_is_per() -> None:
    assert q.io_wait_per(0.25, "back-end I/O") == "0.25 ms/s per back-end I/O"


@pytest.mark.parametrize(
    ("ms", "text"),
    [(0, "0 ms"), (0.3, "0.3 ms"), (7, "7.0 ms"), (17, "17.0 ms"), (99.94, "99.9 ms"), (99.96, "100 ms"),
     (1234, "1,234 ms"), (0.01, "<0.1 ms")],
)  # fmt: skip
def test_latency_is_always_ms(ms: float, text: str) -> None:
    assert q.latency(ms) == text


@pytest.mark.parametrize(
    ("n", "text"),
    [
        (0, "0 B"),
        (812, "812 B"),
        (1023.6, "1.0 KB"),  # rounds to 1,024 B: the next unit
        (8192, "8.0 KB"),
        (512 * 1024**2, "512 MB"),
        (35.4 * 1024**3, "35.4 GB"),
        (99.96 * 1024**3, "100 GB"),
        (1023.6 * 1024**3, "1.0 TB"),
        (2000 * 1024**3, "2.0 TB"),
        (5000 * 1024**4, "5,000 TB"),
        (-3 * 1024**3, "-3.0 GB"),
    ],
)
def test_sizes_are_binary_below_1024_of_the_unit(n: float, text: str) -> None:
    assert q.size(n) == text


def test_a_size_in_gb_reads_by_the_same_rule() -> None:
    assert [q.gb(v) for v in (0, 0.5, 35.4, 1023, 1024, 2000)] == [
        "0 GB", "512 MB", "35.4 GB", "1,023 GB", "1.0 TB", "2.0 TB"
    ]  # fmt: skip
    assert q.gb(35.4) == q.size(35.4 * 1024**3)


def test_rates_have_thousands_separators_and_their_unit() -> None:
    assert q.rate(2850) == "2,850 I/O/s"
    assert q.rate(2.54, "IOPS") == "2.5 IOPS"
    assert q.rate(99.96, "MB/s") == "100 MB/s"
    assert q.rate(0.02) == "<0.1 I/O/s"  # a trickle is not 0
    assert q.rate(0) == "0 I/O/s"
    assert q.rate(1_234_567.8, "") == "1,234,568"  # a table column that names its unit


def test_percentages_of_a_share() -> None:
    assert [q.pct(v) for v in (0, 0.0004, 0.034, 0.0996, 0.87, 1, -0.12)] == [
        "0 %", "<0.1 %", "3.4 %", "10 %", "87 %", "100 %", "-12 %"
    ]  # fmt: skip


def test_a_change_in_percent_is_signed() -> None:
    assert [q.change_pct(v) for v in (12, -3.4, 0, 0.2, -0.2, 1234.5)] == [
        "+12 %", "-3 %", "0 %", "<1 %", ">-1 %", "+1,234 %"
    ]  # fmt: skip


def test_raw_figures() -> None:
    assert [q.figure(v) for v in (0.044321, 5699.5616, 12, 0.0, -0.5452)] == [
        "0.04432", "5,699.6", "12", "0", "-0.5452"
    ]  # fmt: skip


def test_ratios_to_a_reference() -> None:
    assert [q.ratio(v) for v in (0.833, 1.5, 0.004, 0, 50.624, 617.83, -0.25)] == [
        "0.83x", "1.50x", "<0.01x", "0x", "50.62x", "618x", "-0.25x"
    ]  # fmt: skip
    assert [q.ratio(v) for v in NOT_A_FIGURE] == ["–"] * 4


def test_durations_in_whole_minutes() -> None:
    assert [q.duration_minutes(m) for m in (0, 1, 59, 60, 61, 150, 1440)] == [
        "0 min", "1 min", "59 min", "1 h", "1 h 1 min", "2 h 30 min", "24 h"
    ]  # fmt: skip


def test_counts() -> None:
    assert q.count(1234) == "1,234"
    assert q.count(0) == "0"
    assert q.count(2.6) == "3"


@pytest.mark.parametrize(
    ("v", "currency", "text"),
    [
        (4500, "USD", "USD 4,500"),
        (12.5, "USD", "USD 12.50"),  # cents below 100
        (99.999, "USD", "USD 100"),
        (0, "USD", "USD 0"),
        (-12.5, "EUR", "EUR -12.50"),
        (4500, "$", "$4,500"),
        (-4500, "€", "-€4,500"),
        (0.001, "$", "$<0.01"),
    ],
)
def test_money_in_the_policy_currency(v: float, currency: str, text: str) -> None:
    assert q.money(v, currency) == text


@pytest.mark.parametrize("currency", ["USD", "EUR", "CHF", "$", "€", "£", "¥", "R$", "CA$"])
def test_currencies_accepted(currency: str) -> None:
    assert q.valid_currency(currency)


@pytest.mark.parametrize("currency", ["usd", "US", "EURO", "12", "$ ", "kr", "", "dollars"])
def test_currencies_refused(currency: str) -> None:
    assert not q.valid_currency(currency)
