"""The window read's fast paths (issue #14) give what their reference paths give.

- window_read.windows_by_column (every object's rows into arrays, grouped and summed in numpy)
  against window_read._usage_merged (one object's rows, row by row), on generated rows of many
  objects interleaved as a scan returns them, over several chunks: several rows an hour, rows out
  of order, None counters, extra counters, None / 0.0 / -0.0 seconds, `keep` leaving hours out,
  raw hours as datetimes (PostgreSQL) and text (SQLite), values no int64 holds; equal to the
  float and in the dicts' key order.
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

from advisors.features import Hours, Usage
from app.store.db import Store
from app.store.models import DbObject, Target
from app.store.rollup import roll_up
from app.store.window_read import WindowUsage, _Hours, _usage_merged, window_usage, windows_by_column
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


def _interleaved(objects: dict[int, list[tuple[Any, ...]]], rng: random.Random) -> list[tuple[Any, ...]]:
    """Every object's rows in one statement's order: each object's own order kept, the objects
    interleaved at random (a bitmap scan returns the roll-ups page by page, hour by hour)."""
    queues = {oid: list(rows) for oid, rows in objects.items()}
    out = []
    while queues:
        oid = rng.choice(list(queues))
        out.append(queues[oid].pop(0))
        if not queues[oid]:
            del queues[oid]
    return out


def _by_merged(objects: dict[int, list[tuple[Any, ...]]], keep: Any) -> dict[int, Any]:
    hours = _Hours(keep)
    out = {}
    for oid, rows in objects.items():
        w = _usage_merged(list(rows), hours)
        if w is not None:
            out[oid] = _strict(w)
    return out


@pytest.mark.parametrize("text", [False, True], ids=["datetime hours", "text hours"])
@pytest.mark.parametrize("odd", [False, True], ids=["one row an hour", "mixed rows"])
def test_windows_by_column_equal_the_merged_path(text: bool, odd: bool) -> None:
    rng = random.Random(14 + 2 * text + odd)
    objects = {oid: _rows(rng, oid, text=text, odd=odd) for oid in range(400)}
    rows = _interleaved(objects, rng)
    assert len(rows) > 5000  # several chunks
    by_column = 0
    for keep in _keeps(rng):
        got = windows_by_column(iter(rows), _Hours(keep))
        assert {oid: _strict(w) for oid, w in got.items()} == _by_merged(objects, keep)
        by_column += sum(isinstance(w[1], Hours) for w in got.values())
    assert by_column > (600 if not odd else 200)  # windows by column, from either path


def _each_alone(
    objects: dict[Any, list[tuple[Any, ...]]], change: Callable[[dict[Any, list[tuple[Any, ...]]]], None]
) -> dict[Any, Any]:
    """The windows of `objects` after `change`, held to the reference under every `keep`."""
    rng = random.Random(len(objects))
    change(objects)
    rows = _interleaved(objects, rng)
    for keep in _keeps(rng):
        got = windows_by_column(rows, _Hours(keep))
        assert {oid: _strict(w) for oid, w in got.items()} == _by_merged(objects, keep)
    return windows_by_column(rows, _Hours(None))


def _objects(n: int, seed: int, *, odd: bool = True) -> dict[Any, list[tuple[Any, ...]]]:
    rng = random.Random(seed)
    return {oid: _rows(rng, oid, text=False, odd=odd) for oid in range(n)}


def test_values_no_array_holds_go_through_the_merged_path() -> None:
    """A float counter, one past int64, an int seconds value, sums past int64, object ids no int64
    holds: the reference keeps each as it is, each case alone in its chunk."""

    def put(oid: int, at: int, **values: Any) -> Callable[[dict[Any, list[tuple[Any, ...]]]], None]:
        def change(objects: dict[Any, list[tuple[Any, ...]]]) -> None:
            row = list(objects[oid][at])
            for i, v in values.items():
                row[int(i[1:])] = v
            objects[oid][at] = tuple(row)

        return change

    got = _each_alone(_objects(60, 5), put(3, 0, c3=1.5))
    assert got[3][0].counters["reads"] % 1 == 0.5
    got = _each_alone(_objects(60, 5), put(7, -1, c3=2**63))
    assert got[7][0].counters["reads"] >= 2**63
    got = _each_alone(_objects(60, 5, odd=False), put(9, 0, c2=3600))  # seconds an int, the rest floats
    assert any(type(u.seconds) is int for _, u in got[9][1])

    def past_int64(objects: dict[Any, list[tuple[Any, ...]]]) -> None:
        objects[11] = [(11, r[1], r[2], 2**62, *r[4:]) for r in objects[11]]

    rng = random.Random(4)
    same_hours = {
        oid: [_row(rng, oid, BASE + timedelta(hours=h), odd=False) for h in range(30)] for oid in range(20)
    }
    got = _each_alone(same_hours, past_int64)
    assert got[11][0].counters["reads"] == 2**62 * 30
    # only that object goes row by row: the others stay by column, sharing their hours' times
    shared = [oid for oid, w in got.items() if w[1].times is got[0][1].times]  # type: ignore[attr-defined]
    assert sorted(shared) == [oid for oid in range(20) if oid != 11]

    def odd_ids(objects: dict[Any, list[tuple[Any, ...]]]) -> None:
        objects[2**70] = [(2**70, *r[1:]) for r in objects.pop(1)]
        objects[None] = [(None, *r[1:]) for r in objects.pop(2)]

    got = _each_alone(_objects(30, 6), odd_ids)
    assert 2**70 in got and None in got
    assert windows_by_column([], _Hours(None)) == {}


def test_one_instant_spelled_two_ways_is_two_hours_as_in_the_reference() -> None:
    """Text hours with 'T' or ' ' (the store's own text has one spelling; the read's hours are
    naive datetimes or that text): grouped and ordered by the raw values, as _usage_merged does."""

    def spell(objects: dict[Any, list[tuple[Any, ...]]]) -> None:
        for oid, rows in objects.items():
            objects[oid] = [
                (r[0], r[1].replace(" ", "T") if i % 3 == 0 else r[1], *r[2:]) for i, r in enumerate(rows)
            ]

    rng = random.Random(9)
    got = _each_alone({oid: _rows(rng, oid, text=True, odd=oid % 2 == 1) for oid in range(50)}, spell)
    assert any(len({t for t, _ in w[1]}) < len(w[1]) for w in got.values())  # an hour twice, as there


def test_windows_by_column_share_the_hours_of_objects_with_the_same_hours() -> None:
    rng = random.Random(8)
    hours = [BASE + timedelta(hours=h) for h in range(30)]
    objects = {oid: [_row(rng, oid, h, odd=False) for h in hours] for oid in range(20)}
    got = windows_by_column(_interleaved(objects, rng), _Hours(None))
    times = [w[1].times for w in got.values()]  # type: ignore[attr-defined]
    assert all(t is times[0] for t in times) and times[0][0] == BASE.replace(tzinfo=UTC)


def test_hours_without_extra_counters_share_one_read_only_mapping() -> None:
    """The hours with no extra counters hold one empty mapping between them (a 5,000-object pool's
    window: 50 MB less), whichever path built them (with 5-minute polls the current hour has
    several rows, so most objects take the merged path), and no consumer can change it for the
    others."""
    rng = random.Random(3)
    hours = _Hours(None)
    rows = _interleaved({oid: _rows(rng, oid, text=False, odd=oid % 2 == 1) for oid in range(40)}, rng)
    windows = list(windows_by_column(rows, hours).values())
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
