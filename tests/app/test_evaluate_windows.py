"""windows_from_store sums in SQL (hourly roll-ups + intervals above the mark) and reaches back to
the last occurrence of each declared business period; on SQLite and PostgreSQL."""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from advisors.advise import advise
from advisors.features import ObjectInfo, ObjectWindow, Usage
from app.advice import period_history, report_json, windows_from_snapshots
from app.evaluate import windows_from_store
from app.store.db import Store
from app.store.ingest import ingest_snapshots
from app.store.models import COUNTER_COLUMNS, DbObject, IoInterval, Target
from app.store.rollup import roll_up
from connectors.records import LOCATION_FIELDS
from connectors.simulator import demo_fleet
from policies.loader import load_policy
from policies.model import Policy
from policies.workload import CalendarPeriod

POLICY = load_policy()
MONTH_END = CalendarPeriod(name="month-end close", kind="month_end", last_days=2, first_days=1)

# --- the previous implementation, kept as the oracle: every raw interval summed in Python -------

_Acc = tuple[float, dict[str, int | None], dict[str, int]]


def _accumulate(acc: _Acc | None, iv: IoInterval) -> _Acc:
    secs, counters, extra = acc if acc is not None else (0.0, {}, {})
    for c in COUNTER_COLUMNS:
        v = getattr(iv, c)
        if v is None:
            counters.setdefault(c, None)
        else:
            counters[c] = (counters.get(c) or 0) + v
    for k, v in (iv.extra or {}).items():
        extra[k] = extra.get(k, 0) + v
    return secs + iv.seconds, counters, extra


def oracle_windows_from_store(
    session: Session, policy: Policy, *, now: datetime
) -> tuple[list[ObjectWindow], dict[tuple[str, str], int]]:
    """Each enabled target's window: the whole hours ending with the hour of its newest interval
    (never after `now`), every raw interval of its objects in them summed in Python."""
    objects = {
        o.id: o for o in session.scalars(select(DbObject).join(Target).where(Target.enabled.is_(True)))
    }
    ivs = [
        iv for iv in session.scalars(select(IoInterval).order_by(IoInterval.id)) if iv.object_id in objects
    ]
    newest: dict[int, datetime] = {}
    for iv in ivs:
        tid = objects[iv.object_id].target_id
        newest[tid] = max(newest.get(tid, iv.end_time), iv.end_time)
    end = {tid: min(t, now) for tid, t in newest.items()}
    hours_back = timedelta(hours=round(24 * policy.window_days) - 1)
    since = {tid: t.replace(minute=0, second=0, microsecond=0) - hours_back for tid, t in end.items()}
    totals: dict[int, _Acc] = {}
    hours: dict[int, dict[datetime, _Acc]] = defaultdict(dict)
    for iv in ivs:
        tid = objects[iv.object_id].target_id
        if not since[tid] <= iv.end_time <= end[tid]:
            continue
        hour = iv.end_time.replace(minute=0, second=0, microsecond=0)
        totals[iv.object_id] = _accumulate(totals.get(iv.object_id), iv)
        hours[iv.object_id][hour] = _accumulate(hours[iv.object_id].get(hour), iv)
    windows: list[ObjectWindow] = []
    target_by_server: dict[tuple[str, str], int] = {}
    for oid, (secs, counters, extra) in totals.items():
        o = objects[oid]
        target_by_server[(o.engine, o.server)] = o.target_id
        info = ObjectInfo(
            key=o.key,
            engine=o.engine,
            server=o.server,
            database=o.database,
            kind=o.kind,
            name=o.name,
            size_bytes=o.size_bytes,
            current_tier=policy.tier_of_location(
                engine=o.engine, physical_name=o.physical_name, storage_group=o.storage_group
            ),
            location_since=o.location_since,
            **{f: getattr(o, f) for f in LOCATION_FIELDS},
        )
        by_hour = tuple((h, Usage(s, c, x)) for h, (s, c, x) in sorted(hours[oid].items()))
        windows.append(ObjectWindow(info, Usage(secs, counters, extra), by_hour))
    return windows, target_by_server


# --- hand-made intervals ----------------------------------------------------------------------

# polls every 5 minutes at :02, :07, ... (not on the hour), advised at 12:58; the window is the
# hour of the newest interval and the 167 before it (app/store/anchor.py)
NOW = datetime(2026, 11, 20, 12, 58, tzinfo=UTC)
FIRST_END = datetime(2026, 11, 12, 0, 2, tzinfo=UTC)


def _target(s: Session, name: str, *, enabled: bool = True) -> Target:
    t = Target(name=name, engine="db2", source="import", created_at=NOW, enabled=enabled)
    s.add(t)
    s.flush()
    return t


def _object(s: Session, t: Target, key: str, kind: str = "tablespace") -> DbObject:
    o = DbObject(target_id=t.id, engine="db2", server=t.name, database="SALES", kind=kind, key=key,
                 name=key, size_bytes=2**30, storage_group="SG_FC", tablespace=key,
                 first_seen=FIRST_END, last_seen=NOW)  # fmt: skip
    s.add(o)
    s.flush()
    return o


def _intervals(objects: list[DbObject], ends: list[datetime]) -> list[IoInterval]:
    out = []
    for o in objects:
        for n, end in enumerate(ends):
            k = (o.id * 7 + n) % 13
            file_io = o.kind != "partition"
            out.append(
                IoInterval(
                    object_id=o.id,
                    start_time=end - timedelta(minutes=5),
                    end_time=end,
                    seconds=300.0,
                    reads=100 + k if file_io else None,
                    bytes_read=(100 + k) * 8192 if file_io else None,
                    read_time_ms=3 * k if file_io else None,
                    writes=None if k == 5 else 10 + k,
                    bytes_written=None if k == 5 else (10 + k) * 8192,
                    write_time_ms=None if k == 5 else k,
                    extra={} if k % 4 == 0 else {"pool_data_p_reads": 40 + k, "pool_async_data_reads": k},
                )
            )
    return out


def _same(new: tuple[list[ObjectWindow], dict[tuple[str, str], int]], old: tuple[list[ObjectWindow], dict[tuple[str, str], int]]) -> None:  # fmt: skip
    assert new[1] == old[1]
    a = {w.info.key: w for w in new[0]}
    b = {w.info.key: w for w in old[0]}
    assert a.keys() == b.keys() and a
    for key, w in a.items():
        assert w.info == b[key].info
        assert w.total == b[key].total, key
        assert list(w.by_hour) == list(b[key].by_hour), key


def test_sums_equal_the_raw_interval_oracle(store: Store) -> None:
    ends = [
        FIRST_END + timedelta(minutes=5 * i) for i in range(int((NOW - FIRST_END).total_seconds() // 300))
    ]
    early, late = ends[: len(ends) // 2], ends[len(ends) // 2 :]
    with store.session() as s:
        t, off = _target(s, "DB2A"), _target(s, "DB2OFF", enabled=False)
        objs = [_object(s, t, "TS1"), _object(s, t, "TS2"), _object(s, t, "P1", kind="partition")]
        hidden = _object(s, off, "TS9")
        s.add_all(_intervals(objs, early[::2]))  # every other interval first
        s.add_all(_intervals([hidden], early))
    with store.session() as s:
        # nothing rolled up yet: every interval is above the mark
        _same(windows_from_store(s, POLICY, now=NOW), oracle_windows_from_store(s, POLICY, now=NOW))
        assert roll_up(s) > 0
    with store.session() as s:
        # late arrivals for hours already rolled up, and newer hours: above the mark
        s.add_all(_intervals(objs, early[1::2] + late))
    with store.session() as s:
        _same(windows_from_store(s, POLICY, now=NOW), oracle_windows_from_store(s, POLICY, now=NOW))
        roll_up(s)
    with store.session() as s:
        new = windows_from_store(s, POLICY, now=NOW)
        _same(new, oracle_windows_from_store(s, POLICY, now=NOW))
        for _ in range(12):  # PostgreSQL switches to a generic plan after 5 runs of one statement
            assert windows_from_store(s, POLICY, now=NOW) == new
    w = {x.info.key: x for x in new[0]}
    assert w["P1"].total.counters["reads"] is None and w["P1"].total.extra["pool_data_p_reads"] > 0
    assert len(w["TS1"].by_hour) == 7 * 24 and w["TS1"].by_hour[-1][0] == datetime(
        2026, 11, 20, 12, tzinfo=UTC
    )


def test_window_is_whole_hours(store: Store) -> None:
    """Roll-ups are whole hours: the window is the current hour and the 167 before it, so an
    interval ending exactly on its first hour counts, one ending in the hour before does not."""
    now = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
    first = datetime(2026, 11, 13, 13, 0, tzinfo=UTC)
    with store.session() as s:
        o = _object(s, _target(s, "DB2A"), "TS1")
        s.add_all(_intervals([o], [first - timedelta(minutes=5), first, now]))
        roll_up(s)
    with store.session() as s:
        (w,), _ = windows_from_store(s, POLICY, now=now)
    assert [h for h, _ in w.by_hour] == [first, now]


# --- month-end history -------------------------------------------------------------------------


def test_period_history_finds_the_last_completed_occurrence() -> None:
    policy = POLICY.model_copy(update={"business_calendar": [MONTH_END]})
    (o,) = period_history(policy, datetime(2026, 12, 16, 12, tzinfo=UTC))
    assert (o.first, o.start, o.end) == (
        datetime(2026, 11, 29).date(),
        datetime(2026, 11, 29, tzinfo=UTC),
        datetime(2026, 12, 2, tzinfo=UTC),
    )
    # during an occurrence, the one before it (the current one may be too short to judge)
    (o,) = period_history(policy, datetime(2026, 12, 30, 12, tzinfo=UTC))
    assert o.first == datetime(2026, 11, 29).date()
    assert period_history(POLICY, datetime(2026, 12, 16, tzinfo=UTC)) == []


ORIGIN = datetime(2026, 11, 1, tzinfo=UTC)
ADVISED = datetime(2026, 12, 16, 12, tzinfo=UTC)  # mid-month, 15 days after the close
CALENDAR_7D = POLICY.model_copy(update={"window_days": 7, "business_calendar": [MONTH_END]})


def _month_end_snapshots() -> list:  # type: ignore[type-arg]
    """SQLPROD01 hourly over the November close (Nov 29 - Dec 1) and the week before ADVISED."""
    fleet = demo_fleet(ORIGIN)
    close = datetime(2026, 11, 28, tzinfo=UTC)
    week = ADVISED - timedelta(days=7, hours=2)
    times = [close + timedelta(hours=h) for h in range(4 * 24 + 6)]
    times += [week + timedelta(hours=h) for h in range(7 * 24 + 3)]
    return [s for t in times for s in fleet.snapshots(t) if s.server == "SQLPROD01"]


def test_month_end_partition_keeps_its_period_tier_mid_month(store: Store) -> None:
    snaps = _month_end_snapshots()
    with store.session() as s:
        t = Target(name="SQLPROD01", engine="sqlserver", source="simulator", created_at=ORIGIN)
        s.add(t)
        s.flush()
        ingest_snapshots(s, t, snaps)
        roll_up(s)
    with store.session() as s:
        windows, _ = windows_from_store(s, CALENDAR_7D, now=ADVISED)
        plain, _ = windows_from_store(s, POLICY.model_copy(update={"window_days": 7}), now=ADVISED)
    # the everyday window is the same week; the close's hours are added beside it
    fg = next(w for w in windows if w.info.key == "Sales/file/16")
    hours = [h for h, _ in fg.by_hour]
    since = datetime(2026, 12, 9, 13, tzinfo=UTC)
    old = [h for h in hours if h < since]
    assert old and all(
        datetime(2026, 11, 29, tzinfo=UTC) <= h < datetime(2026, 12, 2, tzinfo=UTC) for h in old
    )
    assert len(old) == 72
    assert [h for h in hours if h >= since] == [
        h for h, _ in next(w for w in plain if w.info.key == fg.info.key).by_hour
    ]

    report = advise(windows, CALENDAR_7D, now=ADVISED, curve_points=0)
    doc = report_json(report, CALENDAR_7D)
    for name in ("FG_ORD_202508", "Orders 2025-08"):
        a = next(x for x in report.objects if x.info.name == name)
        assert (a.verdict.rule, a.recommended_tier) == ("TW901", "fc"), a.reasons
        o = next(x for x in doc["objects"] if x["name"] == name)
        assert o["period"]["occurrence"] == "2026-11-29" and o["period"]["hot"] is True
        assert o["period"]["hours"] == 72
    # without the calendar the week alone cannot see the close: the steady-state answer
    steady = advise(plain, POLICY, now=ADVISED, curve_points=0)
    assert next(x for x in steady.objects if x.info.name == "FG_ORD_202508").recommended_tier == "sata"

    # the CLI path reads the same history from the files given
    cli = {w.info.key: w for w in windows_from_snapshots(snaps, CALENDAR_7D)}
    assert sum(1 for h, _ in cli["Sales/file/16"].by_hour if h < since) == 72


def test_report_json_shows_maintenance() -> None:
    fleet = demo_fleet(ORIGIN)
    start = ORIGIN + timedelta(hours=31)
    snaps = [
        s
        for h in range(2 * 24 + 1)
        for s in fleet.snapshots(start + timedelta(hours=h))
        if s.server == "SQLPROD01"
    ]
    report = advise(windows_from_snapshots(snaps, POLICY), POLICY, now=snaps[-1].sample_time, curve_points=0)
    doc = report_json(report, POLICY)
    with_m = [o for o in doc["objects"] if o["maintenance"]]
    assert with_m and all(o["period"] is None for o in doc["objects"])
    m = with_m[0]["maintenance"]
    assert 0 < m["io_share"] <= 1 and m["hours"] > 0 and m["slices"][0]["kind"]
