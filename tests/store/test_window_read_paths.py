"""The window read's fast paths (issue #14) give what their reference paths give.

- rollup._usage_of (hours built by column when an object has one row an hour, no extra counters
  and seconds in every hour) against rollup._usage_merged (any rows, row by row), on generated
  rows: several rows an hour, rows out of order, None counters, extra counters, None / 0.0 / -0.0
  seconds, `keep` leaving hours out, raw hours as datetimes (PostgreSQL) and text (SQLite);
  equal to the float and in the dicts' key order.
- Usage.from_columns against Usage(...).
- One pool's read (targets given: on PostgreSQL the objects as an id array, read by a bitmap of
  the roll-ups' key) against the same objects in the read of every object (the subquery), with
  roll-ups, intervals above the mark in rolled-up hours, extra counters, history ranges and
  `keep`, on SQLite and PostgreSQL.
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select

from advisors.features import Usage
from app.store.db import Store
from app.store.models import DbObject, Target
from app.store.rollup import WindowUsage, _Hours, _usage_merged, _usage_of, roll_up, window_usage
from tests.store.test_window_read_equal import NOW, Fleet, _utc

BASE = datetime(2026, 11, 2, 0, 0)  # naive, as the driver returns an hour


def _strict(w: WindowUsage | None) -> Any:
    """Everything a window holds, including float signs and the dicts' key order (== on Usage
    compares dicts without order and -0.0 equal to 0.0)."""
    if w is None:
        return None

    def u(x: Usage) -> Any:
        return (repr(x.seconds), type(x.seconds), list(x.counters.items()), list(x.extra.items()))

    total, by_hour = w
    return u(total), [(h, h.tzinfo, u(x)) for h, x in by_hour]


def _row(rng: random.Random, oid: int, raw: Any, *, odd: bool) -> tuple[Any, ...]:
    """A row of the read: object, raw hour, seconds, six counters, extra counters as JSON text."""
    secs: float | None = rng.choice([3600.0, 1200.5, 0.1 * rng.randint(1, 40000), 600.25])
    counters: list[int | None] = [rng.randint(0, 10**9) for _ in range(6)]
    extra = None
    if odd:
        if rng.random() < 0.05:
            secs = rng.choice([None, 0.0, -0.0])
        for i in range(6):
            if rng.random() < 0.15:
                counters[i] = None
        if rng.random() < 0.1:
            keys = rng.sample(
                ["pool_data_p_reads", "pool_index_p_reads", "pool_xda_p_reads"], rng.randint(1, 3)
            )
            extra = json.dumps({k: rng.randint(0, 500) for k in keys})
    return (oid, raw, secs, *counters, extra)


def _rows(rng: random.Random, oid: int, *, text: bool, odd: bool) -> list[tuple[Any, ...]]:
    hours = sorted(rng.sample(range(400), rng.randint(1, 60)))
    several = odd and rng.random() < 0.5  # else odd values in hours of one row
    rows = []
    for h in hours:
        t = BASE + timedelta(hours=h)
        raw = t.strftime("%Y-%m-%d %H:00:00") if text else t
        for _ in range(rng.choice([1, 1, 1, 2, 3]) if several else 1):
            rows.append(_row(rng, oid, raw, odd=odd))
    order = rng.random()
    if order < 0.3:  # the last hour first, as the current hour's intervals come before roll-ups
        rows.insert(0, rows.pop())
    elif order < 0.45:
        rng.shuffle(rows)
    elif order < 0.5:
        rows.reverse()
    return rows


def _keeps(rng: random.Random) -> list[Callable[[datetime], bool] | None]:
    lo, hi = sorted(BASE.replace(tzinfo=UTC) + timedelta(hours=rng.randint(0, 400)) for _ in range(2))
    return [None, lambda h: lo <= h <= hi, lambda h: h.hour % 3 != 0, lambda h: False]


@pytest.mark.parametrize("text", [False, True], ids=["datetime hours", "text hours"])
@pytest.mark.parametrize("odd", [False, True], ids=["one row an hour", "mixed rows"])
def test_usage_of_equals_the_merged_path(text: bool, odd: bool) -> None:
    rng = random.Random(14 + 2 * text + odd)
    fast_objects = 0
    for oid in range(400):
        rows = _rows(rng, oid, text=text, odd=odd)
        for keep in _keeps(rng):
            want = _usage_merged(list(rows), _Hours(keep))
            got = _usage_of(list(rows), _Hours(keep))
            assert _strict(got) == _strict(want), (oid, rows)
            if got is not None and len({r[1] for r in rows}) == len(rows):
                fast_objects += 1
    assert fast_objects > (300 if not odd else 100)  # the fast path was taken


def test_usage_of_hours_shared_across_objects() -> None:
    """One _Hours for every object, as window_usage uses it (memoised hours, and `keep`)."""
    rng = random.Random(7)
    objects = [_rows(rng, oid, text=False, odd=oid % 2 == 1) for oid in range(200)]
    for keep in _keeps(rng):
        shared_fast, shared_ref = _Hours(keep), _Hours(keep)
        for rows in objects:
            want = _usage_merged(list(rows), shared_ref)
            assert _strict(_usage_of(list(rows), shared_fast)) == _strict(want)


def test_hours_without_extra_counters_share_one_read_only_mapping() -> None:
    """The hours with no extra counters hold one empty mapping between them (a 5,000-object pool's
    window: 50 MB less), whichever path built them (with 5-minute polls the current hour has
    several rows, so most objects take the merged path), and no consumer can change it for the
    others."""
    rng = random.Random(3)
    hours = _Hours(None)
    windows = [_usage_of(_rows(rng, oid, text=False, odd=oid % 2 == 1), hours) for oid in range(40)]
    merged = [_usage_merged(_rows(rng, oid, text=False, odd=True), hours) for oid in range(40)]
    extras = [u.extra for w in windows + merged if w is not None for _, u in w[1] if not u.extra]
    assert len(extras) > 200 and all(x is extras[0] for x in extras)
    assert dict(extras[0]) == {} and extras[0] == {}
    with pytest.raises(TypeError):
        extras[0]["pool_data_p_reads"] = 1  # type: ignore[index]


def test_usage_from_columns_equals_the_constructor() -> None:
    seconds = [3600.0, 0.1, -0.0, 1e300]
    counters: list[dict[str, int | None]] = [{"reads": 1}, {"reads": None}, {}, {"reads": 2, "writes": 3}]
    extra: list[dict[str, int]] = [{}, {"pool_data_p_reads": 4}, {}, {"a": 1, "b": 2}]
    made = Usage.from_columns(seconds, counters, extra)
    want = [Usage(s, c, e) for s, c, e in zip(seconds, counters, extra, strict=True)]
    assert made == want
    assert [repr(u) for u in made] == [repr(u) for u in want]
    assert all(type(u) is Usage for u in made)
    assert [u.counters is c and u.extra is e for u, c, e in zip(made, counters, extra, strict=True)] == [
        True
    ] * 4
    assert dataclasses.replace(made[1], seconds=2.0) == Usage(2.0, {"reads": None}, {"pool_data_p_reads": 4})
    assert made[3] + made[0] == want[3] + want[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        made[0].seconds = 1.0  # type: ignore[misc]
    with pytest.raises(ValueError, match="different lengths"):
        Usage.from_columns(seconds, counters[:3], extra)
    assert Usage.from_columns([], [], []) == []


def _seed(store: Store) -> Fleet:
    """The equality test's fleet: roll-ups, then intervals above the mark in rolled-up hours (three
    DB2 intervals an hour, extra counters) and in hours of intervals only."""
    early = _utc(12, 16, 6)
    with store.session() as s:
        fleet = Fleet(s)
        s.add_all(
            fleet.intervals(lambda o, end: end < early and (o.engine == "sqlserver" or end.minute == 10))
        )
    with store.session() as s:
        assert roll_up(s) > 0
    with store.session() as s:
        s.add_all(fleet.intervals(lambda o, end: end >= early or (o.engine == "db2" and end.minute != 10)))
    return fleet


def test_pool_read_equals_the_fleet_read(store: Store) -> None:
    fleet = _seed(store)
    since = _utc(12, 15, 13)
    history = [(_utc(11, 20, 20), _utc(11, 22, 4)), (_utc(11, 29, 14), _utc(11, 30, 23))]

    def in_history(h: datetime) -> bool:
        return since <= h <= NOW or any(
            a + timedelta(hours=1) <= h < b - timedelta(hours=1) for a, b in history
        )

    pools = [
        [fleet.db2a.id, fleet.off.id],  # a disabled target among them
        [fleet.db2a.id, fleet.sql_live.id, fleet.sql_import.id],
        [fleet.old.id],
        [],
    ]
    checked: set[str] = set()
    with store.session() as s:
        objects = {o.id: o for o in s.scalars(select(DbObject).join(Target).where(Target.enabled.is_(True)))}
        for hist, keep in (([], None), (history, in_history), (history, None)):
            whole = window_usage(s, since=since, until=NOW, history=hist, keep=keep)
            for pool in pools:
                mine = window_usage(s, since=since, until=NOW, history=hist, targets=pool, keep=keep)
                want = {oid: w for oid, w in whole.items() if objects[oid].target_id in pool}
                assert {oid: _strict(w) for oid, w in mine.items()} == {
                    oid: _strict(w) for oid, w in want.items()
                }, (pool, hist)
                checked |= {objects[oid].key for oid in mine}
    # the mix held: DB2 objects (merged hours, extra counters), SQL Server files, history only
    assert {"TS1", "P1", "TS_HIST", "f1", "f2"} <= checked and "TS9" not in checked
