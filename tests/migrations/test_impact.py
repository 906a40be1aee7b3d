"""What a move costs before approval (migrations/impact.py), read off the same plan the script is
written from: each kind of move's impact agrees with what its script does (#28 item 6)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from advisors import quantities as q
from migrations import MoveFiles, Options, render_pair, select_moves
from migrations.durations import copy_minutes, minutes_text
from migrations.impact import impact_of
from tests.migrations.golden_cases import FIXTURES, tiers

AT = datetime(2026, 11, 20, 6, 0, tzinfo=UTC)
GB = 1024**3
MB = 1024**2


def test_copy_minutes_is_size_over_rate_rounded_up() -> None:
    assert copy_minutes(200 * GB, 200) == 18  # 204,800 MB / 200 MB/s = 1,024 s = 17.07 min
    assert copy_minutes(50 * GB, 200) == 5  # 256 s
    assert copy_minutes(10 * GB, 200) == 1  # 51 s: at least a minute
    assert copy_minutes(0, 200) == 1
    assert copy_minutes(60 * 200 * MB, 200) == 1  # exactly one minute stays one minute
    assert copy_minutes(60 * 200 * MB + 1, 200) == 2
    assert copy_minutes(200 * GB, 25) == 140  # 8,192 s = 136.5 min -> 137 -> to 5 minutes above an hour


def test_rounding_steps_above_an_hour() -> None:
    # 1 TiB at 200 MB/s: 5,242.9 s = 87.4 min -> 88 -> to the next 5 minutes
    assert copy_minutes(1024 * GB, 200) == 90
    # 10 TiB at 100 MB/s: 104,857.6 s = 1,747.6 min -> 1,748 -> to the next 30 minutes
    assert copy_minutes(10 * 1024 * GB, 100) == 1770
    assert minutes_text(18) == "18 min"
    assert minutes_text(60) == "1 h"
    assert minutes_text(90) == "1 h 30 min"
    assert minutes_text(1770) == "29 h 30 min"
    with pytest.raises(ValueError, match="more than 0 MB/s"):
        copy_minutes(GB, 0)


def _moves(fixture: str, dialect: str) -> dict[str, Any]:
    doc = json.loads((FIXTURES / fixture).read_text(encoding="utf-8"))
    # one key at a time, as a recommendation's impact and scripts are planned (selected together, a
    # database's offline moves would merge into one: migrations.from_advice.one_offline_per_database)
    out: dict[str, Any] = {}
    for key in dict.fromkeys(f"{o['server']}|{o['key']}" for o in doc["objects"]):
        selection = select_moves(doc, source=fixture, tiers=tiers(), dialect=dialect, only=[key])  # type: ignore[arg-type]
        out.update({m.key: m for m in selection.moves})
    return out


SQL = _moves("advice_sqlserver.json", "tsql")
DB2 = _moves("advice_db2.json", "db2")

# (move, kind, what its forward script must contain, what it must not, manual step, restart)
CASES = [
    ("online filegroup", SQL["Sales/filegroup/FG_ORDERS_2024"], "tsql", "online", "EMPTYFILE", "SET OFFLINE", False, False),
    ("filegroup holding the primary file", SQL["Sales/filegroup/PRIMARY"], "tsql", "offline", "SET OFFLINE", "DBCC SHRINKFILE", True, False),
    ("a log", SQL["Sales/file/2"], "tsql", "offline", "SET OFFLINE", "DBCC SHRINKFILE", True, False),
    ("tempdb", SQL["tempdb/data"], "tsql", "restart", "MODIFY FILE", "SET OFFLINE", False, True),
    ("tempdb's log", SQL["tempdb/file/2"], "tsql", "restart", "MODIFY FILE", "SET OFFLINE", False, True),
    ("a DB2 table space", DB2["SALESDB/tablespace/TS_ORDERS_2024"], "db2", "online", "USING STOGROUP", "NEWLOGPATH", False, False),
]  # fmt: skip


@pytest.mark.parametrize(
    ("move", "dialect", "kind", "has", "lacks", "manual", "restart"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_each_kind_of_move_says_what_its_script_does(
    move: Any, dialect: str, kind: str, has: str, lacks: str, manual: bool, restart: bool
) -> None:
    impact = impact_of(move, Options())
    forward, _ = render_pair(move, dialect, Options(), AT)  # type: ignore[arg-type]
    assert impact.kind == kind
    assert has in forward.text and lacks not in forward.text
    assert (forward.manual_step, forward.restart_required) == (manual, restart)
    # an offline copy is the only move that has downtime to estimate, and the script stops for it
    assert (impact.downtime_minutes is not None) == (kind == "offline") == forward.manual_step


def test_the_offline_copy_estimate_is_the_scripts_at_the_same_rate() -> None:
    move = SQL["Sales/filegroup/PRIMARY"]
    assert isinstance(move.action, MoveFiles)
    size = sum(f.size_bytes or 0 for f in move.action.files)
    assert size > 0
    for rate in (200.0, 37.5):
        options = Options(copy_rate_mb_s=rate)
        impact = impact_of(move, options)
        forward, _ = render_pair(move, "tsql", options, AT)
        assert impact.downtime_minutes == copy_minutes(size, rate)
        assert impact.copy_bytes == size and impact.copy_rate_mb_s == rate
        said = f"about {minutes_text(copy_minutes(size, rate))} to copy"
        assert said in forward.text and f"at ~{rate:g} MB/s" in forward.text
        assert f"about {minutes_text(copy_minutes(size, rate))}, an estimate" in impact.detail
        assert f"the policy's copy rate of {rate:g} MB/s" in impact.detail
        # the size as the pages read it
        assert f"its file ({q.size(size)}) is copied by hand" in impact.detail
        assert impact.summary == f"offline ≈ {minutes_text(copy_minutes(size, rate))}"
    # a slower rate is a longer downtime
    slow, usual = (impact_of(move, Options(copy_rate_mb_s=r)).downtime_minutes for r in (20, 200))
    assert slow is not None and usual is not None and slow > usual


def test_online_move_names_its_blocking_and_restart_names_the_restart() -> None:
    online = impact_of(SQL["Sales/filegroup/FG_ORDERS_2024"], Options())
    assert "DBCC SHRINKFILE EMPTYFILE" in online.detail and "Blocking spans" in online.detail
    assert "stays online" in online.detail and online.downtime_minutes is None
    tempdb = impact_of(SQL["tempdb/data"], Options())
    assert "next restart of the SQL Server service" in tempdb.detail and tempdb.summary == "at restart"
    db2 = impact_of(DB2["SALESDB/tablespace/TS_ORDERS_2024"], Options())
    assert "stays readable and writable" in db2.detail and "rebalance" in db2.detail
