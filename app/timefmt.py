"""How the JSON API and the exports write a moment: ISO 8601 in UTC (`2026-03-02T07:00:00+00:00`)."""

from __future__ import annotations

from datetime import UTC, datetime


def iso(t: datetime | None) -> str | None:
    """`t` in UTC as ISO 8601, or None (a value not known yet stays null in the JSON)."""
    return None if t is None else t.astimezone(UTC).isoformat()
