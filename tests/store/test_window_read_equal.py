"""The advice window read (app.evaluate.windows_from_store) returns exactly the windows it returned
before it was made faster (issue #14): every hour's seconds, counters (None included) and extra
counters, every total, every ObjectInfo, on SQLite and PostgreSQL, held to an expectation written
by the previous implementation (fixtures/window_read_equal.json).

The seeded store mixes what the read has to get right: hourly roll-ups with intervals above the
roll-up mark in the same hour (two of them beside a roll-up, three in an hour not rolled up at
all), hours of intervals only, late intervals for hours already rolled up, DB2 extra counters (a
key in some hours only), None counters (a partition's, writes missing in some hours), a disabled
target, a stale target judged on its own window, two targets of one server (the polled one owns
it), an object with only business-period history, and two business periods (one in a time zone
half an hour off UTC, so its hours do not start on the occurrence's edges). Seconds are
non-dyadic on the SQL Server files, so a total summed in another order would show.

Regenerate the expectation only when the windows are meant to change:
    .venv/bin/python -m tests.store.test_window_read_equal --write
"""

from __future__ import annotations

import json
import math
import sys
import tempfile
from collections.abc import Callable
from dataclasses import fields, is_dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session

from advisors.features import ObjectWindow, Usage
from app.evaluate import windows_from_store
from app.store.anchor import Anchors, newest_samples
from app.store.db import Store
from app.store.models import COUNTER_COLUMNS, DbObject, IoInterval, Target
from app.store.rollup import roll_up
from policies.workload import CalendarPeriod
from tests.fixture_policy import reference_policy

EXPECTED = Path(__file__).parent / "fixtures" / "window_read_equal.json"

NOW = datetime(2026, 12, 16, 12, 58, tzinfo=UTC)
# the expectation was written on the reference policy, whose F:\fc\ is the objects' tier: frozen
PLAIN = reference_policy().model_copy(update={"window_days": 1})
CALENDAR = PLAIN.model_copy(
    update={
        "business_calendar": [
            # Nov 30 in India: [Nov 29 18:30, Nov 30 18:30) UTC
            CalendarPeriod(
                name="close", kind="month_end", last_days=1, first_days=0, time_zone="Asia/Kolkata"
            ),
            CalendarPeriod(name="black friday", kind="custom", start="11-21", end="11-21"),
        ]
    }
)


def _hours(first: datetime, last: datetime) -> list[datetime]:
    """Whole hours from `first` to `last` inclusive."""
    return [first + timedelta(hours=h) for h in range(int((last - first).total_seconds() // 3600) + 1)]


def _utc(month: int, day: int, hour: int) -> datetime:
    return datetime(2026, month, day, hour, tzinfo=UTC)


# the custom period's day, the close with an hour or two either side, and the everyday window
HOURS = (
    _hours(_utc(11, 20, 21), _utc(11, 22, 3))
    + _hours(_utc(11, 29, 15), _utc(11, 30, 22))
    + _hours(_utc(12, 15, 10), _utc(12, 16, 12))
)
OLD_HOURS = _hours(_utc(11, 27, 0), _utc(12, 3, 9))  # the stale target's: it ends on Dec 3
DB2_ENDS = (10, 30, 50)  # minutes past the hour of a DB2 object's intervals
SQL_ENDS = (5,)


def _interval(i: int, o: DbObject, end: datetime, *, extra: dict[str, int] | None = None) -> IoInterval:
    k = (i * 7 + end.hour * 3 + end.minute) % 13
    file_io = o.kind != "partition"
    db2 = o.engine == "db2"
    # dyadic seconds where intervals merge into one hour (any order of sums is exact); non-dyadic
    # on the files with one interval an hour, where only the order of the total's sum matters
    seconds = 1200.0 + (0.0, 0.5, -0.25)[k % 3] if db2 else 3600.0 + 0.1 * (k % 7)
    if extra is None:
        extra = {}
        if db2 and k % 4:
            if k % 5 == 1:  # a key in some hours only, first in its dict
                extra["pool_index_p_reads"] = k
            extra |= {"pool_data_p_reads": 40 + k, "pool_async_data_reads": k}
    return IoInterval(
        object_id=o.id,
        start_time=end - timedelta(seconds=seconds),
        end_time=end,
        seconds=seconds,
        reads=100 + k if file_io else None,
        bytes_read=(100 + k) * 8192 if file_io else None,
        read_time_ms=None if o.name == "f2.ndf" else 3 * k,
        writes=None if k == 5 else 10 + k,
        bytes_written=None if k == 5 else (10 + k) * 8192,
        write_time_ms=None if k == 5 else k,
        extra=extra,
    )


class Fleet:
    """The seeded targets and objects, and the intervals of each stage."""

    def __init__(self, s: Session) -> None:
        def target(name: str, engine: str, source: str = "import", enabled: bool = True) -> Target:
            t = Target(name=name, engine=engine, source=source, created_at=NOW, enabled=enabled)
            s.add(t)
            s.flush()
            return t

        self.db2a = target("DB2A", "db2")
        self.off = target("DB2OFF", "db2", enabled=False)
        self.old = target("DB2OLD", "db2")
        self.sql_live = target("SQL1", "sqlserver", source="live")
        self.sql_import = target("SQL1 (files)", "sqlserver")
        first = _utc(11, 1, 0)
        self.objects: list[DbObject] = []

        def obj(t: Target, key: str, kind: str = "tablespace", **kw: Any) -> DbObject:
            if t.engine == "db2":
                kw = {"database": "SALES", "storage_group": "SG_FC", "tablespace": key, "name": key, **kw}
            else:
                kw = {"database": "Sales", "filegroup": "FG1", "physical_name": rf"F:\fc\{key}.ndf",
                      "name": f"{key}.ndf", **kw}  # fmt: skip
            o = DbObject(target_id=t.id, engine=t.engine, server=t.name.split(" ")[0], kind=kind, key=key,
                         size_bytes=2**30, first_seen=first, last_seen=NOW, **kw)  # fmt: skip
            s.add(o)
            s.flush()
            self.objects.append(o)
            return o

        self.ts1 = obj(self.db2a, "TS1")
        obj(self.db2a, "TS2")
        obj(self.db2a, "P1", kind="partition", table_name="SALES.ORDERS", partition_number=1)
        self.hist = obj(self.db2a, "TS_HIST")  # the close only: never in an everyday window
        obj(self.off, "TS9")
        obj(self.old, "TS_OLD")
        for t in (self.sql_live, self.sql_import):
            obj(t, "f1", kind="data_file")
            obj(t, "f2", kind="data_file")

    def intervals(self, keep: Callable[[DbObject, datetime], bool]) -> list[IoInterval]:
        out = []
        for i, o in enumerate(self.objects):
            hours = OLD_HOURS if o.target_id == self.old.id else HOURS
            if o is self.hist:
                hours = [h for h in hours if h.month == 11 and h.day >= 29]
            ends = DB2_ENDS if o.engine == "db2" else SQL_ENDS
            for h in hours:
                for m in ends:
                    end = h + timedelta(minutes=m)
                    if end <= NOW and keep(o, end):
                        out.append(_interval(i, o, end))
        return out


def _plain(v: Any) -> Any:
    """Dataclasses, mappings and sequences as JSON values (floats unrounded, dict keys sorted)."""
    if is_dataclass(v) and not isinstance(v, type):
        return {f.name: _plain(getattr(v, f.name)) for f in fields(v)}
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in sorted(v.items())}
    if isinstance(v, (tuple, list)):
        return [_plain(x) for x in v]
    if isinstance(v, float) and not math.isfinite(v):
        return repr(v)
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    return str(v)


def _usage(u: Usage) -> list[Any]:
    """seconds, the counters in COUNTER_COLUMNS order, the extra counters."""
    return [u.seconds, [u.counters[c] for c in COUNTER_COLUMNS], _plain(dict(u.extra))]


def _read(windows: list[ObjectWindow], owners: dict[tuple[str, str], int], fleet: Fleet) -> dict[str, Any]:
    names = {t.id: t.name for t in (fleet.db2a, fleet.off, fleet.old, fleet.sql_live, fleet.sql_import)}
    return {
        "owners": sorted([engine, server, names[tid]] for (engine, server), tid in owners.items()),
        "windows": [
            {
                "info": _plain(w.info),
                "total": _usage(w.total),
                "by_hour": [[h.isoformat(), *_usage(u)] for h, u in w.by_hour],
            }
            for w in sorted(windows, key=lambda w: (w.info.server, w.info.key))
        ],
    }


def _reads(s: Session, fleet: Fleet, calls: tuple[str, ...]) -> dict[str, Any]:
    out = {}
    fresh = {tid: t for tid, t in newest_samples(s).items() if tid != fleet.old.id}
    pool = [fleet.db2a.id, fleet.sql_live.id, fleet.sql_import.id]
    for call in calls:
        if call == "all":  # the stale target in a window of its own
            w, o = windows_from_store(s, CALENDAR, now=NOW)
        elif call == "pool":  # one pool's targets
            w, o = windows_from_store(s, CALENDAR, now=NOW, targets=pool)
        elif call == "calendar":  # every enabled object in one read, with business-period history
            w, o = windows_from_store(s, CALENDAR, now=NOW, anchors=Anchors(NOW, fresh))
        else:  # "everyday": no history
            w, o = windows_from_store(s, PLAIN, now=NOW, anchors=Anchors(NOW, fresh))
        out[call] = _read(w, o, fleet)
    return out


def document(store: Store) -> dict[str, Any]:
    """The windows read at three stages of the same store."""
    early = _utc(12, 16, 6)
    out: dict[str, Any] = {}
    with store.session() as s:
        fleet = Fleet(s)
        # stage 1, nothing rolled up: every interval is above the mark (one DB2 interval an hour)
        s.add_all(
            fleet.intervals(lambda o, end: end < early and (o.engine == "sqlserver" or end.minute == 10))
        )
    with store.session() as s:
        out["above the mark only"] = _reads(s, fleet, ("all", "everyday"))
        assert roll_up(s) > 0
    with store.session() as s:
        # stage 2: the rest of the DB2 hours' intervals arrive late for rolled-up hours, and the
        # newer hours' intervals (three an hour) are not rolled up at all
        def late(o: DbObject, end: datetime) -> bool:
            if end >= early:
                return end < _utc(12, 16, 12)  # the newer hours up to the current one
            return o.engine == "db2" and end.minute != 10

        s.add_all(fleet.intervals(late))
    with store.session() as s:
        out["roll-ups and intervals"] = _reads(s, fleet, ("all", "pool", "calendar"))
        assert roll_up(s) > 0
    with store.session() as s:
        # stage 3: the current hour above the mark, late intervals for a rolled-up everyday hour
        # and a rolled-up period hour (a new extra key)
        s.add_all(fleet.intervals(lambda o, end: end.day == 16 and end.hour == 12))
        i = fleet.objects.index(fleet.ts1)
        new_key = {"pool_xda_p_reads": 7}
        s.add_all(
            [
                _interval(i, fleet.ts1, _utc(12, 15, 20) + timedelta(minutes=55), extra=new_key),
                _interval(i, fleet.ts1, _utc(11, 30, 3) + timedelta(minutes=55), extra=new_key),
            ]
        )
    with store.session() as s:
        out["rolled up, the current hour above"] = _reads(s, fleet, ("all", "everyday", "calendar"))
    plain: dict[str, Any] = json.loads(json.dumps(out))
    return plain


def test_windows_equal_the_expectation(store: Store) -> None:
    expected = json.loads(EXPECTED.read_text(encoding="utf-8"))
    got = document(store)
    assert got.keys() == expected.keys()
    for stage, calls in expected.items():
        for call, want in calls.items():
            have = got[stage][call]
            assert have["owners"] == want["owners"], (stage, call)
            assert [w["info"]["key"] for w in have["windows"]] == [w["info"]["key"] for w in want["windows"]]
            for a, b in zip(have["windows"], want["windows"], strict=True):
                assert a == b, (stage, call, a["info"]["server"], a["info"]["key"])
    # the seeded mix is what the docstring says it is
    final = expected["rolled up, the current hour above"]
    keys = {w["info"]["key"] for w in final["all"]["windows"]}
    assert "TS_HIST" not in keys and "TS9" not in keys and {"TS1", "TS_OLD", "f1"} <= keys
    assert final["all"]["owners"] == [["db2", "DB2A", "DB2A"], ["db2", "DB2OLD", "DB2OLD"],
                                      ["sqlserver", "SQL1", "SQL1"]]  # fmt: skip
    p1 = next(w for w in final["calendar"]["windows"] if w["info"]["key"] == "P1")
    _, counters, extra = p1["total"]
    assert counters[COUNTER_COLUMNS.index("reads")] is None and extra["pool_data_p_reads"] > 0
    ts1 = next(w for w in final["calendar"]["windows"] if w["info"]["key"] == "TS1")
    assert ts1["total"][2]["pool_xda_p_reads"] == 14
    assert len(ts1["by_hour"]) > len(
        next(w for w in final["everyday"]["windows"] if w["info"]["key"] == "TS1")["by_hour"]
    )


if __name__ == "__main__" and "--write" in sys.argv:
    with tempfile.TemporaryDirectory() as tmp:
        st = Store(f"sqlite:///{tmp}/tierwise.db")
        doc = document(st)
        st.dispose()
    EXPECTED.parent.mkdir(exist_ok=True)
    EXPECTED.write_text(json.dumps(doc, indent=None, sort_keys=False) + "\n", encoding="utf-8")
    print(f"wrote {EXPECTED} ({EXPECTED.stat().st_size} bytes)")
