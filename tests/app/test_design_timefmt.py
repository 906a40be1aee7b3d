"""One definition per kind of moment (app/timefmt.py): an instant is written in UTC, a change
window's wall-clock time in its own zone; the verification JSON and the job health use `iso` (#18)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from app.job_health import JobHealth
from app.timefmt import iso, iso_local

CET = timezone(timedelta(hours=1))


def test_an_instant_is_written_in_utc() -> None:
    assert iso(datetime(2026, 3, 2, 8, 0, tzinfo=CET)) == "2026-03-02T07:00:00+00:00"
    assert iso(datetime(2026, 3, 2, 7, 0, 0, 5, tzinfo=UTC)) == "2026-03-02T07:00:00.000005+00:00"
    assert iso(None) is None


def test_a_wall_clock_time_keeps_its_zone() -> None:
    assert iso_local(datetime(2026, 3, 7, 22, 0, tzinfo=CET)) == "2026-03-07T22:00:00+01:00"
    with pytest.raises(ValueError, match="aware"):
        iso_local(datetime(2026, 3, 7, 22, 0))


def test_job_health_writes_instants_in_utc() -> None:
    t = datetime(2026, 3, 2, 8, 0, tzinfo=CET)
    j = JobHealth("poll:SQL01", "poll", "SQL01", 900.0, t, last_start=t, last_success=None)
    d = j.as_dict()
    assert d["last_start"] == "2026-03-02T07:00:00+00:00" and d["last_success"] is None
