"""How the service writes a moment as text: ISO 8601, one definition per kind of moment.

- `iso`: an instant (a stored timestamp, a job's last run, the JSON API and the exports), always in
  UTC (`2026-03-02T07:00:00+00:00`). The store hands back aware UTC datetimes (UTCDateTime) and the
  clocks are `datetime.now(UTC)`, so for them this is their own `isoformat()`.
- `iso_local`: a wall-clock moment that belongs to a place (a change window's start and end in the
  window's time zone), kept in its own zone with its offset (`2026-03-07T22:00:00+01:00`).
"""

from __future__ import annotations

from datetime import UTC, datetime


def iso(t: datetime | None) -> str | None:
    """`t` in UTC as ISO 8601, or None (a value not known yet stays null in the JSON)."""
    return None if t is None else t.astimezone(UTC).isoformat()


def iso_local(t: datetime) -> str:
    """`t` as ISO 8601 in its own time zone (aware: its offset is written), not moved to UTC."""
    if t.tzinfo is None:
        raise ValueError("iso_local needs an aware datetime: a wall-clock time without zone is ambiguous")
    return t.isoformat()
